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
    world::store::markers::store_id(&env.conn())
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
    // Each paired attempt is its own operation (DEC-MIS-18).
    assert_eq!(admit["operationId"], attempt);
    assert_eq!(admit["action"]["capability"], "Workspace.Read");
    // The intent's transaction stored the attempt marker.
    assert_eq!(
        env.objects_of(world::store::markers::MISSION_ATTEMPT_SEMANTIC_ID)
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
        link: world::ledger::paired::StoreLink::new(sid.clone()),
        implicit_clock: true,
    };
    // The invocations ran on the system clock; the mission never accepts an earlier `now`.
    let now: u128 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let admit = |intent: &str| -> world::mission::Admit {
        let attempt = s.new_attempt(intent).unwrap();
        let c = json!({"type": "admit", "runId": "r", "operationId": world::mission::pairing::operation_id(&attempt),
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
            &world::mission::durable::Request::new(world::mission::Command::Admit(Box::new(a))),
            &world::mission::Actor::host(),
            world::ledger::Amount(now),
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
    // Again: nothing left to do, nothing changes — but the UNKNOWN attempt still awaits a
    // person, so the command lists it and exits 5 (F8), with the `world:` prefix on warnings.
    let rev = r["revision"].clone();
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
    let held = json_lines(&String::from_utf8_lossy(&o.stdout));
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(held[0]["action"], "held", "{held:?}");
    assert_eq!(held[0]["status"], "UNKNOWN", "{held:?}");
    assert!(
        stderr(&o).contains("stay held until a person"),
        "{}",
        stderr(&o)
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

fn system_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
}

/// F1 (DEC-MIS-17): the mission's `now` of a call on the system clock is `max(clock,
/// lastNow)`, read under the mission's lock — an operator's `--now` an hour ahead does not
/// freeze paired invokes or `world mission` commands without `--now`, and six stores invoking
/// at once against one mission are never refused `TIME_REGRESSED`. A given `--now` is still
/// checked as given.
fn an_implicit_clock_never_regresses(led: &str) {
    let (env, tok) = setup(led, "100");
    let ahead = (system_ms() + 3_600_000).to_string();
    env.ok(&[
        "mission",
        "--ledger",
        led,
        "start-run",
        "m",
        "--run",
        "r2",
        "--now",
        &ahead,
    ]);
    assert_exit(&invoke(&env, &tok, led, "t0"), 0);
    let r = report(&env, led);
    assert_eq!(
        (r["settled"].as_str(), r["reserved"].as_str()),
        (Some("1"), Some("0")),
        "{r}"
    );
    // `world mission` without --now takes lastNow too (its authorization check moves with it).
    env.ok(&[
        "mission",
        "--ledger",
        led,
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
        "Workspace.Read",
        "--resource",
        "worktree",
        "--amount",
        "1",
    ]);
    env.ok(&["mission", "--ledger", led, "release", "m", "--attempt", "a"]);
    // A given --now behind lastNow is still refused.
    let now = system_ms().to_string();
    let o = env.run(&[
        "mission",
        "--ledger",
        led,
        "start-run",
        "m",
        "--run",
        "r3",
        "--now",
        &now,
    ]);
    assert_exit(&o, 4);
    assert!(
        stderr(&o).contains("TIME_REGRESSED")
            || String::from_utf8_lossy(&o.stdout).contains("TIME_REGRESSED")
    );

    // Other hosts: six stores bound to the same mission invoke at once, twice.
    let hosts: Vec<(Env, PathBuf)> = (0..6)
        .map(|_| {
            let h = Env::new();
            std::fs::write(h.ws.join("ep1/x"), "x\n").unwrap();
            let t = h.mint_for_mission("ep1", &["Workspace.Read=worktree:100"], Some(led), &[]);
            (h, t)
        })
        .collect();
    for round in 0..2 {
        let children: Vec<_> = hosts
            .iter()
            .map(|(h, t)| {
                let t = t.display().to_string();
                h.std_cmd(&[
                    "invoke",
                    "probe",
                    "--session",
                    &t,
                    "--args",
                    READ,
                    "--ledger",
                    led,
                ])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
            })
            .collect();
        for c in children {
            let o = c.wait_with_output().unwrap();
            assert_eq!(o.status.code(), Some(0), "round {round}: {}", stderr(&o));
            assert!(
                !stderr(&o).contains("did not record"),
                "round {round}: {}",
                stderr(&o)
            );
        }
    }
    let r = report(&env, led);
    assert_eq!(
        (r["settled"].as_str(), r["reserved"].as_str()),
        (Some("13"), Some("0")),
        "{r}"
    );
    assert_eq!(r["outstanding"], json!([]), "{r}");
    assert_exit(&env.run(&["mission", "--ledger", led, "verify"]), 0);
}

#[test]
fn an_implicit_clock_never_regresses_on_a_ledger_file() {
    let dir = tempfile::tempdir().unwrap();
    let led = dir.path().join("led.db").display().to_string();
    an_implicit_clock_never_regresses(&led);
}

#[test]
fn an_implicit_clock_never_regresses_on_postgres() {
    let Some(pg) = pgtest::server("an_implicit_clock_never_regresses_on_postgres") else {
        return;
    };
    an_implicit_clock_never_regresses(&pg.fresh_db());
}

/// A mission store that refuses every dispatch (after another process advanced the mission's
/// clock, as F1 did), and optionally fails every release: the two ways a refused dispatch
/// could leave its attempt ADMITTED (F2).
struct RefusingDispatch {
    inner: Box<dyn world::mission::durable::MissionStore>,
    fail_release: bool,
}

impl world::mission::durable::MissionStore for RefusingDispatch {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn create(
        &self,
        c: &world::mission::Contract,
        a: &world::mission::Actor,
        attended: bool,
        now: world::ledger::Amount,
    ) -> Result<world::mission::State, world::mission::durable::Error> {
        self.inner.create(c, a, attended, now)
    }
    fn apply(
        &self,
        mission_id: &str,
        r: &world::mission::durable::Request,
        a: &world::mission::Actor,
        now: world::ledger::Amount,
    ) -> Result<world::mission::durable::Applied, world::mission::durable::Error> {
        match &r.command {
            world::mission::Command::Dispatch { .. } => {
                // Another process records a later time, then this dispatch is refused.
                let later = world::ledger::Amount(now.0 + 5_000);
                let run = world::mission::Command::parse(br#"{"type":"startRun","runId":"other"}"#)
                    .unwrap();
                self.inner.apply(
                    mission_id,
                    &world::mission::durable::Request::new(run),
                    a,
                    later,
                )?;
                Err(world::mission::Rejection::new(
                    world::mission::Code::GrantNotLive,
                    "injected refusal",
                )
                .into())
            }
            world::mission::Command::Release { .. } if self.fail_release => Err(
                world::mission::durable::Error::Corrupt("injected release failure".into()),
            ),
            _ => self.inner.apply(mission_id, r, a, now),
        }
    }
    fn dry_run(
        &self,
        mission_id: &str,
        r: &world::mission::durable::Request,
        a: &world::mission::Actor,
        now: world::ledger::Amount,
    ) -> Result<world::mission::durable::Applied, world::mission::durable::Error> {
        self.inner.dry_run(mission_id, r, a, now)
    }
    fn state(
        &self,
        mission_id: &str,
    ) -> Result<world::mission::State, world::mission::durable::Error> {
        self.inner.state(mission_id)
    }
    fn list(
        &self,
    ) -> Result<Vec<world::mission::durable::Summary>, world::mission::durable::Error> {
        self.inner.list()
    }
    fn journal(
        &self,
        mission_id: &str,
    ) -> Result<Vec<world::mission::durable::JournalEntry>, world::mission::durable::Error> {
        self.inner.journal(mission_id)
    }
    fn verify(
        &self,
    ) -> Result<Vec<world::mission::durable::Problem>, world::mission::durable::Error> {
        self.inner.verify()
    }
    fn identity(&self) -> Result<String, world::mission::durable::Error> {
        self.inner.identity()
    }
    fn root(&self, mission_id: &str) -> Result<String, world::mission::durable::Error> {
        self.inner.root(mission_id)
    }
}

/// F2: after a refused dispatch the attempt is released — with the implicit clock even when
/// another process recorded a later time meanwhile; when the release fails anyway the
/// rejection names the attempt left ADMITTED and the command that releases it. Never silent.
#[test]
fn a_refused_dispatch_releases_its_attempt_or_says_what_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let led = dir.path().join("led.db").display().to_string();
    let (env, _tok) = setup(&led, "10");
    let sid = "store-0123456789abcdef".to_string();
    let standalone = |fail_release: bool| world::mission::pairing::Standalone {
        missions: Box::new(RefusingDispatch {
            inner: world::mission::ledger::open(&led).unwrap(),
            fail_release,
        }),
        mission_id: "m".into(),
        link: world::ledger::paired::StoreLink::new(sid.clone()),
        implicit_clock: true,
    };
    let admit = |s: &world::mission::pairing::Standalone, now: u128| {
        let attempt = s.new_attempt("effect:ep1:0").unwrap();
        let c = json!({"type": "admit", "runId": "r", "operationId": world::mission::pairing::operation_id(&attempt),
            "attemptId": attempt, "grantId": "g", "subject": "agent",
            "action": {"capability": "Workspace.Read", "resource": "worktree", "payload": {}, "preconditions": {}},
            "amount": "1", "authorizationCheckedAt": now.to_string(), "policy": "ALLOW", "mandatoryChecksOk": true});
        match world::mission::Command::parse(c.to_string().as_bytes()).unwrap() {
            world::mission::Command::Admit(a) => *a,
            other => panic!("{other:?}"),
        }
    };
    // The release succeeds although the mission's clock moved 5 s past this call's reading.
    let s = standalone(false);
    let now = system_ms();
    let e = s.admit_and_dispatch(admit(&s, now), now).unwrap_err();
    let r = e.rejection().expect("a rejection");
    assert_eq!(r.code, world::mission::Code::GrantNotLive);
    assert_eq!(r.detail("unreleasedAttempt"), None, "{}", r.human());
    let rep = report(&env, &led);
    assert_eq!(rep["reserved"], "0", "nothing held: {rep}");
    assert_eq!(rep["outstanding"], json!([]), "{rep}");
    assert_eq!(rep["attempts"]["released"], json!(1), "{rep}");
    // The release fails: the rejection says what is left and how to release it.
    let s = standalone(true);
    let now = system_ms();
    let a = admit(&s, now);
    let attempt = a.attempt_id.clone();
    let e = s.admit_and_dispatch(a, now).unwrap_err();
    let r = e.rejection().expect("a rejection");
    assert_eq!(r.detail("unreleasedAttempt"), Some(attempt.as_str()));
    let h = r.human();
    assert!(h.contains("injected release failure"), "{h}");
    assert!(
        h.contains(&format!(
            "world mission reconcile m --from-store --ledger {led}"
        )),
        "{h}"
    );
    let rep = report(&env, &led);
    assert_eq!(rep["reserved"], "1", "{rep}");
}

/// F7 (DEC-MIS-18): attempts stranded at one effect ordinal by crashes before the store
/// committed the intent (more than the contract's maxAttempts of 3) do not block the episode:
/// each paired attempt is its own operation.
#[test]
fn stranded_attempts_at_one_ordinal_do_not_exhaust_the_episode() {
    let dir = tempfile::tempdir().unwrap();
    let led = dir.path().join("led.db").display().to_string();
    let (env, tok) = setup(&led, "100");
    assert_exit(&invoke(&env, &tok, &led, "t0"), 0);
    let sid = store_id(&env);
    let s = world::mission::pairing::Standalone {
        missions: world::mission::ledger::open(&led).unwrap(),
        mission_id: "m".into(),
        link: world::ledger::paired::StoreLink::new(sid),
        implicit_clock: true,
    };
    for _ in 0..4 {
        // As the broker admits effect:ep1:1, then the process dies before the store commits.
        let attempt = s.new_attempt("effect:ep1:1").unwrap();
        let now = system_ms();
        let c = json!({"type": "admit", "runId": "r", "operationId": world::mission::pairing::operation_id(&attempt),
            "attemptId": attempt, "grantId": "g", "subject": "agent",
            "action": {"capability": "Workspace.Read", "resource": "worktree", "payload": {}, "preconditions": {}},
            "amount": "1", "authorizationCheckedAt": now.to_string(), "policy": "ALLOW", "mandatoryChecksOk": true});
        let world::mission::Command::Admit(a) =
            world::mission::Command::parse(c.to_string().as_bytes()).unwrap()
        else {
            panic!("not an admit")
        };
        s.admit_and_dispatch(*a, now).unwrap();
    }
    let o = env.run(&[
        "mission",
        "--ledger",
        &led,
        "reconcile",
        "m",
        "--from-store",
    ]);
    assert_exit(&o, 5); // four dispatched attempts without an intent: UNKNOWN, held
    for t in ["t1", "t2"] {
        let o = invoke(&env, &tok, &led, t);
        assert_exit(&o, 0);
    }
    let r = report(&env, &led);
    assert_eq!(r["settled"], "3", "{r}");
}

/// F11 (DEC-MIS-19): a paired invoke the mission refuses leaves a never-paired store
/// unchanged — the store-id object is written with the first effect intent, not before.
#[test]
fn a_refused_first_paired_invoke_leaves_the_store_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let led = dir.path().join("led.db").display().to_string();
    let (env, tok) = setup(&led, "5");
    env.ok(&["mission", "--ledger", &led, "revoke", "m", "--grant", "g"]);
    let before = env.fingerprint();
    let o = invoke(&env, &tok, &led, "t0");
    assert_exit(&o, 4);
    assert!(stderr(&o).contains("GRANT_REVOKED"), "{}", stderr(&o));
    assert_eq!(env.fingerprint(), before, "nothing written in the store");
    assert!(env
        .objects_of(world::store::markers::STORE_ID_SEMANTIC_ID)
        .is_empty());
    assert_eq!(world::store::markers::store_id(&env.conn()).unwrap(), None);
}

/// L12: a ledger file another process keeps locked is named, and both `world mission` and a
/// paired `invoke` exit 6 with a hint (a lock wait), the store unchanged.
#[test]
fn a_busy_ledger_file_is_named_and_exits_6() {
    let dir = tempfile::tempdir().unwrap();
    let led = dir.path().join("led.db").display().to_string();
    let (env, tok) = setup(&led, "5");
    let holder = rusqlite::Connection::open(&led).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let before = env.fingerprint();
    let o = invoke(&env, &tok, &led, "t0");
    assert_exit(&o, 6);
    let e = stderr(&o);
    let canon = std::fs::canonicalize(&led).unwrap().display().to_string();
    assert!(e.contains(&format!("ledger {canon} is busy")), "{e}");
    assert!(e.contains("hint"), "{e}");
    assert_eq!(env.fingerprint(), before, "nothing written in the store");
    let o = env.run(&["mission", "--ledger", &led, "start-run", "m", "--run", "rb"]);
    assert_exit(&o, 6);
    let e = stderr(&o);
    assert!(e.contains(&format!("ledger {led} is busy")), "{e}");
    assert!(!e.contains("the store is busy"), "{e}");
    holder.execute_batch("ROLLBACK").unwrap();
    assert_exit(&invoke(&env, &tok, &led, "t1"), 0);
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
