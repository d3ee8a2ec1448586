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

/// The scalar row of a mission.
struct Head {
    contract: Arc<Contract>,
    contract_ref: String,
    revision: u64,
    reserved: Amount,
    settled: Amount,
    last_now: Amount,
    seq: u64,
    head_hash: String,
    violations: u64,
}

/// The mission row (the tables exist).
fn head(db: &dyn Db, mission_id: &str) -> Result<Head, Error> {
    let row = query_opt(
        db,
        "SELECT contract, contract_ref, revision, reserved, settled, last_now, journal_seq, head_hash, violations FROM mission_missions WHERE mission_id = ?1",
        &vals![mission_id],
    )?
    .ok_or_else(|| not_found(mission_id))?;
    let contract = Contract::parse(&row.blob(0)?)
        .map_err(|e| corrupt(format!("contract of {mission_id}: {e}")))?;
    let contract_ref = row.text(1)?;
    if contract.contract_ref().to_string() != contract_ref {
        return Err(corrupt(format!(
            "contract of {mission_id} does not hash to its contractRef"
        )));
    }
    Ok(Head {
        contract: Arc::new(contract),
        contract_ref,
        revision: row.int(2)? as u64,
        reserved: amount(&row.text(3)?)?,
        settled: amount(&row.text(4)?)?,
        last_now: amount(&row.text(5)?)?,
        seq: row.int(6)? as u64,
        head_hash: row.text(7)?,
        violations: row.int(8)? as u64,
    })
}

fn empty_state(mission_id: &str, h: &Head) -> State {
    State {
        mission_id: mission_id.to_string(),
        contract_ref: h.contract_ref.clone(),
        revision: Amount(u128::from(h.revision)),
        budget: h.contract.budget,
        reserved: h.reserved,
        settled: h.settled,
        last_now: h.last_now,
        runs: BTreeMap::new(),
        grants: BTreeMap::new(),
        operations: BTreeMap::new(),
        attempts: BTreeMap::new(),
        approvals: BTreeMap::new(),
        violations: Vec::new(),
        contract: h.contract.clone(),
    }
}

fn get_row<T: serde::de::DeserializeOwned>(
    db: &dyn Db,
    table: &str,
    key_col: &str,
    mission_id: &str,
    key: &str,
) -> Result<Option<T>, Error> {
    let sql = format!("SELECT body FROM {table} WHERE mission_id = ?1 AND {key_col} = ?2");
    let Some(row) = query_opt(db, &sql, &vals![mission_id, key])? else {
        return Ok(None);
    };
    let body = row.text(0)?;
    serde_json::from_str(&body)
        .map(Some)
        .map_err(|e| corrupt(format!("{table} {key}: {e}")))
}

fn load_chain(db: &dyn Db, mission_id: &str, s: &mut State, grant_id: &str) -> Result<(), Error> {
    let mut next = Some(grant_id.to_string());
    let mut hops = 0;
    while let Some(id) = next.take() {
        if s.grants.contains_key(&id) || hops > 10_000 {
            break;
        }
        hops += 1;
        if let Some(g) = get_row::<Grant>(db, "mission_grants", "grant_id", mission_id, &id)? {
            next = g.parent_id.clone();
            s.grants.insert(id, g);
        }
    }
    Ok(())
}

fn load_attempt(
    db: &dyn Db,
    mission_id: &str,
    s: &mut State,
    attempt_id: &str,
) -> Result<(), Error> {
    if let Some(a) =
        get_row::<Attempt>(db, "mission_attempts", "attempt_id", mission_id, attempt_id)?
    {
        load_chain(db, mission_id, s, &a.grant_id)?;
        load_op(db, mission_id, s, &a.operation_id)?;
        s.attempts.insert(attempt_id.to_string(), a);
    }
    Ok(())
}

fn load_op(db: &dyn Db, mission_id: &str, s: &mut State, op: &str) -> Result<(), Error> {
    if let Some(o) = get_row::<Operation>(db, "mission_operations", "operation_id", mission_id, op)?
    {
        s.operations.insert(op.to_string(), o);
    }
    Ok(())
}

