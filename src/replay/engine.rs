//! The replay engine: each selected log entry re-derived (chain, interpreter run, effects)
//! and compared with what the store recorded (replay.md §3).

use super::*;

/// The replay loop over `selected`: each entry through `engine`, in order.
pub(super) fn run_selected(
    engine: &mut Engine<'_>,
    selected: &[(LogEntry, Option<String>)],
    opts: &Options,
    on_entry: &mut dyn FnMut(&EntryResult, usize, usize),
) -> Result<Report, ReplayError> {
    let total = selected.len();
    let mut report = Report::default();
    for (i, (entry, id)) in selected.iter().enumerate() {
        engine.pos = i;
        engine.pre = match engine.ahead.as_mut() {
            Some(ahead) => ahead.next_entry(engine.conn, i),
            None => Prefetched::default(),
        };
        engine.transition = None;
        let outcome = if is_replayable(&entry.header.written_by) {
            report.replayed += 1;
            match engine.entry(entry, id.as_deref()) {
                Ok(None) => Outcome::Identical,
                Ok(Some(verdict)) => {
                    report.reran += 1;
                    if !verdict.change.is_same() {
                        report.changed += 1;
                    }
                    Outcome::Rerun(Box::new(verdict))
                }
                Err(Stop::Diverged(d)) => {
                    report.diverged += 1;
                    Outcome::Diverged(d)
                }
                Err(Stop::Store(e)) => return Err(e.into()),
            }
        } else {
            report.skipped += 1;
            Outcome::ClientCommit
        };
        let result = EntryResult {
            entry_index: entry.header.entry_index,
            invocation_id: id.clone(),
            written_by: entry.header.written_by.clone(),
            transition: engine.transition.take(),
            outcome,
        };
        on_entry(&result, i + 1, total);
        engine.span.renew();
        let stop = matches!(result.outcome, Outcome::Diverged(_)) && !opts.keep_going;
        report.entries.push(result);
        if stop {
            report.stopped_early = i + 1 < total;
            break;
        }
    }
    Ok(report)
}

/// How long one read transaction of a replay may stay open before it is ended and a new one
/// begun: long enough that the per-statement lock cycle disappears, short enough that a writer
/// waiting to commit (busy timeout 2 s, store-format.md §4) is never refused because of it.
pub(super) const READ_SPAN: Duration = Duration::from_millis(100);

/// The page cache replay gives its connections (KiB): replay touches every object of every
/// entry once, and the default 2 MiB cache thrashes on long logs.
pub(super) const REPLAY_PAGE_CACHE_KIB: u32 = 65_536;

pub(super) enum Stop {
    Diverged(Divergence),
    Store(StoreError),
}

impl From<Divergence> for Stop {
    fn from(d: Divergence) -> Self {
        Stop::Diverged(d)
    }
}

impl From<StoreError> for Stop {
    fn from(e: StoreError) -> Self {
        Stop::Store(e)
    }
}

impl From<rusqlite::Error> for Stop {
    fn from(e: rusqlite::Error) -> Self {
        Stop::Store(e.into())
    }
}

/// An episode's effect intents by the request ref they carry (one scan of its journal range).
pub(super) fn episode_intents(
    conn: &Connection,
    episode: &str,
) -> Result<HashMap<String, Vec<IntentInfo>>, StoreError> {
    let rows = journal::episode_effect_rows(conn, episode, Kind::Intent)?;
    let mut map: HashMap<String, Vec<IntentInfo>> = HashMap::new();
    for (id, payload) in rows {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(&payload) else {
            continue;
        };
        let (Some(req), Some(t)) = (
            v.get("requestRef").and_then(|x| x.as_str()),
            v.get("logicalTime").and_then(|x| x.as_i64()),
        ) else {
            continue;
        };
        map.entry(req.to_string()).or_default().push(IntentInfo {
            id,
            logical_time: t,
        });
    }
    Ok(map)
}

/// recordRef → `(the effect intent id whose outcome names it, that outcome's status)`.
pub(super) type OwnerMap = HashMap<String, (String, String)>;

/// The [`OwnerMap`] of one episode's effect outcomes.
pub(super) fn outcome_owners(conn: &Connection, episode: &str) -> Result<OwnerMap, StoreError> {
    let rows = journal::episode_effect_rows(conn, episode, Kind::Outcome)?;
    let mut map = HashMap::new();
    for (id, payload) in rows {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(&payload) else {
            continue;
        };
        if let Some(r) = v.get("recordRef").and_then(|x| x.as_str()) {
            let status = v.get("status").and_then(|x| x.as_str()).unwrap_or_default();
            map.insert(r.to_string(), (id, status.to_string()));
        }
    }
    Ok(map)
}

