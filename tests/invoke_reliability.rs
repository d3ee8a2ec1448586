//! Reliability of `world invoke` (issues 4 and 5): many processes on one budget, and kill -9
//! at the step boundaries of an effectful call. After each kill `world verify` passes, the
//! receipts answer truthfully and a resend of the same invocation id never runs a handler again
//! (R15, exit 5).
//!
//! Kill points (DEC-INVOKE-TEST-5):
//! - during the plan phase (CLI; the plan loops): nothing durable;
//! - after the intent, inside the handler (library path in a child process: a `Model.Infer`
//!   backend that blocks; the CLI has no slow in-process handler to aim at);
//! - after the handler, during the finish phase (CLI; the finish loops);
//! - before the commit (library path in a child process: the finish phase returns while another
//!   connection holds the SQLite write lock, so the coordinator blocks at its commit
//!   transaction and is killed there).
//!
//! The window between the started marker and the intent has no slow step and no external call,
//! so no kill can be aimed at it from outside.

use crate::invoke_support;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use invoke_support::{assert_exit, stderr, AfterRunPins, Env};
use serde_json::{json, Value};

const CHILD_ENV: &str = "WORLD_INVOKE_TEST_CHILD";

// ---------------------------------------------------------------- concurrency

#[test]
fn four_processes_share_one_budget_exactly() {
    const BUDGET: usize = 7;
    const PROCS: usize = 4;
    const CALLS: usize = 8;
    let env = Env::new();
    let tok = env.mint("ep1", &[&format!("Workspace.Read=worktree:{BUDGET}")]);
    std::fs::write(env.ws.join("ep1/x"), "x\n").expect("write");
    let workers: Vec<_> = (0..PROCS)
        .map(|p| {
            let db = env.db.clone();
            let tok = tok.clone();
            std::thread::spawn(move || {
                let mut codes = Vec::new();
                for c in 0..CALLS {
                    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("world"))
                        .current_dir(invoke_support::repo())
                        .env("WORLD_DB", &db)
                        .env_remove("WORLD_SESSION")
                        .args(["--wait-lock", "30", "invoke", "probe", "--session"])
                        .arg(&tok)
                        .args(["--invocation-id", &format!("p{p}c{c}"), "--args"])
                        .arg(r#"{"case":"effect","payload":{"op":"read","path":"x"}}"#)
                        .output()
                        .expect("run");
                    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
                    let e = &v["world"]["effects"][0];
                    codes.push((
                        out.status.code(),
                        e["status"].as_str().unwrap_or_default().to_string(),
                        e["record"].as_str().unwrap_or_default().to_string(),
                    ));
                }
                codes
            })
        })
        .collect();
    let calls: Vec<(Option<i32>, String, String)> = workers
        .into_iter()
        .flat_map(|w| w.join().expect("worker"))
        .collect();
    let total = PROCS * CALLS;
    let ok = calls
        .iter()
        .filter(|c| c.0 == Some(0) && c.1 == "ok")
        .count();
    let denied = calls
        .iter()
        .filter(|c| c.0 == Some(8) && c.1 == "denied")
        .count();
    assert_eq!((ok, denied), (BUDGET, total - BUDGET), "{calls:?}");
    // Every call names its record, and every named record resolves (records are objects:
    // identical denials in the same second share one content-addressed record).
    for (_, _, rec) in &calls {
        let out = env.run(&["effects", "show", rec]);
        assert_exit(&out, 0);
    }
    // Spend recomputed from the journal equals the budget; every call left one record.
    let spend = world::broker::spend(&env.conn(), "ep1").expect("spend");
    assert_eq!(
        spend.get(&("Workspace.Read".to_string(), "worktree".to_string())),
        Some(&(BUDGET as i64))
    );
    let records = env.effects(&[]);
    let allowed: Vec<&Value> = records
        .iter()
        .filter(|r| r["allowed"] == json!(true))
        .collect();
    assert_eq!(allowed.len(), BUDGET);
    let mut afters: Vec<i64> = allowed
        .iter()
        .map(|r| r["budgetAfter"].as_i64().unwrap_or(-1))
        .collect();
    afters.sort_unstable();
    assert_eq!(
        afters,
        (0..BUDGET as i64).collect::<Vec<_>>(),
        "each unit spent once"
    );
    let denied_records = env.effects(&["--denied"]);
    assert!(!denied_records.is_empty());
    assert!(denied_records
        .iter()
        .all(|r| r["denial"] == "denied:budget"));
    // Every call committed exactly one entry (genesis is entry 0).
    assert_eq!(env.ok(&["log", "--json"]).lines().count(), total + 1);
    env.verify_ok();
}

