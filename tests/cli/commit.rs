//! `world commit`: the happy path, stale-head conflicts, stdin, `--json` and `--batch`.

use crate::common::{sha, TestEnv};

#[test]
fn commit_appends_a_world_and_moves_the_head() {
    let env = TestEnv::new();
    let tip = env.genesis();
    let b = tip.body("one", &[b"state-1", b"extra"]);
    let r = env.commit(&b).ok();
    assert_eq!(r.stdout, format!("{}\n", b.world_ref));
    let after = env.tip();
    assert_eq!(after, b.tip());
    // Every object is stored and recorded as a member of entry 1.
    let c = crate::common::ro(&env.db);
    for h in &b.objects {
        let idx: i64 = c
            .query_row(
                "SELECT entry_index FROM commit_objects WHERE object_ref = ?1",
                [h],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(idx, 1);
    }
    env.verify_ok();
}

#[test]
fn commit_reads_stdin_and_prints_json() {
    let env = TestEnv::new();
    let tip = env.genesis();
    let b = tip.next("stdin");
    let v = env
        .run_stdin(&["commit", "-", "--json"], &b.bytes())
        .ok()
        .json();
    assert_eq!(v["selectedHead"], b.world_ref.as_str());
    assert_eq!(v["entryIndex"], 1);
    assert_eq!(v["entryHash"], b.entry_hash.as_str());
    assert_eq!(v["replayed"], false);
}

#[test]
fn stale_head_is_a_conflict_naming_both_heads_and_changes_nothing() {
    let env = TestEnv::new();
    let g = env.genesis();
    let first = g.next("first");
    let rival = g.next("rival"); // observes the genesis head too
    env.commit_ok(&first);
    let before = env.snapshot();
    let r = env.commit(&rival).code(1);
    let line = r.one_line_error();
    assert!(line.contains("stale observed world head"), "{line}");
    assert!(
        r.stdout.contains(&format!("observed head: {}", g.head)),
        "{r:#?}"
    );
    assert!(
        r.stdout
            .contains(&format!("selected head: {}", first.world_ref)),
        "{r:#?}"
    );
    assert_eq!(env.snapshot(), before);
    env.verify_ok();
}

#[test]
fn conflict_with_json_prints_a_structured_answer() {
    let env = TestEnv::new();
    let g = env.genesis();
    env.commit_ok(&g.next("first"));
    let r = env
        .run_stdin(&["commit", "-", "--json"], &g.next("rival").bytes())
        .code(1);
    let v = r.json();
    assert_eq!(v["error"]["class"], "HeadConflict");
    assert_eq!(v["error"]["observedHead"], g.head.as_str());
    assert_eq!(v["error"]["selectedHead"], env.tip().head.as_str());
}

#[test]
fn objects_are_insert_or_ignore_first_writer_wins() {
    let env = TestEnv::new();
    let tip = env.genesis();
    let b1 = tip.body("a", &[b"shared"]);
    let tip = env.commit_ok(&b1);
    let mut b2 = tip.body("b", &[b"shared"]);
    b2.json["objects"][0]["provenance"] = serde_json::json!("second-writer");
    env.commit_ok(&b2);
    let v = env
        .run(&["object", "get", &sha(b"shared"), "--json"])
        .ok()
        .json();
    assert_eq!(v["provenance"], "test", "first writer's metadata wins");
    // Membership is recorded for both entries.
    let c = crate::common::ro(&env.db);
    let n: i64 = c
        .query_row(
            "SELECT count(*) FROM commit_objects WHERE object_ref = ?1",
            [sha(b"shared")],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 2);
    env.verify_ok();
}

#[test]
fn batch_commits_every_line_in_order() {
    let env = TestEnv::new();
    let mut tip = env.genesis();
    let mut jsonl = Vec::new();
    let mut last = None;
    for i in 0..25 {
        let b = tip.next(&format!("batch{i}"));
        jsonl.extend_from_slice(&b.bytes());
        jsonl.push(b'\n');
        if i == 10 {
            jsonl.extend_from_slice(b"   \n"); // blank lines are skipped
        }
        tip = b.tip();
        last = Some(b);
    }
    let f = env.write("batch.jsonl", &jsonl);
    let r = env.run(&["commit", "--batch", f.to_str().unwrap()]).ok();
    assert_eq!(r.stdout.lines().count(), 25, "one head per commit");
    assert_eq!(
        r.stdout.lines().last(),
        Some(last.unwrap().world_ref.as_str())
    );
    assert_eq!(env.log_len(), 26);
    env.verify_ok();
}

#[test]
fn batch_stops_at_the_first_failure_keeping_what_landed() {
    let env = TestEnv::new();
    let g = env.genesis();
    let b1 = g.next("ok1");
    let stale = g.next("stale"); // observes genesis again: conflicts after b1 lands
    let b3 = b1.tip().next("never");
    let mut jsonl = Vec::new();
    for b in [&b1, &stale, &b3] {
        jsonl.extend_from_slice(&b.bytes());
        jsonl.push(b'\n');
    }
    let f = env.write("batch.jsonl", &jsonl);
    let r = env.run(&["commit", "--batch", f.to_str().unwrap()]).code(1);
    let line = r.one_line_error();
    assert!(line.contains("body 2 of 3; 1 landed before it"), "{line}");
    assert_eq!(env.tip(), b1.tip());
    env.verify_ok();
}

#[test]
fn batch_with_a_bad_line_commits_nothing() {
    let env = TestEnv::new();
    let g = env.genesis();
    let before = env.snapshot();
    let b1 = g.next("ok1");
    let mut jsonl = b1.bytes();
    jsonl.extend_from_slice(b"\n{not json}\n");
    let f = env.write("batch.jsonl", &jsonl);
    let r = env.run(&["commit", "--batch", f.to_str().unwrap()]).code(1);
    assert!(r.one_line_error().contains("line 2"), "{r:#?}");
    assert_eq!(
        env.snapshot(),
        before,
        "bodies are validated before any commit"
    );
}

#[test]
fn batch_of_an_empty_file_is_refused() {
    let env = TestEnv::new();
    env.genesis();
    let f = env.write("empty.jsonl", b"\n\n");
    let r = env.run(&["commit", "--batch", f.to_str().unwrap()]).code(1);
    r.one_line_error();
}
