//! `world verify` (alias `fsck`): re-hash every object and check the log, links and journal
//! (store-format.md §13.1).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::output::Output;
use super::{read_err, CliError, Context, Exit};

/// Check the whole store; exit 0 when clean, 3 on any failure (warnings never fail).
///
/// With --checkpoint FILE --key KEY it also proves the log extends a signed checkpoint (a
/// rewritten, truncated or forked history fails, however consistently it was recomputed);
/// with --bundle FILE --key KEY it checks an episode bundle on its own: every entry proven in
/// the signed log by the bundle's inclusion proofs.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Run SQLite's full `PRAGMA integrity_check` instead of `quick_check`
    #[arg(long)]
    full: bool,
    /// A signed checkpoint (C2SP tlog-checkpoint) the store's log must extend
    #[arg(long, value_name = "FILE", requires = "key", conflicts_with = "bundle")]
    checkpoint: Option<PathBuf>,
    /// Check this episode bundle (world export-episode --checkpoint) instead of --db
    #[arg(long, value_name = "FILE", requires = "key")]
    bundle: Option<PathBuf>,
    /// The log's public key (NAME+KEYID+BASE64, or a file holding it)
    #[arg(long, value_name = "KEY")]
    key: Option<String>,
    /// A witness whose cosignature the checkpoint must carry (repeatable; tlog-cosignature)
    #[arg(long, value_name = "KEY", requires = "key")]
    witness: Vec<String>,
    /// Check a standalone limits/mission ledger (a ledger file or a postgres:// URL) instead
    /// of the store: re-fold every total, the hash chains, the append-only triggers, the schema
    #[arg(long, value_name = "FILE|URL", conflicts_with_all = ["checkpoint", "bundle", "key", "full"])]
    ledger: Option<String>,
}

