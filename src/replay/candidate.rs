//! Candidate replay (issue 32): re-run recorded entries with a **changed** transition source,
//! or under another interpreter, and say per entry what would change.
//!
//! A [`Candidate`] names, per transition id, the source to run instead of the recorded one
//! (`world replay --candidate MANIFEST`, `--transition ID=FILE`, `world publish
//! --check-against`), and optionally one interpreter every selected entry is re-run under
//! (`--interpreter`). An entry it applies to goes through the same receipt, record and object
//! checks as any replayed entry (a broken recording is still a [`super::Divergence`]); then,
//! instead of the byte comparison with the recorded run:
//!
//! 1. the source is checked once per interpreter (`check`; a failure is `now-fails`,
//!    type error);
//! 2. pure convention: `main` on the recorded input; effectful: the plan phase on the recorded
//!    input, `parsePlan` against the candidate's declared effects (DEC-CAND-2);
//! 3. a plan asking for exactly the effects the recording has (effect, scope, cost, payload)
//!    gets the recorded results back through the same replay broker walk as replay (no handler
//!    is ever called); any other request is `plan-changed` and the entry stops there;
//! 4. finish phase if the plan asks for it, output composition;
//! 5. the output is compared with the committed output: [`Change`].
//!
//! The calling convention is the candidate's: empty `declaredEffects` is v1 (pure), else v2;
//! with no declared effects known (`--transition`, `--interpreter` alone) the recording's.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::engine::{interpreter_failed, Engine, Stop};
use super::{div, recorded_triples, Outcome, Report, Stage};
use crate::encoding::trcjson::CValue;
use crate::encoding::HashRef;
use crate::interp::capsule::CapsuleError;
use crate::interp::{CheckOutcome, Interpreter, RunError, RunLimits, RunOutcome};
use crate::plan::{self, PlannedEffect, Triple};
use crate::store::records::InvocationRecord;
use crate::store::{LogEntry, Object, WorldRow};

/// An interpreter shared by several replays (a [`Candidate`] outlives each run): the
/// interpreter and its ref.
#[derive(Clone)]
pub struct Pinned {
    reference: String,
    interp: Arc<dyn Interpreter>,
}

impl Pinned {
    /// Share `interp`.
    pub fn new(interp: Box<dyn Interpreter>) -> Pinned {
        Pinned {
            reference: interp.interpreter_ref().to_string(),
            interp: Arc::from(interp),
        }
    }

    /// The interpreter's ref (`sha256:…`).
    pub fn reference(&self) -> &str {
        &self.reference
    }
}

impl fmt::Debug for Pinned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pinned({})", self.reference)
    }
}

impl Interpreter for Pinned {
    fn interpreter_ref(&self) -> &str {
        &self.reference
    }
    fn version_text(&self) -> &str {
        self.interp.version_text()
    }
    fn check(&self, source: &[u8], limits: RunLimits) -> Result<CheckOutcome, RunError> {
        self.interp.check(source, limits)
    }
    fn run(&self, source: &[u8], args: &[u8], limits: RunLimits) -> Result<RunOutcome, RunError> {
        self.interp.run(source, args, limits)
    }
}

/// One transition's candidate: the source that replaces the recorded one.
#[derive(Clone, Debug)]
pub struct CandidateTransition {
    /// The transition id (the descriptor id; a record's `skillId`).
    pub id: String,
    /// The `canon.Source` bytes.
    pub source: Arc<Vec<u8>>,
    /// Their ref (the `transitionFn` the candidate would publish).
    pub transition_fn: String,
    /// The candidate's declared effects (manifest): empty = pure (v1), else effectful (v2),
    /// and `parsePlan`'s law L3 is checked against them. `None` (`--transition ID=FILE`): the
    /// recording's calling convention, and L3 is not checked (DEC-CAND-2).
    pub declared: Option<Vec<Triple>>,
    /// The interpreter this transition's entries run under (`world publish`: the pin it would
    /// publish); `None`: [`Candidate::interpreter`], else the entry's recorded pin.
    pub interpreter: Option<Pinned>,
    /// Where the source came from, for messages (the file path or the ref).
    pub label: String,
}

/// What a candidate replay substitutes (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct Candidate {
    /// The candidate transitions by id.
    pub transitions: BTreeMap<String, CandidateTransition>,
    /// `--interpreter`: every selected entry is re-run under it (with the candidate's source
    /// where there is one, else the recorded source).
    pub interpreter: Option<Pinned>,
    /// Visit only the entries of [`Candidate::transitions`] (`world publish --check-against`);
    /// by default every selected entry is visited and the others replay as usual.
    pub only: bool,
}