fn load_run(db: &dyn Db, mission_id: &str, s: &mut State, run: &str) -> Result<(), Error> {
    if let Some(r) = get_row::<Run>(db, "mission_runs", "run_id", mission_id, run)? {
        s.runs.insert(run.to_string(), r);
    }
    Ok(())
}

fn load_approval(db: &dyn Db, mission_id: &str, s: &mut State, op: &str) -> Result<(), Error> {
    if let Some(ap) = get_row::<Approval>(db, "mission_approvals", "operation_id", mission_id, op)?
    {
        s.approvals.insert(op.to_string(), ap);
    }
    Ok(())
}

/// The partial state holding exactly what `command` reads (its working set).
fn load_working(
    db: &dyn Db,
    mission_id: &str,
    h: &Head,
    command: &Command,
) -> Result<State, Error> {
    let mut s = empty_state(mission_id, h);
    match command {
        Command::StartRun { run_id } => load_run(db, mission_id, &mut s, run_id)?,
        Command::Grant { grant, parent_id } => {
            if let Some(g) =
                get_row::<Grant>(db, "mission_grants", "grant_id", mission_id, &grant.id)?
            {
                s.grants.insert(grant.id.clone(), g);
            }
            if let Some(p) = parent_id {
                load_chain(db, mission_id, &mut s, p)?;
            }
        }
        Command::Admit(a) => {
            load_run(db, mission_id, &mut s, &a.run_id)?;
            load_attempt(db, mission_id, &mut s, &a.attempt_id)?;
            load_chain(db, mission_id, &mut s, &a.grant_id)?;
            load_op(db, mission_id, &mut s, &a.operation_id)?;
            load_approval(db, mission_id, &mut s, &a.operation_id)?;
            for d in a.depends_on.iter().flatten() {
                load_op(db, mission_id, &mut s, d)?;
            }
        }
        Command::Dispatch { attempt_id }
        | Command::Settle { attempt_id, .. }
        | Command::Release { attempt_id }
        | Command::Reconcile { attempt_id, .. } => {
            load_attempt(db, mission_id, &mut s, attempt_id)?
        }
        Command::Approve { operation_id, .. } => {
            load_approval(db, mission_id, &mut s, operation_id)?
        }
        Command::Revoke { grant_id } => {
            if let Some(g) =
                get_row::<Grant>(db, "mission_grants", "grant_id", mission_id, grant_id)?
            {
                if let Some(p) = &g.parent_id {
                    load_chain(db, mission_id, &mut s, p)?;
                }
                s.grants.insert(grant_id.clone(), g);
            }
        }
        Command::CompleteRun { run_id, .. } => {
            load_run(db, mission_id, &mut s, run_id)?;
            // Every attempt of the mission, judged by its body (what `verify` folds), never by
            // the `status`/`run_id` index columns alone: an edited column must not hide an
            // outstanding attempt (DEC-MIS-15). A column that disagrees with its body is
            // corruption. One scan per run completion.
            let rows = db.query(
                "SELECT attempt_id, run_id, status, body FROM mission_attempts WHERE mission_id = ?1",
                &vals![mission_id],
            )?;
            for row in rows {
                let id = row.text(0)?;
                let a: Attempt = serde_json::from_str(&row.text(3)?)
                    .map_err(|e| corrupt(format!("attempt {id}: {e}")))?;
                if let Some(why) = attempt_columns_differ(&a, &row.text(1)?, &row.text(2)?) {
                    return Err(corrupt(format!("mission_attempts row {id}: {why}")));
                }
                if &a.run_id == run_id && a.status.holds_reservation() {
                    s.attempts.insert(id, a);
                }
            }
        }
    }
    Ok(s)
}

/// Why an attempt row's index columns (`run_id`, `status`) disagree with its body, if they do.
fn attempt_columns_differ(a: &Attempt, run_col: &str, status_col: &str) -> Option<String> {
    if a.status.as_str() != status_col {
        return Some(format!(
            "the status column says {status_col}, its body says {}",
            a.status.as_str()
        ));
    }
    if a.run_id != run_col {
        return Some(format!(
            "the run_id column says {run_col}, its body says {}",
            a.run_id
        ));
    }
    None
}

