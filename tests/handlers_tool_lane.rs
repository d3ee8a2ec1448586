//! The `Ailang.*` handlers against the tool-binary TEST DOUBLE
//! (tests/fixtures/fake_ailang_double.sh): per-episode setup, policy file, environment, op
//! allowlist and flags, the run path, the run allowlist and the deadline
//! (authority-and-broker.md §12.1–§12.3, §13).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use world::broker::handlers::ailang::PinnedTool;
use world::broker::handlers::{
    HandlerContext, HandlerOutcome, HandlerRegistry, RunCapsConfig, Services, AILANG_CHECK,
    AILANG_CLI, AILANG_DISCOVER, AILANG_RUN, AILANG_RUN_ENV, AILANG_RUN_NET,
};

struct Lane {
    _dir: tempfile::TempDir,
    base: PathBuf,
    ctx: HandlerContext,
    registry: HandlerRegistry,
}

fn double_wrapper(dir: &Path, mode: &str) -> PathBuf {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake_ailang_double.sh");
    let wrapper = dir.join(format!("ailang-double-{mode}"));
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nFAKE_MODE={mode} exec {} \"$@\"\n",
            fixture.display()
        ),
    )
    .expect("write wrapper");
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    wrapper
}

/// The double archived for the store at `db` without `PinnedTool::pin`'s version check, so
/// the lane's own setup checks are exercised too.
fn archived(db: &Path, bin: &Path) -> PinnedTool {
    let root = PinnedTool::root_for(db);
    let (a, _) = world::interp::archive::Archive::at_root(root.clone())
        .archive(bin)
        .expect("archive the tool double");
    PinnedTool {
        hash_ref: a.hash_ref,
        root,
    }
}

fn lane(mode: &str, run_caps: RunCapsConfig) -> Lane {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = std::fs::canonicalize(dir.path()).expect("canonical");
    let ws = base.join("ws").join("ep1");
    std::fs::create_dir_all(&ws).expect("mkdir");
    std::fs::create_dir_all(base.join("store")).expect("mkdir");
    let ctx = HandlerContext {
        episode: "ep1".into(),
        worktree: Some(ws),
        db_path: base.join("store/world.db"),
        tool: Some(archived(
            &base.join("store/world.db"),
            &double_wrapper(&base, mode),
        )),
        run_caps,
        ..HandlerContext::default()
    };
    let registry = HandlerRegistry::for_episode(&ctx, Services::default());
    Lane {
        _dir: dir,
        base,
        ctx,
        registry,
    }
}

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(10)
}

fn call(l: &Lane, effect: &str, payload: Value) -> HandlerOutcome {
    let h = l
        .registry
        .handler_for(effect)
        .unwrap_or_else(|| panic!("no handler for {effect}"));
    h.execute(&l.ctx, "worktree", &payload, soon())
}

fn ok_json(o: HandlerOutcome) -> Value {
    match o {
        HandlerOutcome::Succeeded(b) => serde_json::from_slice(&b).expect("json"),
        other => panic!("want success, got {other:?}"),
    }
}

fn failed(o: HandlerOutcome) -> String {
    match o {
        HandlerOutcome::Failed(m) => m,
        other => panic!("want failure, got {other:?}"),
    }
}

#[test]
fn setup_renders_policy_0600_and_ops_run_in_a_scrubbed_environment() {
    let l = lane("ok", RunCapsConfig::default());
    l.registry.prepare_tools(soon()).expect("setup");
    let policy = l.base.join("store/policies/ep1.toml");
    let meta = std::fs::metadata(&policy).expect("policy exists");
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let text = std::fs::read_to_string(&policy).expect("read");
    assert!(text.contains(&format!(
        "fs_sandbox = \"{}\"",
        l.base.join("ws/ep1").display()
    )));
    assert!(l.base.join("store/cache/ep1").is_dir());

    let out = ok_json(call(
        &l,
        AILANG_CHECK,
        json!({"op":"ai_check","path":"main.ail"}),
    ));
    assert_eq!(out["echo"], json!({"op":"ai_check","path":"main.ail"}));
    assert_eq!(
        out["cwd"],
        json!(l.base.join("ws/ep1").display().to_string())
    );
    assert_eq!(
        out["home"],
        json!(l.base.join("store/cache/ep1").display().to_string())
    );
    assert_eq!(out["cache"], out["home"]);
    assert_eq!(out["path_env"], json!("/usr/bin:/bin"));
    assert!(
        out["tool"]
            .as_str()
            .is_some_and(|t| t.starts_with("sha256:") && t.len() == 71),
        "{out}"
    );
    assert_eq!(out["policy_digest"].as_str().map(str::len), Some(64));
}

