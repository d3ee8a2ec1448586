//! The per-entry checks of the log walk (store-format.md §13.1): an entry's hashes, world
//! row, coordinator and invocation-record links, and the `Human.Approve` claims its effect
//! records name.

use super::*;

impl Store {
    /// A successful `Human.Approve` record whose result says the approval was claimed must
    /// have its `approval_claims` row (a deleted claim would make the approval reusable).
    pub(super) fn lost_claim(&self, r: &EffectRecord) -> Result<Option<String>, Error> {
        if r.effect != "Human.Approve" || !r.allowed || r.failed || r.result_ref.is_empty() {
            return Ok(None);
        }
        let Some(result) = self.object(&r.result_ref)? else {
            return Ok(None); // reported as a dangling ref
        };
        let v: serde_json::Value = match serde_json::from_slice(&result.payload) {
            Ok(v) => v,
            Err(_) => return Ok(None),
        };
        let (Some("approved"), Some(request), Some(by)) = (
            v.get("state").and_then(|x| x.as_str()),
            v.get("approval_ref").and_then(|x| x.as_str()),
            v.get("claimed_by").and_then(|x| x.as_str()),
        ) else {
            return Ok(None);
        };
        let claimed = self
            .conn()
            .query_row(
                "SELECT 1 FROM approval_claims WHERE request_ref = ?1 AND invocation_id = ?2",
                [request, by],
                |_| Ok(()),
            )
            .optional()?
            .is_some();
        Ok((!claimed).then(|| {
            format!("Human.Approve claimed approval request {request} for {by}, but approval_claims has no such row")
        }))
    }

