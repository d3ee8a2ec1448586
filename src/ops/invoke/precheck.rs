//! Step 4 and 4b (transitions.md §9): the receipt pre-check of a resent invocation id, the
//! started marker that makes a resend indeterminate rather than run twice (DEC-COORD-3), the
//! recorded answer of a resolved id, and the receipt as `world receipt` answers it.

use crate::broker::{self, Status};
use crate::encoding::gojson::Obj;
use crate::store::journal::{self, ReceiptState};
use crate::store::records::InvocationRecord;
use crate::store::{object_in, Error as StoreError, Object, Store};
use crate::transitions::registry::Descriptor;

use super::{Committed, InvokeError, STARTED};

/// The started-marker object for an invocation id (deterministic, so it is found by hash).
pub fn started_marker(invocation_id: &str) -> Object {
    Object::new(
        STARTED,
        "coordinator",
        Obj::new().str("invocationId", invocation_id).finish(),
    )
}

/// The receipt of a coordinator call as `world receipt` answers it: the journal's
/// ([`journal::receipt`]), except that a call whose effect ran but whose commit never landed
/// (no commit intent, but its [`started_marker`]) is indeterminate, never not-started.
///
/// # Errors
/// The journal's errors ([`journal::receipt`]) and object reads.
pub fn receipt(store: &Store, invocation_id: &str) -> Result<journal::Receipt, StoreError> {
    let mut r = journal::receipt(store.conn(), invocation_id)?;
    if r.state == ReceiptState::NotStarted
        && ["cli:", "a2a:", "mcp:"]
            .iter()
            .any(|p| invocation_id.starts_with(p))
        && store
            .object(&started_marker(invocation_id).meta.hash)?
            .is_some()
    {
        r.state = ReceiptState::Indeterminate;
    }
    Ok(r)
}

/// Step 4: the receipt pre-check. `Some` is the recorded answer of a resolved id; an
/// indeterminate or started id is [`InvokeError::NotCommitted`]. Step 4b (INT-7): when the
/// episode's latest effect belongs to no committed invocation and no started marker covers
/// it, this call may be the resend of the one that made it, so it is refused
/// ([`InvokeError::Integrity`]) rather than run a write twice.
pub(super) fn precheck(
    store: &Store,
    invocation_id: &str,
    desc: &Descriptor,
    input_obj: &Object,
    episode: &str,
) -> Result<Option<Committed>, InvokeError> {
    let receipt = journal::receipt(store.conn(), invocation_id)?;
    match receipt.state {
        ReceiptState::Resolved => return recorded(store, invocation_id, desc, input_obj).map(Some),
        ReceiptState::Indeterminate => {
            return Err(InvokeError::NotCommitted(invocation_id.to_string()))
        }
        ReceiptState::NotStarted => {
            if object_in(store.conn(), &started_marker(invocation_id).meta.hash)?.is_some() {
                return Err(InvokeError::NotCommitted(invocation_id.to_string()));
            }
        }
    }
    if desc.declared_effects.is_empty() {
        return Ok(None);
    }
    let Some(max) = crate::broker::next_ordinal(store.conn(), episode)?
        .and_then(|n| n.checked_sub(1))
        .filter(|m| *m >= 0)
    else {
        return Ok(None);
    };
    if let Some(intent) = journal::uncovered_tail_intent(store.conn(), episode, max)? {
        return Err(InvokeError::Integrity(format!(
            "episode {episode} has effect {intent} that no committed invocation owns and no started marker covers (the marker was removed?); a resend could repeat it, so nothing runs in this episode until `world verify` is clean"
        )));
    }
    Ok(None)
}

/// The recorded answer for a resolved invocation id: re-verified, and refused when the call
/// differs from the recorded one (skill or input).
fn recorded(
    store: &Store,
    invocation_id: &str,
    desc: &Descriptor,
    input: &Object,
) -> Result<Committed, InvokeError> {
    let receipt = journal::receipt(store.conn(), invocation_id)?;
    let world_ref = receipt.result_ref.ok_or_else(|| {
        InvokeError::Integrity(format!(
            "{invocation_id}: resolved receipt without resultRef"
        ))
    })?;
    let world = store
        .world(&world_ref)?
        .ok_or_else(|| InvokeError::Integrity(format!("world {world_ref} is absent")))?;
    if crate::store::entry::world_ref(world.revision, &world.state_root, &world.log_head)
        .to_string()
        != world_ref
    {
        return Err(InvokeError::Integrity(format!(
            "world {world_ref} does not re-derive"
        )));
    }
    let entry = store
        .log_entry(world.revision)?
        .filter(|e| e.entry_hash == world.log_head)
        .ok_or_else(|| InvokeError::Integrity(format!("entry for world {world_ref} is absent")))?;
    let rec_obj = object_in(store.conn(), &entry.transition_ref)?
        .filter(Object::verifies)
        .ok_or_else(|| {
            InvokeError::Integrity(format!(
                "record {} is absent or altered",
                entry.transition_ref
            ))
        })?;
    let rec = InvocationRecord::decode(&rec_obj.meta.semantic_id, &rec_obj.payload)
        .map_err(|e| InvokeError::Integrity(format!("record: {e}")))?;
    if rec.skill_id != desc.id || rec.input != input.meta.hash {
        return Err(InvokeError::InFlight(invocation_id.to_string()));
    }
    let out = object_in(store.conn(), &rec.output)?
        .filter(Object::verifies)
        .ok_or_else(|| {
            InvokeError::Integrity(format!("output {} is absent or altered", rec.output))
        })?;
    if rec.output != world.state_root {
        return Err(InvokeError::Integrity(
            "stateRoot is not the record's output".into(),
        ));
    }
    let mut effects = Vec::new();
    for r in rec.effects.clone().unwrap_or_default() {
        let status = match broker::resolve_record(store.conn(), &r)? {
            Some((er, _, _)) if !er.allowed => Status::Denied,
            Some((er, _, _)) if er.failed => Status::Failed,
            Some(_) => Status::Ok,
            None => {
                return Err(InvokeError::Integrity(format!(
                    "effect record {r} is absent"
                )))
            }
        };
        effects.push((status, Some(r)));
    }
    Ok(Committed {
        invocation_id: invocation_id.to_string(),
        entry_index: entry.header.entry_index,
        world_ref,
        output_ref: rec.output,
        output: out.payload,
        effects,
        replayed: true,
    })
}
