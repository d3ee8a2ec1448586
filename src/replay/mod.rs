//! Deterministic replay of coordinator log entries (transitions.md §12; seed 000: "in replay
//! mode the broker reads these records and never calls a handler").
//!
//! [`replay`] re-runs every coordinator-written entry of a [`Selection`] with the entry's own
//! pinned interpreter and compares plan, effect, output and hash bytes with what the store
//! holds. It opens nothing and writes nothing: the caller passes a store (normally opened
//! read-only) and an [`InterpreterProvider`]. No effect handler exists in this module: effect
//! results are read back from the recorded `world/effect-result/v1` objects.
//!
//! Stage order per entry (the first failing check is reported): `receipt` → `record` →
//! `transition_source` → `input` → `output` (object integrity) → `interpreter` → pure:
//! `result`, `world_hash`; effectful: `plan`, `effects`, `finish`, `output`, `world_hash` →
//! `entry_hash` → `world_ref`.
//!
//! By default the engine reads each entry a window ahead of checking it (DEC-PERF-10), and a
//! runner thread makes the interpreter calls those reads predict (DEC-PERF-12, [`ahead`]); the
//! engine takes each read at the step that needs it and a run's output only for the identical
//! call, so the checks and the divergence reported are the same as with
//! [`Options::read_ahead`] off.

mod ahead;
pub mod bundle;
pub mod candidate;

use std::collections::HashMap;
use std::fmt;
use std::time::{Duration, Instant};

use rusqlite::Connection;
use serde::Serialize;

use crate::authority::grants::{decide, Grant};
use crate::encoding::trcjson::{self, Bounds, CValue};
use crate::encoding::HashRef;
use crate::interp::capsule::{self, CapsuleError};
use crate::interp::{embedded_ref, Interpreter};
use crate::plan::{self, PhaseResult, PlannedEffect, Triple, WorldEffect};
use crate::store::entry::{entry_hash, world_ref};
use crate::store::journal::{self, Kind, Receipt, ReceiptState};
use crate::store::records::request_bytes;
use crate::store::records::{
    EffectRecord, InvocationRecord, EFFECT_RECORD, INVOCATION_RECORD_V1, INVOCATION_RECORD_V2,
};
use crate::store::{
    object_in, widen_page_cache, world_by_log_head_in, world_in, Error as StoreError, LogEntry,
    Object, ReadSpan, Store, WorldRow,
};
use crate::transitions::publish::InterpreterProvider;
use ahead::{Ahead, Prefetched};
use candidate::{Candidate, Verdict};

/// Which log entries to replay (transitions.md §12 "Selection").
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selection {
    /// Every entry of the log (`--all`).
    All,
    /// The coordinator entries whose invocation belongs to this episode (`--episode EP`).
    Episode(String),
    /// The one entry committed for this invocation id (`--invocation ID`).
    Invocation(String),
    /// Entries with `from <= index <= to` (`--from N --to M`).
    Range {
        /// First index (inclusive).
        from: i64,
        /// Last index (inclusive).
        to: i64,
    },
}

/// Replay options.
#[derive(Clone, Debug)]
pub struct Options {
    /// Continue after the first divergence (`--keep-going`); by default replay stops there.
    pub keep_going: bool,
    /// Wall-clock budget of each re-run phase (plan, finish, or the pure run). Default 20 s,
    /// the live invocation deadline, so a loaded CI machine does not time out where the live
    /// call did not.
    pub phase_timeout: Duration,
    /// Read entries ahead and make their predicted interpreter calls on a runner thread
    /// (DEC-PERF-10, DEC-PERF-12; default). `false` checks each entry with reads and calls
    /// made only when a check needs them: the plain path the read-ahead is tested against.
    /// Both report the same outcomes.
    pub read_ahead: bool,
    /// Replay what is there even when the log has a gap or a committed invocation's entry is
    /// missing (`--allow-gaps`); by default that is [`ReplayError::Gap`] (issue 26 §3).
    pub allow_gaps: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            keep_going: false,
            phase_timeout: crate::plan::INVOCATION,
            read_ahead: true,
            allow_gaps: false,
        }
    }
}

