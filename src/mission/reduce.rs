//! `reduce(state, command, now) -> state' | rejection` (missions.md §4): pure, no I/O.
//!
//! Every command first checks (read-only) and only then changes the state, so a rejection
//! never leaves a half-applied state behind; [`apply`] mutates in place on success only, and
//! [`reduce`] / [`reduce_as`] return a new state.

use std::collections::BTreeSet;

use crate::encoding::trcjson::{self, CValue};
use crate::encoding::HashRef;
use crate::ledger::{ActorKind, Amount};

use super::codes::{Code, Rejection};
use super::command::{Admit, Command, GrantSpec, Outcome};
use super::contract::Contract;
use super::state::{
    Actor, Approval, Attempt, AttemptStatus, Grant, Operation, Run, RunStatus, State, Violation,
};

/// Reduce as the HOST (the seed's `reduce`).
///
/// # Errors
/// The [`Rejection`] of the first failing check (§4.1, §4.2 precedence); the input state is
/// untouched (for `EXPOSURE_EXCEEDED`, append the rejection's violation with
/// [`State::with_violation`]).
pub fn reduce(state: &State, command: &Command, now: Amount) -> Result<State, Rejection> {
    reduce_as(state, command, now, &Actor::host())
}

/// Reduce as `actor`.
///
/// # Errors
/// As [`reduce`].
pub fn reduce_as(
    state: &State,
    command: &Command,
    now: Amount,
    actor: &Actor,
) -> Result<State, Rejection> {
    let mut next = state.clone();
    apply(&mut next, command, now, actor)?;
    Ok(next)
}

/// Apply `command` to `state` in place. On `Err` the state is exactly as it was.
///
/// # Errors
/// As [`reduce`].
pub fn apply(
    state: &mut State,
    command: &Command,
    now: Amount,
    actor: &Actor,
) -> Result<(), Rejection> {
    if now < state.last_now {
        return Err(Rejection::new(
            Code::TimeRegressed,
            "now is earlier than the mission's last recorded time",
        )
        .amount("now", now)
        .amount("lastNow", state.last_now));
    }
    match command {
        Command::StartRun { run_id } => start_run(state, run_id, now, actor)?,
        Command::Grant { grant, parent_id } => {
            grant_cmd(state, grant, parent_id.as_deref(), now, actor)?
        }
        Command::Admit(a) => admit(state, a, now, actor)?,
        Command::Dispatch { attempt_id } => dispatch(state, attempt_id, now, actor)?,
        Command::Settle {
            attempt_id,
            outcome,
            actual_cost,
        } => settle(state, attempt_id, *outcome, *actual_cost, now, actor)?,
        Command::Release { attempt_id } => release(state, attempt_id, now, actor)?,
        Command::Reconcile {
            attempt_id,
            actual_cost,
            outcome,
            evidence_ref,
        } => reconcile(
            state,
            attempt_id,
            *actual_cost,
            *outcome,
            evidence_ref,
            now,
            actor,
        )?,
        Command::Approve {
            operation_id,
            evidence_ref,
        } => approve(state, operation_id, evidence_ref, now, actor)?,
        Command::Revoke { grant_id } => revoke(state, grant_id, actor)?,
        Command::CompleteRun { run_id, criteria } => {
            complete_run(state, run_id, criteria, now, actor)?
        }
    }
    state.revision = Amount(state.revision.0 + 1);
    state.last_now = now;
    Ok(())
}

fn not_permitted(actor: &Actor, what: &str) -> Rejection {
    Rejection::new(
        Code::ActorNotPermitted,
        format!("{} {} may not {what}", actor.kind.as_str(), actor.id),
    )
    .with("actorKind", actor.kind.as_str())
}

fn host_or_human(actor: &Actor, what: &str) -> Result<(), Rejection> {
    match actor.kind {
        ActorKind::Agent => Err(not_permitted(actor, what)),
        _ => Ok(()),
    }
}

