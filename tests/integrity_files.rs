//! Issue 13 §6: a `Workspace.Write` temp left by a writer killed with -9 is swept by the next
//! write into that directory; temps of live processes are left alone.

use crate::invoke_support;

#[test]
fn stale_write_temps_are_swept_by_the_next_write() {
    let env = invoke_support::Env::new();
    let tok = env.mint("ep1", &["Workspace.Write=worktree:9"]);
    let dir = env.ws.join("ep1");
    let stale = dir.join(".world-write-999999-3.tmp");
    let live = dir.join(format!(".world-write-{}-0.tmp", std::process::id()));
    std::fs::write(&stale, "half").unwrap();
    std::fs::write(&live, "mine").unwrap();
    let out = env.invoke(
        &tok,
        "ailang-write",
        r#"{"path":"a.txt","content":"x"}"#,
        &[],
    );
    invoke_support::assert_exit(&out, 0);
    assert!(!stale.exists(), "a dead writer's temp is swept");
    assert!(live.exists(), "a live process's temp is kept");
}

/// Issue 13 §7: `Workspace.Write` of `dirx/` is refused instead of creating a file `dirx`.
#[test]
fn a_write_to_a_path_ending_in_a_slash_is_refused() {
    let env = invoke_support::Env::new();
    let tok = env.mint("ep1", &["Workspace.Write=worktree:9"]);
    let out = env.invoke(
        &tok,
        "ailang-write",
        r#"{"path":"dirx/","content":"x"}"#,
        &["--json"],
    );
    assert!(
        !env.ws.join("ep1/dirx").exists(),
        "a file named dirx was created"
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &invoke_support::stderr(&out);
    assert!(text.contains("ends with /"), "{text}");
}
