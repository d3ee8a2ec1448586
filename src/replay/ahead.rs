//! Work done ahead of the replay engine (DEC-PERF-10, DEC-PERF-12). The engine reads and
//! hash-checks each selected entry a window of entries before it checks it, and a runner
//! thread makes the interpreter calls those reads predict, so that each entry's re-run output
//! is waiting when the engine — which still performs every check, in the documented order —
//! reaches it.
//!
//! Two threads, two cores: the engine (the caller's thread: reads ahead, checks, reports,
//! `on_entry`) and the runner (an evaluation thread that makes the interpreter calls itself,
//! `ailang::as_eval_thread`). Neither waits on the other except for the item it needs next,
//! and a machine with two cores runs both without one preempting the other.
//!
//! ```text
//!  engine ──CallBatch──▶ runner
//!     ▲                    │
//!     └──────RanBatch──────┘
//! ```
//!
//! Both are caches of the engine's own work, never a second authority:
//! - a [`Prefetched`] item is what the same store lookup returned, and each object carries
//!   whether its bytes hash to its ref; a failed lookup is left out, so the engine repeats it
//!   and reports what it finds;
//! - a [`Ran`] output is used only for a call whose interpreter ref, source bytes and input
//!   bytes are identical to the call the engine is about to make. The runner predicts an
//!   effectful entry's finish input from the *recorded* plan and effect records; when the
//!   re-run plan or a re-derived decision differs, the engine's own finish input differs, the
//!   prediction is not used, and the engine makes the call itself.
//!
//! Calls cross to the runner in batches (1, 2, 4 … up to [`MAX_BATCH`] entries) and come back
//! batch by batch (runs slower than [`SEND_AFTER`] as they finish), so a waiting thread is
//! woken once per batch rather than once per call.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::sync::Arc;
use std::time::Instant;

use rusqlite::Connection;

use super::candidate::Candidate;
use super::effects::{
    episode_intents, outcome_owners, recorded_triples, status_of, IntentInfo, OwnerMap,
};
use super::{is_replayable, Resolved};
use crate::encoding::trcjson::{self, Bounds, CValue};
use crate::interp::capsule::{self, CapsuleError};
use crate::plan::{self, PhaseResult, Triple};
use crate::store::entry::{entry_hash, world_ref};
use crate::store::journal::Receipt;
use crate::store::records::{EffectRecord, InvocationRecord, EFFECT_RECORD};
use crate::store::{replay_read, world_in, LogEntry, Object, WorldRow};

/// Transition sources verified in this replay, by ref: the object the engine gets, and its
/// bytes shared with the runner's calls.
type Sources = HashMap<String, (Arc<Object>, Arc<Vec<u8>>)>;

/// An object as one read returned it (`None`: the store does not hold it), shared by every
/// entry of the block that names it, and whether its payload hashes to its ref (hashed once
/// per read, DEC-REPLAYPERF-1).
pub(super) type Read = (Option<Arc<Object>>, bool);

/// The most entries one batch of calls carries.
const MAX_BATCH: usize = 32;

/// How many entries the engine reads ahead of the one it checks: two full batches, so the
/// runner has the next batch queued while the engine waits on the current one.
const WINDOW: usize = 2 * MAX_BATCH;

/// Runs that took longer than this together are sent back before the rest of their batch
/// (a fast transition's runs still go back once per batch).
const SEND_AFTER: std::time::Duration = std::time::Duration::from_millis(2);

/// How many batches of calls the runner may have queued before the engine waits to send.
const BATCHES_AHEAD: usize = 4;

