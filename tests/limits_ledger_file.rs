//! `world invoke` paired with a standalone ledger **file** (issue 18 item 3), the faults a
//! verifier found:
//!
//! - a crash after the ledger reserve but before the store commits the effect intent must not
//!   block the episode: attempt ids are unique per attempt (DEC-LIM-22), the crashed attempt's
//!   exposure stays held and named with its store and invocation, and
//!   `reconcile --from-store` never settles it from the outcome of a later attempt that reused
//!   the effect ordinal;
//! - only `world limits init` creates (or initialises an empty) ledger file: every other
//!   command, and `invoke/serve/mcp --ledger`, refuse a missing or empty file (exit 4,
//!   `ledger_not_initialized` naming the path and `world limits init`), creating nothing.

use crate::invoke_support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use invoke_support::{assert_exit, json_lines, stderr, Env};
use serde_json::Value;
use world::ledger::{ActorKind, Amount};
use world::limits::{ActorFacts, Command, NoEvidence, Purpose, Request};

const READ: &str = r#"{"case":"effect","payload":{"op":"read","path":"x"}}"#;

fn config(dir: &Path) -> String {
    let p = dir.join("ledger.json");
    std::fs::write(
        &p,
        r#"{"profile":"aiws-limits/1","ledgerId":"file","unit":"calls","scopes":[
        {"scopeId":"wo","kind":"WORK_ORDER","parentId":null,"limits":{"cost":"100"}},
        {"scopeId":"ep1","kind":"RUN","parentId":"wo"}]}"#,
    )
    .unwrap();
    p.display().to_string()
}

/// A store with the test transitions, a ledger file `led.db` initialised, and a session of
/// episode ep1 bound to scope ep1.
fn setup() -> (Env, String, PathBuf) {
    let env = Env::new();
    std::fs::write(env.ws.join("ep1/x"), "x\n").unwrap();
    let led = env.root.join("led.db").display().to_string();
    let cfg = config(&env.root);
    env.ok(&[
        "limits", "init", "--config", &cfg, "--yes", "--ledger", &led,
    ]);
    let tok = env.mint_with(
        "ep1",
        &["Workspace.Read=worktree:100"],
        &["--limits-scope", "ep1"],
    );
    (env, led, tok)
}

fn report(env: &Env, led: &str) -> Value {
    serde_json::from_str(&env.ok(&["limits", "report", "--json", "--ledger", led])).unwrap()
}