// ---------------------------------------------------------------- kill -9

fn journal_has(env: &Env, id: &str, kind: &str) -> bool {
    env.conn()
        .query_row(
            "SELECT count(*) FROM journal WHERE invocation_id = ?1 AND kind = ?2",
            [id, kind],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n > 0)
        .unwrap_or(false)
}

/// Wait until `cond` holds (at most 15 s), then SIGKILL the child and reap it.
fn kill_when(child: &mut Child, mut cond: impl FnMut() -> bool) {
    let t = Instant::now();
    while !cond() {
        assert!(
            child.try_wait().expect("try_wait").is_none(),
            "the child ended before the kill point"
        );
        assert!(
            t.elapsed() < Duration::from_secs(15),
            "kill point never reached"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(100));
    child.kill().expect("kill -9");
    let status = child.wait().expect("wait");
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
}

fn spawn_invoke(env: &Env, tok: &Path, id: &str, args: &str, task: &str) -> Child {
    env.std_cmd(&[
        "invoke",
        id,
        "--session",
        tok.to_str().unwrap_or_default(),
        "--args",
        args,
        "--invocation-id",
        task,
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .expect("spawn world invoke")
}

/// After a kill past the intent: verify passes, the resend is R15 and runs nothing.
#[track_caller]
fn resend_is_refused(env: &Env, tok: &Path, id: &str, args: &str, task: &str) {
    env.verify_ok();
    let intents = env.intents("effect:ep1:");
    let before = env.fingerprint();
    let out = env.invoke(tok, id, args, &["--invocation-id", task]);
    assert_exit(&out, 5);
    assert!(
        stderr(&out).contains("invocation was not committed; send a new task id"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        env.intents("effect:ep1:"),
        intents,
        "no handler may run twice"
    );
    assert_eq!(env.fingerprint(), before, "a refused resend writes nothing");
}

#[test]
fn kill_during_the_plan_leaves_nothing() {
    let env = Env::new();
    let tok = env.mint("ep1", &["Workspace.Read=worktree:5"]);
    let before = env.fingerprint();
    let args = r#"{"case":"plan-spin"}"#;
    let mut child = spawn_invoke(&env, &tok, "probe", args, "k1");
    let started = Instant::now();
    kill_when(&mut child, || {
        started.elapsed() > Duration::from_millis(400)
    });
    assert_eq!(env.fingerprint(), before);
    env.verify_ok();
    assert_eq!(
        env.receipt("cli:ep1:k1"),
        (
            json!({"invocationId":"cli:ep1:k1","state":"not-started"}),
            Some(1)
        )
    );
    assert!(env.effects(&["--pending"]).is_empty());
}

#[test]
fn kill_during_the_finish_phase_after_the_handler() {
    let env = Env::new();
    let tok = env.mint("ep1", &["Workspace.Read=worktree:5"]);
    std::fs::write(env.ws.join("ep1/x"), "x\n").expect("write");
    let args =
        r#"{"case":"effect","finish":true,"finishMode":"spin","payload":{"op":"read","path":"x"}}"#;
    let log = env.ok(&["log", "--json"]);
    let mut child = spawn_invoke(&env, &tok, "probe", args, "k3");
    kill_when(&mut child, || journal_has(&env, "effect:ep1:0", "outcome"));
    assert_eq!(env.ok(&["log", "--json"]), log, "nothing committed");
    let (r, code) = env.receipt("effect:ep1:0");
    assert_eq!((r["state"].clone(), code), (json!("resolved"), Some(0)));
    assert_eq!(env.receipt("cli:ep1:k3").0["state"], "indeterminate");
    assert!(env.effects(&["--pending"]).is_empty());
    // Issue 29: the effect ran, its record is durable, no entry holds it: effects-unrecorded.
    let records = env.effects(&[]);
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["outcome"], "effects-unrecorded", "{records:?}");
    resend_is_refused(&env, &tok, "probe", args, "k3");
    // Issue 13 §3: with the started marker deleted, the intent still counts as started: the
    // resend is refused (exit 3) and no handler runs again; verify names the removal.
    rusqlite::Connection::open(&env.db)
        .expect("open")
        .execute(
            "DELETE FROM objects WHERE semantic_id = 'world/invocation-started/v1'",
            [],
        )
        .expect("delete the marker");
    let intents = env.intents("effect:ep1:");
    let out = env.invoke(&tok, "probe", args, &["--invocation-id", "k3"]);
    assert_exit(&out, 3);
    assert!(
        stderr(&out).contains("no started marker covers"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        env.intents("effect:ep1:"),
        intents,
        "no handler may run twice"
    );
    let v = env.run(&["verify", "--json"]);
    assert_exit(&v, 3);
    assert!(String::from_utf8_lossy(&v.stdout).contains("marker_missing"));
}

/// A model backend that blocks (the child is killed while it waits).
struct Blocking;

impl world::broker::handlers::model::ModelBackend for Blocking {
    fn infer(
        &self,
        _scope: &str,
        _request: &Value,
        _deadline: Instant,
    ) -> Result<Value, world::broker::handlers::model::ModelError> {
        std::thread::sleep(Duration::from_secs(30));
        Ok(json!({"ok":true}))
    }
}

/// Not a test on its own: the child process of the library-path kill tests. It runs one
/// invocation described by `WORLD_INVOKE_TEST_CHILD` and is killed by its parent (or itself).
#[test]
#[ignore = "child process of the kill tests; does nothing without WORLD_INVOKE_TEST_CHILD"]
fn child_invoke() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let spec: Value = serde_json::from_str(&spec).expect("child spec");
    let s = |k: &str| spec[k].as_str().unwrap_or_default().to_string();
    let db = PathBuf::from(s("db"));
    // In `hold` mode the finish phase returns only after another connection took the SQLite
    // write lock, and that thread kills the process 300 ms later — while the coordinator
    // waits at its commit transaction.
    let held_db = db.clone();
    let holding = AfterRunPins(Arc::new(move |args: &[u8]| {
        let finish = String::from_utf8_lossy(args).contains(r#"\"phase\":\"finish\""#);
        if finish {
            let (tx, rx) = std::sync::mpsc::channel();
            let db = held_db.clone();
            std::thread::spawn(move || {
                let mut conn = rusqlite::Connection::open(db).expect("open");
                let _t = conn
                    .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                    .expect("take the write lock");
                let _ = tx.send(());
                std::thread::sleep(Duration::from_millis(300));
                // SAFETY: kill(2) on our own pid.
                unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
            });
            let _ = rx.recv();
        }
    }));
    let pins = world::transitions::pins::StorePins::for_db(&db);
    let host = world::ops::invoke::Host {
        interpreters: if s("mode") == "hold" { &holding } else { &pins },
        workspace_root: None,
        tool: None,
        run_caps: Default::default(),
        examples_dir: None,
        services: world::broker::handlers::Services {
            model: Some(Arc::new(Blocking)),
            limits_ledger: spec["ledger"].as_str().map(str::to_string),
            ..Default::default()
        },
        exec: None,
        observer: None,
        unattested: Default::default(),
    };
    let call = world::ops::invoke::Call {
        surface: world::ops::invoke::Surface::Cli,
        token: std::fs::read_to_string(s("token"))
            .expect("token")
            .trim()
            .to_string(),
        transition: s("transition"),
        args: serde_json::from_str(&s("args")).expect("args"),
        task: Some(s("task")),
        clock: world::clock::Clock::System,
    };
    let mut store =
        world::store::Store::open_write(&db, Default::default()).expect("open for writing");
    let r = world::ops::invoke::invoke(&mut store, &call, &host);
    panic!("the child must be killed before it returns: {r:?}");
}

fn spawn_child(
    env: &Env,
    tok: &Path,
    transition: &str,
    args: &str,
    task: &str,
    mode: &str,
) -> Child {
    spawn_child_on(env, tok, transition, args, task, mode, None)
}

/// [`spawn_child`] with `--ledger` (a standalone ledger) when `ledger` is given.
fn spawn_child_on(
    env: &Env,
    tok: &Path,
    transition: &str,
    args: &str,
    task: &str,
    mode: &str,
    ledger: Option<&str>,
) -> Child {
    let spec = json!({
        "db": env.db, "token": tok, "transition": transition, "args": args, "task": task, "mode": mode,
        "ledger": ledger,
    });
    crate::common::child_test(module_path!(), "child_invoke")
        .env(CHILD_ENV, spec.to_string())
        .current_dir(invoke_support::repo())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn child")
}

#[test]
fn kill_inside_the_handler_after_the_intent_is_indeterminate_and_never_retried() {
    let env = Env::new();
    let tok = env.mint("ep1", &["Model.Infer=model:5"]);
    let args =
        r#"{"case":"effect","effect":"Model.Infer","scope":"model","payload":{"prompt":"hi"}}"#;
    let log = env.ok(&["log", "--json"]);
    let mut child = spawn_child(&env, &tok, "infer", args, "k2", "block");
    kill_when(&mut child, || journal_has(&env, "effect:ep1:0", "intent"));
    assert_eq!(env.ok(&["log", "--json"]), log, "nothing committed");
    // The receipt is indeterminate (exit 5) and listed as pending; the unit stays spent.
    let (r, code) = env.receipt("effect:ep1:0");
    assert_eq!(
        (r["state"].clone(), code),
        (json!("indeterminate"), Some(5))
    );
    let pending = env.effects(&["--pending"]);
    assert_eq!(pending.len(), 1, "{pending:?}");
    // Issue 29: the one vocabulary names it `indeterminate`, and status lists it.
    assert_eq!(pending[0]["outcome"], "indeterminate", "{pending:?}");
    let st: Value = serde_json::from_str(&env.ok(&["status", "--json"])).expect("status");
    assert_eq!(st["indeterminate"], json!(["effect:ep1:0"]), "{st}");
    assert!(
        pending[0].to_string().contains("effect:ep1:0"),
        "{pending:?}"
    );
    let spend = world::broker::spend(&env.conn(), "ep1").expect("spend");
    assert_eq!(
        spend.get(&("Model.Infer".to_string(), "model".to_string())),
        Some(&1)
    );
    assert!(
        env.effects(&[]).is_empty(),
        "no record for an indeterminate effect"
    );
    resend_is_refused(&env, &tok, "infer", args, "k2");
    // Still indeterminate afterwards: nothing retried or resolved it.
    assert_eq!(env.receipt("effect:ep1:0").0["state"], "indeterminate");
}

#[test]
fn kill_before_the_commit_after_finish() {
    let env = Env::new();
    let tok = env.mint("ep1", &["Workspace.Read=worktree:5"]);
    std::fs::write(env.ws.join("ep1/x"), "x\n").expect("write");
    let args = r#"{"case":"effect","finish":true,"payload":{"op":"read","path":"x"}}"#;
    let log = env.ok(&["log", "--json"]);
    let mut child = spawn_child(&env, &tok, "probe", args, "k4", "hold");
    let status = child.wait().expect("wait");
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
    assert_eq!(env.ok(&["log", "--json"]), log, "nothing committed");
    assert_eq!(env.receipt("effect:ep1:0").0["state"], "resolved");
    assert_eq!(env.receipt("cli:ep1:k4").0["state"], "indeterminate");
    assert!(env.effects(&["--pending"]).is_empty());
    resend_is_refused(&env, &tok, "probe", args, "k4");
}

/// A mission-paired effect killed inside its handler (issue 15 §4, missions.md §7): the attempt
/// was admitted in the intent's transaction and dispatched before the handler ran, so after
/// the kill it stays DISPATCHED with its exposure reserved. Neither the crash nor a resend
/// refunds it; the journal, the materialised state and the outbox still fold clean (`verify`).
#[test]
fn kill_inside_a_mission_paired_handler_keeps_the_attempt_dispatched() {
    let env = Env::new();
    env.create_mission(None, "Model.Infer", "model", "5", "1");
    let tok = env.mint_for_mission("ep1", &["Model.Infer=model:5"], None, &[]);
    let report = || -> Value {
        serde_json::from_str(&env.ok(&["--json", "mission", "report", "m"])).expect("report")
    };
    let args =
        r#"{"case":"effect","effect":"Model.Infer","scope":"model","payload":{"prompt":"hi"}}"#;
    let mut child = spawn_child(&env, &tok, "infer", args, "k5", "block");
    kill_when(&mut child, || journal_has(&env, "effect:ep1:0", "intent"));
    let r = report();
    assert_eq!(
        (r["reserved"].as_str(), r["settled"].as_str()),
        (Some("1"), Some("0")),
        "the exposure stays reserved: {r}"
    );
    let out = &r["outstanding"];
    assert_eq!(out.as_array().map(Vec::len), Some(1), "{r}");
    assert_eq!(out[0]["attemptId"], "effect:ep1:0", "{r}");
    assert_eq!(out[0]["status"], "DISPATCHED", "{r}");
    // The resend runs nothing and refunds nothing; the books still fold clean.
    resend_is_refused(&env, &tok, "infer", args, "k5");
    let after = report();
    assert_eq!(after["reserved"], r["reserved"], "{after}");
    assert_eq!(after["outstanding"], r["outstanding"], "{after}");
    assert_eq!(after["revision"], r["revision"], "{after}");
}

/// The same kill with the mission held in a standalone ledger file (issue 18, DEC-MIS-14): the
/// ledger dispatched the attempt before the intent committed, the process died inside the
/// handler, so the store has the intent and no outcome. The exposure stays held in the
/// ledger, `mission report` names the store and effect it belongs to, and `mission reconcile
/// --from-store` settles it UNKNOWN (the reservation kept for a HUMAN reconcile), never
/// refunding it.
#[test]
fn kill_inside_a_handler_paired_with_a_ledger_mission_keeps_the_exposure() {
    let env = Env::new();
    let led = env.root.join("led.db").to_string_lossy().into_owned();
    let cfg = env.root.join("limits.json");
    std::fs::write(
        &cfg,
        r#"{"profile":"aiws-limits/1","ledgerId":"l","unit":"calls","scopes":[
        {"scopeId":"wo","kind":"WORK_ORDER","parentId":null,"limits":{"cost":"100"}}]}"#,
    )
    .expect("config");
    let cfg = cfg.to_string_lossy().into_owned();
    env.ok(&[
        "limits", "init", "--config", &cfg, "--yes", "--ledger", &led,
    ]);
    env.create_mission(Some(&led), "Model.Infer", "model", "5", "1");
    let tok = env.mint_for_mission("ep1", &["Model.Infer=model:5"], Some(&led), &[]);
    let report = || -> Value {
        serde_json::from_str(&env.ok(&["mission", "--ledger", &led, "report", "m", "--json"]))
            .expect("report")
    };
    let args =
        r#"{"case":"effect","effect":"Model.Infer","scope":"model","payload":{"prompt":"hi"}}"#;
    let mut child = spawn_child_on(&env, &tok, "infer", args, "k6", "block", Some(&led));
    kill_when(&mut child, || journal_has(&env, "effect:ep1:0", "intent"));
    assert!(!journal_has(&env, "effect:ep1:0", "outcome"));
    let sid = world::store::markers::store_id(&env.conn())
        .expect("store id")
        .expect("the store was paired");
    let r = report();
    assert_eq!(
        (r["reserved"].as_str(), r["settled"].as_str()),
        (Some("1"), Some("0")),
        "the exposure stays reserved: {r}"
    );
    let out = &r["outstanding"];
    assert_eq!(out.as_array().map(Vec::len), Some(1), "{r}");
    assert_eq!(out[0]["status"], "DISPATCHED", "{r}");
    assert_eq!(out[0]["store"], sid.as_str(), "{r}");
    assert_eq!(out[0]["intentId"], "effect:ep1:0", "{r}");
    // A resend runs nothing and refunds nothing.
    resend_is_refused(&env, &tok, "infer", args, "k6");
    assert_eq!(report()["reserved"], "1");
    // The store proves no outcome: settled UNKNOWN, the reservation kept (exit 5).
    let o = env.run(&[
        "mission",
        "--ledger",
        &led,
        "reconcile",
        "m",
        "--from-store",
        "--json",
    ]);
    assert_exit(&o, 5);
    let line: Value =
        serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim()).expect("one line");
    assert_eq!(
        (line["action"].as_str(), line["status"].as_str()),
        (Some("unknown"), Some("UNKNOWN")),
        "{line}"
    );
    assert!(
        line["why"]
            .as_str()
            .unwrap_or("")
            .contains("has no outcome"),
        "{line}"
    );
    let after = report();
    assert_eq!(after["reserved"], "1", "never refunded: {after}");
    assert_eq!(
        after["unknown"].as_array().map(Vec::len),
        Some(1),
        "{after}"
    );
    assert_exit(&env.run(&["mission", "--ledger", &led, "verify"]), 0);
}
