//! The nested limits ledger, profile `aiws-limits/1` (spec limits.md, seed 002).
//!
//! Scopes (work orders, runs, branches) carry bounds on cost (with a protected handoff
//! partition), active time, elapsed time and attempts. `reserve` charges an attempt's maximum
//! exposure against the scope and every ancestor in one SQLite transaction; `dispatch`,
//! `settle`, `reconcile`, `release`, `stop` and `adjust` move it on; `report` reads durable
//! state only. Every applied command bumps one revision counter and appends one hash-chained
//! event; a rejected command writes nothing (except `exposure_exceeded`'s violation row).
//!
//! Layout: [`crate::ledger`] (amounts, locations, actor kinds: shared with missions), [`config`] (the config file), [`codes`] (result
//! codes and [`Verdict`]), [`schema`] (the `limits_*` tables), `ledger` (the commands),
//! [`report`] (the report). The ledger does not depend on the World store module: evidence is
//! checked through an [`EvidenceCheck`] the caller supplies.
//!
//! Two entry points:
//! - [`apply`] runs one command inside a transaction the caller owns (the broker pairs
//!   `reserve` + `dispatch` with its effect intent this way, limits.md §9);
//! - [`Ledger::execute`] opens the `BEGIN IMMEDIATE` transaction itself (CLI use).

pub mod codes;
pub mod config;
pub(crate) mod fold;
mod ledger;
pub mod pairing;
pub mod pg;
pub mod report;
pub mod schema;
pub(crate) mod seal;

use crate::ledger::location::{check_syntax, is_url, location_arg};
use crate::ledger::{ActorKind, Amount, AmountError};
pub use codes::{Code, Verdict};
pub use config::{Bounds, Config, ConfigError, LimitKind, ScopeKind};
pub use ledger::apply;
pub use pg::PgLedger;
pub use report::Report;

use crate::encoding::hashref::HashRef;
use rusqlite::{Connection, TransactionBehavior};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Errors from the ledger: a rejection with its result code, or a storage failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The command was refused; the verdict carries the code (exit 4) and, for limit
    /// rejections, the scope, limit, bound, usage and request. Nothing was written, except the
    /// control-violation row of `exposure_exceeded`.
    #[error("limits: {0}")]
    Rejected(Box<Verdict>),
    /// The ledger's storage failed or refused ([`crate::ledger::Error`]: not a ledger, corrupt,
    /// SQLite, a bad location or URL, PostgreSQL, busy, another schema version). A storage
    /// `NotInitialized` never appears here: it is the `ledger_not_initialized` rejection.
    #[error("{}", storage_line(.0))]
    Storage(crate::ledger::Error),
}

/// A storage error as limits prints it: prefixed `limits: `, except a busy ledger (whose line
/// names the ledger first).
fn storage_line(e: &crate::ledger::Error) -> String {
    match e {
        crate::ledger::Error::Busy { .. } => e.to_string(),
        e => format!("limits: {e}"),
    }
}

impl Error {
    /// The verdict, when this is a rejection.
    pub fn verdict(&self) -> Option<&Verdict> {
        match self {
            Error::Rejected(v) => Some(v),
            Error::Storage(_) => None,
        }
    }

    /// The result code, when this is a rejection.
    pub fn code(&self) -> Option<Code> {
        self.verdict().map(|v| v.code)
    }

    /// The storage error, when this is one.
    pub fn storage(&self) -> Option<&crate::ledger::Error> {
        match self {
            Error::Storage(s) => Some(s),
            Error::Rejected(_) => None,
        }
    }

    /// A lock wait that timed out (a busy ledger file, a PostgreSQL lock timeout): exit 6.
    pub fn is_busy(&self) -> bool {
        self.storage().is_some_and(crate::ledger::Error::is_busy)
    }

    /// Stored ledger data that breaks an invariant, or an integrity refusal (exit 3).
    pub fn corrupt(why: impl Into<String>) -> Error {
        Error::Storage(crate::ledger::Error::Corrupt(why.into()))
    }

    /// `true` for [`Error::corrupt`].
    pub fn is_corrupt(&self) -> bool {
        self.storage().is_some_and(crate::ledger::Error::is_corrupt)
    }
}

