//! `rest:` receipts for local commits (DEC-STORE-2, DEC-STORE-3; authority-and-broker.md §10).

use crate::common::{Body, TestEnv, TEST_NOW};

/// The receipt as JSON; also checks the exit code the state implies (0 resolved, 1
/// not-started, 5 indeterminate; DEC-CLI-18).
fn receipt(env: &TestEnv, id: &str) -> serde_json::Value {
    let r = env.run(&["receipt", id, "--json"]);
    let v = r.json();
    let want = match v["state"].as_str() {
        Some("resolved") => 0,
        Some("not-started") => 1,
        _ => 5,
    };
    r.code(want);
    v
}

fn journal_rows(env: &TestEnv) -> Vec<(String, String)> {
    let c = crate::common::ro(&env.db);
    let mut s = c
        .prepare("SELECT kind, invocation_id FROM journal ORDER BY seq")
        .unwrap();
    s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn rest_body(env: &TestEnv, tag: &str, id: &str) -> Body {
    env.tip().next(tag).with_invocation(id)
}

#[test]
fn unknown_id_is_not_started() {
    let env = TestEnv::new();
    env.genesis();
    let v = receipt(&env, "rest:never-sent");
    assert_eq!(v["state"], "not-started");
    assert_eq!(v["invocationId"], "rest:never-sent");
    assert!(v.get("resultRef").is_none());
    let text = env.run(&["receipt", "rest:never-sent"]).code(1);
    assert_eq!(text.stdout, "rest:never-sent not-started\n");
}

#[test]
fn a_landed_rest_commit_is_resolved_with_its_result_ref() {
    let env = TestEnv::new();
    env.genesis();
    let b = rest_body(&env, "r1", "rest:deploy-1");
    env.commit_ok(&b);
    let v = receipt(&env, "rest:deploy-1");
    assert_eq!(v["state"], "resolved");
    assert_eq!(v["resultRef"], b.world_ref.as_str());
    assert_eq!(
        journal_rows(&env),
        vec![
            ("intent".to_string(), "rest:deploy-1".to_string()),
            ("outcome".to_string(), "rest:deploy-1".to_string())
        ]
    );
    // The intent payload binds the eight fields and carries the (test-fixed) logical time.
    let c = crate::common::ro(&env.db);
    let payload: Vec<u8> = c
        .query_row(
            "SELECT o.payload FROM journal j JOIN objects o ON o.hash_ref = j.object_ref WHERE j.kind = 'intent'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let text = String::from_utf8(payload).unwrap();
    assert!(
        text.ends_with("}\n"),
        "journal payloads end in one LF: {text:?}"
    );
    let intent: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(intent["worldRef"], b.world_ref.as_str());
    assert_eq!(intent["entryHash"], b.entry_hash.as_str());
    assert_eq!(intent["logicalTime"], TEST_NOW);
    env.verify_ok();
}

#[test]
fn resending_the_same_body_is_idempotent_and_writes_nothing() {
    let env = TestEnv::new();
    env.genesis();
    let b = rest_body(&env, "r1", "rest:same");
    env.commit_ok(&b);
    let before = env.snapshot();
    let r = env.commit(&b).ok();
    assert_eq!(r.stdout, format!("{}\n", b.world_ref));
    assert!(r.stderr.contains("already committed"), "{r:#?}");
    assert_eq!(env.snapshot(), before);
    // Even after the head moved on, the resend answers the original result.
    let next = env.tip().next("later");
    env.commit_ok(&next);
    let before = env.snapshot();
    let v = env
        .run_stdin(&["commit", "-", "--json"], &b.bytes())
        .ok()
        .json();
    assert_eq!(v["replayed"], true);
    assert_eq!(v["selectedHead"], b.world_ref.as_str());
    assert_eq!(env.snapshot(), before);
}

#[test]
fn same_id_with_a_different_body_is_an_invocation_mismatch() {
    let env = TestEnv::new();
    let g = env.genesis();
    let b = g.next("r1").with_invocation("rest:dup");
    env.commit_ok(&b);
    let before = env.snapshot();
    let other = b.tip().next("r2").with_invocation("rest:dup");
    let r = env.commit(&other).code(1);
    let line = r.one_line_error();
    assert!(line.contains("invocation mismatch"), "{line}");
    assert!(
        line.contains("WorldRef"),
        "first differing field is named: {line}"
    );
    assert_eq!(env.snapshot(), before);
    assert_eq!(receipt(&env, "rest:dup")["resultRef"], b.world_ref.as_str());
}

/// DEC-STORE-2: intent and commit share one transaction, so a conflict rolls both back.
#[test]
fn a_conflicting_rest_commit_leaves_the_receipt_not_started() {
    let env = TestEnv::new();
    let g = env.genesis();
    env.commit_ok(&g.next("winner"));
    let before = env.snapshot();
    let loser = g.next("loser").with_invocation("rest:lost");
    let r = env.commit(&loser).code(1);
    assert!(r.one_line_error().contains("stale observed world head"));
    assert_eq!(env.snapshot(), before, "no intent row may survive");
    assert_eq!(receipt(&env, "rest:lost")["state"], "not-started");
    // Re-planned against the new head, the same id lands.
    let retry = env.tip().next("loser-retry").with_invocation("rest:lost");
    env.commit_ok(&retry);
    assert_eq!(receipt(&env, "rest:lost")["state"], "resolved");
    env.verify_ok();
}

#[test]
fn an_intent_without_outcome_is_indeterminate_exit_5() {
    let env = TestEnv::new();
    env.genesis();
    // Forge a durable intent with no outcome, as a writer killed between the two would leave.
    {
        let c = rusqlite::Connection::open(&env.db).unwrap();
        let payload = b"{\"invocationId\":\"rest:half\"}\n";
        let h = crate::common::sha(payload);
        c.execute(
            "INSERT INTO objects VALUES (?1, ?2, 'world/journal-intent/v1', 'store/journal', ?3)",
            rusqlite::params![
                h,
                crate::common::sha(b"world/journal-intent/v1"),
                &payload[..]
            ],
        )
        .unwrap();
        c.execute(
            "INSERT INTO journal (seq, kind, invocation_id, object_ref) VALUES (1, 'intent', 'rest:half', ?1)",
            [h],
        )
        .unwrap();
    }
    let r = env.run(&["receipt", "rest:half", "--json"]).code(5);
    assert_eq!(r.json()["state"], "indeterminate");
}

#[test]
fn receipt_refuses_ids_outside_the_namespaces() {
    let env = TestEnv::new();
    env.genesis();
    env.run(&["receipt", "deploy-1"]).code(1).one_line_error();
    env.run(&["receipt", "http:x"]).code(1).one_line_error();
    env.run(&["receipt", "rest:"]).code(1).one_line_error();
}
