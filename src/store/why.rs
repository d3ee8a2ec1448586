//! `world why`: the provenance walk from a target to its world, entry, record, input, plan,
//! effects and output, re-hashing each object and recomputing each link
//! (store-format.md §13.2).

use serde::Serialize;

use crate::encoding::trcjson::{self, Bounds};
use crate::encoding::HashRef;

use super::entry::{entry_hash, is_coordinator, world_ref};
use super::records::{
    EffectRecord, InvocationRecord, EFFECT_RECORD, INVOCATION_RECORD_V1, INVOCATION_RECORD_V2,
};
use super::{journal, Error, LogEntry, Object, Store};

/// One checked link.
#[derive(Clone, Debug, Serialize)]
pub struct Link {
    /// `world`, `entry`, `record`, `input`, `plan`, `effect`, `output`, `goal`.
    pub name: String,
    /// Whether the link holds.
    pub ok: bool,
    /// The ref checked.
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// What was checked or what broke.
    pub detail: String,
}

/// The walk's answer: `{entry, matchedBy, coordinator, note?, links, ok}`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Why {
    /// The entry explained.
    pub entry: LogEntry,
    /// How the target matched (`index`, `head`, `world`, `record`, `output`, `effect-record`,
    /// `invocation`, `receipt`, `result`).
    pub matched_by: String,
    /// Whether the entry was written by a coordinator (or `world genesis`).
    pub coordinator: bool,
    /// A note for client-supplied entries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The links in order.
    pub links: Vec<Link>,
    /// All links hold.
    pub ok: bool,
}

impl Why {
    /// A walk's answer; `ok` is derived: every link holds.
    fn from_links(
        entry: LogEntry,
        matched_by: String,
        coordinator: bool,
        note: Option<String>,
        links: Vec<Link>,
    ) -> Why {
        let ok = links.iter().all(|l| l.ok);
        Why {
            entry,
            matched_by,
            coordinator,
            note,
            links,
            ok,
        }
    }
}

/// What to explain.
#[derive(Clone, Debug)]
pub enum Target {
    /// A log index.
    Index(i64),
    /// The selected head.
    Head,
    /// An object or world ref.
    Ref(String),
    /// An invocation id (`cli:`, `a2a:`, `mcp:` scanned; `rest:` through its receipt).
    Invocation(String),
    /// A result's bytes (a `--json-out` result minus one LF).
    Result(Vec<u8>),
}

/// Why a walk could not start.
#[derive(Debug, thiserror::Error)]
pub enum WhyError {
    /// The target was not found (within the scan window where one applies).
    #[error("{0}")]
    NotFound(String),
    /// Store failure.
    #[error(transparent)]
    Store(#[from] Error),
}

fn link(name: &str, ok: bool, reference: Option<&str>, detail: impl Into<String>) -> Link {
    Link {
        name: name.to_string(),
        ok,
        reference: reference.map(str::to_string),
        detail: detail.into(),
    }
}

impl Store {
    /// Explain `target`, scanning at most `scan` entries back from the head for non-index targets.
    pub fn why(&self, target: &Target, scan: u32) -> Result<Why, WhyError> {
        let (entry, matched_by) = self.find_entry(target, scan)?;
        Ok(self.walk(entry, matched_by)?)
    }

    fn scan_back(
        &self,
        scan: u32,
        mut pred: impl FnMut(&Store, &LogEntry) -> Result<bool, Error>,
    ) -> Result<Option<LogEntry>, Error> {
        let mut found = None;
        self.for_each_log(None, Some(scan as u64), true, |e| {
            if found.is_none() && pred(self, &e)? {
                found = Some(e);
            }
            Ok(())
        })?;
        Ok(found)
    }

    fn entry_for_world(&self, world: &str) -> Result<Option<LogEntry>, Error> {
        let Some(w) = self.world(world)? else {
            return Ok(None);
        };
        let idx: Option<i64> = self
            .conn()
            .query_row(
                "SELECT entry_index FROM log_entries WHERE entry_hash_ref = ?1",
                [&w.log_head],
                |r| r.get(0),
            )
            .ok();
        match idx {
            Some(i) => self.log_entry(i),
            None => Ok(None),
        }
    }

