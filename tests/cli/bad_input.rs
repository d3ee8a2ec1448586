//! Bad input (issue 2 "Bad input"): each case prints one `world: …` line (plus optional hints),
//! exits with the documented code (src/cli/error.rs), and leaves the store unchanged — by
//! logical contents and, where the store is readable, by `world verify` still passing.

use serde_json::json;

use crate::common::{sha, snapshot, Run, TestEnv};

/// A store with genesis and one client commit.
fn populated() -> TestEnv {
    let env = TestEnv::new();
    let tip = env.genesis();
    env.commit_ok(&tip.next("base"));
    env
}

/// Commit `bytes` from a file and assert the refusal contract; returns the run.
#[track_caller]
fn refuse_commit(env: &TestEnv, bytes: &[u8], code: i32, needle: &str) -> Run {
    let before = env.snapshot();
    let file = env.write("bad.json", bytes);
    let r = env.run(&["commit", file.to_str().unwrap()]).code(code);
    let line = r.one_line_error();
    assert!(
        line.contains(needle),
        "error line {line:?} should mention {needle:?}"
    );
    assert_eq!(env.snapshot(), before, "store changed by a refused commit");
    env.verify_ok();
    r
}

/// A valid next body as a JSON value, to be damaged by each test.
fn next_json(env: &TestEnv) -> serde_json::Value {
    env.tip().next("victim").json
}

#[test]
fn malformed_json() {
    let env = populated();
    refuse_commit(&env, b"{\"observedHead\": ", 1, "not valid commit JSON");
    refuse_commit(&env, b"[1,2,3]", 1, "not valid commit JSON");
    let mut two = serde_json::to_vec(&next_json(&env)).unwrap();
    two.extend_from_slice(b" {}");
    refuse_commit(&env, &two, 1, "not valid commit JSON");
}

#[test]
fn payload_that_does_not_hash_to_its_hash() {
    let env = populated();
    let mut v = next_json(&env);
    let claimed = v["objects"][0]["hash"].as_str().unwrap().to_string();
    v["objects"][0]["payload"] = json!("dGFtcGVyZWQ="); // "tampered"
    let r = refuse_commit(
        &env,
        &serde_json::to_vec(&v).unwrap(),
        1,
        "does not match payload",
    );
    let line = r.one_line_error();
    assert!(
        line.contains(&claimed) && line.contains(&sha(b"tampered")),
        "{line}"
    );
}

#[test]
fn payload_that_is_not_base64() {
    let env = populated();
    let mut v = next_json(&env);
    v["objects"][0]["payload"] = json!("not base64!");
    refuse_commit(&env, &serde_json::to_vec(&v).unwrap(), 1, "base64");
}

#[test]
fn uppercase_hex_refs() {
    let env = populated();
    let mut v = next_json(&env);
    let up = v["entry"]["entryHash"]
        .as_str()
        .unwrap()
        .to_uppercase()
        .replace("SHA256:", "sha256:");
    v["entry"]["entryHash"] = json!(up);
    refuse_commit(&env, &serde_json::to_vec(&v).unwrap(), 1, "Entry.EntryHash");
    let mut v = next_json(&env);
    let up = v["objects"][0]["hash"]
        .as_str()
        .unwrap()
        .to_uppercase()
        .replace("SHA256:", "sha256:");
    v["objects"][0]["hash"] = json!(up);
    refuse_commit(&env, &serde_json::to_vec(&v).unwrap(), 1, "Objects.Hash");
    let mut v = next_json(&env);
    v["entry"]["header"]["transitionFn"] =
        json!("SHA256:0f1e18bb4143dc4be22e61ea4deb0491c2bf7018c6504ad631038aed5ca4a0ca");
    refuse_commit(
        &env,
        &serde_json::to_vec(&v).unwrap(),
        1,
        "Entry.Header.TransitionFn",
    );
}