impl From<crate::ledger::Error> for Error {
    fn from(e: crate::ledger::Error) -> Self {
        match e {
            crate::ledger::Error::NotInitialized { ledger, why } => {
                not_initialized(&ledger, &why).into()
            }
            e => Error::Storage(e),
        }
    }
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        Error::Storage(e.into())
    }
}

impl From<Verdict> for Error {
    fn from(v: Verdict) -> Self {
        Error::Rejected(Box::new(v))
    }
}

/// Verified actor facts that accompany every command (limits.md §5). The caller establishes
/// them (attended phrase, session lookup); the ledger only enforces what each kind may do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActorFacts {
    /// `false` means the caller could not authenticate the actor: `actor_unauthenticated`.
    pub allowed: bool,
    /// `human:<login>`, a credential id, or `host:<name>`; must not be empty.
    pub actor_id: String,
    /// The kind.
    pub actor_kind: ActorKind,
    /// For AGENT: `episode:<ep>` (an AGENT may stop only that scope or a descendant).
    pub policy_ref: Option<String>,
    /// The evidence that authenticated the actor, if any (recorded with the event).
    pub evidence_ref: Option<String>,
    /// When the facts were established, Unix milliseconds.
    pub authorized_at_ms: Amount,
}

impl ActorFacts {
    /// Facts for `kind` with `actor_id`, allowed, established at `now_ms`.
    pub fn new(kind: ActorKind, actor_id: &str, now_ms: u128) -> ActorFacts {
        ActorFacts {
            allowed: true,
            actor_id: actor_id.to_string(),
            actor_kind: kind,
            policy_ref: None,
            evidence_ref: None,
            authorized_at_ms: Amount(now_ms),
        }
    }

    /// An AGENT acting for episode `episode` (sets `policyRef = episode:<episode>`).
    pub fn agent(credential_id: &str, episode: &str, now_ms: u128) -> ActorFacts {
        let mut f = ActorFacts::new(ActorKind::Agent, credential_id, now_ms);
        f.policy_ref = Some(format!("episode:{episode}"));
        f
    }
}

/// Tells the ledger whether an `evidenceRef` resolves (limits.md §5: an existing object in the
/// World store, or a file the caller hashed on the spot). Implemented for closures
/// `Fn(&HashRef) -> bool`.
pub trait EvidenceCheck {
    /// `true` when `evidence` names content the host holds and has re-hashed.
    fn resolves(&self, evidence: &HashRef) -> bool;
}

impl<F: Fn(&HashRef) -> bool> EvidenceCheck for F {
    fn resolves(&self, evidence: &HashRef) -> bool {
        self(evidence)
    }
}

/// An [`EvidenceCheck`] that resolves nothing (for callers that hold no evidence store).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoEvidence;

impl EvidenceCheck for NoEvidence {
    fn resolves(&self, _: &HashRef) -> bool {
        false
    }
}

/// `ORDINARY` or `HANDOFF` (limits.md §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Purpose {
    /// Main work; never consumes the protected handoff partition.
    Ordinary,
    /// Host-authorised checkpoint / handoff work; consumes the partition.
    Handoff,
}

impl Purpose {
    /// `ORDINARY` or `HANDOFF`.
    pub fn as_str(self) -> &'static str {
        match self {
            Purpose::Ordinary => "ORDINARY",
            Purpose::Handoff => "HANDOFF",
        }
    }

    /// Case-insensitive parse (`ordinary`, `ORDINARY`), as `--purpose` accepts.
    pub fn parse(text: &str) -> Option<Purpose> {
        match text.to_ascii_uppercase().as_str() {
            "ORDINARY" => Some(Purpose::Ordinary),
            "HANDOFF" => Some(Purpose::Handoff),
            _ => None,
        }
    }
}

/// A settlement outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Outcome {
    /// The effect happened; `actualCost` is its cost.
    Succeeded,
    /// The effect failed; `actualCost` is what it still cost.
    Failed,
    /// Nobody knows; the full reservation is kept until a human reconciles.
    Unknown,
}