    fn find_entry(&self, target: &Target, scan: u32) -> Result<(LogEntry, String), WhyError> {
        let miss =
            |what: &str| WhyError::NotFound(format!("{what} not found in the last {scan} entries"));
        match target {
            Target::Index(i) => self
                .log_entry(*i)?
                .map(|e| (e, "index".to_string()))
                .ok_or_else(|| WhyError::NotFound(format!("log entry not found: {i}"))),
            Target::Head => {
                let head = self.head()?.ok_or_else(|| {
                    WhyError::NotFound("no world head has been selected yet".into())
                })?;
                self.entry_for_world(&head)?
                    .map(|e| (e, "head".into()))
                    .ok_or_else(|| {
                        WhyError::NotFound(format!("head world {head} names no log entry"))
                    })
            }
            Target::Ref(r) => {
                if let Some(obj) = self.object(r)? {
                    let sid = obj.meta.semantic_id.clone();
                    let found = match sid.as_str() {
                        INVOCATION_RECORD_V1 | INVOCATION_RECORD_V2 => self.scan_back(scan, |_, e| Ok(&e.transition_ref == r))?.map(|e| (e, "record")),
                        EFFECT_RECORD => self
                            .scan_back(scan, |s, e| {
                                Ok(s.object(&e.transition_ref)?
                                    .and_then(|o| InvocationRecord::decode(&o.meta.semantic_id, &o.payload).ok())
                                    .is_some_and(|rec| rec.effects.unwrap_or_default().contains(r)))
                            })?
                            .map(|e| (e, "effect-record")),
                        _ => self
                            .scan_back(scan, |s, e| {
                                if &e.transition_ref == r {
                                    return Ok(true);
                                }
                                Ok(s.conn()
                                    .query_row("SELECT 1 FROM worlds WHERE log_head = ?1 AND state_root = ?2", [&e.entry_hash, r], |_| Ok(()))
                                    .is_ok())
                            })?
                            .map(|e| (e, "output")),
                    };
                    return found
                        .map(|(e, m)| (e, m.to_string()))
                        .ok_or_else(|| miss(r));
                }
                self.entry_for_world(r)?
                    .map(|e| (e, "world".into()))
                    .ok_or_else(|| {
                        WhyError::NotFound(format!(
                            "{r} is neither an object nor a world in this store"
                        ))
                    })
            }
            Target::Invocation(id) if id.starts_with("rest:") => {
                let rc = journal::receipt(self.conn(), id)?;
                let Some(world) = rc.result_ref else {
                    return Err(WhyError::NotFound(format!(
                        "{id} is not resolved (receipt state {:?})",
                        rc.state
                    )));
                };
                self.entry_for_world(&world)?
                    .map(|e| (e, "receipt".into()))
                    .ok_or_else(|| {
                        WhyError::NotFound(format!(
                            "{id} resolved to {world}, which names no log entry"
                        ))
                    })
            }
            Target::Invocation(id) => {
                // The receipt re-hashes the invocation's journal outcome: an edited outcome is
                // an integrity error here too, never "all links verified" (issue 13 §3).
                journal::receipt(self.conn(), id)?;
                self.scan_back(scan, |s, e| {
                    Ok(s.object(&e.transition_ref)?
                        .and_then(|o| {
                            InvocationRecord::decode(&o.meta.semantic_id, &o.payload).ok()
                        })
                        .is_some_and(|rec| &rec.invocation_id == id))
                })?
                .map(|e| (e, "invocation".into()))
                .ok_or_else(|| miss(id))
            }
            Target::Result(bytes) => {
                let out_ref = HashRef::of(bytes).to_string();
                if let Some(e) = self.scan_back(scan, |s, e| {
                    Ok(s.conn()
                        .query_row(
                            "SELECT 1 FROM worlds WHERE log_head = ?1 AND state_root = ?2",
                            [&e.entry_hash, &out_ref],
                            |_| Ok(()),
                        )
                        .is_ok())
                })? {
                    return Ok((e, "result".into()));
                }
                let plan = trcjson::parse(bytes, Bounds::PLAN).ok().and_then(|v| {
                    v.get("world")
                        .and_then(|w| w.get("plan"))
                        .and_then(|p| p.as_str().map(str::to_string))
                });
                match plan {
                    Some(p) => self
                        .scan_back(scan, |s, e| {
                            Ok(s.object(&e.transition_ref)?
                                .and_then(|o| {
                                    InvocationRecord::decode(&o.meta.semantic_id, &o.payload).ok()
                                })
                                .is_some_and(|rec| rec.plan.as_deref() == Some(p.as_str())))
                        })?
                        .map(|e| (e, "result".into()))
                        .ok_or_else(|| miss("result")),
                    None => Err(miss("result")),
                }
            }
        }
    }

    fn object_link(
        &self,
        name: &str,
        r: &str,
        links: &mut Vec<Link>,
    ) -> Result<Option<Object>, Error> {
        match self.object(r)? {
            None => {
                links.push(link(name, false, Some(r), "object is missing"));
                Ok(None)
            }
            Some(o) if !o.verifies() => {
                links.push(link(
                    name,
                    false,
                    Some(r),
                    format!("payload hashes to {}", HashRef::of(&o.payload)),
                ));
                Ok(None)
            }
            Some(o) => {
                links.push(link(
                    name,
                    true,
                    Some(r),
                    format!("{} re-hashes", o.meta.semantic_id),
                ));
                Ok(Some(o))
            }
        }
    }

