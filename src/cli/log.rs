//! `world log`: stream log entries as a table that says what happened, or JSON lines;
//! `world log get INDEX`.

use std::time::Duration;

use clap::Subcommand;

use super::output::{rfc3339, terminal_width, Output};
use super::{read_err, CliError, Context, Exit};
use crate::store::logview::{self, Query, Row};

/// List log entries in constant memory, oldest first (or newest first with --reverse).
///
/// The table says what happened at each entry: index, time (the commit intent's logical
/// time), writer, transition, outcome (`ok`, `refused`, or `commit` for a client commit),
/// episode, invocation id and a short entry hash any ref argument takes. `--json` prints the
/// entries themselves, one per line (docs/json/log-entry.schema.json).
///
/// Examples:
///   world log --episode ep1
///   world log --writer coordinator --since 2026-12-01T00:00:00Z
///   world log --follow --until-index 100
///   world log --reverse --limit 5 --json
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
    #[arg(long, conflicts_with = "follow")]
    reverse: bool,
    /// Only entries of this episode
    #[arg(long, value_name = "EP")]
    episode: Option<String>,
    /// Only entries that called this transition (descriptor id, e.g. tools.echo)
    #[arg(long, value_name = "ID")]
    transition: Option<String>,
    /// Only entries written by WRITER (exact, or its prefix before `:`, e.g. coordinator)
    #[arg(long, value_name = "WRITER")]
    writer: Option<String>,
    /// Only entries at or after TIME (RFC 3339 such as 2026-12-01T09:00:00Z, a date, or Unix
    /// seconds); client commits carry no time and are left out
    #[arg(long, value_name = "TIME")]
    since: Option<String>,
    /// Only the entry of this invocation id (<surface>:<episode>:<task>)
    #[arg(long, value_name = "ID")]
    invocation: Option<String>,
    /// Keep printing new entries as they are committed (polls the store twice a second);
    /// ends on SIGINT, or after --until-index
    #[arg(long)]
    follow: bool,
    /// With --follow: stop once entry N has been printed
    #[arg(long, value_name = "N", requires = "follow")]
    until_index: Option<i64>,
}

/// `world log get`.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Print one entry `{header, entryHash, transitionRef}` (GET /v1/log/{index})
    Get {
        /// The entry: an index, `head` (the last entry), or an entry hash (full, bare hex or a
        /// unique prefix ≥ 6 hex)
        #[arg(value_name = "ENTRY")]
        index: String,
    },
}

/// Resolve an entry argument (index, `head`, entry hash or prefix) to its index.
pub(crate) fn entry_index(
    store: &crate::store::Store,
    text: &str,
    what: &str,
) -> Result<i64, CliError> {
    if text == "head" {
        let (_, last) = store.log_bounds().map_err(read_err("log"))?;
        return last.ok_or_else(|| {
            CliError::failed(what, "the log is empty").hint("create a store with `world genesis`")
        });
    }
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        let index: Option<i64> = text.parse().ok();
        let exists = match index {
            Some(i) => store
                .log_entry(i)
                .map_err(|e| CliError::store(what, e))?
                .is_some(),
            None => false,
        };
        // A short entry hash the log table printed can be all decimal digits (about one in
        // 280 of them): when no entry has that index, the digits are read as an entry-hash
        // prefix if one matches.
        if !exists {
            if let Ok(c) =
                crate::store::refs::resolve(store.conn(), &[crate::store::refs::Space::Entry], text)
            {
                if let Some(i) = crate::store::refs::entry_index_of(store.conn(), &c.reference)
                    .map_err(|e| super::refs::ref_err(what, e))?
                {
                    return Ok(i);
                }
            }
        }
        return index
            .ok_or_else(|| CliError::failed(what, "log index must be a non-negative integer"));
    }
    if text.starts_with('-') {
        return Err(CliError::failed(
            what,
            "log index must be a non-negative integer",
        ));
    }
    let c = super::refs::resolve(store, &[crate::store::refs::Space::Entry], text, what)?;
    crate::store::refs::entry_index_of(store.conn(), &c.reference)
        .map_err(|e| super::refs::ref_err(what, e))?
        .ok_or_else(|| {
            CliError::failed(what, format!("no log entry has entry hash {}", c.reference))
                .with_code("not_found")
        })
}

