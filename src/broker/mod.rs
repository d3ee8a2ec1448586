//! The effect broker: decide, record, debit and run every planned effect
//! (authority-and-broker.md §6–§10, seed 000). It has no route and no verb of its own; the
//! coordinator sends each planned effect here.
//!
//! Live pipeline per request:
//! 1. One `BEGIN IMMEDIATE` transaction seeds the grants from the episode's spend (journal),
//!    decides, and either writes the denied record (request stored too; no intent, no debit)
//!    or stores the request and appends the effect intent (the debit is the intent).
//! 2. The handler runs outside any transaction (the writer lock is still held).
//! 3. A second transaction stores the result, writes the record, then the outcome
//!    (`succeeded`/`failed`). A handler that cannot tell leaves the intent without an
//!    outcome: indeterminate, never retried.

pub mod handlers;
pub mod listing;
pub mod pairing;
pub mod spend;

use std::collections::HashMap;
use std::time::Instant;

use rusqlite::Connection;
use serde::Serialize;

use crate::authority::grants::{decide, Decision, Grant};
use crate::store::journal::{self, EffectIntent, Kind};
use crate::store::records::{EffectRecord, EFFECT_RECORD, EFFECT_REQUEST, EFFECT_RESULT};
use crate::store::{object_in, put_object, Error as StoreError, Object, Store};

use handlers::{HandlerContext, HandlerOutcome, HandlerRegistry};

/// Provenance of requests, records and results.
pub const PROVENANCE: &str = "host/broker";
/// `world/effect-indeterminate/v1`: a handler's "cannot tell" diagnostic (new in world; not journaled).
pub const EFFECT_INDETERMINATE: &str = "world/effect-indeterminate/v1";

/// `world/effect-failure/v1`: why an allowed effect's handler failed (new in world). The
/// record law keeps a failed record's `resultRef` empty (§7 step 7a), so the message lives in
/// this object, written in the record's transaction: `{"recordRef","intentId","message"}`
/// (docs/DECISIONS.md H-17).
pub const EFFECT_FAILURE: &str = "world/effect-failure/v1";

/// The failure message stored for the failed effect record `record_ref`, if any.
///
/// # Errors
/// Store errors; an undecodable failure object is [`StoreError::Corrupt`].
pub fn failure_message(conn: &Connection, record_ref: &str) -> Result<Option<String>, StoreError> {
    for (_, p) in crate::store::payloads_by_semantic_id(conn, EFFECT_FAILURE)? {
        let v: serde_json::Value = serde_json::from_slice(&p).map_err(|e| StoreError::Corrupt {
            what: "effect failure".into(),
            detail: e.to_string(),
        })?;
        if v.get("recordRef").and_then(|x| x.as_str()) == Some(record_ref) {
            return Ok(v.get("message").and_then(|x| x.as_str()).map(str::to_owned));
        }
    }
    Ok(None)
}

/// One planned effect request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// Effect name.
    pub effect: String,
    /// Scope.
    pub scope: String,
    /// Cost in budget units (int64).
    pub cost: i64,
    /// The payload: canonical TR-CJSON-1 bytes of a JSON object.
    pub payload: Vec<u8>,
}

pub use crate::store::records::request_bytes;

