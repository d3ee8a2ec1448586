//! `world package` (issue 31) against the registry TEST DOUBLE (`tests/registry_double`): the
//! packet and its golden, the attended approve and publish on a pseudo-terminal, every outcome
//! class, reconcile's four states, and kill -9 at each step of a publish.

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::common::{repo, sha, TestEnv};
use crate::registry_double::{Mode, Registry};
use crate::terminal;

const KEY: &str = "ailr_test-key-for-the-double";
const PHRASE: &str = "publish acme/kit@0.2.0 irreversibly";

fn fixture() -> PathBuf {
    repo().join("fixtures/package/acme-kit")
}

fn golden() -> PathBuf {
    repo().join("fixtures/package/acme-kit.golden.json")
}

fn golden_json() -> Value {
    serde_json::from_slice(&std::fs::read(golden()).unwrap()).unwrap()
}

/// A test env with a store and a credential file (mode 0600, outside the repository).
fn env_with_store(key: &str) -> (TestEnv, PathBuf) {
    let env = TestEnv::new();
    env.genesis();
    let cred = env.write("registry.key", format!("{key}\n").as_bytes());
    std::fs::set_permissions(&cred, std::fs::Permissions::from_mode(0o600)).unwrap();
    (env, cred)
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `world ARGS` in a new session whose controlling terminal is a pty on which `typed` was typed
/// ahead; extra environment `envs`.
fn on_terminal(
    env: &TestEnv,
    args: &[&str],
    typed: &str,
    envs: &[(&str, &str)],
) -> (Output, String) {
    let (mut master, slave) = terminal::pty();
    let mut c = env.std_cmd();
    c.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in envs {
        c.env(k, v);
    }
    terminal::with_terminal(&mut c, &slave);
    master.write_all(format!("{typed}\r").as_bytes()).unwrap();
    let child = c.spawn().expect("spawn world");
    drop(slave);
    let mut reader = master.try_clone().unwrap();
    let shown = std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            all.extend_from_slice(&buf[..n]);
        }
        text(&all)
    });
    let out = child.wait_with_output().unwrap();
    drop(master);
    (out, shown.join().unwrap_or_default())
}

fn detached(env: &TestEnv, args: &[&str]) -> Output {
    let mut c = env.std_cmd();
    c.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    terminal::detach(&mut c);
    c.output().unwrap()
}

fn approve(env: &TestEnv, reg: &Registry) -> String {
    approve_as(env, reg, "operator")
}

fn approve_as(env: &TestEnv, reg: &Registry, requester: &str) -> String {
    let (o, shown) = on_terminal(
        env,
        &[
            "package",
            "approve",
            fixture().to_str().unwrap(),
            "--loopback-registry",
            &reg.origin,
            "--golden",
            golden().to_str().unwrap(),
            "--requester",
            requester,
        ],
        PHRASE,
        &[],
    );
    assert_eq!(code(&o), 0, "approve: {}\n{}", text(&o.stderr), shown);
    assert!(
        shown.contains(PHRASE) && shown.contains("#effect=Registry.Publish&manifest=sha256:"),
        "{shown}"
    );
    let out = text(&o.stdout);
    out.trim()
        .strip_prefix("minted approval ")
        .expect("minted line")
        .to_string()
}

fn publish_args<'a>(reg: &'a Registry, cred: &'a str, extra: &[&'a str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "package",
        "publish",
        fixture().to_str().unwrap(),
        "--live",
        "--loopback-registry",
        &reg.origin,
        "--credential-file",
        cred,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

fn publish(env: &TestEnv, reg: &Registry, cred: &Path, extra: &[&str]) -> Output {
    let args = publish_args(reg, cred.to_str().unwrap(), extra);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    on_terminal(env, &args, PHRASE, &[]).0
}

fn reconcile(env: &TestEnv) -> Output {
    env.cmd()
        .args([
            "package",
            "reconcile",
            fixture().to_str().unwrap(),
            "--probe",
            "--loopback-registry",
        ])
        .output()
        .unwrap()
}

