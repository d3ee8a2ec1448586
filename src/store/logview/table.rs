//! The derived table `world_log_view` (spec README "Extra state"; DEC-PERF-11): per log entry
//! the columns `world log`'s table prints beyond the log row itself — invocation id, episode,
//! transition, `ok`, logical time — so the table reads one compact row per entry instead of
//! the entry's record, output and commit intent (DEC-PERF-9: 0.87 pages per entry against
//! 0.10 for `--json`).
//!
//! **Written** by [`record`], which [`super::super::rows::insert_log_entry`] (the one writer
//! of log rows) calls in the transaction that inserts the entry, so commits and episode
//! bundles both keep it; and by [`catch_up`], which commits and bundles call at the end of
//! their transaction to fill the rows of entries another writer (the reference daemon, which
//! ignores the table) appended, or that a store had before the table existed — at most
//! [`CATCH_UP`] entries per commit, from the state row's `next_index` on. A row is written
//! only when its columns are final: every object and journal row they depend on is stored
//! (objects and the journal are append-only and content-addressed, so nothing appended later
//! can change them). An entry naming an object not stored gets no row.
//!
//! **Read** by [`Cursor`] in index order next to the log scan. Each row carries a seal: the
//! first 8 bytes of a sha256 over the entry's index, entry hash, transition ref and the
//! columns. A row is used only when its seal holds for the log row it is read with; any other
//! entry (no row, an edited row, a row of an entry since replaced) is decoded from what it
//! names, as before the table existed. Readers never write and need no lock.
//!
//! **Checked** by [`check`] (`world verify`): every row is compared with what the entry's
//! objects decode to. A row whose seal holds but whose columns differ is what readers would
//! print (a deliberate edit that recomputed the seal): a failure. A row whose seal does not
//! hold, or of no entry, is never used: a warning. The reference ignores both tables;
//! dropping them loses nothing (readers decode, the next writable open recreates them and
//! commits fill them again).

use std::collections::VecDeque;

use rusqlite::{Connection, OptionalExtension};
use sha2::{Digest, Sha256};

use super::{Decoded, Reads};
use crate::store::Error;

/// The table's name.
pub const TABLE: &str = "world_log_view";
/// The writers' state table's name.
pub const STATE_TABLE: &str = "world_log_view_state";

/// The two tables' DDL, run on every writable open (`schema::apply_ddl`). `ok` is 1/0, NULL
/// for none; `logical_time` Unix seconds; `seal` the row's seal (module docs) as a signed
/// 64-bit integer. The state row's `next_index` is where [`catch_up`] continues: a hint for
/// writers only, never read by readers.
pub const DDL: &str = "CREATE TABLE IF NOT EXISTS world_log_view (
  entry_index INTEGER PRIMARY KEY,
  invocation_id TEXT,
  episode_id TEXT,
  transition TEXT,
  ok INTEGER,
  logical_time INTEGER,
  seal INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS world_log_view_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  next_index INTEGER NOT NULL
)";

/// Entries [`catch_up`] examines per commit: bounds the one-time cost of filling a long log
/// another writer (or an older `world`) left without rows; later commits continue.
pub const CATCH_UP: u64 = 10_000;

/// Entries examined per read of [`catch_up`] (its memory bound when unbounded).
const CHUNK: i64 = 4_096;

/// View rows read per step of a [`Cursor`].
#[cfg(not(test))]
const BATCH: i64 = 512;
#[cfg(test)]
const BATCH: i64 = 3;

fn put_text(h: &mut Sha256, v: Option<&str>) {
    match v {
        None => h.update([0u8]),
        Some(s) => {
            h.update([1u8]);
            h.update((s.len() as u64).to_be_bytes());
            h.update(s.as_bytes());
        }
    }
}