/// A patch of bounds for `adjust`: `None` leaves a kind unchanged, `Some(None)` sets it to null
/// (inherit), `Some(Some(x))` sets it to `x`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BoundsPatch {
    /// `cost`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<Option<Amount>>,
    /// `handoff`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handoff: Option<Option<Amount>>,
    /// `activeMs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_ms: Option<Option<Amount>>,
    /// `elapsedMs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<Option<Amount>>,
    /// `attempts`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempts: Option<Option<Amount>>,
}

impl BoundsPatch {
    /// The patch entry for `kind`.
    pub fn get(&self, kind: LimitKind) -> Option<Option<Amount>> {
        match kind {
            LimitKind::Cost => self.cost,
            LimitKind::Handoff => self.handoff,
            LimitKind::ActiveMs => self.active_ms,
            LimitKind::ElapsedMs => self.elapsed_ms,
            LimitKind::Attempts => self.attempts,
        }
    }

    /// Set the entry for `kind` (`adjust --set KIND=VALUE|null`).
    pub fn set(&mut self, kind: LimitKind, value: Option<Amount>) {
        let slot = match kind {
            LimitKind::Cost => &mut self.cost,
            LimitKind::Handoff => &mut self.handoff,
            LimitKind::ActiveMs => &mut self.active_ms,
            LimitKind::ElapsedMs => &mut self.elapsed_ms,
            LimitKind::Attempts => &mut self.attempts,
        };
        *slot = Some(value);
    }

    /// `true` when no kind is touched.
    pub fn is_empty(&self) -> bool {
        LimitKind::ALL.iter().all(|k| self.get(*k).is_none())
    }
}

/// One ledger command (limits.md §5). Amounts are already canonical (parse user text with
/// [`Amount::parse`]; its error maps to `amount_invalid` / `overflows_amount` through
/// [`Verdict::from_amount_error`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Command {
    /// Load the config (raw file bytes). Serialised for hashing as its `configRef`.
    Init {
        /// The raw config file.
        #[serde(rename = "configRef", serialize_with = "ser_config_ref")]
        config: Vec<u8>,
    },
    /// Reserve `amount` cost units and `maxActiveMs` against `scopeId` and every ancestor.
    #[serde(rename_all = "camelCase")]
    Reserve {
        /// New attempt id.
        attempt_id: String,
        /// Operation id (defaults to the attempt id).
        operation_id: String,
        /// Target scope.
        scope_id: String,
        /// Optional run id (informational).
        run_id: Option<String>,
        /// ORDINARY or HANDOFF.
        purpose: Purpose,
        /// Maximum cost exposure, cost units.
        amount: Amount,
        /// Maximum active time, milliseconds.
        max_active_ms: Amount,
        /// Created by pairing with a World effect (§9); only the HOST may set it.
        paired: bool,
    },
    /// Record that the external call is about to happen.
    #[serde(rename_all = "camelCase")]
    Dispatch {
        /// The attempt.
        attempt_id: String,
    },
    /// Settle a DISPATCHED attempt.
    #[serde(rename_all = "camelCase")]
    Settle {
        /// The attempt.
        attempt_id: String,
        /// SUCCEEDED, FAILED or UNKNOWN.
        outcome: Outcome,
        /// Actual cost (cost units); required for SUCCEEDED/FAILED, absent for UNKNOWN.
        actual_cost: Option<Amount>,
        /// The broker's effect-outcome transaction settling a paired attempt (HOST only).
        effect_outcome: bool,
    },
    /// Human settlement of an UNKNOWN (or unresolved paired / violated DISPATCHED) attempt.
    #[serde(rename_all = "camelCase")]
    Reconcile {
        /// The attempt.
        attempt_id: String,
        /// Actual cost (cost units), attested by the evidence.
        actual_cost: Amount,
        /// `sha256:` evidence ref.
        evidence_ref: Option<String>,
    },
    /// Free a RESERVED attempt.
    #[serde(rename_all = "camelCase")]
    Release {
        /// The attempt.
        attempt_id: String,
        /// The HOST releasing a paired attempt that was never dispatched (a standalone ledger's
        /// reservation whose effect intent never reached the store, [`pairing`]). Serialised
        /// only when set, so other releases hash as before.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        never_dispatched: bool,
    },
    /// Host-verified stop of a scope's subtree.
    #[serde(rename_all = "camelCase")]
    Stop {
        /// The scope.
        scope_id: String,
        /// Why.
        reason: String,
        /// Optional `sha256:` evidence ref.
        evidence_ref: Option<String>,
    },
    /// Human change of bounds (and/or lifting a stop).
    #[serde(rename_all = "camelCase")]
    Adjust {
        /// The scope.
        scope_id: String,
        /// The bounds to change.
        limits: BoundsPatch,
        /// Lift a stop on this scope.
        resume: bool,
        /// `sha256:` evidence ref.
        evidence_ref: Option<String>,
    },
}

