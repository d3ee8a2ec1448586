//! `world package publish DIR (--live | --dry-run) --credential-file F`: spend the approval and
//! publish the package version, exactly once (attended; `--live` is irreversible).
//!
//! Order (every step before the attended fence is local and cheap): `mode` → `credential`
//! (flag) → the publisher (pinned) → origins and the environment (`handler`) → packet and
//! golden (`packet`) → the store → the approval (`approval`) → a still-indeterminate publish of
//! this scope (`reconcile`) → `ci` → `tty` → `confirmation` → `--dry-run` prints the rehearsal
//! and stops → the credential file (`credential reason=unusable`) → one `Registry.Publish`
//! through the broker. Exits: 0 PUBLISHED, 1 FAILED, 3 STOP, 5 INDETERMINATE (never retry:
//! `world package reconcile --probe`).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::{attended, plan, stop, work_tree, PacketArgs, RegistryArgs};
use crate::broker::handlers::registry::Publisher;
use crate::broker::BrokerError;
use crate::cli::output::Output;
use crate::cli::{CliError, Context, Exit};
use crate::ops::package::{
    self, ApprovalRefusal, PackageError, Plan, PublishOptions, Published, DEFAULT_EPISODE,
};
use crate::package::registry::{self, CredentialFile};

/// Who uploads.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PublisherChoice {
    /// world builds the tarball and speaks the registry's POST /publish itself
    World,
    /// the pinned external `ailang publish` (needs --ailang-bin)
    Ailang,
}

/// Publish a package version to the registry.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    packet: PacketArgs,
    #[command(flatten)]
    registry: RegistryArgs,
    /// PERFORM THE IRREVERSIBLE PUBLIC WRITE
    #[arg(long)]
    live: bool,
    /// Rehearse: every fence, then what --live would do; no request of any kind
    #[arg(long)]
    dry_run: bool,
    /// A file outside the working tree, mode 0600, holding the registry API key (never the
    /// environment)
    #[arg(long, value_name = "FILE")]
    credential_file: Option<PathBuf>,
    /// The approval to spend (default: the one unspent approval that stamps these bytes)
    #[arg(long, value_name = "REF")]
    approval_ref: Option<String>,
    /// The episode the publish is journaled in (its budget is one publish per scope)
    #[arg(long, default_value = DEFAULT_EPISODE)]
    episode: String,
    /// Who uploads
    #[arg(long, value_enum, default_value_t = PublisherChoice::World)]
    publisher: PublisherChoice,
    /// The `ailang` binary for --publisher ailang (archived next to the store and re-hashed
    /// before it runs)
    #[arg(long, value_name = "PATH")]
    ailang_bin: Option<PathBuf>,
    /// Seconds the upload may take before it is indeterminate
    #[arg(long, default_value_t = 300, value_name = "SECONDS")]
    timeout: u64,
}

