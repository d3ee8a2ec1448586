//! Durable missions in the World store file or a standalone ledger (missions.md §6, issue 18
//! §2).
//!
//! Tables `mission_*` beside the store's v4 schema (the reference ignores them, as it ignores
//! `limits_*`): the contract (`mission_missions`, with the materialised scalars), an append-only
//! hash-chained command journal (`mission_journal`), the materialised state one row per entity
//! (`mission_runs`, `mission_grants`, `mission_operations`, `mission_attempts`,
//! `mission_approvals`, `mission_violations`), the outbox of admitted intents
//! (`mission_outbox`) and the idempotency keys (`mission_requests`).
//!
//! Each command is one transaction: [`MissionStore::apply`] opens `BEGIN IMMEDIATE`, loads only
//! the rows the command reads (its working set: the run, the grant chain, the operation, the
//! attempt, …), runs the pure [`super::apply`] on that partial state, and writes back the
//! journal row, the changed entity rows and the outbox intent before committing — or rolls all
//! of them back together. The cost of a command therefore does not grow with the number of
//! settled attempts. [`apply_in`] does the same inside a transaction the caller owns (the
//! broker pairs admission with its effect intent this way, §7).
//!
//! The command logic is written once against [`crate::ledger::db::Db`] (the SQL surface the
//! limits ledger shares between SQLite and PostgreSQL); [`SqliteMissions`] runs it on a SQLite
//! connection (the store file, or a standalone ledger file) and [`super::ledger`] on a
//! PostgreSQL ledger.
//!
//! Journal entry (TR-CJSON-1, hashed with sha256 into `entry_hash`): `{"missionId", "seq",
//! "prevHash", "command", "now", "actor", "requestId", "result"}`; `seq` counts from 1,
//! `prevHash` of entry 1 is the `contractRef`. Accepted commands and `EXPOSURE_EXCEEDED`
//! rejections (whose violation record must persist) are journalled; other rejections write
//! nothing.

use std::collections::BTreeMap;
use std::sync::Arc;

use rusqlite::{Connection, TransactionBehavior};
use serde::Serialize;

use crate::encoding::trcjson::{self, CValue};
use crate::encoding::HashRef;
use crate::ledger::db::{query_opt, vals, Db};
use crate::ledger::Amount;

use super::codes::{Code, Rejection};
use super::command::Command;
use super::contract::Contract;
use super::state::{Actor, Approval, Attempt, Grant, Operation, Run, State, Violation};

mod check;
mod load;
pub use check::*;
pub use load::*;

