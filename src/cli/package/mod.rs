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
mod packet;
mod publish;
mod reconcile;
mod status;

use std::path::{Path, PathBuf};

use clap::Subcommand;

use super::output::Output;
use super::{fence, CliError, Context, Exit};
use crate::ops::package::{compare_golden, Plan};
use crate::package::packet::ReadyPacket;
use crate::package::registry::Origins;

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

/// The package and how its packet is checked.
#[derive(clap::Args, Debug, Clone)]
pub struct PacketArgs {
    /// The package directory (holding ailang.toml)
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// A ready-packet golden the recomputed packet must equal in every field
    #[arg(long, value_name = "FILE")]
    pub golden: Option<PathBuf>,
    /// The packet's compilerVersion (default: the golden's, else the pinned publisher's
    /// `--version`, else empty)
    #[arg(long, value_name = "TEXT")]
    pub compiler_version: Option<String>,
}

/// Where the package goes.
#[derive(clap::Args, Debug, Clone)]
pub struct RegistryArgs {
    /// The registry bucket origin, https only (default https://storage.googleapis.com/ailang-registry)
    #[arg(long, value_name = "URL", conflicts_with = "loopback_registry")]
    pub registry_origin: Option<String>,
    /// A LOCAL registry on this machine (loopback only, http allowed): its origin serves both
    /// the bucket layout and POST /publish
    #[arg(long, value_name = "URL")]
    pub loopback_registry: Option<String>,
}

impl RegistryArgs {
    /// The origins, or `STOP fence=handler reason=refused`.
    pub fn origins(&self, what: &str) -> Result<Origins, CliError> {
        match &self.loopback_registry {
            Some(o) => Origins::loopback(o),
            None => Origins::production(self.registry_origin.as_deref()),
        }
        .map_err(|e| stop(what, "handler", Some("refused"), &e))
    }
}

/// A fence refusal: `STOP fence=<fence>[ reason=<reason>]` and the detail line, exit 3.
pub fn stop(what: &str, fence: &str, reason: Option<&str>, detail: &str) -> CliError {
    CliError::fence(what, fence, reason, detail).with_code("stop")
}

/// `--live` on a read-only verb: refused rather than ignored.
pub fn refuse_live(what: &str, verb: &str, live: bool) -> Result<(), CliError> {
    if live {
        return Err(stop(
            what,
            "mode",
            Some(&format!("{verb}-is-read-only")),
            &format!("{verb} performs no public write; --live is refused rather than ignored"),
        ));
    }
    Ok(())
}

/// Recompute the plan and hold it to the golden when one is given (`STOP fence=packet`).
pub fn plan(
    what: &str,
    args: &PacketArgs,
    fallback_compiler: Option<&str>,
    origins: Origins,
) -> Result<(Plan, Option<ReadyPacket>), CliError> {
    let golden = match &args.golden {
        None => None,
        Some(g) => Some(ReadyPacket::load(g).map_err(|e| {
            stop(
                what,
                "packet",
                Some("golden-unreadable"),
                &format!("{}: {e}", g.display()),
            )
        })?),
    };
    let compiler = args
        .compiler_version
        .clone()
        .or_else(|| golden.as_ref().map(|g| g.compiler_version.clone()))
        .or_else(|| fallback_compiler.map(str::to_owned))
        .unwrap_or_default();
    let plan = Plan::new(&args.dir, &compiler, origins)
        .map_err(|e| stop(what, "packet", Some("unrecomputable"), &e.to_string()))?;
    if let Some(g) = &golden {
        if let Some(d) = compare_golden(plan.packet(), g) {
            return Err(stop(
                what,
                "packet",
                Some("drift"),
                &format!(
                    "{} differs: recomputed {:?}, golden {:?} — the bytes on disk are not the artifact that was reviewed",
                    d.field, d.recomputed, d.golden
                ),
            )
            .detail("field", d.field));
        }
    }
    Ok((plan, golden))
}

/// The attended stack: `ci` (CI or GITHUB_ACTIONS set), `tty` (the controlling terminal must
/// open), `confirmation` (the exact phrase typed there; Ctrl-D or a closed terminal is `eof`).
pub fn attended(what: &str, intro: &str, phrase: &str) -> Result<(), CliError> {
    for var in ["CI", "GITHUB_ACTIONS"] {
        if std::env::var_os(var).is_some_and(|v| !v.is_empty()) {
            return Err(stop(
                what,
                "ci",
                Some(&var.to_ascii_lowercase()),
                &format!("{var} is set; this command is never run in CI"),
            ));
        }
    }
    let mut tty = fence::open_tty().map_err(|e| {
        stop(
            what,
            "tty",
            Some("no-controlling-terminal"),
            &format!("opening /dev/tty failed: {e}; there is no controlling terminal here (an agent harness, setsid, cron or CI). fix: run it yourself from a terminal window; an agent cannot run this step"),
        )
    })?;
    let prompt = format!(
        "{intro}Type exactly, to proceed with an IRREVERSIBLE public write:\n  {phrase}\n> "
    );
    match tty.ask(&prompt) {
        Ok(Some(line)) if line.trim() == phrase => Ok(()),
        Ok(Some(_)) => Err(stop(
            what,
            "confirmation",
            Some("mismatch"),
            "the typed line is not the required confirmation phrase",
        )),
        Err(e) if fence::timed_out(&e) => Err(stop(
            what,
            "confirmation",
            Some("timeout"),
            &format!("{e}; nothing was written and the writer lock is released"),
        )),
        Ok(None) | Err(_) => Err(stop(
            what,
            "confirmation",
            Some("eof"),
            "the terminal closed before a confirmation line was typed",
        )),
    }
}

/// The working tree a credential file must stay out of: the git work tree holding `dir`, else
/// `dir` itself.
pub fn work_tree(dir: &Path) -> PathBuf {
    let start = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    start
        .ancestors()
        .find(|a| a.join(".git").exists())
        .map_or(start.clone(), Path::to_path_buf)
}
