//! The replay engine: one selected entry checked step by step, in the stage order of the
//! module docs (transitions.md §12), with each read taken from the read-ahead when it was made
//! there ([`super::ahead`]) and each interpreter call's output from the runner thread when it
//! made exactly that call. The effect steps (6–7) are in [`super::effects`]; a candidate's
//! re-run in [`super::candidate`].

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use rusqlite::Connection;

use super::ahead::{Ahead, Prefetched};
use super::candidate::{self, Candidate, Verdict};
use super::effects::{recorded_triples, IntentInfo, OwnerMap, Walked};
use super::{div, Divergence, Options, Resolved, Stage};
use crate::encoding::trcjson::CValue;
use crate::encoding::HashRef;
use crate::interp::capsule::{self, CapsuleError};
use crate::interp::Interpreter;
use crate::plan;
use crate::store::entry::{entry_hash, world_ref};
use crate::store::journal::{self, Receipt, ReceiptState};
use crate::store::records::{InvocationRecord, INVOCATION_RECORD_V1, INVOCATION_RECORD_V2};
use crate::store::{
    object_in, world_by_log_head_in, world_in, Error as StoreError, LogEntry, Object, ReadSpan,
    WorldRow,
};

/// Why an entry's check ended early: a divergence to report, or a store failure that ends the
/// replay.
pub(super) enum Stop {
    /// The entry diverged at this stage.
    Diverged(Divergence),
    /// The store could not be read: the replay ends with this error.
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

/// The state of one replay run: its connection, options and resolved interpreters, the
/// caches of episode-wide reads, and the read-ahead (DEC-PERF-10, DEC-PERF-12).
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

impl Engine<'_> {
    /// An object by ref: the prefetched read when there is one (shared, not copied), else
    /// from the store.
    pub(super) fn object(&mut self, reference: &str) -> Result<Option<Arc<Object>>, StoreError> {
        match self.pre.objects.get(reference) {
            Some((obj, _)) => Ok(obj.clone()),
            None => Ok(object_in(self.conn, reference)?.map(Arc::new)),
        }
    }

    /// Load an object that must exist and re-hash (once: a prefetched object carries its
    /// check); otherwise a divergence at `stage`.
    pub(super) fn load(
        &mut self,
        reference: &str,
        what: &str,
        stage: Stage,
    ) -> Result<Arc<Object>, Stop> {
        // Shared, not taken: one entry may name the same object twice (an echo's output is
        // its input).
        let (obj, verified) = match self.pre.objects.get(reference) {
            Some((obj, verified)) => (obj.clone(), Some(*verified)),
            None => (object_in(self.conn, reference)?.map(Arc::new), None),
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
}

impl Engine<'_> {
    /// Replay one entry: `None` when every byte was identical, the verdict when a candidate
    /// applies to it.
    pub(super) fn entry(
        &mut self,
        e: &LogEntry,
        id: Option<&str>,
    ) -> Result<Option<Verdict>, Stop> {
        // 1. The commit receipt.
        let id = id.ok_or_else(|| {
            div(
                Stage::Receipt,
                "no commit intent in the journal names this entry",
            )
        })?;
        let receipt = self.resolved_receipt(id)?;
        // 2. World row and record.
        let world = self.entry_world(e, id, receipt)?;
        let rec = self.entry_record(e, id, &world)?;
        let sub = self.candidate.and_then(|c| c.sub_for(&rec));
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
            let plan = recorded_plan.as_deref().zip(rec.plan.as_deref());
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
            _ => self.pure(&rec, &source, &input, &output)?,
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

    /// Step 1: the receipt of commit intent `id`, which must be resolved with an intent.
    fn resolved_receipt(&mut self, id: &str) -> Result<Receipt, Stop> {
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
        Ok(receipt)
    }

    /// Step 2, the world: the row whose logHead is entry `e`'s hash, which `receipt` (of
    /// commit intent `id`) must name and whose revision must be the entry index.
    fn entry_world(&mut self, e: &LogEntry, id: &str, receipt: Receipt) -> Result<WorldRow, Stop> {
        let h = &e.header;
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

    /// Step 2, the record: entry `e`'s invocation record, verified, decoded and checked against
    /// the entry header, commit intent `id` and `world`. In a candidate replay, the entry's
    /// transition is noted once the record shows that the candidate applies to it.
    fn entry_record(
        &mut self,
        e: &LogEntry,
        id: &str,
        world: &WorldRow,
    ) -> Result<InvocationRecord, Stop> {
        let h = &e.header;
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
        if self.candidate.is_some_and(|c| c.sub_for(&rec).is_some()) {
            self.transition = Some(rec.skill_id.clone());
        }
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
        Ok(rec)
    }

    /// Step 5 for a pure entry: the re-run output, which must be the committed `output`.
    fn pure(
        &mut self,
        rec: &InvocationRecord,
        source: &Object,
        input: &Object,
        output: &Object,
    ) -> Result<Vec<u8>, Stop> {
        let out = self.run(
            &rec.interpreter,
            &source.payload,
            &input.payload,
            Stage::Result,
            "pure transition",
        )?;
        if out != output.payload {
            if !output.verifies() {
                return Err(altered_output(output, &out).into());
            }
            return Err(div(
                Stage::Result,
                "the re-run output differs from the committed output",
            )
            .refs(&rec.output, HashRef::of(&out).to_string())
            .bytes(&output.payload, &out)
            .into());
        }
        Ok(out)
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
