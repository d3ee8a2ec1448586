//! `world publish --manifest FILE [--interpreter PATH|REF|embedded] [--yes]`: publish
//! transitions to the registry (transitions.md §2–§3), attended by default.
//!
//! Order: open the store (writer lock) → read the manifest → fences `ci` → `tty` (skipped by
//! `--yes`) → resolve the interpreter → plan (epochs, sources checked, revision N+1, diff) →
//! show the diff → fence `confirmation` (typed phrase on the controlling terminal) → commit in
//! one transaction. A fence refusal prints `STOP fence=<name> reason=<reason>` on stderr,
//! exits 3 and writes nothing.

use std::fs::File;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use super::output::{short, Output};
use super::pin::{epoch_err, parse_choice, provider, provider_err, warn_foreign_release};
use super::{read_input, CliError, Context, Exit};
use crate::ops::{
    self,
    publish::{PlanError, Planned},
};
use crate::store;
use crate::transitions::manifest::{self, MAX_MANIFEST_BYTES};
use crate::transitions::publish::{Diff, InterpreterChoice, Plan, Progress, PublishError};

/// Publish the manifest's transitions as a new transition-registry revision.
///
/// Attended by default: the controlling terminal must be stdin, and the typed phrase
/// `publish <N> transitions to <store path>` must match. `--yes` skips the terminal and the
/// phrase (and the CI refusal) and records the revision as unattended.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The manifest: a JSON array of descriptors (transitions.md §2)
    #[arg(long, value_name = "FILE")]
    manifest: PathBuf,
    /// Interpreter to pin: a path (archived next to the store), a sha256: ref of an archived
    /// one, or `embedded`; default: the store's only pinned interpreter, else embedded
    #[arg(long, value_name = "PATH|REF|embedded", conflicts_with = "ailang_bin")]
    interpreter: Option<String>,
    /// Alias of --interpreter PATH
    #[arg(long, value_name = "PATH")]
    ailang_bin: Option<PathBuf>,
    /// Unattended: no terminal, no phrase; the revision is recorded as unattended
    #[arg(long)]
    yes: bool,
    /// Seconds the confirmation prompt waits for the phrase; then nothing is published and the
    /// writer lock is released
    #[arg(long, value_name = "SECONDS", env = "WORLD_PROMPT_TIMEOUT", default_value_t = super::fence::DEFAULT_PROMPT_TIMEOUT, value_parser = clap::value_parser!(u64).range(1..=86400))]
    prompt_timeout: u64,
    /// Before the prompt, also list every added transition's access and declared effects in
    /// full (by default the diff table shows them, a long list cut to fit the terminal)
    #[arg(long)]
    details: bool,
    /// Refused for this verb (publishing writes the local store only)
    #[arg(long, hide = true)]
    live: bool,
    /// Before asking, re-run the recorded entries of every transition whose source,
    /// interpreter or declared effects change, in these stores or episode bundles, and show
    /// what would behave differently (repeatable)
    #[arg(long, value_name = "STORE_OR_BUNDLE", num_args = 1..)]
    check_against: Vec<PathBuf>,
    /// With --yes: publish even when --check-against finds a changed behaviour (without it an
    /// unattended publish then fails with exit 3)
    #[arg(long, requires = "check_against")]
    accept_changes: bool,
}

/// The `ci` fence: refuse when `CI` or `GITHUB_ACTIONS` is set.
fn ci_fence() -> Result<(), CliError> {
    for var in ["CI", "GITHUB_ACTIONS"] {
        if std::env::var_os(var).is_some() {
            return Err(
                CliError::fence("publish", "ci", Some(&format!("{var}-is-set")), "").hint(
                    "a CI job cannot confirm at a terminal; pass --yes to publish unattended",
                ),
            );
        }
    }
    Ok(())
}

/// What a refused terminal fence suggests to a script.
const UNATTENDED_HINT: &str =
    "publishing is attended; a script can pass --yes (recorded as unattended)";