/// One effect intent of an episode: its id and logical time.
#[derive(Clone, Debug)]
pub(super) struct IntentInfo {
    pub(super) id: String,
    pub(super) logical_time: i64,
}

pub(super) struct Engine<'a> {
    pub(super) conn: &'a Connection,
    pub(super) opts: &'a Options,
    /// The interpreters the selected entries pin (by header), resolved before the replay
    /// began; a run uses the record's interpreter only once it equals the header's.
    pub(super) interps: &'a HashMap<String, Resolved>,
    /// episode → requestRef → intents carrying it.
    pub(super) effect_intents: HashMap<String, HashMap<String, Vec<IntentInfo>>>,
    /// episode → recordRef → the effect intent whose outcome names it, with its status.
    pub(super) outcome_owners: HashMap<String, OwnerMap>,
    /// The current entry's reads done ahead (empty with [`Options::read_ahead`] off).
    pub(super) pre: Prefetched,
    /// The read-ahead and the runner thread's end (`None`: [`Options::read_ahead`] is off).
    pub(super) ahead: Option<Ahead<'a>>,
    /// The current entry's index in the selection.
    pub(super) pos: usize,
    /// The read transaction the engine reads in (DEC-PERF-3), paused while it waits for an
    /// interpreter run so that a writer's commit never waits on a slow transition.
    pub(super) span: ReadSpan<'a>,
    /// The candidate of a candidate replay ([`replay_with`]).
    pub(super) candidate: Option<&'a Candidate>,
    /// `(interpreter ref, source ref)` → the verdict of checking that source under that
    /// interpreter (`None`: it loads), once per replay.
    pub(super) checked: HashMap<(String, String), Option<candidate::Change>>,
    /// In a candidate replay, the current entry's transition id once its record decoded and
    /// showed that the candidate applies to it.
    pub(super) transition: Option<String>,
}

/// The `now` encoded in `world/effect-request/v1` bytes
/// (`<len>:<effect><len>:<scope><cost>:<now>:<payload>`).
pub fn request_time(bytes: &[u8]) -> Option<i64> {
    fn field(b: &[u8]) -> Option<&[u8]> {
        let colon = b.iter().position(|&c| c == b':')?;
        let n: usize = std::str::from_utf8(b.get(..colon)?).ok()?.parse().ok()?;
        b.get(colon + 1 + n..)
    }
    let rest = field(field(bytes)?)?;
    let mut parts = rest.splitn(3, |&c| c == b':');
    let _cost = parts.next()?;
    let now = parts.next()?;
    parts.next()?;
    std::str::from_utf8(now).ok()?.parse().ok()
}

pub(super) fn status_of(r: &EffectRecord) -> &'static str {
    if !r.allowed {
        "denied"
    } else if r.failed {
        "failed"
    } else {
        "ok"
    }
}

