//! `world package packet|approve|publish|reconcile|status`: attended publish of an AILANG
//! package to the registry (issue 31; authority-and-broker.md §11; the reference's
//! `cmd/world-publish`). One file per verb; the use cases are `ops::package`.
//!
//! Every refusal of a fence prints `STOP fence=<name>[ reason=<reason>]` on stderr (the
//! detail on the next line, indented), exits 3 and writes nothing. Fences: `mode` (publish:
//! exactly one of `--live`/`--dry-run`; the read-only verbs refuse `--live`), `packet`
//! (`golden-unreadable`, `unrecomputable`, `drift`), `handler` (an origin or the environment
//! refused), `approval`, `credential`, `reconcile` (a publish of this scope is still
//! indeterminate), then the attended stack `ci` → `tty` → `confirmation` (the phrase
//! `publish <vendor>/<name>@<version> irreversibly`, typed at the controlling terminal).
//! Exit codes: 0 done, 1 failed, 2 usage, 3 STOP, 5 indeterminate (never retry; reconcile),
//! 6 writer lock held.

mod approve;
mod flags;
mod packet;
mod publish;
mod reconcile;
mod status;
mod steps;

pub use self::flags::{PacketArgs, RegistryArgs};
pub use self::steps::{attended, plan, refuse_live, stop, work_tree};

use clap::Subcommand;

use super::output::Output;
use super::{CliError, Context, Exit};

/// The package verbs.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Recompute a package's ready packet and compare it with a golden (read only)
    Packet(packet::Args),
    /// Mint the one-shot approval to publish a package version (attended)
    Approve(approve::Args),
    /// Spend the approval: publish the package version, exactly once (attended; irreversible with --live)
    Publish(publish::Args),
    /// Resolve publishes left indeterminate by reading the registry (GET only)
    Reconcile(reconcile::Args),
    /// List publish approvals and Registry.Publish effects
    Status(status::Args),
}

/// Run one package verb.
pub fn run(ctx: &Context, out: &mut Output, cmd: Cmd) -> Result<Exit, CliError> {
    match cmd {
        Cmd::Packet(a) => packet::run(ctx, out, a),
        Cmd::Approve(a) => approve::run(ctx, out, a),
        Cmd::Publish(a) => publish::run(ctx, out, a),
        Cmd::Reconcile(a) => reconcile::run(ctx, out, a),
        Cmd::Status(a) => status::run(ctx, out, a),
    }
}
