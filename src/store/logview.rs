//! What happened at each log entry, for `world log`'s table: the coordinator's invocation
//! record, the output's `ok` and the commit intent's `logicalTime`, streamed in constant memory
//! (issue 16 item 6).
//!
//! [`for_each`] scans `log_entries` and reads the objects and journal intents each entry names
//! from walks of `objects` and `journal` in rowid order next to the scan (DEC-PERF-5), not one
//! random primary-key lookup each: an entry's record, output and intent are written in the
//! entry's own transactions, so their rows sit next to each other in every store either
//! implementation writes. A row the walk does not reach within [`AHEAD`] rows (an object an
//! earlier entry stored first, rows written out of order) is looked up by key, so the answers
//! are those of the join (`for_each_joined`, kept as the reference the tests compare with).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;

use rusqlite::{Connection, OptionalExtension};
use serde_json::value::RawValue;

use super::records::{INVOCATION_RECORD_V1, INVOCATION_RECORD_V2};
use super::Error;

pub mod table;

/// Filters and range for [`for_each`]; `None` means "any".
#[derive(Clone, Debug, Default)]
pub struct Query {
    /// First index (inclusive; the last entry with `reverse` when `None`).
    pub from: Option<i64>,
    /// At most this many rows.
    pub limit: Option<u64>,
    /// Newest first.
    pub reverse: bool,
    /// Only entries of this episode.
    pub episode: Option<String>,
    /// Only entries whose invocation called this transition (descriptor id).
    pub transition: Option<String>,
    /// Only entries written by this writer (exact, or the part before `:`, e.g. `coordinator`).
    pub writer: Option<String>,
    /// Only entries of this invocation id.
    pub invocation: Option<String>,
    /// Only entries whose commit intent's `logicalTime` is at or after these Unix seconds
    /// (entries without a recorded time are left out).
    pub since: Option<i64>,
}

/// One row of the log view.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    /// `entryIndex`.
    pub index: i64,
    /// The entry hash.
    pub entry_hash: String,
    /// `writtenBy`.
    pub written_by: String,
    /// The entry's transition ref.
    pub transition_ref: String,
    /// The invocation id the entry was written for: a coordinator entry's (from its invocation
    /// record), or a client commit's `rest:<id>` (from the commit intent that names this entry
    /// and has an outcome; [`RestIntents`]).
    pub invocation_id: Option<String>,
    /// Whether the entry is a coordinator entry (its transition ref is an invocation record
    /// naming an invocation id); `false` for a client commit, `rest:` id or not.
    pub coordinator: bool,
    /// Its episode.
    pub episode_id: Option<String>,
    /// The transition (descriptor id) it called.
    pub transition: Option<String>,
    /// `ok` of the transition's output (`Some(false)`: `ok:false`); the row's outcome is
    /// `ops::outcome::of_row`'s.
    pub ok: Option<bool>,
    /// The commit intent's `logicalTime`, Unix seconds (a client commit has one only when
    /// it was sent with a `rest:` id).
    pub logical_time: Option<i64>,
}

const SQL: &str = "
SELECT idx, entry_hash_ref, written_by, transition_ref, COALESCE(rinv, rest) AS inv, ep, skill, ok,
       (SELECT json_extract(CAST(i.payload AS TEXT), '$.logicalTime')
          FROM journal j JOIN objects i ON i.hash_ref = j.object_ref
         WHERE j.kind = 'intent' AND j.invocation_id = COALESCE(rinv, rest)) AS t,
       rinv IS NOT NULL AS coord
FROM (
  SELECT l.entry_index AS idx, l.entry_hash_ref, l.written_by, l.transition_ref,
         json_extract(CAST(r.payload AS TEXT), '$.invocationId') AS rinv,
         json_extract(CAST(r.payload AS TEXT), '$.episodeId') AS ep,
         json_extract(CAST(r.payload AS TEXT), '$.skillId') AS skill,
         (SELECT json_extract(CAST(o.payload AS TEXT), '$.ok') FROM objects o
           WHERE o.hash_ref = json_extract(CAST(r.payload AS TEXT), '$.output')) AS ok,
         (SELECT j.invocation_id FROM journal j JOIN objects i ON i.hash_ref = j.object_ref
           WHERE j.kind = 'intent' AND j.invocation_id >= 'rest:' AND j.invocation_id < 'rest;'
             AND i.semantic_id = 'world/journal-intent/v1'
             AND json_extract(CAST(i.payload AS TEXT), '$.entryHash') = l.entry_hash_ref
             AND json_extract(CAST(i.payload AS TEXT), '$.invocationId') = j.invocation_id
             AND EXISTS (SELECT 1 FROM journal x
                          WHERE x.invocation_id = j.invocation_id AND x.kind = 'outcome')
           ORDER BY j.seq LIMIT 1) AS rest
    FROM log_entries l
    LEFT JOIN objects r ON r.hash_ref = l.transition_ref AND r.semantic_id IN (?1, ?2)
   WHERE l.entry_index {CMP} ?4 AND ?3 = ?3
     AND (?5 IS NULL OR l.written_by = ?5 OR substr(l.written_by, 1, length(?5) + 1) = ?5 || ':')
)
WHERE (?6 IS NULL OR ep = ?6)
  AND (?7 IS NULL OR skill = ?7)
  AND (?8 IS NULL OR COALESCE(rinv, rest) = ?8)
  AND (?9 IS NULL OR t >= ?9)
ORDER BY idx {DIR}
LIMIT ?10";

