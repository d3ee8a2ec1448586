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

/// `commit --put` builds a chain-extending body from the current head (§8.4a): the entry
/// recomputes by the coordinator formulas, repeated `--put`s land as objects, and the chain
/// rules still refuse a reserved writer.
#[test]
fn put_extends_the_head_without_a_hand_built_body() {
    let env = TestEnv::new();
    let g = env.genesis();
    let a = env.write("a.json", br#"{"note":"a"}"#);
    let b = env.write("b.json", br#"{"note":"b"}"#);
    let r = env
        .run(&[
            "commit",
            "--put",
            a.to_str().unwrap(),
            "--semantic-id",
            "demo/note/v1",
        ])
        .ok();
    let head1 = r.stdout.trim().to_string();
    assert_eq!(env.run(&["head"]).ok().stdout.trim(), head1);
    let v = env
        .run(&[
            "commit",
            "--put",
            a.to_str().unwrap(),
            "--put",
            b.to_str().unwrap(),
            "--semantic-id",
            "demo/note/v1",
            "--semantic-id",
            "demo/other/v1",
            "--writer",
            "client:ci",
            "--provenance",
            "ci-run-7",
            "--invocation-id",
            "rest:put-2",
            "--json",
        ])
        .ok()
        .json();
    super::output::assert_schema("commit", &v);
    assert_eq!(v["entryIndex"], 2);
    assert_eq!(
        v["objects"][0],
        crate::common::sha(br#"{"note":"a"}"#).as_str()
    );
    let obj = env
        .run(&["object", "get", v["objects"][1].as_str().unwrap(), "--json"])
        .ok()
        .json();
    assert_eq!(
        (obj["semanticId"].as_str(), obj["provenance"].as_str()),
        (Some("demo/other/v1"), Some("ci-run-7"))
    );
    // The entry chains to the previous one and its hash recomputes by §8.2.
    let e = env.run(&["log", "get", "2", "--json"]).ok().json();
    let prev = env.run(&["log", "get", "1", "--json"]).ok().json();
    assert_eq!(e["header"]["prevEntryHash"], prev["entryHash"]);
    assert_eq!(e["header"]["writtenBy"], "client:ci");
    let h = &e["header"];
    let wire = format!(
        r#"{{"entryIndex":{},"semanticsEpoch":{},"transitionFn":{},"interpreter":{},"prevEntryHash":{},"writtenBy":{},"transitionRef":{}}}"#,
        h["entryIndex"],
        h["semanticsEpoch"],
        h["transitionFn"],
        h["interpreter"],
        h["prevEntryHash"],
        h["writtenBy"],
        e["transitionRef"]
    );
    assert_eq!(e["entryHash"], crate::common::sha(wire.as_bytes()).as_str());
    assert_ne!(g.head, head1);
    env.run(&["receipt", "rest:put-2"]).ok();
    env.verify_ok();
    // A writer in a namespace world writes itself is refused; nothing changes.
    let before = env.snapshot();
    let r = env
        .run(&[
            "commit",
            "--put",
            a.to_str().unwrap(),
            "--semantic-id",
            "x",
            "--writer",
            "world:me",
        ])
        .code(1);
    assert!(r.one_line_error().contains("namespace"), "{r:#?}");
    // Mismatched --semantic-id counts are usage errors.
    let r = env
        .run(&[
            "commit",
            "--put",
            a.to_str().unwrap(),
            "--semantic-id",
            "x",
            "--semantic-id",
            "y",
            "--semantic-id",
            "z",
        ])
        .code(2);
    r.one_line_error();
    assert_eq!(env.snapshot(), before);
    // Without a head there is nothing to extend.
    let empty = TestEnv::new();
    empty.run(&["genesis"]).ok();
    std::fs::remove_file(&empty.db).unwrap();
    let r = empty
        .run(&["commit", "--put", a.to_str().unwrap(), "--semantic-id", "x"])
        .code(1);
    r.one_line_error();
}

/// `--keep-going` commits past a refusal, reports each refused line and ends with a summary;
/// `--json` ends with a `{"summary":…}` line that matches its schema.
#[test]
fn batch_keep_going_reports_every_refusal_and_a_summary() {
    let env = TestEnv::new();
    let g = env.genesis();
    let b1 = g.next("ok1");
    let stale = g.next("stale");
    let b3 = b1.tip().next("ok3");
    let mut jsonl = Vec::new();
    for b in [&b1, &stale, &b3] {
        jsonl.extend_from_slice(&b.bytes());
        jsonl.push(b'\n');
    }
    let f = env.write("batch.jsonl", &jsonl);
    let r = env
        .run(&[
            "commit",
            "--batch",
            f.to_str().unwrap(),
            "--keep-going",
            "--json",
        ])
        .code(1);
    let lines = r.json_lines();
    assert_eq!(
        lines.len(),
        4,
        "two heads, the summary, the envelope: {r:#?}"
    );
    let s = &lines[2];
    super::output::assert_schema("commit-batch-summary", s);
    assert_eq!(
        (
            &s["summary"]["committed"],
            &s["summary"]["failed"],
            &s["summary"]["refusals"][0]["line"]
        ),
        (
            &serde_json::json!(2),
            &serde_json::json!(1),
            &serde_json::json!(2)
        ),
        "{s}"
    );
    super::output::assert_schema("error", &lines[3]);
    assert!(r.stderr.contains("refused: line 2:"), "{r:#?}");
    assert_eq!(env.tip(), b3.tip());
    // Without --keep-going the summary says what was not attempted.
    let env = TestEnv::new();
    env.genesis();
    let f = env.write("batch.jsonl", &jsonl);
    let r = env
        .run(&["commit", "--batch", f.to_str().unwrap(), "--json"])
        .code(1);
    let lines = r.json_lines();
    assert_eq!(lines[1]["summary"]["notAttempted"], 1, "{r:#?}");
    // A clean batch prints its summary on stderr, nothing extra on stdout.
    let env = TestEnv::new();
    let g = env.genesis();
    let a = g.next("a");
    let b = a.tip().next("b");
    let mut jsonl = a.bytes();
    jsonl.push(b'\n');
    jsonl.extend_from_slice(&b.bytes());
    let f = env.write("ok.jsonl", &jsonl);
    let r = env.run(&["commit", "--batch", f.to_str().unwrap()]).ok();
    assert_eq!(r.stdout.lines().count(), 2);
    assert!(
        r.stderr
            .contains("2 of 2 bodies committed, 0 already committed, 0 refused"),
        "{r:#?}"
    );
    let c = b.tip().next("c");
    let f = env.write("more.jsonl", &c.bytes());
    let r = env
        .run(&["commit", "--batch", f.to_str().unwrap(), "-q"])
        .ok();
    assert_eq!(
        (r.stdout.trim(), r.stderr.as_str()),
        (c.world_ref.as_str(), ""),
        "{r:#?}"
    );
}
