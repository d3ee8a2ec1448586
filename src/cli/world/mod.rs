//! `world world get REF`: one world row.

mod get;

use clap::Subcommand;

use super::output::Output;
use super::{CliError, Context, Exit};

/// World-row commands.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Print one world row `{ref, revision, stateRoot, logHead}` (GET /v1/worlds/{ref})
    Get {
        /// The world ref: sha256:<hex>, the bare hex, a unique prefix (≥ 6 hex), or `head`
        #[arg(value_name = "REF")]
        reference: String,
    },
}

/// Run `world world …`.
pub fn run(ctx: &Context, out: &mut Output, cmd: Cmd) -> Result<Exit, CliError> {
    match cmd {
        Cmd::Get { reference } => get::run(ctx, out, reference),
    }
}