fn human_only(actor: &Actor, what: &str) -> Result<(), Rejection> {
    match actor.kind {
        ActorKind::Human => Ok(()),
        _ => Err(not_permitted(actor, &format!("{what} (a HUMAN act)"))),
    }
}

fn deadline(state: &State, now: Amount) -> Result<(), Rejection> {
    if now >= state.contract.deadline {
        return Err(
            Rejection::new(Code::DeadlinePassed, "now is at or past the deadline")
                .amount("now", now)
                .amount("deadline", state.contract.deadline),
        );
    }
    Ok(())
}

fn start_run(state: &mut State, run_id: &str, now: Amount, actor: &Actor) -> Result<(), Rejection> {
    host_or_human(actor, "start a run")?;
    if state.runs.contains_key(run_id) {
        return Err(
            Rejection::new(Code::RunExists, "the run id is already used").with("runId", run_id),
        );
    }
    deadline(state, now)?;
    state.runs.insert(
        run_id.to_string(),
        Run {
            status: RunStatus::Active,
            started_at: now,
            completed_at: None,
            criteria: Default::default(),
        },
    );
    Ok(())
}

fn subset(child: &[String], parent: &[String]) -> Option<String> {
    child.iter().find(|c| !parent.contains(c)).cloned()
}

/// Check a chain for missing or revoked grants (§4.2 row 4).
fn live_chain<'s>(
    state: &'s State,
    grant_id: &str,
) -> Result<Vec<(&'s str, &'s Grant)>, Rejection> {
    let chain = state.chain(grant_id).map_err(|missing| {
        Rejection::new(Code::GrantNotFound, "no such grant in the chain")
            .with("grantId", missing.grant_id())
    })?;
    if let Some((id, _)) = chain.iter().find(|(_, g)| g.revoked) {
        return Err(
            Rejection::new(Code::GrantRevoked, "the grant or an ancestor is revoked")
                .with("grantId", id),
        );
    }
    Ok(chain)
}

fn grant_cmd(
    state: &mut State,
    spec: &GrantSpec,
    parent_id: Option<&str>,
    now: Amount,
    actor: &Actor,
) -> Result<(), Rejection> {
    if parent_id.is_none() {
        host_or_human(actor, "issue a root grant")?;
    }
    if state.grants.contains_key(&spec.id) {
        return Err(
            Rejection::new(Code::GrantExists, "the grant id is already used")
                .with("grantId", &spec.id),
        );
    }
    if let Some(pid) = parent_id {
        let chain = live_chain(state, pid)?;
        let parent = chain[0].1;
        if actor.kind == ActorKind::Agent
            && actor.subject.as_deref() != Some(parent.subject.as_str())
        {
            return Err(not_permitted(actor, "delegate a grant it does not hold")
                .with("parentId", pid)
                .with("parentSubject", &parent.subject));
        }
        if !parent.can_delegate {
            return Err(Rejection::new(
                Code::DelegationNotAllowed,
                "the parent grant has canDelegate false",
            )
            .with("parentId", pid));
        }
        if parent.depth == Amount::ZERO || spec.depth >= parent.depth {
            return Err(Rejection::new(
                Code::DelegationDepthExceeded,
                "a delegation's depth must be at most the parent's depth - 1",
            )
            .with("parentId", pid)
            .amount("parentDepth", parent.depth)
            .amount("depth", spec.depth));
        }
        let att = |what: &str| {
            Rejection::new(
                Code::AttenuationViolated,
                format!("a delegation may only attenuate: {what} is wider than the parent's"),
            )
            .with("parentId", pid)
        };
        if let Some(x) = subset(&spec.actions, &parent.actions) {
            return Err(att("actions").with("action", x));
        }
        if let Some(x) = subset(&spec.resources, &parent.resources) {
            return Err(att("resources").with("resource", x));
        }
        if spec.not_before < parent.not_before || spec.expires_at > parent.expires_at {
            return Err(att("the window")
                .amount("notBefore", spec.not_before)
                .amount("expiresAt", spec.expires_at)
                .amount("parentNotBefore", parent.not_before)
                .amount("parentExpiresAt", parent.expires_at));
        }
        if spec.limit > parent.limit {
            return Err(att("the limit")
                .amount("limit", spec.limit)
                .amount("parentLimit", parent.limit));
        }
    } else {
        let c = &state.contract;
        let wide = |what: &str| {
            Rejection::new(
                Code::GrantExceedsContract,
                format!("a root grant's {what} must lie inside the contract's"),
            )
            .with("grantId", &spec.id)
        };
        if let Some(x) = subset(&spec.actions, &c.actions) {
            return Err(wide("actions").with("action", x));
        }
        if let Some(x) = subset(&spec.resources, &c.resources) {
            return Err(wide("resources").with("resource", x));
        }
        if spec.limit > c.budget {
            return Err(wide("limit")
                .amount("limit", spec.limit)
                .amount("budget", c.budget));
        }
        if spec.expires_at > c.deadline {
            return Err(wide("expiresAt")
                .amount("expiresAt", spec.expires_at)
                .amount("deadline", c.deadline));
        }
    }
    state.grants.insert(
        spec.id.clone(),
        Grant {
            parent_id: parent_id.map(str::to_string),
            subject: spec.subject.clone(),
            actions: spec.actions.clone(),
            resources: spec.resources.clone(),
            not_before: spec.not_before,
            expires_at: spec.expires_at,
            limit: spec.limit,
            can_delegate: spec.can_delegate,
            depth: spec.depth,
            used: Amount::ZERO,
            revoked: false,
            granted_at: now,
        },
    );
    Ok(())
}

