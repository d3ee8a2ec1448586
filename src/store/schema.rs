//! The v4 schema: tables, derived indexes and the open/version algorithm (store-format.md §2–§3).

use rusqlite::Connection;

use super::Error;

/// The only schema version this binary reads or writes (store-format.md §2).
pub const SCHEMA_VERSION: i64 = 4;

/// The 10 v4 tables, in creation order, with their `CREATE TABLE IF NOT EXISTS` statements.
pub const TABLES: &[(&str, &str)] = &[
    (
        "objects",
        "CREATE TABLE IF NOT EXISTS objects (
  hash_ref TEXT PRIMARY KEY,
  interface_hash_ref TEXT NOT NULL,
  semantic_id TEXT NOT NULL,
  provenance TEXT NOT NULL,
  payload BLOB NOT NULL
)",
    ),
    (
        "worlds",
        "CREATE TABLE IF NOT EXISTS worlds (
  world_ref TEXT PRIMARY KEY,
  revision INTEGER NOT NULL,
  state_root TEXT NOT NULL,
  log_head TEXT NOT NULL
)",
    ),
    (
        "log_entries",
        "CREATE TABLE IF NOT EXISTS log_entries (
  entry_index INTEGER PRIMARY KEY,
  entry_hash_ref TEXT NOT NULL UNIQUE,
  semantics_epoch INTEGER NOT NULL,
  transition_fn_ref TEXT NOT NULL,
  interpreter_ref TEXT NOT NULL,
  prev_entry_hash_ref TEXT NOT NULL,
  written_by TEXT NOT NULL,
  transition_ref TEXT NOT NULL
)",
    ),
    (
        "epoch_registry_heads",
        "CREATE TABLE IF NOT EXISTS epoch_registry_heads (
  registry_name TEXT PRIMARY KEY,
  object_ref TEXT NOT NULL
)",
    ),
    (
        "store_heads",
        "CREATE TABLE IF NOT EXISTS store_heads (
  head_key TEXT PRIMARY KEY,
  world_ref TEXT NOT NULL
)",
    ),
    (
        "verification_cache",
        "CREATE TABLE IF NOT EXISTS verification_cache (
  transition_fn_ref TEXT NOT NULL,
  interpreter_ref TEXT NOT NULL,
  semantics_epoch INTEGER NOT NULL,
  verified INTEGER NOT NULL,
  result_detail TEXT NOT NULL,
  PRIMARY KEY (transition_fn_ref, interpreter_ref)
)",
    ),
    (
        "journal",
        "CREATE TABLE IF NOT EXISTS journal (
  seq INTEGER PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('intent','outcome')),
  invocation_id TEXT NOT NULL CHECK (invocation_id <> ''),
  object_ref TEXT NOT NULL CHECK (object_ref <> ''),
  UNIQUE (invocation_id, kind)
)",
    ),
    (
        "approval_claims",
        "CREATE TABLE IF NOT EXISTS approval_claims (
  approval_ref TEXT PRIMARY KEY,
  request_ref TEXT NOT NULL,
  invocation_id TEXT NOT NULL UNIQUE
)",
    ),
    (
        "session_credentials",
        "CREATE TABLE IF NOT EXISTS session_credentials (
  credential_id TEXT PRIMARY KEY,
  episode_id TEXT NOT NULL CHECK (episode_id <> ''),
  grants_json TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL
)",
    ),
    (
        "commit_objects",
        "CREATE TABLE IF NOT EXISTS commit_objects (
  object_ref TEXT NOT NULL REFERENCES objects(hash_ref),
  entry_index INTEGER NOT NULL REFERENCES log_entries(entry_index),
  PRIMARY KEY (object_ref, entry_index)
) WITHOUT ROWID",
    ),
];

/// One expected column: (name, declared type, NOT NULL, primary-key position).
pub type Column = (&'static str, &'static str, bool, i64);

