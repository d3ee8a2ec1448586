//! Conformance corpus for the embedded AILANG interpreter (issue 9): every
//! `fixtures/ailang/**/NAME.expected.json` and `fixtures/transitions/**/NAME.expected.json`
//! names cases run against `NAME.ail` (stdout, stderr or a stderr code, exit code), and every
//! `tests [...]` clause of every fixture module runs as a test.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use world::ailang::{cli_check, cli_run, run::run_tests, Options};
use world::interp::RunLimits;

fn walk(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, ext, out);
        } else if p.to_string_lossy().ends_with(ext) {
            out.push(p);
        }
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn without_warnings(s: &str) -> String {
    s.lines()
        .filter(|l| !l.starts_with("Warning: "))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Run one case; returns a description of the mismatch, if any.
fn run_case(ail: &Path, case: &serde_json::Value, transitions: bool) -> Option<String> {
    let src = std::fs::read(ail).ok()?;
    let label = ail.file_name()?.to_string_lossy().into_owned();
    let caps: Vec<String> = case["caps"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|c| c.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    let opts = Options {
        quiet: true,
        caps,
        ..Options::default()
    };
    let out = if case["mode"].as_str() == Some("check") {
        cli_check(&label, &src, &opts)
    } else {
        let entry = case["entry"].as_str().unwrap_or("main");
        let limits = RunLimits::until(Instant::now() + Duration::from_secs(20));
        match cli_run(&label, &src, entry, case["args"].as_str(), limits, &opts) {
            Ok(o) => o,
            Err(e) => {
                let want = case["error"].as_str().unwrap_or("<no error expected>");
                let got = e.to_string();
                return if got.contains(want) {
                    None
                } else {
                    Some(format!("run error {got}, expected {want}"))
                };
            }
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let raw_stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stderr = without_warnings(&raw_stderr);
    let mut problems = Vec::new();
    if let Some(want) = case["exit"].as_i64() {
        if i64::from(out.exit_code) != want {
            problems.push(format!(
                "exit {} != {want} (stderr {stderr:?})",
                out.exit_code
            ));
        }
    }
    if let Some(want) = case["stdout"].as_str() {
        if stdout != want {
            problems.push(format!("stdout {stdout:?} != {want:?}"));
        }
    }
    if let Some(want) = case["stderr"].as_str() {
        if stderr != want {
            problems.push(format!("stderr {stderr:?} != {want:?}"));
        }
    }
    if let Some(want) = case["stderr_contains"].as_str() {
        if !raw_stderr.contains(want) {
            problems.push(format!("stderr {raw_stderr:?} lacks {want:?}"));
        }
    }
    if transitions && out.exit_code == 0 && case["mode"].as_str() != Some("check") {
        let body = stdout.strip_suffix('\n').unwrap_or(&stdout);
        match serde_json::from_str::<serde_json::Value>(body) {
            Ok(v) if v.is_object() => {
                if let Some(keys) = case["plan_keys"]
                    .as_bool()
                    .filter(|b| *b)
                    .and(v.as_object())
                {
                    let mut ks: Vec<&str> = keys.keys().map(String::as_str).collect();
                    ks.sort();
                    if ks != ["effects", "finish", "plan", "result"] {
                        problems.push(format!("plan keys {ks:?}"));
                    }
                }
            }
            _ => problems.push(format!("transition output is not a JSON object: {body:?}")),
        }
    }
    if problems.is_empty() {
        None
    } else {
        Some(problems.join("; "))
    }
}

fn corpus(dir: &str, transitions: bool) -> usize {
    let mut files = Vec::new();
    walk(&root().join(dir), ".expected.json", &mut files);
    let mut failures = Vec::new();
    let mut count = 0;
    for exp in &files {
        let name = exp.to_string_lossy().replace(".expected.json", ".ail");
        let ail = PathBuf::from(&name);
        let text = std::fs::read_to_string(exp).unwrap_or_default();
        let doc: serde_json::Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{}: bad expectations: {e}", exp.display()));
                continue;
            }
        };
        for (i, case) in doc["cases"].as_array().into_iter().flatten().enumerate() {
            count += 1;
            if let Some(p) = run_case(&ail, case, transitions) {
                failures.push(format!("{name} case {i}: {p}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing case(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
    count
}

#[test]
fn ailang_corpus() {
    assert!(corpus("fixtures/ailang", false) >= 20);
}

#[test]
fn transition_fixtures() {
    assert!(corpus("fixtures/transitions", true) >= 20);
}

#[test]
fn every_tests_clause_passes() {
    let mut files = Vec::new();
    walk(&root().join("fixtures/ailang"), ".ail", &mut files);
    walk(&root().join("fixtures/transitions"), ".ail", &mut files);
    let mut failures = Vec::new();
    let mut total = 0;
    for f in files {
        let src = std::fs::read(&f).unwrap_or_default();
        let label = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match run_tests(&label, &src) {
            Ok(cases) => {
                for c in cases {
                    total += 1;
                    if let Some(why) = c.failure {
                        failures.push(format!("{}: {}[{}]: {why}", f.display(), c.func, c.index));
                    }
                }
            }
            Err(e) if f.to_string_lossy().contains("/bad_") => drop(e),
            Err(e) => failures.push(format!("{}: {}", f.display(), e.join("; "))),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(total >= 20, "only {total} tests pairs ran");
}

#[test]
fn a_failing_tests_clause_is_reported() {
    let src = b"module t\nexport func inc(x: int) -> int tests [(1, 2), (2, 4)] = x + 1\n";
    let cases = run_tests("t.ail", src).unwrap_or_default();
    assert_eq!(cases.len(), 2);
    assert!(cases[0].failure.is_none());
    assert_eq!(cases[1].failure.as_deref(), Some("expected 4, got 3"));
}
