//! Shared budgets across machines (issue 18 items 3 and 4): three World stores ("hosts", each
//! with its own writer lock and `world invoke` processes) pair their effects with one
//! PostgreSQL ledger holding a shared work-order bound.
//!
//! - 8 concurrent invoking processes per host: the ledger never admits past the bound, and the
//!   settled cost equals the stores' effect records;
//! - kill -9 of a host inside an effect keeps its exposure (DISPATCHED, shown with its store
//!   and invocation) — `reconcile --from-store` does not refund it;
//! - the server stopping while a handler runs: the effect's outcome is journaled, the ledger
//!   keeps the exposure, `reconcile --from-store` settles it from the journal;
//! - an unreachable ledger stops the invocation before any intent (exit 1, nothing written).
//!
//! The server is `tests/pgtest`'s (skipped with a message without PostgreSQL, a failure under
//! `CI=true`).

use crate::invoke_support;
use crate::pgtest;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use invoke_support::Env;
use serde_json::{json, Value};

/// The crash test stops the shared server: the PostgreSQL tests of this file run one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

const CHILD_ENV: &str = "WORLD_PG_HOSTS_TEST_CHILD";
const READ: &str = r#"{"case":"effect","payload":{"op":"read","path":"x"}}"#;
const INFER: &str =
    r#"{"case":"effect","effect":"Model.Infer","scope":"model","payload":{"prompt":"hi"}}"#;

fn config(dir: &Path, bound: u32, runs: &[&str]) -> String {
    let mut scopes = vec![format!(
        r#"{{"scopeId":"wo","kind":"WORK_ORDER","parentId":null,"limits":{{"cost":"{bound}"}}}}"#
    )];
    for r in runs {
        scopes.push(format!(
            r#"{{"scopeId":"{r}","kind":"RUN","parentId":"wo"}}"#
        ));
    }
    let p = dir.join("ledger.json");
    std::fs::write(
        &p,
        format!(
            r#"{{"profile":"aiws-limits/1","ledgerId":"shared","unit":"calls","scopes":[{}]}}"#,
            scopes.join(",")
        ),
    )
    .unwrap();
    p.display().to_string()
}

fn init(env: &Env, url: &str, cfg: &str) {
    env.ok(&["limits", "init", "--config", cfg, "--yes", "--ledger", url]);
}

fn report(env: &Env, url: &str) -> Value {
    let out = env.ok(&["limits", "report", "--json", "--ledger", url]);
    serde_json::from_str(&out).unwrap()
}

fn scope<'a>(r: &'a Value, id: &str) -> &'a Value {
    r["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["scopeId"] == id)
        .unwrap()
}

fn outcomes(env: &Env) -> i64 {
    env.conn()
        .query_row(
            "SELECT count(*) FROM journal WHERE kind = 'outcome' AND invocation_id LIKE 'effect:%'",
            [],
            |r| r.get(0),
        )
        .unwrap()
}

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

