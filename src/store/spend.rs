//! The rows behind the broker's spend tally (authority-and-broker.md §7.4, §8; DEC-PERF-1): an
//! episode's effect intents in the journal, read incrementally or in full, and the derived
//! table `world_spend_tally` (spec README "Extra state").
//!
//! `broker::spend` keeps the rules — the fold, the checksum, when a persisted row is trusted;
//! this module only reads and writes rows. Every function runs on the connection it is given,
//! so the broker's decision transaction folds the tally and writes its row in the same
//! transaction as the intent (DEC-BROKER-3). The statements the broker runs before every effect
//! are `prepare_cached`.
//!
//! An episode's effect ids are `effect:<episode>:<ordinal>`: the range `[lo, hi)` the callers
//! pass is `["effect:<ep>:", "effect:<ep>;")`, one range of the journal's
//! `(invocation_id, kind)` index.

use rusqlite::{Connection, OptionalExtension};

use super::Error;

/// The derived table's name.
pub const TABLE: &str = "world_spend_tally";

const DDL: &str = "CREATE TABLE IF NOT EXISTS world_spend_tally (
  episode_id TEXT PRIMARY KEY,
  valid_to_seq INTEGER NOT NULL,
  next_ordinal INTEGER,
  spend_json TEXT NOT NULL,
  state_json TEXT NOT NULL,
  checksum TEXT NOT NULL
)";

/// The append-only record of every checksum `world` wrote into `world_spend_tally` (issue 27
/// §3, DEC-LEDGER-5): a row whose checksum holds but was never recorded here was edited and
/// re-checksummed by someone else.
pub const FOLDS_DDL: &str = "CREATE TABLE IF NOT EXISTS world_spend_folds (
  episode_id TEXT NOT NULL,
  valid_to_seq INTEGER NOT NULL,
  checksum TEXT NOT NULL,
  PRIMARY KEY (episode_id, valid_to_seq, checksum)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS world_spend_folds_no_update BEFORE UPDATE ON world_spend_folds
BEGIN SELECT RAISE(ABORT, 'world_spend_folds is append-only'); END;
CREATE TRIGGER IF NOT EXISTS world_spend_folds_no_delete BEFORE DELETE ON world_spend_folds
BEGIN SELECT RAISE(ABORT, 'world_spend_folds is append-only'); END;";

/// Whether `checksum` was recorded for the episode's row valid to `seq`: `None` when nothing
/// was ever recorded for the episode (no table, or a row written by an earlier `world`).
///
/// # Errors
/// [`Error::Sqlite`].
pub fn checksum_recorded(
    conn: &Connection,
    episode: &str,
    seq: i64,
    checksum: &str,
) -> Result<Option<bool>, Error> {
    let exists = conn
        .prepare_cached(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'world_spend_folds'",
        )?
        .query_row([], |_| Ok(()))
        .optional()?
        .is_some();
    if !exists {
        return Ok(None);
    }
    let any = conn
        .prepare_cached("SELECT 1 FROM world_spend_folds WHERE episode_id = ?1 LIMIT 1")?
        .query_row([episode], |_| Ok(()))
        .optional()?
        .is_some();
    if !any {
        return Ok(None);
    }
    Ok(Some(
        conn.prepare_cached(
            "SELECT 1 FROM world_spend_folds WHERE episode_id = ?1 AND valid_to_seq = ?2 AND checksum = ?3",
        )?
        .query_row(rusqlite::params![episode, seq, checksum], |_| Ok(()))
        .optional()?
        .is_some(),
    ))
}

/// One `world_spend_tally` row as stored (the episode is its key). The broker encodes and
/// checks it; see `broker::spend` for the columns' meaning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TallyRow {
    /// Every committed journal row with `seq ≤ valid_to_seq` is folded in.
    pub valid_to_seq: i64,
    /// The next ordinal (`NULL` when the ordinal space is exhausted).
    pub next_ordinal: Option<i64>,
    /// `[[effect, scope, "exact decimal sum"], …]`, sorted.
    pub spend_json: String,
    /// The anchor row, largest ordinal, rows seen, pending seqs, corruption.
    pub state_json: String,
    /// Hex sha256 of the other columns.
    pub checksum: String,
}

