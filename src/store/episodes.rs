//! The derived table `world_records_by_episode` (spec README "Extra state"; DEC-PERF-8): which
//! effectful invocation records belong to an episode, so `world effects --episode` reads one
//! episode's records instead of every record of the store.
//!
//! Effect records carry no episode: an episode's effects are found through the v2 invocation
//! records that name them (their `episodeId`) and through the journal's effect outcomes
//! (`effect:<episode>:<ordinal>`, a range of the journal's `(invocation_id, kind)` index, no
//! table needed). This module indexes the first: one row `(episode_id, record_ref)` per
//! `world/invocation-record/v2` object that decodes strictly and names at least one effect
//! record.
//!
//! The table is valid up to an `objects` rowid: the state row `world_records_by_episode_state`
//! (`id = 1`) holds that rowid (`valid_to_rowid`: every object with a rowid up to it is
//! indexed), the `hash_ref` of the object at that rowid (the anchor) and a sha256 checksum over
//! both. Every commit [`catch_up`]s inside its own transaction, folding only the objects after
//! the state's rowid (including objects another writer, such as the reference daemon, added).
//! A reader ([`records_of`]) uses the table only when the checksum holds and the anchor is still
//! the object at that rowid, and folds the objects after it itself; otherwise it reads every v2
//! record through the reference's `objects_by_semantic_id` index, as before the table existed.
//! Each row a reader uses is re-read and must decode to a record of that episode, so an added
//! row can never put a record into the wrong episode. A deleted row (or a moved
//! `valid_to_rowid`) is what [`check`] finds: `world verify` recomputes the whole table. The
//! reference ignores both tables; dropping them loses nothing (the next commit rebuilds).

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension};
use sha2::{Digest, Sha256};

use super::records::{InvocationRecord, INVOCATION_RECORD_V2};
use super::Error;

/// The table's name.
pub const TABLE: &str = "world_records_by_episode";
/// The state table's name.
pub const STATE_TABLE: &str = "world_records_by_episode_state";

/// The two tables' DDL, run on every writable open (`schema::apply_ddl`).
pub const DDL: &str = "CREATE TABLE IF NOT EXISTS world_records_by_episode (
  episode_id TEXT NOT NULL,
  record_ref TEXT NOT NULL,
  PRIMARY KEY (episode_id, record_ref)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS world_records_by_episode_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  valid_to_rowid INTEGER NOT NULL,
  anchor_ref TEXT NOT NULL,
  checksum TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS world_records_by_episode_sums (
  episode_id TEXT PRIMARY KEY,
  n INTEGER NOT NULL,
  digest TEXT NOT NULL,
  checksum TEXT NOT NULL
) WITHOUT ROWID";

/// The per-episode sums table's name: `(episode_id, n, digest, checksum)`, the number of the
/// episode's rows, the XOR of their refs' sha256 and a checksum over the three (DEC-PERF-8a).
pub const SUMS_TABLE: &str = "world_records_by_episode_sums";

/// Hex sha256 over the state row's columns under a domain tag. The tag's `v2` (DEC-PERF-8a)
/// makes every state written before the per-episode sums existed untrusted, so the next
/// commit rebuilds the table and its sums.
fn checksum(valid_to_rowid: i64, anchor: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"world/records-by-episode/v2\n");
    for part in [valid_to_rowid.to_string().as_str(), anchor] {
        h.update((part.len() as u64).to_be_bytes());
        h.update(part.as_bytes());
    }
    hex::encode(h.finalize())
}

/// The order-independent digest of a set of refs: the XOR of their sha256, 32 bytes.
type Digest32 = [u8; 32];

/// `acc ^= sha256(reference)`.
fn fold_ref(acc: &mut Digest32, reference: &str) {
    let d = Sha256::digest(reference.as_bytes());
    for (a, b) in acc.iter_mut().zip(d.iter()) {
        *a ^= b;
    }
}

/// Hex sha256 over one sums row's columns under a domain tag.
fn sums_checksum(episode: &str, n: i64, digest: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"world/records-by-episode-sums/v1\n");
    for part in [episode, n.to_string().as_str(), digest] {
        h.update((part.len() as u64).to_be_bytes());
        h.update(part.as_bytes());
    }
    hex::encode(h.finalize())
}