/// How one entry is re-run: the candidate transition (`None`: the recorded source) and the
/// interpreter ref.
pub(super) struct Sub<'c> {
    pub transition: Option<&'c CandidateTransition>,
    pub interp: String,
}

impl Sub<'_> {
    /// Whether the re-run uses the effectful (v2) calling convention.
    pub fn effectful(&self, rec: &InvocationRecord) -> bool {
        match self.transition.and_then(|t| t.declared.as_ref()) {
            Some(d) => !d.is_empty(),
            None => rec.plan.is_some(),
        }
    }
}

impl Candidate {
    /// Does the candidate apply to an entry with this record? Then how it is re-run.
    pub(super) fn sub_for(&self, rec: &InvocationRecord) -> Option<Sub<'_>> {
        let t = self.transitions.get(&rec.skill_id);
        let pinned = t
            .and_then(|t| t.interpreter.as_ref())
            .or(self.interpreter.as_ref());
        if t.is_none() && pinned.is_none() {
            return None;
        }
        Some(Sub {
            transition: t,
            interp: pinned.map_or_else(|| rec.interpreter.clone(), |p| p.reference.clone()),
        })
    }

    /// Every interpreter the candidate brings, to be resolved with the recorded ones.
    pub(super) fn interpreters(&self) -> impl Iterator<Item = &Pinned> {
        self.interpreter.iter().chain(
            self.transitions
                .values()
                .filter_map(|t| t.interpreter.as_ref()),
        )
    }
}

/// The pin of one side of a comparison.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pin {
    /// The source ref.
    pub transition_fn: String,
    /// The interpreter ref.
    pub interpreter: String,
}

/// What a candidate re-run of one entry found (issue 32 §2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The transition id.
    pub transition: String,
    /// What the recording ran.
    pub recorded: Pin,
    /// What the candidate ran.
    pub candidate: Pin,
    /// The verdict.
    pub change: Change,
}

/// Why a candidate re-run failed (`now-fails`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailKind {
    /// The source does not load under the interpreter (`check` fails).
    TypeError,
    /// A phase exited non-zero, broke the calling convention, or returned no JSON object.
    RuntimeError,
    /// The plan, the finish output or the composed output breaks a plan law (§8).
    PlanLaw,
    /// A phase ran past its deadline.
    Deadline,
}

impl FailKind {
    /// The kind as printed (`type error`, …).
    pub fn text(self) -> &'static str {
        match self {
            FailKind::TypeError => "type error",
            FailKind::RuntimeError => "runtime error",
            FailKind::PlanLaw => "plan law broken",
            FailKind::Deadline => "deadline",
        }
    }
}

/// One requested effect, as shown by `plan-changed`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Request {
    /// The plan's effect id.
    pub id: String,
    /// Effect name.
    pub effect: String,
    /// Scope.
    pub scope: String,
    /// Cost.
    pub cost: i64,
    /// The canonical payload.
    pub payload: Value,
}

impl Request {
    fn of(e: &PlannedEffect) -> Request {
        Request {
            id: e.id.clone(),
            effect: e.effect.clone(),
            scope: e.scope.clone(),
            cost: e.cost,
            payload: serde_json::from_slice(&e.payload).unwrap_or(Value::Null),
        }
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}, {}, {}) {}",
            self.id, self.effect, self.scope, self.cost, self.payload
        )
    }
}

/// A member present on one side only.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PathValue {
    /// JSON Pointer (RFC 6901) of the member.
    pub path: String,
    /// Its value.
    pub value: Value,
}

/// A member whose value differs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PathChange {
    /// JSON Pointer (RFC 6901) of the member.
    pub path: String,
    /// The recorded value.
    pub recorded: Value,
    /// The candidate's value.
    pub candidate: Value,
}

/// How a candidate output differs from the committed output: a structural diff when both are
/// JSON, and always the first differing byte.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutputDiff {
    /// Members only the candidate's output has.
    pub added: Vec<PathValue>,
    /// Members only the recorded output has.
    pub removed: Vec<PathValue>,
    /// Members whose values differ.
    pub changed: Vec<PathChange>,
    /// False when either side is not JSON (only the byte position is given then).
    pub json: bool,
    /// More than [`MAX_DIFF_PATHS`] paths differ; the lists stop there.
    pub truncated: bool,
    /// Offset of the first differing byte.
    pub first_differing_byte: usize,
    /// [`super::byte_diff`] of the two outputs.
    pub bytes: String,
}