/// One entry's store reads and integrity checks, done ahead of the interpreter calls
/// (DEC-PERF-10). A pure cache of what the engine would read itself (see the module docs);
/// the engine takes each item at the step that needs it, so the order of checks and the
/// first divergence reported are unchanged.
#[derive(Default)]
pub(super) struct Prefetched {
    /// `(invocation id, its receipt)`.
    pub receipt: Option<(String, Receipt)>,
    /// `(world ref, its row)` for the receipt's world.
    pub world: Option<(String, Option<WorldRow>)>,
    /// `(that row, its re-derived world ref)`.
    pub world_ref: Option<(WorldRow, String)>,
    /// ref → (the object as read, whether its payload hashes to the ref).
    pub objects: HashMap<String, Read>,
    /// `(record ref, the record decoded from its verified bytes)`.
    pub record: Option<(String, InvocationRecord)>,
    /// The recomputed entry hash.
    pub entry_hash: Option<String>,
    /// `(input ref, the plan-phase input built from its verified bytes)`.
    pub plan_input: Option<(String, Vec<u8>)>,
    /// effect record ref → the record decoded from its verified bytes.
    pub effect_records: HashMap<String, EffectRecord>,
    /// `(plan ref, recorded_triples of its verified bytes)`.
    pub triples: Option<(
        String,
        Result<Vec<Triple>, super::effects::RecordedPlanError>,
    )>,
    /// effect result ref → its verified bytes parsed as TR-CJSON-1 (`None` when they are not).
    pub results: HashMap<String, Option<CValue>>,
    /// `(episode, its intents by request ref)`, read with the episode's first entry.
    pub intents: Option<(String, HashMap<String, Vec<IntentInfo>>)>,
    /// `(episode, its outcome owners)`, read with the episode's first entry.
    pub owners: Option<(String, OwnerMap)>,
}

/// One interpreter call the runner makes ahead of the engine: entry `pos` (its index in the
/// selection) runs `source` on `input` with the interpreter `interp`.
struct Call {
    pos: usize,
    interp: String,
    source: Arc<Vec<u8>>,
    input: Vec<u8>,
}

/// A [`Call`] and what running it returned.
struct Ran {
    pos: usize,
    interp: String,
    source: Arc<Vec<u8>>,
    input: Vec<u8>,
    result: Result<Vec<u8>, CapsuleError>,
}

/// The calls of the entries up to and including selection index `through`.
struct CallBatch {
    through: usize,
    calls: Vec<Call>,
}

/// The runs of the entries up to and including selection index `through`.
struct RanBatch {
    through: usize,
    runs: Vec<Ran>,
}

/// The engine's read-ahead over the selection and its end of the runner thread.
pub(super) struct Ahead<'s> {
    selected: &'s [(LogEntry, Option<String>)],
    /// Entries read and not yet handed to the engine, in selection order.
    read: VecDeque<Prefetched>,
    /// The selection index of the next entry to read.
    next_read: usize,
    /// Calls predicted and not yet sent, and how many entries the next block (read together,
    /// sent to the runner as one batch) holds.
    calls: Vec<Call>,
    batch: usize,
    /// The last selection index whose calls were sent to the runner.
    sent_through: Option<usize>,
    /// `None` once the runner stopped listening.
    calls_tx: Option<SyncSender<CallBatch>>,
    runs: Receiver<RanBatch>,
    /// Runs received and not yet taken, in selection order.
    held: VecDeque<Ran>,
    /// The last selection index whose runs have all been received.
    received_through: Option<usize>,
    /// The transition sources verified so far, read once per replay.
    sources: Sources,
    /// Episodes whose intents and outcomes were already read.
    episodes: HashSet<String>,
    /// A candidate replay's candidate: its entries' calls are predicted with its sources and
    /// interpreters.
    candidate: Option<&'s Candidate>,
    /// Set when the engine is done (dropped): the runner makes no further call, so a replay
    /// that stopped early does not wait for the rest of the batch in hand.
    done: Arc<AtomicBool>,
}

impl Drop for Ahead<'_> {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
    }
}

