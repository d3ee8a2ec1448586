//! `world mission …` through the binary (missions.md §5, §6; issue 15 parts 2–4).
//!
//! Every command runs in a new session without a controlling terminal (so attended acts meet
//! the tty fence); the HUMAN acts are driven on a pseudo-terminal that becomes the child's
//! controlling terminal.

use crate::terminal;
use terminal::pty;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use assert_cmd::prelude::*;
use serde_json::{json, Value};

const SEED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/mission/seed");

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let env = Env {
            dir: tempfile::tempdir().unwrap(),
        };
        let o = env.world(&["genesis"]).output().unwrap();
        assert!(o.status.success());
        env
    }
    fn db(&self) -> PathBuf {
        self.dir.path().join("w.db")
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    fn write(&self, name: &str, v: &Value) -> String {
        let p = self.path(name);
        std::fs::write(&p, serde_json::to_vec(v).unwrap()).unwrap();
        p.display().to_string()
    }
    fn base(&self) -> Command {
        let mut c = Command::cargo_bin("world").unwrap();
        c.current_dir(self.dir.path())
            .env("WORLD_DB", self.db())
            .env("USER", "ann")
            .env_remove("WORLD_SESSION")
            .stdin(Stdio::null());
        c
    }
    fn world(&self, args: &[&str]) -> Command {
        let mut c = self.base();
        c.args(args);
        terminal::detach(&mut c);
        c
    }
    /// Run `r` of the created mission `m` started at 10, and grant `g` (agent may write doc
    /// until 10000) with `limit`.
    fn run_with_grant(&self, limit: &str) {
        self.mission(&["start-run", "m", "--run", "r", "--now", "10"], 0);
        self.mission(
            &[
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
                limit,
                "--now",
                "10",
            ],
            0,
        );
    }
    /// `world mission ARGS`, asserting the exit code.
    fn mission_out(&self, args: &[&str], code: i32) -> Output {
        let mut full = vec!["mission"];
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
    /// `world mission ARGS`, asserting the exit code: stdout on success; on a failure the
    /// error on stderr (the one CLI convention: nothing on stdout without --json).
    fn mission(&self, args: &[&str], code: i32) -> String {
        let out = self.mission_out(args, code);
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
    /// `world --json mission ARGS` parsed as one JSON object; for a failure, the `error` member
    /// of the one envelope (its `exitCode` checked).
    fn mission_json(&self, args: &[&str], code: i32) -> Value {
        let mut full = vec!["--json"];
        full.extend_from_slice(args);
        let out = self.mission_out(&full, code);
        let text = String::from_utf8(out.stdout).unwrap();
        let v: Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{e}: {text}"));
        if code == 0 {
            return v;
        }
        assert_eq!(v["error"]["exitCode"], code, "{v}");
        v["error"].clone()
    }
    /// The report at 10, checked against docs/json/mission-report.schema.json.
    fn report(&self) -> Value {
        let r = self.mission_json(&["report", "m", "--now", "10"], 0);
        crate::cli::assert_schema("mission-report", &r);
        r
    }
    /// Every mission row (the "store unchanged" check).
    fn dump(&self) -> Vec<String> {
        let conn = rusqlite::Connection::open(self.db()).unwrap();
        let mut out = Vec::new();
        for t in world::mission::durable::TABLES {
            let Ok(mut stmt) = conn.prepare(&format!("SELECT * FROM {t} ORDER BY 1, 2")) else {
                continue;
            };
            let n = stmt.column_count();
            let rows: Vec<String> = stmt
                .query_map([], |r| {
                    let mut s = t.to_string();
                    for i in 0..n {
                        s.push_str(&format!("|{:?}", r.get_ref(i)?));
                    }
                    Ok(s)
                })
                .unwrap()
                .map(Result::unwrap)
                .collect();
            out.extend(rows);
        }
        let objects: i64 = conn
            .query_row("SELECT count(*) FROM objects", [], |r| r.get(0))
            .unwrap();
        out.push(format!("objects {objects}"));
        out
    }
    fn create_seed(&self) {
        let out = self.mission(
            &[
                "create",
                "--contract",
                &format!("{SEED}/contract.json"),
                "--yes",
                "--now",
                "0",
            ],
            0,
        );
        assert!(out.starts_with("OK mission=m contractRef=sha256:"), "{out}");
    }
    fn verify_ok(&self) {
        let out = self.world(&["verify"]).output().unwrap();
        assert!(
            out.status.success(),
            "verify: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    /// Run on a pty that `typed` is written to.
    fn attended(&self, args: &[&str], typed: &str) -> Output {
        use std::io::Write;
        let (mut master, slave) = pty();
        master.write_all(typed.as_bytes()).unwrap();
        let mut c = self.base();
        c.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
        terminal::with_terminal(&mut c, &slave);
        let out = c.output().unwrap();
        drop(slave);
        drop(master);
        out
    }
}

fn step(n: u8) -> String {
    format!("{SEED}/step{n}.json")
}

#[test]
fn the_seeds_example_byte_for_byte_through_the_cli() {
    let env = Env::new();
    env.create_seed();
    for n in 1..=3 {
        let out = env.mission(&["apply", "m", "--command", &step(n), "--now", "10"], 0);
        assert!(
            out.starts_with(&format!("OK revision={n} seq={n}")),
            "{out}"
        );
    }
    let before = env.dump();
    let out = env.mission(&["apply", "m", "--command", &step(4), "--now", "10"], 4);
    assert_eq!(out.trim(), "BUDGET_EXHAUSTED budget=100 reserved=80 settled=0 requested=30: the mission budget would be exceeded");
    let j = env.mission_json(&["apply", "m", "--command", &step(4), "--now", "10"], 4);
    assert_eq!(
        (
            j["code"].as_str(),
            j["reserved"].as_str(),
            j["requested"].as_str()
        ),
        (Some("BUDGET_EXHAUSTED"), Some("80"), Some("30"))
    );
    assert_eq!(env.dump(), before, "journal, state and outbox unchanged");
    let r = env.report();
    assert_eq!(r["reserved"], json!("80"));
    assert_eq!(r["remaining"], json!("20"));
    assert_eq!(r["outstanding"][0]["attemptId"], json!("a"));
    // The journal holds the seed's commands, canonicalised, byte for byte.
    let conn = rusqlite::Connection::open(env.db()).unwrap();
    let entry: Vec<u8> = conn
        .query_row("SELECT entry FROM mission_journal WHERE seq = 3", [], |r| {
            r.get(0)
        })
        .unwrap();
    let v: Value = serde_json::from_slice(&entry).unwrap();
    let seed: Value = serde_json::from_slice(&std::fs::read(step(3)).unwrap()).unwrap();
    assert_eq!(v["command"], seed);
    let log = env.mission(&["log", "m"], 0);
    assert_eq!(log.lines().count(), 3);
    let list = env.mission_json(&["list"], 0);
    assert_eq!(
        (list["missionId"].as_str(), list["reserved"].as_str()),
        (Some("m"), Some("80"))
    );
    env.verify_ok();
}

#[test]
fn flag_forms_build_exactly_the_commands_apply_parses() {
    let a = Env::new();
    let b = Env::new();
    for env in [&a, &b] {
        env.create_seed();
    }
    for n in 1..=3 {
        a.mission(&["apply", "m", "--command", &step(n), "--now", "10"], 0);
    }
    b.mission(&["start-run", "m", "--run", "r", "--now", "10"], 0);
    b.mission(
        &[
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
            "--not-before",
            "0",
            "--expires-at",
            "10000",
            "--limit",
            "100",
            "--can-delegate",
            "--depth",
            "2",
            "--now",
            "10",
        ],
        0,
    );
    b.mission(
        &[
            "admit",
            "m",
            "--run",
            "r",
            "--operation",
            "o",
            "--attempt",
            "a",
            "--grant",
            "g",
            "--subject",
            "agent",
            "--capability",
            "write",
            "--resource",
            "doc",
            "--amount",
            "80",
            "--payload",
            r#"{"value":1}"#,
            "--preconditions",
            r#"{"revision":1}"#,
            "--authorization-checked-at",
            "10",
            "--now",
            "10",
        ],
        0,
    );
    let entries = |env: &Env| -> Vec<Value> {
        let conn = rusqlite::Connection::open(env.db()).unwrap();
        let mut stmt = conn
            .prepare("SELECT entry FROM mission_journal ORDER BY seq")
            .unwrap();
        stmt.query_map([], |r| r.get::<_, Vec<u8>>(0))
            .unwrap()
            .map(|e| serde_json::from_slice::<Value>(&e.unwrap()).unwrap()["command"].clone())
            .collect()
    };
    assert_eq!(entries(&a), entries(&b));
    assert_eq!(a.report(), b.report());
    // Settlement through the flags.
    b.mission(&["dispatch", "m", "--attempt", "a", "--now", "10"], 0);
    let out = b.mission(
        &[
            "settle",
            "m",
            "--attempt",
            "a",
            "--actual",
            "81",
            "--now",
            "10",
        ],
        4,
    );
    assert!(
        out.starts_with("EXPOSURE_EXCEEDED attemptId=a amount=80 actualCost=81"),
        "{out}"
    );
    let r = b.report();
    assert_eq!(
        (
            r["reserved"].as_str(),
            r["violations"].as_array().map(Vec::len)
        ),
        (Some("80"), Some(1))
    );
    b.mission(
        &[
            "settle",
            "m",
            "--attempt",
            "a",
            "--actual",
            "70",
            "--failed",
            "--now",
            "11",
        ],
        0,
    );
    let r = b.report();
    assert_eq!(
        (
            r["reserved"].as_str(),
            r["settled"].as_str(),
            r["remaining"].as_str()
        ),
        (Some("0"), Some("70"), Some("30"))
    );
    b.verify_ok();
}

/// `--not-before`, `--expires-at` and `--authorization-checked-at` take an RFC 3339 time as
/// `--now` does, and build the very command the milliseconds build (issue 27 §4,
/// DEC-LEDGER3-2); a time that is neither is a usage error naming the flag, nothing written.
#[test]
fn time_flags_take_rfc_3339_or_milliseconds_like_now() {
    let grant = |not_before: &str, expires_at: &str| -> Vec<String> {
        [
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
            "--not-before",
            not_before,
            "--expires-at",
            expires_at,
            "--limit",
            "100",
            "--now",
            "10",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let admit = |checked: &str| -> Vec<String> {
        [
            "admit",
            "m",
            "--run",
            "r",
            "--operation",
            "o",
            "--attempt",
            "a",
            "--grant",
            "g",
            "--subject",
            "agent",
            "--capability",
            "write",
            "--resource",
            "doc",
            "--amount",
            "80",
            "--authorization-checked-at",
            checked,
            "--now",
            "10",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let run = |env: &Env, args: Vec<String>, code: i32| -> String {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        env.mission(&refs, code)
    };
    let journal = |env: &Env| -> Vec<Vec<u8>> {
        let conn = rusqlite::Connection::open(env.db()).unwrap();
        let mut stmt = conn
            .prepare("SELECT entry FROM mission_journal ORDER BY seq")
            .unwrap();
        stmt.query_map([], |r| r.get::<_, Vec<u8>>(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let (ms, rfc) = (Env::new(), Env::new());
    for env in [&ms, &rfc] {
        env.create_seed();
        env.mission(&["start-run", "m", "--run", "r", "--now", "10"], 0);
    }
    run(&ms, grant("5", "10000"), 0);
    run(
        &rfc,
        grant("1970-01-01T00:00:00.005Z", "1970-01-01T01:00:10+01:00"),
        0,
    );
    // A bad time: exit 2 naming the flag, before anything is written.
    let before = rfc.dump();
    for (args, flag) in [
        (grant("yesterday", "10000"), "--not-before"),
        (grant("0", "1970-13-01T00:00:00Z"), "--expires-at"),
        (admit("10 ms"), "--authorization-checked-at"),
    ] {
        let err = run(&rfc, args, 2);
        assert!(err.contains(flag) && err.contains("RFC 3339"), "{err}");
    }
    assert_eq!(rfc.dump(), before);
    run(&ms, admit("10"), 0);
    run(&rfc, admit("1970-01-01T00:00:00.010Z"), 0);
    // The journals are equal byte for byte: the same commands, the same chain.
    assert_eq!(journal(&ms), journal(&rfc));
    rfc.verify_ok();
}

#[test]
fn bad_input_is_refused_with_the_store_unchanged() {
    let env = Env::new();
    env.create_seed();
    env.run_with_grant("100");
    let before = env.dump();
    for bad in ["-1", "01", "1.5", "340282366920938463463374607431768211456"] {
        let j = env.mission_json(
            &[
                "admit",
                "m",
                "--run",
                "r",
                "--operation",
                "o",
                "--attempt",
                "a",
                "--grant",
                "g",
                "--subject",
                "agent",
                "--capability",
                "write",
                "--resource",
                "doc",
                "--amount",
                bad,
                "--now",
                "10",
            ],
            4,
        );
        assert_eq!(
            (j["code"].as_str(), j["member"].as_str()),
            (Some("COMMAND_INVALID"), Some("amount")),
            "{bad}"
        );
    }
    let p = env.write(
        "bad.json",
        &json!({"type": "startRun", "runId": "r2", "colour": "red"}),
    );
    let j = env.mission_json(&["apply", "m", "--command", &p, "--now", "10"], 4);
    assert_eq!(j["member"], json!("colour"));
    let p = env.write("lines.jsonl", &json!({"type": "startRun", "runId": "r2"}));
    std::fs::write(
        &p,
        format!(
            "{}\n{{\"type\":\"startRun\"}}\n",
            std::fs::read_to_string(&p).unwrap()
        ),
    )
    .unwrap();
    let j = env.mission_json(&["apply", "m", "--commands", &p, "--now", "10"], 4);
    assert_eq!(
        (j["line"].as_str(), j["member"].as_str()),
        (Some("2"), Some("runId")),
        "a bad line refuses the whole file"
    );
    let mut c =
        serde_json::from_slice::<Value>(&std::fs::read(format!("{SEED}/contract.json")).unwrap())
            .unwrap();
    c["budget"] = json!("01");
    let p = env.write("c.json", &c);
    assert_eq!(
        env.mission_json(&["create", "--contract", &p, "--yes"], 4)["code"],
        json!("CONTRACT_INVALID")
    );
    // Usage errors: --now in the future, --now out of grammar.
    env.mission(
        &[
            "start-run",
            "m",
            "--run",
            "r2",
            "--now",
            "99999999999999999",
        ],
        2,
    );
    env.mission(&["start-run", "m", "--run", "r2", "--now", "-5"], 2);
    env.mission(&["start-run", "m", "--run", "r2", "--now", "9"], 4); // TIME_REGRESSED
    env.mission(&["start-run", "nope", "--run", "r2", "--now", "10"], 4); // MISSION_NOT_FOUND
    env.mission(
        &[
            "create",
            "--contract",
            &format!("{SEED}/contract.json"),
            "--yes",
        ],
        4,
    ); // MISSION_EXISTS
    assert_eq!(env.dump(), before);
    // Reads of a missing mission fail (exit 1).
    env.mission(&["report", "nope"], 1);
}

#[test]
fn a_jsonl_file_applies_in_order_and_stops_at_the_first_rejection() {
    let env = Env::new();
    env.create_seed();
    let lines: Vec<String> = (1..=4)
        .map(|n| std::fs::read_to_string(step(n)).unwrap())
        .collect();
    let p = env.path("seed.jsonl");
    std::fs::write(&p, lines.join("\n")).unwrap();
    let out = env.mission_out(
        &[
            "apply",
            "m",
            "--commands",
            p.to_str().unwrap(),
            "--now",
            "10",
        ],
        4,
    );
    // The three applied commands' summaries on stdout; the rejection on stderr.
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stdout.lines().count(), 3, "{stdout}");
    assert!(stdout.lines().all(|l| l.starts_with("OK ")), "{stdout}");
    assert!(stderr.starts_with("BUDGET_EXHAUSTED"), "{stderr}");
    assert!(
        stderr.contains("hint: stopped at command 4 of 4; the 3 before it were applied"),
        "{stderr}"
    );
    assert_eq!(env.report()["reserved"], json!("80"));
}

#[test]
fn attended_acts_meet_the_fence_and_a_human_types_the_phrase() {
    let env = Env::new();
    let contract = format!("{SEED}/contract.json");
    let out = env
        .world(&["mission", "create", "--contract", &contract])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("STOP fence=tty reason=no-controlling-terminal"));
    assert_eq!(env.mission(&["--json", "list"], 0), "", "nothing created");
    // Typed wrong: STOP, nothing written.
    let out = env.attended(
        &["mission", "create", "--contract", &contract, "--now", "0"],
        "create m 000000000000\n",
    );
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c = world::mission::Contract::parse(&std::fs::read(&contract).unwrap()).unwrap();
    let hex = c.contract_ref().to_string();
    let out = env.attended(
        &["mission", "create", "--contract", &contract, "--now", "0"],
        &format!("create m {}\n", &hex[7..19]),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list = env.mission_json(&["list"], 0);
    assert_eq!(list["unattended"], json!(false));
    for n in 1..=3 {
        env.mission(&["apply", "m", "--command", &step(n), "--now", "10"], 0);
    }
    env.mission(&["dispatch", "m", "--attempt", "a", "--now", "10"], 0);
    env.mission(
        &["settle", "m", "--attempt", "a", "--unknown", "--now", "10"],
        0,
    );
    assert_eq!(env.report()["unknown"][0]["attemptId"], json!("a"));
    std::fs::write(env.path("invoice.txt"), "provider invoice 17: 85 units\n").unwrap();
    let rec = [
        "mission",
        "reconcile",
        "m",
        "--attempt",
        "a",
        "--actual",
        "85",
        "--evidence-file",
        "invoice.txt",
        "--now",
        "11",
    ];
    // No terminal: STOP, nothing written.
    let before = env.dump();
    let out = env.world(&rec).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(env.dump(), before);
    // A dry run refuses what the mission would refuse, without asking.
    let out = env.attended(
        &[
            "mission",
            "reconcile",
            "m",
            "--attempt",
            "zz",
            "--actual",
            "1",
            "--evidence-file",
            "invoice.txt",
            "--now",
            "11",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("ATTEMPT_NOT_FOUND"));
    assert!(out.stdout.is_empty());
    let out = env.attended(&rec, "reconcile m a\n");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let r = env.report();
    assert_eq!(
        (r["reserved"].as_str(), r["settled"].as_str()),
        (Some("0"), Some("85"))
    );
    assert_eq!(
        r["violations"][0]["command"],
        json!("reconcile"),
        "above the admitted 80"
    );
    assert_eq!(r["violations"][0]["actorId"], json!("human:ann"));
    // approve is HUMAN-only too, and its evidence must resolve in the store.
    let bogus = format!("sha256:{}", "ab".repeat(32));
    let out = env.attended(
        &[
            "mission",
            "approve",
            "m",
            "--operation",
            "o9",
            "--evidence",
            &bogus,
            "--now",
            "11",
        ],
        "approve m o9\n",
    );
    assert_eq!(out.status.code(), Some(1));
    let out = env.attended(
        &[
            "mission",
            "approve",
            "m",
            "--operation",
            "o9",
            "--evidence-file",
            "invoice.txt",
            "--now",
            "11",
        ],
        "approve m o9\n",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    env.verify_ok();
}

#[test]
fn eight_processes_admitting_against_one_budget_never_admit_past_it() {
    let env = Env::new();
    env.create_seed();
    env.run_with_grant("100");
    let children: Vec<_> = (0..8)
        .map(|i| {
            let a = format!("a{i}");
            let o = format!("o{i}");
            env.world(&[
                "--wait-lock",
                "60",
                "--json",
                "mission",
                "admit",
                "m",
                "--run",
                "r",
                "--operation",
                &o,
                "--attempt",
                &a,
                "--grant",
                "g",
                "--subject",
                "agent",
                "--capability",
                "write",
                "--resource",
                "doc",
                "--amount",
                "30",
                "--authorization-checked-at",
                "10",
                "--now",
                "10",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    let mut admitted = 0;
    let mut refused = 0;
    for c in children {
        let out = c.wait_with_output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        match (
            out.status.code(),
            v["code"].as_str().or(v["error"]["code"].as_str()),
        ) {
            (Some(0), Some("OK")) => admitted += 1,
            (Some(4), Some("BUDGET_EXHAUSTED")) => refused += 1,
            other => panic!("{other:?}: {}", String::from_utf8_lossy(&out.stderr)),
        }
    }
    assert_eq!((admitted, refused), (3, 5), "100 / 30 = 3 admissions");
    let r = env.report();
    assert_eq!(r["reserved"], json!("90"));
    env.verify_ok();
}

#[test]
fn kill_9_during_admit_and_settle_leaves_journal_state_and_outbox_consistent() {
    let env = Env::new();
    let mut c =
        serde_json::from_slice::<Value>(&std::fs::read(format!("{SEED}/contract.json")).unwrap())
            .unwrap();
    c["budget"] = json!("100000000");
    c["maxAttempts"] = json!("100000");
    env.write("big.json", &c);
    env.mission(
        &["create", "--contract", "big.json", "--yes", "--now", "0"],
        0,
    );
    env.run_with_grant("100000000");
    let admit = |i: usize| {
        json!({"type": "admit", "runId": "r", "operationId": format!("o{i}"), "attemptId": format!("a{i}"), "grantId": "g",
            "subject": "agent", "action": {"capability": "write", "resource": "doc", "payload": {}, "preconditions": {}},
            "amount": "10", "authorizationCheckedAt": "10", "policy": "ALLOW", "mandatoryChecksOk": true})
    };
    let mut next = 0usize;
    let mut seen_partial = false;
    for round in 0..6u64 {
        let mut lines = Vec::new();
        for i in next..next + 150 {
            lines.push(admit(i).to_string());
            lines.push(json!({"type": "dispatch", "attemptId": format!("a{i}")}).to_string());
            lines.push(json!({"type": "settle", "attemptId": format!("a{i}"), "outcome": "SUCCEEDED", "actualCost": "7"}).to_string());
        }
        next += 150;
        std::fs::write(env.path("batch.jsonl"), lines.join("\n")).unwrap();
        let mut child = env
            .world(&[
                "mission",
                "apply",
                "m",
                "--commands",
                "batch.jsonl",
                "--now",
                "10",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(150 + 90 * round));
        let _ = child.kill();
        let _ = child.wait();
        env.verify_ok();
        let r = env.report();
        // No DISPATCHED attempt was refunded: every outstanding attempt still holds its 10.
        let outstanding = r["outstanding"].as_array().unwrap().len() as u64;
        let reserved: u64 = r["reserved"].as_str().unwrap().parse().unwrap();
        assert_eq!(reserved, outstanding * 10);
        seen_partial |= outstanding > 0 || r["attempts"]["settled"].as_u64().unwrap() % 150 != 0;
        // Settle whatever the kill left dispatched, so the next round starts clean.
        for a in r["outstanding"].as_array().unwrap() {
            let id = a["attemptId"].as_str().unwrap();
            if a["status"] == "ADMITTED" {
                env.mission(&["dispatch", "m", "--attempt", id, "--now", "10"], 0);
            }
            env.mission(
                &[
                    "settle",
                    "m",
                    "--attempt",
                    id,
                    "--actual",
                    "7",
                    "--now",
                    "10",
                ],
                0,
            );
        }
        env.verify_ok();
    }
    let _ = seen_partial; // timing-dependent; the consistency checks above are what matter
}

/// A store missing one mission table is damaged, not new (issue 13 §3): `verify` names it as a
/// finding (exit 3, in `--json`), and every mission writer refuses the store instead of
/// re-creating the table empty (which would lose every grant).
#[test]
fn a_missing_mission_table_is_a_finding_and_writers_refuse() {
    let env = Env::new();
    env.create_seed();
    env.mission(&["apply", "m", "--command", &step(1), "--now", "10"], 0);
    rusqlite::Connection::open(env.db())
        .unwrap()
        .execute_batch("DROP TABLE mission_grants")
        .unwrap();
    let out = env.world(&["verify", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["failures"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["category"] == "mission_schema"),
        "{v}"
    );
    let before = env.dump();
    let other = env.write(
        "other.json",
        &serde_json::from_str::<Value>(
            &std::fs::read_to_string(format!("{SEED}/contract.json"))
                .unwrap()
                .replace("\"m\"", "\"m2\""),
        )
        .unwrap(),
    );
    for args in [
        vec![
            "create",
            "--contract",
            other.as_str(),
            "--yes",
            "--now",
            "20",
        ],
        vec!["apply", "m", "--command", &step(2), "--now", "20"],
    ] {
        let mut full = vec!["mission"];
        full.extend_from_slice(&args);
        let out = env.world(&full).output().unwrap();
        assert_ne!(out.status.code(), Some(0), "{args:?} was accepted");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("mission_grants"),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(env.dump(), before, "nothing written, nothing re-created");
}

/// `complete-run --criterion NAME=REF` refuses a ref that names no stored object, as
/// `approve` and `reconcile` refuse such an `--evidence`; nothing is written.
#[test]
fn complete_run_criteria_must_name_stored_evidence() {
    let env = Env::new();
    env.create_seed();
    env.mission(&["apply", "m", "--command", &step(1), "--now", "10"], 0);
    let before = env.dump();
    let missing = format!("sha256:{}", "0".repeat(64));
    let out = env
        .world(&[
            "mission",
            "complete-run",
            "m",
            "--run",
            "r",
            "--criterion",
            &format!("review={missing}"),
            "--now",
            "11",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("names no object"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(env.dump(), before);
}

/// A mission created with `--yes` is recorded unattended; relabelling it attended (or editing
/// who created it, or when) is a `mission_chain` finding of `world verify` (issue 13 §3,
/// DEC-MIS-13), and `mission list` shows the recorded fact until then.
#[test]
fn relabelling_a_missions_creation_facts_is_a_verify_finding() {
    for edit in [
        "UPDATE mission_missions SET attended = 1",
        "UPDATE mission_missions SET created_by = replace(created_by, 'host:ann', 'human:ann')",
        "UPDATE mission_missions SET created_at_ms = '1'",
    ] {
        let env = Env::new();
        env.create_seed();
        env.mission(&["apply", "m", "--command", &step(1), "--now", "10"], 0);
        env.verify_ok();
        let list: Value =
            serde_json::from_str(env.mission(&["list", "--json"], 0).lines().next().unwrap())
                .unwrap();
        assert_eq!(list["unattended"], true, "{list}");
        rusqlite::Connection::open(env.db())
            .unwrap()
            .execute_batch(edit)
            .unwrap();
        let out = env.world(&["verify", "--json"]).output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{edit}: {out:?}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(
            v["failures"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["category"] == "mission_chain"),
            "{edit}: {v}"
        );
    }
}

/// F1 (DEC-MIS-17): a command without `--now` takes `max(system clock, the mission's lastNow)`
/// inside its transaction — an operator's `--now` an hour ahead does not freeze the mission for
/// an hour (an admit's default authorization check moves with it); a given `--now` is still
/// checked as given.
#[test]
fn commands_without_now_never_meet_time_regressed() {
    let env = Env::new();
    let mut c: Value =
        serde_json::from_slice(&std::fs::read(format!("{SEED}/contract.json")).unwrap()).unwrap();
    c["deadline"] = json!("4102444800000");
    c["maxAuthorizationAgeMs"] = json!("60000");
    let contract = env.write("far.json", &c);
    env.mission(&["create", "--contract", &contract, "--yes"], 0);
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let ahead = (wall + 3_600_000).to_string();
    env.mission(&["start-run", "m", "--run", "r", "--now", &ahead], 0);
    let far = "4102444800000";
    env.mission(
        &[
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
            far,
            "--limit",
            "10",
        ],
        0,
    );
    env.mission(
        &[
            "admit",
            "m",
            "--run",
            "r",
            "--operation",
            "o",
            "--attempt",
            "a",
            "--grant",
            "g",
            "--subject",
            "agent",
            "--capability",
            "write",
            "--resource",
            "doc",
            "--amount",
            "1",
        ],
        0,
    );
    env.mission(&["dispatch", "m", "--attempt", "a"], 0);
    env.mission(&["settle", "m", "--attempt", "a", "--actual", "1"], 0);
    let r = env.mission_json(&["report", "m"], 0);
    assert_eq!(r["settled"], "1", "{r}");
    // Given, behind lastNow: refused, as before.
    env.mission(
        &["start-run", "m", "--run", "r2", "--now", &wall.to_string()],
        4,
    );
    env.mission(&["verify"], 0);
}

/// Issue 27 §4: a mission rejection goes to stderr only, `-q` silences summaries, `--json`
/// gives the one envelope, `TIME_REGRESSED` names the mission's time and a `--now` it accepts,
/// and `--now` takes RFC 3339.
#[test]
fn the_one_cli_convention_for_missions() {
    let env = Env::new();
    env.create_seed();
    let out = env.mission(&["-q", "start-run", "m", "--run", "r", "--now", "10"], 0);
    assert_eq!(out, "", "-q drops the OK summary");
    // The clock went to 10; 5 is earlier.
    let err = env.mission(&["start-run", "m", "--run", "r2", "--now", "5"], 4);
    assert!(err.starts_with("TIME_REGRESSED now=5 lastNow=10"), "{err}");
    assert!(
        err.contains("hint: the ledger's last recorded time is 1970-01-01T00:00:00.010Z (10 ms); pass --now 10 or later"),
        "{err}"
    );
    let e = env.mission_json(&["start-run", "m", "--run", "r2", "--now", "5"], 4);
    assert_eq!(
        (e["code"].as_str(), e["lastNow"].as_str(), e["now"].as_str()),
        (Some("TIME_REGRESSED"), Some("10"), Some("5")),
        "{e}"
    );
    // RFC 3339 is the same clock.
    let out = env.mission(
        &[
            "start-run",
            "m",
            "--run",
            "r2",
            "--now",
            "1970-01-01T00:00:00.020Z",
        ],
        0,
    );
    assert!(out.starts_with("OK revision="), "{out}");
    let r = env.mission_json(&["report", "m", "--now", "1970-01-01T00:00:00.020Z"], 0);
    assert_eq!(
        (r["now"].as_str(), r["nowUtc"].as_str()),
        (Some("20"), Some("1970-01-01T00:00:00.020Z"))
    );
    assert_eq!(r["deadlineUtc"], "1970-01-01T00:00:10Z");
    let text = env.mission(&["report", "m", "--now", "20"], 0);
    assert!(text.contains("deadline 1970-01-01T00:00:10Z"), "{text}");
    let log = env.mission(&["log", "m"], 0);
    assert!(log.contains("now=1970-01-01T00:00:00.020Z"), "{log}");
}
