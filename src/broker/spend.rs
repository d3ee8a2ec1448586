//! Incremental budget seeding and ordinal minting (authority-and-broker.md §7.4, §8).
//!
//! The broker needs, before every effect, the episode's spend (Σ `cost` of its
//! `world/effect-intent/v1` intents grouped by `(effect, scope)`) and the largest all-digit
//! ordinal suffix among its `effect:<ep>:<n>` intent ids. Recomputing both from the whole
//! journal costs O(N) per effect, O(N²) per episode. This module keeps a per-process
//! [`Tally`] per `(database file, episode)` and folds in only the journal rows appended since.
//!
//! Why the cache cannot go stale:
//! - The journal is append-only: `seq = MAX(seq)+1` in the writing transaction, and `world`
//!   never updates or deletes a journal row (store-format.md §9); `objects` rows are
//!   content-addressed and never rewritten. So once a cache entry has absorbed every committed
//!   row up to `seq = S`, that prefix never changes; the rows still to fold in are `seq > S`.
//! - Every use re-validates the entry against the journal itself: the row at `seq = S` must
//!   still carry the same `(kind, invocation_id, object_ref)` and `MAX(seq) ≥ S`. A different
//!   file at the same path, a rolled-back or rewritten journal fails this check and the tally is
//!   rebuilt from scratch. Other processes' appends are simply rows with `seq > S`.
//! - An entry is only stored from a view that holds committed rows only: a connection in
//!   autocommit mode, or a transaction that has not yet written to the journal (the broker's
//!   decision transaction, see [`tally_at_transaction_start`]). A view that may contain this
//!   connection's own uncommitted journal rows reads the cache but never writes it.
//! - An intent row whose payload object is missing is not counted (as in the full scan, which
//!   joins `objects`); its seq is kept and re-checked on every use, so it counts once the
//!   object appears.
//!
//! Sums are kept exact (i128) and clamped to int64 only when read, so the result does not
//! depend on the order rows are visited.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use rusqlite::Connection;

use crate::store::journal;
use crate::store::spend::{self as rows, ScanPlan};
use crate::store::Error as StoreError;

mod table;
pub use table::{check as check_table, Problem as TableProblem, TABLE};

/// The running totals for one episode: exact spend per `(effect, scope)` and the largest
/// all-digit ordinal suffix (none when the episode has no intents yet).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Σ cost per `(effect, scope)`, exact (never saturates).
    spend: HashMap<(String, String), i128>,
    /// The largest all-digit suffix among the episode's intent ids, `None` if none.
    max_ordinal: Option<i64>,
    /// How many intent rows of the id range were seen (picks the scan plan).
    rows_in_range: u64,
    /// Why the first corrupt intent payload of the range could not be folded, if any. A
    /// journal row never changes, so once set it stays set (the spend is an error from then on,
    /// as in the full scan); the ordinal does not read payloads and is unaffected.
    corrupt: Option<String>,
}

impl Tally {
    /// The spend map as `spend` returns it: each sum clamped to int64 (§8).
    ///
    /// # Errors
    /// [`StoreError::Corrupt`] when an intent payload of the episode's id range is undecodable
    /// or misses effect, scope or an int64 cost.
    pub fn spend_map(&self) -> Result<HashMap<(String, String), i64>, StoreError> {
        if let Some(detail) = &self.corrupt {
            return Err(corrupt(detail.clone()));
        }
        Ok(self
            .spend
            .iter()
            .map(|(k, v)| (k.clone(), clamp_i64(*v)))
            .collect())
    }

    /// The next ordinal by [`ordinal_after`] (§7.4): 0 for an episode without intents, else
    /// 1 + the largest all-digit suffix; `None` at `i64::MAX`.
    pub fn next_ordinal(&self) -> Option<i64> {
        ordinal_after(self.max_ordinal)
    }
}

impl Tally {
    /// Fold one intent payload; remember the first corruption instead of failing, so the
    /// ordinal (which never reads payloads) keeps working.
    fn fold(&mut self, episode: &str, payload: &[u8]) {
        if self.corrupt.is_some() {
            return;
        }
        if let Err(e) = fold_payload(&mut self.spend, episode, payload) {
            self.corrupt = Some(e.to_string());
        }
    }
}

/// The ordinal of an episode's first effect (authority-and-broker.md §7.4): 0, as the
/// reference's `AppendNextEffectIntent` starts from −1.
pub const FIRST_ORDINAL: i64 = 0;

fn clamp_i64(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

/// The identity of one journal row: `(kind, invocation_id, object_ref)`.
type RowId = rows::JournalRowId;

#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    /// Every committed journal row with `seq ≤ seq` has been folded in.
    seq: i64,
    /// The row at `seq` (none when `seq` is 0).
    at_seq: Option<RowId>,
    tally: Tally,
    /// Seqs of in-range intent rows whose payload object was missing.
    pending: Vec<i64>,
}

impl Entry {
    fn empty() -> Entry {
        Entry {
            seq: 0,
            at_seq: None,
            tally: Tally::default(),
            pending: Vec::new(),
        }
    }
}

/// At most this many `(file, episode)` entries are kept; the map is cleared when full.
const MAX_ENTRIES: usize = 1024;