/// Rows read past the last row a lookup hit before a missing key is looked up directly.
#[cfg(not(test))]
const AHEAD: i64 = 1024;
/// Rows read per walk step.
#[cfg(not(test))]
const BATCH: i64 = 256;
/// Rows kept from a walk (up to twice this many; the farthest from the scan position are
/// dropped first). Bounds the memory of a scan.
#[cfg(not(test))]
const KEEP: usize = 4096;
// Small walks in tests, so small stores cross every boundary.
#[cfg(test)]
const AHEAD: i64 = 7;
#[cfg(test)]
const BATCH: i64 = 3;
#[cfg(test)]
const KEEP: usize = 11;

/// A fast hash for the walks' keys (hash refs, invocation ids): FxHash's multiply-rotate over
/// 8-byte words, finished with murmur3's mixer. Not collision-resistant; a walk keeps at most [`KEEP`] keys, so crafted
/// collisions can only slow a scan down, never grow its memory.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }

    fn finish(&self) -> u64 {
        // murmur3's fmix64: hashbrown takes the bucket from the low bits and the tag from the
        // top 7, and a multiply alone leaves the low bits depending on the last bytes only.
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

/// One walk of a table by rowid next to the log scan: key → value of the rows near the scan
/// position, with a direct lookup for keys not found there.
struct Walk<'c, V: Clone> {
    conn: &'c Connection,
    /// `SELECT rowid, key, …` of rows after (before, when reversed) `?1`, in walk order,
    /// `LIMIT ?2`.
    walk_sql: &'static str,
    /// `SELECT rowid, key, …` of the row whose key is `?1`.
    probe_sql: &'static str,
    read: fn(&rusqlite::Row<'_>) -> rusqlite::Result<(i64, String, V)>,
    reverse: bool,
    near: HashMap<String, (i64, V), BuildHasherDefault<KeyHasher>>,
    /// The last rowid read by the walk; `None` before the first lookup placed it.
    cursor: Option<i64>,
    /// The rowid of the last row found ahead of the walk's previous position.
    pos: i64,
    /// No rows are left in the walk's direction.
    done: bool,
    /// Whether to walk at all: `false` answers every key by its lookup (one entry's columns,
    /// as a commit records them, has nothing to walk next to).
    walks: bool,
}

impl<'c, V: Clone> Walk<'c, V> {
    fn ahead(&self, a: i64, b: i64) -> i64 {
        if self.reverse {
            a.saturating_sub(b)
        } else {
            b.saturating_sub(a)
        }
    }

    fn keep(&mut self, rowid: i64, key: String, value: V) {
        self.near.insert(key, (rowid, value));
        // Amortised: once twice over, keep the rows nearest the scan position.
        if self.near.len() > 2 * KEEP {
            let pos = self.pos;
            let mut dist: Vec<i64> = self.near.values().map(|(r, _)| (r - pos).abs()).collect();
            let cut = *dist.select_nth_unstable(KEEP - 1).1;
            self.near.retain(|_, (r, _)| (*r - pos).abs() <= cut);
        }
    }

    fn step(&mut self, from: i64) -> Result<(), Error> {
        let mut stmt = self.conn.prepare_cached(self.walk_sql)?;
        let mut rows = stmt.query(rusqlite::params![from, BATCH])?;
        let mut n = 0;
        let mut last = from;
        let mut got = Vec::new();
        while let Some(r) = rows.next()? {
            let (rowid, key, value) = (self.read)(r)?;
            last = rowid;
            got.push((rowid, key, value));
            n += 1;
        }
        for (rowid, key, value) in got {
            self.keep(rowid, key, value);
        }
        self.cursor = Some(last);
        self.done = n < BATCH;
        Ok(())
    }

    /// The value of the row with `key`, if any (the first by rowid when the key repeats, as
    /// the probe returns).
    fn get(&mut self, key: &str) -> Result<Option<V>, Error> {
        if let Some((rowid, v)) = self.near.get(key) {
            if self.ahead(self.pos, *rowid) > 0 {
                self.pos = *rowid;
            }
            return Ok(Some(v.clone()));
        }
        if let Some(mut cursor) = self.cursor.filter(|_| self.walks) {
            while !self.done && self.ahead(self.pos, cursor) < AHEAD {
                self.step(cursor)?;
                cursor = self.cursor.unwrap_or(cursor);
                if let Some((rowid, v)) = self.near.get(key) {
                    self.pos = *rowid;
                    return Ok(Some(v.clone()));
                }
            }
        }
        let found = self
            .conn
            .prepare_cached(self.probe_sql)?
            .query_row([key], self.read)
            .optional()?;
        let Some((rowid, k, v)) = found else {
            return Ok(None);
        };
        // Past the walk (or its first placement): continue the walk from this row.
        if self.cursor.is_none_or(|c| self.ahead(c, rowid) > 0) {
            self.near.clear();
            self.cursor = Some(rowid);
            self.pos = rowid;
            self.done = false;
        }
        self.keep(rowid, k, v.clone());
        Ok(Some(v))
    }
}

/// An object as the walk keeps it: its semantic id and, for the kinds the view decodes, its
/// payload (`None`: not kept, read on demand).
type ObjectValue = (Rc<str>, Option<Rc<[u8]>>);

fn object_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, String, ObjectValue)> {
    let semantic: String = r.get(2)?;
    let payload: Option<Vec<u8>> = r.get(3)?;
    Ok((
        r.get(0)?,
        r.get(1)?,
        (Rc::from(semantic), payload.map(Rc::from)),
    ))
}

