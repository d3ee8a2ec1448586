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

use rusqlite::{Connection, OptionalExtension};

use crate::store::journal;
use crate::store::Error as StoreError;

/// The running totals for one episode: exact spend per `(effect, scope)` and the largest
/// all-digit ordinal suffix (0 when there is none).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Σ cost per `(effect, scope)`, exact (never saturates).
    spend: HashMap<(String, String), i128>,
    /// The largest all-digit suffix among the episode's intent ids, 0 if none.
    max_ordinal: i64,
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

    /// The next ordinal: 1 + the largest all-digit suffix (§7.4); `None` at `i64::MAX`.
    pub fn next_ordinal(&self) -> Option<i64> {
        self.max_ordinal.checked_add(1)
    }
}

impl Tally {
    /// Fold one intent payload; remember the first corruption instead of failing, so the
    /// ordinal (which never reads payloads) keeps working.
    fn fold(&mut self, episode: &str, payload: &[u8]) {
        if self.corrupt.is_some() {
            return;
        }
        if let Err(detail) = fold_payload(&mut self.spend, episode, payload) {
            self.corrupt = Some(detail);
        }
    }
}

fn clamp_i64(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

/// The identity of one journal row: `(kind, invocation_id, object_ref)`.
type RowId = (String, String, String);

#[derive(Clone, Debug)]
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

/// Fold one `world/effect-intent/v1` payload into `spend` (§8): intents of other episodes that
/// share the id prefix are skipped; an undecodable payload or one missing effect, scope or an
/// int64 cost is an error (its detail).
fn fold_payload(
    spend: &mut HashMap<(String, String), i128>,
    episode: &str,
    payload: &[u8],
) -> Result<(), String> {
    let v: serde_json::Value = serde_json::from_slice(payload).map_err(|e| e.to_string())?;
    if v.get("episodeId").and_then(|x| x.as_str()) != Some(episode) {
        return Ok(());
    }
    let (Some(effect), Some(scope), Some(cost)) = (
        v.get("effect").and_then(|x| x.as_str()),
        v.get("scope").and_then(|x| x.as_str()),
        v.get("cost").and_then(|x| x.as_i64()),
    ) else {
        return Err("missing effect, scope or cost".into());
    };
    *spend
        .entry((effect.to_string(), scope.to_string()))
        .or_insert(0) += i128::from(cost);
    Ok(())
}

/// One in-range intent row: seq, invocation id, and `(semantic_id, payload)` of its object if
/// the object exists.
type ScanRow = (i64, String, Option<(String, Vec<u8>)>);

/// Fold one scanned row into `entry`.
fn fold_row(entry: &mut Entry, episode: &str, lo: &str, row: ScanRow) {
    let (seq, id, object) = row;
    entry.tally.rows_in_range += 1;
    if let Some(n) = ordinal_of(&id, lo) {
        entry.tally.max_ordinal = entry.tally.max_ordinal.max(n);
    }
    match object {
        None => entry.pending.push(seq),
        Some((semantic, payload)) => {
            if semantic == journal::EFFECT_INTENT {
                entry.tally.fold(episode, &payload);
            }
        }
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
    // Both plans select the same rows; the unary `+` keeps the planner off the other access
    // path: the rowid range walks only the new rows, the (invocation_id, kind) index walks only
    // the episode's ids (a cold start, or a long gap of other episodes' rows).
    let sql = if rowid_plan {
        "SELECT j.seq, j.invocation_id, o.semantic_id, o.payload
         FROM journal j LEFT JOIN objects o ON o.hash_ref = j.object_ref
         WHERE j.seq > ?1 AND j.seq <= ?2 AND j.kind = 'intent'
           AND +j.invocation_id >= ?3 AND +j.invocation_id < ?4"
    } else {
        "SELECT j.seq, j.invocation_id, o.semantic_id, o.payload
         FROM journal j LEFT JOIN objects o ON o.hash_ref = j.object_ref
         WHERE j.kind = 'intent' AND j.invocation_id >= ?3 AND j.invocation_id < ?4
           AND +j.seq > ?1 AND +j.seq <= ?2"
    };
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = stmt.query(rusqlite::params![from, to, lo, hi])?;
    while let Some(r) = rows.next()? {
        let seq: i64 = r.get(0)?;
        let id: String = r.get(1)?;
        let semantic: Option<String> = r.get(2)?;
        let payload: Option<Vec<u8>> = r.get(3)?;
        let object = match (semantic, payload) {
            (Some(s), Some(p)) => Some((s, p)),
            _ => None,
        };
        fold_row(entry, episode, &lo, (seq, id, object));
    }
    Ok(())
}

/// Re-check the rows whose payload object was missing; fold those whose object now exists.
fn recheck_pending(conn: &Connection, entry: &mut Entry, episode: &str) -> Result<(), StoreError> {
    if entry.pending.is_empty() {
        return Ok(());
    }
    let mut stmt = conn.prepare_cached(
        "SELECT o.semantic_id, o.payload FROM journal j JOIN objects o ON o.hash_ref = j.object_ref
         WHERE j.seq = ?1",
    )?;
    let mut still = Vec::new();
    for seq in std::mem::take(&mut entry.pending) {
        let found: Option<(String, Vec<u8>)> = stmt
            .query_row([seq], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        match found {
            None => still.push(seq),
            Some((semantic, payload)) => {
                if semantic == journal::EFFECT_INTENT {
                    entry.tally.fold(episode, &payload);
                }
            }
        }
    }
    entry.pending = still;
    Ok(())
}

fn row_at(conn: &Connection, seq: i64) -> Result<Option<RowId>, StoreError> {
    if seq <= 0 {
        return Ok(None);
    }
    let mut stmt =
        conn.prepare_cached("SELECT kind, invocation_id, object_ref FROM journal WHERE seq = ?1")?;
    Ok(stmt
        .query_row([seq], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?)
}

/// Whether this connection's view may be cached: the file has a path and the view holds
/// committed rows only.
fn cache_key(conn: &Connection, episode: &str) -> Option<(String, String)> {
    match conn.path() {
        Some(p) if !p.is_empty() => Some((p.to_string(), episode.to_string())),
        _ => None,
    }
}

fn compute(conn: &Connection, episode: &str, store: bool) -> Result<Tally, StoreError> {
    let key = cache_key(conn, episode);
    let top: i64 = conn
        .prepare_cached("SELECT COALESCE(MAX(seq), 0) FROM journal")?
        .query_row([], |r| r.get(0))?;
    let mut entry = match key.as_ref().and_then(cache_get) {
        Some(e) if e.seq <= top && row_at(conn, e.seq)? == e.at_seq => e,
        _ => Entry::empty(),
    };
    recheck_pending(conn, &mut entry, episode)?;
    let from = entry.seq;
    scan(conn, &mut entry, episode, from, top)?;
    if top != entry.seq {
        entry.seq = top;
        entry.at_seq = row_at(conn, top)?;
    }
    let tally = entry.tally.clone();
    if let (true, Some(key)) = (store, key) {
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
    compute(conn, episode, conn.is_autocommit())
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
    compute(conn, episode, true)
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
    let mut stmt = conn.prepare(
        "SELECT o.payload FROM journal j JOIN objects o ON o.hash_ref = j.object_ref
         WHERE j.kind = 'intent' AND j.invocation_id >= ?1 AND j.invocation_id < ?2 AND o.semantic_id = ?3",
    )?;
    let rows = stmt.query_map(rusqlite::params![lo, hi, journal::EFFECT_INTENT], |r| {
        r.get::<_, Vec<u8>>(0)
    })?;
    let mut out: HashMap<(String, String), i64> = HashMap::new();
    for p in rows {
        let mut one = HashMap::new();
        fold_payload(&mut one, episode, &p?).map_err(corrupt)?;
        for (k, v) in one {
            let e = out.entry(k).or_insert(0);
            *e = e.saturating_add(clamp_i64(v));
        }
    }
    Ok(out)
}

/// The straightforward next ordinal: read every intent id of the episode's range (O(N)).
/// Reference for [`tally`].
///
/// # Errors
/// Store errors.
pub fn next_ordinal_full_scan(conn: &Connection, episode: &str) -> Result<Option<i64>, StoreError> {
    let (lo, hi) = id_range(episode);
    let mut stmt = conn.prepare(
        "SELECT invocation_id FROM journal WHERE kind = 'intent' AND invocation_id >= ?1 AND invocation_id < ?2",
    )?;
    let ids: Vec<String> = stmt
        .query_map([&lo, &hi], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let max = ids
        .iter()
        .filter_map(|id| ordinal_of(id, &lo))
        .fold(0i64, i64::max);
    Ok(max.checked_add(1))
}
