//! Broker pairing with the limits ledger in the store file (limits.md §9, issue 7 part 6):
//! every allowed effect reserves and dispatches in its intent's transaction and settles in its
//! outcome's; a ledger rejection rolls the whole transaction back, exits 4, commits nothing.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn db(&self) -> PathBuf {
        self.dir.path().join("w.db")
    }
    fn world(&self) -> Command {
        crate::common::world_in_repo(&self.db())
    }
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let o = self.world().args(args).output().unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into(),
            String::from_utf8_lossy(&o.stderr).into(),
        )
    }
    fn count(&self, sql: &str) -> i64 {
        let c = rusqlite::Connection::open(self.db()).unwrap();
        c.query_row(sql, [], |r| r.get(0)).unwrap()
    }
}

fn setup(cost_bound: &str) -> Env {
    let e = Env {
        dir: tempfile::tempdir().unwrap(),
    };
    let ws = e.dir.path().join("ws");
    std::fs::create_dir_all(ws.join("ep1")).unwrap();
    std::fs::write(ws.join("ep1/notes.txt"), "a\nb\n").unwrap();
    assert_eq!(e.run(&["genesis", "-q"]).0, 0);
    assert_eq!(
        e.run(&[
            "publish",
            "--manifest",
            "fixtures/transitions/manifest.json",
            "--yes",
            "-q"
        ])
        .0,
        0
    );
    let cfg = e.dir.path().join("cfg.json");
    std::fs::write(
        &cfg,
        format!(
            r#"{{"profile":"aiws-limits/1","ledgerId":"demo","unit":"calls","scopes":[
            {{"scopeId":"wo","kind":"WORK_ORDER","parentId":null,"limits":{{"cost":"{cost_bound}","handoff":null,"activeMs":null,"elapsedMs":null,"attempts":null}},"dependsOn":[]}},
            {{"scopeId":"ep1","kind":"RUN","parentId":"wo","limits":{{"cost":null,"handoff":null,"activeMs":null,"elapsedMs":null,"attempts":null}},"dependsOn":[]}}]}}"#
        ),
    )
    .unwrap();
    assert_eq!(
        e.run(&[
            "limits",
            "init",
            "--config",
            cfg.to_str().unwrap(),
            "--yes",
            "--now",
            "1700000000000"
        ])
        .0,
        0
    );
    let tok = e.dir.path().join("tok");
    let (code, _, err) = e.run(&[
        "session",
        "mint",
        "--episode",
        "ep1",
        "--grant",
        "Workspace.Read=worktree:10",
        "--workspace-root",
        ws.to_str().unwrap(),
        "--limits-scope",
        "ep1",
        "--yes",
        "--out",
        tok.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    e
}

fn tok(e: &Env) -> String {
    e.dir.path().join("tok").display().to_string()
}

#[test]
fn allowed_effects_reserve_and_settle_in_the_ledger() {
    let e = setup("5");
    for _ in 0..2 {
        let (code, out, err) = e.run(&[
            "invoke",
            "readcount",
            "--session",
            &tok(&e),
            "--args",
            r#"{"path":"notes.txt"}"#,
        ]);
        assert_eq!(code, 0, "{out}{err}");
    }
    let (_, report, _) = e.run(&["limits", "report", "--json", "--now", "1700000000000"]);
    let v: serde_json::Value = serde_json::from_str(&report).unwrap();
    let wo = v["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["scopeId"] == "wo")
        .unwrap();
    assert_eq!(
        wo["usage"]["cost"], "2",
        "two effects of cost 1 settled at their cost"
    );
    assert_eq!(wo["usage"]["attempts"], "2");
    assert!(
        v["outstanding"].as_array().unwrap().is_empty(),
        "settled attempts are not outstanding: {report}"
    );
    assert!(Path::new(&e.db()).exists());
    assert_eq!(e.run(&["verify", "-q"]).0, 0);
}

#[test]
fn a_ledger_rejection_rolls_back_and_commits_nothing() {
    let e = setup("1");
    assert_eq!(
        e.run(&[
            "invoke",
            "readcount",
            "--session",
            &tok(&e),
            "--args",
            r#"{"path":"notes.txt"}"#
        ])
        .0,
        0
    );
    let entries = e.count("SELECT count(*) FROM log_entries");
    let objects = e.count("SELECT count(*) FROM objects");
    let journal = e.count("SELECT count(*) FROM journal");
    let events = e.count("SELECT count(*) FROM limits_events");
    let (code, _, err) = e.run(&[
        "invoke",
        "readcount",
        "--session",
        &tok(&e),
        "--args",
        r#"{"path":"notes.txt"}"#,
        "--invocation-id",
        "over",
    ]);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("cost_exhausted"), "{err}");
    assert_eq!(
        e.count("SELECT count(*) FROM log_entries"),
        entries,
        "nothing committed"
    );
    assert_eq!(
        e.count("SELECT count(*) FROM objects"),
        objects,
        "no request, record or marker written"
    );
    assert_eq!(
        e.count("SELECT count(*) FROM journal"),
        journal,
        "no intent: no spend"
    );
    assert_eq!(
        e.count("SELECT count(*) FROM limits_events"),
        events,
        "the ledger rolled back too"
    );
    // Nothing ran, so the same id may be sent again (and is refused again the same way).
    let (code, _, _) = e.run(&["receipt", "cli:ep1:over"]);
    assert_eq!(code, 1, "not-started exits 1 (DEC-CLI-18)");
    assert_eq!(e.run(&["verify", "-q"]).0, 0);
}