/// Expected columns per table.
pub const COLUMNS: &[(&str, &[Column])] = &[
    (
        "objects",
        &[
            ("hash_ref", "TEXT", false, 1),
            ("interface_hash_ref", "TEXT", true, 0),
            ("semantic_id", "TEXT", true, 0),
            ("provenance", "TEXT", true, 0),
            ("payload", "BLOB", true, 0),
        ],
    ),
    (
        "worlds",
        &[
            ("world_ref", "TEXT", false, 1),
            ("revision", "INTEGER", true, 0),
            ("state_root", "TEXT", true, 0),
            ("log_head", "TEXT", true, 0),
        ],
    ),
    (
        "log_entries",
        &[
            ("entry_index", "INTEGER", false, 1),
            ("entry_hash_ref", "TEXT", true, 0),
            ("semantics_epoch", "INTEGER", true, 0),
            ("transition_fn_ref", "TEXT", true, 0),
            ("interpreter_ref", "TEXT", true, 0),
            ("prev_entry_hash_ref", "TEXT", true, 0),
            ("written_by", "TEXT", true, 0),
            ("transition_ref", "TEXT", true, 0),
        ],
    ),
    (
        "epoch_registry_heads",
        &[
            ("registry_name", "TEXT", false, 1),
            ("object_ref", "TEXT", true, 0),
        ],
    ),
    (
        "store_heads",
        &[
            ("head_key", "TEXT", false, 1),
            ("world_ref", "TEXT", true, 0),
        ],
    ),
    (
        "verification_cache",
        &[
            ("transition_fn_ref", "TEXT", true, 1),
            ("interpreter_ref", "TEXT", true, 2),
            ("semantics_epoch", "INTEGER", true, 0),
            ("verified", "INTEGER", true, 0),
            ("result_detail", "TEXT", true, 0),
        ],
    ),
    (
        "journal",
        &[
            ("seq", "INTEGER", false, 1),
            ("kind", "TEXT", true, 0),
            ("invocation_id", "TEXT", true, 0),
            ("object_ref", "TEXT", true, 0),
        ],
    ),
    (
        "approval_claims",
        &[
            ("approval_ref", "TEXT", false, 1),
            ("request_ref", "TEXT", true, 0),
            ("invocation_id", "TEXT", true, 0),
        ],
    ),
    (
        "session_credentials",
        &[
            ("credential_id", "TEXT", false, 1),
            ("episode_id", "TEXT", true, 0),
            ("grants_json", "TEXT", true, 0),
            ("expires_at", "INTEGER", true, 0),
            ("created_at", "INTEGER", true, 0),
        ],
    ),
    (
        "commit_objects",
        &[
            ("object_ref", "TEXT", true, 1),
            ("entry_index", "INTEGER", true, 2),
        ],
    ),
];

/// The 5 derived indexes: (name, table, key columns in order) (store-format.md §3.2).
pub const INDEXES: &[(&str, &str, [&str; 2])] = &[
    (
        "objects_by_semantic_id",
        "objects",
        ["semantic_id", "hash_ref"],
    ),
    (
        "log_entries_by_transition_ref",
        "log_entries",
        ["transition_ref", "entry_index"],
    ),
    (
        "log_entries_by_transition_fn_ref",
        "log_entries",
        ["transition_fn_ref", "entry_index"],
    ),
    (
        "log_entries_by_interpreter_ref",
        "log_entries",
        ["interpreter_ref", "entry_index"],
    ),
    (
        "worlds_by_state_root",
        "worlds",
        ["state_root", "world_ref"],
    ),
];

/// `world`'s own derived indexes (DEC-PERF-2): (name, table, key columns). Named `world_*`
/// like the rest of `world`'s extra state (spec README "Extra state"), created with
/// `CREATE INDEX IF NOT EXISTS` on every writable open next to the 5 reference indexes, never
/// shape-checked and never required: a store without them (a reference-written file opened
/// read-only) is read correctly, only more slowly. The reference checks only its own 5 indexes
/// by name and ignores these.
pub const WORLD_INDEXES: &[(&str, &str, &str)] = &[
    // `world log` (table form), `verify` and replay join each log entry with the world row
    // whose `log_head` is that entry; without it SQLite builds an automatic index per query.
    ("world_worlds_by_log_head", "worlds", "log_head"),
];

/// Whether this connection opens the store for writing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `mode=ro`: no DDL, no lock, nothing written.
    ReadOnly,
    /// Writable: may initialise a fresh file and provisions the indexes.
    Writable,
}

/// Run the open algorithm of store-format.md §2 on `conn`.
///
/// # Errors
/// The schema-version errors (`Legacy`, `Future`, `InvalidVersion`, `Uninitialized`),
/// [`Error::SchemaIntegrity`] when a v4 store lacks `commit_objects`, or SQLite errors.
pub fn open(conn: &Connection, display: &str, mode: Mode) -> Result<(), Error> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let objects = application_objects(conn)?;
    match version {
        0 if objects == 0 => match mode {
            Mode::ReadOnly => Err(Error::Uninitialized {
                path: display.to_string(),
            }),
            Mode::Writable => init_fresh(conn, display),
        },
        0 => Err(Error::LegacySchema {
            path: display.to_string(),
            version,
        }),
        v if v < 0 => Err(Error::InvalidSchemaVersion {
            path: display.to_string(),
            version,
        }),
        v if v < SCHEMA_VERSION => Err(Error::LegacySchema {
            path: display.to_string(),
            version,
        }),
        v if v > SCHEMA_VERSION => Err(Error::FutureSchema {
            path: display.to_string(),
            version,
        }),
        _ => {
            let n: i64 = conn.query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'commit_objects'",
                [],
                |r| r.get(0),
            )?;
            if n != 1 {
                return Err(Error::missing_table(display, "commit_objects"));
            }
            if mode == Mode::Writable {
                // A v4 store missing any table is damaged, not new: writers refuse it and
                // nothing re-creates the table (issue 13 §3); `verify` reports it.
                if let Some(t) = missing_tables(conn)?.into_iter().next() {
                    return Err(Error::missing_table(display, t));
                }
                let tx = conn.unchecked_transaction()?;
                apply_ddl(&tx)?;
                tx.commit()?;
                recheck_version(conn, display)?;
            }
            Ok(())
        }
    }
}