#[test]
fn op_allowlist_flags_and_aliases() {
    let l = lane("ok", RunCapsConfig::default());
    // An op outside the effect's allowlist, or a write-shaped op, is a handler failure.
    assert!(
        failed(call(&l, AILANG_CHECK, json!({"op":"check","path":"a.ail"})))
            .contains("not in this effect's op allowlist")
    );
    assert!(
        failed(call(&l, AILANG_CLI, json!({"op":"read","path":"a.ail"}))).contains("op allowlist")
    );
    assert!(failed(call(&l, AILANG_DISCOVER, json!({"op":"fmt"}))).contains("op allowlist"));
    // Case-folded aliases of op/flags never reach the tool.
    assert!(failed(call(&l, AILANG_CLI, json!({"op":"version","OP":"fmt"}))).contains("aliases"));
    assert!(failed(call(&l, AILANG_CLI, json!({"op":"version","flagſ":{}}))).contains("aliases"));
    // fmt --write is refused; an unadmitted flag is the tool-style ok:false answer.
    assert!(failed(call(
        &l,
        AILANG_CLI,
        json!({"op":"fmt","path":"a.ail","flags":{"write":"false"}})
    ))
    .contains("never writes"));
    let out = ok_json(call(
        &l,
        AILANG_CLI,
        json!({"op":"check","path":"a.ail","flags":{"zz":""}}),
    ));
    assert_eq!(out["ok"], json!(false));
    assert_eq!(
        out["refused"],
        json!("op check does not admit flag --zz (admitted: --json --quiet --strict-syntax)")
    );
    let out = ok_json(call(
        &l,
        AILANG_CLI,
        json!({"op":"check","path":"a.ail","flags":{"json":""}}),
    ));
    assert_eq!(out["echo"]["flags"], json!({"json":""}));
    assert!(failed(call(
        &l,
        AILANG_CLI,
        json!({"op":"check","flags":{"json":true}})
    ))
    .contains("object of string values"));
    // Paths given to ops are confined host-side too.
    assert!(failed(call(
        &l,
        AILANG_CLI,
        json!({"op":"check","path":"../ep2/x.ail"})
    ))
    .contains("refused"));
    assert!(failed(call(&l, AILANG_CLI, json!({"op":"tree","path":"/etc"}))).contains("refused"));
    // No examples corpus: answered without running the tool.
    let out = ok_json(call(
        &l,
        AILANG_DISCOVER,
        json!({"op":"examples_search","query":"json"}),
    ));
    assert!(
        out["refused"]
            .as_str()
            .is_some_and(|r| r.starts_with("no examples corpus configured")),
        "{out}"
    );
    // A wrong scope is a failure.
    let h = l.registry.handler_for(AILANG_CHECK).expect("handler");
    assert!(matches!(
        h.execute(&l.ctx, "/tmp", &json!({"op":"ai_check","path":"a"}), soon()),
        HandlerOutcome::Failed(_)
    ));
}

#[test]
fn run_path_argv_after_double_dash_and_stdin() {
    let l = lane("ok", RunCapsConfig::default());
    let out = ok_json(call(
        &l,
        AILANG_RUN,
        json!({"path":"main.ail","args_json":"\"{}\"","stdin":"in put","argv":["--flag","-x"]}),
    ));
    assert_eq!(out["admitted"], json!(true));
    assert_eq!(out["exit_code"], json!(0));
    assert_eq!(
        out["stdout"],
        json!("path=main.ail args=\"{}\" argv=--flag -x stdin=in put\n")
    );
    assert_eq!(out["policy"]["caps"], json!(["IO", "FS"]));
    assert_eq!(out["limit"], Value::Null);
    // Plan-law twins: a leading dash or `..` path never reaches the binary.
    assert!(failed(call(&l, AILANG_RUN, json!({"path":"-x.ail"}))).contains("leading"));
    assert!(failed(call(
        &l,
        AILANG_RUN,
        json!({"path":"main.ail","args_json":"{nope"})
    ))
    .contains("holding JSON"));
    assert!(failed(call(
        &l,
        AILANG_RUN,
        json!({"path":"main.ail","argv":["a\u{0}b"]})
    ))
    .contains("NUL"));
    assert!(failed(call(
        &l,
        AILANG_RUN,
        json!({"path":"main.ail","caps":["Process"]})
    ))
    .contains("unknown capability"));
    assert!(failed(call(
        &l,
        AILANG_RUN,
        json!({"path":"main.ail","caps":["IO","IO"]})
    ))
    .contains("listed twice"));
}

