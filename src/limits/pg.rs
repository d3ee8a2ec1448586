//! The limits ledger on PostgreSQL (`--ledger postgres://…`, issue 18, limits.md §7).
//!
//! The same commands, codes, report, hash-chained events and idempotency rules as the SQLite
//! ledger: the command logic is shared through [`crate::ledger::db::Db`]; the connection,
//! locks and retries are the ledger layer's ([`crate::ledger::pg`], DEC-LIM-16). Every limits
//! command takes the ledger's one lock ([`Lock::Ledger`]).
//!
//! Schema (DEC-LIM-17): the `limits_*` tables live in the connection's current schema (the
//! `search_path`; one ledger per schema), created by `init` in its own transaction, with
//! `limits_schema.version` = [`SCHEMA_VERSION`]. Every command checks the version first; any
//! other version is refused before anything is read or written.

use super::{ActorFacts, EvidenceCheck, Report, Request, Verdict};
use super::{Code, Error};
use crate::ledger::db::{Db, Val};
use crate::ledger::pg::{Access, Lock, PgConn, PgTx};
pub use crate::ledger::pg::{MAX_RETRIES, SCHEMA_VERSION};

/// The PostgreSQL DDL (limits.md §7 tables; text compared byte-wise with `COLLATE "C"`).
pub const DDL: &str = r#"
CREATE TABLE IF NOT EXISTS limits_schema (
  id      BIGINT PRIMARY KEY CHECK (id = 1),
  version BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS limits_meta (
  id              BIGINT PRIMARY KEY CHECK (id = 1),
  profile         TEXT COLLATE "C" NOT NULL,
  ledger_id       TEXT COLLATE "C" NOT NULL,
  unit            TEXT COLLATE "C" NOT NULL,
  config_ref      TEXT COLLATE "C" NOT NULL,
  config_json     BYTEA NOT NULL,
  revision        BIGINT NOT NULL,
  last_now_ms     TEXT COLLATE "C" NOT NULL,
  head_event_hash TEXT COLLATE "C" NOT NULL
);
CREATE TABLE IF NOT EXISTS limits_scopes (
  scope_id         TEXT COLLATE "C" PRIMARY KEY,
  ordinal          BIGINT NOT NULL UNIQUE,
  kind             TEXT COLLATE "C" NOT NULL,
  parent_id        TEXT COLLATE "C" REFERENCES limits_scopes(scope_id),
  depends_on       TEXT COLLATE "C" NOT NULL,
  bound_cost       TEXT COLLATE "C",
  bound_handoff    TEXT COLLATE "C",
  bound_active_ms  TEXT COLLATE "C",
  bound_elapsed_ms TEXT COLLATE "C",
  bound_attempts   TEXT COLLATE "C",
  started_at_ms    TEXT COLLATE "C" NOT NULL,
  stopped_at_ms    TEXT COLLATE "C",
  stop_reason      TEXT COLLATE "C",
  usage_ordinary   TEXT COLLATE "C" NOT NULL,
  usage_handoff    TEXT COLLATE "C" NOT NULL,
  active_static    TEXT COLLATE "C" NOT NULL,
  attempts         TEXT COLLATE "C" NOT NULL
);
CREATE TABLE IF NOT EXISTS limits_closure (
  scope_id    TEXT COLLATE "C" NOT NULL REFERENCES limits_scopes(scope_id),
  ancestor_id TEXT COLLATE "C" NOT NULL REFERENCES limits_scopes(scope_id),
  distance    BIGINT NOT NULL,
  PRIMARY KEY (scope_id, ancestor_id)
);
CREATE INDEX IF NOT EXISTS limits_closure_by_ancestor ON limits_closure(ancestor_id, scope_id);
CREATE TABLE IF NOT EXISTS limits_attempts (
  attempt_id        TEXT COLLATE "C" PRIMARY KEY,
  operation_id      TEXT COLLATE "C" NOT NULL,
  scope_id          TEXT COLLATE "C" NOT NULL REFERENCES limits_scopes(scope_id),
  run_id            TEXT COLLATE "C",
  purpose           TEXT COLLATE "C" NOT NULL,
  amount            TEXT COLLATE "C" NOT NULL,
  max_active_ms     TEXT COLLATE "C" NOT NULL,
  state             TEXT COLLATE "C" NOT NULL,
  outcome           TEXT COLLATE "C",
  actual_cost       TEXT COLLATE "C",
  paired            BIGINT NOT NULL,
  reserved_at_ms    TEXT COLLATE "C" NOT NULL,
  dispatched_at_ms  TEXT COLLATE "C",
  settled_at_ms     TEXT COLLATE "C",
  settled_active_ms TEXT COLLATE "C",
  actor_id          TEXT COLLATE "C" NOT NULL,
  actor_kind        TEXT COLLATE "C" NOT NULL,
  revision          BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS limits_attempts_by_state ON limits_attempts(state, scope_id);
CREATE TABLE IF NOT EXISTS limits_requests (
  request_id   TEXT COLLATE "C" PRIMARY KEY,
  command_hash TEXT COLLATE "C" NOT NULL,
  result       TEXT COLLATE "C" NOT NULL,
  revision     BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS limits_events (
  revision   BIGINT PRIMARY KEY,
  prev_hash  TEXT COLLATE "C" NOT NULL UNIQUE,
  event_hash TEXT COLLATE "C" NOT NULL UNIQUE,
  event      BYTEA NOT NULL
);
CREATE OR REPLACE FUNCTION limits_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'limits_events is append-only'; END; $$;
DROP TRIGGER IF EXISTS limits_events_no_change ON limits_events;
CREATE TRIGGER limits_events_no_change BEFORE UPDATE OR DELETE ON limits_events
  FOR EACH ROW EXECUTE FUNCTION limits_events_append_only();
DROP TRIGGER IF EXISTS limits_events_no_truncate ON limits_events;
CREATE TRIGGER limits_events_no_truncate BEFORE TRUNCATE ON limits_events
  FOR EACH STATEMENT EXECUTE FUNCTION limits_events_append_only();
CREATE TABLE IF NOT EXISTS limits_violations (
  id                BIGSERIAL PRIMARY KEY,
  attempt_id        TEXT COLLATE "C" NOT NULL REFERENCES limits_attempts(attempt_id),
  scope_id          TEXT COLLATE "C" NOT NULL,
  admitted          TEXT COLLATE "C" NOT NULL,
  claimed           TEXT COLLATE "C" NOT NULL,
  actor_id          TEXT COLLATE "C" NOT NULL,
  actor_kind        TEXT COLLATE "C" NOT NULL,
  at_ms             TEXT COLLATE "C" NOT NULL,
  revision          BIGINT NOT NULL,
  resolved_revision BIGINT
);
"#;

/// A connection to a limits ledger on PostgreSQL. Not `Sync`: one command at a time.
pub struct PgLedger {
    conn: PgConn,
}

/// Retry a limits transaction on a serialization failure or deadlock.
fn retryable(e: &Error) -> bool {
    matches!(e, Error::Storage(s) if s.is_retryable())
}

impl PgLedger {
    /// Connect to the ledger at `url` (a libpq-style `postgres://` URL); nothing is read or
    /// written yet ([`PgConn::connect`]).
    ///
    /// # Errors
    /// A URL that does not parse; the server refusing the connection or the credentials (the
    /// message names the ledger, never the password).
    pub fn connect(url: &str) -> Result<PgLedger, Error> {
        Ok(PgLedger {
            conn: PgConn::connect(url)?,
        })
    }

    /// `postgres://user@host:port/db` (no password).
    pub fn name(&self) -> &str {
        self.conn.name()
    }

    /// The connection (for reads that are not limits commands, e.g. `world verify --ledger`).
    pub(crate) fn conn(&self) -> &PgConn {
        &self.conn
    }

    /// Run one command in its own transaction at `now_ms` (Unix ms): the ledger lock first,
    /// the schema version check, then the shared command logic; committed on success and on
    /// `exposure_exceeded` (its violation row persists), rolled back otherwise. With `dry_run`
    /// it is rolled back whatever the result (the attended dry run).
    ///
    /// # Errors
    /// [`Error::Rejected`] with the verdict; storage errors (connection, lock timeout, a
    /// serialization failure after [`MAX_RETRIES`] retries, another schema version).
    pub fn execute(
        &self,
        request: &Request,
        actor: &ActorFacts,
        now_ms: u128,
        evidence: &dyn EvidenceCheck,
        dry_run: bool,
    ) -> Result<Verdict, Error> {
        self.conn.transaction(
            Access::Write(Lock::Ledger),
            |db| {
                check_version(db)
                    .and_then(|()| super::ledger::apply_db(db, request, actor, now_ms, evidence))
            },
            |result| {
                !dry_run
                    && match result {
                        Ok(_) => true,
                        Err(Error::Rejected(v)) => v.code == Code::ExposureExceeded,
                        Err(_) => false,
                    }
            },
            retryable,
        )
    }

    /// The report at `now_ms` from one consistent snapshot (limits.md §8).
    ///
    /// # Errors
    /// [`Error::Rejected`] with `ledger_not_initialized` or `scope_not_found`; storage errors.
    pub fn report(&self, now_ms: u128, scope: Option<&str>) -> Result<Report, Error> {
        self.conn.transaction(
            Access::Read,
            |db| check_version(db).and_then(|()| super::report::report(db, now_ms, scope)),
            |_| false,
            |_| false,
        )
    }

    /// The current revision (0 when not initialised), for CLI-side rejections.
    pub fn revision(&self) -> u128 {
        self.conn
            .transaction(
                Access::Read,
                |db| Ok::<_, Error>(super::ledger::load_meta(db).ok().flatten()),
                |_| false,
                |_| false,
            )
            .ok()
            .flatten()
            .map_or(0, |m| u128::from(m.revision))
    }
}

/// Refuse a limits schema of another version (`Ok` also when the ledger has no schema).
///
/// # Errors
/// A storage `SchemaVersion`; PostgreSQL errors.
pub(crate) fn check_version(db: &PgTx<'_, '_>) -> Result<(), Error> {
    let wrong = |found: Option<i64>| {
        Error::Storage(crate::ledger::Error::SchemaVersion {
            ledger: db.ledger_name().to_string(),
            found: found.map_or("none".into(), |v| v.to_string()),
            want: SCHEMA_VERSION,
        })
    };
    if !db.table_exists("limits_schema")? {
        if db.table_exists("limits_meta")? {
            return Err(wrong(None));
        }
        return Ok(());
    }
    let rows = db.query("SELECT version FROM limits_schema WHERE id = 1", &[])?;
    let found = rows.first().map(|r| r.int(0)).transpose()?;
    if found != Some(SCHEMA_VERSION) {
        return Err(wrong(found));
    }
    Ok(())
}

/// Create the limits tables (idempotent) with their version row and `limits_folds`, in this
/// transaction (`init`).
///
/// # Errors
/// PostgreSQL errors.
pub(crate) fn create_schema(db: &dyn Db) -> Result<(), Error> {
    db.exec_batch(DDL)?;
    db.exec(
        "INSERT INTO limits_schema (id, version) VALUES (1, ?1) ON CONFLICT (id) DO NOTHING",
        &[Val::Int(SCHEMA_VERSION)],
    )?;
    db.exec_batch(&super::seal::pg_ddl())?;
    Ok(())
}
