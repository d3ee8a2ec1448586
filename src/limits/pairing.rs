//! Pairing World effects with a **standalone** ledger (a file or PostgreSQL), limits.md §9 and
//! seed 002, issue 18 item 3.
//!
//! With the ledger in the store file the broker reserves in its intent's transaction. A
//! standalone ledger shares no atomic commit with the store, so the steps run in this order,
//! each its own ledger transaction (DEC-LIM-20):
//!
//! 1. inside the store transaction that decides the effect (before its intent is journaled):
//!    `reserve` then `dispatch`; a rejection or a ledger failure rolls the store transaction
//!    back — no intent, no debit, nothing ran;
//! 2. the intent commits; the handler runs;
//! 3. after the outcome is journaled: `settle` (the broker's effect-outcome settlement).
//!
//! A crash between the two databases keeps the exposure: a RESERVED attempt without an intent
//! in the store never reached a handler and [`reconcile_from_store`] releases it; a DISPATCHED
//! attempt whose outcome is in the store's journal is settled from it; a DISPATCHED attempt
//! without an outcome is never refunded because a process restarted — a human reconciles it.
//!
//! Attempts are named `<storeId>/<effect intent id>/<16 hex>` — unique per **attempt**, not per
//! effect ordinal (DEC-LIM-22): a crash after the ledger reserve but before the store commits
//! its intent leaves that ordinal free, and the next effect of the episode reuses it with a new
//! attempt id. The intent's transaction also stores an attempt marker object
//! ([`crate::store::markers::LIMITS_ATTEMPT_SEMANTIC_ID`]) naming the attempt and its intent, so [`reconcile_from_store`]
//! tells an attempt whose intent reached the store from one whose ordinal was reused by a later
//! attempt. Attempt ids of stores paired before (`<storeId>/<effect intent id>`) stay readable.
//! `operationId` is the invocation id and `runId` the store id, so `world limits report` shows
//! the store and invocation every outstanding attempt belongs to.

use super::{
    ActorFacts, ActorKind, Amount, Code, Command, Error, LedgerStore, NoEvidence, Outcome, Purpose,
    Request, Verdict,
};
use crate::ledger::paired::{Reconciled, ReconciledOf, StoreLink};
use crate::store::markers::AttemptMarker;
use rusqlite::Connection;

/// The ledger side of one invocation's pairing with a standalone ledger.
pub struct Standalone {
    /// The ledger.
    pub ledger: Box<dyn LedgerStore>,
    /// The store's id, and whether a release after a refusal failed (a RESERVED attempt was
    /// left, reported on stderr with `world limits reconcile --from-store`; the store id must
    /// then persist).
    pub link: StoreLink,
    /// The invocation the effects belong to (`cli:<ep>:<task>`; empty for a reconcile).
    pub invocation_id: String,
}

impl std::fmt::Debug for Standalone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Standalone")
            .field("ledger", &self.ledger.describe())
            .field("link", &self.link)
            .field("invocation_id", &self.invocation_id)
            .finish()
    }
}

/// A new attempt id for effect intent `intent_id` of store `store_id`:
/// `<storeId>/<intentId>/<16 hex random>` (DEC-LIM-22). Intent ids never contain `/` (the
/// episode grammar), so [`parse_attempt_id`] splits it back.
///
/// # Errors
/// A corrupt-storage error ([`Error::corrupt`]) when the system has no randomness to give.
pub fn new_attempt_id(store_id: &str, intent_id: &str) -> Result<String, Error> {
    let mut b = [0u8; 8];
    getrandom::getrandom(&mut b).map_err(|e| Error::corrupt(format!("attempt id: {e}")))?;
    Ok(format!("{store_id}/{intent_id}/{}", hex::encode(b)))
}

