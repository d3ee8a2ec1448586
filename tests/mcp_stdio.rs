//! `world mcp --session S` over real stdin/stdout: newline-delimited JSON-RPC, nothing but
//! protocol on stdout, an oversized line answered with an error while serving continues, and
//! coexistence with other CLI writers between requests.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::common::world_bin as bin;

fn world(db: &std::path::Path, args: &[&str]) -> assert_cmd::assert::Assert {
    assert_cmd::Command::new(bin())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("--db")
        .arg(db)
        .args(args)
        .assert()
}

#[test]
fn stdio_server_speaks_both_eras_and_survives_bad_lines() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    std::fs::create_dir_all(dir.path().join("ws/ep1")).unwrap();
    std::fs::write(dir.path().join("ws/ep1/notes.txt"), "one two\nthree\n").unwrap();
    world(&db, &["genesis"]).success();
    world(
        &db,
        &[
            "publish",
            "--manifest",
            "fixtures/transitions/manifest.json",
            "--yes",
        ],
    )
    .success();
    let tok = dir.path().join("tok");
    let root = dir.path().join("ws");
    world(
        &db,
        &[
            "session",
            "mint",
            "--episode",
            "ep1",
            "--grant",
            "world.apply=world:10",
            "--grant",
            "Workspace.Read=worktree:50",
            "--workspace-root",
            root.to_str().unwrap(),
            "--yes",
            "--out",
            tok.to_str().unwrap(),
        ],
    )
    .success();

    let mut child = Command::new(bin())
        .arg("--db")
        .arg(&db)
        .args(["mcp", "--session"])
        .arg(&tok)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut ask = |line: &str| -> Value {
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
        let mut resp = String::new();
        out.read_line(&mut resp).unwrap();
        serde_json::from_str(&resp)
            .unwrap_or_else(|e| panic!("stdout is not protocol ({e}): {resp:?}"))
    };
    let init = ask(&json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}).to_string());
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    // A notification gets no answer: the next line answered is the ping's.
    let ping = ask(&format!(
        "{}\n{}",
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","id":2,"method":"ping"})
    ));
    assert_eq!(
        (ping["id"].as_i64(), &ping["result"]),
        (Some(2), &json!({}))
    );
    let list = ask(&json!({"jsonrpc":"2.0","id":3,"method":"tools/list"}).to_string());
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 5);
    let r = ask(&json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"readcount","arguments":{"path":"notes.txt"}}}).to_string());
    assert_eq!(r["result"]["structuredContent"]["words"], 3);
    // Another CLI writer between requests: the lock is free while the server idles.
    world(&db, &["pin", "--interpreter", "embedded"]).success();
    let meta = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}});
    let d = ask(
        &json!({"jsonrpc":"2.0","id":5,"method":"server/discover","params":{"_meta":meta}})
            .to_string(),
    );
    assert_eq!(d["result"]["resultType"], "complete");
    let c = ask(&json!({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"_meta":meta,"name":"echo","arguments":{"k":"v"}}}).to_string());
    assert_eq!(c["result"]["structuredContent"], json!({"k":"v"}));
    // Bad lines: malformed JSON, unknown method, an oversized line; the server keeps serving.
    assert_eq!(ask("{not json")["error"]["code"], -32700);
    assert_eq!(
        ask(&json!({"jsonrpc":"2.0","id":7,"method":"nope"}).to_string())["error"]["code"],
        -32601
    );
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\",\"pad\":\"{}\"}}",
        "x".repeat(4 * 1024 * 1024 + 10)
    );
    let r = ask(&big);
    assert_eq!(
        (r["error"]["code"].as_i64(), r["id"].is_null()),
        (Some(-32600), true)
    );
    assert_eq!(
        ask(&json!({"jsonrpc":"2.0","id":9,"method":"ping"}).to_string())["id"],
        9
    );
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    assert_eq!(rest, "", "nothing but responses on stdout");
}

/// Started by hand on a terminal, `world mcp` says on stderr what is waiting (and how to end)
/// instead of waiting silently; stdout stays protocol-only, and Ctrl-D ends it with exit 0.
#[test]
fn on_a_terminal_it_says_what_is_waiting_and_ctrl_d_ends_it() {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    world(&db, &["genesis"]).success();
    let tok = dir.path().join("tok");
    world(
        &db,
        &[
            "session",
            "mint",
            "--episode",
            "ep1",
            "--grant",
            "world.apply=world:1",
            "--yes",
            "--out",
            tok.to_str().unwrap(),
        ],
    )
    .success();
    let (mut master, slave) = crate::terminal::pty();
    let mut child = Command::new(bin())
        .arg("--db")
        .arg(&db)
        .args(["mcp", "--session"])
        .arg(&tok)
        .stdin(Stdio::from(slave))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Ctrl-D at once: the line discipline keeps it until the server reads, so a server that
    // printed nothing fails the assertion below instead of hanging the test.
    master.write_all(b"\x04").unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(
        stderr.contains("serving MCP on stdin/stdout") && stderr.contains("Ctrl-D"),
        "{stderr}"
    );
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert_eq!(stdout, "", "stdout carries only protocol");
}
