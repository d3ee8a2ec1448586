//! `world effects`: effect records, pending intents, and one record resolved all the way down.

mod list;
mod pending;
mod show;

pub use self::list::JSON_FIELDS;

use clap::{Args as ClapArgs, Subcommand};

use super::output::Output;
use super::{CliError, Context, Exit};
use crate::broker::listing;

/// List effect records (table or JSON lines), or intents without outcome with --pending.
#[derive(ClapArgs, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    /// Show one record resolved down to its request and result
    #[command(subcommand)]
    cmd: Option<Cmd>,
    /// Only this episode
    #[arg(long)]
    episode: Option<String>,
    /// Only the records of this invocation (e.g. cli:ep1:t1)
    #[arg(long)]
    invocation: Option<String>,
    /// Only denials
    #[arg(long)]
    denied: bool,
    /// Only this effect name
    #[arg(long, value_name = "NAME")]
    effect: Option<String>,
    /// List effect intents without an outcome (indeterminate; never retried)
    #[arg(long)]
    pending: bool,
}

/// `world effects show`.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Resolve one effect record down to its request and result
    Show {
        /// The effect record: its ref (sha256:…), a unique prefix of its hex as tables show it
        /// (at least 8 hex digits), or its effect intent id (effect:<episode>:<n>)
        reference: String,
    },
}

/// `world effects show REFERENCE` on behalf of another verb (`world show effect:<ep>:<n>`,
/// an effect that no log entry holds, such as an attended `Registry.Publish`).
pub(crate) fn run_show(
    ctx: &Context,
    out: &mut Output,
    reference: String,
) -> Result<Exit, CliError> {
    show::run(ctx, out, &reference)
}

/// Run `world effects`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    match args.cmd {
        Some(Cmd::Show { reference }) => show::run(ctx, out, &reference),
        None if args.pending => pending::run(ctx, out, args.episode.as_deref()),
        None => list::run(
            ctx,
            out,
            &listing::Filter {
                episode: args.episode,
                invocation: args.invocation,
                denied: args.denied,
                effect: args.effect,
            },
        ),
    }
}
