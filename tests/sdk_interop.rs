//! Interoperability with the official client SDKs (surfaces.md DEC-MCP-3/4, DEC-A2A-2/3,
//! issue 20): the MCP Python SDK (`mcp` 2.3.0) drives `world serve` (/mcp/, both eras) and
//! `world mcp` (stdio), and the A2A Python SDK (`a2a-sdk` 1.3.0) resolves both agent cards and
//! sends, gets and cancels tasks — unmodified, with no workaround. The SDK side is
//! tests/interop/{mcp_sdk,a2a_sdk}.py.
//!
//! The SDKs live in a virtual environment that `.ci/run` creates (`target/sdk-venv`, or the
//! interpreter named by `WORLD_SDK_PYTHON`). Outside CI a missing environment skips these
//! tests and says why on stderr; under `CI=true` it is a failure.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};

const MCP_VERSION: &str = "2.3.0";
const A2A_VERSION: &str = "1.3.0";

use crate::common::world_bin as bin;

fn repo() -> PathBuf {
    crate::common::repo().to_path_buf()
}

/// The venv's python with both SDKs at the tested versions, or why not.
fn sdk_python() -> Result<PathBuf, String> {
    let py = std::env::var_os("WORLD_SDK_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target/sdk-venv/bin/python"));
    if !py.exists() {
        return Err(format!(
            "{} does not exist (.ci/run creates it: python3 -m venv target/sdk-venv && target/sdk-venv/bin/pip install mcp=={MCP_VERSION} a2a-sdk=={A2A_VERSION})",
            py.display()
        ));
    }
    let out = Command::new(&py)
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('mcp'), m.version('a2a-sdk'))",
        ])
        .output()
        .map_err(|e| format!("{}: {e}", py.display()))?;
    let have = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let want = format!("{MCP_VERSION} {A2A_VERSION}");
    if !out.status.success() || have != want {
        return Err(format!(
            "{} has mcp/a2a-sdk {have:?}, the tests need {want:?}: {}",
            py.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(py)
}

/// The SDK interpreter, or `None` after saying why the test is skipped (outside CI only).
fn python_or_skip(test: &str) -> Option<PathBuf> {
    match sdk_python() {
        Ok(p) => Some(p),
        Err(why) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("{test}: the SDK environment is required under CI=true: {why}")
        }
        Err(why) => {
            eprintln!("{test}: skipped: {why}");
            None
        }
    }
}

/// A store with the fixture transitions published and a session for `ep1`.
struct Store {
    dir: tempfile::TempDir,
    token: String,
}

impl Store {
    fn new() -> Store {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("ws/ep1")).expect("ws");
        std::fs::write(dir.path().join("ws/ep1/notes.txt"), "hello\nworld\n").expect("notes");
        let s = Store {
            dir,
            token: String::new(),
        };
        s.world(&["genesis"]);
        s.world(&[
            "publish",
            "--manifest",
            "fixtures/transitions/manifest.json",
            "--yes",
        ]);
        let ws = s.dir.path().join("ws");
        let tok = s.tok_file();
        s.world(&[
            "session",
            "mint",
            "--episode",
            "ep1",
            "--yes",
            "--ttl",
            "3600",
            "--grant",
            "world.apply=world:10",
            "--grant",
            "Workspace.Read=worktree:50",
            "--workspace-root",
            ws.to_str().unwrap(),
            "--out",
            tok.to_str().unwrap(),
        ]);
        let token = std::fs::read_to_string(&tok)
            .expect("token")
            .trim()
            .to_string();
        Store { token, ..s }
    }

    fn db(&self) -> PathBuf {
        self.dir.path().join("w.db")
    }

    fn tok_file(&self) -> PathBuf {
        self.dir.path().join("tok")
    }

    fn world(&self, args: &[&str]) {
        let out = Command::new(bin())
            .current_dir(repo())
            .arg("--db")
            .arg(self.db())
            .args(args)
            .output()
            .expect("run world");
        assert!(
            out.status.success(),
            "world {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn serve(&self) -> (Child, u16) {
        let mut child = Command::new(bin())
            .arg("--db")
            .arg(self.db())
            .args(["serve", "--bind", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("listening line");
        let port = line
            .trim()
            .strip_prefix("world listening on http://127.0.0.1:")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
        (child, port)
    }
}

fn run_py(py: &Path, script: &str, args: &[&str]) -> Value {
    let out = Command::new(py)
        .current_dir(std::env::temp_dir())
        .arg(repo().join("tests/interop").join(script))
        .args(args)
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{script} {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{script}: {e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// What every MCP run must show: tools by grant, pure and effectful calls, a bad-argument tool
/// error the model can read, an unknown tool as -32602.
fn check_mcp(v: &Value, era: &str, server_named: bool) {
    assert_eq!(v["protocolVersion"], era, "{v}");
    if server_named {
        assert_eq!(
            v["serverName"], "world",
            "the SDK must find the server identity: {v}"
        );
    }
    assert_eq!(
        v["tools"],
        json!(["ailang-read", "counter", "echo", "readcount", "refuse"])
    );
    assert_eq!(
        v["echo"],
        json!({"isError": false, "structured": {"sdk": true}})
    );
    assert_eq!(v["readcount"]["isError"], false);
    assert_eq!(v["readcount"]["effects"][0]["status"], "ok", "{v}");
    assert_eq!(v["bad"]["isError"], true, "{v}");
    let text = v["bad"]["text"].as_str().unwrap_or("");
    assert!(
        text.contains("arguments fail the inputSchema at /path"),
        "{text}"
    );
    assert_eq!(v["unknown"]["code"], -32602, "{v}");
}

#[test]
fn the_official_mcp_sdk_works_over_http_in_both_eras_and_over_stdio() {
    let Some(py) = python_or_skip("mcp sdk interop") else {
        return;
    };
    let s = Store::new();
    let (mut child, port) = s.serve();
    let url = format!("http://127.0.0.1:{port}/mcp/");
    let legacy = run_py(&py, "mcp_sdk.py", &["http", &url, &s.token, "legacy"]);
    let auto = run_py(&py, "mcp_sdk.py", &["http", &url, &s.token, "auto"]);
    let pinned = run_py(&py, "mcp_sdk.py", &["http", &url, &s.token, "2026-07-28"]);
    let _ = child.kill();
    let _ = child.wait();
    check_mcp(&legacy, "2025-11-25", true);
    // `auto` probes server/discover: the 2026-07-28 era, identity read from `_meta`.
    check_mcp(&auto, "2026-07-28", true);
    check_mcp(&pinned, "2026-07-28", false);
    // `world mcp` on stdin/stdout, launched by the SDK.
    let tok = s.tok_file();
    let (w, db, t) = (
        bin().to_string_lossy().into_owned(),
        s.db().to_string_lossy().into_owned(),
        tok.to_string_lossy().into_owned(),
    );
    check_mcp(
        &run_py(&py, "mcp_sdk.py", &["stdio", &w, &db, &t, "legacy"]),
        "2025-11-25",
        true,
    );
    check_mcp(
        &run_py(&py, "mcp_sdk.py", &["stdio", &w, &db, &t, "auto"]),
        "2026-07-28",
        true,
    );
}

#[test]
fn the_official_a2a_sdk_resolves_both_cards_and_sends_gets_and_cancels() {
    let Some(py) = python_or_skip("a2a sdk interop") else {
        return;
    };
    let s = Store::new();
    let (mut child, port) = s.serve();
    let base = format!("http://127.0.0.1:{port}");
    // The v1.0 card (supportedInterfaces → SendMessage/GetTask/CancelTask) and the legacy card
    // (read as A2A v0.3 → message/send, tasks/get, tasks/cancel at the card's url).
    let v1 = run_py(
        &py,
        "a2a_sdk.py",
        &[&base, &s.token, "/.well-known/agent-card.json", "sdk-v1"],
    );
    let v03 = run_py(
        &py,
        "a2a_sdk.py",
        &[&base, &s.token, "/.well-known/agent.json", "sdk-v03"],
    );
    // The SDK's polling mode sends returnImmediately (DEC-A2A-9): the task comes back queued
    // and GetTask shows it run to completion.
    let polled = run_py(
        &py,
        "a2a_sdk.py",
        &[
            &base,
            &s.token,
            "/.well-known/agent-card.json",
            "sdk-poll",
            "poll",
        ],
    );
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(polled["task"]["id"], "a2a:ep1:sdk-poll", "{polled}");
    assert_eq!(
        polled["task"]["status"]["state"], "TASK_STATE_SUBMITTED",
        "{polled}"
    );
    assert_eq!(
        polled["get"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{polled}"
    );
    assert_eq!(
        polled["get"]["artifacts"][0]["parts"][0]["data"],
        json!({"sdk": 1.0})
    );
    for st in polled["polled"].as_array().unwrap() {
        assert!(
            [
                "TASK_STATE_SUBMITTED",
                "TASK_STATE_WORKING",
                "TASK_STATE_COMPLETED"
            ]
            .contains(&st.as_str().unwrap()),
            "{polled}"
        );
    }
    assert_eq!(
        polled["cancel"]["error"], "TaskNotCancelableError",
        "{polled}"
    );
    for (v, id) in [(&v1, "a2a:ep1:sdk-v1"), (&v03, "a2a:ep1:sdk-v03")] {
        let task = &v["task"];
        assert_eq!(task["id"], id, "{v}");
        assert_eq!(task["contextId"], "ep1");
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{v}");
        assert_eq!(
            task["artifacts"][0]["parts"][0]["data"],
            json!({"sdk": 1.0})
        );
        assert_eq!(task["metadata"]["invocation_id"], id);
        assert_eq!(v["get"], *task, "get_task returns the committed task");
        assert_eq!(v["cancel"]["error"], "TaskNotCancelableError", "{v}");
    }
}
