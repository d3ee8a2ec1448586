//! Broker pairing with a finite-v1 mission (missions.md §7, issue 15 part 5): an episode
//! minted with `--mission M --mission-run R --mission-grant G` admits and dispatches every
//! allowed effect in its intent's transaction and settles it with the outcome; a mission
//! rejection rolls the whole transaction back (exit 4, nothing committed); with a limits scope
//! also bound, the ledger reserves first.

use std::path::PathBuf;

use serde_json::{json, Value};

const NOW_MS: &str = "1700000000000";

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn db(&self) -> PathBuf {
        self.dir.path().join("w.db")
    }
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let o = crate::common::world_in_repo(&self.db())
            .args(args)
            .output()
            .unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into(),
            String::from_utf8_lossy(&o.stderr).into(),
        )
    }
    fn ok(&self, args: &[&str]) -> String {
        let (code, out, err) = self.run(args);
        assert_eq!(code, 0, "world {args:?}\n{out}{err}");
        out
    }
    fn count(&self, sql: &str) -> i64 {
        let c = rusqlite::Connection::open(self.db()).unwrap();
        c.query_row(sql, [], |r| r.get(0)).unwrap()
    }
    fn report(&self) -> Value {
        serde_json::from_str(&self.ok(&["--json", "mission", "report", "m", "--now", NOW_MS]))
            .unwrap()
    }
    fn tok(&self) -> String {
        self.dir.path().join("tok").display().to_string()
    }
    fn invoke(&self, id: &str) -> (i32, String, String) {
        self.run(&[
            "invoke",
            "readcount",
            "--session",
            &self.tok(),
            "--args",
            r#"{"path":"notes.txt"}"#,
            "--invocation-id",
            id,
        ])
    }
}

/// A store with the fixture transitions, a mission `m` of budget `budget` (run r, grant g for
/// Workspace.Read on worktree), and a session for episode ep1 paired with it (and with limits
/// scope ep1 of cost bound `ledger` when given).
fn setup(budget: &str, ledger: Option<&str>) -> Env {
    let e = Env {
        dir: tempfile::tempdir().unwrap(),
    };
    let ws = e.dir.path().join("ws");
    std::fs::create_dir_all(ws.join("ep1")).unwrap();
    std::fs::write(ws.join("ep1/notes.txt"), "a\nb\n").unwrap();
    e.ok(&["genesis", "-q"]);
    e.ok(&[
        "publish",
        "--manifest",
        "fixtures/transitions/manifest.json",
        "--yes",
        "-q",
    ]);
    let contract = json!({"id": "c", "missionId": "m", "aiwsEdition": "0.4", "profile": "finite-v1",
        "budget": budget, "deadline": "4102444800000", "criteria": ["review"],
        "actions": ["Workspace.Read"], "resources": ["worktree"], "requiresApproval": false,
        "maxAttempts": "1", "maxAuthorizationAgeMs": "60000", "features": []});
    let c = e.dir.path().join("contract.json");
    std::fs::write(&c, contract.to_string()).unwrap();
    e.ok(&[
        "mission",
        "create",
        "--contract",
        c.to_str().unwrap(),
        "--yes",
        "--now",
        NOW_MS,
    ]);
    e.ok(&["mission", "start-run", "m", "--run", "r", "--now", NOW_MS]);
    e.ok(&[
        "mission",
        "grant",
        "m",
        "--id",
        "g",
        "--subject",
        "agent",
        "--action",
        "Workspace.Read",
        "--resource",
        "worktree",
        "--expires-at",
        "4102444800000",
        "--limit",
        budget,
        "--now",
        NOW_MS,
    ]);
    let mut mint = vec![
        "session",
        "mint",
        "--episode",
        "ep1",
        "--grant",
        "Workspace.Read=worktree:10",
        "--yes",
    ];
    let root = ws.display().to_string();
    let tok = e.tok();
    mint.extend([
        "--workspace-root",
        &root,
        "--out",
        &tok,
        "--mission",
        "m",
        "--mission-run",
        "r",
        "--mission-grant",
        "g",
    ]);
    if let Some(bound) = ledger {
        let cfg = e.dir.path().join("cfg.json");
        std::fs::write(&cfg, format!(r#"{{"profile":"aiws-limits/1","ledgerId":"demo","unit":"calls","scopes":[
            {{"scopeId":"ep1","kind":"WORK_ORDER","parentId":null,"limits":{{"cost":"{bound}","handoff":null,"activeMs":null,"elapsedMs":null,"attempts":null}},"dependsOn":[]}}]}}"#)).unwrap();
        e.ok(&[
            "limits",
            "init",
            "--config",
            cfg.to_str().unwrap(),
            "--yes",
            "--now",
            NOW_MS,
        ]);
        mint.extend(["--limits-scope", "ep1"]);
    }
    e.ok(&mint);
    e
}