/// The most paths an [`OutputDiff`] lists.
pub const MAX_DIFF_PATHS: usize = 100;

impl OutputDiff {
    /// The diff of the committed output `recorded` and the candidate's `candidate`.
    pub fn between(recorded: &[u8], candidate: &[u8]) -> OutputDiff {
        let mut d = OutputDiff {
            first_differing_byte: recorded
                .iter()
                .zip(candidate)
                .position(|(a, b)| a != b)
                .unwrap_or(recorded.len().min(candidate.len())),
            bytes: super::byte_diff(recorded, candidate),
            ..OutputDiff::default()
        };
        if let (Ok(a), Ok(b)) = (
            serde_json::from_slice::<Value>(recorded),
            serde_json::from_slice::<Value>(candidate),
        ) {
            d.json = true;
            d.walk(&mut String::new(), &a, &b);
        }
        d
    }

    fn count(&self) -> usize {
        self.added.len() + self.removed.len() + self.changed.len()
    }

    fn full(&mut self) -> bool {
        if self.count() >= MAX_DIFF_PATHS {
            self.truncated = true;
        }
        self.truncated
    }

    fn walk(&mut self, path: &mut String, a: &Value, b: &Value) {
        if self.full() {
            return;
        }
        let len = path.len();
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                for (k, va) in x {
                    push_token(path, k);
                    match y.get(k) {
                        Some(vb) => self.walk(path, va, vb),
                        None if !self.full() => self.removed.push(PathValue {
                            path: path.clone(),
                            value: va.clone(),
                        }),
                        None => {}
                    }
                    path.truncate(len);
                }
                for (k, vb) in y {
                    if !x.contains_key(k) && !self.full() {
                        push_token(path, k);
                        self.added.push(PathValue {
                            path: path.clone(),
                            value: vb.clone(),
                        });
                        path.truncate(len);
                    }
                }
            }
            (Value::Array(x), Value::Array(y)) => {
                for i in 0..x.len().max(y.len()) {
                    push_token(path, &i.to_string());
                    match (x.get(i), y.get(i)) {
                        (Some(va), Some(vb)) => self.walk(path, va, vb),
                        (Some(va), None) if !self.full() => self.removed.push(PathValue {
                            path: path.clone(),
                            value: va.clone(),
                        }),
                        (None, Some(vb)) if !self.full() => self.added.push(PathValue {
                            path: path.clone(),
                            value: vb.clone(),
                        }),
                        _ => {}
                    }
                    path.truncate(len);
                }
            }
            _ if a == b => {}
            _ => self.changed.push(PathChange {
                path: path.clone(),
                recorded: a.clone(),
                candidate: b.clone(),
            }),
        }
    }

    /// One line per difference, for people: `~ /lines: 3 → 4`, `+ /extra: "x"`,
    /// `- /words: 2` (values cut to 80 characters); the byte position when the outputs are not
    /// JSON or hold the same values in other bytes.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for c in &self.changed {
            out.push(format!(
                "~ {}: {} → {}",
                shown_path(&c.path),
                cut(&c.recorded),
                cut(&c.candidate)
            ));
        }
        for a in &self.added {
            out.push(format!("+ {}: {}", shown_path(&a.path), cut(&a.value)));
        }
        for r in &self.removed {
            out.push(format!("- {}: {}", shown_path(&r.path), cut(&r.value)));
        }
        if self.truncated {
            out.push(format!(
                "… (the first {MAX_DIFF_PATHS} differing paths are listed)"
            ));
        }
        if out.is_empty() {
            out.push(self.bytes.clone());
        }
        out
    }
}

