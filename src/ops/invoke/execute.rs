//! Running an admitted call: a pure (v1) call's one capsule run, or an effectful (v2) call's
//! plan phase, each planned effect through the broker, the finish body on the tail budget and
//! the composed output (transitions.md §9–§11); both end in [`super::commit`].

use std::time::{Duration, Instant};

use crate::broker::handlers::{HandlerContext, HandlerRegistry};
use crate::broker::{self, Broker, BrokerError, Status};
use crate::encoding::trcjson::{self, Bounds, CValue};
use crate::interp::capsule;
use crate::plan::{self, PhaseResult, Triple, WorldEffect};
use crate::store::records;
use crate::store::{Object, Store};

use super::commit::{commit_invocation, CommitFailure};
use super::error::capsule_err;
use super::handlers::unserved_reasons;
use super::pairings::pairings;
use super::precheck::started_marker;
use super::{observe, Call, Committed, Host, InvokeError, Prepared, Step, PHASE, TAIL};

/// A pure (v1) call: one capsule run bounded by the invocation deadline, then the commit.
pub(super) fn run_pure(store: &mut Store, run: Prepared) -> Result<Committed, InvokeError> {
    let output = capsule::run_phase(run.interp.as_ref(), &run.source, &run.input, run.deadline)
        .map_err(|e| capsule_err(e.naming(run.label.as_deref()), "pure"))?;
    let output_obj = Object::new(records::INVOCATION_OUTPUT, &run.surface, output);
    let rec = run.record(&output_obj, None, None);
    commit_invocation(
        store,
        &run.observed,
        &run.desc,
        &run.invocation_id,
        &run.surface,
        vec![run.input_obj.clone(), output_obj],
        rec,
        run.now,
        Vec::new(),
    )
    .map_err(|e| match e {
        CommitFailure::Conflict(m) => InvokeError::Conflict(m),
        CommitFailure::Other(e) => e,
    })
}

/// An effectful (v2) call: the plan phase (2 s), the limits and mission pairings, each effect
/// through the broker ([`execute_effects`]), the finish body on the 4 s tail budget,
/// composition and the commit. Any failure after an effect ran is
/// [`InvokeError::EffectsUnrecorded`] naming the records written.
pub(super) fn run_effectful(
    store: &mut Store,
    run: Prepared,
    call: &Call,
    host: &Host<'_>,
    hctx: &HandlerContext,
    handlers: &HandlerRegistry,
) -> Result<Committed, InvokeError> {
    let label = run.label.as_deref();
    let plan_deadline = (Instant::now() + PHASE).min(run.deadline);
    let raw_plan = capsule::run_phase(
        run.interp.as_ref(),
        &run.source,
        &plan::plan_input(&run.input),
        plan_deadline,
    )
    .map_err(|e| capsule_err(e.naming(label), "plan"))?;
    let declared: Vec<Triple> = run
        .desc
        .declared_effects
        .iter()
        .map(|e| Triple {
            effect: e.effect.clone(),
            scope: e.scope.clone(),
            cost: e.cost,
        })
        .collect();
    let parsed = plan::parse_plan(&raw_plan, &declared)?;
    observe(host, || Step::Planned {
        effects: parsed.effects.len(),
    });
    let plan_obj = Object::new(records::EFFECT_PLAN, &run.surface, parsed.canonical.clone());
    let (limits, mission, new_store_id) = pairings(store, &run, call, host)?;
    let b = Broker {
        new_store_id,
        intent_committed: std::cell::Cell::new(false),
        episode: &run.sess.episode,
        grants: &run.sess.grants,
        now: run.now,
        handlers,
        ctx: hctx,
        limits,
        mission,
        with_intent: Some(started_marker(&run.invocation_id)),
    };
    let done = execute_effects(store, &b, &parsed.effects, &run, host, hctx, handlers)?;
    // Everything after the effect runs on its own tail budget.
    let tail_deadline = Instant::now() + TAIL;
    let records_written = &done.records;
    let unrecorded = |cause: String| run.unrecorded(records_written, cause);
    let body = finish_body(&run, &parsed, &done, tail_deadline)?;
    let output = plan::compose(body, &plan_obj.meta.hash, &done.world_effects)
        .map_err(|e| unrecorded(e.to_string()))?;
    let output_obj = Object::new(records::INVOCATION_OUTPUT, &run.surface, output);
    let rec = run.record(
        &output_obj,
        Some(plan_obj.meta.hash.clone()),
        Some(records_written.clone()),
    );
    if Instant::now() > tail_deadline {
        return Err(unrecorded(
            "the post-effect tail exceeded its 4 s budget".into(),
        ));
    }
    commit_invocation(
        store,
        &run.observed,
        &run.desc,
        &run.invocation_id,
        &run.surface,
        vec![run.input_obj.clone(), output_obj, plan_obj],
        rec,
        run.now,
        done.statuses.clone(),
    )
    .map_err(|e| match e {
        CommitFailure::Conflict(m) if records_written.is_empty() => InvokeError::Conflict(m),
        CommitFailure::Conflict(m) => unrecorded(format!("commit: {m}")),
        CommitFailure::Other(e) if records_written.is_empty() => e,
        CommitFailure::Other(e) => unrecorded(format!("commit: {e}")),
    })
}

