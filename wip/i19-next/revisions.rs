//! Each log entry's world revision, read in log order (DEC-PERF-5).
//!
//! A commit writes its log entry and its world row together, so `worlds` in rowid order
//! follows `log_entries` in index order. [`Revisions`] walks `worlds` by rowid next to a log
//! scan, in batches, and answers each entry from the next world row when that row's
//! `log_head` is the entry; when the two are out of step (an entry without a world row, a
//! world row naming no entry, rows written out of order) it looks the entry up through
//! `world_worlds_by_log_head` and continues the walk after the row it found. The answers equal
//! a join on `worlds.log_head`; the reads are sequential instead of one random index lookup per
//! entry. Memory: one batch.

use std::collections::VecDeque;

use rusqlite::{Connection, OptionalExtension};

use super::Error;

/// World rows read per batch.
const BATCH: i64 = 256;

/// The revision lookup of one log scan; see the module docs.
pub struct Revisions<'c> {
    conn: &'c Connection,
    reverse: bool,
    /// `(rowid, log_head, revision)` still ahead of the scan.
    buf: VecDeque<(i64, String, i64)>,
    /// The walk continues after this rowid (exclusive), in the scan's direction.
    after: i64,
    /// No world rows are left in this direction.
    done: bool,
    /// `worlds` cannot be walked by rowid (not the v4 shape): point lookups only.
    lookups_only: bool,
}

impl<'c> Revisions<'c> {
    /// A lookup for a scan in ascending (`reverse = false`) or descending index order.
    pub fn new(conn: &'c Connection, reverse: bool) -> Revisions<'c> {
        Revisions {
            conn,
            reverse,
            buf: VecDeque::new(),
            after: if reverse { i64::MAX } else { i64::MIN },
            done: false,
            lookups_only: false,
        }
    }

    fn refill(&mut self) -> Result<(), Error> {
        let sql = if self.reverse {
            "SELECT rowid, log_head, revision FROM worlds WHERE rowid < ?1 ORDER BY rowid DESC LIMIT ?2"
        } else {
            "SELECT rowid, log_head, revision FROM worlds WHERE rowid > ?1 ORDER BY rowid ASC LIMIT ?2"
        };
        let mut stmt = match self.conn.prepare_cached(sql) {
            Ok(s) => s,
            Err(_) => {
                self.lookups_only = true;
                return Ok(());
            }
        };
        let rows = stmt.query_map([self.after, BATCH], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, i64>(2)?))
        })?;
        let mut n = 0;
        for row in rows {
            let row = row?;
            self.after = row.0;
            self.buf.push_back(row);
            n += 1;
        }
        self.done = n < BATCH;
        Ok(())
    }

    /// The revision of the world row whose `log_head` is `entry_hash`, if there is one. Call it
    /// for the entries in the scan's order.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn revision_of(&mut self, entry_hash: &str) -> Result<Option<i64>, Error> {
        if !self.lookups_only {
            if self.buf.is_empty() && !self.done {
                self.refill()?;
            }
            if let Some((_, head, revision)) = self.buf.front() {
                if head == entry_hash {
                    let revision = *revision;
                    self.buf.pop_front();
                    return Ok(Some(revision));
                }
            }
        }
        if self.lookups_only {
            return Ok(self
                .conn
                .prepare_cached("SELECT revision FROM worlds WHERE log_head = ?1 LIMIT 1")?
                .query_row([entry_hash], |r| r.get(0))
                .optional()?);
        }
        // Out of step: find the row through the index and walk on from there.
        let found: Option<(i64, i64)> = self
            .conn
            .prepare_cached(
                "SELECT rowid, revision FROM worlds WHERE log_head = ?1 ORDER BY rowid LIMIT 1",
            )?
            .query_row([entry_hash], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        if let Some((rowid, revision)) = found {
            self.buf.clear();
            self.after = rowid;
            self.done = false;
            return Ok(Some(revision));
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn worlds(rows: &[(String, i64)]) -> Connection {
        let c = Connection::open_in_memory().expect("memory");
        c.execute_batch(
            "CREATE TABLE worlds (world_ref TEXT PRIMARY KEY, revision INTEGER NOT NULL,
               state_root TEXT NOT NULL, log_head TEXT NOT NULL);
             CREATE INDEX world_worlds_by_log_head ON worlds(log_head);",
        )
        .expect("schema");
        for (n, (head, revision)) in rows.iter().enumerate() {
            c.execute(
                "INSERT INTO worlds VALUES (?1, ?2, 'root', ?3)",
                rusqlite::params![format!("w{n}"), revision, head],
            )
            .expect("world");
        }
        c
    }

    fn joined(c: &Connection, head: &str) -> Option<i64> {
        c.query_row(
            "SELECT revision FROM worlds WHERE log_head = ?1 ORDER BY rowid LIMIT 1",
            [head],
            |r| r.get(0),
        )
        .optional()
        .expect("join")
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Entries 0..n; world rows for a subset, in an order that is mostly the log's, with
        /// some moved and some naming no entry; each entry has at most one world row.
        #[test]
        fn answers_equal_the_join(
            n in 0usize..700,
            missing in proptest::collection::btree_set(0usize..700, 0..40),
            moves in proptest::collection::vec((0usize..700, 0usize..700), 0..20),
            dangling in proptest::collection::vec(0usize..700, 0..10),
            reverse in any::<bool>(),
        ) {
            let mut rows: Vec<(String, i64)> = (0..n)
                .filter(|i| !missing.contains(i))
                .map(|i| (format!("e{i}"), i as i64 + 1))
                .collect();
            for (a, b) in moves {
                if !rows.is_empty() {
                    let (a, b) = (a % rows.len(), b % rows.len());
                    let r = rows.remove(a);
                    rows.insert(b, r);
                }
            }
            for (k, at) in dangling.into_iter().enumerate() {
                let at = at % (rows.len() + 1);
                rows.insert(at, (format!("nowhere{k}"), -1));
            }
            let c = worlds(&rows);
            let mut lookup = Revisions::new(&c, reverse);
            let order: Vec<usize> = if reverse { (0..n).rev().collect() } else { (0..n).collect() };
            for i in order {
                let head = format!("e{i}");
                prop_assert_eq!(lookup.revision_of(&head).expect("lookup"), joined(&c, &head), "entry {}", i);
            }
        }
    }
}
