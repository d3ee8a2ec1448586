//! `world limits …` through the binary (limits.md §5–§8, issue 7 parts 2–4).
//!
//! Every command runs in a new session without a controlling terminal (so the attended acts
//! meet the tty fence), with `WORLD_DB` naming a store in a temp dir. The attended HUMAN acts
//! themselves are driven on a pseudo-terminal that becomes the child's controlling terminal.

use crate::terminal;
use terminal::pty;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use assert_cmd::prelude::*;
use predicates::prelude::*;
use serde_json::Value;

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/limits/example.json");

/// One budget of 100 without a handoff partition: the finite-v1 numbers (limits.md §10).
const FINITE: &str = r#"{"profile":"aiws-limits/1","ledgerId":"finite","unit":"cents",
 "scopes":[{"scopeId":"mission","kind":"WORK_ORDER","parentId":null,
   "limits":{"cost":"100","handoff":null,"activeMs":null,"elapsedMs":null,"attempts":null},
   "dependsOn":[]}]}"#;

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    /// A temp dir with a genesis store `w.db`.
    fn new() -> Env {
        let env = Env::bare();
        env.world(&["genesis"]).assert().success();
        env
    }
    /// A temp dir without a store.
    fn bare() -> Env {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("finite.json"), FINITE).unwrap();
        std::fs::write(
            dir.path().join("approval.txt"),
            "approved by ann, ticket 42\n",
        )
        .unwrap();
        Env { dir }
    }
    fn db(&self) -> PathBuf {
        self.dir.path().join("w.db")
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    fn base(&self) -> Command {
        let mut c = Command::cargo_bin("world").unwrap();
        c.current_dir(self.dir.path())
            .env("WORLD_DB", self.db())
            .env("USER", "ann")
            .env_remove("CI")
            .env_remove("GITHUB_ACTIONS")
            .env_remove("WORLD_SESSION")
            .env_remove("NO_COLOR")
            .stdin(Stdio::null());
        c
    }
    /// `world ARGS` in a new session: no controlling terminal.
    fn world(&self, args: &[&str]) -> Command {
        let mut c = self.base();
        c.args(args);
        terminal::detach(&mut c);
        c
    }
    /// `world limits ARGS`; asserts the exit code.
    fn limits_out(&self, args: &[&str], code: i32) -> std::process::Output {
        let mut full = vec!["limits"];
        full.extend_from_slice(args);
        let out = self.world(&full).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(code),
            "world {full:?}\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }
    /// `world limits ARGS`; asserts the exit code and returns stdout on success, or the error
    /// on stderr for a failure (nothing on stdout without --json: the one CLI convention).
    fn limits(&self, args: &[&str], code: i32) -> String {
        let out = self.limits_out(args, code);
        if code == 0 {
            return String::from_utf8(out.stdout).unwrap();
        }
        if code != 4 && code != 2 {
            // `verify` findings (exit 3) are data: stdout.
            return String::from_utf8(out.stdout).unwrap();
        }
        if !args.contains(&"--json") {
            assert!(out.stdout.is_empty(), "a failure printed data: {out:?}");
        }
        String::from_utf8(out.stderr).unwrap()
    }
    /// `world --json limits ARGS` parsed as one JSON object; for a failure, the `error` member
    /// of the one envelope (its `exitCode` checked).
    fn limits_json(&self, args: &[&str], code: i32) -> Value {
        let mut full = args.to_vec();
        full.push("--json");
        let out = self.limits_out(&full, code);
        let text = String::from_utf8(out.stdout).unwrap();
        let v: Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"));
        if code == 0 {
            return v;
        }
        assert_eq!(v["error"]["exitCode"], code, "{v}");
        v["error"].clone()
    }
    /// `limits reserve` of `amount` in scope `mission` (ordinary, 5 ms) at `now`; asserts the
    /// exit code and returns the JSON verdict.
    fn reserve(&self, id: &str, amount: &str, now: &str, code: i32) -> Value {
        self.limits_json(
            &[
                "reserve",
                "--scope",
                "mission",
                "--attempt",
                id,
                "--purpose",
                "ordinary",
                "--amount",
                amount,
                "--max-active-ms",
                "5",
                "--now",
                now,
            ],
            code,
        )
    }
    /// The report at `now`, checked against docs/json/limits-report.schema.json.
    fn report(&self, now: &str) -> Value {
        let r = self.limits_json(&["report", "--now", now], 0);
        crate::cli::assert_schema("limits-report", &r);
        r
    }
    fn init_example(&self) {
        let out = self.limits(&["init", "--config", EXAMPLE, "--yes", "--now", "0"], 0);
        assert_eq!(out.trim(), "ok revision=1");
    }
}

fn scope<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["scopeId"] == id)
        .unwrap_or_else(|| panic!("no scope {id} in {report}"))
}

/// Every schema object that is not a ledger table, and `user_version`.
fn v4_schema(db: &Path) -> (Vec<(String, String, Option<String>)>, i64) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT type, name, sql FROM sqlite_master WHERE tbl_name NOT LIKE 'limits\\_%' ESCAPE '\\' ORDER BY type, name")
        .unwrap();
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let v = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    (rows, v)
}