/// The seal of a row: the first 8 bytes of sha256 over a domain tag, the entry's index, entry
/// hash and transition ref, and the columns (each length-prefixed, absence tagged).
fn seal(index: i64, entry_hash: &str, transition_ref: &str, d: &Decoded) -> i64 {
    let mut h = Sha256::new();
    h.update(b"world/log-view/v1\n");
    h.update(index.to_be_bytes());
    put_text(&mut h, Some(entry_hash));
    put_text(&mut h, Some(transition_ref));
    put_text(&mut h, d.invocation.as_deref());
    put_text(&mut h, d.episode.as_deref());
    put_text(&mut h, d.skill.as_deref());
    h.update([match d.ok {
        None => 0u8,
        Some(false) => 1,
        Some(true) => 2,
    }]);
    match d.time {
        None => h.update([0u8]),
        Some(t) => {
            h.update([1u8]);
            h.update(t.to_be_bytes());
        }
    }
    let out = h.finalize();
    i64::from_be_bytes([
        out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7],
    ])
}

/// Whether both tables exist on `conn` (a store no writable `world` of this version opened
/// yet, or a reference-written one, lacks them).
pub fn present(conn: &Connection) -> Result<bool, Error> {
    let n: i64 = conn
        .prepare_cached(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN (?1, ?2)",
        )?
        .query_row([TABLE, STATE_TABLE], |r| r.get(0))?;
    Ok(n == 2)
}

/// A log row next to its view row, if any: `(entry_index, entry hash, transition ref,
/// (columns, seal))`.
type Joined = (i64, String, String, Option<(Decoded, i64)>);

/// A row as stored: `(entry_index, columns, seal)`.
type Stored = (i64, Decoded, i64);

fn stored(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<(Decoded, i64)> {
    let ok: Option<i64> = r.get(at + 3)?;
    Ok((
        Decoded {
            invocation: r.get(at)?,
            episode: r.get(at + 1)?,
            skill: r.get(at + 2)?,
            ok: ok.map(|v| v != 0),
            time: r.get(at + 4)?,
        },
        r.get(at + 5)?,
    ))
}

fn put(
    tx: &Connection,
    index: i64,
    entry_hash: &str,
    tref: &str,
    d: &Decoded,
) -> Result<(), Error> {
    tx.prepare_cached(
        "INSERT OR REPLACE INTO world_log_view
           (entry_index, invocation_id, episode_id, transition, ok, logical_time, seal)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(rusqlite::params![
        index,
        d.invocation,
        d.episode,
        d.skill,
        d.ok.map(i64::from),
        d.time,
        seal(index, entry_hash, tref, d)
    ])?;
    Ok(())
}

/// Write the row of the entry just inserted (`index`, `entry_hash`, `transition_ref`) inside
/// the caller's write transaction `tx`, when its columns are final (module docs); a store
/// without the tables is left alone.
///
/// # Errors
/// SQLite errors; the caller's transaction then rolls back with everything else.
pub fn record(
    tx: &Connection,
    index: i64,
    entry_hash: &str,
    transition_ref: &str,
) -> Result<(), Error> {
    if !present(tx)? {
        return Ok(());
    }
    let (d, fin) = Reads::lookups(tx).decode_full(transition_ref)?;
    if fin {
        put(tx, index, entry_hash, transition_ref, &d)?;
    }
    Ok(())
}

/// Fill the rows of entries from the state row's `next_index` on (0 without a state row),
/// inside the caller's write transaction `tx`: at most `limit` entries (`None`: to the end of
/// the log), then move `next_index` past the last one examined. An entry whose row exists and
/// whose seal holds is kept; a missing or unsealed row is (re)written when the entry's columns
/// are final, else removed. A store without the tables is left alone.
///
/// # Errors
/// SQLite errors; the caller's transaction then rolls back with everything else.
pub fn catch_up(tx: &Connection, limit: Option<u64>) -> Result<(), Error> {
    if !present(tx)? {
        return Ok(());
    }
    let mut next: i64 = tx
        .query_row(
            "SELECT next_index FROM world_log_view_state WHERE id = 1",
            [],
            |r| r.get(0),
        )
        .optional()?
        .unwrap_or(0);
    let mut left = limit.unwrap_or(u64::MAX);
    let mut reads = Reads::new(tx, false);
    let mut moved = false;
    while left > 0 {
        let take = (CHUNK as u64).min(left) as i64;
        let mut stmt = tx.prepare_cached(
            "SELECT l.entry_index, l.entry_hash_ref, l.transition_ref,
                    v.invocation_id, v.episode_id, v.transition, v.ok, v.logical_time, v.seal
               FROM log_entries l LEFT JOIN world_log_view v ON v.entry_index = l.entry_index
              WHERE l.entry_index >= ?1 ORDER BY l.entry_index LIMIT ?2",
        )?;
        let chunk: Vec<Joined> = stmt
            .query_map(rusqlite::params![next, take], |r| {
                let has: Option<i64> = r.get(8)?;
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    match has {
                        Some(_) => Some(stored(r, 3)?),
                        None => None,
                    },
                ))
            })?
            .collect::<Result<_, _>>()?;
        drop(stmt);
        let n = chunk.len() as i64;
        for (index, entry_hash, tref, row) in chunk {
            if row.is_some_and(|(d, s)| s == seal(index, &entry_hash, &tref, &d)) {
                next = index + 1;
                continue;
            }
            let (d, fin) = reads.decode_full(&tref)?;
            if fin {
                put(tx, index, &entry_hash, &tref, &d)?;
            } else {
                tx.prepare_cached("DELETE FROM world_log_view WHERE entry_index = ?1")?
                    .execute([index])?;
            }
            next = index + 1;
        }
        moved |= n > 0;
        left -= n as u64;
        if n < take {
            break;
        }
    }
    if moved {
        tx.prepare_cached(
            "INSERT INTO world_log_view_state (id, next_index) VALUES (1, ?1)
             ON CONFLICT(id) DO UPDATE SET next_index = excluded.next_index",
        )?
        .execute([next])?;
    }
    Ok(())
}