impl<'s> Ahead<'s> {
    /// Start the runner thread in `scope` for `selected`; `interps` holds the interpreters the
    /// selection pins (resolved by the engine), and each run gets `phase_timeout`; the calls
    /// of entries `candidate` applies to are predicted as the candidate makes them.
    pub fn spawn<'scope>(
        scope: &'scope std::thread::Scope<'scope, 's>,
        selected: &'s [(LogEntry, Option<String>)],
        interps: &'s HashMap<String, Resolved>,
        phase_timeout: std::time::Duration,
        candidate: Option<&'s Candidate>,
    ) -> Ahead<'s> {
        let (calls_tx, calls_rx) = sync_channel::<CallBatch>(BATCHES_AHEAD);
        // Unbounded, so the runner never waits on the engine: it is held back by the calls
        // it is given, which the engine sends at most WINDOW entries ahead of its checks.
        let (runs_tx, runs) = channel::<RanBatch>();
        // The runner is an evaluation thread: the embedded interpreter runs on it directly
        // instead of through a hand-off per call (`ailang::as_eval_thread`).
        let stack = crate::ailang::EVAL_STACK_BYTES;
        let done = Arc::new(AtomicBool::new(false));
        let runner_done = Arc::clone(&done);
        let started = std::thread::Builder::new()
            .name("replay-runner".to_string())
            .stack_size(stack)
            .spawn_scoped(scope, move || {
                crate::ailang::as_eval_thread(stack, || {
                    run_calls(&calls_rx, &runs_tx, interps, phase_timeout, &runner_done)
                })
            })
            .is_ok();
        // Without a runner, every call is made by the engine.
        let mut ahead = Ahead::new(selected, started.then_some(calls_tx), runs, done);
        ahead.candidate = candidate;
        ahead
    }

    /// A read-ahead over `selected` sending calls through `calls_tx` (`None`: no runner),
    /// taking runs from `runs`, and setting `done` when dropped.
    fn new(
        selected: &'s [(LogEntry, Option<String>)],
        calls_tx: Option<SyncSender<CallBatch>>,
        runs: Receiver<RanBatch>,
        done: Arc<AtomicBool>,
    ) -> Ahead<'s> {
        Ahead {
            selected,
            read: VecDeque::new(),
            next_read: 0,
            calls: Vec::new(),
            batch: 1,
            sent_through: None,
            calls_tx,
            runs,
            held: VecDeque::new(),
            received_through: None,
            sources: HashMap::new(),
            episodes: HashSet::new(),
            candidate: None,
            done,
        }
    }

    /// The reads of entry `pos` (the next one the engine checks), after reading ahead on
    /// `conn` up to [`WINDOW`] entries past it (whole blocks: the window may run up to a block
    /// further). Drops runs of earlier entries not taken.
    pub fn next_entry(&mut self, conn: &Connection, pos: usize) -> Prefetched {
        self.receive_ready();
        self.drop_before(pos);
        let end = self.selected.len().min(pos + WINDOW + 1);
        while self.next_read < end {
            self.read_block(conn);
        }
        self.read.pop_front().unwrap_or_default()
    }

    /// Read the next block of entries (1, 2, 4 … up to [`MAX_BATCH`]) with one statement per
    /// kind of read (DEC-REPLAYPERF-1), predict their calls, and send those as one batch.
    fn read_block(&mut self, conn: &Connection) {
        let from = self.next_read;
        let to = self.selected.len().min(from + self.batch);
        let block = Prefetched::read_block(
            conn,
            &self.selected[from..to],
            &mut self.sources,
            &mut self.episodes,
        );
        for (pos, p) in (from..to).zip(block) {
            if self.calls_tx.is_some() {
                predict_calls(pos, &p, &self.sources, self.candidate, &mut self.calls);
            }
            self.read.push_back(p);
        }
        self.next_read = to;
        if let (Some(tx), Some(through)) = (&self.calls_tx, to.checked_sub(1)) {
            let calls = std::mem::take(&mut self.calls);
            if tx.send(CallBatch { through, calls }).is_ok() {
                self.sent_through = Some(through);
            } else {
                self.calls_tx = None;
            }
        }
        self.batch = (self.batch * 2).min(MAX_BATCH);
    }

    /// Whether every run of entry `pos` is back from the runner, so that [`Self::take_run`]
    /// does not wait.
    pub fn run_ready(&mut self, pos: usize) -> bool {
        self.receive_ready();
        self.sent(pos) && self.received_through.is_some_and(|t| t >= pos)
    }

    /// Whether the calls of entry `pos` went to the runner (only then do its runs come back).
    fn sent(&self, pos: usize) -> bool {
        self.sent_through.is_some_and(|t| t >= pos)
    }

    /// Hold a batch of runs the runner sent back.
    fn hold(&mut self, batch: RanBatch) {
        self.received_through = Some(batch.through);
        self.held.extend(batch.runs);
    }

    /// Hold every batch already sent back, without waiting.
    fn receive_ready(&mut self) {
        while let Ok(batch) = self.runs.try_recv() {
            self.hold(batch);
        }
    }

    /// Drop the held runs of entries before `pos` (the engine is past them).
    fn drop_before(&mut self, pos: usize) {
        while self.held.front().is_some_and(|r| r.pos < pos) {
            self.held.pop_front();
        }
    }

    /// The runner's output for entry `pos` running `source` on `input` with `interp`, if it
    /// made exactly that call; `None` means the engine makes the call itself.
    pub fn take_run(
        &mut self,
        pos: usize,
        interp: &str,
        source: &[u8],
        input: &[u8],
    ) -> Option<Result<Vec<u8>, CapsuleError>> {
        // Runs for `pos` come only once its calls were sent; a closed channel (the runner
        // ended) ends the wait.
        while self.sent(pos) && self.received_through.is_none_or(|t| t < pos) {
            let batch = self.runs.recv().ok()?;
            self.hold(batch);
        }
        self.drop_before(pos);
        let at = self
            .held
            .iter()
            .take_while(|r| r.pos == pos)
            .position(|r| {
                r.interp == interp && r.input == input && r.source.as_slice() == source
            })?;
        self.held.remove(at).map(|r| r.result)
    }
}

