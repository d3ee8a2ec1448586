//! Source labels: the file name a transition source was published from, so that `invoke`
//! diagnostics name the user's file (`tx/bad.ail:3:45`) instead of the capsule's copy
//! (`host/capsule/main.ail`) (issue 14 §5, DEC-AIL-LABEL-1).
//!
//! The labels live in `world`'s own table `world_source_labels(source, label)` (spec README
//! "Extra state"): `source` is the `sha256:…` ref of a `world/transition-source/v1` object,
//! `label` the manifest's `transitionFnFile` as written. Only messages read it: a store without
//! the table (older, or written by the reference) behaves exactly as before, with the capsule
//! path in messages. `world publish` writes it in its own transaction; the latest publish of a
//! source names it.

use rusqlite::{Connection, OptionalExtension};

/// The table's name.
pub const TABLE: &str = "world_source_labels";

/// Labels longer than this (bytes) are not recorded: messages keep the capsule path.
pub const MAX_LABEL_BYTES: usize = 4096;

const DDL: &str = "CREATE TABLE IF NOT EXISTS world_source_labels (
    source TEXT PRIMARY KEY NOT NULL,
    label TEXT NOT NULL
)";

/// Record that `source` (a `sha256:…` ref) was published from `label`, inside the caller's
/// transaction. Labels over [`MAX_LABEL_BYTES`], or holding control characters, are skipped.
///
/// # Errors
/// SQLite errors from creating the table or writing the row.
pub fn record(conn: &Connection, source: &str, label: &str) -> rusqlite::Result<()> {
    if label.is_empty() || label.len() > MAX_LABEL_BYTES || label.chars().any(char::is_control) {
        return Ok(());
    }
    conn.execute_batch(DDL)?;
    conn.execute(
        "INSERT INTO world_source_labels (source, label) VALUES (?1, ?2)
         ON CONFLICT(source) DO UPDATE SET label = excluded.label",
        [source, label],
    )?;
    Ok(())
}

/// The label recorded for `source`, if any; `None` too when the table does not exist or
/// cannot be read (the label only decorates messages).
pub fn lookup(conn: &Connection, source: &str) -> Option<String> {
    let exists = conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [TABLE],
            |_| Ok(()),
        )
        .optional()
        .ok()
        .flatten()
        .is_some();
    if !exists {
        return None;
    }
    conn.query_row(
        "SELECT label FROM world_source_labels WHERE source = ?1",
        [source],
        |r| r.get::<_, String>(0),
    )
    .optional()
    .ok()
    .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_and_lookup() {
        let conn = Connection::open_in_memory().expect("memory db");
        assert_eq!(lookup(&conn, "sha256:aa"), None);
        record(&conn, "sha256:aa", "tx/a.ail").expect("record");
        assert_eq!(lookup(&conn, "sha256:aa").as_deref(), Some("tx/a.ail"));
        record(&conn, "sha256:aa", "tx/b.ail").expect("record again");
        assert_eq!(lookup(&conn, "sha256:aa").as_deref(), Some("tx/b.ail"));
        record(&conn, "sha256:bb", "bad\nname").expect("skipped");
        assert_eq!(lookup(&conn, "sha256:bb"), None);
    }
}