/// What the effects of one plan left behind, in plan order.
struct Executed {
    /// The finish phase's `results`.
    results: Vec<PhaseResult>,
    /// The composed output's `effects`.
    world_effects: Vec<WorldEffect>,
    /// The effect records written (refs).
    records: Vec<String>,
    /// Each effect's status and record, for the commit's outcome.
    statuses: Vec<(Status, Option<String>)>,
    /// The last handler's output (the body of a single-effect plan without finish).
    handler_output: Option<CValue>,
}

/// Run each planned effect through the broker, each handler bounded by what is left of the
/// deadline less the 6 s the tail needs (at most 10 s). A refusal before any record was
/// written keeps its own error (limits, mission, spend, no handler); anything after is
/// [`InvokeError::EffectsUnrecorded`]; an indeterminate handler stops the call there.
fn execute_effects(
    store: &mut Store,
    b: &Broker<'_>,
    effects: &[plan::PlannedEffect],
    run: &Prepared,
    host: &Host<'_>,
    hctx: &HandlerContext,
    handlers: &HandlerRegistry,
) -> Result<Executed, InvokeError> {
    let mut done = Executed {
        results: Vec::new(),
        world_effects: Vec::new(),
        records: Vec::new(),
        statuses: Vec::new(),
        handler_output: None,
    };
    for (i, pe) in effects.iter().enumerate() {
        observe(host, || Step::EffectDispatched {
            index: i + 1,
            total: effects.len(),
            effect: pe.effect.clone(),
            scope: pe.scope.clone(),
        });
        let remaining = run.deadline.saturating_duration_since(Instant::now());
        let handler_deadline = Instant::now()
            + remaining
                .saturating_sub(Duration::from_secs(6))
                .min(Duration::from_secs(10));
        let req = broker::Request {
            effect: pe.effect.clone(),
            scope: pe.scope.clone(),
            cost: pe.cost,
            payload: pe.payload.clone(),
        };
        let nothing_written = done.records.is_empty();
        let ex = match b.execute(store, &req, handler_deadline) {
            Ok(ex) => ex,
            Err(BrokerError::OutcomeWrite { record, cause }) => {
                return Err(InvokeError::EffectsUnrecorded {
                    invocation_id: run.invocation_id.clone(),
                    records: vec![record],
                    intents: vec![],
                    cause,
                })
            }
            Err(BrokerError::NoHandler(e)) => {
                let why = unserved_reasons(&e, hctx, handlers);
                return Err(InvokeError::EffectsUnsupported(e, why));
            }
            Err(BrokerError::LimitsRejected(v)) if nothing_written => {
                return Err(InvokeError::LimitsRejected(v))
            }
            Err(BrokerError::MissionRejected(r)) if nothing_written => {
                return Err(InvokeError::MissionRejected(r))
            }
            Err(e @ BrokerError::SpendUnreadable(_)) if nothing_written => {
                // The spend fold found an edited intent before this effect was journaled:
                // nothing ran; an integrity failure, not an indeterminate call.
                return Err(InvokeError::Integrity(e.to_string()));
            }
            Err(BrokerError::Limits(m)) if nothing_written => {
                return Err(InvokeError::LimitsUnavailable(m))
            }
            Err(BrokerError::Mission(m)) if nothing_written => {
                return Err(InvokeError::MissionUnavailable(m))
            }
            Err(BrokerError::LedgerBusy(m)) if nothing_written => {
                return Err(InvokeError::LedgerBusy(m))
            }
            Err(BrokerError::LedgerIntegrity(m)) if nothing_written => {
                // The ledger refused to decide on rows it did not write: nothing ran.
                return Err(InvokeError::Integrity(m));
            }
            Err(e) => {
                return Err(InvokeError::EffectsUnrecorded {
                    invocation_id: run.invocation_id.clone(),
                    records: done.records,
                    intents: vec![],
                    cause: e.to_string(),
                })
            }
        };
        if ex.status == Status::Indeterminate {
            return Err(InvokeError::EffectsUnrecorded {
                invocation_id: run.invocation_id.clone(),
                records: done.records,
                intents: ex.intent_id.into_iter().collect(),
                cause: format!(
                    "the {} handler could not tell whether its effect happened: {}",
                    pe.effect,
                    ex.message.unwrap_or_default()
                ),
            });
        }
        let status = match ex.status {
            Status::Ok => "ok",
            Status::Failed => "failed",
            _ => "denied",
        };
        let output = match (&ex.status, &ex.output) {
            (Status::Ok, Some(bytes)) => trcjson::parse(bytes, Bounds::PLAN).ok(),
            _ => None,
        };
        if ex.status == Status::Ok && output.is_none() {
            // A handler output that is not canonical JSON cannot feed the finish phase.
            done.statuses.push((Status::Failed, ex.record.clone()));
        } else {
            done.statuses.push((ex.status.clone(), ex.record.clone()));
        }
        done.handler_output = output.clone();
        done.results.push(PhaseResult {
            id: pe.id.clone(),
            effect: pe.effect.clone(),
            status,
            record: ex.record.clone(),
            output,
        });
        done.world_effects.push(WorldEffect {
            id: pe.id.clone(),
            status,
            record: ex.record.clone(),
        });
        done.records.extend(ex.record);
    }
    Ok(done)
}

