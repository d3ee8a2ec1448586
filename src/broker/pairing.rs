//! One pairing protocol: what an allowed effect does with each ledger it is paired with
//! (limits.md §9, missions.md §7, issue 27 item 2, DEC-PAIRING-1, DEC-PAIRING2-2).
//!
//! An invocation may be paired with a limits-ledger scope ([`LimitsPairing`]) and with a
//! mission ([`MissionPairing`]); each lives either in the store file (its steps run in the
//! intent's transaction and roll back with it) or in a standalone ledger (a file or
//! PostgreSQL: each step is its own ledger transaction). Both implement [`Pairing`], and the
//! broker calls this module once per phase of an effect — `hold_and_dispatch` in the
//! intent's transaction, `Held::settle_in` in the outcome's, `Held::settle_after` after
//! it — which runs one loop over the invocation's pairings, in the order limits, mission (the
//! seed's order: the ledger reserves first, then the mission admits):
//!
//! 1. **hold**, in order: the limits ledger reserves, the mission admits. A pairing in the
//!    store file also dispatches in the same call (one call into its ledger for both steps,
//!    `limits::pairing::reserve_and_dispatch_in`, `mission::pairing::admit_and_dispatch_in`;
//!    dropping the transaction undoes both). A refusal or failure releases the standalone
//!    attempts already held, in reverse order, and drops the intent's transaction.
//! 2. **dispatch** the standalone attempts, in reverse hold order, so the pairing held first
//!    is dispatched last — always after every pairing in the store file dispatched. A pairing
//!    whose dispatch fails releases its own attempt; every other attempt not yet dispatched is
//!    released, in reverse hold order. An attempt a standalone ledger already dispatched stays
//!    DISPATCHED without an intent in the store — the one exposure two databases without an
//!    atomic commit cannot avoid — and its `reconcile --from-store` finds it (the store's id
//!    is then kept).
//! 3. **mark**: each standalone attempt's marker object goes into the intent's transaction.
//! 4. the intent commits and the handler runs; **settle**: in the outcome's transaction for
//!    a pairing in the store file ([`Pairing::settle_in`]), after it for a standalone ledger
//!    ([`Pairing::settle_after`]); an indeterminate effect settles a mission UNKNOWN (the full
//!    reservation stays held) and leaves a limits attempt DISPATCHED.
//! 5. **reconcile from the store's journal** ([`Pairing::reconcile_from_store`]), after a
//!    crash between the two databases: what the store's journal proves is settled or
//!    released, the rest is kept for an attended reconcile.
//!
//! With both pairings standalone this is exactly the order before the loop (reserve, admit,
//! mission dispatch, limits dispatch); DEC-PAIRING-1 and DEC-PAIRING2-2 record where pairings
//! in the store file changed.

use std::time::Instant;

use rusqlite::{Connection, Transaction};

use super::{BrokerError, LimitsPairing, MissionPairing, Request};
use crate::store::Object;

/// The allowed effect a pairing step is for.
pub struct Effect<'a> {
    /// The request.
    pub req: &'a Request,
    /// Its effect intent id, `effect:<episode>:<ordinal>` (journaled in the same transaction).
    pub intent_id: &'a str,
    /// When the handler's time runs out (a limits reservation's `maxActiveMs` is what is left).
    pub deadline: Instant,
}

impl Effect<'_> {
    fn cost(&self) -> u128 {
        self.req.cost.max(0) as u128
    }
}

/// How an allowed effect ended, as a ledger settles it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settlement {
    /// The handler succeeded (settled at the effect's cost).
    Succeeded,
    /// The handler failed (settled at the effect's cost: the unit stays spent).
    Failed,
    /// The handler could not tell: a mission settles UNKNOWN (its full reservation stays
    /// held), a limits attempt stays DISPATCHED.
    Unknown,
}

pub use crate::ledger::paired::Reconciled;

