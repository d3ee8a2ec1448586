//! The ledger commands (limits.md §4–§7): checks in §6 precedence order, then one event, the
//! derived rows and the revision bump, all inside the caller's transaction.

use super::codes::{Code, Verdict};
use super::config::{self, Bounds, Config, LimitKind, ScopeConfig, ScopeKind};
use super::{ActorFacts, ActorKind, Command, Error, EvidenceCheck, Outcome, Purpose, Request};
use crate::encoding::hashref::HashRef;
use crate::encoding::trcjson;
use crate::ledger::amount::Amount;
use crate::ledger::db::{query_one, query_opt, vals, Db, Row};
use rusqlite::Transaction;
use std::collections::HashMap;

mod commands;
use commands::*;

/// Longest request, attempt, operation or run id, in bytes.
pub const MAX_TEXT_ID: usize = 256;
/// Longest stop reason, in bytes.
pub const MAX_REASON: usize = 4096;

/// Attempt states (limits.md §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    Reserved,
    Dispatched,
    Unknown,
    Settled,
    Released,
}

impl State {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            State::Reserved => "RESERVED",
            State::Dispatched => "DISPATCHED",
            State::Unknown => "UNKNOWN",
            State::Settled => "SETTLED",
            State::Released => "RELEASED",
        }
    }
    fn parse(s: &str) -> Option<State> {
        Some(match s {
            "RESERVED" => State::Reserved,
            "DISPATCHED" => State::Dispatched,
            "UNKNOWN" => State::Unknown,
            "SETTLED" => State::Settled,
            "RELEASED" => State::Released,
            _ => return None,
        })
    }
}

pub(crate) fn num(text: &str, what: &str) -> Result<u128, Error> {
    Amount::parse(text)
        .map(Amount::get)
        .map_err(|e| Error::corrupt(format!("{what}: {e}")))
}

fn opt_num(text: Option<String>, what: &str) -> Result<Option<u128>, Error> {
    text.map(|t| num(&t, what)).transpose()
}

fn opt_amount(text: Option<String>, what: &str) -> Result<Option<Amount>, Error> {
    Ok(opt_num(text, what)?.map(Amount))
}

/// The singleton meta row.
pub(crate) struct Meta {
    pub(crate) ledger_id: String,
    pub(crate) revision: u64,
    pub(crate) last_now: u128,
    pub(crate) head: String,
}

pub(crate) fn load_meta(conn: &dyn Db) -> Result<Option<Meta>, Error> {
    if !conn.table_exists("limits_meta")? {
        return Ok(None);
    }
    let row = query_opt(
        conn,
        "SELECT ledger_id, revision, last_now_ms, head_event_hash FROM limits_meta WHERE id = 1",
        &[],
    )?;
    let Some(r) = row else {
        return Ok(None);
    };
    let (ledger_id, revision, last, head) = (r.text(0)?, r.int(1)?, r.text(2)?, r.text(3)?);
    Ok(Some(Meta {
        ledger_id,
        revision: u64::try_from(revision).map_err(|_| Error::corrupt("negative revision"))?,
        last_now: num(&last, "last_now_ms")?,
        head,
    }))
}

/// One `limits_scopes` row with its subtree counters.
#[derive(Clone, Debug)]
pub(crate) struct ScopeRow {
    pub(crate) id: String,
    pub(crate) kind: ScopeKind,
    pub(crate) parent: Option<String>,
    pub(crate) depends_on: Vec<String>,
    pub(crate) own: Bounds,
    pub(crate) started_at: u128,
    pub(crate) stopped_at: Option<u128>,
    pub(crate) usage_ordinary: u128,
    pub(crate) usage_handoff: u128,
    pub(crate) active_static: u128,
    pub(crate) attempts: u128,
}

pub(crate) const SCOPE_COLS: &str = "s.scope_id, s.ordinal, s.kind, s.parent_id, s.depends_on, \
    s.bound_cost, s.bound_handoff, s.bound_active_ms, s.bound_elapsed_ms, s.bound_attempts, \
    s.started_at_ms, s.stopped_at_ms, s.usage_ordinary, s.usage_handoff, s.active_static, s.attempts";

type RawScope = (
    String,
    i64,
    String,
    Option<String>,
    String,
    [Option<String>; 5],
    String,
    Option<String>,
    [String; 4],
);