/// The runner thread: make each predicted call with the engine's resolved interpreter, in
/// order, and send the outputs back batch by batch. Ends when the engine drops its end or
/// sets `done` (checked before every call: an engine that stopped early waits at most for
/// the call in progress, not for the rest of a batch of up to [`MAX_BATCH`] calls).
fn run_calls(
    calls_rx: &Receiver<CallBatch>,
    runs_tx: &Sender<RanBatch>,
    interps: &HashMap<String, Resolved>,
    phase_timeout: std::time::Duration,
    done: &AtomicBool,
) {
    while let Ok(CallBatch { through, calls }) = calls_rx.recv() {
        let mut runs = Vec::with_capacity(calls.len());
        let mut since = Instant::now();
        for c in calls {
            if done.load(Ordering::Relaxed) {
                return;
            }
            // Slow runs go back as they finish rather than with the whole batch, so the
            // engine never waits for runs of entries after the one it checks (calls come in
            // entry order: every entry before this call's is done).
            if let Some(before) = c.pos.checked_sub(1) {
                if !runs.is_empty() && since.elapsed() >= SEND_AFTER {
                    let part = RanBatch {
                        through: before,
                        runs: std::mem::take(&mut runs),
                    };
                    if runs_tx.send(part).is_err() {
                        return;
                    }
                    since = Instant::now();
                }
            }
            let Some(Ok(interp)) = interps.get(&c.interp) else {
                continue;
            };
            let deadline = Instant::now() + phase_timeout;
            let result = capsule::run_phase(interp.as_ref(), &c.source, &c.input, deadline);
            runs.push(Ran {
                pos: c.pos,
                interp: c.interp,
                source: c.source,
                input: c.input,
                result,
            });
        }
        if runs_tx.send(RanBatch { through, runs }).is_err() {
            return; // the engine stopped
        }
    }
}

/// The interpreter calls the engine will make for an entry whose recorded data `p` holds, as
/// far as the recorded data predicts them: the pure run; or the plan phase and, when the
/// recorded plan asks for one, the finish phase with the recorded effect outcomes. Nothing is
/// predicted when a needed item is missing or does not verify. An entry `candidate` applies
/// to is predicted with the candidate's source, interpreter and calling convention.
fn predict_calls(
    pos: usize,
    p: &Prefetched,
    sources: &Sources,
    candidate: Option<&Candidate>,
    out: &mut Vec<Call>,
) {
    let Some((_, rec)) = &p.record else { return };
    let verified = |r: &str| match p.objects.get(r) {
        Some((Some(o), true)) => Some(&**o),
        _ => None,
    };
    if verified(&rec.transition_fn).is_none() {
        return;
    }
    let Some((_, recorded_source)) = sources.get(&rec.transition_fn) else {
        return;
    };
    let sub = candidate.and_then(|c| c.sub_for(rec));
    let (source, interp, effectful) = match &sub {
        Some(s) => (
            s.transition.map_or(recorded_source, |t| &t.source),
            s.interp.clone(),
            s.effectful(rec),
        ),
        None => (recorded_source, rec.interpreter.clone(), rec.plan.is_some()),
    };
    let call = |input: Vec<u8>| Call {
        pos,
        interp: interp.clone(),
        source: source.clone(),
        input,
    };
    if !effectful {
        if let Some(input) = verified(&rec.input) {
            out.push(call(input.payload.clone()));
        }
        return;
    }
    match &p.plan_input {
        Some((_, plan_input)) => out.push(call(plan_input.clone())),
        // A recorded pure entry re-run by an effectful candidate.
        None => match verified(&rec.input) {
            Some(input) => out.push(call(plan::plan_input(&input.payload))),
            None => return,
        },
    }
    let Some(plan_ref) = &rec.plan else {
        return;
    };
    // The finish phase, as the recorded plan and effect records say it ran.
    let (Some(plan_obj), Some(input), Some((_, Ok(declared)))) =
        (verified(plan_ref), verified(&rec.input), &p.triples)
    else {
        return;
    };
    let Ok(recorded) = plan::parse_plan(&plan_obj.payload, declared) else {
        return;
    };
    let record_refs = rec.effects.as_deref().unwrap_or_default();
    if recorded.effects.is_empty()
        || !recorded.finish
        || recorded.effects.len() != record_refs.len()
    {
        return;
    }
    let mut results = Vec::with_capacity(record_refs.len());
    for (pe, rref) in recorded.effects.iter().zip(record_refs) {
        let Some(er) = p.effect_records.get(rref) else {
            return;
        };
        let output = if er.allowed && !er.failed {
            match p.results.get(&er.result_ref) {
                Some(parsed) => parsed.clone(),
                None => return,
            }
        } else {
            None
        };
        results.push(PhaseResult {
            id: pe.id.clone(),
            effect: pe.effect.clone(),
            status: status_of(er),
            record: Some(rref.clone()),
            output,
        });
    }
    out.push(call(plan::finish_input(&input.payload, &results)));
}