/// What an effect does with one ledger (DEC-PAIRING-1): hold (reserve or admit) → dispatch →
/// settle, or release when it never ran, and reconcile from the store's journal. Implemented
/// by [`LimitsPairing`] and [`MissionPairing`]; the broker runs its steps for every pairing of
/// an invocation in one loop (module docs). Attempt ids are the pairing's own: the intent id
/// in the store file, a new per-attempt id in a standalone ledger.
pub trait Pairing {
    /// `"limits"` or `"mission"` (in error details).
    fn name(&self) -> &'static str;

    /// Whether the steps run in the store file, inside the broker's transactions (undone by
    /// dropping them); `false` for a standalone ledger.
    fn in_store(&self) -> bool;

    /// Reserve (limits) or admit (mission) the effect in the standalone ledger, or — in the
    /// store file — reserve or admit **and dispatch** it in `tx` (one call into the ledger),
    /// before its intent commits; returns the attempt id.
    ///
    /// # Errors
    /// A refusal or ledger failure; nothing is held then (in the store file: once `tx` is
    /// dropped).
    fn hold(&self, tx: &Transaction<'_>, e: &Effect<'_>) -> Result<String, BrokerError>;

    /// Dispatch the held standalone `attempt` (the loop calls it for standalone pairings
    /// only: a pairing in the store file dispatched in [`Pairing::hold`]).
    ///
    /// # Errors
    /// A refusal or ledger failure; a standalone attempt has been released again (a failed
    /// release is reported: [`Pairing::release_failed`]).
    fn dispatch(&self, e: &Effect<'_>, attempt: &str) -> Result<(), BrokerError>;

    /// Release the held, never dispatched `attempt` because another pairing refused the
    /// effect. In the store file: nothing (dropping the transaction undoes the hold). Never
    /// fails silently: a failed release warns on stderr and sets [`Pairing::release_failed`].
    fn release(&self, e: &Effect<'_>, attempt: &str);

    /// The store-side marker object tying a standalone `attempt` to its intent (written in the
    /// intent's transaction); `None` in the store file.
    fn marker(&self, e: &Effect<'_>, attempt: &str) -> Option<Object>;

    /// Settle `attempt` in the outcome's transaction `tx` (pairings in the store file; a
    /// standalone pairing does nothing here).
    ///
    /// # Errors
    /// The ledger's refusal or failure: the outcome's transaction must not commit.
    fn settle_in(
        &self,
        tx: &Transaction<'_>,
        e: &Effect<'_>,
        attempt: &str,
        s: Settlement,
    ) -> Result<(), BrokerError>;

    /// Settle a standalone `attempt` after its outcome was journaled (a pairing in the store
    /// file does nothing here); a failure warns: the exposure stays until `reconcile
    /// --from-store` settles it from the journaled outcome.
    fn settle_after(&self, e: &Effect<'_>, attempt: &str, s: Settlement);

    /// A release of this invocation's attempt failed: the ledger holds an attempt naming the
    /// store's id, which must then persist.
    fn release_failed(&self) -> bool;

    /// Settle or release every outstanding attempt this store paired with the ledger, from
    /// the store's journal (the caller holds the store's writer lock); a pairing in the store
    /// file has nothing outstanding (its steps commit with the journal).
    ///
    /// # Errors
    /// Ledger and store errors (what was applied before stays applied).
    fn reconcile_from_store(
        &self,
        store: &Connection,
        now_ms: u128,
    ) -> Result<Vec<Reconciled>, BrokerError>;
}

/// The pairings of one allowed effect, in hold order, with their attempts.
pub(super) struct Held<'p> {
    pub(super) pairings: Vec<&'p dyn Pairing>,
    pub(super) attempts: Vec<String>,
}

/// Steps 1–3 of the module docs for effect `e` in the intent's transaction `tx`: hold every
/// pairing in order (a pairing in the store file dispatches in the same call), dispatch the
/// standalone ones in reverse hold order, mark. `dispatched_standalone` is set once a
/// standalone ledger dispatched (an attempt there names the store's id whatever happens to
/// `tx` after it).
///
/// # Errors
/// The first refusal or failure, after every standalone attempt held and not dispatched was
/// released in reverse hold order; `tx` must then be dropped.
pub(super) fn hold_and_dispatch<'p>(
    pairings: Vec<&'p dyn Pairing>,
    tx: &Transaction<'_>,
    e: &Effect<'_>,
    dispatched_standalone: &std::cell::Cell<bool>,
) -> Result<Held<'p>, BrokerError> {
    let n = pairings.len();
    let mut attempts: Vec<String> = Vec::with_capacity(n);
    for p in &pairings {
        match p.hold(tx, e) {
            Ok(a) => attempts.push(a),
            Err(err) => {
                for (q, a) in pairings.iter().zip(&attempts).rev() {
                    q.release(e, a);
                }
                return Err(err);
            }
        }
    }
    // A pairing in the store file dispatched in its hold.
    let mut dispatched: Vec<bool> = pairings.iter().map(|p| p.in_store()).collect();
    for i in (0..n).rev().filter(|&i| !pairings[i].in_store()) {
        if let Err(err) = pairings[i].dispatch(e, &attempts[i]) {
            for j in (0..n).rev().filter(|&j| j != i && !dispatched[j]) {
                pairings[j].release(e, &attempts[j]);
            }
            return Err(err);
        }
        dispatched[i] = true;
        dispatched_standalone.set(true);
    }
    for (p, a) in pairings.iter().zip(&attempts) {
        if let Some(m) = p.marker(e, a) {
            crate::store::put_object(tx, &m)?;
        }
    }
    Ok(Held { pairings, attempts })
}

impl Held<'_> {
    /// Settle every pairing in the store file in the outcome's transaction `tx`, in hold
    /// order ([`Pairing::settle_in`]).
    ///
    /// # Errors
    /// The first pairing's refusal or failure, with its name: the outcome's transaction must
    /// not commit.
    pub(super) fn settle_in(
        &self,
        tx: &Transaction<'_>,
        e: &Effect<'_>,
        s: Settlement,
    ) -> Result<(), (&'static str, BrokerError)> {
        for (p, a) in self.pairings.iter().zip(&self.attempts) {
            p.settle_in(tx, e, a, s).map_err(|x| (p.name(), x))?;
        }
        Ok(())
    }

