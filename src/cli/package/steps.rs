//! What the package verbs share: the fence refusal, the read-only verbs' `--live` refusal,
//! the plan (packet recomputed and compared with the golden), the attended confirmation and
//! the work tree.

use std::path::{Path, PathBuf};

use super::PacketArgs;
use crate::cli::{fence, CliError};
use crate::ops::package::{compare_golden, Plan};
use crate::package::packet::ReadyPacket;
use crate::package::registry::Origins;

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