#[test]
fn env_and_net_runs_need_the_operator_allowlist() {
    let l = lane("ok", RunCapsConfig::default());
    let msg = failed(call(
        &l,
        AILANG_RUN_ENV,
        json!({"path":"main.ail","caps":["Env","IO"]}),
    ));
    assert!(msg.contains("--run-allow-caps Env"), "{msg}");
    let msg = failed(call(
        &l,
        AILANG_RUN_NET,
        json!({"path":"main.ail","caps":["IO","Net"]}),
    ));
    assert!(msg.contains("--run-allow-caps Net"), "{msg}");
    // The caps decide the effect: an Env run cannot be spent as Ailang.Run.
    assert!(failed(call(
        &l,
        AILANG_RUN,
        json!({"path":"main.ail","caps":["Env"]})
    ))
    .contains("spend Ailang.RunEnv"));
    assert!(!l.base.join("store/policies/ep1.run-Env.IO.toml").exists());

    let allowed = RunCapsConfig {
        allow: vec!["Env".into()],
        ..RunCapsConfig::default()
    };
    let l = lane("ok", allowed);
    let out = ok_json(call(
        &l,
        AILANG_RUN_ENV,
        json!({"path":"main.ail","caps":["Env","IO"]}),
    ));
    assert_eq!(out["policy"]["security_mode"], json!("trusted_host"));
    let variant = l.base.join("store/policies/ep1.run-Env.IO.toml");
    assert_eq!(
        std::fs::metadata(&variant)
            .expect("variant")
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
    assert!(std::fs::read_to_string(&variant)
        .expect("read")
        .contains("fs_deny_write = [\".git/**\""));
}

#[test]
fn run_outcome_shapes_through_the_binary() {
    let l = lane("refused", RunCapsConfig::default());
    let out = ok_json(call(&l, AILANG_RUN, json!({"path":"main.ail"})));
    assert_eq!(
        (out["admitted"].clone(), out["exit_code"].clone()),
        (json!(false), json!(2))
    );
    let l = lane("limit", RunCapsConfig::default());
    let out = ok_json(call(&l, AILANG_RUN, json!({"path":"main.ail"})));
    assert_eq!(out["limit"], json!({"reason":"timeout","stage":"run"}));
    let l = lane("garbage", RunCapsConfig::default());
    assert!(failed(call(&l, AILANG_RUN, json!({"path":"main.ail"})))
        .contains("no recognised outcome envelope"));
}

#[test]
fn run_deadline_kills_and_is_indeterminate() {
    let l = lane("sleep", RunCapsConfig::default());
    l.registry.prepare_tools(soon()).expect("setup");
    let h = l.registry.handler_for(AILANG_RUN).expect("handler");
    let started = Instant::now();
    let out = h.execute(
        &l.ctx,
        "worktree",
        &json!({"path":"main.ail"}),
        Instant::now() + Duration::from_millis(500),
    );
    assert!(matches!(out, HandlerOutcome::Indeterminate(_)), "{out:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn bad_binaries_leave_the_episode_without_tools() {
    for (mode, want) in [
        ("old", "only \"AILANG v0.52.1\" is measured"),
        ("badsummary", "not an ok summary"),
    ] {
        let l = lane(mode, RunCapsConfig::default());
        let err = l.registry.prepare_tools(soon()).unwrap_err().to_string();
        assert!(
            err.starts_with("world: workspace tools unavailable for episode \"ep1\": "),
            "{err}"
        );
        assert!(err.contains(want), "{err}");
        assert!(
            l.registry.handler_for(AILANG_CHECK).is_none(),
            "R8 must refuse after a failed setup"
        );
        assert!(l.registry.handler_for("Workspace.Read").is_some());
    }
    // Pinning refuses the wrong version before anything is archived for the lane.
    let old = lane("old", RunCapsConfig::default());
    let bin = double_wrapper(&old.base, "old");
    let err = PinnedTool::pin(&old.base.join("other.db"), &bin)
        .unwrap_err()
        .to_string();
    assert!(err.contains("only \"AILANG v0.52.1\" is measured"), "{err}");
    let l = lane("reserved", RunCapsConfig::default());
    assert!(failed(call(&l, AILANG_CLI, json!({"op":"version"}))).contains("reserved key"));
    let l = lane("toolfail", RunCapsConfig::default());
    assert!(failed(call(&l, AILANG_CLI, json!({"op":"version"}))).contains("policy-tool exited 4"));
}

#[test]
fn a_tool_binary_changed_after_pinning_never_runs() {
    let l = lane("ok", RunCapsConfig::default());
    ok_json(call(&l, AILANG_CLI, json!({"op":"version"})));
    let tool = l.ctx.tool.clone().expect("pinned");
    let path = tool.verify().expect("verifies");
    // The archive is read-only; an attacker with the directory can still swap the file.
    std::fs::remove_file(&path).expect("remove");
    std::fs::write(&path, "#!/bin/sh\necho pwned\n").expect("replace");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o555)).expect("chmod");
    let msg = failed(call(&l, AILANG_CLI, json!({"op":"version"})));
    assert!(msg.contains("hash_mismatch"), "{msg}");
}