/// Append one JSON Pointer reference token (`~` → `~0`, `/` → `~1`).
fn push_token(path: &mut String, key: &str) {
    path.push('/');
    for c in key.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

fn shown_path(p: &str) -> &str {
    if p.is_empty() {
        "(the whole output)"
    } else {
        p
    }
}

fn cut(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

/// A candidate re-run's verdict (issue 32 §2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// The candidate produced the committed output, byte for byte.
    Same,
    /// The output differs (and neither side's `ok` changed to or from `false`).
    OutputChanged(OutputDiff),
    /// The plan asks for other effects than the recording has (effect, scope, cost or
    /// payload); the recorded results cannot answer it, so the entry stops there.
    PlanChanged {
        /// The recorded requests.
        recorded: Vec<Request>,
        /// The candidate's requests.
        candidate: Vec<Request>,
    },
    /// The recorded output was not a refusal; the candidate's is (`ok:false`).
    NowRefused {
        /// The candidate's `refused` text (empty when it has none).
        refused: String,
        /// The output diff.
        diff: OutputDiff,
    },
    /// The recorded output was a refusal; the candidate's is not.
    NoLongerRefused {
        /// The recorded `refused` text.
        recorded: String,
        /// The output diff.
        diff: OutputDiff,
    },
    /// The candidate fails where the recording committed.
    NowFails {
        /// Why.
        kind: FailKind,
        /// The diagnostic (interpreter stderr, the law broken, …).
        diagnostic: String,
    },
}

impl Change {
    /// The verdict name: `same`, `output-changed`, `plan-changed`, `now-refused`,
    /// `no-longer-refused`, `now-fails`.
    pub fn name(&self) -> &'static str {
        match self {
            Change::Same => "same",
            Change::OutputChanged(_) => "output-changed",
            Change::PlanChanged { .. } => "plan-changed",
            Change::NowRefused { .. } => "now-refused",
            Change::NoLongerRefused { .. } => "no-longer-refused",
            Change::NowFails { .. } => "now-fails",
        }
    }

    /// True for [`Change::Same`].
    pub fn is_same(&self) -> bool {
        matches!(self, Change::Same)
    }

    /// The output diff, for the verdicts that compared outputs.
    pub fn diff(&self) -> Option<&OutputDiff> {
        match self {
            Change::OutputChanged(d)
            | Change::NowRefused { diff: d, .. }
            | Change::NoLongerRefused { diff: d, .. } => Some(d),
            _ => None,
        }
    }

    /// The verdict of comparing the committed output with the candidate's.
    pub fn of_outputs(recorded: &[u8], candidate: &[u8]) -> Change {
        if recorded == candidate {
            return Change::Same;
        }
        let diff = OutputDiff::between(recorded, candidate);
        match (refusal(recorded), refusal(candidate)) {
            (None, Some(refused)) => Change::NowRefused { refused, diff },
            (Some(recorded), None) => Change::NoLongerRefused { recorded, diff },
            _ => Change::OutputChanged(diff),
        }
    }

    fn fails(kind: FailKind, diagnostic: impl Into<String>) -> Change {
        Change::NowFails {
            kind,
            diagnostic: diagnostic.into(),
        }
    }
}

/// `Some(refused text)` when an output is a refusal: `ok` is `false` at the top level (what
/// `world invoke` exits 7 on).
pub fn refusal(output: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(output).ok()?;
    if v.get("ok").and_then(Value::as_bool) != Some(false) {
        return None;
    }
    Some(
        v.get("refused")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
    )
}

impl fmt::Display for Verdict {
    /// The verdict as the first line of an entry's report: `same`, `same (transitionFn A →
    /// B)`, `OUTPUT-CHANGED`, `PLAN-CHANGED`, `NOW-REFUSED: "…"`, `NO-LONGER-REFUSED`,
    /// `NOW-FAILS (type error): …`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.change {
            Change::Same => {
                f.write_str("same")?;
                let mut notes = Vec::new();
                if self.recorded.transition_fn != self.candidate.transition_fn {
                    notes.push(format!(
                        "transitionFn {} → {}",
                        self.recorded.transition_fn, self.candidate.transition_fn
                    ));
                }
                if self.recorded.interpreter != self.candidate.interpreter {
                    notes.push(format!(
                        "interpreter {} → {}",
                        self.recorded.interpreter, self.candidate.interpreter
                    ));
                }
                if !notes.is_empty() {
                    write!(f, " ({})", notes.join("; "))?;
                }
                Ok(())
            }
            Change::OutputChanged(_) => f.write_str("OUTPUT-CHANGED"),
            Change::PlanChanged { .. } => f.write_str(
                "PLAN-CHANGED: the candidate asks for other effects than the recording has; the recorded results cannot answer it",
            ),
            Change::NowRefused { refused, .. } => write!(f, "NOW-REFUSED: {refused:?}"),
            Change::NoLongerRefused { recorded, .. } => {
                write!(f, "NO-LONGER-REFUSED (recorded refusal: {recorded:?})")
            }
            Change::NowFails { kind, diagnostic } => {
                write!(f, "NOW-FAILS ({}): {diagnostic}", kind.text())
            }
        }
    }
}

impl Verdict {
    /// The detail lines under an entry's verdict line: the output diff, or both plans' requests.
    pub fn detail_lines(&self) -> Vec<String> {
        match &self.change {
            Change::PlanChanged {
                recorded,
                candidate,
            } => {
                let list = |side: &str, rs: &[Request]| -> Vec<String> {
                    if rs.is_empty() {
                        vec![format!("{side}: no effect")]
                    } else {
                        rs.iter().map(|r| format!("{side}: {r}")).collect()
                    }
                };
                let mut out = list("recorded ", recorded);
                out.extend(list("candidate", candidate));
                out
            }
            c => c.diff().map(OutputDiff::lines).unwrap_or_default(),
        }
    }
}