    /// After the outcome is journaled (or the effect ended indeterminate), settle the
    /// standalone ledgers' attempts in hold order ([`Pairing::settle_after`]); a failure is a
    /// warning (the exposure stays DISPATCHED until `reconcile --from-store` settles it).
    pub(super) fn settle_after(&self, e: &Effect<'_>, s: Settlement) {
        for (p, a) in self.pairings.iter().zip(&self.attempts) {
            p.settle_after(e, a, s);
        }
    }
}

fn in_store_limits_error(e: crate::limits::Error) -> BrokerError {
    match e {
        crate::limits::Error::Rejected(v) => BrokerError::LimitsRejected(v),
        e if e.is_corrupt() => BrokerError::LedgerIntegrity(e.to_string()),
        e => BrokerError::Limits(e.to_string()),
    }
}

fn in_store_mission_error(e: crate::mission::durable::Error) -> BrokerError {
    use crate::mission::durable::Error as M;
    match e {
        M::Rejected(r) => BrokerError::MissionRejected(r),
        e @ M::Corrupt(_) => BrokerError::LedgerIntegrity(e.to_string()),
        e => BrokerError::Mission(e.to_string()),
    }
}

fn limits_error(s: &crate::limits::pairing::Standalone, e: crate::limits::Error) -> BrokerError {
    match e {
        crate::limits::Error::Rejected(v) => BrokerError::LimitsRejected(v),
        e if e.is_corrupt() => BrokerError::LedgerIntegrity(e.to_string()),
        e if e.is_busy() => BrokerError::LedgerBusy(format!(
            "limits: ledger {} is busy: another process held its write lock for the whole wait; nothing ran and nothing was written in the store",
            s.ledger.describe()
        )),
        e => BrokerError::Limits(e.to_string()),
    }
}

