//! Issue 26 §1 (DEC-TRUST3-1): no test hook reaches a shipped build. The binary the suite
//! runs is built with the `test-hooks` feature (the package's dev-dependency on itself turns
//! it on for test builds only); this module builds `world` the way `cargo build --release`
//! and `cargo install` do — no feature, release settings (profile `hookcheck`: `release` at
//! opt-level 0, so the build is cheap) — and shows `WORLD_TEST_NOW` moves nothing there: a
//! credential minted under `WORLD_TEST_NOW=1` is dated now, an expired credential is not
//! revived by naming an earlier time, and a commit cannot be backdated. Each check runs the
//! suite's own binary too, where the hook does act, so the test cannot pass by accident.

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::sync::OnceLock;

use serde_json::Value;

use crate::common::{ro, scrub, tip_of, world_bin, TestEnv};

/// `world` built without the test hooks, with the release profile's settings: built once per
/// test process into `<target>/hookcheck/world`, next to the suite's own `<target>/debug`.
fn shipped_binary() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let target = world_bin()
            .parent()
            .and_then(Path::parent)
            .expect("the test binary lives in <target>/<profile>")
            .to_path_buf();
        let out = StdCommand::new(cargo)
            .args([
                "build",
                "--quiet",
                "--locked",
                "--profile",
                "hookcheck",
                "--bin",
                "world",
            ])
            .arg("--target-dir")
            .arg(&target)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env_remove("RUSTC_WORKSPACE_WRAPPER")
            .output()
            .expect("run cargo build");
        assert!(
            out.status.success(),
            "cargo build --profile hookcheck failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let bin = target.join("hookcheck").join("world");
        assert!(bin.is_file(), "{} was not built", bin.display());
        bin
    })
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// `bin ARGS…` on `env`'s store with the hermetic environment and `WORLD_TEST_NOW=now_hook`.
fn run(bin: &Path, env: &TestEnv, now_hook: &str, args: &[&str]) -> std::process::Output {
    let mut c = StdCommand::new(bin);
    scrub(&mut c, &env.path("world.db"))
        .env("HOME", env.path(""))
        .env("WORLD_TEST_NOW", now_hook)
        .current_dir(env.path(""))
        .args(args);
    let out = c.output().expect("run world");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn sessions(bin: &Path, env: &TestEnv, now_hook: &str) -> Vec<Value> {
    let out = run(bin, env, now_hook, &["session", "list", "--all", "--json"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

/// `(createdAt, state)` of the only session of `env`.
fn only_session(bin: &Path, env: &TestEnv, now_hook: &str) -> (i64, String) {
    let rows = sessions(bin, env, now_hook);
    assert_eq!(rows.len(), 1, "{rows:?}");
    (
        rows[0]["createdAt"].as_i64().expect("createdAt"),
        rows[0]["state"].as_str().expect("state").to_string(),
    )
}

/// The `logicalTime` of the commit intent of `rest:hook`.
fn commit_time(env: &TestEnv) -> i64 {
    let conn = ro(&env.path("world.db"));
    conn.query_row(
        "SELECT json_extract(CAST(o.payload AS TEXT), '$.logicalTime') FROM journal j
         JOIN objects o ON o.hash_ref = j.object_ref
         WHERE j.invocation_id = 'rest:hook' AND j.kind = 'intent'",
        [],
        |r| r.get(0),
    )
    .expect("the intent of rest:hook")
}

/// Mint (ttl 1 s) under `WORLD_TEST_NOW=1`, wait past expiry, list under the mint time, and
/// commit a `rest:` body under `WORLD_TEST_NOW=1`: what each binary records and answers.
fn scenario(bin: &Path) -> ((i64, String), i64, i64) {
    let env = TestEnv::new();
    let started = now();
    run(bin, &env, "1", &["genesis"]);
    run(
        bin,
        &env,
        "1",
        &[
            "session",
            "mint",
            "--yes",
            "--episode",
            "ep1",
            "--ttl",
            "1",
            "--grant",
            "Workspace.Read=worktree:5",
            "--out",
            "tok",
        ],
    );
    let (created, _) = only_session(bin, &env, "1");
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let revived = only_session(bin, &env, &created.to_string());
    let rest = tip_of(&env.path("world.db"))
        .next("hook")
        .with_invocation("rest:hook");
    let p = env.write("rest.json", &rest.bytes());
    run(bin, &env, "1", &["commit", p.to_str().expect("utf-8")]);
    (revived, commit_time(&env), started)
}

#[test]
fn the_shipped_binary_ignores_world_test_now() {
    // The suite's binary honours the hook: the mint is dated 1970, listing at that time
    // shows it live, and the commit is dated 1970 (what a shipped build must never do).
    let ((created, state), committed, _) = scenario(&world_bin());
    assert_eq!((created, state.as_str(), committed), (1, "live", 1));
    // The shipped build does not: dated now, expired once past its ttl whatever the
    // variable says, and the commit is dated now.
    let ((created, state), committed, started) = scenario(shipped_binary());
    assert!(created >= started, "minted at {created}, before {started}");
    assert_eq!(state, "expired", "an expired credential was revived");
    assert!(
        committed >= started,
        "the commit was backdated to {committed}"
    );
}
