//! Missions in a standalone ledger (`world mission … --ledger FILE|URL`, issue 18 §2).
//!
//! The same `mission_*` tables, hash-chained journal, materialised state, outbox and
//! idempotency rules as in the World store file ([`super::durable`]), with the command logic
//! shared through [`crate::ledger::db::Db`] (the ledger layer, DEC-LEDGER-6):
//!
//! - `--ledger FILE`: a standalone SQLite ledger file ([`crate::ledger::file`], made by the
//!   ledger's `init`; [`FileMissions`]); each command is one `BEGIN IMMEDIATE` transaction, as
//!   in the store.
//! - `--ledger postgres://…`: a PostgreSQL ledger ([`PgMissions`]), on the ledger layer's
//!   connection and retry machinery ([`crate::ledger::pg`]). Each command is one READ
//!   COMMITTED transaction that first takes the mission's advisory lock, so the commands of one
//!   mission run one after another and other missions proceed (DEC-MIS-10); a serialization
//!   failure or deadlock is retried at most [`crate::ledger::pg::MAX_RETRIES`] times.
//!
//! Neither creates a ledger: only the ledger's `init` does (DEC-LIM-23). The mission tables
//! are added to an existing ledger by the first `world mission create` on it, in that
//! command's transaction (on PostgreSQL under the ledger's lock as well, with
//! `mission_schema.version` = [`SCHEMA_VERSION`]); every later command checks that version
//! first and refuses any other before reading or writing anything.

use std::path::{Path, PathBuf};

use super::contract::Contract;
use super::durable::{
    self, Applied, Error, JournalEntry, MissionStore, Problem, Request, SqliteMissions, Summary,
};
use super::state::{Actor, State};
use crate::ledger::db::{query_one, Db};
use crate::ledger::pg::{Access, Lock, PgConn, PgTx};
use crate::ledger::Amount;

/// The PostgreSQL mission schema version this build reads and writes
/// (`mission_schema.version`).
pub const SCHEMA_VERSION: i64 = 1;

