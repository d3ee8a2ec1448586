//! The `approval_claims` table (store-format.md §3.1): typed reads and writes of claim rows.
//! What makes a claim allowed (approved, single use) is `authority::approvals`'s rule; this
//! module owns only the rows' format. The primary key `approval_ref` refuses a second claim of
//! one decision, the `UNIQUE` `invocation_id` a second approval for one effect.

use rusqlite::{Connection, OptionalExtension};

use super::Error;

/// One `approval_claims` row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimRow {
    /// `approval_ref`: the decision object's ref.
    pub approval_ref: String,
    /// `request_ref`: the request object's ref.
    pub request_ref: String,
    /// `invocation_id`: the effect intent id that consumed the approval.
    pub invocation_id: String,
}

/// Every claim as `(request_ref, invocation_id)`, in table order.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn claimants(conn: &Connection) -> Result<Vec<(String, String)>, Error> {
    let mut stmt = conn.prepare_cached("SELECT request_ref, invocation_id FROM approval_claims")?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The intent id that claimed the request `request_ref`, if any.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn claimant_of(conn: &Connection, request_ref: &str) -> Result<Option<String>, Error> {
    Ok(conn
        .prepare_cached("SELECT invocation_id FROM approval_claims WHERE request_ref = ?1")?
        .query_row([request_ref], |r| r.get(0))
        .optional()?)
}

/// The request ref the intent `invocation_id` claimed, if any.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn claimed_by_intent(conn: &Connection, invocation_id: &str) -> Result<Option<String>, Error> {
    Ok(conn
        .prepare_cached("SELECT request_ref FROM approval_claims WHERE invocation_id = ?1")?
        .query_row([invocation_id], |r| r.get(0))
        .optional()?)
}

/// The intent id that claimed the decision `approval_ref`, if any (the primary key).
///
/// # Errors
/// [`Error::Sqlite`].
pub fn claimant_of_decision(
    conn: &Connection,
    approval_ref: &str,
) -> Result<Option<String>, Error> {
    Ok(conn
        .prepare_cached("SELECT invocation_id FROM approval_claims WHERE approval_ref = ?1")?
        .query_row([approval_ref], |r| r.get(0))
        .optional()?)
}

/// Insert one claim row (inside the caller's transaction).
///
/// # Errors
/// [`Error::Sqlite`]: a constraint failure when the decision or the intent already has a claim.
pub fn insert_claim(conn: &Connection, c: &ClaimRow) -> Result<(), Error> {
    conn.prepare_cached(
        "INSERT INTO approval_claims (approval_ref, request_ref, invocation_id) VALUES (?1, ?2, ?3)",
    )?
    .execute([&c.approval_ref, &c.request_ref, &c.invocation_id])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Store, WriteOptions};

    #[test]
    fn a_claim_is_single_use_per_decision_and_per_intent() {
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
        let claim = |a: &str, r: &str, i: &str| ClaimRow {
            approval_ref: a.into(),
            request_ref: r.into(),
            invocation_id: i.into(),
        };
        let (d1, r1, d2, r2) = (
            "sha256:d1",
            "sha256:r1".to_string(),
            "sha256:d2",
            "sha256:r2",
        );
        insert_claim(c, &claim(d1, &r1, "effect:ep:1")).unwrap();
        assert!(
            insert_claim(c, &claim(d1, &r1, "effect:ep:2")).is_err(),
            "decision twice"
        );
        assert!(
            insert_claim(c, &claim(d2, r2, "effect:ep:1")).is_err(),
            "intent twice"
        );
        assert_eq!(claimant_of(c, &r1).unwrap().as_deref(), Some("effect:ep:1"));
        assert_eq!(claimant_of(c, r2).unwrap(), None);
        assert_eq!(
            claimed_by_intent(c, "effect:ep:1").unwrap(),
            Some(r1.clone())
        );
        assert_eq!(claimants(c).unwrap(), [(r1, "effect:ep:1".to_string())]);
    }
}
