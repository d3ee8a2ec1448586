//! The commit of an invocation (transitions.md §10): its invocation record, the log entry on
//! the observed head by the coordinator formulas, one compare-and-append transaction.

use crate::broker::Status;
use crate::store::commit::{apply, Commit};
use crate::store::entry::{entry_hash, world_row};
use crate::store::records::InvocationRecord;
use crate::store::{Error as StoreError, Header, LogEntry, Object, Store};
use crate::transitions::registry::Descriptor;

use super::Committed;
use super::InvokeError;

pub(super) enum CommitFailure {
    Conflict(String),
    Other(InvokeError),
}

#[allow(clippy::too_many_arguments)]
pub(super) fn commit_invocation(
    store: &mut Store,
    observed: &str,
    desc: &Descriptor,
    invocation_id: &str,
    surface: &str,
    mut objects: Vec<Object>,
    rec: InvocationRecord,
    now: i64,
    effects: Vec<(Status, Option<String>)>,
) -> Result<Committed, CommitFailure> {
    let rec_obj = Object::new(rec.semantic_id(), surface, rec.encode());
    let output = objects
        .get(1)
        .map(|o| o.payload.clone())
        .unwrap_or_default();
    let output_ref = rec.output.clone();
    objects.push(rec_obj.clone());
    let tx = store
        .immediate()
        .map_err(|e| CommitFailure::Other(e.into()))?;
    let observed = observed.to_string();
    let world = crate::store::world_in(&tx, &observed)
        .and_then(|w| {
            w.map(|w| (w.revision, w.log_head))
                .ok_or_else(|| StoreError::Corrupt {
                    what: "world".into(),
                    detail: "no such row".into(),
                })
        })
        .map_err(|e| {
            CommitFailure::Other(InvokeError::Integrity(format!(
                "selected world {observed} is unreadable: {e}"
            )))
        })?;
    let header = Header {
        entry_index: world.0 + 1,
        semantics_epoch: desc.semantics_epoch,
        transition_fn: desc.transition_fn.to_string(),
        interpreter: desc.interpreter.to_string(),
        prev_entry_hash: world.1,
        written_by: surface.to_string(),
    };
    let eh = entry_hash(&header, &rec_obj.meta.hash).to_string();
    let next = world_row(header.entry_index, &output_ref, &eh);
    let commit = Commit {
        invocation_id: Some(invocation_id.to_string()),
        observed_head: observed,
        objects,
        next_world: next.clone(),
        entry: LogEntry {
            header,
            entry_hash: eh,
            transition_ref: rec_obj.meta.hash.clone(),
        },
    };
    commit.check().map_err(|e| CommitFailure::Other(e.into()))?;
    let landed = match apply(&tx, &commit, now, true) {
        Ok(l) => l,
        Err(StoreError::Conflict { observed, selected }) => {
            return Err(CommitFailure::Conflict(format!(
                "observed {observed}, selected {selected}"
            )))
        }
        Err(e) => return Err(CommitFailure::Other(e.into())),
    };
    tx.commit()
        .map_err(|e| CommitFailure::Other(StoreError::from(e).into()))?;
    Ok(Committed {
        invocation_id: invocation_id.to_string(),
        entry_index: landed.entry_index,
        world_ref: next.reference,
        output_ref,
        output,
        effects,
        replayed: false,
    })
}
