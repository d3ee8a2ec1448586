//! Smaller faults of issue 13 §7: session wording and listing, `--ttl 0`.

use crate::common::TestEnv;

fn mint(env: &TestEnv, name: &str, ttl: &str) -> String {
    let out = env.path(name);
    env.run(&[
        "session",
        "mint",
        "--episode",
        "ep1",
        "--yes",
        "--ttl",
        ttl,
        "--grant",
        "world.apply=world:1",
        "--out",
        out.to_str().unwrap(),
    ])
    .ok();
    let tok = std::fs::read_to_string(&out).unwrap().trim().to_string();
    crate::common::sha(tok.as_bytes())
        .trim_start_matches("sha256:")
        .to_string()
}

#[test]
fn ttl_zero_is_refused_and_mints_nothing() {
    let env = TestEnv::new();
    env.genesis();
    let before = env.snapshot();
    let r = env
        .run(&[
            "session",
            "mint",
            "--episode",
            "ep1",
            "--yes",
            "--ttl",
            "0",
            "--grant",
            "world.apply=world:1",
        ])
        .code(2);
    assert!(r.one_line_error().contains("--ttl 0"), "{r:#?}");
    assert_eq!(env.snapshot(), before);
}

#[test]
fn revoked_sessions_say_revoked_and_list_all_shows_them() {
    let env = TestEnv::new();
    env.genesis();
    let live = mint(&env, "live.tok", "3600");
    let gone = mint(&env, "gone.tok", "3600");
    env.run(&["session", "revoke", &gone]).ok();
    let rows = env.run(&["session", "list", "--json"]).ok().json_lines();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["credentialId"], live.as_str());
    assert_eq!(rows[0]["state"], "live");
    let rows = env
        .run(&["session", "list", "--all", "--json"])
        .ok()
        .json_lines();
    assert_eq!(rows.len(), 2, "{rows:?}");
    let revoked = rows
        .iter()
        .find(|r| r["credentialId"] == gone.as_str())
        .expect("revoked row listed");
    assert_eq!(revoked["state"], "revoked");
    assert_eq!(revoked["live"], false);
    assert_eq!(revoked["grants"][0], "world.apply=world:1");
    let table = env.run(&["session", "list", "--all"]).ok().stdout;
    assert!(table.contains("revoked"), "{table}");
    // Using the revoked token says so.
    let tok = env.path("gone.tok");
    let r = env.run(&[
        "invoke",
        "echo",
        "--args",
        "{}",
        "--session",
        tok.to_str().unwrap(),
    ]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("session credential has been revoked"),
        "{r:#?}"
    );
}

#[test]
fn a_now_far_ahead_of_the_clock_is_refused() {
    let env = TestEnv::new();
    env.genesis();
    let before = env.snapshot();
    let r = env
        .run(&["limits", "report", "--now", "18446744073709551616"])
        .code(2);
    assert!(r.one_line_error().contains("24 h ahead"), "{r:#?}");
    assert_eq!(env.snapshot(), before);
}

fn manifest(env: &TestEnv, input_schema: serde_json::Value, effect: &str) -> std::path::PathBuf {
    let src = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/transitions/echo.ail"
    ))
    .unwrap();
    env.write("echo.ail", &src);
    let m = serde_json::json!([{
        "id": "x", "title": "X", "description": "d", "transitionFnFile": "echo.ail",
        "inputSchema": input_schema, "outputSchema": {"type": "object"},
        "access": {"effect": "world.apply", "scope": "world", "cost": 0},
        "declaredEffects": [{"effect": effect, "scope": "worktree", "cost": 1}]
    }]);
    env.write("m.json", m.to_string().as_bytes())
}

#[test]
fn publish_refuses_unusable_schemas_and_warns_about_unserved_effects() {
    let env = TestEnv::new();
    env.genesis();
    let mut deep = serde_json::json!({"type": "object"});
    for _ in 0..70 {
        deep = serde_json::json!({"type": "object", "properties": {"a": deep}});
    }
    for (schema, needle) in [
        (
            serde_json::json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "(("}}}),
            "does not compile",
        ),
        (
            serde_json::json!({"type": "object", "$ref": "https://example.com/s.json"}),
            "remote $ref",
        ),
        (deep, "nests"),
    ] {
        let m = manifest(&env, schema, "Workspace.Read");
        let before = env.snapshot();
        let r = env
            .run(&["publish", "--manifest", m.to_str().unwrap(), "--yes"])
            .code(1);
        let line = r.one_line_error();
        assert!(
            line.contains("transition \"x\"") && line.contains(needle),
            "{line}"
        );
        assert_eq!(env.snapshot(), before);
    }
    let m = manifest(
        &env,
        serde_json::json!({"type": "object"}),
        "Workspace.Wrte",
    );
    let r = env
        .run(&["publish", "--manifest", m.to_str().unwrap(), "--yes"])
        .ok();
    assert!(
        r.stderr
            .contains("\"Workspace.Wrte\", which no handler serves")
            && r.stderr.contains("Workspace.Write"),
        "{r:#?}"
    ); // Workspace.Exec has a handler (under --exec-profile): a note says where, not a warning
       // that nothing serves it (issue 29 §7).
    let m = manifest(
        &env,
        serde_json::json!({"type": "object"}),
        "Workspace.Exec",
    );
    let r = env
        .run(&["publish", "--manifest", m.to_str().unwrap(), "--yes"])
        .ok();
    assert!(!r.stderr.contains("no handler serves"), "{r:#?}");
    assert!(
        r.stderr.contains("\"Workspace.Exec\": its handler runs only under `invoke`, `serve` or `mcp` given --exec-profile"),
        "{r:#?}"
    );
}
