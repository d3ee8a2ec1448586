//! `Workspace.Exec` end to end through `world invoke` (exec-and-agui.md §1, DEC-EXEC-1..6):
//! real commands in the bubblewrap sandbox, the effect record, the result bytes and the
//! budget for each; profile load errors and refusals; replay never re-runs a command.
//!
//! Needs a usable `bwrap` (Debian `bubblewrap`, installed by .ci/run). Without one each test
//! prints `skipped: …` and why, except under `CI=true`, where it fails.

use crate::invoke_support;

use std::path::{Path, PathBuf};

use invoke_support::{assert_exit, stderr, stdout_json, Env};
use serde_json::Value;
use sha2::{Digest, Sha256};
use world::broker::handlers::exec::sandbox::Bwrap;

/// The sandbox, or `None` after printing why the test is skipped (a failure under CI).
fn sandbox() -> Option<Bwrap> {
    match Bwrap::detect() {
        Ok(b) => Some(b),
        Err(why) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("CI=true and no usable bubblewrap sandbox: {why}")
        }
        Err(why) => {
            eprintln!("skipped: no usable bubblewrap sandbox here: {why}");
            None
        }
    }
}

fn sha_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A store with the fixture manifest published, a session for `ep1` with `budget` calls of
/// `Workspace.Exec`, and a profile file.
struct Exec {
    env: Env,
    tok: PathBuf,
    profile: PathBuf,
    /// Holds the profile, outside the state dir and the workspace root.
    _profiles: tempfile::TempDir,
}

fn default_profile(timeout_ms: u64) -> Value {
    serde_json::json!({
        "profile": "world/exec-profile/v1",
        "project": "demo",
        "path": ["/usr/bin", "/bin"],
        "timeout_ms": timeout_ms,
        "commands": {
            "true": {"argv": ["true"]},
            "env": {"argv": ["/usr/bin/env"]},
            "sh": {"argv": ["sh", "-c"], "positional": "relpath", "max_args": 1},
            "bash": {"argv": ["bash", "-c"], "positional": "relpath", "max_args": 1},
            "touch": {"argv": ["touch"], "flags": {"-c": "bool"}, "positional": "relpath", "max_args": 2},
            "sleep": {"argv": ["sleep", "30"]}
        }
    })
}

impl Exec {
    fn new(budget: u32, profile: &Value) -> Exec {
        let env = Env::bare();
        env.ok(&["genesis"]);
        env.ok(&[
            "publish",
            "--manifest",
            "fixtures/transitions/manifest.json",
            "--yes",
        ]);
        let grant = format!("Workspace.Exec=worktree:{budget}");
        let tok = env.mint("ep1", &[&grant]);
        let profiles = tempfile::tempdir().unwrap();
        let path = profiles.path().join("profile.json");
        std::fs::write(&path, serde_json::to_vec_pretty(profile).unwrap()).unwrap();
        Exec {
            env,
            tok,
            profile: path,
            _profiles: profiles,
        }
    }

    fn worktree(&self) -> PathBuf {
        self.env.ws.join("ep1")
    }

    /// `world invoke workspace-exec --exec-profile P --args ARGS [EXTRA]`.
    fn call(&self, args: &str, extra: &[&str]) -> std::process::Output {
        let p = self.profile.to_string_lossy().into_owned();
        let mut a = vec!["--exec-profile", p.as_str()];
        a.extend(extra);
        self.env.invoke(&self.tok, "workspace-exec", args, &a)
    }

    /// The last effect record (`world effects --json`) and `effects show` of it.
    fn last_effect(&self) -> (Value, Value) {
        let all = self.env.effects(&[]);
        let rec = all.last().cloned().expect("an effect record");
        let shown: Value = serde_json::from_str(&self.env.ok(&[
            "effects",
            "show",
            rec["ref"].as_str().unwrap(),
            "--json",
        ]))
        .unwrap();
        (rec, shown)
    }

