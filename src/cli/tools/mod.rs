//! `world tools list --session S`: what this session can see and call.

mod list;

use clap::Subcommand;

use super::common::{SessionArgs, UnattestedFlag};
use super::output::Output;
use super::{CliError, Context, Exit};

/// Grant-filtered tool views.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// The transitions this session's live grants can see and call, in registry id order
    List {
        #[command(flatten)]
        session: SessionArgs,
        #[command(flatten)]
        unattested: UnattestedFlag,
    },
}

/// Run `world tools …`.
pub fn run(ctx: &Context, out: &mut Output, cmd: Cmd) -> Result<Exit, CliError> {
    match cmd {
        Cmd::List {
            session,
            unattested,
        } => list::run(ctx, out, &session, &unattested),
    }
}