/// The effect intent an attempt of store `store_id` was made for, and whether the id is of
/// the per-attempt form (`true`: `<storeId>/<intentId>/<hex>`) or of the form stores paired
/// before DEC-LIM-22 wrote (`false`: `<storeId>/<intentId>`). `None`: another store's attempt.
pub fn parse_attempt_id<'a>(store_id: &str, attempt_id: &'a str) -> Option<(&'a str, bool)> {
    let rest = attempt_id.strip_prefix(store_id)?.strip_prefix('/')?;
    match rest.split_once('/') {
        Some((intent, nonce)) if !nonce.is_empty() => Some((intent, true)),
        Some(_) => None,
        None => Some((rest, false)),
    }
}

/// The store-side marker of `attempt_id` for effect intent `intent_id` (written in the
/// intent's transaction; `store::markers`).
pub fn attempt_marker<'a>(attempt_id: &'a str, intent_id: &'a str) -> AttemptMarker<'a> {
    AttemptMarker::Limits {
        attempt_id,
        intent_id,
    }
}

fn host(now_ms: u128) -> ActorFacts {
    ActorFacts::new(ActorKind::Host, "host:world", now_ms)
}

impl Standalone {
    fn step(&self, request_id: String, command: Command, now_ms: u128) -> Result<Verdict, Error> {
        let req = Request::new(request_id, command).on_system_clock(true);
        self.ledger
            .execute(&req, &host(now_ms), now_ms, &NoEvidence)
    }

    /// A new attempt id for effect intent `intent_id` of this store ([`new_attempt_id`]).
    ///
    /// # Errors
    /// As [`new_attempt_id`].
    pub fn new_attempt(&self, intent_id: &str) -> Result<String, Error> {
        new_attempt_id(&self.link.store_id, intent_id)
    }

    /// Reserve (ORDINARY, `cost`, `max_active_ms`) in `scope` and dispatch attempt `attempt`
    /// ([`Standalone::new_attempt`]) — before its intent (and [`attempt_marker`]) is journaled.
    ///
    /// # Errors
    /// [`Error::Rejected`] (nothing dispatched; a RESERVED attempt is released again when the
    /// rejection came from `dispatch`); storage errors (the attempt may be left RESERVED —
    /// [`reconcile_from_store`] releases it: no intent reached the store).
    pub fn reserve_and_dispatch(
        &self,
        attempt: &str,
        scope: &str,
        cost: u128,
        max_active_ms: u128,
        now_ms: u128,
    ) -> Result<(), Error> {
        self.reserve(attempt, scope, cost, max_active_ms, now_ms)?;
        self.dispatch_or_release(attempt, now_ms)
    }

    /// Reserve (ORDINARY, `cost`, `max_active_ms`) in `scope` for attempt `attempt`, not yet
    /// dispatched: a paired mission admits between this and [`Standalone::dispatch_or_release`]
    /// (the seed's order: the ledger reserves first, then the mission admits).
    ///
    /// # Errors
    /// [`Error::Rejected`] (nothing reserved); storage errors.
    pub fn reserve(
        &self,
        attempt: &str,
        scope: &str,
        cost: u128,
        max_active_ms: u128,
        now_ms: u128,
    ) -> Result<(), Error> {
        let attempt = attempt.to_string();
        self.step(
            format!("{attempt}:reserve"),
            paired_reserve(
                &attempt,
                &self.invocation_id,
                scope,
                Some(self.link.store_id.clone()),
                cost,
                max_active_ms,
            ),
            now_ms,
        )?;
        Ok(())
    }

