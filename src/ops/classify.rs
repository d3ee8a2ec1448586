//! Errors classify themselves (issue 28 §2): the questions a front end asks of a failure — is
//! it a lock wait, a read-only database, a corrupt file, a database that is not ours at all —
//! answered by the library from the driver's codes, so no front end matches a
//! `rusqlite::ErrorCode` or a PostgreSQL `SqlState` (DEC-ARCH2-3).
//!
//! One trait, [`Classify`], for the driver errors and the library errors that carry them
//! ([`crate::store::Error`], [`crate::limits::Error`], [`crate::mission::durable::Error`]).
//! `limits` and `mission` keep their own `is_busy` (the rule the ledger layer defines,
//! `ledger::error::sqlite_busy`); the impls here delegate to it.

use postgres::error::SqlState;
use rusqlite::ErrorCode;

/// What kind of failure an error is, asked without naming the database driver.
pub trait Classify {
    /// Another writer held the lock for the whole wait (SQLite `BUSY`/`LOCKED`, PostgreSQL
    /// `lock_not_available`, the store's writer lock): exit 6, nothing applied.
    fn is_busy(&self) -> bool;
    /// The database refused a write because the file (or its directory) is read-only.
    fn is_read_only(&self) -> bool;
    /// The database reported its file corrupt (SQLite `CORRUPT`, or the library's own check).
    fn is_corrupt(&self) -> bool;
    /// Why the database is not a world database at all — not a SQLite file, or tables of our
    /// names in another shape (a column or table missing, a type mismatch) — or `None`.
    fn foreign(&self) -> Option<String>;
}

fn sqlite_code(e: &rusqlite::Error) -> Option<ErrorCode> {
    match e {
        rusqlite::Error::SqliteFailure(f, _) => Some(f.code),
        _ => None,
    }
}

/// A SQLite message that says the tables have another shape than ours.
fn shape_message(m: &str) -> bool {
    ["no such column", "no such table", "has no column named"]
        .iter()
        .any(|k| m.contains(k))
}

impl Classify for rusqlite::Error {
    fn is_busy(&self) -> bool {
        crate::ledger::error::sqlite_busy(self)
    }

    fn is_read_only(&self) -> bool {
        sqlite_code(self) == Some(ErrorCode::ReadOnly)
    }

    fn is_corrupt(&self) -> bool {
        sqlite_code(self) == Some(ErrorCode::DatabaseCorrupt)
    }

    fn foreign(&self) -> Option<String> {
        match self {
            rusqlite::Error::SqliteFailure(f, _) if f.code == ErrorCode::NotADatabase => {
                Some("not a SQLite database".into())
            }
            rusqlite::Error::SqliteFailure(_, Some(m))
            | rusqlite::Error::SqlInputError { msg: m, .. }
                if shape_message(m) =>
            {
                Some(format!("its tables have another shape: {m}"))
            }
            _ => None,
        }
    }
}

impl Classify for postgres::Error {
    fn is_busy(&self) -> bool {
        self.code() == Some(&SqlState::LOCK_NOT_AVAILABLE)
    }

    fn is_read_only(&self) -> bool {
        self.code() == Some(&SqlState::READ_ONLY_SQL_TRANSACTION)
    }

    fn is_corrupt(&self) -> bool {
        self.code() == Some(&SqlState::DATA_CORRUPTED)
    }

    /// An undefined column, table or function, or a datatype mismatch, met while reading the
    /// ledger's own tables.
    fn foreign(&self) -> Option<String> {
        let db = self.as_db_error()?;
        let code = db.code();
        (*code == SqlState::UNDEFINED_COLUMN
            || *code == SqlState::UNDEFINED_TABLE
            || *code == SqlState::DATATYPE_MISMATCH
            || *code == SqlState::UNDEFINED_FUNCTION)
            .then(|| {
                format!(
                    "its tables have another shape: {} [{}]",
                    db.message(),
                    code.code()
                )
            })
    }
}

impl Classify for crate::store::Error {
    fn is_busy(&self) -> bool {
        use crate::store::Error as E;
        match self {
            E::WriterAlreadyActive { .. } => true,
            E::Sqlite(s) => s.is_busy(),
            _ => false,
        }
    }

    fn is_read_only(&self) -> bool {
        use crate::store::Error as E;
        match self {
            E::ReadOnly { .. } => true,
            E::Sqlite(s) => s.is_read_only(),
            _ => false,
        }
    }