/// The `tty` fence: the controlling terminal opens read-write, stdin is a terminal, and stdin
/// is that controlling terminal (its session is ours). Returns the open `/dev/tty`.
fn tty_fence() -> Result<File, CliError> {
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .map_err(|_| {
            CliError::fence("publish", "tty", Some("no-controlling-terminal"), "")
                .hint(UNATTENDED_HINT)
        })?;
    if !std::io::stdin().is_terminal() {
        return Err(
            CliError::fence("publish", "tty", Some("stdin-not-a-terminal"), "")
                .hint(UNATTENDED_HINT),
        );
    }
    // SAFETY: tcgetsid and getsid take plain integers and touch no memory of ours.
    let (tty_sid, our_sid) = unsafe { (libc::tcgetsid(0), libc::getsid(0)) };
    if tty_sid < 0 || tty_sid != our_sid {
        return Err(CliError::fence(
            "publish",
            "tty",
            Some("stdin-is-not-the-controlling-terminal"),
            "",
        ));
    }
    Ok(tty)
}

/// A confirmation refusal: the fence's `STOP` line, then what was not done.
fn not_published(reason: &str, why: &str) -> CliError {
    let mut e = CliError::fence("publish", "confirmation", Some(reason), "");
    e.verbatim = Some(format!(
        "STOP fence=confirmation reason={reason}\nnothing was published ({why}); the store is unchanged and the writer lock is released"
    ));
    e
}

/// The `confirmation` fence: show the prompt and phrase on the terminal and read one edited
/// line ([`super::fence::read_line_on`]: keys come from stdin, which the tty fence proved is
/// the controlling terminal; Ctrl-D and Ctrl-C answer no; no answer within the prompt timeout
/// is `reason=timeout`). Every refusal says that nothing was published.
fn confirmation_fence(tty: File, n: usize, manifest: &str, db: &str) -> Result<(), CliError> {
    let phrase = format!("publish {n} transitions to {db}");
    let reader = tty
        .try_clone()
        .map_err(|_| CliError::fence("publish", "confirmation", Some("eof"), ""))?;
    let term = dialoguer::console::Term::read_write_pair(reader, tty);
    let prompt = format!(
        "Type exactly, to write a LOCAL transition-registry revision ({n} descriptor(s) from {manifest}):\n  {phrase}\n{}\n> ",
        super::fence::timeout_note("nothing is published and the writer lock is released")
    );
    let typed = match super::fence::read_line_on(&term, &prompt) {
        Ok(Some(t)) => t,
        Err(e) if super::fence::timed_out(&e) => {
            return Err(not_published("timeout", &e.to_string()))
        }
        Ok(None) | Err(_) => {
            return Err(not_published(
                "eof",
                "Ctrl-D, Ctrl-C or a closed terminal answered no",
            ))
        }
    };
    if typed != phrase {
        return Err(not_published(
            "mismatch",
            "the typed line is not the phrase",
        ));
    }
    Ok(())
}

fn publish_err(e: PublishError) -> CliError {
    match e {
        PublishError::Epoch(e) => epoch_err("publish", e),
        PublishError::Store(s) => lock_or_store(s),
        e @ PublishError::SourceNotFound { .. } => CliError::failed("publish", e).hint(
            "a transitionFnFile path is read relative to the manifest's directory, then the current directory (as the reference does); fix the path or run from the directory it is written for",
        ),
        e if e.is_integrity() => CliError::new(Exit::Integrity, "publish", e)
            .hint("run `world verify` for a full report"),
        e => CliError::failed("publish", e),
    }
}

fn lock_or_store(s: store::Error) -> CliError {
    // A held lock's hint names its holder (DEC-UX-11).
    CliError::store("publish", s)
}

/// The diff's first line: how many transitions are added, changed and removed.
fn diff_summary(diff: &Diff) -> String {
    format!(
        "{} added, {} changed, {} removed:",
        diff.added.len(),
        diff.changed.len(),
        diff.removed.len()
    )
}