pub(crate) fn raw_scope(r: &Row) -> Result<RawScope, Error> {
    Ok((
        r.text(0)?,
        r.int(1)?,
        r.text(2)?,
        r.opt_text(3)?,
        r.text(4)?,
        [
            r.opt_text(5)?,
            r.opt_text(6)?,
            r.opt_text(7)?,
            r.opt_text(8)?,
            r.opt_text(9)?,
        ],
        r.text(10)?,
        r.opt_text(11)?,
        [r.text(12)?, r.text(13)?, r.text(14)?, r.text(15)?],
    ))
}

pub(crate) fn scope_from_raw(raw: RawScope) -> Result<ScopeRow, Error> {
    let (id, _ordinal, kind, parent, deps, bounds, started, stopped, counters) = raw;
    let [c, h, a, e, n] = bounds;
    let [uo, uh, st, at] = counters;
    Ok(ScopeRow {
        kind: ScopeKind::parse(&kind)
            .ok_or_else(|| Error::corrupt(format!("scope {id}: kind {kind:?}")))?,
        parent,
        depends_on: serde_json::from_str(&deps)
            .map_err(|e| Error::corrupt(format!("scope {id}: depends_on: {e}")))?,
        own: Bounds {
            cost: opt_amount(c, "bound_cost")?,
            handoff: opt_amount(h, "bound_handoff")?,
            active_ms: opt_amount(a, "bound_active_ms")?,
            elapsed_ms: opt_amount(e, "bound_elapsed_ms")?,
            attempts: opt_amount(n, "bound_attempts")?,
        },
        started_at: num(&started, "started_at_ms")?,
        stopped_at: opt_num(stopped, "stopped_at_ms")?,
        usage_ordinary: num(&uo, "usage_ordinary")?,
        usage_handoff: num(&uh, "usage_handoff")?,
        active_static: num(&st, "active_static")?,
        attempts: num(&at, "attempts")?,
        id,
    })
}

/// The chain from `scope_id` (index 0) up to the root, with effective bounds per element.
pub(crate) struct Chain {
    pub(crate) rows: Vec<ScopeRow>,
    pub(crate) eff: Vec<Bounds>,
}

fn load_chain(conn: &dyn Db, scope_id: &str) -> Result<Option<Chain>, Error> {
    let raws = conn
        .query(
            &format!(
                "SELECT {SCOPE_COLS} FROM limits_closure c JOIN limits_scopes s ON s.scope_id = c.ancestor_id \
                 WHERE c.scope_id = ?1 ORDER BY c.distance"
            ),
            &vals![scope_id],
        )?
        .iter()
        .map(raw_scope)
        .collect::<Result<Vec<_>, _>>()?;
    if raws.is_empty() {
        return Ok(None);
    }
    let rows = raws
        .into_iter()
        .map(scope_from_raw)
        .collect::<Result<Vec<_>, _>>()?;
    let mut eff = vec![Bounds::default(); rows.len()];
    let mut above = Bounds::default();
    for (i, row) in rows.iter().enumerate().rev() {
        above = row.own.tighten(&above);
        if let Some(slot) = eff.get_mut(i) {
            *slot = above;
        }
    }
    Ok(Some(Chain { rows, eff }))
}

/// One `limits_attempts` row.
#[derive(Clone, Debug)]
pub(crate) struct AttemptRow {
    pub(crate) id: String,
    pub(crate) scope_id: String,
    pub(crate) purpose: Purpose,
    pub(crate) amount: u128,
    pub(crate) max_active_ms: u128,
    pub(crate) state: State,
    pub(crate) actual_cost: Option<u128>,
    pub(crate) paired: bool,
    pub(crate) dispatched_at: Option<u128>,
    pub(crate) actor_id: String,
    pub(crate) actor_kind: String,
    pub(crate) operation_id: String,
    pub(crate) run_id: Option<String>,
}

pub(crate) const ATTEMPT_COLS: &str =
    "attempt_id, scope_id, purpose, amount, max_active_ms, state, \
    actual_cost, paired, dispatched_at_ms, actor_id, actor_kind, operation_id, run_id";

type RawAttempt = (
    String,
    String,
    String,
    String,
    String,
    String,
    Option<String>,
    bool,
    Option<String>,
    String,
    String,
    (String, Option<String>),
);

