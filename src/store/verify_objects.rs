//! The object pass of `world verify` (store-format.md §13.1 #3), spread over the machine's
//! cores (DEC-PERF-4).
//!
//! Every object's payload is re-hashed and compared with its `hash_ref`, and its
//! `interface_hash_ref` must parse. The `objects` table is split into rowid ranges; each thread
//! (the calling one and one worker per further core) opens its own read-only connection to the
//! same file, mapped into memory (DEC-PERF-13), and takes the next range until none is left, so
//! reading the payload pages and hashing them both run in parallel. Results
//! are merged and sorted by `hash_ref`, so the findings (and which one is reported first) do not
//! depend on thread timing. A store without a file path (in memory) is checked on the calling
//! connection alone.

use std::path::Path;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::Error;
use crate::encoding::HashRef;

/// What the object pass found.
#[derive(Debug, Default)]
pub struct ObjectPass {
    /// Objects re-hashed.
    pub objects: u64,
    /// Payload bytes re-hashed.
    pub payload_bytes: u64,
    /// `(hash_ref, computed)` of every object whose payload hashes to something else, sorted.
    pub mismatches: Vec<(String, String)>,
    /// `(hash_ref, interface_hash_ref)` of every object whose interface hash does not parse,
    /// sorted.
    pub bad_interfaces: Vec<(String, String)>,
}

impl ObjectPass {
    fn merge(&mut self, other: ObjectPass) {
        self.objects += other.objects;
        self.payload_bytes += other.payload_bytes;
        self.mismatches.extend(other.mismatches);
        self.bad_interfaces.extend(other.bad_interfaces);
    }
}

/// Rows per work unit: small enough to balance the workers, large enough that taking a unit
/// costs nothing next to hashing it.
const ROWS_PER_UNIT: i64 = 16;

/// How many worker threads to use: one per available core, at most 8.
pub fn workers() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 8)
}

/// Hash the objects with `lo ≤ rowid < hi`, or every object when `range` is `None`.
fn hash_range(
    conn: &Connection,
    range: Option<(i64, i64)>,
    done: &AtomicU64,
) -> Result<ObjectPass, Error> {
    let mut pass = ObjectPass::default();
    let (sql, lo, hi) = match range {
        Some((lo, hi)) => (
            "SELECT hash_ref, interface_hash_ref, payload FROM objects
             WHERE rowid >= ?1 AND rowid < ?2",
            lo,
            hi,
        ),
        None => (
            "SELECT hash_ref, interface_hash_ref, payload FROM objects WHERE ?1 <= ?2",
            0,
            0,
        ),
    };
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = stmt.query([lo, hi])?;
    while let Some(row) = rows.next()? {
        let hash: String = row.get(0)?;
        let iface: String = row.get(1)?;
        let payload = row
            .get_ref(2)?
            .as_blob_or_null()
            .map_err(|e| Error::Corrupt {
                what: "object payload".into(),
                detail: e.to_string(),
            })?
            .unwrap_or_default();
        pass.objects += 1;
        pass.payload_bytes += payload.len() as u64;
        done.fetch_add(payload.len() as u64, Ordering::Relaxed);
        let computed = HashRef::of(payload).to_string();
        if computed != hash {
            pass.mismatches.push((hash.clone(), computed));
        }
        if HashRef::parse(&iface).is_err() {
            pass.bad_interfaces.push((hash, iface));
        }
    }
    Ok(pass)
}

/// Bytes of the file a verify reader maps (`PRAGMA mmap_size`): SQLite's own ceiling for
/// this build (`SQLITE_MAX_MMAP_SIZE`, 2 GiB - 64 KiB); pages past it are read with `pread`.
const MAP_BYTES: i64 = 0x7fff_0000;

/// A read-only connection for one of verify's parallel passes (the storage check, an object
/// worker), reading the file through SQLite's memory map (DEC-PERF-13).
///
/// Through the map, `quick_check`'s walk of the overflow chains touches each page in place
/// (no `pread` into the page cache) and the object pass copies each payload page once, from
/// the kernel's page cache into the row buffer it hashes; without the map every page was
/// copied by a `pread` on each pass. The connection only reads, so a writer never truncates
/// a mapped page under it except through SQLite's own locking (it needs the lock this
/// connection's read holds).
///
/// # Errors
/// SQLite errors.
pub(super) fn open_reader(path: &Path) -> Result<Connection, Error> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(Duration::from_millis(2000))?;
    // The pragma answers with the size it set (0 where the build has no mmap).
    conn.query_row(&format!("PRAGMA mmap_size = {MAP_BYTES}"), [], |_| Ok(()))?;
    Ok(conn)
}

/// Hash the ranges `next` hands out until none is left, on a connection of this thread's
/// own; `after_unit` runs after each range (the calling thread reports progress there).
fn work(
    path: &Path,
    next: &AtomicI64,
    max: i64,
    done: &AtomicU64,
    after_unit: &mut dyn FnMut(),
) -> Result<ObjectPass, Error> {
    let r = (|| {
        let reader = open_reader(path)?;
        let mut mine = ObjectPass::default();
        loop {
            let lo = next.fetch_add(ROWS_PER_UNIT, Ordering::Relaxed);
            if lo > max {
                break;
            }
            let hi = lo.saturating_add(ROWS_PER_UNIT);
            mine.merge(hash_range(&reader, Some((lo, hi)), done)?);
            after_unit();
        }
        Ok(mine)
    })();
    if r.is_err() {
        // Stop the others early: no range is left to take.
        next.store(i64::MAX - ROWS_PER_UNIT, Ordering::Relaxed);
    }
    r
}

