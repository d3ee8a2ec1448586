//! Storage errors that classify themselves (issue 27 §1): the kinds both ledger clients map to
//! the same exit code.

/// `SQLITE_BUSY` / `SQLITE_LOCKED`: another connection held the lock for the whole busy wait
/// (a ledger file or the store file; exit 6, nothing applied).
pub fn sqlite_busy(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _)
        if matches!(f.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked))
}