/// The PostgreSQL DDL of the mission tables (missions.md §6; text compared byte-wise with
/// `COLLATE "C"`, as the ledger's other tables). The journal is append-only (triggers raise on
/// UPDATE, DELETE and TRUNCATE).
pub const PG_DDL: &str = r#"
CREATE TABLE IF NOT EXISTS mission_schema (
  id      BIGINT PRIMARY KEY CHECK (id = 1),
  version BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS mission_missions (
  mission_id    TEXT COLLATE "C" PRIMARY KEY,
  contract_ref  TEXT COLLATE "C" NOT NULL,
  contract      BYTEA NOT NULL,
  created_by    TEXT COLLATE "C" NOT NULL,
  attended      BIGINT NOT NULL,
  created_at_ms TEXT COLLATE "C" NOT NULL,
  revision      BIGINT NOT NULL,
  reserved      TEXT COLLATE "C" NOT NULL,
  settled       TEXT COLLATE "C" NOT NULL,
  last_now      TEXT COLLATE "C" NOT NULL,
  journal_seq   BIGINT NOT NULL,
  head_hash     TEXT COLLATE "C" NOT NULL,
  violations    BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS mission_journal (
  mission_id TEXT COLLATE "C" NOT NULL REFERENCES mission_missions(mission_id),
  seq        BIGINT NOT NULL,
  prev_hash  TEXT COLLATE "C" NOT NULL,
  entry_hash TEXT COLLATE "C" NOT NULL UNIQUE,
  entry      BYTEA NOT NULL,
  PRIMARY KEY (mission_id, seq)
);
CREATE OR REPLACE FUNCTION mission_journal_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'mission_journal is append-only'; END; $$;
DROP TRIGGER IF EXISTS mission_journal_no_change ON mission_journal;
CREATE TRIGGER mission_journal_no_change BEFORE UPDATE OR DELETE ON mission_journal
  FOR EACH ROW EXECUTE FUNCTION mission_journal_append_only();
DROP TRIGGER IF EXISTS mission_journal_no_truncate ON mission_journal;
CREATE TRIGGER mission_journal_no_truncate BEFORE TRUNCATE ON mission_journal
  FOR EACH STATEMENT EXECUTE FUNCTION mission_journal_append_only();
CREATE TABLE IF NOT EXISTS mission_requests (
  mission_id  TEXT COLLATE "C" NOT NULL,
  request_id  TEXT COLLATE "C" NOT NULL,
  command_ref TEXT COLLATE "C" NOT NULL,
  seq         BIGINT NOT NULL,
  PRIMARY KEY (mission_id, request_id)
);
CREATE TABLE IF NOT EXISTS mission_runs (
  mission_id TEXT COLLATE "C" NOT NULL, run_id TEXT COLLATE "C" NOT NULL, body TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (mission_id, run_id)
);
CREATE TABLE IF NOT EXISTS mission_grants (
  mission_id TEXT COLLATE "C" NOT NULL, grant_id TEXT COLLATE "C" NOT NULL, body TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (mission_id, grant_id)
);
CREATE TABLE IF NOT EXISTS mission_operations (
  mission_id TEXT COLLATE "C" NOT NULL, operation_id TEXT COLLATE "C" NOT NULL, body TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (mission_id, operation_id)
);
CREATE TABLE IF NOT EXISTS mission_approvals (
  mission_id TEXT COLLATE "C" NOT NULL, operation_id TEXT COLLATE "C" NOT NULL, body TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (mission_id, operation_id)
);
CREATE TABLE IF NOT EXISTS mission_attempts (
  mission_id TEXT COLLATE "C" NOT NULL, attempt_id TEXT COLLATE "C" NOT NULL, run_id TEXT COLLATE "C" NOT NULL,
  status TEXT COLLATE "C" NOT NULL, body TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (mission_id, attempt_id)
);
CREATE INDEX IF NOT EXISTS mission_attempts_by_status ON mission_attempts(mission_id, status, run_id);
CREATE TABLE IF NOT EXISTS mission_violations (
  mission_id TEXT COLLATE "C" NOT NULL, ord BIGINT NOT NULL, body TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (mission_id, ord)
);
CREATE TABLE IF NOT EXISTS mission_outbox (
  mission_id    TEXT COLLATE "C" NOT NULL,
  attempt_id    TEXT COLLATE "C" NOT NULL,
  seq           BIGINT NOT NULL,
  intent_ref    TEXT COLLATE "C" NOT NULL,
  intent        BYTEA NOT NULL,
  payload       BYTEA NOT NULL,
  preconditions BYTEA NOT NULL,
  PRIMARY KEY (mission_id, attempt_id)
);
"#;

/// Open the missions of the standalone ledger named by `--ledger` / `WORLD_LEDGER`: a
/// `postgres://` (or `postgresql://`) URL, else a SQLite ledger file. Nothing is created.
///
/// # Errors
/// [`Error::Ledger`] with `NotInitialized` naming a missing or empty file (and the command
/// that initialises it), `NotALedger`, `BadLedgerUrl`, or a PostgreSQL connection error
/// (naming the ledger, never the password); SQLite errors.
pub fn open(location: &str) -> Result<Box<dyn MissionStore>, Error> {
    crate::ledger::location::check_syntax(location)?;
    if crate::ledger::location::is_url(location) {
        return Ok(Box::new(PgMissions::connect(location)?));
    }
    Ok(Box::new(FileMissions::open(Path::new(location))?))
}

/// [`open`], naming a ledger file by its canonical path, so that the ledger a binding records
/// (`world session mint --ledger`) and the one an invocation opens (`world invoke --ledger`)
/// compare by [`MissionStore::describe`] whatever relative path either was given
/// (DEC-MIS-14).
///
/// # Errors
/// As [`open`].
pub fn open_canonical(location: &str) -> Result<Box<dyn MissionStore>, Error> {
    crate::ledger::location::check_syntax(location)?;
    if crate::ledger::location::is_url(location) {
        return open(location);
    }
    match std::fs::canonicalize(location) {
        Ok(p) => Ok(Box::new(FileMissions::open(&p)?)),
        Err(_) => open(location),
    }
}

/// Check that `missions` holds the very mission an episode binding names (DEC-MIS-15): the
/// same ledger ([`MissionStore::identity`] = `bound_ledger`) and, when the binding recorded
/// it, the same mission ([`MissionStore::root`] = `bound_root`, so a ledger re-initialised at
/// the same place, or a mission re-created under the same id, is not taken for it). `invoke`,
/// `serve`, `mcp` and `world mission --session` call it on every bound use.
///
/// # Errors
/// `Ok(Some(why))` names the mismatch; `Err` is a storage error or `MISSION_NOT_FOUND`.
pub fn check_bound(
    missions: &dyn MissionStore,
    mission_id: &str,
    bound_ledger: &str,
    bound_root: &str,
) -> Result<Option<String>, Error> {
    let here = missions.identity()?;
    if here != bound_ledger {
        return Ok(Some(format!(
            "the episode's mission {mission_id} is in the ledger {bound_ledger}, not in --ledger {here}"
        )));
    }
    if !bound_root.is_empty() {
        let root = missions.root(mission_id)?;
        if root != bound_root {
            return Ok(Some(format!(
                "mission {mission_id} in the ledger {here} is not the mission the episode was bound to (its creation record hashes to {root}, the binding names {bound_root}: the ledger was re-initialised or the mission re-created); mint a new session"
            )));
        }
    }
    Ok(None)
}

/// The server part of a PostgreSQL ledger's identity: `postgres://HOST:PORT[,HOST:PORT…]`
/// with TCP host names lowercased, socket directories canonicalised (no trailing `/`) and
/// the default port 5432 where the URL names none (no user: every role reaching one schema
/// reaches one ledger).
fn server_identity(config: &postgres::Config) -> String {
    let ports = config.get_ports();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let port = match ports.len() {
                0 => 5432,
                1 => ports[0],
                _ => ports.get(i).copied().unwrap_or(5432),
            };
            let host = match h {
                postgres::config::Host::Tcp(t) => t.to_ascii_lowercase(),
                postgres::config::Host::Unix(p) => std::fs::canonicalize(p)
                    .unwrap_or_else(|_| p.clone())
                    .display()
                    .to_string()
                    .trim_end_matches('/')
                    .to_string(),
            };
            format!("{host}:{port}")
        })
        .collect();
    format!("postgres://{}", hosts.join(","))
}

