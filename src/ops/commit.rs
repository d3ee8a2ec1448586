//! Compare-and-append one world (store-format.md §12, DEC-CLI-2, DEC-STORE-2): `world commit`
//! and `POST /v1/commit`.
//!
//! The body is parsed and validated by the caller ([`crate::store::commit::parse_body`],
//! `CommitBody::validate`: spec steps 1–3, before any lock or transaction); [`commit`] lands
//! it in one `BEGIN IMMEDIATE` transaction. [`put`] builds the body from files on top of the
//! selected head (store-format.md §8.4a) and lands it the same way.

use crate::store::commit::{Commit, Landed};
use crate::store::entry::{entry_hash, world_row};
use crate::store::{self, Header, LogEntry, Object, Store};

/// Land one validated commit body in one transaction (`Store::commit`: the spec's steps 4–7;
/// a refused commit leaves the store unchanged).
///
/// # Errors
/// [`store::Error`]: `Conflict` (the observed head is not the selected one), a body that does
/// not extend the chain, a resent invocation id with another body, a store failure.
pub fn commit(store: &mut Store, body: &Commit, now: i64) -> Result<Landed, store::Error> {
    store.commit(body, now)
}

/// What `world commit --put` stores as the next world.
#[derive(Clone, Debug)]
pub struct Put {
    /// The objects' payloads in order; the first is the state root (at least one).
    pub files: Vec<Vec<u8>>,
    /// The objects' semantic ids: one for all, or one per file in order.
    pub semantic_ids: Vec<String>,
    /// The objects' provenance text.
    pub provenance: String,
    /// The entry's `writtenBy`.
    pub writer: String,
    /// A `rest:<id>` invocation id, so `world receipt` can answer for it.
    pub invocation_id: Option<String>,
}

/// What [`put`] committed.
#[derive(Clone, Debug)]
pub struct Committed {
    /// The commit built on the head.
    pub commit: Commit,
    /// Where it landed.
    pub landed: Landed,
}

/// Why [`put`] wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum PutError {
    /// No file to store.
    #[error("--put names no file")]
    NoFiles,
    /// The store has no selected head to extend.
    #[error("the store has no selected head yet")]
    NoHead,
    /// The selected head names no `worlds` row.
    #[error("the selected head {0} names no world row")]
    NoWorldRow(String),
    /// The store refused or failed (the built commit included).
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// Build the next world from `put` on top of the selected head and land it in one
/// transaction: objects from the files, `entryIndex` = head revision + 1, `prevEntryHash` =
/// the head's `logHead`, `semanticsEpoch` and `interpreter` from the head's entry (epoch 1 and
/// the embedded interpreter when that entry is missing), `transitionFn` = `transitionRef` =
/// `stateRoot` = the first object's hash, the entry hash and world ref by the §8.2/§8.3
/// formulas (DEC-CLI-23). The caller holds the writer lock, so the head read here is the one
/// the commit is compared against.
///
/// # Errors
/// [`PutError`]; nothing is written on error.
pub fn put(store: &mut Store, put: &Put, now: i64) -> Result<Committed, PutError> {
    if put.files.is_empty() {
        return Err(PutError::NoFiles);
    }
    let head = store.head()?.ok_or(PutError::NoHead)?;
    let world = store
        .world(&head)?
        .ok_or_else(|| PutError::NoWorldRow(head.clone()))?;
    let prev = store
        .log_entry(world.revision)?
        .filter(|e| e.entry_hash == world.log_head);
    let (epoch, interpreter) = match &prev {
        Some(e) => (e.header.semantics_epoch, e.header.interpreter.clone()),
        None => (1, crate::interp::embedded_ref().to_string()),
    };
    let objects: Vec<Object> = put
        .files
        .iter()
        .enumerate()
        .map(|(i, bytes)| {
            let sid = put
                .semantic_ids
                .get(i)
                .or(put.semantic_ids.first())
                .map(String::as_str)
                .unwrap_or_default();
            Object::new(sid, &put.provenance, bytes.clone())
        })
        .collect();
    let root = objects[0].meta.hash.clone();
    let index = world.revision + 1;
    let header = Header {
        entry_index: index,
        semantics_epoch: epoch,
        transition_fn: root.clone(),
        interpreter,
        prev_entry_hash: world.log_head.clone(),
        written_by: put.writer.clone(),
    };
    let eh = entry_hash(&header, &root).to_string();
    let next_world = world_row(index, &root, &eh);
    let c = Commit {
        invocation_id: put.invocation_id.clone(),
        observed_head: head,
        objects,
        next_world,
        entry: LogEntry {
            header,
            entry_hash: eh,
            transition_ref: root,
        },
    };
    c.check()?;
    let landed = store.commit(&c, now)?;
    Ok(Committed { commit: c, landed })
}