impl Engine<'_> {
    /// An object by ref: the prefetched read when there is one, else from the store.
    pub(super) fn object(&mut self, reference: &str) -> Result<Option<Object>, StoreError> {
        match self.pre.objects.get(reference) {
            Some((obj, _)) => Ok(obj.clone()),
            None => object_in(self.conn, reference),
        }
    }

    /// Load an object that must exist and re-hash (once: a prefetched object carries its
    /// check); otherwise a divergence at `stage`.
    pub(super) fn load(
        &mut self,
        reference: &str,
        what: &str,
        stage: Stage,
    ) -> Result<Object, Stop> {
        // Cloned, not taken: one entry may name the same object twice (an echo's output is
        // its input).
        let (obj, verified) = match self.pre.objects.get(reference) {
            Some((obj, verified)) => (obj.clone(), Some(*verified)),
            None => (object_in(self.conn, reference)?, None),
        };
        let obj = obj.ok_or_else(|| div(stage, format!("{what} {reference} is absent")))?;
        if !verified.unwrap_or_else(|| obj.verifies()) {
            let actual = HashRef::of(&obj.payload).to_string();
            return Err(div(
                stage,
                format!("{what} {reference} is altered: its bytes no longer hash to its ref"),
            )
            .refs(reference, actual)
            .into());
        }
        Ok(obj)
    }

    /// The receipt of `id`: the prefetched one when it was read, else from the store.
    pub(super) fn receipt(&mut self, id: &str) -> Result<Receipt, StoreError> {
        match self.pre.receipt.take() {
            Some((r, receipt)) if r == id => Ok(receipt),
            _ => journal::receipt(self.conn, id),
        }
    }

    /// A world row by ref: the prefetched one when it was read, else from the store.
    pub(super) fn world(&mut self, reference: &str) -> Result<Option<WorldRow>, StoreError> {
        match self.pre.world.take() {
            Some((r, row)) if r == reference => Ok(row),
            _ => world_in(self.conn, reference),
        }
    }

    pub(super) fn deadline(&self) -> Instant {
        Instant::now() + self.opts.phase_timeout
    }

    /// The resolved interpreter `reference` (a selected entry's header interpreter), or the
    /// divergence its resolution gave.
    pub(super) fn interpreter(&self, reference: &str) -> Result<&dyn Interpreter, Divergence> {
        match self.interps.get(reference) {
            Some(resolved) => resolved.as_deref().map_err(Clone::clone),
            None => Err(div(
                Stage::Interpreter,
                format!("interpreter {reference} is not one the selected entries pin"),
            )),
        }
    }

    /// Run one phase with the entry's interpreter: the runner thread's output when it made
    /// exactly this call (DEC-PERF-12), else a run here.
    pub(super) fn run(
        &mut self,
        interp_ref: &str,
        source: &[u8],
        input: &[u8],
        stage: Stage,
        what: &str,
    ) -> Result<Vec<u8>, Divergence> {
        self.run_raw(interp_ref, source, input)?
            .map_err(|e| match e {
                CapsuleError::Integrity { .. } => interpreter_failed(interp_ref, &e),
                _ => div(stage, format!("re-running the {what} failed: {e}")),
            })
    }

    /// [`Self::run`] with the capsule's own error: the outer error is an interpreter that
    /// cannot be used at all.
    pub(super) fn run_raw(
        &mut self,
        interp_ref: &str,
        source: &[u8],
        input: &[u8],
    ) -> Result<Result<Vec<u8>, CapsuleError>, Divergence> {
        self.interpreter(interp_ref)?;
        let pos = self.pos;
        // A run not already back from the runner may take up to the phase timeout: hold no
        // read lock meanwhile (a writer's busy timeout is 2 s, store-format.md §4).
        if !self.ahead.as_mut().is_some_and(|a| a.run_ready(pos)) {
            self.span.pause();
        }
        let ran = self
            .ahead
            .as_mut()
            .and_then(|a| a.take_run(pos, interp_ref, source, input));
        Ok(match ran {
            Some(result) => result,
            None => {
                self.span.pause();
                let deadline = self.deadline();
                capsule::run_phase(self.interpreter(interp_ref)?, source, input, deadline)
            }
        })
    }

    pub(super) fn intents_for(
        &mut self,
        episode: &str,
    ) -> Result<&HashMap<String, Vec<IntentInfo>>, Stop> {
        if !self.effect_intents.contains_key(episode) {
            let map = match self.pre.intents.take() {
                Some((ep, map)) if ep == episode => map,
                _ => episode_intents(self.conn, episode)?,
            };
            self.effect_intents.insert(episode.to_string(), map);
        }
        self.effect_intents
            .get(episode)
            .ok_or_else(|| Stop::Diverged(div(Stage::Effects, "intent cache lost an episode")))
    }

    /// The intent id whose outcome names `record_ref`, from one scan of the episode's
    /// effect outcomes (cached).
    pub(super) fn outcome_owner(
        &mut self,
        episode: &str,
        record_ref: &str,
    ) -> Result<Option<(String, String)>, Stop> {
        if !self.outcome_owners.contains_key(episode) {
            let map = match self.pre.owners.take() {
                Some((ep, map)) if ep == episode => map,
                _ => outcome_owners(self.conn, episode)?,
            };
            self.outcome_owners.insert(episode.to_string(), map);
        }
        Ok(self
            .outcome_owners
            .get(episode)
            .and_then(|m| m.get(record_ref))
            .cloned())
    }

    /// The recorded outcome of an effect intent: `(status, recordRef)`.
    pub(super) fn effect_outcome(
        &mut self,
        intent_id: &str,
    ) -> Result<Option<(String, String)>, Stop> {
        let Some(r) = journal::row(self.conn, intent_id, Kind::Outcome)? else {
            return Ok(None);
        };
        let Some(obj) = self.object(&r)? else {
            return Ok(None);
        };
        let v: serde_json::Value = serde_json::from_slice(&obj.payload).map_err(|e| {
            div(
                Stage::Effects,
                format!("effect outcome of {intent_id} is not JSON: {e}"),
            )
        })?;
        let text = |k: &str| {
            v.get(k)
                .and_then(|x| x.as_str())
                .unwrap_or_default()
                .to_string()
        };
        Ok(Some((text("status"), text("recordRef"))))
    }

    /// Replay one entry: `None` when every byte was identical, the verdict when a candidate
    /// applies to it.
    pub(super) fn entry(
        &mut self,
        e: &LogEntry,
        id: Option<&str>,
    ) -> Result<Option<Verdict>, Stop> {
        let h = &e.header;
        // 1. The commit receipt.
        let id = id.ok_or_else(|| {
            div(
                Stage::Receipt,
                "no commit intent in the journal names this entry",
            )
        })?;
        // 2. World row and record.
        let world = self.receipt_world(e, id)?;
        let rec_obj = self.load(&e.transition_ref, "record", Stage::Record)?;
        let sid = rec_obj.meta.semantic_id.as_str();
        if sid != INVOCATION_RECORD_V1 && sid != INVOCATION_RECORD_V2 {
            return Err(div(
                Stage::Record,
                format!(
                    "transitionRef {} is a {sid}, not an invocation record",
                    e.transition_ref
                ),
            )
            .into());
        }
        let decoded = match self.pre.record.take() {
            Some((r, rec)) if r == e.transition_ref => Ok(rec),
            _ => InvocationRecord::decode(sid, &rec_obj.payload),
        };
        let rec = decoded.map_err(|err| {
            div(
                Stage::Record,
                format!("record {} is malformed: {err}", e.transition_ref),
            )
        })?;
        let sub = self.candidate.and_then(|c| c.sub_for(&rec));
        if sub.is_some() {
            self.transition = Some(rec.skill_id.clone());
        }
        check_record(h, id, &rec, &world)?;
        // 4. Source, input, output and plan by ref.
        let source = self.load(
            &rec.transition_fn,
            "transition source",
            Stage::TransitionSource,
        )?;
        let input = self.load(&rec.input, "input", Stage::Input)?;
        // The output object is compared with the replayed bytes below; an altered copy is
        // reported at `output` with a diff against what replay reproduces.
        let output_verified = self.pre.objects.get(&rec.output).is_some_and(|(_, ok)| *ok);
        let output = self
            .object(&rec.output)?
            .ok_or_else(|| div(Stage::Output, format!("output {} is absent", rec.output)))?;
        let recorded_plan = match &rec.plan {
            Some(p) => Some(self.load(p, "plan", Stage::Record)?),
            None => None,
        };
        if let Some(sub) = sub {
            let plan = recorded_plan.as_ref().zip(rec.plan.as_deref());
            return self
                .rerun(
                    e,
                    &world,
                    &rec,
                    &source,
                    &input,
                    &output,
                    output_verified,
                    plan,
                    sub,
                )
                .map(Some);
        }
        // 5. Re-run with the entry's own interpreter (resolved before any run).
        self.interpreter(&rec.interpreter)?;
        let produced = match (&recorded_plan, &rec.plan) {
            (Some(plan_obj), Some(plan_ref)) => {
                self.effectful(&rec, &source, &input, &output, plan_obj, plan_ref)?
            }
            _ => {
                let out = self.run(
                    &rec.interpreter,
                    &source.payload,
                    &input.payload,
                    Stage::Result,
                    "pure transition",
                )?;
                if out != output.payload {
                    if !output.verifies() {
                        return Err(altered_output(&output, &out).into());
                    }
                    return Err(div(
                        Stage::Result,
                        "the re-run output differs from the committed output",
                    )
                    .refs(&rec.output, HashRef::of(&out).to_string())
                    .bytes(&output.payload, &out)
                    .into());
                }
                out
            }
        };
        // `produced` equals the output object's bytes here (both paths compared them); when
        // those bytes were already hash-checked against their ref, that ref is their hash.
        let produced_ref = if output_verified && produced == output.payload {
            output.meta.hash.clone()
        } else {
            HashRef::of(&produced).to_string()
        };
        if produced_ref != world.state_root {
            return Err(div(
                Stage::WorldHash,
                "the re-run output does not hash to the world's stateRoot",
            )
            .refs(&world.state_root, produced_ref)
            .into());
        }
        self.chain(e, &world)?;
        Ok(None)
    }

    /// Steps 1–2 of [`Engine::entry`]: the resolved receipt of invocation `id` names the world
    /// whose logHead is entry `e`, at the entry's index.
    pub(super) fn receipt_world(&mut self, e: &LogEntry, id: &str) -> Result<WorldRow, Stop> {
        let h = &e.header;
        let receipt = self
            .receipt(id)
            .map_err(|err| div(Stage::Receipt, format!("receipt of {id}: {err}")))?;
        if receipt.state != ReceiptState::Resolved {
            return Err(div(
                Stage::Receipt,
                format!(
                    "receipt of {id} is {:?}, not resolved with an intent",
                    receipt.state
                ),
            )
            .into());
        }
        // The receipt's world by primary key (worlds has no log_head index); the scan by
        // logHead runs only when that world is not this entry's, to name the mismatch.
        let by_receipt = match receipt.result_ref.as_deref() {
            Some(r) => self.world(r)?.filter(|w| w.log_head == e.entry_hash),
            None => None,
        };
        let world = match by_receipt {
            Some(w) => Some(w),
            None => world_by_log_head_in(self.conn, &e.entry_hash)?,
        }
        .ok_or_else(|| {
            div(
                Stage::Record,
                format!(
                    "no world row has entry hash {} as its logHead",
                    e.entry_hash
                ),
            )
        })?;
        if receipt.result_ref.as_deref() != Some(world.reference.as_str()) {
            return Err(div(
                Stage::Receipt,
                format!("the receipt of {id} names another world than this entry's"),
            )
            .refs(&world.reference, receipt.result_ref.unwrap_or_default())
            .into());
        }
        if world.revision != h.entry_index {
            return Err(div(
                Stage::Record,
                format!(
                    "world {} has revision {}, not the entry index",
                    world.reference, world.revision
                ),
            )
            .into());
        }
        Ok(world)
    }

    /// The entry hash and the world ref, recomputed.
    pub(super) fn chain(&mut self, e: &LogEntry, world: &WorldRow) -> Result<(), Stop> {
        let h = &e.header;
        let eh = match self.pre.entry_hash.take() {
            Some(eh) => eh,
            None => entry_hash(h, &e.transition_ref).to_string(),
        };
        if eh != e.entry_hash {
            return Err(div(Stage::EntryHash, "the recomputed entry hash differs")
                .refs(&e.entry_hash, eh)
                .into());
        }
        let wr = match self.pre.world_ref.take() {
            Some((row, wr)) if row == *world => wr,
            _ => world_ref(world.revision, &world.state_root, &world.log_head).to_string(),
        };
        if wr != world.reference {
            return Err(div(Stage::WorldRef, "the re-derived world ref differs")
                .refs(&world.reference, wr)
                .into());
        }
        Ok(())
    }

    pub(super) fn effectful(
        &mut self,
        rec: &InvocationRecord,
        source: &Object,
        input: &Object,
        output: &Object,
        plan_obj: &Object,
        plan_ref: &str,
    ) -> Result<Vec<u8>, Stop> {
        // 5. Plan, against requirements taken from the recorded plan.
        let triples = match self.pre.triples.take() {
            Some((r, t)) if r == plan_ref => t,
            _ => recorded_triples(&plan_obj.payload),
        };
        let declared = triples.map_err(|why| {
            div(
                Stage::Record,
                format!("recorded plan {plan_ref} is malformed: {why}"),
            )
        })?;
        let plan_input = match self.pre.plan_input.take() {
            Some((r, bytes)) if r == input.meta.hash => bytes,
            _ => plan::plan_input(&input.payload),
        };
        let raw = self.run(
            &rec.interpreter,
            &source.payload,
            &plan_input,
            Stage::Plan,
            "plan phase",
        )?;
        let parsed = plan::parse_plan(&raw, &declared).map_err(|err| {
            div(
                Stage::Plan,
                format!("the re-run plan breaks a plan law: {err}"),
            )
        })?;
        if parsed.canonical != plan_obj.payload {
            return Err(div(
                Stage::Plan,
                "the re-run plan differs from the recorded plan",
            )
            .refs(plan_ref, HashRef::of(&parsed.canonical).to_string())
            .bytes(&plan_obj.payload, &parsed.canonical)
            .into());
        }
        let record_refs = rec.effects.clone().unwrap_or_default();
        let Walked {
            results,
            world_effects,
            handler_output,
        } = self.walk_effects(rec, &parsed.effects, &record_refs)?;
        // 8. Finish if requested, recompose, compare.
        let body = if parsed.effects.is_empty() {
            parsed.result.clone().unwrap_or(CValue::Object(vec![]))
        } else if parsed.finish {
            let raw = self.run(
                &rec.interpreter,
                &source.payload,
                &plan::finish_input(&input.payload, &results),
                Stage::Finish,
                "finish phase",
            )?;
            plan::parse_finish(&raw).map_err(|err| {
                div(
                    Stage::Finish,
                    format!("the re-run finish output breaks a plan law: {err}"),
                )
            })?
        } else {
            match (results.first().map(|r| r.status), handler_output) {
                (Some("ok"), Some(v @ CValue::Object(_))) => v,
                (Some("ok"), _) => {
                    return Err(div(
                        Stage::Output,
                        "the recorded handler output is not a JSON object, so no output could have been committed",
                    )
                    .into())
                }
                _ => CValue::Object(vec![]),
            }
        };
        let composed = plan::compose(body, plan_ref, &world_effects).map_err(|err| {
            div(
                Stage::Output,
                format!("recomposing the output failed: {err}"),
            )
        })?;
        if composed != output.payload {
            if !output.verifies() {
                return Err(altered_output(output, &composed).into());
            }
            return Err(div(
                Stage::Output,
                "the recomposed output differs from the committed output",
            )
            .refs(&rec.output, HashRef::of(&composed).to_string())
            .bytes(&output.payload, &composed)
            .into());
        }
        Ok(composed)
    }

    /// Steps 6–7 for planned `effects` against the records `record_refs`: load and check
    /// every effect record and its request, rebuild the grants, and walk the replay broker
    /// (never a handler), reading each result back from the record.
    pub(super) fn walk_effects(
        &mut self,
        rec: &InvocationRecord,
        effects: &[PlannedEffect],
        record_refs: &[String],
    ) -> Result<Walked, Stop> {
        if effects.len() != record_refs.len() {
            return Err(div(
                Stage::Effects,
                format!(
                    "the plan requests {} effect(s) but the record holds {}",
                    effects.len(),
                    record_refs.len()
                ),
            )
            .into());
        }
        // Load every effect record and its request; find each request's logical time.
        let mut walked: Vec<(EffectRecord, i64, Option<String>)> = Vec::new();
        for (pe, rref) in effects.iter().zip(record_refs) {
            let obj = self.load(rref, "effect record", Stage::Effects)?;
            if obj.meta.semantic_id != EFFECT_RECORD {
                return Err(div(
                    Stage::Effects,
                    format!("{rref} is a {}, not an effect record", obj.meta.semantic_id),
                )
                .into());
            }
            let decoded = match self.pre.effect_records.remove(rref.as_str()) {
                Some(er) => Ok(er),
                None => EffectRecord::decode(&obj.payload),
            };
            let er = decoded.map_err(|err| {
                div(
                    Stage::Effects,
                    format!("effect record {rref} is malformed: {err}"),
                )
            })?;
            er.check_law().map_err(|err| {
                div(
                    Stage::Effects,
                    format!(
                        "ReplayGapError: effect record {rref} breaks the consistency law: {err}"
                    ),
                )
            })?;
            if (pe.effect.as_str(), pe.scope.as_str(), pe.cost)
                != (er.effect.as_str(), er.scope.as_str(), er.cost)
            {
                return Err(div(
                    Stage::Effects,
                    format!(
                        "effect {} was planned as ({}, {}, {}) but record {rref} is ({}, {}, {})",
                        pe.id, pe.effect, pe.scope, pe.cost, er.effect, er.scope, er.cost
                    ),
                )
                .into());
            }
            let request = self.load(&er.request_ref, "effect request", Stage::Effects)?;
            let first_time = self
                .intents_for(&rec.episode_id)?
                .get(&er.request_ref)
                .and_then(|v| v.first())
                .map(|i| i.logical_time);
            let now = match first_time {
                None => request_time(&request.payload).ok_or_else(|| {
                    div(
                        Stage::Effects,
                        format!(
                            "request {} has no effect intent and no readable logical time",
                            er.request_ref
                        ),
                    )
                })?,
                Some(t) => t,
            };
            let derived = request_bytes(&pe.effect, &pe.scope, pe.cost, now, &pe.payload);
            // `request` was hash-checked against er.request_ref by `load`, so the derived
            // bytes hash to that ref exactly when they equal its bytes.
            if derived != request.payload {
                let derived_ref = HashRef::of(&derived).to_string();
                return Err(div(
                    Stage::Effects,
                    format!(
                        "the re-derived request of effect {} differs from record {rref}'s request",
                        pe.id
                    ),
                )
                .refs(&er.request_ref, derived_ref)
                .bytes(&request.payload, &derived)
                .into());
            }
            // The returned refs: an allowed effect's outcome must name this record.
            let intent_id = self.owning_intent(rec, &er, rref)?;
            walked.push((er, now, intent_id));
        }
        // 6. One grant per distinct (effect, scope), reproducing the recorded decisions.
        let mut grants = replay_grants(&walked);
        // 7. The replay broker session: decide each request, never call a handler.
        let mut results = Vec::new();
        let mut world_effects = Vec::new();
        let mut handler_output: Option<CValue> = None;
        for ((pe, rref), (er, now, _)) in effects.iter().zip(record_refs).zip(&walked) {
            let d = decide(&grants, &er.effect, &er.scope, er.cost, *now);
            let gap = decision_gap(&d, er, rref);
            if let Some(g) = gap {
                return Err(div(Stage::Effects, format!("ReplayGapError: {g}")).into());
            }
            if d.denial.is_none() {
                if let Some(g) = d.grant.and_then(|i| grants.get_mut(i)) {
                    g.budget = d.budget_after;
                }
            }
            let out = if er.allowed && !er.failed {
                let result = self.load(&er.result_ref, "effect result", Stage::Effects)?;
                match self.pre.results.remove(&er.result_ref) {
                    Some(parsed) => parsed,
                    None => trcjson::parse(&result.payload, Bounds::PLAN).ok(),
                }
            } else {
                None
            };
            handler_output = out.clone();
            let status = status_of(er);
            results.push(PhaseResult {
                id: pe.id.clone(),
                effect: pe.effect.clone(),
                status,
                record: Some(rref.clone()),
                output: out,
            });
            world_effects.push(WorldEffect {
                id: pe.id.clone(),
                status,
                record: Some(rref.clone()),
            });
        }
        Ok(Walked {
            results,
            world_effects,
            handler_output,
        })
    }

    /// The effect intent whose outcome names allowed effect record `rref` (`er`), with the
    /// outcome the record says; `None` for a denied effect.
    pub(super) fn owning_intent(
        &mut self,
        rec: &InvocationRecord,
        er: &EffectRecord,
        rref: &String,
    ) -> Result<Option<String>, Stop> {
        let mut intent_id = None;
        if er.allowed {
            let want = if er.failed { "failed" } else { "succeeded" };
            let mut found = false;
            // Several intents can carry identical request bytes (same payload in the same
            // second); the outcome naming this record picks the right one.
            let owner = self.outcome_owner(&rec.episode_id, rref)?;
            let carrying = |i: &IntentInfo| owner.as_ref().is_none_or(|(o, _)| *o == i.id);
            let candidates: Vec<String> = self
                .intents_for(&rec.episode_id)?
                .get(&er.request_ref)
                .into_iter()
                .flatten()
                .filter(|i| carrying(i))
                .map(|i| i.id.clone())
                .collect();
            for id in &candidates {
                // The owner's outcome was read with the episode's outcomes; any other
                // candidate's is read now.
                let outcome = match &owner {
                    Some((o, status)) if o == id => Some((status.clone(), rref.clone())),
                    _ => self.effect_outcome(id)?,
                };
                if let Some((status, recorded)) = outcome {
                    if &recorded == rref {
                        if status != want {
                            return Err(div(
                                Stage::Effects,
                                format!(
                                    "ReplayGapError: outcome of {id} is {status:?} but record {rref} says {want:?}"
                                ),
                            )
                            .into());
                        }
                        found = true;
                        intent_id = Some(id.clone());
                        break;
                    }
                }
            }
            if !found {
                return Err(div(
                    Stage::Effects,
                    format!(
                        "ReplayGapError: allowed effect record {rref} has no effect intent whose outcome names it"
                    ),
                )
                .into());
            }
        }
        Ok(intent_id)
    }
}

