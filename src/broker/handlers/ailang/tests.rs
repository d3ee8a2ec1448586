use super::*;

fn script(dir: &Path, body: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("tool-ailang");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

#[test]
fn pinning_a_hanging_tool_binary_ends_at_the_probe_deadline() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = script(dir.path(), "sleep 60 & sleep 60");
    let started = std::time::Instant::now();
    let err = PinnedTool::pin(&dir.path().join("w.db"), &bin)
        .expect_err("hang")
        .to_string();
    assert!(err.contains("deadline"), "{err}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn the_tool_version_probe_sees_no_parent_environment() {
    std::env::set_var("WORLD_TOOL_PROBE_LEAK", "leak");
    let dir = tempfile::tempdir().expect("tempdir");
    // Answers the right version only when the parent's variable did not leak in.
    let bin = script(
        dir.path(),
        "[ -z \"$WORLD_TOOL_PROBE_LEAK\" ] && echo 'AILANG v0.52.1' || echo leaked",
    );
    PinnedTool::pin(&dir.path().join("w.db"), &bin).expect("pinned");
}

fn variant() -> Variant {
    Variant {
        path: "/p.toml".into(),
        digest: "d".into(),
        mode: "restricted".into(),
        caps: vec!["FS".into(), "IO".into()],
        net_allow: vec![],
    }
}

fn out(rc: i32, stdout: &str, stderr: &str) -> ChildOutput {
    ChildOutput {
        exit_code: rc,
        stdout: stdout.into(),
        stderr: stderr.into(),
    }
}

const POLICY_LINE: &str = r#"policy: {"ok":true,"decision":{"ok":true,"allowed_caps":["IO","FS"],"declared_effects":["IO"],"function":"main"}}"#;

#[test]
fn the_four_run_shapes_and_nothing_else() {
    let a =
        compose_run_result(&out(0, "hi\n", &format!("{POLICY_LINE}\n")), &variant()).expect("a");
    assert_eq!(
        (
            a["admitted"].clone(),
            a["exit_code"].clone(),
            a["limit"].clone()
        ),
        (json!(true), json!(0), Value::Null)
    );
    let b = compose_run_result(
        &out(
            1,
            "",
            &format!("Error: execution failed: x escapes sandbox y\n{POLICY_LINE}\n"),
        ),
        &variant(),
    )
    .expect("b");
    assert_eq!(b["exit_code"], json!(1));
    let c = compose_run_result(
            &out(2, r#"{"decision":{"ok":false,"error_kind":"policy_violation","message":"m","missing_from_policy":["Net"]}}"#, ""),
            &variant(),
        )
        .expect("c");
    assert_eq!(
        (c["admitted"].clone(), c["decision"]["error_kind"].clone()),
        (json!(false), json!("policy_violation"))
    );
    let d = compose_run_result(
        &out(
            3,
            "part",
            &format!(
                "{POLICY_LINE}\npolicy-result: {{\"reason\":\"timeout\",\"stage\":\"run\"}}\n"
            ),
        ),
        &variant(),
    )
    .expect("d");
    assert_eq!(d["limit"]["reason"], json!("timeout"));
    for bad in [
        out(0, "garbage", ""),
        out(0, "", "no policy line"),
        out(1, "{}", &format!("{POLICY_LINE}\n{POLICY_LINE}\n")),
        out(
            0,
            "",
            &format!("{POLICY_LINE}\npolicy-result: {{\"reason\":\"t\",\"stage\":\"r\"}}\n"),
        ),
        out(2, r#"{"decision":{"ok":true}}"#, ""),
        out(0, r#"{"decision":{"ok":false}}"#, ""),
    ] {
        assert!(compose_run_result(&bad, &variant()).is_err(), "{bad:?}");
    }
}

#[test]
fn version_and_effect_choice() {
    assert!(check_version_output(b"\nAILANG v0.52.1\nCommit: c68ded4\n").is_ok());
    let err = check_version_output(b"AILANG v0.41.0\n")
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        r#"tool binary is "AILANG v0.41.0"; only "AILANG v0.52.1" is measured for the workspace tools"#
    );
    let caps = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(run_effect_for(&caps(&["Env", "IO"])), AILANG_RUN_ENV);
    assert_eq!(run_effect_for(&caps(&["IO", "Net"])), AILANG_RUN_NET);
    assert_eq!(run_effect_for(&caps(&["Declassify", "IO"])), AILANG_RUN);
    assert_eq!(ops_for(AILANG_CLI).len(), 20);
    assert!(!ops_for(AILANG_CLI).contains(&"read"));
    assert!(ops_for(AILANG_RUN).is_empty());
}