impl Prefetched {
    /// Everything the engine reads for the entries of `block` (each committed as its id) that
    /// does not depend on a re-run: receipt, the receipt's world, record, source, input,
    /// output, plan, and each effect's record, request and result — in one pass over the
    /// block per level of refs (DEC-REPLAYPERF-1): the receipts with their outcome objects in
    /// one statement, then the records, then the objects the records name, then the requests
    /// and results the effect records name, each level in one statement
    /// ([`replay_read`]). Each object read is hashed once, and an object several entries of
    /// the block name (a plan, a result, the output an echo shares with its input) is read
    /// and hashed once for all of them. A failed read leaves its items out, so the engine
    /// repeats it and reports what it finds.
    ///
    /// `sources` holds the transition sources verified so far in this replay (by ref);
    /// `episodes` the episodes whose intents and outcomes were already sent.
    fn read_block(
        conn: &Connection,
        block: &[(LogEntry, Option<String>)],
        sources: &mut Sources,
        episodes: &mut HashSet<String>,
    ) -> Vec<Prefetched> {
        let mut out: Vec<Prefetched> = block.iter().map(|_| Prefetched::default()).collect();
        let live: Vec<usize> = (0..block.len())
            .filter(|&i| is_replayable(&block[i].0.header.written_by))
            .collect();
        let mut reads = BlockObjects::default();
        // The receipts and their worlds.
        let ids: Vec<&str> = live.iter().filter_map(|&i| block[i].1.as_deref()).collect();
        let mut receipts = replay_read::receipts(conn, &ids).unwrap_or_default();
        for &i in &live {
            let (e, id) = &block[i];
            let p = &mut out[i];
            p.entry_hash = Some(entry_hash(&e.header, &e.transition_ref).to_string());
            let Some((Ok(receipt), world)) = id.as_deref().and_then(|id| receipts.remove(id))
            else {
                continue;
            };
            if let Some(w) = receipt.result_ref.clone() {
                let row = match world {
                    Some((r, row)) if r == w => Ok(Some(row)),
                    _ => world_in(conn, &w),
                };
                if let Ok(row) = row {
                    if let Some(row) = &row {
                        let wr = world_ref(row.revision, &row.state_root, &row.log_head);
                        p.world_ref = Some((row.clone(), wr.to_string()));
                    }
                    p.world = Some((w, row));
                }
            }
            p.receipt = Some((receipt.invocation_id.clone(), receipt));
        }
        // The records.
        let refs: Vec<&str> = live
            .iter()
            .map(|&i| block[i].0.transition_ref.as_str())
            .collect();
        reads.read(conn, &refs);
        let mut records: Vec<Option<InvocationRecord>> = block.iter().map(|_| None).collect();
        for &i in &live {
            let e = &block[i].0;
            let Some(obj) = reads.give(&mut out[i], &e.transition_ref) else {
                continue;
            };
            records[i] = InvocationRecord::decode(&obj.meta.semantic_id, &obj.payload).ok();
        }
        // What the records name: source (once per replay), output, plan, input, effect records.
        let mut refs: Vec<&str> = Vec::new();
        for rec in records.iter().flatten() {
            if !sources.contains_key(&rec.transition_fn) {
                refs.push(&rec.transition_fn);
            }
            refs.push(&rec.output);
            refs.extend(rec.plan.as_deref());
            refs.push(&rec.input);
            refs.extend(rec.effects.iter().flatten().map(String::as_str));
        }
        reads.read(conn, &refs);
        let mut effect_records: Vec<Vec<(String, EffectRecord)>> =
            block.iter().map(|_| Vec::new()).collect();
        for &i in &live {
            let Some(rec) = &records[i] else { continue };
            let p = &mut out[i];
            // A transition's source recurs in every entry that runs it: it is read and
            // verified once per replay, and its verified bytes are what the later entries get.
            match sources.get(&rec.transition_fn) {
                Some((obj, _)) => {
                    p.objects
                        .insert(rec.transition_fn.clone(), (Some(Arc::clone(obj)), true));
                }
                None => {
                    if let Some(obj) = reads.give(p, &rec.transition_fn) {
                        let shared = Arc::new(obj.payload.clone());
                        sources.insert(rec.transition_fn.clone(), (obj, shared));
                    }
                }
            }
            reads.give(p, &rec.output);
            if let Some(plan_ref) = &rec.plan {
                if let Some(plan_obj) = reads.give(p, plan_ref) {
                    p.triples = Some((plan_ref.clone(), recorded_triples(&plan_obj.payload)));
                }
                if let Some(input) = reads.give(p, &rec.input) {
                    p.plan_input = Some((rec.input.clone(), plan::plan_input(&input.payload)));
                }
            } else {
                reads.give(p, &rec.input);
            }
            for rref in rec.effects.iter().flatten() {
                let Some(obj) = reads.give(p, rref) else {
                    continue;
                };
                if obj.meta.semantic_id != EFFECT_RECORD {
                    continue;
                }
                if let Ok(er) = EffectRecord::decode(&obj.payload) {
                    effect_records[i].push((rref.clone(), er));
                }
            }
        }
        // What the effect records name: each request, and each result of an allowed effect
        // that did not fail.
        let mut refs: Vec<&str> = Vec::new();
        for (_, er) in effect_records.iter().flatten() {
            refs.push(&er.request_ref);
            if er.allowed && !er.failed {
                refs.push(&er.result_ref);
            }
        }
        reads.read(conn, &refs);
        for &i in &live {
            let p = &mut out[i];
            for (rref, er) in std::mem::take(&mut effect_records[i]) {
                reads.give(p, &er.request_ref);
                if er.allowed && !er.failed {
                    if let Some(result) = reads.give(p, &er.result_ref) {
                        let parsed = reads.parsed(&er.result_ref, &result);
                        p.results.insert(er.result_ref.clone(), parsed);
                    }
                }
                p.effect_records.insert(rref, er);
            }
            let Some(rec) = records[i].take() else {
                continue;
            };
            if rec.effects.is_some() && !episodes.contains(&rec.episode_id) {
                let ep = rec.episode_id.clone();
                if let (Ok(intents), Ok(owners)) =
                    (episode_intents(conn, &ep), outcome_owners(conn, &ep))
                {
                    p.intents = Some((ep.clone(), intents));
                    p.owners = Some((ep.clone(), owners));
                    episodes.insert(ep);
                }
            }
            p.record = Some((block[i].0.transition_ref.clone(), rec));
        }
        out
    }
}