pub(crate) fn raw_attempt(r: &Row) -> Result<RawAttempt, Error> {
    Ok((
        r.text(0)?,
        r.text(1)?,
        r.text(2)?,
        r.text(3)?,
        r.text(4)?,
        r.text(5)?,
        r.opt_text(6)?,
        r.flag(7)?,
        r.opt_text(8)?,
        r.text(9)?,
        r.text(10)?,
        (r.text(11)?, r.opt_text(12)?),
    ))
}

pub(crate) fn attempt_from_raw(raw: RawAttempt) -> Result<AttemptRow, Error> {
    let (
        id,
        scope_id,
        purpose,
        amount,
        max_active,
        state,
        actual,
        paired,
        dispatched,
        aid,
        akind,
        (operation_id, run_id),
    ) = raw;
    Ok(AttemptRow {
        purpose: Purpose::parse(&purpose)
            .ok_or_else(|| Error::corrupt(format!("attempt {id}: purpose {purpose:?}")))?,
        amount: num(&amount, "amount")?,
        max_active_ms: num(&max_active, "max_active_ms")?,
        state: State::parse(&state)
            .ok_or_else(|| Error::corrupt(format!("attempt {id}: state {state:?}")))?,
        actual_cost: opt_num(actual, "actual_cost")?,
        paired,
        dispatched_at: opt_num(dispatched, "dispatched_at_ms")?,
        actor_id: aid,
        actor_kind: akind,
        operation_id,
        run_id,
        scope_id,
        id,
    })
}

fn load_attempt(conn: &dyn Db, attempt_id: &str) -> Result<Option<AttemptRow>, Error> {
    let row = query_opt(
        conn,
        &format!("SELECT {ATTEMPT_COLS} FROM limits_attempts WHERE attempt_id = ?1"),
        &vals![attempt_id],
    )?;
    row.as_ref()
        .map(raw_attempt)
        .transpose()?
        .map(attempt_from_raw)
        .transpose()
}

/// The earliest stop time over `scope_id` and its ancestors (when accrual freezes).
fn freeze_of(conn: &dyn Db, scope_id: &str) -> Result<Option<u128>, Error> {
    let texts = conn
        .query(
            "SELECT s.stopped_at_ms FROM limits_closure c JOIN limits_scopes s ON s.scope_id = c.ancestor_id \
             WHERE c.scope_id = ?1 AND s.stopped_at_ms IS NOT NULL",
            &vals![scope_id],
        )?
        .iter()
        .map(|r| r.text(0))
        .collect::<Result<Vec<_>, _>>()?;
    let mut min: Option<u128> = None;
    for t in texts {
        let v = num(&t, "stopped_at_ms")?;
        min = Some(min.map_or(v, |m| m.min(v)));
    }
    Ok(min)
}

/// Active time of a live (DISPATCHED or UNKNOWN) attempt at `now`: max(maxActiveMs, accrued),
/// accrued = min(now, freeze) − dispatchedAt (limits.md §4).
pub(crate) fn live_accrual(
    max_active: u128,
    dispatched_at: u128,
    now: u128,
    freeze: Option<u128>,
) -> u128 {
    let end = freeze.map_or(now, |f| f.min(now));
    max_active.max(end.saturating_sub(dispatched_at))
}