    /// The chain of one entry, link by link (world, entry, record, input, plan, effects,
    /// output), each re-derived or re-hashed. A client entry's hashes are only named, not
    /// recomputed ([`Self::client_links`]); genesis has its goal as the output.
    fn walk(&self, entry: LogEntry, matched_by: String) -> Result<Why, Error> {
        let coordinator = is_coordinator(&entry.header.written_by);
        let mut links = Vec::new();
        let world = self
            .conn()
            .query_row(
                "SELECT world_ref, revision, state_root FROM worlds WHERE log_head = ?1",
                [&entry.entry_hash],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, i64>(1)?,
                        r.get::<_, String>(2)?,
                    ))
                },
            )
            .ok();
        if !coordinator {
            let note = Some("client-supplied entry hash: not recomputed".to_string());
            self.client_links(&entry, world.as_ref(), &mut links)?;
            return Ok(Why::from_links(entry, matched_by, coordinator, note, links));
        }
        let state_root = world_link(&entry, world.as_ref(), &mut links);
        entry_link(&entry, &mut links);
        if entry.header.written_by == "world:genesis" {
            if let Some(o) = self.object_link("goal", &entry.transition_ref, &mut links)? {
                let ok = state_root.as_deref() == Some(o.meta.hash.as_str());
                links.push(link(
                    "output",
                    ok,
                    Some(&o.meta.hash),
                    if ok {
                        "goal is the world's stateRoot"
                    } else {
                        "goal is not the world's stateRoot"
                    },
                ));
            }
        } else {
            self.record_links(&entry, state_root.as_deref(), &mut links)?;
        }
        Ok(Why::from_links(entry, matched_by, coordinator, None, links))
    }

    /// A client entry: the world row that names it, the entry as written, the object it
    /// names (re-hashed); nothing recomputed.
    fn client_links(
        &self,
        entry: &LogEntry,
        world: Option<&(String, i64, String)>,
        links: &mut Vec<Link>,
    ) -> Result<(), Error> {
        let h = &entry.header;
        match world {
            Some((w, rev, _)) => links.push(link(
                "world",
                true,
                Some(w),
                format!("revision {rev} names this entry (client-supplied ref, not recomputed)"),
            )),
            None => links.push(link("world", false, None, "no world row names this entry")),
        }
        links.push(link(
            "entry",
            true,
            Some(&entry.entry_hash),
            format!("#{} {} (not recomputed)", h.entry_index, h.written_by),
        ));
        if let Some(o) = self.object(&entry.transition_ref)? {
            let ok = o.verifies();
            links.push(link(
                "object",
                ok,
                Some(&entry.transition_ref),
                format!(
                    "{} {}",
                    o.meta.semantic_id,
                    if ok { "re-hashes" } else { "does NOT re-hash" }
                ),
            ));
        }
        Ok(())
    }

    /// The record link and everything it names: input, plan, each effect, the output.
    fn record_links(
        &self,
        entry: &LogEntry,
        state_root: Option<&str>,
        links: &mut Vec<Link>,
    ) -> Result<(), Error> {
        let h = &entry.header;
        let Some(rec_obj) = self.object_link("record", &entry.transition_ref, links)? else {
            return Ok(());
        };
        let rec = match InvocationRecord::decode(&rec_obj.meta.semantic_id, &rec_obj.payload) {
            Ok(r) => r,
            Err(e) => {
                if let Some(l) = links.last_mut() {
                    l.ok = false;
                    l.detail = format!("undecodable record: {e}");
                }
                return Ok(());
            }
        };
        if rec.transition_fn != h.transition_fn
            || rec.interpreter != h.interpreter
            || rec.semantics_epoch != h.semantics_epoch
        {
            if let Some(l) = links.last_mut() {
                l.ok = false;
                l.detail = "record's fn, interpreter or epoch differs from the header".into();
            }
        } else if let Some(l) = links.last_mut() {
            l.detail = format!(
                "{} {} skill {} ({})",
                rec_obj.meta.semantic_id, rec.invocation_id, rec.skill_id, rec.episode_id
            );
        }
        self.object_link("input", &rec.input, links)?;
        if let Some(p) = &rec.plan {
            self.object_link("plan", p, links)?;
        }
        for e in rec.effects.clone().unwrap_or_default() {
            links.push(self.effect_link(&e)?);
        }
        if let Some(out) = self.object_link("output", &rec.output, links)? {
            let problems = output_problems(&rec, &out, state_root);
            if let Some(l) = links.last_mut() {
                if problems.is_empty() {
                    l.detail = "output re-hashes and is the world's stateRoot".into();
                } else {
                    l.ok = false;
                    l.detail = format!("output {}", problems.join("; "));
                }
            }
        }
        Ok(())
    }

    /// One effect record: present, re-hashing, lawful, its request and result resolving.
    fn effect_link(&self, e: &str) -> Result<Link, Error> {
        let o = match self.object(e)? {
            None => return Ok(link("effect", false, Some(e), "effect record is missing")),
            Some(o) if !o.verifies() => {
                return Ok(link(
                    "effect",
                    false,
                    Some(e),
                    "effect record does not re-hash",
                ))
            }
            Some(o) => o,
        };
        let er = match EffectRecord::decode(&o.payload) {
            Err(err) => return Ok(link("effect", false, Some(e), err)),
            Ok(er) => er,
        };
        let law = er.check_law();
        let req_ok = self.object(&er.request_ref)?.is_some_and(|x| x.verifies());
        let res_ok =
            er.result_ref.is_empty() || self.object(&er.result_ref)?.is_some_and(|x| x.verifies());
        let status = if !er.allowed {
            er.denial.clone()
        } else if er.failed {
            "failed".into()
        } else {
            "ok".into()
        };
        let ok = law.is_ok() && req_ok && res_ok;
        let detail = match (&law, req_ok, res_ok) {
            (Err(l), _, _) => format!("{} {}: {l}", er.effect, status),
            (_, false, _) => format!("{} {}: request does not resolve", er.effect, status),
            (_, _, false) => format!("{} {}: result does not resolve", er.effect, status),
            _ => format!(
                "{} {} {} cost {} budget {}→{}",
                er.effect, er.scope, status, er.cost, er.budget_before, er.budget_after
            ),
        };
        Ok(link("effect", ok, Some(e), detail))
    }
}

