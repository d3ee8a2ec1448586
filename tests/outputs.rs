//! insta snapshots of representative outputs (issue 17 §7): the human and `--json` forms of
//! `log`, `show`, `status`, `effects`, `receipt`, `why`, `verify` (clean and with a finding),
//! `registry get`, `transitions list`, `limits report`, `mission list` / `mission report`, and
//! error messages, each with its exit code and both streams.
//!
//! The store is built the same way every time: the harness's fixed clock (`WORLD_TEST_NOW`),
//! `--now` for the ledger commands, explicit invocation ids, the fixture manifest. What still
//! differs between runs or between unrelated changes is redacted before the comparison (see
//! [`normalize`]): the temp dir, and hashes — their values are proven by the tamper, replay and
//! verify tests; these snapshots pin the shape of the output. Snapshots live in
//! tests/snapshots/outputs__*.snap; review changes with `cargo insta review` or regenerate
//! with `INSTA_UPDATE=always cargo test --test runner outputs::`.

use crate::common::{repo, Run, TestEnv};

/// The ledger clock of the limits and mission commands (ms), the harness's `TEST_NOW`.
const NOW_MS: &str = "1700000000000";
/// The mission deadline and grant expiry (2100-01-01, ms).
const FAR_MS: &str = "4102444800000";