#[test]
fn allowed_effects_are_admitted_dispatched_and_settled_in_the_mission() {
    let e = setup("5", None);
    for id in ["one", "two"] {
        let (code, out, err) = e.invoke(id);
        assert_eq!(code, 0, "{out}{err}");
    }
    let r = e.report();
    assert_eq!(
        (r["reserved"].as_str(), r["settled"].as_str()),
        (Some("0"), Some("2")),
        "{r}"
    );
    assert_eq!(r["attempts"]["settled"], json!(2));
    assert_eq!(r["grants"][0]["used"], json!("2"));
    let log = e.ok(&["--json", "mission", "log", "m"]);
    let cmds: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect();
    let admit = cmds
        .iter()
        .find(|c| c["command"]["type"] == "admit")
        .unwrap();
    assert_eq!(
        admit["command"]["action"]["capability"],
        json!("Workspace.Read")
    );
    assert_eq!(admit["command"]["action"]["resource"], json!("worktree"));
    assert!(
        admit["command"]["attemptId"]
            .as_str()
            .unwrap()
            .starts_with("effect:ep1:"),
        "{admit}"
    );
    let types: Vec<&str> = cmds
        .iter()
        .map(|c| c["command"]["type"].as_str().unwrap())
        .collect();
    assert_eq!(&types[types.len() - 3..], ["admit", "dispatch", "settle"]);
    assert_eq!(e.run(&["verify", "-q"]).0, 0);
}

#[test]
fn a_mission_rejection_stops_the_invocation_and_commits_nothing() {
    let e = setup("1", None);
    assert_eq!(e.invoke("first").0, 0);
    let before = [
        e.count("SELECT count(*) FROM log_entries"),
        e.count("SELECT count(*) FROM objects"),
        e.count("SELECT count(*) FROM journal"),
        e.count("SELECT count(*) FROM mission_journal"),
    ];
    let (code, out, err) = e.invoke("over");
    assert_eq!(code, 4, "{out}{err}");
    assert!(
        err.contains("BUDGET_EXHAUSTED budget=1 reserved=0 settled=1 requested=1"),
        "{err}"
    );
    let after = [
        e.count("SELECT count(*) FROM log_entries"),
        e.count("SELECT count(*) FROM objects"),
        e.count("SELECT count(*) FROM journal"),
        e.count("SELECT count(*) FROM mission_journal"),
    ];
    assert_eq!(
        before, after,
        "no entry, object, effect intent or mission journal row"
    );
    assert_eq!(
        e.run(&["receipt", "cli:ep1:over"]).0,
        1,
        "not-started exits 1 (DEC-CLI-18)"
    );
    assert_eq!(e.run(&["verify", "-q"]).0, 0);
}