/// An intent row's object: `(object_ref, semantic_id, payload)` (payload as stored, unverified).
pub type IntentObject = (String, String, Vec<u8>);

/// One journal intent row of an episode's id range: `(seq, invocation_id, object)`, the object
/// `None` when it is not (yet) in `objects`.
pub type IntentRow = (i64, String, Option<IntentObject>);

/// The identity of one journal row: `(kind, invocation_id, object_ref)`.
pub type JournalRowId = (String, String, String);

/// Which index [`scan_intents`] walks; both select the same rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanPlan {
    /// The journal's rowid range `(from, to]`: cheap when only a few rows were appended.
    RowidRange,
    /// The `(invocation_id, kind)` index over the episode's ids: a cold start, or a long gap
    /// of other episodes' rows.
    IdIndex,
}

/// Whether `world_spend_tally` exists (it is created on first use).
///
/// # Errors
/// [`Error::Sqlite`].
pub fn table_exists(conn: &Connection) -> Result<bool, Error> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1")?
        .query_row([TABLE], |_| Ok(()))
        .optional()?
        .is_some())
}

/// The episode's row, if any. Call only when [`table_exists`].
///
/// # Errors
/// [`Error::Sqlite`], including a row of the wrong column types.
pub fn read_row(conn: &Connection, episode: &str) -> Result<Option<TallyRow>, Error> {
    Ok(conn
        .prepare_cached(
            "SELECT valid_to_seq, next_ordinal, spend_json, state_json, checksum
             FROM world_spend_tally WHERE episode_id = ?1",
        )?
        .query_row([episode], |r| {
            Ok(TallyRow {
                valid_to_seq: r.get(0)?,
                next_ordinal: r.get(1)?,
                spend_json: r.get(2)?,
                state_json: r.get(3)?,
                checksum: r.get(4)?,
            })
        })
        .optional()?)
}

/// Insert or replace the episode's row, creating the table on first use. Call only inside the
/// write transaction that folded it, before it appends its own journal rows.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn write_row(conn: &Connection, episode: &str, row: &TallyRow) -> Result<(), Error> {
    if !table_exists(conn)? {
        conn.execute_batch(DDL)?;
    }
    conn.execute_batch(FOLDS_DDL)?;
    conn.prepare_cached(
        "INSERT INTO world_spend_folds (episode_id, valid_to_seq, checksum) VALUES (?1, ?2, ?3)
         ON CONFLICT DO NOTHING",
    )?
    .execute(rusqlite::params![episode, row.valid_to_seq, row.checksum])?;
    conn.prepare_cached(
        "INSERT INTO world_spend_tally
           (episode_id, valid_to_seq, next_ordinal, spend_json, state_json, checksum)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (episode_id) DO UPDATE SET valid_to_seq = excluded.valid_to_seq,
           next_ordinal = excluded.next_ordinal, spend_json = excluded.spend_json,
           state_json = excluded.state_json, checksum = excluded.checksum",
    )?
    .execute(rusqlite::params![
        episode,
        row.valid_to_seq,
        row.next_ordinal,
        row.spend_json,
        row.state_json,
        row.checksum
    ])?;
    Ok(())
}

/// Every episode with a row, ascending. Call only when [`table_exists`].
///
/// # Errors
/// [`Error::Sqlite`].
pub fn episodes(conn: &Connection) -> Result<Vec<String>, Error> {
    Ok(conn
        .prepare("SELECT episode_id FROM world_spend_tally ORDER BY episode_id")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?)
}

/// The journal's highest `seq` (0 when it is empty).
///
/// # Errors
/// [`Error::Sqlite`].
pub fn journal_top(conn: &Connection) -> Result<i64, Error> {
    Ok(conn
        .prepare_cached("SELECT COALESCE(MAX(seq), 0) FROM journal")?
        .query_row([], |r| r.get(0))?)
}