#[test]
fn three_hosts_share_one_bound_and_never_pass_it() {
    let _one = serial();
    let Some(pg) = pgtest::server("three_hosts_share_one_bound_and_never_pass_it") else {
        return;
    };
    const BOUND: u32 = 20;
    const PER_HOST: usize = 8;
    let url = pg.fresh_db();
    let hosts: Vec<Env> = (0..3).map(|_| Env::new()).collect();
    let cfg = config(&hosts[0].root, BOUND, &["h0", "h1", "h2"]);
    init(&hosts[0], &url, &cfg);
    let toks: Vec<_> = hosts
        .iter()
        .enumerate()
        .map(|(i, h)| {
            std::fs::write(h.ws.join("ep1/x"), "x\n").unwrap();
            h.mint_with(
                "ep1",
                &["Workspace.Read=worktree:100"],
                &["--limits-scope", &format!("h{i}")],
            )
        })
        .collect();
    // 3 hosts × 8 processes at once, each one effect of cost 1.
    let mut workers = Vec::new();
    for (i, h) in hosts.iter().enumerate() {
        for p in 0..PER_HOST {
            let (db, tok, url) = (h.db.clone(), toks[i].clone(), url.clone());
            workers.push(std::thread::spawn(move || {
                let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("world"))
                    .current_dir(invoke_support::repo())
                    .env("WORLD_DB", &db)
                    .env("WORLD_LEDGER", &url)
                    .env_remove("WORLD_SESSION")
                    .env_remove("WORLD_TEST_NOW")
                    .args(["--wait-lock", "120", "invoke", "probe", "--session"])
                    .arg(&tok)
                    .args(["--invocation-id", &format!("h{i}p{p}"), "--args", READ])
                    .output()
                    .unwrap();
                let err = String::from_utf8_lossy(&out.stderr).into_owned();
                (out.status.code(), err)
            }));
        }
    }
    let codes: Vec<(Option<i32>, String)> =
        workers.into_iter().map(|w| w.join().unwrap()).collect();
    let ok = codes.iter().filter(|c| c.0 == Some(0)).count();
    let refused = codes
        .iter()
        .filter(|c| c.0 == Some(4) && c.1.contains("cost_exhausted"))
        .count();
    assert_eq!(
        (ok, refused),
        (BOUND as usize, 3 * PER_HOST - BOUND as usize),
        "{codes:?}"
    );
    let r = report(&hosts[0], &url);
    assert_eq!(scope(&r, "wo")["usage"]["cost"], BOUND.to_string());
    assert_eq!(scope(&r, "wo")["usage"]["attempts"], BOUND.to_string());
    assert_eq!(r["outstanding"], json!([]), "everything settled");
    // The settled cost equals the stores' effect records (cost 1 each), host by host.
    let mut total = 0;
    for (i, h) in hosts.iter().enumerate() {
        let n = outcomes(h);
        assert_eq!(
            scope(&r, &format!("h{i}"))["usage"]["cost"],
            n.to_string(),
            "host {i}"
        );
        total += n;
        h.verify_ok();
    }
    assert_eq!(total, i64::from(BOUND));
}

#[test]
fn an_unreachable_ledger_stops_the_invocation_before_any_intent() {
    let env = Env::new();
    std::fs::write(env.ws.join("ep1/x"), "x\n").unwrap();
    let tok = env.mint_with(
        "ep1",
        &["Workspace.Read=worktree:5"],
        &["--limits-scope", "h0"],
    );
    let nowhere = tempfile::tempdir().unwrap();
    let url = format!(
        "postgres://world:hunter2-secret@{}/db",
        nowhere.path().display().to_string().replace('/', "%2F")
    );
    let out = env.invoke(&tok, "probe", READ, &["--ledger", &url]);
    invoke_support::assert_exit(&out, 1);
    let err = invoke_support::stderr(&out);
    assert!(err.contains("postgres://world@"), "{err}");
    assert!(
        !err.contains("hunter2-secret"),
        "the password leaked: {err}"
    );
    assert_eq!(env.intents("effect:"), 0, "no effect intent was journaled");
    env.verify_ok();
}

/// A model backend that sleeps `ms` before answering.
struct Sleepy(u64);

impl world::broker::handlers::model::ModelBackend for Sleepy {
    fn infer(
        &self,
        _scope: &str,
        _request: &Value,
        _deadline: Instant,
    ) -> Result<Value, world::broker::handlers::model::ModelError> {
        std::thread::sleep(Duration::from_millis(self.0));
        Ok(json!({"ok":true,"text":"hi"}))
    }
}