/// Errors of the broker itself (a denial or a failed handler is an outcome, not an error).
#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    /// R8: no handler for the effect in this episode; nothing was written.
    #[error("transition declares an effect this daemon has no handler for (effect {0})")]
    NoHandler(String),
    /// The record was written but the outcome was not (`OutcomeWriteError`): indeterminate.
    #[error("effect record {record} written but its outcome was not: {cause}")]
    OutcomeWrite {
        /// The record ref.
        record: String,
        /// Why.
        cause: String,
    },
    /// The ordinal space of the episode is exhausted.
    #[error("effect ordinal space of episode {0} is exhausted")]
    OrdinalExhausted(String),
    /// The limits ledger refused the paired reservation: the whole intent transaction rolled
    /// back (no intent, no debit, no record) and nothing ran (limits.md §9).
    #[error("{}", .0.human())]
    LimitsRejected(Box<crate::limits::Verdict>),
    /// The limits ledger failed (not a rejection).
    #[error("{0}")]
    Limits(String),
    /// The paired mission refused the admission: the whole intent transaction rolled back and
    /// nothing ran (missions.md §7).
    #[error("{}", .0.human())]
    MissionRejected(Box<crate::mission::Rejection>),
    /// The paired mission store failed (not a rejection).
    #[error("{0}")]
    Mission(String),
    /// A standalone ledger stayed locked by another process for the whole lock wait; nothing
    /// of this effect was applied there (exit 6).
    #[error("{0}")]
    LedgerBusy(String),
    /// The paired limits ledger or mission refused to decide on rows it did not write (an
    /// edited usage or counter, a deleted or forged event, a dropped append-only trigger:
    /// issue 27 §3, DEC-LEDGER-1); nothing of this effect was applied there (exit 3).
    #[error("{0}")]
    LedgerIntegrity(String),
    /// The episode's spend could not be counted from its journal (an intent payload that does
    /// not decode or re-hash: issue 13 §3); nothing was written and no handler ran.
    #[error("the episode's spend cannot be counted: {0}")]
    SpendUnreadable(#[source] StoreError),
    /// The handler refused the effect inside the intent's transaction (an approval that does
    /// not authorize it, or one already consumed): nothing was journaled or spent.
    #[error("{0}")]
    Refused(String),
    /// Store failure (nothing of this step was committed).
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Pairing of an episode's effects with a limits-ledger scope in the store file (limits.md §9).
#[derive(Clone, Debug)]
pub struct LimitsPairing {
    /// The ledger scope every effect of the episode is charged to.
    pub scope: String,
    /// The ledger clock at the start of the call, Unix milliseconds.
    pub now_ms: u128,
    /// The clock settlements read (never earlier than `now_ms`; a fixed clock answers
    /// `now_ms` itself).
    pub clock: crate::clock::Clock,
    /// A standalone ledger (file or PostgreSQL) instead of the tables in the store file: the
    /// steps run as separate ledger transactions (`limits::pairing`, issue 18).
    pub standalone: Option<std::rc::Rc<crate::limits::pairing::Standalone>>,
}

/// Pairing of an episode's effects with a finite-v1 mission in the store file (missions.md §7):
/// each allowed effect is admitted (capability = effect, resource = scope, amount = cost,
/// attemptId = operationId = the effect intent id) and dispatched in its intent's transaction,
/// and settled with its outcome (an indeterminate effect settles UNKNOWN).
#[derive(Clone, Debug)]
pub struct MissionPairing {
    /// The mission.
    pub mission_id: String,
    /// The run effects are admitted in.
    pub run_id: String,
    /// The grant effects are admitted under.
    pub grant_id: String,
    /// The grant's subject (who acts).
    pub subject: String,
    /// The mission clock at the start of the call, ms.
    pub now_ms: u128,
    /// The clock settlements read (never earlier than `now_ms`; a fixed clock answers
    /// `now_ms` itself).
    pub clock: crate::clock::Clock,
    /// The mission is in a standalone ledger (file or PostgreSQL), not the store file: admit
    /// and dispatch run as ledger transactions before the intent commits, settle after the
    /// outcome is journaled (`mission::pairing`, issue 18).
    pub standalone: Option<std::rc::Rc<crate::mission::pairing::Standalone>>,
}

impl LimitsPairing {
    /// A pairing with the standalone ledger `s` that is only asked to reconcile this store's
    /// attempts from its journal ([`pairing::Pairing::reconcile_from_store`], `world limits
    /// reconcile --from-store`): bound to no scope, it holds nothing.
    pub fn reconciling(s: crate::limits::pairing::Standalone) -> LimitsPairing {
        LimitsPairing {
            scope: String::new(),
            now_ms: 0,
            clock: crate::clock::Clock::System,
            standalone: Some(std::rc::Rc::new(s)),
        }
    }
}

impl MissionPairing {
    /// A pairing with the mission of the standalone ledger `s` that is only asked to
    /// reconcile this store's attempts from its journal
    /// ([`pairing::Pairing::reconcile_from_store`], `world mission reconcile --from-store`):
    /// bound to no run or grant, it admits nothing.
    pub fn reconciling(s: crate::mission::pairing::Standalone) -> MissionPairing {
        MissionPairing {
            mission_id: s.mission_id.clone(),
            run_id: String::new(),
            grant_id: String::new(),
            subject: String::new(),
            now_ms: 0,
            clock: crate::clock::Clock::System,
            standalone: Some(std::rc::Rc::new(s)),
        }
    }

    fn settle_ms(&self) -> u128 {
        self.now_ms.max(self.clock.now_ms())
    }
}

/// How one effect ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Allowed and the handler succeeded.
    Ok,
    /// Allowed and the handler failed (the unit stays spent).
    Failed,
    /// Denied by the decision law (not spend).
    Denied,
    /// Allowed, but the handler could not tell what happened: intent without outcome.
    Indeterminate,
}

