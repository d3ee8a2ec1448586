//! The log's Merkle tree (`world_merkle`, DEC-TRUST-1): the RFC 9162 tree over the log entries,
//! one leaf per entry in index order, kept as a derived table like `world_log_view`
//! (DEC-PERF-11).
//!
//! **Leaf** ([`leaf_bytes`]): the entry's whole row as Go-json, members in the order of the
//! `entryHash` preimage (store-format.md §8.2) followed by `entryHash` — `{"entryIndex":N,
//! "semanticsEpoch":E,"transitionFn":…,"interpreter":…,"prevEntryHash":…,"writtenBy":…,
//! "transitionRef":…,"entryHash":…}` — hashed as `H(0x00 || bytes)`. Every column of the log
//! row is bound, so a client entry (whose `entryHash` `verify` cannot recompute) cannot have
//! its `transitionRef` swapped either.
//!
//! **Stored**: `world_merkle (id, hash)` holds every leaf hash and every complete subtree
//! hash, keyed by [`merkle::stored_index`] (append order: a commit adds rows at the end; a
//! scan in key order meets them in the order a rebuild computes them). `world_merkle_state`
//! holds the tree size, the last leaf's hash (anchor) and a seal over both.
//!
//! **Written** by [`record`], which [`super::rows::insert_log_entry`] (the one writer of log
//! rows) calls in the transaction that inserts each entry — commits and episode bundles
//! alike: when the state is trusted and the entry is the next leaf, its leaf and the subtrees
//! it completes are appended (reading about one earlier node); otherwise [`catch_up`] runs:
//! an untrusted state (seal fails, anchor is not the leaf of entry `size − 1`, node count
//! differs — a replaced or truncated log, an edited table) empties the table, and leaves are
//! appended from the state's size while the log is contiguous, at most [`CATCH_UP`] per
//! commit (entries another writer appended are caught up the same way). A bundle's log starts
//! after a gap, so its tree stays empty.
//!
//! **Read** by [`TableNodes`] (proofs and roots, O(log n) reads) only under a trusted state
//! covering the size asked for; otherwise [`LogNodes`] computes nodes from the log rows.
//! Whatever source, every proof `world` hands out is first checked against the checkpoint's
//! root with the leaf recomputed from the log row (`ops::checkpoint`).
//!
//! **Checked** by [`check`] (`world verify`): the whole tree is recomputed from the log in one
//! pass and compared with the table row by row.

use rusqlite::{Connection, OptionalExtension};
use sha2::{Digest, Sha256};

use super::{Error, LogEntry};
use crate::encoding::gojson::Obj;
use crate::tlog::merkle::{self, Builder, Hash};

/// The nodes table's name.
pub const TABLE: &str = "world_merkle";
/// The state table's name.
pub const STATE_TABLE: &str = "world_merkle_state";

/// Both tables' DDL, run on every writable open (`schema::apply_ddl`).
pub const DDL: &str = "CREATE TABLE IF NOT EXISTS world_merkle (
  id INTEGER PRIMARY KEY,
  hash BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS world_merkle_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  size INTEGER NOT NULL,
  last_leaf BLOB NOT NULL,
  seal BLOB NOT NULL
)";

/// Leaves [`catch_up`] appends per commit at most (a long log another writer left, or a
/// rebuild, is filled over several commits; `world checkpoint` catches up all of it).
pub const CATCH_UP: u64 = 10_000;

/// Log rows read per step while catching up or recomputing.
const CHUNK: i64 = 4_096;

/// The leaf bytes of a log entry (module docs).
pub fn leaf_bytes(e: &LogEntry) -> Vec<u8> {
    let h = &e.header;
    Obj::new()
        .int("entryIndex", h.entry_index)
        .int("semanticsEpoch", h.semantics_epoch)
        .str("transitionFn", &h.transition_fn)
        .str("interpreter", &h.interpreter)
        .str("prevEntryHash", &h.prev_entry_hash)
        .str("writtenBy", &h.written_by)
        .str("transitionRef", &e.transition_ref)
        .str("entryHash", &e.entry_hash)
        .finish()
}

/// `H(0x00 || leaf_bytes(e))`.
pub fn leaf_hash(e: &LogEntry) -> Hash {
    merkle::leaf_hash(&leaf_bytes(e))
}

