//! The commands that move an attempt or a scope on (limits.md §5–§6): `reserve`, `dispatch`,
//! `settle`, `reconcile`, `release`, `stop` and `adjust`, each checked in §6 precedence order
//! against the working set [`super::apply_db`] loaded, inside the caller's transaction.

use super::*;

pub(super) fn reserve(cx: &mut Ctx<'_>) -> Result<Verdict, Error> {
    let Command::Reserve {
        attempt_id,
        operation_id,
        scope_id,
        run_id,
        purpose,
        amount,
        max_active_ms,
        paired,
    } = &cx.req.command
    else {
        return Err(Error::corrupt("reserve dispatch"));
    };
    let (amount, max_active) = (amount.get(), max_active_ms.get());
    // (9)
    if *purpose == Purpose::Handoff && cx.actor.actor_kind == ActorKind::Agent {
        return Err(cx.not_permitted("HANDOFF reservations are host-authorised (HOST or HUMAN)"));
    }
    if *paired && cx.actor.actor_kind != ActorKind::Host {
        return Err(cx.not_permitted("only the HOST pairs reservations with World effects"));
    }
    // (12)(13)(14)
    if let Some(v) = cx.check_request()? {
        return Ok(v);
    }
    cx.check_revision()?;
    // (15)
    let Some(chain) = load_chain(cx.tx, scope_id)? else {
        return Err(cx.reject(Code::ScopeNotFound).scope(scope_id).into());
    };
    // (17)
    if load_attempt(cx.tx, attempt_id)?.is_some() {
        return Err(cx.reject(Code::AttemptIdExists).attempt(attempt_id).into());
    }
    // (24)
    if let Some(r) = chain.rows.iter().find(|r| r.stopped_at.is_some()) {
        return Err(cx.reject(Code::ScopeStopped).scope(&r.id).into());
    }
    check_dependencies(cx, &chain)?;
    check_elapsed_and_attempts(cx, &chain)?;
    let overflow = check_usage(cx, &chain, *purpose, amount)?;
    check_active(cx, &chain, max_active)?;
    // (33)
    let delta = match purpose {
        Purpose::Ordinary => Delta {
            ordinary: (amount, 0),
            active: (max_active, 0),
            attempts: 1,
            ..Delta::default()
        },
        Purpose::Handoff => Delta {
            handoff: (amount, 0),
            active: (max_active, 0),
            attempts: 1,
            ..Delta::default()
        },
    };
    let planned = plan_delta(&chain, &delta)?;
    let Some(new) = planned.filter(|_| !overflow) else {
        return Err(cx.reject(Code::OverflowsUsage).scope(scope_id).into());
    };
    // (34)
    cx.check_time()?;
    // Apply.
    write_delta(cx.tx, &chain, &new)?;
    let rev_next = i64::try_from(cx.meta.revision + 1).map_err(|_| Error::corrupt("revision"))?;
    cx.tx
        .exec("INSERT INTO limits_attempts (attempt_id, operation_id, scope_id, run_id, purpose, amount, max_active_ms, \
             state, paired, reserved_at_ms, actor_id, actor_kind, revision) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'RESERVED', ?8, ?9, ?10, ?11, ?12)", &vals![
            attempt_id,
            operation_id,
            scope_id,
            run_id,
            purpose.as_str(),
            amount.to_string(),
            max_active.to_string(),
            paired,
            cx.now.to_string(),
            cx.actor.actor_id,
            cx.actor.actor_kind.as_str(),
            rev_next
        ])?;
    let ok = Verdict::new(Code::Ok, 0)
        .scope(scope_id)
        .attempt(attempt_id);
    cx.commit(ok, serde_json::json!({ "chain": chain.rows.iter().map(|r| r.id.as_str()).collect::<Vec<_>>() }))
}

/// (25): no scope of the chain depends on a blocked scope.
fn check_dependencies(cx: &Ctx<'_>, chain: &Chain) -> Result<(), Error> {
    // (25)
    if chain.rows.iter().any(|r| !r.depends_on.is_empty()) {
        let view = super::super::report::View::load(cx.tx, cx.now)?;
        for r in &chain.rows {
            for d in &r.depends_on {
                if view.is_blocked(d) {
                    return Err(cx
                        .reject(Code::DependencyBlocked)
                        .scope(d)
                        .because(format!("scope {} depends on {d}, which is blocked", r.id))
                        .into());
                }
            }
        }
    }
    Ok(())
}

