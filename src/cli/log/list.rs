//! `world log`: stream log entries as a table that says what happened, or JSON lines.

use std::time::Duration;

use super::line::{columns, Line, FIT_ROWS};
use super::Args;
use crate::cli::output::{terminal_width, Output};
use crate::cli::table::Layout;
use crate::cli::{read_err, CliError, Context, Exit};
use crate::store::logview::{self, Query};

/// `world log [filters]`: the entries `args` select, streamed in constant memory as a table
/// fitted to its first rows, or JSON lines; with `--follow`, new entries as they commit.
pub(super) fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    let (mut q, filtered) = query(&args)?;
    let store = ctx.open_read()?;
    let (_, last) = store.log_bounds().map_err(read_err("log"))?;
    let cols = columns(last.unwrap_or(0));
    let limit = terminal_width().map(usize::from);
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
    // The table is fitted to its first rows (FIT_ROWS), then streamed with that layout.
    let mut layout: Option<Layout> = None;
    let mut pending: Vec<Vec<String>> = Vec::new();
    let flush_table = |layout: &mut Option<Layout>,
                       pending: &mut Vec<Vec<String>>,
                       out: &mut Output|
     -> std::io::Result<()> {
        if pending.is_empty() {
            return Ok(());
        }
        let l = match layout {
            Some(l) => l,
            None => {
                // The first rows: fit, name what is hidden, print the header.
                let l = Layout::fit(&cols, pending, limit);
                let hidden = l.hidden();
                if !hidden.is_empty() {
                    out.status(crate::cli::output::hidden_note(&hidden));
                }
                out.line(l.header())?;
                layout.insert(l)
            }
        };
        for cells in pending.drain(..) {
            out.line(l.row(&cells))?;
        }
        Ok(())
    };
    // One pass over `q`, printing each row; returns when the range is exhausted.
    let mut pass = |q: &Query,
                    out: &mut Output,
                    printed: &mut u64,
                    last_seen: &mut Option<i64>,
                    io_err: &mut Option<std::io::Error>|
     -> Result<(), CliError> {
        let res = logview::for_each(store.conn(), q, |r| {
            *last_seen = Some(r.index);
            *printed += 1;
            let index = r.index;
            let line = Line::of(&store, r)?;
            if out.json {
                let Some(e) = store.log_entry(index)? else {
                    return Ok(());
                };
                return out.json_line(&line.json(&e)).map_err(|x| stop(x, io_err));
            }
            pending.push(line.cells());
            if layout.is_some() || pending.len() >= FIT_ROWS {
                flush_table(&mut layout, &mut pending, out).map_err(|x| stop(x, io_err))?;
            }
            Ok(())
        })
        .and_then(|()| flush_table(&mut layout, &mut pending, out).map_err(|x| stop(x, io_err)));
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

/// The log query `args` ask for, and whether any filter (not just a range) was given.
fn query(args: &Args) -> Result<(Query, bool), CliError> {
    let since = match &args.since {
        None => None,
        Some(t) => Some(crate::cli::output::parse_time(t).ok_or_else(|| {
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
    let q = Query {
        from: args.from.map(|f| f.min(i64::MAX as u64) as i64),
        limit: args.limit,
        reverse: args.reverse,
        episode: args.episode.clone(),
        transition: args.transition.clone(),
        writer: args.writer.clone(),
        invocation: args.invocation.clone(),
        since,
    };
    Ok((q, filtered))
}