fn mission_error(
    ms: &crate::mission::pairing::Standalone,
    e: crate::mission::durable::Error,
) -> BrokerError {
    use crate::mission::durable::Error as M;
    match e {
        M::Rejected(r) => BrokerError::MissionRejected(r),
        e @ M::Corrupt(_) => BrokerError::LedgerIntegrity(e.to_string()),
        e if e.is_busy() => BrokerError::LedgerBusy(format!(
            "mission {}: ledger {} is busy: another process held its write lock for the whole wait; nothing ran and nothing was written in the store",
            ms.mission_id,
            ms.missions.describe()
        )),
        e => BrokerError::Mission(e.to_string()),
    }
}

impl Pairing for LimitsPairing {
    fn name(&self) -> &'static str {
        "limits"
    }

    fn in_store(&self) -> bool {
        self.standalone.is_none()
    }

    fn hold(&self, tx: &Transaction<'_>, e: &Effect<'_>) -> Result<String, BrokerError> {
        let max_active = e
            .deadline
            .saturating_duration_since(Instant::now())
            .as_millis();
        let Some(s) = &self.standalone else {
            // In the intent's transaction, reserve and dispatch in one call: a rejection rolls
            // all of it back.
            crate::limits::pairing::reserve_and_dispatch_in(
                tx,
                e.intent_id,
                &self.scope,
                e.cost(),
                max_active,
                self.now_ms,
            )
            .map_err(in_store_limits_error)?;
            return Ok(e.intent_id.to_string());
        };
        // The attempt id is new per attempt (DEC-LIM-22): a crash before the intent commits
        // leaves the ordinal free for the next effect, which must not meet this attempt's
        // request ids. The marker ties the attempt to its intent for reconcile.
        let attempt = s.new_attempt(e.intent_id).map_err(|x| limits_error(s, x))?;
        s.reserve(&attempt, &self.scope, e.cost(), max_active, self.now_ms)
            .map_err(|x| limits_error(s, x))?;
        Ok(attempt)
    }

    fn dispatch(&self, _e: &Effect<'_>, attempt: &str) -> Result<(), BrokerError> {
        match &self.standalone {
            // Dispatched in its hold.
            None => Ok(()),
            Some(s) => s
                .dispatch_or_release(attempt, self.now_ms)
                .map_err(|x| limits_error(s, x)),
        }
    }

    fn release(&self, _e: &Effect<'_>, attempt: &str) {
        if let Some(s) = &self.standalone {
            s.release_or_warn(attempt, self.now_ms);
        }
    }

    fn marker(&self, e: &Effect<'_>, attempt: &str) -> Option<Object> {
        self.standalone
            .as_ref()
            .map(|_| crate::limits::pairing::attempt_marker(attempt, e.intent_id).object())
    }

    fn settle_in(
        &self,
        tx: &Transaction<'_>,
        e: &Effect<'_>,
        attempt: &str,
        s: Settlement,
    ) -> Result<(), BrokerError> {
        let outcome = match s {
            _ if self.standalone.is_some() => return Ok(()),
            // Indeterminate: the attempt stays DISPATCHED (its exposure held).
            Settlement::Unknown => return Ok(()),
            Settlement::Succeeded => crate::limits::Outcome::Succeeded,
            Settlement::Failed => crate::limits::Outcome::Failed,
        };
        crate::limits::pairing::settle_in(
            tx,
            attempt,
            outcome == crate::limits::Outcome::Failed,
            e.cost(),
            self.now_ms.max(self.clock.now_ms()),
        )
        .map_err(in_store_limits_error)
    }

    fn settle_after(&self, e: &Effect<'_>, attempt: &str, s: Settlement) {
        let Some(ls) = &self.standalone else {
            return;
        };
        if s == Settlement::Unknown {
            return;
        }
        // After the outcome is journaled. A failure keeps the exposure (DISPATCHED) until
        // `world limits reconcile --from-store` settles it from this outcome.
        let now = self.now_ms.max(self.clock.now_ms());
        if let Err(x) = ls.settle(attempt, s == Settlement::Failed, e.cost(), now) {
            eprintln!(
                "world: warning: the limits ledger did not record the settlement of {attempt} ({x}); its exposure stays until `world limits reconcile --from-store`"
            );
        }
    }

    fn release_failed(&self) -> bool {
        self.standalone
            .as_ref()
            .is_some_and(|s| s.link.release_failed())
    }

    fn reconcile_from_store(
        &self,
        store: &Connection,
        now_ms: u128,
    ) -> Result<Vec<Reconciled>, BrokerError> {
        let Some(s) = &self.standalone else {
            return Ok(Vec::new());
        };
        s.reconcile_from_store(store, now_ms)
            .map_err(|x| limits_error(s, x))
    }
}

