//! World effects paired with a mission held in a **standalone** ledger (issue 18, DEC-MIS-14):
//! `session mint --mission M … --ledger L` records the ledger in the binding; `invoke --ledger
//! L` admits and dispatches each effect in the ledger before its intent is journaled and
//! settles it after the outcome; a rejection stops the invocation with nothing written in the
//! store or the mission; a crash between the two databases keeps the exposure, `world mission
//! report` names the store and effect intent of each held attempt, and `world mission
//! reconcile M --from-store` settles what the store's journal proves (and never refunds a
//! dispatched attempt without an outcome).
//!
//! Ledger file and PostgreSQL (the throwaway server of `tests/pgtest`: skipped with a message
//! when PostgreSQL is not installed, a failure under `CI=true`).

use crate::invoke_support;
use crate::pgtest;

use std::path::PathBuf;

use invoke_support::{assert_exit, json_lines, stderr, Env};
use serde_json::{json, Value};

const READ: &str = r#"{"case":"effect","payload":{"op":"read","path":"x"}}"#;

/// A store with the test transitions; the ledger `led` initialised by `world limits init`;
/// mission `m` of budget `budget` in it (run r, grant g for Workspace.Read on worktree); a
/// session of episode ep1 bound to it through `--ledger`.
fn setup(led: &str, budget: &str) -> (Env, PathBuf) {
    setup_with(led, budget, &[])
}

/// [`setup`] with extra `session mint` arguments (e.g. `--limits-scope wo`).
fn setup_with(led: &str, budget: &str, mint_extra: &[&str]) -> (Env, PathBuf) {
    let env = Env::new();
    std::fs::write(env.ws.join("ep1/x"), "x\n").unwrap();
    let cfg = env.root.join("limits.json");
    std::fs::write(
        &cfg,
        r#"{"profile":"aiws-limits/1","ledgerId":"l","unit":"calls","scopes":[
        {"scopeId":"wo","kind":"WORK_ORDER","parentId":null,"limits":{"cost":"100"}}]}"#,
    )
    .unwrap();
    let cfg = cfg.display().to_string();
    env.ok(&["limits", "init", "--config", &cfg, "--yes", "--ledger", led]);
    env.create_mission(Some(led), "Workspace.Read", "worktree", budget, "3");
    let tok = env.mint_for_mission(
        "ep1",
        &["Workspace.Read=worktree:100"],
        Some(led),
        mint_extra,
    );
    (env, tok)
}

fn invoke(env: &Env, tok: &std::path::Path, led: &str, task: &str) -> std::process::Output {
    env.invoke(
        tok,
        "probe",
        READ,
        &["--ledger", led, "--invocation-id", task],
    )
}

fn report(env: &Env, led: &str) -> Value {
    serde_json::from_str(&env.ok(&["--json", "mission", "--ledger", led, "report", "m"])).unwrap()
}

fn store_id(env: &Env) -> String {
    world::limits::pairing::store_id(&env.conn())
        .unwrap()
        .expect("the store was paired")
}

/// The store has no mission tables of its own (the mission lives in the ledger).
fn store_has_no_missions(env: &Env) {
    let n: i64 = env
        .conn()
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'mission_journal'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    if n > 0 {
        let rows: i64 = env
            .conn()
            .query_row("SELECT count(*) FROM mission_journal", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 0, "nothing journaled in the store's mission tables");
    }
}