#[test]
fn short_hex_refs() {
    let env = populated();
    let mut v = next_json(&env);
    v["nextWorld"]["ref"] = json!("sha256:abc123");
    refuse_commit(&env, &serde_json::to_vec(&v).unwrap(), 1, "NextWorld.Ref");
    let mut v = next_json(&env);
    v["entry"]["header"]["prevEntryHash"] = json!("");
    refuse_commit(
        &env,
        &serde_json::to_vec(&v).unwrap(),
        1,
        "Entry.Header.PrevEntryHash",
    );
    let mut v = next_json(&env);
    v["objects"][0]["interfaceHash"] = json!(format!("{}00", sha(b"x")));
    refuse_commit(
        &env,
        &serde_json::to_vec(&v).unwrap(),
        1,
        "Objects.InterfaceHash",
    );
}

#[test]
fn entry_index_that_already_exists() {
    let env = populated();
    let mut v = next_json(&env);
    v["entry"]["header"]["entryIndex"] = json!(1);
    refuse_commit(
        &env,
        &serde_json::to_vec(&v).unwrap(),
        1,
        "Entry.Header.EntryIndex must be the observed world's revision + 1",
    );
    // An entry hash that is already taken is refused as a duplicate.
    let mut v = next_json(&env);
    let taken = env.run(&["log", "get", "0", "--json"]).ok().json()["entryHash"].clone();
    v["entry"]["entryHash"] = taken.clone();
    v["nextWorld"]["logHead"] = taken;
    refuse_commit(&env, &serde_json::to_vec(&v).unwrap(), 1, "already exists");
}

#[test]
fn non_utf8_file() {
    let env = populated();
    let mut bytes = serde_json::to_vec(&next_json(&env)).unwrap();
    bytes.insert(1, 0xff);
    refuse_commit(&env, &bytes, 1, "not valid UTF-8");
}

#[test]
fn zero_byte_file() {
    let env = populated();
    refuse_commit(&env, b"", 1, "empty");
    // And from stdin.
    let before = env.snapshot();
    let r = env.run_stdin(&["commit", "-"], b"").code(1);
    assert!(r.one_line_error().contains("empty"));
    assert_eq!(env.snapshot(), before);
}

#[test]
fn nine_mib_body_is_a_size_error() {
    let env = populated();
    let mut v = next_json(&env);
    v["padding"] = json!("x".repeat(9 * 1024 * 1024));
    let r = refuse_commit(
        &env,
        &serde_json::to_vec(&v).unwrap(),
        1,
        "8388608-byte limit",
    );
    assert!(
        !r.one_line_error().contains("JSON"),
        "refused before parsing"
    );
    // From stdin too.
    let before = env.snapshot();
    let r = env
        .run_stdin(&["commit", "-"], &serde_json::to_vec(&v).unwrap())
        .code(1);
    assert!(r.one_line_error().contains("8388608-byte limit"));
    assert_eq!(env.snapshot(), before);
}

#[test]
fn unknown_json_fields() {
    let env = populated();
    let mut v = next_json(&env);
    v["extra"] = json!(1);
    refuse_commit(
        &env,
        &serde_json::to_vec(&v).unwrap(),
        1,
        "unknown field `extra`",
    );
    let mut v = next_json(&env);
    v["entry"]["header"]["author"] = json!("me");
    refuse_commit(
        &env,
        &serde_json::to_vec(&v).unwrap(),
        1,
        "unknown field `author`",
    );
    let mut v = next_json(&env);
    v["objects"][0]["size"] = json!(3);
    refuse_commit(
        &env,
        &serde_json::to_vec(&v).unwrap(),
        1,
        "unknown field `size`",
    );
}

#[test]
fn missing_json_fields() {
    let env = populated();
    let mut v = next_json(&env);
    v.as_object_mut().unwrap().remove("nextWorld");
    refuse_commit(
        &env,
        &serde_json::to_vec(&v).unwrap(),
        1,
        "missing field `nextWorld`",
    );
}

#[test]
fn invocation_id_outside_rest() {
    let env = populated();
    for id in ["a2a:ep:task", "cli:ep:1", "rest:", "deploy-1"] {
        let mut v = next_json(&env);
        v["invocationId"] = json!(id);
        refuse_commit(
            &env,
            &serde_json::to_vec(&v).unwrap(),
            1,
            "must be rest:<id>",
        );
    }
    assert_eq!(
        env.run(&["receipt", "a2a:ep:task", "--json"])
            .code(1)
            .json()["state"],
        "not-started"
    );
}