/// Per-transition counts of a candidate replay (issue 32 §2 "a summary per transition").
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TransitionSummary {
    /// The transition id.
    pub id: String,
    /// The candidate source's ref (`None`: the recorded sources, re-run under another
    /// interpreter).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transition_fn: Option<String>,
    /// Entries re-run.
    pub entries: u64,
    /// `same`.
    pub same: u64,
    /// `output-changed`.
    pub output_changed: u64,
    /// `plan-changed`.
    pub plan_changed: u64,
    /// `now-refused`.
    pub now_refused: u64,
    /// `no-longer-refused`.
    pub no_longer_refused: u64,
    /// `now-fails`.
    pub now_fails: u64,
    /// Entries whose recording diverged (integrity), so no verdict could be given.
    pub diverged: u64,
    /// The log indexes of every entry that is not `same`, ascending.
    pub changed_entries: Vec<i64>,
}

impl TransitionSummary {
    /// Entries whose verdict is not `same` (failures included).
    pub fn changed(&self) -> u64 {
        self.entries - self.same - self.diverged
    }

    /// `ailang-write: 118 same, 2 output-changed — entries 31, 77` (at most ten entries
    /// listed), or `ailang-write: no recorded entries`.
    pub fn line(&self) -> String {
        if self.entries == 0 {
            return format!("{}: no recorded entries", self.id);
        }
        let mut parts = vec![format!("{} same", self.same)];
        for (n, name) in [
            (self.output_changed, "output-changed"),
            (self.plan_changed, "plan-changed"),
            (self.now_refused, "now-refused"),
            (self.no_longer_refused, "no-longer-refused"),
            (self.now_fails, "now-fails"),
            (self.diverged, "diverged (recording broken)"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {name}"));
            }
        }
        let mut line = format!("{}: {}", self.id, parts.join(", "));
        if !self.changed_entries.is_empty() {
            let shown: Vec<String> = self
                .changed_entries
                .iter()
                .take(10)
                .map(i64::to_string)
                .collect();
            let word = if self.changed_entries.len() == 1 {
                "entry"
            } else {
                "entries"
            };
            line.push_str(&format!(" — {word} {}", shown.join(", ")));
            if self.changed_entries.len() > 10 {
                line.push_str(&format!(" … ({} more)", self.changed_entries.len() - 10));
            }
        }
        line
    }
}

/// The per-transition summary of a candidate replay's report: every candidate transition
/// (with no entries when the selection held none), then every other transition re-run
/// (`--interpreter`), by id. A diverged entry counts for its transition when the record named
/// one (`transition` of [`super::EntryResult`]).
pub fn summarize(report: &Report, candidate: &Candidate) -> Vec<TransitionSummary> {
    let mut by: BTreeMap<String, TransitionSummary> = BTreeMap::new();
    for t in candidate.transitions.values() {
        by.insert(
            t.id.clone(),
            TransitionSummary {
                id: t.id.clone(),
                transition_fn: Some(t.transition_fn.clone()),
                ..TransitionSummary::default()
            },
        );
    }
    for r in &report.entries {
        let (id, verdict) = match &r.outcome {
            Outcome::Rerun(v) => (v.transition.clone(), Some(v)),
            Outcome::Diverged(_) => match &r.transition {
                Some(t) => (t.clone(), None),
                None => continue,
            },
            _ => continue,
        };
        let s = by.entry(id.clone()).or_insert_with(|| TransitionSummary {
            id,
            ..TransitionSummary::default()
        });
        s.entries += 1;
        let Some(v) = verdict else {
            s.diverged += 1;
            s.changed_entries.push(r.entry_index);
            continue;
        };
        match v.change {
            Change::Same => s.same += 1,
            Change::OutputChanged(_) => s.output_changed += 1,
            Change::PlanChanged { .. } => s.plan_changed += 1,
            Change::NowRefused { .. } => s.now_refused += 1,
            Change::NoLongerRefused { .. } => s.no_longer_refused += 1,
            Change::NowFails { .. } => s.now_fails += 1,
        }
        if !v.change.is_same() {
            s.changed_entries.push(r.entry_index);
        }
    }
    by.into_values().collect()
}