/// (26)(27): no scope of the chain has used up its elapsed time or its attempts.
fn check_elapsed_and_attempts(cx: &Ctx<'_>, chain: &Chain) -> Result<(), Error> {
    // (26)
    for (i, (row, eff)) in chain.rows.iter().zip(&chain.eff).enumerate() {
        if let Some(e) = eff.elapsed_ms {
            let used = elapsed_at(chain, i, cx.now);
            if used >= e.get() {
                return Err(cx
                    .reject(Code::ElapsedMsExhausted)
                    .scope(&row.id)
                    .limit(LimitKind::ElapsedMs, e, Amount(used), Amount(0))
                    .into());
            }
        }
    }
    // (27)
    for (row, eff) in chain.rows.iter().zip(&chain.eff) {
        if let Some(n) = eff.attempts {
            if row.attempts.checked_add(1).is_none_or(|v| v > n.get()) {
                return Err(cx
                    .reject(Code::AttemptsExhausted)
                    .scope(&row.id)
                    .limit(LimitKind::Attempts, n, Amount(row.attempts), Amount(1))
                    .into());
            }
        }
    }
    Ok(())
}

/// (28)(29)(30): `amount` of `purpose` fits every scope's cost and handoff bounds, target to
/// root; `Ok(true)` when a usage would overflow without a bound ((33) refuses it).
fn check_usage(cx: &Ctx<'_>, chain: &Chain, purpose: Purpose, amount: u128) -> Result<bool, Error> {
    let mut overflow = false;
    // (28)(29)(30): kind group handoff/cost, target to root.
    for (row, eff) in chain.rows.iter().zip(&chain.eff) {
        let cost_used = row.usage_ordinary.checked_add(row.usage_handoff);
        let over = |used: Option<u128>, bound: Option<Amount>| -> (bool, bool) {
            // (exceeds a bound, overflows without one)
            match (used.and_then(|u| u.checked_add(amount)), bound) {
                (Some(total), Some(b)) => (total > b.get(), false),
                (None, Some(_)) => (true, false),
                (Some(_), None) => (false, false),
                (None, None) => (false, true),
            }
        };
        let fail = |code: Code, kind: LimitKind, bound: u128, used: Option<u128>| -> Error {
            cx.reject(code)
                .scope(&row.id)
                .limit(
                    kind,
                    Amount(bound),
                    Amount(used.unwrap_or(u128::MAX)),
                    Amount(amount),
                )
                .into()
        };
        match purpose {
            Purpose::Ordinary => {
                if let Some(c) = eff.cost {
                    let p = eff.handoff.map_or(0, Amount::get);
                    let allowance = c.get().saturating_sub(p);
                    let (exceeds, _) = over(Some(row.usage_ordinary), Some(Amount(allowance)));
                    if exceeds {
                        let code = if p > 0 {
                            Code::HandoffProtected
                        } else {
                            Code::CostExhausted
                        };
                        return Err(fail(
                            code,
                            LimitKind::Cost,
                            allowance,
                            Some(row.usage_ordinary),
                        ));
                    }
                }
                let (exceeds, of) = over(cost_used, eff.cost);
                if exceeds {
                    let c = eff.cost.map_or(0, Amount::get);
                    return Err(fail(Code::CostExhausted, LimitKind::Cost, c, cost_used));
                }
                overflow |= of || row.usage_ordinary.checked_add(amount).is_none();
            }
            Purpose::Handoff => {
                let (exceeds, of) = over(Some(row.usage_handoff), eff.handoff);
                if exceeds {
                    let p = eff.handoff.map_or(0, Amount::get);
                    return Err(fail(
                        Code::HandoffExhausted,
                        LimitKind::Handoff,
                        p,
                        Some(row.usage_handoff),
                    ));
                }
                overflow |= of;
                let (exceeds, of) = over(cost_used, eff.cost);
                if exceeds {
                    let c = eff.cost.map_or(0, Amount::get);
                    return Err(fail(Code::CostExhausted, LimitKind::Cost, c, cost_used));
                }
                overflow |= of;
            }
        }
    }
    Ok(overflow)
}