/// The record `rec` of entry header `h` agrees with the commit intent `id`, the header and the
/// world (step 3 of [`Engine::entry`]).
fn check_record(
    h: &crate::store::Header,
    id: &str,
    rec: &InvocationRecord,
    world: &WorldRow,
) -> Result<(), Stop> {
    if rec.invocation_id != id {
        return Err(div(
            Stage::Record,
            "the record's invocationId differs from the commit intent's",
        )
        .refs(id, &rec.invocation_id)
        .into());
    }
    for (field, want, got) in [
        ("transitionFn", &h.transition_fn, &rec.transition_fn),
        ("interpreter", &h.interpreter, &rec.interpreter),
    ] {
        if want != got {
            return Err(div(
                Stage::Record,
                format!("the record's {field} differs from the entry header"),
            )
            .refs(want, got)
            .into());
        }
    }
    if rec.semantics_epoch != h.semantics_epoch {
        return Err(div(
            Stage::Record,
            "the record's semanticsEpoch differs from the entry header",
        )
        .refs(
            h.semantics_epoch.to_string(),
            rec.semantics_epoch.to_string(),
        )
        .into());
    }
    if world.state_root != rec.output {
        return Err(div(
            Stage::Record,
            "the world's stateRoot is not the record's output",
        )
        .refs(&rec.output, &world.state_root)
        .into());
    }
    Ok(())
}

