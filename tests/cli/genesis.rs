//! `world genesis` and genesis commits: store creation, refusal when a head exists, file modes.

use std::os::unix::fs::PermissionsExt;

use crate::common::{genesis_body, sha, TestEnv};

#[test]
fn genesis_creates_the_store_and_commits_entry_zero() {
    let env = TestEnv::new();
    assert!(!env.db.exists());
    let r = env.run(&["genesis"]).ok();
    let head = r.stdout.trim().to_string();
    assert!(head.starts_with("sha256:") && head.len() == 71, "{r:#?}");
    assert!(
        r.stderr.contains("genesis world committed at entry 0"),
        "{r:#?}"
    );
    let tip = env.tip();
    assert_eq!(tip.head, head);
    assert_eq!(tip.next_index, 1);
    // The deterministic genesis of DEC-STORE-3: goal `{}`, prev = sha256(""), world:genesis.
    let e = env.run(&["log", "get", "0", "--json"]).ok().json();
    assert_eq!(e["header"]["prevEntryHash"], sha(b""));
    assert_eq!(e["header"]["writtenBy"], "world:genesis");
    assert_eq!(e["header"]["transitionFn"], sha(b"{}"));
    assert_eq!(e["transitionRef"], sha(b"{}"));
    env.verify_ok();
}

#[test]
fn genesis_is_deterministic_across_stores() {
    let a = TestEnv::new();
    let b = TestEnv::new();
    assert_eq!(a.genesis(), b.genesis());
    assert_eq!(a.snapshot(), b.snapshot());
}

#[test]
fn genesis_json_names_head_entry_and_goal() {
    let env = TestEnv::new();
    let goal = env.write("goal.json", b"{\"goal\":\"ship\"}");
    let v = env
        .run(&["genesis", "--json", "--goal-file", goal.to_str().unwrap()])
        .ok()
        .json();
    assert_eq!(v["entryIndex"], 0);
    assert_eq!(v["goal"], sha(b"{\"goal\":\"ship\"}"));
    assert_eq!(v["selectedHead"], env.tip().head.as_str());
    let obj = env
        .run(&["object", "get", v["goal"].as_str().unwrap(), "--payload"])
        .ok();
    assert_eq!(obj.raw_stdout, b"{\"goal\":\"ship\"}");
}

#[test]
fn second_genesis_is_refused_and_changes_nothing() {
    let env = TestEnv::new();
    env.genesis();
    let before = env.snapshot();
    let r = env.run(&["genesis"]).code(1);
    let line = r.one_line_error();
    assert!(line.contains("already has a selected head"), "{line}");
    assert_eq!(env.snapshot(), before);
    env.verify_ok();
}

#[test]
fn a_genesis_commit_body_may_create_the_store() {
    let env = TestEnv::new();
    let body = genesis_body("g");
    env.commit_ok(&body);
    assert_eq!(env.tip().head, body.world_ref);
    env.verify_ok();
}

#[test]
fn a_non_genesis_commit_never_creates_the_store() {
    let env = TestEnv::new();
    let mut body = genesis_body("g");
    body.json["observedHead"] = serde_json::json!(sha(b"some-head"));
    let r = env.commit(&body).code(1);
    let line = r.one_line_error();
    assert!(line.contains("does not exist"), "{line}");
    assert!(!env.db.exists(), "no store file may be created");
}

#[test]
fn a_genesis_commit_on_a_store_with_a_head_is_a_conflict() {
    let env = TestEnv::new();
    let tip = env.genesis();
    let before = env.snapshot();
    let r = env.commit(&genesis_body("late")).code(1);
    r.one_line_error();
    assert!(
        r.stdout.contains(&tip.head),
        "both heads are printed: {r:#?}"
    );
    assert_eq!(env.snapshot(), before);
}

/// The store file and its lock file are 0600 even when the umask would allow more.
#[test]
fn store_and_lock_files_are_mode_0600() {
    let env = TestEnv::new();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("umask 000; exec \"$0\" genesis")
        .arg(crate::common::world_bin())
        .env_clear()
        .env("WORLD_DB", &env.db)
        .env("NO_COLOR", "1")
        .output()
        .expect("run sh");
    assert!(out.status.success(), "{out:?}");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&env.db), 0o600, "store file mode");
    let lock = env
        .dir
        .path()
        .canonicalize()
        .unwrap()
        .join("world.db.writer.lock");
    assert!(
        lock.exists(),
        "lock file {lock:?} is created and never deleted"
    );
    assert_eq!(mode(&lock), 0o600, "lock file mode");
}
