//! The startup integrity scan `world serve` runs before it listens (surfaces.md): a bounded,
//! newest-first pass over `log_entries` that reports holes and never repairs history.

use std::io::Write;
use std::time::{Duration, Instant};

use super::Store;

/// Integrity scan bound: rows.
pub const SCAN_ROWS: i64 = 20_000;
/// Integrity scan bound: time.
pub const SCAN_TIME: Duration = Duration::from_secs(2);

/// The startup integrity scan: at most [`SCAN_ROWS`] log rows within [`SCAN_TIME`], newest
/// first; each unreadable or inconsistent row prints `integrity_hole …`; a scan cut short
/// prints `integrity_scan_incomplete …` with the resume cursor. History is never repaired.
pub fn integrity_scan(store: &Store, out: &mut dyn Write) {
    let start = Instant::now();
    let mut rows = 0i64;
    let mut next: Option<i64> = None;
    let mut stmt = match store.conn().prepare(
        "SELECT entry_index, semantics_epoch, transition_fn_ref, interpreter_ref, prev_entry_hash_ref, written_by, entry_hash_ref, transition_ref FROM log_entries ORDER BY entry_index DESC",
    ) {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(out, "integrity_hole table=log_entries reason={:?}", e.to_string());
            return;
        }
    };
    let mut q = match stmt.query([]) {
        Ok(q) => q,
        Err(e) => {
            let _ = writeln!(
                out,
                "integrity_hole table=log_entries reason={:?}",
                e.to_string()
            );
            return;
        }
    };
    loop {
        if rows >= SCAN_ROWS || start.elapsed() > SCAN_TIME {
            if let Some(n) = next {
                let _ = writeln!(out, "integrity_scan_incomplete table=log_entries scanned={rows} resume_below_index={n}");
            }
            break;
        }
        let row = match q.next() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                let _ = writeln!(
                    out,
                    "integrity_hole table=log_entries after_index={next:?} reason={:?}",
                    e.to_string()
                );
                break;
            }
        };
        rows += 1;
        let idx: i64 = row.get(0).unwrap_or(-1);
        next = Some(idx);
        let header = (|| -> rusqlite::Result<super::Header> {
            Ok(super::Header {
                entry_index: row.get(0)?,
                semantics_epoch: row.get(1)?,
                transition_fn: row.get(2)?,
                interpreter: row.get(3)?,
                prev_entry_hash: row.get(4)?,
                written_by: row.get(5)?,
            })
        })();
        let tail = (|| -> rusqlite::Result<(String, String)> { Ok((row.get(6)?, row.get(7)?)) })();
        match (header, tail) {
            (Ok(h), Ok((eh, tr))) => {
                let computed = super::entry::entry_hash(&h, &tr).to_string();
                if computed != eh {
                    let _ = writeln!(out, "integrity_hole table=log_entries index={idx} reason=\"entry hash does not recompute\"");
                }
            }
            (Err(e), _) | (_, Err(e)) => {
                let _ = writeln!(
                    out,
                    "integrity_hole table=log_entries index={idx} reason={:?}",
                    e.to_string()
                );
            }
        }
    }
    let _ = out.flush();
}