/// Whether both tables exist on `conn`.
///
/// # Errors
/// SQLite errors.
pub fn present(conn: &Connection) -> Result<bool, Error> {
    let n: i64 = conn
        .prepare_cached(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN (?1, ?2)",
        )?
        .query_row([TABLE, STATE_TABLE], |r| r.get(0))?;
    Ok(n == 2)
}

fn seal(size: u64, last: &Hash) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"world/merkle-state/v1\n");
    h.update(size.to_be_bytes());
    h.update(last);
    h.finalize().into()
}

/// What the state row says about the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum State {
    /// No tables (a store no writable `world` of this version opened, a reference store).
    Absent,
    /// The table holds exactly the tree of the first `size` log entries' current leaves at
    /// its last leaf (`last` is that leaf's hash).
    Trusted {
        /// Leaves held.
        size: u64,
        /// The last leaf's hash (zero for an empty tree).
        last: Hash,
    },
    /// Not to be used (why); the next commit empties and rebuilds it.
    Untrusted(String),
}

fn blob32(v: Vec<u8>) -> Option<Hash> {
    v.try_into().ok()
}

/// Read and judge the state row (module docs).
///
/// # Errors
/// SQLite errors.
pub fn state(conn: &Connection) -> Result<State, Error> {
    if !present(conn)? {
        return Ok(State::Absent);
    }
    let row: Option<(i64, Vec<u8>, Vec<u8>)> = conn
        .prepare_cached("SELECT size, last_leaf, seal FROM world_merkle_state WHERE id = 1")?
        .query_row([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    let max: Option<i64> = conn
        .prepare_cached("SELECT max(id) FROM world_merkle")?
        .query_row([], |r| r.get(0))?;
    let Some((size, last, sealed)) = row else {
        return Ok(if max.is_none() {
            State::Trusted {
                size: 0,
                last: [0; 32],
            }
        } else {
            State::Untrusted(format!("{TABLE} has rows but no state row"))
        });
    };
    let (Ok(size), Some(last)) = (u64::try_from(size), blob32(last)) else {
        return Ok(State::Untrusted("the state row is malformed".into()));
    };
    if blob32(sealed) != Some(seal(size, &last)) {
        return Ok(State::Untrusted(
            "the state row does not match its seal".into(),
        ));
    }
    let want = merkle::stored_count(size).checked_sub(1).map(|m| m as i64);
    if max != want {
        return Ok(State::Untrusted(format!(
            "{TABLE} holds {} node rows; a tree of {size} leaves has {}",
            max.map_or(0, |m| m + 1),
            merkle::stored_count(size)
        )));
    }
    if size > 0 {
        let entry = super::log_entry_in(conn, size as i64 - 1)?;
        if entry.as_ref().map(leaf_hash) != Some(last) {
            return Ok(State::Untrusted(format!(
                "log entry {} is not the leaf the tree was built with (the log was replaced, truncated or rewritten)",
                size - 1
            )));
        }
    }
    Ok(State::Trusted { size, last })
}

fn put_state(tx: &Connection, size: u64, last: &Hash) -> Result<(), Error> {
    tx.prepare_cached(
        "INSERT INTO world_merkle_state (id, size, last_leaf, seal) VALUES (1, ?1, ?2, ?3)
         ON CONFLICT(id) DO UPDATE SET size = excluded.size, last_leaf = excluded.last_leaf, seal = excluded.seal",
    )?
    .execute(rusqlite::params![size as i64, &last[..], &seal(size, last)[..]])?;
    Ok(())
}

fn stored(conn: &Connection, id: u64) -> Result<Option<Hash>, Error> {
    let v: Option<Vec<u8>> = conn
        .prepare_cached("SELECT hash FROM world_merkle WHERE id = ?1")?
        .query_row([id as i64], |r| r.get(0))
        .optional()?;
    Ok(v.and_then(blob32))
}

/// Append leaf `n` (hash `leaf`) and the subtrees it completes to a table holding the tree
/// of `n` leaves.
fn append(tx: &Connection, n: u64, leaf: Hash) -> Result<(), Error> {
    let mut insert =
        tx.prepare_cached("INSERT OR REPLACE INTO world_merkle (id, hash) VALUES (?1, ?2)")?;
    insert.execute(rusqlite::params![
        merkle::stored_index(0, n) as i64,
        &leaf[..]
    ])?;
    let mut cur = leaf;
    let mut level = 0u32;
    while (n >> level) & 1 == 1 {
        let left_id = merkle::stored_index(level, (n >> level) - 1);
        let left = stored(tx, left_id)?.ok_or_else(|| Error::Corrupt {
            what: TABLE.into(),
            detail: format!("node {left_id} is missing under a trusted state"),
        })?;
        cur = merkle::node_hash(&left, &cur);
        level += 1;
        insert.execute(rusqlite::params![
            merkle::stored_index(level, n >> level) as i64,
            &cur[..]
        ])?;
    }
    Ok(())
}

/// Add the entry just inserted to the tree, inside the caller's write transaction (module
/// docs); a store without the tables is left alone.
///
/// # Errors
/// SQLite errors; the caller's transaction then rolls back with everything else.
pub fn record(tx: &Connection, e: &LogEntry) -> Result<(), Error> {
    match state(tx)? {
        State::Absent => Ok(()),
        State::Trusted { size, .. } if size as i64 == e.header.entry_index => {
            let leaf = leaf_hash(e);
            append(tx, size, leaf)?;
            put_state(tx, size + 1, &leaf)
        }
        _ => catch_up(tx, Some(CATCH_UP)).map(|_| ()),
    }
}

/// Bring the tree up to the log inside the caller's write transaction: an untrusted table is
/// emptied first; then leaves are appended from its size while the log is contiguous, at most
/// `limit` (`None`: to the end). Returns the tree's size afterwards (`None` without tables).
///
/// # Errors
/// SQLite errors.
pub fn catch_up(tx: &Connection, limit: Option<u64>) -> Result<Option<u64>, Error> {
    let (mut size, mut last) = match state(tx)? {
        State::Absent => return Ok(None),
        State::Trusted { size, last } => (size, last),
        State::Untrusted(_) => {
            tx.execute_batch("DELETE FROM world_merkle")?;
            (0, [0; 32])
        }
    };
    let start = size;
    let mut left = limit.unwrap_or(u64::MAX);
    while left > 0 {
        let take = (CHUNK as u64).min(left) as i64;
        let chunk = entries_from(tx, size as i64, take)?;
        let got = chunk.len();
        let mut contiguous = true;
        for e in chunk {
            if e.header.entry_index != size as i64 {
                contiguous = false;
                break;
            }
            last = leaf_hash(&e);
            append(tx, size, last)?;
            size += 1;
            left -= 1;
        }
        if !contiguous || (got as i64) < take {
            break;
        }
    }
    if size != start || state(tx)? != (State::Trusted { size, last }) {
        put_state(tx, size, &last)?;
    }
    Ok(Some(size))
}

/// Up to `limit` log entries from index `from` on, ascending.
fn entries_from(conn: &Connection, from: i64, limit: i64) -> Result<Vec<LogEntry>, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT entry_index, semantics_epoch, transition_fn_ref, interpreter_ref, prev_entry_hash_ref, written_by, entry_hash_ref, transition_ref
           FROM log_entries WHERE entry_index >= ?1 ORDER BY entry_index LIMIT ?2",
    )?;
    let rows = stmt.query_map([from, limit], |r| {
        Ok(LogEntry {
            header: super::Header {
                entry_index: r.get(0)?,
                semantics_epoch: r.get(1)?,
                transition_fn: r.get(2)?,
                interpreter: r.get(3)?,
                prev_entry_hash: r.get(4)?,
                written_by: r.get(5)?,
            },
            entry_hash: r.get(6)?,
            transition_ref: r.get(7)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Walk the log's leaves from index 0 while the log is contiguous, at most `limit` of them
/// (`None`: all), calling `leaf(index, hash)` for each. Returns the number walked.
///
/// # Errors
/// SQLite errors, and `leaf`'s.
pub fn for_each_leaf(
    conn: &Connection,
    limit: Option<u64>,
    mut leaf: impl FnMut(u64, Hash) -> Result<(), Error>,
) -> Result<u64, Error> {
    let limit = limit.unwrap_or(u64::MAX);
    let mut n = 0u64;
    while n < limit {
        let take = (CHUNK as u64).min(limit - n) as i64;
        let chunk = entries_from(conn, n as i64, take)?;
        let got = chunk.len();
        for e in chunk {
            if e.header.entry_index != n as i64 {
                return Ok(n);
            }
            leaf(n, leaf_hash(&e))?;
            n += 1;
        }
        if (got as i64) < take {
            break;
        }
    }
    Ok(n)
}

/// The number of leaves the tree over this log has: its entries from index 0 up to the
/// first gap.
///
/// # Errors
/// SQLite errors.
pub fn log_size(conn: &Connection) -> Result<u64, Error> {
    let (lo, hi) = bounds(conn)?;
    match (lo, hi) {
        (Some(0), Some(hi)) => {
            let n: i64 = conn.query_row("SELECT count(*) FROM log_entries", [], |r| r.get(0))?;
            if n == hi + 1 {
                return Ok(n as u64);
            }
            // A gap: the contiguous prefix.
            let first_gap: i64 = conn.query_row(
                "SELECT min(entry_index) + 1 FROM log_entries a WHERE NOT EXISTS
                   (SELECT 1 FROM log_entries b WHERE b.entry_index = a.entry_index + 1)",
                [],
                |r| r.get(0),
            )?;
            Ok(first_gap as u64)
        }
        _ => Ok(0),
    }
}

/// The number of log rows (whatever their indexes).
///
/// # Errors
/// SQLite errors.
pub fn entry_count(conn: &Connection) -> Result<u64, Error> {
    let n: i64 = conn.query_row("SELECT count(*) FROM log_entries", [], |r| r.get(0))?;
    Ok(n as u64)
}

fn bounds(conn: &Connection) -> Result<(Option<i64>, Option<i64>), Error> {
    Ok(conn.query_row(
        "SELECT min(entry_index), max(entry_index) FROM log_entries",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?)
}

/// The roots of the log's tree at each size of `sizes` (recomputed from the log in one pass,
/// never from the table), and the number of leaves the log has. A size past the log's
/// contiguous end has no root.
///
/// # Errors
/// SQLite errors.
pub fn roots_from_log(
    conn: &Connection,
    sizes: &[u64],
) -> Result<(u64, std::collections::BTreeMap<u64, Hash>), Error> {
    let want: std::collections::BTreeSet<u64> = sizes.iter().copied().collect();
    let mut roots = std::collections::BTreeMap::new();
    if want.contains(&0) {
        roots.insert(0, merkle::EMPTY_ROOT);
    }
    let top = want.iter().next_back().copied().unwrap_or(0);
    let mut b = Builder::new();
    let walked = for_each_leaf(conn, Some(top), |i, h| {
        b.push(h, |_, _| {});
        if want.contains(&(i + 1)) {
            roots.insert(i + 1, b.root());
        }
        Ok(())
    })?;
    let n = if walked < top {
        walked
    } else {
        log_size(conn)?
    };
    Ok((n, roots))
}

/// Complete subtrees read from `world_merkle` (valid only under a trusted state covering
/// them; see [`source`]).
pub struct TableNodes<'c> {
    conn: &'c Connection,
}

impl merkle::Nodes for TableNodes<'_> {
    type Error = Error;
    fn node(&mut self, level: u32, index: u64) -> Result<Hash, Error> {
        let id = merkle::stored_index(level, index);
        stored(self.conn, id)?.ok_or_else(|| Error::Corrupt {
            what: TABLE.into(),
            detail: format!("node {id} (level {level}, index {index}) is missing"),
        })
    }
}

/// Complete subtrees computed from the log rows (one read of the subtree's leaves each).
pub struct LogNodes<'c> {
    conn: &'c Connection,
}

impl merkle::Nodes for LogNodes<'_> {
    type Error = Error;
    fn node(&mut self, level: u32, index: u64) -> Result<Hash, Error> {
        let (lo, width) = (index << level, 1u64 << level);
        let mut b = Builder::new();
        let mut at = lo;
        'read: while at < lo + width {
            let take = (CHUNK as u64).min(lo + width - at) as i64;
            let chunk = entries_from(self.conn, at as i64, take)?;
            let got = chunk.len();
            for e in chunk {
                if e.header.entry_index != at as i64 {
                    break 'read;
                }
                b.push(leaf_hash(&e), |_, _| {});
                at += 1;
            }
            if (got as i64) < take {
                break;
            }
        }
        if b.size() != width {
            return Err(Error::Corrupt {
                what: "log".into(),
                detail: format!(
                    "log entries {lo}..{} are not all present: the tree cannot be computed",
                    lo + width
                ),
            });
        }
        Ok(b.root())
    }
}

/// Where a reader takes nodes for a tree of `size` leaves: the table when its state is
/// trusted and covers `size`, else the log.
pub enum Source<'c> {
    /// [`TableNodes`].
    Table(TableNodes<'c>),
    /// [`LogNodes`].
    Log(LogNodes<'c>),
}

impl merkle::Nodes for Source<'_> {
    type Error = Error;
    fn node(&mut self, level: u32, index: u64) -> Result<Hash, Error> {
        match self {
            Source::Table(t) => t.node(level, index),
            Source::Log(l) => l.node(level, index),
        }
    }
}

/// The node source for a tree of `size` leaves (see [`Source`]).
///
/// # Errors
/// SQLite errors.
pub fn source(conn: &Connection, size: u64) -> Result<Source<'_>, Error> {
    Ok(match state(conn)? {
        State::Trusted { size: have, .. } if have >= size => Source::Table(TableNodes { conn }),
        _ => Source::Log(LogNodes { conn }),
    })
}

