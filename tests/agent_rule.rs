//! The one rule for acting as a session's agent (issue 28, DEC-ARCH-11): `world invoke`,
//! `world limits --session` and `world mission --session` refuse an expired, revoked or unknown
//! credential with the same answer — `session: <why>`, exit 1, an authentication failure —
//! and write nothing (no `allowed=false` ledger verdict, no mission journal entry).

use std::path::{Path, PathBuf};

use serde_json::Value;

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/limits/example.json");

/// A store with a limits ledger and a 60-second session for episode `run`, its token in `tok`.
fn setup() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let run = |args: &[&str]| {
        let out = crate::common::world_in_repo(&db)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "world {args:?}: {out:?}");
    };
    run(&["genesis", "-q"]);
    run(&[
        "limits", "init", "--config", EXAMPLE, "--yes", "--now", "0", "-q",
    ]);
    let tok = dir.path().join("tok");
    let tok_s = tok.display().to_string();
    run(&[
        "session",
        "mint",
        "--episode",
        "run",
        "--grant",
        "Workspace.Read=worktree:5",
        "--ttl",
        "60",
        "--out",
        &tok_s,
        "--yes",
        "-q",
    ]);
    (dir, tok)
}

/// Every table's rows, to show a refusal wrote nothing.
fn fingerprint(db: &Path) -> Vec<(String, i64)> {
    let c = rusqlite::Connection::open(db).unwrap();
    let names: Vec<String> = c
        .prepare("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    names
        .into_iter()
        .map(|n| {
            let k = c
                .query_row(&format!("SELECT count(*) FROM \"{n}\""), [], |r| r.get(0))
                .unwrap();
            (n, k)
        })
        .collect()
}

/// The three front ends acting as the session's agent, each at Unix second `now`; returns
/// (exit code, the JSON error envelope's `error`) per front end.
fn three(db: &Path, tok: &Path, now: i64) -> Vec<(&'static str, i32, Value)> {
    let tok = tok.display().to_string();
    let cases: [(&'static str, Vec<&str>); 3] = [
        ("invoke", vec!["invoke", "echo", "--session", &tok]),
        (
            "limits",
            vec![
                "limits",
                "stop",
                "--scope",
                "run",
                "--reason",
                "x",
                "--session",
                &tok,
            ],
        ),
        (
            "mission",
            vec!["mission", "revoke", "m", "--grant", "g", "--session", &tok],
        ),
    ];
    cases
        .into_iter()
        .map(|(name, args)| {
            let out = crate::common::world_in_repo(db)
                .arg("--json")
                .args(&args)
                .env("WORLD_TEST_NOW", now.to_string())
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            let v: Value = serde_json::from_str(text.trim())
                .unwrap_or_else(|e| panic!("{name}: {e}: {text} / {out:?}"));
            (name, out.status.code().unwrap_or(-1), v["error"].clone())
        })
        .collect()
}

fn assert_same(answers: &[(&str, i32, Value)], message: &str) {
    for (name, code, err) in answers {
        assert_eq!(*code, 1, "{name}: {err}");
        assert_eq!(err["message"], message, "{name}: {err}");
        assert_eq!(err["code"], "failed", "{name}: {err}");
    }
}

#[test]
fn an_expired_session_gets_one_answer_from_every_front_end() {
    let (dir, tok) = setup();
    let db = dir.path().join("w.db");
    let before = fingerprint(&db);
    let later = crate::common::TEST_NOW + 3600;
    let answers = three(&db, &tok, later);
    assert_same(&answers, "session: session credential has expired");
    assert_eq!(fingerprint(&db), before, "a refused session wrote nothing");
}

#[test]
fn revoked_and_unknown_sessions_get_one_answer_from_every_front_end() {
    let (dir, tok) = setup();
    let db = dir.path().join("w.db");
    let now = crate::common::TEST_NOW;
    let stranger = dir.path().join("stranger");
    std::fs::write(&stranger, "b".repeat(64)).unwrap();
    std::fs::set_permissions(
        &stranger,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    let before = fingerprint(&db);
    assert_same(
        &three(&db, &stranger, now),
        "session: unknown session credential",
    );
    assert_eq!(fingerprint(&db), before);
    let out = crate::common::world_in_repo(&db)
        .args(["session", "revoke", "--episode", "run", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let before = fingerprint(&db);
    assert_same(
        &three(&db, &tok, now),
        "session: session credential has been revoked",
    );
    assert_eq!(fingerprint(&db), before);
}