/// Step 6 of the effect walk: one grant per distinct (effect, scope) of `walked`, shaped so
/// the replay broker reproduces each recorded decision (a denied name or scope gets a suffix no
/// request carries, an expired grant ends at the request's time).
fn replay_grants(walked: &[(EffectRecord, i64, Option<String>)]) -> Vec<Grant> {
    let mut grants: Vec<Grant> = Vec::new();
    for (er, now, _) in walked {
        if grants.iter().any(|g| {
            g.effect.trim_end_matches("\x00replay") == er.effect
                && g.scope.trim_end_matches("\x00replay") == er.scope
        }) {
            continue;
        }
        let mut g = Grant {
            effect: er.effect.clone(),
            scope: er.scope.clone(),
            expires_at: now.saturating_add(1),
            budget: er.budget_before,
        };
        match er.denial.as_str() {
            "denied:effect-name" => g.effect.push_str("\x00replay"),
            "denied:scope" => g.scope.push_str("\x00replay"),
            "denied:expired" => g.expires_at = *now,
            _ => {}
        }
        grants.push(g);
    }
    grants
}

/// How the replay broker's decision `d` differs from effect record `er` (`rref`), if it does.
fn decision_gap(
    d: &crate::authority::grants::Decision,
    er: &EffectRecord,
    rref: &str,
) -> Option<String> {
    let label = d.denial.map(|x| x.label()).unwrap_or("");
    if label != er.denial {
        Some(format!(
            "decision {:?} but record {rref} says {:?}",
            if label.is_empty() { "allowed" } else { label },
            if er.denial.is_empty() {
                "allowed"
            } else {
                er.denial.as_str()
            }
        ))
    } else if d.budget_before != er.budget_before {
        Some(format!(
            "budgetBefore {} but record {rref} says {}",
            d.budget_before, er.budget_before
        ))
    } else if d.denial.is_none() && d.budget_after != er.budget_after {
        Some(format!(
            "budgetAfter {} but record {rref} says {}",
            d.budget_after, er.budget_after
        ))
    } else {
        None
    }
}