/// A candidate phase's failure as a verdict, or a [`Stop`] when the interpreter itself could
/// not be used (absent, altered, host I/O): that is the recording's environment, not the
/// candidate's behaviour.
/// `label` names the candidate's source file in quoted interpreter stderr.
fn failure(
    interp: &str,
    err: CapsuleError,
    what: &str,
    label: Option<&str>,
) -> Result<Change, Stop> {
    let kind = match &err {
        CapsuleError::Timeout => FailKind::Deadline,
        CapsuleError::Integrity { .. } | CapsuleError::Unavailable(_) | CapsuleError::Io(_) => {
            return Err(interpreter_failed(interp, &err).into())
        }
        _ => FailKind::RuntimeError,
    };
    Ok(Change::fails(
        kind,
        one_line(&format!("{what}: {}", err.naming(label))),
    ))
}

/// Interpreter diagnostics on one line: their lines joined with `; `.
fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// An early verdict ([`Change`]) or the candidate's output bytes.
type Produced = Result<Vec<u8>, Change>;

/// What a candidate phase runs: the interpreter ref, the source, and the source's file name
/// for diagnostics.
#[derive(Clone, Copy)]
struct Run<'s> {
    interp: &'s str,
    src: &'s [u8],
    label: Option<&'s str>,
}