static CACHE: LazyLock<Mutex<HashMap<(String, String), Entry>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn cache_get(key: &(String, String)) -> Option<Entry> {
    match CACHE.lock() {
        Ok(map) => map.get(key).cloned(),
        Err(_) => None,
    }
}

fn cache_put(key: (String, String), entry: Entry) {
    let Ok(mut map) = CACHE.lock() else {
        return;
    };
    if let Some(old) = map.get(&key) {
        // Another connection of this process may have stored a later view; both are valid.
        if old.seq > entry.seq {
            return;
        }
    }
    if map.len() >= MAX_ENTRIES && !map.contains_key(&key) {
        map.clear();
    }
    map.insert(key, entry);
}

/// Drop every cached tally of this process (tests and benchmarks measuring a cold start).
pub fn clear_cache() {
    if let Ok(mut map) = CACHE.lock() {
        map.clear();
    }
}

fn corrupt(detail: String) -> StoreError {
    StoreError::Corrupt {
        what: "effect intent".into(),
        detail,
    }
}

/// The one rule for the next effect ordinal (authority-and-broker.md §7.4, the reference's
/// `AppendNextEffectIntent`, which starts from −1): `max` is the largest all-digit suffix
/// among the episode's `effect:<ep>:<n>` intent ids, `None` when there is none. A new episode
/// starts at 0; an episode that already has intents continues at `max + 1` (so stores written
/// when `world` started at 1 stay contiguous). `None` when the ordinal space is exhausted.
pub fn ordinal_after(max: Option<i64>) -> Option<i64> {
    match max {
        None => Some(FIRST_ORDINAL),
        Some(m) => m.checked_add(1),
    }
}

/// The id range `[effect:<ep>:, effect:<ep>;)` of the episode's effect ids.
fn id_range(episode: &str) -> (String, String) {
    (format!("effect:{episode}:"), format!("effect:{episode};"))
}

/// The all-digit suffix of `id` after `lo`, if it parses as int64.
fn ordinal_of(id: &str, lo: &str) -> Option<i64> {
    let suffix = id.strip_prefix(lo)?;
    if suffix.is_empty() || !suffix.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    suffix.parse::<i64>().ok()
}

/// Why an effect intent payload cannot be folded into the spend (§8); the text is the detail of
/// the tally's corruption and of [`StoreError::Corrupt`].
#[derive(Debug, thiserror::Error)]
pub enum PayloadError {
    /// The payload is not JSON (serde's text).
    #[error("{0}")]
    Json(#[source] serde_json::Error),
    /// An intent of the episode without a string `effect`, a string `scope` or an int64 `cost`.
    #[error("missing effect, scope or cost")]
    Missing,
}

/// Fold one `world/effect-intent/v1` payload into `spend` (§8): intents of other episodes that
/// share the id prefix are skipped; an undecodable payload or one missing effect, scope or an
/// int64 cost is an error.
fn fold_payload(
    spend: &mut HashMap<(String, String), i128>,
    episode: &str,
    payload: &[u8],
) -> Result<(), PayloadError> {
    let v: serde_json::Value = serde_json::from_slice(payload).map_err(PayloadError::Json)?;
    if v.get("episodeId").and_then(|x| x.as_str()) != Some(episode) {
        return Ok(());
    }
    let (Some(effect), Some(scope), Some(cost)) = (
        v.get("effect").and_then(|x| x.as_str()),
        v.get("scope").and_then(|x| x.as_str()),
        v.get("cost").and_then(|x| x.as_i64()),
    ) else {
        return Err(PayloadError::Missing);
    };
    *spend
        .entry((effect.to_string(), scope.to_string()))
        .or_insert(0) += i128::from(cost);
    Ok(())
}

/// One in-range intent row: seq, invocation id, and `(object_ref, semantic_id, payload)` of its
/// object if the object exists.
type ScanRow = rows::IntentRow;

/// An intent row's object: `(object_ref, semantic_id, payload)`.
type IntentObject = rows::IntentObject;

/// Fold an intent object into `tally` only if its payload re-hashes to the ref the journal row
/// names (issue 13 §3: budget is never counted from an edited intent); otherwise the tally is
/// corrupt and the broker refuses to decide on it.
fn fold_verified(tally: &mut Tally, episode: &str, id: &str, object: IntentObject) {
    let (reference, semantic, payload) = object;
    if semantic != journal::EFFECT_INTENT {
        return;
    }
    let computed = crate::encoding::HashRef::of(&payload).to_string();
    if computed != reference {
        if tally.corrupt.is_none() {
            tally.corrupt = Some(format!(
                "effect intent {id}: object {reference} re-hashes to {computed} (edited)"
            ));
        }
        return;
    }
    tally.fold(episode, &payload);
}

/// Fold one scanned row into `entry`.
fn fold_row(entry: &mut Entry, episode: &str, lo: &str, row: ScanRow) {
    let (seq, id, object) = row;
    entry.tally.rows_in_range += 1;
    if let Some(n) = ordinal_of(&id, lo) {
        entry.tally.max_ordinal = Some(entry.tally.max_ordinal.map_or(n, |m| m.max(n)));
    }
    match object {
        None => entry.pending.push(seq),
        Some(object) => fold_verified(&mut entry.tally, episode, &id, object),
    }
}

/// Rows scanned through the rowid range rather than the id index when the gap is at most this
/// many times the rows the episode already has (plus a constant).
const ROWID_PLAN_FACTOR: u64 = 4;
const ROWID_PLAN_SLACK: u64 = 256;

/// Fold the in-range intent rows with `from < seq ≤ to` into `entry`.
fn scan(
    conn: &Connection,
    entry: &mut Entry,
    episode: &str,
    from: i64,
    to: i64,
) -> Result<(), StoreError> {
    if to <= from {
        return Ok(());
    }
    let (lo, hi) = id_range(episode);
    let gap = u64::try_from(to - from).unwrap_or(u64::MAX);
    let rowid_plan = from > 0
        && gap
            <= entry
                .tally
                .rows_in_range
                .saturating_mul(ROWID_PLAN_FACTOR)
                .saturating_add(ROWID_PLAN_SLACK);
    // Both plans select the same rows: the rowid range walks only the new rows, the
    // (invocation_id, kind) index walks only the episode's ids (a cold start, or a long gap of
    // other episodes' rows).
    let plan = if rowid_plan {
        ScanPlan::RowidRange
    } else {
        ScanPlan::IdIndex
    };
    rows::scan_intents(conn, (from, to), (&lo, &hi), plan, |row| {
        fold_row(entry, episode, &lo, row);
    })
}

/// Re-check the rows whose payload object was missing; fold those whose object now exists.
fn recheck_pending(conn: &Connection, entry: &mut Entry, episode: &str) -> Result<(), StoreError> {
    if entry.pending.is_empty() {
        return Ok(());
    }
    let mut still = Vec::new();
    for seq in std::mem::take(&mut entry.pending) {
        let found = rows::object_at(conn, seq)?;
        match found {
            None => still.push(seq),
            Some((object, id)) => fold_verified(&mut entry.tally, episode, &id, object),
        }
    }
    entry.pending = still;
    Ok(())
}

fn row_at(conn: &Connection, seq: i64) -> Result<Option<RowId>, StoreError> {
    rows::row_at(conn, seq)
}

/// Whether this connection's view may be cached: the file has a path and the view holds
/// committed rows only.
fn cache_key(conn: &Connection, episode: &str) -> Option<(String, String)> {
    match conn.path() {
        Some(p) if !p.is_empty() => Some((p.to_string(), episode.to_string())),
        _ => None,
    }
}

/// Whether `e` is a valid view of this journal: its seq is not past the top and the row at
/// its seq is still the row it absorbed.
fn still_valid(conn: &Connection, e: &Entry, top: i64) -> Result<bool, StoreError> {
    Ok(e.seq <= top && row_at(conn, e.seq)? == e.at_seq)
}

/// How [`compute`] may keep what it folded.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// A view that may hold this connection's own uncommitted rows: keep nothing.
    Nothing,
    /// A committed-only view: the per-process cache.
    Cache,
    /// A write transaction that has not yet appended: the cache and the persisted table.
    CacheAndTable,
}

