//! What both ledger clients seal their materialised rows with (issue 27 §3, DEC-LEDGER-1,
//! DEC-LEDGER-6): the digest of a row ([`row_digest`]) kept in an append-only fold table, and
//! the append-only triggers each client's tables must have ([`AppendOnly`]) and the check that
//! they are live ([`missing_triggers`]).

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

/// The append-only shape of one client's tables (limits, missions): its hash-chained log, its
/// fold table, and, on PostgreSQL, every table a statement-level `BEFORE TRUNCATE` refuses.
/// One description gives both the DDL of the refusals ([`AppendOnly::truncate_refusals`]) and
/// the triggers a deciding command and `verify` expect ([`AppendOnly::expected_triggers`]).
pub(crate) struct AppendOnly {
    /// The hash-chained log (`limits_events`, `mission_journal`): its row triggers are
    /// `{log}_no_update`/`{log}_no_delete` (SQLite) or `{log}_no_change` (PostgreSQL), and its
    /// TRUNCATE refusal `{log}_no_truncate` comes with the client's main DDL.
    pub log: &'static str,
    /// The fold table (`limits_folds`, `mission_folds`), append-only in the same way.
    pub folds: &'static str,
    /// Every table that, with the fold table, gets `{table}_no_truncate` running
    /// `ledger_no_truncate()` on PostgreSQL (the log among them is skipped: its refusal is
    /// the log's own).
    pub truncate_guarded: &'static [&'static str],
}

impl AppendOnly {
    /// The tables [`AppendOnly::truncate_refusals`] guards, in order (the log skipped).
    fn guarded(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.truncate_guarded
            .iter()
            .copied()
            .filter(move |t| *t != self.log)
    }

    /// The PostgreSQL DDL of the statement-level TRUNCATE refusals
    /// ([`AppendOnly::truncate_guarded`]; `ledger_no_truncate()` must exist).
    pub(crate) fn truncate_refusals(&self) -> String {
        let mut sql = String::new();
        for t in self.guarded() {
            sql.push_str(&format!(
                "DROP TRIGGER IF EXISTS {t}_no_truncate ON {t};\nCREATE TRIGGER {t}_no_truncate BEFORE TRUNCATE ON {t}\n  FOR EACH STATEMENT EXECUTE FUNCTION ledger_no_truncate();\n"
            ));
        }
        sql
    }

    /// The append-only triggers these tables must have on `db`'s backend (names), with the
    /// fold table's when `folds` (it exists).
    pub(crate) fn expected_triggers(&self, db: &dyn Db, folds: bool) -> Vec<String> {
        let log = self.log;
        let mut out: Vec<String> = if is_pg(db) {
            vec![format!("{log}_no_change"), format!("{log}_no_truncate")]
        } else {
            vec![format!("{log}_no_update"), format!("{log}_no_delete")]
        };
        if folds {
            let f = self.folds;
            if is_pg(db) {
                out.push(format!("{f}_no_change"));
                out.extend(self.guarded().map(|t| format!("{t}_no_truncate")));
            } else {
                out.push(format!("{f}_no_update"));
                out.push(format!("{f}_no_delete"));
            }
        }
        out
    }
}