/// The stored sums of `episode` when its checksum holds: `(n, digest)`; `(0, zero)` when the
/// episode has no row; `None` when the row was edited.
fn stored_sums(conn: &Connection, episode: &str) -> Result<Option<(i64, Digest32)>, Error> {
    let row: Option<(i64, String, String)> = conn
        .prepare_cached(
            "SELECT n, digest, checksum FROM world_records_by_episode_sums WHERE episode_id = ?1",
        )?
        .query_row([episode], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    let Some((n, digest, sum)) = row else {
        return Ok(Some((0, [0; 32])));
    };
    if sums_checksum(episode, n, &digest) != sum {
        return Ok(None);
    }
    let mut out = [0u8; 32];
    match hex::decode(&digest) {
        Ok(bytes) if bytes.len() == 32 => out.copy_from_slice(&bytes),
        _ => return Ok(None),
    }
    Ok(Some((n, out)))
}

/// Write `episode`'s sums row.
fn put_sums(tx: &Connection, episode: &str, n: i64, digest: &Digest32) -> Result<(), Error> {
    let hexd = hex::encode(digest);
    tx.prepare_cached(
        "INSERT INTO world_records_by_episode_sums (episode_id, n, digest, checksum)
         VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT(episode_id) DO UPDATE SET n = excluded.n, digest = excluded.digest,
           checksum = excluded.checksum",
    )?
    .execute(rusqlite::params![
        episode,
        n,
        hexd,
        sums_checksum(episode, n, &hexd)
    ])?;
    Ok(())
}

/// The refs of `episode`'s rows as stored, and whether they agree with its sums row (count
/// and digest): a deleted, added or moved row makes them disagree.
fn episode_rows(conn: &Connection, episode: &str) -> Result<(Vec<String>, bool), Error> {
    let refs: Vec<String> = conn
        .prepare_cached("SELECT record_ref FROM world_records_by_episode WHERE episode_id = ?1")?
        .query_map([episode], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut digest = [0u8; 32];
    for r in &refs {
        fold_ref(&mut digest, r);
    }
    let agree =
        stored_sums(conn, episode)?.is_some_and(|(n, d)| n == refs.len() as i64 && d == digest);
    Ok((refs, agree))
}

/// Whether the three tables exist on `conn` (a store no writable `world` opened yet lacks them).
fn present(conn: &Connection) -> Result<bool, Error> {
    let n: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN (?1, ?2, ?3)",
        [TABLE, STATE_TABLE, SUMS_TABLE],
        |r| r.get(0),
    )?;
    Ok(n == 3)
}

/// Whether readers use the state row.
enum Trust {
    /// Valid up to this `objects` rowid.
    Valid(i64),
    /// Not used, and why.
    Invalid(String),
}

/// Whether the state row is used, and up to which rowid.
fn trusted_state(conn: &Connection) -> Result<Trust, Error> {
    let row: Option<(i64, String, String)> = conn
        .query_row(
            "SELECT valid_to_rowid, anchor_ref, checksum FROM world_records_by_episode_state
              WHERE id = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    let Some((rowid, anchor, sum)) = row else {
        return Ok(Trust::Invalid("no state row".into()));
    };
    if checksum(rowid, &anchor) != sum {
        return Ok(Trust::Invalid(
            "the state row's checksum does not hold (edited)".into(),
        ));
    }
    let at: Option<String> = conn
        .query_row(
            "SELECT hash_ref FROM objects WHERE rowid = ?1",
            [rowid],
            |r| r.get(0),
        )
        .optional()?;
    if at.as_deref() != Some(anchor.as_str()) {
        return Ok(Trust::Invalid(format!(
            "the anchor {anchor} is no longer the object at rowid {rowid} (a replaced or rewritten objects table)"
        )));
    }
    Ok(Trust::Valid(rowid))
}

/// The episode of a v2 record payload when it decodes strictly and names an effect record.
fn indexed_episode(payload: &[u8]) -> Option<String> {
    let r = InvocationRecord::decode(INVOCATION_RECORD_V2, payload).ok()?;
    if r.effects.as_ref().is_some_and(|e| !e.is_empty()) {
        Some(r.episode_id)
    } else {
        None
    }
}

/// Call `f(rowid, hash_ref, payload)` for every v2 record with `rowid > after`, in rowid order.
///
/// Walks `objects` by rowid (the tail a writer or reader has not folded yet is at the end) and
/// tests the semantic id on each row; payloads of other kinds are not read.
fn v2_after(
    conn: &Connection,
    after: i64,
    mut f: impl FnMut(i64, String, &[u8]),
) -> Result<(), Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT rowid, hash_ref, payload FROM objects
          WHERE rowid > ?1 AND +semantic_id = ?2 ORDER BY rowid",
    )?;
    let mut rows = stmt.query(rusqlite::params![after, INVOCATION_RECORD_V2])?;
    while let Some(r) = rows.next()? {
        let payload = r
            .get_ref(2)?
            .as_blob_or_null()
            .ok()
            .flatten()
            .unwrap_or(&[]);
        f(r.get(0)?, r.get(1)?, payload);
    }
    Ok(())
}