fn query(env: &TestEnv, sql: &str) -> Vec<Vec<String>> {
    let c = crate::common::ro(&env.db);
    let mut s = c.prepare(sql).unwrap();
    let n = s.column_count();
    s.query_map([], |r| {
        (0..n)
            .map(|i| r.get::<_, String>(i))
            .collect::<Result<Vec<_>, _>>()
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

fn payload(env: &TestEnv, semantic: &str) -> Vec<Value> {
    let c = crate::common::ro(&env.db);
    let mut s = c
        .prepare("SELECT payload FROM objects WHERE semantic_id = ?1")
        .unwrap();
    s.query_map([semantic], |r| r.get::<_, Vec<u8>>(0))
        .unwrap()
        .map(|b| serde_json::from_slice(&b.unwrap()).unwrap())
        .collect()
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

fn verify_ok(env: &TestEnv) {
    let r = env.run(&["verify"]);
    assert_eq!(r.code, 0, "world verify: {}{}", r.stdout, r.stderr);
}

fn receipt_code(env: &TestEnv, id: &str) -> i32 {
    env.run(&["receipt", id]).code
}

const INTENT: &str = "effect:attended-publish:0";

// ---------------------------------------------------------------- the packet

#[test]
fn the_fixture_packet_equals_its_golden_and_the_formulas() {
    let env = TestEnv::new();
    let r = env.run(&[
        "package",
        "packet",
        fixture().to_str().unwrap(),
        "--golden",
        golden().to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("EQUAL to the golden in every field"),
        "{}",
        r.stdout
    );
    // The golden's digests follow the formulas, computed here independently.
    let g = golden_json();
    let dir = fixture();
    let mut files = Vec::new();
    let mut stack = vec![(dir.clone(), String::new())];
    while let Some((p, rel)) = stack.pop() {
        for e in std::fs::read_dir(&p).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            let r = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            if e.file_type().unwrap().is_dir() {
                stack.push((e.path(), r));
            } else if r.ends_with(".ail") {
                files.push((r, std::fs::read(e.path()).unwrap()));
            }
        }
    }
    files.sort();
    let mut h = Sha256::new();
    for (r, b) in &files {
        h.update(format!("file:{r}\n"));
        h.update(b);
    }
    assert_eq!(
        g["contentHash"],
        format!("sha256:{}", hex::encode(h.finalize()))
    );
    assert_eq!(
        g["interfaceHash"],
        sha(b"name:acme/kit\nedition:1\nailang:>=0.30.0\nexport:kit/math\nexport:kit/text\neffect:IO\n")
    );
    // --json prints exactly the golden bytes.
    let j = env
        .cmd()
        .args([
            "package",
            "packet",
            dir.to_str().unwrap(),
            "--compiler-version",
            "AILANG v0.30.0",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(j.stdout, std::fs::read(golden()).unwrap());
}

#[test]
fn a_changed_file_is_drift_naming_the_first_field_and_live_is_refused() {
    let env = TestEnv::new();
    let copy = env.path("kit");
    copy_dir(&fixture(), &copy);
    std::fs::write(copy.join("kit/math.ail"), "module kit/math\n").unwrap();
    let r = env.run(&[
        "package",
        "packet",
        copy.to_str().unwrap(),
        "--golden",
        golden().to_str().unwrap(),
    ]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr
            .starts_with("STOP fence=packet reason=drift\n  contentHash differs"),
        "{}",
        r.stderr
    );
    let r = env.run(&["package", "packet", fixture().to_str().unwrap(), "--live"]);
    assert_eq!(r.code, 3);
    assert!(
        r.stderr
            .starts_with("STOP fence=mode reason=packet-is-read-only"),
        "{}",
        r.stderr
    );
    let bad = env.write("g.json", b"{\"version\":\"0.2.0\",\"extra\":1}\n");
    let r = env.run(&[
        "package",
        "packet",
        fixture().to_str().unwrap(),
        "--golden",
        bad.to_str().unwrap(),
    ]);
    assert!(
        r.stderr
            .starts_with("STOP fence=packet reason=golden-unreadable"),
        "{}",
        r.stderr
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

// ---------------------------------------------------------------- fences

#[test]
fn fences_stop_before_anything_is_written() {
    let reg = Registry::start(KEY);
    let (env, cred) = env_with_store(KEY);
    let before = crate::common::snapshot(&env.db);
    let f = fixture();
    let dir = f.to_str().unwrap();
    let c = cred.to_str().unwrap();
    for (args, want) in [
        (
            vec![
                "package",
                "publish",
                dir,
                "--loopback-registry",
                &reg.origin,
            ],
            "STOP fence=mode reason=none",
        ),
        (
            vec!["package", "publish", dir, "--live", "--dry-run"],
            "STOP fence=mode reason=both",
        ),
        (
            vec![
                "package",
                "publish",
                dir,
                "--live",
                "--loopback-registry",
                &reg.origin,
            ],
            "STOP fence=credential reason=absent",
        ),
        (
            vec![
                "package",
                "publish",
                dir,
                "--live",
                "--credential-file",
                c,
                "--registry-origin",
                "http://storage.example/b",
            ],
            "STOP fence=handler reason=refused",
        ),
        (
            vec![
                "package",
                "publish",
                dir,
                "--live",
                "--credential-file",
                c,
                "--registry-origin",
                "https://127.0.0.1:9/b",
            ],
            "STOP fence=handler reason=refused",
        ),
        (
            vec![
                "package",
                "publish",
                dir,
                "--live",
                "--credential-file",
                c,
                "--loopback-registry",
                "http://10.1.2.3:80",
            ],
            "STOP fence=handler reason=refused",
        ),
        (
            vec![
                "package",
                "publish",
                dir,
                "--live",
                "--credential-file",
                c,
                "--loopback-registry",
                &reg.origin,
            ],
            "STOP fence=approval reason=absent",
        ),
        (
            vec![
                "package",
                "publish",
                dir,
                "--live",
                "--credential-file",
                c,
                "--loopback-registry",
                &reg.origin,
                "--approval-ref",
                "nope",
            ],
            "STOP fence=approval reason=malformed",
        ),
        (
            vec![
                "package",
                "approve",
                dir,
                "--loopback-registry",
                &reg.origin,
            ],
            "STOP fence=tty reason=no-controlling-terminal",
        ),
        (
            vec!["package", "reconcile", "--live"],
            "STOP fence=mode reason=reconcile-is-read-only",
        ),
    ] {
        let o = detached(&env, &args);
        assert_eq!(code(&o), 3, "{args:?}: {}", text(&o.stderr));
        assert!(
            text(&o.stderr).starts_with(want),
            "{args:?}: {}",
            text(&o.stderr)
        );
    }
    // CI is a tripwire before the terminal; the key in the environment is refused.
    let (o, _) = on_terminal(
        &env,
        &[
            "package",
            "approve",
            dir,
            "--loopback-registry",
            &reg.origin,
        ],
        PHRASE,
        &[("CI", "true")],
    );
    assert!(
        text(&o.stderr).starts_with("STOP fence=ci reason=ci"),
        "{}",
        text(&o.stderr)
    );
    let (o, _) = on_terminal(
        &env,
        &[
            "package",
            "approve",
            dir,
            "--loopback-registry",
            &reg.origin,
        ],
        "publish acme/kit@0.2.1 irreversibly",
        &[],
    );
    assert!(
        text(&o.stderr).starts_with("STOP fence=confirmation reason=mismatch"),
        "{}",
        text(&o.stderr)
    );
    let args = publish_args(&reg, c, &[]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // The key in the environment: the binary's own guard refuses before any command (exit 2).
    let (o, _) = on_terminal(
        &env,
        &args,
        PHRASE,
        &[("AILANG_REGISTRY_API_KEY", "leaked")],
    );
    assert_eq!(code(&o), 2, "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("AILANG_REGISTRY_API_KEY is set"),
        "{}",
        text(&o.stderr)
    );
    assert!(!text(&o.stderr).contains("leaked"));
    assert_eq!(
        crate::common::snapshot(&env.db),
        before,
        "a fence changed the store"
    );
    assert_eq!(reg.accepted(), 0);
}

#[test]
fn credential_files_must_be_0600_and_outside_the_working_tree() {
    let reg = Registry::start(KEY);
    let (env, cred) = env_with_store(KEY);
    let approval = approve(&env, &reg);
    std::fs::set_permissions(&cred, std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = publish(&env, &reg, &cred, &[]);
    assert!(
        text(&o.stderr).starts_with("STOP fence=credential reason=unusable"),
        "{}",
        text(&o.stderr)
    );
    assert!(text(&o.stderr).contains("want exactly 0600"));
    let inside = repo().join("target/registry-key-inside-the-tree");
    std::fs::write(&inside, KEY).unwrap();
    std::fs::set_permissions(&inside, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = publish(&env, &reg, &inside, &[]);
    let _ = std::fs::remove_file(&inside);
    assert!(
        text(&o.stderr).contains("inside the working tree"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(reg.accepted(), 0);
    // Nothing was spent: the approval is still there to spend.
    assert!(query(&env, "SELECT approval_ref FROM approval_claims").is_empty());
    assert!(!approval.is_empty());
}

// ---------------------------------------------------------------- the happy path

#[test]
fn attended_approve_and_a_live_publish_leave_every_record() {
    let reg = Registry::start(KEY);
    let (env, cred) = env_with_store(KEY);
    let approval = approve(&env, &reg);
    // The reference's object layouts, in their key order.
    let req = payload(&env, "world/approval-request/v1");
    assert_eq!(req.len(), 1);
    assert_eq!(
        keys(&req[0]),
        ["effect", "scope", "cost", "requester", "now"]
    );
    assert_eq!(req[0]["effect"], "Human.Approve");
    assert_eq!(req[0]["cost"], 1);
    let scope = req[0]["scope"].as_str().unwrap();
    let g = golden_json();
    assert!(
        scope.starts_with(&format!(
            "registry:{}/package:acme/kit/version:0.2.0#effect=Registry.Publish&manifest=sha256:",
            reg.origin
        )),
        "{scope}"
    );
    assert!(
        scope.contains(&format!(
            "&tarball={}&content={}&interface={}&expires=",
            g["tarballSHA256"].as_str().unwrap(),
            g["contentHash"].as_str().unwrap(),
            g["interfaceHash"].as_str().unwrap()
        )),
        "{scope}"
    );
    let dec = payload(&env, "world/approval-decision/v1");
    assert_eq!(
        keys(&dec[0]),
        ["requestRef", "decision", "decidedBy", "now"]
    );
    assert_eq!(dec[0]["decision"], "approve");
    let heads = payload(&env, "world/approvals/v1");
    assert_eq!(heads.len(), 2);
    assert!(heads
        .iter()
        .all(|h| keys(h) == ["previousHead", "requestRef", "decisionRef"]));
    assert_eq!(query(&env, "SELECT object_ref FROM epoch_registry_heads WHERE registry_name = 'world/approvals/v1'").len(), 1);

    let o = publish(&env, &reg, &cred, &[]);
    assert_eq!(code(&o), 0, "{}{}", text(&o.stdout), text(&o.stderr));
    assert!(
        text(&o.stdout).starts_with("PUBLISHED. record sha256:"),
        "{}",
        text(&o.stdout)
    );
    assert_eq!(reg.uploads(), 1);
    let meta = reg.metadata("acme", "kit", "0.2.0").expect("stored");
    assert_eq!(meta["tarball_hash"], g["tarballSHA256"]);
    assert_eq!(meta["content_hash"], g["contentHash"]);
    assert_eq!(meta["interface_hash"], g["interfaceHash"]);
    // The request payload's fixed key order; the claim; intent, outcome, record.
    let intents = payload(&env, "world/effect-intent/v1");
    assert_eq!(intents.len(), 1);
    assert_eq!(intents[0]["effect"], "Registry.Publish");
    assert_eq!(intents[0]["cost"], 1);
    let claims = query(
        &env,
        "SELECT approval_ref, request_ref, invocation_id FROM approval_claims",
    );
    assert_eq!(
        claims,
        vec![vec![
            approval.clone(),
            intents[0]["requestRef"].as_str().unwrap().to_string(),
            INTENT.to_string()
        ]]
    );
    let request = crate::common::ro(&env.db)
        .query_row(
            "SELECT payload FROM objects WHERE hash_ref = ?1",
            [intents[0]["requestRef"].as_str().unwrap()],
            |r| r.get::<_, Vec<u8>>(0),
        )
        .unwrap();
    let body = &request[request.iter().position(|b| *b == b'{').unwrap()..];
    let p: Value = serde_json::from_slice(body).unwrap();
    assert_eq!(
        keys(&p),
        [
            "schema",
            "vendor",
            "name",
            "version",
            "registryOrigin",
            "manifestRef",
            "approvalRef",
            "tarballSHA256",
            "contentHash",
            "interfaceHash",
            "exports",
            "effects",
            "compilerVersion",
            "compilerSHA256"
        ]
    );
    assert_eq!(p["schema"], "world/registry-publish-request/v1");
    assert_eq!(p["approvalRef"], approval.as_str());
    assert_eq!(receipt_code(&env, INTENT), 0);
    let effects = env.run(&["effects", "--json"]);
    assert!(
        effects.stdout.contains("\"effect\":\"Registry.Publish\""),
        "{}",
        effects.stdout
    );
    let via_show = env.run(&["show", INTENT]);
    assert_eq!(via_show.code, 0, "{}", via_show.stderr);
    assert!(
        via_show.stdout.contains("Registry.Publish"),
        "{}",
        via_show.stdout
    );
    let shown = env.run(&["effects", "show", INTENT]);
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    assert!(
        shown.stdout.contains("Registry.Publish")
            && shown.stdout.contains("world/registry-publish-result/v1"),
        "{}",
        shown.stdout
    );
    // Replay has no coordinator entry to re-run here and must not trip over the effect.
    let replay = env.run(&["replay", "--episode", "attended-publish"]);
    assert_eq!(replay.code, 0, "{}{}", replay.stdout, replay.stderr);
    assert_eq!(
        replay.stdout,
        format!("identical {INTENT} Registry.Publish\n")
    );
    let status = env.run(&["package", "status", "--json"]).json();
    assert_eq!(status["effects"][0]["state"], "succeeded");
    assert_eq!(status["approvals"][0]["claimedBy"], INTENT);
    verify_ok(&env);
    // The approval is single use, and nothing is uploaded twice.
    let o = publish(&env, &reg, &cred, &["--approval-ref", &approval]);
    assert_eq!(code(&o), 3, "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).starts_with("STOP fence=approval reason=consumed"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(reg.uploads(), 1);
}

// ---------------------------------------------------------------- outcomes and reconcile

fn publish_then(mode: Mode, seed_other: bool) -> (TestEnv, Registry, PathBuf, Output) {
    let reg = Registry::start(KEY);
    let (env, cred) = env_with_store(KEY);
    if seed_other {
        reg.seed(
            "acme",
            "kit",
            "0.2.0",
            "sha256:other",
            "sha256:other",
            "sha256:other",
        );
    }
    approve(&env, &reg);
    reg.set_mode(mode);
    let o = publish(&env, &reg, &cred, &["--timeout", "2"]);
    (env, reg, cred, o)
}

fn assert_indeterminate(env: &TestEnv, o: &Output) {
    assert_eq!(code(o), 5, "{}{}", text(&o.stdout), text(&o.stderr));
    assert!(text(&o.stderr).contains("INDETERMINATE. episode attended-publish invocation effect:attended-publish:0\n  DO NOT RETRY."), "{}", text(&o.stderr));
    assert_eq!(receipt_code(env, INTENT), 5);
}

#[test]
fn dropped_after_the_upload_was_stored_reconciles_to_succeeded() {
    let (env, reg, cred, o) = publish_then(Mode::DropAfterStore, false);
    assert_indeterminate(&env, &o);
    // Never retried: a second publish stops at the open intent.
    reg.set_mode(Mode::Normal);
    approve_again_and_expect_pending(&env, &reg, &cred);
    let r = reconcile(&env);
    assert_eq!(code(&r), 0, "{}{}", text(&r.stdout), text(&r.stderr));
    assert!(
        text(&r.stdout).starts_with(&format!("succeeded-reconciled {INTENT}")),
        "{}",
        text(&r.stdout)
    );
    assert_eq!(receipt_code(&env, INTENT), 0);
    let replay = env.run(&["replay", "--episode", "attended-publish"]);
    assert_eq!(
        replay.stdout,
        format!("identical {INTENT} Registry.Publish\n"),
        "{}",
        replay.stderr
    );
    assert_eq!(reg.uploads(), 1);
    verify_ok(&env);
}

fn approve_again_and_expect_pending(env: &TestEnv, reg: &Registry, cred: &Path) {
    let a2 = approve_as(env, reg, "second-operator");
    let o = publish(env, reg, cred, &["--approval-ref", &a2]);
    assert_eq!(code(&o), 3, "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).starts_with("STOP fence=reconcile reason=pending"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn dropped_before_storing_reconciles_to_not_published() {
    let (env, reg, _cred, o) = publish_then(Mode::DropBeforeStore, false);
    assert_indeterminate(&env, &o);
    let r = reconcile(&env);
    assert_eq!(code(&r), 0, "{}", text(&r.stdout));
    assert!(
        text(&r.stdout).starts_with(&format!("not-published {INTENT}")),
        "{}",
        text(&r.stdout)
    );
    assert!(text(&r.stdout).contains("3 absent samples"));
    // Resolved as a failed effect; the approval stays spent.
    assert_eq!(receipt_code(&env, INTENT), 0);
    assert_eq!(reg.uploads(), 1);
    assert!(reg.metadata("acme", "kit", "0.2.0").is_none());
    verify_ok(&env);
}

#[test]
fn another_artifact_at_the_version_reconciles_to_conflict() {
    let (env, _reg, _cred, o) = publish_then(Mode::DropBeforeStore, true);
    assert_indeterminate(&env, &o);
    let r = reconcile(&env);
    assert_eq!(code(&r), 1, "{}", text(&r.stdout));
    assert!(
        text(&r.stdout).starts_with(&format!("conflict {INTENT}")),
        "{}",
        text(&r.stdout)
    );
    assert!(
        text(&r.stdout).contains("recomputed tarball hash sha256:other"),
        "{}",
        text(&r.stdout)
    );
}

#[test]
fn a_broken_control_is_probe_unavailable_and_leaves_the_intent_open() {
    let (env, reg, _cred, o) = publish_then(Mode::DropBeforeStore, false);
    assert_indeterminate(&env, &o);
    reg.control_down(true);
    let r = reconcile(&env);
    assert_eq!(code(&r), 5, "{}", text(&r.stdout));
    assert!(
        text(&r.stdout).starts_with(&format!("probe-unavailable {INTENT}")),
        "{}",
        text(&r.stdout)
    );
    assert_eq!(receipt_code(&env, INTENT), 5);
    // Without --probe nothing is asked and nothing resolved.
    let r = env.run(&["package", "reconcile"]);
    assert_eq!(r.code, 5, "{}", r.stdout);
    reg.control_down(false);
    let r = reconcile(&env);
    assert!(
        text(&r.stdout).starts_with("not-published"),
        "{}",
        text(&r.stdout)
    );
}

#[test]
fn a_409_is_a_definite_failure() {
    let (env, reg, _cred, o) = publish_then(Mode::Normal, true);
    assert_eq!(code(&o), 1, "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("version already published (immutable)"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(receipt_code(&env, INTENT), 0);
    assert_eq!(reg.uploads(), 1);
    let status = env.run(&["package", "status", "--json"]).json();
    assert_eq!(status["effects"][0]["state"], "failed");
    verify_ok(&env);
}

#[test]
fn a_403_is_a_definite_failure_and_the_key_is_never_shown() {
    let reg = Registry::start("ailr_the-right-key");
    let (env, cred) = env_with_store("ailr_a-wrong-key");
    approve(&env, &reg);
    let o = publish(&env, &reg, &cred, &[]);
    assert_eq!(code(&o), 1, "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("not authorized to publish to this namespace"),
        "{}",
        text(&o.stderr)
    );
    let dump = std::fs::read(&env.db).unwrap();
    assert!(
        !dump.windows(15).any(|w| w == b"ailr_a-wrong-ke"),
        "the key reached the store"
    );
}

#[test]
fn a_server_slower_than_the_deadline_is_indeterminate() {
    let (env, reg, _cred, o) = publish_then(Mode::Slow(std::time::Duration::from_secs(4)), false);
    assert_indeterminate(&env, &o);
    // The double stores after its pause; the probe then finds the upload.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while reg.metadata("acme", "kit", "0.2.0").is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "the slow upload never landed"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let r = reconcile(&env);
    assert!(
        text(&r.stdout).starts_with("succeeded-reconciled"),
        "{}",
        text(&r.stdout)
    );
    assert_eq!(reg.uploads(), 1);
}

// ---------------------------------------------------------------- kill -9 at each step

/// Start a live publish on a pty, wait until the double reached `ready`, kill -9 the process.
fn killed_publish(mode: Mode, ready: fn(u32, u32) -> bool) -> (TestEnv, Registry, PathBuf) {
    let reg = Registry::start(KEY);
    let (env, cred) = env_with_store(KEY);
    approve(&env, &reg);
    reg.set_mode(mode);
    let (mut master, slave) = terminal::pty();
    let mut c: Command = env.std_cmd();
    c.args(publish_args(&reg, cred.to_str().unwrap(), &[]))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    terminal::with_terminal(&mut c, &slave);
    master.write_all(format!("{PHRASE}\r").as_bytes()).unwrap();
    let mut child = c.spawn().unwrap();
    drop(slave);
    let mut sink = master.try_clone().unwrap();
    std::thread::spawn(move || {
        let mut buf = [0u8; 1024];
        while matches!(sink.read(&mut buf), Ok(n) if n > 0) {}
    });
    reg.wait_for(ready);
    child.kill().expect("kill -9");
    child.wait().unwrap();
    reg.release();
    (env, reg, cred)
}

fn after_kill(env: &TestEnv, reg: &Registry, cred: &Path, want: &str, uploads: u32) {
    // The claim and the intent are durable; the receipt is indeterminate.
    assert_eq!(
        query(env, "SELECT invocation_id FROM approval_claims"),
        vec![vec![INTENT.to_string()]]
    );
    assert_eq!(receipt_code(env, INTENT), 5);
    // The same approval cannot be spent again; nothing more reaches the registry.
    reg.set_mode(Mode::Normal);
    let o = publish(env, reg, cred, &[]);
    assert_eq!(code(&o), 3, "{}", text(&o.stderr));
    let r = reconcile(env);
    assert!(
        text(&r.stdout).starts_with(&format!("{want} {INTENT}")),
        "{}",
        text(&r.stdout)
    );
    assert_eq!(reg.uploads(), uploads);
    assert_eq!(receipt_code(env, INTENT), 0);
    verify_ok(env);
}

#[test]
fn kill_9_with_the_request_unread_leaves_a_claim_that_reconciles_not_published() {
    let (env, reg, cred) = killed_publish(Mode::HoldAtAccept, |_, accepted| accepted >= 1);
    after_kill(&env, &reg, &cred, "not-published", 0);
}

#[test]
fn kill_9_with_the_upload_received_but_not_stored_reconciles_not_published() {
    let (env, reg, cred) = killed_publish(Mode::HoldBeforeStore, |uploads, _| uploads >= 1);
    after_kill(&env, &reg, &cred, "not-published", 1);
}

#[test]
fn kill_9_with_the_upload_stored_reconciles_succeeded() {
    let (env, reg, cred) = killed_publish(Mode::HoldAfterStore, |uploads, _| uploads >= 1);
    // Stored before the hold: wait for the metadata to be there.
    while reg.metadata("acme", "kit", "0.2.0").is_none() {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    after_kill(&env, &reg, &cred, "succeeded-reconciled", 1);
}

#[test]
fn a_dry_run_rehearses_every_fence_and_makes_no_request() {
    let reg = Registry::start(KEY);
    let (env, cred) = env_with_store(KEY);
    approve(&env, &reg);
    let before = crate::common::snapshot(&env.db);
    let f = fixture();
    let args = [
        "package",
        "publish",
        f.to_str().unwrap(),
        "--dry-run",
        "--loopback-registry",
        &reg.origin,
        "--credential-file",
        cred.to_str().unwrap(),
    ];
    let (o, _) = on_terminal(&env, &args, PHRASE, &[]);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).starts_with("REHEARSAL — no request of any kind was made."),
        "{}",
        text(&o.stdout)
    );
    assert!(text(&o.stdout).contains("approval       sha256:"));
    assert_eq!(crate::common::snapshot(&env.db), before);
    assert_eq!(reg.accepted(), 0);
}

#[test]
fn the_pinned_ailang_publisher_gets_a_minimal_environment_and_the_same_classes() {
    let reg = Registry::start(KEY);
    let (env, cred) = env_with_store(KEY);
    approve(&env, &reg);
    let fake_path = crate::common::fake_ailang();
    let fake = fake_path.to_str().unwrap();
    let o = publish(
        &env,
        &reg,
        &cred,
        &["--publisher", "ailang", "--ailang-bin", fake],
    );
    assert_eq!(code(&o), 0, "{}{}", text(&o.stdout), text(&o.stderr));
    assert_eq!(reg.uploads(), 1);
    let results = payload(&env, "world/effect-result/v1");
    let out = results[0]["publisherOutput"].as_str().unwrap();
    assert!(
        out.contains("fake-ailang env: AILANG_REGISTRY,AILANG_REGISTRY_API_KEY,AILANG_REGISTRY_VALIDATOR,HOME,LANG,LC_ALL,PATH\n"),
        "{out}"
    );
    assert!(out.contains("✓ Published acme/kit@0.2.0"), "{out}");
    // The payload names the pinned binary.
    let intents = payload(&env, "world/effect-intent/v1");
    let request = crate::common::ro(&env.db)
        .query_row(
            "SELECT payload FROM objects WHERE hash_ref = ?1",
            [intents[0]["requestRef"].as_str().unwrap()],
            |r| r.get::<_, Vec<u8>>(0),
        )
        .unwrap();
    let body = &request[request.iter().position(|b| *b == b'{').unwrap()..];
    let p: Value = serde_json::from_slice(body).unwrap();
    assert_eq!(p["compilerSHA256"], sha(&std::fs::read(fake).unwrap()));
    assert_eq!(
        p["compilerVersion"], "AILANG v0.41.0-fake",
        "the pinned publisher's, no golden given"
    );
}

#[test]
fn the_pinned_ailang_publisher_dropped_after_store_is_indeterminate_too() {
    let reg = Registry::start(KEY);
    let (env, cred) = env_with_store(KEY);
    approve(&env, &reg);
    reg.set_mode(Mode::DropAfterStore);
    let fake_path = crate::common::fake_ailang();
    let fake = fake_path.to_str().unwrap();
    let o = publish(
        &env,
        &reg,
        &cred,
        &["--publisher", "ailang", "--ailang-bin", fake],
    );
    assert_indeterminate(&env, &o);
    assert!(!text(&o.stderr).contains(KEY), "the key is redacted");
    let r = reconcile(&env);
    assert!(
        text(&r.stdout).starts_with("succeeded-reconciled"),
        "{}",
        text(&r.stdout)
    );
}