/// The divergence stages, named for people (transitions.md §12).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// The commit receipt is not resolved with an intent naming this entry's world.
    Receipt,
    /// The invocation record, its world row or its plan object is absent, altered or inconsistent.
    Record,
    /// The transition source object is absent or altered.
    TransitionSource,
    /// The pinned interpreter is absent, altered, or a dialect this build does not run.
    Interpreter,
    /// The input object is absent or altered.
    Input,
    /// The re-run plan differs from the recorded plan (or fails).
    Plan,
    /// Effect count, an effect record, its request, decision or result differs (ReplayGapError).
    Effects,
    /// The re-run finish phase fails.
    Finish,
    /// The recomposed output differs from the committed output, or the output object is altered.
    Output,
    /// The pure re-run differs from (or fails to produce) the output bytes.
    Result,
    /// The re-run output does not hash to the world's stateRoot.
    WorldHash,
    /// The recomputed entry hash differs.
    EntryHash,
    /// The re-derived world ref differs.
    WorldRef,
}

impl Stage {
    /// The stage name as printed (`transition_source`, `world_ref`, …).
    pub fn name(self) -> &'static str {
        match self {
            Stage::Receipt => "receipt",
            Stage::Record => "record",
            Stage::TransitionSource => "transition_source",
            Stage::Interpreter => "interpreter",
            Stage::Input => "input",
            Stage::Plan => "plan",
            Stage::Effects => "effects",
            Stage::Finish => "finish",
            Stage::Output => "output",
            Stage::Result => "result",
            Stage::WorldHash => "world_hash",
            Stage::EntryHash => "entry_hash",
            Stage::WorldRef => "world_ref",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `ReplayDivergenceError{InvocationID, Stage, Reason}` plus expected/actual refs and a
/// short byte diff when bytes were compared.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Divergence {
    /// Where replay diverged.
    pub stage: Stage,
    /// Why, for people.
    pub reason: String,
    /// The recorded ref (or value) replay expected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// What replay found or produced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
    /// A short byte diff ([`byte_diff`]) when two byte strings were compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DIVERGED at {}: {}", self.stage, self.reason)?;
        if let Some(e) = &self.expected {
            write!(f, "; expected {e}")?;
        }
        if let Some(a) = &self.actual {
            write!(f, "; actual {a}")?;
        }
        if let Some(d) = &self.diff {
            write!(f, "; {d}")?;
        }
        Ok(())
    }
}

fn div(stage: Stage, reason: impl Into<String>) -> Divergence {
    Divergence {
        stage,
        reason: reason.into(),
        expected: None,
        actual: None,
        diff: None,
    }
}

impl Divergence {
    fn refs(mut self, expected: impl Into<String>, actual: impl Into<String>) -> Self {
        self.expected = Some(expected.into());
        self.actual = Some(actual.into());
        self
    }

    fn bytes(mut self, expected: &[u8], actual: &[u8]) -> Self {
        self.diff = Some(byte_diff(expected, actual));
        self
    }
}

/// How one entry ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every compared byte was identical.
    Identical,
    /// Replay diverged (or an object/interpreter failed its integrity check).
    Diverged(Divergence),
    /// A client-supplied entry (genesis, REST commit): not replayable, never counted as passed.
    ClientCommit,
    /// The entry was re-run with a candidate source or interpreter ([`Candidate`]) and its
    /// recording checked out: the verdict (issue 32).
    Rerun(Box<Verdict>),
}

/// One replayed (or skipped) entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryResult {
    /// The log index.
    pub entry_index: i64,
    /// The invocation id (from the commit intent, else the record); `None` when neither names one.
    pub invocation_id: Option<String>,
    /// The entry's `written_by`.
    pub written_by: String,
    /// The transition id of an entry a candidate applies to, once its record decoded (`None`
    /// for every other entry, and in a plain replay).
    pub transition: Option<String>,
    /// What happened.
    pub outcome: Outcome,
}