/// Missions in a standalone SQLite ledger file (`--ledger FILE`).
pub struct FileMissions {
    conn: rusqlite::Connection,
    path: PathBuf,
}

impl FileMissions {
    /// Open an existing ledger file (the ledger's `init` made it); nothing is created.
    ///
    /// # Errors
    /// As [`crate::ledger::file::open`], as [`Error::Ledger`].
    pub fn open(path: &Path) -> Result<FileMissions, Error> {
        Ok(FileMissions {
            conn: crate::ledger::file::open(path, None)?,
            path: path.to_path_buf(),
        })
    }

    fn inner(&self) -> SqliteMissions<'_> {
        SqliteMissions::new(&self.conn)
    }

    /// A busy wait that timed out names the ledger file (L12), not "the store".
    fn named<T>(&self, r: Result<T, Error>) -> Result<T, Error> {
        r.map_err(|e| match e {
            Error::Sqlite(s) if crate::ledger::error::sqlite_busy(&s) => {
                crate::ledger::Error::Busy {
                    ledger: self.describe(),
                }
                .into()
            }
            e => e,
        })
    }
}

impl MissionStore for FileMissions {
    fn describe(&self) -> String {
        self.path.display().to_string()
    }
    fn create(
        &self,
        contract: &Contract,
        actor: &Actor,
        attended: bool,
        now: Amount,
    ) -> Result<State, Error> {
        self.named(self.inner().create(contract, actor, attended, now))
    }
    fn apply(
        &self,
        mission_id: &str,
        request: &Request,
        actor: &Actor,
        now: Amount,
    ) -> Result<Applied, Error> {
        self.named(self.inner().apply(mission_id, request, actor, now))
    }
    fn dry_run(
        &self,
        mission_id: &str,
        request: &Request,
        actor: &Actor,
        now: Amount,
    ) -> Result<Applied, Error> {
        self.named(self.inner().dry_run(mission_id, request, actor, now))
    }
    fn state(&self, mission_id: &str) -> Result<State, Error> {
        self.inner().state(mission_id)
    }
    fn list(&self) -> Result<Vec<Summary>, Error> {
        self.inner().list()
    }
    fn journal(&self, mission_id: &str) -> Result<Vec<JournalEntry>, Error> {
        self.inner().journal(mission_id)
    }
    fn verify(&self) -> Result<Vec<Problem>, Error> {
        self.inner().verify()
    }
    fn identity(&self) -> Result<String, Error> {
        Ok(std::fs::canonicalize(&self.path)
            .unwrap_or_else(|_| self.path.clone())
            .display()
            .to_string())
    }
    fn root(&self, mission_id: &str) -> Result<String, Error> {
        self.inner().root(mission_id)
    }
}