/// (31): `max_active` more milliseconds fit every scope's active-time bound.
fn check_active(cx: &Ctx<'_>, chain: &Chain, max_active: u128) -> Result<(), Error> {
    // (31)
    for (row, eff) in chain.rows.iter().zip(&chain.eff) {
        if let Some(a) = eff.active_ms {
            let live = live_under(cx.tx, &row.id, cx.now)?;
            let used = live.and_then(|l| l.checked_add(row.active_static));
            let total = used.and_then(|u| u.checked_add(max_active));
            if total.is_none_or(|t| t > a.get()) {
                return Err(cx
                    .reject(Code::ActiveMsExhausted)
                    .scope(&row.id)
                    .limit(
                        LimitKind::ActiveMs,
                        a,
                        Amount(used.unwrap_or(u128::MAX)),
                        Amount(max_active),
                    )
                    .into());
            }
        }
    }
    Ok(())
}

pub(super) fn state_code(state: State) -> Option<Code> {
    match state {
        State::Settled => Some(Code::AttemptAlreadySettled),
        State::Released => Some(Code::AttemptAlreadyReleased),
        _ => None,
    }
}

pub(super) fn dispatch(cx: &mut Ctx<'_>, attempt_id: &str) -> Result<Verdict, Error> {
    let attempt = load_attempt(cx.tx, attempt_id)?;
    // (9)
    if let Some(a) = &attempt {
        let kind = cx.actor.actor_kind;
        if kind != ActorKind::Host && kind.as_str() != a.actor_kind {
            return Err(cx.not_permitted("dispatch is for the reserving actor kind or the HOST"));
        }
    }
    if let Some(v) = cx.check_request()? {
        return Ok(v);
    }
    cx.check_revision()?;
    let Some(a) = attempt else {
        return Err(cx.reject(Code::AttemptNotFound).attempt(attempt_id).into());
    };
    if matches!(a.state, State::Dispatched | State::Unknown) {
        return Err(cx
            .reject(Code::AttemptNotReserved)
            .attempt(attempt_id)
            .into());
    }
    if let Some(code) = state_code(a.state) {
        return Err(cx.reject(code).attempt(attempt_id).into());
    }
    let chain = load_chain(cx.tx, &a.scope_id)?
        .ok_or_else(|| Error::corrupt(format!("attempt {attempt_id}: scope missing")))?;
    if let Some(r) = chain.rows.iter().find(|r| r.stopped_at.is_some()) {
        return Err(cx
            .reject(Code::ScopeStopped)
            .scope(&r.id)
            .attempt(attempt_id)
            .into());
    }
    for (i, (row, eff)) in chain.rows.iter().zip(&chain.eff).enumerate() {
        if let Some(e) = eff.elapsed_ms {
            let used = elapsed_at(&chain, i, cx.now);
            if used >= e.get() {
                return Err(cx
                    .reject(Code::ElapsedMsExhausted)
                    .scope(&row.id)
                    .attempt(attempt_id)
                    .limit(LimitKind::ElapsedMs, e, Amount(used), Amount(0))
                    .into());
            }
        }
    }
    cx.check_time()?;
    let delta = Delta {
        active: (0, a.max_active_ms),
        ..Delta::default()
    };
    let new =
        plan_delta(&chain, &delta)?.ok_or_else(|| Error::corrupt("dispatch cannot overflow"))?;
    write_delta(cx.tx, &chain, &new)?;
    cx.tx
        .exec("UPDATE limits_attempts SET state = 'DISPATCHED', dispatched_at_ms = ?1 WHERE attempt_id = ?2", &vals![cx.now.to_string(), attempt_id])?;
    let ok = Verdict::new(Code::Ok, 0)
        .scope(&a.scope_id)
        .attempt(attempt_id);
    cx.commit(ok, serde_json::json!({}))
}