/// The view rows next to a log scan, read in batches in the scan's direction.
pub(super) struct Cursor<'c> {
    conn: &'c Connection,
    reverse: bool,
    rows: VecDeque<Stored>,
    /// The index after (before, reversed) which the next batch starts; `None` once exhausted.
    after: Option<i64>,
}

impl<'c> Cursor<'c> {
    /// A cursor at `start` (inclusive), or `None` when the store has no view.
    pub(super) fn open(
        conn: &'c Connection,
        start: i64,
        reverse: bool,
    ) -> Result<Option<Cursor<'c>>, Error> {
        if !present(conn)? {
            return Ok(None);
        }
        let after = if reverse {
            start.checked_add(1)
        } else {
            start.checked_sub(1)
        };
        Ok(Some(Cursor {
            conn,
            reverse,
            rows: VecDeque::new(),
            // `start` at the end of the i64 range: a bound just past it.
            after: Some(after.unwrap_or(start)),
        }))
    }

    fn fill(&mut self) -> Result<(), Error> {
        let Some(after) = self.after else {
            return Ok(());
        };
        let sql = if self.reverse {
            "SELECT entry_index, invocation_id, episode_id, transition, ok, logical_time, seal
               FROM world_log_view WHERE entry_index < ?1 ORDER BY entry_index DESC LIMIT ?2"
        } else {
            "SELECT entry_index, invocation_id, episode_id, transition, ok, logical_time, seal
               FROM world_log_view WHERE entry_index > ?1 ORDER BY entry_index ASC LIMIT ?2"
        };
        let mut stmt = self.conn.prepare_cached(sql)?;
        let mut rows = stmt.query(rusqlite::params![after, BATCH])?;
        let mut n = 0;
        while let Some(r) = rows.next()? {
            let index: i64 = r.get(0)?;
            let (d, s) = stored(r, 1)?;
            self.rows.push_back((index, d, s));
            self.after = Some(index);
            n += 1;
        }
        if n < BATCH {
            self.after = None;
        }
        Ok(())
    }

    /// The columns of entry `index` from its view row, when it has one whose seal holds for
    /// this entry hash and transition ref. Calls go in the scan's direction.
    pub(super) fn get(
        &mut self,
        index: i64,
        entry_hash: &str,
        transition_ref: &str,
    ) -> Result<Option<Decoded>, Error> {
        loop {
            if self.rows.is_empty() {
                self.fill()?;
            }
            let Some((at, _, _)) = self.rows.front() else {
                return Ok(None);
            };
            let behind = if self.reverse {
                *at > index
            } else {
                *at < index
            };
            if behind {
                self.rows.pop_front();
                continue;
            }
            if *at != index {
                return Ok(None);
            }
            let Some((_, d, s)) = self.rows.pop_front() else {
                return Ok(None);
            };
            return Ok((s == seal(index, entry_hash, transition_ref, &d)).then_some(d));
        }
    }
}