fn intent_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, String, Rc<str>)> {
    let object: String = r.get(2)?;
    Ok((r.get(0)?, r.get(1)?, Rc::from(object)))
}

// The walks read only the kinds the view decodes (records, outputs, commit intents), so they
// never read the pages of state objects; an object of another kind is looked up by key, and a
// payload over 64 KiB is read on demand.
macro_rules! object_select {
    ($tail:literal) => {
        concat!(
            "SELECT rowid, hash_ref, semantic_id,
               CASE WHEN length(payload) <= 65536 THEN payload END FROM objects ",
            $tail
        )
    };
}

const OBJECTS_FORWARD: &str = object_select!(
    "WHERE rowid > ?1 AND +semantic_id IN ('world/invocation-record/v1',
       'world/invocation-record/v2', 'world/invocation-output/v1', 'world/journal-intent/v1')
     ORDER BY rowid ASC LIMIT ?2"
);
const OBJECTS_BACKWARD: &str = object_select!(
    "WHERE rowid < ?1 AND +semantic_id IN ('world/invocation-record/v1',
       'world/invocation-record/v2', 'world/invocation-output/v1', 'world/journal-intent/v1')
     ORDER BY rowid DESC LIMIT ?2"
);
const OBJECT_PROBE: &str = object_select!("WHERE hash_ref = ?1");

/// An object's semantic id and payload.
type Loaded = (Rc<str>, Rc<[u8]>);

/// The reads of one scan: the objects and commit intents the rows name.
struct Reads<'c> {
    objects: Walk<'c, ObjectValue>,
    intents: Walk<'c, Rc<str>>,
}

/// The members of a payload the view reads, each kept raw; other members are skipped
/// unparsed. `None` for a payload that is not a JSON object.
#[derive(serde::Deserialize, Default)]
struct Fields<'a> {
    #[serde(rename = "invocationId", borrow, default)]
    invocation_id: Option<&'a RawValue>,
    #[serde(rename = "episodeId", borrow, default)]
    episode_id: Option<&'a RawValue>,
    #[serde(rename = "skillId", borrow, default)]
    skill_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    output: Option<&'a RawValue>,
    #[serde(borrow, default)]
    ok: Option<&'a RawValue>,
    #[serde(rename = "logicalTime", borrow, default)]
    logical_time: Option<&'a RawValue>,
}

fn fields(payload: &[u8]) -> Option<Fields<'_>> {
    serde_json::from_slice(payload).ok()
}

/// A member as `json_extract` returns it to a text column read: a string's value, else none.
fn text(v: Option<&RawValue>) -> Option<String> {
    let v = v?.get();
    if v.starts_with('"') {
        serde_json::from_str(v).ok()
    } else {
        None
    }
}

/// A member as `json_extract` returns it to an integer column read: `true`/`false` as 1/0, an
/// integer that fits i64; anything else none.
fn integer(v: Option<&RawValue>) -> Option<i64> {
    match v?.get() {
        "true" => Some(1),
        "false" => Some(0),
        n => n.parse().ok(),
    }
}