/// Column widths of the human table; `None` drops the column.
struct Layout {
    index: usize,
    entry: Option<usize>,
    episode: Option<usize>,
    invocation: Option<usize>,
}

const TIME_W: usize = 20;
const WRITER_W: usize = 18;
const TRANSITION_W: usize = 16;
const OUTCOME_W: usize = 7;
const EPISODE_W: usize = 12;
const ENTRY_W: usize = 12;

impl Layout {
    /// Fit the columns to `width`: drop EPISODE, then ENTRY, then cut INVOCATION.
    fn fit(width: Option<u16>, last_index: i64) -> Layout {
        let index = last_index.max(0).to_string().len().max(5);
        let fixed = index + TIME_W + WRITER_W + TRANSITION_W + OUTCOME_W + 2 * 5;
        let Some(w) = width.map(usize::from) else {
            return Layout {
                index,
                entry: Some(ENTRY_W),
                episode: Some(EPISODE_W),
                invocation: None,
            };
        };
        let mut l = Layout {
            index,
            entry: Some(ENTRY_W),
            episode: Some(EPISODE_W),
            invocation: None,
        };
        let used =
            |l: &Layout| fixed + l.entry.map_or(0, |e| e + 2) + l.episode.map_or(0, |e| e + 2);
        if used(&l) + 14 > w {
            l.episode = None;
        }
        if used(&l) + 14 > w {
            l.entry = None;
        }
        l.invocation = Some(w.saturating_sub(used(&l)).max(10));
        l
    }

    fn line(&self, cells: [&str; 8]) -> String {
        let mut out = String::with_capacity(160);
        self.push_line(&mut out, cells);
        out
    }

    /// One line of the table into `out` (cleared first), without a newline. Cells are
    /// written in place, padded to their widths; only a cut or escaped cell allocates.
    fn push_line(&self, out: &mut String, cells: [&str; 8]) {
        use std::fmt::Write;
        // Client-written values (writtenBy, ids) are shown escaped (DEC-TRUST3-4).
        let cells = cells.map(crate::termtext::escape_line);
        fn cut(s: &str, w: usize) -> std::borrow::Cow<'_, str> {
            // A string of at most `w` bytes has at most `w` characters: no count needed.
            if s.len() <= w || s.chars().count() <= w {
                std::borrow::Cow::Borrowed(s)
            } else {
                let mut c: String = s.chars().take(w.saturating_sub(1)).collect();
                c.push('…');
                std::borrow::Cow::Owned(c)
            }
        }
        out.clear();
        // Writing to a String cannot fail.
        let _ = write!(
            out,
            "{:>iw$}  {:<TIME_W$}  {:<WRITER_W$}  {:<TRANSITION_W$}  {:<OUTCOME_W$}",
            cells[0],
            cut(&cells[1], TIME_W),
            cut(&cells[2], WRITER_W),
            cut(&cells[3], TRANSITION_W),
            cut(&cells[4], OUTCOME_W),
            iw = self.index
        );
        if let Some(w) = self.episode {
            let _ = write!(out, "  {:<w$}", cut(&cells[5], w));
        }
        if let Some(w) = self.entry {
            let _ = write!(out, "  {:<w$}", cut(&cells[7], w));
        }
        out.push_str("  ");
        match self.invocation {
            Some(w) => out.push_str(&cut(&cells[6], w)),
            None => out.push_str(&cells[6]),
        }
        out.truncate(out.trim_end().len());
    }

    /// The line of row `r` into `out` (cleared first).
    fn push_row(&self, out: &mut String, r: &Row) {
        let time = r.logical_time.map(rfc3339).unwrap_or_else(|| "-".into());
        let hex = r
            .entry_hash
            .strip_prefix("sha256:")
            .unwrap_or(&r.entry_hash);
        let entry = hex.get(..hex.len().min(ENTRY_W)).unwrap_or(hex);
        self.push_line(
            out,
            [
                &r.index.to_string(),
                &time,
                &r.written_by,
                r.transition.as_deref().unwrap_or("-"),
                r.outcome(),
                r.episode_id.as_deref().unwrap_or("-"),
                r.invocation_id.as_deref().unwrap_or("-"),
                entry,
            ],
        )
    }
}

