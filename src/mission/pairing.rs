//! Pairing World effects with a mission held in a **standalone** ledger (a file or
//! PostgreSQL), missions.md §7 and issue 18: the mechanism the limits ledger pairs with
//! (DEC-LIM-20, DEC-LIM-22) applied to a mission.
//!
//! A standalone ledger shares no atomic commit with the store, so each step is its own ledger
//! transaction, in this order (DEC-MIS-14):
//!
//! 1. inside the store transaction that decides the effect, before its intent commits:
//!    `admit` then `dispatch` ([`Standalone::admit`], [`Standalone::dispatch_or_release`]; the
//!    broker's one pairing loop, DEC-PAIRING-1, admits after the limits ledger's reserve and
//!    dispatches before its dispatch when a limits scope is bound too); a rejection or a ledger failure rolls the
//!    store transaction back — no intent, nothing ran;
//! 2. the intent commits together with an attempt marker ([`attempt_marker`]); the handler runs;
//! 3. after the outcome is journaled: `settle` SUCCEEDED/FAILED at the effect's cost, or
//!    UNKNOWN for an indeterminate effect.
//!
//! A crash between the two databases keeps the exposure: [`reconcile_from_store`] releases an
//! ADMITTED attempt whose intent never reached the store (no handler ran), settles a DISPATCHED
//! attempt from the outcome journaled in the store, and settles every other DISPATCHED attempt
//! UNKNOWN — the full reservation stays held until a HUMAN `world mission reconcile`s it with
//! evidence: never a refund because a process restarted.
//!
//! Ids (missions.md §2 grammar `[A-Za-z0-9._:-]{1,128}`): attempt `<storeId>:<intentId>:<8
//! hex>` — unique per attempt, as DEC-LIM-22 — and the operation is the attempt itself
//! (DEC-MIS-18: a process that stops before the store commits the intent leaves the ordinal
//! free, and whatever the episode does next at that ordinal is a new request, not a retry, so
//! it must not spend the crashed one's `maxAttempts`). The store id is the one both pairings
//! use (`store::markers::store_id`), so `world mission report` names the store and the
//! effect intent (episode and ordinal) of each outstanding attempt.
//!
//! The clock: an invocation on the system clock sends its reading as an implicit clock, so the
//! ledger takes `max(now, lastNow)` under the mission's lock (DEC-MIS-17) — processes on
//! several hosts never refuse each other `TIME_REGRESSED`, and a release or settlement is
//! never lost to it.

use rusqlite::Connection;

use crate::ledger::paired::{Reconciled, ReconciledOf, StoreLink};
use crate::store::markers::AttemptMarker;

use super::durable::{Error, MissionStore, Request};
use super::{Actor, Admit, AttemptStatus, Command, Outcome};
use crate::ledger::Amount;

/// The mission side of one invocation's pairing with a mission in a standalone ledger.
pub struct Standalone {
    /// The ledger's missions.
    pub missions: Box<dyn MissionStore>,
    /// The mission.
    pub mission_id: String,
    /// The store's id (`store::markers::store_id`), and whether the release of an attempt
    /// whose dispatch failed failed too (an ADMITTED attempt was left, reported; the store's id
    /// must then persist for `reconcile --from-store`).
    pub link: StoreLink,
    /// `now` is the system clock (not `WORLD_TEST_NOW`): every step is sent as an implicit
    /// clock, `max(now, lastNow)` under the mission's lock (DEC-MIS-17).
    pub implicit_clock: bool,
}

impl std::fmt::Debug for Standalone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Standalone")
            .field("missions", &self.missions.describe())
            .field("mission_id", &self.mission_id)
            .field("link", &self.link)
            .field("implicit_clock", &self.implicit_clock)
            .finish()
    }
}

/// The operation id of a paired attempt: the attempt id itself (DEC-MIS-18). Each paired
/// attempt is one request of the episode; the store's journal (not `maxAttempts`) makes sure
/// an effect intent that reached the store never runs twice.
pub fn operation_id(attempt_id: &str) -> String {
    attempt_id.to_string()
}