/// The outbox intent of an admitted attempt: the TR-CJSON-1 object `{missionId, attemptId,
/// operationId, runId, grantId, subject, capability, resource, amount, payloadRef,
/// preconditionsRef, admittedAt}`. Its sha256 is the attempt's `intentRef`.
pub fn intent_bytes(mission_id: &str, attempt_id: &str, a: &Attempt) -> Vec<u8> {
    let s = |v: &str| CValue::String(v.to_string());
    let m = |k: &str, v: CValue| (k.to_string(), v);
    trcjson::encode(&CValue::object(vec![
        m("missionId", s(mission_id)),
        m("attemptId", s(attempt_id)),
        m("operationId", s(&a.operation_id)),
        m("runId", s(&a.run_id)),
        m("grantId", s(&a.grant_id)),
        m("subject", s(&a.subject)),
        m("capability", s(&a.capability)),
        m("resource", s(&a.resource)),
        m("amount", s(&a.amount.to_string())),
        m("payloadRef", s(&a.payload_ref)),
        m("preconditionsRef", s(&a.preconditions_ref)),
        m("admittedAt", s(&a.admitted_at.to_string())),
    ]))
}

fn admit(state: &mut State, x: &Admit, now: Amount, actor: &Actor) -> Result<(), Rejection> {
    if actor.kind == ActorKind::Agent && actor.subject.as_deref() != Some(x.subject.as_str()) {
        return Err(not_permitted(actor, "admit for another subject").with("subject", &x.subject));
    }
    let c = state.contract.clone();
    // 1. run
    match state.runs.get(&x.run_id) {
        None => {
            return Err(Rejection::new(Code::RunNotFound, "no such run").with("runId", &x.run_id))
        }
        Some(r) if r.status != RunStatus::Active => {
            return Err(
                Rejection::new(Code::RunNotActive, "the run is completed").with("runId", &x.run_id)
            )
        }
        Some(_) => {}
    }
    // 2. deadline
    deadline(state, now)?;
    // 3. attempt id
    if state.attempts.contains_key(&x.attempt_id) {
        return Err(
            Rejection::new(Code::AttemptExists, "the attempt id is already used")
                .with("attemptId", &x.attempt_id),
        );
    }
    // 4. grant chain present and not revoked
    let chain = live_chain(state, &x.grant_id)?;
    check_grant_chain(&c, x, &chain, now)?;
    check_operation(state, &c, x, now)?;
    check_budget(state, x, &chain)?;
    let ids: Vec<String> = chain.iter().map(|(id, _)| id.to_string()).collect();
    reserve_attempt(state, x, &ids, now);
    Ok(())
}

