//! `world package approve DIR`: mint the one-shot approval to publish this package version
//! (attended). The approval binds the exact bytes: registry, package, version, manifest and the
//! three digests, and an expiry; `world package publish` spends it once.
//!
//! Order: packet (and golden) → origins → show the approval scope → `ci` → `tty` →
//! `confirmation` → one transaction writing the request, the decision and two approvals heads.

use super::{attended, plan, PacketArgs, RegistryArgs};
use crate::cli::output::Output;
use crate::cli::{CliError, Context, Exit};
use crate::ops::package::{self, ApproveOptions, DEFAULT_EPISODE};

/// Mint the one-shot publish approval.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    packet: PacketArgs,
    #[command(flatten)]
    registry: RegistryArgs,
    /// Who asks: 1-128 characters of [A-Za-z0-9._@:-]
    #[arg(long, default_value = "operator")]
    requester: String,
    /// Who approves: 1-128 characters of [A-Za-z0-9._@:-]
    #[arg(long, default_value = "operator")]
    decided_by: String,
    /// The episode the publish will be journaled in
    #[arg(long, default_value = DEFAULT_EPISODE)]
    episode: String,
    /// Seconds the approval stays spendable
    #[arg(long, default_value_t = 3600, value_name = "SECONDS")]
    ttl: i64,
}

/// Run `world package approve`.
pub fn run(ctx: &Context, out: &mut Output, a: Args) -> Result<Exit, CliError> {
    const WHAT: &str = "package approve";
    if a.ttl < 0 {
        return Err(CliError::usage(
            WHAT,
            format!("--ttl must be non-negative, got {}", a.ttl),
        ));
    }
    let origins = a.registry.origins(WHAT)?;
    let (plan, _) = plan(WHAT, &a.packet, None, origins)?;
    let now = ctx.now();
    let expires_at = now.saturating_add(a.ttl);
    let scope = plan.approval_scope(expires_at).format();
    // The store is opened before the fence: a mistyped path is learned before the phrase.
    let mut store = ctx.open_write(false)?;
    let intro = format!("about to mint a ONE-SHOT approval for:\n  {scope}\n");
    attended(WHAT, &intro, &plan.phrase())?;
    let minted = package::approve(
        &mut store,
        &plan,
        &ApproveOptions {
            requester: &a.requester,
            decided_by: &a.decided_by,
            episode: &a.episode,
            now,
            expires_at,
        },
    )
    .map_err(|e| CliError::failed(WHAT, format!("mint approval: {e}")))?;
    if out.json {
        out.json_line(&minted)?;
    } else {
        out.line(format!("minted approval {}", minted.approval_ref))?;
        out.status(format!(
            "spend it exactly once, before {}, with: world package publish {} --live --approval-ref {} --credential-file FILE",
            crate::cli::output::rfc3339(expires_at),
            a.packet.dir.display(),
            minted.approval_ref
        ));
    }
    Ok(Exit::Success)
}