fn ser_config_ref<S: serde::Serializer>(raw: &[u8], s: S) -> Result<S::Ok, S::Error> {
    let r = config::config_ref(raw).unwrap_or_else(|_| HashRef::of(raw));
    s.collect_str(&r)
}

impl Command {
    /// The command name (`reserve`).
    pub fn name(&self) -> &'static str {
        match self {
            Command::Init { .. } => "init",
            Command::Reserve { .. } => "reserve",
            Command::Dispatch { .. } => "dispatch",
            Command::Settle { .. } => "settle",
            Command::Reconcile { .. } => "reconcile",
            Command::Release { .. } => "release",
            Command::Stop { .. } => "stop",
            Command::Adjust { .. } => "adjust",
        }
    }

    /// The canonical bytes of the command (TR-CJSON-1 of its JSON form; `init` carries its
    /// `configRef` instead of the file). Hashed for `requestId` idempotency and recorded in the
    /// event.
    pub fn canonical(&self) -> Vec<u8> {
        let json = serde_json::to_vec(self).unwrap_or_default();
        crate::encoding::trcjson::canonicalize(&json, crate::encoding::trcjson::Bounds::UNBOUNDED)
            .unwrap_or(json)
    }

    /// For `adjust`: the `changeRef` the attended phrase names (`adjust <scopeId> <first 12 hex
    /// of changeRef>`): sha256 of the TR-CJSON-1 change object `{scopeId, limits, resume}`.
    pub fn change_ref(&self) -> Option<HashRef> {
        match self {
            Command::Adjust {
                scope_id,
                limits,
                resume,
                ..
            } => {
                let v =
                    serde_json::json!({ "scopeId": scope_id, "limits": limits, "resume": resume });
                let bytes = serde_json::to_vec(&v).unwrap_or_default();
                let canon = crate::encoding::trcjson::canonicalize(
                    &bytes,
                    crate::encoding::trcjson::Bounds::UNBOUNDED,
                )
                .unwrap_or(bytes);
                Some(HashRef::of(&canon))
            }
            _ => None,
        }
    }
}

/// One request: `{requestId, expectedRevision?, command}` (limits.md §5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// Idempotency key: same id + same command answers `exists` with the original result.
    pub request_id: String,
    /// Optimistic concurrency: `revision_mismatch` unless equal to the current revision.
    pub expected_revision: Option<u64>,
    /// The command.
    pub command: Command,
    /// `now` is the system clock, not a clock the caller fixed (`--now`): the ledger then uses
    /// `max(now, last recorded time)`, so concurrent clients (other hosts, clock skew) never
    /// meet `time_regressed` (DEC-LIM-18). A fixed clock is checked as given.
    pub system_clock: bool,
}

impl Request {
    /// A request with no expected revision, at a fixed clock.
    pub fn new(request_id: impl Into<String>, command: Command) -> Request {
        Request {
            request_id: request_id.into(),
            expected_revision: None,
            command,
            system_clock: false,
        }
    }

    /// Mark `now` as the system clock (see [`Request::system_clock`]).
    pub fn on_system_clock(mut self, yes: bool) -> Request {
        self.system_clock = yes;
        self
    }

    /// Set `expectedRevision`.
    pub fn expecting(mut self, revision: u64) -> Request {
        self.expected_revision = Some(revision);
        self
    }
}