fn compute(conn: &Connection, episode: &str, keep: Keep) -> Result<Tally, StoreError> {
    let key = cache_key(conn, episode);
    let top = rows::journal_top(conn)?;
    let mut best = Entry::empty();
    if let Some(e) = key.as_ref().and_then(cache_get) {
        if still_valid(conn, &e, top)? {
            best = e;
        }
    }
    // The persisted tally (DEC-PERF-1): trusted only when its checksum holds and its anchor row
    // is still the row at its seq; anything else is rebuilt from the journal, never used.
    let stored = table::load(conn, episode)?;
    if let Some(e) = &stored {
        if e.seq > best.seq && still_valid(conn, e, top)? {
            best = e.clone();
        }
    }
    let mut entry = best;
    recheck_pending(conn, &mut entry, episode)?;
    let from = entry.seq;
    scan(conn, &mut entry, episode, from, top)?;
    if top != entry.seq {
        entry.seq = top;
        entry.at_seq = row_at(conn, top)?;
    }
    let tally = entry.tally.clone();
    if keep == Keep::CacheAndTable {
        let unchanged = stored.as_ref() == Some(&entry);
        if !unchanged {
            table::store(conn, episode, &entry)?;
        }
    }
    if let (true, Some(key)) = (keep != Keep::Nothing, key) {
        cache_put(key, entry);
    }
    Ok(tally)
}

/// The episode's [`Tally`] as seen by `conn` (§7.4, §8), folding in only journal rows appended
/// since this process last looked. Results equal [`spend_full_scan`] / [`next_ordinal_full_scan`]
/// (sums are exact, clamped when read).
///
/// The cache is updated only when `conn` is in autocommit mode (it sees committed rows only);
/// inside a transaction that may hold its own uncommitted journal rows the cache is read and
/// validated but not written.
///
/// # Errors
/// Store errors. A corrupt intent payload is not an error here: it makes
/// [`Tally::spend_map`] fail, as the full scan does.
pub fn tally(conn: &Connection, episode: &str) -> Result<Tally, StoreError> {
    let keep = if conn.is_autocommit() {
        Keep::Cache
    } else {
        Keep::Nothing
    };
    compute(conn, episode, keep)
}

