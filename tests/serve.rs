//! `world serve` end to end: a real daemon on 127.0.0.1 (port 0, the listening line parsed),
//! driven over HTTP with ureq (REST, MCP legacy and modern eras, A2A). Acceptance scenarios of
//! surfaces.md and the bad-input/attack list of issue 8.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value};

use crate::common::world_bin as bin;

/// A store with a published manifest and an episode `ep1` (worktree with notes.txt).
struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn bare() -> Env {
        // tmpfs when available: fsync-heavy invocations stay fast under 200 concurrent calls.
        let dir = if Path::new("/dev/shm").is_dir() {
            tempfile::tempdir_in("/dev/shm").unwrap()
        } else {
            tempfile::tempdir().unwrap()
        };
        std::fs::create_dir_all(dir.path().join("ws/ep1")).unwrap();
        std::fs::write(
            dir.path().join("ws/ep1/notes.txt"),
            "hello world\nsecond line\n",
        )
        .unwrap();
        Env { dir }
    }

    fn new() -> Env {
        let e = Env::bare();
        e.world(&["genesis"]).success();
        e.world(&[
            "publish",
            "--manifest",
            "fixtures/transitions/manifest.json",
            "--yes",
        ])
        .success();
        e
    }

    fn db(&self) -> PathBuf {
        self.dir.path().join("w.db")
    }

    fn world(&self, args: &[&str]) -> assert_cmd::assert::Assert {
        assert_cmd::Command::new(bin())
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .arg("--db")
            .arg(self.db())
            .args(args)
            .assert()
    }

    /// Mint a session; returns the token.
    fn mint(&self, name: &str, grants: &[&str], ttl: &str) -> String {
        let out = self.dir.path().join(name);
        let root = self.dir.path().join("ws");
        let mut args = vec!["session", "mint", "--episode", "ep1", "--yes", "--ttl", ttl];
        for g in grants {
            args.push("--grant");
            args.push(g);
        }
        let (r, o) = (
            root.to_str().unwrap().to_string(),
            out.to_str().unwrap().to_string(),
        );
        args.extend(["--workspace-root", &r, "--out", &o]);
        self.world(&args).success();
        std::fs::read_to_string(out).unwrap().trim().to_string()
    }

    fn full(&self) -> String {
        self.mint(
            "tok",
            &["world.apply=world:10", "Workspace.Read=worktree:50"],
            "3600",
        )
    }
}

struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(env: &Env, extra: &[&str]) -> Server {
        start_with_env(env, extra, &[])
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn stop(mut self) -> std::process::ExitStatus {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let s = self.child.wait().unwrap();
        std::mem::forget(self);
        s
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Resp {
    status: u16,
    ctype: String,
    body: String,
}

impl Resp {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
    /// The JSON of a one-event SSE body.
    fn sse(&self) -> Value {
        assert!(
            self.ctype.starts_with("text/event-stream"),
            "{} {}",
            self.ctype,
            self.body
        );
        let data = self
            .body
            .strip_prefix("event: message\ndata: ")
            .expect("sse event");
        serde_json::from_str(data.trim_end()).unwrap()
    }
}

fn agent() -> ureq::Agent {
    ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(60))
        .build()
}

fn send(method: &str, url: &str, headers: &[(&str, &str)], body: Option<&str>) -> Resp {
    let mut r = agent().request(method, url);
    for (k, v) in headers {
        r = r.set(k, v);
    }
    let res = match body {
        Some(b) => r.send_string(b),
        None => r.call(),
    };
    let resp = match res {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("{method} {url}: {e}"),
    };
    let status = resp.status();
    let ctype = resp.header("content-type").unwrap_or("").to_string();
    Resp {
        status,
        ctype,
        body: resp.into_string().unwrap_or_default(),
    }
}

fn get(s: &Server, path: &str) -> Resp {
    send("GET", &s.url(path), &[], None)
}

fn bearer(tok: &str) -> String {
    format!("Bearer {tok}")
}

fn mcp(s: &Server, tok: &str, body: &Value) -> Resp {
    let b = bearer(tok);
    send(
        "POST",
        &s.url("/mcp/"),
        &[
            ("Authorization", &b),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        Some(&body.to_string()),
    )
}

fn a2a(s: &Server, tok: &str, body: &Value) -> Value {
    let b = bearer(tok);
    let r = send(
        "POST",
        &s.url("/a2a/"),
        &[("Authorization", &b), ("Content-Type", "application/json")],
        Some(&body.to_string()),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    r.json()
}

fn call(s: &Server, tok: &str, name: &str, args: Value) -> Value {
    let r = mcp(
        s,
        tok,
        &json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":name,"arguments":args}}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    r.sse()
}

fn genesis_body(invocation: Option<&str>) -> Value {
    let c = world::genesis::build(
        b"{}".to_vec(),
        world::genesis::GOAL_SEMANTIC_ID,
        &world::interp::embedded_ref(),
        1,
    );
    let objects: Vec<Value> = c
        .objects
        .iter()
        .map(|o| json!({"hash": o.meta.hash, "interfaceHash": o.meta.interface_hash, "semanticId": o.meta.semantic_id,
            "provenance": o.meta.provenance, "payload": base64::engine::general_purpose::STANDARD.encode(&o.payload)}))
        .collect();
    let mut b = json!({"observedHead": "", "objects": objects, "nextWorld": c.next_world, "entry": c.entry});
    if let Some(i) = invocation {
        b["invocationId"] = Value::String(i.into());
    }
    b
}

#[test]
fn rest_genesis_conflict_receipts_and_session_classes() {
    let env = Env::bare();
    env.world(&["pin", "--interpreter", "embedded"]).success();
    let tok = env.full();
    let s = Server::start(&env, &[]);
    let h = get(&s, "/v1/health").json();
    assert_eq!(h["status"], "ok");
    assert_eq!(h["db_path"], env.db().display().to_string());
    assert!(h["interpreter_ref"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));
    let r = get(&s, "/v1/head");
    assert_eq!(r.status, 404);
    assert_eq!(
        r.json()["error"]["message"],
        "no world head has been selected yet"
    );
    assert_eq!(r.json()["error"]["class"], "NotFound");
    // Session classes on /v1/commit: absent 401, malformed 400, unknown 401.
    let body = genesis_body(Some("rest:g1")).to_string();
    let url = s.url("/v1/commit");
    let r = send(
        "POST",
        &url,
        &[("Content-Type", "application/json")],
        Some(&body),
    );
    assert_eq!(
        (r.status, r.json()["error"]["class"].as_str()),
        (401, Some("SessionAbsent"))
    );
    assert_eq!(
        r.json()["error"]["message"],
        "a session credential is required: no Authorization Bearer header was present"
    );
    let r = send(
        "POST",
        &url,
        &[("Authorization", "Bearer nothex")],
        Some(&body),
    );
    assert_eq!(
        (r.status, r.json()["error"]["class"].as_str()),
        (400, Some("InvalidSession"))
    );
    let r = send(
        "POST",
        &url,
        &[("Authorization", &bearer(&"0".repeat(64)))],
        Some(&body),
    );
    assert_eq!(
        (r.status, r.json()["error"]["class"].as_str()),
        (401, Some("SessionUnknown"))
    );
    assert_eq!(
        get(&s, "/v1/receipts/rest:g1").json()["state"],
        "not-started"
    );
    // Genesis over REST.
    let r = send(
        "POST",
        &url,
        &[("Authorization", &bearer(&tok))],
        Some(&body),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let head = r.json()["selectedHead"].as_str().unwrap().to_string();
    let r = get(&s, "/v1/head");
    assert_eq!((r.status, r.body.as_str()), (200, head.as_str()));
    assert!(r.ctype.starts_with("text/plain"));
    let w = get(&s, &format!("/v1/worlds/{head}")).json();
    assert_eq!(w["ref"], head.as_str());
    assert_eq!(w["revision"], 0);
    // Receipts: rest: only.
    let rc = get(&s, "/v1/receipts/rest:g1").json();
    assert_eq!(
        (rc["state"].as_str(), rc["resultRef"].as_str()),
        (Some("resolved"), Some(head.as_str()))
    );
    let r = get(&s, "/v1/receipts/cli:x");
    assert_eq!(
        (r.status, r.json()["error"]["message"].as_str()),
        (400, Some("receipt id must be rest:<id>"))
    );
    // Resending the same id is idempotent; a fresh genesis conflicts with both heads.
    let r = send(
        "POST",
        &url,
        &[("Authorization", &bearer(&tok))],
        Some(&body),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let r = send(
        "POST",
        &url,
        &[("Authorization", &bearer(&tok))],
        Some(&genesis_body(None).to_string()),
    );
    assert_eq!(r.status, 409, "{}", r.body);
    let e = &r.json()["error"];
    assert_eq!(
        (
            e["class"].as_str(),
            e["observedHead"].as_str(),
            e["selectedHead"].as_str()
        ),
        (Some("HeadConflict"), Some(""), Some(head.as_str()))
    );
    // Bad input: invalid JSON, unknown field, bad refs, bad indices.
    let r = send(
        "POST",
        &url,
        &[("Authorization", &bearer(&tok))],
        Some("{nope"),
    );
    assert_eq!(
        (r.status, r.json()["error"]["class"].as_str()),
        (400, Some("BadRequest"))
    );
    let mut extra = genesis_body(None);
    extra["surprise"] = json!(1);
    assert_eq!(
        send(
            "POST",
            &url,
            &[("Authorization", &bearer(&tok))],
            Some(&extra.to_string())
        )
        .status,
        400
    );
    assert_eq!(get(&s, "/v1/worlds/sha256:zz").status, 400);
    assert_eq!(
        get(&s, &format!("/v1/worlds/sha256:{}", "0".repeat(64))).status,
        404
    );
    assert_eq!(
        get(&s, "/v1/log/-1").json()["error"]["message"],
        "log index must be a non-negative integer"
    );
    assert_eq!(get(&s, "/v1/log/7").status, 404);
    assert_eq!(get(&s, "/v1/log/0").json()["header"]["entryIndex"], 0);
    assert_eq!(get(&s, "/v1/log?from=0&limit=x").status, 400);
    assert_eq!(
        get(&s, "/v1/log").json()["items"].as_array().unwrap().len(),
        1
    );
    // Objects, payload flag, semantic-id paging.
    let goal = w["stateRoot"].as_str().unwrap();
    let o = get(&s, &format!("/v1/objects/{goal}")).json();
    assert!(o.get("payload").is_none());
    assert_eq!(o["semanticId"], "world/genesis-goal/v1");
    let o = get(&s, &format!("/v1/objects/{goal}?payload=true")).json();
    assert_eq!(o["payload"], "e30=");
    let items = get(&s, "/v1/objects/by-semantic-id/world/genesis-goal/v1").json();
    assert_eq!(items["items"][0]["hash"], goal);
    let after = get(
        &s,
        &format!("/v1/objects/by-semantic-id/world/genesis-goal/v1?after={goal}"),
    )
    .json();
    assert_eq!(after["items"], json!([]));
    assert_eq!(get(&s, "/v1/objects/by-semantic-id/").status, 400);
    assert_eq!(
        get(&s, "/v1/objects/by-semantic-id/x?limit=1.5").status,
        400
    );
    let reg = get(&s, "/v1/registry/world/epoch-registry/v1").json();
    assert!(reg["head"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(get(&s, "/v1/registry/nope").status, 404);
    assert_eq!(get(&s, "/v1/nothing").status, 404);
    assert_eq!(send("DELETE", &s.url("/v1/health"), &[], None).status, 405);
    // SIGTERM: exit 0 and the lock is released.
    assert!(s.stop().success());
    env.world(&["pin", "--interpreter", "embedded"]).success();
}

#[test]
fn lock_and_bind_policy() {
    let env = Env::new();
    let s = Server::start(&env, &[]);
    let a = assert_cmd::Command::new(bin())
        .arg("--db")
        .arg(env.db())
        .args(["serve", "--bind", "127.0.0.1:0"])
        .assert()
        .code(6);
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(
        err.starts_with("daemon startup failed at store-open: "),
        "{err}"
    );
    // The CLI writers are refused too while the daemon runs, and told where it answers
    // instead of "retry later" (issue 29 §7).
    let a = env.world(&["pin", "--interpreter", "embedded"]).code(6);
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(err.contains("`world serve at http://127.0.0.1:"), "{err}");
    assert!(
        err.contains("POST /v1/commit") && err.contains("MCP"),
        "{err}"
    );
    assert!(!err.contains("retry later"), "{err}");
    assert_eq!(get(&s, "/v1/health").status, 200);
    drop(s);
    let a = env.world(&["serve", "--bind", "0.0.0.0:7644"]).code(2);
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert_eq!(err.trim(), "daemon startup failed at bind-policy: --bind 0.0.0.0:7644: bind host \"0.0.0.0\" is not loopback");
    let a = env.world(&["serve", "--bind", "7644"]).code(2);
    assert!(String::from_utf8_lossy(&a.get_output().stderr).contains("is not host:port"));
}

#[test]
fn mcp_legacy_discovery_calls_and_denials() {
    let env = Env::new();
    let tok = env.full();
    let narrow = env.mint("narrow", &["world.apply=world:10"], "3600");
    // `--ttl 0` is refused (issue 13 §7): mint for 1 s and let it lapse.
    let expired = env.mint("old", &["world.apply=world:10"], "1");
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let s = Server::start(&env, &[]);
    let init = mcp(&s, &tok, &json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})).sse();
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(
        init["result"]["capabilities"]["tools"]["listChanged"],
        false
    );
    assert_eq!(
        mcp(&s, &tok, &json!({"jsonrpc":"2.0","id":1,"method":"ping"})).sse()["result"],
        json!({})
    );
    let names = |t: &str| -> Vec<String> {
        mcp(
            &s,
            t,
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
        )
        .sse()["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        names(&tok),
        ["ailang-read", "counter", "echo", "readcount", "refuse"]
    );
    assert_eq!(names(&narrow), ["counter", "echo", "refuse"]);
    let tools = mcp(
        &s,
        &tok,
        &json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
    )
    .sse();
    let rc = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "readcount")
        .unwrap()
        .clone();
    assert_eq!(rc["inputSchema"]["required"], json!(["path"]));
    assert_eq!(rc["title"], "Read and count");
    // Agent cards show the same grant-filtered skills.
    let card = send(
        "GET",
        &s.url("/.well-known/agent.json"),
        &[("Authorization", &bearer(&narrow))],
        None,
    )
    .json();
    let ids: Vec<&str> = card["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["counter", "echo", "refuse"]);
    assert_eq!(card["url"], format!("http://127.0.0.1:{}", s.port));
    let card = send(
        "GET",
        &s.url("/.well-known/agent-card.json"),
        &[("Authorization", &bearer(&tok))],
        None,
    )
    .json();
    assert_eq!(card["skills"].as_array().unwrap().len(), 5);
    // The same card under the JSON-RPC endpoint's path (DEC-A2A-8), public without a bearer.
    let under = send(
        "GET",
        &s.url("/a2a/.well-known/agent-card.json"),
        &[("Authorization", &bearer(&tok))],
        None,
    )
    .json();
    assert_eq!(under, card);
    assert_eq!(
        send("GET", &s.url("/a2a/.well-known/agent-card.json"), &[], None).status,
        200
    );
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        format!("http://127.0.0.1:{}/a2a/", s.port)
    );
    assert_eq!(
        send("GET", &s.url("/.well-known/agent.json"), &[], None).status,
        401
    );
    assert_eq!(
        send(
            "GET",
            &s.url("/.well-known/agent.json"),
            &[("Authorization", "Bearer x")],
            None
        )
        .status,
        400
    );
    // tools/call: a pure call, a committed refusal, an invisible tool.
    let r = call(&s, &tok, "echo", json!({"a": 1}));
    assert_eq!(r["result"]["structuredContent"], json!({"a": 1}));
    assert_eq!(r["result"]["content"][0]["text"], "{\"a\":1}");
    let r = call(&s, &tok, "refuse", json!({}));
    assert_eq!(r["result"]["structuredContent"]["ok"], false);
    let r = call(&s, &narrow, "readcount", json!({"path": "notes.txt"}));
    assert_eq!(
        (r["error"]["code"].as_i64(), r["error"]["message"].as_str()),
        (Some(-32602), Some("unknown tool \"readcount\""))
    );
    let r = call(&s, &tok, "nope_x", json!({}));
    assert_eq!(r["error"]["code"], -32602);
    let r = call(&s, &tok, "readcount", json!({"path": "notes.txt"}));
    assert_eq!(r["result"]["structuredContent"]["lines"], 3);
    assert_eq!(
        r["result"]["structuredContent"]["world"]["effects"][0]["status"],
        "ok"
    );
    let entry = get(&s, "/v1/log/3").json();
    assert_eq!(entry["header"]["writtenBy"], "coordinator:mcp");
    // Arguments failing the schema (R1) are a tool error naming the field (DEC-MCP-3), not
    // a whole-POST -32603 the SDKs would raise.
    let r = mcp(
        &s,
        &tok,
        &json!({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"readcount","arguments":{"path":1}}}),
    );
    let v = r.sse();
    assert_eq!(v["id"], 9);
    assert_eq!(v["result"]["isError"], true, "{v}");
    let text = v["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("arguments fail the inputSchema at /path"),
        "{text}"
    );
    assert!(v["result"].get("structuredContent").is_none());
    let meta = &v["result"]["_meta"]["world/invocation"];
    assert_eq!(meta["class"], "InvalidCallError");
    assert!(meta["invocationId"]
        .as_str()
        .unwrap()
        .starts_with("mcp:ep1:"));
    // Protocol errors.
    let r = mcp(
        &s,
        &tok,
        &json!({"jsonrpc":"2.0","id":3,"method":"prompts/list"}),
    )
    .sse();
    // Prompts are not offered (DEC-MCP-7); resources are (issue 30).
    assert_eq!(
        (r["error"]["code"].as_i64(), r["error"]["message"].as_str()),
        (Some(-32601), Some("method not found: \"prompts/list\""))
    );
    let r = mcp(&s, &tok, &json!({"jsonrpc":"1.0","id":3,"method":"ping"})).sse();
    assert_eq!(r["error"]["code"], -32600);
    let b = bearer(&tok);
    let h = [
        ("Authorization", b.as_str()),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    let r = send("POST", &s.url("/mcp/"), &h, Some("{\"jsonrpc\":"));
    assert_eq!(
        (r.status, r.json()["error"]["code"].as_i64()),
        (400, Some(-32700))
    );
    assert_eq!(
        send(
            "POST",
            &s.url("/mcp/"),
            &h,
            Some("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}")
        )
        .status,
        202
    );
    let r = send(
        "POST",
        &s.url("/mcp"),
        &[
            ("Authorization", &b),
            ("Content-Type", "application/json"),
            ("Accept", "application/json"),
        ],
        Some("{}"),
    );
    assert_eq!(
        (r.status, r.body.as_str()),
        (
            400,
            "Accept must list both application/json and text/event-stream"
        )
    );
    let r = send(
        "POST",
        &s.url("/mcp/"),
        &[
            ("Authorization", &b),
            ("Content-Type", "text/plain"),
            ("Accept", "application/json, text/event-stream"),
        ],
        Some("{}"),
    );
    assert_eq!(
        (r.status, r.body.as_str()),
        (400, "Content-Type must be application/json")
    );
    assert_eq!(send("GET", &s.url("/mcp/"), &h, None).status, 405);
    // Session denials: 401 text/plain with the §3 messages.
    let r = send("POST", &s.url("/mcp/"), &h[1..], Some("{}"));
    assert_eq!(
        (r.status, r.body.as_str()),
        (
            401,
            "session credential is absent: send Authorization: Bearer <session-credential>"
        )
    );
    let r = send(
        "POST",
        &s.url("/mcp/"),
        &[("Authorization", "Bearer 123")],
        Some("{}"),
    );
    assert_eq!(
        (r.status, r.body.as_str()),
        (
            401,
            "malformed Authorization header: expected Bearer <64-hex-credential>"
        )
    );
    let r = mcp(
        &s,
        &"a".repeat(64),
        &json!({"jsonrpc":"2.0","id":1,"method":"ping"}),
    );
    assert_eq!(
        (r.status, r.body.as_str()),
        (401, "unknown session credential")
    );
    std::thread::sleep(Duration::from_millis(1100));
    let r = mcp(
        &s,
        &expired,
        &json!({"jsonrpc":"2.0","id":1,"method":"ping"}),
    );
    assert_eq!(
        (r.status, r.body.as_str()),
        (401, "session credential has expired")
    );
    // Batches: only under 2025-03-26 (header absent), sequential, fresh task id each.
    let batch: Vec<Value> = (0..1000)
        .map(|i| {
            if i % 2 == 0 {
                json!({"jsonrpc":"2.0","id":i,"method":"ping"})
            } else {
                json!({"jsonrpc":"2.0","id":i,"method":"tools/list"})
            }
        })
        .collect();
    let r = mcp(&s, &tok, &Value::Array(batch.clone())).sse();
    assert_eq!(r.as_array().unwrap().len(), 1000);
    assert_eq!(r[999]["result"]["tools"].as_array().unwrap().len(), 5);
    let two = json!([{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"b":2}}},{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"b":2}}}]);
    let r = mcp(&s, &tok, &two).sse();
    assert_eq!(r.as_array().unwrap().len(), 2);
    let r = send(
        "POST",
        &s.url("/mcp/"),
        &[h[0], h[1], h[2], ("MCP-Protocol-Version", "2025-06-18")],
        Some(&two.to_string()),
    );
    assert_eq!(r.status, 400);
    // A revoked credential stops working (revoked while the daemon is down, then restarted).
    let cred = world::authority::session::credential_id(&narrow);
    drop(s);
    env.world(&["session", "revoke", &cred]).success();
    let s = Server::start(&env, &[]);
    let r = mcp(
        &s,
        &narrow,
        &json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
    );
    assert_eq!(
        (r.status, r.body.as_str()),
        (401, "unknown session credential")
    );
}

#[test]
fn mcp_modern_era() {
    let env = Env::new();
    let tok = env.full();
    let s = Server::start(&env, &[]);
    let b = bearer(&tok);
    let meta = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}});
    let post = |method: &str, name: Option<&str>, params: Value| {
        let mut h = vec![
            ("Authorization", b.as_str()),
            ("Content-Type", "application/json"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
        ];
        if let Some(n) = name {
            h.push(("Mcp-Name", n));
        }
        send(
            "POST",
            &s.url("/mcp/"),
            &h,
            Some(&json!({"jsonrpc":"2.0","id":7,"method":method,"params":params}).to_string()),
        )
    };
    let r = post("server/discover", None, json!({"_meta": meta}));
    assert_eq!((r.status, r.ctype.as_str()), (200, "application/json"));
    let v = r.json();
    assert!(v["result"]["supportedVersions"]
        .as_array()
        .unwrap()
        .contains(&json!("2026-07-28")));
    assert_eq!(v["result"]["resultType"], "complete");
    // DEC-MCP-4: ttlMs, cacheScope and the identity under _meta, where the SDK reads it.
    assert_eq!(v["result"]["ttlMs"], 0);
    assert_eq!(v["result"]["cacheScope"], "private");
    assert_eq!(
        v["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "world"
    );
    assert_eq!(v["id"], 7);
    let v = post("tools/list", None, json!({"_meta": meta})).json();
    assert_eq!(v["result"]["ttlMs"], 0);
    assert_eq!(v["result"]["tools"].as_array().unwrap().len(), 5);
    let v = post(
        "tools/call",
        Some("echo"),
        json!({"_meta": meta, "name":"echo","arguments":{"z":true}}),
    )
    .json();
    assert_eq!(v["result"]["structuredContent"], json!({"z": true}));
    // Host failure → isError result with _meta["world/invocation"].
    let v = post(
        "tools/call",
        Some("readcount"),
        json!({"_meta": meta, "name":"readcount","arguments":{}}),
    )
    .json();
    assert_eq!(v["result"]["isError"], true);
    assert_eq!(
        v["result"]["_meta"]["world/invocation"]["class"],
        "InvalidCallError"
    );
    assert!(v["result"].get("structuredContent").is_none());
    // Header mismatches → 400 -32020; ping is not a modern method → 404 -32601.
    let r = post(
        "tools/call",
        Some("refuse"),
        json!({"_meta": meta, "name":"echo","arguments":{}}),
    );
    assert_eq!(
        (r.status, r.json()["error"]["code"].as_i64()),
        (400, Some(-32020))
    );
    let r = send(
        "POST",
        &s.url("/mcp/"),
        &[
            ("Authorization", &b),
            ("Content-Type", "application/json"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/list"),
        ],
        Some(
            &json!({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":meta}})
                .to_string(),
        ),
    );
    assert_eq!(
        (r.status, r.json()["error"]["code"].as_i64()),
        (400, Some(-32020))
    );
    let r = post("ping", None, json!({"_meta": meta}));
    assert_eq!(
        (r.status, r.json()["error"]["code"].as_i64()),
        (404, Some(-32601))
    );
    let r = send(
        "POST",
        &s.url("/mcp/"),
        &[
            ("Authorization", &b),
            ("Content-Type", "application/json"),
            ("MCP-Protocol-Version", "2025-06-18"),
            ("Accept", "application/json, text/event-stream"),
        ],
        Some(
            &json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":meta}})
                .to_string(),
        ),
    );
    assert_eq!(
        (r.status, r.json()["error"]["code"].as_i64()),
        (400, Some(-32020))
    );
    let r = send(
        "POST",
        &s.url("/mcp/"),
        &[
            ("Authorization", &b),
            ("Content-Type", "application/json"),
            ("MCP-Protocol-Version", "2031-01-01"),
        ],
        Some("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}"),
    );
    assert_eq!(
        (r.status, r.json()["error"]["code"].as_i64()),
        (400, Some(-32022))
    );
    // DEC-MCP-4: the id was readable, so the reply carries it (-32022 and -32020).
    assert_eq!(r.json()["id"], 1);
    let r = send(
        "POST",
        &s.url("/mcp/"),
        &[
            ("Authorization", &b),
            ("Content-Type", "application/json"),
            ("MCP-Protocol-Version", "2025-06-18"),
            ("Accept", "application/json, text/event-stream"),
        ],
        Some(
            &json!({"jsonrpc":"2.0","id":"x-5","method":"tools/list","params":{"_meta":meta}})
                .to_string(),
        ),
    );
    assert_eq!(
        (
            r.status,
            r.json()["error"]["code"].as_i64(),
            r.json()["id"].clone()
        ),
        (400, Some(-32020), json!("x-5"))
    );
}

#[test]
fn a2a_idempotent_tasks_and_v1() {
    let env = Env::new();
    let tok = env.full();
    let s = Server::start(&env, &[]);
    let send_task = |id: &str, data: Value| {
        a2a(
            &s,
            &tok,
            &json!({"jsonrpc":"2.0","id":1,"method":"tasks/send","params":{"id":id,"metadata":{"skill_id":"echo"},"message":{"role":"user","parts":[{"type":"data","data":data}]}}}),
        )
    };
    let first = send_task("t1", json!({"q": 1}));
    assert_eq!(first["result"]["status"]["state"], "completed");
    assert_eq!(first["result"]["metadata"]["invocation_id"], "a2a:ep1:t1");
    assert_eq!(
        first["result"]["artifacts"][0]["parts"][0]["data"],
        json!({"q": 1})
    );
    let entries = get(&s, "/v1/log").json()["items"].as_array().unwrap().len();
    let again = send_task("t1", json!({"q": 1}));
    assert_eq!(again["result"], first["result"]);
    assert_eq!(
        get(&s, "/v1/log").json()["items"].as_array().unwrap().len(),
        entries,
        "a resend writes nothing"
    );
    let other = send_task("t1", json!({"q": 2}));
    assert_eq!(
        (
            other["error"]["code"].as_i64(),
            other["error"]["message"].as_str()
        ),
        (Some(-32602), Some("task id already used in this session"))
    );
    let bad = a2a(
        &s,
        &tok,
        &json!({"jsonrpc":"2.0","id":1,"method":"tasks/send","params":{"id":"t2","metadata":{"skill_id":"echo","transition_fn":format!("sha256:{}", "1".repeat(64))},"message":{"parts":[{"type":"data","data":{}}]}}}),
    );
    assert_eq!(
        bad["error"]["message"],
        "proposal does not match the registered transition"
    );
    let r = a2a(
        &s,
        &tok,
        &json!({"jsonrpc":"2.0","id":1,"method":"tasks/nope"}),
    );
    assert_eq!(r["error"]["code"], -32601);
    let r = send(
        "POST",
        &s.url("/a2a/"),
        &[],
        Some(&json!({"jsonrpc":"2.0","id":1,"method":"tasks/send"}).to_string()),
    );
    assert_eq!(r.json()["error"]["code"], -32001);
    let r = send(
        "POST",
        &s.url("/a2a/"),
        &[("Authorization", "Bearer zz")],
        Some(&json!({"jsonrpc":"2.0","id":1,"method":"tasks/send"}).to_string()),
    );
    assert_eq!(r.json()["error"]["code"], -32600);
    // v1.0: SendMessage shares the idempotency key; GetTask reads the receipt.
    let sm = a2a(
        &s,
        &tok,
        &json!({"jsonrpc":"2.0","id":2,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"v":1}}]},"metadata":{"skill_id":"echo"}}}),
    );
    // DEC-A2A-2: a SendMessageResponse whose `task` member is the Task.
    assert_eq!(
        sm["result"]["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert_eq!(sm["result"]["task"]["id"], "a2a:ep1:m1");
    let gt = a2a(
        &s,
        &tok,
        &json!({"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":"a2a:ep1:m1"}}),
    );
    assert_eq!(gt["result"]["artifacts"], sm["result"]["task"]["artifacts"]);
    let gt = a2a(
        &s,
        &tok,
        &json!({"jsonrpc":"2.0","id":3,"method":"GetTask","params":{"id":"a2a:ep1:never"}}),
    );
    assert_eq!(gt["error"]["code"], -32001);
    // A2A 1.0 (surfaces.md §6 amendment): a completed task is not cancelable, an unknown one
    // is not found, and ListTasks lists the episode's tasks.
    let cancel = |id: &str| {
        a2a(
            &s,
            &tok,
            &json!({"jsonrpc":"2.0","id":4,"method":"CancelTask","params":{"id":id}}),
        )["error"]["code"]
            .clone()
    };
    assert_eq!(cancel("a2a:ep1:m1"), -32002);
    assert_eq!(cancel("a2a:ep1:never"), -32001);
    let listed = a2a(
        &s,
        &tok,
        &json!({"jsonrpc":"2.0","id":4,"method":"ListTasks","params":{}}),
    );
    assert_eq!(listed["result"]["tasks"][0]["id"], "a2a:ep1:m1", "{listed}");
    let r = send(
        "POST",
        &s.url("/a2a/"),
        &[],
        Some(&json!({"jsonrpc":"2.0","id":1,"method":"SendMessage"}).to_string()),
    );
    assert_eq!(r.status, 401);
    // Cards: the v1.0 card carries only A2A 1.0 fields; the legacy card keeps the reference's
    // shape and its `url` answers JSON-RPC, including the v0.3 methods (DEC-A2A-3).
    let b = bearer(&tok);
    let v1 = send(
        "GET",
        &s.url("/.well-known/agent-card.json"),
        &[("Authorization", &b)],
        None,
    )
    .json();
    assert!(
        v1["capabilities"].get("stateTransitionHistory").is_none(),
        "{v1}"
    );
    assert!(v1.get("url").is_none());
    let legacy = send(
        "GET",
        &s.url("/.well-known/agent.json"),
        &[("Authorization", &b)],
        None,
    )
    .json();
    assert_eq!(legacy["capabilities"]["stateTransitionHistory"], false);
    let url = legacy["url"].as_str().unwrap().to_string();
    let at_url = |body: Value| {
        let r = send(
            "POST",
            &url,
            &[("Authorization", &b), ("Content-Type", "application/json")],
            Some(&body.to_string()),
        );
        assert_eq!(r.status, 200, "{}", r.body);
        r.json()
    };
    let sent = at_url(
        json!({"jsonrpc":"2.0","id":5,"method":"message/send","params":{
        "message":{"kind":"message","messageId":"v03a","role":"user","parts":[{"kind":"data","data":{"w":2}}]},
        "metadata":{"skill_id":"echo"}}}),
    );
    let t = &sent["result"];
    assert_eq!(
        (t["kind"].as_str(), t["id"].as_str()),
        (Some("task"), Some("a2a:ep1:v03a"))
    );
    assert_eq!(t["status"]["state"], "completed");
    assert_eq!(
        t["artifacts"][0]["parts"][0],
        json!({"kind":"data","data":{"w":2}})
    );
    let got =
        at_url(json!({"jsonrpc":"2.0","id":6,"method":"tasks/get","params":{"id":"a2a:ep1:v03a"}}));
    assert_eq!(got["result"]["artifacts"], t["artifacts"]);
    assert_eq!(got["result"]["status"]["state"], "completed");
    let cancel = at_url(
        json!({"jsonrpc":"2.0","id":7,"method":"tasks/cancel","params":{"id":"a2a:ep1:v03a"}}),
    );
    assert_eq!(cancel["error"]["code"], -32002);
    // The legacy method works at the card's url too.
    let legacy_send = at_url(
        json!({"jsonrpc":"2.0","id":8,"method":"tasks/send","params":{"id":"t-at-url","metadata":{"skill_id":"echo"},"message":{"role":"user","parts":[{"type":"data","data":{"u":1}}]}}}),
    );
    assert_eq!(legacy_send["result"]["status"]["state"], "completed");
}