/// Why a proof against a checkpoint was not made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refused {
    /// The entry or size is outside the checkpoint's tree or the log (exit 1: nothing to
    /// prove).
    Outside(String),
    /// The store's log does not match the checkpoint (exit 3: history differs).
    Mismatch(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Outside(s) | Refused::Mismatch(s) => f.write_str(s),
        }
    }
}

/// Entry `index`'s inclusion proof in the tree `cp` names, checked against `cp`'s root with
/// the leaf recomputed from the entry's row before it is returned: `(entry, audit path)`.
///
/// # Errors
/// SQLite errors; [`Refused`] (inner) for an entry outside the tree or a log that does not
/// match the checkpoint.
pub fn inclusion(
    conn: &Connection,
    index: u64,
    cp: &crate::tlog::checkpoint::Checkpoint,
) -> Result<Result<(LogEntry, Vec<Hash>), Refused>, Error> {
    if index >= cp.size {
        return Ok(Err(Refused::Outside(format!(
            "entry {index} is not in the checkpoint's tree of {} entries",
            cp.size
        ))));
    }
    let have = log_size(conn)?;
    if have < cp.size {
        return Ok(Err(Refused::Mismatch(format!(
            "the checkpoint covers {} entries; this store's log has {have} from index 0 (truncated, or not the log the checkpoint signed)",
            cp.size
        ))));
    }
    let Some(entry) = super::log_entry_in(conn, index as i64)? else {
        return Ok(Err(Refused::Outside(format!("no log entry {index}"))));
    };
    let mut src = source(conn, cp.size)?;
    let path = match merkle::inclusion_proof(&mut src, index, cp.size)? {
        Ok(p) => p,
        Err(e) => return Ok(Err(Refused::Outside(e.to_string()))),
    };
    if let Err(e) = merkle::verify_inclusion(index, cp.size, &leaf_hash(&entry), &path, &cp.root) {
        return Ok(Err(Refused::Mismatch(format!(
            "this store's log does not match the checkpoint ({} entries, root {}): {e}",
            cp.size,
            hex::encode(cp.root)
        ))));
    }
    Ok(Ok((entry, path)))
}