/// Missions in a PostgreSQL ledger (`--ledger postgres://…`). Not `Sync`: one command at a
/// time per connection.
pub struct PgMissions {
    ledger: PgConn,
    /// [`server_identity`] of the URL.
    server: String,
}

fn retryable(e: &Error) -> bool {
    matches!(e, Error::Ledger(l) if l.is_retryable())
}

/// Commit a command's transaction on success and on `EXPOSURE_EXCEEDED` (its journalled
/// violation must persist).
fn keep_applied(r: &Result<Applied, Error>) -> bool {
    match r {
        Ok(_) => true,
        Err(Error::Rejected(rej)) => rej.code == super::Code::ExposureExceeded,
        Err(_) => false,
    }
}

/// `true` when the mission tables exist; refuses a ledger that was never initialised and a
/// ledger or mission schema of another version ([`PgTx::base_version`]).
fn prologue(db: &PgTx<'_, '_>) -> Result<bool, Error> {
    let Some(version) = db.base_version("mission_schema")? else {
        return Ok(false);
    };
    if version != Some(SCHEMA_VERSION) {
        return Err(Error::SchemaVersion {
            ledger: db.ledger_name().to_string(),
            found: version.map_or("none".into(), |v| v.to_string()),
            want: SCHEMA_VERSION,
        });
    }
    Ok(true)
}

impl PgMissions {
    /// Connect to the PostgreSQL ledger at `url`; nothing is read or written yet.
    ///
    /// # Errors
    /// [`Error::Ledger`] with `BadLedgerUrl` or a connection / authentication error naming the
    /// ledger (never the password).
    pub fn connect(url: &str) -> Result<PgMissions, Error> {
        let ledger = PgConn::connect(url)?;
        let server = url
            .parse::<postgres::Config>()
            .map(|c| server_identity(&c))
            .map_err(|e| crate::ledger::Error::BadLedgerUrl { why: e.to_string() })?;
        Ok(PgMissions { ledger, server })
    }

    /// A mission command's transaction: READ COMMITTED under the mission's advisory lock.
    fn write<T>(
        &self,
        mission_id: &str,
        body: impl FnMut(&PgTx<'_, '_>) -> Result<T, Error>,
        keep: impl Fn(&Result<T, Error>) -> bool,
    ) -> Result<T, Error> {
        self.ledger.transaction(
            Access::Write(Lock::Mission(mission_id)),
            body,
            keep,
            retryable,
        )
    }

    /// One REPEATABLE READ, READ ONLY snapshot.
    fn read<T>(&self, body: impl FnMut(&PgTx<'_, '_>) -> Result<T, Error>) -> Result<T, Error> {
        self.ledger
            .transaction(Access::Read, body, |_| false, retryable)
    }
}

impl MissionStore for PgMissions {
    fn describe(&self) -> String {
        self.ledger.name().to_string()
    }