impl Verdict {
    /// The rejection for an amount that failed [`Amount::parse`]: `amount_invalid` or
    /// `overflows_amount`, at `revision` (use 0 when unknown).
    pub fn from_amount_error(err: &AmountError, revision: u128) -> Verdict {
        let code = match err {
            AmountError::Invalid(_) => Code::AmountInvalid,
            AmountError::Overflow(_) => Code::OverflowsAmount,
        };
        Verdict::new(code, revision).because(err.to_string())
    }
}

/// A ledger handle over a connection: borrowed (tables inside a World store file) or owned (a
/// standalone `--ledger FILE`).
pub struct Ledger<'c> {
    conn: Conn<'c>,
}

enum Conn<'c> {
    Borrowed(&'c Connection),
    Owned(Box<Connection>),
}

impl<'c> Ledger<'c> {
    /// Use the ledger tables inside an existing database (the World store file, limits.md §7).
    ///
    /// Touches nothing: no pragma, no table. The `limits_*` tables are created by `init`, in
    /// its transaction; the store's tables, indexes and `user_version` are never written.
    pub fn open_in(conn: &'c Connection) -> Ledger<'c> {
        Ledger {
            conn: Conn::Borrowed(conn),
        }
    }

    /// The connection.
    pub fn connection(&self) -> &Connection {
        match &self.conn {
            Conn::Borrowed(c) => c,
            Conn::Owned(c) => c,
        }
    }

    /// Run one command in its own `BEGIN IMMEDIATE` transaction at `now_ms` (Unix ms).
    ///
    /// Commits on success and on `exposure_exceeded` (whose violation row must persist); rolls
    /// back on every other rejection.
    ///
    /// # Errors
    /// [`Error::Rejected`] with the verdict; storage errors (SQLite, corrupt).
    pub fn execute(
        &self,
        request: &Request,
        actor: &ActorFacts,
        now_ms: u128,
        evidence: &dyn EvidenceCheck,
    ) -> Result<Verdict, Error> {
        let tx = rusqlite::Transaction::new_unchecked(
            self.connection(),
            TransactionBehavior::Immediate,
        )?;
        match apply(&tx, request, actor, now_ms, evidence) {
            Ok(v) => {
                tx.commit()?;
                Ok(v)
            }
            Err(Error::Rejected(v)) if v.code == Code::ExposureExceeded => {
                tx.commit()?;
                Err(Error::Rejected(v))
            }
            Err(e) => Err(e), // dropping `tx` rolls back
        }
    }

    /// The report at `now_ms` (Unix ms), optionally limited to `scope` and its subtree (§8).
    ///
    /// # Errors
    /// [`Error::Rejected`] with `ledger_not_initialized` or `scope_not_found`; SQLite errors.
    pub fn report(&self, now_ms: u128, scope: Option<&str>) -> Result<Report, Error> {
        report::report(self.connection(), now_ms, scope)
    }

    /// Run one command and roll it back whatever the result (the attended dry run).
    ///
    /// # Errors
    /// As [`Ledger::execute`].
    pub fn dry_run(
        &self,
        request: &Request,
        actor: &ActorFacts,
        now_ms: u128,
        evidence: &dyn EvidenceCheck,
    ) -> Result<Verdict, Error> {
        let tx = rusqlite::Transaction::new_unchecked(
            self.connection(),
            TransactionBehavior::Immediate,
        )?;
        apply(&tx, request, actor, now_ms, evidence)
    }
}

/// One ledger interface over its two backends (issue 18): a SQLite [`Ledger`] (the store
/// file's tables or a standalone file) and a [`PgLedger`]. Each call is one transaction.
pub trait LedgerStore {
    /// The ledger for messages: a file path or `postgres://user@host:port/db` (no password).
    fn describe(&self) -> String;
    /// Apply one command at `now_ms` (Unix ms) in its own transaction (commits on success and
    /// on `exposure_exceeded`).
    ///
    /// # Errors
    /// [`Error::Rejected`] with the verdict; storage errors.
    fn execute(
        &self,
        request: &Request,
        actor: &ActorFacts,
        now_ms: u128,
        evidence: &dyn EvidenceCheck,
    ) -> Result<Verdict, Error>;
    /// Apply one command and roll it back whatever the result.
    ///
    /// # Errors
    /// As [`LedgerStore::execute`].
    fn dry_run(
        &self,
        request: &Request,
        actor: &ActorFacts,
        now_ms: u128,
        evidence: &dyn EvidenceCheck,
    ) -> Result<Verdict, Error>;
    /// The report at `now_ms`, optionally limited to `scope`'s subtree (limits.md §8).
    ///
    /// # Errors
    /// [`Error::Rejected`] with `ledger_not_initialized` or `scope_not_found`; storage errors.
    fn report(&self, now_ms: u128, scope: Option<&str>) -> Result<Report, Error>;
    /// The current revision (0 when not initialised or unreadable).
    fn revision(&self) -> u128;
}

/// A standalone SQLite ledger file with its path.
pub struct FileLedger {
    ledger: Ledger<'static>,
    path: PathBuf,
}

impl FileLedger {
    /// The SQLite ledger.
    pub fn ledger(&self) -> &Ledger<'static> {
        &self.ledger
    }
}

