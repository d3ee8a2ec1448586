//! What `world` checks on a client commit before writing it (store-format.md §8.4a,
//! DEC-STORE-5): the commit must extend the chain it observed, and a resent invocation id must
//! carry the commit already recorded under it.
//!
//! `world` is stricter than the reference on what it *accepts*, never on what it *reads*: a
//! store the reference wrote with gaps still opens and `verify` reports what it finds.

use std::collections::BTreeSet;

use rusqlite::{Connection, OptionalExtension};

use super::commit::Commit;
use super::{Error, WorldRow};

/// `writtenBy` prefixes only `world` itself writes (coordinator entries and `world genesis`).
pub const RESERVED_WRITERS: [&str; 2] = ["coordinator:", "world:"];

fn refuse(field: &'static str, reason: &'static str, want: String, got: String) -> Error {
    Error::ClientCommitRefused {
        field,
        reason,
        want,
        got,
    }
}

fn world_in(tx: &Connection, reference: &str) -> Result<Option<WorldRow>, Error> {
    Ok(tx
        .query_row(
            "SELECT world_ref, revision, state_root, log_head FROM worlds WHERE world_ref = ?1",
            [reference],
            WorldRow::from_row,
        )
        .optional()?)
}

/// Require that client commit `c` extends the chain it observed (run inside the commit's
/// transaction, after the head guard, so `c.observed_head` is the selected head).
///
/// Genesis (`observedHead` = `""`): `entryIndex` 0, `nextWorld.revision` 0, and a
/// `world:genesis` writer only when its values recompute. Otherwise:
/// `entryIndex` = observed revision + 1, `nextWorld.revision` = `entryIndex`,
/// `prevEntryHash` = the observed world's `logHead`. Always: `nextWorld.logHead` =
/// `entryHash`, `nextWorld.ref` names no existing world, `writtenBy` outside
/// [`RESERVED_WRITERS`].
///
/// # Errors
/// [`Error::ClientCommitRefused`] naming the first field that breaks a rule;
/// [`Error::Corrupt`] when the selected head names no world row.
pub fn extends_chain(tx: &Connection, c: &Commit) -> Result<(), Error> {
    let h = &c.entry.header;
    let w = &c.next_world;
    let (want_index, want_prev) = if c.observed_head.is_empty() {
        (0, None)
    } else {
        let observed = world_in(tx, &c.observed_head)?.ok_or_else(|| Error::Corrupt {
            what: "selected head".into(),
            detail: format!("world {} has no world row", c.observed_head),
        })?;
        (observed.revision.saturating_add(1), Some(observed.log_head))
    };
    if h.entry_index != want_index {
        return Err(refuse(
            "Entry.Header.EntryIndex",
            if want_prev.is_some() {
                "must be the observed world's revision + 1"
            } else {
                "must be 0 for a genesis commit"
            },
            want_index.to_string(),
            h.entry_index.to_string(),
        ));
    }
    if w.revision != h.entry_index {
        return Err(refuse(
            "NextWorld.Revision",
            "must equal Entry.Header.EntryIndex",
            h.entry_index.to_string(),
            w.revision.to_string(),
        ));
    }
    if let Some(prev) = &want_prev {
        if &h.prev_entry_hash != prev {
            return Err(refuse(
                "Entry.Header.PrevEntryHash",
                "must be the observed world's logHead",
                prev.clone(),
                h.prev_entry_hash.clone(),
            ));
        }
    }
    if w.log_head != c.entry.entry_hash {
        return Err(refuse(
            "NextWorld.LogHead",
            "must equal Entry.EntryHash",
            c.entry.entry_hash.clone(),
            w.log_head.clone(),
        ));
    }
    if world_in(tx, &w.reference)?.is_some() {
        return Err(refuse(
            "NextWorld.Ref",
            "names an existing world; a commit must create a new one",
            "a world ref not yet in the store".into(),
            w.reference.clone(),
        ));
    }
    if want_prev.is_none() && h.written_by == "world:genesis" {
        return genesis_recomputes(c);
    }
    if let Some(p) = RESERVED_WRITERS
        .iter()
        .find(|p| h.written_by.starts_with(**p))
    {
        return Err(refuse(
            "Entry.Header.WrittenBy",
            "is in a namespace only world writes itself",
            format!("a writer outside {p}*"),
            h.written_by.clone(),
        ));
    }
    Ok(())
}

/// A client genesis may carry `world:genesis` (the shape `world genesis` builds, sent over
/// REST by a client) only when every value `verify` recomputes for such an entry holds:
/// `entryHash` (§8.2), `nextWorld.ref` (§8.3), `stateRoot` = `transitionRef`, and the goal
/// object is one of the commit's objects.
fn genesis_recomputes(c: &Commit) -> Result<(), Error> {
    let h = &c.entry.header;
    let w = &c.next_world;
    let eh = super::entry::entry_hash(h, &c.entry.transition_ref).to_string();
    if eh != c.entry.entry_hash {
        return Err(refuse(
            "Entry.EntryHash",
            "must be the recomputed entry hash for a world:genesis entry",
            eh,
            c.entry.entry_hash.clone(),
        ));
    }
    let wr = super::entry::world_ref(w.revision, &w.state_root, &w.log_head).to_string();
    if wr != w.reference {
        return Err(refuse(
            "NextWorld.Ref",
            "must be the recomputed world ref for a world:genesis entry",
            wr,
            w.reference.clone(),
        ));
    }
    if w.state_root != c.entry.transition_ref
        || !c.objects.iter().any(|o| o.meta.hash == w.state_root)
    {
        return Err(refuse(
            "NextWorld.StateRoot",
            "must be Entry.TransitionRef and one of the commit's objects (the goal) for a world:genesis entry",
            c.entry.transition_ref.clone(),
            w.state_root.clone(),
        ));
    }
    Ok(())
}