/// The world link of a coordinator entry: the world row naming it must re-derive its ref
/// (revision, stateRoot, entry hash). Returns the row's stateRoot, `None` without a row.
fn world_link(
    entry: &LogEntry,
    world: Option<&(String, i64, String)>,
    links: &mut Vec<Link>,
) -> Option<String> {
    match world {
        Some((w, rev, root)) => {
            let derived = world_ref(*rev, root, &entry.entry_hash).to_string();
            links.push(link(
                "world",
                &derived == w && *rev == entry.header.entry_index,
                Some(w),
                if &derived == w {
                    format!("ref re-derives (revision {rev})")
                } else {
                    format!("ref re-derives to {derived}")
                },
            ));
            Some(root.clone())
        }
        None => {
            links.push(link("world", false, None, "no world row names this entry"));
            None
        }
    }
}

/// The entry link: its hash recomputed from the header and the record ref.
fn entry_link(entry: &LogEntry, links: &mut Vec<Link>) {
    let h = &entry.header;
    let computed = entry_hash(h, &entry.transition_ref).to_string();
    links.push(link(
        "entry",
        computed == entry.entry_hash,
        Some(&entry.entry_hash),
        format!(
            "#{} {} prev {} fn {} interpreter {}{}",
            h.entry_index,
            h.written_by,
            h.prev_entry_hash,
            h.transition_fn,
            h.interpreter,
            if computed == entry.entry_hash {
                String::new()
            } else {
                format!(" (recomputed {computed})")
            }
        ),
    ));
}

/// What is wrong with a re-hashing output object: not the world's stateRoot, or (v2) a world
/// block that does not name this record's plan and effects. Empty when nothing is.
fn output_problems(rec: &InvocationRecord, out: &Object, state_root: Option<&str>) -> Vec<String> {
    let mut problems = Vec::new();
    if state_root != Some(rec.output.as_str()) {
        problems.push("is not the world's stateRoot".to_string());
    }
    if let Some(p) = &rec.plan {
        let world = trcjson::parse(&out.payload, Bounds::PLAN)
            .ok()
            .and_then(|v| v.get("world").cloned());
        let plan_ok = world
            .as_ref()
            .and_then(|w| w.get("plan"))
            .and_then(|x| x.as_str())
            == Some(p.as_str());
        let recs: Vec<String> = world
            .as_ref()
            .and_then(|w| w.get("effects"))
            .and_then(|x| match x {
                trcjson::CValue::Array(a) => Some(
                    a.iter()
                        .filter_map(|e| {
                            e.get("record").and_then(|r| r.as_str().map(str::to_string))
                        })
                        .collect(),
                ),
                _ => None,
            })
            .unwrap_or_default();
        if !plan_ok {
            problems.push("its world block does not name this record's plan".into());
        }
        if recs != rec.effects.clone().unwrap_or_default() {
            problems.push("its world block does not name this record's effects".into());
        }
    }
    problems
}