/// The consistency proof from the tree `old` names to the one `new` names, checked against
/// both roots before it is returned.
///
/// # Errors
/// SQLite errors; [`Refused`] (inner) for sizes outside the log, or a log that does not
/// extend `old` into `new`.
pub fn consistency(
    conn: &Connection,
    old: &crate::tlog::checkpoint::Checkpoint,
    new: &crate::tlog::checkpoint::Checkpoint,
) -> Result<Result<Vec<Hash>, Refused>, Error> {
    if old.size > new.size {
        return Ok(Err(Refused::Outside(format!(
            "the old checkpoint ({} entries) is larger than the new one ({})",
            old.size, new.size
        ))));
    }
    let have = log_size(conn)?;
    if have < new.size {
        return Ok(Err(Refused::Mismatch(format!(
            "the checkpoint covers {} entries; this store's log has {have} from index 0",
            new.size
        ))));
    }
    let mut src = source(conn, new.size)?;
    let proof = match merkle::consistency_proof(&mut src, old.size, new.size)? {
        Ok(p) => p,
        Err(e) => return Ok(Err(Refused::Outside(e.to_string()))),
    };
    let ours_old = merkle::root(&mut src, old.size)?;
    let ours_new = merkle::root(&mut src, new.size)?;
    for (cp, ours) in [(old, ours_old), (new, ours_new)] {
        if ours != cp.root {
            return Ok(Err(Refused::Mismatch(format!(
                "this store's first {} entries hash to root {}, not the checkpoint's {}: the history was rewritten or forked",
                cp.size,
                hex::encode(ours),
                hex::encode(cp.root)
            ))));
        }
    }
    if let Err(e) = merkle::verify_consistency(old.size, new.size, &old.root, &new.root, &proof) {
        return Ok(Err(Refused::Mismatch(e.to_string())));
    }
    Ok(Ok(proof))
}