/// The diff as a table: change, id, access, declared effects, fields, title, transitionFn,
/// interpreter.
fn diff_table(plan: &Plan, diff: &Diff, color: bool) -> String {
    let _ = color;
    // docs/TABLES.md: CHANGE, ID, ACCESS and DECLARED EFFECTS always (issue 29 §5: what a
    // transition may do is what the person approves); TITLE is cut first; then INTERPRETER,
    // TITLE, TRANSITION FN and FIELDS are hidden in that order.
    let mut t = super::table::Table::new(vec![
        super::table::Col::id("change"),
        super::table::Col::id("id"),
        super::table::Col::id("access"),
        super::table::Col::list("declared effects"),
        super::table::Col::list("fields").drop(4),
        super::table::Col::text("title").drop(2),
        super::table::Col::id("transition fn").drop(3),
        super::table::Col::id("interpreter").drop(1),
    ]);
    let row = |t: &mut super::table::Table, change: &str, id: &str, fields: String| {
        let d = plan
            .revision
            .get(id)
            .or_else(|| plan.base.as_ref().and_then(|b| b.revision.get(id)));
        t.add_row(vec![
            change.to_string(),
            id.to_string(),
            d.map(|d| d.access.to_string()).unwrap_or_default(),
            d.map(|d| effects_text(&d.declared_effects))
                .unwrap_or_default(),
            fields,
            d.map(|d| d.title.clone()).unwrap_or_default(),
            d.map(|d| short(&d.transition_fn.to_string()))
                .unwrap_or_default(),
            d.map(|d| short(&d.interpreter.to_string()))
                .unwrap_or_default(),
        ]);
    };
    for id in &diff.added {
        row(&mut t, "added", id, "all".into());
    }
    for c in &diff.changed {
        row(&mut t, "changed", &c.id, c.fields.join(", "));
    }
    for id in &diff.removed {
        row(&mut t, "removed", id, "-".into());
    }
    super::output::render_table(&t)
}