/// Call `f` with every intent row with `from < seq ≤ to` and `lo ≤ invocation_id < hi`, in the
/// order `plan`'s index yields them, each with its object when the object exists.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn scan_intents(
    conn: &Connection,
    (from, to): (i64, i64),
    (lo, hi): (&str, &str),
    plan: ScanPlan,
    mut f: impl FnMut(IntentRow),
) -> Result<(), Error> {
    // Both plans select the same rows; the unary `+` keeps the planner off the other access
    // path: the rowid range walks only the new rows, the (invocation_id, kind) index walks only
    // the episode's ids.
    let sql = match plan {
        ScanPlan::RowidRange => {
            "SELECT j.seq, j.invocation_id, o.semantic_id, o.payload, j.object_ref
             FROM journal j LEFT JOIN objects o ON o.hash_ref = j.object_ref
             WHERE j.seq > ?1 AND j.seq <= ?2 AND j.kind = 'intent'
               AND +j.invocation_id >= ?3 AND +j.invocation_id < ?4"
        }
        ScanPlan::IdIndex => {
            "SELECT j.seq, j.invocation_id, o.semantic_id, o.payload, j.object_ref
             FROM journal j LEFT JOIN objects o ON o.hash_ref = j.object_ref
             WHERE j.kind = 'intent' AND j.invocation_id >= ?3 AND j.invocation_id < ?4
               AND +j.seq > ?1 AND +j.seq <= ?2"
        }
    };
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = stmt.query(rusqlite::params![from, to, lo, hi])?;
    while let Some(r) = rows.next()? {
        let seq: i64 = r.get(0)?;
        let id: String = r.get(1)?;
        let semantic: Option<String> = r.get(2)?;
        let payload: Option<Vec<u8>> = r.get(3)?;
        let reference: String = r.get(4)?;
        let object = match (semantic, payload) {
            (Some(s), Some(p)) => Some((reference, s, p)),
            _ => None,
        };
        f((seq, id, object));
    }
    Ok(())
}

/// The journal row at `seq` with its object and invocation id, when the row exists and its
/// object is stored (a pending intent whose object has appeared since).
///
/// # Errors
/// [`Error::Sqlite`].
pub fn object_at(conn: &Connection, seq: i64) -> Result<Option<(IntentObject, String)>, Error> {
    Ok(conn
        .prepare_cached(
            "SELECT j.object_ref, o.semantic_id, o.payload, j.invocation_id
             FROM journal j JOIN objects o ON o.hash_ref = j.object_ref WHERE j.seq = ?1",
        )?
        .query_row([seq], |r| {
            Ok(((r.get(0)?, r.get(1)?, r.get(2)?), r.get(3)?))
        })
        .optional()?)
}

/// The identity of the journal row at `seq` (`None` for `seq ≤ 0` or no such row).
///
/// # Errors
/// [`Error::Sqlite`].
pub fn row_at(conn: &Connection, seq: i64) -> Result<Option<JournalRowId>, Error> {
    if seq <= 0 {
        return Ok(None);
    }
    Ok(conn
        .prepare_cached("SELECT kind, invocation_id, object_ref FROM journal WHERE seq = ?1")?
        .query_row([seq], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?)
}

/// Call `f(payload, object_ref)` for every intent of the id range whose object is a stored
/// `semantic_id` object (the full scan the incremental tally must equal); `f`'s error ends the
/// walk and is returned.
///
/// # Errors
/// [`Error::Sqlite`], or `f`'s error.
pub fn for_each_intent_payload(
    conn: &Connection,
    (lo, hi): (&str, &str),
    semantic_id: &str,
    mut f: impl FnMut(Vec<u8>, String) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut stmt = conn.prepare(
        "SELECT o.payload, j.object_ref FROM journal j JOIN objects o ON o.hash_ref = j.object_ref
         WHERE j.kind = 'intent' AND j.invocation_id >= ?1 AND j.invocation_id < ?2 AND o.semantic_id = ?3",
    )?;
    let rows = stmt.query_map(rusqlite::params![lo, hi, semantic_id], |r| {
        Ok((r.get::<_, Vec<u8>>(0)?, r.get::<_, String>(1)?))
    })?;
    for row in rows {
        let (p, reference) = row?;
        f(p, reference)?;
    }
    Ok(())
}

/// Every intent id of the range `[lo, hi)`.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn intent_ids(conn: &Connection, (lo, hi): (&str, &str)) -> Result<Vec<String>, Error> {
    let mut stmt = conn.prepare(
        "SELECT invocation_id FROM journal WHERE kind = 'intent' AND invocation_id >= ?1 AND invocation_id < ?2",
    )?;
    let ids = stmt
        .query_map([lo, hi], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    Ok(ids)
}