/// The full materialised state of a mission (every row).
///
/// # Errors
/// `MISSION_NOT_FOUND`; storage and corruption errors.
pub fn load_full(conn: &Connection, mission_id: &str) -> Result<State, Error> {
    if !tables_exist(conn)? {
        return Err(not_found(mission_id));
    }
    load_full_db(conn, mission_id)
}

/// [`load_full`] on any backend (the tables exist).
pub(crate) fn load_full_db(db: &dyn Db, mission_id: &str) -> Result<State, Error> {
    let h = head(db, mission_id)?;
    let mut s = empty_state(mission_id, &h);
    fn all<T: serde::de::DeserializeOwned>(
        db: &dyn Db,
        table: &str,
        key_col: &str,
        mission_id: &str,
    ) -> Result<BTreeMap<String, T>, Error> {
        let rows = db.query(
            &format!("SELECT {key_col}, body FROM {table} WHERE mission_id = ?1"),
            &vals![mission_id],
        )?;
        let mut out = BTreeMap::new();
        for row in rows {
            let k = row.text(0)?;
            let v = serde_json::from_str(&row.text(1)?)
                .map_err(|e| corrupt(format!("{table} {k}: {e}")))?;
            out.insert(k, v);
        }
        Ok(out)
    }
    s.runs = all(db, "mission_runs", "run_id", mission_id)?;
    s.grants = all(db, "mission_grants", "grant_id", mission_id)?;
    s.operations = all(db, "mission_operations", "operation_id", mission_id)?;
    s.attempts = all(db, "mission_attempts", "attempt_id", mission_id)?;
    s.approvals = all(db, "mission_approvals", "operation_id", mission_id)?;
    let rows = db.query(
        "SELECT body FROM mission_violations WHERE mission_id = ?1 ORDER BY ord",
        &vals![mission_id],
    )?;
    for row in rows {
        let v: Violation =
            serde_json::from_str(&row.text(0)?).map_err(|e| corrupt(format!("violation: {e}")))?;
        s.violations.push(v);
    }
    if s.violations.len() as u64 != h.violations {
        return Err(corrupt(format!(
            "mission {mission_id}: {} violation rows, the mission row counts {}",
            s.violations.len(),
            h.violations
        )));
    }
    Ok(s)
}

/// The journal of a mission, in order.
///
/// # Errors
/// `MISSION_NOT_FOUND`; storage errors.
pub fn journal(conn: &Connection, mission_id: &str) -> Result<Vec<JournalEntry>, Error> {
    if !tables_exist(conn)? {
        return Err(not_found(mission_id));
    }
    journal_db(conn, mission_id)
}

/// [`journal`] on any backend (the tables exist).
pub(crate) fn journal_db(db: &dyn Db, mission_id: &str) -> Result<Vec<JournalEntry>, Error> {
    head(db, mission_id)?;
    let rows = db.query(
        "SELECT seq, prev_hash, entry_hash, entry FROM mission_journal WHERE mission_id = ?1 ORDER BY seq",
        &vals![mission_id],
    )?;
    rows.iter()
        .map(|r| {
            Ok(JournalEntry {
                seq: r.int(0)? as u64,
                prev_hash: r.text(1)?,
                entry_hash: r.text(2)?,
                entry: r.blob(3)?,
            })
        })
        .collect()
}