/// What the effect walk gives the finish phase and the composition.
pub(super) struct Walked {
    pub(super) results: Vec<PhaseResult>,
    pub(super) world_effects: Vec<WorldEffect>,
    pub(super) handler_output: Option<CValue>,
}

/// The divergence for an interpreter a run could not use: altered since archiving (the
/// integrity check), absent or unstartable.
pub(super) fn interpreter_failed(interp_ref: &str, e: &CapsuleError) -> Divergence {
    match e {
        CapsuleError::Integrity { .. } => div(
            Stage::Interpreter,
            format!("pinned interpreter {interp_ref} failed its integrity check: {e}"),
        ),
        _ => div(
            Stage::Interpreter,
            format!("interpreter {interp_ref} could not be used: {e}"),
        ),
    }
}

/// The divergence for an output object whose stored bytes no longer hash to its ref: expected
/// is the ref, actual what the stored bytes hash to, and the diff is stored vs replayed.
pub(super) fn altered_output(output: &Object, replayed: &[u8]) -> Divergence {
    let actual = HashRef::of(&output.payload).to_string();
    let note = if HashRef::of(replayed).to_string() == output.meta.hash {
        "; the replayed output hashes to the recorded ref, so the stored copy was altered"
    } else {
        ""
    };
    div(
        Stage::Output,
        format!(
            "output {} is altered: its stored bytes no longer hash to its ref{note}",
            output.meta.hash
        ),
    )
    .refs(&output.meta.hash, actual)
    .bytes(replayed, &output.payload)
}
