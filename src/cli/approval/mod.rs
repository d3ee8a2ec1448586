//! `world approval request|list|show|decide`: the person's side of `Human.Approve` /
//! `Human.PollApproval` (authority-and-broker.md §11–§12; DECISIONS H-13).

mod decide;
mod list;
mod request;
mod show;
mod view;

use clap::{Subcommand, ValueEnum};

use super::output::Output;
use super::{CliError, Context, Exit};

/// Approval commands.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Open a pending approval request for an episode and print its ref
    ///
    /// A transition passes the ref to Human.Approve (`{"op":"approve","approval_ref":R}`) or
    /// Human.PollApproval; a transition can also open one itself with
    /// `{"op":"approve","summary":TEXT}`.
    Request {
        /// The episode the request is bound to (only its sessions can use it)
        #[arg(long)]
        episode: String,
        /// What the approver is shown (at most 4096 bytes)
        #[arg(long)]
        summary: String,
        /// Who asks: 1-128 characters of [A-Za-z0-9._@:-]
        #[arg(long, default_value = "operator")]
        requester: String,
    },
    /// List approval requests with their state and the effect that consumed each
    List {
        /// Only this episode
        #[arg(long)]
        episode: Option<String>,
        /// Only requests in this state
        #[arg(long, value_enum)]
        state: Option<StateFilter>,
    },
    /// Show one approval request with its decision and claim
    Show {
        /// The request ref: sha256:<hex>, the bare hex, or a unique prefix (≥ 6 hex)
        #[arg(value_name = "REF")]
        reference: String,
    },
    /// Decide a pending request (attended: a human confirms at the terminal)
    ///
    /// --yes skips the terminal for scripts and is recorded as unattended in the decision.
    /// A decision is written once; an approval is consumed by the first Human.Approve effect
    /// of the request's episode that claims it.
    Decide {
        /// The request ref: sha256:<hex>, the bare hex, or a unique prefix (≥ 6 hex)
        #[arg(value_name = "REF")]
        reference: String,
        /// Approve the request
        #[arg(long, conflicts_with = "deny", required_unless_present = "deny")]
        approve: bool,
        /// Deny the request
        #[arg(long)]
        deny: bool,
        /// Who decides: 1-128 characters of [A-Za-z0-9._@:-]
        #[arg(long, default_value = "operator")]
        decided_by: String,
        /// No terminal confirmation (scripts, CI): recorded as unattended
        #[arg(long)]
        yes: bool,
    },
}

/// `--state` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StateFilter {
    /// Not decided yet
    Pending,
    /// Approved (consumed or not)
    Approved,
    /// Denied
    Denied,
}

/// Run `world approval …`.
pub fn run(ctx: &Context, out: &mut Output, cmd: Cmd) -> Result<Exit, CliError> {
    match cmd {
        Cmd::Request {
            episode,
            summary,
            requester,
        } => request::run(ctx, out, episode, summary, requester),
        Cmd::List { episode, state } => list::run(ctx, out, episode, state),
        Cmd::Show { reference } => show::run(ctx, out, reference),
        Cmd::Decide {
            reference,
            approve,
            deny,
            decided_by,
            yes,
        } => decide::run(ctx, out, reference, approve, deny, decided_by, yes),
    }
}