/// A new attempt id for effect intent `intent_id` of store `store_id`:
/// `<storeId>:<intentId>:<8 hex random>` (≤ 123 bytes for the longest episode and ordinal).
///
/// # Errors
/// [`Error::Corrupt`] when the system has no randomness to give.
pub fn new_attempt_id(store_id: &str, intent_id: &str) -> Result<String, Error> {
    let mut b = [0u8; 4];
    getrandom::getrandom(&mut b).map_err(|e| Error::Corrupt(format!("attempt id: {e}")))?;
    Ok(format!("{store_id}:{intent_id}:{}", hex::encode(b)))
}

/// Split an attempt id made by [`new_attempt_id`] into `(storeId, intentId)`; `None` for any
/// other attempt (one admitted by hand, or paired in the store file).
pub fn parse_attempt_id(attempt_id: &str) -> Option<(&str, &str)> {
    let (store, rest) = attempt_id.split_once(':')?;
    let (intent, nonce) = rest.rsplit_once(':')?;
    let hex16 = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
    let store_ok = store.strip_prefix("store-").is_some_and(|h| hex16(h, 16));
    (store_ok && hex16(nonce, 8) && intent.starts_with("effect:")).then_some((store, intent))
}

/// The store-side marker of `attempt_id` (mission `mission_id`) for effect intent
/// `intent_id` (written in the intent's transaction; `store::markers`).
pub fn attempt_marker<'a>(
    mission_id: &'a str,
    attempt_id: &'a str,
    intent_id: &'a str,
) -> AttemptMarker<'a> {
    AttemptMarker::Mission {
        mission_id,
        attempt_id,
        intent_id,
    }
}

fn settle_command(attempt_id: &str, outcome: Outcome, cost: Amount) -> Command {
    Command::Settle {
        attempt_id: attempt_id.to_string(),
        outcome,
        actual_cost: (outcome != Outcome::Unknown).then_some(cost),
    }
}

fn host_step(
    missions: &dyn MissionStore,
    mission_id: &str,
    command: Command,
    now_ms: u128,
    implicit_clock: bool,
) -> Result<(), Error> {
    let req = Request::new(command).on_implicit_clock(implicit_clock);
    missions
        .apply(mission_id, &req, &Actor::host(), Amount(now_ms))
        .map(|_| ())
}

/// One HOST step of mission `mission_id` in the store file, in the intent's or outcome's
/// transaction `tx` (it commits or rolls back with the store's own writes).
fn in_store_step(
    tx: &Connection,
    mission_id: &str,
    command: Command,
    now_ms: u128,
    implicit_clock: bool,
) -> Result<(), Error> {
    let req = Request::new(command).on_implicit_clock(implicit_clock);
    super::durable::apply_in(tx, mission_id, &req, &Actor::host(), Amount(now_ms)).map(|_| ())
}

/// A mission in the store file: admit `admit` (attempt id = operation id = the effect intent
/// id) and dispatch it, both in the intent's transaction `tx`, as the HOST — one call for the
/// effect's hold and dispatch (DEC-PAIRING2-2). `implicit_clock`: `now_ms` is the system
/// clock, taken as `max(now, lastNow)` under the mission's lock (DEC-MIS-17). A refusal of
/// either step leaves `tx` to be dropped, which undoes both.
///
/// # Errors
/// [`Error::Rejected`]; integrity refusals ([`Error::Corrupt`]) and storage errors.
pub fn admit_and_dispatch_in(
    tx: &Connection,
    mission_id: &str,
    admit: Admit,
    now_ms: u128,
    implicit_clock: bool,
) -> Result<(), Error> {
    let attempt_id = admit.attempt_id.clone();
    in_store_step(
        tx,
        mission_id,
        Command::Admit(Box::new(admit)),
        now_ms,
        implicit_clock,
    )?;
    in_store_step(
        tx,
        mission_id,
        Command::Dispatch { attempt_id },
        now_ms,
        implicit_clock,
    )
}

/// A mission in the store file: settle `attempt_id` with `outcome` at `cost` (no actual cost
/// for UNKNOWN: the full reservation stays held) in the outcome's transaction `tx`.
///
/// # Errors
/// [`Error::Rejected`]; integrity refusals and storage errors (the outcome's transaction must
/// then not commit).
pub fn settle_in(
    tx: &Connection,
    mission_id: &str,
    attempt_id: &str,
    outcome: Outcome,
    cost: u128,
    now_ms: u128,
    implicit_clock: bool,
) -> Result<(), Error> {
    in_store_step(
        tx,
        mission_id,
        settle_command(attempt_id, outcome, Amount(cost)),
        now_ms,
        implicit_clock,
    )
}