/// The settled active time of a live attempt settled at `now`.
pub(super) fn settled_active(cx: &Ctx<'_>, a: &AttemptRow) -> Result<u128, Error> {
    let d = a
        .dispatched_at
        .ok_or_else(|| Error::corrupt(format!("attempt {}: no dispatched_at_ms", a.id)))?;
    let freeze = freeze_of(cx.tx, &a.scope_id)?;
    let end = freeze.map_or(cx.now, |f| f.min(cx.now));
    Ok(end.saturating_sub(d))
}

pub(super) fn cost_delta(purpose: Purpose, sub: u128, add: u128) -> Delta {
    match purpose {
        Purpose::Ordinary => Delta {
            ordinary: (add, sub),
            ..Delta::default()
        },
        Purpose::Handoff => Delta {
            handoff: (add, sub),
            ..Delta::default()
        },
    }
}

pub(super) fn settle(
    cx: &mut Ctx<'_>,
    attempt_id: &str,
    outcome: Outcome,
    actual: Option<Amount>,
    effect_outcome: bool,
) -> Result<Verdict, Error> {
    // (9)
    match cx.actor.actor_kind {
        ActorKind::Human => {
            return Err(
                cx.not_permitted("settle is for the AGENT or the HOST; a human uses reconcile")
            )
        }
        ActorKind::Agent if outcome == Outcome::Unknown => {
            return Err(cx.not_permitted("only the HOST declares an UNKNOWN outcome"))
        }
        ActorKind::Agent if effect_outcome => {
            return Err(cx.not_permitted("only the HOST settles from an effect outcome"))
        }
        _ => {}
    }
    if let Some(v) = cx.check_request()? {
        return Ok(v);
    }
    cx.check_revision()?;
    let Some(a) = load_attempt(cx.tx, attempt_id)? else {
        return Err(cx.reject(Code::AttemptNotFound).attempt(attempt_id).into());
    };
    let at = |code: Code| -> Error {
        cx.reject(code)
            .scope(&a.scope_id)
            .attempt(attempt_id)
            .into()
    };
    match a.state {
        State::Reserved => return Err(at(Code::AttemptNotDispatched)),
        State::Settled => return Err(at(Code::AttemptAlreadySettled)),
        State::Released => return Err(at(Code::AttemptAlreadyReleased)),
        State::Unknown => return Err(at(Code::AttemptUnknownRequiresReconciliation)),
        State::Dispatched => {}
    }
    // Checked before exposure_exceeded so that only an otherwise valid settlement can leave a
    // violation trace (docs/DECISIONS.md DEC-LIM-8).
    if a.paired && !effect_outcome {
        return Err(at(Code::AttemptPairedToEffect));
    }
    cx.check_time()?;
    let chain = load_chain(cx.tx, &a.scope_id)?
        .ok_or_else(|| Error::corrupt(format!("attempt {attempt_id}: scope missing")))?;
    if outcome == Outcome::Unknown {
        cx.tx
            .exec("UPDATE limits_attempts SET state = 'UNKNOWN', outcome = 'UNKNOWN' WHERE attempt_id = ?1", &vals![attempt_id])?;
        let ok = Verdict::new(Code::Ok, 0)
            .scope(&a.scope_id)
            .attempt(attempt_id);
        return cx.commit(ok, serde_json::json!({ "outcome": "UNKNOWN" }));
    }
    let actual = actual.map_or(0, Amount::get);
    // (32)
    if actual > a.amount {
        cx.tx
            .exec("INSERT INTO limits_violations (attempt_id, scope_id, admitted, claimed, actor_id, actor_kind, at_ms, revision) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", &vals![
                attempt_id,
                a.scope_id,
                a.amount.to_string(),
                actual.to_string(),
                cx.actor.actor_id,
                cx.actor.actor_kind.as_str(),
                cx.now.to_string(),
                i64::try_from(cx.meta.revision).unwrap_or(i64::MAX)
            ])?;
        return Err(cx
            .reject(Code::ExposureExceeded)
            .scope(&a.scope_id)
            .attempt(attempt_id)
            .limit(LimitKind::Cost, Amount(a.amount), Amount(a.amount), Amount(actual))
            .because("actual cost above the admitted amount: control violation recorded, reservation kept")
            .into());
    }
    let active = settled_active(cx, &a)?;
    let mut delta = cost_delta(a.purpose, a.amount, actual);
    delta.active = (active, 0);
    let Some(new) = plan_delta(&chain, &delta)? else {
        return Err(cx
            .reject(Code::OverflowsUsage)
            .scope(&a.scope_id)
            .attempt(attempt_id)
            .into());
    };
    write_delta(cx.tx, &chain, &new)?;
    cx.tx
        .exec("UPDATE limits_attempts SET state = 'SETTLED', outcome = ?1, actual_cost = ?2, settled_at_ms = ?3, \
             settled_active_ms = ?4 WHERE attempt_id = ?5", &vals![
            if outcome == Outcome::Failed { "FAILED" } else { "SUCCEEDED" },
            actual.to_string(),
            cx.now.to_string(),
            active.to_string(),
            attempt_id
        ])?;
    let ok = Verdict::new(Code::Ok, 0)
        .scope(&a.scope_id)
        .attempt(attempt_id);
    cx.commit(ok, serde_json::json!({ "activeMs": active.to_string() }))
}