/// Run `world log`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    if let Some(Cmd::Get { index }) = args.cmd {
        let store = ctx.open_read()?;
        let idx = entry_index(&store, &index, "log get")?;
        let Some(e) = store.log_entry(idx).map_err(read_err("log get"))? else {
            return Err(
                CliError::failed("log get", format!("log entry not found: {idx}"))
                    .with_code("not_found"),
            );
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
            out.line(format!(
                "  writtenBy       {}",
                crate::termtext::escape_line(&e.header.written_by)
            ))?;
            out.line(format!("  transitionRef   {}", e.transition_ref))?;
        }
        return Ok(Exit::Success);
    }
    let since = match &args.since {
        None => None,
        Some(t) => Some(super::output::parse_time(t).ok_or_else(|| {
            CliError::usage(
                "log --since",
                format!(
                    "{t:?} is not an RFC 3339 time (2026-12-01T09:00:00Z), a date or Unix seconds"
                ),
            )
        })?),
    };
    let filtered = args.episode.is_some()
        || args.transition.is_some()
        || args.writer.is_some()
        || since.is_some()
        || args.invocation.is_some();
    let mut q = Query {
        from: args.from.map(|f| f.min(i64::MAX as u64) as i64),
        limit: args.limit,
        reverse: args.reverse,
        episode: args.episode.clone(),
        transition: args.transition.clone(),
        writer: args.writer.clone(),
        invocation: args.invocation.clone(),
        since,
    };
    let store = ctx.open_read()?;
    let (_, last) = store.log_bounds().map_err(read_err("log"))?;
    let layout = Layout::fit(terminal_width(), last.unwrap_or(0));
    let mut printed = 0u64;
    let mut last_seen: Option<i64> = None;
    let mut io_err: Option<std::io::Error> = None;
    let stop = |e: std::io::Error, slot: &mut Option<std::io::Error>| {
        *slot = Some(e);
        crate::store::Error::Corrupt {
            what: "output".into(),
            detail: "stdout closed".into(),
        }
    };
    let mut header = !out.json;
    // One line buffer for every row of the table.
    let mut buf = String::with_capacity(160);
    // One pass over `q`, printing each row; returns when the range is exhausted.
    let mut pass = |q: &Query,
                    out: &mut Output,
                    printed: &mut u64,
                    last_seen: &mut Option<i64>,
                    io_err: &mut Option<std::io::Error>|
     -> Result<(), CliError> {
        let res = if out.json && !filtered {
            // The unfiltered JSON form reads the entries directly (no joins).
            store.for_each_log(q.from, q.limit, q.reverse, |e| {
                *last_seen = Some(e.header.entry_index);
                *printed += 1;
                out.json_line(&e).map_err(|x| stop(x, io_err))
            })
        } else {
            logview::for_each(store.conn(), q, |r| {
                *last_seen = Some(r.index);
                *printed += 1;
                if out.json {
                    let e = store.log_entry(r.index)?;
                    return out.json_line(&e).map_err(|x| stop(x, io_err));
                }
                if header {
                    header = false;
                    out.line(layout.line([
                        "INDEX",
                        "TIME",
                        "WRITTEN BY",
                        "TRANSITION",
                        "OUTCOME",
                        "EPISODE",
                        "INVOCATION",
                        "ENTRY",
                    ]))
                    .map_err(|x| stop(x, io_err))?;
                }
                layout.push_row(&mut buf, &r);
                out.line(&buf).map_err(|x| stop(x, io_err))
            })
        };
        match res {
            Err(_) if io_err.is_some() => Err(io_err
                .take()
                .map(CliError::from)
                .unwrap_or_else(|| CliError::failed("log", "stdout closed"))),
            Err(e) => Err(CliError::store("log", e)),
            Ok(()) => Ok(()),
        }
    };
    pass(&q, out, &mut printed, &mut last_seen, &mut io_err)?;
    let done = |last_seen: Option<i64>| {
        args.until_index
            .is_some_and(|u| last_seen.is_some_and(|l| l >= u))
    };
    if args.follow {
        while !done(last_seen) && args.limit.is_none_or(|l| printed < l) {
            out.flush()?;
            std::thread::sleep(Duration::from_millis(500));
            q.from = Some(last_seen.map_or(q.from.unwrap_or(0), |l| l + 1));
            q.limit = args.limit.map(|l| l - printed);
            pass(&q, out, &mut printed, &mut last_seen, &mut io_err)?;
        }
    } else if printed == 0 {
        out.status(if filtered {
            "no log entries match"
        } else {
            "no log entries in this range"
        });
    }
    Ok(Exit::Success)
}