/// The `mission_*` DDL, idempotent. The journal is append-only (triggers refuse UPDATE and
/// DELETE).
pub const DDL: &str = r#"
CREATE TABLE IF NOT EXISTS mission_missions (
  mission_id    TEXT PRIMARY KEY,
  contract_ref  TEXT NOT NULL,
  contract      BLOB NOT NULL,
  created_by    TEXT NOT NULL,
  attended      INTEGER NOT NULL,
  created_at_ms TEXT NOT NULL,
  revision      INTEGER NOT NULL,
  reserved      TEXT NOT NULL,
  settled       TEXT NOT NULL,
  last_now      TEXT NOT NULL,
  journal_seq   INTEGER NOT NULL,
  head_hash     TEXT NOT NULL,
  violations    INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS mission_journal (
  mission_id TEXT NOT NULL REFERENCES mission_missions(mission_id),
  seq        INTEGER NOT NULL,
  prev_hash  TEXT NOT NULL,
  entry_hash TEXT NOT NULL UNIQUE,
  entry      BLOB NOT NULL,
  PRIMARY KEY (mission_id, seq)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS mission_journal_no_update BEFORE UPDATE ON mission_journal
BEGIN SELECT RAISE(ABORT, 'mission_journal is append-only'); END;
CREATE TRIGGER IF NOT EXISTS mission_journal_no_delete BEFORE DELETE ON mission_journal
BEGIN SELECT RAISE(ABORT, 'mission_journal is append-only'); END;
CREATE TABLE IF NOT EXISTS mission_requests (
  mission_id  TEXT NOT NULL,
  request_id  TEXT NOT NULL,
  command_ref TEXT NOT NULL,
  seq         INTEGER NOT NULL,
  PRIMARY KEY (mission_id, request_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS mission_runs (
  mission_id TEXT NOT NULL, run_id TEXT NOT NULL, body TEXT NOT NULL,
  PRIMARY KEY (mission_id, run_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS mission_grants (
  mission_id TEXT NOT NULL, grant_id TEXT NOT NULL, body TEXT NOT NULL,
  PRIMARY KEY (mission_id, grant_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS mission_operations (
  mission_id TEXT NOT NULL, operation_id TEXT NOT NULL, body TEXT NOT NULL,
  PRIMARY KEY (mission_id, operation_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS mission_approvals (
  mission_id TEXT NOT NULL, operation_id TEXT NOT NULL, body TEXT NOT NULL,
  PRIMARY KEY (mission_id, operation_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS mission_attempts (
  mission_id TEXT NOT NULL, attempt_id TEXT NOT NULL, run_id TEXT NOT NULL,
  status TEXT NOT NULL, body TEXT NOT NULL,
  PRIMARY KEY (mission_id, attempt_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS mission_attempts_by_status ON mission_attempts(mission_id, status, run_id);
CREATE TABLE IF NOT EXISTS mission_violations (
  mission_id TEXT NOT NULL, ord INTEGER NOT NULL, body TEXT NOT NULL,
  PRIMARY KEY (mission_id, ord)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS mission_outbox (
  mission_id    TEXT NOT NULL,
  attempt_id    TEXT NOT NULL,
  seq           INTEGER NOT NULL,
  intent_ref    TEXT NOT NULL,
  intent        BLOB NOT NULL,
  payload       BLOB NOT NULL,
  preconditions BLOB NOT NULL,
  PRIMARY KEY (mission_id, attempt_id)
) WITHOUT ROWID;
"#;

/// Every mission table.
pub const TABLES: [&str; 10] = [
    "mission_missions",
    "mission_journal",
    "mission_requests",
    "mission_runs",
    "mission_grants",
    "mission_operations",
    "mission_approvals",
    "mission_attempts",
    "mission_violations",
    "mission_outbox",
];

/// Errors of the durable mission store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The command (or `create`) was refused; nothing was written, except the journalled
    /// violation of `EXPOSURE_EXCEEDED`.
    #[error("mission: {0}")]
    Rejected(Box<Rejection>),
    /// Stored mission rows break an invariant the store maintains.
    #[error("mission: stored data is corrupt: {0}")]
    Corrupt(String),
    /// SQLite failed.
    #[error("mission: sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The ledger's storage refused or failed ([`crate::ledger::Error`]): not initialised
    /// (naming the ledger and the command that initialises it), not a ledger, a URL that does
    /// not parse, PostgreSQL errors (connection, authentication, network loss, lock timeout,
    /// serialization failure after the retries; the transaction was rolled back), a ledger
    /// schema of another version, busy. Messages name the ledger, never a password.
    #[error("mission: {0}")]
    Ledger(Box<crate::ledger::Error>),
    /// The ledger's mission tables are of another version than this build reads.
    #[error("mission: ledger {ledger} has mission schema version {found}; this world reads version {want}")]
    SchemaVersion {
        /// The ledger (`postgres://user@host:port/db`, never the password).
        ledger: String,
        /// The version found.
        found: String,
        /// The version this build reads.
        want: i64,
    },
}

impl From<crate::ledger::Error> for Error {
    fn from(e: crate::ledger::Error) -> Self {
        match e {
            crate::ledger::Error::Sqlite(s) => Error::Sqlite(s),
            crate::ledger::Error::Corrupt(c) => Error::Corrupt(c),
            other => Error::Ledger(Box::new(other)),
        }
    }
}

impl From<Rejection> for Error {
    fn from(r: Rejection) -> Self {
        Error::Rejected(Box::new(r))
    }
}

impl Error {
    /// A lock wait on the ledger that timed out (exit 6; L12).
    pub fn is_busy(&self) -> bool {
        match self {
            Error::Ledger(l) => l.is_busy(),
            Error::Sqlite(s) => crate::ledger::error::sqlite_busy(s),
            _ => false,
        }
    }

    /// The rejection, if this is one.
    pub fn rejection(&self) -> Option<&Rejection> {
        match self {
            Error::Rejected(r) => Some(r),
            _ => None,
        }
    }
}

fn corrupt(what: impl std::fmt::Display) -> Error {
    Error::Corrupt(what.to_string())
}

/// One command to apply: the command, an optional idempotency key, and who sends it.
#[derive(Clone, Debug)]
pub struct Request {
    /// The command.
    pub command: Command,
    /// `--request-id`; `None` for `admit` means `admit:<attemptId>` (§6), and no idempotency
    /// for every other command.
    pub request_id: Option<String>,
    /// `now` is the system clock read before the transaction (no `--now`): the transaction
    /// uses `max(now, mission's lastNow)`, read under the mission's lock, so a process that
    /// waited for the lock (another host, clock skew, an operator's future `--now`) never
    /// meets `TIME_REGRESSED`; an `admit` whose `authorizationCheckedAt` is that same reading
    /// (the broker's own check, `mission admit` without `--authorization-checked-at`) moves
    /// with it. The journal records the clock and command used. `false`: `now` was given
    /// (`--now`, `WORLD_TEST_NOW`) and is checked as given (DEC-MIS-17, as DEC-LIM-18).
    pub implicit_now: bool,
}

impl Request {
    /// A request without an idempotency key whose `now` is checked as given.
    pub fn new(command: Command) -> Request {
        Request {
            command,
            request_id: None,
            implicit_now: false,
        }
    }

    /// Mark `now` as the implicit system clock (see [`Request::implicit_now`]).
    pub fn on_implicit_clock(mut self, yes: bool) -> Request {
        self.implicit_now = yes;
        self
    }

    /// The clock and command a transaction applies, given the mission's `last_now`: as sent
    /// for a given clock; `max(now, last_now)` (and an admit's authorization check taken at
    /// `now` moved with it) for the implicit clock.
    pub fn effective(
        &self,
        now: Amount,
        last_now: Amount,
    ) -> (Amount, std::borrow::Cow<'_, Command>) {
        use std::borrow::Cow;
        if !self.implicit_now || now >= last_now {
            return (now, Cow::Borrowed(&self.command));
        }
        match &self.command {
            Command::Admit(a) if a.authorization_checked_at == now => {
                let mut a = a.clone();
                a.authorization_checked_at = last_now;
                (last_now, Cow::Owned(Command::Admit(a)))
            }
            _ => (last_now, Cow::Borrowed(&self.command)),
        }
    }

    /// The idempotency key used: explicit, or `admit:<attemptId>` for an admit.
    pub fn key(&self) -> Option<String> {
        match (&self.request_id, &self.command) {
            (Some(r), _) => Some(r.clone()),
            (None, Command::Admit(a)) => Some(format!("admit:{}", a.attempt_id)),
            _ => None,
        }
    }
}

/// What an applied (or answered) command returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Applied {
    /// `OK`, or the recorded code of an answered resend.
    pub code: Code,
    /// The mission revision after the command.
    pub revision: Amount,
    /// The journal sequence number of the entry.
    pub seq: u64,
    /// `true` when this answers an identical resend with the recorded result (nothing written).
    pub replayed: bool,
    /// The recorded result object (`{"code":"OK","revision":"N",…}`).
    pub result: serde_json::Value,
}

/// One journal row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalEntry {
    /// 1-based.
    pub seq: u64,
    /// The previous entry's hash (the `contractRef` for entry 1).
    pub prev_hash: String,
    /// sha256 of `entry`.
    pub entry_hash: String,
    /// The canonical entry bytes.
    pub entry: Vec<u8>,
}

/// One line of `world mission list`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Mission id.
    pub mission_id: String,
    /// Contract ref.
    pub contract_ref: String,
    /// Revision.
    pub revision: Amount,
    /// Budget.
    pub budget: Amount,
    /// Reserved.
    pub reserved: Amount,
    /// Settled.
    pub settled: Amount,
    /// Journal length.
    pub journal: u64,
    /// Created with `--yes` (unattended).
    pub unattended: bool,
}

/// The persistence boundary for missions: [`SqliteMissions`] keeps them in a SQLite database
/// (the World store file, or a standalone ledger file); `super::ledger::PgMissions` in a
/// PostgreSQL ledger. Each call is one transaction.
pub trait MissionStore {
    /// Where the missions live, for messages: the store or ledger file, or
    /// `postgres://user@host:port/db` (never a password).
    fn describe(&self) -> String;
    /// Store a new mission from `contract` (one transaction).
    ///
    /// # Errors
    /// `MISSION_EXISTS`; storage errors.
    fn create(
        &self,
        contract: &Contract,
        actor: &Actor,
        attended: bool,
        now: Amount,
    ) -> Result<State, Error>;
    /// Apply one command in one transaction (SQLite `BEGIN IMMEDIATE`; PostgreSQL READ
    /// COMMITTED under the mission's advisory lock): the journal row, the state rows and the
    /// outbox intent commit or roll back together.
    ///
    /// # Errors
    /// The rejection (`MISSION_NOT_FOUND`, `REQUEST_ID_REUSED`, or a `reduce` code);
    /// storage errors.
    fn apply(
        &self,
        mission_id: &str,
        request: &Request,
        actor: &Actor,
        now: Amount,
    ) -> Result<Applied, Error>;
    /// Apply one command and roll it back whatever the result (an attended act's dry run).
    ///
    /// # Errors
    /// As [`MissionStore::apply`].
    fn dry_run(
        &self,
        mission_id: &str,
        request: &Request,
        actor: &Actor,
        now: Amount,
    ) -> Result<Applied, Error>;
    /// The full materialised state.
    ///
    /// # Errors
    /// `MISSION_NOT_FOUND`; storage and corruption errors.
    fn state(&self, mission_id: &str) -> Result<State, Error>;
    /// Every mission.
    ///
    /// # Errors
    /// Storage errors.
    fn list(&self) -> Result<Vec<Summary>, Error>;
    /// The journal, in order.
    ///
    /// # Errors
    /// `MISSION_NOT_FOUND`; storage errors.
    fn journal(&self, mission_id: &str) -> Result<Vec<JournalEntry>, Error>;
    /// Fold every mission's journal through `reduce` and compare it with the materialised
    /// state, the outbox and the hash chain (what `world verify` does for the store file).
    /// Read-only.
    ///
    /// # Errors
    /// Storage errors (a corrupt row is a [`Problem`], not an error).
    fn verify(&self) -> Result<Vec<Problem>, Error>;
    /// What an episode binding records to name this place (DEC-MIS-15): a ledger file's
    /// canonical path; for PostgreSQL `postgres://HOST:PORT/DB#SCHEMA` with the database and
    /// the schema the connection resolved (`current_database()`, `current_schema()`), the
    /// default port filled in and a socket directory canonicalised, so two spellings of one
    /// ledger compare equal and two schemas of one database do not. Default: [`Self::describe`].
    ///
    /// # Errors
    /// Storage errors (PostgreSQL: the query of the resolved names).
    fn identity(&self) -> Result<String, Error> {
        Ok(self.describe())
    }
    /// The chain root (DEC-MIS-13, [`chain_root`]) of mission `mission_id` as its row states
    /// it: what tells this mission apart from another created under the same id (in a ledger
    /// re-initialised at the same place, say).
    ///
    /// # Errors
    /// `MISSION_NOT_FOUND`; storage errors.
    fn root(&self, mission_id: &str) -> Result<String, Error>;
}

/// Missions in a SQLite connection (the World store file, or a standalone ledger file).
pub struct SqliteMissions<'c> {
    conn: &'c Connection,
    name: String,
}

impl<'c> SqliteMissions<'c> {
    /// Use the `mission_*` tables of `conn` (created by the first `create`).
    pub fn new(conn: &'c Connection) -> SqliteMissions<'c> {
        let name = conn.path().unwrap_or("").to_string();
        SqliteMissions { conn, name }
    }
}

/// `Some(())` when mission `id` exists in `conn` (`None` also when no mission table exists).
///
/// # Errors
/// SQLite errors.
pub fn mission_exists(conn: &Connection, id: &str) -> rusqlite::Result<Option<()>> {
    if !tables_exist(conn)? {
        return Ok(None);
    }
    let n: i64 = conn.query_row(
        "SELECT count(*) FROM mission_missions WHERE mission_id = ?1",
        [id],
        |r| r.get(0),
    )?;
    Ok((n > 0).then_some(()))
}

/// The mission tables absent from `conn` once any of them exists (empty when all or none
/// exist): a store with some missing is damaged, not new — writers refuse it and nothing
/// re-creates the missing ones (their rows cannot be re-derived; issue 13 §3).
///
/// # Errors
/// SQLite errors.
pub fn missing_tables(conn: &Connection) -> rusqlite::Result<Vec<&'static str>> {
    let mut present = Vec::new();
    let mut missing = Vec::new();
    for t in TABLES {
        let n: i64 = conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [t],
            |r| r.get(0),
        )?;
        if n > 0 {
            present.push(t);
        } else {
            missing.push(t);
        }
    }
    Ok(if present.is_empty() {
        Vec::new()
    } else {
        missing
    })
}

/// Refuse a store whose mission tables are only partly there.
fn refuse_partial(conn: &Connection) -> Result<(), Error> {
    let missing = missing_tables(conn)?;
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Error::Corrupt(format!(
            "the store is missing table(s) {}; refusing to recreate them empty (their rows cannot be re-derived); run `world verify`",
            missing.join(", ")
        )))
    }
}

/// Whether the mission tables exist.
///
/// # Errors
/// SQLite errors.
pub fn tables_exist(conn: &Connection) -> rusqlite::Result<bool> {
    let n: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'mission_missions'",
        [],
        |r| r.get(0),
    )?;
    Ok(n > 0)
}

pub(crate) fn not_found(mission_id: &str) -> Error {
    Rejection::new(
        Code::MissionNotFound,
        "no mission with that id in this store or ledger",
    )
    .with("missionId", mission_id)
    .into()
}

/// Commit `tx` when `r` is a success or `EXPOSURE_EXCEEDED` (whose journalled violation is the
/// one trace a rejection leaves); otherwise drop it (roll back).
fn finish(tx: rusqlite::Transaction<'_>, r: Result<Applied, Error>) -> Result<Applied, Error> {
    match r {
        Ok(a) => {
            tx.commit()?;
            Ok(a)
        }
        Err(Error::Rejected(r)) if r.code == Code::ExposureExceeded => {
            tx.commit()?;
            Err(Error::Rejected(r))
        }
        Err(e) => Err(e), // dropping `tx` rolls back journal, state and outbox together
    }
}

impl MissionStore for SqliteMissions<'_> {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn create(
        &self,
        contract: &Contract,
        actor: &Actor,
        attended: bool,
        now: Amount,
    ) -> Result<State, Error> {
        let tx = rusqlite::Transaction::new_unchecked(self.conn, TransactionBehavior::Immediate)?;
        let s = create_in(&tx, contract, actor, attended, now)?;
        tx.commit()?;
        Ok(s)
    }

    fn apply(
        &self,
        mission_id: &str,
        request: &Request,
        actor: &Actor,
        now: Amount,
    ) -> Result<Applied, Error> {
        let tx = rusqlite::Transaction::new_unchecked(self.conn, TransactionBehavior::Immediate)?;
        let r = apply_in(&tx, mission_id, request, actor, now);
        finish(tx, r)
    }

    fn dry_run(
        &self,
        mission_id: &str,
        request: &Request,
        actor: &Actor,
        now: Amount,
    ) -> Result<Applied, Error> {
        let tx = rusqlite::Transaction::new_unchecked(self.conn, TransactionBehavior::Immediate)?;
        apply_in(&tx, mission_id, request, actor, now) // dropping `tx` rolls back
    }

    fn state(&self, mission_id: &str) -> Result<State, Error> {
        load_full(self.conn, mission_id)
    }

    fn list(&self) -> Result<Vec<Summary>, Error> {
        if !tables_exist(self.conn)? {
            return Ok(Vec::new());
        }
        list_db(self.conn)
    }

    fn journal(&self, mission_id: &str) -> Result<Vec<JournalEntry>, Error> {
        journal(self.conn, mission_id)
    }

    fn verify(&self) -> Result<Vec<Problem>, Error> {
        Ok(check_all(self.conn)?)
    }

    fn root(&self, mission_id: &str) -> Result<String, Error> {
        if !tables_exist(self.conn)? {
            return Err(not_found(mission_id));
        }
        root_db(self.conn, mission_id)
    }
}

/// [`MissionStore::root`] on any backend (the tables exist).
pub(crate) fn root_db(db: &dyn Db, mission_id: &str) -> Result<String, Error> {
    let h = head(db, mission_id)?;
    stored_root(db, mission_id, &h.contract_ref)
}

/// Every mission's summary (the tables exist).
pub(crate) fn list_db(db: &dyn Db) -> Result<Vec<Summary>, Error> {
    let rows = db.query(
        "SELECT mission_id, contract_ref, contract, revision, reserved, settled, journal_seq, attended FROM mission_missions ORDER BY mission_id",
        &[],
    )?;
    let mut out = Vec::new();
    for r in rows {
        let c = Contract::parse(&r.blob(2)?).map_err(corrupt)?;
        out.push(Summary {
            mission_id: r.text(0)?,
            contract_ref: r.text(1)?,
            revision: Amount(r.int(3)? as u128),
            budget: c.budget,
            reserved: amount(&r.text(4)?)?,
            settled: amount(&r.text(5)?)?,
            journal: r.int(6)? as u64,
            unattended: r.int(7)? == 0,
        });
    }
    Ok(out)
}

fn amount(text: &str) -> Result<Amount, Error> {
    Amount::parse(text).map_err(|e| corrupt(format!("stored amount {text:?}: {e}")))
}

/// Create a mission inside a transaction the caller owns (creates the tables if missing).
///
/// # Errors
/// `MISSION_EXISTS`; SQLite errors.
pub fn create_in(
    conn: &Connection,
    contract: &Contract,
    actor: &Actor,
    attended: bool,
    now: Amount,
) -> Result<State, Error> {
    refuse_partial(conn)?;
    conn.execute_batch(DDL)?;
    super::seal::ensure_table(conn)?;
    create_db(conn, contract, actor, attended, now)
}

/// Create a mission in a transaction whose mission tables exist.
pub(crate) fn create_db(
    db: &dyn Db,
    contract: &Contract,
    actor: &Actor,
    attended: bool,
    now: Amount,
) -> Result<State, Error> {
    let exists = query_opt(
        db,
        "SELECT 1 FROM mission_missions WHERE mission_id = ?1",
        &vals![contract.mission_id],
    )?;
    if exists.is_some() {
        return Err(Rejection::new(
            Code::MissionExists,
            "a mission with that id is already in this store or ledger",
        )
        .with("missionId", &contract.mission_id)
        .into());
    }
    // A mission row deleted under its journal (F9): re-creating it would hand the id a fresh
    // budget and collide with the journal's sequence. Refuse as corrupt.
    let left = leftover_tables(db, &contract.mission_id)?;
    if !left.is_empty() {
        return Err(corrupt(format!(
            "mission {} has no mission row but {} still hold(s) its rows (was the row deleted?); refusing to create it again over them",
            contract.mission_id,
            left.join(", ")
        )));
    }
    let state = State::create(contract);
    let created_by = serde_json::to_string(actor).unwrap_or_default();
    let created_at = now.to_string();
    let root = chain_root(
        &contract.mission_id,
        &state.contract_ref,
        &created_by,
        attended,
        &created_at,
    );
    db.exec(
        "INSERT INTO mission_missions (mission_id, contract_ref, contract, created_by, attended, created_at_ms, revision, reserved, settled, last_now, journal_seq, head_hash, violations) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, '0', '0', '0', 0, ?7, 0)",
        &vals![
            contract.mission_id,
            state.contract_ref,
            contract.canonical.clone(),
            created_by,
            attended,
            created_at,
            root,
        ],
    )?;
    Ok(state)
}

/// The mission tables (other than `mission_missions`) holding rows of `mission_id`.
fn leftover_tables(db: &dyn Db, mission_id: &str) -> Result<Vec<&'static str>, Error> {
    let mut out = Vec::new();
    for t in &TABLES[1..] {
        let sql = format!("SELECT 1 FROM {t} WHERE mission_id = ?1 LIMIT 1");
        if query_opt(db, &sql, &vals![mission_id])?.is_some() {
            out.push(*t);
        }
    }
    Ok(out)
}

/// The hash a mission's journal chain starts from (DEC-MIS-13): `sha256:<hex>` of the
/// TR-CJSON-1 creation record `{attended, contractRef, createdAtMs, createdBy, missionId}` —
/// `createdBy` the creating actor's JSON object, `createdAtMs` the creation time in
/// milliseconds as a decimal string. Entry 1's `prevHash` (and an empty mission's
/// `head_hash`) is this value, so the creation facts `world mission list` and `report` show —
/// who created the mission, attended or `--yes`, when — are bound into the chain like every
/// command: an edited fact is a `mission_chain` finding.
pub fn chain_root(
    mission_id: &str,
    contract_ref: &str,
    created_by: &str,
    attended: bool,
    created_at_ms: &str,
) -> String {
    let s = |v: &str| CValue::String(v.to_string());
    let actor = trcjson::parse(created_by.as_bytes(), trcjson::Bounds::UNBOUNDED)
        .unwrap_or_else(|_| s(created_by));
    HashRef::of(&trcjson::encode(&CValue::object(vec![
        ("attended".into(), CValue::Bool(attended)),
        ("contractRef".into(), s(contract_ref)),
        ("createdAtMs".into(), s(created_at_ms)),
        ("createdBy".into(), actor),
        ("missionId".into(), s(mission_id)),
    ])))
    .to_string()
}

/// The chain root recomputed from a mission's stored creation facts.
fn stored_root(db: &dyn Db, mission_id: &str, contract_ref: &str) -> Result<String, Error> {
    let row = query_opt(
        db,
        "SELECT created_by, attended, created_at_ms FROM mission_missions WHERE mission_id = ?1",
        &vals![mission_id],
    )?
    .ok_or_else(|| not_found(mission_id))?;
    Ok(chain_root(
        mission_id,
        contract_ref,
        &row.text(0)?,
        row.int(1)? != 0,
        &row.text(2)?,
    ))
}

/// Upsert the rows of `after` that differ from `before` (only keys `after` holds).
fn write_back(db: &dyn Db, mission_id: &str, before: &State, after: &State) -> Result<(), Error> {
    fn put<T: Serialize + PartialEq>(
        db: &dyn Db,
        table: &str,
        key_col: &str,
        mission_id: &str,
        before: &BTreeMap<String, T>,
        after: &BTreeMap<String, T>,
    ) -> Result<(), Error> {
        for (k, v) in after {
            if before.get(k) != Some(v) {
                let body = serde_json::to_string(v).map_err(corrupt)?;
                db.exec(
                    &format!("INSERT INTO {table} (mission_id, {key_col}, body) VALUES (?1, ?2, ?3) ON CONFLICT (mission_id, {key_col}) DO UPDATE SET body = excluded.body"),
                    &vals![mission_id, k, body],
                )?;
            }
        }
        Ok(())
    }
    put(
        db,
        "mission_runs",
        "run_id",
        mission_id,
        &before.runs,
        &after.runs,
    )?;
    put(
        db,
        "mission_grants",
        "grant_id",
        mission_id,
        &before.grants,
        &after.grants,
    )?;
    put(
        db,
        "mission_operations",
        "operation_id",
        mission_id,
        &before.operations,
        &after.operations,
    )?;
    put(
        db,
        "mission_approvals",
        "operation_id",
        mission_id,
        &before.approvals,
        &after.approvals,
    )?;
    for (k, a) in &after.attempts {
        if before.attempts.get(k) != Some(a) {
            let body = serde_json::to_string(a).map_err(corrupt)?;
            db.exec(
                "INSERT INTO mission_attempts (mission_id, attempt_id, run_id, status, body) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (mission_id, attempt_id) DO UPDATE SET run_id = excluded.run_id, status = excluded.status, body = excluded.body",
                &vals![mission_id, k, a.run_id, a.status.as_str(), body],
            )?;
        }
    }
    Ok(())
}

/// The subject of grant `grant_id` of mission `mission_id` (`None` when either is missing).
///
/// # Errors
/// Storage and corruption errors.
pub fn grant_subject(
    conn: &Connection,
    mission_id: &str,
    grant_id: &str,
) -> Result<Option<String>, Error> {
    if !tables_exist(conn)? {
        return Ok(None);
    }
    Ok(
        get_row::<Grant>(conn, "mission_grants", "grant_id", mission_id, grant_id)?
            .map(|g| g.subject),
    )
}

/// Apply one command inside a transaction the caller owns (§6): idempotency lookup, working
/// set, `reduce`, journal row, state rows, outbox intent. On `Err` the caller must roll back —
/// except for `EXPOSURE_EXCEEDED`, whose journalled violation the caller commits.
///
/// # Errors
/// `MISSION_NOT_FOUND`, `REQUEST_ID_REUSED`, any `reduce` rejection; storage errors.
pub fn apply_in(
    conn: &Connection,
    mission_id: &str,
    request: &Request,
    actor: &Actor,
    now: Amount,
) -> Result<Applied, Error> {
    refuse_partial(conn)?;
    if !tables_exist(conn)? {
        return Err(not_found(mission_id));
    }
    apply_db(conn, mission_id, request, actor, now)
}

/// [`apply_in`] on any backend, inside a transaction the caller owns (the tables exist).
pub(crate) fn apply_db(
    db: &dyn Db,
    mission_id: &str,
    request: &Request,
    actor: &Actor,
    now: Amount,
) -> Result<Applied, Error> {
    let h = head(db, mission_id)?;
    // Never decide on rows the mission did not write (issue 27 §3, DEC-LEDGER-1).
    super::seal::check_head(db, mission_id)?;
    // The clock is read under the mission's lock (DEC-MIS-17): an implicit clock never
    // regresses behind what another process recorded while this one waited.
    let (now, command) = request.effective(now, h.last_now);
    let command: &Command = &command;
    let command_ref = command.command_ref().to_string();
    let key = request.key();
    if let Some(k) = &key {
        if let Some(applied) = answer_resend(db, mission_id, &h, request, k, &command_ref)? {
            return Ok(applied);
        }
    }
    let before = load_working(db, mission_id, &h, command)?;
    super::seal::check_rows(db, mission_id, &before)?;
    let mut after = before.clone();
    let outcome = super::reduce::apply(&mut after, command, now, actor);
    let (result, violation) = match &outcome {
        Ok(()) => {
            let mut r = serde_json::json!({"code": "OK", "revision": after.revision.to_string()});
            if let Command::Admit(a) = command {
                if let Some(at) = after.attempts.get(&a.attempt_id) {
                    r["intentRef"] = at.intent_ref.clone().into();
                }
            }
            (r, None)
        }
        Err(rej) if rej.code == Code::ExposureExceeded => (rej.to_json(), rej.violation.clone()),
        Err(rej) => return Err(rej.clone().into()),
    };
    // Journal.
    let seq = h.seq + 1;
    let entry = entry_value(
        mission_id,
        seq,
        &h.head_hash,
        command,
        now,
        actor,
        key.as_deref(),
        &result,
    );
    let entry_hash = HashRef::of(&entry).to_string();
    db.exec(
        "INSERT INTO mission_journal (mission_id, seq, prev_hash, entry_hash, entry) VALUES (?1, ?2, ?3, ?4, ?5)",
        &vals![mission_id, seq as i64, h.head_hash, entry_hash, entry],
    )?;
    if let Some(k) = &key {
        db.exec(
            "INSERT INTO mission_requests (mission_id, request_id, command_ref, seq) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (mission_id, request_id) DO UPDATE SET command_ref = excluded.command_ref, seq = excluded.seq",
            &vals![mission_id, k, command_ref, seq as i64],
        )?;
    }
    let mut violations = h.violations;
    let insert_violation = |ord: u64, body: String| -> Result<(), Error> {
        db.exec(
            "INSERT INTO mission_violations (mission_id, ord, body) VALUES (?1, ?2, ?3)",
            &vals![mission_id, ord as i64, body],
        )?;
        Ok(())
    };
    if let Some(v) = violation {
        insert_violation(violations, serde_json::to_string(&*v).map_err(corrupt)?)?;
        violations += 1;
    } else {
        for v in &after.violations {
            insert_violation(violations, serde_json::to_string(v).map_err(corrupt)?)?;
            violations += 1;
        }
        write_back(db, mission_id, &before, &after)?;
        insert_outbox(db, mission_id, seq, command, &after)?;
    }
    db.exec(
        "UPDATE mission_missions SET revision = ?2, reserved = ?3, settled = ?4, last_now = ?5, journal_seq = ?6, head_hash = ?7, violations = ?8 WHERE mission_id = ?1",
        &vals![
            mission_id,
            after.revision.0 as i64,
            after.reserved.to_string(),
            after.settled.to_string(),
            after.last_now.to_string(),
            seq as i64,
            entry_hash,
            violations as i64,
        ],
    )?;
    super::seal::record(db, mission_id, seq, &after)?;
    match outcome {
        Ok(()) => Ok(Applied {
            code: Code::Ok,
            revision: after.revision,
            seq,
            replayed: false,
            result,
        }),
        Err(rej) => Err(rej.into()),
    }
}

/// A resend of idempotency key `k` (whose command hashes to `command_ref`): the recorded
/// answer when the key wrote this command, a `REQUEST_ID_REUSED` rejection when it wrote
/// another (and `request` names it), `None` when the key is new.
///
/// # Errors
/// The rejection, or corruption when the key's row and the journal entry it names disagree.
fn answer_resend(
    db: &dyn Db,
    mission_id: &str,
    h: &Head,
    request: &Request,
    k: &str,
    command_ref: &str,
) -> Result<Option<Applied>, Error> {
    let found = query_opt(
        db,
        "SELECT command_ref, seq FROM mission_requests WHERE mission_id = ?1 AND request_id = ?2",
        &vals![mission_id, k],
    )?;
    let found = match found {
        Some(r) => Some((r.text(0)?, r.int(1)?)),
        None => None,
    };
    match found {
        Some((c, seq)) if c == command_ref => {
            let entry = query_opt(
                db,
                "SELECT entry FROM mission_journal WHERE mission_id = ?1 AND seq = ?2",
                &vals![mission_id, seq],
            )?
            .ok_or_else(|| corrupt(format!("request {k} names missing journal entry {seq}")))?
            .blob(0)?;
            let d = decode_entry(&entry).map_err(corrupt)?;
            // Answer only from the entry this request wrote (F5): an edited `seq` must not
            // make a resend answer another command's result.
            if let Some(why) = request_mismatch(&d, mission_id, k, command_ref, seq) {
                return Err(corrupt(format!("request {k}: {why}")));
            }
            let code = d
                .result
                .get("code")
                .and_then(|c| c.as_str())
                .and_then(Code::parse)
                .ok_or_else(|| corrupt("recorded result has no code"))?;
            let revision = d
                .result
                .get("revision")
                .and_then(|r| r.as_str())
                .and_then(|r| Amount::parse(r).ok())
                .unwrap_or(Amount(u128::from(h.revision)));
            Ok(Some(Applied {
                code,
                revision,
                seq: seq as u64,
                replayed: true,
                result: d.result,
            }))
        }
        Some((c, seq)) if request.request_id.is_some() => {
            // A genuine reuse only when the row still names the entry that used the key
            // for the other command (an edited `command_ref` is corruption, not a reuse).
            let entry = query_opt(
                db,
                "SELECT entry FROM mission_journal WHERE mission_id = ?1 AND seq = ?2",
                &vals![mission_id, seq],
            )?
            .ok_or_else(|| corrupt(format!("request {k} names missing journal entry {seq}")))?
            .blob(0)?;
            let d = decode_entry(&entry).map_err(corrupt)?;
            if let Some(why) = request_mismatch(&d, mission_id, k, &c, seq) {
                return Err(corrupt(format!("request {k}: {why}")));
            }
            Err(Rejection::new(
                Code::RequestIdReused,
                "the request id was used for a different command",
            )
            .with("requestId", k)
            .into())
        }
        _ => Ok(None),
    }
}

/// Stores the outbox intent an applied admit wrote at `seq` (nothing for other commands).
fn insert_outbox(
    db: &dyn Db,
    mission_id: &str,
    seq: u64,
    command: &Command,
    after: &State,
) -> Result<(), Error> {
    if let Command::Admit(a) = command {
        if let Some(at) = after.attempts.get(&a.attempt_id) {
            let intent = super::reduce::intent_bytes(mission_id, &a.attempt_id, at);
            db.exec(
                "INSERT INTO mission_outbox (mission_id, attempt_id, seq, intent_ref, intent, payload, preconditions) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                &vals![
                    mission_id,
                    a.attempt_id,
                    seq as i64,
                    at.intent_ref,
                    intent,
                    trcjson::encode(&a.action.payload),
                    trcjson::encode(&a.action.preconditions),
                ],
            )?;
        }
    }
    Ok(())
}

/// Why journal entry `d` (at `seq`) is not the entry idempotency key `key` with command
/// `command_ref` wrote, if it is not.
fn request_mismatch(
    d: &Decoded,
    mission_id: &str,
    key: &str,
    command_ref: &str,
    seq: i64,
) -> Option<String> {
    if d.mission_id != mission_id || i64::try_from(d.seq).ok() != Some(seq) {
        return Some(format!("journal entry {seq} names another mission or seq"));
    }
    if d.request_id.as_deref() != Some(key) {
        return Some(format!(
            "journal entry {seq} carries requestId {:?}, not this request",
            d.request_id
        ));
    }
    let entry_ref = d.command.command_ref().to_string();
    if entry_ref != command_ref {
        return Some(format!(
            "journal entry {seq} holds command {entry_ref}, the request row names {command_ref}"
        ));
    }
    None
}
