//! Issue 16 §1 and §2 over every command: under `-q` stdout carries only the data asked for
//! and stderr nothing; under `--json` every line is JSON, and every output shape matches its
//! JSON Schema in docs/json/ (DEC-CLI-16, DEC-CLI-25).

use std::path::{Path, PathBuf};

use super::output::assert_schema;
use crate::common::{Run, TestEnv};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// A store with a genesis, a published registry, a session token at `tok`, an invocation
/// with an effect, an approval request and a limits ledger.
fn fixture() -> TestEnv {
    let env = TestEnv::new();
    copy_dir(
        &repo().join("fixtures/transitions"),
        &env.path("fixtures/transitions"),
    );
    std::fs::create_dir_all(env.path("ws/ep1")).unwrap();
    std::fs::write(env.path("note.json"), br#"{"note":1}"#).unwrap();
    let ws = env.path("ws");
    let tok = env.path("tok");
    let cfg = repo().join("fixtures/limits/example.json");
    let led = env.path("led.db");
    for args in [
        vec!["genesis"],
        vec![
            "publish",
            "--manifest",
            "fixtures/transitions/manifest.json",
            "--yes",
        ],
        vec![
            "session",
            "mint",
            "--episode",
            "ep1",
            "--grant",
            "world.apply=world:10",
            "--grant",
            "Workspace.Write=worktree:5",
            "--workspace-root",
            ws.to_str().unwrap(),
            "--yes",
            "--out",
            tok.to_str().unwrap(),
        ],
        vec![
            "invoke",
            "ailang-write",
            "--session",
            tok.to_str().unwrap(),
            "--args",
            r#"{"path":"a.txt","content":"x"}"#,
            "--invocation-id",
            "w1",
        ],
        vec![
            "approval",
            "request",
            "--episode",
            "ep1",
            "--summary",
            "ship it",
        ],
        vec!["limits", "init", "--config", cfg.to_str().unwrap(), "--yes"],
        vec![
            "limits",
            "init",
            "--config",
            cfg.to_str().unwrap(),
            "--yes",
            "--ledger",
            led.to_str().unwrap(),
        ],
    ] {
        env.run(&args).ok();
    }
    env
}

/// What a case prints on stdout under `--json`: the schema of every line, or of the last.
enum Shape {
    /// One object.
    One(&'static str),
    /// JSON lines, each of this schema (possibly none).
    Lines(&'static str),
    /// JSON lines of the first schema, then one summary line of the second.
    LinesThen(&'static str, &'static str),
    /// JSON, no schema of ours (the limits shapes are limits.md's, the ailang ones the
    /// `ailang` CLI contract's).
    Foreign,
}

struct Case {
    args: Vec<String>,
    shape: Shape,
    code: i32,
}

fn case(args: &[&str], shape: Shape) -> Case {
    Case {
        args: args.iter().map(|s| s.to_string()).collect(),
        shape,
        code: 0,
    }
}

/// A case that fails with exit `code`: under `-q` it still says why on stderr and prints no
/// data; under `--json` its stdout is the one error envelope (issue 27 §4).
fn fails(args: &[&str], code: i32) -> Case {
    Case {
        code,
        ..case(args, Shape::One("error"))
    }
}

/// A `world limits` or `world mission` verb that writes: its `ok`/`OK` line is a summary,
/// silenced by `-q` (issue 27 §4).
fn ledger_writer(args: &[String]) -> bool {
    matches!(args.first().map(String::as_str), Some("limits" | "mission"))
        && !matches!(
            args.get(1).map(String::as_str),
            Some("report" | "list" | "log" | "verify")
        )
}

/// First lines of `--json` output of `args` (for refs).
fn first(env: &TestEnv, args: &[&str], key: &str) -> String {
    let r = env.run(&[args, &["--json"]].concat()).ok();
    r.json_lines()[0][key].as_str().unwrap().to_string()
}

/// Every command, run in this order against the fixture (writers included).
fn cases(env: &TestEnv, n: usize) -> Vec<Case> {
    let tok = env.path("tok");
    let tok = tok.to_str().unwrap();
    let head = env.run(&["head"]).ok().stdout.trim().to_string();
    let effect = first(env, &["effects"], "ref");
    let approval = first(env, &["approval", "list"], "requestRef");
    let session = first(env, &["session", "list"], "credentialId");
    let obj = first(env, &["object", "find", "world/genesis-goal/v1"], "hash");
    let note = env.path("note.json");
    let mint_out: PathBuf = env.path(&format!("tok{n}"));
    let bundle: PathBuf = env.path(&format!("bundle{n}.db"));
    let body = {
        // A hand-built body on top of whatever the head is when this case runs is not
        // possible here (cases are built first), so commit FILE reads a body built now and
        // runs before any other commit.
        let tip = crate::common::tip_of(&env.db);
        let b = tip.next(&format!("contract{n}"));
        env.write(&format!("body{n}.json"), &b.bytes())
    };
    let contract = repo().join("fixtures/mission/seed/contract.json");
    let led = env.path("led.db").display().to_string();
    let step3 = repo().join("fixtures/mission/seed/step3.json");
    let step3 = step3.to_str().unwrap().to_string();
    let cfg = repo().join("fixtures/limits/example.json");
    let cfg = cfg.to_str().unwrap().to_string();
    let man = env.path(&format!("man{n}"));
    let comp = env.path(&format!("comp{n}"));
    let ail = repo().join("fixtures/transitions/echo.ail");
    let ail = ail.to_str().unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let (note, mint_out, bundle, body, contract, man, comp) = (
        s(&note),
        s(&mint_out),
        s(&bundle),
        s(&body),
        s(&contract),
        s(&man),
        s(&comp),
    );
    let attempt = format!("a{n}");
    vec![
        case(&["commit", &body], Shape::One("commit")),
        case(
            &["commit", "--put", &note, "--semantic-id", "demo/note/v1"],
            Shape::One("commit"),
        ),
        case(&["head"], Shape::One("head")),
        case(&["world", "get", &head], Shape::One("world")),
        case(&["world", "get", "head"], Shape::One("world")),
        case(&["object", "get", &obj], Shape::One("object")),
        case(&["object", "find", "demo/note/v1"], Shape::Lines("object")),
        case(&["log"], Shape::Lines("log-line")),
        case(&["log", "get", "1"], Shape::One("log-entry")),
        case(&["show", "head"], Shape::One("show")),
        case(&["show", "cli:ep1:w1"], Shape::One("show")),
        case(&["status"], Shape::One("status")),
        case(
            &["registry", "get", "world/transition-registry/v1"],
            Shape::Foreign,
        ),
        case(&["transitions", "list"], Shape::Foreign),
        case(&["transitions", "show", "counter"], Shape::Foreign),
        case(&["tools", "list", "--session", tok], Shape::Foreign),
        case(
            &["invoke", "counter", "--session", tok, "--args", "{}"],
            Shape::Foreign,
        ),
        case(&["receipt", "cli:ep1:w1"], Shape::One("receipt")),
        case(&["session", "list", "--all"], Shape::Lines("session")),
        case(&["session", "show", &session], Shape::One("session")),
        case(
            &[
                "session",
                "mint",
                "--episode",
                "ep2",
                "--grant",
                "world.apply=world:1",
                "--yes",
                "--out",
                &mint_out,
            ],
            Shape::One("session-mint"),
        ),
        case(
            &[
                "session",
                "mint",
                "--episode",
                "ep3",
                "--grant",
                "world.apply=world:1",
                "--yes",
            ],
            Shape::One("session-mint"),
        ),
        case(&["session", "revoke", "--episode", "ep2"], Shape::Foreign),
        case(&["effects"], Shape::Lines("effect")),
        case(&["effects", "show", &effect], Shape::One("effect-show")),
        case(&["approval", "list"], Shape::Lines("approval")),
        case(&["approval", "show", &approval], Shape::One("approval")),
        case(
            &[
                "approval",
                "request",
                "--episode",
                "ep1",
                "--summary",
                "more",
            ],
            Shape::Foreign,
        ),
        case(
            &[
                "broker",
                "check",
                "--session",
                tok,
                "Workspace.Write",
                "worktree",
                "1",
            ],
            Shape::One("broker-check"),
        ),
        case(&["verify"], Shape::One("verify")),
        case(&["verify", "--ledger", &led], Shape::One("verify-ledger")),
        case(&["why", "head"], Shape::One("why")),
        case(&["why", "cli:ep1:w1"], Shape::One("why")),
        case(
            &["replay", "--all"],
            Shape::LinesThen("replay-entry", "replay-summary"),
        ),
        case(
            &["export-episode", "ep1", "--out", &bundle],
            Shape::One("export-episode"),
        ),
        case(&["ailang", "version"], Shape::One("ailang-version")),
        case(&["ailang", "check", ail], Shape::Foreign),
        case(
            &["ailang", "run", ail, "--args-json", r#""{}""#],
            Shape::Foreign,
        ),
        case(&["ailang", "test", ail], Shape::Foreign),
        case(
            &[
                "limits",
                "reserve",
                "--scope",
                "run",
                "--attempt",
                &attempt,
                "--purpose",
                "ordinary",
                "--amount",
                "5",
                "--max-active-ms",
                "1000",
            ],
            Shape::One("limits-verdict"),
        ),
        case(
            &["limits", "dispatch", "--attempt", &attempt],
            Shape::One("limits-verdict"),
        ),
        case(
            &["limits", "settle", "--attempt", &attempt, "--actual", "3"],
            Shape::One("limits-verdict"),
        ),
        case(
            &[
                "limits",
                "reserve",
                "--scope",
                "run",
                "--attempt",
                &format!("{attempt}r"),
                "--purpose",
                "ordinary",
                "--amount",
                "5",
                "--max-active-ms",
                "1000",
            ],
            Shape::One("limits-verdict"),
        ),
        case(
            &["limits", "release", "--attempt", &format!("{attempt}r")],
            Shape::One("limits-verdict"),
        ),
        case(&["limits", "report"], Shape::One("limits-report")),
        case(
            &["limits", "stop", "--scope", "run", "--reason", "enough"],
            Shape::One("limits-verdict"),
        ),
        case(
            &[
                "mission",
                "create",
                "--contract",
                &contract,
                "--yes",
                "--now",
                "0",
            ],
            Shape::One("mission-result"),
        ),
        // A rejection: exit 4, on stderr, the envelope under --json.
        fails(
            &[
                "limits",
                "reserve",
                "--scope",
                "run",
                "--attempt",
                &format!("{attempt}big"),
                "--purpose",
                "ordinary",
                "--amount",
                "1000",
                "--max-active-ms",
                "1",
            ],
            4,
        ),
        // The attended acts meet the tty fence here (their terminal runs: tests/limits_cli.rs,
        // tests/mission_cli.rs, tests/prompts.rs).
        fails(&["limits", "init", "--config", &cfg], 3),
        fails(
            &[
                "limits",
                "adjust",
                "--scope",
                "run",
                "--set",
                "cost=50",
                "--evidence-file",
                &note,
            ],
            3,
        ),
        fails(
            &[
                "limits",
                "reconcile",
                "--attempt",
                &attempt,
                "--actual",
                "1",
                "--evidence-file",
                &note,
            ],
            3,
        ),
        case(
            &["mission", "start-run", "m", "--run", "r", "--now", "10"],
            Shape::One("mission-result"),
        ),
        case(
            &[
                "mission",
                "grant",
                "m",
                "--id",
                "g",
                "--subject",
                "agent",
                "--action",
                "write",
                "--resource",
                "doc",
                "--expires-at",
                "10000",
                "--limit",
                "100",
                "--now",
                "10",
            ],
            Shape::One("mission-result"),
        ),
        case(
            &["mission", "apply", "m", "--command", &step3, "--now", "10"],
            Shape::One("mission-result"),
        ),
        case(
            &["mission", "dispatch", "m", "--attempt", "a", "--now", "10"],
            Shape::One("mission-result"),
        ),
        case(
            &[
                "mission",
                "settle",
                "m",
                "--attempt",
                "a",
                "--actual",
                "5",
                "--now",
                "10",
            ],
            Shape::One("mission-result"),
        ),
        fails(
            &[
                "mission",
                "admit",
                "m",
                "--run",
                "r",
                "--operation",
                "o3",
                "--attempt",
                "a3",
                "--grant",
                "g",
                "--subject",
                "agent",
                "--capability",
                "write",
                "--resource",
                "doc",
                "--amount",
                "1000",
                "--now",
                "10",
            ],
            4,
        ),
        case(
            &[
                "mission",
                "admit",
                "m",
                "--run",
                "r",
                "--operation",
                "o2",
                "--attempt",
                "a2",
                "--grant",
                "g",
                "--subject",
                "agent",
                "--capability",
                "write",
                "--resource",
                "doc",
                "--amount",
                "5",
                "--now",
                "10",
            ],
            Shape::One("mission-result"),
        ),
        case(
            &["mission", "release", "m", "--attempt", "a2", "--now", "10"],
            Shape::One("mission-result"),
        ),
        fails(
            &[
                "mission",
                "approve",
                "m",
                "--operation",
                "o",
                "--evidence-file",
                &note,
                "--now",
                "10",
            ],
            3,
        ),
        fails(
            &[
                "mission",
                "reconcile",
                "m",
                "--attempt",
                "a",
                "--actual",
                "1",
                "--evidence-file",
                &note,
                "--now",
                "10",
            ],
            3,
        ),
        case(
            &["mission", "revoke", "m", "--grant", "g", "--now", "10"],
            Shape::One("mission-result"),
        ),
        case(
            &[
                "mission",
                "complete-run",
                "m",
                "--run",
                "r",
                "--criterion",
                &format!("review={obj}"),
                "--now",
                "10",
            ],
            Shape::One("mission-result"),
        ),
        case(&["mission", "list"], Shape::Foreign),
        case(&["mission", "report", "m"], Shape::One("mission-report")),
        case(&["mission", "log", "m"], Shape::Foreign),
        case(&["mission", "verify"], Shape::Foreign),
        case(&["pin", "--interpreter", "embedded"], Shape::Foreign),
        case(&["util", "man", "--out", &man], Shape::Lines("none")),
        case(
            &["util", "completions", "--out", &comp],
            Shape::Lines("none"),
        ),
    ]
}

/// Commands not run here, each with the reason.
const NOT_RUN: &[(&str, &str)] = &[
    (
        "world genesis",
        "run by the fixture (a store has one genesis); tests/cli/genesis.rs",
    ),
    ("world publish", "run by the fixture"),
    ("world serve", "a daemon: tests/serve.rs"),
    (
        "world util exec-probe",
        "hidden: the Workspace.Exec probe client runs inside the sandbox; tests/exec.rs",
    ),
    ("world mcp", "a stdio server: tests/mcp_stdio.rs"),
    // Issue 31: each needs a package directory, a terminal or the registry double.
    (
        "world package packet",
        "needs a package directory: tests/package.rs",
    ),
    (
        "world package approve",
        "always attended on a pty: tests/package.rs",
    ),
    (
        "world package publish",
        "needs the registry double: tests/package.rs",
    ),
    (
        "world package reconcile",
        "needs the registry double: tests/package.rs",
    ),
    (
        "world package status",
        "needs an approval: tests/package.rs",
    ),
    // Issue 33: each needs a key file or a signed checkpoint made first.
    (
        "world key generate",
        "writes a key file: tests/checkpoint.rs",
    ),
    ("world key public", "needs a key file: tests/checkpoint.rs"),
    (
        "world checkpoint list",
        "needs a signed checkpoint: tests/checkpoint.rs",
    ),
    (
        "world checkpoint show",
        "needs a signed checkpoint: tests/checkpoint.rs",
    ),
    (
        "world checkpoint cosign",
        "needs a witness key: tests/checkpoint.rs",
    ),
    (
        "world checkpoint merge",
        "needs a cosigned checkpoint: tests/checkpoint.rs",
    ),
    (
        "world prove",
        "needs a signed checkpoint: tests/checkpoint.rs",
    ),
    (
        "world approval decide",
        "decides the fixture's request once; tests/approvals.rs",
    ),
];

/// Every leaf command is either run by [`cases`] or listed in [`NOT_RUN`].
#[test]
fn every_command_is_covered() {
    let env = fixture();
    let run: Vec<String> = cases(&env, 0)
        .iter()
        .map(|c| {
            let mut p = vec!["world".to_string()];
            let mut cmd = world::cli::command();
            for a in &c.args {
                match cmd.find_subcommand(a) {
                    Some(s) => {
                        p.push(a.clone());
                        cmd = s.clone();
                    }
                    None => break,
                }
            }
            p.join(" ")
        })
        .collect();
    fn leaves(cmd: &clap::Command, path: String, out: &mut Vec<String>) {
        // Hidden commands (internal probes) are not part of the user-facing surface.
        let subs: Vec<_> = cmd
            .get_subcommands()
            .filter(|s| s.get_name() != "help" && !s.is_hide_set())
            .collect();
        if subs.is_empty() {
            out.push(path.clone());
        }
        for s in subs {
            leaves(s, format!("{path} {}", s.get_name()), out);
        }
    }
    let mut all = Vec::new();
    leaves(&world::cli::command(), "world".into(), &mut all);
    let missing: Vec<&String> = all
        .iter()
        .filter(|p| !run.contains(p) && !NOT_RUN.iter().any(|(n, _)| n == p))
        .collect();
    assert!(
        missing.is_empty(),
        "commands neither run nor listed in NOT_RUN: {missing:?}"
    );
}

fn run_case(env: &TestEnv, c: &Case, extra: &[&str]) -> Run {
    let mut a: Vec<&str> = c.args.iter().map(String::as_str).collect();
    a.extend_from_slice(extra);
    let out = env.cmd().args(&a).output().expect("run world");
    Run::from_output(out)
}

/// Under `-q` every command leaves stderr empty; under `-q --json` stdout is JSON lines only.
#[test]
fn quiet_leaves_only_data_for_every_command() {
    for (n, json) in [(0usize, false), (1, true)] {
        let env = fixture();
        for c in cases(&env, n) {
            let extra: &[&str] = if json { &["-q", "--json"] } else { &["-q"] };
            let r = run_case(&env, &c, extra);
            assert_eq!(r.code, c.code, "{:?} {extra:?}: {r:#?}", c.args);
            if c.code != 0 {
                // A failure says why on stderr even under -q, and prints no data: nothing on
                // stdout, or under --json only the one envelope.
                assert!(!r.stderr.is_empty(), "{:?} {extra:?}: {r:#?}", c.args);
                if json {
                    let v: serde_json::Value = serde_json::from_str(r.stdout.trim())
                        .unwrap_or_else(|e| panic!("{:?}: {e}: {r:#?}", c.args));
                    assert_eq!(v["error"]["exitCode"], c.code, "{:?}: {v}", c.args);
                    assert_eq!(r.stdout.lines().count(), 1, "{:?}: {r:#?}", c.args);
                } else {
                    assert_eq!(r.stdout, "", "{:?} printed data: {r:#?}", c.args);
                }
                continue;
            }
            assert_eq!(
                r.stderr, "",
                "{:?} {extra:?} wrote to stderr: {r:#?}",
                c.args
            );
            if !json && ledger_writer(&c.args) {
                assert_eq!(r.stdout, "", "{:?} -q printed its summary: {r:#?}", c.args);
            }
            if json && ledger_writer(&c.args) {
                assert_eq!(r.stdout.lines().count(), 1, "{:?}: {r:#?}", c.args);
            }
            // JSON lines; `world ailang check` keeps the `ailang` CLI contract's one indented
            // object (DEC-CLI-25).
            if json && serde_json::from_str::<serde_json::Value>(&r.stdout).is_err() {
                for l in r.stdout.lines() {
                    serde_json::from_str::<serde_json::Value>(l).unwrap_or_else(|e| {
                        panic!("{:?}: stdout line {l:?} is not JSON: {e}", c.args)
                    });
                }
            }
        }
    }
    // A writer's summary line is dropped by -q; its data (a head) stays.
    let env = fixture();
    let note = env.path("note.json");
    let r = env
        .run(&[
            "commit",
            "--put",
            note.to_str().unwrap(),
            "--semantic-id",
            "x",
            "-q",
        ])
        .ok();
    assert_eq!(r.stdout.trim(), env.run(&["head"]).ok().stdout.trim());
    let r = env
        .run(&[
            "export-episode",
            "ep1",
            "--out",
            env.path("b.db").to_str().unwrap(),
            "-q",
        ])
        .ok();
    assert_eq!((r.stdout.as_str(), r.stderr.as_str()), ("", ""));
}

/// Every `--json` output matches its schema, and every schema in docs/json/ is exercised.
#[test]
fn every_json_output_matches_its_schema() {
    let env = fixture();
    let mut used: Vec<&str> = vec!["error"];
    for c in cases(&env, 0) {
        let r = run_case(&env, &c, &["--json"]);
        assert_eq!(r.code, c.code, "{:?}: {r:#?}", c.args);
        if matches!(c.shape, Shape::Foreign) {
            if serde_json::from_str::<serde_json::Value>(&r.stdout).is_err() {
                r.json_lines();
            }
            continue;
        }
        let lines = r.json_lines();
        match c.shape {
            Shape::One(s) => {
                assert_eq!(lines.len(), 1, "{:?}: {r:#?}", c.args);
                assert_schema(s, &lines[0]);
                used.push(s);
            }
            Shape::Lines("none") => {}
            Shape::Lines(s) => {
                for l in &lines {
                    assert_schema(s, l);
                }
                assert!(
                    !lines.is_empty(),
                    "{:?} printed nothing to validate",
                    c.args
                );
                used.push(s);
            }
            Shape::LinesThen(s, last) => {
                let (tail, head) = lines.split_last().expect("a summary line");
                for l in head {
                    assert_schema(s, l);
                }
                assert_schema(last, tail);
                used.push(s);
                used.push(last);
            }
            Shape::Foreign => {}
        }
    }
    used.push("commit-batch-summary"); // tests/cli/commit.rs
    used.push("replay-verdict"); // tests/replay.rs (candidate_json_lines), every verdict kind
    used.push("routes"); // tests/serve.rs: GET /v1/
    let mut unused = Vec::new();
    for e in std::fs::read_dir(repo().join("docs/json")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        let stem = name.trim_end_matches(".schema.json");
        if !used.contains(&stem) {
            unused.push(name);
        }
    }
    assert!(unused.is_empty(), "schemas no test validates: {unused:?}");
    // Numbers are numbers and nested JSON is JSON.
    let e = first(&env, &["effects"], "ref");
    let v = env.run(&["effects", "show", &e, "--json"]).ok().json();
    assert!(
        v["record"]["cost"].is_i64() && v["request"]["payload"].is_object(),
        "{v}"
    );
    assert!(v["result"].is_object(), "{v}");
    assert!(v["record"]["denial"].is_null(), "{v}");
    // `invoke --json | why -` walks the invocation the object names (issue 16: docs and binary
    // agree).
    let tok = env.path("tok");
    let inv = env
        .run(&[
            "invoke",
            "counter",
            "--session",
            tok.to_str().unwrap(),
            "--args",
            "{}",
            "--json",
        ])
        .ok();
    let w = env
        .run_stdin(&["why", "-", "--json"], inv.stdout.as_bytes())
        .ok()
        .json();
    assert_eq!(w["ok"], true, "{w}");
    assert_eq!(
        w["entry"]["header"]["entryIndex"],
        inv.json()["entryIndex"],
        "{w}"
    );
}

/// Colour under `--color always` for ✓, FAIL, DIVERGED and errors; none with `NO_COLOR` under
/// `auto`, and none on a pipe (issue 16 §9).
#[test]
fn colour_only_when_asked() {
    let env = fixture();
    let r = env.run(&["verify", "--color", "always"]).ok();
    assert!(r.stdout.contains("\x1b[32m✓\x1b[0m"), "{r:#?}");
    let r = env.run(&["why", "head", "--color", "always"]).ok();
    assert!(r.stdout.contains("\x1b[32m✓\x1b[0m"), "{r:#?}");
    let r = env.run(&["log", "get", "99", "--color", "always"]).code(1);
    assert!(r.stderr.starts_with("\x1b[31mworld:\x1b[0m"), "{r:#?}");
    // The test environment sets NO_COLOR; auto then colours nothing, nor does never.
    for when in ["auto", "never"] {
        let r = env.run(&["verify", "--color", when]).ok();
        assert!(!r.stdout.contains('\x1b'), "{when}: {r:#?}");
        let r = env.run(&["log", "get", "99", "--color", when]).code(1);
        assert!(!r.stderr.contains('\x1b'), "{when}: {r:#?}");
    }
    // A tampered output object: DIVERGED and FAIL in red.
    let conn = rusqlite::Connection::open(&env.db).unwrap();
    let out_ref: String = {
        let v = env.run(&["show", "cli:ep1:w1", "--json"]).ok().json();
        v["invocation"]["outputRef"].as_str().unwrap().to_string()
    };
    conn.execute(
        "UPDATE objects SET payload = CAST('{}' AS BLOB) WHERE hash_ref = ?1",
        [&out_ref],
    )
    .unwrap();
    let r = env.run(&["replay", "--all", "--color", "always"]).code(3);
    assert!(r.stdout.contains("\x1b[31mDIVERGED\x1b[0m"), "{r:#?}");
    let r = env.run(&["verify", "--color", "always"]).code(3);
    assert!(r.stdout.contains("\x1b[31mFAIL\x1b[0m"), "{r:#?}");
}
