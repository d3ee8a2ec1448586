//! Client commits may not poison the store (issue 13 §1–§2, store-format.md §8.4a,
//! DEC-STORE-5): a commit must extend the chain it observed, may not claim a namespace `world`
//! writes itself, and a resent invocation id must carry the same commit. Each refusal names
//! the field, exits 1 and leaves the store unchanged (logical snapshot and `verify`).

use serde_json::{json, Value};

use crate::common::{sha, Run, TestEnv};

/// Genesis plus one client commit; returns the env and the genesis head.
fn populated() -> (TestEnv, String) {
    let env = TestEnv::new();
    let g = env.genesis();
    env.commit_ok(&g.next("base"));
    (env, g.head)
}

#[track_caller]
fn refused(env: &TestEnv, body: &Value, needle: &str) -> Run {
    let before = env.snapshot();
    let file = env.write("poison.json", &serde_json::to_vec(body).unwrap());
    let r = env.run(&["commit", file.to_str().unwrap()]).code(1);
    let line = r.one_line_error();
    assert!(line.contains(needle), "{line:?} should mention {needle:?}");
    assert!(line.contains("nothing written"), "{line}");
    assert_eq!(env.snapshot(), before, "a refused commit changed the store");
    env.verify_ok();
    r
}

#[test]
fn a_next_world_naming_an_existing_world_is_refused_and_the_head_stays() {
    let (env, genesis_head) = populated();
    let head = env.tip().head;
    let mut b = env.tip().next("back").json;
    b["nextWorld"]["ref"] = json!(genesis_head);
    refused(&env, &b, "NextWorld.Ref names an existing world");
    assert_eq!(env.tip().head, head, "the head did not move back");
}

#[test]
fn a_revision_differing_from_the_entry_index_is_refused() {
    let (env, _) = populated();
    let mut b = env.tip().next("rev").json;
    b["nextWorld"]["revision"] = json!(0);
    refused(
        &env,
        &b,
        "NextWorld.Revision must equal Entry.Header.EntryIndex",
    );
}

#[test]
fn entry_indexes_off_the_chain_are_refused() {
    let (env, _) = populated();
    for idx in [json!(-1), json!(2 + 5), json!(1i64 << 62), json!(1)] {
        let mut b = env.tip().next("idx").json;
        b["entry"]["header"]["entryIndex"] = idx.clone();
        b["nextWorld"]["revision"] = idx;
        refused(
            &env,
            &b,
            "Entry.Header.EntryIndex must be the observed world's revision + 1 (want 2",
        );
    }
}

#[test]
fn reserved_writers_are_refused() {
    let (env, _) = populated();
    for w in [
        "coordinator:x",
        "coordinator:cli",
        "world:genesis",
        "world:anything",
    ] {
        let mut b = env.tip().next("writer").json;
        b["entry"]["header"]["writtenBy"] = json!(w);
        refused(
            &env,
            &b,
            "Entry.Header.WrittenBy is in a namespace only world writes itself",
        );
    }
}

#[test]
fn a_prev_entry_hash_or_log_head_off_the_chain_is_refused() {
    let (env, _) = populated();
    let mut b = env.tip().next("prev").json;
    b["entry"]["header"]["prevEntryHash"] = json!(sha(b"elsewhere"));
    refused(
        &env,
        &b,
        "Entry.Header.PrevEntryHash must be the observed world's logHead",
    );
    let mut b = env.tip().next("loghead").json;
    b["nextWorld"]["logHead"] = json!(sha(b"elsewhere"));
    refused(&env, &b, "NextWorld.LogHead must equal Entry.EntryHash");
}

#[test]
fn a_genesis_commit_must_start_the_chain_at_zero() {
    let env = TestEnv::new();
    let mut b = crate::common::genesis_body("g").json;
    b["entry"]["header"]["entryIndex"] = json!(3);
    b["nextWorld"]["revision"] = json!(3);
    let file = env.write("g.json", &serde_json::to_vec(&b).unwrap());
    let r = env.run(&["commit", file.to_str().unwrap()]).code(1);
    assert!(
        r.one_line_error()
            .contains("must be 0 for a genesis commit"),
        "{r:#?}"
    );
    // A genesis claiming world:genesis with values that do not recompute is refused too.
    let mut b = crate::common::genesis_body("g2").json;
    b["entry"]["header"]["writtenBy"] = json!("world:genesis");
    let file = env.write("g2.json", &serde_json::to_vec(&b).unwrap());
    let r = env.run(&["commit", file.to_str().unwrap()]).code(1);
    assert!(
        r.one_line_error()
            .contains("Entry.EntryHash must be the recomputed"),
        "{r:#?}"
    );
    // The honest genesis still lands and verifies.
    env.commit_ok(&crate::common::genesis_body("g3"));
    env.verify_ok();
}

#[test]
fn a_resent_invocation_id_must_carry_the_same_commit() {
    let (env, _) = populated();
    let tip = env.tip();
    let b = tip.next("once").with_invocation("rest:same");
    env.commit_ok(&b);
    // The identical resend is idempotent.
    let r = env.commit(&b).ok();
    assert!(r.stderr.contains("already committed"), "{r:#?}");
    type Mutation = (&'static str, fn(&mut Value));
    let mutations: [Mutation; 6] = [
        ("Entry.Header.WrittenBy", |v| {
            v["entry"]["header"]["writtenBy"] = json!("client:other")
        }),
        ("Objects.Provenance", |v| {
            v["objects"][0]["provenance"] = json!("someone-else")
        }),
        ("Objects.SemanticID", |v| {
            v["objects"][0]["semanticId"] = json!("test/other/v1")
        }),
        ("Objects.InterfaceHash", |v| {
            v["objects"][0]["interfaceHash"] = json!(sha(b"other-iface"))
        }),
        ("Entry.Header.SemanticsEpoch", |v| {
            v["entry"]["header"]["semanticsEpoch"] = json!(7)
        }),
        ("NextWorld.StateRoot", |v| {
            v["nextWorld"]["stateRoot"] = json!(sha(b"other-root"))
        }),
    ];
    for (field, mutate) in mutations {
        let mut v = b.json.clone();
        mutate(&mut v);
        let r = refused(
            &env,
            &v,
            "invocationId \"rest:same\" was used for a different commit",
        );
        assert!(r.stderr.contains(field), "{field}: {r:#?}");
    }
    // An extra object is a different commit too.
    let mut v = b.json.clone();
    let extra = v["objects"][0].clone();
    let payload = b"extra-object";
    let mut extra = extra;
    extra["hash"] = json!(sha(payload));
    extra["payload"] = json!(base64_std(payload));
    v["objects"].as_array_mut().unwrap().push(extra);
    let r = refused(&env, &v, "was used for a different commit");
    assert!(r.stderr.contains("Objects differs"), "{r:#?}");
}

fn base64_std(b: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(b)
}
