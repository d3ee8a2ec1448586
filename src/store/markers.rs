//! Objects other modules keep in the store as markers (issue 27 §2: no SQL on store tables
//! outside `store`): the store-id object a store pairs with shared ledgers under, and the
//! attempt markers an effect intent's transaction stores for its limits or mission attempt.
//! The pairing modules decide what the markers mean; this module only finds, reads and
//! removes their rows in `objects`.

use rusqlite::{Connection, OptionalExtension};

/// The smallest `hash_ref` among the objects of `semantic_id` (`None` when there is none).
///
/// # Errors
/// SQLite errors.
pub fn first_of_kind(conn: &Connection, semantic_id: &str) -> rusqlite::Result<Option<String>> {
    conn.query_row(
        "SELECT min(hash_ref) FROM objects WHERE semantic_id = ?1",
        [semantic_id],
        |r| r.get(0),
    )
}

/// Whether the object `hash_ref` of `semantic_id` is stored.
///
/// # Errors
/// SQLite errors.
pub fn present(conn: &Connection, hash_ref: &str, semantic_id: &str) -> rusqlite::Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM objects WHERE hash_ref = ?1 AND semantic_id = ?2")?
        .query_row([hash_ref, semantic_id], |_| Ok(()))
        .optional()?
        .is_some())
}

/// The payloads of every object of `semantic_id` (as stored, unverified).
///
/// # Errors
/// SQLite errors.
pub fn payloads_of_kind(conn: &Connection, semantic_id: &str) -> rusqlite::Result<Vec<Vec<u8>>> {
    let mut stmt = conn.prepare("SELECT payload FROM objects WHERE semantic_id = ?1")?;
    let rows = stmt.query_map([semantic_id], |r| r.get::<_, Vec<u8>>(0))?;
    rows.collect()
}

/// Remove the marker object `hash_ref` of `semantic_id`, in `conn`'s transaction. Only for a
/// marker this invocation wrote and nothing refers to (the store-id object of a first paired
/// call the ledger refused, DEC-MIS-19): objects are otherwise never deleted.
///
/// # Errors
/// SQLite errors.
pub fn remove(conn: &Connection, hash_ref: &str, semantic_id: &str) -> rusqlite::Result<()> {
    conn.execute(
        "DELETE FROM objects WHERE hash_ref = ?1 AND semantic_id = ?2",
        [hash_ref, semantic_id],
    )?;
    Ok(())
}