/// Run `world verify`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    if let Some(location) = &args.ledger {
        return verify_ledger(out, location);
    }
    let key = args
        .key
        .as_deref()
        .map(|k| super::key::read_verifier(k, "verify"))
        .transpose()?;
    let witnesses = args
        .witness
        .iter()
        .map(|w| super::key::read_verifier(w, "verify"))
        .collect::<Result<Vec<_>, _>>()?;
    let note = match &args.checkpoint {
        Some(p) => Some(super::key::read_note(p, "verify")?),
        None => None,
    };
    let db = args.bundle.clone().unwrap_or_else(|| ctx.db.clone());
    // A v4 store with a table missing cannot be opened, but that is verify's own finding
    // (issue 13 §3: a `schema` failure, exit 3, in `--json` too), not an open error.
    let store =
        match crate::store::Store::open_read(&db).map_err(|e| CliError::store("open store", e)) {
            Ok(s) => s,
            Err(e) => {
                if let Err(damaged @ crate::store::Error::SchemaIntegrity { .. }) =
                    crate::store::Store::open_read(&db)
                {
                    let report = crate::store::verify::Report::unopenable(damaged.to_string());
                    return print_report(out, &report, None);
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
    let mut report =
        crate::ops::verify::verify(&store, args.full, &mut progress).map_err(read_err("verify"))?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    // The signed-history phase (DEC-TRUST-5): after the store's own checks.
    let mut trust = None;
    if let Some(k) = &key {
        if let Some(n) = &note {
            trust = crate::ops::checkpoint::check_checkpoint(&store, n, k, &witnesses, &mut report)
                .map_err(read_err("verify"))?;
        } else if args.bundle.is_some() {
            trust = Some(
                crate::ops::checkpoint::check_bundle(&store, k, &witnesses, &mut report)
                    .map_err(read_err("verify"))?,
            );
        } else {
            return Err(CliError::usage(
                "verify",
                "--key needs --checkpoint FILE or --bundle FILE",
            ));
        }
    }
    print_report(out, &report, trust.as_ref())
}

/// `world verify --ledger L` (limits.md §7, issue 27 §3): one read snapshot of the ledger;
/// every finding printed (`--json`: one object `{ledger, ok, failures, failureCounts,
/// warnings, warningCounts}`, docs/json/verify-ledger.schema.json); exit 0 when clean, 3 on
/// any failure. A ledger that cannot be opened answers as every `--ledger` command does
/// (docs/LEDGER.md's table).
fn verify_ledger(out: &mut Output, location: &str) -> Result<Exit, CliError> {
    let what = "verify --ledger";
    let (name, report) = crate::ops::verify::verify_ledger(location)
        .map_err(|e| super::error::ledger_err(what, e))?;
    if out.json {
        out.json_line(&serde_json::json!({
            "ledger": name,
            "ok": report.ok(),
            "failures": report.failures,
            "failureCounts": report.failure_counts,
            "warnings": report.warnings,
            "warningCounts": report.warning_counts,
        }))?;
    } else {
        for f in &report.failures {
            let n = report.failure_counts.get(f.category).copied().unwrap_or(1);
            let fail = super::output::paint("FAIL", 31, out.color);
            out.line(finding_line(&fail, f, n))?;
        }
        if !out.quiet {
            for w in &report.warnings {
                out.line(format!(
                    "warn {}: {}",
                    w.category,
                    crate::termtext::escape_line(&w.reason)
                ))?;
            }
        }
        out.summary(if report.ok() {
            format!(
                "{} ledger {} ok: every total re-folds from its hash-chained events",
                super::output::paint("✓", 32, out.color),
                crate::termtext::escape_line(&name)
            )
        } else {
            format!(
                "ledger {}: {} failure(s)",
                crate::termtext::escape_line(&name),
                report.failure_counts.values().sum::<u64>()
            )
        })?;
    }
    Ok(Exit::found_break(!report.ok()))
}

/// Print `report` (text or `--json`); exit 0 when clean, 3 on any failure.
fn print_report(
    out: &mut Output,
    report: &crate::store::verify::Report,
    trust: Option<&crate::ops::checkpoint::Established>,
) -> Result<Exit, CliError> {
    if out.json {
        let mut v = serde_json::to_value(report).map_err(|e| CliError::failed("verify", e))?;
        v["ok"] = report.ok().into();
        if let Some(t) = trust {
            v["checkpoint"] = serde_json::to_value(t).map_err(|e| CliError::failed("verify", e))?;
        }
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
            let fail = super::output::paint("FAIL", 31, out.color);
            out.line(finding_line(&fail, f, n))?;
        }
        let quiet = out.quiet;
        for w in report.warnings.iter().filter(|_| !quiet) {
            let n = report.warning_counts.get(w.category).copied().unwrap_or(1);
            out.line(finding_line("warn", w, n))?;
        }
        if let Some(t) = trust.filter(|_| report.ok()) {
            let witnessed = if t.witnesses.is_empty() {
                String::new()
            } else {
                format!(
                    ", cosigned by {}",
                    t.witnesses
                        .iter()
                        .map(|(w, _)| w.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            out.summary(if t.proven > 0 {
                format!(
                    "{} entries proven in the signed log {} ({} entries){witnessed}",
                    t.proven, t.origin, t.tree_size
                )
            } else {
                format!(
                    "the log extends the signed checkpoint {} ({} entries){witnessed}",
                    t.origin, t.tree_size
                )
            })?;
        }
        out.summary(if report.ok() {
            format!("{} ok", super::output::paint("✓", 32, out.color))
        } else {
            format!("{} failure(s)", report.failure_counts.values().sum::<u64>())
        })?;
    }
    Ok(Exit::found_break(!report.ok()))
}

/// One finding as `verify` prints it: `<label> <category>[ at index N][ (ref)]: <reason>[ (+K
/// more)]`, where `n` is how many findings of its category there were; stored text escaped
/// (DEC-TRUST3-4).
fn finding_line(label: &str, f: &crate::store::verify::Finding, n: u64) -> String {
    let esc = crate::termtext::escape_line;
    format!(
        "{label} {}{}{}: {}{}",
        f.category,
        f.index
            .map(|i| format!(" at index {i}"))
            .unwrap_or_default(),
        f.reference
            .as_ref()
            .map(|r| format!(" ({})", esc(r)))
            .unwrap_or_default(),
        esc(&f.reason),
        if n > 1 {
            format!(" (+{} more)", n - 1)
        } else {
            String::new()
        }
    )
}
