//! `world log`: stream log entries as a table or JSON lines; `world log get INDEX`.

use clap::Subcommand;

use super::output::{short, Output};
use super::{read_err, CliError, Context, Exit};

/// List log entries in constant memory, oldest first (or newest first with --reverse).
#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    /// Read one entry instead of listing
    #[command(subcommand)]
    cmd: Option<Cmd>,
    /// First index to print (default: 0, or the last entry with --reverse)
    #[arg(long, value_name = "N")]
    from: Option<u64>,
    /// Print at most M entries
    #[arg(long, value_name = "M")]
    limit: Option<u64>,
    /// Newest first
    #[arg(long)]
    reverse: bool,
}

/// `world log get`.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Print one entry `{header, entryHash, transitionRef}` (GET /v1/log/{index})
    Get {
        /// The entry index
        index: String,
    },
}

const CHUNK: usize = 256;

/// Run `world log`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    if let Some(Cmd::Get { index }) = args.cmd {
        let idx: i64 = index
            .parse()
            .ok()
            .filter(|i: &i64| *i >= 0)
            .ok_or_else(|| {
                CliError::failed("log get", "log index must be a non-negative integer")
            })?;
        let store = ctx.open_read()?;
        let Some(e) = store.log_entry(idx).map_err(read_err("log get"))? else {
            return Err(CliError::failed(
                "log get",
                format!("log entry not found: {idx}"),
            ));
        };
        if out.json {
            out.json_line(&e)?;
        } else {
            out.line(format!("entry {}", e.header.entry_index))?;
            out.line(format!("  entryHash       {}", e.entry_hash))?;
            out.line(format!("  semanticsEpoch  {}", e.header.semantics_epoch))?;
            out.line(format!("  transitionFn    {}", e.header.transition_fn))?;
            out.line(format!("  interpreter     {}", e.header.interpreter))?;
            out.line(format!("  prevEntryHash   {}", e.header.prev_entry_hash))?;
            out.line(format!("  writtenBy       {}", e.header.written_by))?;
            out.line(format!("  transitionRef   {}", e.transition_ref))?;
        }
        return Ok(Exit::Success);
    }
    let store = ctx.open_read()?;
    let from = args.from.map(|f| f.min(i64::MAX as u64) as i64);
    if out.json {
        let mut err = None;
        store
            .for_each_log(from, args.limit, args.reverse, |e| {
                if let Err(x) = out.json_line(&e) {
                    err = Some(x);
                    return Err(crate::store::Error::Corrupt {
                        what: "output".into(),
                        detail: "stdout closed".into(),
                    });
                }
                Ok(())
            })
            .or_else(|e| if err.is_some() { Ok(()) } else { Err(e) })
            .map_err(read_err("log"))?;
        if let Some(e) = err {
            return Err(e.into());
        }
        return Ok(Exit::Success);
    }
    // Human form: fixed-width columns, streamed in chunks so memory stays constant.
    let mut rows: Vec<[String; 5]> = Vec::with_capacity(CHUNK);
    let mut first = true;
    let mut count = 0u64;
    let mut io_err = None;
    let flush =
        |rows: &mut Vec<[String; 5]>, first: &mut bool, out: &mut Output| -> std::io::Result<()> {
            if *first {
                out.line(format!(
                    "{:>8}  {:<14}  {:<18}  {:<14}  {:>8}",
                    "INDEX", "ENTRY HASH", "WRITTEN BY", "TRANSITION", "REVISION"
                ))?;
                *first = false;
            }
            for r in rows.drain(..) {
                out.line(format!(
                    "{:>8}  {:<14}  {:<18}  {:<14}  {:>8}",
                    r[0], r[1], r[2], r[3], r[4]
                ))?;
            }
            Ok(())
        };
    // One streaming query: the world revision comes from a LEFT JOIN on `worlds.log_head`,
    // which has no provisioned index, so SQLite builds one automatic index for the query
    // (in temp storage, not the heap). A per-entry lookup would scan `worlds` once per entry.
    let sql = if args.reverse {
        "SELECT l.entry_index, l.entry_hash_ref, l.written_by, l.transition_ref, w.revision
         FROM log_entries l LEFT JOIN worlds w ON w.log_head = l.entry_hash_ref
         WHERE l.entry_index <= ?1 ORDER BY l.entry_index DESC"
    } else {
        "SELECT l.entry_index, l.entry_hash_ref, l.written_by, l.transition_ref, w.revision
         FROM log_entries l LEFT JOIN worlds w ON w.log_head = l.entry_hash_ref
         WHERE l.entry_index >= ?1 ORDER BY l.entry_index ASC"
    };
    let start = from.unwrap_or(if args.reverse { i64::MAX } else { 0 });
    let sqlite = |e: rusqlite::Error| CliError::store("log", e.into());
    let mut stmt = store.conn().prepare(sql).map_err(sqlite)?;
    let mut q = stmt.query([start]).map_err(sqlite)?;
    let mut last_index = None;
    let mut printed = 0u64;
    while let Some(row) = q.next().map_err(sqlite)? {
        let index: i64 = row.get(0).map_err(sqlite)?;
        // Two world rows naming the same log head would repeat an entry; print it once.
        // The limit counts entries, not joined rows, so it is enforced here.
        if last_index == Some(index) {
            continue;
        }
        if args.limit.is_some_and(|l| printed >= l) {
            break;
        }
        last_index = Some(index);
        printed += 1;
        let entry_hash: String = row.get(1).map_err(sqlite)?;
        let written_by: String = row.get(2).map_err(sqlite)?;
        let transition_ref: String = row.get(3).map_err(sqlite)?;
        let revision: Option<i64> = row.get(4).map_err(sqlite)?;
        let written = if written_by.chars().count() > 18 {
            format!("{}…", written_by.chars().take(17).collect::<String>())
        } else {
            written_by
        };
        rows.push([
            index.to_string(),
            short(&entry_hash),
            written,
            short(&transition_ref),
            revision
                .map(|r| r.to_string())
                .unwrap_or_else(|| "-".into()),
        ]);
        count += 1;
        if rows.len() == CHUNK {
            if let Err(x) = flush(&mut rows, &mut first, out) {
                io_err = Some(x);
                break;
            }
        }
    }
    if let Some(e) = io_err {
        return Err(e.into());
    }
    if count == 0 {
        out.status("no log entries in this range");
    } else {
        flush(&mut rows, &mut first, out)?;
    }
    Ok(Exit::Success)
}