    /// The last effect's result bytes exactly as stored (`object get REF --payload`);
    /// `effects show --json` nests JSON results as JSON, which would lose the byte layout.
    fn result(&self) -> (Value, String) {
        let (rec, shown) = self.last_effect();
        let result_ref = shown["record"]["resultRef"]
            .as_str()
            .expect("a result ref")
            .to_string();
        let text = self.env.ok(&["object", "get", &result_ref, "--payload"]);
        assert_eq!(rec["allowed"], true);
        assert_eq!(rec["failed"], false);
        (rec, text)
    }
}

/// The result object's members in the reference's order (§1.7).
const MEMBERS: [&str; 15] = [
    "exit_code",
    "timed_out",
    "limit",
    "duration_ms",
    "stdout",
    "stdout_bytes",
    "stdout_truncated",
    "stdout_sha256",
    "stderr",
    "stderr_bytes",
    "stderr_truncated",
    "stderr_sha256",
    "argv",
    "profile",
    "sandbox",
];

fn members(v: &Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

#[test]
fn exec_true_result_bytes_record_and_budget() {
    let Some(bwrap) = sandbox() else { return };
    let x = Exec::new(10, &default_profile(5000));
    let out = x.call(r#"{"command":"true"}"#, &[]);
    assert_exit(&out, 0);
    let (rec, text) = x.result();
    assert_eq!(rec["effect"], "Workspace.Exec");
    assert_eq!(rec["scope"], "worktree");
    assert_eq!(
        (rec["budgetBefore"].as_i64(), rec["budgetAfter"].as_i64()),
        (Some(10), Some(9))
    );
    let (_, shown) = x.last_effect();
    let request_ref = shown["record"]["requestRef"].as_str().unwrap().to_string();
    let req = x.env.ok(&["object", "get", &request_ref, "--payload"]);
    let req = req.as_str();
    assert!(
        req.starts_with("14:Workspace.Exec8:worktree1:") && req.ends_with(r#":{"command":"true"}"#),
        "{req}"
    );
    // The exact bytes: every member but duration_ms is known in advance.
    let v: Value = serde_json::from_str(&text).unwrap();
    let duration = v["duration_ms"].as_i64().expect("duration_ms");
    let settings = x.env.root.join("exec").join("ep1.demo.srt.json");
    let settings_digest = format!("sha256:{}", sha_hex(&std::fs::read(&settings).unwrap()));
    let empty = sha_hex(b"");
    let want = format!(
        concat!(
            r#"{{"exit_code":0,"timed_out":false,"limit":null,"duration_ms":{},"#,
            r#""stdout":"","stdout_bytes":0,"stdout_truncated":false,"stdout_sha256":"{}","#,
            r#""stderr":"","stderr_bytes":0,"stderr_truncated":false,"stderr_sha256":"{}","#,
            r#""argv":["true"],"profile":{{"project":"demo","digest":"sha256:{}","command":"true","argv0_sha256":"{}"}},"#,
            r#""sandbox":{{"runtime":"bubblewrap","version":"{}","cli_sha256":"{}","settings_digest":"{}","read_fence":true,"network":"none"}}}}"#
        ),
        duration,
        empty,
        empty,
        sha_hex(&std::fs::read(&x.profile).unwrap()),
        sha_hex(&std::fs::read("/usr/bin/true").unwrap()),
        bwrap.version,
        bwrap.sha256,
        settings_digest,
    );
    assert_eq!(text, want);
    // The committed output is the TR-CJSON-1 handler output plus `world`.
    let committed = stdout_json(&out);
    assert_eq!(committed["exit_code"], 0);
    assert_eq!(committed["world"]["effects"][0]["status"], "ok");
    assert_eq!(committed["world"]["effects"][0]["record"], rec["ref"]);
    // The settings file is World's rendering, 0600.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&settings).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    x.env.verify_ok();
}

#[test]
fn exec_nonzero_exit_and_the_child_environment() {
    if sandbox().is_none() {
        return;
    }
    let x = Exec::new(10, &default_profile(5000));
    let out = x.call(
        r#"{"command":"sh","args":["echo out; echo err >&2; exit 3"]}"#,
        &[],
    );
    assert_exit(&out, 0);
    let (rec, text) = x.result();
    assert_eq!(rec["budgetAfter"], 9);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(members(&v), MEMBERS);
    assert_eq!(v["exit_code"], 3);
    assert_eq!(v["stdout"], "out\n");
    assert_eq!(v["stderr"], "err\n");
    assert_eq!(v["stdout_sha256"], sha_hex(b"out\n"));
    assert_eq!(v["stderr_bytes"], 4);
    assert_eq!(
        v["argv"],
        serde_json::json!(["sh", "-c", "echo out; echo err >&2; exit 3"])
    );
    // A death by signal is 128+n (the trampoline shell's mapping).
    assert_exit(
        &x.call(r#"{"command":"sh","args":["kill -TERM $$"]}"#, &[]),
        0,
    );
    let (_, text) = x.result();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["exit_code"], 143);
    // The child environment is exactly World's set, in order (§1.6).
    assert_exit(&x.call(r#"{"command":"env"}"#, &[]), 0);
    let (_, text) = x.result();
    let v: Value = serde_json::from_str(&text).unwrap();
    let cache = x.env.root.join("exec-cache/ep1/demo");
    let c = |d: &str| cache.join(d).to_string_lossy().into_owned();
    let want = format!(
        "HOME={}\nTMPDIR={}\nPATH=/usr/bin:/bin\nLANG=C.UTF-8\nLC_ALL=C.UTF-8\nPYTHONPYCACHEPREFIX={}\nnpm_config_cache={}\nCI=1\nNO_COLOR=1\n",
        c("home"),
        c("tmp"),
        c("pycache"),
        c("npm")
    );
    assert_eq!(v["stdout"], want);
    assert_eq!(x.env.effects(&[]).last().unwrap()["budgetAfter"], 7);
}

#[test]
fn exec_64_mib_is_kept_head_and_tail_with_digests() {
    if sandbox().is_none() {
        return;
    }
    let x = Exec::new(10, &default_profile(9000));
    // Exactly 64 MiB = the default cap: "HEAD", 'x' * (64 MiB - 8), "TAIL".
    let total: usize = 64 << 20;
    let script = format!(
        "printf HEAD; head -c {} /dev/zero | tr '\\000' x; printf TAIL",
        total - 8
    );
    let args = serde_json::json!({"command": "sh", "args": [script]}).to_string();
    let out = x.call(&args, &[]);
    assert_exit(&out, 0);
    let (_, text) = x.result();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["exit_code"], 0);
    assert_eq!(v["limit"], Value::Null);
    assert_eq!(v["stdout_bytes"], total as u64);
    assert_eq!(v["stdout_truncated"], true);
    let mut whole = Vec::with_capacity(total);
    whole.extend_from_slice(b"HEAD");
    whole.resize(total - 4, b'x');
    whole.extend_from_slice(b"TAIL");
    assert_eq!(v["stdout_sha256"], sha_hex(&whole));
    let head = String::from_utf8(whole[..8192].to_vec()).unwrap();
    let tail = String::from_utf8(whole[total - 57344..].to_vec()).unwrap();
    let want = format!("{head}\n[... {} bytes omitted ...]\n{tail}", total - 65536);
    assert_eq!(v["stdout"].as_str().unwrap(), want);
    assert_eq!(v["stderr_truncated"], false);

    // One byte past a lower cap kills the group: limit "output", exit_code null.
    let out = x.call(
        r#"{"command":"sh","args":["yes; sleep 30"]}"#,
        &["--exec-max-output-bytes", "100000"],
    );
    assert_exit(&out, 0);
    let (rec, text) = x.result();
    assert_eq!(rec["budgetAfter"], 8);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["limit"], "output");
    assert_eq!(v["exit_code"], Value::Null);
    assert_eq!(v["timed_out"], false);
    assert!(v["stdout_bytes"].as_u64().unwrap() > 100_000);
    assert!(v["duration_ms"].as_i64().unwrap() < 8000);
}

#[test]
fn exec_past_the_deadline_is_timed_out() {
    if sandbox().is_none() {
        return;
    }
    let x = Exec::new(10, &default_profile(1000));
    let started = std::time::Instant::now();
    let out = x.call(r#"{"command":"sleep"}"#, &[]);
    assert!(started.elapsed() < std::time::Duration::from_secs(15));
    assert_exit(&out, 0);
    let (rec, text) = x.result();
    assert_eq!(rec["budgetAfter"], 9);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["timed_out"], true);
    assert_eq!(v["exit_code"], Value::Null);
    assert_eq!(v["limit"], Value::Null);
    let ms = v["duration_ms"].as_i64().unwrap();
    assert!((1000..6000).contains(&ms), "duration_ms {ms}");
    assert_eq!(v["argv"], serde_json::json!(["sleep", "30"]));
}

#[test]
fn exec_has_no_network_and_no_unix_sockets() {
    if sandbox().is_none() {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    // The same command reaches the listener outside the sandbox (the control).
    let control = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
        ))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&control.stdout), "connected\n");
    while listener.accept().is_ok() {}
    let x = Exec::new(10, &default_profile(5000));
    let args = serde_json::json!({
        "command": "bash",
        "args": [format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")]
    })
    .to_string();
    assert_exit(&x.call(&args, &[]), 0);
    let (_, text) = x.result();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_ne!(v["exit_code"], 0, "{text}");
    assert_eq!(v["stdout"], "");
    assert!(
        listener.accept().is_err(),
        "the sandboxed command reached the host listener"
    );
    // The seccomp program refuses socket(AF_UNIX) (DEC-EXEC-2).
    if Path::new("/usr/bin/python3").exists() {
        let args = serde_json::json!({
            "command": "sh",
            "args": ["python3 -c 'import socket; socket.socket(socket.AF_UNIX)' 2>&1 | tail -1"]
        })
        .to_string();
        assert_exit(&x.call(&args, &[]), 0);
        let (_, text) = x.result();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert!(
            v["stdout"].as_str().unwrap().contains("PermissionError"),
            "{text}"
        );
    }
}

#[test]
fn exec_writes_inside_the_worktree_and_nowhere_else() {
    if sandbox().is_none() {
        return;
    }
    let x = Exec::new(20, &default_profile(5000));
    let wt = x.worktree();
    std::fs::create_dir_all(x.env.ws.join("ep2")).unwrap();
    std::fs::create_dir(wt.join(".git")).unwrap();
    std::fs::write(wt.join(".git/config"), "[core]\n").unwrap();
    // Inside: succeeds, and the file is on the host.
    assert_exit(
        &x.call(r#"{"command":"touch","args":["-c","made.txt"]}"#, &[]),
        0,
    );
    assert!(!wt.join("made.txt").exists(), "-c creates nothing");
    assert_exit(
        &x.call(r#"{"command":"touch","args":["made.txt"]}"#, &[]),
        0,
    );
    let (_, text) = x.result();
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap()["exit_code"],
        0
    );
    assert!(wt.join("made.txt").is_file());
    // Outside: a sibling episode, the state dir, /tmp, the worktree's .git — each fails and
    // the host is unchanged; the store file cannot be read.
    let db = x.env.db.to_string_lossy().into_owned();
    let tries = [
        "echo x > ../ep2/pwned".to_string(),
        format!("echo x > {}/pwned", x.env.root.display()),
        "echo x > /tmp/world-exec-pwned".to_string(),
        "echo x > .git/config".to_string(),
        format!("cat {db}"),
    ];
    for t in &tries {
        let args = serde_json::json!({"command": "sh", "args": [t]}).to_string();
        assert_exit(&x.call(&args, &[]), 0);
        let (_, text) = x.result();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_ne!(v["exit_code"], 0, "{t}: {text}");
    }
    assert!(!x.env.ws.join("ep2/pwned").exists());
    assert!(!x.env.root.join("pwned").exists());
    assert!(!Path::new("/tmp/world-exec-pwned").exists());
    assert_eq!(
        std::fs::read_to_string(wt.join(".git/config")).unwrap(),
        "[core]\n"
    );
}

#[test]
fn exec_refusals_plan_handler_and_schema() {
    if sandbox().is_none() {
        return;
    }
    let x = Exec::new(10, &default_profile(5000));
    let wt = x.worktree();
    // The argument law: a refusal (handler success, debited), nothing spawned.
    let out = x.call(r#"{"command":"touch","args":["-x","a.txt"]}"#, &[]);
    assert_exit(&out, 7);
    let body = stdout_json(&out);
    assert_eq!(body["ok"], false);
    assert_eq!(
        body["refused"],
        "command \"touch\": argument 0 \"-x\" refused: the command does not list this flag"
    );
    let (rec, text) = x.result();
    assert_eq!(rec["budgetAfter"], 9);
    assert_eq!(
        text,
        r#"{"ok":false,"refused":"command \"touch\": argument 0 \"-x\" refused: the command does not list this flag"}"#
    );
    let out = x.call(r#"{"command":"touch","args":["a","b","c"]}"#, &[]);
    assert_exit(&out, 7);
    assert_eq!(
        stdout_json(&out)["refused"],
        "command \"touch\": argument 2 \"c\" refused: more arguments than the command's max_args"
    );
    let out = x.call(r#"{"command":"rm"}"#, &[]);
    assert_exit(&out, 7);
    assert_eq!(
        stdout_json(&out)["refused"],
        "command \"rm\" is not a command of exec profile \"demo\""
    );
    assert_eq!(x.env.effects(&[]).last().unwrap()["budgetAfter"], 7);
    assert_eq!(std::fs::read_dir(&wt).unwrap().count(), 0, "nothing ran");
    // The plan's own refusal: zero effects, committed, no debit.
    let before = x.env.effects(&[]).len();
    let out = x.call(r#"{"command":"Rm"}"#, &[]);
    assert_exit(&out, 7);
    assert!(stdout_json(&out)["refused"]
        .as_str()
        .unwrap()
        .starts_with("command \"Rm\" refused: a command id must match"));
    let out = x.call(
        &serde_json::json!({"command":"true","args": vec!["a"; 17]}).to_string(),
        &[],
    );
    assert_exit(&out, 7);
    assert_eq!(
        stdout_json(&out)["refused"],
        "argument \"args\" has 17 items; the limit is 16"
    );
    assert_eq!(x.env.effects(&[]).len(), before);
    // Arguments outside the inputSchema: nothing committed.
    let fp = x.env.fingerprint();
    let out = x.call(r#"{"command":"true","cwd":"/"}"#, &[]);
    assert_exit(&out, 1);
    assert_eq!(x.env.fingerprint(), fp);
}

#[test]
fn exec_profile_load_errors_leave_the_store_unchanged() {
    let x = Exec::new(10, &default_profile(5000));
    let cases: Vec<(Value, &str)> = vec![
        (
            {
                let mut p = default_profile(5000);
                p["timeout_ms"] = 9001.into();
                p
            },
            "exec profile: timeout_ms: 9001 is outside 1–9000 (HandlerCap − 1 000 ms, D-140-4)",
        ),
        (
            {
                let mut p = default_profile(5000);
                p["Path"] = serde_json::json!([]);
                p
            },
            "exec profile: profile: unknown key \"Path\"",
        ),
        (
            {
                let mut p = default_profile(5000);
                p["env"] = serde_json::json!({"GIT_DIR": "/x"});
                p
            },
            "exec profile: env: \"GIT_DIR\" is World-owned; a profile cannot set it",
        ),
        (
            {
                let mut p = default_profile(5000);
                p["commands"]["true"]["flags"] = serde_json::json!({"-v": "float"});
                p
            },
            "exec profile: commands.true.flags.-v.class: \"float\" is not bool, regex, int, relpath or enum:[…]",
        ),
        (
            {
                let mut p = default_profile(5000);
                p["read_roots"] = serde_json::json!(["/"]);
                p
            },
            "exec profile: read_roots: \"/\" is /",
        ),
    ];
    let fp = x.env.fingerprint();
    for (profile, want) in cases {
        std::fs::write(&x.profile, serde_json::to_vec(&profile).unwrap()).unwrap();
        let out = x.call(r#"{"command":"true"}"#, &[]);
        assert_exit(&out, 1);
        assert!(stderr(&out).contains(want), "want {want}\n{}", stderr(&out));
    }
    let out = x.env.run(&[
        "invoke",
        "workspace-exec",
        "--session",
        &x.tok.to_string_lossy(),
        "--exec-episode-project",
        "ep1=demo",
    ]);
    assert_exit(&out, 1);
    assert!(stderr(&out).contains(
        "--exec-episode-project: needs --exec-profile (it configures workspace-exec, which is off without a profile)"
    ));
    // A profile an agent could edit (inside the workspace root) is refused.
    let inside = x.worktree().join("profile.json");
    std::fs::write(&inside, serde_json::to_vec(&default_profile(5000)).unwrap()).unwrap();
    let out = x.env.invoke(
        &x.tok,
        "workspace-exec",
        r#"{"command":"true"}"#,
        &[
            "--exec-profile",
            &inside.to_string_lossy(),
            "--workspace-root",
            &x.env.ws.to_string_lossy(),
        ],
    );
    assert_exit(&out, 1);
    assert!(stderr(&out).contains("lies inside the"), "{}", stderr(&out));
    std::fs::remove_file(&inside).unwrap();
    let out = x.call(r#"{"command":"true"}"#, &["--exec-max-output-bytes", "0"]);
    assert_exit(&out, 2);
    assert!(stderr(&out).contains("\"0\" is not a positive byte count"));
    assert_eq!(x.env.fingerprint(), fp);
    assert!(!x.env.root.join("exec").exists());
}

#[test]
fn exec_without_a_profile_is_the_typed_refusal() {
    let x = Exec::new(10, &default_profile(5000));
    let out = x
        .env
        .invoke(&x.tok, "workspace-exec", r#"{"command":"true"}"#, &[]);
    assert_exit(&out, 7);
    assert_eq!(
        stdout_json(&out)["refused"],
        "no exec profile configured: start world serve with --exec-profile FILE"
    );
    assert_eq!(x.env.effects(&[]).last().unwrap()["budgetAfter"], 9);
}

#[test]
fn exec_without_a_usable_sandbox_is_unbound_and_serve_refuses_to_start() {
    let x = Exec::new(10, &default_profile(5000));
    let fp = x.env.fingerprint();
    let p = x.profile.to_string_lossy().into_owned();
    let tok = x.tok.to_string_lossy().into_owned();
    let out = x
        .env
        .cmd(&[
            "invoke",
            "workspace-exec",
            "--session",
            &tok,
            "--args",
            r#"{"command":"true"}"#,
            "--exec-profile",
            &p,
        ])
        .env("WORLD_EXEC_BWRAP", "/nonexistent/bwrap")
        .output()
        .unwrap();
    assert_exit(&out, 1);
    let err = stderr(&out);
    assert!(
        err.contains("transition declares an effect this daemon has no handler for"),
        "{err}"
    );
    assert!(
        err.contains("no usable sandbox: WORLD_EXEC_BWRAP=/nonexistent/bwrap is not a file"),
        "{err}"
    );
    assert_eq!(x.env.fingerprint(), fp, "R8: no record, no debit");
    let out = x
        .env
        .cmd(&["serve", "--bind", "127.0.0.1:0", "--exec-profile", &p])
        .env("WORLD_EXEC_BWRAP", "/nonexistent/bwrap")
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap();
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("daemon startup failed at config: the exec configuration is refused: no usable sandbox: WORLD_EXEC_BWRAP=/nonexistent/bwrap is not a file"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn exec_replay_returns_the_record_and_never_runs_the_command() {
    if sandbox().is_none() {
        return;
    }
    let x = Exec::new(10, &default_profile(5000));
    let wt = x.worktree();
    let args = r#"{"command":"sh","args":["echo ran >> runs.txt; cat runs.txt"]}"#;
    let first = x.call(args, &["--invocation-id", "t1"]);
    assert_exit(&first, 0);
    assert_eq!(
        std::fs::read_to_string(wt.join("runs.txt")).unwrap(),
        "ran\n"
    );
    // The same invocation id answers the recorded result; the command does not run again.
    let again = x.call(args, &["--invocation-id", "t1"]);
    assert_exit(&again, 0);
    assert_eq!(again.stdout, first.stdout);
    assert_eq!(
        std::fs::read_to_string(wt.join("runs.txt")).unwrap(),
        "ran\n"
    );
    // `world replay` with the worktree gone: identical, and nothing recreated.
    std::fs::remove_dir_all(&x.env.ws).unwrap();
    let out = x.env.run(&["replay", "--all", "--json"]);
    assert_exit(&out, 0);
    let lines = invoke_support::json_lines(&String::from_utf8_lossy(&out.stdout));
    assert!(
        lines
            .iter()
            .any(|l| l["invocationId"] == "cli:ep1:t1" && l["ok"] == true),
        "{lines:?}"
    );
    assert!(!x.env.ws.exists());
    assert_eq!(x.env.effects(&[]).len(), 1);
}

#[test]
fn exec_over_world_mcp_with_the_profile_flag() {
    use std::io::{BufRead, BufReader, Write};
    if sandbox().is_none() {
        return;
    }
    let x = Exec::new(10, &default_profile(5000));
    let mut child = x
        .env
        .std_cmd(&[
            "mcp",
            "--session",
            &x.tok.to_string_lossy(),
            "--exec-profile",
            &x.profile.to_string_lossy(),
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut ask = |v: Value| -> Value {
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    };
    ask(
        serde_json::json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}),
    );
    let list = ask(serde_json::json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names, ["workspace-exec"]);
    let r = ask(
        serde_json::json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
        "params":{"name":"workspace-exec","arguments":{"command":"sh","args":["echo via-mcp"]}}}),
    );
    assert_eq!(
        r["result"]["structuredContent"]["stdout"], "via-mcp\n",
        "{r}"
    );
    assert_eq!(r["result"]["structuredContent"]["exit_code"], 0);
    drop(stdin);
    let _ = child.wait();
    assert_eq!(x.env.effects(&[]).last().unwrap()["budgetAfter"], 9);
}

#[test]
fn exec_cut_multibyte_character_becomes_replacement() {
    if sandbox().is_none() {
        return;
    }
    let x = Exec::new(10, &default_profile(5000));
    // 8191 'a', then "é" (C3 A9) split by the 8192-byte head, then 70000 'b'.
    let script = "head -c 8191 /dev/zero | tr '\\000' a; printf '\\303\\251'; head -c 70000 /dev/zero | tr '\\000' b";
    let args = serde_json::json!({"command": "sh", "args": [script]}).to_string();
    assert_exit(&x.call(&args, &[]), 0);
    let (_, text) = x.result();
    let total = 8191 + 2 + 70000;
    let want_head = format!(
        "{}\\ufffd\\n[... {} bytes omitted ...]\\n",
        "a".repeat(8191),
        total - 65536
    );
    assert!(
        text.contains(&format!("\"stdout\":\"{want_head}{}\"", "b".repeat(57344))),
        "{}",
        &text[..200]
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["stdout_bytes"], total);
    let mut whole = vec![b'a'; 8191];
    whole.extend_from_slice("é".as_bytes());
    whole.extend(std::iter::repeat_n(b'b', 70000));
    assert_eq!(v["stdout_sha256"], sha_hex(&whole));
}

#[test]
fn exec_caches_are_seeded_once_and_the_seed_stays_untouched() {
    if sandbox().is_none() {
        return;
    }
    let seed = tempfile::tempdir().unwrap();
    std::fs::write(seed.path().join("seed.txt"), "from the seed\n").unwrap();
    let mut p = default_profile(5000);
    p["caches"] = serde_json::json!({"MYCACHE": {"seed": seed.path().to_string_lossy()}});
    let x = Exec::new(10, &p);
    let args =
        r#"{"command":"sh","args":["cat $MYCACHE/seed.txt; echo more >> $MYCACHE/seed.txt"]}"#;
    assert_exit(&x.call(args, &[]), 0);
    let (_, text) = x.result();
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap()["stdout"],
        "from the seed\n"
    );
    // The second call sees the episode's copy (seeded once), never the seed.
    assert_exit(&x.call(args, &[]), 0);
    let (_, text) = x.result();
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap()["stdout"],
        "from the seed\nmore\n"
    );
    assert_eq!(
        std::fs::read_to_string(seed.path().join("seed.txt")).unwrap(),
        "from the seed\n"
    );
    let copy = x.env.root.join("exec-cache/ep1/demo/MYCACHE/seed.txt");
    assert_eq!(
        std::fs::read_to_string(copy).unwrap(),
        "from the seed\nmore\nmore\n"
    );
}

/// Issue 26 §6: a `bwrap` that answers `--version` and runs the command unconfined (the test
/// double tests/fixtures/fake_bwrap_double.sh: it skips to `--` and executes the rest) passes a `/bin/true` trial, but not the confinement probe,
/// which every surface now runs before any `Workspace.Exec`: `invoke` and `mcp` leave the
/// effect unbound (nothing runs, nothing is recorded as sandboxed), `serve` refuses to start.
#[test]
fn a_bwrap_that_runs_the_command_unconfined_is_refused_by_invoke_mcp_and_serve() {
    use std::io::{BufRead, BufReader, Write};
    use std::os::unix::fs::PermissionsExt;
    let x = Exec::new(10, &default_profile(5000));
    // A copy of the double (tests/fixtures/fake_bwrap_double.sh) in the test's own directory.
    let fake = x.env.root.join("fake-bwrap");
    std::fs::copy(
        crate::common::repo().join("tests/fixtures/fake_bwrap_double.sh"),
        &fake,
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let outside = x.env.root.join("outside.txt");
    let args = serde_json::json!({"command": "sh", "args": [format!("echo unconfined > {}", outside.display())]}).to_string();
    let fp = x.env.fingerprint();
    let p = x.profile.to_string_lossy().into_owned();
    let tok = x.tok.to_string_lossy().into_owned();
    let out = x
        .env
        .cmd(&[
            "invoke",
            "workspace-exec",
            "--session",
            &tok,
            "--args",
            &args,
            "--exec-profile",
            &p,
        ])
        .env("WORLD_EXEC_BWRAP", &fake)
        .output()
        .unwrap();
    assert_exit(&out, 1);
    let err = stderr(&out);
    assert!(err.contains("exec startup probe failed"), "{err}");
    assert!(!outside.exists(), "the command ran unconfined");
    assert_eq!(x.env.fingerprint(), fp, "nothing recorded");
    // `world mcp`: the tool call is refused, nothing runs.
    let mut child = x
        .env
        .std_cmd(&["mcp", "--session", &tok, "--exec-profile", &p])
        .env("WORLD_EXEC_BWRAP", &fake)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut rd = BufReader::new(child.stdout.take().unwrap());
    let mut ask = |v: Value| -> Value {
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        rd.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    };
    ask(
        serde_json::json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}),
    );
    let r = ask(
        serde_json::json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
        "params":{"name":"workspace-exec","arguments": serde_json::from_str::<Value>(&args).unwrap()}}),
    );
    assert_ne!(r["result"]["isError"], false, "{r}");
    drop(stdin);
    let _ = child.wait();
    assert!(!outside.exists(), "the command ran unconfined under mcp");
    assert_eq!(x.env.fingerprint(), fp, "nothing recorded by mcp");
    // `world serve` refuses to start with the same binary.
    let out = x
        .env
        .cmd(&["serve", "--bind", "127.0.0.1:0", "--exec-profile", &p])
        .env("WORLD_EXEC_BWRAP", &fake)
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap();
    assert_exit(&out, 2);
    assert!(
        stderr(&out).contains("exec startup probe failed"),
        "{}",
        stderr(&out)
    );
    assert!(!outside.exists());
}