impl EntryResult {
    /// The id shown in output: the invocation id, else `entry-<N>`.
    pub fn label(&self) -> String {
        self.invocation_id
            .clone()
            .unwrap_or_else(|| format!("entry-{}", self.entry_index))
    }
}

/// The result of a replay run.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Every entry visited, in log order (replay may have stopped early).
    pub entries: Vec<EntryResult>,
    /// Coordinator entries replayed (identical or diverged).
    pub replayed: u64,
    /// Client commits listed as not replayable.
    pub skipped: u64,
    /// Entries that diverged.
    pub diverged: u64,
    /// Entries re-run with a candidate source or interpreter that got a verdict.
    pub reran: u64,
    /// Of those, the ones whose verdict is not `same`.
    pub changed: u64,
    /// True when replay stopped at the first divergence before the end of the selection.
    pub stopped_early: bool,
}

impl Report {
    /// True when no replayed entry diverged (skips never change this).
    pub fn ok(&self) -> bool {
        self.diverged == 0
    }

    /// True when no entry diverged and every candidate verdict is `same`.
    pub fn unchanged(&self) -> bool {
        self.ok() && self.changed == 0
    }
}

/// Failures that prevent a replay from running at all (not divergences).
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// `--episode` names no committed invocation.
    #[error("no such episode: no coordinator entry belongs to episode {0:?}")]
    NoSuchEpisode(String),
    /// `--invocation` names no committed invocation.
    #[error("no such invocation: no log entry was committed for {0:?}")]
    NoSuchInvocation(String),
    /// `--from N --to M` selects nothing.
    #[error("no log entries between index {from} and {to}")]
    EmptyRange {
        /// First index.
        from: i64,
        /// Last index.
        to: i64,
    },
    /// The selection's part of the log is incomplete: an index is missing, or the journal
    /// records an invocation as committed whose entry the log does not hold ([`gaps`]). A
    /// replay of what is left would report nothing about it.
    #[error("{0}; replaying what is left would pass over it (pass --allow-gaps to replay it anyway; `world verify` reports the damage)")]
    Gap(String),
    /// The store could not be read (SQLite failure).
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A short byte diff: the first differing offset and up to 24 bytes of each side around it,
/// ASCII-escaped, e.g. `first difference at byte 7 (expected 40 bytes, actual 41): expected
/// …"ok":true… actual …"ok":fals…`.
pub fn byte_diff(expected: &[u8], actual: &[u8]) -> String {
    let at = expected
        .iter()
        .zip(actual)
        .position(|(a, b)| a != b)
        .unwrap_or(expected.len().min(actual.len()));
    let lo = at.saturating_sub(8);
    let snippet = |b: &[u8]| -> String {
        let hi = (at + 16).min(b.len());
        let part = b.get(lo..hi).unwrap_or_default();
        format!(
            "{}{}{}",
            if lo > 0 { "…" } else { "" },
            part.escape_ascii(),
            if hi < b.len() { "…" } else { "" }
        )
    };
    format!(
        "first difference at byte {at} (expected {} bytes, actual {}): expected {} actual {}",
        expected.len(),
        actual.len(),
        snippet(expected),
        snippet(actual)
    )
}

pub use crate::store::journal::episode_of;

/// Is this entry written by the coordinator (`coordinator:<surface>`) and so replayable?
pub fn is_replayable(written_by: &str) -> bool {
    written_by.starts_with("coordinator:")
}