/// Bring the table up to the last object, inside the caller's write transaction `tx`.
///
/// Folds the v2 records after the trusted state's rowid; a state that is absent, edited or
/// anchored to an object that moved is discarded and the table rebuilt from every object. A
/// store without the tables (never opened writable by this version) is left alone.
///
/// # Errors
/// SQLite errors; the caller's transaction then rolls back with everything else.
pub fn catch_up(tx: &Connection) -> Result<(), Error> {
    if !present(tx)? {
        return Ok(());
    }
    let from = match trusted_state(tx)? {
        Trust::Valid(rowid) => rowid,
        Trust::Invalid(_) => {
            tx.execute("DELETE FROM world_records_by_episode", [])?;
            tx.execute("DELETE FROM world_records_by_episode_sums", [])?;
            0
        }
    };
    let last: Option<(i64, String)> = tx
        .query_row(
            "SELECT rowid, hash_ref FROM objects ORDER BY rowid DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let Some((last, anchor)) = last else {
        return Ok(());
    };
    if last == from {
        return Ok(());
    }
    let mut found = Vec::new();
    v2_after(tx, from, |_, hash, payload| {
        if let Some(ep) = indexed_episode(payload) {
            found.push((ep, hash));
        }
    })?;
    let mut put = tx.prepare_cached(
        "INSERT OR IGNORE INTO world_records_by_episode (episode_id, record_ref) VALUES (?1, ?2)",
    )?;
    let mut added: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (ep, hash) in &found {
        if put.execute([ep, hash])? == 1 {
            added.entry(ep.as_str()).or_default().push(hash.as_str());
        }
    }
    drop(put);
    // Each touched episode's sums move with its rows, incrementally (a commit never reads an
    // episode's other rows: its cost stays flat). An edited sums row is recomputed from the
    // objects; rows deleted or added behind the sums' back make readers of that episode fall
    // back to the full read, and `world verify` reports them.
    for (ep, hashes) in added {
        let Some((n, mut digest)) = stored_sums(tx, ep)? else {
            rebuild_episode(tx, ep, last)?;
            continue;
        };
        for h in &hashes {
            fold_ref(&mut digest, h);
        }
        put_sums(tx, ep, n + hashes.len() as i64, &digest)?;
    }
    tx.execute(
        "INSERT INTO world_records_by_episode_state (id, valid_to_rowid, anchor_ref, checksum)
         VALUES (1, ?1, ?2, ?3)
         ON CONFLICT(id) DO UPDATE SET valid_to_rowid = excluded.valid_to_rowid,
           anchor_ref = excluded.anchor_ref, checksum = excluded.checksum",
        rusqlite::params![last, anchor, checksum(last, &anchor)],
    )?;
    Ok(())
}