/// [`tally`] for a transaction that has not yet written a journal row (the broker's decision
/// transaction, right after `BEGIN IMMEDIATE`): everything it sees is committed, so the result
/// is cached for later requests of this process.
///
/// Calling it after the transaction appended journal rows could cache rows that are then rolled
/// back; the validation by the row at the cached seq would catch a later different row there.
///
/// # Errors
/// As [`tally`].
pub fn tally_at_transaction_start(conn: &Connection, episode: &str) -> Result<Tally, StoreError> {
    compute(conn, episode, Keep::CacheAndTable)
}

/// The straightforward spend: decode every intent of the episode's id range (O(N) per call).
/// Kept as the reference the incremental [`tally`] must equal (tests, `benches/spend.rs`).
///
/// # Errors
/// As [`tally`].
pub fn spend_full_scan(
    conn: &Connection,
    episode: &str,
) -> Result<HashMap<(String, String), i64>, StoreError> {
    let (lo, hi) = id_range(episode);
    let mut out: HashMap<(String, String), i64> = HashMap::new();
    rows::for_each_intent_payload(conn, (&lo, &hi), journal::EFFECT_INTENT, |p, reference| {
        let computed = crate::encoding::HashRef::of(&p).to_string();
        if computed != reference {
            return Err(corrupt(format!(
                "effect intent object {reference} re-hashes to {computed} (edited)"
            )));
        }
        let mut one = HashMap::new();
        fold_payload(&mut one, episode, &p).map_err(|e| corrupt(e.to_string()))?;
        for (k, v) in one {
            let e = out.entry(k).or_insert(0);
            *e = e.saturating_add(clamp_i64(v));
        }
        Ok(())
    })?;
    Ok(out)
}

