//! Steps 1–3 and 5 (transitions.md §9): the call's task id and arguments, the session (the one
//! agent rule, [`crate::ops::actor`]), the transition it may see, its source; and the input
//! schema check of step 7.

use crate::authority::grants::Grant;
use crate::authority::session::{self, Session};
use crate::encoding::gojson;
use crate::encoding::trcjson::CValue;
use crate::plan;
use crate::store::{object_in, Object, Store};
use crate::transitions::publish::read_head;
use crate::transitions::registry::Descriptor;

use super::{Call, InvokeError};

/// The task-id grammar `[A-Za-z0-9._-]{1,128}`.
pub fn valid_task(t: &str) -> bool {
    (1..=128).contains(&t.len())
        && t.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

pub(super) fn random_task() -> String {
    let mut b = [0u8; 8];
    let _ = getrandom::getrandom(&mut b);
    hex::encode(b)
}

/// The descriptors this session can see: `access` satisfied by a live grant (minted budget).
pub fn visible(descriptors: &[Descriptor], grants: &[Grant], now: i64) -> Vec<Descriptor> {
    descriptors
        .iter()
        .filter(|d| {
            grants
                .iter()
                .any(|g| g.satisfies(&d.access.effect, &d.access.scope, d.access.cost, now))
        })
        .cloned()
        .collect()
}

/// How an [`InvokeError::InvalidCall`] for arguments failing the inputSchema begins (MCP
/// surfaces it as a tool error, DEC-MCP-3).
pub const SCHEMA_FAILURE: &str = "arguments fail the inputSchema";

/// Check `args` against a transition's input schema (step 7).
///
/// # Errors
/// [`InvokeError::InvalidCall`] beginning [`SCHEMA_FAILURE`] and naming the failing path, or
/// naming an unusable schema.
pub fn validate_input(schema: &CValue, args: &serde_json::Value) -> Result<(), InvokeError> {
    let schema = schema.to_json();
    let validator = jsonschema::validator_for(&schema).map_err(|e| {
        InvokeError::InvalidCall(format!("the transition's inputSchema is not usable: {e}"))
    })?;
    if let Some(err) = validator.iter_errors(args).next() {
        let path = err.instance_path().to_string();
        let at = if path.is_empty() {
            "/".to_string()
        } else {
            path
        };
        return Err(InvokeError::InvalidCall(format!(
            "{SCHEMA_FAILURE} at {at}: {err}"
        )));
    }
    Ok(())
}

/// Step 1: the task id (drawn when absent), the arguments an exact JSON object within
/// [`plan::MAX_IO`] bytes once Go-encoded. Returns `(task, input bytes)`; errors are
/// [`InvokeError::InvalidCall`].
pub(super) fn validate_call(call: &Call) -> Result<(String, Vec<u8>), InvokeError> {
    let task = match &call.task {
        Some(t) if !valid_task(t) => {
            return Err(InvokeError::InvalidCall(format!(
                "task id {t:?} must match [A-Za-z0-9._-]{{1,128}}"
            )))
        }
        Some(t) => t.clone(),
        None => random_task(),
    };
    if !call.args.is_object() {
        return Err(InvokeError::InvalidCall(
            "arguments must be a JSON object".into(),
        ));
    }
    if let Some((path, n, why)) = crate::interp::numbers::first_inexact_value(&call.args) {
        return Err(InvokeError::InvalidCall(format!(
            "argument number {n} at {path} would not reach the transition exactly: {why}"
        )));
    }
    let input = gojson::any_to_vec(&call.args);
    if input.len() > plan::MAX_IO {
        return Err(InvokeError::InvalidCall(format!(
            "input is {} bytes; limit is {}",
            input.len(),
            plan::MAX_IO
        )));
    }
    Ok((task, input))
}

/// Steps 2–3: resolve the session (fail closed) and bind the transition from a fresh registry
/// snapshot; a transition the session's live grants cannot see is
/// [`InvokeError::NotAuthorized`], the same answer as for an id that does not exist.
pub(super) fn admit(
    store: &Store,
    call: &Call,
    now: i64,
    unattested: session::Unattested,
) -> Result<(Session, Descriptor), InvokeError> {
    let sess: Session = crate::ops::actor::agent(store, &call.token, now, unattested)?;
    let registry = read_head(store.conn()).map_err(|e| InvokeError::Integrity(e.to_string()))?;
    let descriptors = registry.map(|h| h.revision.entries).unwrap_or_default();
    let desc = visible(&descriptors, &sess.grants, now)
        .into_iter()
        .find(|d| d.id == call.transition)
        .ok_or_else(|| InvokeError::NotAuthorized(call.transition.clone()))?;
    Ok((sess, desc))
}

/// Step 5: the transition's source object, re-hashed ([`InvokeError::Source`] when absent or
/// corrupt), with the file label publish recorded for it.
pub(super) fn load_source(
    store: &Store,
    desc: &Descriptor,
) -> Result<(Object, Option<String>), InvokeError> {
    let source = object_in(store.conn(), &desc.transition_fn.to_string())?
        .ok_or_else(|| InvokeError::Source(format!("{} is absent", desc.transition_fn)))?;
    if !source.verifies() {
        return Err(InvokeError::Source(format!(
            "{} is corrupt",
            desc.transition_fn
        )));
    }
    // Messages name the file the source was published from, where publish recorded it.
    let label = crate::store::labels::lookup(store.conn(), &desc.transition_fn.to_string());
    Ok((source, label))
}