impl Standalone {
    /// [`reconcile_from_store`] of this store's attempts of this mission (the pairing trait's
    /// `reconcile_from_store`, DEC-PAIRING2-1).
    ///
    /// # Errors
    /// As [`reconcile_from_store`].
    pub fn reconcile_from_store(
        &self,
        store: &Connection,
        now_ms: u128,
    ) -> Result<Vec<Reconciled>, Error> {
        reconcile_from_store(
            self.missions.as_ref(),
            &self.mission_id,
            store,
            &self.link.store_id,
            now_ms,
            self.implicit_clock,
        )
    }

    fn step(&self, command: Command, now_ms: u128) -> Result<(), Error> {
        host_step(
            self.missions.as_ref(),
            &self.mission_id,
            command,
            now_ms,
            self.implicit_clock,
        )
    }

    /// The command that releases what [`reconcile_from_store`] can: for hints.
    pub fn reconcile_hint(&self) -> String {
        format!(
            "world mission reconcile {} --from-store --ledger {}",
            self.mission_id,
            crate::ledger::location::location_arg(&self.missions.describe())
        )
    }

    /// A new attempt id for effect intent `intent_id` of this store ([`new_attempt_id`]).
    ///
    /// # Errors
    /// As [`new_attempt_id`].
    pub fn new_attempt(&self, intent_id: &str) -> Result<String, Error> {
        new_attempt_id(&self.link.store_id, intent_id)
    }

    /// Admit `admit` (its attempt from [`Standalone::new_attempt`]) and dispatch it — before
    /// its intent (and [`attempt_marker`]) is journaled.
    ///
    /// # Errors
    /// [`Error::Rejected`] (nothing admitted, or the admitted attempt released again when the
    /// rejection came from `dispatch`; when that release fails too, the rejection carries
    /// `unreleasedAttempt` and says how to release it — never a silent leak); storage errors
    /// (a failed dispatch is released again; when that fails a warning names the ADMITTED
    /// attempt left — [`reconcile_from_store`] releases it: no intent reached the store).
    pub fn admit_and_dispatch(&self, admit: Admit, now_ms: u128) -> Result<(), Error> {
        let attempt = admit.attempt_id.clone();
        let amount = admit.amount;
        self.admit(admit, now_ms)?;
        self.dispatch_or_release(&attempt, amount, now_ms)
    }

    /// Admit `admit` (its attempt from [`Standalone::new_attempt`]), not yet dispatched: the
    /// broker's pairing loop dispatches it with [`Standalone::dispatch_or_release`] once every
    /// pairing of the effect holds its attempt (DEC-PAIRING-1).
    ///
    /// # Errors
    /// [`Error::Rejected`] (nothing admitted); storage errors.
    pub fn admit(&self, admit: Admit, now_ms: u128) -> Result<(), Error> {
        self.step(Command::Admit(Box::new(admit)), now_ms)
    }

    /// Dispatch the ADMITTED attempt `attempt` (holding `amount`); a rejection or a failed
    /// dispatch releases it (never dispatched).
    ///
    /// # Errors
    /// [`Error::Rejected`] (released again; when that release fails too, the rejection carries
    /// `unreleasedAttempt` and says how to release it — never a silent leak); storage errors
    /// (released again; when that fails a warning names the ADMITTED attempt left —
    /// [`reconcile_from_store`] releases it: no intent reached the store).
    pub fn dispatch_or_release(
        &self,
        attempt: &str,
        amount: Amount,
        now_ms: u128,
    ) -> Result<(), Error> {
        match self.step(
            Command::Dispatch {
                attempt_id: attempt.to_string(),
            },
            now_ms,
        ) {
            Err(Error::Rejected(r)) => match self.release(attempt, now_ms) {
                Ok(()) => Err(Error::Rejected(r)),
                Err(e) => {
                    self.link.set_release_failed();
                    Err(Error::Rejected(Box::new(unreleased(
                        *r,
                        attempt,
                        amount,
                        &e,
                        &self.reconcile_hint(),
                    ))))
                }
            },
            Err(e) => {
                // The dispatch failed (a busy or lost ledger): never dispatched, so give the
                // reservation back; if that fails too, say what is left.
                self.release_or_warn(attempt, amount, now_ms);
                Err(e)
            }
            Ok(()) => Ok(()),
        }
    }