/// The straightforward next ordinal: read every intent id of the episode's range (O(N)).
/// Reference for [`tally`].
///
/// # Errors
/// Store errors.
pub fn next_ordinal_full_scan(conn: &Connection, episode: &str) -> Result<Option<i64>, StoreError> {
    let (lo, hi) = id_range(episode);
    let ids = rows::intent_ids(conn, (&lo, &hi))?;
    let max = ids.iter().filter_map(|id| ordinal_of(id, &lo)).max();
    Ok(ordinal_after(max))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{put_object, Object, Store, WriteOptions};
    use proptest::prelude::*;
    use rusqlite::OptionalExtension;

    const EPISODES: [&str; 4] = ["ep1", "ep10", "ep1:x", "ep"];

    fn open_store(path: &std::path::Path) -> Store {
        Store::open_write(
            path,
            WriteOptions {
                create: true,
                wait_lock: None,
            },
        )
        .expect("store")
    }

    fn fresh() -> (tempfile::TempDir, Store, Connection) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("world.db");
        let store = open_store(&path);
        // A second, independent connection stands in for another process.
        let other = Connection::open(&path).expect("second connection");
        // Durability is not under test: skip the fsyncs so the proptest stays fast.
        for c in [store.conn(), &other] {
            c.execute_batch("PRAGMA synchronous = OFF").expect("pragma");
        }
        (dir, store, other)
    }

    fn intent_payload(id: &str, episode: &str, effect: &str, scope: &str, cost: i64) -> Vec<u8> {
        journal::EffectIntent {
            invocation_id: id.into(),
            episode_id: episode.into(),
            ordinal: 1,
            effect: effect.into(),
            scope: scope.into(),
            cost,
            request_ref: format!("sha256:{}", "0".repeat(64)),
            logical_time: 1_700_000_000,
        }
        .payload()
    }

    fn append_intent(conn: &Connection, id: &str, payload: Vec<u8>) {
        journal::append(
            conn,
            journal::Kind::Intent,
            id,
            journal::EFFECT_INTENT,
            payload,
        )
        .expect("append");
    }

    /// The cached answers and the full scans, side by side, for every episode.
    type Answers = Vec<(Result<HashMap<(String, String), i64>, String>, Option<i64>)>;

    fn answers(conn: &Connection, cached: bool) -> Answers {
        EPISODES
            .iter()
            .map(|ep| {
                if cached {
                    let t = tally(conn, ep).expect("tally");
                    (t.spend_map().map_err(|e| e.to_string()), t.next_ordinal())
                } else {
                    (
                        spend_full_scan(conn, ep).map_err(|e| e.to_string()),
                        next_ordinal_full_scan(conn, ep).expect("ordinal"),
                    )
                }
            })
            .collect()
    }

    fn assert_same(conn: &Connection) {
        let full = answers(conn, false);
        // Twice: the second answer comes from the cache the first one left.
        assert_eq!(answers(conn, true), full);
        assert_eq!(answers(conn, true), full);
        // A fresh process: no cache, only the persisted table (whatever state it is in).
        clear_cache();
        assert_eq!(answers(conn, true), full);
        // The persisted rows the broker would trust equal the full fold.
        let problems = table::check(conn).expect("check");
        assert!(problems.iter().all(|p| !p.trusted), "{problems:?}");
    }

    /// What a broker decision transaction does to the table: fold and persist every episode,
    /// as a fresh process (no cache) when `cold`.
    fn persist_all(conn: &Connection, cold: bool) {
        if cold {
            clear_cache();
        }
        conn.execute_batch("BEGIN IMMEDIATE").expect("begin");
        for ep in EPISODES {
            tally_at_transaction_start(conn, ep).expect("persist");
        }
        conn.execute_batch("COMMIT").expect("commit");
    }

    #[derive(Clone, Debug)]
    enum Op {
        /// An effect intent: id episode, suffix shape, payload episode, effect, scope, cost,
        /// on the other connection?
        Intent {
            id_ep: usize,
            suffix: u8,
            payload_ep: usize,
            effect: bool,
            scope: bool,
            cost: i64,
            other: bool,
        },
        /// An outcome row for an effect id, or a commit intent (other id space).
        Noise { id_ep: usize, outcome: bool },
        /// An intent row whose payload object is not there yet; it is stored later.
        MissingObject { id_ep: usize, cost: i64 },
        /// Store the oldest missing object.
        StoreMissing,
        /// An intent row whose object is not an effect intent.
        OtherSemantic { id_ep: usize },
        /// An undecodable intent payload.
        Corrupt { id_ep: usize },
        /// Compare, in autocommit mode, on either connection.
        Check { other: bool },
        /// Append inside a transaction, compare there, roll back, compare again.
        RolledBack { id_ep: usize, cost: i64 },
        /// Persist every episode's tally on either connection, cold or from the cache.
        Persist { other: bool, cold: bool },
        /// Persist inside a transaction that is then rolled back.
        PersistRolledBack,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            8 => (0..4usize, 0..6u8, 0..4usize, any::<bool>(), any::<bool>(), prop_oneof![0..4i64, Just(i64::MAX - 1)], any::<bool>())
                .prop_map(|(id_ep, suffix, payload_ep, effect, scope, cost, other)| Op::Intent {
                    id_ep,
                    suffix,
                    payload_ep: if payload_ep == 3 { payload_ep } else { id_ep },
                    effect,
                    scope,
                    cost,
                    other,
                }),
            2 => (0..4usize, any::<bool>()).prop_map(|(id_ep, outcome)| Op::Noise { id_ep, outcome }),
            1 => (0..4usize, 0..4i64).prop_map(|(id_ep, cost)| Op::MissingObject { id_ep, cost }),
            1 => Just(Op::StoreMissing),
            1 => (0..4usize).prop_map(|id_ep| Op::OtherSemantic { id_ep }),
            1 => (0..4usize).prop_map(|id_ep| Op::Corrupt { id_ep }),
            4 => any::<bool>().prop_map(|other| Op::Check { other }),
            1 => (0..4usize, 0..4i64).prop_map(|(id_ep, cost)| Op::RolledBack { id_ep, cost }),
            3 => (any::<bool>(), any::<bool>()).prop_map(|(other, cold)| Op::Persist { other, cold }),
            1 => Just(Op::PersistRolledBack),
        ]
    }

    fn id_for(n: usize, id_ep: usize, suffix: u8) -> String {
        let ep = EPISODES[id_ep];
        match suffix {
            0 | 1 => format!("effect:{ep}:{n}"),
            2 => format!("effect:{ep}:00{n}"),
            3 => format!("effect:{ep}:{n}x"),
            4 => format!("effect:{ep}:9223372036854775808{n}"),
            _ => format!("effect:{ep}:-{n}"),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn cached_tally_equals_full_scan(ops in proptest::collection::vec(op(), 1..60)) {
            let (_dir, store, other) = fresh();
            let mine = store.conn();
            let mut missing: Vec<(String, Vec<u8>)> = Vec::new();
            for (n, op) in ops.into_iter().enumerate() {
                match op {
                    Op::Intent { id_ep, suffix, payload_ep, effect, scope, cost, other: on_other } => {
                        let id = id_for(n, id_ep, suffix);
                        let payload = intent_payload(
                            &id,
                            EPISODES[payload_ep],
                            if effect { "Workspace.Read" } else { "Workspace.Write" },
                            if scope { "worktree" } else { "repo" },
                            cost,
                        );
                        append_intent(if on_other { &other } else { mine }, &id, payload);
                    }
                    Op::Noise { id_ep, outcome } => {
                        if outcome {
                            let id = id_for(n, id_ep, 0);
                            journal::append(mine, journal::Kind::Outcome, &id, journal::EFFECT_OUTCOME,
                                journal::effect_outcome_payload(&id, true, &format!("sha256:{}", "1".repeat(64)), 1)).expect("outcome");
                        } else {
                            journal::append(&other, journal::Kind::Intent, &format!("inv:{n}"), journal::COMMIT_INTENT,
                                format!("{{\"invocationId\":\"inv:{n}\"}}\n").into_bytes()).expect("commit intent");
                        }
                    }
                    Op::MissingObject { id_ep, cost } => {
                        let id = id_for(n, id_ep, 0);
                        let payload = intent_payload(&id, EPISODES[id_ep], "Workspace.Read", "worktree", cost);
                        let obj = Object::new(journal::EFFECT_INTENT, journal::PROVENANCE, payload.clone());
                        mine.execute(
                            "INSERT INTO journal (seq, kind, invocation_id, object_ref)
                             VALUES ((SELECT COALESCE(MAX(seq), 0) + 1 FROM journal), 'intent', ?1, ?2)",
                            rusqlite::params![id, obj.meta.hash],
                        ).expect("row without object");
                        missing.push((id, payload));
                    }
                    Op::StoreMissing => {
                        if !missing.is_empty() {
                            let (_, payload) = missing.remove(0);
                            put_object(&other, &Object::new(journal::EFFECT_INTENT, journal::PROVENANCE, payload)).expect("object");
                        }
                    }
                    Op::OtherSemantic { id_ep } => {
                        let id = id_for(n, id_ep, 0);
                        let payload = intent_payload(&id, EPISODES[id_ep], "Workspace.Read", "worktree", 1000);
                        journal::append(mine, journal::Kind::Intent, &id, "world/something-else/v1", payload).expect("append");
                    }
                    Op::Corrupt { id_ep } => {
                        let id = id_for(n, id_ep, 0);
                        append_intent(&other, &id, format!("{{\"episodeId\":\"{}\",\"effect\":1}}\n", EPISODES[id_ep]).into_bytes());
                    }
                    Op::Check { other: on_other } => assert_same(if on_other { &other } else { mine }),
                    Op::RolledBack { id_ep, cost } => {
                        let tx = mine.unchecked_transaction().expect("begin");
                        let id = id_for(n, id_ep, 0);
                        append_intent(&tx, &id, intent_payload(&id, EPISODES[id_ep], "Workspace.Read", "worktree", cost));
                        assert_same(&tx);
                        tx.rollback().expect("rollback");
                        assert_same(mine);
                    }
                    Op::Persist { other: on_other, cold } => persist_all(if on_other { &other } else { mine }, cold),
                    Op::PersistRolledBack => {
                        clear_cache();
                        mine.execute_batch("BEGIN IMMEDIATE").expect("begin");
                        for ep in EPISODES {
                            tally_at_transaction_start(mine, ep).expect("persist");
                        }
                        mine.execute_batch("ROLLBACK").expect("rollback");
                        clear_cache();
                        assert_same(mine);
                    }
                }
            }
            assert_same(mine);
            assert_same(&other);
        }
    }

    #[test]
    fn a_new_episode_starts_at_ordinal_0_and_an_old_one_continues_at_max_plus_1() {
        assert_eq!(ordinal_after(None), Some(0));
        assert_eq!(ordinal_after(Some(0)), Some(1));
        assert_eq!(ordinal_after(Some(7)), Some(8));
        assert_eq!(ordinal_after(Some(i64::MAX)), None);
        let (_dir, store, _other) = fresh();
        let conn = store.conn();
        // Fresh episode: the reference's first id, effect:<ep>:0.
        assert_eq!(tally(conn, "ep1").expect("tally").next_ordinal(), Some(0));
        assert_eq!(next_ordinal_full_scan(conn, "ep1").expect("scan"), Some(0));
        let id = "effect:ep1:0";
        append_intent(conn, id, intent_payload(id, "ep1", "E", "s", 1));
        assert_eq!(tally(conn, "ep1").expect("tally").next_ordinal(), Some(1));
        assert_eq!(next_ordinal_full_scan(conn, "ep1").expect("scan"), Some(1));
        // An episode written when world started at 1 keeps counting from its max.
        for n in 1..=2 {
            let id = format!("effect:ep10:{n}");
            append_intent(conn, &id, intent_payload(&id, "ep10", "E", "s", 1));
        }
        assert_eq!(tally(conn, "ep10").expect("tally").next_ordinal(), Some(3));
        assert_eq!(next_ordinal_full_scan(conn, "ep10").expect("scan"), Some(3));
    }

    #[test]
    fn other_connection_appends_are_folded_in() {
        let (_dir, store, other) = fresh();
        let mine = store.conn();
        for n in 1..=3 {
            let id = format!("effect:ep1:{n}");
            append_intent(mine, &id, intent_payload(&id, "ep1", "E", "s", 2));
        }
        let t = tally(mine, "ep1").expect("tally");
        assert_eq!(t.next_ordinal(), Some(4));
        assert_eq!(t.spend_map().expect("spend")[&("E".into(), "s".into())], 6);
        // Another process appends; the cache entry is older than the journal now.
        let id = "effect:ep1:4";
        append_intent(&other, id, intent_payload(id, "ep1", "E", "s", 5));
        let t = tally(mine, "ep1").expect("tally");
        assert_eq!(t.next_ordinal(), Some(5));
        assert_eq!(t.spend_map().expect("spend")[&("E".into(), "s".into())], 11);
    }

    #[test]
    fn a_different_file_at_the_same_path_is_not_trusted() {
        let (dir, store, other) = fresh();
        let path = dir.path().join("world.db");
        for n in 1..=3 {
            let id = format!("effect:ep1:{n}");
            append_intent(store.conn(), &id, intent_payload(&id, "ep1", "E", "s", 1));
        }
        assert_eq!(
            tally(store.conn(), "ep1").expect("tally").next_ordinal(),
            Some(4)
        );
        drop(other);
        drop(store);
        std::fs::remove_file(&path).expect("remove");
        let store2 = open_store(&path);
        // Same seq count, other rows: the row at the cached seq differs.
        for n in 1..=3 {
            let id = format!("effect:ep1:{}", n * 10);
            append_intent(store2.conn(), &id, intent_payload(&id, "ep1", "E", "t", 7));
        }
        let t = tally(store2.conn(), "ep1").expect("tally");
        assert_eq!(t.next_ordinal(), Some(31));
        let spend = t.spend_map().expect("spend");
        assert_eq!(spend.get(&("E".into(), "s".into())), None);
        assert_eq!(spend[&("E".into(), "t".into())], 21);
        assert_eq!(Some(spend), spend_full_scan(store2.conn(), "ep1").ok());
    }

    #[test]
    fn a_transaction_start_view_is_cached_and_a_rolled_back_append_is_not() {
        let (_dir, mut store, _other) = fresh();
        let id = "effect:ep1:1";
        append_intent(store.conn(), id, intent_payload(id, "ep1", "E", "s", 1));
        {
            let tx = store.immediate().expect("tx");
            let t = tally_at_transaction_start(&tx, "ep1").expect("tally");
            assert_eq!(t.next_ordinal(), Some(2));
            let id = "effect:ep1:2";
            append_intent(&tx, id, intent_payload(id, "ep1", "E", "s", 4));
            // In the transaction its own row counts, but is not cached.
            let t = tally(&tx, "ep1").expect("tally");
            assert_eq!(t.next_ordinal(), Some(3));
            assert_eq!(t.spend_map().expect("spend")[&("E".into(), "s".into())], 5);
            tx.rollback().expect("rollback");
        }
        // A different row now takes seq 2.
        let id = "effect:ep1:2";
        append_intent(store.conn(), id, intent_payload(id, "ep1", "E", "s", 9));
        let t = tally(store.conn(), "ep1").expect("tally");
        assert_eq!(t.spend_map().expect("spend")[&("E".into(), "s".into())], 10);
        assert_eq!(t.next_ordinal(), Some(3));
    }

    #[test]
    fn a_long_gap_of_other_rows_is_read_through_the_id_index() {
        let (_dir, store, other) = fresh();
        let id = "effect:ep1:1";
        append_intent(store.conn(), id, intent_payload(id, "ep1", "E", "s", 1));
        assert_eq!(
            tally(store.conn(), "ep1").expect("tally").next_ordinal(),
            Some(2)
        );
        // More than ROWID_PLAN_FACTOR × rows + ROWID_PLAN_SLACK rows since: the index plan.
        let tx = other.unchecked_transaction().expect("tx");
        for n in 0..400 {
            let id = format!("effect:ep10:{n}");
            append_intent(&tx, &id, intent_payload(&id, "ep10", "E", "s", 1));
            if n % 100 == 0 {
                let id = format!("effect:ep1:{}", n + 2);
                append_intent(&tx, &id, intent_payload(&id, "ep1", "E", "s", 3));
            }
        }
        tx.commit().expect("commit");
        let t = tally(store.conn(), "ep1").expect("tally");
        assert_eq!(t.next_ordinal(), Some(303));
        assert_eq!(t.spend_map().expect("spend")[&("E".into(), "s".into())], 13);
        assert_eq!(
            t.spend_map().expect("spend"),
            spend_full_scan(store.conn(), "ep1").expect("full")
        );
    }

    #[test]
    fn a_corrupt_payload_fails_spend_but_not_the_ordinal() {
        let (_dir, store, _other) = fresh();
        let id = "effect:ep1:1";
        append_intent(store.conn(), id, b"{not json\n".to_vec());
        for _ in 0..2 {
            let t = tally(store.conn(), "ep1").expect("tally");
            assert!(matches!(t.spend_map(), Err(StoreError::Corrupt { .. })));
            assert_eq!(t.next_ordinal(), Some(2));
            assert!(matches!(
                crate::broker::spend(store.conn(), "ep1"),
                Err(StoreError::Corrupt { .. })
            ));
            assert!(spend_full_scan(store.conn(), "ep1").is_err());
            assert_eq!(
                crate::broker::next_ordinal(store.conn(), "ep1").expect("ordinal"),
                Some(2)
            );
        }
    }

    #[test]
    fn the_ordinal_space_ends_at_max_int64() {
        let (_dir, store, _other) = fresh();
        let id = format!("effect:ep1:{}", i64::MAX);
        append_intent(store.conn(), &id, intent_payload(&id, "ep1", "E", "s", 1));
        assert_eq!(
            tally(store.conn(), "ep1").expect("tally").next_ordinal(),
            None
        );
        assert_eq!(
            next_ordinal_full_scan(store.conn(), "ep1").expect("o"),
            None
        );
    }

    #[test]
    fn sums_clamp_at_int64() {
        let (_dir, store, _other) = fresh();
        for n in 1..=3 {
            let id = format!("effect:ep1:{n}");
            append_intent(
                store.conn(),
                &id,
                intent_payload(&id, "ep1", "E", "s", i64::MAX / 2),
            );
        }
        let spend = tally(store.conn(), "ep1")
            .expect("tally")
            .spend_map()
            .expect("spend");
        assert_eq!(spend[&("E".into(), "s".into())], i64::MAX);
        assert_eq!(spend, spend_full_scan(store.conn(), "ep1").expect("full"));
    }

    fn table_row(conn: &Connection, ep: &str) -> Option<(i64, String, String)> {
        conn.query_row(
            "SELECT valid_to_seq, spend_json, checksum FROM world_spend_tally WHERE episode_id = ?1",
            [ep],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()
        .expect("row")
    }

    /// A broker decision transaction of a fresh process for episode `ep1` only.
    fn persist_ep1(conn: &Connection) {
        clear_cache();
        conn.execute_batch("BEGIN IMMEDIATE").expect("begin");
        tally_at_transaction_start(conn, "ep1").expect("persist");
        conn.execute_batch("COMMIT").expect("commit");
    }

    fn seeded(n: i64) -> (tempfile::TempDir, Store, Connection) {
        let (dir, store, other) = fresh();
        for i in 1..=n {
            let id = format!("effect:ep1:{i}");
            append_intent(store.conn(), &id, intent_payload(&id, "ep1", "E", "s", 2));
        }
        persist_ep1(store.conn());
        (dir, store, other)
    }

    #[test]
    fn a_fresh_process_folds_only_rows_after_the_persisted_seq() {
        let (_dir, store, other) = seeded(5);
        assert_eq!(table_row(store.conn(), "ep1").expect("row").0, 5);
        // Another writer (the reference daemon) appends without touching the table.
        let id = "effect:ep1:6";
        append_intent(&other, id, intent_payload(id, "ep1", "E", "s", 7));
        clear_cache();
        let t = tally(store.conn(), "ep1").expect("tally");
        assert_eq!(t.next_ordinal(), Some(7));
        assert_eq!(t.spend_map().expect("spend")[&("E".into(), "s".into())], 17);
        // A read does not write the table; the next decision transaction does.
        assert_eq!(table_row(store.conn(), "ep1").expect("row").0, 5);
        persist_ep1(store.conn());
        assert_eq!(table_row(store.conn(), "ep1").expect("row").0, 6);
        assert!(table::check(store.conn()).expect("check").is_empty());
    }

    #[test]
    fn an_edited_tally_is_rebuilt_not_trusted() {
        let (_dir, store, _other) = seeded(3);
        store
            .conn()
            .execute(
                "UPDATE world_spend_tally SET spend_json = '[[\"E\",\"s\",\"0\"]]' WHERE episode_id = 'ep1'",
                [],
            )
            .expect("edit");
        clear_cache();
        let t = tally(store.conn(), "ep1").expect("tally");
        assert_eq!(t.spend_map().expect("spend")[&("E".into(), "s".into())], 6);
        let problems = table::check(store.conn()).expect("check");
        assert_eq!(problems.len(), 1);
        assert!(!problems[0].trusted);
        assert!(problems[0].reason.contains("checksum"), "{problems:?}");
        // The next decision transaction rewrites it.
        persist_ep1(store.conn());
        assert!(table::check(store.conn()).expect("check").is_empty());
    }

    #[test]
    fn a_forged_tally_with_a_valid_checksum_fails_verify() {
        let (_dir, store, _other) = seeded(3);
        let (seq, _, _) = table_row(store.conn(), "ep1").expect("row");
        let state: String = store
            .conn()
            .query_row(
                "SELECT state_json FROM world_spend_tally WHERE episode_id = 'ep1'",
                [],
                |r| r.get(0),
            )
            .expect("state");
        let spend = r#"[["E","s","0"]]"#;
        let sum = table::checksum("ep1", seq, Some(4), spend, &state);
        store
            .conn()
            .execute(
                "UPDATE world_spend_tally SET spend_json = ?1, checksum = ?2 WHERE episode_id = 'ep1'",
                [spend, sum.as_str()],
            )
            .expect("forge");
        let problems = table::check(store.conn()).expect("check");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].trusted);
        // Its checksum holds but was never recorded by world (DEC-LEDGER-5)…
        assert!(problems[0].reason.contains("edited"), "{problems:?}");
        // …so the broker refuses to decide on it rather than trusting or rebuilding it.
        clear_cache();
        assert!(matches!(
            tally(store.conn(), "ep1"),
            Err(StoreError::Corrupt { .. })
        ));
    }

    #[test]
    fn a_rewritten_journal_row_at_the_anchor_makes_the_tally_stale() {
        let (_dir, store, _other) = seeded(4);
        store
            .conn()
            .execute(
                "UPDATE journal SET invocation_id = 'effect:ep1:40' WHERE seq = 4",
                [],
            )
            .expect("rewrite");
        clear_cache();
        let t = tally(store.conn(), "ep1").expect("tally");
        assert_eq!(t.next_ordinal(), Some(41));
        let problems = table::check(store.conn()).expect("check");
        assert_eq!(problems.len(), 1);
        assert!(!problems[0].trusted);
        assert!(problems[0].reason.contains("stale"), "{problems:?}");
    }

    #[test]
    fn a_tally_past_the_journal_end_is_not_used() {
        let (_dir, store, _other) = seeded(4);
        store
            .conn()
            .execute("DELETE FROM journal WHERE seq > 2", [])
            .expect("truncate");
        clear_cache();
        let t = tally(store.conn(), "ep1").expect("tally");
        assert_eq!(t.next_ordinal(), Some(3));
        assert_eq!(t.spend_map().expect("spend")[&("E".into(), "s".into())], 4);
    }

    #[test]
    fn an_episode_without_effects_starts_at_the_first_ordinal() {
        let (_dir, store, _other) = fresh();
        persist_ep1(store.conn());
        clear_cache();
        let t = tally(store.conn(), "ep1").expect("tally");
        assert_eq!(t.next_ordinal(), Some(FIRST_ORDINAL));
        assert_eq!(
            next_ordinal_full_scan(store.conn(), "ep1").expect("o"),
            Some(FIRST_ORDINAL)
        );
    }
}