#[test]
fn with_a_limits_scope_the_ledger_reserves_first_and_rolls_back_with_the_mission() {
    let e = setup("1", Some("5"));
    assert_eq!(e.invoke("first").0, 0);
    let events = e.count("SELECT count(*) FROM limits_events");
    assert!(events >= 4, "init + reserve, dispatch, settle");
    let (code, _, err) = e.invoke("over");
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains("BUDGET_EXHAUSTED"),
        "the mission refused after the ledger reserved: {err}"
    );
    assert_eq!(
        e.count("SELECT count(*) FROM limits_events"),
        events,
        "the ledger's reservation rolled back too"
    );
    // The other way round: the ledger refuses first, and the mission never sees the effect.
    let e = setup("5", Some("1"));
    assert_eq!(e.invoke("first").0, 0);
    let journal = e.count("SELECT count(*) FROM mission_journal");
    let (code, _, err) = e.invoke("over");
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("cost_exhausted"), "{err}");
    assert_eq!(e.count("SELECT count(*) FROM mission_journal"), journal);
    assert_eq!(e.run(&["verify", "-q"]).0, 0);
}

#[test]
fn mint_refuses_a_binding_to_a_missing_mission_run_or_grant() {
    let e = setup("5", None);
    for (m, r, g) in [("nope", "r", "g"), ("m", "nope", "g"), ("m", "r", "nope")] {
        let out = e.dir.path().join(format!("t-{m}-{r}-{g}"));
        let (code, _, err) = e.run(&[
            "session",
            "mint",
            "--episode",
            "ep2",
            "--grant",
            "Workspace.Read=worktree:1",
            "--yes",
            "--out",
            out.to_str().unwrap(),
            "--mission",
            m,
            "--mission-run",
            r,
            "--mission-grant",
            g,
        ]);
        assert_eq!(code, 1, "{err}");
        assert!(!out.exists());
    }
}

/// DEC-PAIRING-1: the limits scope in a ledger file (`invoke --ledger F`), the mission in the
/// store file. The one pairing loop holds both first (the ledger reserves, the mission admits)
/// and dispatches the store's mission before the standalone ledger, so a mission refusal
/// finds the ledger's attempt RESERVED and releases it: nothing is left half-applied in
/// either database. (Before the loop the ledger dispatched first, and a mission refusal left
/// its attempt DISPATCHED with no intent in the store.)
#[test]
fn a_mission_in_the_store_refusing_releases_the_ledger_files_reservation() {
    let e = setup("1", Some("5"));
    let led = e.dir.path().join("led.db").display().to_string();
    let cfg = e.dir.path().join("cfg.json").display().to_string();
    e.ok(&[
        "limits", "init", "--config", &cfg, "--yes", "--now", NOW_MS, "--ledger", &led,
    ]);
    let invoke = |id: &str| {
        e.run(&[
            "invoke",
            "readcount",
            "--session",
            &e.tok(),
            "--args",
            r#"{"path":"notes.txt"}"#,
            "--invocation-id",
            id,
            "--ledger",
            &led,
        ])
    };
    let limits = || -> Value {
        serde_json::from_str(&e.ok(&["limits", "report", "--json", "--ledger", &led])).unwrap()
    };
    let (code, _, err) = invoke("first");
    assert_eq!(code, 0, "{err}");
    let l0 = limits();
    assert_eq!(l0["outstanding"], json!([]), "settled: {l0}");
    assert_eq!(l0["scopes"][0]["usage"]["cost"], "1", "{l0}");
    let journal = e.count("SELECT count(*) FROM mission_journal");
    let intents = e.count("SELECT count(*) FROM journal");
    let (code, _, err) = invoke("over");
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("BUDGET_EXHAUSTED"), "{err}");
    let r = limits();
    assert_eq!(
        r["outstanding"],
        json!([]),
        "the ledger's reservation was released, never dispatched: {r}"
    );
    assert_eq!(r["scopes"][0]["usage"]["cost"], "1", "{r}");
    assert_ne!(
        r["revision"], l0["revision"],
        "the ledger reserved (and released) before the mission refused: {r}"
    );
    assert_eq!(e.count("SELECT count(*) FROM mission_journal"), journal);
    assert_eq!(e.count("SELECT count(*) FROM journal"), intents);
    assert_eq!(e.run(&["verify", "-q"]).0, 0);
}