/// The output body before composition: the plan's own `result` when it planned no effect,
/// the finish phase's output when the plan asked for one (2 s, within the tail), else the
/// single handler's object output (an empty object when it did not succeed). Errors are
/// [`InvokeError::EffectsUnrecorded`]: the effects already ran.
fn finish_body(
    run: &Prepared,
    parsed: &plan::Plan,
    done: &Executed,
    tail_deadline: Instant,
) -> Result<CValue, InvokeError> {
    let unrecorded = |cause: String| run.unrecorded(&done.records, cause);
    if parsed.effects.is_empty() {
        return Ok(parsed.result.clone().unwrap_or(CValue::Object(vec![])));
    }
    if parsed.finish {
        let raw = capsule::run_phase(
            run.interp.as_ref(),
            &run.source,
            &plan::finish_input(&run.input, &done.results),
            (Instant::now() + PHASE).min(tail_deadline),
        )
        .map_err(|e| {
            unrecorded(format!(
                "finish phase: {}",
                capsule_err(e.naming(run.label.as_deref()), "finish")
            ))
        })?;
        return plan::parse_finish(&raw).map_err(|e| unrecorded(format!("finish output: {e}")));
    }
    match (done.results.first().map(|r| r.status), &done.handler_output) {
        (Some("ok"), Some(v @ CValue::Object(_))) => Ok(v.clone()),
        (Some("ok"), _) => Err(unrecorded("the handler output is not a JSON object".into())),
        _ => Ok(CValue::Object(vec![])),
    }
}