    fn create(
        &self,
        contract: &Contract,
        actor: &Actor,
        attended: bool,
        now: Amount,
    ) -> Result<State, Error> {
        self.write(
            &contract.mission_id,
            |db| {
                if !prologue(db)? {
                    // The first mission of this ledger: add the tables, under the ledger's
                    // lock so two first creates do not race on the DDL.
                    db.lock_ledger()?;
                    if !prologue(db)? {
                        // The re-check above can miss tables another first create committed
                        // while this one waited for the lock (the session's catalog cache
                        // keeps "no such table" until a relation lock makes it look again):
                        // the DDL is idempotent and the version row is inserted only if
                        // missing, then checked like any other (F6).
                        db.batch(PG_DDL)?;
                        db.exec(
                            "INSERT INTO mission_schema (id, version) VALUES (1, ?1) ON CONFLICT (id) DO NOTHING",
                            &crate::ledger::db::vals![SCHEMA_VERSION],
                        )?;
                        if !prologue(db)? {
                            return Err(Error::Corrupt(format!(
                                "the mission tables of {} did not appear after they were created",
                                db.ledger_name()
                            )));
                        }
                    }
                }
                db.guard_truncate("mission_journal", "mission_journal_append_only")?;
                super::seal::ensure_table(db)?;
                durable::create_db(db, contract, actor, attended, now)
            },
            Result::is_ok,
        )
    }

    fn apply(
        &self,
        mission_id: &str,
        request: &Request,
        actor: &Actor,
        now: Amount,
    ) -> Result<Applied, Error> {
        self.write(
            mission_id,
            |db| {
                if !prologue(db)? {
                    return Err(durable::not_found(mission_id));
                }
                durable::apply_db(db, mission_id, request, actor, now)
            },
            keep_applied,
        )
    }

    fn dry_run(
        &self,
        mission_id: &str,
        request: &Request,
        actor: &Actor,
        now: Amount,
    ) -> Result<Applied, Error> {
        self.write(
            mission_id,
            |db| {
                if !prologue(db)? {
                    return Err(durable::not_found(mission_id));
                }
                durable::apply_db(db, mission_id, request, actor, now)
            },
            |_| false,
        )
    }

    fn state(&self, mission_id: &str) -> Result<State, Error> {
        self.read(|db| {
            if !prologue(db)? {
                return Err(durable::not_found(mission_id));
            }
            durable::load_full_db(db, mission_id)
        })
    }

    fn list(&self) -> Result<Vec<Summary>, Error> {
        self.read(|db| {
            if !prologue(db)? {
                return Ok(Vec::new());
            }
            durable::list_db(db)
        })
    }

    fn journal(&self, mission_id: &str) -> Result<Vec<JournalEntry>, Error> {
        self.read(|db| {
            if !prologue(db)? {
                return Err(durable::not_found(mission_id));
            }
            durable::journal_db(db, mission_id)
        })
    }

    fn verify(&self) -> Result<Vec<Problem>, Error> {
        self.read(|db| {
            if !prologue(db)? {
                return Ok(Vec::new());
            }
            durable::check_db(db)
        })
    }

    fn identity(&self) -> Result<String, Error> {
        self.read(|db| {
            let r = query_one(
                db,
                "SELECT current_database()::text, current_schema()::text",
                &[],
            )?;
            let db_name = r.text(0)?;
            let schema = r.text(1).map_err(|_| {
                Error::from(crate::ledger::Error::NotInitialized {
                    ledger: db.ledger_name().to_string(),
                    why: "has no current schema (no schema of the search_path exists)".into(),
                })
            })?;
            Ok(format!("{}/{db_name}#{schema}", self.server))
        })
    }

    fn root(&self, mission_id: &str) -> Result<String, Error> {
        self.read(|db| {
            if !prologue(db)? {
                return Err(durable::not_found(mission_id));
            }
            durable::root_db(db, mission_id)
        })
    }
}

/// `true` when mission `mission_id` exists in the ledger (for refusing a duplicate `create`
/// before asking anybody).
///
/// # Errors
/// As [`MissionStore::state`], less `MISSION_NOT_FOUND`.
pub fn exists(m: &dyn MissionStore, mission_id: &str) -> Result<bool, Error> {
    match m.state(mission_id) {
        Ok(_) => Ok(true),
        Err(Error::Rejected(r)) if r.code == super::Code::MissionNotFound => Ok(false),
        Err(e) => Err(e),
    }
}
