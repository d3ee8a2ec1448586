//! `world session mint|list|show|revoke` (authority-and-broker.md §2, DEC-CLI-3).

mod credentials;
mod list;
mod mint;
mod prompt;
mod revoke;
mod show;
mod token_file;

pub use self::credentials::GrantBudget;
pub use self::list::JSON_FIELDS;
pub use self::mint::MintArgs;

use clap::Subcommand;

use super::output::Output;
use super::{CliError, Context, Exit};

/// Session commands.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Mint a session credential for an episode (attended: a human confirms at the terminal)
    ///
    /// The token (64 hex) is written to --out (mode 0600, never overwritten) or printed once on
    /// stdout; only its sha256 is stored. --yes skips the terminal for scripts and CI and is
    /// recorded as unattended.
    Mint(MintArgs),
    /// List live session credentials: attended, expiry, and each grant's remaining budget
    List {
        /// Only this episode
        #[arg(long)]
        episode: Option<String>,
        /// Also list expired and revoked credentials (state `expired`, `revoked`)
        #[arg(long)]
        all: bool,
    },
    /// Show one credential: state, expiry, and per grant the budget, what the episode spent
    /// and what remains (as the broker would seed it)
    Show {
        /// The credential_id: 64 hex, or a unique prefix (≥ 6 hex) as `session list` prints it;
        /// live, expired or revoked
        #[arg(value_name = "CREDENTIAL_ID")]
        id: String,
    },
    /// Revoke one credential by id, or every credential of an episode
    Revoke {
        /// The credential_id: 64 hex, or a unique prefix (≥ 6 hex) as `session list` prints it
        #[arg(
            value_name = "CREDENTIAL_ID",
            required_unless_present = "episode",
            conflicts_with = "episode"
        )]
        id: Option<String>,
        /// Revoke every credential of this episode
        #[arg(long)]
        episode: Option<String>,
    },
}

/// Run `world session …`.
pub fn run(ctx: &Context, out: &mut Output, cmd: Cmd) -> Result<Exit, CliError> {
    match cmd {
        Cmd::Mint(a) => mint::run(ctx, out, a),
        Cmd::List { episode, all } => list::run(ctx, out, episode.as_deref(), all),
        Cmd::Show { id } => show::run(ctx, out, &id),
        Cmd::Revoke { id, episode } => revoke::run(ctx, out, id, episode),
    }
}

/// Refuse a verb that must name its store (`mint`, `revoke`) when `--db`/`WORLD_DB` did not.
fn need_explicit_db(ctx: &Context, verb: &str) -> Result<(), CliError> {
    if ctx.db_explicit {
        Ok(())
    } else {
        Err(CliError::usage(
            format!("session {verb}"),
            "name the store explicitly with --db PATH or WORLD_DB",
        ))
    }
}