/// One finding of [`check`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// `true`: readers use this row (its seal holds), so `world log` prints what differs;
    /// `false`: the row is never used.
    pub trusted: bool,
    /// The entry index of the row.
    pub index: i64,
    /// What differs.
    pub reason: String,
}

/// Compare every row with what its entry's objects decode to; at most 10 problems of each kind
/// are returned (see [`check_counted`] for the totals). A store without the tables has none.
///
/// # Errors
/// SQLite errors.
pub fn check(conn: &Connection) -> Result<Vec<Problem>, Error> {
    Ok(check_counted(conn)?.problems)
}

/// What [`check_counted`] found: the first problems of each kind (at most 10 each, trusted
/// ones first) and how many rows of each kind differ in all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Checked {
    /// The first problems (at most 10 trusted, then at most 10 never used).
    pub problems: Vec<Problem>,
    /// Rows readers use whose values differ from their entry's objects.
    pub trusted: u64,
    /// Rows readers never use (no entry, or a seal that does not hold).
    pub unused: u64,
}

/// [`check`] with the number of rows of each kind (for `world verify`'s counts).
///
/// # Errors
/// SQLite errors.
pub fn check_counted(conn: &Connection) -> Result<Checked, Error> {
    if !present(conn)? {
        return Ok(Checked::default());
    }
    let (mut trusted_n, mut unused_n) = (0u64, 0u64);
    let mut stmt = conn.prepare(
        "SELECT v.entry_index, l.entry_hash_ref, l.transition_ref,
                v.invocation_id, v.episode_id, v.transition, v.ok, v.logical_time, v.seal
           FROM world_log_view v LEFT JOIN log_entries l ON l.entry_index = v.entry_index
          ORDER BY v.entry_index",
    )?;
    let mut rows = stmt.query([])?;
    let mut reads = Reads::new(conn, false);
    let (mut used, mut unused) = (Vec::new(), Vec::new());
    while let Some(r) = rows.next()? {
        let index: i64 = r.get(0)?;
        let (d, s) = stored(r, 3)?;
        let entry: Option<(String, String)> = match r.get::<_, Option<String>>(1)? {
            Some(h) => Some((h, r.get(2)?)),
            None => None,
        };
        let Some((entry_hash, tref)) = entry else {
            unused_n += 1;
            if unused.len() < 10 {
                unused.push(Problem {
                    trusted: false,
                    index,
                    reason: format!(
                        "{TABLE}: a row for index {index}, which is no log entry (never used)"
                    ),
                });
            }
            continue;
        };
        if s != seal(index, &entry_hash, &tref, &d) {
            unused_n += 1;
            if unused.len() < 10 {
                unused.push(Problem {
                    trusted: false,
                    index,
                    reason: format!(
                        "{TABLE}: the row of entry {index} does not match its seal (edited, or of an entry since replaced); never used: `world log` decodes that entry from its objects. Drop {TABLE} and {STATE_TABLE} to have commits rebuild them"
                    ),
                });
            }
            continue;
        }
        let (want, _) = reads.decode_full(&tref)?;
        if want != d {
            trusted_n += 1;
        }
        if want != d && used.len() < 10 {
            used.push(Problem {
                trusted: true,
                index,
                reason: format!(
                    "{TABLE}: `world log` prints {} for entry {index}; its objects say {}. Drop {TABLE} and {STATE_TABLE} to have commits rebuild them",
                    show(&d),
                    show(&want)
                ),
            });
        }
    }
    used.extend(unused);
    Ok(Checked {
        problems: used,
        trusted: trusted_n,
        unused: unused_n,
    })
}