/// Admit checks 5–7: the chain's root is the command's subject, `now` is inside every grant's
/// window, and the contract and every grant allow the capability and the resource.
fn check_grant_chain(
    c: &Contract,
    x: &Admit,
    chain: &[(&str, &Grant)],
    now: Amount,
) -> Result<(), Rejection> {
    // 5. subject
    if chain[0].1.subject != x.subject {
        return Err(Rejection::new(
            Code::SubjectMismatch,
            "the command's subject is not the grant's",
        )
        .with("grantId", &x.grant_id)
        .with("grantSubject", &chain[0].1.subject)
        .with("subject", &x.subject));
    }
    // 6. live window along the chain
    for (id, g) in chain {
        if now < g.not_before || now >= g.expires_at {
            return Err(
                Rejection::new(Code::GrantNotLive, "now is outside the grant's window")
                    .with("grantId", id)
                    .amount("now", now)
                    .amount("notBefore", g.not_before)
                    .amount("expiresAt", g.expires_at),
            );
        }
    }
    // 7. action and resource
    let cap = &x.action.capability;
    if !c.actions.contains(cap) || chain.iter().any(|(_, g)| !g.actions.contains(cap)) {
        return Err(Rejection::new(
            Code::ActionNotGranted,
            "the capability is outside the grant chain or the contract",
        )
        .with("capability", cap));
    }
    let res = &x.action.resource;
    if !c.resources.contains(res) || chain.iter().any(|(_, g)| !g.resources.contains(res)) {
        return Err(Rejection::new(
            Code::ResourceNotGranted,
            "the resource is outside the grant chain or the contract",
        )
        .with("resource", res));
    }
    Ok(())
}

/// Admit checks 8–13: policy, mandatory checks, authorization age, approval, the operation's
/// attempts and its dependencies.
fn check_operation(state: &State, c: &Contract, x: &Admit, now: Amount) -> Result<(), Rejection> {
    // 8. policy
    if x.policy != "ALLOW" {
        return Err(
            Rejection::new(Code::PolicyDenied, "policy is not ALLOW").with("policy", &x.policy)
        );
    }
    // 9. mandatory checks
    if !x.mandatory_checks_ok {
        return Err(Rejection::new(
            Code::MandatoryChecksFailed,
            "mandatoryChecksOk is false",
        ));
    }
    // 10. authorization age
    let checked = x.authorization_checked_at;
    let stale = match now.checked_sub(checked) {
        None => true,
        Some(age) => age > c.max_authorization_age_ms,
    };
    if stale {
        return Err(Rejection::new(
            Code::AuthorizationStale,
            "the authorization check is too old (or in the future)",
        )
        .amount("now", now)
        .amount("authorizationCheckedAt", checked)
        .amount("maxAuthorizationAgeMs", c.max_authorization_age_ms));
    }
    // 11. approval
    if c.requires_approval && !state.approvals.contains_key(&x.operation_id) {
        return Err(Rejection::new(
            Code::ApprovalRequired,
            "the contract requires a HUMAN approval of this operation",
        )
        .with("operationId", &x.operation_id));
    }
    // 12. attempts
    let attempts = state
        .operations
        .get(&x.operation_id)
        .map_or(Amount::ZERO, |o| o.attempts);
    if attempts >= c.max_attempts {
        return Err(Rejection::new(
            Code::AttemptsExhausted,
            "the operation has no attempts left",
        )
        .with("operationId", &x.operation_id)
        .amount("attempts", attempts)
        .amount("maxAttempts", c.max_attempts));
    }
    // 13. dependencies
    if let Some(deps) = &x.depends_on {
        if !deps.is_empty() && !c.has_feature("graphs") {
            return Err(Rejection::new(
                Code::FeatureNotEnabled,
                "dependsOn needs the contract feature graphs",
            )
            .with("feature", "graphs"));
        }
        if let Some(d) = deps
            .iter()
            .find(|d| !state.operations.get(*d).is_some_and(|o| o.succeeded))
        {
            return Err(Rejection::new(
                Code::DependencyNotMet,
                "a dependsOn operation has no SUCCEEDED attempt",
            )
            .with("operationId", d));
        }
    }
    Ok(())
}

