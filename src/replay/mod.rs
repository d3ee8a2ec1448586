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
mod effects;
mod engine;

use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use rusqlite::Connection;
use serde::Serialize;

use crate::encoding::HashRef;
use crate::interp::{embedded_ref, Interpreter};
use crate::store::records::InvocationRecord;
use crate::store::replay_read::CommitIntentRow;
use crate::store::{object_in, widen_page_cache, Error as StoreError, LogEntry, ReadSpan, Store};
use crate::transitions::publish::InterpreterProvider;
use ahead::{Ahead, Prefetched};
use candidate::{Candidate, Verdict};
pub use effects::{recorded_triples, request_time, RecordedPlanError};
use engine::{Engine, Stop};

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
    gaps_in(store, selection, &store.commit_intents()?)
}

/// [`gaps`] with the journal's commit intents already read (`intents`, one read shared with
/// [`select_in`], DEC-REPLAYPERF-2).
fn gaps_in(
    store: &Store,
    selection: &Selection,
    intents: &[CommitIntentRow],
) -> Result<Vec<String>, ReplayError> {
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
        // The committed intents in journal order, as `journal::committed_intents` lists them.
        let mut committed: Vec<&CommitIntentRow> = intents.iter().filter(|r| r.committed).collect();
        committed.sort_by_key(|r| r.seq);
        let mut lost = Vec::new();
        for r in committed {
            if wanted(&r.invocation_id) && !logged.contains(r.intent.entry_hash.as_str()) {
                lost.push(r.invocation_id.clone());
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
    select_in(store, selection, &store.commit_intents()?)
}

/// [`select`] with the journal's commit intents already read (`rows`, DEC-REPLAYPERF-2): each
/// entry's invocation id is the id of the commit intent naming its hash (as
/// `journal::commit_intents_by_entry` indexes them: an intent whose payload names another id
/// is left out, and of two intents naming one entry the later read wins).
fn select_in(
    store: &Store,
    selection: &Selection,
    rows: &[CommitIntentRow],
) -> Result<Vec<(LogEntry, Option<String>)>, ReplayError> {
    let mut intents: HashMap<&str, &str> = HashMap::with_capacity(rows.len());
    for r in rows {
        if r.intent.invocation_id == r.invocation_id {
            intents.insert(&r.intent.entry_hash, &r.invocation_id);
        }
    }
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
        let mut id = intents.get(e.entry_hash.as_str()).map(|s| (*s).to_string());
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
    // The journal's commit intents, read and decoded once for the gap check and the selection.
    let intents = store.commit_intents()?;
    if !opts.allow_gaps {
        let missing = gaps_in(store, selection, &intents)?;
        if !missing.is_empty() {
            return Err(ReplayError::Gap(missing.join("; ")));
        }
    }
    let mut selected = select_in(store, selection, &intents)?;
    drop(intents);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Triple;
    use crate::store::records::request_bytes;

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