    /// Dispatch the RESERVED attempt `attempt`; a rejection or a failed dispatch releases it
    /// (never dispatched; a release that fails is reported, [`Standalone::release_or_warn`]).
    ///
    /// # Errors
    /// [`Error::Rejected`] (released again); storage errors.
    pub fn dispatch_or_release(&self, attempt: &str, now_ms: u128) -> Result<(), Error> {
        let attempt = attempt.to_string();
        match self.step(
            format!("{attempt}:dispatch"),
            Command::Dispatch {
                attempt_id: attempt.clone(),
            },
            now_ms,
        ) {
            Ok(_) => Ok(()),
            Err(Error::Rejected(v)) => {
                // Never dispatched: give the reservation back before reporting the refusal.
                self.release_or_warn(&attempt, now_ms);
                Err(Error::Rejected(v))
            }
            Err(e) => {
                // The dispatch failed (a busy or lost ledger): never dispatched either.
                self.release_or_warn(&attempt, now_ms);
                Err(e)
            }
        }
    }

    /// [`Standalone::release`] after a refusal; a failure is never silent: a warning names the
    /// RESERVED attempt left and `world limits reconcile --from-store`, and
    /// the link's release-failed flag is set.
    pub fn release_or_warn(&self, attempt: &str, now_ms: u128) {
        if let Err(e) = self.release(attempt, now_ms) {
            self.link.set_release_failed();
            eprintln!(
                "world: warning: the limits ledger did not release {attempt} ({e}): no handler ran and nothing was written in the store, but its reservation is held until `world limits reconcile --from-store --ledger {}`",
                crate::ledger::location::location_arg(&self.ledger.describe())
            );
        }
    }

    /// Release the RESERVED, never dispatched attempt `attempt` (a paired mission refused it).
    ///
    /// # Errors
    /// Rejections and storage errors (the attempt then stays RESERVED until
    /// [`reconcile_from_store`] releases it: its intent never reached the store).
    pub fn release(&self, attempt: &str, now_ms: u128) -> Result<Verdict, Error> {
        self.step(
            format!("{attempt}:release"),
            Command::Release {
                attempt_id: attempt.to_string(),
                never_dispatched: true,
            },
            now_ms,
        )
    }

    /// Settle `attempt` after its intent's outcome was journaled.
    ///
    /// # Errors
    /// Storage errors and rejections; the attempt then stays DISPATCHED (exposure kept) until
    /// [`reconcile_from_store`].
    pub fn settle(
        &self,
        attempt: &str,
        failed: bool,
        cost: u128,
        now_ms: u128,
    ) -> Result<(), Error> {
        self.step(
            format!("{attempt}:settle"),
            settle_command(attempt, failed, cost),
            now_ms,
        )
        .map(|_| ())
    }
}

/// One HOST step in the ledger inside the store file, in the intent's or outcome's
/// transaction `tx` (it commits or rolls back with the store's own writes).
fn in_store_step(
    tx: &rusqlite::Transaction<'_>,
    request_id: String,
    command: Command,
    now_ms: u128,
) -> Result<Verdict, Error> {
    super::apply(
        tx,
        &Request::new(request_id, command),
        &host(now_ms),
        now_ms,
        &NoEvidence,
    )
}

/// The ledger in the store file: reserve (ORDINARY, paired, `cost`, `max_active_ms`) in
/// `scope` and dispatch the effect intent `intent_id` (attempt id = operation id = the intent
/// id), both in the intent's transaction `tx`, as the HOST — one call for the effect's hold
/// and dispatch (DEC-PAIRING2-2). A refusal of either step leaves `tx` to be dropped, which
/// undoes both.
///
/// # Errors
/// [`Error::Rejected`]; integrity refusals and storage errors.
pub fn reserve_and_dispatch_in(
    tx: &rusqlite::Transaction<'_>,
    intent_id: &str,
    scope: &str,
    cost: u128,
    max_active_ms: u128,
    now_ms: u128,
) -> Result<(), Error> {
    in_store_step(
        tx,
        format!("{intent_id}:reserve"),
        paired_reserve(intent_id, intent_id, scope, None, cost, max_active_ms),
        now_ms,
    )?;
    in_store_step(
        tx,
        format!("{intent_id}:dispatch"),
        Command::Dispatch {
            attempt_id: intent_id.to_string(),
        },
        now_ms,
    )?;
    Ok(())
}

