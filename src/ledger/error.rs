//! Storage errors that classify themselves (issue 27 §1, DEC-LEDGER-6): the kinds both ledger
//! clients (limits, missions) meet below their own rules, and map to the same exit code.

use std::path::PathBuf;

/// A failure of the ledger's storage: the ledger file, the store file's ledger tables, or a
/// PostgreSQL schema. Limits (`limits::Error::Storage`) and missions (`mission`'s
/// `Error::Ledger`) wrap it; its messages carry no client prefix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A standalone ledger file belongs to something else (another `application_id`, another
    /// `user_version`, or foreign tables).
    #[error("{path} is not a world limits ledger: {why}")]
    NotALedger {
        /// The file.
        path: PathBuf,
        /// What gave it away.
        why: String,
    },
    /// The ledger holds no ledger yet: a missing or empty file, a file or schema without the
    /// ledger's tables. `ledger` is a printed name (no password) that parses back to it.
    #[error("ledger {ledger} {why}; initialise it with `world limits init --config FILE --ledger {}`", crate::ledger::location::location_arg(.ledger))]
    NotInitialized {
        /// The ledger: its path, or `postgres://user@host:port/db…`.
        ledger: String,
        /// Why (`does not exist`, `is an empty file`, `holds no ledger tables`, …).
        why: String,
    },
    /// Stored ledger rows break an invariant the ledger itself maintains, or an integrity
    /// check refused them (exit 3).
    #[error("ledger data is corrupt: {0}")]
    Corrupt(String),
    /// SQLite failed.
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A `--ledger postgres://…` URL that does not parse.
    #[error("the ledger URL does not parse: {why}")]
    BadLedgerUrl {
        /// The parser's reason (never the URL itself: it may hold a password).
        why: String,
    },
    /// A `--ledger` value that names neither a file nor a PostgreSQL URL: empty, or another
    /// scheme (`mysql://…`). Usage error (exit 2); nothing is opened or created.
    #[error("--ledger {why}")]
    BadLedgerLocation {
        /// What is wrong with it.
        why: String,
    },
    /// PostgreSQL failed: connection refused, authentication, network loss, lock timeout, a
    /// serialization failure after the retries. The transaction was rolled back.
    #[error("ledger {ledger}: {}", crate::ledger::pg::message(source))]
    Postgres {
        /// The ledger, `postgres://user@host:port/db` (never the password).
        ledger: String,
        /// The client's error.
        source: postgres::Error,
    },
    /// Another process held the ledger's write lock for the whole lock wait (a ledger file's
    /// busy timeout, a PostgreSQL lock timeout): nothing was applied (exit 6).
    #[error("ledger {ledger} is busy: another process held its write lock for the whole wait; nothing was applied")]
    Busy {
        /// The ledger: its path, or `postgres://user@host:port/db`.
        ledger: String,
    },
    /// The PostgreSQL ledger schema is of another version than this build reads.
    #[error("ledger {ledger} has schema version {found}; this world reads version {want}")]
    SchemaVersion {
        /// The ledger name.
        ledger: String,
        /// The version found (`none` when the version table is missing).
        found: String,
        /// The version this build reads.
        want: i64,
    },
}

impl Error {
    /// A lock wait that timed out (a busy ledger file, a PostgreSQL lock timeout): exit 6.
    pub fn is_busy(&self) -> bool {
        match self {
            Error::Busy { .. } => true,
            Error::Sqlite(e) => sqlite_busy(e),
            Error::Postgres { source, .. } => {
                source.code() == Some(&postgres::error::SqlState::LOCK_NOT_AVAILABLE)
            }
            _ => false,
        }
    }

    /// A PostgreSQL serialization failure (40001) or deadlock (40P01): the whole transaction
    /// may be retried.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Error::Postgres { source, .. } if crate::ledger::pg::retryable(source))
    }

    /// The ledger file (or the store file) could not be written: a read-only file, directory
    /// or mount.
    pub fn is_read_only(&self) -> bool {
        matches!(self, Error::Sqlite(rusqlite::Error::SqliteFailure(f, _))
            if f.code == rusqlite::ErrorCode::ReadOnly)
    }

    /// An invariant or integrity check failed (exit 3).
    pub fn is_corrupt(&self) -> bool {
        matches!(self, Error::Corrupt(_))
    }

    /// The location is not a world ledger at all (exit 2): a file of another application, or a
    /// ledger whose version this build does not read.
    pub fn is_not_a_ledger(&self) -> bool {
        matches!(self, Error::NotALedger { .. } | Error::SchemaVersion { .. })
    }
}

/// `SQLITE_BUSY` / `SQLITE_LOCKED`: another connection held the lock for the whole busy wait
/// (a ledger file or the store file; exit 6, nothing applied).
pub fn sqlite_busy(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _)
        if matches!(f.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked))
}