impl<'c> Reads<'c> {
    fn new(conn: &'c Connection, reverse: bool) -> Reads<'c> {
        Reads::with(conn, reverse, true)
    }

    /// Reads that only look keys up (no walks): for a single entry.
    fn lookups(conn: &'c Connection) -> Reads<'c> {
        Reads::with(conn, false, false)
    }

    fn with(conn: &'c Connection, reverse: bool, walks: bool) -> Reads<'c> {
        let (objects_walk, intents_walk) = if reverse {
            (
                OBJECTS_BACKWARD,
                "SELECT seq, invocation_id, object_ref FROM journal
                 WHERE seq < ?1 AND kind = 'intent' ORDER BY seq DESC LIMIT ?2",
            )
        } else {
            (
                OBJECTS_FORWARD,
                "SELECT seq, invocation_id, object_ref FROM journal
                 WHERE seq > ?1 AND kind = 'intent' ORDER BY seq ASC LIMIT ?2",
            )
        };
        Reads {
            objects: Walk {
                conn,
                walk_sql: objects_walk,
                probe_sql: OBJECT_PROBE,
                read: object_row,
                reverse,
                near: HashMap::default(),
                cursor: None,
                pos: 0,
                done: false,
                walks,
            },
            intents: Walk {
                conn,
                walk_sql: intents_walk,
                probe_sql: "SELECT seq, invocation_id, object_ref FROM journal
                            WHERE invocation_id = ?1 AND kind = 'intent'",
                read: intent_row,
                reverse,
                near: HashMap::default(),
                cursor: None,
                pos: 0,
                done: false,
                walks,
            },
        }
    }

    /// The semantic id and payload of object `hash`, if it exists.
    fn object(&mut self, hash: &str) -> Result<Option<Loaded>, Error> {
        let Some((semantic, kept)) = self.objects.get(hash)? else {
            return Ok(None);
        };
        let payload = self.payload(hash, kept)?;
        Ok(Some((semantic, payload)))
    }

    /// The payload of object `hash`: the walk's copy when it kept one, else read now (a
    /// payload over 64 KiB, or an object of a kind the walk does not read).
    fn payload(&self, hash: &str, kept: Option<Rc<[u8]>>) -> Result<Rc<[u8]>, Error> {
        Ok(match kept {
            Some(p) => p,
            None => {
                let p: Vec<u8> = self
                    .objects
                    .conn
                    .prepare_cached("SELECT payload FROM objects WHERE hash_ref = ?1")?
                    .query_row([hash], |r| r.get(0))?;
                Rc::from(p)
            }
        })
    }

    /// The decoded columns of the entry whose transition ref is `transition_ref`:
    /// `(invocation, episode, skill, ok, logical time)`, each `None` where the join's
    /// `json_extract` would give no value of that type.
    fn decode(&mut self, transition_ref: &str) -> Result<Decoded, Error> {
        Ok(self.decode_full(transition_ref)?.0)
    }

    /// [`Reads::decode`], and whether the columns are final: every object and journal row
    /// they depend on exists, so no later append can change them (objects and the journal are
    /// append-only and content-addressed). Only final columns go into `world_log_view`.
    fn decode_full(&mut self, transition_ref: &str) -> Result<(Decoded, bool), Error> {
        let mut d = Decoded::default();
        let Some((semantic, kept)) = self.objects.get(transition_ref)? else {
            // An entry naming an object not stored (yet): a later object could decode.
            return Ok((d, false));
        };
        // Only a record's payload is decoded: the payload of any other kind (a client's
        // state object of any size) is never read (issue 34: `verify` and `world log` read
        // each such payload once more for nothing).
        if &*semantic != INVOCATION_RECORD_V1 && &*semantic != INVOCATION_RECORD_V2 {
            return Ok((d, true));
        }
        let payload = self.payload(transition_ref, kept)?;
        let Some(record) = fields(&payload) else {
            return Ok((d, true));
        };
        let mut fin = true;
        d.invocation = text(record.invocation_id);
        d.episode = text(record.episode_id);
        d.skill = text(record.skill_id);
        if let Some(output) = text(record.output) {
            match self.object(&output)? {
                Some((_, p)) => d.ok = fields(&p).and_then(|f| integer(f.ok)).map(|n| n != 0),
                None => fin = false,
            }
        }
        if let Some(inv) = &d.invocation {
            match self.intents.get(inv)? {
                Some(intent) => match self.object(&intent)? {
                    Some((_, p)) => d.time = fields(&p).and_then(|f| integer(f.logical_time)),
                    None => fin = false,
                },
                None => fin = false,
            }
        }
        Ok((d, fin))
    }
}

/// The columns of one entry the table prints beyond the log row itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Decoded {
    invocation: Option<String>,
    episode: Option<String>,
    skill: Option<String>,
    ok: Option<bool>,
    time: Option<i64>,
}

/// Whether `written_by` matches the `--writer` filter `w`: exactly, or as its prefix before `:`.
fn writer_matches(written_by: &str, w: &str) -> bool {
    written_by == w
        || written_by
            .strip_prefix(w)
            .is_some_and(|rest| rest.starts_with(':'))
}

/// Stream the rows of `q` in index order (descending with `reverse`), calling `f` per row.
/// Memory is constant in the log length (at most [`KEEP`] rows of each walk).
///
/// Each entry's columns come from its `world_log_view` row when that row's seal holds for the
/// entry (DEC-PERF-11; [`table`]): one compact row read in index order next to the log scan.
/// An entry without such a row (written by another writer, a store no writable `world` opened
/// since the table was added, an edited row) is decoded from what it names, read in log order
/// (module docs, DEC-PERF-5). Either way the rows are those of [`for_each_joined`].
///
/// # Errors
/// [`Error::Sqlite`] on a failed read; whatever `f` returns.
pub fn for_each(
    conn: &Connection,
    q: &Query,
    f: impl FnMut(Row) -> Result<(), Error>,
) -> Result<(), Error> {
    for_each_with(conn, q, true, f)
}

/// [`for_each`] without `world_log_view`: every entry decoded from what it names. The
/// reference the view is compared with (tests, `benches/store.rs`).
///
/// # Errors
/// As [`for_each`].
pub fn for_each_walked(
    conn: &Connection,
    q: &Query,
    f: impl FnMut(Row) -> Result<(), Error>,
) -> Result<(), Error> {
    for_each_with(conn, q, false, f)
}

fn for_each_with(
    conn: &Connection,
    q: &Query,
    use_view: bool,
    mut f: impl FnMut(Row) -> Result<(), Error>,
) -> Result<(), Error> {
    let start = q.from.unwrap_or(if q.reverse { i64::MAX } else { 0 });
    let sql = if q.reverse {
        "SELECT entry_index, entry_hash_ref, written_by, transition_ref FROM log_entries
         WHERE entry_index <= ?1 ORDER BY entry_index DESC"
    } else {
        "SELECT entry_index, entry_hash_ref, written_by, transition_ref FROM log_entries
         WHERE entry_index >= ?1 ORDER BY entry_index ASC"
    };
    let mut view = if use_view {
        table::Cursor::open(conn, start, q.reverse)?
    } else {
        None
    };
    let mut reads = Reads::new(conn, q.reverse);
    let mut rest = RestIntents::new(conn);
    let mut left = q.limit.unwrap_or(u64::MAX);
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = stmt.query([start])?;
    while left > 0 {
        let Some(r) = rows.next()? else { break };
        let written_by: String = r.get(2)?;
        if q.writer
            .as_deref()
            .is_some_and(|w| !writer_matches(&written_by, w))
        {
            continue;
        }
        let index: i64 = r.get(0)?;
        let entry_hash: String = r.get(1)?;
        let transition_ref: String = r.get(3)?;
        let viewed = match view.as_mut() {
            Some(v) => v.get(index, &entry_hash, &transition_ref)?,
            None => None,
        };
        let mut d = match viewed {
            Some(d) => d,
            None => reads.decode(&transition_ref)?,
        };
        let coordinator = d.invocation.is_some();
        if !coordinator {
            if let Some((id, time)) = rest.of_entry(&entry_hash)? {
                d.invocation = Some(id);
                d.time = Some(time);
            }
        }
        if q.episode.is_some() && d.episode != q.episode
            || q.transition.is_some() && d.skill != q.transition
            || q.invocation.is_some() && d.invocation != q.invocation
            || q.since.is_some_and(|s| d.time.is_none_or(|t| t < s))
        {
            continue;
        }
        left -= 1;
        f(Row {
            index,
            entry_hash,
            written_by,
            transition_ref,
            invocation_id: d.invocation,
            episode_id: d.episode,
            transition: d.skill,
            ok: d.ok,
            logical_time: d.time,
            coordinator,
        })?;
    }
    Ok(())
}

/// The `rest:` ids of client commits, by the entry they committed (issue 29: `world log`
/// showed `-` for them). A client commit has no invocation record; the only link from its
/// entry to the id it was sent with is the commit intent (`world/journal-intent/v1`, whose
/// `entryHash` names the entry) in the journal's `rest:` range. No index maps an entry hash
/// to that intent, so on the first client commit a scan meets, the `rest:` intents are read
/// once — one range of the journal's `(invocation_id, kind)` key — into a sorted list of
/// (64-bit hash of `entryHash`, journal `seq`): 16 bytes per `rest:` commit, none for the
/// rest of the log. A lookup then reads the candidate intents by `seq` and keeps the first
/// (lowest `seq`) that decodes, names its own journal id and this entry hash, and has an
/// outcome (an intent left indeterminate by a crash before a retry under another id names
/// the same entry, but did not commit it). The view table is not involved: its sealed
/// columns stay those of the invocation record, so stores written before this are read the
/// same way.
struct RestIntents<'c> {
    conn: &'c Connection,
    index: Option<Vec<(u64, i64)>>,
}

fn key_of(text: &str) -> u64 {
    let mut h = KeyHasher::default();
    h.write(text.as_bytes());
    h.finish()
}

impl<'c> RestIntents<'c> {
    fn new(conn: &'c Connection) -> RestIntents<'c> {
        RestIntents { conn, index: None }
    }

    /// The `rest:` id that committed `entry_hash` and its intent's `logicalTime`, if any.
    fn of_entry(&mut self, entry_hash: &str) -> Result<Option<(String, i64)>, Error> {
        let index = match &self.index {
            Some(i) => i,
            None => {
                let mut stmt = self.conn.prepare_cached(
                    "SELECT j.seq, json_extract(CAST(o.payload AS TEXT), '$.entryHash')
                       FROM journal j JOIN objects o ON o.hash_ref = j.object_ref
                      WHERE j.kind = 'intent' AND j.invocation_id >= 'rest:'
                        AND j.invocation_id < 'rest;' AND +o.semantic_id = ?1",
                )?;
                let mut rows = stmt.query([super::journal::COMMIT_INTENT])?;
                let mut v = Vec::new();
                while let Some(r) = rows.next()? {
                    if let Ok(Some(h)) = r.get::<_, Option<String>>(1) {
                        v.push((key_of(&h), r.get(0)?));
                    }
                }
                v.sort_unstable();
                self.index.insert(v)
            }
        };
        let key = key_of(entry_hash);
        let start = index.partition_point(|(k, _)| *k < key);
        for &(k, seq) in &index[start..] {
            if k != key {
                break;
            }
            let found: Option<(String, Vec<u8>, bool)> = self
                .conn
                .prepare_cached(
                    "SELECT j.invocation_id, o.payload,
                            EXISTS (SELECT 1 FROM journal x
                                     WHERE x.invocation_id = j.invocation_id AND x.kind = 'outcome')
                       FROM journal j JOIN objects o ON o.hash_ref = j.object_ref
                      WHERE j.seq = ?1",
                )?
                .query_row([seq], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .optional()?;
            let Some((id, payload, resolved)) = found else {
                continue;
            };
            if let Ok(i) = super::journal::CommitIntent::decode(&payload) {
                if resolved && i.invocation_id == id && i.entry_hash == entry_hash {
                    return Ok(Some((id, i.logical_time)));
                }
            }
        }
        Ok(None)
    }
}

/// The `rest:` id a client commit of `entry_hash` was sent with, and its intent's
/// `logicalTime` (Unix seconds): the row [`for_each`] gives that entry. One read of the
/// journal's `rest:` range ([`RestIntents`]); `None` for an entry no resolved `rest:` intent
/// names.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn rest_invocation_of(
    conn: &Connection,
    entry_hash: &str,
) -> Result<Option<(String, i64)>, Error> {
    RestIntents::new(conn).of_entry(entry_hash)
}

/// The first entry (lowest index) whose transition ref is `reference`, through the
/// `log_entries_by_transition_ref` index.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn entry_of_transition(conn: &Connection, reference: &str) -> Result<Option<i64>, Error> {
    Ok(conn.query_row(
        "SELECT min(entry_index) FROM log_entries WHERE transition_ref = ?1",
        [reference],
        |r| r.get(0),
    )?)
}

/// The first entry whose invocation record names `invocation_id`, found through the journal
/// (its commit intent's `transitionRef` is the record) and the `log_entries_by_transition_ref`
/// index instead of a scan: the row [`for_each`] gives for `Query { invocation, limit: 1 }`
/// for every invocation committed through the journal (store-format.md §10). `None` when the
/// journal has no commit intent for it.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn entry_of_invocation(conn: &Connection, invocation_id: &str) -> Result<Option<i64>, Error> {
    let Some(intent) = super::journal::row(conn, invocation_id, super::journal::Kind::Intent)?
    else {
        return Ok(None);
    };
    let payload: Option<Vec<u8>> = conn
        .query_row(
            "SELECT payload FROM objects WHERE hash_ref = ?1",
            [&intent],
            |r| r.get(0),
        )
        .optional()?;
    let Some(record) = payload.and_then(|p| {
        let v: serde_json::Value = serde_json::from_slice(&p).ok()?;
        v.get("transitionRef")?.as_str().map(str::to_string)
    }) else {
        return Ok(None);
    };
    let mut reads = Reads::new(conn, false);
    if reads.decode(&record)?.invocation.as_deref() != Some(invocation_id) {
        return Ok(None);
    }
    entry_of_transition(conn, &record)
}

