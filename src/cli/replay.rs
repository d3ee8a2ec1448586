//! `world replay`: re-run coordinator log entries with their pinned interpreters and compare
//! every byte with the store, reading recorded effect results instead of calling handlers
//! (transitions.md §12, issue 6). Opens the store read-only, so it runs while another process
//! (`world serve`, an invoke) holds the writer lock.
//!
//! With `--candidate MANIFEST`, `--transition ID=FILE` or `--interpreter X` (issue 32), the
//! entries they apply to are re-run with the changed source or interpreter and get a verdict
//! (`same`, `output-changed`, `plan-changed`, `now-refused`, `no-longer-refused`,
//! `now-fails`) instead of the byte comparison ([`crate::replay::candidate`]).

use std::io::IsTerminal;
use std::path::PathBuf;

use serde::Serialize;

use super::output::Output;
use super::{CliError, Context, Exit};
use crate::ops;
use crate::ops::replay::CandidateSpec;
use crate::replay::candidate::{self, Candidate, Change, TransitionSummary, Verdict};
use crate::replay::{self, EntryResult, Options, Outcome, ReplayError, Report, Selection};
use crate::transitions::manifest::MAX_MANIFEST_BYTES;

/// Replay coordinator entries and compare plan, effect, output and hash bytes.
///
/// Prints `replay <id> (entry N): identical` or `… DIVERGED at <stage>: <reason>` per entry
/// (`--json`: JSON lines `{invocationId, entryIndex, ok, stage?, reason?, expected?,
/// actual?}`), then `replayed N entries, M skipped (client commits), K diverged`. Exit 0 when
/// every replayed entry is identical, 3 on a divergence or integrity failure — a log gap or a
/// committed invocation whose entry is missing included, unless `--allow-gaps` — 1 when the
/// selection names nothing (no such episode or invocation).
///
/// `--candidate`, `--transition` and `--interpreter` re-run the entries they apply to with a
/// changed source or interpreter and print a verdict per entry and a summary per transition;
/// exit 3 when any verdict is not `same` (0 with `--report-only`).
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("selection").args(["episode", "invocation", "from", "all"]).required(true)))]
#[command(group(clap::ArgGroup::new("rerun").args(["candidate", "transition", "interpreter"]).multiple(true)))]
pub struct Args {
    /// Replay the coordinator entries of this episode
    #[arg(long, value_name = "EP")]
    episode: Option<String>,
    /// Replay the entry committed for this invocation id (<surface>:<episode>:<task>)
    #[arg(long, value_name = "ID")]
    invocation: Option<String>,
    /// First log index of a range (with --to)
    #[arg(long, value_name = "N", requires = "to")]
    from: Option<i64>,
    /// Last log index of a range (with --from)
    #[arg(long, value_name = "M", requires = "from")]
    to: Option<i64>,
    /// Replay the whole log (client commits are listed as not replayable)
    #[arg(long)]
    all: bool,
    /// Keep going after the first divergence and report all of them
    #[arg(long)]
    keep_going: bool,
    /// Also write a JUnit XML report (one test case per entry) to FILE
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Succeed even when the selection holds nothing replayable (default: exit 1, so a CI job
    /// that replays nothing does not pass by accident)
    #[arg(long)]
    allow_empty: bool,
    /// Replay what is there even when the log has a gap or misses the entry of an invocation
    /// the journal records as committed (default: exit 3 before replaying anything)
    #[arg(long)]
    allow_gaps: bool,
    /// Re-run the entries of the transitions this manifest names (the `world publish` format)
    /// with its sources and declared effects, and report what changes
    #[arg(long, value_name = "MANIFEST")]
    candidate: Option<PathBuf>,
    /// Re-run the entries of transition ID with the source in FILE (repeatable; the
    /// recording's calling convention)
    #[arg(long, value_name = "ID=FILE", value_parser = parse_transition)]
    transition: Vec<(String, PathBuf)>,
    /// Re-run every selected entry under this interpreter: a path, a sha256: ref of an
    /// archived one, or `embedded`
    #[arg(long, value_name = "PATH|REF|embedded")]
    interpreter: Option<String>,
    /// Report changed verdicts but exit 0 (a divergence of the recording still exits 3)
    #[arg(long, requires = "rerun")]
    report_only: bool,
}

/// `ID=FILE` of `--transition`.
fn parse_transition(text: &str) -> Result<(String, PathBuf), String> {
    match text.split_once('=') {
        Some((id, file)) if !id.is_empty() && !file.is_empty() => {
            Ok((id.to_string(), PathBuf::from(file)))
        }
        _ => Err(format!("{text:?} is not ID=FILE")),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonLine<'a> {
    invocation_id: String,
    entry_index: i64,
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stage: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expected: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    actual: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    diff: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    skipped: bool,
}

fn line_for(r: &EntryResult) -> String {
    // Ids and `writtenBy` a client chose, and stored bytes quoted in a divergence, are shown
    // escaped (DEC-TRUST3-4).
    use crate::termtext::{escape_line, escape_text};
    let head = format!(
        "replay {} (entry {})",
        escape_line(&r.label()),
        r.entry_index
    );
    match &r.outcome {
        Outcome::Identical => format!("{head}: identical"),
        Outcome::ClientCommit => format!(
            "{head}: not replayable: client commit (written by {})",
            escape_line(&r.written_by)
        ),
        Outcome::Diverged(d) => format!("{head}: {}", escape_text(&d.to_string())),
        Outcome::Rerun(v) => {
            let mut text = format!("{head} {}: {v}", v.transition);
            for l in v.detail_lines() {
                text.push_str("\n    ");
                text.push_str(&l);
            }
            text
        }
    }
}

/// A candidate verdict as one JSON line (docs/json/replay-verdict.schema.json).
fn verdict_json(r: &EntryResult, v: &Verdict) -> serde_json::Value {
    let mut j = serde_json::json!({
        "invocationId": r.label(),
        "entryIndex": r.entry_index,
        "ok": v.change.is_same(),
        "transition": v.transition,
        "verdict": v.change.name(),
        "recorded": v.recorded,
        "candidate": v.candidate,
    });
    let extra = match &v.change {
        Change::Same => serde_json::json!({}),
        Change::OutputChanged(d) => serde_json::json!({ "outputDiff": d }),
        Change::PlanChanged {
            recorded,
            candidate,
        } => serde_json::json!({ "plan": { "recorded": recorded, "candidate": candidate } }),
        Change::NowRefused { refused, diff } => {
            serde_json::json!({ "refused": refused, "outputDiff": diff })
        }
        Change::NoLongerRefused { recorded, diff } => {
            serde_json::json!({ "recordedRefusal": recorded, "outputDiff": diff })
        }
        Change::NowFails { kind, diagnostic } => {
            serde_json::json!({ "failure": { "kind": kind, "diagnostic": diagnostic } })
        }
    };
    if let (Some(o), serde_json::Value::Object(e)) = (j.as_object_mut(), extra) {
        o.extend(e);
    }
    j
}

/// Is this entry's outcome worth a line under `-q` (a divergence or a changed verdict)?
fn is_news(o: &Outcome) -> bool {
    match o {
        Outcome::Diverged(_) => true,
        Outcome::Rerun(v) => !v.change.is_same(),
        _ => false,
    }
}

fn json_for(r: &EntryResult) -> JsonLine<'_> {
    let mut j = JsonLine {
        invocation_id: r.label(),
        entry_index: r.entry_index,
        ok: true,
        stage: None,
        reason: None,
        expected: None,
        actual: None,
        diff: None,
        skipped: false,
    };
    match &r.outcome {
        Outcome::Identical | Outcome::Rerun(_) => {}
        Outcome::ClientCommit => {
            j.ok = false;
            j.skipped = true;
            j.reason = Some("not replayable: client commit".into());
        }
        Outcome::Diverged(d) => {
            j.ok = false;
            j.stage = Some(d.stage.name());
            j.reason = Some(d.reason.clone());
            j.expected = d.expected.as_deref();
            j.actual = d.actual.as_deref();
            j.diff = d.diff.as_deref();
        }
    }
    j
}

/// Escape text for XML attribute values and character data (`& < > " '`), dropping the
/// control characters XML 1.0 cannot carry.
pub fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

/// The `--junit` report file, opened (created or truncated) before the replay runs. A file
/// this command created is removed again when no report was written into it (the replay
/// failed with an error).
struct JunitFile {
    path: PathBuf,
    file: std::fs::File,
    created: bool,
    written: bool,
}

impl JunitFile {
    fn open(path: &std::path::Path) -> Result<JunitFile, CliError> {
        let created = !path.exists();
        let file = std::fs::File::create(path).map_err(|e| {
            CliError::failed(
                "replay",
                format!("cannot write the JUnit report {}: {e}", path.display()),
            )
            .hint("nothing was replayed; give --junit a path in a directory you may write")
        })?;
        Ok(JunitFile {
            path: path.to_path_buf(),
            file,
            created,
            written: false,
        })
    }