/// The canonical journal entry object.
#[allow(clippy::too_many_arguments)]
fn entry_value(
    mission_id: &str,
    seq: u64,
    prev: &str,
    command: &Command,
    now: Amount,
    actor: &Actor,
    request_id: Option<&str>,
    result: &serde_json::Value,
) -> Vec<u8> {
    let s = |v: &str| CValue::String(v.to_string());
    let json_c = |v: &serde_json::Value| {
        let b = serde_json::to_vec(v).unwrap_or_default();
        trcjson::parse(&b, trcjson::Bounds::UNBOUNDED).unwrap_or(CValue::Null)
    };
    trcjson::encode(&CValue::object(vec![
        ("missionId".into(), s(mission_id)),
        ("seq".into(), CValue::Number(seq.to_string())),
        ("prevHash".into(), s(prev)),
        ("command".into(), command.to_value()),
        ("now".into(), s(&now.to_string())),
        (
            "actor".into(),
            json_c(&serde_json::to_value(actor).unwrap_or_default()),
        ),
        ("requestId".into(), request_id.map_or(CValue::Null, s)),
        ("result".into(), json_c(result)),
    ]))
}

/// A decoded journal entry (what `world verify` and `world mission log` read).
#[derive(Clone, Debug)]
pub struct Decoded {
    /// The command.
    pub command: Command,
    /// `now`.
    pub now: Amount,
    /// The actor.
    pub actor: Actor,
    /// The idempotency key.
    pub request_id: Option<String>,
    /// The recorded result.
    pub result: serde_json::Value,
    /// The recorded `seq` and `prevHash` and `missionId`.
    pub seq: u64,
    /// The previous hash the entry names.
    pub prev_hash: String,
    /// The mission the entry names.
    pub mission_id: String,
}