/// Σ live accrual over the attempts in the subtree of `scope_id`; `None` on overflow.
fn live_under(conn: &dyn Db, scope_id: &str, now: u128) -> Result<Option<u128>, Error> {
    let any_stop = query_one(
        conn,
        "SELECT count(*) FROM limits_scopes WHERE stopped_at_ms IS NOT NULL",
        &[],
    )?
    .int(0)?
        > 0;
    let rows = conn
        .query(
            "SELECT a.scope_id, a.max_active_ms, a.dispatched_at_ms FROM limits_closure c \
             JOIN limits_attempts a ON a.scope_id = c.scope_id \
             WHERE c.ancestor_id = ?1 AND a.state IN ('DISPATCHED', 'UNKNOWN')",
            &vals![scope_id],
        )?
        .iter()
        .map(|r| Ok((r.text(0)?, r.text(1)?, r.opt_text(2)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    let mut sum: u128 = 0;
    for (scope, max_active, dispatched) in rows {
        let freeze = if any_stop {
            freeze_of(conn, &scope)?
        } else {
            None
        };
        let d = opt_num(dispatched, "dispatched_at_ms")?
            .ok_or_else(|| Error::corrupt("live attempt without dispatched_at_ms"))?;
        let v = live_accrual(num(&max_active, "max_active_ms")?, d, now, freeze);
        match sum.checked_add(v) {
            Some(s) => sum = s,
            None => return Ok(None),
        }
    }
    Ok(Some(sum))
}

/// Counter changes applied to every scope of a chain. Subtractions run first.
#[derive(Default)]
struct Delta {
    ordinary: (u128, u128),
    handoff: (u128, u128),
    active: (u128, u128),
    attempts: u128,
}

fn shift(old: u128, (add, sub): (u128, u128), what: &str) -> Result<Option<u128>, Error> {
    let base = old
        .checked_sub(sub)
        .ok_or_else(|| Error::corrupt(format!("{what} would go negative")))?;
    Ok(base.checked_add(add))
}

/// New counters per chain scope, or `None` when a sum overflows (`overflows_usage`).
fn plan_delta(chain: &Chain, d: &Delta) -> Result<Option<Vec<[u128; 4]>>, Error> {
    let mut out = Vec::with_capacity(chain.rows.len());
    for row in &chain.rows {
        let (Some(o), Some(h), Some(a), Some(n)) = (
            shift(row.usage_ordinary, d.ordinary, "usage_ordinary")?,
            shift(row.usage_handoff, d.handoff, "usage_handoff")?,
            shift(row.active_static, d.active, "active_static")?,
            row.attempts.checked_add(d.attempts),
        ) else {
            return Ok(None);
        };
        out.push([o, h, a, n]);
    }
    Ok(Some(out))
}

fn write_delta(tx: &dyn Db, chain: &Chain, new: &[[u128; 4]]) -> Result<(), Error> {
    for (row, [o, h, a, n]) in chain.rows.iter().zip(new) {
        tx.exec(
            "UPDATE limits_scopes SET usage_ordinary = ?1, usage_handoff = ?2, active_static = ?3, attempts = ?4 \
             WHERE scope_id = ?5",
            &vals![
            o.to_string(),
            h.to_string(),
            a.to_string(),
            n.to_string(),
            row.id
        ])?;
    }
    Ok(())
}

/// `true` for a request/attempt/operation/run id: 1..=256 bytes, no whitespace or control.
fn valid_text_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_TEXT_ID
        && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// Evaluation context for one command.
struct Ctx<'a> {
    tx: &'a dyn Db,
    req: &'a Request,
    actor: &'a ActorFacts,
    now: u128,
    meta: Meta,
}

impl Ctx<'_> {
    fn rev(&self) -> u128 {
        u128::from(self.meta.revision)
    }

    fn reject(&self, code: Code) -> Verdict {
        Verdict::new(code, self.rev())
    }

    /// (12)(13): an earlier identical request answers `exists`; a different one is refused.
    fn check_request(&self) -> Result<Option<Verdict>, Error> {
        let row = query_opt(
            self.tx,
            "SELECT command_hash, result FROM limits_requests WHERE request_id = ?1",
            &vals![self.req.request_id],
        )?;
        let Some(row) = row else {
            return Ok(None);
        };
        let (hash, result) = (row.text(0)?, row.text(1)?);
        if hash != command_hash(&self.req.command) {
            return Err(self
                .reject(Code::ExistsWithDifferentCommand)
                .because(format!(
                    "requestId {:?} was used for another command",
                    self.req.request_id
                ))
                .into());
        }
        let mut v: Verdict = serde_json::from_str(&result).map_err(|e| {
            Error::corrupt(format!("stored result of {}: {e}", self.req.request_id))
        })?;
        v.code = Code::Exists;
        Ok(Some(v))
    }

    /// (14)
    fn check_revision(&self) -> Result<(), Error> {
        match self.req.expected_revision {
            Some(want) if want != self.meta.revision => Err(self
                .reject(Code::RevisionMismatch)
                .because(format!(
                    "expected revision {want}, ledger is at {}",
                    self.meta.revision
                ))
                .into()),
            _ => Ok(()),
        }
    }

    /// (34)
    fn check_time(&self) -> Result<(), Error> {
        if self.now < self.meta.last_now {
            let mut v = self.reject(Code::TimeRegressed).because(format!(
                "now {} is earlier than the last recorded time {}",
                self.now, self.meta.last_now
            ));
            v.last_now_ms = Some(Amount(self.meta.last_now));
            return Err(v.into());
        }
        Ok(())
    }

    /// (10)(11): `evidenceRef` must be present (when `required`) and resolve.
    fn check_evidence(
        &self,
        evidence_ref: Option<&str>,
        required: bool,
        check: &dyn EvidenceCheck,
    ) -> Result<(), Error> {
        match evidence_ref {
            None if required => Err(self.reject(Code::EvidenceRequired).into()),
            None => Ok(()),
            Some(text) => match HashRef::parse(text) {
                Ok(r) if check.resolves(&r) => Ok(()),
                Ok(_) => Err(self
                    .reject(Code::EvidenceUnverified)
                    .because(format!("{text} does not resolve"))
                    .into()),
                Err(e) => Err(self
                    .reject(Code::EvidenceUnverified)
                    .because(e.to_string())
                    .into()),
            },
        }
    }

    fn not_permitted(&self, why: &str) -> Error {
        self.reject(Code::ActorKindNotPermitted)
            .because(format!(
                "{} {}: {why}",
                self.actor.actor_kind.as_str(),
                self.actor.actor_id
            ))
            .into()
    }

    /// Append the event, record the request, bump the revision; returns the `ok` verdict.
    fn commit(&mut self, mut ok: Verdict, details: serde_json::Value) -> Result<Verdict, Error> {
        let revision = self.meta.revision + 1;
        ok.code = Code::Ok;
        ok.revision = Amount(u128::from(revision));
        let command_json: serde_json::Value = serde_json::from_slice(&self.req.command.canonical())
            .map_err(|e| Error::corrupt(format!("command encoding: {e}")))?;
        let event = serde_json::json!({
            "revision": revision.to_string(),
            "prevHash": self.meta.head,
            "nowMs": self.now.to_string(),
            "requestId": self.req.request_id,
            "command": command_json,
            "actor": self.actor,
            "result": &ok,
            "details": details,
        });
        let raw = serde_json::to_vec(&event).map_err(|e| Error::corrupt(e.to_string()))?;
        let canonical = trcjson::canonicalize(&raw, trcjson::Bounds::UNBOUNDED)
            .map_err(|e| Error::corrupt(format!("event encoding: {e}")))?;
        let event_hash = event_hash(&self.meta.head, &canonical).to_string();
        let rev_i64 = i64::try_from(revision).map_err(|_| Error::corrupt("revision overflow"))?;
        self.tx
            .exec("INSERT INTO limits_events (revision, prev_hash, event_hash, event) VALUES (?1, ?2, ?3, ?4)", &vals![rev_i64, self.meta.head, event_hash, canonical])?;
        let result = serde_json::to_string(&ok).map_err(|e| Error::corrupt(e.to_string()))?;
        self.tx
            .exec("INSERT INTO limits_requests (request_id, command_hash, result, revision) VALUES (?1, ?2, ?3, ?4)", &vals![self.req.request_id, command_hash(&self.req.command), result, rev_i64])?;
        self.tx
            .exec("UPDATE limits_meta SET revision = ?1, last_now_ms = ?2, head_event_hash = ?3 WHERE id = 1", &vals![rev_i64, self.now.max(self.meta.last_now).to_string(), event_hash])?;
        self.meta.revision = revision;
        self.meta.head = event_hash;
        super::seal::record(self.tx, revision, attempt_of(&self.req.command))?;
        Ok(ok)
    }
}

/// The attempt a command names (reserve creates it; the others move it on).
fn attempt_of(cmd: &Command) -> Option<&str> {
    match cmd {
        Command::Reserve { attempt_id, .. }
        | Command::Dispatch { attempt_id }
        | Command::Settle { attempt_id, .. }
        | Command::Reconcile { attempt_id, .. }
        | Command::Release { attempt_id, .. } => Some(attempt_id),
        Command::Init { .. } | Command::Stop { .. } | Command::Adjust { .. } => None,
    }
}

/// `eventHash = sha256(prevHash ‖ canonical event)`; `prevHash` is the previous event's hash
/// text (`""` before the first event).
pub fn event_hash(prev_hash: &str, canonical_event: &[u8]) -> HashRef {
    let mut buf = Vec::with_capacity(prev_hash.len() + canonical_event.len());
    buf.extend_from_slice(prev_hash.as_bytes());
    buf.extend_from_slice(canonical_event);
    HashRef::of(&buf)
}

fn command_hash(cmd: &Command) -> String {
    HashRef::of(&cmd.canonical()).to_string()
}

/// Apply one command inside `tx` at `now_ms` (Unix milliseconds) — limits.md §5–§7.
///
/// The caller owns the transaction (open it with `BEGIN IMMEDIATE`; [`super::Ledger::execute`]
/// does so) and commits it. On success the ledger revision rose by exactly 1 and one event was
/// appended; `exists` changes nothing. On a rejection nothing was written, except that
/// `exposure_exceeded` appended its `limits_violations` row — commit to keep it. Checks run in
/// the §6 precedence order (see docs/DECISIONS.md for the two deliberate exceptions
/// around `exposure_exceeded`).
///
/// # Errors
/// [`Error::Rejected`] with the verdict (exit 4); [`Error::Sqlite`]; [`Error::Corrupt`] when
/// stored rows are not what the ledger wrote.
pub fn apply(
    tx: &Transaction<'_>,
    req: &Request,
    actor: &ActorFacts,
    now_ms: u128,
    evidence: &dyn EvidenceCheck,
) -> Result<Verdict, Error> {
    let conn: &rusqlite::Connection = tx;
    apply_db(conn, req, actor, now_ms, evidence)
}

/// [`apply`] over any backend's transaction ([`Db`]).
pub(crate) fn apply_db(
    conn: &dyn Db,
    req: &Request,
    actor: &ActorFacts,
    now_ms: u128,
    evidence: &dyn EvidenceCheck,
) -> Result<Verdict, Error> {
    let meta = load_meta(conn)?;
    let now_ms = match &meta {
        Some(m) if req.system_clock => now_ms.max(m.last_now),
        _ => now_ms,
    };
    let rev0 = meta.as_ref().map_or(0, |m| u128::from(m.revision));
    if !valid_text_id(&req.request_id) {
        return Err(Verdict::new(Code::MalformedCommand, rev0)
            .because("requestId must be 1..=256 bytes without whitespace or control characters")
            .into());
    }
    check_shape(&req.command)
        .map_err(|why| Verdict::new(Code::MalformedCommand, rev0).because(why.to_string()))?;
    if let Command::Init { config } = &req.command {
        return init(conn, req, actor, now_ms, meta, config);
    }
    let Some(meta) = meta else {
        return Err(Verdict::new(Code::LedgerNotInitialized, 0).into());
    };
    // Never decide on rows the ledger did not write (issue 27 §3, DEC-LEDGER-1).
    super::seal::check(conn, &meta, attempt_of(&req.command))?;
    let mut cx = Ctx {
        tx: conn,
        req,
        actor,
        now: now_ms,
        meta,
    };
    if !actor.allowed || actor.actor_id.is_empty() {
        return Err(cx.reject(Code::ActorUnauthenticated).into());
    }
    match &req.command {
        Command::Init { .. } => Err(Error::corrupt("init handled above")),
        Command::Reserve { .. } => reserve(&mut cx),
        Command::Dispatch { attempt_id } => dispatch(&mut cx, attempt_id),
        Command::Settle {
            attempt_id,
            outcome,
            actual_cost,
            effect_outcome,
        } => settle(&mut cx, attempt_id, *outcome, *actual_cost, *effect_outcome),
        Command::Reconcile {
            attempt_id,
            actual_cost,
            evidence_ref,
        } => reconcile(
            &mut cx,
            attempt_id,
            *actual_cost,
            evidence_ref.as_deref(),
            evidence,
        ),
        Command::Release {
            attempt_id,
            never_dispatched,
        } => release(&mut cx, attempt_id, *never_dispatched),
        Command::Stop {
            scope_id,
            reason,
            evidence_ref,
        } => stop(&mut cx, scope_id, reason, evidence_ref.as_deref(), evidence),
        Command::Adjust { .. } => adjust(&mut cx, evidence),
    }
}

/// Why a command is malformed (the `malformed_command` verdict's reason).
#[derive(Debug, thiserror::Error)]
enum ShapeError {
    /// An id field is empty, too long, or holds whitespace or control characters.
    #[error("{0} must be 1..=256 bytes without whitespace or control characters")]
    BadId(&'static str),
    /// `UNKNOWN` with an actual cost.
    #[error("an UNKNOWN settlement carries no actualCost")]
    UnknownWithCost,
    /// `SUCCEEDED`/`FAILED` without one.
    #[error("a SUCCEEDED or FAILED settlement needs actualCost")]
    CostMissing,
    /// An empty or over-long stop reason.
    #[error("reason must be 1..={MAX_REASON} bytes of text")]
    BadReason,
    /// An adjust that changes nothing.
    #[error("adjust needs at least one --set KIND=VALUE or --resume")]
    EmptyAdjust,
}

/// (2) shape checks that do not need the ledger.
fn check_shape(cmd: &Command) -> Result<(), ShapeError> {
    let id_ok = |field: &'static str, v: &str| {
        if valid_text_id(v) {
            Ok(())
        } else {
            Err(ShapeError::BadId(field))
        }
    };
    match cmd {
        Command::Init { .. } => Ok(()),
        Command::Reserve {
            attempt_id,
            operation_id,
            run_id,
            ..
        } => {
            id_ok("attemptId", attempt_id)?;
            id_ok("operationId", operation_id)?;
            if let Some(r) = run_id {
                id_ok("runId", r)?;
            }
            Ok(())
        }
        Command::Dispatch { attempt_id } | Command::Release { attempt_id, .. } => {
            id_ok("attemptId", attempt_id)
        }
        Command::Reconcile { attempt_id, .. } => id_ok("attemptId", attempt_id),
        Command::Settle {
            attempt_id,
            outcome,
            actual_cost,
            ..
        } => {
            id_ok("attemptId", attempt_id)?;
            match (outcome, actual_cost) {
                (Outcome::Unknown, Some(_)) => Err(ShapeError::UnknownWithCost),
                (Outcome::Succeeded | Outcome::Failed, None) => Err(ShapeError::CostMissing),
                _ => Ok(()),
            }
        }
        Command::Stop { reason, .. } => {
            if reason.trim().is_empty() || reason.len() > MAX_REASON {
                Err(ShapeError::BadReason)
            } else {
                Ok(())
            }
        }
        Command::Adjust { limits, resume, .. } => {
            if limits.is_empty() && !resume {
                Err(ShapeError::EmptyAdjust)
            } else {
                Ok(())
            }
        }
    }
}

fn init(
    conn: &dyn Db,
    req: &Request,
    actor: &ActorFacts,
    now: u128,
    meta: Option<Meta>,
    raw: &[u8],
) -> Result<Verdict, Error> {
    if meta.is_none() && conn.table_exists("limits_events")? {
        let n = query_opt(conn, "SELECT count(*) FROM limits_events", &[])?
            .map(|r| r.int(0))
            .transpose()?
            .unwrap_or(0);
        if n > 0 {
            return Err(Error::corrupt(format!(
                "integrity: limits_meta has no row but limits_events holds {n} event(s) (a deleted or truncated ledger head); init was refused and nothing was written (run `world verify --ledger L`)"
            )));
        }
    }
    if let Some(m) = meta {
        return Err(
            Verdict::new(Code::LedgerAlreadyInitialized, u128::from(m.revision))
                .because(format!("ledger {:?} already has a config", m.ledger_id))
                .into(),
        );
    }
    let config =
        Config::parse(raw).map_err(|e| Verdict::new(Code::ConfigInvalid, 0).because(e.0))?;
    if !actor.allowed || actor.actor_id.is_empty() {
        return Err(Verdict::new(Code::ActorUnauthenticated, 0).into());
    }
    if actor.actor_kind == ActorKind::Agent {
        return Err(Verdict::new(Code::ActorKindNotPermitted, 0)
            .because("init needs an attended HUMAN or the HOST with --yes")
            .into());
    }
    if let Some(want) = req.expected_revision {
        if want != 0 {
            return Err(Verdict::new(Code::RevisionMismatch, 0)
                .because(format!("expected revision {want}, ledger is at 0"))
                .into());
        }
    }
    super::schema::create_db(conn)?;
    conn.exec(
        "INSERT INTO limits_meta (id, profile, ledger_id, unit, config_ref, config_json, revision, last_now_ms, head_event_hash) \
         VALUES (1, ?1, ?2, ?3, ?4, ?5, 0, ?6, '')",
        &vals![
            config::PROFILE,
            config.ledger_id,
            config.unit,
            config.config_ref.to_string(),
            config.canonical,
            now.to_string()
        ],
    )?;
    insert_scopes(conn, &config.scopes, now)?;
    let mut cx = Ctx {
        tx: conn,
        req,
        actor,
        now,
        meta: Meta {
            ledger_id: config.ledger_id.clone(),
            revision: 0,
            last_now: now,
            head: String::new(),
        },
    };
    let details = serde_json::json!({
        "configRef": config.config_ref.to_string(),
        "ledgerId": config.ledger_id,
        "scopes": config.scopes.len(),
        "unattended": actor.actor_kind == ActorKind::Host,
    });
    cx.commit(Verdict::new(Code::Ok, 0), details)
}

/// Insert the scopes parents-first, with closure rows (self at distance 0).
fn insert_scopes(conn: &dyn Db, scopes: &[ScopeConfig], now: u128) -> Result<(), Error> {
    let index: HashMap<&str, usize> = scopes
        .iter()
        .enumerate()
        .map(|(i, s)| (s.scope_id.as_str(), i))
        .collect();
    let chain_of = |i: usize| -> Vec<usize> {
        let mut out = vec![i];
        let mut cur = scopes
            .get(i)
            .and_then(|s| s.parent_id.as_deref())
            .and_then(|p| index.get(p).copied());
        while let Some(p) = cur {
            if out.len() > config::MAX_DEPTH {
                break;
            }
            out.push(p);
            cur = scopes
                .get(p)
                .and_then(|s| s.parent_id.as_deref())
                .and_then(|q| index.get(q).copied());
        }
        out
    };
    let mut order: Vec<(usize, Vec<usize>)> = (0..scopes.len()).map(|i| (i, chain_of(i))).collect();
    order.sort_by_key(|(i, chain)| (chain.len(), *i));
    let ins_sql = "INSERT INTO limits_scopes (scope_id, ordinal, kind, parent_id, depends_on, bound_cost, bound_handoff, \
         bound_active_ms, bound_elapsed_ms, bound_attempts, started_at_ms, usage_ordinary, usage_handoff, \
         active_static, attempts) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, '0', '0', '0', '0')";
    let clo_sql =
        "INSERT INTO limits_closure (scope_id, ancestor_id, distance) VALUES (?1, ?2, ?3)";
    let text = |a: Option<Amount>| a.map(|v| v.to_string());
    for (i, chain) in &order {
        let Some(s) = scopes.get(*i) else { continue };
        let ordinal = i64::try_from(*i).map_err(|_| Error::corrupt("too many scopes"))?;
        conn.exec(
            ins_sql,
            &vals![
                s.scope_id,
                ordinal,
                s.kind.as_str(),
                s.parent_id,
                serde_json::to_string(&s.depends_on).map_err(|e| Error::corrupt(e.to_string()))?,
                text(s.limits.cost),
                text(s.limits.handoff),
                text(s.limits.active_ms),
                text(s.limits.elapsed_ms),
                text(s.limits.attempts),
                now.to_string(),
            ],
        )?;
        for (distance, a) in chain.iter().enumerate() {
            let Some(anc) = scopes.get(*a) else { continue };
            conn.exec(clo_sql, &vals![s.scope_id, anc.scope_id, distance as i64])?;
        }
    }
    Ok(())
}

/// Elapsed ms of a chain element at `now`: min(now, earliest stop on its chain) − start.
fn elapsed_at(chain: &Chain, i: usize, now: u128) -> u128 {
    let freeze = chain.rows.iter().skip(i).filter_map(|r| r.stopped_at).min();
    let end = freeze.map_or(now, |f| f.min(now));
    chain
        .rows
        .get(i)
        .map_or(0, |r| end.saturating_sub(r.started_at))
}