/// Run `world package publish`.
pub fn run(ctx: &Context, out: &mut Output, a: Args) -> Result<Exit, CliError> {
    check_flags(&a)?;
    let (publisher, compiler_sha256, publisher_version) = choose_publisher(ctx, &a)?;
    let origins = a.registry.origins(WHAT)?;
    if registry::ambient_credential() {
        return Err(stop(
            WHAT,
            "handler",
            Some("refused"),
            &format!(
                "{} is set in the process environment: move it to a mode-0600 file outside the working tree and unset it",
                registry::CREDENTIAL_VARIABLE
            ),
        ));
    }
    let (plan, _) = plan(WHAT, &a.packet, publisher_version.as_deref(), origins)?;
    let mut store = ctx.open_write(false)?;
    let now = ctx.now();
    let approval = package::resolve_approval(&store, &plan, a.approval_ref.as_deref(), now);
    let (approval_ref, expires_at) = match (&approval, a.live) {
        (Ok(x), _) => (x.0.clone(), x.1),
        (Err(r), true) => return Err(stop(WHAT, "approval", Some(r.reason), &r.detail)),
        (Err(_), false) => (String::new(), now),
    };
    let scope = plan.publish_scope();
    let open = package::pending(&store).map_err(|e| CliError::store(WHAT, e))?;
    if let Some(p) = open.iter().find(|p| p.scope == scope) {
        return Err(stop(
            WHAT,
            "reconcile",
            Some("pending"),
            &format!(
                "{} publishing this version is still indeterminate; it is never retried: run `world package reconcile {} --probe` first",
                p.intent_id,
                a.packet.dir.display()
            ),
        ));
    }
    attended(
        WHAT,
        &format!(
            "about to publish {}@{} to {}\n",
            plan.packet().package,
            plan.packet().version,
            plan.origins.registry.text
        ),
        &plan.phrase(),
    )?;
    if a.dry_run {
        rehearse(out, &plan, &publisher, &scope, &approval)?;
        return Ok(Exit::Success);
    }
    let cred_path = a.credential_file.clone().unwrap_or_default();
    let credential = CredentialFile::open(&cred_path, &work_tree(&plan.dir))
        .map_err(|e| stop(WHAT, "credential", Some("unusable"), &e.to_string()))?;
    out.status(format!(
        "publishing {}@{} to {}",
        plan.packet().package,
        plan.packet().version,
        plan.origins.registry.text
    ));
    let result = package::publish(
        &mut store,
        &plan,
        PublishOptions {
            episode: a.episode.clone(),
            now,
            approval_ref,
            expires_at,
            publisher,
            compiler_sha256,
            credential,
            deadline: Instant::now() + Duration::from_secs(a.timeout),
        },
    );
    let r = match result {
        Ok(r) => r,
        Err(PackageError::Broker(BrokerError::Refused(why))) => {
            return Err(CliError::failed(WHAT, format!("FAILED. {why}")).hint(
                "nothing was journaled or spent; the approval was not consumed unless it says so",
            ))
        }
        Err(e) => return Err(CliError::failed(WHAT, e)),
    };
    report(out, &a, &r)
}

const WHAT: &str = "package publish";

/// The flag checks that need nothing else: exactly one mode, a credential file for `--live`,
/// and `--timeout` in 1..=3600.
fn check_flags(a: &Args) -> Result<(), CliError> {
    match (a.live, a.dry_run) {
        (true, true) => {
            return Err(stop(
                WHAT,
                "mode",
                Some("both"),
                "--dry-run and --live are mutually exclusive",
            ))
        }
        (false, false) => {
            return Err(stop(
                WHAT,
                "mode",
                Some("none"),
                "publish requires exactly one of --dry-run or --live",
            ))
        }
        _ => {}
    }
    if a.live && a.credential_file.is_none() {
        return Err(stop(
            WHAT,
            "credential",
            Some("absent"),
            "--credential-file names a file outside the working tree holding the registry API key; the key is never read from the environment",
        ));
    }
    if a.timeout == 0 || a.timeout > 3600 {
        return Err(CliError::usage(
            WHAT,
            format!("--timeout must be 1..=3600 seconds, got {}", a.timeout),
        ));
    }
    Ok(())
}