pub(super) fn open_violations(conn: &dyn Db, attempt_id: &str) -> Result<i64, Error> {
    query_one(
        conn,
        "SELECT count(*) FROM limits_violations WHERE attempt_id = ?1 AND resolved_revision IS NULL",
        &vals![attempt_id],
    )?
    .int(0)
    .map_err(Error::from)
}

pub(super) fn reconcile(
    cx: &mut Ctx<'_>,
    attempt_id: &str,
    actual: Amount,
    evidence_ref: Option<&str>,
    evidence: &dyn EvidenceCheck,
) -> Result<Verdict, Error> {
    if cx.actor.actor_kind != ActorKind::Human {
        return Err(cx.not_permitted("reconcile is an attended HUMAN act"));
    }
    cx.check_evidence(evidence_ref, true, evidence)?;
    if let Some(v) = cx.check_request()? {
        return Ok(v);
    }
    cx.check_revision()?;
    let Some(a) = load_attempt(cx.tx, attempt_id)? else {
        return Err(cx.reject(Code::AttemptNotFound).attempt(attempt_id).into());
    };
    let violated = open_violations(cx.tx, attempt_id)? > 0;
    let reconcilable = match a.state {
        State::Unknown => true,
        State::Dispatched => a.paired || violated,
        State::Settled => violated,
        State::Reserved | State::Released => false,
    };
    let actual = actual.get();
    let mut planned = None;
    if reconcilable {
        let chain = load_chain(cx.tx, &a.scope_id)?
            .ok_or_else(|| Error::corrupt(format!("attempt {attempt_id}: scope missing")))?;
        let (delta, active) = if a.state == State::Settled {
            let old = a.actual_cost.ok_or_else(|| {
                Error::corrupt(format!("settled attempt {attempt_id} without actual"))
            })?;
            (cost_delta(a.purpose, old, actual), None)
        } else {
            let active = settled_active(cx, &a)?;
            let mut d = cost_delta(a.purpose, a.amount, actual);
            d.active = (active, 0);
            (d, Some(active))
        };
        let Some(new) = plan_delta(&chain, &delta)? else {
            return Err(cx
                .reject(Code::OverflowsUsage)
                .scope(&a.scope_id)
                .attempt(attempt_id)
                .into());
        };
        planned = Some((chain, new, active));
    }
    cx.check_time()?;
    let Some((chain, new, active)) = planned else {
        return Err(cx
            .reject(Code::AttemptNotReconcilable)
            .scope(&a.scope_id)
            .attempt(attempt_id)
            .because(format!("attempt is {}", a.state.as_str()))
            .into());
    };
    write_delta(cx.tx, &chain, &new)?;
    let next = i64::try_from(cx.meta.revision + 1).map_err(|_| Error::corrupt("revision"))?;
    match active {
        Some(active) => cx
            .tx
            .exec("UPDATE limits_attempts SET state = 'SETTLED', outcome = 'RECONCILED', actual_cost = ?1, \
                 settled_at_ms = ?2, settled_active_ms = ?3 WHERE attempt_id = ?4", &vals![actual.to_string(), cx.now.to_string(), active.to_string(), attempt_id])?,
        None => cx
            .tx
            .exec("UPDATE limits_attempts SET outcome = 'RECONCILED', actual_cost = ?1 WHERE attempt_id = ?2", &vals![actual.to_string(), attempt_id])?,
    };
    cx.tx
        .exec("UPDATE limits_violations SET resolved_revision = ?1 WHERE attempt_id = ?2 AND resolved_revision IS NULL", &vals![next, attempt_id])?;
    let ok = Verdict::new(Code::Ok, 0)
        .scope(&a.scope_id)
        .attempt(attempt_id);
    cx.commit(
        ok,
        serde_json::json!({
            "previousState": a.state.as_str(),
            "admitted": a.amount.to_string(),
            "exceedsAdmitted": actual > a.amount,
        }),
    )
}