impl Pairing for MissionPairing {
    fn name(&self) -> &'static str {
        "mission"
    }

    fn in_store(&self) -> bool {
        self.standalone.is_none()
    }

    fn hold(&self, tx: &Transaction<'_>, e: &Effect<'_>) -> Result<String, BrokerError> {
        let Some(ms) = &self.standalone else {
            // attemptId = operationId = the effect intent id, in the intent's transaction.
            let admit = mission_admit(
                self,
                e.req,
                e.intent_id.to_string(),
                e.intent_id.to_string(),
            );
            // The system clock was read before the store's lock: the mission takes
            // max(now, lastNow) under it (DEC-MIS-17); a fixed clock is checked as given.
            crate::mission::pairing::admit_and_dispatch_in(
                tx,
                &self.mission_id,
                admit,
                self.now_ms,
                !self.clock.is_fixed(),
            )
            .map_err(in_store_mission_error)?;
            return Ok(e.intent_id.to_string());
        };
        let attempt = ms
            .new_attempt(e.intent_id)
            .map_err(|x| mission_error(ms, x))?;
        let op = crate::mission::pairing::operation_id(&attempt);
        ms.admit(mission_admit(self, e.req, op, attempt.clone()), self.now_ms)
            .map_err(|x| mission_error(ms, x))?;
        Ok(attempt)
    }

    fn dispatch(&self, e: &Effect<'_>, attempt: &str) -> Result<(), BrokerError> {
        match &self.standalone {
            // Dispatched in its hold.
            None => Ok(()),
            Some(ms) => ms
                .dispatch_or_release(attempt, crate::ledger::Amount(e.cost()), self.now_ms)
                .map_err(|x| mission_error(ms, x)),
        }
    }

    fn release(&self, e: &Effect<'_>, attempt: &str) {
        if let Some(ms) = &self.standalone {
            ms.release_or_warn(attempt, crate::ledger::Amount(e.cost()), self.now_ms);
        }
    }

    fn marker(&self, e: &Effect<'_>, attempt: &str) -> Option<Object> {
        self.standalone.as_ref().map(|ms| {
            crate::mission::pairing::attempt_marker(&ms.mission_id, attempt, e.intent_id).object()
        })
    }

    fn settle_in(
        &self,
        tx: &Transaction<'_>,
        e: &Effect<'_>,
        attempt: &str,
        s: Settlement,
    ) -> Result<(), BrokerError> {
        if self.standalone.is_some() {
            return Ok(());
        }
        crate::mission::pairing::settle_in(
            tx,
            &self.mission_id,
            attempt,
            mission_outcome(s),
            e.cost(),
            self.settle_ms(),
            !self.clock.is_fixed(),
        )
        .map_err(in_store_mission_error)
    }

    fn settle_after(&self, e: &Effect<'_>, attempt: &str, s: Settlement) {
        let Some(ms) = &self.standalone else {
            return;
        };
        // After the outcome is journaled. A failure keeps the exposure (DISPATCHED) until
        // `world mission reconcile M --from-store` settles it from this outcome.
        let cost = if s == Settlement::Unknown {
            0
        } else {
            e.cost()
        };
        if let Err(x) = ms.settle(attempt, mission_outcome(s), cost, self.settle_ms()) {
            let (what, stays) = if s == Settlement::Unknown {
                (
                    format!("did not record {attempt} as UNKNOWN"),
                    "it stays DISPATCHED",
                )
            } else {
                (
                    format!("did not record the settlement of {attempt}"),
                    "its exposure stays",
                )
            };
            eprintln!(
                "world: warning: the mission ledger {what} ({x}); {stays} until `world mission reconcile {} --from-store`",
                ms.mission_id
            );
        }
    }

    fn release_failed(&self) -> bool {
        self.standalone
            .as_ref()
            .is_some_and(|s| s.link.release_failed())
    }

    fn reconcile_from_store(
        &self,
        store: &Connection,
        now_ms: u128,
    ) -> Result<Vec<Reconciled>, BrokerError> {
        let Some(ms) = &self.standalone else {
            return Ok(Vec::new());
        };
        ms.reconcile_from_store(store, now_ms)
            .map_err(|x| mission_error(ms, x))
    }
}