/// Declared effects as one space-separated list, `(none)` when empty.
fn effects_text(e: &[crate::transitions::registry::Effect]) -> String {
    if e.is_empty() {
        "(none)".to_string()
    } else {
        e.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// What the table cannot show whole: for each changed transition its access and declared
/// effects (marked unchanged when they are) and every changed field as `old → new` (hashes
/// as 12 hex; schemas by name only). An added transition's access and declared effects are
/// the table's columns; its block is listed only with `full` (`--details`), or as one line
/// when it declares more than one effect (the table may cut that list to fit).
fn diff_details(plan: &Plan, diff: &Diff, full: bool) -> String {
    use crate::transitions::registry::Descriptor;
    let effects = effects_text;
    let field = |d: &Descriptor, f: &str| -> String {
        match f {
            "access" => d.access.to_string(),
            "declaredEffects" => effects(&d.declared_effects),
            "description" => format!("{:?}", d.description),
            "title" => format!("{:?}", d.title),
            "interpreter" => short(&d.interpreter.to_string()),
            "transitionFn" => short(&d.transition_fn.to_string()),
            "semanticsEpoch" => d.semantics_epoch.to_string(),
            _ => "(schema)".to_string(),
        }
    };
    let mut out = Vec::new();
    for id in &diff.added {
        if let Some(d) = plan.revision.get(id).filter(|_| !full) {
            if d.declared_effects.len() > 1 {
                out.push(format!("  {id} declares {}", effects(&d.declared_effects)));
            }
            continue;
        }
        if let Some(d) = plan.revision.get(id) {
            out.push(format!("added {id}:"));
            out.push(format!("  access           {}", d.access));
            out.push(format!(
                "  declaredEffects  {}",
                effects(&d.declared_effects)
            ));
        }
    }
    let base = plan.base.as_ref().map(|b| &b.revision);
    for c in &diff.changed {
        let (Some(old), Some(new)) = (base.and_then(|b| b.get(&c.id)), plan.revision.get(&c.id))
        else {
            continue;
        };
        out.push(format!("changed {}:", c.id));
        for f in ["access", "declaredEffects"] {
            if !c.fields.contains(&f) {
                out.push(format!("  {f:<16} {} (unchanged)", field(new, f)));
            }
        }
        for f in &c.fields {
            let (was, now) = (field(old, f), field(new, f));
            if matches!(*f, "inputSchema" | "outputSchema") {
                out.push(format!("  {f:<16} changed"));
            } else {
                out.push(format!("  {f:<16} {was} → {now}"));
            }
        }
    }
    for id in &diff.removed {
        if let Some(d) = base.and_then(|b| b.get(id)) {
            out.push(format!(
                "removed {id}: was {} / {}",
                d.access,
                effects(&d.declared_effects)
            ));
        }
    }
    out.join("\n")
}

/// Effect names a `world` handler serves (authority-and-broker.md §12).
const HANDLED_EFFECTS: [&str; 14] = {
    use crate::broker::handlers as h;
    [
        h::WORKSPACE_READ,
        h::WORKSPACE_WRITE,
        h::FS_READ,
        h::FS_WRITE,
        h::GIT_COMMIT,
        h::MODEL_INFER,
        h::HUMAN_APPROVE,
        h::HUMAN_POLL_APPROVAL,
        h::AILANG_CHECK,
        h::AILANG_RUN,
        h::AILANG_RUN_ENV,
        h::AILANG_RUN_NET,
        h::AILANG_DISCOVER,
        h::AILANG_CLI,
    ]
};

/// Refuse schemas no call could ever satisfy, and warn about declared effects no handler
/// serves (issue 13 §7), before the writer lock matters.
fn check_entries(out: &mut Output, m: &manifest::Manifest) -> Result<(), CliError> {
    for e in &m.entries {
        for (which, schema) in [
            ("inputSchema", &e.input_schema),
            ("outputSchema", &e.output_schema),
        ] {
            if let Some(why) = crate::transitions::schema_check::unusable(&e.id, which, schema) {
                return Err(CliError::failed("publish", why));
            }
        }
        for d in &e.declared_effects {
            if d.effect == crate::broker::handlers::WORKSPACE_EXEC {
                // Served, but only where an exec profile is configured (issue 29 §7).
                out.status(format!(
                    "note: transition {:?} declares {:?}: its handler runs only under `invoke`, `serve` or `mcp` given --exec-profile FILE",
                    e.id, d.effect
                ));
            } else if !HANDLED_EFFECTS.contains(&d.effect.as_str()) {
                out.warn(format!(
                    "transition {:?} declares effect {:?}, which no handler serves (a call would be refused, R8); known effects: {}",
                    e.id,
                    d.effect,
                    HANDLED_EFFECTS.join(", ")
                        + ", Workspace.Exec (with --exec-profile)"
                ));
            }
        }
    }
    Ok(())
}

/// `--check-against`: candidate-replay the behaviour-changing transitions of `plan` on each
/// store or bundle; `None` without `--check-against` or when the plan changes nothing, else
/// the summary lines and whether any entry is not `same` (or its recording diverged).
fn behaviour_check(
    store: &store::Store,
    plan: &Plan,
    provider: &dyn crate::transitions::publish::InterpreterProvider,
    paths: &[PathBuf],
) -> Result<Option<(Vec<String>, bool)>, CliError> {
    if paths.is_empty() || plan.unchanged() {
        return Ok(None);
    }
    let candidate = ops::publish::candidate_of(store, plan, provider).map_err(|e| match e {
        PlanError::Provider(p) => provider_err("publish", p),
        PlanError::Store(s) => CliError::store("publish", s),
        PlanError::Publish(p) => publish_err(*p),
    })?;
    if candidate.transitions.is_empty() {
        return Ok(Some((
            vec!["behaviour check: no transition's source, interpreter or declared effects change; nothing to re-run".into()],
            false,
        )));
    }
    let mut lines = Vec::new();
    let mut changed = false;
    for path in paths {
        let report = ops::replay::check_against(path, &candidate).map_err(|e| {
            let mut err = super::replay::replay_err(e);
            err.why = format!("--check-against {}: {}", path.display(), err.why);
            err.hint("nothing was written")
        })?;
        changed |= !report.unchanged();
        lines.extend(super::replay::check_lines(
            &path.display().to_string(),
            &report,
            &candidate,
        ));
    }
    Ok(Some((lines, changed)))
}

/// The `checking N/M` progress bar on a terminal (hidden under `-q` or off a terminal).
fn check_bar(out: &Output, entries: usize) -> indicatif::ProgressBar {
    if std::io::stderr().is_terminal() && !out.quiet {
        let bar = indicatif::ProgressBar::new(entries as u64);
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("checking {pos}/{len} {bar:30} {msg}")
        {
            bar.set_style(style);
        }
        bar
    } else {
        indicatif::ProgressBar::hidden()
    }
}

/// Run `world publish`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    let choice = interpreter_choice(&args)?;
    super::fence::set_prompt_timeout(args.prompt_timeout);
    // The manifest is read before the writer lock is taken (issue 13 §5).
    let raw = read_input(&args.manifest, MAX_MANIFEST_BYTES, "publish")?;
    let mut store = open_store(ctx)?;
    let manifest = manifest::parse(&raw).map_err(|e| CliError::failed("publish", e))?;
    check_entries(out, &manifest)?;
    let manifest_name = args.manifest.display().to_string();
    let tty = if args.yes {
        None
    } else {
        ci_fence()?;
        Some(tty_fence()?)
    };

    // Sources are read relative to the manifest's directory, then the current directory
    // (DEC-UX-13; `--manifest -` reads stdin: the current directory).
    let base_dir = base_dir(&args.manifest)?;
    let provider = provider(ctx);
    let bar = check_bar(out, manifest.entries.len());
    let planned = ops::publish::plan(
        &store,
        provider.as_ref(),
        &manifest,
        &ops::publish::Options { choice, base_dir },
        &mut |p| match p {
            Progress::Checking { index, id, .. } => {
                bar.set_position(index as u64);
                bar.set_message(id.to_string());
            }
            Progress::Done => bar.finish_and_clear(),
        },
    );
    bar.finish_and_clear();
    let Planned { plan, release } = planned.map_err(|e| match e {
        PlanError::Provider(p) => provider_err("publish", p),
        PlanError::Store(s) => CliError::store("publish", s),
        PlanError::Publish(p) => publish_err(*p),
    })?;
    if plan.epoch_bootstrap.is_some() {
        warn_foreign_release(out, &release);
    }
    if let Some((epoch, release)) = &plan.derived_epoch {
        out.status(format!(
            "semantics epoch {epoch} (interpreter release {release:?})"
        ));
    }
    // The behaviour check (issue 32): its own block of lines, computed before the prompt.
    let check = behaviour_check(&store, &plan, provider.as_ref(), &args.check_against)?;
    if let (true, Some((lines, true))) = (args.yes && !args.accept_changes, &check) {
        out.status(lines.join("\n"));
        return Err(CliError::integrity(
            "publish",
            "--check-against found recorded entries that would behave differently; nothing was written",
        )
        .with_code("behaviour_changed")
        .hint("review them with `world replay --candidate MANIFEST --all` on that store or bundle, or pass --accept-changes"));
    }
    if !plan.unchanged() {
        let shown = shown_text(&plan, check.as_ref(), args.details, out.color);
        match &tty {
            Some(t) => {
                let mut w = t
                    .try_clone()
                    .map_err(|e| CliError::failed("publish", format!("/dev/tty: {e}")))?;
                out.flush()?;
                writeln!(w, "{shown}")
                    .map_err(|_| CliError::fence("publish", "confirmation", Some("eof"), ""))?;
            }
            None => out.status(shown),
        }
        if let Some(t) = tty {
            // While the person reads, a refused writer is told who holds the lock and why.
            store.describe_writer(&format!(
                "world publish, waiting at its confirmation prompt (gives up after {} s)",
                args.prompt_timeout
            ));
            confirmation_fence(
                t,
                manifest.entries.len(),
                &manifest_name,
                &ctx.db.display().to_string(),
            )?;
            store.describe_writer("world publish");
        }
    }
    let outcome = ops::publish::commit(&mut store, &plan, args.yes).map_err(publish_err)?;
    report(out, &outcome, &plan, args.yes)?;
    Ok(Exit::Success)
}

/// The interpreter `--interpreter` or `--ailang-bin` chooses (else the default); `--live` is
/// refused (exit 2): publish writes the local store only.
fn interpreter_choice(args: &Args) -> Result<InterpreterChoice, CliError> {
    if args.live {
        return Err(CliError::usage(
            "publish",
            "--live is refused for this verb: world publish writes the local store only",
        ));
    }
    Ok(match (&args.interpreter, &args.ailang_bin) {
        (Some(text), _) => parse_choice(text)?,
        (None, Some(path)) => InterpreterChoice::Path(path.clone()),
        (None, None) => InterpreterChoice::Default,
    })
}

/// The directory sources are read relative to: the manifest's, joined to the current
/// directory (`-`, stdin: the current directory).
fn base_dir(manifest: &std::path::Path) -> Result<PathBuf, CliError> {
    let cwd = std::env::current_dir()
        .map_err(|e| CliError::failed("publish", format!("current directory: {e}")))?;
    Ok(match manifest.parent() {
        Some(d) if manifest != std::path::Path::new("-") => cwd.join(d),
        _ => cwd,
    })
}

/// Take the writer lock and open (or create) the store; a held lock is exit 6 as always, any
/// other failure the `store` fence (`STOP fence=store reason=unopenable …`, exit 3).
fn open_store(ctx: &Context) -> Result<store::Store, CliError> {
    match ctx.open_write(true) {
        Ok(s) => Ok(s),
        Err(e) if e.exit == Exit::LockHeld => Err(e),
        Err(e) => Err(CliError::fence(
            "publish",
            "store",
            Some(&format!("unopenable {}", e.why)),
            "",
        )),
    }
}

/// What the person is shown before confirming: the diff summary and table, the details
/// (every field with `full`), and the behaviour check's lines.
fn shown_text(plan: &Plan, check: Option<&(Vec<String>, bool)>, full: bool, color: bool) -> String {
    let shown = format!(
        "{}\n{}",
        diff_summary(&plan.diff),
        diff_table(plan, &plan.diff, color)
    );
    let details = diff_details(plan, &plan.diff, full);
    let shown = if details.is_empty() {
        shown
    } else {
        format!("{shown}\n{details}")
    };
    match check {
        Some((lines, _)) => format!("{shown}\n{}", lines.join("\n")),
        None => shown,
    }
}

/// The result line (`--json`: the outcome, what was added and changed, and whether it was
/// unattended).
fn report(
    out: &mut Output,
    outcome: &crate::transitions::publish::Outcome,
    plan: &Plan,
    yes: bool,
) -> Result<(), CliError> {
    if out.json {
        out.json_line(&serde_json::json!({
            "outcome": match outcome { crate::transitions::publish::Outcome::Published { .. } => "published", _ => "unchanged" },
            "line": outcome.line(),
            "added": plan.diff.added,
            "changed": plan.diff.changed.iter().map(|c| c.id.clone()).collect::<Vec<_>>(),
            "unattended": yes,
        }))?;
    } else {
        out.summary(outcome.line())?;
    }
    Ok(())
}
