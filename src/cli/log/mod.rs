//! `world log`: stream log entries as a table that says what happened, or JSON lines;
//! `world log get INDEX`.

mod entry;
mod get;
mod line;
mod list;

pub(crate) use self::entry::entry_index;
pub use self::line::JSON_FIELDS;

use clap::Subcommand;

use super::output::Output;
use super::{CliError, Context, Exit};

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

/// Run `world log`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    match args.cmd {
        Some(Cmd::Get { index }) => get::run(ctx, out, &index),
        None => list::run(ctx, out, args),
    }
}