/// The v4 tables absent from `conn`, in schema order.
pub fn missing_tables(conn: &Connection) -> Result<Vec<&'static str>, Error> {
    let mut out = Vec::new();
    for (table, _) in TABLES {
        let n: i64 = conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [table],
            |r| r.get(0),
        )?;
        if n == 0 {
            out.push(*table);
        }
    }
    Ok(out)
}

/// The number of application objects: `sqlite_master` rows whose name does not start with
/// `sqlite_` (the underscore matched literally).
fn application_objects(conn: &Connection) -> Result<i64, Error> {
    Ok(conn.query_row(
        r"SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite\_%' ESCAPE '\'",
        [],
        |r| r.get(0),
    )?)
}

/// Run the idempotent `CREATE … IF NOT EXISTS` statements: the 10 tables, the 5 indexes, then
/// `world`'s own [`WORLD_INDEXES`] and derived tables (`store::episodes`,
/// `store::logview::table`).
fn apply_ddl(conn: &Connection) -> Result<(), Error> {
    for (_, ddl) in TABLES {
        conn.execute_batch(ddl)?;
    }
    for (name, table, cols) in INDEXES {
        conn.execute_batch(&format!(
            "CREATE INDEX IF NOT EXISTS {name} ON {table}({}, {})",
            cols[0], cols[1]
        ))?;
    }
    for (name, table, col) in WORLD_INDEXES {
        conn.execute_batch(&format!(
            "CREATE INDEX IF NOT EXISTS {name} ON {table}({col})"
        ))?;
    }
    // Derived tables kept up to date by every commit (DEC-PERF-8, DEC-PERF-11).
    conn.execute_batch(super::episodes::DDL)?;
    conn.execute_batch(super::logview::table::DDL)?;
    // The log's Merkle tree and the signed checkpoints (DEC-TRUST-1, DEC-TRUST-2).
    conn.execute_batch(super::merkle::DDL)?;
    conn.execute_batch(super::checkpoints::DDL)?;
    Ok(())
}

fn init_fresh(conn: &Connection, display: &str) -> Result<(), Error> {
    let tx = conn.unchecked_transaction()?;
    let objects = application_objects(&tx)?;
    let version: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if objects != 0 || version != 0 {
        return Err(Error::LegacySchema {
            path: display.to_string(),
            version,
        });
    }
    apply_ddl(&tx)?;
    tx.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION}"))?;
    tx.commit()?;
    recheck_version(conn, display)
}

fn recheck_version(conn: &Connection, display: &str) -> Result<(), Error> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version != SCHEMA_VERSION {
        return Err(Error::SchemaIntegrity {
            path: display.to_string(),
            reason: format!(
                "reported user_version {version} after initialization; want {SCHEMA_VERSION}"
            ),
        });
    }
    Ok(())
}

/// Compare the live schema with the v4 shape; each problem is one human-readable line.
/// Extra tables (the ledger's `limits_*`, SQLite's own) are ignored (store-format.md §13.1 #2).
pub fn problems(conn: &Connection) -> Result<Vec<String>, Error> {
    let mut out = Vec::new();
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version != SCHEMA_VERSION {
        out.push(format!("user_version is {version}, want {SCHEMA_VERSION}"));
    }
    for (table, want) in COLUMNS {
        let mut stmt = conn.prepare(&format!("PRAGMA table_info({table})"))?;
        let have: Vec<(String, String, bool, i64)> = stmt
            .query_map([], |r| {
                Ok((r.get(1)?, r.get(2)?, r.get::<_, i64>(3)? != 0, r.get(5)?))
            })?
            .collect::<Result<_, _>>()?;
        if have.is_empty() {
            out.push(format!("table {table} is missing"));
            continue;
        }
        let want: Vec<(String, String, bool, i64)> = want
            .iter()
            .map(|(n, t, nn, pk)| (n.to_string(), t.to_string(), *nn, *pk))
            .collect();
        if have != want {
            out.push(format!("table {table} has columns {have:?}, want {want:?}"));
        }
    }
    for (name, table, cols) in INDEXES {
        if let Some(p) = index_problem(conn, name, table, cols)? {
            out.push(p);
        }
    }
    Ok(out)
}