    /// [`Standalone::release`] of the ADMITTED attempt `attempt` (holding `amount`) that will
    /// never be dispatched; a failure is never silent: a warning names the attempt left and
    /// the command that releases it, and the link's release-failed flag is set.
    pub fn release_or_warn(&self, attempt: &str, amount: Amount, now_ms: u128) {
        if let Err(re) = self.release(attempt, now_ms) {
            self.link.set_release_failed();
            eprintln!(
                "world: warning: the admitted attempt {attempt} (holding {amount}) was neither dispatched nor released ({re}): no handler ran and nothing was written in the store, but the mission holds it until `{}`",
                self.reconcile_hint()
            );
        }
    }

    /// Release the ADMITTED, never dispatched attempt `attempt`.
    ///
    /// # Errors
    /// Rejections and storage errors.
    pub fn release(&self, attempt: &str, now_ms: u128) -> Result<(), Error> {
        self.step(
            Command::Release {
                attempt_id: attempt.to_string(),
            },
            now_ms,
        )
    }

    /// Settle `attempt` after its intent's outcome was journaled (UNKNOWN: indeterminate,
    /// the full reservation stays held).
    ///
    /// # Errors
    /// Storage errors and rejections; the attempt then stays DISPATCHED (exposure kept) until
    /// [`reconcile_from_store`].
    pub fn settle(
        &self,
        attempt: &str,
        outcome: Outcome,
        cost: u128,
        now_ms: u128,
    ) -> Result<(), Error> {
        self.step(settle_command(attempt, outcome, Amount(cost)), now_ms)
    }
}

/// `r` with the exposure a failed release left: detail `unreleasedAttempt`, and a sentence
/// naming the amount held and the command that releases it.
pub fn unreleased(
    r: super::Rejection,
    attempt: &str,
    amount: Amount,
    cause: &Error,
    hint: &str,
) -> super::Rejection {
    let mut r = r.with("unreleasedAttempt", attempt);
    r.reason = format!(
        "{}; the admitted attempt {attempt} (holding {amount}) could not be released ({cause}): no handler ran and nothing was written in the store, but the mission holds it until `{hint}` releases it",
        r.reason
    );
    r
}