/// The result of executing one request.
#[derive(Clone, Debug)]
pub struct Executed {
    /// Status.
    pub status: Status,
    /// The effect record ref (none for indeterminate).
    pub record: Option<String>,
    /// The record itself (none for indeterminate).
    pub record_body: Option<EffectRecord>,
    /// Handler output bytes on success (raw, as stored in the result object).
    pub output: Option<Vec<u8>>,
    /// The denial label, handler failure message or indeterminate diagnostic.
    pub message: Option<String>,
    /// The effect intent id (`effect:<ep>:<n>`) when allowed.
    pub intent_id: Option<String>,
    /// The decision.
    pub decision: Decision,
}

/// Σ cost of every `world/effect-intent/v1` of `episode` (exact match), grouped by
/// `(effect, scope)`; every intent counts whatever its outcome (§8). Each sum is clamped to
/// int64.
///
/// Incremental: only journal rows appended since this process last looked are decoded
/// ([`spend::tally`]); the result equals [`spend::spend_full_scan`].
///
/// # Errors
/// Store errors; an undecodable intent payload in the episode's id range, or one missing
/// effect, scope or an int64 cost, is [`StoreError::Corrupt`].
pub fn spend(
    conn: &Connection,
    episode: &str,
) -> Result<HashMap<(String, String), i64>, StoreError> {
    spend::tally(conn, episode)?.spend_map()
}

/// Seed each grant with `max(budget − spend[(effect, scope)], 0)`.
pub fn seed(grants: &[Grant], spend: &HashMap<(String, String), i64>) -> Vec<Grant> {
    grants
        .iter()
        .map(|g| {
            let spent = spend
                .get(&(g.effect.clone(), g.scope.clone()))
                .copied()
                .unwrap_or(0);
            Grant {
                budget: g.budget.saturating_sub(spent).max(0),
                ..g.clone()
            }
        })
        .collect()
}

/// The next ordinal by [`spend::ordinal_after`] (§7.4): 0 for an episode without intents,
/// else 1 + the largest all-digit suffix among `effect:<ep>:` intent ids; `None` when the
/// ordinal space is exhausted. Incremental like [`spend`]; equals
/// [`spend::next_ordinal_full_scan`].
///
/// # Errors
/// Store errors (intent payloads are not read).
pub fn next_ordinal(conn: &Connection, episode: &str) -> Result<Option<i64>, StoreError> {
    Ok(spend::tally(conn, episode)?.next_ordinal())
}

/// Decide without writing anything (`world broker check`): seeds from the journal and applies
/// the decision law.
pub fn dry_run(
    conn: &Connection,
    episode: &str,
    grants: &[Grant],
    effect: &str,
    scope: &str,
    cost: i64,
    now: i64,
) -> Result<(Decision, Vec<Grant>), StoreError> {
    let seeded = seed(grants, &spend(conn, episode)?);
    Ok((decide(&seeded, effect, scope, cost, now), seeded))
}