/// What the selection's part of the log is missing (issue 26 §3): for `--all` and a range, the
/// indexes absent between the first selected index and the last (an episode bundle omits
/// entries by design: only those its marker lists but it lacks); for `--all`, `--episode` and
/// `--invocation`, the invocations the journal records as committed whose entry the log does
/// not hold. One line per finding, the first few only; empty when nothing is missing.
///
/// # Errors
/// SQLite failures.
pub fn gaps(store: &Store, selection: &Selection) -> Result<Vec<String>, ReplayError> {
    const SHOWN: usize = 3;
    let conn = store.conn();
    let mut out = Vec::new();
    let indexes = store.entry_hashes()?;
    let marker = crate::store::registry_head_in(conn, bundle::BUNDLE)?
        .and_then(|m| object_in(conn, &m).ok().flatten())
        .and_then(|o| serde_json::from_slice::<bundle::Marker>(&o.payload).ok());
    let span = match selection {
        Selection::All => Some((0, i64::MAX)),
        Selection::Range { from, to } => Some(((*from).max(0), *to)),
        _ => None,
    }
    .filter(|(lo, hi)| lo <= hi);
    if let Some((lo, hi)) = span {
        let present: std::collections::BTreeSet<i64> = indexes.iter().map(|(i, _)| *i).collect();
        let last = present.range(lo..=hi).next_back().copied();
        let missing: Vec<i64> = match (&marker, last) {
            (Some(m), _) => m
                .entries
                .iter()
                .copied()
                .filter(|i| (lo..=hi).contains(i) && !present.contains(i))
                .collect(),
            (None, Some(last)) => (lo..=last).filter(|i| !present.contains(i)).collect(),
            (None, None) => Vec::new(),
        };
        if let Some(first) = missing.first() {
            out.push(format!(
                "the log has no entry at index {first}{}",
                if missing.len() > 1 {
                    format!(" ({} indexes missing)", missing.len())
                } else {
                    String::new()
                }
            ));
        }
    }
    let wanted = |id: &str| match selection {
        Selection::All => true,
        Selection::Episode(ep) => episode_of(id) == Some(ep.as_str()),
        Selection::Invocation(want) => id == want,
        Selection::Range { .. } => false,
    };
    if !matches!(selection, Selection::Range { .. }) {
        let logged: std::collections::HashSet<&str> =
            indexes.iter().map(|(_, h)| h.as_str()).collect();
        let mut lost = Vec::new();
        for (id, intent) in journal::committed_intents(conn)? {
            if wanted(&id) && !logged.contains(intent.entry_hash.as_str()) {
                lost.push(id);
            }
        }
        for id in lost.iter().take(SHOWN) {
            out.push(format!(
                "the journal records {id} as committed but the log holds no entry for it"
            ));
        }
        if lost.len() > SHOWN {
            out.push(format!(
                "{} more committed invocations are missing",
                lost.len() - SHOWN
            ));
        }
    }
    Ok(out)
}

/// The log entries a selection names, in log order, each with its invocation id (commit
/// intent first, else the record's `invocationId`).
///
/// # Errors
/// [`ReplayError::NoSuchEpisode`], [`ReplayError::NoSuchInvocation`],
/// [`ReplayError::EmptyRange`], [`ReplayError::Store`].
pub fn select(
    store: &Store,
    selection: &Selection,
) -> Result<Vec<(LogEntry, Option<String>)>, ReplayError> {
    let intents = journal::commit_intents_by_entry(store.conn())?;
    let (from, limit) = match selection {
        Selection::Range { from, to } if to < from => {
            return Err(ReplayError::EmptyRange {
                from: *from,
                to: *to,
            })
        }
        // Indexes start at 0: a negative `from` selects from 0 (not the first `to - from + 1`
        // entries, and no overflow of `to - from`).
        Selection::Range { from, to } => {
            let first = (*from).max(0);
            if *to < first {
                return Err(ReplayError::EmptyRange {
                    from: *from,
                    to: *to,
                });
            }
            (Some(first), Some(to.abs_diff(first) + 1))
        }
        _ => (None, None),
    };
    let mut out = Vec::new();
    store.for_each_log(from, limit, false, |e| {
        let mut id = intents.get(&e.entry_hash).map(str::to_string);
        if id.is_none() && is_replayable(&e.header.written_by) {
            id = record_invocation_id(store.conn(), &e.transition_ref);
        }
        let keep = match selection {
            Selection::All | Selection::Range { .. } => true,
            Selection::Episode(ep) => {
                is_replayable(&e.header.written_by)
                    && id.as_deref().and_then(episode_of) == Some(ep.as_str())
            }
            Selection::Invocation(want) => id.as_deref() == Some(want.as_str()),
        };
        if keep {
            out.push((e, id));
        }
        Ok(())
    })?;
    if out.is_empty() {
        return Err(match selection {
            Selection::Episode(ep) => ReplayError::NoSuchEpisode(ep.clone()),
            Selection::Invocation(id) => ReplayError::NoSuchInvocation(id.clone()),
            Selection::Range { from, to } => ReplayError::EmptyRange {
                from: *from,
                to: *to,
            },
            Selection::All => return Ok(out),
        });
    }
    Ok(out)
}