/// `ledger_not_initialized` from a standalone ledger, with a reason naming the ledger
/// (`ledger`: a path, or a URL without its password) and the command that initialises it.
pub fn not_initialized(ledger: &str, why: &str) -> Verdict {
    // `ledger` is a printed name (no password); it parses back to this very ledger.
    let target = location_arg(ledger);
    Verdict::new(Code::LedgerNotInitialized, 0).because(format!(
        "ledger {ledger} {why}; initialise it with `world limits init --config FILE --ledger {target}`"
    ))
}

/// Give a bare `ledger_not_initialized` rejection of ledger `name` its reason.
fn name_uninitialized<T>(r: Result<T, Error>, name: &str) -> Result<T, Error> {
    match r {
        Err(Error::Rejected(v)) if v.code == Code::LedgerNotInitialized && v.reason.is_none() => {
            Err(not_initialized(name, "is not initialised (no limits config)").into())
        }
        other => other,
    }
}

impl LedgerStore for FileLedger {
    fn describe(&self) -> String {
        self.path.display().to_string()
    }
    fn execute(
        &self,
        request: &Request,
        actor: &ActorFacts,
        now_ms: u128,
        evidence: &dyn EvidenceCheck,
    ) -> Result<Verdict, Error> {
        name_uninitialized(
            self.ledger.execute(request, actor, now_ms, evidence),
            &self.describe(),
        )
    }
    fn dry_run(
        &self,
        request: &Request,
        actor: &ActorFacts,
        now_ms: u128,
        evidence: &dyn EvidenceCheck,
    ) -> Result<Verdict, Error> {
        name_uninitialized(
            self.ledger.dry_run(request, actor, now_ms, evidence),
            &self.describe(),
        )
    }
    fn report(&self, now_ms: u128, scope: Option<&str>) -> Result<Report, Error> {
        name_uninitialized(self.ledger.report(now_ms, scope), &self.describe())
    }
    fn revision(&self) -> u128 {
        ledger::load_meta(self.ledger.connection())
            .ok()
            .flatten()
            .map_or(0, |m| u128::from(m.revision))
    }
}

impl LedgerStore for PgLedger {
    fn describe(&self) -> String {
        self.name().to_string()
    }
    fn execute(
        &self,
        request: &Request,
        actor: &ActorFacts,
        now_ms: u128,
        evidence: &dyn EvidenceCheck,
    ) -> Result<Verdict, Error> {
        name_uninitialized(
            PgLedger::execute(self, request, actor, now_ms, evidence, false),
            self.name(),
        )
    }
    fn dry_run(
        &self,
        request: &Request,
        actor: &ActorFacts,
        now_ms: u128,
        evidence: &dyn EvidenceCheck,
    ) -> Result<Verdict, Error> {
        name_uninitialized(
            PgLedger::execute(self, request, actor, now_ms, evidence, true),
            self.name(),
        )
    }
    fn report(&self, now_ms: u128, scope: Option<&str>) -> Result<Report, Error> {
        name_uninitialized(PgLedger::report(self, now_ms, scope), self.name())
    }
    fn revision(&self) -> u128 {
        PgLedger::revision(self)
    }
}