/// Admit checks 14–15: the amount fits the mission budget and every grant's limit along the
/// chain.
fn check_budget(state: &State, x: &Admit, chain: &[(&str, &Grant)]) -> Result<(), Rejection> {
    // 14. budget
    let committed = state.reserved.checked_add(state.settled);
    let over = committed
        .and_then(|s| s.checked_add(x.amount))
        .is_none_or(|t| t > state.budget);
    if over {
        return Err(Rejection::new(
            Code::BudgetExhausted,
            "the mission budget would be exceeded",
        )
        .amount("budget", state.budget)
        .amount("reserved", state.reserved)
        .amount("settled", state.settled)
        .amount("requested", x.amount));
    }
    // 15. grant limits along the chain
    for (id, g) in chain {
        if g.used.checked_add(x.amount).is_none_or(|t| t > g.limit) {
            return Err(Rejection::new(
                Code::GrantLimitExhausted,
                "a grant's limit along the chain would be exceeded",
            )
            .with("grantId", id)
            .amount("limit", g.limit)
            .amount("used", g.used)
            .amount("requested", x.amount));
        }
    }
    Ok(())
}

/// Applies a checked admit: reserves the amount on the mission and the grants `ids`, counts
/// the operation's attempt and records the admitted attempt with its intent ref.
fn reserve_attempt(state: &mut State, x: &Admit, ids: &[String], now: Amount) {
    state.reserved = Amount(state.reserved.0 + x.amount.0);
    for id in ids {
        if let Some(g) = state.grants.get_mut(id) {
            g.used = Amount(g.used.0 + x.amount.0);
        }
    }
    let op = state
        .operations
        .entry(x.operation_id.clone())
        .or_insert(Operation {
            attempts: Amount::ZERO,
            succeeded: false,
        });
    op.attempts = Amount(op.attempts.0 + 1);
    let mut attempt = Attempt {
        operation_id: x.operation_id.clone(),
        run_id: x.run_id.clone(),
        grant_id: x.grant_id.clone(),
        subject: x.subject.clone(),
        capability: x.action.capability.clone(),
        resource: x.action.resource.clone(),
        amount: x.amount,
        status: AttemptStatus::Admitted,
        outcome: None,
        actual_cost: None,
        payload_ref: HashRef::of(&trcjson::encode(&x.action.payload)).to_string(),
        preconditions_ref: HashRef::of(&trcjson::encode(&x.action.preconditions)).to_string(),
        intent_ref: String::new(),
        admitted_at: now,
        dispatched_at: None,
        settled_at: None,
        evidence_ref: None,
    };
    attempt.intent_ref =
        HashRef::of(&intent_bytes(&state.mission_id, &x.attempt_id, &attempt)).to_string();
    state.attempts.insert(x.attempt_id.clone(), attempt);
}

fn attempt_of<'s>(
    state: &'s State,
    attempt_id: &str,
    actor: &Actor,
    what: &str,
) -> Result<&'s Attempt, Rejection> {
    let a = state.attempts.get(attempt_id).ok_or_else(|| {
        Rejection::new(Code::AttemptNotFound, "no such attempt").with("attemptId", attempt_id)
    })?;
    if actor.kind == ActorKind::Agent && actor.subject.as_deref() != Some(a.subject.as_str()) {
        return Err(
            not_permitted(actor, &format!("{what} another subject's attempt"))
                .with("attemptId", attempt_id),
        );
    }
    Ok(a)
}

