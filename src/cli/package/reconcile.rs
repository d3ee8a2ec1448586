//! `world package reconcile [DIR] [--probe]`: list `Registry.Publish` intents left without an
//! outcome and, with `--probe`, resolve each by reading the registry bucket (GET only; never an
//! upload): `succeeded-reconciled` and `not-published`/`conflict` are recorded as the effect's
//! succeeded or failed record and outcome; `probe-unavailable` leaves it open for a human.
//! Exit 0 when nothing stays indeterminate, 1 when a conflict was found, 5 while one stays open.

use std::path::PathBuf;
use std::time::Duration;

use super::refuse_live;
use crate::cli::output::Output;
use crate::cli::{CliError, Context, Exit};
use crate::ops::package::{self, ReconcileOptions};
use crate::package::registry::DEFAULT_CONTROL;
use crate::package::Manifest;

/// Resolve indeterminate publishes.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only this package's publishes (its ailang.toml names it); default: all
    #[arg(value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Issue the read-only metadata GETs (without it nothing is resolved)
    #[arg(long)]
    probe: bool,
    /// The publishes went to a LOCAL registry on this machine (loopback, http allowed)
    #[arg(long)]
    loopback_registry: bool,
    /// The known-positive control probed in the same pass, VENDOR/NAME@VERSION
    #[arg(long, value_name = "VENDOR/NAME@VERSION")]
    control: Option<String>,
    /// Milliseconds between probe passes
    #[arg(long, default_value_t = 0, value_name = "MS")]
    interval_ms: u64,
    /// Refused: reconcile performs no public write
    #[arg(long, hide = true)]
    live: bool,
}

/// Run `world package reconcile`.
pub fn run(ctx: &Context, out: &mut Output, a: Args) -> Result<Exit, CliError> {
    const WHAT: &str = "package reconcile";
    refuse_live(WHAT, "reconcile", a.live)?;
    let control = match &a.control {
        None => (
            DEFAULT_CONTROL.0.to_string(),
            DEFAULT_CONTROL.1.to_string(),
            DEFAULT_CONTROL.2.to_string(),
        ),
        Some(c) => {
            let parsed = c
                .split_once('@')
                .and_then(|(p, v)| p.split_once('/').map(|(vn, n)| (vn, n, v)));
            match parsed {
                Some((v, n, ver)) if !v.is_empty() && !n.is_empty() && !ver.is_empty() => {
                    (v.to_string(), n.to_string(), ver.to_string())
                }
                _ => {
                    return Err(CliError::usage(
                        WHAT,
                        format!("--control {c:?} is not VENDOR/NAME@VERSION"),
                    ))
                }
            }
        }
    };
    let package = match &a.dir {
        None => None,
        Some(d) => Some(
            Manifest::load(d)
                .map_err(|e| CliError::failed(WHAT, format!("{}: {e}", d.display())))?
                .name,
        ),
    };
    let mut store = ctx.open_write(false)?;
    let done = package::reconcile(
        &mut store,
        &ReconcileOptions {
            probe: a.probe,
            allow_loopback: a.loopback_registry,
            package,
            control,
            interval: Duration::from_millis(a.interval_ms),
            now: ctx.now(),
        },
    )
    .map_err(|e| CliError::failed(WHAT, e))?;
    let mut open = 0;
    let mut conflict = 0;
    for r in &done {
        match r.state {
            "probe-unavailable" => open += 1,
            "conflict" => conflict += 1,
            _ => {}
        }
        if out.json {
            out.json_line(r)?;
        } else {
            out.line(format!("{} {}", r.state, r.pending.intent_id))?;
            out.line(format!("  scope {}", r.pending.scope))?;
            out.line(format!("  {}", r.detail))?;
            if let Some(rec) = &r.record_ref {
                out.line(format!("  record {rec}"))?;
            }
        }
    }
    out.status(format!(
        "{} Registry.Publish intent(s) without an outcome; {} still indeterminate",
        done.len(),
        open
    ));
    Ok(Exit::of_reconcile(open > 0, conflict > 0))
}