/// A store with the fixture transitions published, session `ep1` (world.apply and 3 units of
/// Workspace.Read), a `readcount` call with one effect (entry 1) and a pure `echo` (entry 2).
fn populated() -> TestEnv {
    let env = TestEnv::new();
    env.run(&["genesis", "-q"]).ok();
    publish(&env);
    std::fs::create_dir_all(env.path("ws/ep1")).unwrap();
    std::fs::write(env.path("ws/ep1/notes.txt"), "one two\nthree\n").unwrap();
    let ws = env.path("ws").display().to_string();
    let tok = env.path("tok").display().to_string();
    env.run(&[
        "session",
        "mint",
        "--episode",
        "ep1",
        "--yes",
        "-q",
        "--grant",
        "world.apply=world:10",
        "--grant",
        "Workspace.Read=worktree:3",
        "--workspace-root",
        &ws,
        "--out",
        &tok,
    ])
    .ok();
    for (id, transition, args) in [
        ("read1", "readcount", r#"{"path":"notes.txt"}"#),
        ("echo1", "echo", r#"{"a":1}"#),
    ] {
        env.run(&[
            "invoke",
            transition,
            "--session",
            &tok,
            "--args",
            args,
            "--invocation-id",
            id,
        ])
        .ok();
    }
    env
}

/// Publish fixtures/transitions/manifest.json (its paths are relative to the repository root).
fn publish(env: &TestEnv) {
    let out = env
        .cmd()
        .current_dir(repo())
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

/// `world ARGS` on `env` as one snapshot text: the command, the exit code, stdout, stderr.
fn transcript(env: &TestEnv, args: &[&str]) -> String {
    let r = env.run(args);
    let text = format!(
        "$ world {}\n[exit {}]\n--- stdout\n{}--- stderr\n{}",
        args.join(" "),
        r.code,
        r.stdout,
        r.stderr
    );
    normalize(env, &text)
}

/// Assert the snapshot `outputs__NAME` of `world ARGS` (the file name does not carry the
/// runner's module path, as the help snapshots do not).
fn check(env: &TestEnv, name: &str, args: &[&str]) {
    let text = transcript(env, args);
    insta::with_settings!({ prepend_module_to_snapshot => false }, {
        insta::assert_snapshot!(format!("outputs__{name}"), text);
    });
}

/// [`check`] of `world ARGS` as `NAME` and of `world ARGS --json` as `NAME-json`.
fn both(env: &TestEnv, name: &str, args: &[&str]) {
    check(env, name, args);
    check(env, &format!("{name}-json"), &[args, &["--json"]].concat());
}

/// Redact what is not the output's shape: the temp dir (`[TMP]`), every run of exactly 64 or
/// 12 lowercase hex digits (`[hash]`, `[hash12]`: full and shortened hashes), and the payload
/// byte count of `verify` (it follows the fixtures' sizes).
fn normalize(env: &TestEnv, text: &str) -> String {
    let mut s = text.to_string();
    for dir in [
        std::fs::canonicalize(env.dir.path()).unwrap_or_else(|_| env.dir.path().to_path_buf()),
        env.dir.path().to_path_buf(),
    ] {
        s = s.replace(&dir.display().to_string(), "[TMP]");
    }
    let s = redact_hex_runs(&s);
    let s = redact_number_after(&s, "objects (", " bytes)");
    redact_number_after(&s, "\"payloadBytes\":", "")
}

fn redact_hex_runs(s: &str) -> String {
    let hex = |c: char| c.is_ascii_digit() || ('a'..='f').contains(&c);
    let word = |c: char| c.is_ascii_alphanumeric();
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < chars.len() {
        let starts_word = i == 0 || !word(chars[i - 1]);
        if starts_word && hex(chars[i]) {
            let mut j = i;
            while j < chars.len() && hex(chars[j]) {
                j += 1;
            }
            let ends_word = j == chars.len() || !word(chars[j]);
            if ends_word && (j - i == 64 || j - i == 12) {
                out.push_str(if j - i == 64 { "[hash]" } else { "[hash12]" });
                i = j;
                continue;
            }
            out.extend(&chars[i..j]);
            i = j;
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// Replace the decimal number between `before` and `after` (every occurrence) with `[n]`.
fn redact_number_after(s: &str, before: &str, after: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find(before) {
        let (head, tail) = rest.split_at(at + before.len());
        out.push_str(head);
        let digits = tail.chars().take_while(|c| c.is_ascii_digit()).count();
        if digits > 0 && tail[digits..].starts_with(after) {
            out.push_str("[n]");
            rest = &tail[digits..];
        } else {
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn the_normalizer_redacts_hashes_and_the_temp_dir_only() {
    let env = TestEnv::new();
    let tmp = env.dir.path().display().to_string();
    let h64 = "ab".repeat(32);
    let text = format!(
        "{tmp}/world.db sha256:{h64} 5c6bfb309b4c… cli:ep1:read1 1700000000000 2023-11-14 \
         5c6bfb309b4cd 30 objects (55966 bytes) \"payloadBytes\":55966,"
    );
    assert_eq!(
        normalize(&env, &text),
        "[TMP]/world.db sha256:[hash] [hash12]… cli:ep1:read1 1700000000000 2023-11-14 \
         5c6bfb309b4cd 30 objects ([n] bytes) \"payloadBytes\":[n],"
    );
}

#[test]
fn log_show_and_status() {
    let env = populated();
    both(&env, "log", &["log"]);
    both(&env, "show-effect", &["show", "1"]);
    both(&env, "show-pure", &["show", "2"]);
    both(&env, "status", &["status"]);
}

#[test]
fn effects_receipt_and_why() {
    let env = populated();
    both(&env, "effects", &["effects"]);
    both(&env, "receipt-effect", &["receipt", "effect:ep1:0"]);
    both(&env, "receipt-invocation", &["receipt", "cli:ep1:read1"]);
    both(&env, "receipt-not-started", &["receipt", "cli:ep1:never"]);
    both(&env, "why", &["why", "2"]);
}

#[test]
fn verify_clean_and_with_a_finding() {
    let env = populated();
    check(&env, "verify-clean", &["verify"]);
    check(&env, "verify-clean-json", &["verify", "--json"]);
    // A coordinator entry relabelled as client-written: the journal no longer matches it.
    let c = rusqlite::Connection::open(&env.db).unwrap();
    c.execute_batch("UPDATE log_entries SET written_by = 'client:x' WHERE entry_index = 2")
        .unwrap();
    drop(c);
    check(&env, "verify-finding", &["verify"]);
    check(&env, "verify-finding-json", &["verify", "--json"]);
}

#[test]
fn registry_and_transitions_listings() {
    let env = populated();
    both(
        &env,
        "registry-get",
        &["registry", "get", "world/transition-registry/v1"],
    );
    both(&env, "transitions-list", &["transitions", "list"]);
}

#[test]
fn limits_report() {
    let env = TestEnv::new();
    env.run(&["genesis", "-q"]).ok();
    let config = repo().join("fixtures/limits/example.json");
    let config = config.display().to_string();
    env.run(&[
        "limits", "init", "--config", &config, "--yes", "--now", NOW_MS,
    ])
    .ok();
    both(
        &env,
        "limits-report",
        &["limits", "report", "--now", NOW_MS],
    );
}

#[test]
fn mission_list_and_report() {
    let env = TestEnv::new();
    env.run(&["genesis", "-q"]).ok();
    check(&env, "mission-list-empty", &["mission", "list"]);
    let contract = serde_json::json!({"id": "c", "missionId": "m", "aiwsEdition": "0.4",
        "profile": "finite-v1", "budget": "10", "deadline": FAR_MS,
        "criteria": ["review"], "actions": ["Model.Infer"], "resources": ["model"],
        "requiresApproval": false, "maxAttempts": "3",
        "maxAuthorizationAgeMs": "60000", "features": []});
    let c = env.write("contract.json", contract.to_string().as_bytes());
    let c = c.display().to_string();
    for args in [
        &[
            "mission",
            "create",
            "--contract",
            &c,
            "--yes",
            "--now",
            NOW_MS,
        ][..],
        &["mission", "start-run", "m", "--run", "r", "--now", NOW_MS],
        &[
            "mission",
            "grant",
            "m",
            "--id",
            "g",
            "--subject",
            "agent",
            "--action",
            "Model.Infer",
            "--resource",
            "model",
            "--expires-at",
            FAR_MS,
            "--limit",
            "10",
            "--now",
            NOW_MS,
        ],
    ] {
        env.run(args).ok();
    }
    both(&env, "mission-list", &["mission", "list"]);
    both(
        &env,
        "mission-report",
        &["mission", "report", "m", "--now", NOW_MS],
    );
}

#[test]
fn error_messages() {
    let env = populated();
    check(&env, "error-show-missing-entry", &["show", "99"]);
    check(&env, "error-show-bad-ref", &["show", "x"]);
    check(&env, "error-receipt-bad-id", &["receipt", "nope"]);
    check(
        &env,
        "error-receipt-bad-id-json",
        &["receipt", "nope", "--json"],
    );
    check(
        &env,
        "error-registry-missing",
        &["registry", "get", "world/no-such/v1"],
    );
    let body = env.write("body.json", b"not json");
    check(
        &env,
        "error-commit-bad-body",
        &["commit", body.to_str().unwrap()],
    );
    let bad = env.write("bad.db", &[b'x'; 4096]);
    check(
        &env,
        "error-store-not-sqlite",
        &["--db", bad.to_str().unwrap(), "status"],
    );
    std::fs::create_dir(env.path("dir.db")).unwrap();
    let dir = env.path("dir.db");
    check(
        &env,
        "error-store-is-a-directory",
        &["--db", dir.to_str().unwrap(), "log"],
    );
    check(
        &env,
        "error-limits-uninitialized",
        &["limits", "report", "--now", NOW_MS],
    );
}