impl<'a> Engine<'a> {
    /// Re-run one entry as the candidate says (`sub`) and judge it. The recording's own checks
    /// up to the re-run already passed; here the output object must verify (it is what the
    /// candidate is compared with) and the chain checks (entry hash, world ref) run as for
    /// every entry.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn rerun(
        &mut self,
        e: &LogEntry,
        world: &WorldRow,
        rec: &InvocationRecord,
        source: &Object,
        input: &Object,
        output: &Object,
        output_verified: bool,
        recorded_plan: Option<(&Object, &str)>,
        sub: Sub<'a>,
    ) -> Result<Verdict, Stop> {
        if !output_verified && !output.verifies() {
            let actual = HashRef::of(&output.payload).to_string();
            return Err(div(
                Stage::Output,
                format!(
                    "output {} is altered: its stored bytes no longer hash to its ref",
                    output.meta.hash
                ),
            )
            .refs(&output.meta.hash, actual)
            .into());
        }
        self.chain(e, world)?;
        let (src, fn_ref): (&[u8], &str) = match sub.transition {
            Some(t) => (t.source.as_slice(), t.transition_fn.as_str()),
            None => (&source.payload, rec.transition_fn.as_str()),
        };
        let mut verdict = Verdict {
            transition: rec.skill_id.clone(),
            recorded: Pin {
                transition_fn: rec.transition_fn.clone(),
                interpreter: rec.interpreter.clone(),
            },
            candidate: Pin {
                transition_fn: fn_ref.to_string(),
                interpreter: sub.interp.clone(),
            },
            change: Change::Same,
        };
        let label = sub.transition.map(|t| t.label.as_str());
        if let Some(change) = self.check_source(&sub.interp, fn_ref, src, label)? {
            verdict.change = change;
            return Ok(verdict);
        }
        let produced = if sub.effectful(rec) {
            let declared = sub.transition.and_then(|t| t.declared.as_deref());
            let run = Run {
                interp: &sub.interp,
                src,
                label,
            };
            self.rerun_effectful(rec, input, recorded_plan, &run, declared)?
        } else {
            match self.run_raw(&sub.interp, src, &input.payload)? {
                Ok(out) => Ok(out),
                Err(err) => Err(failure(&sub.interp, err, "the run", label)?),
            }
        };
        verdict.change = match produced {
            Ok(bytes) => Change::of_outputs(&output.payload, &bytes),
            Err(change) => change,
        };
        Ok(verdict)
    }

    /// `check` a source under an interpreter, once per pair in a replay: `Some(now-fails)`
    /// when it does not load.
    fn check_source(
        &mut self,
        interp_ref: &str,
        fn_ref: &str,
        src: &[u8],
        label: Option<&str>,
    ) -> Result<Option<Change>, Stop> {
        let key = (interp_ref.to_string(), fn_ref.to_string());
        if let Some(known) = self.checked.get(&key) {
            return Ok(known.clone());
        }
        self.span.pause();
        let interp = self.interpreter(interp_ref)?;
        let limits = RunLimits::until(std::time::Instant::now() + self.opts.phase_timeout);
        let result = match interp.check(src, limits) {
            Ok(c) if c.passed => None,
            Ok(c) => Some(Change::fails(
                FailKind::TypeError,
                format!(
                    "the source does not load under interpreter {interp_ref}: {}",
                    one_line(&crate::interp::capsule::quote(
                        c.diagnostics
                            .replace(
                                crate::interp::external::SOURCE_PATH,
                                label.unwrap_or(fn_ref)
                            )
                            .as_bytes()
                    ))
                ),
            )),
            Err(RunError::Timeout) => Some(Change::fails(
                FailKind::Deadline,
                "checking the source exceeded its deadline",
            )),
            Err(err) => return Err(interpreter_failed(interp_ref, &err.into()).into()),
        };
        self.checked.insert(key, result.clone());
        Ok(result)
    }

    /// The effectful (v2) re-run: plan on the recorded input, the recorded results for the
    /// recorded effects, finish, composition.
    fn rerun_effectful(
        &mut self,
        rec: &InvocationRecord,
        input: &Object,
        recorded_plan: Option<(&Object, &str)>,
        run: &Run<'_>,
        declared: Option<&[Triple]>,
    ) -> Result<Produced, Stop> {
        let Run { interp, src, label } = *run;
        let plan_input = match self.pre.plan_input.take() {
            Some((r, bytes)) if r == input.meta.hash => bytes,
            _ => plan::plan_input(&input.payload),
        };
        let raw = match self.run_raw(interp, src, &plan_input)? {
            Ok(raw) => raw,
            Err(err) => return Ok(Err(failure(interp, err, "the plan phase", label)?)),
        };
        let declared: Cow<'_, [Triple]> = match declared {
            Some(d) => Cow::Borrowed(d),
            // No declared effects known: L3 is not checked (DEC-CAND-2).
            None => Cow::Owned(recorded_triples(&raw).unwrap_or_default()),
        };
        let parsed = match plan::parse_plan(&raw, &declared) {
            Ok(p) => p,
            Err(err) => {
                return Ok(Err(Change::fails(
                    FailKind::PlanLaw,
                    format!("the plan breaks a plan law: {err}"),
                )))
            }
        };
        let (body, world_effects) = if parsed.effects.is_empty() {
            (
                parsed.result.clone().unwrap_or(CValue::Object(vec![])),
                Vec::new(),
            )
        } else {
            let recorded = match recorded_plan {
                Some((obj, plan_ref)) => self.recorded_effects(obj, plan_ref)?,
                None => Vec::new(),
            };
            let same = recorded.len() == parsed.effects.len()
                && recorded.iter().zip(&parsed.effects).all(|(r, c)| {
                    (&r.effect, &r.scope, r.cost, &r.payload)
                        == (&c.effect, &c.scope, c.cost, &c.payload)
                });
            if !same {
                return Ok(Err(Change::PlanChanged {
                    recorded: recorded.iter().map(Request::of).collect(),
                    candidate: parsed.effects.iter().map(Request::of).collect(),
                }));
            }
            let record_refs = rec.effects.clone().unwrap_or_default();
            let walked = self.walk_effects(rec, &parsed.effects, &record_refs)?;
            let body = if parsed.finish {
                let finish_input = plan::finish_input(&input.payload, &walked.results);
                let raw = match self.run_raw(interp, src, &finish_input)? {
                    Ok(raw) => raw,
                    Err(err) => return Ok(Err(failure(interp, err, "the finish phase", label)?)),
                };
                match plan::parse_finish(&raw) {
                    Ok(v) => v,
                    Err(err) => {
                        return Ok(Err(Change::fails(
                            FailKind::PlanLaw,
                            format!("the finish output breaks a plan law: {err}"),
                        )))
                    }
                }
            } else {
                match (walked.results.first().map(|r| r.status), walked.handler_output) {
                    (Some("ok"), Some(v @ CValue::Object(_))) => v,
                    (Some("ok"), _) => {
                        return Ok(Err(Change::fails(
                            FailKind::PlanLaw,
                            "the recorded handler output is not a JSON object and the plan asks for no finish phase, so no output can be composed",
                        )))
                    }
                    _ => CValue::Object(vec![]),
                }
            };
            (body, walked.world_effects)
        };
        let plan_ref = HashRef::of(&parsed.canonical).to_string();
        Ok(match plan::compose(body, &plan_ref, &world_effects) {
            Ok(bytes) => Ok(bytes),
            Err(err) => Err(Change::fails(
                FailKind::PlanLaw,
                format!("composing the output failed: {err}"),
            )),
        })
    }

    /// The recorded plan's effects (parsed against its own triples).
    fn recorded_effects(
        &mut self,
        plan_obj: &Object,
        plan_ref: &str,
    ) -> Result<Vec<PlannedEffect>, Stop> {
        let malformed = |why: String| -> Stop {
            div(
                Stage::Record,
                format!("recorded plan {plan_ref} is malformed: {why}"),
            )
            .into()
        };
        let triples = match self.pre.triples.take() {
            Some((r, t)) if r == plan_ref => t,
            _ => recorded_triples(&plan_obj.payload),
        }
        .map_err(|e| malformed(e.to_string()))?;
        plan::parse_plan(&plan_obj.payload, &triples)
            .map(|p| p.effects)
            .map_err(|e| malformed(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_diff_names_added_removed_and_changed_paths() {
        let d = OutputDiff::between(
            br#"{"a":1,"b":{"c":[1,2],"d":"x"},"gone":true}"#,
            br#"{"a":2,"b":{"c":[1],"d":"x","e/f":null},"new~":0}"#,
        );
        assert!(d.json);
        assert_eq!(
            d.changed,
            vec![PathChange {
                path: "/a".into(),
                recorded: Value::from(1),
                candidate: Value::from(2)
            }]
        );
        let removed: Vec<&str> = d.removed.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(removed, ["/b/c/1", "/gone"]);
        let added: Vec<&str> = d.added.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(added, ["/b/e~1f", "/new~0"]);
        assert_eq!(d.first_differing_byte, 5);
        let lines = d.lines();
        assert!(lines.contains(&"~ /a: 1 → 2".to_string()), "{lines:?}");
        assert!(lines.contains(&"- /gone: true".to_string()), "{lines:?}");
    }

    #[test]
    fn non_json_outputs_give_the_first_differing_byte() {
        let d = OutputDiff::between(b"abcdef", b"abcxef");
        assert!(!d.json);
        assert_eq!(d.first_differing_byte, 3);
        assert!(
            d.lines()[0].starts_with("first difference at byte 3"),
            "{d:?}"
        );
        // Same values in other bytes: no path differs, the bytes are named.
        let d = OutputDiff::between(br#"{"a":1,"b":2}"#, br#"{"b":2,"a":1}"#);
        assert!(d.json && d.changed.is_empty() && d.added.is_empty());
        assert!(
            d.lines()[0].starts_with("first difference at byte 2"),
            "{d:?}"
        );
    }

    #[test]
    fn long_diffs_are_cut() {
        let a: Vec<Value> = (0..300).map(Value::from).collect();
        let b: Vec<Value> = (1..301).map(Value::from).collect();
        let d = OutputDiff::between(
            &serde_json::to_vec(&serde_json::json!({ "x": a })).unwrap(),
            &serde_json::to_vec(&serde_json::json!({ "x": b })).unwrap(),
        );
        assert!(d.truncated);
        assert_eq!(d.changed.len(), MAX_DIFF_PATHS);
    }

    #[test]
    fn refusals_are_told_apart_from_other_changes() {
        assert_eq!(Change::of_outputs(b"{}", b"{}"), Change::Same);
        assert_eq!(
            Change::of_outputs(br#"{"ok":true}"#, br#"{"ok":false,"refused":"no"}"#).name(),
            "now-refused"
        );
        assert_eq!(
            Change::of_outputs(br#"{"ok":false}"#, br#"{"ok":true}"#).name(),
            "no-longer-refused"
        );
        assert_eq!(
            Change::of_outputs(
                br#"{"ok":false,"refused":"a"}"#,
                br#"{"ok":false,"refused":"b"}"#
            )
            .name(),
            "output-changed"
        );
        assert_eq!(refusal(br#"{"ok":false}"#), Some(String::new()));
        assert_eq!(refusal(br#"{"ok":"false"}"#), None);
    }

    #[test]
    fn the_summary_line_reads_like_the_issue() {
        let s = TransitionSummary {
            id: "ailang-write".into(),
            entries: 120,
            same: 118,
            output_changed: 2,
            changed_entries: vec![31, 77],
            ..TransitionSummary::default()
        };
        assert_eq!(
            s.line(),
            "ailang-write: 118 same, 2 output-changed — entries 31, 77"
        );
        assert_eq!(s.changed(), 2);
        let none = TransitionSummary {
            id: "x".into(),
            ..TransitionSummary::default()
        };
        assert_eq!(none.line(), "x: no recorded entries");
        let many = TransitionSummary {
            id: "y".into(),
            entries: 12,
            now_fails: 12,
            changed_entries: (1..=12).collect(),
            ..TransitionSummary::default()
        };
        assert_eq!(
            many.line(),
            "y: 0 same, 12 now-fails — entries 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 … (2 more)"
        );
    }
}