fn record_invocation_id(conn: &Connection, record_ref: &str) -> Option<String> {
    record_of(conn, record_ref).map(|r| r.invocation_id)
}

/// The invocation record `record_ref` names, when it is present and decodes.
fn record_of(conn: &Connection, record_ref: &str) -> Option<InvocationRecord> {
    let obj = object_in(conn, record_ref).ok()??;
    InvocationRecord::decode(&obj.meta.semantic_id, &obj.payload).ok()
}

/// Replay the selected entries (transitions.md §12), calling `on_entry(result, done, total)`
/// after each one so a surface can stream lines and progress. Stops after the first
/// divergence unless `opts.keep_going`.
///
/// Reads `store` only; never calls an effect handler; resolves each entry's own interpreter
/// through `pins` (an absent or altered interpreter is a divergence at stage `interpreter`).
///
/// # Errors
/// Selection errors ([`ReplayError::NoSuchEpisode`] …) and SQLite failures; every problem
/// with the stored data itself is a [`Divergence`] in the report, not an error.
pub fn replay(
    store: &Store,
    selection: &Selection,
    pins: &dyn InterpreterProvider,
    opts: &Options,
    on_entry: &mut dyn FnMut(&EntryResult, usize, usize),
) -> Result<Report, ReplayError> {
    replay_with(store, selection, pins, opts, None, on_entry)
}

/// [`replay`] with a [`Candidate`] (issue 32): each selected entry the candidate applies to is
/// re-run with the candidate's source or interpreter and gets a verdict
/// ([`Outcome::Rerun`]) instead of the byte comparison; the others replay as usual. A verdict
/// other than `same` never stops the replay (a divergence of the recording still does, unless
/// `opts.keep_going`). With [`Candidate::only`], only the candidate transitions' entries are
/// visited.
///
/// # Errors
/// As [`replay`].
pub fn replay_with(
    store: &Store,
    selection: &Selection,
    pins: &dyn InterpreterProvider,
    opts: &Options,
    candidate: Option<&Candidate>,
    on_entry: &mut dyn FnMut(&EntryResult, usize, usize),
) -> Result<Report, ReplayError> {
    widen_page_cache(store.conn(), REPLAY_PAGE_CACHE_KIB);
    // One read transaction per span of entries instead of one per statement (DEC-PERF-3).
    let span = ReadSpan::begin(store.conn(), READ_SPAN);
    if !opts.allow_gaps {
        let missing = gaps(store, selection)?;
        if !missing.is_empty() {
            return Err(ReplayError::Gap(missing.join("; ")));
        }
    }
    let mut selected = select(store, selection)?;
    if let Some(c) = candidate.filter(|c| c.only) {
        selected.retain(|(e, _)| {
            is_replayable(&e.header.written_by)
                && record_of(store.conn(), &e.transition_ref)
                    .is_some_and(|r| c.transitions.contains_key(&r.skill_id))
        });
    }
    // Every interpreter the selected entries pin, resolved once and shared by the engine and
    // the runner thread; a failed resolution is reported at each entry that pins it.
    let mut interps: HashMap<String, Resolved> = HashMap::new();
    for (e, _) in &selected {
        let r = &e.header.interpreter;
        if is_replayable(&e.header.written_by) && !interps.contains_key(r) {
            interps.insert(r.clone(), resolve_interpreter(pins, r));
        }
    }
    // A candidate's interpreters; an archived one the recording pins too is already resolved.
    for p in candidate.iter().flat_map(|c| c.interpreters()) {
        if !matches!(interps.get(p.reference()), Some(Ok(_))) {
            interps.insert(p.reference().to_string(), Ok(Box::new(p.clone())));
        }
    }
    std::thread::scope(|scope| {
        // The engine reads ahead and a runner thread makes the predicted interpreter calls
        // (DEC-PERF-10, DEC-PERF-12).
        let mut engine = Engine {
            conn: store.conn(),
            opts,
            interps: &interps,
            effect_intents: HashMap::new(),
            outcome_owners: HashMap::new(),
            pre: Prefetched::default(),
            ahead: opts
                .read_ahead
                .then(|| Ahead::spawn(scope, &selected, &interps, opts.phase_timeout, candidate)),
            pos: 0,
            span,
            candidate,
            checked: HashMap::new(),
            transition: None,
        };
        run_selected(&mut engine, &selected, opts, on_entry)
    })
}