fn wo_cost(r: &Value) -> u64 {
    r["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["scopeId"] == "wo")
        .unwrap()["usage"]["cost"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

fn outcomes(env: &Env) -> u64 {
    env.conn()
        .query_row(
            "SELECT count(*) FROM journal WHERE kind = 'outcome' AND invocation_id LIKE 'effect:%'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .unwrap() as u64
}

fn store_id(env: &Env) -> String {
    world::store::markers::store_id(&env.conn())
        .unwrap()
        .expect("the store was paired")
}

/// A paired ORDINARY reservation of cost 1 in scope ep1, as the pairing sends it.
fn reserve(attempt: &str, store: &str, invocation: &str) -> Command {
    Command::Reserve {
        attempt_id: attempt.to_string(),
        operation_id: invocation.to_string(),
        scope_id: "ep1".into(),
        run_id: Some(store.to_string()),
        purpose: Purpose::Ordinary,
        amount: Amount(1),
        max_active_ms: Amount(10_000),
        paired: true,
    }
}

/// One ledger command as the HOST, as the pairing sends it.
fn host_step(led: &str, request_id: &str, command: Command) {
    let l = world::limits::open_standalone_ledger(led).unwrap();
    let now = 1_700_000_000_000;
    let req = Request::new(request_id, command).on_system_clock(true);
    let v = l.execute(
        &req,
        &ActorFacts::new(ActorKind::Host, "host:world", now),
        now,
        &NoEvidence,
    );
    assert!(v.is_ok(), "{v:?}");
}

/// `--wait-lock 5`: one test below opens the store in this process right before an invoke.
/// All integration tests share one process (DEC-ARCH-8), so a child another test spawns at that
/// moment holds a copy of the lock's descriptor until it execs; the invoke must wait that
/// instant out rather than fail with exit 6.
fn invoke(env: &Env, tok: &Path, led: &str, task: &str) -> std::process::Output {
    env.invoke(
        tok,
        "probe",
        READ,
        &["--ledger", led, "--invocation-id", task, "--wait-lock", "5"],
    )
}

#[test]
fn a_crash_between_ledger_and_store_keeps_the_exposure_and_never_blocks_the_episode() {
    let (env, led, tok) = setup();
    assert_exit(&invoke(&env, &tok, &led, "t0"), 0); // effect:ep1:0
    let sid = store_id(&env);

    // What a process killed after the ledger reserve + dispatch but before the store commit
    // left with the attempt ids of the old form: `<store>/effect:ep1:1` DISPATCHED with the
    // request ids and commands the pairing sent then; no intent in the store.
    let old = format!("{sid}/effect:ep1:1");
    host_step(
        &led,
        &format!("{old}:reserve"),
        reserve(&old, &sid, "cli:ep1:crashed"),
    );
    host_step(
        &led,
        &format!("{old}:dispatch"),
        Command::Dispatch {
            attempt_id: old.clone(),
        },
    );
    // The episode goes on: the next effect reuses ordinal 1 under a new attempt id.
    let o = invoke(&env, &tok, &led, "t1");
    assert_exit(&o, 0);
    assert!(!stderr(&o).contains("exists_with_different_command"));

    // The same crash with this release's code path: the broker's own reserve + dispatch of a
    // new attempt for effect:ep1:2, stopped before its transaction commits.
    {
        let mut store = world::store::Store::open_write(&env.db, Default::default()).unwrap();
        let s =
            world::limits::pairing::Standalone::open(&led, &mut store, "cli:ep1:crashed2").unwrap();
        let a = s.new_attempt("effect:ep1:2").unwrap();
        s.reserve_and_dispatch(&a, "ep1", 1, 10_000, 1_700_000_000_000)
            .unwrap();
    }
    assert_exit(&invoke(&env, &tok, &led, "t2"), 0); // reuses ordinal 2
    assert_exit(&invoke(&env, &tok, &led, "t3"), 0); // effect:ep1:3

    // A crash between reserve and dispatch: RESERVED, never dispatched.
    let reserved = format!("{sid}/effect:ep1:4/00ff00ff00ff00ff");
    host_step(
        &led,
        &format!("{reserved}:reserve"),
        reserve(&reserved, &sid, "cli:ep1:crashed3"),
    );

    // The crashed attempts stay held, named with their store and invocation.
    let r = report(&env, &led);
    assert_eq!(outcomes(&env), 4);
    assert_eq!(
        wo_cost(&r),
        4 + 3,
        "4 settled effects and 3 held exposures: {r}"
    );
    let out = r["outstanding"].as_array().unwrap();
    assert_eq!(out.len(), 3, "{r}");
    for a in out {
        assert_eq!(a["store"], sid.as_str(), "{a}");
        assert!(a["invocation"]
            .as_str()
            .unwrap()
            .starts_with("cli:ep1:crashed"));
    }

    // reconcile --from-store: the never-dispatched one is released; both DISPATCHED ones are
    // kept for a human — never settled from the later attempts' outcomes of their ordinals.
    let o = env.run(&[
        "limits",
        "reconcile",
        "--from-store",
        "--ledger",
        &led,
        "--json",
    ]);
    assert_exit(&o, 5);
    let lines = json_lines(&String::from_utf8_lossy(&o.stdout));
    let action = |inv: &str| {
        lines
            .iter()
            .find(|l| l["invocation"] == inv)
            .map(|l| l["action"].as_str().unwrap().to_string())
    };
    assert_eq!(
        action("cli:ep1:crashed").as_deref(),
        Some("kept"),
        "{lines:?}"
    );
    assert_eq!(
        action("cli:ep1:crashed2").as_deref(),
        Some("kept"),
        "{lines:?}"
    );
    assert_eq!(
        action("cli:ep1:crashed3").as_deref(),
        Some("released"),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .filter(|l| l["action"] == "kept")
            .all(|l| l["why"]
                .as_str()
                .unwrap()
                .contains("never reached the store")),
        "{lines:?}"
    );
    let r = report(&env, &led);
    assert_eq!(wo_cost(&r), 4 + 2, "DISPATCHED exposure retained: {r}");
    let states: Vec<&str> = r["outstanding"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["DISPATCHED", "DISPATCHED"], "{r}");
    // Running it again changes nothing.
    let rev = r["revision"].clone();
    assert_exit(
        &env.run(&["limits", "reconcile", "--from-store", "--ledger", &led]),
        5,
    );
    assert_eq!(report(&env, &led)["revision"], rev);
    env.verify_ok();
}

#[test]
fn kill_9_around_the_ledger_never_blocks_the_episode() {
    let (env, led, tok) = setup();
    let tok_s = tok.display().to_string();
    for i in 0..14u64 {
        let mut child = env
            .std_cmd(&["invoke", "probe", "--session", &tok_s, "--args", READ])
            .args(["--ledger", &led, "--invocation-id", &format!("k{i}")])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis((i * 37) % 110));
        let _ = child.kill();
        let _ = child.wait();
    }
    // The episode continues after every crash.
    for t in ["after1", "after2"] {
        let o = invoke(&env, &tok, &led, t);
        assert_exit(&o, 0);
    }
    let sid = store_id(&env);
    let r = report(&env, &led);
    let held: u64 = r["outstanding"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            assert_eq!(a["store"], sid.as_str(), "{a}");
            assert!(
                a["invocation"].as_str().unwrap().starts_with("cli:ep1:k"),
                "{a}"
            );
            a["amount"].as_str().unwrap().parse::<u64>().unwrap()
        })
        .sum();
    // Every journaled outcome is settled (or held), every crashed attempt still held.
    assert!(wo_cost(&r) >= outcomes(&env), "{r}");
    // Reconcile settles or releases what the store proves and keeps the rest: never a refund
    // of a DISPATCHED attempt without its outcome.
    let o = env.run(&[
        "limits",
        "reconcile",
        "--from-store",
        "--ledger",
        &led,
        "--json",
    ]);
    assert!(matches!(o.status.code(), Some(0 | 5)), "{}", stderr(&o));
    let r2 = report(&env, &led);
    let dispatched_held: u64 = r2["outstanding"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            assert_eq!(a["state"], "DISPATCHED", "{a}");
            a["amount"].as_str().unwrap().parse::<u64>().unwrap()
        })
        .sum();
    assert_eq!(
        wo_cost(&r2),
        outcomes(&env) + dispatched_held,
        "usage = settled outcomes + held exposure: {r2}"
    );
    assert!(dispatched_held <= held);
    env.verify_ok();
}

#[test]
fn only_init_creates_a_ledger_file() {
    let (env, _led, tok) = setup();
    let typo = env.root.join("typo.db");
    let typo_s = typo.display().to_string();
    let empty = env.root.join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let empty_s = empty.display().to_string();
    for (path, text) in [(&typo, &typo_s), (&empty, &empty_s)] {
        for args in [
            &["limits", "reserve", "--scope", "ep1", "--attempt", "a"][..],
            &["limits", "report"][..],
            &["limits", "dispatch", "--attempt", "a"][..],
        ] {
            let mut full = args.to_vec();
            let reserve_tail = [
                "--purpose",
                "ordinary",
                "--amount",
                "1",
                "--max-active-ms",
                "1",
            ];
            if args[1] == "reserve" {
                full.extend(reserve_tail);
            }
            full.extend(["--ledger", text]);
            let o = env.run(&full);
            assert_exit(&o, 4);
            assert!(o.stdout.is_empty(), "a rejection prints no data");
            let out = String::from_utf8_lossy(&o.stderr);
            assert!(out.contains("ledger_not_initialized"), "{out}");
            assert!(out.contains(text.as_str()), "names the path: {out}");
            assert!(
                out.contains(&format!("world limits init --config FILE --ledger {text}")),
                "{out}"
            );
        }
        let o = env.run(&["limits", "reconcile", "--from-store", "--ledger", text]);
        assert_exit(&o, 4);
        // invoke, serve and mcp refuse before they start.
        let tok_s = tok.display().to_string();
        for args in [
            &["invoke", "probe", "--session", &tok_s, "--args", READ][..],
            &["serve", "--bind", "127.0.0.1:0"][..],
            &["mcp", "--session", &tok_s][..],
        ] {
            let mut full = args.to_vec();
            full.extend(["--ledger", text]);
            let o = env.run(&full);
            assert_exit(&o, 4);
            let err = stderr(&o);
            assert!(
                err.contains(text.as_str()) && err.contains("world limits init"),
                "{err}"
            );
        }
        if path == &typo {
            assert!(!typo.exists(), "a ledger file was created");
        } else {
            assert_eq!(
                std::fs::metadata(&empty).unwrap().len(),
                0,
                "schema written"
            );
        }
    }
    assert_eq!(env.intents("effect:"), 0, "no effect intent was journaled");
    // init initialises the empty file.
    let cfg = config(&env.root);
    env.ok(&[
        "limits", "init", "--config", &cfg, "--yes", "--ledger", &empty_s,
    ]);
    assert_eq!(wo_cost(&report(&env, &empty_s)), 0);
}

/// `limits reconcile --from-store` runs the pairing trait's `reconcile_from_store`
/// (DEC-PAIRING2-1): on a ledger whose usage was edited it refuses with exit 3 (integrity),
/// naming the verifier, and leaves the outstanding attempt and the ledger as they were; once
/// the edit is undone it releases the attempt.
#[test]
fn reconcile_from_store_on_an_edited_ledger_refuses_and_writes_nothing() {
    let (env, led, tok) = setup();
    assert_exit(&invoke(&env, &tok, &led, "t0"), 0);
    let sid = store_id(&env);
    // A crash between the ledger's reserve and dispatch: RESERVED, never dispatched.
    let reserved = format!("{sid}/effect:ep1:1/00ff00ff00ff00ff");
    host_step(
        &led,
        &format!("{reserved}:reserve"),
        reserve(&reserved, &sid, "cli:ep1:crashed"),
    );
    let before = report(&env, &led);
    let ledger = rusqlite::Connection::open(&led).unwrap();
    let usage: String = ledger
        .query_row(
            "SELECT usage_ordinary FROM limits_scopes WHERE scope_id = 'wo'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    ledger
        .execute(
            "UPDATE limits_scopes SET usage_ordinary = '0' WHERE scope_id = 'wo'",
            [],
        )
        .unwrap();
    let events = |c: &rusqlite::Connection| -> i64 {
        c.query_row("SELECT count(*) FROM limits_events", [], |r| r.get(0))
            .unwrap()
    };
    let n = events(&ledger);
    let o = env.run(&["limits", "reconcile", "--from-store", "--ledger", &led]);
    assert_exit(&o, 3);
    assert!(
        stderr(&o).contains("world verify --ledger"),
        "{}",
        stderr(&o)
    );
    assert_eq!(events(&ledger), n, "nothing was written");
    // Undo the edit: the reconcile now releases the never-dispatched attempt.
    ledger
        .execute(
            "UPDATE limits_scopes SET usage_ordinary = ?1 WHERE scope_id = 'wo'",
            [&usage],
        )
        .unwrap();
    assert_eq!(report(&env, &led)["revision"], before["revision"]);
    let o = env.run(&[
        "limits",
        "reconcile",
        "--from-store",
        "--ledger",
        &led,
        "--json",
    ]);
    assert_exit(&o, 0);
    let lines = json_lines(&String::from_utf8_lossy(&o.stdout));
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["attemptId"], reserved.as_str());
    assert_eq!(lines[0]["action"], "released");
    assert_eq!(lines[0]["state"], "RELEASED");
    assert_eq!(lines[0]["invocation"], "cli:ep1:crashed");
    assert!(report(&env, &led)["outstanding"]
        .as_array()
        .unwrap()
        .is_empty());
}
