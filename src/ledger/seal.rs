//! What both ledger clients seal their materialised rows with (issue 27 §3, DEC-LEDGER-1,
//! DEC-LEDGER-6): the digest of a row ([`row_digest`]) kept in an append-only fold table, and
//! the check that the append-only triggers are live ([`missing_triggers`]).

use std::collections::BTreeSet;

use super::db::{Backend, Db, Row, Val};
use super::error::Error;
use crate::encoding::hashref::HashRef;

/// `true` on PostgreSQL (the catalog queries differ).
fn is_pg(db: &dyn Db) -> bool {
    db.backend() == Backend::Postgres
}

/// SHA-256 of a row's values, each tagged with its type and length-prefixed (NULL, integer,
/// text and blob never collide).
pub(crate) fn row_digest(row: &Row) -> String {
    let mut buf = Vec::new();
    for v in &row.0 {
        match v {
            Val::Null => buf.push(b'n'),
            Val::Int(i) => {
                buf.push(b'i');
                buf.extend_from_slice(&i.to_be_bytes());
            }
            Val::Text(s) => {
                buf.push(b't');
                buf.extend_from_slice(&(s.len() as u64).to_be_bytes());
                buf.extend_from_slice(s.as_bytes());
            }
            Val::Blob(b) => {
                buf.push(b'b');
                buf.extend_from_slice(&(b.len() as u64).to_be_bytes());
                buf.extend_from_slice(b);
            }
        }
    }
    HashRef::of(&buf).to_string()
}

/// The names of the enabled triggers in the ledger's schema whose body refuses (SQLite: a
/// `RAISE(ABORT` trigger; PostgreSQL: enabled, its function raising an exception).
///
/// # Errors
/// Storage errors.
pub(crate) fn live_triggers(db: &dyn Db) -> Result<BTreeSet<String>, Error> {
    let rows = if is_pg(db) {
        db.query(
            "SELECT t.tgname::text FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid \
             JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_proc p ON p.oid = t.tgfoid \
             WHERE n.nspname = current_schema() AND NOT t.tgisinternal AND t.tgenabled <> 'D' \
             AND p.prosrc ILIKE '%raise exception%'",
            &[],
        )?
    } else {
        db.query(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND sql LIKE '%RAISE(ABORT%'",
            &[],
        )?
    };
    rows.iter().map(|r| r.text(0)).collect()
}

/// Which of `expected` are not live (missing, disabled or not refusing).
///
/// # Errors
/// Storage errors.
pub(crate) fn missing_triggers(db: &dyn Db, expected: &[String]) -> Result<Vec<String>, Error> {
    let live = live_triggers(db)?;
    Ok(expected
        .iter()
        .filter(|t| !live.contains(*t))
        .cloned()
        .collect())
}
