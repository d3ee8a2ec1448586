//! The README's first command, `bash scripts/quickstart.sh`, run end to end against this
//! build (WORLD_BIN skips the script's own release build). Every step of the script checks its
//! own exit code, so a change that breaks the quickstart fails here, not first in a user's hands.

use std::process::Command;

#[test]
fn the_quickstart_episode_runs_end_to_end() {
    let root = env!("CARGO_MANIFEST_DIR");
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new("bash")
        .arg(format!("{root}/scripts/quickstart.sh"))
        .current_dir(root)
        .env("WORLD_BIN", assert_cmd::cargo::cargo_bin("world"))
        .env("TMPDIR", tmp.path())
        .env_remove("WORLD_DB")
        .env_remove("WORLD_SESSION")
        .env_remove("CI")
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "quickstart failed ({:?})\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("done: store at"), "{stdout}");
}