/// What [`check`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    /// Under a trusted state: nodes that differ from the log's tree (first 10 as `(id,
    /// reason)`), and how many.
    pub differing: Vec<(u64, String)>,
    /// How many nodes differ in all.
    pub differing_count: u64,
    /// Why the table is not used (a warning), when its state is untrusted.
    pub untrusted: Option<String>,
    /// Leaves the table holds (trusted state only).
    pub size: u64,
    /// Leaves the log has (from index 0 to its first gap or end).
    pub log_size: u64,
}

/// Recompute the tree from the log in one pass and compare it with the table (module docs).
/// A store without the tables has nothing to compare.
///
/// # Errors
/// SQLite errors.
pub fn check(conn: &Connection) -> Result<Checked, Error> {
    let mut out = Checked::default();
    let size = match state(conn)? {
        State::Absent => {
            out.log_size = log_size(conn)?;
            return Ok(out);
        }
        State::Untrusted(why) => {
            out.untrusted = Some(why);
            out.log_size = log_size(conn)?;
            return Ok(out);
        }
        State::Trusted { size, .. } => size,
    };
    out.size = size;
    let count = merkle::stored_count(size);
    let mut table = conn.prepare("SELECT id, hash FROM world_merkle ORDER BY id")?;
    let mut rows = table.query([])?;
    let mut b = Builder::new();
    let mismatch = |id: u64, why: String, out: &mut Checked| {
        out.differing_count += 1;
        if out.differing.len() < 10 {
            out.differing.push((id, why));
        }
    };
    let mut pending: Vec<(u64, u32, u64, Hash)> = Vec::new();
    let leaves = for_each_leaf(conn, None, |i, h| {
        b.push(h, |(level, index), hash| {
            let id = merkle::stored_index(level, index);
            if id < count {
                pending.push((id, level, index, *hash));
            }
        });
        for (id, level, index, want) in pending.drain(..) {
            let row = rows.next()?;
            let got: Option<(i64, Vec<u8>)> = match row {
                Some(r) => Some((r.get(0)?, r.get(1)?)),
                None => None,
            };
            match got {
                Some((gid, hash)) if gid as u64 == id => {
                    if blob32(hash) != Some(want) {
                        mismatch(
                            id,
                            format!(
                                "{TABLE} node {id} (level {level}, index {index}, leaf {i}) differs from the tree of the log's entries"
                            ),
                            &mut out,
                        );
                    }
                }
                _ => mismatch(
                    id,
                    format!("{TABLE} has no row {id} where the log's tree has a node"),
                    &mut out,
                ),
            }
        }
        Ok(())
    })?;
    out.log_size = leaves;
    if leaves < size {
        mismatch(
            count,
            format!("{TABLE} holds {size} leaves; the log has {leaves}"),
            &mut out,
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::schema::{self, Mode};

    fn store(n: i64) -> Connection {
        let c = Connection::open_in_memory().expect("memory");
        schema::open(&c, ":memory:", Mode::Writable).expect("schema");
        for i in 0..n {
            insert(&c, i, &format!("e{i}"));
        }
        c
    }

    fn entry(i: i64, tag: &str) -> LogEntry {
        let h = |s: &str| crate::encoding::HashRef::of(s.as_bytes()).to_string();
        LogEntry {
            header: super::super::Header {
                entry_index: i,
                semantics_epoch: 1,
                transition_fn: h("f"),
                interpreter: h("i"),
                prev_entry_hash: h(&format!("p{i}")),
                written_by: "client:test".into(),
            },
            entry_hash: h(tag),
            transition_ref: h(&format!("t{tag}")),
        }
    }

    fn insert(c: &Connection, i: i64, tag: &str) {
        super::super::rows::insert_log_entry(c, &entry(i, tag)).expect("insert");
    }

    fn memory(n: i64) -> merkle::MemoryTree {
        merkle::MemoryTree::from_leaves((0..n).map(|i| leaf_hash(&entry(i, &format!("e{i}")))))
    }

    #[test]
    fn each_insert_extends_the_tree_and_check_agrees() {
        let c = store(37);
        assert_eq!(
            state(&c).expect("state"),
            State::Trusted {
                size: 37,
                last: leaf_hash(&entry(36, "e36"))
            }
        );
        let mut mem = memory(37);
        for size in [1u64, 2, 5, 16, 37] {
            let mut t = source(&c, size).expect("source");
            assert!(matches!(t, Source::Table(_)));
            assert_eq!(
                merkle::root(&mut t, size).ok(),
                merkle::root(&mut mem, size).ok()
            );
        }
        let checked = check(&c).expect("check");
        assert_eq!(
            (checked.differing_count, checked.size, checked.log_size),
            (0, 37, 37)
        );
        let (n, roots) = roots_from_log(&c, &[0, 5, 37, 40]).expect("roots");
        assert_eq!(n, 37);
        assert_eq!(roots.get(&5), merkle::root(&mut mem, 5).ok().as_ref());
        assert_eq!(roots.get(&37), Some(&mem.root()));
        assert_eq!(roots.get(&40), None);
    }

    /// An edited node under a trusted state is what proofs would use: `check` reports it.
    #[test]
    fn an_edited_node_is_reported() {
        let c = store(20);
        c.execute(
            "UPDATE world_merkle SET hash = zeroblob(32) WHERE id = 7",
            [],
        )
        .expect("edit");
        let checked = check(&c).expect("check");
        assert_eq!(checked.differing_count, 1, "{checked:?}");
        assert_eq!(checked.differing[0].0, 7);
    }

    /// A log rewritten under the table (an entry replaced) leaves the anchor alone, so the
    /// table is trusted and `check` reports the differing leaf; a truncated log breaks the
    /// anchor, and the next insert rebuilds from the log.
    #[test]
    fn rewritten_and_truncated_logs() {
        let c = store(12);
        c.execute(
            "UPDATE log_entries SET transition_ref = ?1 WHERE entry_index = 4",
            [crate::encoding::HashRef::of(b"forged").to_string()],
        )
        .expect("rewrite");
        let checked = check(&c).expect("check");
        assert!(checked.differing_count >= 1);

        c.execute("DELETE FROM log_entries WHERE entry_index >= 8", [])
            .expect("truncate");
        assert!(matches!(state(&c).expect("state"), State::Untrusted(_)));
        assert!(check(&c).expect("check").untrusted.is_some());
        insert(&c, 8, "other8");
        let State::Trusted { size, .. } = state(&c).expect("state") else {
            panic!("not rebuilt");
        };
        assert_eq!(size, 9);
        assert_eq!(check(&c).expect("check").differing_count, 0);
    }

    /// Entries another writer appended (no tree rows) are caught up by the next insert, a
    /// bounded stretch at a time; the log's own nodes stand in meanwhile.
    #[test]
    fn other_writers_entries_are_caught_up() {
        let c = store(3);
        c.execute_batch("DROP TABLE world_merkle; DROP TABLE world_merkle_state;")
            .expect("drop");
        for i in 3..30 {
            insert(&c, i, &format!("e{i}"));
        }
        assert_eq!(state(&c).expect("state"), State::Absent);
        c.execute_batch(DDL).expect("recreate");
        let mut log = source(&c, 30).expect("source");
        assert!(matches!(log, Source::Log(_)));
        let mut mem = memory(30);
        assert_eq!(
            merkle::root(&mut log, 30).ok(),
            merkle::root(&mut mem, 30).ok()
        );
        assert_eq!(catch_up(&c, Some(10)).expect("catch up"), Some(10));
        insert(&c, 30, "e30");
        assert_eq!(catch_up(&c, None).expect("catch up"), Some(31));
        assert_eq!(check(&c).expect("check").differing_count, 0);
    }

    #[test]
    fn a_gap_stops_the_tree() {
        let c = store(0);
        insert(&c, 5, "e5");
        insert(&c, 6, "e6");
        assert_eq!(
            state(&c).expect("state"),
            State::Trusted {
                size: 0,
                last: [0; 32]
            }
        );
        assert_eq!(log_size(&c).expect("size"), 0);
        let c = store(4);
        insert(&c, 6, "e6");
        assert_eq!(log_size(&c).expect("size"), 4);
    }
}