/// The `admit` of one effect in mission pairing `m` (missions.md §7): capability = effect,
/// resource = scope, amount = cost, payload = the request payload.
fn mission_admit(
    m: &MissionPairing,
    req: &Request,
    operation_id: String,
    attempt_id: String,
) -> crate::mission::Admit {
    use crate::encoding::trcjson;
    let payload =
        trcjson::parse(&req.payload, trcjson::Bounds::UNBOUNDED).unwrap_or(trcjson::CValue::Null);
    crate::mission::Admit {
        run_id: m.run_id.clone(),
        operation_id,
        attempt_id,
        grant_id: m.grant_id.clone(),
        subject: m.subject.clone(),
        action: crate::mission::Action {
            capability: req.effect.clone(),
            resource: req.scope.clone(),
            payload,
            preconditions: trcjson::CValue::Object(Vec::new()),
        },
        amount: crate::ledger::Amount(req.cost.max(0) as u128),
        authorization_checked_at: crate::ledger::Amount(m.now_ms),
        policy: "ALLOW".into(),
        mandatory_checks_ok: true,
        depends_on: None,
    }
}

fn mission_outcome(s: Settlement) -> crate::mission::Outcome {
    match s {
        Settlement::Succeeded => crate::mission::Outcome::Succeeded,
        Settlement::Failed => crate::mission::Outcome::Failed,
        Settlement::Unknown => crate::mission::Outcome::Unknown,
    }
}

#[cfg(test)]
mod tests {
    //! The loop's order and what a refusal at each step leaves, over a recording test double
    //! of a ledger (the real ledgers' steps are exercised by the integration tests).
    use super::*;
    use std::cell::{Cell, RefCell};