/// Recompute `episode`'s rows and sums from every v2 record up to `upto` (a full walk of the
/// records: only after an edit).
fn rebuild_episode(tx: &Connection, episode: &str, upto: i64) -> Result<(), Error> {
    tx.execute(
        "DELETE FROM world_records_by_episode WHERE episode_id = ?1",
        [episode],
    )?;
    let mut want = Vec::new();
    v2_after(tx, 0, |rowid, hash, payload| {
        if rowid <= upto && indexed_episode(payload).as_deref() == Some(episode) {
            want.push(hash);
        }
    })?;
    let mut digest = [0u8; 32];
    for h in &want {
        tx.prepare_cached(
            "INSERT OR IGNORE INTO world_records_by_episode (episode_id, record_ref) VALUES (?1, ?2)",
        )?
        .execute([episode, h.as_str()])?;
        fold_ref(&mut digest, h);
    }
    put_sums(tx, episode, want.len() as i64, &digest)
}

/// Every effectful v2 invocation record of `episode`: `record_ref → decoded record`, ordered
/// by ref (the order of a full scan through `objects_by_semantic_id`).
///
/// Uses the table when its state is trusted and the episode's rows agree with its sums row
/// (plus the objects after it), else reads every v2 record. Each record returned was read from `objects` and decodes to a record of `episode`
/// naming at least one effect record. Read-only: nothing is written.
///
/// # Errors
/// SQLite errors.
pub fn records_of(
    conn: &Connection,
    episode: &str,
) -> Result<BTreeMap<String, InvocationRecord>, Error> {
    let mut out = BTreeMap::new();
    let keep = |out: &mut BTreeMap<String, InvocationRecord>, hash: String, payload: &[u8]| {
        if let Ok(r) = InvocationRecord::decode(INVOCATION_RECORD_V2, payload) {
            if r.episode_id == episode && r.effects.as_ref().is_some_and(|e| !e.is_empty()) {
                out.insert(hash, r);
            }
        }
    };
    let from = match present(conn)? {
        true => match trusted_state(conn)? {
            // The episode's rows are used only when they agree with its sums row (a deleted,
            // added or moved row does not): an edited table is never trusted.
            Trust::Valid(rowid) if episode_rows(conn, episode)?.1 => Some(rowid),
            _ => None,
        },
        false => None,
    };
    let Some(from) = from else {
        let mut stmt = conn.prepare_cached(
            "SELECT hash_ref, payload FROM objects WHERE semantic_id = ?1 ORDER BY hash_ref",
        )?;
        let mut rows = stmt.query([INVOCATION_RECORD_V2])?;
        while let Some(r) = rows.next()? {
            let payload = r
                .get_ref(1)?
                .as_blob_or_null()
                .ok()
                .flatten()
                .unwrap_or(&[]);
            keep(&mut out, r.get(0)?, payload);
        }
        return Ok(out);
    };
    // `+o.semantic_id`: the episode's rows drive the join, never the semantic index (which
    // would visit every record of the store).
    let mut stmt = conn.prepare_cached(
        "SELECT o.hash_ref, o.payload FROM world_records_by_episode t
           JOIN objects o ON o.hash_ref = t.record_ref
          WHERE t.episode_id = ?1 AND +o.semantic_id = ?2",
    )?;
    let mut rows = stmt.query([episode, INVOCATION_RECORD_V2])?;
    while let Some(r) = rows.next()? {
        let payload = r
            .get_ref(1)?
            .as_blob_or_null()
            .ok()
            .flatten()
            .unwrap_or(&[]);
        keep(&mut out, r.get(0)?, payload);
    }
    v2_after(conn, from, |_, hash, payload| keep(&mut out, hash, payload))?;
    Ok(out)
}

/// One finding of [`check`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// `true`: readers use this table (so the difference changes answers); `false`: the state
    /// is not trusted and the next commit rebuilds the table.
    pub trusted: bool,
    /// What differs.
    pub reason: String,
}