fn count(db: &Path, sql: &str) -> i64 {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn init_yes_leaves_the_v4_schema_untouched_and_the_store_verifies() {
    let env = Env::new();
    let before = v4_schema(&env.db());
    assert_eq!(before.1, 4);
    env.init_example();
    assert_eq!(
        v4_schema(&env.db()),
        before,
        "v4 tables, indexes, user_version"
    );
    assert_eq!(
        count(&env.db(), "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name LIKE 'limits\\_%' ESCAPE '\\'"),
        8,
        "limits.md §7's seven tables and limits_folds (DEC-LEDGER-1)"
    );
    // The HOST act is recorded as unattended, by the operator.
    let event: String = rusqlite::Connection::open(env.db())
        .unwrap()
        .query_row(
            "SELECT CAST(event AS TEXT) FROM limits_events WHERE revision = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let event: Value = serde_json::from_str(&event).unwrap();
    assert_eq!(event["actor"]["actorKind"], "HOST");
    assert_eq!(event["actor"]["actorId"], "host:ann");
    assert_eq!(event["actor"]["policyRef"], "unattended:--yes");
    env.world(&["verify"]).assert().success();
    // A second init is refused with the ledger's code, exit 4.
    let v = env.limits_json(&["init", "--config", EXAMPLE, "--yes", "--now", "1"], 4);
    assert_eq!(v["code"], "ledger_already_initialized");
    assert_eq!(v["revision"], "1");
}

#[test]
fn init_without_yes_meets_the_tty_fence_and_writes_nothing() {
    let env = Env::new();
    let before = v4_schema(&env.db());
    env.world(&["limits", "init", "--config", EXAMPLE, "--now", "0"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains(
            "STOP fence=tty reason=no-controlling-terminal",
        ));
    assert_eq!(v4_schema(&env.db()), before);
    let v = env.limits_json(&["report", "--now", "0"], 4);
    assert_eq!(v["code"], "ledger_not_initialized");
}

/// A rejected limits command says why on stderr in both forms, as every failing command does
/// (README "Scripting"), and prints no data: nothing on stdout in text, and under `--json` only
/// the one `{"error":{…,"exitCode":4}}` envelope with the §5 members inside it
/// (DEC-LEDGER-CLI-1); a store file without ledger tables says how to make one.
#[test]
fn a_rejection_is_reported_on_stderr_in_both_forms() {
    let env = Env::new();
    for json in [false, true] {
        let mut args = vec!["limits", "report", "--now", "0"];
        if json {
            args.insert(0, "--json");
        }
        let out = env
            .world(&args)
            .assert()
            .code(4)
            .stderr(predicate::str::starts_with(
                "ledger_not_initialized: this store file has no limits ledger",
            ))
            .stderr(predicate::str::contains(
                "hint: initialise it with `world limits init --config FILE`",
            ))
            .get_output()
            .clone();
        let stdout = String::from_utf8(out.stdout).unwrap();
        if json {
            let v: Value = serde_json::from_str(stdout.trim()).unwrap();
            assert_eq!(v["error"]["code"], "ledger_not_initialized", "{v}");
            assert_eq!(v["error"]["exitCode"], 4, "{v}");
            assert_eq!(v["error"]["revision"], "0", "{v}");
            assert!(v.get("code").is_none(), "one shape only: {v}");
            crate::cli::assert_schema("error", &v);
        } else {
            assert_eq!(stdout, "");
        }
        let mut args = vec![
            "limits",
            "reserve",
            "--ledger",
            "none.ledger",
            "--scope",
            "wo",
            "--attempt",
            "a",
            "--purpose",
            "ordinary",
            "--amount",
            "1",
            "--max-active-ms",
            "1",
        ];
        if json {
            args.insert(0, "--json");
        }
        env.world(&args)
            .assert()
            .code(4)
            .stderr(predicate::str::contains(
                "ledger_not_initialized: ledger none.ledger does not exist",
            ));
    }
}

#[test]
fn seed_scenario_handoff_partition() {
    let env = Env::new();
    env.init_example();
    let work = env.limits(
        &[
            "reserve",
            "--scope",
            "run",
            "--attempt",
            "work",
            "--purpose",
            "ordinary",
            "--amount",
            "90",
            "--max-active-ms",
            "10",
            "--now",
            "0",
        ],
        0,
    );
    assert!(work.starts_with("ok revision=2"), "{work}");
    let summary = env.limits(
        &[
            "reserve",
            "--scope",
            "run",
            "--attempt",
            "summary",
            "--purpose",
            "HANDOFF",
            "--amount",
            "10",
            "--max-active-ms",
            "10",
            "--now",
            "0",
        ],
        0,
    );
    assert!(summary.starts_with("ok revision=3"), "{summary}");
    let r = env.report("0");
    let wo = scope(&r, "wo");
    assert_eq!(wo["usage"]["cost"], "100");
    assert_eq!(wo["usage"]["handoff"], "10");
    assert_eq!(wo["usage"]["activeMs"], "20");
    assert_eq!(wo["blocked"], true);
    assert_eq!(r["outstanding"].as_array().unwrap().len(), 2);

    let v = env.limits_json(
        &[
            "reserve",
            "--scope",
            "run",
            "--attempt",
            "more",
            "--purpose",
            "ordinary",
            "--amount",
            "91",
            "--max-active-ms",
            "10",
            "--now",
            "0",
        ],
        4,
    );
    assert_eq!(v["code"], "handoff_protected");
    assert_eq!(v["revision"], "3");
    assert_eq!(v["scopeId"], "run");
    assert_eq!(v["limit"], "cost");
    assert_eq!(v["bound"], "90");
    assert_eq!(v["used"], "90");
    assert_eq!(v["requested"], "91");
    // Text form names code, scope and limit.
    let text = env.limits(
        &[
            "reserve",
            "--scope",
            "run",
            "--attempt",
            "more",
            "--purpose",
            "ordinary",
            "--amount",
            "91",
            "--max-active-ms",
            "10",
            "--now",
            "0",
        ],
        4,
    );
    assert!(
        text.starts_with("handoff_protected scope=run limit=cost"),
        "{text}"
    );
    assert_eq!(
        env.report("0")["revision"],
        "3",
        "rejections change nothing"
    );

    // The text report: a tree with usage/bound and why it is blocked.
    let table = env.limits(&["report", "--now", "0", "--color", "never"], 0);
    assert!(table.contains("ledger guide  revision 3"), "{table}");
    assert!(table.contains("100/100"), "{table}");
    assert!(table.contains("  run"), "run indented under wo: {table}");
    assert!(table.contains("cost_exhausted at wo"), "{table}");
    assert!(table.contains("summary"), "{table}");
}

#[test]
fn finite_v1_numbers_unknown_and_exposure_exceeded() {
    let env = Env::new();
    env.limits(
        &["init", "--config", "finite.json", "--yes", "--now", "0"],
        0,
    );
    let reserve = |id: &str, amount: &str, now: &str, code: i32| env.reserve(id, amount, now, code);
    assert_eq!(reserve("a", "80", "10", 0)["code"], "ok");
    let v = reserve("b", "30", "10", 4);
    assert_eq!(v["code"], "cost_exhausted");
    assert_eq!(v["bound"], "100");
    assert_eq!(v["used"], "80");
    assert_eq!(scope(&env.report("10"), "mission")["usage"]["cost"], "80");

    env.limits(&["dispatch", "--attempt", "a", "--now", "10"], 0);
    env.limits(
        &["settle", "--attempt", "a", "--actual", "50", "--now", "20"],
        0,
    );
    assert_eq!(scope(&env.report("20"), "mission")["usage"]["cost"], "50");

    // UNKNOWN keeps the full reservation.
    assert_eq!(reserve("c", "40", "20", 0)["code"], "ok");
    env.limits(&["dispatch", "--attempt", "c", "--now", "20"], 0);
    env.limits(&["settle", "--attempt", "c", "--unknown", "--now", "30"], 0);
    let r = env.report("30");
    assert_eq!(scope(&r, "mission")["usage"]["cost"], "90");
    assert_eq!(r["unknown"][0]["attemptId"], "c");
    assert_eq!(r["unknown"][0]["state"], "UNKNOWN");
    // Only a human reconciles it.
    let v = env.limits_json(
        &["settle", "--attempt", "c", "--actual", "40", "--now", "30"],
        4,
    );
    assert_eq!(v["code"], "attempt_unknown_requires_reconciliation");

    // Actual above admitted: exposure_exceeded, exit 4, a violation in the report.
    assert_eq!(reserve("d", "10", "30", 0)["code"], "ok");
    env.limits(&["dispatch", "--attempt", "d", "--now", "30"], 0);
    let before = env.report("40")["revision"].clone();
    let v = env.limits_json(
        &["settle", "--attempt", "d", "--actual", "11", "--now", "40"],
        4,
    );
    assert_eq!(v["code"], "exposure_exceeded");
    assert_eq!(v["attemptId"], "d");
    let r = env.report("40");
    assert_eq!(
        r["revision"], before,
        "a rejection does not bump the revision"
    );
    assert_eq!(
        scope(&r, "mission")["usage"]["cost"],
        "100",
        "full reservation kept"
    );
    let viol = &r["violations"][0];
    assert_eq!(viol["attemptId"], "d");
    assert_eq!(viol["admitted"], "10");
    assert_eq!(viol["claimed"], "11");
    let table = env.limits(&["report", "--now", "40"], 0);
    assert!(table.contains("violations (exposure_exceeded"), "{table}");
    // --failed settles FAILED with its cost.
    env.limits(
        &[
            "settle",
            "--attempt",
            "d",
            "--actual",
            "7",
            "--failed",
            "--now",
            "41",
        ],
        0,
    );
    assert_eq!(scope(&env.report("41"), "mission")["usage"]["cost"], "97");
}

#[test]
fn request_id_idempotency_revision_and_clock() {
    let env = Env::new();
    env.init_example();
    let args = |attempt: &str, amount: &str| -> Vec<String> {
        [
            "reserve",
            "--scope",
            "run",
            "--attempt",
            attempt,
            "--purpose",
            "ordinary",
            "--amount",
            amount,
            "--max-active-ms",
            "1",
            "--now",
            "5",
            "--request-id",
            "r-1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let run = |a: Vec<String>, code: i32| {
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        env.limits_json(&refs, code)
    };
    assert_eq!(run(args("x", "5"), 0)["code"], "ok");
    let again = run(args("x", "5"), 0);
    assert_eq!(again["code"], "exists");
    assert_eq!(again["revision"], "2");
    assert_eq!(env.report("5")["revision"], "2");
    assert_eq!(
        run(args("y", "6"), 4)["code"],
        "exists_with_different_command"
    );

    // Without --request-id, the same command is a new request (random id): attempt_id_exists.
    let v = env.limits_json(
        &[
            "reserve",
            "--scope",
            "run",
            "--attempt",
            "x",
            "--purpose",
            "ordinary",
            "--amount",
            "5",
            "--max-active-ms",
            "1",
            "--now",
            "5",
        ],
        4,
    );
    assert_eq!(v["code"], "attempt_id_exists");

    let v = env.limits_json(
        &[
            "release",
            "--attempt",
            "x",
            "--expected-revision",
            "1",
            "--now",
            "6",
        ],
        4,
    );
    assert_eq!(v["code"], "revision_mismatch");
    assert_eq!(v["revision"], "2");
    let v = env.limits_json(&["release", "--attempt", "x", "--now", "4"], 4);
    assert_eq!(v["code"], "time_regressed");
    let v = env.limits_json(
        &[
            "release",
            "--attempt",
            "x",
            "--expected-revision",
            "2",
            "--now",
            "6",
        ],
        0,
    );
    assert_eq!(v["code"], "ok");
    assert_eq!(v["revision"], "3");
    let v = env.limits_json(&["release", "--attempt", "x", "--now", "7"], 4);
    assert_eq!(v["code"], "attempt_already_released");
}

#[test]
fn adjust_and_reconcile_are_refused_without_a_terminal() {
    let env = Env::new();
    env.limits(
        &["init", "--config", "finite.json", "--yes", "--now", "0"],
        0,
    );
    env.limits(
        &[
            "reserve",
            "--scope",
            "mission",
            "--attempt",
            "u",
            "--purpose",
            "ordinary",
            "--amount",
            "20",
            "--max-active-ms",
            "5",
            "--now",
            "1",
        ],
        0,
    );
    env.limits(&["dispatch", "--attempt", "u", "--now", "1"], 0);
    env.limits(&["settle", "--attempt", "u", "--unknown", "--now", "2"], 0);
    let before = env.report("3");
    let objects = count(&env.db(), "SELECT count(*) FROM objects");
    for args in [
        vec![
            "limits",
            "adjust",
            "--scope",
            "mission",
            "--set",
            "cost=200",
            "--evidence-file",
            "approval.txt",
            "--now",
            "3",
        ],
        vec![
            "limits", "adjust", "--scope", "mission", "--set", "cost=200", "--now", "3",
        ],
        vec![
            "limits",
            "reconcile",
            "--attempt",
            "u",
            "--actual",
            "20",
            "--evidence-file",
            "approval.txt",
            "--now",
            "3",
        ],
        vec![
            "limits",
            "reconcile",
            "--attempt",
            "u",
            "--actual",
            "20",
            "--now",
            "3",
        ],
    ] {
        env.world(&args)
            .assert()
            .code(3)
            .stdout("")
            .stderr(predicate::str::contains(
                "STOP fence=tty reason=no-controlling-terminal",
            ));
    }
    assert_eq!(env.report("3"), before, "nothing written");
    assert_eq!(count(&env.db(), "SELECT count(*) FROM objects"), objects);
    // An agent's session cannot stand in for the human either.
    env.world(&[
        "session",
        "mint",
        "--episode",
        "mission",
        "--grant",
        "Workspace.Read=worktree:5",
        "--out",
        "tok",
        "--yes",
    ])
    .assert()
    .success();
    let v = env.limits_json(
        &[
            "adjust",
            "--scope",
            "mission",
            "--set",
            "cost=200",
            "--evidence-file",
            "approval.txt",
            "--session",
            "tok",
            "--now",
            "3",
        ],
        4,
    );
    assert_eq!(v["code"], "actor_kind_not_permitted");
    assert_eq!(env.report("3"), before, "nothing written");
}

#[test]
fn an_agent_reserves_ordinary_work_but_never_handoff() {
    let env = Env::new();
    env.init_example();
    env.world(&[
        "session",
        "mint",
        "--episode",
        "run",
        "--grant",
        "Workspace.Read=worktree:5",
        "--out",
        "tok",
        "--yes",
    ])
    .assert()
    .success();
    let reserve = |id: &str, purpose: &str, code: i32| {
        env.limits_json(
            &[
                "reserve",
                "--scope",
                "run",
                "--attempt",
                id,
                "--purpose",
                purpose,
                "--amount",
                "5",
                "--max-active-ms",
                "1",
                "--session",
                "tok",
                "--now",
                "1",
            ],
            code,
        )
    };
    assert_eq!(
        reserve("h", "handoff", 4)["code"],
        "actor_kind_not_permitted"
    );
    assert_eq!(reserve("o", "ordinary", 0)["code"], "ok");
    // The agent may stop the scope named by its episode.
    let v = env.limits_json(
        &[
            "stop",
            "--scope",
            "run",
            "--reason",
            "done",
            "--session",
            "tok",
            "--now",
            "2",
        ],
        0,
    );
    assert_eq!(v["code"], "ok");
    let r = env.report("2");
    assert_eq!(scope(&r, "run")["stopped"], true);
    // An unknown credential is an authentication failure, refused before the ledger decides
    // (exit 1, as `invoke` and `mission` refuse it; DEC-ARCH-11), and nothing is written.
    let before = env.report("3");
    std::fs::write(env.path("bad"), "ab".repeat(32)).unwrap();
    let v = env.limits_json(
        &[
            "stop",
            "--scope",
            "wo",
            "--reason",
            "x",
            "--session",
            "bad",
            "--now",
            "3",
        ],
        1,
    );
    assert_eq!(v["message"], "session: unknown session credential", "{v}");
    assert_eq!(env.report("3"), before, "nothing written");
}

#[test]
fn bad_amounts_are_ledger_rejections() {
    let env = Env::new();
    env.init_example();
    let two128 = "340282366920938463463374607431768211456";
    for (bad, code) in [
        ("-1", "amount_invalid"),
        ("01", "amount_invalid"),
        ("1.5", "amount_invalid"),
        ("1e3", "amount_invalid"),
        (two128, "overflows_amount"),
    ] {
        let v = env.limits_json(
            &[
                "reserve",
                "--scope",
                "run",
                "--attempt",
                "a",
                "--purpose",
                "ordinary",
                "--amount",
                bad,
                "--max-active-ms",
                "1",
                "--now",
                "1",
            ],
            4,
        );
        assert_eq!(v["code"], code, "{bad}");
        assert_eq!(v["revision"], "1", "{bad}");
        let v = env.limits_json(
            &[
                "reserve",
                "--scope",
                "run",
                "--attempt",
                "a",
                "--purpose",
                "ordinary",
                "--amount",
                "1",
                "--max-active-ms",
                bad,
                "--now",
                "1",
            ],
            4,
        );
        assert_eq!(v["code"], code, "max-active-ms {bad}");
    }
    assert_eq!(env.report("1")["revision"], "1");
    // Usage errors are exit 2: a bad purpose, a bad --now, a bad --set kind.
    env.world(&[
        "limits",
        "reserve",
        "--scope",
        "run",
        "--attempt",
        "a",
        "--purpose",
        "urgent",
        "--amount",
        "1",
        "--max-active-ms",
        "1",
    ])
    .assert()
    .code(2);
    env.world(&["limits", "release", "--attempt", "a", "--now", "1.5"])
        .assert()
        .code(2);
    env.world(&[
        "limits",
        "adjust",
        "--scope",
        "wo",
        "--set",
        "speed=1",
        "--evidence-file",
        "approval.txt",
    ])
    .assert()
    .code(2);
    env.world(&["limits", "settle", "--attempt", "a"])
        .assert()
        .code(2);
}

/// docs/LEDGER.md "A ledger file's permissions": a user who may only read a WAL ledger file
/// cannot open it (SQLite must create FILE-shm next to it); the error says so instead of a bare
/// SQLite message. Runs only as root (it needs another user to be the reader).
#[test]
fn a_ledger_file_the_user_may_only_read_fails_with_a_hint() {
    use std::os::unix::fs::PermissionsExt;
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED: needs root to run the reader as another user");
        return;
    }
    let env = Env::bare();
    let ls = env.path("l.ledger").display().to_string();
    env.limits(
        &[
            "init", "--config", EXAMPLE, "--yes", "--ledger", &ls, "--now", "0",
        ],
        0,
    );
    // A directory and file everyone may read and nobody but root may write.
    let shared = tempfile::tempdir().unwrap();
    std::fs::set_permissions(shared.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let ro = shared.path().join("l.ledger");
    std::fs::copy(&ls, &ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o644)).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("world");
    let out = Command::new("runuser")
        .args(["-u", "nobody", "--"])
        .arg(&bin)
        .args(["limits", "report", "--ledger"])
        .arg(&ro)
        .current_dir(shared.path())
        .env("WORLD_DB", shared.path().join("w.db"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("Permission denied") && !err.contains("world:") {
        eprintln!("SKIPPED: user nobody cannot run {}: {err}", bin.display());
        return;
    }
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("WAL mode") && err.contains("write access"),
        "{err}"
    );
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // Nothing was created next to it, and the file is unchanged.
    assert!(!shared.path().join("l.ledger-shm").exists());
    assert_eq!(std::fs::read(&ro).unwrap(), std::fs::read(&ls).unwrap());
}

#[test]
fn standalone_ledger_file_and_a_store_passed_as_ledger() {
    let env = Env::bare();
    let l = env.path("budget.ledger");
    let ls = l.to_str().unwrap();
    // No World store is needed for a standalone ledger.
    env.limits(
        &[
            "init", "--config", EXAMPLE, "--yes", "--ledger", ls, "--now", "0",
        ],
        0,
    );
    env.limits(
        &[
            "reserve",
            "--scope",
            "run",
            "--attempt",
            "w",
            "--purpose",
            "ordinary",
            "--amount",
            "90",
            "--max-active-ms",
            "10",
            "--ledger",
            ls,
            "--now",
            "0",
        ],
        0,
    );
    let v = env.limits_json(&["report", "--ledger", ls, "--now", "0"], 0);
    assert_eq!(scope(&v, "wo")["usage"]["cost"], "90");
    assert!(!env.db().exists(), "the store file was not created");
    let app: i64 = rusqlite::Connection::open(&l)
        .unwrap()
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .unwrap();
    assert_eq!(app, 0x776c_6467);
    // Reporting on a missing ledger file does not create it.
    let v = env.limits_json(&["report", "--ledger", "none.ledger", "--now", "0"], 4);
    assert_eq!(v["code"], "ledger_not_initialized");
    assert!(!env.path("none.ledger").exists());

    // A World store is refused as --ledger, and stays untouched.
    env.world(&["genesis"]).assert().success();
    let before = v4_schema(&env.db());
    let db = env.db();
    env.world(&[
        "limits",
        "init",
        "--config",
        EXAMPLE,
        "--yes",
        "--ledger",
        db.to_str().unwrap(),
        "--now",
        "0",
    ])
    .assert()
    .code(2)
    .stderr(predicate::str::contains("is not a world ledger ("));
    assert_eq!(v4_schema(&env.db()), before);
    assert_eq!(
        count(
            &env.db(),
            "SELECT count(*) FROM sqlite_master WHERE name LIKE 'limits\\_%' ESCAPE '\\'"
        ),
        0
    );
}

#[test]
fn a_missing_store_is_an_error_with_a_hint() {
    let env = Env::bare();
    env.world(&["limits", "init", "--config", EXAMPLE, "--yes"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("world genesis"));
    assert!(!env.db().exists());
}

// ---- attended acts on a pseudo-terminal -------------------------------------------------

/// `world ARGS` with a pty as controlling terminal, `typed` already waiting on it.
fn attended(env: &Env, args: &[&str], typed: &str) -> std::process::Output {
    use std::io::Write;
    let (mut master, slave) = pty();
    master.write_all(typed.as_bytes()).unwrap();
    let mut c = env.base();
    c.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    terminal::with_terminal(&mut c, &slave);
    let out = c.output().unwrap();
    drop(slave);
    drop(master);
    out
}

fn change_phrase(scope_id: &str, cost: u128) -> String {
    let mut limits = world::limits::BoundsPatch::default();
    limits.set(
        world::limits::LimitKind::Cost,
        Some(world::ledger::Amount(cost)),
    );
    let cmd = world::limits::Command::Adjust {
        scope_id: scope_id.into(),
        limits,
        resume: false,
        evidence_ref: None,
    };
    let r = cmd.change_ref().unwrap().to_string();
    format!("adjust {scope_id} {}", &r[7..19])
}

#[test]
fn a_human_adjusts_and_reconciles_at_the_terminal() {
    let env = Env::new();
    env.limits(
        &["init", "--config", "finite.json", "--yes", "--now", "0"],
        0,
    );
    env.limits(
        &[
            "reserve",
            "--scope",
            "mission",
            "--attempt",
            "u",
            "--purpose",
            "ordinary",
            "--amount",
            "100",
            "--max-active-ms",
            "5",
            "--now",
            "1",
        ],
        0,
    );
    env.limits(&["dispatch", "--attempt", "u", "--now", "1"], 0);
    env.limits(&["settle", "--attempt", "u", "--unknown", "--now", "2"], 0);
    let before = env.report("3");

    // A wrong phrase: STOP fence=confirmation, nothing written.
    let adjust = [
        "limits",
        "adjust",
        "--scope",
        "mission",
        "--set",
        "cost=150",
        "--evidence-file",
        "approval.txt",
        "--now",
        "3",
    ];
    let out = attended(&env, &adjust, "adjust mission 000000000000\n");
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("STOP fence=confirmation reason=mismatch")
    );
    assert_eq!(env.report("3"), before);

    // The exact phrase: a HUMAN act, evidence stored in the World store.
    let out = attended(
        &env,
        &adjust,
        &format!("{}\n", change_phrase("mission", 150)),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("ok revision=5"));
    let r = env.report("3");
    assert_eq!(scope(&r, "mission")["bounds"]["cost"], "150");
    assert_eq!(
        count(
            &env.db(),
            "SELECT count(*) FROM objects WHERE semantic_id = 'world/limits-evidence/v1'"
        ),
        1
    );
    let evidence = format!(
        "{}",
        world::encoding::HashRef::of(&std::fs::read(env.path("approval.txt")).unwrap())
    );

    // Reconcile with the stored object as --evidence REF.
    let reconcile = [
        "limits",
        "reconcile",
        "--attempt",
        "u",
        "--actual",
        "60",
        "--evidence",
        &evidence,
        "--now",
        "4",
    ];
    let out = attended(&env, &reconcile, "reconcile u\n");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = env.report("4");
    assert_eq!(scope(&r, "mission")["usage"]["cost"], "60");
    assert!(r["unknown"].as_array().unwrap().is_empty());
    let actor: String = rusqlite::Connection::open(env.db())
        .unwrap()
        .query_row(
            "SELECT count(*) FROM limits_events WHERE CAST(event AS TEXT) LIKE '%\"actorId\":\"human:ann\",\"actorKind\":\"HUMAN\"%'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n.to_string())
        .unwrap_or_else(|e| e.to_string());
    assert_eq!(actor, "2", "both acts recorded as human:ann");

    // Evidence that does not resolve is refused before anyone is asked.
    let missing = world::encoding::HashRef::of(b"nothing").to_string();
    let out = attended(
        &env,
        &[
            "--json",
            "limits",
            "adjust",
            "--scope",
            "mission",
            "--set",
            "cost=160",
            "--evidence",
            &missing,
            "--now",
            "5",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(4));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["code"], "evidence_unverified", "{v}");
    env.world(&["verify"]).assert().success();
}

/// Issue 13 §3: `world verify` folds the ledger's event chain and compares it with every
/// materialised `limits_*` table; each edit below is a named finding (exit 3).
#[test]
fn verify_folds_the_ledger_and_names_every_edit() {
    let env = Env::new();
    env.limits(
        &["init", "--config", "finite.json", "--yes", "--now", "0"],
        0,
    );
    let reserve = |id: &str, amount: &str, now: &str| {
        env.reserve(id, amount, now, 0);
    };
    reserve("a", "60", "10");
    env.limits(&["dispatch", "--attempt", "a", "--now", "10"], 0);
    env.limits(
        &["settle", "--attempt", "a", "--actual", "50", "--now", "20"],
        0,
    );
    reserve("c", "10", "20");
    env.limits(&["dispatch", "--attempt", "c", "--now", "20"], 0);
    env.limits(&["settle", "--attempt", "c", "--unknown", "--now", "30"], 0);
    reserve("d", "10", "30");
    env.limits(&["dispatch", "--attempt", "d", "--now", "30"], 0);
    env.limits(
        &["settle", "--attempt", "d", "--actual", "11", "--now", "40"],
        4,
    );
    env.limits(
        &[
            "settle",
            "--attempt",
            "d",
            "--actual",
            "7",
            "--failed",
            "--now",
            "41",
        ],
        0,
    );
    reserve("open", "5", "41");
    env.world(&["verify"]).assert().success();

    let tampers: [(&str, &str, &str); 10] = [
        ("zeroed usage", "ledger_state", "UPDATE limits_scopes SET usage_ordinary = '0'"),
        ("edited attempt amount", "ledger_state", "UPDATE limits_attempts SET amount = '1' WHERE attempt_id = 'open'"),
        ("deleted attempt", "ledger_state", "DELETE FROM limits_attempts WHERE attempt_id = 'open'"),
        ("unknown settled by hand", "ledger_state", "UPDATE limits_attempts SET state = 'SETTLED', outcome = 'SUCCEEDED', actual_cost = '0' WHERE attempt_id = 'c'"),
        ("deleted request row", "ledger_state", "DELETE FROM limits_requests WHERE revision = 2"),
        ("meta revision rolled back", "ledger_state", "UPDATE limits_meta SET revision = revision - 1"),
        ("closure row deleted", "ledger_state", "DELETE FROM limits_closure"),
        ("violation resolved by hand", "ledger_state", "UPDATE limits_violations SET resolved_revision = 3"),
        ("event edited after dropping the trigger", "ledger_chain", "DROP TRIGGER limits_events_no_update; UPDATE limits_events SET event = CAST(replace(CAST(event AS TEXT), '\"60\"', '\"6\"') AS BLOB) WHERE revision = 2"),
        ("last event deleted after dropping the trigger", "ledger_state", "DROP TRIGGER limits_events_no_delete; DELETE FROM limits_events WHERE revision = (SELECT MAX(revision) FROM limits_events)"),
    ];
    let mut missed = Vec::new();
    for (name, want, sql) in tampers {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("w.db");
        std::fs::copy(env.db(), &db).unwrap();
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute_batch(sql)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let out = env
            .world(&["--db", db.to_str().unwrap(), "verify", "--json"])
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        let cats: Vec<&str> = v["failures"]
            .as_array()
            .map(|a| a.iter().filter_map(|f| f["category"].as_str()).collect())
            .unwrap_or_default();
        if out.status.code() != Some(3) || !cats.contains(&want) {
            missed.push(format!(
                "{name}: want {want}, exit {:?}, failures {cats:?}",
                out.status.code()
            ));
        }
    }
    assert!(
        missed.is_empty(),
        "ledger tampers verify missed:\n{}",
        missed.join("\n")
    );
}

/// Issue 27 §4: the seed's `--now 0` after an `init` on the system clock is `time_regressed`
/// with a hint naming the ledger's time and a `--now` it accepts; the named value works, and
/// `--now` takes RFC 3339 as well as Unix milliseconds. Text times are RFC 3339.
#[test]
fn a_regressed_clock_says_which_now_the_ledger_accepts() {
    let env = Env::new();
    env.limits(&["init", "--config", EXAMPLE, "--yes"], 0);
    let reserve = |id: &str, now: &str| -> Vec<String> {
        [
            "reserve",
            "--scope",
            "run",
            "--attempt",
            id,
            "--purpose",
            "ordinary",
            "--amount",
            "1",
            "--max-active-ms",
            "1",
            "--now",
            now,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let args = reserve("a", "0");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let err = env.limits(&args, 4);
    assert!(err.starts_with("time_regressed"), "{err}");
    let hint = err
        .lines()
        .find(|l| l.starts_with("hint: the ledger's last recorded time is "))
        .unwrap_or_else(|| panic!("no time hint: {err}"));
    // "… is 2026-12-05T21:40:00.123Z (1796… ms); pass --now 1796… or later …"
    let ms: String = hint
        .split("pass --now ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .unwrap()
        .to_string();
    let last: u128 = ms.parse().unwrap();
    assert!(hint.contains("Z ("), "RFC 3339 first: {hint}");
    let v = env.limits_json(&args, 4);
    assert_eq!(v["code"], "time_regressed");
    assert_eq!(v["lastNowMs"], ms.as_str());
    assert!(v["lastNow"].as_str().unwrap().ends_with('Z'), "{v}");
    assert!(v["hints"][0].as_str().unwrap().contains(&ms), "{v}");
    // The named time is accepted …
    let args = reserve("b", &ms);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert!(env.limits(&args, 0).starts_with("ok revision=2"));
    // … and so is an RFC 3339 time a second later.
    let secs = (last / 1000 + 1) as i64;
    let rfc = world::cli::output::rfc3339(secs);
    let args = reserve("c", &rfc);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert!(env.limits(&args, 0).starts_with("ok revision=3"));
    let r = env.report(&rfc);
    assert_eq!(r["nowMs"], (secs as u128 * 1000).to_string());
    assert_eq!(r["now"], rfc.as_str());
    let text = env.limits(&["report", "--now", &rfc], 0);
    assert!(
        text.starts_with(&format!("ledger guide  revision 3  now {rfc}\n")),
        "{text}"
    );
    // A --now that is neither is a usage error naming both forms.
    let err = env.limits(&["report", "--now", "yesterday"], 2);
    assert!(
        err.contains("neither Unix milliseconds") && err.contains("RFC 3339"),
        "{err}"
    );
}

/// Issue 27 §4: `-q` silences a writer's summary (its data stays under `--json`), also for an
/// attended act at the terminal.
#[test]
fn quiet_silences_the_summary_of_every_writer() {
    let env = Env::new();
    let out = env.limits(
        &[
            "-q",
            "init",
            "--config",
            "finite.json",
            "--yes",
            "--now",
            "0",
        ],
        0,
    );
    assert_eq!(out, "");
    let out = env.limits(
        &[
            "-q",
            "reserve",
            "--scope",
            "mission",
            "--attempt",
            "u",
            "--purpose",
            "ordinary",
            "--amount",
            "100",
            "--max-active-ms",
            "5",
            "--now",
            "1",
        ],
        0,
    );
    assert_eq!(out, "");
    env.limits(&["dispatch", "--attempt", "u", "--now", "1"], 0);
    env.limits(&["settle", "--attempt", "u", "--unknown", "--now", "2"], 0);
    let out = attended(
        &env,
        &[
            "-q",
            "limits",
            "reconcile",
            "--attempt",
            "u",
            "--actual",
            "60",
            "--evidence-file",
            "approval.txt",
            "--now",
            "4",
        ],
        "reconcile u\n",
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        (out.stdout.as_slice(), out.stderr.as_slice()),
        (&b""[..], &b""[..])
    );
    let v = env.limits_json(
        &[
            "-q", "stop", "--scope", "mission", "--reason", "done", "--now", "5",
        ],
        0,
    );
    assert_eq!(
        (v["code"].as_str(), v["revision"].as_str()),
        (Some("ok"), Some("6"))
    );
}

/// Issue 27 §2: a `--ledger` that is not a world ledger — a file that is not SQLite, a SQLite
/// file whose `limits_*` tables have another shape — is refused as such (exit 2, code
/// `not_a_ledger`, naming the file), by `limits` and `mission` alike, and left as it was.
#[test]
fn a_file_that_is_not_a_ledger_is_named_as_such() {
    let env = Env::bare();
    std::fs::write(env.path("notes.txt"), "not a database, only text\n").unwrap();
    {
        let c = rusqlite::Connection::open(env.path("shape.db")).unwrap();
        c.execute_batch(
            "CREATE TABLE limits_meta (name TEXT); CREATE TABLE limits_scopes (name TEXT);",
        )
        .unwrap();
    }
    let before = (
        std::fs::read(env.path("notes.txt")).unwrap(),
        std::fs::read(env.path("shape.db")).unwrap(),
    );
    for (file, why) in [
        ("notes.txt", "not a SQLite database"),
        (
            "shape.db",
            "it holds 2 limits_* tables but not the world ledger application_id",
        ),
    ] {
        for args in [
            vec!["limits", "report", "--ledger", file],
            vec![
                "limits",
                "reserve",
                "--ledger",
                file,
                "--scope",
                "wo",
                "--attempt",
                "a",
                "--purpose",
                "ordinary",
                "--amount",
                "1",
                "--max-active-ms",
                "1",
            ],
            vec!["mission", "--ledger", file, "report", "m"],
        ] {
            let out = env.world(&args).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert!(
                err.contains(&format!("{file} is not a world ledger ({why}")),
                "{args:?}: {err}"
            );
            assert!(err.contains("hint: --ledger names a ledger file"), "{err}");
            let mut json = args.clone();
            json.insert(0, "--json");
            let out = env.world(&json).output().unwrap();
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(v["error"]["code"], "not_a_ledger", "{v}");
            assert_eq!(v["error"]["exitCode"], 2, "{v}");
        }
    }
    let after = (
        std::fs::read(env.path("notes.txt")).unwrap(),
        std::fs::read(env.path("shape.db")).unwrap(),
    );
    assert!(after == before, "nothing written");
}