fn show(d: &Decoded) -> String {
    let s = |v: &Option<String>| v.as_deref().unwrap_or("-").to_string();
    format!(
        "(invocation {}, episode {}, transition {}, ok {}, time {})",
        s(&d.invocation),
        s(&d.episode),
        s(&d.skill),
        d.ok.map_or("-".into(), |b| b.to_string()),
        d.time.map_or("-".into(), |t| t.to_string())
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::logview::{for_each, for_each_joined, Query, Row};
    use crate::store::schema::{self, Mode};

    fn sha(b: &[u8]) -> String {
        crate::encoding::HashRef::of(b).to_string()
    }

    /// A store of `n` coordinator entries written with SQL (as another writer would: no view
    /// rows), each with its output, record and commit intent.
    fn store(n: i64) -> Connection {
        let c = Connection::open_in_memory().expect("memory");
        schema::open(&c, ":memory:", Mode::Writable).expect("schema");
        let obj = |sem: &str, body: &str| -> String {
            let r = sha(body.as_bytes());
            c.execute(
                "INSERT OR IGNORE INTO objects VALUES (?1, 'sha256:00', ?2, 'test', ?3)",
                rusqlite::params![r, sem, body.as_bytes()],
            )
            .expect("object");
            r
        };
        for i in 0..n {
            let inv = format!("cli:ep{}:t{i}", i % 3);
            let out = obj(
                "world/invocation-output/v1",
                &format!("{{\"ok\":{}}}", i % 2 == 0),
            );
            let rec = obj(
                "world/invocation-record/v1",
                &format!("{{\"invocationId\":\"{inv}\",\"episodeId\":\"ep{}\",\"skillId\":\"tools.s\",\"output\":\"{out}\"}}", i % 3),
            );
            let intent = obj(
                "world/journal-intent/v1",
                &format!("{{\"invocationId\":\"{inv}\",\"logicalTime\":{}}}", 100 + i),
            );
            c.execute(
                "INSERT INTO journal (kind, invocation_id, object_ref) VALUES ('intent', ?1, ?2)",
                [&inv, &intent],
            )
            .expect("intent");
            c.execute(
                "INSERT INTO log_entries VALUES (?1, ?2, 1, 'f', 'i', 'p', 'coordinator:cli', ?3)",
                rusqlite::params![i, sha(format!("entry{i}").as_bytes()), rec],
            )
            .expect("entry");
        }
        c
    }

    fn all(c: &Connection, joined: bool) -> Vec<Row> {
        let mut out = Vec::new();
        let q = Query::default();
        let push = |r: Row| {
            out.push(r);
            Ok(())
        };
        if joined {
            for_each_joined(c, &q, push).expect("join");
        } else {
            for_each(c, &q, push).expect("scan");
        }
        out
    }

    fn count(c: &Connection) -> i64 {
        c.query_row("SELECT count(*) FROM world_log_view", [], |r| r.get(0))
            .expect("count")
    }

    /// Commits fill at most `limit` entries each from the state's `next_index`; the rest are
    /// decoded by readers meanwhile, with the same answers.
    #[test]
    fn catch_up_fills_a_bounded_stretch_per_call() {
        let c = store(25);
        assert_eq!(count(&c), 0);
        let want = all(&c, true);
        catch_up(&c, Some(10)).expect("catch up");
        assert_eq!(count(&c), 10);
        assert_eq!(all(&c, false), want);
        catch_up(&c, Some(10)).expect("catch up");
        catch_up(&c, Some(10)).expect("catch up");
        assert_eq!(count(&c), 25);
        assert_eq!(all(&c, false), want);
        assert_eq!(check(&c).expect("check"), vec![]);
    }

    /// A row whose columns were changed and resealed (a deliberate edit) is what readers
    /// print — the proof they read the view — and `check` reports it; an unsealed edit is
    /// never used and is a warning.
    #[test]
    fn a_resealed_edit_is_printed_and_reported_an_unsealed_one_is_not_used() {
        let c = store(8);
        catch_up(&c, None).expect("fill");
        let want = all(&c, true);
        let (hash, tref): (String, String) = c
            .query_row(
                "SELECT entry_hash_ref, transition_ref FROM log_entries WHERE entry_index = 5",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .expect("entry");
        let forged = Decoded {
            invocation: Some("cli:forged:t5".into()),
            episode: Some("forged".into()),
            skill: Some("tools.s".into()),
            ok: Some(true),
            time: Some(1),
        };
        put(&c, 5, &hash, &tref, &forged).expect("forge");
        let got = all(&c, false);
        assert_eq!(got[5].episode_id.as_deref(), Some("forged"));
        let problems = check(&c).expect("check");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].trusted && problems[0].index == 5);

        c.execute_batch("UPDATE world_log_view SET episode_id = 'ep2' WHERE entry_index = 5")
            .expect("edit");
        assert_eq!(all(&c, false), want);
        let problems = check(&c).expect("check");
        assert!(problems.iter().all(|p| !p.trusted), "{problems:?}");
        assert_eq!(problems.len(), 1);
    }

    /// `check` lists at most 10 problems of each kind; `check_counted` counts every row (the
    /// counts `world verify` reports).
    #[test]
    fn the_counts_cover_every_row_beyond_the_listed_ten() {
        let c = store(40);
        catch_up(&c, None).expect("fill");
        // 25 rows resealed with other values (readers use them), 13 edited without a seal.
        for i in 0..25 {
            let (hash, tref): (String, String) = c
                .query_row(
                    "SELECT entry_hash_ref, transition_ref FROM log_entries WHERE entry_index = ?1",
                    [i],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .expect("entry");
            let forged = Decoded {
                invocation: Some(format!("cli:forged:t{i}")),
                episode: Some("forged".into()),
                skill: Some("tools.s".into()),
                ok: Some(true),
                time: Some(1),
            };
            put(&c, i, &hash, &tref, &forged).expect("forge");
        }
        c.execute_batch(
            "UPDATE world_log_view SET episode_id = 'x' WHERE entry_index BETWEEN 25 AND 37",
        )
        .expect("edit");
        let checked = check_counted(&c).expect("check");
        assert_eq!((checked.trusted, checked.unused), (25, 13));
        assert_eq!(checked.problems.iter().filter(|p| p.trusted).count(), 10);
        assert_eq!(checked.problems.iter().filter(|p| !p.trusted).count(), 10);
        assert_eq!(check(&c).expect("check"), checked.problems);
    }

    /// `record` writes only final columns: an entry whose commit intent is not stored yet gets
    /// no row (a bundle copies intents after entries; `catch_up` writes them afterwards).
    #[test]
    fn record_writes_only_final_rows() {
        let c = store(2);
        let (hash, tref): (String, String) = c
            .query_row(
                "SELECT entry_hash_ref, transition_ref FROM log_entries WHERE entry_index = 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .expect("entry");
        c.execute_batch("DELETE FROM journal WHERE invocation_id = 'cli:ep1:t1'")
            .expect("drop the intent");
        record(&c, 1, &hash, &tref).expect("record");
        assert_eq!(count(&c), 0);
        record(&c, 0, "sha256:x", "sha256:missing").expect("record");
        assert_eq!(count(&c), 0, "an entry naming no stored object gets no row");
    }
}