/// Release or settle every outstanding (ADMITTED or DISPATCHED) attempt that store
/// `store_id` paired with mission `mission_id`, from the store's journal evidence, as the HOST.
/// The caller holds the store's writer lock, so no invocation of this store is in flight.
///
/// - ADMITTED, the attempt's marker not in the store: dispatch precedes the intent, so no
///   handler ran → `release`;
/// - DISPATCHED, marker present and the intent's outcome journaled → `settle`
///   SUCCEEDED/FAILED at the admitted amount (what the broker would have settled);
/// - any other DISPATCHED attempt (no outcome; or no marker: the process stopped between the
///   ledger's dispatch and the store's commit) → `settle` UNKNOWN: the full reservation stays
///   held until a HUMAN `world mission reconcile` (missions.md §4; DEC-MIS-5);
/// - an attempt of the store already UNKNOWN (an earlier run, an indeterminate effect), or
///   ADMITTED with its intent in the store, is listed as `held`: still awaiting a person.
///
/// `implicit_clock`: `now_ms` is the system clock, taken as `max(now, lastNow)` under the
/// mission's lock (DEC-MIS-17).
///
/// # Errors
/// Ledger and store errors (what was applied before stays applied).
pub fn reconcile_from_store(
    missions: &dyn MissionStore,
    mission_id: &str,
    store: &Connection,
    store_id: &str,
    now_ms: u128,
    implicit_clock: bool,
) -> Result<Vec<Reconciled>, Error> {
    use crate::store::journal::ReceiptState;
    let state = missions.state(mission_id)?;
    let step = |command, now| host_step(missions, mission_id, command, now, implicit_clock);
    let mut out = Vec::new();
    let attended = |attempt_id: &str| {
        format!("awaits `world mission reconcile {mission_id} --attempt {attempt_id} --actual X --evidence-file F` (attended)")
    };
    for (attempt_id, a) in &state.attempts {
        if !matches!(
            a.status,
            AttemptStatus::Admitted | AttemptStatus::Dispatched | AttemptStatus::Unknown
        ) {
            continue;
        }
        let Some((sid, intent_id)) = parse_attempt_id(attempt_id) else {
            continue;
        };
        if sid != store_id {
            continue;
        }
        let held = |why: String| Reconciled {
            attempt_id: attempt_id.clone(),
            of: ReconciledOf::Intent(intent_id.to_string()),
            action: "held",
            state: a.status.as_str().to_string(),
            why,
        };
        if a.status == AttemptStatus::Unknown {
            out.push(held(format!(
                "settled UNKNOWN before: its full reservation ({}) stays held; it {}",
                a.amount,
                attended(attempt_id)
            )));
            continue;
        }
        let reached = attempt_marker(mission_id, attempt_id, intent_id).is_stored(store)?;
        let receipt = crate::store::journal::receipt(store, intent_id)
            .map_err(|e| Error::Corrupt(format!("store journal for {intent_id}: {e}")))?;
        let done = |action, status: &str, why: String| Reconciled {
            attempt_id: attempt_id.clone(),
            of: ReconciledOf::Intent(intent_id.to_string()),
            action,
            state: status.to_string(),
            why,
        };
        if a.status == AttemptStatus::Admitted {
            if reached {
                // The intent committed only after dispatch succeeded: not reachable by the
                // broker; leave it to a human.
                out.push(held(format!(
                    "ADMITTED while its intent {intent_id} is in the store; it {}",
                    attended(attempt_id)
                )));
                continue;
            }
            step(
                Command::Release {
                    attempt_id: attempt_id.clone(),
                },
                now_ms,
            )?;
            out.push(done(
                "released",
                "RELEASED",
                format!("the effect intent {intent_id} of this attempt never reached the store: the handler never ran"),
            ));
            continue;
        }
        match (reached, receipt.state) {
            (true, ReceiptState::Resolved) => {
                let failed = receipt.status.as_deref() == Some("failed");
                let outcome = if failed {
                    Outcome::Failed
                } else {
                    Outcome::Succeeded
                };
                step(settle_command(attempt_id, outcome, a.amount), now_ms)?;
                out.push(done(
                    "settled",
                    "SETTLED",
                    format!(
                        "outcome {} in the store journal (record {})",
                        receipt.status.as_deref().unwrap_or("?"),
                        receipt.record_ref.as_deref().unwrap_or("?")
                    ),
                ));
            }
            (reached, _) => {
                step(
                    settle_command(attempt_id, Outcome::Unknown, Amount(0)),
                    now_ms,
                )?;
                out.push(done(
                    "unknown",
                    "UNKNOWN",
                    if reached {
                        format!("effect intent {intent_id} has no outcome: it may have happened; the reservation stays held until `world mission reconcile` (attended, with evidence)")
                    } else {
                        format!("the ledger recorded dispatch but the effect intent {intent_id} never reached the store; the reservation stays held until `world mission reconcile` (attended, with evidence)")
                    },
                ));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempt_ids_round_trip_and_fit_the_id_grammar() {
        let store = "store-0123456789abcdef";
        let intent = format!("effect:{}:{}", "a".repeat(64), u64::MAX);
        let id = new_attempt_id(store, &intent).unwrap();
        assert!(id.len() <= 128, "{} bytes", id.len());
        crate::mission::check_id(&id).unwrap();
        crate::mission::check_id(&operation_id(&id)).unwrap();
        assert_eq!(parse_attempt_id(&id), Some((store, intent.as_str())));
        assert_eq!(parse_attempt_id("effect:ep:0"), None);
        assert_eq!(parse_attempt_id("store-0123456789abcdef:effect:ep:0"), None);
        assert_eq!(parse_attempt_id("a1"), None);
    }
}