fn raw_oversized(port: u16, path: &str) -> String {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let head = format!("POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n", "0".repeat(64), 64 * 1024 * 1024);
    c.write_all(head.as_bytes()).unwrap();
    let _ = c.write_all(&vec![b' '; 64 * 1024]);
    let mut buf = vec![0u8; 4096];
    let n = c.read(&mut buf).unwrap();
    String::from_utf8_lossy(&buf[..n]).to_string()
}

#[test]
fn attacks_oversized_origin_and_concurrent_budget() {
    let env = Env::new();
    let tok = env.full();
    let s = Server::start(&env, &[]);
    // 64 MiB bodies: 413 on every POST route (the commit route checks the session first, so use a live one there).
    let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let head = format!("POST /v1/commit HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {tok}\r\nContent-Length: {}\r\n\r\n", s.port, 64 * 1024 * 1024);
    c.write_all(head.as_bytes()).unwrap();
    let mut buf = vec![0u8; 4096];
    let n = c.read(&mut buf).unwrap();
    let text = String::from_utf8_lossy(&buf[..n]);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(text.contains("PayloadTooLarge"), "{text}");
    let mcp413 = {
        let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let head = format!("POST /mcp/ HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {tok}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", s.port, 64 * 1024 * 1024);
        c.write_all(head.as_bytes()).unwrap();
        let n = c.read(&mut buf).unwrap();
        String::from_utf8_lossy(&buf[..n]).to_string()
    };
    assert!(
        mcp413.starts_with("HTTP/1.1 413") && mcp413.contains("-32600"),
        "{mcp413}"
    );
    let a2a413 = raw_oversized(s.port, "/a2a/");
    assert!(
        a2a413.starts_with("HTTP/1.1 413") && a2a413.contains("\"id\":null"),
        "{a2a413}"
    );
    assert_eq!(get(&s, "/v1/health").status, 200);
    // Foreign Origin and Host → 403 Forbidden, on every route.
    let r = send(
        "GET",
        &s.url("/v1/health"),
        &[("Origin", "http://evil.example")],
        None,
    );
    assert_eq!(
        (r.status, r.json()["error"]["class"].as_str()),
        (403, Some("Forbidden"))
    );
    let r = send("GET", &s.url("/v1/health"), &[("Origin", "null")], None);
    assert_eq!(r.status, 403);
    let r = send(
        "POST",
        &s.url("/mcp/"),
        &[
            ("Host", "attacker.example"),
            ("Authorization", &bearer(&tok)),
        ],
        Some("{}"),
    );
    assert_eq!(r.status, 403);
    let own = format!("http://localhost:{}", s.port);
    assert_eq!(
        send("GET", &s.url("/v1/health"), &[("Origin", &own)], None).status,
        200
    );
    // 200 concurrent clients, one effectful transition, one episode, budget 50.
    let port = s.port;
    let health = std::thread::spawn(move || {
        let mut ok = 0;
        for _ in 0..20 {
            let r = send(
                "GET",
                &format!("http://127.0.0.1:{port}/v1/health"),
                &[],
                None,
            );
            ok += usize::from(r.status == 200);
            std::thread::sleep(Duration::from_millis(50));
        }
        ok
    });
    let handles: Vec<_> = (0..200)
        .map(|_| {
            let tok = tok.clone();
            std::thread::spawn(move || {
                let r = send("POST", &format!("http://127.0.0.1:{port}/mcp/"),
                    &[("Authorization", &bearer(&tok)), ("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")],
                    Some(&json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"readcount","arguments":{"path":"notes.txt"}}}).to_string()));
                assert_eq!(r.status, 200, "{}", r.body);
                r.sse()["result"]["structuredContent"]["world"]["effects"][0]["status"].as_str().unwrap_or("none").to_string()
            })
        })
        .collect();
    let statuses: Vec<String> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let allowed = statuses.iter().filter(|s| *s == "ok").count();
    let denied = statuses.iter().filter(|s| *s == "denied").count();
    assert_eq!((allowed, denied), (50, 150), "{statuses:?}");
    assert_eq!(health.join().unwrap(), 20, "health answered throughout");
    // Every call is committed provenance: 200 new entries.
    let log = get(&s, "/v1/log?from=1&limit=500").json();
    assert_eq!(log["items"].as_array().unwrap().len(), 200);
}

#[test]
fn approvals_under_serve_stay_pending_until_decided_then_are_claimed() {
    let env = Env::new();
    let tok = env.mint(
        "tok-approve",
        &[
            "Human.Approve=approvals:3",
            "Human.PollApproval=approvals:3",
        ],
        "3600",
    );
    // The daemon asks no terminal by default: the request is opened and left pending.
    let s = Server::start(&env, &[]);
    let r = call(&s, &tok, "approval", json!({"summary": "deploy v2"}));
    let out = &r["result"]["structuredContent"];
    assert_eq!(out["approved"], false, "{r}");
    assert_eq!(out["approval"]["state"], "pending", "{r}");
    assert!(
        out["approval"]["note"]
            .as_str()
            .unwrap_or_default()
            .contains("asks no terminal"),
        "{r}"
    );
    let reference = out["approval"]["approval_ref"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(s.stop().success());
    // A person decides while the daemon is down (the decision needs the writer lock) ...
    env.world(&["approval", "decide", &reference, "--approve", "--yes"])
        .success();
    // ... and the next Human.Approve of the episode claims it, once.
    let s = Server::start(&env, &[]);
    let r = call(&s, &tok, "approval", json!({"approval_ref": reference}));
    let out = &r["result"]["structuredContent"];
    assert_eq!(out["approved"], true, "{r}");
    assert!(out["approval"]["claimed_by"]
        .as_str()
        .unwrap_or_default()
        .starts_with("effect:ep1:"));
    let r = call(
        &s,
        &tok,
        "approval",
        json!({"approval_ref": reference, "poll": true}),
    );
    assert_eq!(
        r["result"]["structuredContent"]["approval"]["claimed_by"],
        out["approval"]["claimed_by"]
    );
}

/// Start `world serve` with extra environment variables (e.g. the `WORLD_TEST_HTTP_READ_MS`
/// hook, which can only shorten the 30 s HTTP read bound).
fn start_with_env(env: &Env, extra: &[&str], vars: &[(&str, &str)]) -> Server {
    let mut cmd = Command::new(bin());
    cmd.arg("--db")
        .arg(env.db())
        .args(["serve", "--bind", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .strip_prefix("world listening on http://127.0.0.1:")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .parse()
        .unwrap();
    Server { child, port }
}

/// Open a connection and send a POST's headers declaring `declared` body bytes, then `first`.
fn open_slow_post(port: u16, path: &str, tok: &str, declared: usize, first: &[u8]) -> TcpStream {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    let head = format!("POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {tok}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {declared}\r\n\r\n");
    c.write_all(head.as_bytes()).unwrap();
    c.write_all(first).unwrap();
    c
}

/// Read one response (headers and what body has arrived) and then expect the server to
/// close the connection. Panics when nothing comes within the socket's read timeout.
fn read_until_closed(c: &mut TcpStream) -> String {
    let mut all = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match c.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => all.extend_from_slice(&buf[..n]),
            Err(e) => panic!(
                "no close within the read timeout ({e}); got {:?}",
                String::from_utf8_lossy(&all)
            ),
        }
    }
    String::from_utf8_lossy(&all).to_string()
}

#[test]
fn stalled_and_trickled_bodies_time_out_with_408_and_block_nothing() {
    let env = Env::new();
    let tok = env.full();
    let s = start_with_env(&env, &[], &[("WORLD_TEST_HTTP_READ_MS", "1000")]);
    let entries = |s: &Server| {
        get(s, "/v1/log?from=0&limit=500").json()["items"]
            .as_array()
            .map(Vec::len)
    };
    let before = entries(&s);
    let started = std::time::Instant::now();
    // A commit body that stalls after 5 of 400 bytes, an MCP body trickled one byte every
    // 200 ms (a total deadline, not an idle one, must end it), and a stalled A2A body.
    let mut commit = open_slow_post(s.port, "/v1/commit", &tok, 400, b"{\"obs");
    let mut a2a_c = open_slow_post(s.port, "/a2a/", &tok, 400, b"{");
    let port = s.port;
    let tok2 = tok.clone();
    let trickler = std::thread::spawn(move || {
        let mut c = open_slow_post(port, "/mcp/", &tok2, 400, b" ");
        let begun = std::time::Instant::now();
        let mut w = c.try_clone().unwrap();
        let feeder = std::thread::spawn(move || {
            for _ in 0..40 {
                std::thread::sleep(Duration::from_millis(200));
                if w.write_all(b" ").is_err() {
                    break;
                }
            }
        });
        let text = read_until_closed(&mut c);
        let _ = feeder.join();
        (text, begun.elapsed())
    });
    // Meanwhile the daemon answers reads and takes the writer for another client.
    assert_eq!(get(&s, "/v1/health").status, 200);
    let r = send(
        "POST",
        &s.url("/v1/commit"),
        &[("Authorization", &bearer(&tok))],
        Some(&genesis_body(None).to_string()),
    );
    assert_eq!(
        (r.status, r.json()["error"]["class"].as_str()),
        (409, Some("HeadConflict")),
        "{}",
        r.body
    );
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "other requests waited for the stalled bodies: {:?}",
        started.elapsed()
    );
    let text = read_until_closed(&mut commit);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(
        text.to_ascii_lowercase().contains("connection: close"),
        "{text}"
    );
    assert!(text.contains("\"class\":\"RequestTimeout\""), "{text}");
    assert!(
        text.contains("request body was not received within 1 s"),
        "{text}"
    );
    let text = read_until_closed(&mut a2a_c);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(
        text.contains("\"id\":null") && text.contains("-32600"),
        "{text}"
    );
    let (text, took) = trickler.join().unwrap();
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(
        text.contains("\"id\":null") && text.contains("-32600"),
        "{text}"
    );
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(5),
        "trickled body ended after {took:?}"
    );
    // Nothing was committed by the timed-out commit; the daemon still serves.
    assert_eq!(entries(&s), before);
    assert_eq!(get(&s, "/v1/health").status, 200);
}

#[test]
fn stalled_request_headers_are_cut_off_at_the_read_bound() {
    let env = Env::new();
    let s = start_with_env(&env, &[], &[("WORLD_TEST_HTTP_READ_MS", "1000")]);
    let started = std::time::Instant::now();
    // Half a request head, then silence: the connection must be closed by the server.
    let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    c.write_all(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        .unwrap();
    // Meanwhile other clients are served at once.
    assert_eq!(get(&s, "/v1/health").status, 200);
    let text = read_until_closed(&mut c);
    let took = started.elapsed();
    assert!(
        !text.contains("200 OK"),
        "a half-sent head was answered: {text}"
    );
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(10),
        "stalled head closed after {took:?}"
    );
    assert_eq!(get(&s, "/v1/health").status, 200);
}

#[test]
fn unopenable_store_answers_503_store_unavailable_on_every_get() {
    let env = Env::new();
    let tok = env.full();
    let s = Server::start(&env, &[]);
    let head = get(&s, "/v1/head");
    assert_eq!(head.status, 200, "{}", head.body);
    let world_ref = head.body.trim().to_string();
    let good = std::fs::read(env.db()).unwrap();
    // Replace the store's bytes in place (same inode) with garbage while the daemon runs.
    std::fs::write(env.db(), b"this is not an SQLite database\n".repeat(256)).unwrap();
    let zero = format!("sha256:{}", "0".repeat(64));
    let routes = [
        "/v1/head".to_string(),
        format!("/v1/worlds/{world_ref}"),
        format!("/v1/objects/{zero}"),
        "/v1/objects/by-semantic-id/world/genesis-goal/v1".to_string(),
        "/v1/log/0".to_string(),
        "/v1/log?from=0".to_string(),
        "/v1/registry/world/epoch-registry/v1".to_string(),
        "/v1/receipts/rest:x".to_string(),
    ];
    for path in &routes {
        let r = get(&s, path);
        assert_eq!(r.status, 503, "GET {path}: {}", r.body);
        assert_eq!(
            r.json()["error"],
            json!({"class": "StoreUnavailable", "code": "store_unavailable", "message": "store unavailable: it could not be opened for reading"}),
            "GET {path}"
        );
    }
    // The session-scoped agent card reads the store through the same readers.
    let r = send(
        "GET",
        &s.url("/.well-known/agent.json"),
        &[("Authorization", &bearer(&tok))],
        None,
    );
    assert_eq!(
        (r.status, r.json()["error"]["class"].as_str()),
        (503, Some("StoreUnavailable")),
        "{}",
        r.body
    );
    assert_eq!(get(&s, "/v1/health").status, 200);
    // Once the store is back, the same routes answer again (no failed reader was kept).
    std::fs::write(env.db(), &good).unwrap();
    let r = get(&s, "/v1/head");
    assert_eq!((r.status, r.body.trim()), (200, world_ref.as_str()));
    assert_eq!(get(&s, "/v1/log/0").status, 200);
}