/// Recompute the table from every object and compare (for `world verify`): a trusted table
/// that differs from the recomputation up to its rowid is a [`Problem`] with `trusted`; a
/// state readers would not use is one without. A store without the tables has none.
///
/// # Errors
/// SQLite errors.
pub fn check(conn: &Connection) -> Result<Vec<Problem>, Error> {
    if !present(conn)? {
        return Ok(Vec::new());
    }
    let has_state: bool = conn
        .query_row(
            "SELECT count(*) FROM world_records_by_episode_state",
            [],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n > 0)?;
    let upto = match trusted_state(conn)? {
        Trust::Valid(rowid) => rowid,
        Trust::Invalid(reason) if has_state => {
            return Ok(vec![Problem {
                trusted: false,
                reason: format!("{TABLE}: {reason}; it is rebuilt by the next commit"),
            }])
        }
        // No state row: nothing was indexed yet (readers scan); rows without it are unused.
        Trust::Invalid(_) => return Ok(Vec::new()),
    };
    let mut want = std::collections::BTreeSet::new();
    v2_after(conn, 0, |rowid, hash, payload| {
        if rowid <= upto {
            if let Some(ep) = indexed_episode(payload) {
                want.insert((ep, hash));
            }
        }
    })?;
    let mut stmt = conn.prepare("SELECT episode_id, record_ref FROM world_records_by_episode")?;
    let have: std::collections::BTreeSet<(String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    // Each episode's sums row must be what its wanted rows give.
    let mut sums: BTreeMap<&str, (i64, Digest32)> = BTreeMap::new();
    for (ep, r) in &want {
        let e = sums.entry(ep.as_str()).or_insert((0, [0; 32]));
        e.0 += 1;
        fold_ref(&mut e.1, r);
    }
    let stored: Vec<String> = conn
        .prepare("SELECT episode_id FROM world_records_by_episode_sums")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut bad_sums: Vec<&str> = stored
        .iter()
        .map(String::as_str)
        .filter(|ep| !sums.contains_key(ep))
        .collect();
    for (ep, want_sums) in &sums {
        if stored_sums(conn, ep)? != Some(*want_sums) {
            bad_sums.push(ep);
        }
    }
    bad_sums.sort_unstable();
    for ep in bad_sums.iter().take(10) {
        out.push(Problem {
            trusted: true,
            reason: format!(
                "{SUMS_TABLE}: the sums of episode {ep} are not what its records give (readers of that episode fall back to reading every record); drop the tables to have the next commit rebuild them"
            ),
        });
    }
    for (ep, r) in want.difference(&have).take(10) {
        out.push(Problem {
            trusted: true,
            reason: format!(
                "{TABLE}: record {r} of episode {ep} is missing (readers of episode {ep} fall back to reading every record); drop the table to have the next commit rebuild it"
            ),
        });
    }
    for (ep, r) in have.difference(&want).take(10) {
        out.push(Problem {
            trusted: true,
            reason: format!(
                "{TABLE}: row ({ep}, {r}) names no effectful record of that episode (readers skip it); drop the table to have the next commit rebuild it"
            ),
        });
    }
    Ok(out)
}

/// The effect outcomes of `episode` in journal order: `(invocation id, outcome payload)`.
///
/// An effect's journal id is `effect:<episode>:<ordinal>` (the ordinal holds no `:`), so the
/// episode's rows are one range of the journal's `(invocation_id, kind)` index; ids of
/// episodes that merely start with `episode:` are dropped. Only outcomes whose object is a
/// `world/effect-outcome/v1` are returned, as the full listing reads them.
///
/// # Errors
/// SQLite errors.
pub fn effect_outcomes_of(
    conn: &Connection,
    episode: &str,
) -> Result<Vec<(String, Vec<u8>)>, Error> {
    // `+o.semantic_id` keeps the journal range driving the join (not every effect outcome
    // object of the store through `objects_by_semantic_id`).
    let lo = format!("effect:{episode}:");
    // ';' is the byte after ':': every id with the prefix sorts in [lo, hi).
    let hi = format!("effect:{episode};");
    let mut stmt = conn.prepare_cached(
        "SELECT j.invocation_id, o.payload FROM journal j
           JOIN objects o ON o.hash_ref = j.object_ref
          WHERE j.invocation_id >= ?1 AND j.invocation_id < ?2 AND j.kind = 'outcome'
            AND +o.semantic_id = ?3
          ORDER BY j.seq",
    )?;
    let rows: Vec<(String, Vec<u8>)> = stmt
        .query_map(
            rusqlite::params![lo, hi, super::journal::EFFECT_OUTCOME],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?
        .collect::<Result<_, _>>()?;
    Ok(rows
        .into_iter()
        .filter(|(id, _)| {
            id.strip_prefix("effect:")
                .and_then(|r| r.rsplit_once(':'))
                .is_some_and(|(ep, _)| ep == episode)
        })
        .collect())
}