/// The ledger in the store file: settle the effect intent `intent_id`'s attempt
/// SUCCEEDED/FAILED at `cost` in the outcome's transaction `tx`, as the HOST.
///
/// # Errors
/// [`Error::Rejected`]; integrity refusals and storage errors (the outcome's transaction must
/// then not commit).
pub fn settle_in(
    tx: &rusqlite::Transaction<'_>,
    intent_id: &str,
    failed: bool,
    cost: u128,
    now_ms: u128,
) -> Result<(), Error> {
    in_store_step(
        tx,
        format!("{intent_id}:settle"),
        settle_command(intent_id, failed, cost),
        now_ms,
    )
    .map(|_| ())
}

/// The ORDINARY, paired reservation of attempt `attempt` (operation `operation`, run `run`)
/// of `cost` in `scope` for at most `max_active_ms`.
fn paired_reserve(
    attempt: &str,
    operation: &str,
    scope: &str,
    run: Option<String>,
    cost: u128,
    max_active_ms: u128,
) -> Command {
    Command::Reserve {
        attempt_id: attempt.to_string(),
        operation_id: operation.to_string(),
        scope_id: scope.to_string(),
        run_id: run,
        purpose: Purpose::Ordinary,
        amount: Amount(cost),
        max_active_ms: Amount(max_active_ms),
        paired: true,
    }
}

fn settle_command(attempt: &str, failed: bool, cost: u128) -> Command {
    Command::Settle {
        attempt_id: attempt.to_string(),
        outcome: if failed {
            Outcome::Failed
        } else {
            Outcome::Succeeded
        },
        actual_cost: Some(Amount(cost)),
        effect_outcome: true,
    }
}