#[test]
fn tool_binary_is_archived_at_startup_and_a_changed_archive_refuses_to_run() {
    use sha2::Digest;
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let tok = env.full();
    let ws = env.dir.path().join("ws");
    let tool_dir = tempfile::tempdir().unwrap();
    let double = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake_ailang_double.sh");
    // A tool reporting another version is refused at startup and nothing is archived.
    let old = tool_dir.path().join("ailang-old");
    std::fs::write(
        &old,
        format!(
            "#!/bin/sh\nFAKE_MODE=old exec {} \"$@\"\n",
            double.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new(bin())
        .arg("--db")
        .arg(env.db())
        .args(["serve", "--bind", "127.0.0.1:0", "--workspace-root"])
        .arg(&ws)
        .arg("--tool-ailang-bin")
        .arg(&old)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("daemon startup failed at archive: --tool-ailang-bin: tool binary is \"AILANG v0.41.0\""),
        "{err}"
    );
    let tool_root = PathBuf::from(format!("{}.artifacts/tool", env.db().display()));
    assert!(!tool_root.exists());
    // The measured tool (a copy, so the operator's path can change afterwards).
    let tool = tool_dir.path().join("ailang");
    std::fs::copy(&double, &tool).unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let bytes = std::fs::read(&tool).unwrap();
    let hex = hex::encode(sha2::Sha256::digest(&bytes));
    let s = Server::start(
        &env,
        &[
            "--workspace-root",
            ws.to_str().unwrap(),
            "--tool-ailang-bin",
            tool.to_str().unwrap(),
        ],
    );
    let archived = tool_root.join(format!("interpreters/sha256/{hex}/ailang"));
    assert_eq!(std::fs::read(&archived).unwrap(), bytes);
    assert_eq!(
        std::fs::metadata(&archived).unwrap().permissions().mode() & 0o777,
        0o555
    );
    let manifest: Value = serde_json::from_slice(
        &std::fs::read(tool_root.join(format!("interpreters/sha256/{hex}/manifest.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(manifest["hash"], format!("sha256:{hex}"));
    assert!(manifest["version"]
        .as_str()
        .unwrap()
        .starts_with("AILANG v0.52.1\n"));
    // The tool is not an interpreter pin: the interpreter archive does not hold it.
    assert!(!PathBuf::from(format!(
        "{}.artifacts/interpreters/sha256/{hex}",
        env.db().display()
    ))
    .exists());
    let readcount = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"readcount","arguments":{"path":"notes.txt"}}});
    // Changing the operator's file after startup changes nothing: the archived copy is pinned.
    std::fs::write(&tool, b"#!/bin/sh\necho AILANG v9\n").unwrap();
    let r = mcp(&s, &tok, &readcount);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.sse()["result"]["structuredContent"]["world"]["effects"][0]["status"],
        "ok"
    );
    // A changed archived copy is refused before anything of the call runs.
    std::fs::set_permissions(&archived, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut tampered = bytes.clone();
    tampered.extend_from_slice(b"# changed after startup\n");
    std::fs::write(&archived, &tampered).unwrap();
    let before = get(&s, "/v1/log?from=0&limit=500").json()["items"]
        .as_array()
        .map(Vec::len);
    let r = mcp(&s, &tok, &readcount);
    assert_eq!(
        (r.status, r.ctype.as_str()),
        (200, "application/json"),
        "{}",
        r.body
    );
    let v = r.json();
    assert_eq!(v["error"]["code"], -32603, "{v}");
    assert_eq!(v["error"]["message"], "host callback failed", "{v}");
    assert_eq!(v["error"]["data"]["class"], "ToolBinaryChanged", "{v}");
    let msg = v["error"]["data"]["message"].as_str().unwrap();
    assert!(
        msg.contains(&format!(
            "the pinned tool binary sha256:{hex} cannot be run (hash_mismatch)"
        )),
        "{msg}"
    );
    assert_eq!(
        get(&s, "/v1/log?from=0&limit=500").json()["items"]
            .as_array()
            .map(Vec::len),
        before,
        "nothing was committed"
    );
    // The original bytes re-hash to the pin again.
    std::fs::write(&archived, &bytes).unwrap();
    let r = mcp(&s, &tok, &readcount);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.sse()["result"]["structuredContent"]["world"]["effects"][0]["status"],
        "ok"
    );
}

/// Issue 13 §1–§2 over REST: a body moving the head back to an existing world, or reusing a
/// `rest:` id for a different commit, is refused with 400 and changes nothing — even from a
/// session holding only `Workspace.Read`.
#[test]
fn rest_commits_that_would_poison_the_store_are_refused_with_400() {
    let env = Env::bare();
    env.world(&["pin", "--interpreter", "embedded"]).success();
    let tok = env.mint("read", &["Workspace.Read=worktree:5"], "3600");
    let s = Server::start(&env, &[]);
    let url = s.url("/v1/commit");
    let auth = bearer(&tok);
    let g = genesis_body(Some("rest:g"));
    let r = send(
        "POST",
        &url,
        &[("Authorization", &auth)],
        Some(&g.to_string()),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let head = r.json()["selectedHead"].as_str().unwrap().to_string();
    let sha = |b: &[u8]| {
        use sha2::Digest;
        format!("sha256:{}", hex::encode(sha2::Sha256::digest(b)))
    };
    let genesis_entry = g["entry"]["entryHash"].as_str().unwrap().to_string();
    let payload = b"state-1";
    let root = sha(payload);
    let eh = sha(b"entry-1");
    let body = |world_ref: &str| {
        json!({
            "observedHead": head,
            "objects": [{"hash": root, "interfaceHash": sha(b"i"), "semanticId": "test/v1", "provenance": "t",
                          "payload": base64::engine::general_purpose::STANDARD.encode(payload)}],
            "nextWorld": {"ref": world_ref, "revision": 1, "stateRoot": root, "logHead": eh},
            "entry": {"header": {"entryIndex": 1, "semanticsEpoch": 1, "transitionFn": sha(b"f"), "interpreter": sha(b"i"),
                                 "prevEntryHash": genesis_entry, "writtenBy": "client:t"},
                      "entryHash": eh, "transitionRef": root}
        })
    };
    let r = send(
        "POST",
        &url,
        &[("Authorization", &auth)],
        Some(&body(&head).to_string()),
    );
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("NextWorld.Ref names an existing world"),
        "{}",
        r.body
    );
    assert_eq!(get(&s, "/v1/head").body, head, "the head did not move");
    // A resent rest: id whose objects differ is refused, not silently dropped.
    let mut g2 = g.clone();
    g2["objects"][0]["provenance"] = json!("forged");
    let r = send(
        "POST",
        &url,
        &[("Authorization", &auth)],
        Some(&g2.to_string()),
    );
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("was used for a different commit"),
        "{}",
        r.body
    );
    // The honest next commit lands.
    let r = send(
        "POST",
        &url,
        &[("Authorization", &auth)],
        Some(&body(&sha(b"world-1")).to_string()),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(s.stop().success());
    env.world(&["verify"]).success();
}

/// One dispatched Server-Sent Event (WHATWG EventSource rules): its data and the stream's
/// last event id at dispatch.
#[derive(Clone, Debug, PartialEq)]
struct SseEvent {
    data: String,
    last_id: Option<String>,
}

/// A Server-Sent Events client over a streaming HTTP body, parsing as EventSource does:
/// `data:` lines are joined, `id:` sets the last event id, a blank line dispatches.
struct SseClient {
    lines: Box<dyn BufRead + Send>,
    last_id: Option<String>,
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl SseClient {
    /// `POST /agui/` with `body` and optional `Last-Event-ID`.
    fn open(s: &Server, body: &str, last_event_id: Option<&str>) -> SseClient {
        let mut r = agent()
            .post(&s.url("/agui/"))
            .set("Content-Type", "application/json")
            .set("Accept", "text/event-stream");
        if let Some(id) = last_event_id {
            r = r.set("Last-Event-ID", id);
        }
        let resp = match r.send_string(body) {
            Ok(r) => r,
            Err(ureq::Error::Status(_, r)) => r,
            Err(e) => panic!("POST /agui/: {e}"),
        };
        let status = resp.status();
        let headers = [
            "content-type",
            "cache-control",
            "x-content-type-options",
            "retry-after",
        ]
        .iter()
        .filter_map(|h| resp.header(h).map(|v| (h.to_string(), v.to_string())))
        .collect();
        if status != 200 {
            return SseClient {
                lines: Box::new(BufReader::new(std::io::empty())),
                last_id: None,
                status,
                headers,
                body: resp.into_string().unwrap_or_default(),
            };
        }
        SseClient {
            lines: Box::new(BufReader::new(resp.into_reader())),
            last_id: None,
            status,
            headers,
            body: String::new(),
        }
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The next event, or `None` at the end of the stream.
    fn next(&mut self) -> Option<SseEvent> {
        let mut data: Option<String> = None;
        loop {
            let mut line = String::new();
            if self.lines.read_line(&mut line).expect("read stream") == 0 {
                return None;
            }
            let line = line.strip_suffix('\n').unwrap_or(&line);
            if line.is_empty() {
                if let Some(d) = data.take() {
                    return Some(SseEvent {
                        data: d,
                        last_id: self.last_id.clone(),
                    });
                }
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "data" => match &mut data {
                    Some(d) => {
                        d.push('\n');
                        d.push_str(value);
                    }
                    None => data = Some(value.to_string()),
                },
                "id" => self.last_id = Some(value.to_string()),
                _ => {}
            }
        }
    }

    fn next_json(&mut self) -> Value {
        let e = self.next().expect("an event");
        serde_json::from_str(&e.data).unwrap_or_else(|err| panic!("{err}: {}", e.data))
    }
}

fn agui_body(state: Option<Value>) -> String {
    let mut b = json!({"threadId":"t1","runId":"r1","messages":[],"tools":[],"context":[],"forwardedProps":{}});
    if let Some(s) = state {
        b["state"] = s;
    }
    b.to_string()
}

/// The AG-UI client state: apply a snapshot, then each delta (all `replace` ops).
fn apply(state: &mut Value, event: &Value) {
    match event["type"].as_str() {
        Some("STATE_SNAPSHOT") => *state = event["snapshot"].clone(),
        Some("STATE_DELTA") => {
            for op in event["delta"].as_array().expect("delta") {
                assert_eq!(op["op"], "replace");
                let key = op["path"].as_str().expect("path").trim_start_matches('/');
                state[key] = op["value"].clone();
            }
        }
        _ => {}
    }
}

/// Read one entry's two events: returns (entry index, CUSTOM value, the delta event).
fn read_entry(c: &mut SseClient) -> (i64, Value, Value) {
    let custom = c.next().expect("CUSTOM");
    let v: Value = serde_json::from_str(&custom.data).expect("json");
    assert_eq!(v["type"], "CUSTOM", "{v}");
    assert_eq!(v["name"], "world.entry.committed");
    let delta = c.next().expect("STATE_DELTA");
    let d: Value = serde_json::from_str(&delta.data).expect("json");
    assert_eq!(d["type"], "STATE_DELTA", "{d}");
    let i = v["value"]["header"]["entryIndex"].as_i64().expect("index");
    // `id:` sits only on the entry's last frame.
    assert_ne!(custom.last_id, Some(i.to_string()));
    assert_eq!(delta.last_id, Some(i.to_string()));
    (i, v["value"].clone(), d)
}

fn log_len(s: &Server) -> i64 {
    let r = get(s, "/v1/log?from=0&limit=500");
    r.json()["items"].as_array().expect("items").len() as i64
}

#[test]
fn agui_streams_the_committed_log_live_and_resumes_exactly() {
    let env = Env::new();
    let tok = env.full();
    let s = start_with_env(&env, &[], &[("WORLD_TEST_AGUI_RUN_MS", "4000")]);
    // A few entries before the stream opens.
    for i in 0..2 {
        let r = call(&s, &tok, "echo", json!({ "n": i }));
        assert!(r["result"]["structuredContent"].is_object(), "{r}");
    }
    let n = log_len(&s);
    assert!(n >= 2, "{n}");

    let mut a = SseClient::open(&s, &agui_body(None), None);
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.header("content-type"), Some("text/event-stream"));
    assert_eq!(a.header("cache-control"), Some("no-store"));
    assert_eq!(a.header("x-content-type-options"), Some("nosniff"));
    let started = a.next_json();
    assert_eq!(
        started,
        json!({"type":"RUN_STARTED","threadId":"t1","runId":"r1","protocolVersion":"1.0"})
    );
    let mut state = Value::Null;
    let snap = a.next_json();
    assert_eq!(
        snap,
        json!({"type":"STATE_SNAPSHOT","snapshot":{"schema":"world/agui-state/v1","lastIndex":-1,"logHead":null}})
    );
    apply(&mut state, &snap);
    for want in 0..n {
        let (i, value, delta) = read_entry(&mut a);
        assert_eq!(i, want);
        // The value is the GET /v1/log/{i} body, then what happened (issue 29, DEC-UX-5):
        // kind, transition, invocation, episode and outcome, as `world log --json` says it.
        let rest = get(&s, &format!("/v1/log/{i}"));
        let mut base = value.clone();
        let extra: Vec<(String, Value)> =
            ["kind", "transition", "invocationId", "episodeId", "outcome"]
                .iter()
                .map(|k| {
                    (
                        k.to_string(),
                        base.as_object_mut()
                            .expect("object")
                            .remove(*k)
                            .unwrap_or(Value::Null),
                    )
                })
                .collect();
        assert_eq!(base, rest.json());
        let log: Value = serde_json::from_str(
            String::from_utf8_lossy(
                &env.world(&["log", "--json", "--from", &i.to_string(), "--limit", "1"])
                    .success()
                    .get_output()
                    .stdout,
            )
            .trim(),
        )
        .expect("log line");
        for (k, v) in &extra {
            let key = match k.as_str() {
                "invocationId" => "invocation",
                "episodeId" => "episode",
                other => other,
            };
            assert_eq!(v, &log[key], "{k} of entry {i}: {value}");
        }
        if i >= n - 2 {
            // The two echo calls over MCP.
            assert_eq!(value["kind"], "invocation", "{value}");
            assert_eq!(value["transition"], "echo", "{value}");
            assert_eq!(value["outcome"], "ok", "{value}");
            assert!(
                value["invocationId"]
                    .as_str()
                    .is_some_and(|x| x.starts_with("mcp:")),
                "{value}"
            );
            assert!(value["episodeId"].is_string(), "{value}");
        } else {
            assert_eq!(value["kind"], "commit", "{value}");
        }
        apply(&mut state, &delta);
        assert_eq!(state["lastIndex"], i);
        assert_eq!(state["logHead"], rest.json()["entryHash"]);
    }
    // Another client commits while the stream is open: the entries arrive in order.
    let url = s.url("/mcp/");
    let auth = bearer(&tok);
    let committer = std::thread::spawn(move || {
        for i in 0..3 {
            let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"live": i}}});
            let r = send(
                "POST",
                &url,
                &[
                    ("Authorization", &auth),
                    ("Content-Type", "application/json"),
                    ("Accept", "application/json, text/event-stream"),
                ],
                Some(&body.to_string()),
            );
            assert_eq!(r.status, 200, "{}", r.body);
            assert!(
                r.sse()["result"]["structuredContent"].is_object(),
                "{}",
                r.body
            );
        }
    });
    let (i, _, delta) = read_entry(&mut a);
    assert_eq!(i, n, "the first live entry");
    apply(&mut state, &delta);
    // Cut the stream here (the client goes away after entry n).
    drop(a);
    committer.join().expect("committer");
    assert_eq!(log_len(&s), n + 3);

    // Resume from the state the client built: exactly the rest.
    let resume = |c: &mut SseClient| -> Vec<(i64, Value, Value)> {
        assert_eq!(c.status, 200, "{}", c.body);
        assert_eq!(c.next_json()["type"], "RUN_STARTED");
        let snap = c.next_json();
        assert_eq!(snap["snapshot"]["lastIndex"], n);
        let got: Vec<_> = (0..2).map(|_| read_entry(c)).collect();
        let fin = c.next_json();
        assert_eq!(
            fin,
            json!({"type":"RUN_FINISHED","threadId":"t1","runId":"r1","result":{"lastIndex": n + 2}})
        );
        assert!(c.next().is_none(), "nothing after RUN_FINISHED");
        got
    };
    let mut b = SseClient::open(&s, &agui_body(Some(state.clone())), None);
    let from_state = resume(&mut b);
    assert_eq!(
        from_state.iter().map(|(i, _, _)| *i).collect::<Vec<_>>(),
        vec![n + 1, n + 2]
    );
    // The same from Last-Event-ID (what a resuming EventSource sends).
    let mut c = SseClient::open(&s, &agui_body(None), Some(&n.to_string()));
    let from_header = resume(&mut c);
    assert_eq!(from_header, from_state);
    // Replaying a cut stream is idempotent: applying the deltas twice gives the same state.
    let mut once = state.clone();
    for (_, _, d) in &from_state {
        apply(&mut once, d);
    }
    let mut twice = once.clone();
    for (_, _, d) in from_state.iter().chain(from_header.iter()) {
        apply(&mut twice, d);
    }
    assert_eq!(once, twice);
    assert_eq!(once["lastIndex"], n + 2);
    assert_eq!(
        once["logHead"],
        get(&s, &format!("/v1/log/{}", n + 2)).json()["entryHash"]
    );
    // An idle run sends nothing between the snapshot and RUN_FINISHED.
    let mut idle = SseClient::open(&s, &agui_body(None), Some(&(n + 2).to_string()));
    assert_eq!(idle.next_json()["type"], "RUN_STARTED");
    assert_eq!(idle.next_json()["type"], "STATE_SNAPSHOT");
    assert_eq!(idle.next_json()["type"], "RUN_FINISHED");
    assert!(idle.next().is_none());
}

