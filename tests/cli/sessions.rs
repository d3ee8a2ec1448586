//! Issue 16 §7: `session show` and `session list` say what budget remains per grant, as the
//! broker would seed it; `--all` adds expired and revoked credentials.

use crate::common::{Run, TestEnv, TEST_NOW};

/// Publish the fixture transitions (their paths are relative to the repository root).
fn publish(env: &TestEnv) {
    let repo = env!("CARGO_MANIFEST_DIR");
    let out = env
        .cmd()
        .current_dir(repo)
        .args([
            "publish",
            "--manifest",
            "fixtures/transitions/manifest.json",
            "--yes",
            "-q",
        ])
        .output()
        .expect("run publish");
    Run::from_output(out).ok();
}

fn mint(env: &TestEnv, file: &str, ttl: &str, grants: &[&str]) -> String {
    let out = env.path(file);
    let mut args = vec![
        "session",
        "mint",
        "--episode",
        "ep1",
        "--yes",
        "-q",
        "--ttl",
        ttl,
    ];
    for g in grants {
        args.extend(["--grant", g]);
    }
    let root = env.path("ws");
    args.extend(["--workspace-root", root.to_str().unwrap()]);
    args.extend(["--out", out.to_str().unwrap()]);
    env.run(&args).ok();
    let tok = std::fs::read_to_string(&out).unwrap().trim().to_string();
    crate::common::sha(tok.as_bytes())
        .trim_start_matches("sha256:")
        .to_string()
}

#[test]
fn show_and_list_give_the_remaining_budget_per_grant() {
    let env = TestEnv::new();
    env.genesis();
    publish(&env);
    std::fs::create_dir_all(env.path("ws/ep1")).unwrap();
    let id = mint(
        &env,
        "tok",
        "3600",
        &["world.apply=world:10", "Workspace.Write=worktree:3"],
    );
    let tok = env.path("tok");
    env.run(&[
        "invoke",
        "ailang-write",
        "--session",
        tok.to_str().unwrap(),
        "--args",
        r#"{"path":"a.txt","content":"x"}"#,
    ])
    .ok();
    // What the broker would decide next agrees with what `show` says remains.
    let check = env
        .run(&[
            "broker",
            "check",
            "--session",
            tok.to_str().unwrap(),
            "Workspace.Write",
            "worktree",
            "1",
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(check["budgetBefore"], 2, "{check}");
    // By a short prefix, as the list prints it.
    let v = env
        .run(&["session", "show", &id[..8], "--json"])
        .ok()
        .json();
    super::output::assert_schema("session", &v);
    assert_eq!(v["credentialId"], id.as_str());
    let write = v["budgets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["effect"] == "Workspace.Write")
        .expect("the Workspace.Write grant")
        .clone();
    assert_eq!(
        (
            write["budget"].as_i64(),
            write["spent"].as_i64(),
            write["remaining"].as_i64()
        ),
        (Some(3), Some(1), Some(2)),
        "{v}"
    );
    let text = env.run(&["session", "show", &id[..12]]).ok().stdout;
    assert!(text.contains(&id), "{text}");
    assert!(
        text.lines().any(|l| l.starts_with("Workspace.Write")
            && l.split_whitespace().collect::<Vec<_>>()[2..5] == ["3", "1", "2"]),
        "{text}"
    );
    // The list shows the remainder too, with a 12-hex id that `show` takes back.
    let list = env.run(&["session", "list"]).ok().stdout;
    assert!(list.contains("Workspace.Write=worktree:2/3"), "{list}");
    assert!(list.contains(&id[..12]) && !list.contains(&id), "{list}");
    for row in env.run(&["session", "list", "--json"]).ok().json_lines() {
        super::output::assert_schema("session", &row);
    }
    // Unknown and malformed ids are refused with the envelope's codes.
    let r = env.run(&["session", "show", "abcdef", "--json"]).code(1);
    assert_eq!(r.json()["error"]["code"], "not_found");
    let r = env.run(&["session", "show", "xyz", "--json"]).code(1);
    assert_eq!(r.json()["error"]["code"], "bad_ref");
}

#[test]
fn list_shows_live_credentials_and_all_adds_expired_and_revoked() {
    let env = TestEnv::new();
    env.genesis();
    let short = mint(&env, "short.tok", "10", &["world.apply=world:1"]);
    let long = mint(&env, "long.tok", "3600", &["world.apply=world:1"]);
    let gone = mint(&env, "gone.tok", "3600", &["world.apply=world:1"]);
    env.run(&["session", "revoke", &gone]).ok();
    let later = (TEST_NOW + 60).to_string();
    let list = |all: bool| -> Vec<serde_json::Value> {
        let mut c = env.cmd();
        c.env("WORLD_TEST_NOW", &later)
            .args(["session", "list", "--json"]);
        if all {
            c.arg("--all");
        }
        Run::from_output(c.output().unwrap()).ok().json_lines()
    };
    let live = list(false);
    assert_eq!(live.len(), 1, "{live:?}");
    assert_eq!(live[0]["credentialId"], long.as_str());
    let every = list(true);
    let state = |id: &str| {
        every
            .iter()
            .find(|r| r["credentialId"] == id)
            .map(|r| r["state"].clone())
    };
    assert_eq!(every.len(), 3, "{every:?}");
    assert_eq!(state(&short), Some("expired".into()));
    assert_eq!(state(&gone), Some("revoked".into()));
    // `show` finds expired and revoked credentials too.
    let v = env.run(&["session", "show", &gone, "--json"]).ok().json();
    assert_eq!(v["state"], "revoked");
}
