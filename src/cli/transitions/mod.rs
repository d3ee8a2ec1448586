//! `world transitions list [--json]` and `world transitions show ID`: the selected transition
//! registry revision (transitions.md §1, spec README command table).

mod head;
mod list;
mod show;

use clap::Subcommand;

use super::output::Output;
use super::{CliError, Context, Exit};

/// Transition-registry reads.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// List every descriptor of the current revision (table, or JSON lines with --json)
    List,
    /// Show one descriptor and its MCP tool name (ID may also be the MCP name)
    Show {
        /// Transition id (or its escaped MCP tool name)
        id: String,
    },
}

/// Run `world transitions …`.
pub fn run(ctx: &Context, out: &mut Output, cmd: Cmd) -> Result<Exit, CliError> {
    match cmd {
        Cmd::List => list::run(ctx, out),
        Cmd::Show { id } => show::run(ctx, out, id),
    }
}