/// The indexes and triggers `world` creates, beyond the 5 reference indexes [`problems`]
/// checks: every statement [`apply_ddl`] runs and `extra_ddl` (the ledger's and the missions'
/// tables, which live in the same file) is applied to an empty in-memory database and its
/// `sqlite_master` compared with the store's. For each such table the store holds, each of
/// its indexes and triggers must exist with the same statement (whitespace aside): a dropped
/// append-only trigger or a dropped index is a finding, one line each. `world`'s own indexes
/// on the reference's tables ([`WORLD_INDEXES`]) are required only once `world` has
/// provisioned the file (its derived tables exist): a reference-written store read-only
/// lacks them and is read correctly.
///
/// # Errors
/// SQLite errors.
pub fn object_problems(conn: &Connection, extra_ddl: &[&str]) -> Result<Vec<String>, Error> {
    let scratch = Connection::open_in_memory()?;
    apply_ddl(&scratch)?;
    for ddl in extra_ddl {
        scratch.execute_batch(ddl)?;
    }
    type Row = (String, String, String, Option<String>);
    let objects = |c: &Connection| -> Result<Vec<Row>, Error> {
        let mut stmt = c.prepare(
            r"SELECT type, name, tbl_name, sql FROM sqlite_master
              WHERE type IN ('index', 'trigger') AND name NOT LIKE 'sqlite\_%' ESCAPE '\'",
        )?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    };
    let tables: std::collections::HashSet<String> = {
        let mut stmt = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
        let names = stmt
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        names
    };
    let provisioned = ["world_log_view", "world_records_by_episode"]
        .iter()
        .any(|t| tables.contains(*t));
    let have: std::collections::HashMap<(String, String), Option<String>> = objects(conn)?
        .into_iter()
        .map(|(kind, name, _, sql)| ((kind, name), sql))
        .collect();
    let squash = |s: &Option<String>| -> String {
        s.as_deref()
            .unwrap_or("")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out = Vec::new();
    for (kind, name, table, sql) in objects(&scratch)? {
        let reference_table = TABLES.iter().any(|(t, _)| *t == table);
        if INDEXES.iter().any(|(n, _, _)| *n == name)
            || !tables.contains(&table)
            || (reference_table && !provisioned)
        {
            continue;
        }
        match have.get(&(kind.clone(), name.clone())) {
            None => out.push(format!("{kind} {name} on {table} is missing")),
            Some(got) if squash(got) != squash(&sql) => out.push(format!(
                "{kind} {name} on {table} differs from the one world creates"
            )),
            Some(_) => {}
        }
    }
    Ok(out)
}

/// Check one derived index's shape with `PRAGMA index_list` / `index_xinfo`.
pub fn index_problem(
    conn: &Connection,
    name: &str,
    table: &str,
    cols: &[&str; 2],
) -> Result<Option<String>, Error> {
    let mut stmt = conn.prepare(&format!("PRAGMA index_list({table})"))?;
    let listed: Vec<(String, bool, bool)> = stmt
        .query_map([], |r| {
            Ok((
                r.get(1)?,
                r.get::<_, i64>(2)? != 0,
                r.get::<_, i64>(4)? != 0,
            ))
        })?
        .collect::<Result<_, _>>()?;
    let Some((_, unique, partial)) = listed.into_iter().find(|(n, _, _)| n == name) else {
        return Ok(Some(format!("index {name} is missing")));
    };
    if unique || partial {
        return Ok(Some(format!(
            "index {name} must be non-unique and non-partial"
        )));
    }
    let mut stmt = conn.prepare(&format!("PRAGMA index_xinfo({name})"))?;
    let keys: Vec<(String, bool, String)> = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, Option<String>>(2)?.unwrap_or_default(),
                r.get::<_, i64>(3)? != 0,
                r.get(4)?,
                r.get::<_, i64>(5)? != 0,
            ))
        })?
        .filter_map(|row| match row {
            Ok((n, desc, coll, key)) if key => Some(Ok((n, desc, coll))),
            Ok(_) => None,
            Err(e) => Some(Err(e)),
        })
        .collect::<Result<_, _>>()?;
    let ok = keys.len() == 2
        && keys
            .iter()
            .zip(cols)
            .all(|((n, desc, coll), want)| n == want && !desc && coll == "BINARY");
    Ok((!ok).then(|| format!("index {name} has keys {keys:?}, want {cols:?} ascending BINARY")))
}