fn status_err(code: Code, attempt_id: &str, a: &Attempt, why: &str) -> Rejection {
    Rejection::new(code, why.to_string())
        .with("attemptId", attempt_id)
        .with("status", a.status.as_str())
}

fn dispatch(
    state: &mut State,
    attempt_id: &str,
    now: Amount,
    actor: &Actor,
) -> Result<(), Rejection> {
    let a = attempt_of(state, attempt_id, actor, "dispatch")?;
    if a.status != AttemptStatus::Admitted {
        return Err(status_err(
            Code::NotAdmitted,
            attempt_id,
            a,
            "only an ADMITTED attempt is dispatched",
        ));
    }
    deadline(state, now)?;
    let chain = live_chain(state, &a.grant_id)?;
    for (id, g) in &chain {
        if now < g.not_before || now >= g.expires_at {
            return Err(
                Rejection::new(Code::GrantNotLive, "now is outside the grant's window")
                    .with("grantId", id)
                    .amount("now", now)
                    .amount("notBefore", g.not_before)
                    .amount("expiresAt", g.expires_at),
            );
        }
    }
    if let Some(a) = state.attempts.get_mut(attempt_id) {
        a.status = AttemptStatus::Dispatched;
        a.dispatched_at = Some(now);
    }
    Ok(())
}

/// Move `amount` of reservation on `grant_id`'s chain to `actual` of use: `used − amount +
/// actual` on every grant of the chain, checked.
fn rebook_chain(
    state: &State,
    grant_id: &str,
    amount: Amount,
    actual: Amount,
) -> Result<Vec<(String, Amount)>, Rejection> {
    let chain = state.chain(grant_id).map_err(|missing| {
        Rejection::new(Code::GrantNotFound, "no such grant in the chain")
            .with("grantId", missing.grant_id())
    })?;
    chain
        .iter()
        .map(|(id, g)| {
            g.used
                .saturating_sub(amount)
                .checked_add(actual)
                .map(|u| (id.to_string(), u))
                .ok_or_else(|| {
                    Rejection::new(
                        Code::AmountOverflow,
                        "a grant's used would exceed 2^128 - 1",
                    )
                    .with("grantId", id)
                })
        })
        .collect()
}

fn settle(
    state: &mut State,
    attempt_id: &str,
    outcome: Outcome,
    actual: Option<Amount>,
    now: Amount,
    actor: &Actor,
) -> Result<(), Rejection> {
    let a = attempt_of(state, attempt_id, actor, "settle")?;
    match a.status {
        AttemptStatus::Settled | AttemptStatus::Released => {
            return Err(status_err(
                Code::AlreadySettled,
                attempt_id,
                a,
                "the attempt is already settled or released",
            ))
        }
        AttemptStatus::Unknown => {
            return Err(status_err(
                Code::ReconciliationRequired,
                attempt_id,
                a,
                "an UNKNOWN attempt is resolved only by a HUMAN reconcile",
            ))
        }
        AttemptStatus::Admitted => {
            return Err(status_err(
                Code::NotDispatched,
                attempt_id,
                a,
                "settle before dispatch (release it instead)",
            ))
        }
        AttemptStatus::Dispatched => {}
    }
    let Some(actual) = actual else {
        // UNKNOWN keeps the full reservation [S].
        if let Some(a) = state.attempts.get_mut(attempt_id) {
            a.status = AttemptStatus::Unknown;
            a.outcome = Some(Outcome::Unknown);
        }
        return Ok(());
    };
    if actual > a.amount {
        let v = Violation {
            attempt_id: attempt_id.to_string(),
            command: "settle".into(),
            admitted: a.amount,
            claimed: actual,
            actor_id: actor.id.clone(),
            at: now,
        };
        let mut r = Rejection::new(
            Code::ExposureExceeded,
            "actual cost above the admitted amount: a control violation is recorded and the reservation stays held",
        )
        .with("attemptId", attempt_id)
        .amount("amount", a.amount)
        .amount("actualCost", actual);
        r.violation = Some(Box::new(v));
        return Err(r);
    }
    let amount = a.amount;
    let grant_id = a.grant_id.clone();
    let operation_id = a.operation_id.clone();
    let settled = state.settled.checked_add(actual).ok_or_else(|| {
        Rejection::new(Code::AmountOverflow, "settled would exceed 2^128 - 1")
            .with("attemptId", attempt_id)
    })?;
    let used = rebook_chain(state, &grant_id, amount, actual)?;
    state.reserved = state.reserved.saturating_sub(amount);
    state.settled = settled;
    for (id, u) in used {
        if let Some(g) = state.grants.get_mut(&id) {
            g.used = u;
        }
    }
    if outcome == Outcome::Succeeded {
        if let Some(op) = state.operations.get_mut(&operation_id) {
            op.succeeded = true;
        }
    }
    if let Some(a) = state.attempts.get_mut(attempt_id) {
        a.status = AttemptStatus::Settled;
        a.outcome = Some(outcome);
        a.actual_cost = Some(actual);
        a.settled_at = Some(now);
    }
    Ok(())
}