/// Settle or release every outstanding attempt of store `store_id` from the store's journal
/// evidence, as the HOST (issue 18 item 3). The caller holds the store's writer lock, so no
/// invocation of this store is in flight.
///
/// "The attempt's intent" is the one its marker ([`attempt_marker`]) names; an attempt without
/// a marker never reached the store, even when a later attempt reused its effect ordinal (an
/// attempt id of the old form owns a journaled intent no marker claims).
///
/// - RESERVED, no effect intent in the store: the handler never ran (dispatch precedes the
///   intent) → `release`;
/// - DISPATCHED, intent and outcome journaled → `settle` SUCCEEDED/FAILED at the reserved cost
///   (what the broker would have settled), evidence: the outcome's effect record;
/// - DISPATCHED or UNKNOWN without an outcome → kept: never refunded because a process
///   restarted; an attended `world limits reconcile --attempt A --actual X --evidence …`.
///
/// # Errors
/// Ledger and store errors (what was applied before stays applied: each step is idempotent).
pub fn reconcile_from_store(
    ledger: &dyn LedgerStore,
    store: &Connection,
    store_id: &str,
    now_ms: u128,
) -> Result<Vec<Reconciled>, Error> {
    let report = ledger.report(now_ms, None)?;
    let mut out = Vec::new();
    for a in report.outstanding {
        let Some((intent_id, per_attempt)) = parse_attempt_id(store_id, &a.attempt_id) else {
            continue;
        };
        let invocation = a.invocation.clone().unwrap_or_default();
        use crate::store::journal::ReceiptState;
        // Did this attempt's intent reach the store? A per-attempt id: its marker says so. An
        // id of the old form: the intent is journaled and no per-attempt marker claims it (a
        // later attempt may have reused the ordinal after a crash).
        let reached = if per_attempt {
            attempt_marker(&a.attempt_id, intent_id).is_stored(store)?
        } else {
            !crate::store::markers::limits_intent_has_marker(store, intent_id)?
        };
        let mut receipt = crate::store::journal::receipt(store, intent_id)
            .map_err(|e| Error::corrupt(format!("store journal for {intent_id}: {e}")))?;
        if !reached {
            receipt.state = ReceiptState::NotStarted;
        }
        let run = |cmd: Command, rid: String| -> Result<Verdict, Error> {
            let req = Request::new(rid, cmd).on_system_clock(true);
            ledger.execute(&req, &host(now_ms), now_ms, &NoEvidence)
        };
        let done = |action, state: &str, why: String| Reconciled {
            attempt_id: a.attempt_id.clone(),
            of: ReconciledOf::Invocation(invocation.clone()),
            action,
            state: state.to_string(),
            why,
        };
        match (a.state, receipt.state) {
            ("RESERVED", ReceiptState::NotStarted) => {
                run(
                    Command::Release {
                        attempt_id: a.attempt_id.clone(),
                        never_dispatched: true,
                    },
                    format!("{}:release", a.attempt_id),
                )?;
                out.push(done(
                    "released",
                    "RELEASED",
                    format!("the effect intent {intent_id} of this attempt never reached the store: the handler never ran"),
                ));
            }
            ("DISPATCHED", ReceiptState::Resolved) => {
                let failed = receipt.status.as_deref() == Some("failed");
                let v = run(
                    settle_command(&a.attempt_id, failed, a.amount.get()),
                    format!("{}:settle", a.attempt_id),
                );
                match v {
                    Ok(_) => out.push(done(
                        "settled",
                        "SETTLED",
                        format!(
                            "outcome {} in the store journal (record {})",
                            receipt.status.as_deref().unwrap_or("?"),
                            receipt.record_ref.as_deref().unwrap_or("?")
                        ),
                    )),
                    Err(Error::Rejected(v)) if v.code == Code::Exists => {}
                    Err(e) => return Err(e),
                }
            }
            (state, r) => out.push(done(
                "kept",
                state,
                match r {
                    ReceiptState::Indeterminate => format!(
                        "effect intent {intent_id} has no outcome: it may have happened; reconcile it attended with evidence"
                    ),
                    ReceiptState::NotStarted => format!(
                        "the effect intent {intent_id} of this attempt never reached the store (the process stopped before it committed), but the ledger recorded dispatch: reconcile it attended"
                    ),
                    ReceiptState::Resolved => format!(
                        "effect {intent_id} is resolved in the store while the attempt is {state}: reconcile it attended"
                    ),
                },
            )),
        }
    }
    Ok(out)
}

impl Standalone {
    /// [`reconcile_from_store`] of this store's attempts in this ledger (the pairing trait's
    /// `reconcile_from_store`, DEC-PAIRING2-1).
    ///
    /// # Errors
    /// As [`reconcile_from_store`].
    pub fn reconcile_from_store(
        &self,
        store: &Connection,
        now_ms: u128,
    ) -> Result<Vec<Reconciled>, Error> {
        reconcile_from_store(self.ledger.as_ref(), store, &self.link.store_id, now_ms)
    }

    /// Open the standalone ledger at `location` for invocation `invocation_id` of the store
    /// on `store`.
    ///
    /// # Errors
    /// The ledger's open errors; a store without a genesis entry.
    pub fn open(
        location: &str,
        store: &mut crate::store::Store,
        invocation_id: &str,
    ) -> Result<Standalone, Error> {
        let store_id = crate::store::markers::ensure_store_id(store)
            .map_err(|e| Error::corrupt(e.to_string()))?;
        Standalone::open_for(location, store_id, invocation_id)
    }

    /// Open the standalone ledger at `location` for invocation `invocation_id` of the store
    /// whose id is `store_id` (from `store::markers::ensure_store_id_new`).
    ///
    /// # Errors
    /// The ledger's open errors.
    pub fn open_for(
        location: &str,
        store_id: String,
        invocation_id: &str,
    ) -> Result<Standalone, Error> {
        Ok(Standalone {
            ledger: super::open_standalone_ledger(location)?,
            link: StoreLink::new(store_id),
            invocation_id: invocation_id.to_string(),
        })
    }
}