/// The broker for one episode: minted grants, logical time, handlers.
pub struct Broker<'a> {
    /// Episode id.
    pub episode: &'a str,
    /// The session's grants as minted (seeded from spend per request).
    pub grants: &'a [Grant],
    /// Logical time, Unix seconds (shared with the commit intent).
    pub now: i64,
    /// Handlers for this episode.
    pub handlers: &'a HandlerRegistry,
    /// Handler context.
    pub ctx: &'a HandlerContext,
    /// The limits-ledger scope this episode is bound to, if any.
    pub limits: Option<LimitsPairing>,
    /// The mission this episode is bound to, if any (admitted after the ledger reserves).
    pub mission: Option<MissionPairing>,
    /// An object written in the same transaction as each allowed effect's intent (the
    /// coordinator's started marker, so a resent invocation id never runs a handler twice).
    pub with_intent: Option<Object>,
    /// The store-id object this invocation wrote because the store was never paired with a
    /// standalone ledger (`store::markers::ensure_store_id_new`, before any ledger step, so a
    /// crash never strands an attempt under an id the store lacks): removed again when the
    /// ledger cleanly refuses the invocation's first effect, so a refusal leaves the store
    /// unchanged (DEC-MIS-19).
    pub new_store_id: Option<Object>,
    /// Set once an effect intent of this invocation committed (the store id is then in use).
    pub intent_committed: std::cell::Cell<bool>,
}