pub(super) fn release(
    cx: &mut Ctx<'_>,
    attempt_id: &str,
    never_dispatched: bool,
) -> Result<Verdict, Error> {
    if never_dispatched && cx.actor.actor_kind != ActorKind::Host {
        return Err(cx.not_permitted("only the HOST releases a never-dispatched paired attempt"));
    }
    let attempt = load_attempt(cx.tx, attempt_id)?;
    if let Some(a) = &attempt {
        if cx.actor.actor_kind == ActorKind::Agent && a.actor_id != cx.actor.actor_id {
            return Err(cx.not_permitted("an AGENT may release only its own reservations"));
        }
    }
    if let Some(v) = cx.check_request()? {
        return Ok(v);
    }
    cx.check_revision()?;
    let Some(a) = attempt else {
        return Err(cx.reject(Code::AttemptNotFound).attempt(attempt_id).into());
    };
    let at = |code: Code| -> Error {
        cx.reject(code)
            .scope(&a.scope_id)
            .attempt(attempt_id)
            .into()
    };
    match a.state {
        State::Dispatched | State::Unknown => return Err(at(Code::AttemptDispatched)),
        State::Settled => return Err(at(Code::AttemptAlreadySettled)),
        State::Released => return Err(at(Code::AttemptAlreadyReleased)),
        State::Reserved => {}
    }
    cx.check_time()?;
    // A paired attempt is settled by the broker or a human; the one exception is the HOST
    // giving back a standalone reservation whose effect never reached the store (pairing.rs).
    if a.paired && !never_dispatched {
        return Err(at(Code::AttemptPairedToEffect));
    }
    let chain = load_chain(cx.tx, &a.scope_id)?
        .ok_or_else(|| Error::corrupt(format!("attempt {attempt_id}: scope missing")))?;
    let mut delta = cost_delta(a.purpose, a.amount, 0);
    delta.active = (0, a.max_active_ms);
    let new =
        plan_delta(&chain, &delta)?.ok_or_else(|| Error::corrupt("release cannot overflow"))?;
    write_delta(cx.tx, &chain, &new)?;
    cx.tx.exec(
        "UPDATE limits_attempts SET state = 'RELEASED', settled_at_ms = ?1 WHERE attempt_id = ?2",
        &vals![cx.now.to_string(), attempt_id],
    )?;
    let ok = Verdict::new(Code::Ok, 0)
        .scope(&a.scope_id)
        .attempt(attempt_id);
    cx.commit(ok, serde_json::json!({}))
}

pub(super) fn is_within(conn: &dyn Db, scope_id: &str, ancestor_id: &str) -> Result<bool, Error> {
    Ok(query_one(
        conn,
        "SELECT count(*) FROM limits_closure WHERE scope_id = ?1 AND ancestor_id = ?2",
        &vals![scope_id, ancestor_id],
    )?
    .int(0)?
        > 0)
}