    pub(super) fn names_invocation_record(&self, r: &str) -> Result<bool, Error> {
        Ok(self
            .conn()
            .query_row(
                "SELECT 1 FROM objects WHERE hash_ref = ?1 AND semantic_id IN (?2, ?3)",
                [r, INVOCATION_RECORD_V1, INVOCATION_RECORD_V2],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    pub(super) fn has_object(&self, r: &str) -> Result<bool, Error> {
        Ok(self
            .conn()
            .query_row("SELECT 1 FROM objects WHERE hash_ref = ?1", [r], |_| Ok(()))
            .optional()?
            .is_some())
    }

    pub(super) fn check_entry(
        &self,
        rep: &mut Report,
        e: &LogEntry,
        world: Option<&WorldRow>,
        prev: Option<&LogEntry>,
        bundle: bool,
        pred_omitted: bool,
    ) -> Result<(), Error> {
        let idx = e.header.entry_index;
        let h = &e.header;
        bad_refs(rep, e);
        // An entry whose transitionRef is an invocation record is recomputed whatever its
        // writtenBy says: a relabelled coordinator entry is not a client entry (issue 13 §3).
        let coordinator =
            is_coordinator(&h.written_by) || self.names_invocation_record(&e.transition_ref)?;
        if !coordinator {
            rep.not_recomputed += 1;
            if let Some(p) = prev {
                if h.prev_entry_hash != p.entry_hash {
                    rep.warn("not_recomputed", Some(idx), Some(e.entry_hash.clone()), "client-supplied entry: prevEntryHash does not chain to the previous entry (not recomputed)");
                }
            }
            return Ok(());
        }
        rep.recomputed += 1;
        let computed = entry_hash(h, &e.transition_ref).to_string();
        if computed != e.entry_hash {
            rep.fail(
                "entry_hash_mismatch",
                Some(idx),
                Some(e.entry_hash.clone()),
                format!("recomputed entry hash is {computed}"),
            );
        }
        self.check_prev_link(rep, e, prev, bundle, pred_omitted)?;
        // World row for this entry.
        let world = world.map(|w| (w.reference.clone(), w.revision, w.state_root.clone()));
        let Some((wref, revision, state_root)) = world else {
            rep.fail(
                "world_mismatch",
                Some(idx),
                Some(e.entry_hash.clone()),
                "no world row has this entry as its logHead",
            );
            return Ok(());
        };
        if world_ref(revision, &state_root, &e.entry_hash).to_string() != wref {
            rep.fail(
                "world_mismatch",
                Some(idx),
                Some(wref.clone()),
                "worldRef does not re-derive",
            );
        }
        if revision != idx {
            rep.fail(
                "world_mismatch",
                Some(idx),
                Some(wref.clone()),
                format!("world revision {revision} differs from entry index"),
            );
        }
        // The record behind transitionRef.
        let Some(obj) = self.object(&e.transition_ref)? else {
            rep.fail(
                "dangling_ref",
                Some(idx),
                Some(e.transition_ref.clone()),
                "transitionRef names a missing object",
            );
            return Ok(());
        };
        if h.written_by == "world:genesis" {
            if state_root != e.transition_ref {
                rep.fail(
                    "world_mismatch",
                    Some(idx),
                    Some(wref),
                    "genesis stateRoot is not the goal object",
                );
            }
            return Ok(());
        }
        let sid = obj.meta.semantic_id.as_str();
        if sid != INVOCATION_RECORD_V1 && sid != INVOCATION_RECORD_V2 {
            rep.fail(
                "dangling_ref",
                Some(idx),
                Some(e.transition_ref.clone()),
                format!("transitionRef is a {sid}, not an invocation record"),
            );
            return Ok(());
        }
        match InvocationRecord::decode(sid, &obj.payload) {
            Err(err) => rep.fail(
                "record_inconsistent",
                Some(idx),
                Some(e.transition_ref.clone()),
                err,
            ),
            Ok(r) => {
                if r.output != state_root {
                    rep.fail(
                        "world_mismatch",
                        Some(idx),
                        Some(wref),
                        "stateRoot is not the record's output",
                    );
                }
                if r.transition_fn != h.transition_fn
                    || r.interpreter != h.interpreter
                    || r.semantics_epoch != h.semantics_epoch
                {
                    rep.fail(
                        "record_inconsistent",
                        Some(idx),
                        Some(e.transition_ref.clone()),
                        "record's fn, interpreter or epoch differs from the header",
                    );
                }
                let mut links = vec![r.input.clone(), r.output.clone()];
                links.extend(r.plan.clone());
                links.extend(r.effects.clone().unwrap_or_default());
                for l in links {
                    if !self.has_object(&l)? {
                        rep.fail(
                            "dangling_ref",
                            Some(idx),
                            Some(l),
                            "record names a missing object",
                        );
                    }
                }
            }
        }
        Ok(())
    }

    /// The entry's link to its predecessor: a coordinator predecessor's `entryHash` must be
    /// the entry's `prevEntryHash` (`prev_mismatch`); a client predecessor's world heads are
    /// only warned about; an absent one is a `bundle_gap` in a bundle, else `not_recomputed`,
    /// unless the export omitted it on purpose (`pred_omitted`).
    fn check_prev_link(
        &self,
        rep: &mut Report,
        e: &LogEntry,
        prev: Option<&LogEntry>,
        bundle: bool,
        pred_omitted: bool,
    ) -> Result<(), Error> {
        let idx = e.header.entry_index;
        let h = &e.header;
        if idx >= 1 {
            match prev {
                Some(p) if p.header.entry_index == idx - 1 => {
                    if is_coordinator(&p.header.written_by) {
                        if h.prev_entry_hash != p.entry_hash {
                            rep.fail(
                                "prev_mismatch",
                                Some(idx),
                                Some(h.prev_entry_hash.clone()),
                                format!(
                                    "prevEntryHash does not equal entry {}'s entryHash {}",
                                    idx - 1,
                                    p.entry_hash
                                ),
                            );
                        }
                    } else {
                        let heads: Vec<String> = {
                            let mut stmt = self
                                .conn()
                                .prepare("SELECT log_head FROM worlds WHERE revision = ?1")?;
                            let v = stmt
                                .query_map([idx - 1], |r| r.get(0))?
                                .collect::<Result<_, _>>()?;
                            v
                        };
                        if h.prev_entry_hash != p.entry_hash && !heads.contains(&h.prev_entry_hash)
                        {
                            rep.warn("not_recomputed", Some(idx), Some(h.prev_entry_hash.clone()), "link into a client-supplied world that cannot be identified (not recomputed)");
                        }
                    }
                }
                // The export left the predecessor out on purpose (the marker's list).
                _ if pred_omitted => {}
                _ => rep.warn(
                    if bundle {
                        "bundle_gap"
                    } else {
                        "not_recomputed"
                    },
                    Some(idx),
                    None,
                    "predecessor entry absent; link not recomputed",
                ),
            }
        }
        Ok(())
    }
}

/// Every ref in the entry's header must parse (`bad_ref`, naming the field).
fn bad_refs(rep: &mut Report, e: &LogEntry) {
    let idx = e.header.entry_index;
    let h = &e.header;
    for (field, text) in [
        ("transitionFn", &h.transition_fn),
        ("interpreter", &h.interpreter),
        ("prevEntryHash", &h.prev_entry_hash),
        ("entryHash", &e.entry_hash),
        ("transitionRef", &e.transition_ref),
    ] {
        if let Err(err) = HashRef::parse(text) {
            rep.fail(
                "bad_ref",
                Some(idx),
                Some(text.clone()),
                format!("{field}: {err}"),
            );
        }
    }
}