#[test]
fn agui_refuses_bad_requests_before_the_stream_and_bounds_live_runs() {
    let env = Env::new();
    let s = start_with_env(&env, &[], &[("WORLD_TEST_AGUI_RUN_MS", "3000")]);
    let err = |c: &SseClient| -> (u16, Value) {
        let v: Value = serde_json::from_str(&c.body).unwrap_or(Value::Null);
        (c.status, v["error"].clone())
    };
    let cases: Vec<(String, Option<&str>, u16, &str, &str)> = vec![
        ("{".into(), None, 400, "BadRequest", "invalid request body"),
        (
            r#"{"threadId":"t","runId":"r"}"#.into(),
            None,
            400,
            "BadRequest",
            "threadId, runId and messages array are required",
        ),
        (
            agui_body(Some(
                json!({"schema":"world/agui-state/v1","lastIndex":"x"}),
            )),
            None,
            400,
            "BadRequest",
            "invalid state.lastIndex",
        ),
        (
            agui_body(None),
            Some("abc"),
            400,
            "BadRequest",
            "invalid Last-Event-ID",
        ),
        (
            agui_body(Some(json!({"schema":"world/agui-state/v1","lastIndex":0}))),
            Some("1"),
            400,
            "BadRequest",
            "conflicting resume cursors",
        ),
        (
            agui_body(None),
            Some("999"),
            404,
            "NotFound",
            "unknown cursor",
        ),
    ];
    for (body, id, status, class, message) in cases {
        let c = SseClient::open(&s, &body, id);
        assert_eq!(
            err(&c),
            (
                status,
                json!({"class": class, "code": world::serve::rest::code_of(class), "message": message})
            ),
            "{body:.80} {id:?}"
        );
    }
    // An oversized body is refused from its Content-Length, before it is read.
    let r = raw_oversized(s.port, "/agui/");
    assert!(r.starts_with("HTTP/1.1 413"), "{r}");
    assert!(
        r.contains(
            r#"{"error":{"class":"PayloadTooLarge","code":"payload_too_large","message":"request body exceeds 64 KiB"}}"#
        ),
        "{r}"
    );
    // GET is not the route's method.
    assert_eq!(get(&s, "/agui/").status, 405);
    // `/agui` without the slash and a state of another schema are accepted.
    let r = send(
        "POST",
        &s.url("/agui"),
        &[("Content-Type", "application/json")],
        Some(&agui_body(Some(json!({"x":1})))),
    );
    assert_eq!(r.status, 200);
    assert!(
        r.body.starts_with("data: {\"type\":\"RUN_STARTED\""),
        "{}",
        r.body
    );
    let last = log_len(&s) - 1;
    assert!(
        r.body
            .ends_with(&format!("\"result\":{{\"lastIndex\":{last}}}}}\n\n")),
        "{}",
        r.body
    );
    // 16 live runs at once; the 17th answers 503 StreamLimit with Retry-After: 1.
    let mut live: Vec<SseClient> = (0..16)
        .map(|_| {
            let mut c = SseClient::open(&s, &agui_body(None), None);
            assert_eq!(c.status, 200, "{}", c.body);
            assert_eq!(c.next_json()["type"], "RUN_STARTED");
            c
        })
        .collect();
    let over = SseClient::open(&s, &agui_body(None), None);
    assert_eq!(
        err(&over),
        (
            503,
            json!({"class":"StreamLimit","code":"stream_limit","message":"too many live streams"})
        )
    );
    assert_eq!(over.header("retry-after"), Some("1"));
    // A freed slot is reusable once its run ends.
    for c in live.iter_mut() {
        while let Some(e) = c.next() {
            if e.data.contains("RUN_FINISHED") {
                break;
            }
        }
    }
    drop(live);
    std::thread::sleep(Duration::from_millis(300));
    let mut again = SseClient::open(&s, &agui_body(None), None);
    assert_eq!(again.status, 200, "{}", again.body);
    // Shutdown ends an open run with RUN_FINISHED within one tick.
    assert_eq!(again.next_json()["type"], "RUN_STARTED");
    assert_eq!(again.next_json()["type"], "STATE_SNAPSHOT");
    let _ = again.next_json(); // entry 0 (genesis)
    let _ = again.next_json();
    let t = std::time::Instant::now();
    unsafe { libc::kill(s.child.id() as i32, libc::SIGTERM) };
    let fin = again.next_json();
    assert_eq!(fin["type"], "RUN_FINISHED", "{fin}");
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    let status = s.stop();
    assert!(status.success(), "{status:?}");
}