impl Broker<'_> {
    /// After the intent's transaction was dropped with `e`: when the ledger cleanly refused
    /// the first effect of an invocation that wrote the store's id, remove the id again (no
    /// ledger and no intent names it). Anything else — a ledger failure mid-step, a release
    /// that failed — keeps it: a ledger may hold an attempt naming it, for `reconcile
    /// --from-store` to find.
    fn forget_store_id_after(&self, store: &mut Store, e: &BrokerError) {
        let Some(obj) = &self.new_store_id else {
            return;
        };
        if self.intent_committed.get() {
            return;
        }
        let release_failed = self.pairings().iter().any(|p| p.release_failed());
        // A refusal, or a lock wait that timed out (nothing applied; a later step's attempt was
        // released again): no ledger names the id unless a release failed.
        let clean = match e {
            BrokerError::MissionRejected(r) => r.detail("unreleasedAttempt").is_none(),
            BrokerError::LimitsRejected(_)
            | BrokerError::LedgerBusy(_)
            | BrokerError::LedgerIntegrity(_) => true,
            _ => false,
        };
        if !clean || release_failed {
            return;
        }
        if let Err(e) = crate::store::markers::forget_store_id(store, obj) {
            eprintln!("world: warning: the store-id object {} written for this refused call was not removed ({e}); it is harmless", obj.meta.hash);
        }
    }

    /// Execute one request through the live pipeline (module docs). `deadline` bounds the handler.
    ///
    /// The steps, in order: decide (a denial is recorded and returned, [`Self::record_denial`]);
    /// journal the intent ([`Self::journal_intent`]) and run the pairing loop
    /// (`pairing::hold_and_dispatch`) in one transaction; run the handler; write the outcome
    /// with the in-store settlements ([`Self::write_outcome`], or
    /// [`Self::keep_indeterminate`]); settle standalone ledgers (`pairing::Held::settle_after`).
    pub fn execute(
        &self,
        store: &mut Store,
        req: &Request,
        deadline: Instant,
    ) -> Result<Executed, BrokerError> {
        let request = Object::new(
            EFFECT_REQUEST,
            PROVENANCE,
            request_bytes(&req.effect, &req.scope, req.cost, self.now, &req.payload),
        );
        // Transaction 1: decide, and record a denial or journal the intent.
        let tx = store.immediate()?;
        // The transaction has not written yet: what it sees is committed, so the tally may be
        // cached. The journal cannot change until this transaction appends the intent below.
        let tally = spend::tally_at_transaction_start(&tx, self.episode)?;
        let spent = tally.spend_map().map_err(BrokerError::SpendUnreadable)?;
        let seeded = seed(self.grants, &spent);
        let decision = decide(&seeded, &req.effect, &req.scope, req.cost, self.now);
        if let Some(denial) = decision.denial {
            return record_denial(tx, req, &request, decision, denial.label());
        }
        let Some(handler) = self.handlers.handler_for(&req.effect) else {
            return Err(BrokerError::NoHandler(req.effect.clone()));
        };
        let intent_id = self.journal_intent(&tx, req, &request, &tally)?;
        // The payload as the handler sees it (a JSON object's text; anything else is null).
        let payload: serde_json::Value =
            serde_json::from_slice(&req.payload).unwrap_or(serde_json::Value::Null);
        let intent_ref = crate::broker::handlers::Intent {
            id: &intent_id,
            now: self.now,
            cost: req.cost,
        };
        // The handler's part of the intent's transaction (an approval claim): a refusal
        // rolls the intent back.
        if let Err(why) =
            handler.bind_intent(&tx, &intent_ref, &request.meta.hash, &req.scope, &payload)
        {
            drop(tx);
            return Err(BrokerError::Refused(why));
        }
        // The pairing loop, before the intent commits (a failure drops the transaction). An
        // attempt dispatched in a standalone ledger names the store's id, whatever happens to
        // this transaction after it.
        let effect = pairing::Effect {
            req,
            intent_id: &intent_id,
            deadline,
        };
        let dispatched_standalone = std::cell::Cell::new(false);
        let held =
            match pairing::hold_and_dispatch(self.pairings(), &tx, &effect, &dispatched_standalone)
            {
                Ok(h) => h,
                Err(e) => {
                    drop(tx);
                    if !dispatched_standalone.get() {
                        self.forget_store_id_after(store, &e);
                    }
                    return Err(e);
                }
            };
        tx.commit().map_err(StoreError::from)?;
        self.intent_committed.set(true);

        // The handler runs with the unit already spent.
        let outcome = handler.execute_intent(self.ctx, &intent_ref, &req.scope, &payload, deadline);

        let (failed, output, message) = match outcome {
            HandlerOutcome::Succeeded(bytes) => (false, Some(bytes), None),
            HandlerOutcome::Failed(msg) => (true, None, Some(msg)),
            HandlerOutcome::Indeterminate(msg) => {
                self.keep_indeterminate(store, &effect, &msg, &held);
                return Ok(Executed {
                    status: Status::Indeterminate,
                    record: None,
                    record_body: None,
                    output: None,
                    message: Some(msg),
                    intent_id: Some(intent_id),
                    decision,
                });
            }
        };
        // Transaction 2: result, record, then outcome.
        let result = output
            .as_ref()
            .map(|b| Object::new(EFFECT_RESULT, PROVENANCE, b.clone()));
        let record = EffectRecord {
            effect: req.effect.clone(),
            scope: req.scope.clone(),
            cost: req.cost,
            budget_before: decision.budget_before,
            budget_after: decision.budget_after,
            allowed: true,
            failed,
            denial: String::new(),
            request_ref: request.meta.hash.clone(),
            result_ref: result
                .as_ref()
                .map(|r| r.meta.hash.clone())
                .unwrap_or_default(),
        };
        let rec = Object::new(EFFECT_RECORD, PROVENANCE, record.encode());
        let outcome = Outcome {
            intent_id: &intent_id,
            failed,
            message: message.as_deref(),
            result: result.as_ref(),
            record: &rec,
        };
        if let Err(e) = self.write_outcome(store, &effect, &outcome, &held) {
            return Err(BrokerError::OutcomeWrite {
                record: rec.meta.hash,
                cause: e.to_string(),
            });
        }
        let settlement = if failed {
            pairing::Settlement::Failed
        } else {
            pairing::Settlement::Succeeded
        };
        held.settle_after(&effect, settlement);
        Ok(Executed {
            status: if failed { Status::Failed } else { Status::Ok },
            record: Some(rec.meta.hash),
            record_body: Some(record),
            output,
            message,
            intent_id: Some(intent_id),
            decision,
        })
    }

    /// Store the request and journal the effect intent (`effect:<episode>:<ordinal>`, the next
    /// ordinal of the episode's `tally`) in `tx`; returns the intent id.
    fn journal_intent(
        &self,
        tx: &rusqlite::Transaction<'_>,
        req: &Request,
        request: &Object,
        tally: &spend::Tally,
    ) -> Result<String, BrokerError> {
        let ordinal = tally
            .next_ordinal()
            .ok_or_else(|| BrokerError::OrdinalExhausted(self.episode.to_string()))?;
        let intent_id = format!("effect:{}:{ordinal}", self.episode);
        let intent = EffectIntent {
            invocation_id: intent_id.clone(),
            episode_id: self.episode.to_string(),
            ordinal,
            effect: req.effect.clone(),
            scope: req.scope.clone(),
            cost: req.cost,
            request_ref: request.meta.hash.clone(),
            logical_time: self.now,
        };
        // The request (and the coordinator's started marker), then the intent: one call.
        let mut objects = vec![request];
        objects.extend(self.with_intent.as_ref());
        journal::append_after(
            tx,
            &objects,
            Kind::Intent,
            &intent_id,
            journal::EFFECT_INTENT,
            intent.payload(),
        )?;
        Ok(intent_id)
    }

    /// The invocation's pairings, in hold order: the limits ledger, then the mission (the
    /// seed's order: the ledger reserves first, then the mission admits).
    fn pairings(&self) -> Vec<&dyn pairing::Pairing> {
        let mut v: Vec<&dyn pairing::Pairing> = Vec::with_capacity(2);
        if let Some(p) = &self.limits {
            v.push(p);
        }
        if let Some(m) = &self.mission {
            v.push(m);
        }
        v
    }

    /// A handler that ended indeterminate: keep its diagnostic as an unjournaled object (best
    /// effort; the intent stays open) and settle every pairing UNKNOWN (a mission's full
    /// reservation stays held; a limits attempt stays DISPATCHED).
    fn keep_indeterminate(
        &self,
        store: &mut Store,
        e: &pairing::Effect<'_>,
        msg: &str,
        held: &pairing::Held<'_>,
    ) {
        use pairing::Settlement::Unknown;
        // Best effort: keep the diagnostic as an unjournaled object; the intent stays open.
        if let Ok(tx) = store.immediate() {
            let diag = crate::encoding::gojson::Obj::new()
                .str("invocationId", e.intent_id)
                .str("message", msg)
                .finish();
            let settled = held.settle_in(&tx, e, Unknown).is_ok();
            if settled
                && put_object(&tx, &Object::new(EFFECT_INDETERMINATE, PROVENANCE, diag)).is_ok()
            {
                let _ = tx.commit();
            }
        }
        held.settle_after(e, Unknown);
    }

    /// Transaction 2 of an allowed effect: its result, record (and failure note), the outcome
    /// in the journal, and the settlements of the pairings in the store file.
    fn write_outcome(
        &self,
        store: &mut Store,
        e: &pairing::Effect<'_>,
        o: &Outcome<'_>,
        held: &pairing::Held<'_>,
    ) -> Result<(), StoreError> {
        let (intent_id, failed, result, rec) = (o.intent_id, o.failed, o.result, o.record);
        let note = match (failed, o.message) {
            (true, Some(msg)) => Some(Object::new(
                EFFECT_FAILURE,
                PROVENANCE,
                crate::encoding::gojson::Obj::new()
                    .str("recordRef", &rec.meta.hash)
                    .str("intentId", intent_id)
                    .str("message", msg)
                    .finish(),
            )),
            _ => None,
        };
        // The result, the record and the failure note, then the outcome: one call.
        let mut objects: Vec<&Object> = result.into_iter().collect();
        objects.push(rec);
        objects.extend(note.as_ref());
        let tx = journal::begin_with(
            store,
            &objects,
            Kind::Outcome,
            intent_id,
            journal::EFFECT_OUTCOME,
            journal::effect_outcome_payload(intent_id, !failed, &rec.meta.hash, self.now),
        )?;
        let settlement = if failed {
            pairing::Settlement::Failed
        } else {
            pairing::Settlement::Succeeded
        };
        held.settle_in(&tx, e, settlement)
            .map_err(|(name, x)| StoreError::Corrupt {
                what: format!("{name} settlement"),
                detail: x.to_string(),
            })?;
        tx.commit()?;
        Ok(())
    }
}

