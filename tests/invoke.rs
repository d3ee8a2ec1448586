//! `world invoke` end to end through the binary (transitions.md §7–§11, authority-and-broker.md
//! §6–§10; issues 5 and 4): bad input that must commit nothing, the exit codes of committed
//! calls, idempotency, `why`, receipts, the Workspace handlers and the authority attacks. The
//! head-moved conflict is tested on the library path (see `conflict_*`): the CLI holds the
//! writer lock for the whole call, so another process cannot move the head under it.
//!
//! Test transitions: fixtures/transitions/test/ (embedded AILANG; manifest.json there).

use crate::invoke_support;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use invoke_support::{assert_exit, stderr, stdout_json, AfterRunPins, Env};
use serde_json::{json, Value};

const READ_ANY: &str = "Workspace.Read=worktree:9";
const WRITE_ANY: &str = "Workspace.Write=worktree:9";
const APPLY: &str = "world.apply=world:9";

fn session(env: &Env) -> PathBuf {
    env.mint("ep1", &[APPLY, READ_ANY, WRITE_ANY])
}

/// The call fails with `code`, stderr contains `want`, and nothing durable changed.
#[track_caller]
fn refused_without_trace(_env: &Env, out: &std::process::Output, code: i32, want: &str) {
    assert_exit(out, code);
    let err = stderr(out);
    assert!(err.contains(want), "stderr lacks {want:?}: {err}");
    assert!(out.stdout.is_empty(), "stdout: {:?}", out.stdout);
}

// ---------------------------------------------------------------- 1. bad input

#[test]
fn unknown_and_invisible_transitions_answer_alike_and_commit_nothing() {
    let env = Env::new();
    let tok = session(&env);
    let before = env.fingerprint();
    let unknown = env.invoke(&tok, "no-such-tool", "{}", &[]);
    let hidden = env.invoke(&tok, "hidden", "{}", &[]);
    refused_without_trace(&env, &unknown, 1, "unknown transition");
    refused_without_trace(&env, &hidden, 1, "unknown transition");
    // Visibility leaks nothing: the same words once the id itself is blanked out.
    assert_eq!(
        stderr(&unknown).replace("no-such-tool", "ID"),
        stderr(&hidden).replace("hidden", "ID")
    );
    assert_eq!(env.fingerprint(), before);
    // tools list agrees: the hidden transition is not listed.
    let tools = env.ok(&[
        "tools",
        "list",
        "--session",
        tok.to_str().unwrap_or_default(),
    ]);
    assert!(
        tools.contains("probe") && !tools.contains("hidden"),
        "{tools}"
    );
}