fn release(
    state: &mut State,
    attempt_id: &str,
    now: Amount,
    actor: &Actor,
) -> Result<(), Rejection> {
    let a = attempt_of(state, attempt_id, actor, "release")?;
    match a.status {
        AttemptStatus::Admitted => {}
        AttemptStatus::Dispatched | AttemptStatus::Unknown => {
            return Err(status_err(
                Code::AlreadyDispatched,
                attempt_id,
                a,
                "a dispatched attempt is never refunded; settle it",
            ))
        }
        AttemptStatus::Settled | AttemptStatus::Released => {
            return Err(status_err(
                Code::AlreadySettled,
                attempt_id,
                a,
                "the attempt is already settled or released",
            ))
        }
    }
    let amount = a.amount;
    let used = rebook_chain(state, &a.grant_id.clone(), amount, Amount::ZERO)?;
    state.reserved = state.reserved.saturating_sub(amount);
    for (id, u) in used {
        if let Some(g) = state.grants.get_mut(&id) {
            g.used = u;
        }
    }
    if let Some(a) = state.attempts.get_mut(attempt_id) {
        a.status = AttemptStatus::Released;
        a.settled_at = Some(now);
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn reconcile(
    state: &mut State,
    attempt_id: &str,
    actual: Amount,
    outcome: Outcome,
    evidence_ref: &str,
    now: Amount,
    actor: &Actor,
) -> Result<(), Rejection> {
    human_only(actor, "reconcile")?;
    let a = attempt_of(state, attempt_id, actor, "reconcile")?;
    if a.status != AttemptStatus::Unknown {
        return Err(status_err(
            Code::NotUnknown,
            attempt_id,
            a,
            "only an UNKNOWN attempt is reconciled",
        ));
    }
    let amount = a.amount;
    let grant_id = a.grant_id.clone();
    let operation_id = a.operation_id.clone();
    let settled = state.settled.checked_add(actual).ok_or_else(|| {
        Rejection::new(Code::AmountOverflow, "settled would exceed 2^128 - 1")
            .with("attemptId", attempt_id)
    })?;
    let used = rebook_chain(state, &grant_id, amount, actual)?;
    state.reserved = state.reserved.saturating_sub(amount);
    state.settled = settled;
    for (id, u) in used {
        if let Some(g) = state.grants.get_mut(&id) {
            g.used = u;
        }
    }
    if outcome == Outcome::Succeeded {
        if let Some(op) = state.operations.get_mut(&operation_id) {
            op.succeeded = true;
        }
    }
    if actual > amount {
        state.violations.push(Violation {
            attempt_id: attempt_id.to_string(),
            command: "reconcile".into(),
            admitted: amount,
            claimed: actual,
            actor_id: actor.id.clone(),
            at: now,
        });
    }
    if let Some(a) = state.attempts.get_mut(attempt_id) {
        a.status = AttemptStatus::Settled;
        a.outcome = Some(outcome);
        a.actual_cost = Some(actual);
        a.settled_at = Some(now);
        a.evidence_ref = Some(evidence_ref.to_string());
    }
    Ok(())
}

fn approve(
    state: &mut State,
    operation_id: &str,
    evidence_ref: &str,
    now: Amount,
    actor: &Actor,
) -> Result<(), Rejection> {
    human_only(actor, "approve")?;
    if state.approvals.contains_key(operation_id) {
        return Err(
            Rejection::new(Code::AlreadyApproved, "the operation is already approved")
                .with("operationId", operation_id),
        );
    }
    state.approvals.insert(
        operation_id.to_string(),
        Approval {
            evidence_ref: evidence_ref.to_string(),
            actor_id: actor.id.clone(),
            at: now,
        },
    );
    Ok(())
}

fn revoke(state: &mut State, grant_id: &str, actor: &Actor) -> Result<(), Rejection> {
    let g = state.grants.get(grant_id).ok_or_else(|| {
        Rejection::new(Code::GrantNotFound, "no such grant").with("grantId", grant_id)
    })?;
    if actor.kind == ActorKind::Agent {
        // An agent may revoke only a delegation it made (it holds the parent).
        let holds_parent = g
            .parent_id
            .as_deref()
            .and_then(|p| state.grants.get(p))
            .is_some_and(|p| actor.subject.as_deref() == Some(p.subject.as_str()));
        if !holds_parent {
            return Err(not_permitted(actor, "revoke a grant it did not delegate")
                .with("grantId", grant_id));
        }
    }
    if g.revoked {
        return Err(
            Rejection::new(Code::GrantRevoked, "the grant is already revoked")
                .with("grantId", grant_id),
        );
    }
    if let Some(g) = state.grants.get_mut(grant_id) {
        g.revoked = true;
    }
    Ok(())
}

fn complete_run(
    state: &mut State,
    run_id: &str,
    criteria: &std::collections::BTreeMap<String, String>,
    now: Amount,
    actor: &Actor,
) -> Result<(), Rejection> {
    host_or_human(actor, "complete a run")?;
    match state.runs.get(run_id) {
        None => return Err(Rejection::new(Code::RunNotFound, "no such run").with("runId", run_id)),
        Some(r) if r.status != RunStatus::Active => {
            return Err(
                Rejection::new(Code::RunNotActive, "the run is completed").with("runId", run_id)
            )
        }
        Some(_) => {}
    }
    let outstanding = state
        .attempts
        .iter()
        .filter(|(_, a)| a.run_id == run_id && a.status.holds_reservation())
        .count();
    if outstanding > 0 {
        return Err(Rejection::new(
            Code::RunHasOutstanding,
            "the run has ADMITTED, DISPATCHED or UNKNOWN attempts",
        )
        .with("runId", run_id)
        .with("outstanding", outstanding));
    }
    let want: BTreeSet<&str> = state.contract.criteria.iter().map(String::as_str).collect();
    let got: BTreeSet<&str> = criteria.keys().map(String::as_str).collect();
    if want != got {
        let missing: Vec<&str> = want.difference(&got).copied().collect();
        let unknown: Vec<&str> = got.difference(&want).copied().collect();
        return Err(Rejection::new(
            Code::CriteriaNotMet,
            "every contract criterion, and only those, needs evidence",
        )
        .with("missing", missing.join(","))
        .with("unknown", unknown.join(",")));
    }
    if let Some(r) = state.runs.get_mut(run_id) {
        r.status = RunStatus::Completed;
        r.completed_at = Some(now);
        r.criteria = criteria.clone();
    }
    Ok(())
}
