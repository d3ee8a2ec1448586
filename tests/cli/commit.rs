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

/// Issue 29 §4: every retry form under one `rest:` id — `commit --put`, a full body, a batch
/// of bodies, a batch of put lines — answers "already committed" with exit 0 after the head
/// has moved on, writes nothing, and prints the world first committed.
#[test]
fn every_retry_form_with_the_same_rest_id_is_already_committed() {
    let env = TestEnv::new();
    let tip = env.genesis();
    let a = env.write("a.json", br#"{"note":"a"}"#);
    let put = |id: &str| {
        env.run(&[
            "commit",
            "--put",
            a.to_str().unwrap(),
            "--semantic-id",
            "demo/note",
            "--invocation-id",
            id,
        ])
    };
    // --put, retried after another commit moved the head.
    let first = put("rest:p-1").ok().stdout;
    env.run(&[
        "commit",
        "--put",
        a.to_str().unwrap(),
        "--semantic-id",
        "other",
    ])
    .ok();
    let before = env.snapshot();
    let again = put("rest:p-1").ok();
    assert_eq!(
        again.stdout, first,
        "the retry names the world first committed"
    );
    assert!(again.stderr.contains("already committed"), "{again:#?}");
    assert_eq!(env.snapshot(), before, "a retry writes nothing");
    // --json says replayed.
    let v = env
        .run(&[
            "commit",
            "--put",
            a.to_str().unwrap(),
            "--semantic-id",
            "demo/note",
            "--invocation-id",
            "rest:p-1",
            "--json",
        ])
        .ok()
        .json();
    assert_eq!(v["replayed"], true);
    assert_eq!(v["entryIndex"], 1);
    let _ = tip;

    // A full body, retried as a body and inside a batch of bodies.
    let body = env
        .tip()
        .body("full", &[b"full"])
        .with_invocation("rest:b-1");
    env.commit_ok(&body);
    env.run(&["commit", "--put", a.to_str().unwrap(), "--semantic-id", "x"])
        .ok();
    let before = env.snapshot();
    let r = env.commit(&body).ok();
    assert!(r.stderr.contains("already committed"), "{r:#?}");
    let batch = env.write("bodies.jsonl", &[body.bytes(), b"\n".to_vec()].concat());
    let r = env
        .run(&["commit", "--batch", batch.to_str().unwrap()])
        .ok();
    assert!(r.stderr.contains("1 already committed"), "{r:#?}");
    assert_eq!(env.snapshot(), before);

    // Put lines: the first run commits, a resend answers every line with an id as already
    // committed, and a --put with the same content and id is the same commit.
    let lines = format!(
        "{}\n{}\n{}\n",
        r#"{"put":"a.json","semanticId":"demo/note","invocationId":"rest:l-1"}"#,
        r#"{"text":"hello\n","semanticId":"demo/text","invocationId":"rest:l-2"}"#,
        r#"{"json":{"n":1},"semanticId":"demo/json","invocationId":"rest:l-3","writtenBy":"client:ci"}"#,
    );
    let batch = env.write("puts.jsonl", lines.as_bytes());
    let landed = env
        .run(&["commit", "--batch", batch.to_str().unwrap()])
        .ok()
        .stdout;
    let before = env.snapshot();
    let r = env
        .run(&["commit", "--batch", batch.to_str().unwrap()])
        .ok();
    assert_eq!(r.stdout, landed);
    assert!(r.stderr.contains("3 already committed"), "{r:#?}");
    let r = put("rest:l-1").ok();
    assert_eq!(r.stdout.lines().next(), landed.lines().next());
    assert_eq!(env.snapshot(), before);
    env.run(&["receipt", "rest:l-3"]).ok();
    env.verify_ok();
}

/// Issue 29 §4: other content under a used `rest:` id is refused with a hint naming the id,
/// whichever form sends it, and nothing is written.
#[test]
fn a_different_body_under_a_used_id_is_refused_with_a_hint() {
    let env = TestEnv::new();
    env.genesis();
    let a = env.write("a.json", b"a");
    let b = env.write("b.json", b"b");
    let put = |f: &std::path::Path, extra: &[&str]| {
        let mut args = vec![
            "commit",
            "--put",
            f.to_str().unwrap(),
            "--semantic-id",
            "demo/note",
            "--invocation-id",
            "rest:same",
        ];
        args.extend_from_slice(extra);
        env.run(&args)
    };
    put(&a, &[]).ok();
    let before = env.snapshot();
    for r in [
        put(&b, &[]),
        put(&a, &["--writer", "client:other"]),
        put(&a, &["--put", b.to_str().unwrap()]),
    ] {
        let r = r.code(1);
        assert!(
            r.stderr.contains("was used for a different commit"),
            "{r:#?}"
        );
        assert!(
            r.stderr
                .contains("hint: a retry under rest:same must send the same content"),
            "{r:#?}"
        );
    }
    let batch = env.write(
        "other.jsonl",
        br#"{"text":"b","semanticId":"demo/note","invocationId":"rest:same"}
"#,
    );
    let r = env
        .run(&["commit", "--batch", batch.to_str().unwrap(), "--json"])
        .code(1);
    let v = r.json_lines();
    let err = v.last().unwrap();
    assert_eq!(err["error"]["code"], "invocation_reused", "{r:#?}");
    assert_eq!(env.snapshot(), before);
}

/// Issue 29 §5: put lines chain from the head (no hand-built hashes), resolve a relative
/// `put` against the batch file's directory, and refuse a malformed line before anything
/// is written.
#[test]
fn batch_put_lines_chain_from_the_head() {
    let env = TestEnv::new();
    env.genesis();
    let sub = env.path("batch");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(sub.join("n.json"), b"{\"n\":1}").unwrap();
    let lines = [
        r#"{"put":"n.json","semanticId":"demo/a"}"#,
        r#"{"payload":"aGk=","semanticId":"demo/b","provenance":"ci"}"#,
        r#"{"json":{"z":1,"a":[2]},"semanticId":"demo/c"}"#,
    ]
    .join("\n");
    std::fs::write(sub.join("b.jsonl"), lines).unwrap();
    let r = env
        .run(&["commit", "--batch", sub.join("b.jsonl").to_str().unwrap()])
        .ok();
    assert_eq!(r.stdout.lines().count(), 3);
    assert_eq!(env.log_len(), 4);
    let e3 = env.run(&["log", "get", "3", "--json"]).ok().json();
    assert_eq!(
        e3["transitionRef"],
        crate::common::sha(br#"{"z":1,"a":[2]}"#).as_str()
    );
    let e2 = env.run(&["log", "get", "2", "--json"]).ok().json();
    assert_eq!(e2["transitionRef"], crate::common::sha(b"hi").as_str());
    assert_eq!(e3["header"]["prevEntryHash"], e2["entryHash"]);
    env.verify_ok();
    // Bad lines: two payload forms, an unknown key, a missing file, bad base64.
    let before = env.snapshot();
    for (line, says) in [
        (
            r#"{"text":"a","json":1,"semanticId":"x"}"#,
            "exactly one of",
        ),
        (
            r#"{"text":"a","semanticId":"x","color":1}"#,
            "unknown field",
        ),
        (r#"{"put":"missing.json","semanticId":"x"}"#, "no such file"),
        (r#"{"payload":"***","semanticId":"x"}"#, "not base64"),
    ] {
        let f = env.write(
            "bad.jsonl",
            format!("{{\"text\":\"ok\",\"semanticId\":\"x\"}}\n{line}\n").as_bytes(),
        );
        let r = env.run(&["commit", "--batch", f.to_str().unwrap()]).code(1);
        assert!(
            r.stderr.contains("line 2") && r.stderr.contains(says),
            "{r:#?}"
        );
    }
    assert_eq!(env.snapshot(), before);
}