/// The paired invoke, the rejection and the binding checks, on ledger `led`.
fn paired_invoke_and_rejection(led: &str) {
    let (env, tok) = setup(led, "2");
    for t in ["t0", "t1"] {
        assert_exit(&invoke(&env, &tok, led, t), 0);
    }
    let r = report(&env, led);
    assert_eq!(
        (r["reserved"].as_str(), r["settled"].as_str()),
        (Some("0"), Some("2")),
        "{r}"
    );
    assert_eq!(r["attempts"]["settled"], json!(2), "{r}");
    assert_eq!(r["outstanding"], json!([]), "{r}");
    // Admit, dispatch, settle per effect, with attempt ids naming store and intent.
    let log = env.ok(&["--json", "mission", "--ledger", led, "log", "m"]);
    let cmds: Vec<Value> = json_lines(&log);
    let types: Vec<&str> = cmds
        .iter()
        .map(|c| c["command"]["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        &types[types.len() - 6..],
        ["admit", "dispatch", "settle", "admit", "dispatch", "settle"]
    );
    let sid = store_id(&env);
    let admit = &cmds[types.len() - 6]["command"];
    let attempt = admit["attemptId"].as_str().unwrap();
    assert!(
        attempt.starts_with(&format!("{sid}:effect:ep1:0:")),
        "{admit}"
    );
    assert_eq!(admit["operationId"], format!("{sid}:effect:ep1:0"));
    assert_eq!(admit["action"]["capability"], "Workspace.Read");
    // The intent's transaction stored the attempt marker.
    assert_eq!(
        env.objects_of(world::mission::pairing::ATTEMPT_SEMANTIC_ID)
            .len(),
        2
    );
    store_has_no_missions(&env);

    // The budget is spent: the third effect is refused, nothing written anywhere.
    let before = env.fingerprint();
    let journal = json_lines(&env.ok(&["--json", "mission", "--ledger", led, "log", "m"])).len();
    let o = invoke(&env, &tok, led, "over");
    assert_exit(&o, 4);
    assert!(stderr(&o).contains("BUDGET_EXHAUSTED"), "{}", stderr(&o));
    assert_eq!(env.fingerprint(), before, "nothing written in the store");
    assert_eq!(
        json_lines(&env.ok(&["--json", "mission", "--ledger", led, "log", "m"])).len(),
        journal,
        "nothing journaled in the mission"
    );
    assert_eq!(report(&env, led)["revision"], r["revision"]);

    // Without --ledger (or with another ledger) the invocation is refused before anything.
    let o = env.invoke(&tok, "probe", READ, &["--invocation-id", "noledger"]);
    assert_exit(&o, 1);
    assert!(stderr(&o).contains("pass --ledger"), "{}", stderr(&o));
    assert_eq!(env.fingerprint(), before);
    env.verify_ok();
    assert_exit(&env.run(&["mission", "--ledger", led, "verify"]), 0);

    // A mission the ledger does not hold is refused at mint.
    let bad = env.run(&[
        "session",
        "mint",
        "--episode",
        "ep2",
        "--grant",
        "Workspace.Read=worktree:1",
        "--yes",
        "--out",
        &env.root.join("tok-bad").display().to_string(),
        "--mission",
        "nope",
        "--mission-run",
        "r",
        "--mission-grant",
        "g",
        "--ledger",
        led,
    ]);
    assert_exit(&bad, 1);
    assert!(
        stderr(&bad).contains("MISSION_NOT_FOUND"),
        "{}",
        stderr(&bad)
    );
}

#[test]
fn a_paired_invoke_against_a_mission_in_a_ledger_file() {
    let dir = tempfile::tempdir().unwrap();
    let led = dir.path().join("led.db").display().to_string();
    paired_invoke_and_rejection(&led);
}

#[test]
fn a_paired_invoke_against_a_mission_on_postgres() {
    let Some(pg) = pgtest::server("a_paired_invoke_against_a_mission_on_postgres") else {
        return;
    };
    paired_invoke_and_rejection(&pg.fresh_db());
}

/// A crash between the ledger and the store, at both places a process can stop, made with the
/// broker's own library steps: after the ledger's admit (ADMITTED) and after its dispatch
/// (DISPATCHED), each before the intent's transaction commits.
fn crashes_before_the_intent(led: &str) {
    let (env, tok) = setup(led, "10");
    assert_exit(&invoke(&env, &tok, led, "t0"), 0); // effect:ep1:0, settled
    let sid = store_id(&env);
    let missions = world::mission::ledger::open(led).unwrap();
    let s = world::mission::pairing::Standalone {
        missions,
        mission_id: "m".into(),
        store_id: sid.clone(),
    };
    // The invocations ran on the system clock; the mission never accepts an earlier `now`.
    let now: u128 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let admit = |intent: &str| -> world::mission::Admit {
        let attempt = s.new_attempt(intent).unwrap();
        let c = json!({"type": "admit", "runId": "r", "operationId": world::mission::pairing::operation_id(&sid, intent),
            "attemptId": attempt, "grantId": "g", "subject": "agent",
            "action": {"capability": "Workspace.Read", "resource": "worktree", "payload": {}, "preconditions": {}},
            "amount": "1", "authorizationCheckedAt": now.to_string(), "policy": "ALLOW", "mandatoryChecksOk": true});
        match world::mission::Command::parse(c.to_string().as_bytes()).unwrap() {
            world::mission::Command::Admit(a) => *a,
            other => panic!("{other:?}"),
        }
    };
    // Stopped after dispatch, before the store committed effect:ep1:1.
    s.admit_and_dispatch(admit("effect:ep1:1"), now).unwrap();
    // Stopped after admit, before dispatch: effect:ep1:1 again (the ordinal stayed free).
    let a = admit("effect:ep1:1");
    let admitted = a.attempt_id.clone();
    s.missions
        .apply(
            "m",
            &world::mission::store::Request {
                command: world::mission::Command::Admit(Box::new(a)),
                request_id: None,
            },
            &world::mission::Actor::host(),
            world::limits::Amount(now),
        )
        .unwrap();
    // The episode goes on: the next effect reuses ordinal 1 under a new attempt id.
    assert_exit(&invoke(&env, &tok, led, "t1"), 0);
    let r = report(&env, led);
    assert_eq!(
        r["reserved"], "2",
        "both crashed attempts hold exposure: {r}"
    );
    let out = r["outstanding"].as_array().unwrap();
    assert_eq!(out.len(), 2, "{r}");
    for a in out {
        assert_eq!(a["store"], sid.as_str(), "{a}");
        assert_eq!(a["intentId"], "effect:ep1:1", "{a}");
    }
    let text = env.ok(&["mission", "--ledger", led, "report", "m"]);
    assert!(
        text.contains(&format!("store {sid}, effect effect:ep1:1")),
        "{text}"
    );

    // reconcile --from-store: the ADMITTED one never ran → released; the DISPATCHED one never
    // reached the store but was dispatched → UNKNOWN (exposure kept for a HUMAN).
    let o = env.run(&[
        "mission",
        "--ledger",
        led,
        "reconcile",
        "m",
        "--from-store",
        "--json",
    ]);
    assert_exit(&o, 5);
    let lines = json_lines(&String::from_utf8_lossy(&o.stdout));
    assert_eq!(lines.len(), 2, "{lines:?}");
    let by = |id: &str| lines.iter().find(|l| l["attemptId"] == id).cloned();
    assert_eq!(by(&admitted).unwrap()["action"], "released", "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l["action"] == "unknown" && l["status"] == "UNKNOWN"),
        "{lines:?}"
    );
    let r = report(&env, led);
    assert_eq!(r["reserved"], "1", "the DISPATCHED exposure is kept: {r}");
    assert_eq!(r["unknown"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(r["outstanding"], json!([]), "{r}");
    // Again: nothing left to do, nothing changes.
    let rev = r["revision"].clone();
    assert_exit(
        &env.run(&["mission", "--ledger", led, "reconcile", "m", "--from-store"]),
        0,
    );
    assert_eq!(report(&env, led)["revision"], rev);
    env.verify_ok();
    assert_exit(&env.run(&["mission", "--ledger", led, "verify"]), 0);
}

#[test]
fn a_crash_between_ledger_and_store_keeps_the_exposure_on_a_ledger_file() {
    let dir = tempfile::tempdir().unwrap();
    let led = dir.path().join("led.db").display().to_string();
    crashes_before_the_intent(&led);
}

#[test]
fn a_crash_between_ledger_and_store_keeps_the_exposure_on_postgres() {
    let Some(pg) =
        pgtest::server("a_crash_between_ledger_and_store_keeps_the_exposure_on_postgres")
    else {
        return;
    };
    crashes_before_the_intent(&pg.fresh_db());
}

#[test]
fn from_store_needs_a_ledger_and_excludes_the_human_form() {
    let env = Env::new();
    let o = env.run(&["mission", "reconcile", "m", "--from-store"]);
    assert_exit(&o, 2);
    assert!(stderr(&o).contains("--ledger"), "{}", stderr(&o));
    let o = env.run(&[
        "mission",
        "reconcile",
        "m",
        "--from-store",
        "--attempt",
        "a",
    ]);
    assert_exit(&o, 2);
}

/// A limits scope and a mission in the same ledger file: the ledger reserves first, then the
/// mission admits; a mission refusal releases the never-dispatched reservation, so nothing is
/// left outstanding in either.
#[test]
fn with_a_limits_scope_in_the_same_ledger_a_mission_refusal_releases_the_reservation() {
    let dir = tempfile::tempdir().unwrap();
    let led = dir.path().join("led.db").display().to_string();
    let (env, tok) = setup_with(&led, "1", &["--limits-scope", "wo"]);
    assert_exit(&invoke(&env, &tok, &led, "t0"), 0);
    let limits = |env: &Env| -> Value {
        serde_json::from_str(&env.ok(&["limits", "report", "--json", "--ledger", &led])).unwrap()
    };
    let wo = |r: &Value| r["scopes"][0]["usage"]["cost"].clone();
    let l0 = limits(&env);
    assert_eq!(wo(&l0), "1", "the paired effect was charged");
    let before = env.fingerprint();
    let o = invoke(&env, &tok, &led, "over");
    assert_exit(&o, 4);
    assert!(stderr(&o).contains("BUDGET_EXHAUSTED"), "{}", stderr(&o));
    assert_eq!(env.fingerprint(), before, "nothing written in the store");
    let r = limits(&env);
    assert_eq!(
        r["outstanding"],
        json!([]),
        "the reservation was released: {r}"
    );
    assert_eq!(wo(&r), "1", "{r}");
    assert_ne!(
        r["revision"], l0["revision"],
        "the ledger reserved (and released) before the mission refused: {r}"
    );
    let m = report(&env, &led);
    assert_eq!(m["outstanding"], json!([]), "{m}");
    assert_eq!(m["settled"], "1", "{m}");
}

/// F3, L11 (DEC-MIS-15): the binding names the ledger by server, database **and schema**, so
/// a session bound to mission `m` of schema `public` is refused by `--ledger` naming another
/// schema's ledger of the same database (which holds its own mission `m`) before anything is
/// written — while other spellings of the bound ledger (`?host=DIR`, `user=` in the query)
/// are the same ledger.
#[test]
fn the_binding_names_the_postgres_schema_and_any_spelling_of_its_ledger_works() {
    let Some(pg) = pgtest::server(
        "the_binding_names_the_postgres_schema_and_any_spelling_of_its_ledger_works",
    ) else {
        return;
    };
    let url = pg.fresh_db();
    let db = url.rsplit('/').next().unwrap().to_string();
    let (env, tok) = setup(&url, "5");
    pg.sql(&db, "CREATE SCHEMA other");
    let other = format!("{url}?options=-csearch_path%3Dother");
    let cfg = env.root.join("limits.json").display().to_string();
    env.ok(&[
        "limits", "init", "--config", &cfg, "--yes", "--ledger", &other,
    ]);
    env.create_mission(Some(&other), "Workspace.Read", "worktree", "5", "3");
    let before = env.fingerprint();
    let o = invoke(&env, &tok, &other, "wrong-schema");
    assert_exit(&o, 1);
    let err = stderr(&o);
    assert!(
        err.contains("MissionUnavailable") || err.contains("not in --ledger"),
        "{err}"
    );
    assert!(err.contains("#public") && err.contains("#other"), "{err}");
    assert_eq!(env.fingerprint(), before, "nothing written in the store");
    for led in [&url, &other] {
        let r = report(&env, led);
        assert_eq!(
            (r["reserved"].as_str(), r["settled"].as_str()),
            (Some("0"), Some("0")),
            "{led}: {r}"
        );
    }
    // The same ledger spelled with ?host= (no port) and with the user in the query.
    let sock = pg.socket_dir().display().to_string();
    for (i, led) in [
        format!("postgres://postgres@/{db}?host={sock}"),
        format!("postgres:///{db}?host={sock}/&user=postgres"),
    ]
    .iter()
    .enumerate()
    {
        assert_exit(&invoke(&env, &tok, led, &format!("spelling{i}")), 0);
    }
    assert_eq!(report(&env, &url)["settled"].as_str(), Some("2"));
    assert_eq!(report(&env, &other)["settled"].as_str(), Some("0"));
}

/// L14 and the mission's identity (DEC-MIS-15): `world mission --session` acts as the AGENT
/// only in the ledger (or store) the session was bound to, and a mission re-created under
/// the bound id in a ledger re-initialised at the bound path is not taken for the bound one.
#[test]
fn a_session_acts_only_on_the_ledger_and_mission_it_was_bound_to() {
    let dir = tempfile::tempdir().unwrap();
    let led = dir.path().join("led.db").display().to_string();
    let led2 = dir.path().join("led2.db").display().to_string();
    let (env, tok) = setup(&led, "5");
    let cfg = env.root.join("limits.json").display().to_string();
    env.ok(&[
        "limits", "init", "--config", &cfg, "--yes", "--ledger", &led2,
    ]);
    env.create_mission(Some(&led2), "Workspace.Read", "worktree", "100", "3");
    let t = tok.display().to_string();
    let admit = |ledger: Option<&str>, attempt: &str| {
        let mut a = vec!["mission"];
        if let Some(l) = ledger {
            a.extend(["--ledger", l]);
        }
        a.extend([
            "admit",
            "m",
            "--run",
            "r",
            "--operation",
            attempt,
            "--attempt",
            attempt,
            "--grant",
            "g",
            "--subject",
            "agent",
            "--capability",
            "Workspace.Read",
            "--resource",
            "worktree",
            "--amount",
            "1",
            "--session",
            &t,
        ]);
        env.run(&a)
    };
    // Another ledger file holding a mission m: refused, nothing journaled there.
    let n2 = json_lines(&env.ok(&["--json", "mission", "--ledger", &led2, "log", "m"])).len();
    let o = admit(Some(&led2), "ax");
    assert_exit(&o, 1);
    assert!(stderr(&o).contains("not in --ledger"), "{}", stderr(&o));
    assert_eq!(
        json_lines(&env.ok(&["--json", "mission", "--ledger", &led2, "log", "m"])).len(),
        n2
    );
    // The store file (no ledger): refused, naming the ledger.
    let o = admit(None, "ay");
    assert_exit(&o, 1);
    assert!(stderr(&o).contains("is in the ledger"), "{}", stderr(&o));
    // The bound ledger: accepted as the AGENT.
    assert_exit(&admit(Some(&led), "az"), 0);
    // The bound ledger re-initialised at the same path with a mission m created anew (another
    // creation time): invoke and `mission --session` refuse it.
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{led}{suffix}"));
    }
    env.ok(&[
        "limits", "init", "--config", &cfg, "--yes", "--ledger", &led,
    ]);
    let contract = env.root.join("contract.json").display().to_string();
    env.ok(&[
        "mission",
        "--ledger",
        &led,
        "create",
        "--contract",
        &contract,
        "--yes",
        "--now",
        "5",
    ]);
    let o = invoke(&env, &tok, &led, "recreated");
    assert_exit(&o, 1);
    assert!(
        stderr(&o).contains("is not the mission the episode was bound to"),
        "{}",
        stderr(&o)
    );
    let o = admit(Some(&led), "aw");
    assert_exit(&o, 1);
    assert!(
        stderr(&o).contains("is not the mission the episode was bound to"),
        "{}",
        stderr(&o)
    );
}