/// Who uploads: the publisher, the compiler's sha256 for the request (empty for `world`)
/// and the pinned `ailang`'s version line (the packet's fallback compiler).
fn choose_publisher(
    ctx: &Context,
    a: &Args,
) -> Result<(Publisher, String, Option<String>), CliError> {
    Ok(match (a.publisher, &a.ailang_bin) {
        (PublisherChoice::World, None) => (Publisher::Native, String::new(), None),
        (PublisherChoice::World, Some(_)) => {
            return Err(CliError::usage(
                WHAT,
                "--ailang-bin is for --publisher ailang",
            ))
        }
        (PublisherChoice::Ailang, None) => {
            return Err(CliError::usage(
                WHAT,
                "--publisher ailang needs --ailang-bin PATH",
            ))
        }
        (PublisherChoice::Ailang, Some(bin)) => {
            let root = crate::interp::archive::Archive::for_db(&ctx.db)
                .root()
                .join("publisher");
            let (archived, _) = crate::interp::archive::Archive::at_root(root.clone())
                .archive(bin)
                .map_err(|e| {
                    stop(
                        WHAT,
                        "handler",
                        Some("refused"),
                        &format!("--ailang-bin: {e}"),
                    )
                })?;
            let version = archived
                .manifest
                .version
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .to_string();
            (
                Publisher::Ailang {
                    root,
                    hash_ref: archived.hash_ref.clone(),
                },
                archived.hash_ref,
                Some(version),
            )
        }
    })
}

/// `--dry-run`: what `--live` would do, with no request of any kind.
fn rehearse(
    out: &mut Output,
    plan: &Plan,
    publisher: &Publisher,
    scope: &str,
    approval: &Result<(String, i64), ApprovalRefusal>,
) -> Result<(), CliError> {
    let p = plan.packet();
    out.line("REHEARSAL — no request of any kind was made.")?;
    out.line(format!("  package        {}@{}", p.package, p.version))?;
    out.line(format!("  registry       {}", plan.origins.registry.text))?;
    out.line(format!("  validator      {}", plan.origins.validator.text))?;
    out.line(format!(
        "  publisher      {}",
        match publisher {
            Publisher::Native => "world".to_string(),
            Publisher::Ailang { hash_ref, .. } => format!("ailang {hash_ref}"),
        }
    ))?;
    out.line(format!("  capability     {}", scope))?;
    match approval {
        Ok((d, e)) => {
            out.line(format!("  approval       {d}"))?;
            out.line(format!(
                "  approval scope {}",
                plan.approval_scope(*e).format()
            ))?;
        }
        Err(r) => out.line(format!(
            "  approval       none: {} ({})",
            r.reason, r.detail
        ))?,
    }
    out.line(format!("  tarball        {}", p.tarball_sha256))?;
    out.line(format!("  content        {}", p.content_hash))?;
    out.line(format!("  interface      {}", p.interface_hash))?;
    Ok(())
}

/// The publish's outcome: `PUBLISHED` (0), `INDETERMINATE` (5, never retried) or `FAILED`.
fn report(out: &mut Output, a: &Args, r: &Published) -> Result<Exit, CliError> {
    if out.json {
        out.json_line(r)?;
    }
    match r.status {
        "succeeded" => {
            if !out.json {
                out.line(format!("PUBLISHED. record {}", r.record_ref.clone().unwrap_or_default()))?;
            }
            Ok(Exit::Success)
        }
        "indeterminate" => {
            let mut e = CliError::indeterminate(WHAT, "");
            e.verbatim = Some(format!(
                "INDETERMINATE. episode {} invocation {}\n  DO NOT RETRY. Resolve it read-only:\n  world package reconcile {} --probe\n  {}",
                a.episode,
                r.intent_id.clone().unwrap_or_default(),
                a.packet.dir.display(),
                r.message.clone().unwrap_or_default()
            ));
            Err(e.with_code("indeterminate"))
        }
        "denied" => Err(CliError::failed(
            WHAT,
            format!(
                "FAILED. the broker denied Registry.Publish ({}), record {}",
                r.message.clone().unwrap_or_default(),
                r.record_ref.clone().unwrap_or_default()
            ),
        )
        .hint("episode budgets are one publish per scope; pass --episode NEW for a fresh budget (the approval was not consumed)")),
        _ => Err(CliError::failed(
            WHAT,
            format!(
                "FAILED. record {}\n  {}",
                r.record_ref.clone().unwrap_or_default(),
                r.message.clone().unwrap_or_default()
            ),
        )),
    }
}
