//! `world verify` / `world fsck`: a clean store passes; tampering is found with exit 3.

use rusqlite::Connection;

use crate::common::{sha, TestEnv};

fn store_with_commits(env: &TestEnv, n: usize) -> Vec<crate::common::Body> {
    let mut tip = env.genesis();
    let mut out = Vec::new();
    for i in 0..n {
        let b = tip.body(&format!("v{i}"), &[format!("payload-{i}").as_bytes()]);
        tip = env.commit_ok(&b);
        out.push(b);
    }
    out
}

#[test]
fn verify_json_reports_range_counts_and_ok() {
    let env = TestEnv::new();
    let bodies = store_with_commits(&env, 3);
    let v = env.run(&["verify", "--json"]).ok().json();
    assert_eq!(v["ok"], true);
    assert_eq!(v["entries"], 4);
    assert_eq!(v["range"], serde_json::json!([0, 3]));
    assert_eq!(v["head"], bodies[2].world_ref.as_str());
    assert_eq!(v["objects"], 4);
    assert_eq!(v["recomputed"], 1, "genesis is recomputed");
    assert_eq!(v["notRecomputed"], 3, "client entries are not");
    assert_eq!(v["failures"], serde_json::json!([]));
}

#[test]
fn fsck_is_an_alias_and_full_runs_integrity_check() {
    let env = TestEnv::new();
    store_with_commits(&env, 1);
    let a = env.run(&["fsck"]).ok();
    let b = env.run(&["verify"]).ok();
    assert_eq!(a.stdout, b.stdout);
    assert!(a.stdout.contains("2 entries, 0–1"), "{a:#?}");
    assert!(a.stdout.trim_end().ends_with("ok"));
    let v = env.run(&["verify", "--full", "--json"]).ok().json();
    assert_eq!(v["full"], true);
}

#[test]
fn verify_writes_nothing() {
    let env = TestEnv::new();
    store_with_commits(&env, 2);
    let bytes = std::fs::read(&env.db).unwrap();
    env.run(&["verify", "--full"]).ok();
    assert_eq!(std::fs::read(&env.db).unwrap(), bytes);
}

#[test]
fn a_tampered_payload_is_exit_3_naming_the_ref() {
    let env = TestEnv::new();
    let bodies = store_with_commits(&env, 2);
    let victim = &bodies[1].objects[0];
    {
        let c = Connection::open(&env.db).unwrap();
        let n = c
            .execute(
                "UPDATE objects SET payload = CAST('tampered' AS BLOB) WHERE hash_ref = ?1",
                [victim],
            )
            .unwrap();
        assert_eq!(n, 1);
    }
    let r = env.run(&["verify"]).code(3);
    assert!(
        r.stdout
            .contains(&format!("FAIL object_hash_mismatch ({victim})")),
        "{r:#?}"
    );
    assert!(
        r.stdout.contains(&sha(b"tampered")),
        "computed hash shown: {r:#?}"
    );
    let v = env.run(&["verify", "--json"]).code(3).json();
    assert_eq!(v["ok"], false);
    let f = &v["failures"][0];
    assert_eq!(f["category"], "object_hash_mismatch");
    assert_eq!(f["ref"], victim.as_str());
    // Reading the damaged object is an integrity refusal too.
    let r = env.run(&["object", "get", victim, "--payload"]).code(3);
    r.one_line_error();
}

#[test]
fn a_log_gap_is_exit_3_naming_the_index() {
    let env = TestEnv::new();
    store_with_commits(&env, 3);
    {
        let c = Connection::open(&env.db).unwrap();
        c.execute_batch(
            "PRAGMA foreign_keys = OFF; DELETE FROM commit_objects WHERE entry_index = 2; DELETE FROM log_entries WHERE entry_index = 2;",
        )
        .unwrap();
    }
    let v = env.run(&["verify", "--json"]).code(3).json();
    let gap = v["failures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["category"] == "log_gap")
        .unwrap_or_else(|| panic!("no log_gap in {v}"));
    assert_eq!(gap["index"], 3);
}

#[test]
fn a_tampered_genesis_entry_hash_is_found() {
    let env = TestEnv::new();
    env.genesis();
    {
        let c = Connection::open(&env.db).unwrap();
        c.execute(
            "UPDATE log_entries SET semantics_epoch = 2 WHERE entry_index = 0",
            [],
        )
        .unwrap();
    }
    let v = env.run(&["verify", "--json"]).code(3).json();
    let cats: Vec<&str> = v["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["category"].as_str().unwrap())
        .collect();
    assert!(cats.contains(&"entry_hash_mismatch"), "{v}");
}

#[test]
fn a_dangling_head_is_found() {
    let env = TestEnv::new();
    env.genesis();
    {
        let c = Connection::open(&env.db).unwrap();
        c.execute(
            "UPDATE store_heads SET world_ref = ?1",
            [sha(b"no-such-world")],
        )
        .unwrap();
    }
    let r = env.run(&["verify"]).code(3);
    assert!(r.stdout.contains("head_mismatch"), "{r:#?}");
}

#[test]
fn verify_of_an_sqlite_file_without_schema_is_refused_uninitialized() {
    let env = TestEnv::new();
    {
        let c = Connection::open(&env.db).unwrap();
        c.execute_batch("CREATE TABLE x (a)").unwrap();
        c.execute_batch("DROP TABLE x").unwrap();
    }
    // An empty SQLite file with no schema is refused read-only (uninitialized), exit 2.
    let r = env.run(&["verify"]).code(2);
    assert!(
        r.one_line_error().contains("schema uninitialized"),
        "{r:#?}"
    );
}

#[test]
fn corrupt_pages_are_a_storage_failure_exit_3() {
    let env = TestEnv::new();
    env.genesis();
    crate::common::append_client_entries(&env.db, 2000);
    env.verify_ok();
    let mut bytes = std::fs::read(&env.db).unwrap();
    let pages = bytes.len() / 4096;
    for p in pages / 2..pages / 2 + 3 {
        bytes[p * 4096..(p + 1) * 4096].fill(0xde);
    }
    std::fs::write(&env.db, &bytes).unwrap();
    let r = env.run(&["verify", "--json"]);
    assert_eq!(r.code, 3, "{r:#?}");
    let v = r.json();
    assert_eq!(v["failures"][0]["category"], "storage", "{v}");
    assert_eq!(
        std::fs::read(&env.db).unwrap(),
        bytes,
        "verify wrote nothing"
    );
    // Reads that meet the damage are integrity refusals (exit 3), never a generic failure.
    for args in [
        vec!["log", "--json"],
        vec!["log", "--reverse"],
        vec!["head"],
    ] {
        let r = env.run(&args);
        assert!(matches!(r.code, 0 | 3), "world {args:?}: {r:#?}");
        if r.code == 3 {
            r.one_line_error();
        }
    }
}