/// What transaction 2 writes for an allowed effect.
struct Outcome<'a> {
    intent_id: &'a str,
    failed: bool,
    message: Option<&'a str>,
    result: Option<&'a Object>,
    record: &'a Object,
}

/// Record a denied request: its request and effect record, no intent (transaction 1 commits).
fn record_denial(
    tx: rusqlite::Transaction<'_>,
    req: &Request,
    request: &Object,
    decision: Decision,
    label: &str,
) -> Result<Executed, BrokerError> {
    put_object(&tx, request)?;
    let record = EffectRecord {
        effect: req.effect.clone(),
        scope: req.scope.clone(),
        cost: req.cost,
        budget_before: decision.budget_before,
        budget_after: decision.budget_before,
        allowed: false,
        failed: false,
        denial: label.to_string(),
        request_ref: request.meta.hash.clone(),
        result_ref: String::new(),
    };
    let rec = Object::new(EFFECT_RECORD, PROVENANCE, record.encode());
    put_object(&tx, &rec)?;
    tx.commit().map_err(StoreError::from)?;
    Ok(Executed {
        status: Status::Denied,
        record: Some(rec.meta.hash),
        record_body: Some(record),
        output: None,
        message: Some(label.to_string()),
        intent_id: None,
        decision,
    })
}