/// Open an existing standalone ledger named by `--ledger` / `WORLD_LEDGER`: a `postgres://`
/// (or `postgresql://`) URL, else a SQLite file path that must hold a ledger
/// ([`Ledger::open_standalone`]: nothing is created). Only `world limits init` creates one
/// ([`create_standalone_ledger`]).
///
/// # Errors
/// [`Error::Rejected`] `ledger_not_initialized` naming the path for a missing or empty file;
/// storage errors (a bad URL, PostgreSQL, not a ledger, SQLite).
pub fn open_standalone_ledger(location: &str) -> Result<Box<dyn LedgerStore>, Error> {
    open_location(location, false)
}

/// Open the standalone ledger `location` for `world limits init`: like
/// [`open_standalone_ledger`], but a missing or empty file is created as a ledger file
/// ([`Ledger::create_standalone`]).
///
/// # Errors
/// As [`open_standalone_ledger`], less the missing-file refusal.
pub fn create_standalone_ledger(location: &str) -> Result<Box<dyn LedgerStore>, Error> {
    open_location(location, true)
}

fn open_location(location: &str, create: bool) -> Result<Box<dyn LedgerStore>, Error> {
    check_syntax(location)?;
    if is_url(location) {
        return Ok(Box::new(PgLedger::connect(location)?));
    }
    let path = PathBuf::from(location);
    let ledger = if create {
        Ledger::create_standalone(&path)?
    } else {
        Ledger::open_standalone(&path)?
    };
    Ok(Box::new(FileLedger { ledger, path }))
}

/// Refuse a `--ledger` location that names no ledger file (missing, or 0 bytes) without opening
/// or creating anything; URLs pass (they are checked on connect). `invoke`, `serve` and `mcp`
/// call it before they start.
///
/// # Errors
/// [`Error::Rejected`] `ledger_not_initialized` whose reason names the path and
/// `world limits init --ledger PATH`.
pub fn check_ledger_location(location: &str) -> Result<(), Error> {
    check_syntax(location)?;
    if is_url(location) {
        return Ok(());
    }
    match crate::ledger::file::no_ledger_file(Path::new(location)) {
        Some(why) => Err(not_initialized(location, why).into()),
        // A file that is something else (a World store, say) is refused here too, as every
        // other command refuses it (exit 2), not later as an unavailable ledger.
        None => Ledger::open_standalone(Path::new(location)).map(|_| ()),
    }
}

impl Ledger<'static> {
    /// Open an existing standalone ledger file for `--ledger FILE` (limits.md §7), as
    /// [`Ledger::create_standalone`] but never creating or initialising one: a missing or
    /// 0-byte file, or a SQLite file without the ledger's tables, is refused and left as it was.
    ///
    /// # Errors
    /// [`Error::Rejected`] `ledger_not_initialized` naming the path (and `world limits init`);
    /// the errors of [`Ledger::create_standalone`].
    pub fn open_standalone(path: &Path) -> Result<Ledger<'static>, Error> {
        Self::open_file(path, false)
    }

    /// Open (creating if missing, or initialising a 0-byte file) a standalone ledger file for
    /// `world limits init --ledger FILE` (limits.md §7): `journal_mode=WAL`,
    /// `synchronous=FULL`, `foreign_keys=ON`, `busy_timeout` 5000 ms, `application_id` =
    /// [`crate::ledger::file::APPLICATION_ID`], `user_version` = 1, tables created.
    ///
    /// # Errors
    /// A storage `NotALedger` when the file has another application id or user version, or holds
    /// non-ledger tables (a World store passed as `--ledger`); SQLite errors.
    pub fn create_standalone(path: &Path) -> Result<Ledger<'static>, Error> {
        Self::open_file(path, true)
    }

    fn open_file(path: &Path, create: bool) -> Result<Ledger<'static>, Error> {
        let ddl = format!("{} {}", schema::DDL, seal::SQLITE_DDL);
        let conn = crate::ledger::file::open(path, create.then_some(ddl.as_str()))?;
        Ok(Ledger {
            conn: Conn::Owned(Box::new(conn)),
        })
    }
}

#[cfg(test)]
mod proptests;
#[cfg(test)]
pub(crate) mod testkit;
#[cfg(test)]
mod tests;