/// An interpreter as resolved for a replay: the interpreter, or the divergence to report at
/// every entry that pins it.
type Resolved = Result<Box<dyn Interpreter>, Divergence>;

/// Resolve the interpreter `reference` through `pins`: the embedded one for a ref this build
/// runs, else an archived one; anything else is a divergence at stage `interpreter`.
fn resolve_interpreter(pins: &dyn InterpreterProvider, reference: &str) -> Resolved {
    let parsed = HashRef::parse(reference).map_err(|e| {
        div(
            Stage::Interpreter,
            format!("interpreter ref {reference:?} does not parse: {e}"),
        )
    })?;
    let resolved = if crate::ailang::runs_ref(reference) {
        pins.embedded()
    } else {
        pins.resolve(&parsed)
    };
    resolved.map_err(|e| {
        let note = if parsed == embedded_ref() {
            String::new()
        } else {
            " (it is neither an archived interpreter of this store nor the embedded dialect this build runs; replay never substitutes another interpreter)".to_string()
        };
        div(
            Stage::Interpreter,
            format!("pinned interpreter {reference} cannot be used: {}{note}", e.message),
        )
    })
}

/// The replay loop over `selected`: each entry through `engine`, in order.
fn run_selected(
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
const READ_SPAN: Duration = Duration::from_millis(100);

/// The page cache replay gives its connections (KiB): replay touches every object of every
/// entry once, and the default 2 MiB cache thrashes on long logs.
const REPLAY_PAGE_CACHE_KIB: u32 = 65_536;

enum Stop {
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
fn episode_intents(
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
type OwnerMap = HashMap<String, (String, String)>;

/// The [`OwnerMap`] of one episode's effect outcomes.
fn outcome_owners(conn: &Connection, episode: &str) -> Result<OwnerMap, StoreError> {
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
struct IntentInfo {
    id: String,
    logical_time: i64,
}

struct Engine<'a> {
    conn: &'a Connection,
    opts: &'a Options,
    /// The interpreters the selected entries pin (by header), resolved before the replay
    /// began; a run uses the record's interpreter only once it equals the header's.
    interps: &'a HashMap<String, Resolved>,
    /// episode → requestRef → intents carrying it.
    effect_intents: HashMap<String, HashMap<String, Vec<IntentInfo>>>,
    /// episode → recordRef → the effect intent whose outcome names it, with its status.
    outcome_owners: HashMap<String, OwnerMap>,
    /// The current entry's reads done ahead (empty with [`Options::read_ahead`] off).
    pre: Prefetched,
    /// The read-ahead and the runner thread's end (`None`: [`Options::read_ahead`] is off).
    ahead: Option<Ahead<'a>>,
    /// The current entry's index in the selection.
    pos: usize,
    /// The read transaction the engine reads in (DEC-PERF-3), paused while it waits for an
    /// interpreter run so that a writer's commit never waits on a slow transition.
    span: ReadSpan<'a>,
    /// The candidate of a candidate replay ([`replay_with`]).
    candidate: Option<&'a Candidate>,
    /// `(interpreter ref, source ref)` → the verdict of checking that source under that
    /// interpreter (`None`: it loads), once per replay.
    checked: HashMap<(String, String), Option<candidate::Change>>,
    /// In a candidate replay, the current entry's transition id once its record decoded and
    /// showed that the candidate applies to it.
    transition: Option<String>,
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

fn status_of(r: &EffectRecord) -> &'static str {
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
    fn object(&mut self, reference: &str) -> Result<Option<Object>, StoreError> {
        match self.pre.objects.get(reference) {
            Some((obj, _)) => Ok(obj.clone()),
            None => object_in(self.conn, reference),
        }
    }

    /// Load an object that must exist and re-hash (once: a prefetched object carries its
    /// check); otherwise a divergence at `stage`.
    fn load(&mut self, reference: &str, what: &str, stage: Stage) -> Result<Object, Stop> {
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
    fn receipt(&mut self, id: &str) -> Result<Receipt, StoreError> {
        match self.pre.receipt.take() {
            Some((r, receipt)) if r == id => Ok(receipt),
            _ => journal::receipt(self.conn, id),
        }
    }

    /// A world row by ref: the prefetched one when it was read, else from the store.
    fn world(&mut self, reference: &str) -> Result<Option<WorldRow>, StoreError> {
        match self.pre.world.take() {
            Some((r, row)) if r == reference => Ok(row),
            _ => world_in(self.conn, reference),
        }
    }

    fn deadline(&self) -> Instant {
        Instant::now() + self.opts.phase_timeout
    }

    /// The resolved interpreter `reference` (a selected entry's header interpreter), or the
    /// divergence its resolution gave.
    fn interpreter(&self, reference: &str) -> Result<&dyn Interpreter, Divergence> {
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
    fn run(
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
    fn run_raw(
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

    fn intents_for(&mut self, episode: &str) -> Result<&HashMap<String, Vec<IntentInfo>>, Stop> {
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
    fn outcome_owner(
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
    fn effect_outcome(&mut self, intent_id: &str) -> Result<Option<(String, String)>, Stop> {
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
    fn entry(&mut self, e: &LogEntry, id: Option<&str>) -> Result<Option<Verdict>, Stop> {
        let h = &e.header;
        // 1. The commit receipt.
        let id = id.ok_or_else(|| {
            div(
                Stage::Receipt,
                "no commit intent in the journal names this entry",
            )
        })?;
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
        // 2. World row and record.
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

    /// The entry hash and the world ref, recomputed.
    fn chain(&mut self, e: &LogEntry, world: &WorldRow) -> Result<(), Stop> {
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

    fn effectful(
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
    fn walk_effects(
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
            walked.push((er, now, intent_id));
        }
        // 6. One grant per distinct (effect, scope), reproducing the recorded decisions.
        let mut grants: Vec<Grant> = Vec::new();
        for (er, now, _) in &walked {
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
        // 7. The replay broker session: decide each request, never call a handler.
        let mut results = Vec::new();
        let mut world_effects = Vec::new();
        let mut handler_output: Option<CValue> = None;
        for ((pe, rref), (er, now, _)) in effects.iter().zip(record_refs).zip(&walked) {
            let d = decide(&grants, &er.effect, &er.scope, er.cost, *now);
            let label = d.denial.map(|x| x.label()).unwrap_or("");
            let gap = if label != er.denial {
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
            };
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
}

/// What the effect walk gives the finish phase and the composition.
struct Walked {
    results: Vec<PhaseResult>,
    world_effects: Vec<WorldEffect>,
    handler_output: Option<CValue>,
}

/// The divergence for an interpreter a run could not use: altered since archiving (the
/// integrity check), absent or unstartable.
fn interpreter_failed(interp_ref: &str, e: &CapsuleError) -> Divergence {
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
fn altered_output(output: &Object, replayed: &[u8]) -> Divergence {
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

/// Why a recorded plan's effect triples cannot be read ([`recorded_triples`]); printed after
/// `recorded plan <ref> is malformed: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordedPlanError {
    /// The plan bytes are not TR-CJSON-1 (the parser's own text).
    #[error(transparent)]
    Json(#[from] trcjson::Error),
    /// `effects` is absent or not an array.
    #[error("effects is not an array")]
    EffectsNotArray,
    /// An element of `effects` lacks a string `effect`, a string `scope` or an integer `cost`.
    #[error("an effect lacks effect, scope or cost")]
    IncompleteEffect,
}

/// The `(effect, scope, cost)` triples of a recorded plan's effects (the requirements
/// `parsePlan` is checked against on replay, transitions.md §12 step 5).
///
/// # Errors
/// [`RecordedPlanError`]: the bytes are not TR-CJSON-1, `effects` is not an array, or an
/// effect lacks one of the three.
pub fn recorded_triples(plan_bytes: &[u8]) -> Result<Vec<Triple>, RecordedPlanError> {
    let v = trcjson::parse(plan_bytes, Bounds::PLAN)?;
    let Some(CValue::Array(effects)) = v.get("effects") else {
        return Err(RecordedPlanError::EffectsNotArray);
    };
    effects
        .iter()
        .map(|e| {
            match (
                e.get("effect").and_then(CValue::as_str),
                e.get("scope").and_then(CValue::as_str),
                e.get("cost").and_then(CValue::as_i64),
            ) {
                (Some(effect), Some(scope), Some(cost)) => Ok(Triple {
                    effect: effect.to_string(),
                    scope: scope.to_string(),
                    cost,
                }),
                _ => Err(RecordedPlanError::IncompleteEffect),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_time_reads_the_logical_time() {
        let b = request_bytes(
            "Workspace.Read",
            "work:tree",
            1,
            1_700_000_000,
            br#"{"a":"1:2"}"#,
        );
        assert_eq!(request_time(&b), Some(1_700_000_000));
        assert_eq!(request_time(b"garbage"), None);
        assert_eq!(request_time(b"99:x"), None);
        assert_eq!(request_time(b""), None);
    }

    #[test]
    fn episode_of_splits_the_invocation_id() {
        assert_eq!(episode_of("cli:ep1:abc"), Some("ep1"));
        assert_eq!(episode_of("mcp:a:b:t"), Some("a:b"));
        assert_eq!(episode_of("cli"), None);
    }

    #[test]
    fn byte_diff_names_the_first_difference() {
        let d = byte_diff(br#"{"ok":true}"#, br#"{"ok":false}"#);
        assert!(d.starts_with("first difference at byte 6 "), "{d}");
        assert!(d.contains("true") && d.contains("fals"), "{d}");
        let d = byte_diff(b"abc", b"abcd");
        assert!(d.starts_with("first difference at byte 3 "), "{d}");
        let d = byte_diff(&[0xff; 100], &[0u8; 3]);
        assert!(d.contains("\\xff"), "{d}");
    }

    #[test]
    fn recorded_triples_reads_the_plan() {
        let p = br#"{"effects":[{"cost":1,"effect":"Workspace.Read","id":"r1","payload":{},"scope":"worktree"}],"finish":true,"plan":"world/effect-plan/v1","result":null}"#;
        assert_eq!(
            recorded_triples(p).unwrap(),
            vec![Triple {
                effect: "Workspace.Read".into(),
                scope: "worktree".into(),
                cost: 1
            }]
        );
        assert!(recorded_triples(b"{}").is_err());
        assert!(recorded_triples(br#"{"effects":[{"cost":"x"}]}"#).is_err());
    }

    #[test]
    fn stage_names_are_the_spec_names() {
        let all = [
            Stage::Receipt,
            Stage::Record,
            Stage::TransitionSource,
            Stage::Interpreter,
            Stage::Input,
            Stage::Plan,
            Stage::Effects,
            Stage::Finish,
            Stage::Output,
            Stage::Result,
            Stage::WorldHash,
            Stage::EntryHash,
            Stage::WorldRef,
        ];
        for s in all {
            assert_eq!(
                serde_json::to_value(s).unwrap(),
                serde_json::Value::String(s.name().into())
            );
        }
    }
}