#[test]
fn serve_runs_workspace_exec_under_its_profile() {
    if let Err(why) = world::broker::handlers::exec::sandbox::Bwrap::detect() {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "CI=true and no usable bubblewrap sandbox: {why}"
        );
        eprintln!("skipped: no usable bubblewrap sandbox here: {why}");
        return;
    }
    let env = Env::new();
    let tok = env.mint("exec-tok", &["Workspace.Exec=worktree:5"], "3600");
    let profiles = tempfile::tempdir().unwrap();
    let profile = profiles.path().join("profile.json");
    std::fs::write(
        &profile,
        r#"{"profile":"world/exec-profile/v1","project":"demo","path":["/usr/bin","/bin"],"timeout_ms":5000,
            "commands":{"cat":{"argv":["cat"],"positional":"relpath","max_args":1}}}"#,
    )
    .unwrap();
    let s = Server::start(&env, &["--exec-profile", profile.to_str().unwrap()]);
    let r = call(
        &s,
        &tok,
        "workspace-exec",
        json!({"command":"cat","args":["notes.txt"]}),
    );
    let out = &r["result"]["structuredContent"];
    assert_eq!(out["stdout"], "hello world\nsecond line\n", "{r}");
    assert_eq!(out["exit_code"], 0);
    assert_eq!(out["sandbox"]["runtime"], "bubblewrap");
    let r = call(
        &s,
        &tok,
        "workspace-exec",
        json!({"command":"cat","args":["/etc/passwd"]}),
    );
    assert_eq!(
        r["result"]["structuredContent"]["refused"],
        "command \"cat\": argument 0 \"/etc/passwd\" refused: not a positional of the command's class",
        "{r}"
    );
    assert!(s.stop().success());
    // The startup probe: a toolchain that does not answer refuses the profile by arm, and
    // nothing the probe planted is left behind (scratch episodes, decoys, cache, settings).
    let before: Vec<_> = std::fs::read_dir(env.dir.path().join("ws"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    std::fs::write(
        &profile,
        r#"{"profile":"world/exec-profile/v1","project":"demo","path":["/usr/bin","/bin"],"timeout_ms":5000,
            "probe":["false"],"commands":{"cat":{"argv":["cat"]}}}"#,
    )
    .unwrap();
    let out = env
        .world(&[
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--workspace-root",
            env.dir.path().join("ws").to_str().unwrap(),
            "--exec-profile",
            profile.to_str().unwrap(),
        ])
        .get_output()
        .clone();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(err.contains(
        "daemon startup failed at config: the exec configuration is refused: exec startup probe failed for profile \"demo\" (1 of 7 arms): arm7-toolchain: probe [\"false\"]: exit Some(1)"
    ), "{err}");
    let after: Vec<_> = std::fs::read_dir(env.dir.path().join("ws"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(after, before);
    let leftovers: Vec<_> = std::fs::read_dir(env.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("probe"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert!(
        std::fs::read_dir(env.dir.path().join("exec-cache")).map_or(true, |d| d
            .filter(|e| e
                .as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("wep-"))
            .count()
            == 0)
    );
    // A bad profile stops the daemon at startup (exit 2), before the store is opened.
    std::fs::write(&profile, r#"{"profile":"world/exec-profile/v1"}"#).unwrap();
    let out = env
        .world(&[
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--exec-profile",
            profile.to_str().unwrap(),
        ])
        .get_output()
        .clone();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(
        "daemon startup failed at config: the exec configuration is refused: exec profile: project: is required"
    ), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Under a long-lived daemon the confinement stack is re-verified before every call: a
/// changed executable or a settings file that is not World's fails the call (failed record,
/// debited), with nothing run (exec-and-agui.md §1.5 step 3).
#[test]
fn serve_exec_fails_a_call_when_the_stack_drifted() {
    if world::broker::handlers::exec::sandbox::Bwrap::detect().is_err() {
        eprintln!("skipped: no usable bubblewrap sandbox here");
        assert_ne!(std::env::var("CI").as_deref(), Ok("true"));
        return;
    }
    let env = Env::new();
    let tok = env.mint("exec-tok", &["Workspace.Exec=worktree:5"], "3600");
    let tools = tempfile::tempdir().unwrap();
    let tool = tools.path().join("tool");
    std::fs::copy("/bin/echo", &tool).unwrap();
    let profile = tools.path().join("profile.json");
    std::fs::write(
        &profile,
        format!(
            r#"{{"profile":"world/exec-profile/v1","project":"demo","path":["/usr/bin","/bin"],"timeout_ms":5000,
                "probe":["true"],"commands":{{"tool":{{"argv":["{}","drifted?"]}}}}}}"#,
            tool.display()
        ),
    )
    .unwrap();
    let s = Server::start(&env, &["--exec-profile", profile.to_str().unwrap()]);
    let r = call(&s, &tok, "workspace-exec", json!({"command":"tool"}));
    assert_eq!(
        r["result"]["structuredContent"]["stdout"], "drifted?\n",
        "{r}"
    );
    let old = sha256_hex(&std::fs::read(&tool).unwrap());
    std::fs::copy("/bin/true", &tool).unwrap();
    let new = sha256_hex(&std::fs::read(&tool).unwrap());
    let r = call(&s, &tok, "workspace-exec", json!({"command":"tool"}));
    let drifted = r["result"]["structuredContent"]["world"]["effects"][0]["record"]
        .as_str()
        .unwrap()
        .to_string();
    std::fs::copy("/bin/echo", &tool).unwrap();
    // The settings file: World's bytes only.
    let settings = env.dir.path().join("exec/ep1.demo.srt.json");
    let mut bytes = std::fs::read(&settings).unwrap();
    bytes.push(b' ');
    std::fs::write(&settings, bytes).unwrap();
    let r = call(&s, &tok, "workspace-exec", json!({"command":"tool"}));
    let tampered = r["result"]["structuredContent"]["world"]["effects"][0]["record"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(s.stop().success());
    let failure = |rec: &str| -> String {
        let out = env
            .world(&["effects", "show", rec, "--json"])
            .get_output()
            .stdout
            .clone();
        let v: Value = serde_json::from_slice(&out).unwrap();
        v["failure"].as_str().unwrap_or_default().to_string()
    };
    assert_eq!(
        failure(&drifted),
        format!(
            "broker: exec confinement stack drifted: {}: sha256 {new}, verified as {old}",
            tool.display()
        )
    );
    assert_eq!(
        failure(&tampered),
        format!(
            "broker: exec settings {} is not World's rendering: its bytes differ from the canonical rendering",
            settings.display()
        )
    );
    let effects: Vec<Value> = String::from_utf8(
        env.world(&["effects", "--json"])
            .get_output()
            .stdout
            .clone(),
    )
    .unwrap()
    .lines()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect();
    let failed: Vec<bool> = effects
        .iter()
        .map(|e| e["failed"].as_bool().unwrap())
        .collect();
    assert_eq!(failed, [false, true, true]);
    assert_eq!(effects[2]["budgetAfter"], 2);
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// `GET /v1/checkpoint` (issue 33): the latest signed checkpoint verbatim, 404 before one.
#[test]
fn rest_serves_the_latest_signed_checkpoint() {
    let env = Env::bare();
    env.world(&["genesis"]).success();
    let key = env.db().with_file_name("log.key");
    let s = Server::start(&env, &[]);
    let r = get(&s, "/v1/checkpoint");
    assert_eq!(
        (r.status, r.json()["error"]["class"].as_str()),
        (404, Some("NotFound"))
    );
    drop(s);
    env.world(&["key", "generate", "--out", key.to_str().unwrap()])
        .success();
    let signed = env
        .world(&["checkpoint", "--key", key.to_str().unwrap()])
        .success();
    let note = String::from_utf8(signed.get_output().stdout.clone()).unwrap();
    let s = Server::start(&env, &[]);
    let r = get(&s, "/v1/checkpoint");
    assert_eq!((r.status, r.body.as_str()), (200, note.as_str()));
    assert!(r.ctype.starts_with("text/plain"));
}

/// The A2A TCK's mandatory JSON-RPC and task requirements (issue 30, DEC-A2A-4..6), each
/// checked with `world`'s own skills.
#[test]
fn a2a_tck_requirements_wire_tasks_context_and_card() {
    let env = Env::new();
    let tok = env.full();
    let s = Server::start(&env, &[]);
    let b = bearer(&tok);
    let raw = |body: &str, extra: &[(&str, &str)]| {
        let mut h = vec![
            ("Authorization", b.as_str()),
            ("Content-Type", "application/json"),
        ];
        h.extend_from_slice(extra);
        send("POST", &s.url("/a2a/"), &h, Some(body)).json()
    };
    // JSON-RPC 2.0: unparseable JSON is -32700; an id of invalid type is -32600 with id null.
    assert_eq!(raw("{not json", &[])["error"]["code"], -32700);
    let r = raw(
        r#"{"jsonrpc":"2.0","id":{"x":1},"method":"GetTask","params":{"id":"a"}}"#,
        &[],
    );
    assert_eq!(
        (r["error"]["code"].as_i64(), &r["id"]),
        (Some(-32600), &Value::Null)
    );
    // An unsupported A2A-Version is VersionNotSupported.
    let r = raw(
        r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"a2a:ep1:x"}}"#,
        &[("A2A-Version", "9.9")],
    );
    assert_eq!(r["error"]["code"], -32009, "{r}");
    // GetTask refuses a negative historyLength.
    let r = a2a(
        &s,
        &tok,
        &json!({"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"a2a:ep1:x","historyLength":-1}}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // A text message without a skill id (three skills visible): input-required naming them,
    // the client's contextId kept.
    let text = |mid: &str, text: &str, extra: Value| {
        let mut m = json!({"messageId": mid, "role": "ROLE_USER", "parts": [{"text": text}], "contextId": "ctx-client-1"});
        if let Value::Object(e) = extra {
            m.as_object_mut().unwrap().extend(e);
        }
        a2a(
            &s,
            &tok,
            &json!({"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message": m}}),
        )
    };
    let r = text("tck-1", "hello there", json!({}));
    let t = &r["result"]["task"];
    assert_eq!(t["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{r}");
    assert_eq!(t["contextId"], "ctx-client-1", "{r}");
    let said = t["status"]["message"].to_string();
    assert!(said.contains("echo") && said.contains("skill_id"), "{said}");
    // A follow-up naming the task continues it; an unknown taskId is -32001, a completed
    // task's id -32004.
    let r = text("tck-2", "hi", json!({"taskId": "a2a:ep1:nope"}));
    assert_eq!(r["error"]["code"], -32001, "{r}");
    let done = a2a(
        &s,
        &tok,
        &json!({"jsonrpc":"2.0","id":2,"method":"SendMessage","params":{"message":{"messageId":"tck-3","role":"ROLE_USER","parts":[{"data":{"v":1}}]},"metadata":{"skill_id":"echo"}}}),
    );
    assert_eq!(
        done["result"]["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    let r = text(
        "tck-4",
        "again",
        json!({"taskId": "a2a:ep1:tck-3", "contextId": "ep1"}),
    );
    assert_eq!(r["error"]["code"], -32004, "{r}");
    // ListTasks filters by the client's context and pages.
    let l = a2a(
        &s,
        &tok,
        &json!({"jsonrpc":"2.0","id":3,"method":"ListTasks","params":{"contextId":"ctx-client-1","pageSize":1}}),
    );
    assert_eq!(l["result"]["tasks"][0]["id"], "a2a:ep1:tck-1", "{l}");
    assert_eq!(l["result"]["pageSize"], 1, "{l}");
    // The public v1.0 card: readable without a credential, declaring the bearer scheme.
    let card = get(&s, "/.well-known/agent-card.json");
    assert_eq!(card.status, 200, "{}", card.body);
    let card = card.json();
    assert!(
        card["securitySchemes"]["worldSession"]["httpAuthSecurityScheme"].is_object(),
        "{card}"
    );
    assert!(
        card["securityRequirements"][0]["schemes"]["worldSession"].is_object(),
        "{card}"
    );
}

/// One raw HTTP/1.1 request on a fresh connection; the whole response as text.
fn raw_request(port: u16, request: &str) -> String {
    let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    c.write_all(request.as_bytes()).unwrap();
    read_until_closed(&mut c)
}

/// Issue 26 §8 (RFC 9112 §3.2.2): a request target in absolute form names the authority that
/// replaces `Host`, so a foreign authority is refused (403 Forbidden naming it) even with a
/// loopback `Host`, on every surface; the daemon's own authority in absolute form is served.
#[test]
fn an_absolute_form_target_naming_a_foreign_host_is_refused() {
    let env = Env::new();
    let tok = env.full();
    let s = Server::start(&env, &[]);
    let p = s.port;
    for (method, target, extra) in [
        ("GET", "http://evil.example/v1/head".to_string(), String::new()),
        ("GET", format!("http://evil.example:{p}/v1/health"), String::new()),
        ("GET", format!("http://127.0.0.1:{}/v1/head", p + 1), String::new()),
        ("GET", format!("http://user@127.0.0.1:{p}/v1/head"), String::new()),
        (
            "POST",
            "http://evil.example/mcp/".to_string(),
            format!("Authorization: Bearer {tok}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"),
        ),
        (
            "POST",
            "http://evil.example/a2a/".to_string(),
            format!("Authorization: Bearer {tok}\r\nContent-Type: application/json\r\n"),
        ),
    ] {
        let body = if method == "POST" {
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#
        } else {
            ""
        };
        let r = raw_request(
            p,
            &format!(
                "{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            ),
        );
        assert!(r.starts_with("HTTP/1.1 403"), "{method} {target} was served:\n{r}");
        assert!(r.contains("Forbidden"), "{method} {target}:\n{r}");
        assert!(
            r.contains("request target authority"),
            "{method} {target}: the refusal names the target:\n{r}"
        );
        assert!(!r.contains("logHead") && !r.contains("\"result\""), "{r}");
    }
    // The daemon's own authority in absolute form (any loopback spelling) is served.
    for own in [format!("127.0.0.1:{p}"), format!("localhost:{p}")] {
        let r = raw_request(
            p,
            &format!("GET http://{own}/v1/health HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\nConnection: close\r\n\r\n"),
        );
        assert!(r.starts_with("HTTP/1.1 200"), "{own}:\n{r}");
    }
    // Origin form with a loopback Host is unaffected.
    assert_eq!(get(&s, "/v1/health").status, 200);
}

/// Mint a session for `episode` (full grants); returns the token.
fn mint_episode(env: &Env, name: &str, episode: &str) -> String {
    let out = env.dir.path().join(name);
    let root = env.dir.path().join("ws");
    std::fs::create_dir_all(root.join(episode)).unwrap();
    env.world(&[
        "session",
        "mint",
        "--episode",
        episode,
        "--yes",
        "--ttl",
        "3600",
        "--grant",
        "world.apply=world:10",
        "--grant",
        "Workspace.Read=worktree:50",
        "--workspace-root",
        root.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ])
    .success();
    std::fs::read_to_string(out).unwrap().trim().to_string()
}

/// Every JSON-RPC message of an SSE body, in order (the priming event has no data).
fn sse_messages(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| !d.trim().is_empty())
        .map(|d| serde_json::from_str(d).unwrap_or_else(|e| panic!("{e}: {d}")))
        .collect()
}

/// A legacy-era (2025-11-25) MCP POST, optionally inside the MCP session `sid`; returns the
/// status, the `Mcp-Session-Id` answered and every message of the SSE body.
fn mcp_in(
    s: &Server,
    tok: &str,
    sid: Option<&str>,
    body: &Value,
) -> (u16, Option<String>, Vec<Value>) {
    let mut r = agent()
        .post(&s.url("/mcp/"))
        .set("Authorization", &bearer(tok))
        .set("Content-Type", "application/json")
        .set("Accept", "application/json, text/event-stream");
    if body["method"] != "initialize" {
        r = r.set("MCP-Protocol-Version", "2025-11-25");
    }
    if let Some(sid) = sid {
        r = r.set("Mcp-Session-Id", sid);
    }
    let resp = match r.send_string(&body.to_string()) {
        Ok(r) | Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("{e}"),
    };
    let status = resp.status();
    let sid = resp.header("mcp-session-id").map(str::to_string);
    let text = resp.into_string().unwrap();
    (status, sid, sse_messages(&text))
}

/// `initialize` under 2025-11-25: the MCP session id.
fn mcp_session(s: &Server, tok: &str) -> String {
    let (status, sid, msgs) = mcp_in(
        s,
        tok,
        None,
        &json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
    );
    assert_eq!(status, 200, "{msgs:?}");
    let caps = &msgs[0]["result"]["capabilities"];
    assert!(caps["logging"].is_object(), "logging advertised: {caps}");
    assert_eq!(caps["resources"]["subscribe"], true, "{caps}");
    let sid = sid.expect("an Mcp-Session-Id");
    let (status, _, _) = mcp_in(
        s,
        tok,
        Some(&sid),
        &json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    );
    assert!(status == 202 || status == 200, "{status}");
    sid
}

/// The one response (the message with an `id`) of an MCP exchange.
fn response_of(msgs: &[Value]) -> &Value {
    let r: Vec<&Value> = msgs.iter().filter(|m| m.get("id").is_some()).collect();
    assert_eq!(r.len(), 1, "{msgs:?}");
    assert!(
        std::ptr::eq(r[0], msgs.last().unwrap()),
        "the response ends the stream: {msgs:?}"
    );
    r[0]
}

/// Issue 30 §2 "resources": the session's own episode — its entries, receipts and records —
/// as `world://` resources with templates; `resources/read` returns exactly the bytes `world
/// show --json` and `world receipt --json` print; nothing of another episode is visible.
#[test]
fn resources_read_the_cli_bytes_of_the_sessions_episode_only() {
    let env = Env::new();
    let tok = env.full();
    let tok2 = mint_episode(&env, "tok2", "ep2");
    let s = Server::start(&env, &[]);
    let c = call(&s, &tok, "readcount", json!({"path": "notes.txt"}));
    assert_eq!(c["result"]["isError"], Value::Null, "{c}");
    call(&s, &tok2, "echo", json!({"other": "episode"}));
    call(&s, &tok, "echo", json!({"a": 1}));
    let rpc = |tok: &str, method: &str, params: Value| -> Value {
        let r = mcp(
            &s,
            tok,
            &json!({"jsonrpc":"2.0","id":9,"method":method,"params":params}),
        );
        assert_eq!(r.status, 200, "{}", r.body);
        r.sse()
    };
    // Templates: the four URI shapes.
    let t = rpc(&tok, "resources/templates/list", json!({}));
    let shapes: Vec<&str> = t["result"]["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["uriTemplate"].as_str().unwrap())
        .collect();
    for want in [
        "world://episodes/{episode}",
        "world://entries/{index}",
        "world://receipts/{invocationId}",
        "world://records/{ref}",
    ] {
        assert!(shapes.contains(&want), "{shapes:?}");
    }
    // The list: ep1's episode, entries 1 and 3, their receipts and records; nothing of ep2.
    let l = rpc(&tok, "resources/list", json!({}));
    let uris: Vec<String> = l["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["uri"].as_str().unwrap().to_string())
        .collect();
    assert!(
        uris.contains(&"world://episodes/ep1".to_string()),
        "{uris:?}"
    );
    assert!(uris.contains(&"world://entries/1".to_string()), "{uris:?}");
    assert!(uris.contains(&"world://entries/3".to_string()), "{uris:?}");
    assert!(
        !uris
            .iter()
            .any(|u| u == "world://entries/2" || u.contains("ep2")),
        "{uris:?}"
    );
    assert!(l["result"].get("nextCursor").is_none(), "{l}");
    let receipts: Vec<&String> = uris
        .iter()
        .filter(|u| u.starts_with("world://receipts/"))
        .collect();
    assert_eq!(receipts.len(), 2, "{uris:?}");
    let records: Vec<&String> = uris
        .iter()
        .filter(|u| u.starts_with("world://records/"))
        .collect();
    assert!(
        records.len() >= 3,
        "two invocation records and an effect record: {uris:?}"
    );
    let read = |tok: &str, uri: &str| -> Value { rpc(tok, "resources/read", json!({"uri": uri})) };
    let text_of = |v: &Value| -> String {
        let c = &v["result"]["contents"][0];
        assert_eq!(c["mimeType"], "application/json", "{v}");
        c["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{v}"))
            .to_string()
    };
    let world_out = |args: &[&str]| -> String {
        String::from_utf8(env.world(args).success().get_output().stdout.clone()).unwrap()
    };
    // Every listed resource reads; entries and receipts as the CLI prints them.
    for uri in &uris {
        let v = read(&tok, uri);
        let text = text_of(&v);
        assert_eq!(v["result"]["contents"][0]["uri"], uri.as_str());
        if let Some(i) = uri.strip_prefix("world://entries/") {
            assert_eq!(text, world_out(&["show", "--json", i]), "{uri}");
        } else if let Some(id) = uri.strip_prefix("world://receipts/") {
            assert_eq!(text, world_out(&["receipt", "--json", id]), "{uri}");
        } else if let Some(r) = uri.strip_prefix("world://records/") {
            let payload: Value =
                serde_json::from_str(&world_out(&["object", "get", r, "--payload"])).unwrap();
            assert_eq!(
                serde_json::from_str::<Value>(&text).unwrap(),
                payload,
                "{uri}"
            );
        } else {
            let ep: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(ep["episodeId"], "ep1", "{ep}");
            let idx: Vec<i64> = ep["entries"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["index"].as_i64().unwrap())
                .collect();
            assert_eq!(idx, vec![1, 3], "{ep}");
        }
        // Another episode's session sees none of it: the same -32002 as a URI naming nothing.
        let other = read(&tok2, uri);
        assert_eq!(other["error"]["code"], -32002, "ep2 read {uri}: {other}");
    }
    for nothing in [
        "world://entries/99",
        "world://entries/0",
        "world://receipts/nope",
        "world://episodes/ep2",
        "file:///etc/passwd",
    ] {
        assert_eq!(read(&tok, nothing)["error"]["code"], -32002, "{nothing}");
    }
    // ep2's own view holds its entry only.
    let l2 = rpc(&tok2, "resources/list", json!({}));
    let uris2 = l2["result"]["resources"].to_string();
    assert!(
        uris2.contains("world://entries/2") && !uris2.contains("world://entries/1\""),
        "{uris2}"
    );
    // Bad params.
    assert_eq!(
        rpc(&tok, "resources/read", json!({}))["error"]["code"],
        -32602
    );
    assert_eq!(
        rpc(&tok, "resources/list", json!({"cursor": "bogus"}))["error"]["code"],
        -32602
    );
}

/// A store, a daemon, a session token and an MCP session (2025-11-25) on it.
fn mcp_session_env() -> (Env, Server, String, String) {
    let env = Env::new();
    let tok = env.full();
    let s = Server::start(&env, &[]);
    let sid = mcp_session(&s, &tok);
    (env, s, tok, sid)
}

/// `readcount` on notes.txt inside MCP session `sid`, with `_meta` when given; every message
/// of its stream (the response last).
fn readcount_in(s: &Server, tok: &str, sid: &str, id: i64, meta: Value) -> Vec<Value> {
    let mut params = json!({"name":"readcount","arguments":{"path":"notes.txt"}});
    if !meta.is_null() {
        params["_meta"] = meta;
    }
    let (status, _, msgs) = mcp_in(
        s,
        tok,
        Some(sid),
        &json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":params}),
    );
    assert_eq!(status, 200, "{msgs:?}");
    assert_eq!(
        response_of(&msgs)["result"]["structuredContent"]["ok"],
        true,
        "{msgs:?}"
    );
    msgs
}

fn notifications(msgs: &[Value], method: &str) -> Vec<Value> {
    msgs.iter()
        .filter(|m| m["method"] == method)
        .cloned()
        .collect()
}

/// Issue 30 §2 "progress" (the conformance scenario tools-call-with-progress with `world`'s
/// tools): a `progressToken` brings `notifications/progress` on the call's stream before the
/// response, progress rising to its total at the commit; none without a token.
#[test]
fn progress_notifications_follow_the_progress_token() {
    let (_env, s, tok, sid) = mcp_session_env();
    let msgs = readcount_in(&s, &tok, &sid, 2, Value::Null);
    assert_eq!(msgs.len(), 1, "nothing unasked: {msgs:?}");
    let msgs = readcount_in(&s, &tok, &sid, 3, json!({"progressToken": "p-1"}));
    let p = notifications(&msgs, "notifications/progress");
    assert!(p.len() >= 4, "{msgs:?}");
    assert!(
        notifications(&msgs, "notifications/message").is_empty(),
        "no logging unasked: {msgs:?}"
    );
    let mut last = 0.0;
    for n in &p {
        assert_eq!(n["params"]["progressToken"], "p-1", "{n}");
        let v = n["params"]["progress"].as_f64().unwrap();
        assert!(v > last, "progress rises: {p:?}");
        last = v;
        if let Some(t) = n["params"]["total"].as_f64() {
            assert!(v <= t, "{n}");
        }
    }
    assert_eq!(
        p.last().unwrap()["params"]["total"].as_f64(),
        Some(last),
        "{p:?}"
    );
    assert!(
        p.last().unwrap()["params"]["message"]
            .as_str()
            .unwrap()
            .starts_with("committed at entry"),
        "{p:?}"
    );
    // A numeric token is echoed as a number.
    let msgs = readcount_in(&s, &tok, &sid, 4, json!({"progressToken": 7}));
    let p = notifications(&msgs, "notifications/progress");
    assert!(p.iter().all(|n| n["params"]["progressToken"] == 7), "{p:?}");
}

/// Issue 30 §2 "logging" (tools-call-with-logging and logging-set-level with `world`'s
/// tools): after `logging/setLevel info` a call's steps (admitted, planned, effect
/// dispatched, committed) arrive as `notifications/message` before the response; a higher
/// level filters them; a bad level, or no MCP session, is -32602.
#[test]
fn logging_notifications_follow_the_session_level() {
    let (_env, s, tok, sid) = mcp_session_env();
    let msgs = readcount_in(&s, &tok, &sid, 2, Value::Null);
    assert!(
        notifications(&msgs, "notifications/message").is_empty(),
        "{msgs:?}"
    );
    let set = |level: &str| {
        let (_, _, r) = mcp_in(
            &s,
            &tok,
            Some(&sid),
            &json!({"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":level}}),
        );
        response_of(&r).clone()
    };
    assert_eq!(set("info")["result"], json!({}));
    let msgs = readcount_in(&s, &tok, &sid, 5, Value::Null);
    let logs = notifications(&msgs, "notifications/message");
    let steps: Vec<&str> = logs
        .iter()
        .map(|m| m["params"]["data"]["step"].as_str().unwrap())
        .collect();
    assert_eq!(
        steps,
        ["admitted", "planned", "effect dispatched", "committed"],
        "{logs:?}"
    );
    assert!(
        notifications(&msgs, "notifications/progress").is_empty(),
        "{msgs:?}"
    );
    assert_eq!(logs[0]["params"]["level"], "info");
    assert_eq!(logs[0]["params"]["logger"], "world");
    assert_eq!(logs[3]["params"]["level"], "notice");
    assert_eq!(logs[2]["params"]["data"]["effect"], "Workspace.Read");
    assert!(logs[3]["params"]["data"]["entryIndex"].is_i64(), "{logs:?}");
    // notice: only the commit; error: nothing.
    for (level, want) in [("notice", 1), ("error", 0)] {
        assert!(set(level)["result"].is_object());
        let msgs = readcount_in(&s, &tok, &sid, 7, Value::Null);
        assert_eq!(
            notifications(&msgs, "notifications/message").len(),
            want,
            "{level}: {msgs:?}"
        );
    }
    assert_eq!(set("loud")["error"]["code"], -32602);
    let (_, _, r) = mcp_in(
        &s,
        &tok,
        None,
        &json!({"jsonrpc":"2.0","id":9,"method":"logging/setLevel","params":{"level":"info"}}),
    );
    let e = &response_of(&r)["error"];
    assert_eq!(e["code"], -32602, "{r:?}");
    assert!(
        e["message"].as_str().unwrap().contains("MCP session"),
        "{e}"
    );
}

/// Issue 30 §2 (the conformance scenario json-schema-2020-12 with a published transition): a
/// tool's `inputSchema` keeps its JSON Schema 2020-12 keywords (`$schema`, `$defs`, `$ref`,
/// `prefixItems`, `const`, `dependentRequired`, type unions) as published, and a call is
/// checked against them (a failure is an `isError` result naming the failing path).
#[test]
fn input_schemas_keep_their_2020_12_keywords() {
    let env = Env::new();
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"addr": {"type": "object", "properties": {"street": {"type": "string"}}, "required": ["street"]}},
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "address": {"$ref": "#/$defs/addr"},
            "tags": {"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}},
            "kind": {"const": "person"},
            "age": {"type": ["integer", "null"], "exclusiveMinimum": 0}
        },
        "required": ["name"],
        "additionalProperties": false,
        "dependentRequired": {"address": ["name"]}
    });
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut m: Value = serde_json::from_slice(
        &std::fs::read(repo.join("fixtures/transitions/manifest.json")).unwrap(),
    )
    .unwrap();
    let mut t = m[0].clone();
    assert_eq!(t["id"], "echo");
    t["id"] = json!("schema-echo");
    t["inputSchema"] = schema.clone();
    m.as_array_mut().unwrap().push(t);
    let manifest = env.dir.path().join("m2020.json");
    std::fs::write(&manifest, serde_json::to_vec(&m).unwrap()).unwrap();
    env.world(&["publish", "--manifest", manifest.to_str().unwrap(), "--yes"])
        .success();
    let tok = env.full();
    let s = Server::start(&env, &[]);
    let r = mcp(
        &s,
        &tok,
        &json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
    );
    let list = r.sse();
    let tool = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "schema-echo")
        .unwrap_or_else(|| panic!("{list}"))
        .clone();
    assert_eq!(tool["inputSchema"], schema, "the schema as published");
    let ok = call(
        &s,
        &tok,
        "schema-echo",
        json!({"name": "a", "tags": ["x", 1, 2], "kind": "person", "age": null, "address": {"street": "s"}}),
    );
    assert_eq!(ok["result"]["structuredContent"]["name"], "a", "{ok}");
    for (args, path) in [
        (json!({"name": ""}), "/name"),
        (json!({"name": "a", "kind": "robot"}), "/kind"),
        (json!({"name": "a", "tags": [1]}), "/tags/0"),
        (json!({"name": "a", "tags": ["x", "y"]}), "/tags/1"),
        (json!({"name": "a", "address": {}}), "/address"),
        (json!({"name": "a", "age": 0}), "/age"),
        (json!({"name": "a", "extra": 1}), ""),
    ] {
        let v = call(&s, &tok, "schema-echo", args.clone());
        assert_eq!(v["result"]["isError"], true, "{args}: {v}");
        let text = v["result"]["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains(&format!("arguments fail the inputSchema at {path}")),
            "{args}: {text}"
        );
    }
}

/// Issue 30 §2: `resources/subscribe` to the episode notifies on the session's `GET /mcp/`
/// stream (primed with an event id and `retry`) when an entry of the episode lands; an entry
/// of another episode does not notify it.
#[test]
fn subscriptions_notify_when_an_entry_lands() {
    let env = Env::new();
    let tok = env.full();
    let tok2 = mint_episode(&env, "tok2", "ep2");
    let s = Server::start(&env, &[]);
    let sid = mcp_session(&s, &tok);
    let mut stream = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    write!(
        stream,
        "GET /mcp/ HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {tok}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {sid}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n",
        s.port
    )
    .unwrap();
    let mut seen = String::new();
    let mut read_for = |secs: u64, until: &str, seen: &mut String| {
        let end = std::time::Instant::now() + Duration::from_secs(secs);
        let mut buf = [0u8; 4096];
        while std::time::Instant::now() < end && !seen.contains(until) {
            match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => seen.push_str(&String::from_utf8_lossy(&buf[..n])),
                Err(_) => {}
            }
        }
    };
    read_for(20, "retry:", &mut seen);
    assert!(seen.starts_with("HTTP/1.1 200"), "{seen}");
    assert!(
        seen.contains("\nid: ") && seen.contains("retry:"),
        "primed: {seen}"
    );
    let (_, _, r) = mcp_in(
        &s,
        &tok,
        Some(&sid),
        &json!({"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"world://episodes/ep1"}}),
    );
    assert_eq!(response_of(&r)["result"], json!({}), "{r:?}");
    // Subscribing to something not visible is -32002.
    let (_, _, r) = mcp_in(
        &s,
        &tok,
        Some(&sid),
        &json!({"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"world://episodes/ep2"}}),
    );
    assert_eq!(response_of(&r)["error"]["code"], -32002, "{r:?}");
    // Another episode's entry: no notification.
    call(&s, &tok2, "echo", json!({"x": 2}));
    read_for(2, "notifications/resources/updated", &mut seen);
    assert!(!seen.contains("notifications/resources/updated"), "{seen}");
    // The episode's own entry: notified.
    call(&s, &tok, "echo", json!({"x": 1}));
    read_for(20, "notifications/resources/updated", &mut seen);
    assert!(
        seen.contains(
            r#""method":"notifications/resources/updated","params":{"uri":"world://episodes/ep1"}"#
        ),
        "{seen}"
    );
    // Unsubscribed: the next entry does not notify.
    let (_, _, r) = mcp_in(
        &s,
        &tok,
        Some(&sid),
        &json!({"jsonrpc":"2.0","id":4,"method":"resources/unsubscribe","params":{"uri":"world://episodes/ep1"}}),
    );
    assert_eq!(response_of(&r)["result"], json!({}), "{r:?}");
    call(&s, &tok, "echo", json!({"x": 3}));
    read_for(2, "never", &mut seen);
    assert_eq!(
        seen.matches("notifications/resources/updated").count(),
        1,
        "{seen}"
    );
}

/// Issue 30 §1: `ListTasks` — a session sees its own episode's tasks only, filtered by
/// `contextId` and `status`, paged with `pageSize`/`pageToken` (every task once, the last
/// page's `nextPageToken` empty), history cut to `historyLength`; bad params are -32602.
#[test]
fn a2a_list_tasks_filters_pages_and_cuts_history() {
    let env = Env::new();
    let tok = env.full();
    let tok2 = mint_episode(&env, "tok2", "ep2");
    let s = Server::start(&env, &[]);
    let send_msg = |tok: &str, mid: &str, ctx: &str, skill: Option<&str>| -> Value {
        let parts = if skill.is_some() {
            json!([{"data": {"m": mid}}])
        } else {
            json!([{"text": "which skill?"}])
        };
        let mut params = json!({"message": {"messageId": mid, "role": "ROLE_USER", "parts": parts, "contextId": ctx}});
        if let Some(k) = skill {
            params["metadata"] = json!({"skill_id": k});
        }
        let r = a2a(
            &s,
            tok,
            &json!({"jsonrpc":"2.0","id":1,"method":"SendMessage","params":params}),
        );
        assert!(r["result"]["task"].is_object(), "{r}");
        r["result"]["task"].clone()
    };
    let mut completed = Vec::new();
    for (mid, ctx) in [("m1", "ctx-a"), ("m2", "ctx-a"), ("m3", "ctx-b")] {
        let t = send_msg(&tok, mid, ctx, Some("echo"));
        assert_eq!(t["status"]["state"], "TASK_STATE_COMPLETED", "{t}");
        completed.push(t["id"].as_str().unwrap().to_string());
    }
    let waiting = send_msg(&tok, "m4", "ctx-b", None);
    assert_eq!(
        waiting["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{waiting}"
    );
    let other = send_msg(&tok2, "o1", "ctx-a", Some("echo"));
    let list = |tok: &str, params: Value| -> Value {
        a2a(
            &s,
            tok,
            &json!({"jsonrpc":"2.0","id":2,"method":"ListTasks","params":params}),
        )
    };
    let ids = |v: &Value| -> Vec<String> {
        v["result"]["tasks"]
            .as_array()
            .unwrap_or_else(|| panic!("{v}"))
            .iter()
            .map(|t| t["id"].as_str().unwrap().to_string())
            .collect()
    };
    // All of ep1's tasks, none of ep2's.
    let all = list(&tok, json!({}));
    let mut every = ids(&all);
    assert_eq!(every.len(), 4, "{all}");
    assert_eq!(all["result"]["totalSize"], 4, "{all}");
    assert_eq!(all["result"]["nextPageToken"], "", "{all}");
    assert!(
        !every.contains(&other["id"].as_str().unwrap().to_string()),
        "{all}"
    );
    assert_eq!(
        ids(&list(&tok2, json!({}))),
        vec![other["id"].as_str().unwrap().to_string()]
    );
    // contextId.
    let a = ids(&list(&tok, json!({"contextId": "ctx-a"})));
    assert_eq!(a.len(), 2, "{a:?}");
    assert!(
        a.iter()
            .all(|id| id == &completed[0] || id == &completed[1]),
        "{a:?}"
    );
    for t in list(&tok, json!({"contextId": "ctx-b"}))["result"]["tasks"]
        .as_array()
        .unwrap()
    {
        assert_eq!(t["contextId"], "ctx-b", "{t}");
    }
    assert!(ids(&list(&tok, json!({"contextId": "ctx-none"}))).is_empty());
    // status.
    let done = ids(&list(&tok, json!({"status": "TASK_STATE_COMPLETED"})));
    let mut want = completed.clone();
    want.sort();
    let mut got = done.clone();
    got.sort();
    assert_eq!(got, want);
    assert_eq!(
        ids(&list(&tok, json!({"status": "TASK_STATE_INPUT_REQUIRED"}))),
        vec![waiting["id"].as_str().unwrap().to_string()]
    );
    assert_eq!(
        ids(&list(
            &tok,
            json!({"status": "TASK_STATE_INPUT_REQUIRED", "contextId": "ctx-a"})
        ))
        .len(),
        0
    );
    // Paging: pageSize 1 walks every task exactly once, in the unpaged order.
    let mut paged = Vec::new();
    let mut token = String::new();
    for _ in 0..10 {
        let p = list(&tok, json!({"pageSize": 1, "pageToken": token}));
        assert_eq!(p["result"]["pageSize"], 1, "{p}");
        assert_eq!(p["result"]["totalSize"], 4, "{p}");
        paged.extend(ids(&p));
        token = p["result"]["nextPageToken"].as_str().unwrap().to_string();
        if token.is_empty() {
            break;
        }
    }
    assert_eq!(paged, every, "pages of one hold every task once, in order");
    let two = list(&tok, json!({"pageSize": 2, "contextId": "ctx-a"}));
    assert_eq!(ids(&two).len(), 2);
    assert_eq!(two["result"]["nextPageToken"], "", "{two}");
    // historyLength: 0 drops the history, 1 keeps the last message.
    let h0 = list(
        &tok,
        json!({"historyLength": 0, "status": "TASK_STATE_COMPLETED"}),
    );
    for t in h0["result"]["tasks"].as_array().unwrap() {
        assert!(
            t.get("history")
                .is_none_or(|h| h.as_array().unwrap().is_empty()),
            "{t}"
        );
    }
    let full = list(&tok, json!({"status": "TASK_STATE_COMPLETED"}));
    assert!(
        full["result"]["tasks"][0]["history"]
            .as_array()
            .is_some_and(|h| !h.is_empty()),
        "{full}"
    );
    let h1 = list(
        &tok,
        json!({"historyLength": 1, "status": "TASK_STATE_COMPLETED"}),
    );
    for (t, f) in h1["result"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .zip(full["result"]["tasks"].as_array().unwrap())
    {
        let h = t["history"].as_array().unwrap();
        assert_eq!(h.len(), 1, "{t}");
        assert_eq!(
            &h[0],
            f["history"].as_array().unwrap().last().unwrap(),
            "the newest kept"
        );
    }
    // Bad params: -32602.
    for bad in [
        json!({"pageSize": 0}),
        json!({"pageSize": 101}),
        json!({"status": "DONE"}),
        json!({"pageToken": "not-a-token"}),
        json!({"historyLength": -1}),
        json!({"contextId": 5}),
    ] {
        assert_eq!(list(&tok, bad.clone())["error"]["code"], -32602, "{bad}");
    }
    every.sort();
    every.dedup();
    assert_eq!(every.len(), 4);
}

/// Issue 30 §1 (DEC-A2A-6): a text-only message without a skill id gets a conformant answer —
/// routed when the session sees exactly one skill, or when the text parses as JSON that fits
/// exactly one skill's input schema; otherwise a task waiting in input-required whose message
/// names the skills and how to name one; a session that sees no skill gets `rejected`.
#[test]
fn a2a_text_messages_without_a_skill_are_routed_or_answered() {
    let env = Env::new();
    let text_msg = |s: &Server, tok: &str, mid: &str, text: &str| -> Value {
        let r = a2a(
            s,
            tok,
            &json!({"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId": mid, "role": "ROLE_USER", "parts": [{"text": text}]}}}),
        );
        assert!(r["result"]["task"].is_object(), "{r}");
        r["result"]["task"].clone()
    };
    // Workspace.Write only: ailang-write {path, content} and ailang-edit {path, old_text,
    // new_text} are visible; their input schemas tell them apart.
    let write = env.mint("tokw", &["Workspace.Write=worktree:5"], "3600");
    // Human.Approve only: the one skill `approval`; text that is not JSON asks for its input.
    let approve = env.mint("toka", &["Human.Approve=approvals:1"], "3600");
    // A grant no published transition needs: no skill at all.
    let none = env.mint("tokn", &["FS.Read=worktree:1"], "3600");
    let s = Server::start(&env, &[]);
    let t = text_msg(
        &s,
        &write,
        "w1",
        r#"{"path":"routed.txt","content":"by text"}"#,
    );
    assert_eq!(t["status"]["state"], "TASK_STATE_COMPLETED", "{t}");
    assert_eq!(
        std::fs::read_to_string(env.dir.path().join("ws/ep1/routed.txt")).unwrap(),
        "by text"
    );
    let t = text_msg(&s, &write, "w2", r#"{"zzz":1}"#);
    assert_eq!(t["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{t}");
    let said = t["status"]["message"].to_string();
    assert!(
        said.contains("fits none")
            && said.contains("ailang-write")
            && said.contains("ailang-edit")
            && said.contains("skill_id"),
        "{said}"
    );
    let t = text_msg(&s, &write, "w3", "please write a file");
    assert_eq!(t["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{t}");
    assert!(
        t["status"]["message"]
            .to_string()
            .contains("Which skill should run?"),
        "{t}"
    );
    let t = text_msg(&s, &approve, "a1", "may I?");
    assert_eq!(t["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{t}");
    assert!(
        t["status"]["message"]
            .to_string()
            .contains("The one skill here is approval"),
        "{t}"
    );
    let t = text_msg(&s, &none, "n1", "anything");
    assert_eq!(t["status"]["state"], "TASK_STATE_REJECTED", "{t}");
    assert!(
        t["status"]["message"]
            .to_string()
            .contains("sees no skills"),
        "{t}"
    );
    drop(s);
    // One visible skill: its JSON text runs, other text asks for its input.
    let one = Env::bare();
    one.world(&["genesis"]).success();
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let m: Value = serde_json::from_slice(
        &std::fs::read(repo.join("fixtures/transitions/manifest.json")).unwrap(),
    )
    .unwrap();
    let manifest = one.dir.path().join("echo-only.json");
    std::fs::write(&manifest, serde_json::to_vec(&json!([m[0]])).unwrap()).unwrap();
    one.world(&["publish", "--manifest", manifest.to_str().unwrap(), "--yes"])
        .success();
    let tok = one.full();
    let s = Server::start(&one, &[]);
    let t = text_msg(&s, &tok, "o1", r#"{"hello":"text"}"#);
    assert_eq!(t["status"]["state"], "TASK_STATE_COMPLETED", "{t}");
    assert!(t["artifacts"].to_string().contains("hello"), "{t}");
    let t = text_msg(&s, &tok, "o2", "hello");
    assert_eq!(t["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{t}");
    assert!(
        t["status"]["message"]
            .to_string()
            .contains("The one skill here is echo"),
        "{t}"
    );
}

/// Issue 30 §2 "SSE" (2025-11-25): a call's stream is primed (an event id, `retry`), every
/// event carries an id, and `GET /mcp/` with `Last-Event-ID` resumes it: exactly the events
/// after that id, in order; a stream fully sent answers 405, an id of another credential's
/// stream (or none at all) 404.
#[test]
fn mcp_streams_resume_after_the_last_event_id() {
    let env = Env::new();
    let tok = env.full();
    let other = mint_episode(&env, "tok-other", "ep1");
    let s = Server::start(&env, &[]);
    let sid = mcp_session(&s, &tok);
    let body = json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"readcount","arguments":{"path":"notes.txt"},"_meta":{"progressToken":"r"}}});
    let resp = agent()
        .post(&s.url("/mcp/"))
        .set("Authorization", &bearer(&tok))
        .set("Content-Type", "application/json")
        .set("Accept", "application/json, text/event-stream")
        .set("MCP-Protocol-Version", "2025-11-25")
        .set("Mcp-Session-Id", &sid)
        .send_string(&body.to_string())
        .unwrap();
    let text = resp.into_string().unwrap();
    let events: Vec<&str> = text
        .split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .collect();
    assert!(
        events[0].contains("retry: ") && !events[0].contains("data: {"),
        "primed: {text}"
    );
    let ids: Vec<&str> = events
        .iter()
        .map(|e| {
            e.lines()
                .find_map(|l| l.strip_prefix("id: "))
                .unwrap_or_else(|| panic!("an event without an id: {e:?}"))
        })
        .collect();
    assert!(events.len() >= 6, "{text}");
    let resume = |tok: &str, last: &str| -> String {
        raw_request(
            s.port,
            &format!(
                "GET /mcp/ HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {tok}\r\nAccept: text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nLast-Event-ID: {last}\r\nConnection: close\r\n\r\n",
                s.port
            ),
        )
    };
    // Resume after the third event: the rest, in order, the response last.
    let r = resume(&tok, ids[2]);
    assert!(r.starts_with("HTTP/1.1 200"), "{r}");
    let mut at = 0;
    for id in &ids[3..] {
        let pos = r[at..]
            .find(&format!("id: {id}\n"))
            .unwrap_or_else(|| panic!("event {id} missing or out of order: {r}"));
        at += pos + 1;
    }
    for id in &ids[1..=2] {
        assert!(
            !r.contains(&format!("id: {id}\n")),
            "{id} was sent again: {r}"
        );
    }
    assert!(r.contains(r#""id":3,"result""#), "{r}");
    // After the last event nothing is left; another credential's stream is unknown.
    let r = resume(&tok, ids.last().unwrap());
    assert!(r.starts_with("HTTP/1.1 405"), "{r}");
    let r = resume(&other, ids[2]);
    assert!(r.starts_with("HTTP/1.1 404"), "{r}");
    let r = resume(&tok, "nope-1");
    assert!(r.starts_with("HTTP/1.1 404"), "{r}");
}

/// Issue 29 §8: `GET /v1/` lists the routes (its schema, and the README's routes table, say
/// the same), and an HTTP error carries `code` beside the reference's `class`.
#[test]
fn v1_lists_the_routes_and_errors_carry_a_code() {
    let env = Env::new();
    let s = Server::start(&env, &[]);
    for path in ["/v1/", "/v1"] {
        let r = get(&s, path);
        assert_eq!(r.status, 200, "{path}");
        let v = r.json();
        let schema: Value = serde_json::from_str(
            &std::fs::read_to_string(crate::common::repo().join("docs/json/routes.schema.json"))
                .unwrap(),
        )
        .unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        assert!(validator.is_valid(&v), "{v}");
        let paths: Vec<&str> = v["routes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["path"].as_str().unwrap())
            .collect();
        for want in [
            "/v1/health",
            "/v1/commit",
            "/v1/receipts/{*id}",
            "/mcp",
            "/a2a",
            "/agui/",
        ] {
            assert!(paths.contains(&want), "{want} missing from {paths:?}");
        }
        // Every GET route without a placeholder is routed (a 404 there is the route's own
        // answer, e.g. no checkpoint yet, never the unknown-route fallback).
        let unknown = get(&s, "/v1/no-such-route").json()["error"]["message"].clone();
        for r in v["routes"].as_array().unwrap() {
            let p = r["path"].as_str().unwrap();
            if r["method"] == "GET" && !p.contains('{') {
                let got = get(&s, p);
                assert!(
                    got.status != 404 || got.json()["error"]["message"] != unknown,
                    "{p} is not routed"
                );
            }
        }
    }
    // The README's routes table lists every route, method and path.
    let readme = std::fs::read_to_string(crate::common::repo().join("README.md")).unwrap();
    for (m, p, _) in world::serve::rest::ROUTES {
        assert!(
            readme.contains(&format!("| `{m}` | `{p}` |")),
            "README routes table lacks {m} {p}"
        );
    }
    // Errors: class (the reference's wire) and code (the CLI's spelling).
    let r = get(&s, "/v1/worlds/sha256:00");
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"]["class"], "BadRequest");
    assert_eq!(r.json()["error"]["code"], "bad_request");
    let r = get(&s, "/v1/no-such-route");
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["error"]["class"], "NotFound");
    assert_eq!(r.json()["error"]["code"], "not_found");
}

/// Poll `GetTask` until `id` leaves the in-progress states (SUBMITTED, WORKING), recording
/// every state seen; panics after 20 s.
fn a2a_settle(s: &Server, tok: &str, id: &str) -> (Value, Vec<String>) {
    let mut seen = Vec::new();
    let until = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let r = a2a(
            s,
            tok,
            &json!({"jsonrpc":"2.0","id":9,"method":"GetTask","params":{"id": id}}),
        );
        let st = r["result"]["status"]["state"]
            .as_str()
            .unwrap_or_else(|| panic!("{r}"))
            .to_string();
        if seen.last() != Some(&st) {
            seen.push(st.clone());
        }
        if st != "TASK_STATE_SUBMITTED" && st != "TASK_STATE_WORKING" {
            return (r["result"].clone(), seen);
        }
        assert!(
            std::time::Instant::now() < until,
            "{id} never settled: {seen:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A2A §3.2.2 (DEC-A2A-9): `configuration.returnImmediately` answers the task at once, queued
/// (`SUBMITTED`), and the call runs in the background — `WORKING` only while it runs, then
/// `COMPLETED` with its output. Until then a follow-up is `-32004` and a cancel `-32002`; the
/// same messageId again is the same task; a daemon told to stop lets the call finish first.
#[test]
fn a2a_return_immediately_answers_at_once_and_runs_in_the_background() {
    let env = Env::new();
    let tok = env.full();
    let s = Server::start(&env, &[]);
    let send_now = |s: &Server, mid: &str, params_extra: Value| -> Value {
        let mut params = json!({
            "message": {"messageId": mid, "role": "ROLE_USER", "parts": [{"data": {"m": mid}}]},
            "configuration": {"returnImmediately": true}
        });
        for (k, v) in params_extra.as_object().unwrap() {
            params[k] = v.clone();
        }
        a2a(
            s,
            &tok,
            &json!({"jsonrpc":"2.0","id":1,"method":"SendMessage","params": params}),
        )
    };
    // A structured call (metadata.skill_id).
    let r = send_now(&s, "ri-1", json!({"metadata": {"skill_id": "echo"}}));
    let t = &r["result"]["task"];
    assert_eq!(t["id"], "a2a:ep1:ri-1", "{r}");
    assert_eq!(t["status"]["state"], "TASK_STATE_SUBMITTED", "{r}");
    assert!(t.get("artifacts").is_none(), "nothing ran yet: {r}");
    assert_eq!(t["history"][0]["messageId"], "ri-1", "{r}");
    // While it is queued or running (or once it has finished): no follow-up, no cancel.
    let follow = a2a(
        &s,
        &tok,
        &json!({"jsonrpc":"2.0","id":2,"method":"SendMessage","params":{"message":{"messageId":"ri-1b","role":"ROLE_USER","taskId":"a2a:ep1:ri-1","parts":[{"data":{}}]}}}),
    );
    assert_eq!(follow["error"]["code"], -32004, "{follow}");
    let cancel = a2a(
        &s,
        &tok,
        &json!({"jsonrpc":"2.0","id":3,"method":"CancelTask","params":{"id":"a2a:ep1:ri-1"}}),
    );
    assert_eq!(cancel["error"]["code"], -32002, "{cancel}");
    let (done, seen) = a2a_settle(&s, &tok, "a2a:ep1:ri-1");
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(
        done["artifacts"][0]["parts"][0]["data"],
        json!({"m": "ri-1"})
    );
    let order = [
        "TASK_STATE_SUBMITTED",
        "TASK_STATE_WORKING",
        "TASK_STATE_COMPLETED",
    ];
    let pos: Vec<usize> = seen
        .iter()
        .map(|st| order.iter().position(|o| o == st).unwrap_or(99))
        .collect();
    assert!(
        pos.windows(2).all(|w| w[0] < w[1]) && pos.iter().all(|p| *p < 3),
        "states only move forward: {seen:?}"
    );
    // The same messageId again is the same task, answered as it stands (no second run).
    let again = send_now(&s, "ri-1", json!({"metadata": {"skill_id": "echo"}}));
    assert_eq!(
        again["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{again}"
    );
    assert_eq!(
        again["result"]["task"]["metadata"]["world_ref"], done["metadata"]["world_ref"],
        "{again}"
    );
    // It is listed like any task.
    let l = a2a(
        &s,
        &tok,
        &json!({"jsonrpc":"2.0","id":4,"method":"ListTasks","params":{"status":"TASK_STATE_COMPLETED"}}),
    );
    assert!(
        l["result"]["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["id"] == "a2a:ep1:ri-1"),
        "{l}"
    );
    // An invisible skill is refused at once: nothing is accepted, nothing runs.
    let r = send_now(
        &s,
        "ri-2",
        json!({"metadata": {"skill_id": "ailang-write"}}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // A stop lets an accepted call finish: after a restart it reads COMPLETED.
    let r = send_now(&s, "ri-3", json!({"metadata": {"skill_id": "echo"}}));
    assert_eq!(
        r["result"]["task"]["status"]["state"], "TASK_STATE_SUBMITTED",
        "{r}"
    );
    assert!(s.stop().success());
    let s = Server::start(&env, &[]);
    let (done, _) = a2a_settle(&s, &tok, "a2a:ep1:ri-3");
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(
        done["artifacts"][0]["parts"][0]["data"],
        json!({"m": "ri-3"})
    );
}

/// The ListTasks requirements the A2A TCK checks (A2A §3.1.4), on tasks `world` makes without
/// running anything (text without a skill id waits in input-required) plus one completed
/// call: every task has id, contextId and status.state; newest status first; `pageSize`
/// defaults to 50 with `totalSize` and a `nextPageToken`; `statusTimestampAfter` keeps tasks
/// whose status changed at or after it; artifacts only with `includeArtifacts`.
#[test]
fn a2a_list_tasks_order_default_page_timestamps_and_artifacts() {
    let env = Env::new();
    let tok = env.full();
    let s = Server::start(&env, &[]);
    let rpc = |method: &str, params: Value| -> Value {
        a2a(
            &s,
            &tok,
            &json!({"jsonrpc":"2.0","id":1,"method":method,"params":params}),
        )
    };
    let text = |mid: &str, ctx: &str| -> Value {
        let r = rpc(
            "SendMessage",
            json!({"message":{"messageId": mid, "role": "ROLE_USER", "contextId": ctx, "parts":[{"text": "list me"}]}}),
        );
        assert_eq!(
            r["result"]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
            "{r}"
        );
        r["result"]["task"].clone()
    };
    let ctx = "pages";
    let mut made = Vec::new();
    for i in 0..60 {
        made.push(
            text(&format!("p-{i}"), ctx)["id"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    let page = rpc("ListTasks", json!({"contextId": ctx}));
    let res = &page["result"];
    assert_eq!(res["totalSize"], 60, "{page}");
    assert_eq!(res["pageSize"], 50, "{page}");
    let tasks = res["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 50);
    assert_ne!(res["nextPageToken"], "", "{page}");
    for t in tasks {
        assert!(t["id"].is_string() && t["contextId"] == ctx, "{t}");
        assert!(t["status"]["state"].is_string(), "{t}");
        assert!(t.get("artifacts").is_none(), "{t}");
    }
    // Newest status first: timestamps never increase, and the last made is first.
    let stamps: Vec<&str> = tasks
        .iter()
        .map(|t| t["status"]["timestamp"].as_str().unwrap())
        .collect();
    assert!(stamps.windows(2).all(|w| w[0] >= w[1]), "{stamps:?}");
    assert_eq!(tasks[0]["id"], made[59].as_str());
    let rest = rpc(
        "ListTasks",
        json!({"contextId": ctx, "pageToken": res["nextPageToken"]}),
    );
    assert_eq!(rest["result"]["tasks"].as_array().unwrap().len(), 10);
    assert_eq!(rest["result"]["nextPageToken"], "", "{rest}");
    // statusTimestampAfter: the newest task's own timestamp keeps it; later keeps nothing.
    let newest = stamps[0];
    let after = rpc(
        "ListTasks",
        json!({"contextId": ctx, "statusTimestampAfter": newest}),
    );
    let kept = after["result"]["tasks"].as_array().unwrap();
    assert!(kept.iter().any(|t| t["id"] == made[59].as_str()), "{after}");
    assert!(
        kept.iter()
            .all(|t| t["status"]["timestamp"].as_str().unwrap() >= newest),
        "{after}"
    );
    let none = rpc(
        "ListTasks",
        json!({"statusTimestampAfter": "2999-01-01T00:00:00Z"}),
    );
    assert_eq!(none["result"]["tasks"], json!([]), "{none}");
    assert_eq!(none["result"]["totalSize"], 0, "{none}");
    // Artifacts: absent by default, the output with includeArtifacts.
    let r = rpc(
        "SendMessage",
        json!({"message":{"messageId":"art","role":"ROLE_USER","parts":[{"data":{"a":1}}]},"metadata":{"skill_id":"echo"}}),
    );
    assert_eq!(
        r["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{r}"
    );
    let plain = rpc("ListTasks", json!({"status": "TASK_STATE_COMPLETED"}));
    assert_eq!(plain["result"]["tasks"][0]["id"], "a2a:ep1:art", "{plain}");
    assert!(
        plain["result"]["tasks"][0].get("artifacts").is_none(),
        "{plain}"
    );
    let with = rpc(
        "ListTasks",
        json!({"status": "TASK_STATE_COMPLETED", "includeArtifacts": true}),
    );
    assert_eq!(
        with["result"]["tasks"][0]["artifacts"][0]["parts"][0]["data"],
        json!({"a": 1}),
        "{with}"
    );
}