#[test]
fn args_failing_the_input_schema_name_the_path_and_commit_nothing() {
    let env = Env::new();
    let tok = session(&env);
    let before = env.fingerprint();
    let wrong_type = env.invoke(&tok, "probe", r#"{"case":1}"#, &[]);
    refused_without_trace(&env, &wrong_type, 1, "inputSchema at /case");
    let missing = env.invoke(&tok, "readcount", "{}", &[]);
    refused_without_trace(&env, &missing, 1, "inputSchema at /");
    assert!(stderr(&missing).contains("path"), "{}", stderr(&missing));
    let extra = env.invoke(&tok, "readcount", r#"{"path":"x","extra":1}"#, &[]);
    refused_without_trace(&env, &extra, 1, "'extra' was unexpected");
    let not_object = env.invoke(&tok, "echo", "[1]", &[]);
    refused_without_trace(&env, &not_object, 1, "must be a JSON object");
    assert_eq!(env.fingerprint(), before);
}

#[test]
fn plan_law_violations_commit_nothing() {
    let env = Env::new();
    let tok = session(&env);
    std::fs::write(env.ws.join("ep1/x"), "x\n").expect("write");
    let before = env.fingerprint();
    let cases: &[(&str, &str)] = &[
        (r#"{"case":"two"}"#, "plan law L1"),
        (
            r#"{"case":"effect","id":"E_1","payload":{"op":"read","path":"x"}}"#,
            "plan law L2",
        ),
        (
            r#"{"case":"effect","id":"abcdefghijklmnopq","payload":{"op":"read","path":"x"}}"#,
            "plan law L2",
        ),
        (
            r#"{"case":"effect","effect":"Workspace.Delete","payload":{"op":"read","path":"x"}}"#,
            "plan law L3: (Workspace.Delete, worktree, 1)",
        ),
        (
            r#"{"case":"effect","cost":2,"payload":{"op":"read","path":"x"}}"#,
            "plan law L3: (Workspace.Read, worktree, 2)",
        ),
        (
            r#"{"case":"effect","scope":"elsewhere","payload":{"op":"read","path":"x"}}"#,
            "plan law L3",
        ),
        (r#"{"case":"null-result"}"#, "plan law L7"),
        (r#"{"case":"result-world"}"#, "plan law L6"),
        (r#"{"case":"plan-world"}"#, "plan law L6"),
        // A 2 MiB payload cannot leave the capsule: the phase output is capped at MaxOutput
        // (1 MiB, transitions.md §6) before parsePlan could apply L4 (DEC-INVOKE-TEST-2).
        (r#"{"case":"big"}"#, "exceeds the output cap"),
        (r#"{"case":"non-json"}"#, "is not a JSON object"),
    ];
    for (args, want) in cases {
        let out = env.invoke(&tok, "probe", args, &[]);
        refused_without_trace(&env, &out, 1, want);
        assert_eq!(env.fingerprint(), before, "{args} changed the store");
    }
    env.verify_ok();
}

#[test]
fn a_finish_output_using_the_key_world_leaves_the_effect_unrecorded() {
    let env = Env::new();
    let tok = session(&env);
    std::fs::write(env.ws.join("ep1/x"), "x\n").expect("write");
    let before = env.fingerprint();
    let out = env.invoke(
        &tok,
        "probe",
        r#"{"case":"effect","finish":true,"finishMode":"world","payload":{"op":"read","path":"x"}}"#,
        &["--invocation-id", "fw"],
    );
    assert_exit(&out, 5);
    let err = stderr(&out);
    assert!(
        err.contains("not confirmed committed; effect records: sha256:"),
        "{err}"
    );
    assert!(err.contains("L6"), "{err}");
    let after = env.fingerprint();
    assert_eq!(after.log, before.log, "nothing may be committed");
    let records = env.effects(&[]);
    assert_eq!(records.len(), 1);
    assert!(
        err.contains(records[0]["ref"].as_str().unwrap_or("?")),
        "{err}"
    );
    // The effect itself is resolved; the invocation is not, and is never run again.
    assert_eq!(env.receipt("effect:ep1:0").0["state"], "resolved");
    // The started marker makes the invocation's receipt truthful: its effect ran, it never
    // committed, so it is indeterminate (exit 5), never not-started.
    assert_eq!(env.receipt("cli:ep1:fw").0["state"], "indeterminate");
    let again = env.invoke(
        &tok,
        "probe",
        r#"{"case":"effect","finish":true,"finishMode":"world","payload":{"op":"read","path":"x"}}"#,
        &["--invocation-id", "fw"],
    );
    assert_exit(&again, 5);
    assert!(stderr(&again).contains("invocation was not committed; send a new task id"));
    assert_eq!(env.intents("effect:ep1:"), 1);
    env.verify_ok();
}

#[test]
fn a_pure_output_is_verbatim_even_with_a_world_key() {
    // DEC-INVOKE-TEST-1: L6 guards v2 outputs (the host composes the world block); a v1
    // output is stored verbatim (transitions.md §7).
    let env = Env::new();
    let tok = session(&env);
    let out = env.invoke(&tok, "pure", r#"{"case":"world"}"#, &[]);
    assert_exit(&out, 0);
    assert_eq!(out.stdout, b"{\"ok\":true,\"world\":1}\n");
}

#[test]
fn a_pure_output_that_is_not_json_commits_nothing() {
    let env = Env::new();
    let tok = session(&env);
    let before = env.fingerprint();
    let out = env.invoke(&tok, "pure", r#"{"case":"non-json"}"#, &[]);
    refused_without_trace(&env, &out, 1, "transition output is not a JSON object");
    assert_eq!(env.fingerprint(), before);
}

#[test]
fn a_runtime_error_names_the_published_file_line_and_column() {
    // Issue 14 §5: the capsule runs its copy at host/capsule/main.ail; the error names the
    // manifest's transitionFnFile instead.
    let env = Env::new();
    let tok = session(&env);
    let before = env.fingerprint();
    let out = env.invoke(&tok, "pure", r#"{"case":"div","n":0}"#, &[]);
    refused_without_trace(
        &env,
        &out,
        1,
        "division by zero (at fixtures/transitions/test/pure.ail:27:46)",
    );
    assert!(!stderr(&out).contains("host/capsule"), "{}", stderr(&out));
    assert_eq!(env.fingerprint(), before);
    let out = env.invoke(&tok, "pure", r#"{"case":"div","n":5}"#, &[]);
    assert_exit(&out, 0);
    assert_eq!(out.stdout, b"{\"q\":2}\n");
}

#[test]
fn a_plan_phase_past_two_seconds_hits_its_deadline_and_commits_nothing() {
    let env = Env::new();
    let tok = session(&env);
    let before = env.fingerprint();
    let t = Instant::now();
    let out = env.invoke(&tok, "probe", r#"{"case":"plan-spin"}"#, &[]);
    let took = t.elapsed();
    refused_without_trace(
        &env,
        &out,
        1,
        "invocation exceeded its deadline (plan phase)",
    );
    assert!(
        took >= Duration::from_millis(1900) && took < Duration::from_secs(8),
        "{took:?}"
    );
    assert_eq!(env.fingerprint(), before);
}

#[test]
fn no_genesis_yet_is_refused() {
    let env = Env::bare();
    env.publish();
    let tok = env.mint("ep1", &[APPLY]);
    let before = env.fingerprint();
    let out = env.invoke(&tok, "echo", "{}", &[]);
    refused_without_trace(
        &env,
        &out,
        1,
        "no world is selected; commit a genesis world first",
    );
    assert_eq!(env.fingerprint(), before);
}

#[test]
fn expired_revoked_and_malformed_sessions_are_refused() {
    let env = Env::new();
    let tok = env.mint_with("ep1", &[APPLY], &["--ttl", "60"]);
    let before = env.fingerprint();
    // Expired: the clock moved past expiresAt (0 <= now < expiresAt).
    let later = (std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
        + 3600)
        .to_string();
    let out = env
        .cmd(&[
            "invoke",
            "echo",
            "--session",
            tok.to_str().unwrap_or_default(),
        ])
        .env("WORLD_TEST_NOW", &later)
        .output()
        .expect("run");
    refused_without_trace(&env, &out, 1, "expired");
    // Wrong length: 63 and 65 hex digits in a 0600 file, and in WORLD_SESSION.
    for n in [63usize, 65] {
        let f = env.root.join(format!("short{n}"));
        std::fs::write(&f, "a".repeat(n)).expect("write");
        let out = env.invoke(&f, "echo", "{}", &[]);
        assert_exit(&out, 1);
        assert!(stderr(&out).contains("session"), "{}", stderr(&out));
        let out = env
            .cmd(&["invoke", "echo"])
            .env("WORLD_SESSION", "a".repeat(n))
            .output()
            .expect("run");
        assert_exit(&out, 1);
    }
    // A well-formed token nobody minted.
    let out = env.invoke(&env.root.join("nobody"), "echo", "{}", &[]);
    assert_exit(&out, 1);
    let stranger = env.root.join("stranger");
    std::fs::write(&stranger, "b".repeat(64)).expect("write");
    std::fs::set_permissions(
        &stranger,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .expect("chmod");
    let out = env.invoke(&stranger, "echo", "{}", &[]);
    assert_exit(&out, 1);
    assert_eq!(env.fingerprint(), before);
    // Revoked: it worked, then it does not.
    let live = env.mint("ep1", &[APPLY]);
    assert_exit(&env.invoke(&live, "echo", "{}", &[]), 0);
    env.ok(&["session", "revoke", "--episode", "ep1"]);
    let before = env.fingerprint();
    let out = env.invoke(&live, "echo", "{}", &[]);
    assert_exit(&out, 1);
    // A revoked credential says so (issue 13 §7); one never minted here is unknown.
    assert!(
        stderr(&out).contains("session credential has been revoked"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&env.invoke(&stranger, "echo", "{}", &[])).contains("unknown session credential")
    );
    assert_eq!(env.fingerprint(), before);
}

#[test]
fn the_writer_lock_keeps_other_writers_out_for_the_whole_invoke() {
    // The head cannot move under a CLI invoke: another writer is refused (exit 6) while the
    // call runs, and with --wait-lock it runs after the commit (DEC-INVOKE-TEST-3). The
    // head-moved mapping itself is tested on the library path below.
    let env = Env::new();
    let tok = session(&env);
    let child = env
        .std_cmd(&[
            "invoke",
            "probe",
            "--session",
            tok.to_str().unwrap_or_default(),
            "--args",
            r#"{"case":"plan-spin"}"#,
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    std::thread::sleep(Duration::from_millis(500));
    let other = env.run(&[
        "session",
        "mint",
        "--episode",
        "ep9",
        "--grant",
        APPLY,
        "--yes",
    ]);
    assert_exit(&other, 6);
    let waited = env.run(&[
        "--wait-lock",
        "30",
        "session",
        "mint",
        "--episode",
        "ep9",
        "--grant",
        APPLY,
        "--yes",
        "--out",
        env.root.join("tok-ep9").to_str().unwrap_or_default(),
    ]);
    assert_exit(&waited, 0);
    let status = child.wait_with_output().expect("wait");
    assert_eq!(status.status.code(), Some(1));
}

// ---------------------------------------------------------------- 2. outcomes

#[test]
fn exit_codes_ok_refused_denied_and_failed() {
    let env = Env::new();
    let tok = env.mint("ep1", &[APPLY, "Workspace.Read=worktree:2"]);
    std::fs::write(env.ws.join("ep1/notes.txt"), "a b\nc\n").expect("write");
    std::os::unix::fs::symlink("/etc/hostname", env.ws.join("ep1/escape")).expect("symlink");
    // 0: pure and effectful.
    let out = env.invoke(&tok, "echo", r#"{"a":1}"#, &[]);
    assert_exit(&out, 0);
    assert_eq!(out.stdout, b"{\"a\":1}\n");
    let out = env.invoke(&tok, "readcount", r#"{"path":"notes.txt"}"#, &[]);
    assert_exit(&out, 0);
    let v = stdout_json(&out);
    assert_eq!(
        (v["lines"].clone(), v["words"].clone()),
        (json!(3), json!(3))
    );
    assert_eq!(v["world"]["effects"][0]["status"], "ok");
    // 7: committed refusals, pure and zero-effect plan.
    let before = env.fingerprint();
    assert_exit(&env.invoke(&tok, "pure", r#"{"case":"refuse"}"#, &[]), 7);
    let out = env.invoke(&tok, "probe", r#"{"case":"refuse"}"#, &[]);
    assert_exit(&out, 7);
    assert_eq!(stdout_json(&out)["world"]["effects"], json!([]));
    let after = env.fingerprint();
    assert_ne!(after.log, before.log, "a refusal is provenance too");
    // 9: a read escaping through a symlink fails in the handler; the unit stays spent.
    let out = env.invoke(
        &tok,
        "probe",
        r#"{"case":"effect","finish":true,"payload":{"op":"read","path":"escape"}}"#,
        &[],
    );
    assert_exit(&out, 9);
    let v = stdout_json(&out);
    assert_eq!(v["status"], "failed");
    assert_eq!(v["output"], Value::Null);
    let failed: Vec<Value> = env
        .effects(&[])
        .into_iter()
        .filter(|r| r["failed"] == json!(true))
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(
        (
            failed[0]["budgetBefore"].clone(),
            failed[0]["budgetAfter"].clone()
        ),
        (json!(1), json!(0))
    );
    // 8: the budget is exhausted; the denial is recorded and listed, and is not spend.
    let out = env.invoke(&tok, "readcount", r#"{"path":"notes.txt"}"#, &[]);
    assert_exit(&out, 8);
    let v = stdout_json(&out);
    assert_eq!(v["world"]["effects"][0]["status"], "denied");
    let denied = env.effects(&["--denied"]);
    assert_eq!(denied.len(), 1, "{denied:?}");
    assert_eq!(denied[0]["denial"], "denied:budget");
    assert_eq!(denied[0]["allowed"], json!(false));
    assert_eq!(
        (
            denied[0]["budgetBefore"].clone(),
            denied[0]["budgetAfter"].clone()
        ),
        (json!(0), json!(0))
    );
    assert_eq!(denied[0]["ref"], v["world"]["effects"][0]["record"]);
    assert_eq!(env.intents("effect:ep1:"), 2, "a denial is not spend");
    env.verify_ok();
}

/// The persisted spend tally (DEC-PERF-1) is derived state: an edited row is reported by
/// `verify`, ignored by the broker (the budget still holds) and rebuilt by the next call.
#[test]
fn an_edited_spend_tally_is_not_trusted_and_is_rebuilt() {
    let env = Env::new();
    let tok = env.mint("ep1", &[APPLY, "Workspace.Read=worktree:2"]);
    std::fs::write(env.ws.join("ep1/notes.txt"), "a b\nc\n").expect("write");
    for _ in 0..2 {
        assert_exit(
            &env.invoke(&tok, "readcount", r#"{"path":"notes.txt"}"#, &[]),
            0,
        );
    }
    let conn = env.conn();
    let seq = |c: &rusqlite::Connection| -> i64 {
        c.query_row(
            "SELECT valid_to_seq FROM world_spend_tally WHERE episode_id = 'ep1'",
            [],
            |r| r.get(0),
        )
        .expect("tally row")
    };
    let before = seq(&conn);
    assert!(before > 0);
    env.verify_ok();
    // Someone zeroes the spend without knowing the checksum.
    conn.execute(
        "UPDATE world_spend_tally SET spend_json = '[]' WHERE episode_id = 'ep1'",
        [],
    )
    .expect("edit");
    let out = env.run(&["verify"]);
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(text.contains("spend_tally_stale"), "{text}");
    // The budget of 2 is spent: the edit does not buy a third read.
    let out = env.invoke(&tok, "readcount", r#"{"path":"notes.txt"}"#, &[]);
    assert_exit(&out, 8);
    assert_eq!(stdout_json(&out)["world"]["effects"][0]["status"], "denied");
    assert!(
        seq(&conn) > before,
        "the decision rebuilt and rewrote the row"
    );
    let text = env.verify_ok();
    assert!(!text.contains("spend_tally"), "{text}");
}

/// The checksum of a `world_spend_tally` row as the broker computes it (an attacker can
/// recompute it: it is unkeyed).
fn tally_checksum(episode: &str, seq: i64, next: Option<i64>, spend: &str, state: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(b"world/spend-tally/v1\n");
    let next = next.map_or_else(|| "null".to_string(), |n| n.to_string());
    for part in [episode, &seq.to_string(), &next, spend, state] {
        h.update((part.len() as u64).to_be_bytes());
        h.update(part.as_bytes());
    }
    hex::encode(h.finalize())
}

/// Issue 27 §3: a spend tally edited *and re-checksummed* (the checksum is unkeyed) is not one
/// the broker wrote — its checksum is not in the append-only `world_spend_folds` — so `verify`
/// fails (`spend_tally`, exit 3) and the next decision refuses (exit 3) writing nothing,
/// instead of granting a third read on a zeroed spend.
#[test]
fn a_re_checksummed_spend_tally_is_reported_and_refused() {
    let env = Env::new();
    let tok = env.mint("ep1", &[APPLY, "Workspace.Read=worktree:2"]);
    std::fs::write(env.ws.join("ep1/notes.txt"), "a b\nc\n").expect("write");
    for _ in 0..2 {
        assert_exit(
            &env.invoke(&tok, "readcount", r#"{"path":"notes.txt"}"#, &[]),
            0,
        );
    }
    env.verify_ok();
    let conn = env.conn();
    let (seq, next, state): (i64, Option<i64>, String) = conn
        .query_row(
            "SELECT valid_to_seq, next_ordinal, state_json FROM world_spend_tally WHERE episode_id = 'ep1'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("tally row");
    let forged = tally_checksum("ep1", seq, next, "[]", &state);
    conn.execute(
        "UPDATE world_spend_tally SET spend_json = '[]', checksum = ?1 WHERE episode_id = 'ep1'",
        [&forged],
    )
    .expect("edit");
    let out = env.run(&["verify"]);
    assert_exit(&out, 3);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        text.contains("spend_tally") && text.contains("edited"),
        "{text}"
    );
    let journal = |c: &rusqlite::Connection| -> i64 {
        c.query_row("SELECT count(*) FROM journal", [], |r| r.get(0))
            .expect("count")
    };
    let before = journal(&conn);
    let out = env.invoke(&tok, "readcount", r#"{"path":"notes.txt"}"#, &[]);
    assert_exit(&out, 3);
    assert!(stderr(&out).contains("spend tally"), "{}", stderr(&out));
    assert_eq!(
        journal(&conn),
        before,
        "the refused decision wrote to the journal"
    );
}

#[test]
fn the_same_invocation_id_is_idempotent_and_a_different_input_is_refused() {
    let env = Env::new();
    let tok = session(&env);
    std::fs::write(env.ws.join("ep1/notes.txt"), "one\n").expect("write");
    for (id, args, other) in [
        ("echo", r#"{"a":1}"#, r#"{"a":2}"#),
        (
            "readcount",
            r#"{"path":"notes.txt"}"#,
            r#"{"path":"other.txt"}"#,
        ),
    ] {
        let first = env.invoke(&tok, id, args, &["--invocation-id", id, "--json"]);
        assert_exit(&first, 0);
        let first = stdout_json(&first);
        assert_eq!(first["replayed"], json!(false));
        let before = env.fingerprint();
        let again = env.invoke(&tok, id, args, &["--invocation-id", id, "--json"]);
        assert_exit(&again, 0);
        let again = stdout_json(&again);
        assert_eq!(again["replayed"], json!(true));
        for k in [
            "invocationId",
            "entryIndex",
            "worldRef",
            "outputRef",
            "output",
        ] {
            assert_eq!(first[k], again[k], "{id}: {k}");
        }
        assert_eq!(env.fingerprint(), before, "{id}: a replay writes nothing");
        let differs = env.invoke(&tok, id, other, &["--invocation-id", id]);
        refused_without_trace(&env, &differs, 1, "task id already used in this session");
        assert_eq!(env.fingerprint(), before);
    }
    assert_eq!(env.intents("effect:ep1:"), 1, "the handler ran once");
}

#[test]
fn why_walks_an_effectful_entry_and_catches_a_tampered_output() {
    let env = Env::new();
    let tok = session(&env);
    std::fs::write(env.ws.join("ep1/notes.txt"), "one two\n").expect("write");
    let out = env.invoke(
        &tok,
        "readcount",
        r#"{"path":"notes.txt"}"#,
        &["--json", "--invocation-id", "w1"],
    );
    assert_exit(&out, 0);
    let done = stdout_json(&out);
    let index = done["entryIndex"].as_i64().unwrap_or(-1).to_string();
    let why = env.run(&["why", &index]);
    assert_exit(&why, 0);
    let text = String::from_utf8_lossy(&why.stdout).into_owned();
    for link in [
        "world", "entry", "record", "input", "plan", "effect", "output",
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(&format!("✓ {link}"))),
            "no ✓ {link}: {text}"
        );
    }
    assert!(!text.contains('✗'), "{text}");
    assert!(text.contains("all 7 link(s) verified"), "{text}");
    let by_id = env.run(&["why", "cli:ep1:w1", "--json"]);
    assert_exit(&by_id, 0);
    assert_eq!(stdout_json(&by_id)["ok"], json!(true));
    assert_eq!(stdout_json(&by_id)["matchedBy"], json!("invocation"));
    // The short entry hash a `world log` row shows is matched as an entry, not an index.
    let by_index = stdout_json(&env.run(&["why", &index, "--json"]));
    assert_eq!(by_index["matchedBy"], json!("index"));
    let hash = by_index["entry"]["entryHash"]
        .as_str()
        .unwrap_or_default()
        .trim_start_matches("sha256:")
        .to_string();
    let by_hash = env.run(&["why", &hash[..12], "--json"]);
    assert_exit(&by_hash, 0);
    assert_eq!(stdout_json(&by_hash)["matchedBy"], json!("entry"));

    // Tamper with the output object's bytes: the walk and verify must both fail with 3.
    let output_ref = done["outputRef"].as_str().unwrap_or_default().to_string();
    let changed = env
        .conn()
        .execute(
            "UPDATE objects SET payload = CAST('{\"ok\":true,\"lines\":999}' AS BLOB) WHERE hash_ref = ?1",
            [&output_ref],
        )
        .expect("tamper");
    assert_eq!(changed, 1);
    let why = env.run(&["why", &index]);
    assert_exit(&why, 3);
    let text = String::from_utf8_lossy(&why.stdout).into_owned();
    assert!(
        text.lines().any(|l| l.starts_with("✗ output")),
        "no ✗ output: {text}"
    );
    assert_exit(&env.run(&["verify"]), 3);
    // And the recorded answer is no longer served for the same id.
    let again = env.invoke(
        &tok,
        "readcount",
        r#"{"path":"notes.txt"}"#,
        &["--invocation-id", "w1"],
    );
    assert_exit(&again, 3);
}

#[test]
fn receipts_resolve_for_invocations_and_effects() {
    let env = Env::new();
    let tok = session(&env);
    std::fs::write(env.ws.join("ep1/notes.txt"), "x").expect("write");
    let (r, code) = env.receipt("cli:ep1:r1");
    assert_eq!((r["state"].clone(), code), (json!("not-started"), Some(1)));
    let out = env.invoke(
        &tok,
        "readcount",
        r#"{"path":"notes.txt"}"#,
        &["--json", "--invocation-id", "r1"],
    );
    assert_exit(&out, 0);
    let done = stdout_json(&out);
    let (r, code) = env.receipt("cli:ep1:r1");
    assert_eq!(code, Some(0));
    assert_eq!(r["state"], "resolved");
    assert_eq!(r["resultRef"], done["worldRef"]);
    let (r, code) = env.receipt("effect:ep1:0");
    assert_eq!((r["state"].clone(), code), (json!("resolved"), Some(0)));
    assert_eq!(
        r["recordRef"],
        done["output"]["world"]["effects"][0]["record"]
    );
}

#[test]
fn a_write_through_ailang_write_reads_back_through_ailang_read() {
    let env = Env::new();
    let tok = session(&env);
    let out = env.invoke(
        &tok,
        "ailang-write",
        r#"{"path":"src/new.ail","content":"module x\n-- héllo\n"}"#,
        &[],
    );
    assert_exit(&out, 0);
    assert_eq!(stdout_json(&out)["world"]["effects"][0]["status"], "ok");
    assert_eq!(
        std::fs::read_to_string(env.ws.join("ep1/src/new.ail")).expect("written"),
        "module x\n-- héllo\n"
    );
    let out = env.invoke(&tok, "ailang-read", r#"{"path":"src/new.ail"}"#, &[]);
    assert_exit(&out, 0);
    let v = stdout_json(&out);
    assert_eq!(v["content"], "module x\n-- héllo\n", "{v}");
    let kinds: Vec<String> = env
        .effects(&[])
        .iter()
        .map(|r| r["effect"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(kinds, ["Workspace.Write", "Workspace.Read"]);
    env.verify_ok();
}

#[test]
fn r8_an_effect_without_a_handler_is_refused_before_any_plan_runs() {
    let env = Env::new();
    let tok = env.mint("ep1", &["Ailang.Check=worktree:5"]);
    let before = env.fingerprint();
    let t = Instant::now();
    let out = env.invoke(&tok, "check", "{}", &[]);
    // The plan of `check` loops until its 2 s deadline: an answer well before that proves
    // the plan never ran.
    assert!(
        t.elapsed() < Duration::from_millis(1500),
        "{:?}",
        t.elapsed()
    );
    refused_without_trace(
        &env,
        &out,
        1,
        "transition declares an effect this daemon has no handler for (Ailang.Check)",
    );
    assert_eq!(env.fingerprint(), before);
}

// ---------------------------------------------------------------- 3. authority attacks

#[test]
fn malformed_and_overflowing_grants_are_refused_and_mint_nothing() {
    let env = Env::new();
    let before = env.fingerprint();
    let count = |env: &Env| -> i64 {
        env.conn()
            .query_row("SELECT count(*) FROM session_credentials", [], |r| r.get(0))
            .expect("count")
    };
    let n = count(&env);
    for (grant, want) in [
        ("Workspace.Read", "EFFECT=SCOPE:BUDGET"),
        ("Workspace.Read=worktree", "EFFECT=SCOPE:BUDGET"),
        ("=worktree:1", "EFFECT and SCOPE must be non-empty"),
        ("Workspace.Read=:1", "EFFECT and SCOPE must be non-empty"),
        ("Workspace.Read=worktree:", "is not an integer"),
        ("Workspace.Read=worktree:1x", "is not an integer"),
        ("Workspace.Read=worktree:-1", "non-negative"),
        (
            "Workspace.Read=worktree:9223372036854775808",
            "overflows int64",
        ),
        (
            "Workspace.Read=worktree:99999999999999999999",
            "overflows int64",
        ),
    ] {
        let out = env.run(&[
            "session",
            "mint",
            "--episode",
            "ep1",
            "--grant",
            grant,
            "--yes",
        ]);
        assert_exit(&out, 2);
        let err = stderr(&out);
        assert!(err.contains(grant) && err.contains(want), "{grant}: {err}");
        assert!(out.stdout.is_empty(), "{grant}: a token was printed");
    }
    assert_eq!(count(&env), n);
    assert_eq!(env.fingerprint(), before);
    // The largest int64 is a valid budget.
    env.mint("ep1", &["Workspace.Read=worktree:9223372036854775807"]);
    assert_eq!(count(&env), n + 1);
}

/// One handler attack: the call commits with a failed effect (exit 9), exactly one failed
/// record is written and the unit is spent, and nothing outside the worktree changed.
#[track_caller]
fn handler_attack(env: &Env, tok: &std::path::Path, effect: &str, payload: Value) -> String {
    let records = env.effects(&[]).len();
    let intents = env.intents("effect:ep1:");
    let args = json!({"case":"effect","effect":effect,"finish":true,"payload":payload}).to_string();
    let out = env.invoke(tok, "probe", &args, &[]);
    assert_exit(&out, 9);
    let v = stdout_json(&out);
    assert_eq!(v["status"], "failed", "{v}");
    assert_eq!(v["output"], Value::Null, "nothing may be read: {v}");
    let all = env.effects(&[]);
    assert_eq!(all.len(), records + 1);
    let rec = &all[records];
    assert_eq!(
        (
            rec["allowed"].clone(),
            rec["failed"].clone(),
            rec["resultRef"].clone()
        ),
        // No result: `null` in the JSON contract (DEC-CLI-25).
        (json!(true), json!(true), Value::Null)
    );
    assert_eq!(env.intents("effect:ep1:"), intents + 1, "the unit is spent");
    rec["ref"].as_str().unwrap_or_default().to_string()
}

#[test]
fn workspace_attacks_fail_in_the_handler_and_touch_nothing_outside() {
    let env = Env::new();
    let tok = session(&env);
    let secret = env.ws.join("ep1_secret");
    std::fs::create_dir_all(&secret).expect("mkdir");
    std::fs::write(secret.join("s.txt"), "secret").expect("write");
    let outside = env.root.join("outside");
    std::fs::create_dir_all(&outside).expect("mkdir");
    std::os::unix::fs::symlink(&outside, env.ws.join("ep1/link")).expect("symlink");
    std::fs::create_dir_all(env.ws.join("ep1/a")).expect("mkdir");
    let read = |p: &str| json!({"op":"read","path":p});
    handler_attack(&env, &tok, "Workspace.Read", read("a/../../x"));
    handler_attack(&env, &tok, "Workspace.Read", read("../ep1_secret/s.txt"));
    handler_attack(&env, &tok, "Workspace.Read", read("/etc/hostname"));
    handler_attack(&env, &tok, "Workspace.Read", read("-rf"));
    handler_attack(
        &env,
        &tok,
        "Workspace.Write",
        json!({"op":"write","path":"link/new.txt","content":"pwned"}),
    );
    handler_attack(
        &env,
        &tok,
        "Workspace.Write",
        json!({"op":"write","path":"../ep1_secret/s.txt","content":"pwned"}),
    );
    assert!(
        !outside.join("new.txt").exists(),
        "wrote through a symlinked parent"
    );
    assert_eq!(
        std::fs::read_to_string(secret.join("s.txt")).expect("read"),
        "secret"
    );
    assert_eq!(
        std::fs::read_dir(&outside).expect("ls").count(),
        0,
        "nothing may appear outside"
    );
    env.verify_ok();
}

#[test]
fn a_worktree_that_is_a_symlink_to_etc_gets_no_workspace_handler() {
    let env = Env::new();
    let tok = env.mint("ep2", &[READ_ANY]);
    std::fs::remove_dir(env.ws.join("ep2")).expect("rmdir");
    std::os::unix::fs::symlink("/etc", env.ws.join("ep2")).expect("symlink");
    let before = env.fingerprint();
    let out = env.invoke(
        &tok,
        "probe",
        r#"{"case":"effect","finish":true,"payload":{"op":"read","path":"hostname"}}"#,
        &[],
    );
    // The per-episode setup refuses the binding, so Workspace.Read has no handler here:
    // refused by R8 before any plan or effect, nothing written (DEC-INVOKE-TEST-4).
    refused_without_trace(&env, &out, 1, "no handler for (Workspace.Read)");
    assert_eq!(env.fingerprint(), before);
}

#[test]
fn oversized_and_invalid_utf8_arguments_are_refused_before_anything_runs() {
    let env = Env::new();
    let tok = session(&env);
    let before = env.fingerprint();
    let t = tok.to_str().unwrap_or_default().to_string();
    // Raw invalid UTF-8 in the args file, and a lone surrogate escape: JSON cannot carry a
    // path with invalid UTF-8, so the call is refused at the door (the handler's own refusal
    // of such a path is a unit test in broker/handlers/workspace.rs).
    let bad = env.root.join("bad.json");
    std::fs::write(
        &bad,
        b"{\"case\":\"effect\",\"payload\":{\"op\":\"read\",\"path\":\"a\xff\"}}",
    )
    .expect("write");
    let out = env.run(&[
        "invoke",
        "probe",
        "--session",
        &t,
        "--args-file",
        bad.to_str().unwrap_or_default(),
    ]);
    refused_without_trace(&env, &out, 1, "is not JSON");
    let out = env.invoke(
        &tok,
        "probe",
        r#"{"case":"effect","payload":{"op":"read","path":"\udc80"}}"#,
        &[],
    );
    refused_without_trace(&env, &out, 1, "is not JSON");
    // 2 MiB of arguments: over MaxInput (R1).
    let big = env.root.join("big.json");
    std::fs::write(&big, format!("{{\"case\":\"{}\"}}", "x".repeat(2 << 20))).expect("write");
    let out = env.run(&[
        "invoke",
        "probe",
        "--session",
        &t,
        "--args-file",
        big.to_str().unwrap_or_default(),
    ]);
    refused_without_trace(&env, &out, 1, "limit");
    assert_eq!(env.fingerprint(), before);
}

// ---------------------------------------------------------------- head moved (library path)

/// Append one entry on a separate connection, the way another process would.
fn move_head(db: &std::path::Path) {
    use world::store::entry::{entry_hash, world_row};
    use world::store::{commit::apply, commit::Commit, Header, LogEntry, Object};
    let mut conn = rusqlite::Connection::open(db).expect("open");
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .expect("begin");
    let head: String = tx
        .query_row("SELECT world_ref FROM store_heads", [], |r| r.get(0))
        .expect("head");
    let (rev, log_head): (i64, String) = tx
        .query_row(
            "SELECT revision, log_head FROM worlds WHERE world_ref = ?1",
            [&head],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("world");
    let (epoch, tf, interp): (i64, String, String) = tx
        .query_row(
            "SELECT semantics_epoch, transition_fn_ref, interpreter_ref FROM log_entries WHERE entry_index = ?1",
            [rev],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("entry");
    let state = Object::new(
        "test/other-writer/v1",
        "test:other-writer",
        b"{\"moved\":true}".to_vec(),
    );
    let header = Header {
        entry_index: rev + 1,
        semantics_epoch: epoch,
        transition_fn: tf,
        interpreter: interp,
        prev_entry_hash: log_head,
        written_by: "test:other-writer".into(),
    };
    let eh = entry_hash(&header, &state.meta.hash).to_string();
    let commit = Commit {
        invocation_id: None,
        observed_head: head,
        objects: vec![state.clone()],
        next_world: world_row(rev + 1, &state.meta.hash, &eh),
        entry: LogEntry {
            header,
            entry_hash: eh,
            transition_ref: state.meta.hash.clone(),
        },
    };
    apply(&tx, &commit, 1_700_000_000, false).expect("other writer commits");
    tx.commit().expect("commit");
}

fn library_call(
    env: &Env,
    tok: &std::path::Path,
    id: &str,
    args: Value,
) -> Result<world::ops::invoke::Committed, world::ops::invoke::InvokeError> {
    use world::ops::invoke::{invoke, Call, Host, Surface};
    // One head move by "another writer" (a second SQLite connection) after the first run of
    // the plan (or pure) phase.
    let (db, moved) = (env.db.clone(), AtomicBool::new(false));
    let pins = AfterRunPins(std::sync::Arc::new(move |_args: &[u8]| {
        if !moved.swap(true, Ordering::SeqCst) {
            move_head(&db);
        }
    }));
    let host = Host {
        interpreters: &pins,
        workspace_root: None,
        tool: None,
        run_caps: Default::default(),
        examples_dir: None,
        services: Default::default(),
        exec: None,
        observer: None,
        unattested: Default::default(),
    };
    let call = Call {
        surface: Surface::Cli,
        token: std::fs::read_to_string(tok)
            .expect("token")
            .trim()
            .to_string(),
        transition: id.into(),
        args,
        task: Some("moved".into()),
        clock: world::clock::Clock::System,
    };
    let mut store = world::store::Store::open_write(&env.db, Default::default()).expect("open");
    invoke(&mut store, &call, &host)
}

#[test]
fn conflict_a_pure_call_whose_head_moved_fails_cleanly() {
    let env = Env::new();
    let tok = session(&env);
    let err = library_call(&env, &tok, "echo", json!({"a":1})).expect_err("must conflict");
    assert_eq!(err.class(), "ConflictError", "{err}");
    assert!(err
        .to_string()
        .contains("world head moved during invocation; not committed; send a new task id"));
    // Only the other writer's entry landed; the invocation left no intent.
    let log = env.ok(&["log", "--json"]);
    assert!(log.contains("test:other-writer"));
    assert!(!log.contains("coordinator:cli"));
    assert_eq!(env.receipt("cli:ep1:moved").0["state"], "not-started");
    env.verify_ok();
}

#[test]
fn conflict_after_an_effect_is_effects_unrecorded_naming_the_record() {
    let env = Env::new();
    let tok = session(&env);
    std::fs::write(env.ws.join("ep1/notes.txt"), "x").expect("write");
    let err = library_call(&env, &tok, "readcount", json!({"path":"notes.txt"}))
        .expect_err("must not commit");
    assert_eq!(err.class(), "EffectsUnrecordedError", "{err}");
    let records = env.effects(&[]);
    assert_eq!(records.len(), 1);
    // Issue 29: the record no committed invocation names is `effects-unrecorded`.
    assert_eq!(
        records[0]["outcome"], "effects-unrecorded",
        "{}",
        records[0]
    );
    assert!(env.ok(&["effects"]).contains("effects-unrecorded"));
    let rec = records[0]["ref"].as_str().unwrap_or("?").to_string();
    let text = err.to_string();
    assert!(
        text.starts_with("effects were requested but the invocation was not confirmed committed; effect records: ")
            && text.contains(&rec),
        "{text}"
    );
    let data = world::ops::invoke::error_data(&err);
    assert_eq!(data["effectRecords"], json!([rec]));
    // The effect is durable and debited once; no coordinator entry; a resend never reruns it.
    assert_eq!(env.receipt("effect:ep1:0").0["state"], "resolved");
    assert!(!env.ok(&["log", "--json"]).contains("coordinator:cli"));
    let again = env.invoke(
        &tok,
        "readcount",
        r#"{"path":"notes.txt"}"#,
        &["--invocation-id", "moved", "--json"],
    );
    assert_exit(&again, 5);
    // The resend's commit intent has no outcome: `indeterminate`, in the JSON error too.
    assert_eq!(
        stdout_json(&again)["error"]["outcome"],
        "indeterminate",
        "{}",
        String::from_utf8_lossy(&again.stdout)
    );
    assert_eq!(env.intents("effect:ep1:"), 1);
    env.verify_ok();
}

/// Issue 16: `world log` says what happened (time, writer, transition, outcome, episode,
/// invocation), filters by episode/transition/writer/invocation/since, `world show` puts one
/// invocation in one view, `world status` summarises the store.
#[test]
fn log_show_and_status_say_what_happened() {
    let env = Env::new();
    let tok = session(&env);
    std::fs::write(env.ws.join("ep1/notes.txt"), "x").expect("write");
    let out = env.invoke(
        &tok,
        "readcount",
        r#"{"path":"notes.txt"}"#,
        &["--json", "--invocation-id", "r1"],
    );
    assert_exit(&out, 0);
    let log = env.ok(&["log"]);
    let header = log.lines().next().expect("header");
    for col in [
        "INDEX",
        "TIME",
        "WRITTEN BY",
        "TRANSITION",
        "OUTCOME",
        "INVOCATION",
    ] {
        assert!(header.contains(col), "{log}");
    }
    let row = log
        .lines()
        .find(|l| l.contains("cli:ep1:r1"))
        .unwrap_or_else(|| panic!("no row for the invocation: {log}"));
    assert!(
        row.contains("readcount") && row.contains(" ok ") && row.contains("ep1"),
        "{row}"
    );
    let time = row.split_whitespace().nth(1).unwrap_or("");
    assert!(
        time.len() == 20 && time.ends_with('Z') && time.as_bytes()[10] == b'T',
        "RFC 3339 time: {row}"
    );
    // Filters.
    let only = |args: &[&str]| -> Vec<i64> {
        let mut a = vec!["log", "--json"];
        a.extend_from_slice(args);
        env.ok(&a)
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["header"]["entryIndex"]
                    .as_i64()
                    .unwrap()
            })
            .collect()
    };
    let all = only(&[]);
    let ours = only(&["--invocation", "cli:ep1:r1"]);
    assert_eq!(ours.len(), 1, "{all:?}");
    assert_eq!(only(&["--episode", "ep1"]), ours);
    assert_eq!(only(&["--transition", "readcount"]), ours);
    assert_eq!(only(&["--writer", "coordinator"]), ours);
    assert_eq!(only(&["--since", "2000-01-01"]), ours);
    assert!(only(&["--since", "2999-01-01T00:00:00Z"]).is_empty());
    assert!(only(&["--episode", "nope"]).is_empty());
    assert_eq!(only(&["--writer", "world"]).len(), all.len() - 1);
    // --follow ends at --until-index.
    let last = *all.last().unwrap();
    let f = env.ok(&[
        "log",
        "--follow",
        "--until-index",
        &last.to_string(),
        "--json",
    ]);
    assert_eq!(f.lines().count(), all.len());
    // show: by invocation id, by index and by head agree.
    let by_id: Value = serde_json::from_str(&env.ok(&["show", "cli:ep1:r1", "--json"])).unwrap();
    let by_index: Value =
        serde_json::from_str(&env.ok(&["show", &ours[0].to_string(), "--json"])).unwrap();
    let by_head: Value = serde_json::from_str(&env.ok(&["show", "head", "--json"])).unwrap();
    assert_eq!(by_id, by_index);
    assert_eq!(by_id, by_head);
    let inv = &by_id["invocation"];
    assert_eq!(inv["transition"], "readcount");
    assert_eq!(inv["outcome"], "ok");
    assert_eq!(inv["receipt"]["state"], "resolved");
    assert!(inv["input"].is_object(), "input is nested JSON: {inv}");
    let e = &inv["effects"][0];
    assert!(
        e["budgetBefore"].is_number() && e["budgetAfter"].is_number(),
        "{inv}"
    );
    let text = env.ok(&["show", "cli:ep1:r1"]);
    assert!(text.contains("budget ") && text.contains("→"), "{text}");
    assert!(text.contains("outcome ok"), "{text}");
    // The entry hash the table prints pastes into show.
    let short = row.split_whitespace().rev().nth(1).expect("entry column");
    let by_short: Value = serde_json::from_str(&env.ok(&["show", short, "--json"])).unwrap();
    assert_eq!(by_short, by_id, "show {short}");
    // status
    let st: Value = serde_json::from_str(&env.ok(&["status", "--json"])).unwrap();
    assert_eq!(st["entries"].as_i64(), Some(all.len() as i64));
    assert_eq!(st["liveSessions"], 1);
    assert!(
        st["registryRevision"].as_i64().is_some_and(|r| r >= 1),
        "{st}"
    );
    assert_eq!(st["indeterminate"], json!([]));
    assert!(env.ok(&["status"]).contains("live sessions       1"));
    schema_ok("status", &st);
    schema_ok("show", &by_id);
    let genesis: Value = serde_json::from_str(&env.ok(&["show", "0", "--json"])).unwrap();
    schema_ok("show", &genesis);
}

/// Validate real output against docs/json/NAME.schema.json.
#[track_caller]
fn schema_ok(name: &str, v: &Value) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("docs/json/{name}.schema.json"));
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator.iter_errors(v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{name}: {v} does not match: {errors:?}");
}
