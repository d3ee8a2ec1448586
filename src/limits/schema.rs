//! The `limits_*` tables (limits.md §7) and the standalone ledger file settings.
//!
//! All tables are prefixed `limits_` so they can live beside the World store's v4 schema without
//! touching its tables, indexes or `user_version`. Amounts and times are TEXT canonical decimals
//! (never REAL); revisions are INTEGER.

use rusqlite::Connection;

/// The DDL, idempotent (`IF NOT EXISTS`). `limits_events` is append-only (triggers refuse
/// UPDATE and DELETE) and its `prev_hash` is UNIQUE, so the hash chain cannot fork.
pub const DDL: &str = r#"
CREATE TABLE IF NOT EXISTS limits_meta (
  id              INTEGER PRIMARY KEY CHECK (id = 1),
  profile         TEXT NOT NULL,
  ledger_id       TEXT NOT NULL,
  unit            TEXT NOT NULL,
  config_ref      TEXT NOT NULL,
  config_json     BLOB NOT NULL,
  revision        INTEGER NOT NULL,
  last_now_ms     TEXT NOT NULL,
  head_event_hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS limits_scopes (
  scope_id         TEXT PRIMARY KEY,
  ordinal          INTEGER NOT NULL UNIQUE,
  kind             TEXT NOT NULL,
  parent_id        TEXT REFERENCES limits_scopes(scope_id),
  depends_on       TEXT NOT NULL,
  bound_cost       TEXT,
  bound_handoff    TEXT,
  bound_active_ms  TEXT,
  bound_elapsed_ms TEXT,
  bound_attempts   TEXT,
  started_at_ms    TEXT NOT NULL,
  stopped_at_ms    TEXT,
  stop_reason      TEXT,
  usage_ordinary   TEXT NOT NULL,
  usage_handoff    TEXT NOT NULL,
  active_static    TEXT NOT NULL,
  attempts         TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS limits_closure (
  scope_id    TEXT NOT NULL REFERENCES limits_scopes(scope_id),
  ancestor_id TEXT NOT NULL REFERENCES limits_scopes(scope_id),
  distance    INTEGER NOT NULL,
  PRIMARY KEY (scope_id, ancestor_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS limits_closure_by_ancestor ON limits_closure(ancestor_id, scope_id);
CREATE TABLE IF NOT EXISTS limits_attempts (
  attempt_id        TEXT PRIMARY KEY,
  operation_id      TEXT NOT NULL,
  scope_id          TEXT NOT NULL REFERENCES limits_scopes(scope_id),
  run_id            TEXT,
  purpose           TEXT NOT NULL,
  amount            TEXT NOT NULL,
  max_active_ms     TEXT NOT NULL,
  state             TEXT NOT NULL,
  outcome           TEXT,
  actual_cost       TEXT,
  paired            INTEGER NOT NULL,
  reserved_at_ms    TEXT NOT NULL,
  dispatched_at_ms  TEXT,
  settled_at_ms     TEXT,
  settled_active_ms TEXT,
  actor_id          TEXT NOT NULL,
  actor_kind        TEXT NOT NULL,
  revision          INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS limits_attempts_by_state ON limits_attempts(state, scope_id);
CREATE TABLE IF NOT EXISTS limits_requests (
  request_id   TEXT PRIMARY KEY,
  command_hash TEXT NOT NULL,
  result       TEXT NOT NULL,
  revision     INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS limits_events (
  revision   INTEGER PRIMARY KEY,
  prev_hash  TEXT NOT NULL UNIQUE,
  event_hash TEXT NOT NULL UNIQUE,
  event      BLOB NOT NULL
);
CREATE TRIGGER IF NOT EXISTS limits_events_no_update BEFORE UPDATE ON limits_events
BEGIN SELECT RAISE(ABORT, 'limits_events is append-only'); END;
CREATE TRIGGER IF NOT EXISTS limits_events_no_delete BEFORE DELETE ON limits_events
BEGIN SELECT RAISE(ABORT, 'limits_events is append-only'); END;
CREATE TABLE IF NOT EXISTS limits_violations (
  id                INTEGER PRIMARY KEY,
  attempt_id        TEXT NOT NULL REFERENCES limits_attempts(attempt_id),
  scope_id          TEXT NOT NULL,
  admitted          TEXT NOT NULL,
  claimed           TEXT NOT NULL,
  actor_id          TEXT NOT NULL,
  actor_kind        TEXT NOT NULL,
  at_ms             TEXT NOT NULL,
  revision          INTEGER NOT NULL,
  resolved_revision INTEGER
);
"#;

/// Every ledger table, in dependency order (for dumps and checks).
pub const TABLES: [&str; 7] = [
    "limits_meta",
    "limits_scopes",
    "limits_closure",
    "limits_attempts",
    "limits_requests",
    "limits_events",
    "limits_violations",
];

/// Create the ledger tables if missing. Touches nothing else (no pragma, no other table).
///
/// # Errors
/// SQLite errors.
pub fn create(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(DDL)?;
    conn.execute_batch(super::seal::SQLITE_DDL)
}

/// Create the ledger tables (idempotent) on either backend, in the caller's transaction
/// (`init`): on PostgreSQL with the version row ([`super::pg::create_schema`]).
///
/// # Errors
/// Storage errors.
pub(crate) fn create_db(db: &dyn crate::ledger::db::Db) -> Result<(), super::Error> {
    match db.backend() {
        crate::ledger::db::Backend::Postgres => super::pg::create_schema(db),
        crate::ledger::db::Backend::Sqlite => {
            db.exec_batch(DDL)?;
            db.exec_batch(super::seal::SQLITE_DDL)?;
            Ok(())
        }
    }
}

/// The ledger's current revision in `conn`: 0 when it is not initialised or unreadable (the
/// revision a rejection made before the ledger is read reports).
pub fn current_revision(conn: &Connection) -> u128 {
    match initialized(conn) {
        Ok(true) => conn
            .query_row("SELECT revision FROM limits_meta WHERE id = 1", [], |r| {
                r.get::<_, i64>(0)
            })
            .ok()
            .and_then(|r| u128::try_from(r).ok())
            .unwrap_or(0),
        _ => 0,
    }
}

/// `true` when `limits_meta` exists and holds the config row (the ledger is initialised).
///
/// # Errors
/// SQLite errors.
pub fn initialized(conn: &Connection) -> rusqlite::Result<bool> {
    let table: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'limits_meta'",
        [],
        |r| r.get(0),
    )?;
    if table == 0 {
        return Ok(false);
    }
    let rows: i64 = conn.query_row("SELECT count(*) FROM limits_meta", [], |r| r.get(0))?;
    Ok(rows > 0)
}