    fn is_corrupt(&self) -> bool {
        use crate::store::Error as E;
        match self {
            E::Corrupt { .. } => true,
            E::Sqlite(s) => s.is_corrupt(),
            _ => false,
        }
    }

    fn foreign(&self) -> Option<String> {
        match self {
            crate::store::Error::Sqlite(s) => s.foreign(),
            _ => None,
        }
    }
}

impl Classify for crate::ledger::Error {
    fn is_busy(&self) -> bool {
        crate::ledger::Error::is_busy(self)
    }

    fn is_read_only(&self) -> bool {
        crate::ledger::Error::is_read_only(self)
    }

    fn is_corrupt(&self) -> bool {
        crate::ledger::Error::is_corrupt(self)
    }

    fn foreign(&self) -> Option<String> {
        match self {
            crate::ledger::Error::Sqlite(s) => s.foreign(),
            crate::ledger::Error::Postgres { source, .. } => source.foreign(),
            _ => None,
        }
    }
}

impl Classify for crate::limits::Error {
    fn is_busy(&self) -> bool {
        crate::limits::Error::is_busy(self)
    }

    fn is_read_only(&self) -> bool {
        self.storage().is_some_and(Classify::is_read_only)
    }

    fn is_corrupt(&self) -> bool {
        crate::limits::Error::is_corrupt(self)
    }

    fn foreign(&self) -> Option<String> {
        self.storage().and_then(Classify::foreign)
    }
}

impl Classify for crate::mission::durable::Error {
    fn is_busy(&self) -> bool {
        crate::mission::durable::Error::is_busy(self)
    }

    fn is_read_only(&self) -> bool {
        match self {
            crate::mission::durable::Error::Sqlite(s) => s.is_read_only(),
            crate::mission::durable::Error::Ledger(l) => Classify::is_read_only(&**l),
            _ => false,
        }
    }

    fn is_corrupt(&self) -> bool {
        match self {
            crate::mission::durable::Error::Corrupt(_) => true,
            crate::mission::durable::Error::Sqlite(s) => s.is_corrupt(),
            crate::mission::durable::Error::Ledger(l) => Classify::is_corrupt(&**l),
            _ => false,
        }
    }

    fn foreign(&self) -> Option<String> {
        match self {
            crate::mission::durable::Error::Sqlite(s) => s.foreign(),
            crate::mission::durable::Error::Ledger(l) => Classify::foreign(&**l),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqlite(code: i32, msg: Option<&str>) -> rusqlite::Error {
        rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), msg.map(str::to_string))
    }

    #[test]
    fn sqlite_codes_classify() {
        assert!(sqlite(rusqlite::ffi::SQLITE_BUSY, None).is_busy());
        assert!(sqlite(rusqlite::ffi::SQLITE_LOCKED, None).is_busy());
        assert!(sqlite(rusqlite::ffi::SQLITE_READONLY, None).is_read_only());
        assert!(sqlite(rusqlite::ffi::SQLITE_CORRUPT, None).is_corrupt());
        assert_eq!(
            sqlite(rusqlite::ffi::SQLITE_NOTADB, None)
                .foreign()
                .as_deref(),
            Some("not a SQLite database")
        );
        assert!(
            sqlite(rusqlite::ffi::SQLITE_ERROR, Some("no such table: grants"))
                .foreign()
                .is_some_and(|w| w.ends_with("no such table: grants"))
        );
        let plain = sqlite(rusqlite::ffi::SQLITE_ERROR, Some("syntax error"));
        assert!(!plain.is_busy() && !plain.is_read_only() && !plain.is_corrupt());
        assert!(plain.foreign().is_none());
    }

    #[test]
    fn library_errors_ask_their_cause() {
        let e = crate::limits::Error::Storage(crate::ledger::Error::Sqlite(sqlite(
            rusqlite::ffi::SQLITE_READONLY,
            None,
        )));
        assert!(Classify::is_read_only(&e));
        let m = crate::mission::durable::Error::Sqlite(sqlite(rusqlite::ffi::SQLITE_BUSY, None));
        assert!(Classify::is_busy(&m));
        let s = crate::store::Error::Sqlite(sqlite(rusqlite::ffi::SQLITE_CORRUPT, None));
        assert!(Classify::is_corrupt(&s));
    }
}
