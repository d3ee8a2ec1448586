//! `world broker check`: what the broker would decide, without writing anything.

mod check;

use clap::Subcommand;

use super::output::Output;
use super::{CliError, Context, Exit, SessionArgs, UnattestedFlag};

/// Broker commands.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Decide EFFECT SCOPE COST for a session (budgets seeded from the journal); writes nothing
    Check {
        #[command(flatten)]
        session: SessionArgs,
        /// Effect name
        effect: String,
        /// Scope
        scope: String,
        /// Cost in budget units
        #[arg(allow_negative_numbers = true)]
        cost: i64,
        #[command(flatten)]
        unattested: UnattestedFlag,
    },
}

/// Run `world broker …`.
pub fn run(ctx: &Context, out: &mut Output, cmd: Cmd) -> Result<Exit, CliError> {
    match cmd {
        Cmd::Check {
            session,
            effect,
            scope,
            cost,
            unattested,
        } => check::run(
            ctx,
            out,
            &session,
            check::Ask {
                effect,
                scope,
                cost,
            },
            &unattested,
        ),
    }
}