/// [`failure_message`] on the open store (no transaction).
///
/// # Errors
/// As [`failure_message`].
pub fn failure_message_stored(
    store: &Store,
    record_ref: &str,
) -> Result<Option<String>, StoreError> {
    failure_message(store.conn(), record_ref)
}

/// [`resolve_record`] on the open store (no transaction): `(record, request, result)`.
///
/// # Errors
/// As [`resolve_record`].
pub fn resolve_record_stored(
    store: &Store,
    record_ref: &str,
) -> Result<Option<(EffectRecord, Object, Option<Object>)>, StoreError> {
    resolve_record(store.conn(), record_ref)
}

/// Resolve an effect record down to its request and result objects.
pub fn resolve_record(
    conn: &Connection,
    record_ref: &str,
) -> Result<Option<(EffectRecord, Object, Option<Object>)>, StoreError> {
    let Some(obj) = object_in(conn, record_ref)? else {
        return Ok(None);
    };
    if obj.meta.semantic_id != EFFECT_RECORD {
        return Err(StoreError::Corrupt {
            what: "effect record".into(),
            detail: format!("{record_ref} is a {}", obj.meta.semantic_id),
        });
    }
    if !obj.verifies() {
        return Err(StoreError::Corrupt {
            what: "effect record".into(),
            detail: format!("{record_ref} does not re-hash (edited)"),
        });
    }
    let rec = EffectRecord::decode(&obj.payload).map_err(|e| StoreError::Corrupt {
        what: "effect record".into(),
        detail: e.to_string(),
    })?;
    let request = object_in(conn, &rec.request_ref)?.ok_or_else(|| StoreError::Corrupt {
        what: "effect record".into(),
        detail: format!("request {} is missing", rec.request_ref),
    })?;
    let result = if rec.result_ref.is_empty() {
        None
    } else {
        Some(
            object_in(conn, &rec.result_ref)?.ok_or_else(|| StoreError::Corrupt {
                what: "effect record".into(),
                detail: format!("result {} is missing", rec.result_ref),
            })?,
        )
    };
    Ok(Some((rec, request, result)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::HashRef;

    #[test]
    fn request_bytes_vector() {
        let b = request_bytes(
            "Workspace.Read",
            "worktree",
            1,
            1_700_000_000,
            br#"{"op":"read","path":"src/main.ail"}"#,
        );
        assert_eq!(
            b,
            br#"14:Workspace.Read8:worktree1:1700000000:{"op":"read","path":"src/main.ail"}"#
        );
        assert_eq!(
            HashRef::of(&b).to_string(),
            "sha256:4de81a9d319037efded84dd53dd9799c4f0f2e30f27a54bb80e6f50a30b99628"
        );
    }
}