/// Not a test on its own: the child process of the crash tests. It runs one invocation through
/// the library (a slow `Model.Infer` backend, the standalone ledger) described by
/// `WORLD_PG_HOSTS_TEST_CHILD`.
#[test]
#[ignore = "child process of the crash tests; does nothing without WORLD_PG_HOSTS_TEST_CHILD"]
fn child_invoke() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let spec: Value = serde_json::from_str(&spec).unwrap();
    let s = |k: &str| spec[k].as_str().unwrap_or_default().to_string();
    let db = std::path::PathBuf::from(s("db"));
    let pins = world::transitions::pins::StorePins::for_db(&db);
    let host = world::ops::invoke::Host {
        interpreters: &pins,
        workspace_root: None,
        tool: None,
        run_caps: Default::default(),
        examples_dir: None,
        services: world::broker::handlers::Services {
            model: Some(Arc::new(Sleepy(spec["sleepMs"].as_u64().unwrap_or(30_000)))),
            limits_ledger: Some(s("ledger")),
            ..Default::default()
        },
        exec: None,
        observer: None,
        unattested: Default::default(),
    };
    let call = world::ops::invoke::Call {
        surface: world::ops::invoke::Surface::Cli,
        token: std::fs::read_to_string(s("token"))
            .unwrap()
            .trim()
            .to_string(),
        transition: "infer".into(),
        args: serde_json::from_str(INFER).unwrap(),
        task: Some(s("task")),
        clock: world::clock::Clock::System,
    };
    let mut store = world::store::Store::open_write(&db, Default::default()).unwrap();
    let r = world::ops::invoke::invoke(&mut store, &call, &host);
    assert!(r.is_ok(), "{r:?}");
}

