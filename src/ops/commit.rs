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
/// A retry: when `put.invocation_id` already has a recorded commit, the body is rebuilt on
/// the head that commit observed (not the current head), so the same content lands on the
/// same world and answers `replayed` without writing (DEC-UX-10); other content under that id
/// is [`store::Error::InvocationReused`] naming the first field that differs.
///
/// # Errors
/// [`PutError`]; nothing is written on error.
pub fn put(store: &mut Store, put: &Put, now: i64) -> Result<Committed, PutError> {
    if put.files.is_empty() {
        return Err(PutError::NoFiles);
    }
    let recorded = match &put.invocation_id {
        Some(id) => recorded_intent(store, id)?,
        None => None,
    };
    let base = match &recorded {
        Some(intent) if intent.observed_head.is_empty() => {
            return Err(reused(
                intent,
                "ObservedHead",
                "\"\" (a genesis commit)",
                "the head",
            ));
        }
        Some(intent) => intent.observed_head.clone(),
        None => store.head()?.ok_or(PutError::NoHead)?,
    };
    let c = build(store, put, base)?;
    if let Some(intent) = &recorded {
        if c.next_world.reference != intent.world_ref {
            let h = &c.entry.header;
            let recorded_entry = match store.world(&intent.world_ref)? {
                Some(w) => store
                    .log_entry(w.revision)?
                    .filter(|e| e.entry_hash == intent.entry_hash)
                    .map(|e| e.header),
                None => None,
            };
            let (field, was, now_) = match recorded_entry {
                Some(r) if r.transition_fn != h.transition_fn => (
                    "Entry.Header.TransitionFn (the first object's hash)",
                    r.transition_fn,
                    h.transition_fn.clone(),
                ),
                Some(r) if r.written_by != h.written_by => {
                    ("Entry.Header.WrittenBy", r.written_by, h.written_by.clone())
                }
                _ => (
                    "NextWorld.Ref",
                    intent.world_ref.clone(),
                    c.next_world.reference.clone(),
                ),
            };
            return Err(reused(intent, field, &was, &now_));
        }
    }
    c.check()?;
    let landed = store.commit(&c, now)?;
    Ok(Committed { commit: c, landed })
}

fn reused(
    intent: &crate::store::journal::CommitIntent,
    field: &str,
    recorded: &str,
    got: &str,
) -> PutError {
    PutError::Store(store::Error::InvocationReused {
        id: intent.invocation_id.clone(),
        field: field.to_string(),
        recorded: recorded.to_string(),
        got: got.to_string(),
    })
}

/// The commit intent recorded under `id`, if any.
fn recorded_intent(
    store: &Store,
    id: &str,
) -> Result<Option<crate::store::journal::CommitIntent>, store::Error> {
    use crate::store::journal;
    let Some(obj_ref) = store.journal_row(id, journal::Kind::Intent)? else {
        return Ok(None);
    };
    let obj = store
        .object(&obj_ref)?
        .ok_or_else(|| store::Error::Corrupt {
            what: "journal intent".into(),
            detail: format!("object {obj_ref} missing"),
        })?;
    journal::CommitIntent::decode(&obj.payload).map(Some)
}

/// The commit `put` builds on world `head` (see [`put`]).
fn build(store: &Store, put: &Put, head: String) -> Result<Commit, PutError> {
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
    Ok(c)
}