    fn write(&mut self, xml: &[u8]) -> Result<(), CliError> {
        use std::io::Write as _;
        self.file
            .write_all(xml)
            .and_then(|()| self.file.sync_all())
            .map_err(|e| {
                CliError::failed(
                    "replay",
                    format!("write JUnit report {}: {e}", self.path.display()),
                )
            })?;
        self.written = true;
        Ok(())
    }
}

impl Drop for JunitFile {
    fn drop(&mut self) {
        if self.created && !self.written {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The JUnit XML for a report: one `<testcase>` per visited entry (`<failure>` for a
/// divergence, `<skipped>` for a client commit).
pub fn junit_xml(report: &Report, seconds: f64) -> String {
    junit_xml_with(report, &[], seconds)
}

/// [`junit_xml`] plus `not_run`, the selected entries `(index, label)` after the first
/// divergence that were not replayed: each is a `<skipped>` test case, so the file lists every
/// selected entry (issue 16).
pub fn junit_xml_with(report: &Report, not_run: &[(i64, String)], seconds: f64) -> String {
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let tests = report.entries.len() + not_run.len();
    let skipped = report.skipped + not_run.len() as u64;
    let failures = report.diverged + report.changed;
    x.push_str(&format!(
        "<testsuites name=\"world replay\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{:.3}\">\n",
        tests,
        failures,
        skipped,
        seconds
    ));
    x.push_str(&format!(
        "  <testsuite name=\"world replay\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{:.3}\">\n",
        tests,
        failures,
        skipped,
        seconds
    ));
    for r in &report.entries {
        let name = xml_escape(&format!("entry {} {}", r.entry_index, r.label()));
        // A candidate's entries are grouped by transition.
        let class = match (&r.outcome, &r.transition) {
            (Outcome::Rerun(v), _) => format!("world.replay.candidate.{}", v.transition),
            (_, Some(t)) => format!("world.replay.candidate.{t}"),
            _ => "world.replay".to_string(),
        };
        x.push_str(&format!(
            "    <testcase classname=\"{}\" name=\"{name}\">",
            xml_escape(&class)
        ));
        match &r.outcome {
            Outcome::Identical => {}
            Outcome::ClientCommit => x.push_str(&format!(
                "<skipped message=\"not replayable: client commit (written by {})\"/>",
                xml_escape(&r.written_by)
            )),
            Outcome::Diverged(d) => x.push_str(&format!(
                "<failure type=\"{}\" message=\"{}\">{}</failure>",
                d.stage.name(),
                xml_escape(&format!("DIVERGED at {}: {}", d.stage, d.reason)),
                xml_escape(&d.to_string())
            )),
            Outcome::Rerun(v) if v.change.is_same() => {}
            Outcome::Rerun(v) => x.push_str(&format!(
                "<failure type=\"{}\" message=\"{}\">{}</failure>",
                v.change.name(),
                xml_escape(&v.to_string()),
                xml_escape(&v.detail_lines().join("\n"))
            )),
        }
        x.push_str("</testcase>\n");
    }
    for (index, label) in not_run {
        let name = xml_escape(&format!("entry {index} {label}"));
        x.push_str(&format!(
            "    <testcase classname=\"world.replay\" name=\"{name}\"><skipped message=\"not replayed: stopped at the first divergence (--keep-going replays it)\"/></testcase>\n"
        ));
    }
    x.push_str("  </testsuite>\n</testsuites>\n");
    x
}

/// Run `world replay`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    let selection = selection_of(&args);
    let store = ctx.open_read()?;
    // An attended-publish episode has no coordinator entry: its Registry.Publish effects are
    // re-derived from their records (issue 31).
    if let Selection::Episode(ep) = &selection {
        let publishes =
            ops::package::replay(&store, ep).map_err(|e| CliError::store("replay", e))?;
        if !publishes.is_empty() {
            return replay_publishes(out, &publishes);
        }
    }
    // The JUnit file is opened before replaying, so an unwritable path fails at once instead
    // of after the whole replay (and never hides a divergence's exit 3 behind it).
    let mut junit = match &args.junit {
        Some(path) => Some(JunitFile::open(path)?),
        None => None,
    };
    let candidate = candidate_spec(&args)?;
    let opts = ops::replay::Options {
        selection: selection.clone(),
        db: ctx.db.clone(),
        replay: Options {
            keep_going: args.keep_going,
            allow_gaps: args.allow_gaps,
            ..Options::default()
        },
        candidate,
    };
    let start = std::time::Instant::now();
    let show_bar = !out.quiet && std::io::stderr().is_terminal();
    let mut bar: Option<indicatif::ProgressBar> = None;
    let mut write_err: Option<std::io::Error> = None;
    let mut on_entry = |r: &EntryResult, done: usize, total: usize| {
        if show_bar && bar.is_none() {
            let b = indicatif::ProgressBar::with_draw_target(
                Some(total as u64),
                indicatif::ProgressDrawTarget::stderr(),
            );
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "replay {bar:40} {pos}/{len} entries {per_sec} {msg}",
            ) {
                b.set_style(style);
            }
            bar = Some(b);
        }
        if let Err(e) = print_entry(out, r) {
            write_err.get_or_insert(e);
        }
        if let Some(b) = &bar {
            b.set_position(done as u64);
        }
    };
    let report = ops::replay::replay(&store, &opts, &mut on_entry);
    if let Some(b) = bar.take() {
        b.finish_and_clear();
    }
    if let Some(e) = write_err {
        return Err(e.into());
    }
    let (report, candidate) = report.map_err(replay_err)?;
    if let Some(file) = &mut junit {
        let mut not_run = Vec::new();
        if report.stopped_early {
            let seen: std::collections::HashSet<i64> =
                report.entries.iter().map(|r| r.entry_index).collect();
            for (e, id) in replay::select(&store, &selection).map_err(|e| match e {
                ReplayError::Store(s) => CliError::store("replay", s),
                other => CliError::failed("replay", other),
            })? {
                if !seen.contains(&e.header.entry_index) {
                    not_run.push((
                        e.header.entry_index,
                        id.unwrap_or_else(|| e.header.written_by.clone()),
                    ));
                }
            }
        }
        let xml = junit_xml_with(&report, &not_run, start.elapsed().as_secs_f64());
        file.write(xml.as_bytes())?;
    }
    print_summary(out, &report, candidate.as_ref())?;
    if report.ok() && report.replayed == 0 && !args.allow_empty {
        return Err(CliError::failed(
            "replay",
            format!(
                "nothing was replayed ({} entries selected, all client commits)",
                report.skipped
            ),
        )
        .with_code("nothing_replayed")
        .hint("pass --allow-empty when an empty replay is expected"));
    }
    Ok(
        if !report.ok() || (report.changed > 0 && !args.report_only) {
            Exit::Integrity
        } else {
            Exit::Success
        },
    )
}

/// What `--episode`, `--invocation`, `--from`/`--to` or `--all` select (the first given).
fn selection_of(args: &Args) -> Selection {
    match (
        &args.episode,
        &args.invocation,
        args.from,
        args.to,
        args.all,
    ) {
        (Some(ep), ..) => Selection::Episode(ep.clone()),
        (_, Some(id), ..) => Selection::Invocation(id.clone()),
        (_, _, Some(from), Some(to), _) => Selection::Range { from, to },
        _ => Selection::All,
    }
}

/// Prints one entry's result as it is replayed: a JSON line, or a line with DIVERGED or a
/// candidate's change painted; under `-q`, only news.
fn print_entry(out: &mut Output, r: &EntryResult) -> std::io::Result<()> {
    let quiet_skip = out.quiet && !is_news(&r.outcome);
    if quiet_skip {
        Ok(())
    } else if out.json {
        match &r.outcome {
            Outcome::Rerun(v) => out.json_line(&verdict_json(r, v)),
            _ => out.json_line(&json_for(r)),
        }
    } else {
        let line = line_for(r);
        let line = match &r.outcome {
            Outcome::Diverged(_) => line.replacen(
                "DIVERGED",
                &super::output::paint("DIVERGED", 31, out.color),
                1,
            ),
            Outcome::Rerun(v) if !v.change.is_same() => {
                let word = v.change.name().to_uppercase();
                line.replacen(&word, &super::output::paint(&word, 33, out.color), 1)
            }
            _ => line,
        };
        out.line(line)
    }
}

/// The closing summary: counts, and each candidate transition's line (a JSON object under
/// `--json`).
fn print_summary(
    out: &mut Output,
    report: &Report,
    candidate: Option<&Candidate>,
) -> Result<(), CliError> {
    let summary = format!(
        "replayed {} entries, {} skipped (client commits), {} diverged{}",
        report.replayed,
        report.skipped,
        report.diverged,
        if report.stopped_early {
            " (stopped at the first divergence; --keep-going replays the rest)"
        } else {
            ""
        }
    );
    let per_transition = candidate.map(|c| candidate::summarize(report, c));
    if out.json {
        let mut summary = serde_json::json!({
            "replayed": report.replayed,
            "skipped": report.skipped,
            "diverged": report.diverged,
            "stoppedEarly": report.stopped_early,
            "ok": report.unchanged(),
        });
        if let (Some(t), Some(o)) = (&per_transition, summary.as_object_mut()) {
            o.insert("candidate".into(), candidate_json(report, t));
        }
        out.json_line(&serde_json::json!({ "summary": summary }))?;
    } else {
        for t in per_transition.iter().flatten() {
            out.summary(t.line())?;
        }
        match &per_transition {
            Some(t) => out.summary(format!("{summary}; {}", totals(report, t)))?,
            None => out.summary(summary)?,
        }
    }
    Ok(())
}

/// The candidate the command line names, if any (`--candidate`, `--transition`,
/// `--interpreter`).
fn candidate_spec(args: &Args) -> Result<Option<CandidateSpec>, CliError> {
    if args.candidate.is_none() && args.transition.is_empty() && args.interpreter.is_none() {
        return Ok(None);
    }
    let manifest = match &args.candidate {
        Some(path) => Some((
            path.display().to_string(),
            super::read_input(path, MAX_MANIFEST_BYTES, "replay")?,
        )),
        None => None,
    };
    let interpreter = match &args.interpreter {
        Some(text) => Some(super::pin::parse_choice(text)?),
        None => None,
    };
    let base_dir = std::env::current_dir()
        .map_err(|e| CliError::failed("replay", format!("current directory: {e}")))?;
    Ok(Some(CandidateSpec {
        manifest,
        transitions: args.transition.clone(),
        interpreter,
        base_dir,
    }))
}

/// A replay failure as a CLI error: a store read or an unreadable bundle is a store error,
/// a candidate whose interpreter failed its integrity check exits 3, anything else 1.
pub(crate) fn replay_err(e: ops::replay::Error) -> CliError {
    match e {
        ops::replay::Error::Materialize(s) => {
            CliError::store("replay: materialize bundled interpreters", s)
        }
        ops::replay::Error::Replay(ReplayError::Store(s)) => CliError::store("replay", s),
        ops::replay::Error::Replay(g @ ReplayError::Gap(_)) => {
            CliError::new(Exit::Integrity, "replay", g).with_code("log_gap")
        }
        ops::replay::Error::Replay(other) => CliError::failed("replay", other),
        ops::replay::Error::Candidate(c) if c.is_integrity() => {
            CliError::new(Exit::Integrity, "replay", c)
        }
        ops::replay::Error::Candidate(c) => CliError::failed("replay", c)
            .hint("nothing was replayed; the candidate manifest has the `world publish --manifest` format"),
    }
}

/// `candidate: 118 same, 2 changed, 0 failed` over every re-run entry.
fn totals(report: &Report, per: &[TransitionSummary]) -> String {
    let failed: u64 = per.iter().map(|t| t.now_fails).sum();
    format!(
        "candidate: {} same, {} changed, {failed} failed",
        report.reran - report.changed,
        report.changed - failed
    )
}

/// The `candidate` member of the JSON summary (`summary.candidate` in
/// docs/json/replay-summary.schema.json).
pub(crate) fn candidate_json(report: &Report, per: &[TransitionSummary]) -> serde_json::Value {
    let failed: u64 = per.iter().map(|t| t.now_fails).sum();
    serde_json::json!({
        "reran": report.reran,
        "same": report.reran - report.changed,
        "changed": report.changed - failed,
        "failed": failed,
        "transitions": per,
    })
}

/// The summary lines `world publish --check-against` shows before its prompt: one header per
/// store or bundle, then one line per changed transition.
pub(crate) fn check_lines(path: &str, report: &Report, c: &Candidate) -> Vec<String> {
    let per = candidate::summarize(report, c);
    let mut lines = vec![format!(
        "behaviour check against {path}: {} recorded entries of the changed transitions re-run",
        report.reran + report.diverged
    )];
    lines.extend(per.iter().map(|t| format!("  {}", t.line())));
    lines
}

/// Print the re-derived `Registry.Publish` effects of an attended-publish episode; exit 3 when
/// one diverged.
fn replay_publishes(
    out: &mut Output,
    rows: &[ops::package::PublishReplay],
) -> Result<Exit, CliError> {
    let mut diverged = false;
    for r in rows {
        diverged |= r.outcome == "diverged";
        if out.json {
            out.json_line(r)?;
        } else {
            match &r.detail {
                Some(d) => out.line(format!(
                    "{} {} Registry.Publish: {d}",
                    r.outcome, r.intent_id
                ))?,
                None => out.line(format!("{} {} Registry.Publish", r.outcome, r.intent_id))?,
            }
        }
    }
    Ok(if diverged {
        Exit::Integrity
    } else {
        Exit::Success
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{Divergence, Stage};

    #[test]
    fn xml_is_escaped() {
        assert_eq!(
            xml_escape("a<b>&\"'\u{1}"),
            "a&lt;b&gt;&amp;&quot;&apos;\\u{1}"
        );
        let report = Report {
            entries: vec![
                EntryResult {
                    entry_index: 0,
                    invocation_id: None,
                    written_by: "world:genesis".into(),
                    transition: None,
                    outcome: Outcome::ClientCommit,
                },
                EntryResult {
                    entry_index: 1,
                    invocation_id: Some("cli:ep<1>:t".into()),
                    written_by: "coordinator:cli".into(),
                    transition: None,
                    outcome: Outcome::Diverged(Divergence {
                        stage: Stage::Output,
                        reason: "bytes & more".into(),
                        expected: None,
                        actual: None,
                        diff: None,
                    }),
                },
            ],
            replayed: 1,
            skipped: 1,
            diverged: 1,
            ..Report::default()
        };
        let x = junit_xml(&report, 0.5);
        assert!(x.contains("name=\"entry 1 cli:ep&lt;1&gt;:t\""), "{x}");
        assert!(x.contains("<failure type=\"output\""), "{x}");
        assert!(x.contains("bytes &amp; more"), "{x}");
        assert!(x.contains("<skipped message="), "{x}");
        assert!(
            x.contains("tests=\"2\" failures=\"1\" skipped=\"1\""),
            "{x}"
        );
    }
}