    /// A test double of one pairing: records every step in `log` and refuses the step named
    /// `refuse` (`"hold"` or `"dispatch"`).
    struct RecordingDouble<'l> {
        name: &'static str,
        in_store: bool,
        refuse: Option<&'static str>,
        log: &'l RefCell<Vec<String>>,
    }

    impl RecordingDouble<'_> {
        fn step(&self, what: &str) -> Result<(), BrokerError> {
            self.log.borrow_mut().push(format!("{} {what}", self.name));
            if self.refuse == Some(what) {
                return Err(BrokerError::Limits(format!("{} refused {what}", self.name)));
            }
            Ok(())
        }
    }

    impl Pairing for RecordingDouble<'_> {
        fn name(&self) -> &'static str {
            self.name
        }
        fn in_store(&self) -> bool {
            self.in_store
        }
        fn hold(&self, _: &Transaction<'_>, _: &Effect<'_>) -> Result<String, BrokerError> {
            self.step("hold")?;
            if self.in_store {
                // In the store file, one call into the ledger holds and dispatches.
                self.step("dispatch")?;
            }
            Ok(format!("{}-attempt", self.name))
        }
        fn dispatch(&self, _: &Effect<'_>, _: &str) -> Result<(), BrokerError> {
            assert!(
                !self.in_store,
                "the loop dispatched a pairing in the store file"
            );
            self.step("dispatch")
        }
        fn release(&self, _: &Effect<'_>, _: &str) {
            self.log.borrow_mut().push(format!("{} release", self.name));
        }
        fn marker(&self, _: &Effect<'_>, _: &str) -> Option<Object> {
            None
        }
        fn settle_in(
            &self,
            _: &Transaction<'_>,
            _: &Effect<'_>,
            _: &str,
            _: Settlement,
        ) -> Result<(), BrokerError> {
            Ok(())
        }
        fn settle_after(&self, _: &Effect<'_>, _: &str, _: Settlement) {}
        fn release_failed(&self) -> bool {
            false
        }
        fn reconcile_from_store(
            &self,
            _: &Connection,
            _: u128,
        ) -> Result<Vec<Reconciled>, BrokerError> {
            Ok(Vec::new())
        }
    }

    /// Run the loop over limits and mission doubles placed `(limits_in_store,
    /// mission_in_store)`, refusing `refuse = (pairing, step)`; returns the log, whether it
    /// failed, and whether a standalone ledger dispatched.
    fn run(
        placement: (bool, bool),
        refuse: Option<(&'static str, &'static str)>,
    ) -> (Vec<String>, bool, bool) {
        let log = RefCell::new(Vec::new());
        let mk = |name, in_store| RecordingDouble {
            name,
            in_store,
            refuse: refuse.filter(|r| r.0 == name).map(|r| r.1),
            log: &log,
        };
        let (l, m) = (mk("limits", placement.0), mk("mission", placement.1));
        let mut conn = Connection::open_in_memory().unwrap();
        let tx = conn.transaction().unwrap();
        let req = Request {
            effect: "E".into(),
            scope: "s".into(),
            cost: 1,
            payload: b"{}".to_vec(),
        };
        let e = Effect {
            req: &req,
            intent_id: "effect:ep:0",
            deadline: Instant::now(),
        };
        let flag = Cell::new(false);
        let failed = hold_and_dispatch(vec![&l, &m], &tx, &e, &flag).is_err();
        drop(tx);
        (log.into_inner(), failed, flag.get())
    }

    #[test]
    fn both_standalone_keep_the_order_before_the_loop() {
        let (log, failed, dispatched) = run((false, false), None);
        assert!(!failed && dispatched);
        assert_eq!(
            log,
            [
                "limits hold",
                "mission hold",
                "mission dispatch",
                "limits dispatch"
            ]
        );
        // A mission refusal releases the limits reservation; a limits dispatch refusal finds
        // the mission dispatched already (its reconcile --from-store settles it UNKNOWN).
        let (log, ..) = run((false, false), Some(("mission", "hold")));
        assert_eq!(log, ["limits hold", "mission hold", "limits release"]);
        let (log, _, dispatched) = run((false, false), Some(("mission", "dispatch")));
        assert_eq!(
            log,
            [
                "limits hold",
                "mission hold",
                "mission dispatch",
                "limits release"
            ]
        );
        assert!(!dispatched);
        let (log, _, dispatched) = run((false, false), Some(("limits", "dispatch")));
        assert_eq!(
            log,
            [
                "limits hold",
                "mission hold",
                "mission dispatch",
                "limits dispatch"
            ]
        );
        assert!(
            dispatched,
            "the store's id is kept for reconcile --from-store"
        );
    }

    #[test]
    fn a_store_file_pairing_dispatches_before_a_standalone_ledger() {
        // Limits in a ledger file, the mission in the store file (DEC-PAIRING-1).
        let (log, ..) = run((false, true), None);
        assert_eq!(
            log,
            [
                "limits hold",
                "mission hold",
                "mission dispatch",
                "limits dispatch"
            ]
        );
        let (log, _, dispatched) = run((false, true), Some(("mission", "dispatch")));
        assert_eq!(
            log,
            [
                "limits hold",
                "mission hold",
                "mission dispatch",
                "limits release"
            ]
        );
        assert!(!dispatched);
        // Both in the store file: each ledger holds and dispatches in one call
        // (DEC-PAIRING2-2); a refusal anywhere drops the one transaction.
        let (log, ..) = run((true, true), None);
        assert_eq!(
            log,
            [
                "limits hold",
                "limits dispatch",
                "mission hold",
                "mission dispatch"
            ]
        );
        let (log, failed, dispatched) = run((true, true), Some(("limits", "dispatch")));
        assert_eq!(log, ["limits hold", "limits dispatch"]);
        assert!(failed && !dispatched);
        // Limits in the store file, the mission standalone: a limits refusal comes before
        // the mission ledger is asked anything.
        let (log, ..) = run((true, false), Some(("limits", "dispatch")));
        assert_eq!(log, ["limits hold", "limits dispatch"]);
        let (log, ..) = run((true, false), None);
        assert_eq!(
            log,
            [
                "limits hold",
                "limits dispatch",
                "mission hold",
                "mission dispatch"
            ]
        );
    }

    /// Every placement, every refusal: each standalone attempt held is released or
    /// dispatched (and a standalone dispatch sets the flag that keeps the store's id); a
    /// standalone ledger dispatches only after every store-file pairing did, so a refusal in
    /// the store file (undone with the transaction) never strands a standalone dispatch; and
    /// only a standalone ledger's own dispatch refusal can find another standalone attempt
    /// dispatched.
    #[test]
    fn no_refusal_leaves_a_standalone_attempt_held() {
        let placements = [(true, true), (true, false), (false, true), (false, false)];
        let refusals = [
            None,
            Some(("limits", "hold")),
            Some(("limits", "dispatch")),
            Some(("mission", "hold")),
            Some(("mission", "dispatch")),
        ];
        for placement in placements {
            for refuse in refusals {
                let (log, failed, flag) = run(placement, refuse);
                assert_eq!(failed, refuse.is_some(), "{placement:?} {refuse:?}");
                let had = |name: &str, what: &str| log.contains(&format!("{name} {what}"));
                let mut standalone_dispatched = false;
                for (name, in_store) in [("limits", placement.0), ("mission", placement.1)] {
                    let refused_here = refuse.is_some_and(|r| r.0 == name);
                    let held = had(name, "hold") && refuse != Some((name, "hold"));
                    let dispatched = had(name, "dispatch") && !refused_here;
                    if !in_store && held && !dispatched && refuse != Some((name, "dispatch")) {
                        assert!(
                            had(name, "release"),
                            "{placement:?} {refuse:?}: {name} left held: {log:?}"
                        );
                    }
                    if !in_store && dispatched {
                        standalone_dispatched = true;
                        assert!(!had(name, "release"), "{log:?}");
                        if let Some((r, step)) = refuse {
                            assert_ne!(r, name);
                            assert_eq!(
                                (step, placement.0 || placement.1),
                                ("dispatch", false),
                                "{placement:?} {refuse:?}: only a standalone dispatch refusal may find {name} dispatched: {log:?}"
                            );
                        }
                    }
                }
                assert_eq!(flag, standalone_dispatched, "{placement:?} {refuse:?}");
                // Holds come in order; a standalone dispatch never precedes a store-file one.
                let pos = |s: &str| log.iter().position(|x| x == s);
                if let (Some(a), Some(b)) = (pos("limits hold"), pos("mission hold")) {
                    assert!(a < b);
                }
                for (st, sa) in [("limits", "mission"), ("mission", "limits")] {
                    let st_in_store = if st == "limits" {
                        placement.0
                    } else {
                        placement.1
                    };
                    let sa_in_store = if sa == "limits" {
                        placement.0
                    } else {
                        placement.1
                    };
                    if st_in_store && !sa_in_store {
                        if let (Some(a), Some(b)) = (
                            pos(&format!("{st} dispatch")),
                            pos(&format!("{sa} dispatch")),
                        ) {
                            assert!(a < b, "{placement:?}: {log:?}");
                        }
                    }
                }
            }
        }
    }
}