/// Require that resent client commit `c` (whose invocation id `id` already has an outcome)
/// carries the commit recorded under it, compared over the whole body: the log row (all six
/// header fields, `entryHash`, `transitionRef`), the world row, and the set of member objects
/// with each object's `interfaceHash`, `semanticId` and `provenance` where this entry wrote
/// the row (an object stored by an earlier entry kept that entry's metadata: first writer wins,
/// store-format.md §9). Payloads are covered by the object hashes, which were re-hashed.
///
/// # Errors
/// [`Error::InvocationReused`] naming the first differing field; [`Error::Corrupt`] when the
/// recorded entry is gone.
pub fn same_as_recorded(tx: &Connection, id: &str, c: &Commit) -> Result<(), Error> {
    let differs = |field: &str, recorded: String, got: String| Error::InvocationReused {
        id: id.to_string(),
        field: field.to_string(),
        recorded,
        got,
    };
    let h = &c.entry.header;
    let stored = tx
        .query_row(
            "SELECT entry_index, semantics_epoch, transition_fn_ref, interpreter_ref, prev_entry_hash_ref, written_by, transition_ref
             FROM log_entries WHERE entry_hash_ref = ?1",
            [&c.entry.entry_hash],
            |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, String>(6)?,
                ))
            },
        )
        .optional()?
        .ok_or_else(|| Error::Corrupt {
            what: format!("invocation {id}"),
            detail: format!(
                "its outcome is recorded but log entry {} is not in the log",
                c.entry.entry_hash
            ),
        })?;
    let pairs: [(&str, String, String); 7] = [
        (
            "Entry.Header.EntryIndex",
            stored.0.to_string(),
            h.entry_index.to_string(),
        ),
        (
            "Entry.Header.SemanticsEpoch",
            stored.1.to_string(),
            h.semantics_epoch.to_string(),
        ),
        (
            "Entry.Header.TransitionFn",
            stored.2.clone(),
            h.transition_fn.clone(),
        ),
        (
            "Entry.Header.Interpreter",
            stored.3.clone(),
            h.interpreter.clone(),
        ),
        (
            "Entry.Header.PrevEntryHash",
            stored.4.clone(),
            h.prev_entry_hash.clone(),
        ),
        (
            "Entry.Header.WrittenBy",
            stored.5.clone(),
            h.written_by.clone(),
        ),
        (
            "Entry.TransitionRef",
            stored.6.clone(),
            c.entry.transition_ref.clone(),
        ),
    ];
    for (field, recorded, got) in pairs {
        if recorded != got {
            return Err(differs(field, recorded, got));
        }
    }
    let index = stored.0;
    let world = world_in(tx, &c.next_world.reference)?.ok_or_else(|| Error::Corrupt {
        what: format!("invocation {id}"),
        detail: format!("world {} is not stored", c.next_world.reference),
    })?;
    let w = &c.next_world;
    for (field, recorded, got) in [
        (
            "NextWorld.Revision",
            world.revision.to_string(),
            w.revision.to_string(),
        ),
        (
            "NextWorld.StateRoot",
            world.state_root,
            w.state_root.clone(),
        ),
        ("NextWorld.LogHead", world.log_head, w.log_head.clone()),
    ] {
        if recorded != got {
            return Err(differs(field, recorded, got));
        }
    }
    let mut stmt = tx.prepare(
        "SELECT c.object_ref, o.interface_hash_ref, o.semantic_id, o.provenance,
                (SELECT MIN(e.entry_index) FROM commit_objects e WHERE e.object_ref = c.object_ref)
         FROM commit_objects c LEFT JOIN objects o ON o.hash_ref = c.object_ref
         WHERE c.entry_index = ?1",
    )?;
    type Member = (String, Option<String>, Option<String>, Option<String>, i64);
    let members: Vec<Member> = stmt
        .query_map([index], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })?
        .collect::<Result<_, _>>()?;
    let recorded: BTreeSet<&str> = members.iter().map(|m| m.0.as_str()).collect();
    let got: BTreeSet<&str> = c.objects.iter().map(|o| o.meta.hash.as_str()).collect();
    if recorded != got {
        let fmt = |s: &BTreeSet<&str>| {
            if s.is_empty() {
                "none".to_string()
            } else {
                s.iter().copied().collect::<Vec<_>>().join(",")
            }
        };
        return Err(differs("Objects", fmt(&recorded), fmt(&got)));
    }
    for o in &c.objects {
        let Some((_, iface, semantic, provenance, first)) =
            members.iter().find(|m| m.0 == o.meta.hash)
        else {
            continue;
        };
        if *first != index {
            continue; // an earlier entry wrote this row; its metadata won then as now
        }
        for (field, recorded, got) in [
            ("Objects.InterfaceHash", iface, &o.meta.interface_hash),
            ("Objects.SemanticID", semantic, &o.meta.semantic_id),
            ("Objects.Provenance", provenance, &o.meta.provenance),
        ] {
            let recorded = recorded.clone().unwrap_or_default();
            if &recorded != got {
                return Err(differs(
                    &format!("{field} of {}", o.meta.hash),
                    recorded,
                    got.clone(),
                ));
            }
        }
    }
    Ok(())
}