/// The objects one block's reads returned, each hashed once, and the effect results parsed
/// once (an identical result recurs across entries).
#[derive(Default)]
struct BlockObjects {
    /// ref → the read (`None`: not read, because the statement failed; the entries repeat it).
    read: HashMap<String, Option<Read>>,
    /// result ref → its bytes parsed as TR-CJSON-1 (`None` when they are not).
    parsed: HashMap<String, Option<CValue>>,
}

impl BlockObjects {
    /// Read the objects `refs` not read yet, in one statement per
    /// [`replay_read::IN_LIST`] refs, and hash each one.
    fn read(&mut self, conn: &Connection, refs: &[&str]) {
        let mut want: Vec<&str> = refs
            .iter()
            .copied()
            .filter(|r| !self.read.contains_key(*r))
            .collect();
        want.sort_unstable();
        want.dedup();
        if want.is_empty() {
            return;
        }
        match replay_read::objects_by_ref(conn, &want) {
            Ok(mut found) => {
                for r in want {
                    let read = match found.remove(r) {
                        Some(obj) => {
                            let verified = obj.verifies();
                            (Some(Arc::new(obj)), verified)
                        }
                        None => (None, false),
                    };
                    self.read.insert(r.to_string(), Some(read));
                }
            }
            Err(_) => {
                for r in want {
                    self.read.insert(r.to_string(), None);
                }
            }
        }
    }