/// The same rows as [`for_each`] from one SQL join (`json_extract` per column, one primary-key
/// lookup per object): the reference the walk is tested against.
pub fn for_each_joined(
    conn: &Connection,
    q: &Query,
    mut f: impl FnMut(Row) -> Result<(), Error>,
) -> Result<(), Error> {
    let start = q.from.unwrap_or(if q.reverse { i64::MAX } else { 0 });
    let lim = q.limit.map(|l| l.min(i64::MAX as u64) as i64).unwrap_or(-1);
    // Two statements rather than a CASE, so SQLite walks the primary key in order and
    // streams (a computed ORDER BY would sort the whole log first).
    let sql = if q.reverse {
        SQL.replace("{CMP}", "<=").replace("{DIR}", "DESC")
    } else {
        SQL.replace("{CMP}", ">=").replace("{DIR}", "ASC")
    };
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query(rusqlite::params![
        INVOCATION_RECORD_V1,
        INVOCATION_RECORD_V2,
        q.reverse,
        start,
        q.writer,
        q.episode,
        q.transition,
        q.invocation,
        q.since,
        lim
    ])?;
    while let Some(r) = rows.next()? {
        let ok: Option<i64> = r.get(7).ok().flatten();
        f(Row {
            index: r.get(0)?,
            entry_hash: r.get(1)?,
            written_by: r.get(2)?,
            transition_ref: r.get(3)?,
            invocation_id: r.get(4).ok().flatten(),
            episode_id: r.get(5).ok().flatten(),
            transition: r.get(6).ok().flatten(),
            ok: ok.map(|v| v != 0),
            logical_time: r.get(8).ok().flatten(),
            coordinator: r.get::<_, i64>(9)? != 0,
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::schema::{self, Mode};
    use proptest::prelude::*;

    /// One generated entry: `(kind, episode, skill, ok, time)`; kind 0 = coordinator v1,
    /// 1 = coordinator v2, 2 = client commit whose transition object exists, 3 = client commit
    /// naming no object.
    type Spec = (u8, u8, u8, Option<bool>, Option<i64>);

    fn sha(b: &[u8]) -> String {
        crate::encoding::HashRef::of(b).to_string()
    }

    /// A store with `entries`; objects and intents are inserted per entry, then `moves`
    /// relocate some rows (rowid order ≠ log order), and outputs repeat across entries.
    fn store(entries: &[Spec], moves: &[(usize, usize)], missing_intent: &[bool]) -> Connection {
        let c = Connection::open_in_memory().expect("memory");
        schema::open(&c, ":memory:", Mode::Writable).expect("schema");
        let mut objects: Vec<(String, String, Vec<u8>)> = Vec::new();
        let mut intents: Vec<(String, String)> = Vec::new();
        let mut log = Vec::new();
        for (i, &(kind, ep, skill, ok, time)) in entries.iter().enumerate() {
            let inv = format!("cli:ep{ep}:t{i}");
            let transition_ref = match kind {
                0 | 1 => {
                    let out = match ok {
                        Some(b) => format!("{{\"ok\":{b}}}"),
                        None => "{\"value\":1}".to_string(),
                    };
                    let out_ref = sha(out.as_bytes());
                    objects.push((
                        out_ref.clone(),
                        "world/invocation-output/v1".into(),
                        out.into_bytes(),
                    ));
                    let plan = if kind == 1 {
                        ",\"plan\":\"p\",\"effects\":[]"
                    } else {
                        ""
                    };
                    let rec = format!(
                        "{{\"invocationId\":\"{inv}\",\"episodeId\":\"ep{ep}\",\"skillId\":\"tools.s{skill}\",\"output\":\"{out_ref}\"{plan}}}"
                    );
                    let rec_ref = sha(rec.as_bytes());
                    let sem = if kind == 1 {
                        INVOCATION_RECORD_V2
                    } else {
                        INVOCATION_RECORD_V1
                    };
                    if let Some(t) = time {
                        if !missing_intent.get(i).copied().unwrap_or(false) {
                            let body = format!("{{\"invocationId\":\"{inv}\",\"transitionRef\":\"{rec_ref}\",\"logicalTime\":{t},\"n\":{i}}}");
                            let r = sha(body.as_bytes());
                            objects.push((
                                r.clone(),
                                "world/journal-intent/v1".into(),
                                body.into_bytes(),
                            ));
                            intents.push((inv.clone(), r));
                        }
                    }
                    objects.push((rec_ref.clone(), sem.into(), rec.into_bytes()));
                    rec_ref
                }
                2 => {
                    let body = format!("{{\"state\":{i}}}");
                    let r = sha(body.as_bytes());
                    objects.push((r.clone(), "bench/state/v1".into(), body.into_bytes()));
                    r
                }
                _ => sha(format!("nothing{i}").as_bytes()),
            };
            let writer = if kind <= 1 {
                "coordinator:cli"
            } else {
                "client:test"
            };
            log.push((
                i as i64,
                sha(format!("entry{i}").as_bytes()),
                writer,
                transition_ref,
            ));
        }
        for &(a, b) in moves {
            if !objects.is_empty() {
                let (a, b) = (a % objects.len(), b % objects.len());
                let o = objects.remove(a);
                objects.insert(b, o);
            }
            if !intents.is_empty() {
                let (a, b) = (a % intents.len(), b % intents.len());
                let o = intents.remove(a);
                intents.insert(b, o);
            }
        }
        for (h, sem, payload) in &objects {
            c.execute(
                "INSERT OR IGNORE INTO objects VALUES (?1, 'sha256:00', ?2, 'test', ?3)",
                rusqlite::params![h, sem, payload],
            )
            .expect("object");
        }
        for (inv, r) in &intents {
            c.execute(
                "INSERT INTO journal (kind, invocation_id, object_ref) VALUES ('intent', ?1, ?2)",
                [inv, r],
            )
            .expect("intent");
        }
        for (i, e, w, t) in &log {
            c.execute(
                "INSERT INTO log_entries VALUES (?1, ?2, 1, 'f', 'i', 'p', ?3, ?4)",
                rusqlite::params![i, e, w, t],
            )
            .expect("entry");
        }
        c
    }

    type Scan =
        fn(&Connection, &Query, &mut dyn FnMut(Row) -> Result<(), Error>) -> Result<(), Error>;

    fn rows(c: &Connection, q: &Query, how: Scan) -> Vec<Row> {
        let mut out = Vec::new();
        how(c, q, &mut |r| {
            out.push(r);
            Ok(())
        })
        .expect("scan");
        out
    }

    fn walked(
        c: &Connection,
        q: &Query,
        f: &mut dyn FnMut(Row) -> Result<(), Error>,
    ) -> Result<(), Error> {
        for_each(c, q, f)
    }

    fn only_walk(
        c: &Connection,
        q: &Query,
        f: &mut dyn FnMut(Row) -> Result<(), Error>,
    ) -> Result<(), Error> {
        for_each_walked(c, q, f)
    }

    fn joined(
        c: &Connection,
        q: &Query,
        f: &mut dyn FnMut(Row) -> Result<(), Error>,
    ) -> Result<(), Error> {
        for_each_joined(c, q, f)
    }

    /// Client commits sent with a `rest:` id carry it (and their intent's time) in every
    /// reader: only a resolved intent that names its own id and the entry counts; the walk,
    /// the view-less walk and the join agree.
    #[test]
    fn a_client_commit_carries_its_rest_id() {
        let c = Connection::open_in_memory().expect("memory");
        schema::open(&c, ":memory:", Mode::Writable).expect("schema");
        let entry = |i: i64| sha(format!("entry{i}").as_bytes());
        for i in 0..6 {
            c.execute(
                "INSERT INTO log_entries VALUES (?1, ?2, 1, 'f', 'i', 'p', 'client:test', ?3)",
                rusqlite::params![i, entry(i), sha(format!("state{i}").as_bytes())],
            )
            .expect("entry");
        }
        // (journal id, the id and entry its payload names, time, with an outcome)
        let intents: [(&str, &str, i64, i64, bool); 5] = [
            ("rest:x", "rest:x", 3, 10, false), // indeterminate: names entry 3, did not commit it
            ("rest:a", "rest:a", 1, 11, true),
            ("rest:b", "rest:b", 3, 12, true),
            ("rest:y", "rest:z", 4, 13, true), // names another id: not entry 4's
            ("cli:e:t", "cli:e:t", 5, 14, true), // not the rest: range
        ];
        for (id, named, at, time, resolved) in intents {
            let payload = crate::store::journal::CommitIntent {
                invocation_id: named.into(),
                world_ref: sha(b"w"),
                entry_hash: entry(at),
                observed_head: String::new(),
                prev_entry_hash: String::new(),
                transition_fn: sha(b"f"),
                transition_ref: sha(b"t"),
                interpreter: sha(b"i"),
                logical_time: time,
            }
            .payload();
            let r = sha(&payload);
            c.execute(
                "INSERT INTO objects VALUES (?1, 'sha256:00', 'world/journal-intent/v1', 'test', ?2)",
                rusqlite::params![r, payload],
            )
            .expect("intent object");
            c.execute(
                "INSERT INTO journal (kind, invocation_id, object_ref) VALUES ('intent', ?1, ?2)",
                [id, &r],
            )
            .expect("intent");
            if resolved {
                c.execute(
                    "INSERT INTO journal (kind, invocation_id, object_ref) VALUES ('outcome', ?1, 'sha256:00')",
                    [id],
                )
                .expect("outcome");
            }
        }
        let got = rows(&c, &Query::default(), walked);
        let ids: Vec<(Option<&str>, Option<i64>, bool)> = got
            .iter()
            .map(|r| (r.invocation_id.as_deref(), r.logical_time, r.coordinator))
            .collect();
        assert_eq!(
            ids,
            [
                (None, None, false),
                (Some("rest:a"), Some(11), false),
                (None, None, false),
                (Some("rest:b"), Some(12), false),
                (None, None, false),
                (None, None, false),
            ]
        );
        for q in [
            Query::default(),
            Query {
                reverse: true,
                ..Query::default()
            },
            Query {
                invocation: Some("rest:b".into()),
                ..Query::default()
            },
            Query {
                since: Some(11),
                ..Query::default()
            },
        ] {
            let want = rows(&c, &q, joined);
            assert_eq!(rows(&c, &q, walked), want, "{q:?}");
            assert_eq!(rows(&c, &q, only_walk), want, "{q:?}");
        }
        assert_eq!(
            rest_invocation_of(&c, &entry(3)).expect("lookup"),
            Some(("rest:b".into(), 12))
        );
        assert_eq!(rest_invocation_of(&c, &entry(4)).expect("lookup"), None);
    }

    fn spec() -> impl Strategy<Value = Spec> {
        (
            0u8..4,
            0u8..3,
            0u8..3,
            proptest::option::of(any::<bool>()),
            proptest::option::of(0i64..50),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        /// The walk answers every query exactly as the join does, in the same order.
        #[test]
        fn walk_equals_the_join(
            entries in proptest::collection::vec(spec(), 0..70),
            moves in proptest::collection::vec((0usize..300, 0usize..300), 0..12),
            missing_intent in proptest::collection::vec(any::<bool>(), 0..70),
            reverse in any::<bool>(),
            from in proptest::option::of(0i64..80),
            limit in proptest::option::of(0u64..30),
            episode in proptest::option::of(0u8..3),
            writer in proptest::option::of(prop_oneof![Just("coordinator"), Just("client"), Just("client:test"), Just("coord")]),
            transition in proptest::option::of(0u8..3),
            invocation in proptest::option::of(0usize..70),
            since in proptest::option::of(0i64..50),
        ) {
            let c = store(&entries, &moves, &missing_intent);
            let q = Query {
                from,
                limit,
                reverse,
                episode: episode.map(|e| format!("ep{e}")),
                transition: transition.map(|t| format!("tools.s{t}")),
                writer: writer.map(str::to_string),
                invocation: invocation.map(|i| {
                    let ep = entries.get(i).map_or(0, |e| e.1);
                    format!("cli:ep{ep}:t{i}")
                }),
                since,
            };
            let plain = Query { reverse, ..Query::default() };
            prop_assert_eq!(rows(&c, &plain, walked), rows(&c, &plain, joined));
            prop_assert_eq!(rows(&c, &q, walked), rows(&c, &q, joined));
            // `world show <invocation>` and `world show <object>`: the indexed lookups give the
            // scan's first row (for an invocation the journal has a commit intent for).
            if let Some(inv) = &q.invocation {
                let one = Query { invocation: Some(inv.clone()), limit: Some(1), ..Query::default() };
                let scanned = rows(&c, &one, joined).first().map(|r| r.index);
                let intent = crate::store::journal::row(&c, inv, crate::store::journal::Kind::Intent).expect("journal");
                let indexed = entry_of_invocation(&c, inv).expect("lookup");
                prop_assert_eq!(indexed, if intent.is_some() { scanned } else { None });
            }
            // With `world_log_view` filled as a writer fills it (DEC-PERF-11), and then some
            // rows deleted, edited without their seal, or added for no entry: the same rows.
            table::catch_up(&c, None).expect("fill the view");
            let viewed: i64 = c.query_row("SELECT count(*) FROM world_log_view", [], |r| r.get(0)).expect("count");
            // A client commit whose object is stored is final: its row is written.
            prop_assert!(viewed > 0 || !entries.iter().any(|e| e.0 == 2));
            prop_assert_eq!(rows(&c, &q, walked), rows(&c, &q, joined));
            let n = entries.len().max(1) as i64;
            for (k, &(a, b)) in moves.iter().enumerate() {
                let (a, b) = (a as i64 % n, b as i64 % n);
                let edit = match k % 4 {
                    0 => format!("DELETE FROM world_log_view WHERE entry_index = {a}"),
                    1 => format!("UPDATE world_log_view SET episode_id = 'ep9' WHERE entry_index = {a}"),
                    2 => format!("UPDATE world_log_view SET ok = 1 - coalesce(ok, 0), logical_time = {b} WHERE entry_index = {a}"),
                    _ => format!("UPDATE OR REPLACE world_log_view SET entry_index = {} WHERE entry_index = {a}", n + b),
                };
                c.execute_batch(&edit).expect("edit the view");
            }
            prop_assert_eq!(rows(&c, &plain, walked), rows(&c, &plain, joined));
            prop_assert_eq!(rows(&c, &q, walked), rows(&c, &q, joined));
            prop_assert_eq!(rows(&c, &q, only_walk), rows(&c, &q, joined));
            // `verify`'s check: the edits are never trusted (seals fail), so nothing readers
            // use differs.
            prop_assert!(table::check(&c).expect("check").iter().all(|p| !p.trusted));
            let forward = rows(&c, &Query::default(), joined);
            for r in &forward {
                let first = forward.iter().find(|x| x.transition_ref == r.transition_ref).map(|x| x.index);
                prop_assert_eq!(entry_of_transition(&c, &r.transition_ref).expect("lookup"), first);
            }
        }
    }
}
