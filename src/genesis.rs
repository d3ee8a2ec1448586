//! `world genesis`: the deterministic genesis commit of DEC-STORE-3 (store-format.md §8.5).

use crate::encoding::HashRef;
use crate::store::commit::Commit;
use crate::store::entry::{entry_hash, world_row};
use crate::store::{Header, LogEntry, Object};

/// Default semantic id of the goal object.
pub const GOAL_SEMANTIC_ID: &str = "world/genesis-goal/v1";
/// `writtenBy` and the goal object's provenance.
pub const WRITTEN_BY: &str = "world:genesis";

/// Build the genesis commit: the goal object (payload `goal`, default `{}`), revision 0,
/// entry 0, `prevEntryHash = sha256("")`, `transitionFn = transitionRef = stateRoot` = the
/// goal's hash, the entry hash and world ref by the coordinator formulas.
///
/// `interpreter`: the pin recorded in the header; `semantics_epoch`: 1 unless an epoch
/// registry nominates the pinned release.
pub fn build(
    goal: Vec<u8>,
    semantic_id: &str,
    interpreter: &HashRef,
    semantics_epoch: i64,
) -> Commit {
    let goal = Object::new(semantic_id, WRITTEN_BY, goal);
    let goal_ref = goal.meta.hash.clone();
    let header = Header {
        entry_index: 0,
        semantics_epoch,
        transition_fn: goal_ref.clone(),
        interpreter: interpreter.to_string(),
        prev_entry_hash: HashRef::of(b"").to_string(),
        written_by: WRITTEN_BY.to_string(),
    };
    let eh = entry_hash(&header, &goal_ref).to_string();
    let next_world = world_row(0, &goal_ref, &eh);
    Commit {
        invocation_id: None,
        observed_head: String::new(),
        objects: vec![goal],
        next_world,
        entry: LogEntry {
            header,
            entry_hash: eh,
            transition_ref: goal_ref,
        },
    }
}