/// Re-hash every object of the store behind `conn` on `threads` threads (the calling thread
/// and `threads - 1` workers), calling `progress(bytes_done, bytes_total)` from the calling
/// thread after each unit of work it finishes and once at the end. Nothing sleeps or polls:
/// the calling thread hashes too and joins the workers when no range is left.
///
/// # Errors
/// SQLite errors (a worker's error is returned after all workers stopped) and unreadable
/// payload cells ([`Error::Corrupt`]).
pub fn hash_objects(
    conn: &Connection,
    threads: usize,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ObjectPass, Error> {
    let total: u64 = conn.query_row(
        "SELECT COALESCE(SUM(length(payload)), 0) FROM objects",
        [],
        |r| r.get::<_, i64>(0),
    )? as u64;
    // A table without rowids (not the v4 shape; the schema check reports it) is hashed serially.
    let bounds: Option<(i64, i64)> = conn
        .query_row("SELECT MIN(rowid), MAX(rowid) FROM objects", [], |r| {
            Ok((r.get::<_, Option<i64>>(0)?, r.get::<_, Option<i64>>(1)?))
        })
        .ok()
        .and_then(|(a, b)| Some((a?, b?)));
    let done = AtomicU64::new(0);
    let path = conn.path().filter(|p| !p.is_empty()).map(Path::new);
    let mut pass = match (path, bounds) {
        (Some(path), Some((min, max))) => {
            let next = AtomicI64::new(min);
            let (next, done) = (&next, &done);
            let results: Vec<Result<ObjectPass, Error>> = std::thread::scope(|s| {
                let handles: Vec<_> = (1..threads.max(1))
                    .map(|_| s.spawn(move || work(path, next, max, done, &mut || {})))
                    .collect();
                let mut report = || progress(done.load(Ordering::Relaxed), total);
                let mut results = vec![work(path, next, max, done, &mut report)];
                for h in handles {
                    results.push(h.join().unwrap_or_else(|_| {
                        Err(Error::Corrupt {
                            what: "verify".into(),
                            detail: "an object-hashing worker stopped without a result".into(),
                        })
                    }));
                }
                results
            });
            let mut pass = ObjectPass::default();
            for r in results {
                pass.merge(r?);
            }
            pass
        }
        _ => hash_range(conn, None, &done)?,
    };
    progress(pass.payload_bytes, total.max(pass.payload_bytes));
    pass.mismatches.sort();
    pass.bad_interfaces.sort();
    Ok(pass)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{put_object, Object, Store, WriteOptions};

    /// A store with `n` objects of assorted sizes, and the refs of the ones then corrupted.
    fn store_with(n: usize, corrupt: &[usize]) -> (tempfile::TempDir, Store, Vec<String>) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open_write(
            &dir.path().join("w.db"),
            WriteOptions {
                create: true,
                wait_lock: None,
            },
        )
        .expect("store");
        let mut bad = Vec::new();
        for i in 0..n {
            let payload = vec![(i % 251) as u8; (i * 977) % 70_000 + i];
            let obj = Object::new("test/blob", "test", payload);
            put_object(store.conn(), &obj).expect("put");
            if corrupt.contains(&i) {
                store
                    .conn()
                    .execute(
                        "UPDATE objects SET payload = CAST('x' AS BLOB) WHERE hash_ref = ?1",
                        [&obj.meta.hash],
                    )
                    .expect("corrupt");
                bad.push(obj.meta.hash.clone());
            }
        }
        bad.sort();
        (dir, store, bad)
    }

    #[test]
    fn every_thread_count_finds_the_same_objects_and_mismatches() {
        let (_dir, store, bad) = store_with(150, &[0, 17, 64, 149]);
        let mut seen = Vec::new();
        for threads in [1, 2, 3, 8] {
            let mut last = (0, 0);
            let pass =
                hash_objects(store.conn(), threads, &mut |d, t| last = (d, t)).expect("pass");
            let found: Vec<String> = pass.mismatches.iter().map(|(h, _)| h.clone()).collect();
            assert_eq!(found, bad, "threads {threads}");
            assert_eq!(
                last.0, pass.payload_bytes,
                "final progress, threads {threads}"
            );
            seen.push((pass.objects, pass.payload_bytes, pass.mismatches));
        }
        assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
        // Every object that exists is counted (the genesis-free store has only ours).
        assert_eq!(seen[0].0, 150);
    }

    #[test]
    fn an_empty_store_and_an_in_memory_store_are_handled() {
        let (_dir, store, _) = store_with(0, &[]);
        let pass = hash_objects(store.conn(), 2, &mut |_, _| {}).expect("pass");
        assert_eq!((pass.objects, pass.payload_bytes), (0, 0));
        let mem = Connection::open_in_memory().expect("memory");
        mem.execute_batch(
            "CREATE TABLE objects (hash_ref TEXT PRIMARY KEY, interface_hash_ref TEXT NOT NULL,
               semantic_id TEXT NOT NULL, provenance TEXT NOT NULL, payload BLOB NOT NULL);
             INSERT INTO objects VALUES ('sha256:00', 'bad', 's', 'p', x'00');",
        )
        .expect("schema");
        let pass = hash_objects(&mem, 4, &mut |_, _| {}).expect("pass");
        assert_eq!(pass.objects, 1);
        assert_eq!(pass.mismatches.len(), 1);
        assert_eq!(pass.bad_interfaces.len(), 1);
    }
}
