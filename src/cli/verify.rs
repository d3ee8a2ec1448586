//! `world verify` (alias `fsck`): re-hash every object and check the log, links and journal
//! (store-format.md §13.1).

use std::time::{Duration, Instant};

use super::output::Output;
use super::{read_err, CliError, Context, Exit};

/// Check the whole store; exit 0 when clean, 3 on any failure (warnings never fail).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Run SQLite's full `PRAGMA integrity_check` instead of `quick_check`
    #[arg(long)]
    full: bool,
}

/// Run `world verify`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    // A v4 store with a table missing cannot be opened, but that is verify's own finding
    // (issue 13 §3: a `schema` failure, exit 3, in `--json` too), not an open error.
    let store = match ctx.open_read() {
        Ok(s) => s,
        Err(e) => {
            if let Err(damaged @ crate::store::Error::SchemaIntegrity { .. }) =
                crate::store::Store::open_read(&ctx.db)
            {
                let report = crate::store::verify::Report::unopenable(damaged.to_string());
                return print_report(out, &report);
            }
            return Err(e);
        }
    };
    let start = Instant::now();
    let mut bar: Option<indicatif::ProgressBar> = None;
    let show = !out.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut progress = |done: u64, total: u64| {
        if !show {
            return;
        }
        if bar.is_none() && start.elapsed() > Duration::from_secs(1) {
            let b = indicatif::ProgressBar::with_draw_target(
                Some(total),
                indicatif::ProgressDrawTarget::stderr(),
            );
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "verify {bar:40} {bytes}/{total_bytes} {bytes_per_sec}",
            ) {
                b.set_style(style);
            }
            bar = Some(b);
        }
        if let Some(b) = &bar {
            b.set_position(done);
        }
    };
    let report =
        crate::ops::verify::verify(&store, args.full, &mut progress).map_err(read_err("verify"))?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    print_report(out, &report)
}

/// Print `report` (text or `--json`); exit 0 when clean, 3 on any failure.
fn print_report(out: &mut Output, report: &crate::store::verify::Report) -> Result<Exit, CliError> {
    if out.json {
        let mut v = serde_json::to_value(report).map_err(|e| CliError::failed("verify", e))?;
        v["ok"] = report.ok().into();
        out.json_line(&v)?;
    } else {
        let range = match report.range {
            Some((a, b)) => format!("{}–{}", a, b),
            None => "none".into(),
        };
        out.summary(format!(
            "{} entries, {}, head {}; {} objects ({} bytes) re-hashed; {} entries recomputed, {} client-supplied entries not recomputed",
            report.entries,
            range,
            report.head.as_deref().unwrap_or("(none)"),
            report.objects,
            report.payload_bytes,
            report.recomputed,
            report.not_recomputed
        ))?;
        for f in &report.failures {
            let n = report.failure_counts.get(f.category).copied().unwrap_or(1);
            out.line(format!(
                "{} {}{}{}: {}{}",
                super::output::paint("FAIL", 31, out.color),
                f.category,
                f.index
                    .map(|i| format!(" at index {i}"))
                    .unwrap_or_default(),
                f.reference
                    .as_ref()
                    .map(|r| format!(" ({})", crate::termtext::escape_line(r)))
                    .unwrap_or_default(),
                crate::termtext::escape_line(&f.reason),
                if n > 1 {
                    format!(" (+{} more)", n - 1)
                } else {
                    String::new()
                }
            ))?;
        }
        let quiet = out.quiet;
        for w in report.warnings.iter().filter(|_| !quiet) {
            let n = report.warning_counts.get(w.category).copied().unwrap_or(1);
            out.line(format!(
                "warn {}{}{}: {}{}",
                w.category,
                w.index
                    .map(|i| format!(" at index {i}"))
                    .unwrap_or_default(),
                w.reference
                    .as_ref()
                    .map(|r| format!(" ({})", crate::termtext::escape_line(r)))
                    .unwrap_or_default(),
                crate::termtext::escape_line(&w.reason),
                if n > 1 {
                    format!(" (+{} more)", n - 1)
                } else {
                    String::new()
                }
            ))?;
        }
        out.summary(if report.ok() {
            format!("{} ok", super::output::paint("✓", 32, out.color))
        } else {
            format!("{} failure(s)", report.failure_counts.values().sum::<u64>())
        })?;
    }
    Ok(if report.ok() {
        Exit::Success
    } else {
        Exit::Integrity
    })
}
