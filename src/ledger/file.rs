//! A standalone SQLite ledger file (`--ledger FILE`, limits.md §7, DEC-LEDGER-6): how it is
//! recognised, opened and (by `world limits init` only) created. Limits and missions both
//! open their ledger file here.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use super::error::Error;

/// `PRAGMA application_id` of a standalone ledger file ("wldg").
pub const APPLICATION_ID: i32 = 0x776c_6467;
/// `PRAGMA user_version` of a standalone ledger file.
pub const USER_VERSION: i32 = 1;

/// Why `path` holds no ledger file yet (missing, or 0 bytes with no WAL beside it), if so.
pub fn no_ledger_file(path: &Path) -> Option<&'static str> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some("does not exist"),
        Ok(m) if m.is_file() && m.len() == 0 => {
            let mut wal = path.as_os_str().to_owned();
            wal.push("-wal");
            let wal_empty = std::fs::metadata(PathBuf::from(wal)).map_or(true, |w| w.len() == 0);
            wal_empty.then_some("is an empty file")
        }
        _ => None,
    }
}

/// Open the ledger file at `path`: `journal_mode=WAL`, `synchronous=FULL`,
/// `foreign_keys=ON`, `busy_timeout` 5000 ms. With `create = Some(ddl)` (`world limits init`
/// only) a missing or 0-byte file is created and initialised in one transaction:
/// `application_id` = [`APPLICATION_ID`], `user_version` = [`USER_VERSION`], then `ddl`.
/// With `None` nothing is created: a missing or empty file, or one without the ledger's
/// tables, is refused and left as it was.
///
/// # Errors
/// [`Error::NotInitialized`] naming the path (missing, empty, no ledger tables);
/// [`Error::NotALedger`] when the file has another application id or user version, or holds
/// non-ledger tables (a World store passed as `--ledger`); SQLite errors.
pub fn open(path: &Path, create: Option<&str>) -> Result<Connection, Error> {
    let name = path.display().to_string();
    let uninitialised = |why: &str| Error::NotInitialized {
        ledger: name.clone(),
        why: why.to_string(),
    };
    if create.is_none() {
        if let Some(why) = no_ledger_file(path) {
            return Err(uninitialised(why));
        }
    }
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if create.is_some() {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    }
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(std::time::Duration::from_millis(5000))?;
    let not = |why: String| Error::NotALedger {
        path: path.to_path_buf(),
        why,
    };
    let app: i32 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    let ver: i32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if app != 0 && app != APPLICATION_ID {
        return Err(not(format!("application_id is {app:#x}")));
    }
    if app == APPLICATION_ID && ver != USER_VERSION {
        return Err(not(format!(
            "user_version is {ver}; this world reads version {USER_VERSION}"
        )));
    }
    if app == 0 {
        let foreign: i64 = conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'limits\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
            [],
            |r| r.get(0),
        )?;
        if foreign > 0 || ver != 0 {
            return Err(not(format!(
                "it holds {foreign} other schema objects and user_version {ver}"
            )));
        }
        let tables: i64 = conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE name LIKE 'limits\\_%' ESCAPE '\\'",
            [],
            |r| r.get(0),
        )?;
        if tables == 0 && create.is_none() {
            return Err(uninitialised("holds no ledger tables"));
        }
        // `world limits init` writes the tables and the application id in one transaction:
        // `limits_*` tables without it were made by something else. Refuse them, writing
        // nothing (before, this path adopted the file: it set the id and ran the DDL).
        if tables > 0 {
            return Err(not(format!(
                "it holds {tables} limits_* tables but not the world ledger application_id"
            )));
        }
    }
    conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))?;
    conn.execute_batch("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;")?;
    if let (0, Some(ddl)) = (app, create) {
        conn.execute_batch(&format!(
            "BEGIN IMMEDIATE; PRAGMA application_id={APPLICATION_ID}; PRAGMA user_version={USER_VERSION}; {ddl} COMMIT;"
        ))?;
    }
    Ok(conn)
}
