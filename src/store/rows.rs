//! Row writers of the log tables (`worlds`, `log_entries`, `commit_objects`, `store_heads`;
//! store-format.md §3, §8): the one place each row's `INSERT` is spelled. Commits
//! ([`super::commit::apply_with`]) and episode bundles ([`super::bundle`]) both write through
//! here, so the on-disk format has one writer. Every function runs inside the caller's
//! `BEGIN IMMEDIATE` transaction.

use rusqlite::Connection;

use super::{Error, LogEntry, WorldRow, SELECTED_HEAD};

/// Insert a world row `OR IGNORE` (a world already stored under this ref keeps its row).
///
/// # Errors
/// [`Error::Sqlite`].
pub fn insert_world(conn: &Connection, w: &WorldRow) -> Result<(), Error> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO worlds (world_ref, revision, state_root, log_head) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(rusqlite::params![w.reference, w.revision, w.state_root, w.log_head])?;
    Ok(())
}

/// Insert a log entry row, and its `world_log_view` row when the store has that table and
/// the entry's columns are final (`logview::table::record`, DEC-PERF-11), and its leaf in the
/// log's Merkle tree (`merkle::record`, DEC-TRUST-1).
///
/// # Errors
/// [`Error::DuplicateEntry`] when the index or the entry hash is taken (nothing written);
/// [`Error::Sqlite`].
pub fn insert_log_entry(conn: &Connection, e: &LogEntry) -> Result<(), Error> {
    let h = &e.header;
    let inserted = conn
        .prepare_cached(
            "INSERT INTO log_entries (entry_index, entry_hash_ref, semantics_epoch, transition_fn_ref, interpreter_ref, prev_entry_hash_ref, written_by, transition_ref)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?
        .execute(rusqlite::params![
            h.entry_index,
            e.entry_hash,
            h.semantics_epoch,
            h.transition_fn,
            h.interpreter,
            h.prev_entry_hash,
            h.written_by,
            e.transition_ref
        ]);
    if let Err(rusqlite::Error::SqliteFailure(f, _)) = &inserted {
        if f.code == rusqlite::ErrorCode::ConstraintViolation {
            return Err(Error::DuplicateEntry {
                index: h.entry_index,
                entry_hash: e.entry_hash.clone(),
            });
        }
    }
    inserted?;
    // The entry's `world log` columns, in the same transaction (DEC-PERF-11).
    super::logview::table::record(conn, h.entry_index, &e.entry_hash, &e.transition_ref)?;
    // The entry's leaf in the log's Merkle tree, in the same transaction (DEC-TRUST-1).
    super::merkle::record(conn, e)?;
    Ok(())
}

/// Record that the object `object_ref` was committed with entry `entry_index`
/// (`commit_objects`, `OR IGNORE`).
///
/// # Errors
/// [`Error::Sqlite`], e.g. a foreign-key failure when the object or the entry is not stored.
pub fn add_commit_object(
    conn: &Connection,
    object_ref: &str,
    entry_index: i64,
) -> Result<(), Error> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO commit_objects (object_ref, entry_index) VALUES (?1, ?2)",
    )?
    .execute(rusqlite::params![object_ref, entry_index])?;
    Ok(())
}

/// [`add_commit_object`] only when `object_ref` is a stored object (a bundle copies the
/// membership rows of objects its source still holds, and no others).
///
/// # Errors
/// [`Error::Sqlite`].
pub fn add_commit_object_if_stored(
    conn: &Connection,
    object_ref: &str,
    entry_index: i64,
) -> Result<(), Error> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO commit_objects (object_ref, entry_index) SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM objects WHERE hash_ref = ?1)",
    )?
    .execute(rusqlite::params![object_ref, entry_index])?;
    Ok(())
}

/// Set the selected world head (`store_heads`, key [`SELECTED_HEAD`]) to `world_ref`.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn set_selected_head(conn: &Connection, world_ref: &str) -> Result<(), Error> {
    conn.prepare_cached(
        "INSERT INTO store_heads (head_key, world_ref) VALUES (?1, ?2)
         ON CONFLICT(head_key) DO UPDATE SET world_ref = excluded.world_ref",
    )?
    .execute([SELECTED_HEAD, world_ref])?;
    Ok(())
}

/// The objects committed with entry `entry_index` (`commit_objects`), in table order.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn commit_objects_of(conn: &Connection, entry_index: i64) -> Result<Vec<String>, Error> {
    let mut stmt =
        conn.prepare_cached("SELECT object_ref FROM commit_objects WHERE entry_index = ?1")?;
    let rows = stmt.query_map([entry_index], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Every world row whose `logHead` is `entry_hash` (the worlds an entry produced), in table
/// order.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn worlds_with_log_head(conn: &Connection, entry_hash: &str) -> Result<Vec<WorldRow>, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT world_ref, revision, state_root, log_head FROM worlds WHERE log_head = ?1",
    )?;
    let rows = stmt.query_map([entry_hash], WorldRow::from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}