    /// Give entry `p` the read of `reference` (when it was read) and return the object when
    /// it verifies.
    fn give(&self, p: &mut Prefetched, reference: &str) -> Option<Arc<Object>> {
        let read = self.read.get(reference)?.as_ref()?;
        p.objects
            .entry(reference.to_string())
            .or_insert_with(|| read.clone());
        match read {
            (Some(obj), true) => Some(Arc::clone(obj)),
            _ => None,
        }
    }

    /// The verified result `reference` (`obj`) parsed as TR-CJSON-1, once per block.
    fn parsed(&mut self, reference: &str, obj: &Object) -> Option<CValue> {
        self.parsed
            .entry(reference.to_string())
            .or_insert_with(|| trcjson::parse(&obj.payload, Bounds::PLAN).ok())
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(pos: usize, input: &[u8], out: &[u8]) -> Ran {
        Ran {
            pos,
            interp: "sha256:i".into(),
            source: Arc::new(b"src".to_vec()),
            input: input.to_vec(),
            result: Ok(out.to_vec()),
        }
    }

    /// An `Ahead` over no selection with `batches` already sent back by a runner.
    fn ahead_with(batches: Vec<RanBatch>, sent_through: usize) -> Ahead<'static> {
        let (runs_tx, runs) = channel();
        for b in batches {
            runs_tx.send(b).unwrap();
        }
        let mut a = Ahead::new(&[], None, runs, Arc::new(AtomicBool::new(false)));
        a.next_read = sent_through + 1;
        a.sent_through = Some(sent_through);
        a
    }

    #[test]
    fn a_run_is_used_only_for_the_identical_call_of_the_same_entry() {
        let mut a = ahead_with(
            vec![
                RanBatch {
                    through: 1,
                    runs: vec![ran(0, b"a", b"A"), ran(1, b"b", b"B")],
                },
                RanBatch {
                    through: 3,
                    runs: vec![ran(3, b"plan", b"P"), ran(3, b"finish", b"F")],
                },
            ],
            3,
        );
        // Another input, source or interpreter is not this call.
        assert!(a.take_run(1, "sha256:i", b"src", b"other").is_none());
        assert!(a.take_run(1, "sha256:i", b"other", b"b").is_none());
        assert!(a.take_run(1, "sha256:j", b"src", b"b").is_none());
        // Another entry's identical call is not this entry's.
        assert!(a.take_run(1, "sha256:i", b"src", b"a").is_none());
        assert_eq!(
            a.take_run(1, "sha256:i", b"src", b"b").unwrap().unwrap(),
            b"B"
        );
        // Taken once: a second identical call is made by the engine.
        assert!(a.take_run(1, "sha256:i", b"src", b"b").is_none());
        // Entry 2 had no predicted call; entry 3's finish is found after its plan.
        assert!(a.take_run(2, "sha256:i", b"src", b"x").is_none());
        assert_eq!(
            a.take_run(3, "sha256:i", b"src", b"finish")
                .unwrap()
                .unwrap(),
            b"F"
        );
        assert_eq!(
            a.take_run(3, "sha256:i", b"src", b"plan").unwrap().unwrap(),
            b"P"
        );
    }

    #[test]
    fn a_runner_that_ended_leaves_every_call_to_the_engine() {
        // Nothing was sent back and the runner's end is closed: no wait, no output.
        let mut a = ahead_with(vec![], 5);
        assert!(a.take_run(4, "sha256:i", b"src", b"a").is_none());
        // Calls never sent for an entry are never waited for.
        let mut b = ahead_with(vec![], 0);
        b.sent_through = None;
        assert!(b.take_run(0, "sha256:i", b"src", b"a").is_none());
    }
}