fn spawn_child(env: &Env, tok: &Path, url: &str, task: &str, sleep_ms: u64) -> Child {
    let spec = json!({
        "db": env.db, "token": tok, "ledger": url, "task": task, "sleepMs": sleep_ms,
    });
    crate::common::child_test(module_path!(), "child_invoke")
        .env(CHILD_ENV, spec.to_string())
        .current_dir(invoke_support::repo())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn wait_for(child: &mut Child, mut cond: impl FnMut() -> bool) {
    let t = Instant::now();
    while !cond() {
        assert!(child.try_wait().unwrap().is_none(), "the child ended early");
        assert!(t.elapsed() < Duration::from_secs(30), "never reached");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_crash_or_a_lost_ledger_keeps_the_exposure_until_reconciled() {
    let _one = serial();
    let Some(pg) =
        pgtest::server_exclusive("a_crash_or_a_lost_ledger_keeps_the_exposure_until_reconciled")
    else {
        return;
    };
    let url = pg.fresh_db();
    let env = Env::new();
    let cfg = config(&env.root, 10, &["ep1"]);
    init(&env, &url, &cfg);
    let tok = env.mint_with("ep1", &["Model.Infer=model:5"], &["--limits-scope", "ep1"]);

    // kill -9 inside the handler: the ledger says DISPATCHED, the store has an intent without
    // outcome; the exposure stays, named with its store and invocation.
    let mut child = spawn_child(&env, &tok, &url, "k1", 30_000);
    wait_for(&mut child, || journal_has(&env, "effect:ep1:0", "intent"));
    child.kill().unwrap();
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
    let r = report(&env, &url);
    assert_eq!(scope(&r, "wo")["usage"]["cost"], "1", "exposure retained");
    let out = &r["outstanding"][0];
    assert_eq!(out["state"], "DISPATCHED", "{r}");
    assert!(out["store"].as_str().unwrap().starts_with("store-"), "{r}");
    assert_eq!(out["invocation"], "cli:ep1:k1");
    assert!(out["attemptId"]
        .as_str()
        .unwrap()
        .contains("/effect:ep1:0/"));
    // The restart never refunds it: reconcile --from-store keeps it (exit 5) for a human.
    let o = env.run(&["limits", "reconcile", "--from-store", "--ledger", &url]);
    invoke_support::assert_exit(&o, 5);
    assert!(String::from_utf8_lossy(&o.stdout).contains("kept"));
    let r = report(&env, &url);
    assert_eq!(scope(&r, "wo")["usage"]["cost"], "1");
    assert_eq!(r["outstanding"][0]["state"], "DISPATCHED");

    // The server stops while the next handler runs: the outcome is journaled, the settlement
    // is not; back up, reconcile --from-store settles it from the journal.
    let mut child = spawn_child(&env, &tok, &url, "k2", 1500);
    wait_for(&mut child, || journal_has(&env, "effect:ep1:1", "intent"));
    pg.stop();
    let status = child.wait().unwrap();
    pg.start_again();
    assert!(
        status.success(),
        "the invocation commits without the ledger: {status:?}"
    );
    assert!(journal_has(&env, "effect:ep1:1", "outcome"));
    let r = report(&env, &url);
    assert_eq!(
        scope(&r, "wo")["usage"]["cost"],
        "2",
        "both exposures retained"
    );
    let o = env.run(&[
        "limits",
        "reconcile",
        "--from-store",
        "--ledger",
        &url,
        "--json",
    ]);
    invoke_support::assert_exit(&o, 5); // effect 1 still needs a human
    let lines = invoke_support::json_lines(&String::from_utf8_lossy(&o.stdout));
    let settled: Vec<&Value> = lines.iter().filter(|l| l["action"] == "settled").collect();
    assert_eq!(settled.len(), 1, "{lines:?}");
    assert!(settled[0]["attemptId"]
        .as_str()
        .unwrap()
        .contains("/effect:ep1:1/"));
    let r = report(&env, &url);
    assert_eq!(r["outstanding"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(scope(&r, "wo")["usage"]["cost"], "2", "settled at its cost");
    // A second run changes nothing.
    let o = env.run(&["limits", "reconcile", "--from-store", "--ledger", &url]);
    invoke_support::assert_exit(&o, 5);
    assert_eq!(report(&env, &url)["revision"], r["revision"]);
}

/// A mission held in the PostgreSQL ledger (DEC-MIS-14): the server stops while the paired
/// handler runs, so the outcome is journaled in the store and the mission's settlement is not;
/// the attempt stays DISPATCHED with its exposure, named with its store and effect, and
/// `world mission reconcile m --from-store` settles it from the journaled outcome.
#[test]
fn a_lost_ledger_keeps_a_mission_attempt_until_settled_from_the_store() {
    let _one = serial();
    let Some(pg) = pgtest::server_exclusive(
        "a_lost_ledger_keeps_a_mission_attempt_until_settled_from_the_store",
    ) else {
        return;
    };
    let url = pg.fresh_db();
    let env = Env::new();
    let cfg = config(&env.root, 10, &[]);
    init(&env, &url, &cfg);
    env.create_mission(Some(&url), "Model.Infer", "model", "5", "1");
    let tok = env.mint_for_mission("ep1", &["Model.Infer=model:5"], Some(&url), &[]);
    let m = |args: &[&str]| {
        let mut a = vec!["mission", "--ledger", url.as_str()];
        a.extend(args);
        env.ok(&a)
    };
    let report = || -> Value { serde_json::from_str(&m(&["report", "m", "--json"])).unwrap() };

    let mut child = spawn_child(&env, &tok, &url, "k1", 1500);
    wait_for(&mut child, || journal_has(&env, "effect:ep1:0", "intent"));
    pg.stop();
    let status = child.wait().unwrap();
    pg.start_again();
    assert!(
        status.success(),
        "the invocation commits without the ledger: {status:?}"
    );
    assert!(journal_has(&env, "effect:ep1:0", "outcome"));
    let r = report();
    assert_eq!(r["reserved"], "1", "the exposure is kept: {r}");
    let out = &r["outstanding"][0];
    assert_eq!(out["status"], "DISPATCHED", "{r}");
    assert!(out["store"].as_str().unwrap().starts_with("store-"), "{r}");
    assert_eq!(out["intentId"], "effect:ep1:0", "{r}");

    let o = env.run(&[
        "mission",
        "--ledger",
        &url,
        "reconcile",
        "m",
        "--from-store",
        "--json",
    ]);
    invoke_support::assert_exit(&o, 0);
    let lines = invoke_support::json_lines(&String::from_utf8_lossy(&o.stdout));
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["action"], "settled", "{lines:?}");
    let r = report();
    assert_eq!(
        (r["reserved"].as_str(), r["settled"].as_str()),
        (Some("0"), Some("1")),
        "settled at its cost from the journal: {r}"
    );
    assert_eq!(r["outstanding"], json!([]), "{r}");
    // A second run changes nothing.
    invoke_support::assert_exit(
        &env.run(&[
            "mission",
            "--ledger",
            &url,
            "reconcile",
            "m",
            "--from-store",
        ]),
        0,
    );
    assert_eq!(report()["revision"], r["revision"]);
    invoke_support::assert_exit(&env.run(&["mission", "--ledger", &url, "verify"]), 0);
}