pub(super) fn stop(
    cx: &mut Ctx<'_>,
    scope_id: &str,
    reason: &str,
    evidence_ref: Option<&str>,
    evidence: &dyn EvidenceCheck,
) -> Result<Verdict, Error> {
    if cx.actor.actor_kind == ActorKind::Agent {
        let episode = cx
            .actor
            .policy_ref
            .as_deref()
            .and_then(|p| p.strip_prefix("episode:"));
        let own = match episode {
            Some(ep) => is_within(cx.tx, scope_id, ep)?,
            None => false,
        };
        if !own {
            return Err(
                cx.not_permitted("an AGENT may stop only its own episode's scope or a descendant")
            );
        }
    }
    cx.check_evidence(evidence_ref, false, evidence)?;
    if let Some(v) = cx.check_request()? {
        return Ok(v);
    }
    cx.check_revision()?;
    let Some(chain) = load_chain(cx.tx, scope_id)? else {
        return Err(cx.reject(Code::ScopeNotFound).scope(scope_id).into());
    };
    if let Some(r) = chain.rows.iter().find(|r| r.stopped_at.is_some()) {
        return Err(cx.reject(Code::ScopeStopped).scope(&r.id).into());
    }
    cx.check_time()?;
    cx.tx.exec(
        "UPDATE limits_scopes SET stopped_at_ms = ?1, stop_reason = ?2 WHERE scope_id = ?3",
        &vals![cx.now.to_string(), reason, scope_id],
    )?;
    let ok = Verdict::new(Code::Ok, 0).scope(scope_id);
    cx.commit(
        ok,
        serde_json::json!({ "reason": reason, "evidenceRef": evidence_ref }),
    )
}

pub(super) fn adjust(cx: &mut Ctx<'_>, evidence: &dyn EvidenceCheck) -> Result<Verdict, Error> {
    let Command::Adjust {
        scope_id,
        limits,
        resume,
        evidence_ref,
    } = &cx.req.command
    else {
        return Err(Error::corrupt("adjust dispatch"));
    };
    if cx.actor.actor_kind != ActorKind::Human {
        return Err(
            cx.not_permitted("adjust is an attended HUMAN act (seed 002: no agent raises budgets)")
        );
    }
    cx.check_evidence(evidence_ref.as_deref(), true, evidence)?;
    if let Some(v) = cx.check_request()? {
        return Ok(v);
    }
    cx.check_revision()?;
    let all = super::super::report::load_scopes(cx.tx)?;
    let Some(target) = all.iter().find(|s| &s.id == scope_id) else {
        return Err(cx.reject(Code::ScopeNotFound).scope(scope_id).into());
    };
    let mut bounds = target.own;
    for kind in LimitKind::ALL {
        if let Some(v) = limits.get(kind) {
            bounds.set(kind, v);
        }
    }
    let configs: Vec<ScopeConfig> = all
        .iter()
        .map(|s| ScopeConfig {
            scope_id: s.id.clone(),
            kind: s.kind,
            parent_id: s.parent.clone(),
            limits: s.own,
            depends_on: s.depends_on.clone(),
        })
        .collect();
    let overrides = HashMap::from([(scope_id.clone(), bounds)]);
    if let Err(e) = config::validate_bounds(&configs, &overrides) {
        return Err(cx
            .reject(Code::ConfigInvalid)
            .scope(scope_id)
            .because(e.0)
            .into());
    }
    cx.check_time()?;
    let text = |a: Option<Amount>| a.map(|v| v.to_string());
    cx.tx.exec(
        "UPDATE limits_scopes SET bound_cost = ?1, bound_handoff = ?2, bound_active_ms = ?3, bound_elapsed_ms = ?4, \
         bound_attempts = ?5 WHERE scope_id = ?6",
        &vals![
            text(bounds.cost),
            text(bounds.handoff),
            text(bounds.active_ms),
            text(bounds.elapsed_ms),
            text(bounds.attempts),
            scope_id
        ],
    )?;
    let was_stopped = target.stopped_at.is_some();
    if *resume {
        cx.tx.exec(
            "UPDATE limits_scopes SET stopped_at_ms = NULL, stop_reason = NULL WHERE scope_id = ?1",
            &vals![scope_id],
        )?;
    }
    let change_ref = cx.req.command.change_ref().map(|r| r.to_string());
    let ok = Verdict::new(Code::Ok, 0).scope(scope_id);
    cx.commit(
        ok,
        serde_json::json!({
            "changeRef": change_ref,
            "previous": target.own,
            "bounds": bounds,
            "resumed": *resume && was_stopped,
        }),
    )
}