// ---- bad store files -------------------------------------------------------------------

/// Run reads and writes against a bad store; each must refuse with `code` and leave the file's
/// bytes untouched (and create no side files).
#[track_caller]
fn refuse_store(env: &TestEnv, code: i32, needle: &str) {
    let bytes = std::fs::read(&env.db).unwrap();
    let listing = || {
        let mut v: Vec<String> = std::fs::read_dir(env.dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with("bad") && !n.ends_with(".writer.lock"))
            .collect();
        v.sort();
        v
    };
    let files = listing();
    let body = crate::common::Tip::empty().next("onto-bad").bytes();
    let file = env.write("bad.json", &body);
    for args in [
        vec!["head"],
        vec!["log", "--json"],
        vec!["verify"],
        vec!["commit", file.to_str().unwrap()],
        vec!["genesis"],
    ] {
        let r = env.run(&args).code(code);
        let line = r.one_line_error();
        assert!(
            line.contains(needle),
            "`world {args:?}`: {line:?} should mention {needle:?}"
        );
        assert_eq!(
            std::fs::read(&env.db).unwrap(),
            bytes,
            "`world {args:?}` changed the file"
        );
        assert_eq!(listing(), files, "`world {args:?}` left side files");
    }
}

#[test]
fn store_file_that_is_not_sqlite() {
    let env = TestEnv::new();
    std::fs::write(&env.db, b"this is not an SQLite database\n".repeat(200)).unwrap();
    refuse_store(&env, 2, "not a usable SQLite database");
}

fn store_with_user_version(v: i64) -> TestEnv {
    let env = populated();
    let c = rusqlite::Connection::open(&env.db).unwrap();
    c.execute_batch(&format!("PRAGMA user_version = {v}"))
        .unwrap();
    drop(c);
    env
}

#[test]
fn store_with_user_version_3() {
    let env = store_with_user_version(3);
    let before = env.snapshot();
    refuse_store(&env, 2, "schema version legacy");
    assert_eq!(env.snapshot(), before);
    assert_eq!(snapshot(&env.db).user_version, 3);
}

#[test]
fn store_with_user_version_5() {
    let env = store_with_user_version(5);
    let before = env.snapshot();
    refuse_store(&env, 2, "schema version future");
    assert_eq!(env.snapshot(), before);
}

#[test]
fn store_missing_commit_objects_is_refused_with_the_reference_text_and_not_recreated() {
    let env = populated();
    let c = rusqlite::Connection::open(&env.db).unwrap();
    c.execute_batch("DROP TABLE commit_objects").unwrap();
    drop(c);
    let before = env.snapshot();
    // The reference's SchemaIntegrityError wording, exactly (path Go-quoted).
    let want = format!(
        "store: schema integrity: {:?} is missing table commit_objects; refusing to recreate it empty (its rows cannot be re-derived)",
        env.db.to_str().unwrap()
    );
    let line = env.run(&["head"]).code(2).one_line_error();
    assert!(line.contains(&want), "{line:?} should contain {want:?}");
    let needle = "is missing table commit_objects; refusing to recreate it empty";
    let body = crate::common::Tip::empty().next("onto-bad").bytes();
    let file = env.write("bad.json", &body);
    for args in [
        vec!["head"],
        vec!["log", "--json"],
        vec!["commit", file.to_str().unwrap()],
        vec!["genesis"],
    ] {
        let line = env.run(&args).code(2).one_line_error();
        assert!(line.contains(needle), "`world {args:?}`: {line:?}");
    }
    // For `verify` the damage is its own finding (issue 13 §3): `schema`, exit 3, in --json.
    let v = env.run(&["verify", "--json"]).code(3);
    assert!(v.stdout.contains("\"category\":\"schema\""), "{v:?}");
    assert!(v.stdout.contains(needle), "{v:?}");
    assert_eq!(env.snapshot(), before);
    let c = rusqlite::Connection::open(&env.db).unwrap();
    let n: i64 = c
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'commit_objects'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 0, "the table must not be recreated empty");
}

