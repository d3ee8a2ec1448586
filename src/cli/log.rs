//! `world log`: stream log entries as a table that says what happened, or JSON lines;
//! `world log get INDEX`.

use std::time::Duration;

use clap::Subcommand;

use super::output::{rfc3339, terminal_width, Output};
use super::table::{cell_text, Col, Layout};
use super::{read_err, CliError, Context, Exit};
use crate::ops::outcome::Outcome;
use crate::store::logview::{self, Query, Row};

/// List log entries in constant memory, oldest first (or newest first with --reverse).
///
/// The table says what happened at each entry: index, time (the commit intent's logical
/// time), writer, transition (`(commit)` for a client commit), outcome (`ok`, `refused`,
/// `denied`, `failed`; README "Outcomes"), episode, a short entry hash any ref argument takes
/// and the invocation id. On a narrow terminal whole columns are hidden, never cut
/// (docs/TABLES.md). `--json` prints one line per entry with the same fields and the entry
/// itself (docs/json/log-line.schema.json), e.g. `world log --json | jq
/// 'select(.outcome=="denied")'`.
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
    /// seconds); client commits sent without a `rest:` id carry no time and are left out
    #[arg(long, value_name = "TIME")]
    since: Option<String>,
    /// Only the entry of this invocation id (<surface>:<episode>:<task>, or the rest:<id> a
    /// client commit was sent with)
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

/// The columns of `world log` (docs/TABLES.md): INDEX, OUTCOME and ENTRY (the short entry
/// hash `show`/`why` take) always show; as the terminal narrows EPISODE (the invocation id
/// names it too), WRITTEN BY, TIME, INVOCATION and TRANSITION are hidden in that order. Every
/// cell is an identifier, printed whole or not at all.
pub(crate) fn columns(last_index: i64) -> Vec<Col> {
    vec![
        Col::id("index")
            .right()
            .min(last_index.max(0).to_string().len()),
        Col::id("time").drop(3),
        Col::id("written by").drop(2),
        Col::id("transition").drop(5),
        Col::id("outcome"),
        Col::id("episode").drop(1),
        Col::id("entry"),
        Col::id("invocation").drop(4),
    ]
}

/// The members of a `log --json` line (docs/json/log-line.schema.json), the fields
/// `--json=FIELDS` may select.
pub const JSON_FIELDS: &[&str] = &[
    "index",
    "time",
    "logicalTime",
    "writtenBy",
    "kind",
    "transition",
    "outcome",
    "episode",
    "invocation",
    "entry",
    "entryHash",
    "transitionRef",
    "header",
];

/// Hex digits of the ENTRY column (a prefix `show`, `why` and `log get` take).
const ENTRY_W: usize = 12;

/// Rows read before the streamed table is fitted to the terminal (later rows reuse the
/// layout; an identifier wider than its column still prints whole).
const FIT_ROWS: usize = 256;

/// What `world log` prints of one entry: the table's cells and the `--json` line's members
/// (docs/json/log-line.schema.json), from one place.
pub(crate) struct Line {
    row: Row,
    outcome: Outcome,
}

impl Line {
    /// The entry's line: its view row and [`crate::ops::outcome::of_row`]'s outcome.
    pub(crate) fn of(store: &crate::store::Store, row: Row) -> Result<Line, crate::store::Error> {
        let outcome = crate::ops::outcome::of_row(store, &row)?;
        Ok(Line { row, outcome })
    }

    fn entry(&self) -> &str {
        let hex = self
            .row
            .entry_hash
            .strip_prefix("sha256:")
            .unwrap_or(&self.row.entry_hash);
        &hex[..hex.len().min(ENTRY_W)]
    }

    fn kind(&self) -> &'static str {
        if self.row.coordinator {
            "invocation"
        } else {
            "commit"
        }
    }

    /// The table's cells, in [`columns`]' order (through `table::cell_text`).
    fn cells(&self) -> Vec<String> {
        let r = &self.row;
        let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        [
            r.index.to_string(),
            r.logical_time.map(rfc3339).unwrap_or_else(|| "-".into()),
            r.written_by.clone(),
            match (&r.transition, self.kind()) {
                (Some(t), _) => t.clone(),
                (None, "commit") => "(commit)".into(),
                (None, _) => "-".into(),
            },
            self.outcome.to_string(),
            dash(&r.episode_id),
            self.entry().to_string(),
            dash(&r.invocation_id),
        ]
        .iter()
        // Client-written values (writtenBy, ids) are shown escaped on one line (DEC-TRUST3-4).
        .map(|c| cell_text(&crate::termtext::escape_line(c)))
        .collect()
    }

    /// The `--json` line: every member the table shows, then the entry itself (`header`,
    /// `entryHash`, `transitionRef`, as `log get` prints it).
    fn json(&self, entry: &crate::store::LogEntry) -> serde_json::Value {
        let r = &self.row;
        serde_json::json!({
            "index": r.index,
            "time": r.logical_time.map(rfc3339),
            "logicalTime": r.logical_time,
            "writtenBy": r.written_by,
            "kind": self.kind(),
            "transition": r.transition,
            "outcome": self.outcome,
            "episode": r.episode_id,
            "invocation": r.invocation_id,
            "entry": self.entry(),
            "entryHash": entry.entry_hash,
            "transitionRef": entry.transition_ref,
            "header": entry.header,
        })
    }
}

/// `world log get INDEX`: one log entry's header, as a view or JSON.
fn get(ctx: &Context, out: &mut Output, index: &str) -> Result<Exit, CliError> {
    let store = ctx.open_read()?;
    let idx = entry_index(&store, index, "log get")?;
    let Some(e) = store.log_entry(idx).map_err(read_err("log get"))? else {
        return Err(
            CliError::failed("log get", format!("log entry not found: {idx}"))
                .with_code("not_found"),
        );
    };
    if out.json {
        out.json_line(&e)?;
    } else {
        out.view(format!("entry {}", e.header.entry_index))?;
        out.view(format!("  entryHash       {}", e.entry_hash))?;
        out.view(format!("  semanticsEpoch  {}", e.header.semantics_epoch))?;
        out.view(format!("  transitionFn    {}", e.header.transition_fn))?;
        out.view(format!("  interpreter     {}", e.header.interpreter))?;
        out.view(format!("  prevEntryHash   {}", e.header.prev_entry_hash))?;
        out.view(format!(
            "  writtenBy       {}",
            crate::termtext::escape_line(&e.header.written_by)
        ))?;
        out.view(format!("  transitionRef   {}", e.transition_ref))?;
    }
    Ok(Exit::Success)
}

/// Run `world log`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    if let Some(Cmd::Get { index }) = args.cmd {
        return get(ctx, out, &index);
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
                    out.status(super::output::hidden_note(&hidden));
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
