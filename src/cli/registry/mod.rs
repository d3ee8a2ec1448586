//! `world registry get NAME`: a named registry head.

mod get;

use clap::Subcommand;

use super::output::Output;
use super::{CliError, Context, Exit};

/// Registry-head commands.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Print a registry head, e.g. world/transition-registry/v1 (GET /v1/registry/{name})
    Get {
        /// Registry name
        name: String,
    },
}

/// Run `world registry …`.
pub fn run(ctx: &Context, out: &mut Output, cmd: Cmd) -> Result<Exit, CliError> {
    match cmd {
        Cmd::Get { name } => get::run(ctx, out, name),
    }
}