#[test]
fn store_with_negative_user_version() {
    let env = store_with_user_version(-1);
    refuse_store(&env, 2, "schema version invalid");
}

#[test]
fn truncated_store_file() {
    let env = populated();
    // Add enough rows that the file spans many pages, then cut it in half.
    crate::common::append_client_entries(&env.db, 2000);
    let bytes = std::fs::read(&env.db).unwrap();
    assert!(bytes.len() > 64 * 1024, "store is {} bytes", bytes.len());
    std::fs::write(&env.db, &bytes[..bytes.len() / 2]).unwrap();
    refuse_store(&env, 2, "not a usable SQLite database");
}

#[test]
fn store_file_cut_inside_the_header() {
    let env = populated();
    let bytes = std::fs::read(&env.db).unwrap();
    std::fs::write(&env.db, &bytes[..50]).unwrap();
    refuse_store(&env, 2, "not a usable SQLite database");
}

#[test]
fn directory_given_as_db() {
    let env = TestEnv::new();
    let dir = env.path("store-dir");
    std::fs::create_dir(&dir).unwrap();
    let body = env.write("body.json", &crate::common::Tip::empty().next("g").bytes());
    for args in [
        vec!["head"],
        vec!["verify"],
        vec!["genesis"],
        vec!["commit", body.to_str().unwrap()],
    ] {
        let mut full = vec!["--db", dir.to_str().unwrap()];
        full.extend(args.iter());
        let r = env.run(&full).code(2);
        assert!(r.one_line_error().contains("is a directory"), "{r:#?}");
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "nothing created inside"
        );
    }
}

#[test]
fn missing_parent_directory() {
    let env = TestEnv::new();
    let db = env.path("no/such/dir/world.db");
    for args in [vec!["genesis"], vec!["head"]] {
        let mut full = vec!["--db", db.to_str().unwrap()];
        full.extend(args.iter());
        let r = env.run(&full).code(1);
        let line = r.one_line_error();
        assert!(
            line.contains("resolve parent of") && line.contains("no such file or directory"),
            "{line}"
        );
    }
    assert!(!env.path("no").exists(), "the parent is never created");
}

/// The registry-key guard: every invocation exits 2 naming the variable, never its value.
#[test]
fn registry_key_in_environment_is_refused() {
    let env = populated();
    let before = env.snapshot();
    let body = env.write("body.json", &env.tip().next("guarded").bytes());
    for args in [
        vec!["head"],
        vec!["commit", body.to_str().unwrap()],
        vec!["--help"],
    ] {
        let out = env
            .cmd()
            .env("AILANG_REGISTRY_API_KEY", "s3cret-token-value")
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.starts_with("world: ") && stderr.lines().count() == 1,
            "{stderr}"
        );
        assert!(stderr.contains("AILANG_REGISTRY_API_KEY"));
        assert!(!stderr.contains("s3cret") && !stdout.contains("s3cret"));
    }
    assert_eq!(env.snapshot(), before);
}

#[test]
fn usage_errors_are_exit_2() {
    let env = populated();
    let r = env.run(&["commit"]);
    assert_eq!(r.code, 2, "{r:#?}");
    let r = env.run(&["no-such-verb"]);
    assert_eq!(r.code, 2, "{r:#?}");
    let r = env.run(&["--wait-lock", "100000", "head"]);
    assert_eq!(r.code, 2, "{r:#?}");
    r.one_line_error();
}

#[test]
fn batch_line_over_the_size_limit() {
    let env = populated();
    let before = env.snapshot();
    let mut v = next_json(&env);
    v["padding"] = json!("x".repeat(9 * 1024 * 1024));
    let mut jsonl = serde_json::to_vec(&v).unwrap();
    jsonl.push(b'\n');
    let f = env.write("big.jsonl", &jsonl);
    let r = env.run(&["commit", "--batch", f.to_str().unwrap()]).code(1);
    let line = r.one_line_error();
    assert!(
        line.contains("line 1") && line.contains("8388608"),
        "{line}"
    );
    assert_eq!(env.snapshot(), before);
    env.verify_ok();
}
