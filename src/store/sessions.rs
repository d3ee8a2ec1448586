//! The `session_credentials` table (store-format.md §3.1): typed reads and writes of credential
//! rows. The rules (who may mint, when a credential resolves, what a mint record must say) are
//! `authority::session`'s; this module owns only the rows' format.

use rusqlite::{Connection, OptionalExtension};

use super::Error;

/// One `session_credentials` row, verbatim.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CredentialRow {
    /// `credential_id`: lowercase hex sha256 of the token text, no prefix.
    pub credential_id: String,
    /// `episode_id`.
    pub episode: String,
    /// `grants_json`: the grants as stored (decoded by the caller, which fails closed).
    pub grants_json: String,
    /// `created_at`, Unix seconds.
    pub created_at: i64,
    /// `expires_at`, Unix seconds.
    pub expires_at: i64,
}

const COLUMNS: &str = "credential_id, episode_id, grants_json, created_at, expires_at";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<CredentialRow> {
    Ok(CredentialRow {
        credential_id: r.get(0)?,
        episode: r.get(1)?,
        grants_json: r.get(2)?,
        created_at: r.get(3)?,
        expires_at: r.get(4)?,
    })
}

/// Insert one credential row (inside the caller's transaction).
///
/// # Errors
/// [`Error::Sqlite`], e.g. a constraint failure for a credential id already stored.
pub fn insert(conn: &Connection, c: &CredentialRow) -> Result<(), Error> {
    conn.prepare_cached(
        "INSERT INTO session_credentials (credential_id, episode_id, grants_json, expires_at, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(rusqlite::params![
        c.credential_id,
        c.episode,
        c.grants_json,
        c.expires_at,
        c.created_at
    ])?;
    Ok(())
}

/// The row of `credential_id`, if stored. Every authenticated call reads it once (cached
/// statement).
///
/// # Errors
/// [`Error::Sqlite`].
pub fn get(conn: &Connection, credential_id: &str) -> Result<Option<CredentialRow>, Error> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM session_credentials WHERE credential_id = ?1"
        ))?
        .query_row([credential_id], row)
        .optional()?)
}

/// Whether a row for `credential_id` exists.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn exists(conn: &Connection, credential_id: &str) -> Result<bool, Error> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM session_credentials WHERE credential_id = ?1")?
        .exists([credential_id])?)
}

/// Up to `limit` rows, newest first (`created_at` descending, then `credential_id`): only
/// `episode`'s when given, and only rows with `expires_at > now` unless `with_expired`.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn list(
    conn: &Connection,
    episode: Option<&str>,
    now: i64,
    with_expired: bool,
    limit: usize,
) -> Result<Vec<CredentialRow>, Error> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM session_credentials
         WHERE (?1 IS NULL OR episode_id = ?1) AND (?2 OR expires_at > ?3)
         ORDER BY created_at DESC, credential_id LIMIT ?4"
    ))?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = stmt.query_map(rusqlite::params![episode, with_expired, now, limit], row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Delete the row of `credential_id`; returns whether one existed.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn delete(conn: &Connection, credential_id: &str) -> Result<bool, Error> {
    Ok(conn.execute(
        "DELETE FROM session_credentials WHERE credential_id = ?1",
        [credential_id],
    )? > 0)
}

/// Delete every row of `episode`; returns the deleted credential ids, ascending.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn delete_episode(conn: &Connection, episode: &str) -> Result<Vec<String>, Error> {
    let ids: Vec<String> = conn
        .prepare(
            "SELECT credential_id FROM session_credentials WHERE episode_id = ?1 ORDER BY credential_id",
        )?
        .query_map([episode], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    conn.execute(
        "DELETE FROM session_credentials WHERE episode_id = ?1",
        [episode],
    )?;
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Store, WriteOptions};

    fn row(id: &str, ep: &str, created: i64, expires: i64) -> CredentialRow {
        CredentialRow {
            credential_id: id.into(),
            episode: ep.into(),
            grants_json: "[]".into(),
            created_at: created,
            expires_at: expires,
        }
    }

    #[test]
    fn rows_round_trip_filter_and_delete() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_write(
            &dir.path().join("w.db"),
            WriteOptions {
                create: true,
                wait_lock: None,
            },
        )
        .unwrap();
        let c = store.conn();
        insert(c, &row("a", "ep1", 10, 100)).unwrap();
        insert(c, &row("b", "ep1", 20, 50)).unwrap();
        insert(c, &row("c", "ep2", 30, 200)).unwrap();
        assert!(insert(c, &row("a", "ep9", 0, 0)).is_err(), "duplicate id");
        assert_eq!(get(c, "b").unwrap(), Some(row("b", "ep1", 20, 50)));
        assert_eq!(get(c, "zz").unwrap(), None);
        assert!(exists(c, "c").unwrap() && !exists(c, "zz").unwrap());
        let ids =
            |v: Vec<CredentialRow>| v.into_iter().map(|r| r.credential_id).collect::<Vec<_>>();
        assert_eq!(ids(list(c, None, 60, false, 500).unwrap()), ["c", "a"]);
        assert_eq!(ids(list(c, None, 60, true, 500).unwrap()), ["c", "b", "a"]);
        assert_eq!(ids(list(c, Some("ep1"), 60, true, 1).unwrap()), ["b"]);
        assert!(delete(c, "c").unwrap());
        assert!(!delete(c, "c").unwrap());
        assert_eq!(delete_episode(c, "ep1").unwrap(), ["a", "b"]);
        assert!(list(c, None, 0, true, 500).unwrap().is_empty());
    }
}