/// Why a journal entry does not decode (the text `world mission log` and verify print).
#[derive(Debug, thiserror::Error)]
pub enum EntryError {
    /// Not canonical JSON.
    #[error(transparent)]
    Json(#[from] trcjson::Error),
    /// A member is missing.
    #[error("entry has no {0}")]
    Missing(&'static str),
    /// A member has the wrong shape (`problem`: "is not a string", …).
    #[error("entry {field} {problem}")]
    BadField {
        /// The member.
        field: &'static str,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// The command does not parse.
    #[error(transparent)]
    Command(#[from] Rejection),
    /// The actor does not parse.
    #[error("entry actor: {0}")]
    Actor(#[source] serde_json::Error),
}

/// Decode a canonical journal entry.
///
/// # Errors
/// [`EntryError`]: what does not decode.
pub fn decode_entry(bytes: &[u8]) -> Result<Decoded, EntryError> {
    let bad = |field, problem| EntryError::BadField { field, problem };
    let v = trcjson::parse(bytes, trcjson::Bounds::UNBOUNDED)?;
    let get = |k: &'static str| v.get(k).ok_or(EntryError::Missing(k));
    let command = Command::from_value(get("command")?)?;
    let now = get("now")?
        .as_str()
        .and_then(|t| Amount::parse(t).ok())
        .ok_or_else(|| bad("now", "is not an amount"))?;
    let actor: Actor =
        serde_json::from_value(get("actor")?.to_json()).map_err(EntryError::Actor)?;
    let request_id = match get("requestId")? {
        CValue::Null => None,
        CValue::String(s) => Some(s.clone()),
        _ => return Err(bad("requestId", "is neither null nor a string")),
    };
    let seq = get("seq")?
        .as_i64()
        .filter(|n| *n > 0)
        .ok_or_else(|| bad("seq", "is not a positive integer"))? as u64;
    Ok(Decoded {
        command,
        now,
        actor,
        request_id,
        result: get("result")?.to_json(),
        seq,
        prev_hash: get("prevHash")?
            .as_str()
            .ok_or_else(|| bad("prevHash", "is not a string"))?
            .to_string(),
        mission_id: get("missionId")?
            .as_str()
            .ok_or_else(|| bad("missionId", "is not a string"))?
            .to_string(),
    })
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
                if let Some(why) = request_mismatch(&d, mission_id, k, &command_ref, seq) {
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
                return Ok(Applied {
                    code,
                    revision,
                    seq: seq as u64,
                    replayed: true,
                    result: d.result,
                });
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
                return Err(Rejection::new(
                    Code::RequestIdReused,
                    "the request id was used for a different command",
                )
                .with("requestId", k)
                .into());
            }
            _ => {}
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

/// One problem `world verify` reports about a mission.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// `mission_chain` (journal hash chain / sequence), `mission_journal` (an entry that does not
    /// decode or replays differently), `mission_state` (materialised state ≠ the fold, or rows
    /// that cannot be read), or `mission_schema` (some mission tables are missing).
    pub category: &'static str,
    /// The mission.
    pub mission_id: String,
    /// The journal sequence number, when the problem is about an entry.
    pub seq: Option<u64>,
    /// Why.
    pub reason: String,
}

/// Fold every mission's journal through `reduce` and compare with the materialised state and
/// the hash chain (missions.md §6). Read-only.
///
/// # Errors
/// SQLite errors (a corrupt row is a [`Problem`], not an error).
pub fn check_all(conn: &Connection) -> rusqlite::Result<Vec<Problem>> {
    if conn.is_autocommit() {
        // One read transaction for the whole check (F12): every table is read from one
        // snapshot (WAL: the ledger file; rollback journal: writers wait until it ends), so
        // a concurrent command can never show up as a half-applied finding. Rolled back.
        let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Deferred)?;
        return check_all_in(&tx);
    }
    check_all_in(conn)
}

/// [`check_all`] inside the caller's transaction.
fn check_all_in(conn: &Connection) -> rusqlite::Result<Vec<Problem>> {
    let mut out = Vec::new();
    let missing = missing_tables(conn)?;
    if !missing.is_empty() {
        out.push(Problem {
            category: "mission_schema",
            mission_id: String::new(),
            seq: None,
            reason: format!(
                "mission table(s) missing: {}; their rows cannot be re-derived",
                missing.join(", ")
            ),
        });
        return Ok(out);
    }
    if !tables_exist(conn)? {
        return Ok(out);
    }
    match check_db(conn) {
        Ok(p) => Ok(p),
        Err(Error::Sqlite(e)) => Err(e),
        Err(e) => Ok(vec![Problem {
            category: "mission_state",
            mission_id: String::new(),
            seq: None,
            reason: e.to_string(),
        }]),
    }
}

/// [`check_all`] on any backend, the tables' presence included (`world verify --ledger`):
/// some but not all mission tables is a `mission_schema` finding; none is a ledger without
/// missions (no finding).
///
/// # Errors
/// As [`check_db`].
pub(crate) fn check_any(db: &dyn Db) -> Result<Vec<Problem>, Error> {
    let mut missing = Vec::new();
    for t in TABLES {
        if !db.table_exists(t)? {
            missing.push(t);
        }
    }
    if missing.len() == TABLES.len() {
        return Ok(Vec::new());
    }
    if !missing.is_empty() {
        return Ok(vec![Problem {
            category: "mission_schema",
            mission_id: String::new(),
            seq: None,
            reason: format!(
                "mission table(s) missing: {}; their rows cannot be re-derived",
                missing.join(", ")
            ),
        }]);
    }
    check_db(db)
}

/// [`check_all`] on any backend (the tables exist): every mission, one by one. Storage errors
/// reading the mission list are errors; a mission whose rows cannot be read is a [`Problem`].
pub(crate) fn check_db(db: &dyn Db) -> Result<Vec<Problem>, Error> {
    let mut out = Vec::new();
    let ids: Vec<String> = match db
        .query(
            "SELECT mission_id FROM mission_missions ORDER BY mission_id",
            &[],
        )
        .and_then(|rows| rows.iter().map(|r| r.text(0)).collect())
    {
        Ok(ids) => ids,
        Err(e @ (crate::ledger::Error::Sqlite(_) | crate::ledger::Error::Postgres { .. })) => {
            return Err(e.into())
        }
        Err(e) => {
            out.push(Problem {
                category: "mission_state",
                mission_id: String::new(),
                seq: None,
                reason: format!("mission_missions is unreadable: {e}"),
            });
            return Ok(out);
        }
    };
    if let Some(t) = super::seal::trigger_finding(db)? {
        out.push(Problem {
            category: "mission_schema",
            mission_id: String::new(),
            seq: None,
            reason: t,
        });
    }
    orphans(db, &mut out)?;
    for id in ids {
        // A row of the wrong type (an edited column) is a finding, not a failed verify.
        if let Err(e) = check_one(db, &id, &mut out) {
            if matches!(&e, Error::Ledger(_)) {
                return Err(e); // the connection failed: no finding can be trusted
            }
            out.push(Problem {
                category: "mission_state",
                mission_id: id.clone(),
                seq: None,
                reason: format!("the mission's rows are unreadable: {e}"),
            });
        }
    }
    Ok(out)
}

/// Rows of a mission id that has no `mission_missions` row (F9: a deleted mission row would
/// otherwise hide its journal and state from every check): one finding per such id,
/// `mission_chain` when journal entries are among them, else `mission_state`.
fn orphans(db: &dyn Db, out: &mut Vec<Problem>) -> Result<(), Error> {
    let mut found: BTreeMap<String, Vec<&'static str>> = BTreeMap::new();
    for t in &TABLES[1..] {
        let sql = format!(
            "SELECT DISTINCT mission_id FROM {t} WHERE mission_id NOT IN (SELECT mission_id FROM mission_missions) ORDER BY mission_id"
        );
        for row in db.query(&sql, &[])? {
            found.entry(row.text(0)?).or_default().push(*t);
        }
    }
    for (id, tables) in found {
        out.push(Problem {
            category: if tables.contains(&"mission_journal") {
                "mission_chain"
            } else {
                "mission_state"
            },
            mission_id: id,
            seq: None,
            reason: format!(
                "{} hold(s) rows of this mission, which has no mission_missions row (deleted?)",
                tables.join(", ")
            ),
        });
    }
    Ok(())
}

pub(crate) fn check_one(
    db: &dyn Db,
    mission_id: &str,
    out: &mut Vec<Problem>,
) -> Result<(), Error> {
    let mut problem = |category: &'static str, seq: Option<u64>, reason: String| {
        out.push(Problem {
            category,
            mission_id: mission_id.to_string(),
            seq,
            reason,
        });
    };
    let h = match head(db, mission_id) {
        Ok(h) => h,
        Err(e @ (Error::Sqlite(_) | Error::Ledger(_))) => return Err(e),
        Err(e) => {
            problem("mission_state", None, e.to_string());
            return Ok(());
        }
    };
    let entries = match journal_db(db, mission_id) {
        Ok(e) => e,
        Err(e @ (Error::Sqlite(_) | Error::Ledger(_))) => return Err(e),
        Err(e) => {
            problem("mission_journal", None, e.to_string());
            return Ok(());
        }
    };
    let mut state = State::create(&h.contract);
    let mut prev = match stored_root(db, mission_id, &h.contract_ref) {
        Ok(r) => r,
        Err(e @ (Error::Sqlite(_) | Error::Ledger(_))) => return Err(e),
        Err(e) => {
            problem("mission_state", None, e.to_string());
            return Ok(());
        }
    };
    // What the journal says each idempotency key and each admit wrote (F5).
    let mut keys: BTreeMap<String, (u64, String)> = BTreeMap::new();
    let mut admit_seq: BTreeMap<String, u64> = BTreeMap::new();
    for (expected, e) in (1u64..).zip(entries.iter()) {
        if e.seq != expected {
            problem(
                "mission_chain",
                Some(e.seq),
                format!("expected entry {expected}, found {}", e.seq),
            );
            return Ok(());
        }
        let computed = HashRef::of(&e.entry).to_string();
        if computed != e.entry_hash {
            problem(
                "mission_chain",
                Some(e.seq),
                format!("entry hashes to {computed}, the row says {}", e.entry_hash),
            );
            return Ok(());
        }
        if e.prev_hash != prev {
            let reason = if expected == 1 {
                format!(
                    "prevHash {} is not {prev}, the hash of the mission's creation record (createdBy, attended, createdAtMs, contractRef)",
                    e.prev_hash
                )
            } else {
                format!(
                    "prevHash {} does not name the previous entry {prev}",
                    e.prev_hash
                )
            };
            problem("mission_chain", Some(e.seq), reason);
            return Ok(());
        }
        let d = match decode_entry(&e.entry) {
            Ok(d) => d,
            Err(why) => {
                problem(
                    "mission_journal",
                    Some(e.seq),
                    format!("entry does not decode: {why}"),
                );
                return Ok(());
            }
        };
        if d.seq != e.seq || d.prev_hash != e.prev_hash || d.mission_id != mission_id {
            problem(
                "mission_journal",
                Some(e.seq),
                "entry's missionId/seq/prevHash differ from its row".into(),
            );
            return Ok(());
        }
        if let Some(k) = &d.request_id {
            keys.insert(k.clone(), (e.seq, d.command.command_ref().to_string()));
        }
        if let Command::Admit(a) = &d.command {
            admit_seq.insert(a.attempt_id.clone(), e.seq);
        }
        let recorded = d.result.get("code").and_then(|c| c.as_str()).unwrap_or("");
        match super::reduce::apply(&mut state, &d.command, d.now, &d.actor) {
            Ok(()) if recorded == "OK" => {}
            Err(rej) if rej.code == Code::ExposureExceeded && recorded == rej.code.as_str() => {
                state = state.with_violation(&rej);
            }
            other => {
                let got = match other {
                    Ok(()) => "OK".to_string(),
                    Err(r) => r.code.as_str().to_string(),
                };
                problem(
                    "mission_journal",
                    Some(e.seq),
                    format!("replaying the entry gives {got}, the journal recorded {recorded}"),
                );
                return Ok(());
            }
        }
        prev = e.entry_hash.clone();
    }
    if h.seq != entries.len() as u64 || h.head_hash != prev {
        problem(
            "mission_chain",
            None,
            format!(
                "the mission row names entry {} / {}, the journal ends at {} / {prev}",
                h.seq,
                h.head_hash,
                entries.len()
            ),
        );
    }
    match load_full_db(db, mission_id) {
        Ok(stored) => {
            if stored != state {
                problem("mission_state", None, describe_diff(&stored, &state));
            }
        }
        Err(e @ (Error::Sqlite(_) | Error::Ledger(_))) => return Err(e),
        Err(e) => problem("mission_state", None, e.to_string()),
    }
    // The attempt rows' index columns agree with their bodies (F4: commands and reports
    // must be able to trust neither alone, so a disagreement is a finding).
    for row in db.query(
        "SELECT attempt_id, run_id, status, body FROM mission_attempts WHERE mission_id = ?1 ORDER BY attempt_id",
        &vals![mission_id],
    )? {
        let id = row.text(0)?;
        // An unreadable body is already a finding of the comparison above.
        if let Ok(a) = serde_json::from_str::<Attempt>(&row.text(3)?) {
            if let Some(why) = attempt_columns_differ(&a, &row.text(1)?, &row.text(2)?) {
                problem("mission_state", None, format!("attempt {id}: {why}"));
            }
        }
    }
    // Violation rows are numbered 0..n-1 (`ord` is where the next one goes: a gap would
    // make a later EXPOSURE_EXCEEDED collide with a row instead of recording its violation).
    let ords: Vec<i64> = db
        .query(
            "SELECT ord FROM mission_violations WHERE mission_id = ?1 ORDER BY ord",
            &vals![mission_id],
        )?
        .iter()
        .map(|r| r.int(0))
        .collect::<Result<_, _>>()?;
    if ords.iter().zip(0i64..).any(|(o, i)| *o != i) {
        problem(
            "mission_state",
            None,
            format!(
                "violation rows are numbered {ords:?}, not 0..{}",
                ords.len()
            ),
        );
    }
    // Each idempotency row names the journal entry that used its key, with that entry's
    // command; each key in the journal has its row (F5: else a resend answers another
    // command's result, or applies the command again).
    for row in db.query(
        "SELECT request_id, command_ref, seq FROM mission_requests WHERE mission_id = ?1 ORDER BY request_id",
        &vals![mission_id],
    )? {
        let (k, c, seq) = (row.text(0)?, row.text(1)?, row.int(2)?);
        match keys.remove(&k) {
            Some((s, r)) if i64::try_from(s).ok() == Some(seq) && r == c => {}
            Some((s, r)) => problem(
                "mission_state",
                Some(s),
                format!("request {k} names entry {seq} with command {c}; the journal's entry {s} carries that requestId with command {r}"),
            ),
            None => problem(
                "mission_state",
                None,
                format!("request {k} names entry {seq}, but no journal entry carries that requestId"),
            ),
        }
    }
    for (k, (s, _)) in keys {
        problem(
            "mission_state",
            Some(s),
            format!("journal entry {s} carries requestId {k}, but mission_requests has no row for it (a resend would apply it again)"),
        );
    }
    // The outbox holds exactly the admitted attempts' intents, with the payload and
    // preconditions their refs name, written by their admit's entry.
    let rows: Vec<OutboxRow> = db
        .query(
            "SELECT attempt_id, intent_ref, intent, seq, payload, preconditions FROM mission_outbox WHERE mission_id = ?1",
            &vals![mission_id],
        )?
        .iter()
        .map(|r| {
            Ok(OutboxRow {
                id: r.text(0)?,
                intent_ref: r.text(1)?,
                intent: r.blob(2)?,
                seq: r.int(3)?,
                payload: r.blob(4)?,
                preconditions: r.blob(5)?,
            })
        })
        .collect::<Result<_, Error>>()?;
    if rows.len() != state.attempts.len() {
        problem(
            "mission_state",
            None,
            format!(
                "{} outbox intents for {} admitted attempts",
                rows.len(),
                state.attempts.len()
            ),
        );
    }
    for o in rows {
        let id = &o.id;
        let Some(a) = state.attempts.get(id) else {
            problem(
                "mission_state",
                None,
                format!("outbox intent of attempt {id} does not match the fold"),
            );
            continue;
        };
        let why = if a.intent_ref != o.intent_ref
            || HashRef::of(&o.intent).to_string() != o.intent_ref
            || super::reduce::intent_bytes(mission_id, id, a) != o.intent
        {
            Some("its intent does not match the fold")
        } else if HashRef::of(&o.payload).to_string() != a.payload_ref {
            Some("its payload does not hash to the attempt's payloadRef")
        } else if HashRef::of(&o.preconditions).to_string() != a.preconditions_ref {
            Some("its preconditions do not hash to the attempt's preconditionsRef")
        } else if admit_seq.get(id).and_then(|s| i64::try_from(*s).ok()) != Some(o.seq) {
            Some("its seq does not name the attempt's admit entry")
        } else {
            None
        };
        if let Some(why) = why {
            problem(
                "mission_state",
                None,
                format!("outbox row of attempt {id}: {why}"),
            );
        }
    }
    Ok(())
}

/// One `mission_outbox` row as verify reads it.
struct OutboxRow {
    id: String,
    intent_ref: String,
    intent: Vec<u8>,
    seq: i64,
    payload: Vec<u8>,
    preconditions: Vec<u8>,
}

fn describe_diff(stored: &State, folded: &State) -> String {
    let scalars = [
        ("revision", stored.revision, folded.revision),
        ("reserved", stored.reserved, folded.reserved),
        ("settled", stored.settled, folded.settled),
        ("lastNow", stored.last_now, folded.last_now),
    ];
    for (k, a, b) in scalars {
        if a != b {
            return format!("materialised {k} is {a}, the journal folds to {b}");
        }
    }
    macro_rules! map {
        ($f:ident, $what:expr) => {
            for (k, v) in &folded.$f {
                if stored.$f.get(k) != Some(v) {
                    return format!("materialised {} {k} differs from the journal's fold", $what);
                }
            }
            for k in stored.$f.keys() {
                if !folded.$f.contains_key(k) {
                    return format!("materialised {} {k} is not in the journal", $what);
                }
            }
        };
    }
    map!(runs, "run");
    map!(grants, "grant");
    map!(operations, "operation");
    map!(attempts, "attempt");
    map!(approvals, "approval");
    if stored.violations != folded.violations {
        return "materialised violations differ from the journal's fold".into();
    }
    "materialised state differs from the journal's fold".into()
}
