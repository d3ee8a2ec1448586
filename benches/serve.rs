//! `world serve` throughput on loopback (issue 8, "Performance"): `GET /v1/health` and
//! `GET /v1/log/{i}` requests per second and p99 latency at 16 concurrent keep-alive
//! connections (a Rust client in this process), and MCP `tools/call` of the pure `echo`
//! transition per second against the same call through `world invoke` in a loop.
//!
//! `cargo bench --bench serve` (request count from env `SERVE_BENCH_N`, default 4000 per
//! GET route; 200 tools/call; 20 `world invoke`).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[path = "common/shipped.rs"]
mod shipped;

fn world() -> PathBuf {
    shipped::world().to_path_buf()
}

fn run(db: &std::path::Path, args: &[&str]) {
    let ok = Command::new(world())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("--db")
        .arg(db)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(ok, "world {args:?} failed");
}

fn pctl(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    let i = ((v.len() as f64 * p).ceil() as usize).clamp(1, v.len()) - 1;
    v.get(i).copied().unwrap_or_default()
}

fn load(url: &str, total: usize, conns: usize) -> (f64, Duration) {
    let per = total / conns;
    let start = Instant::now();
    let handles: Vec<_> = (0..conns)
        .map(|_| {
            let url = url.to_string();
            std::thread::spawn(move || {
                let agent = ureq::AgentBuilder::new()
                    .timeout(Duration::from_secs(30))
                    .build();
                let mut lat = Vec::with_capacity(per);
                for _ in 0..per {
                    let t = Instant::now();
                    let r = agent.get(&url).call().expect("request");
                    let _ = r.into_string();
                    lat.push(t.elapsed());
                }
                lat
            })
        })
        .collect();
    let lat: Vec<Duration> = handles
        .into_iter()
        .flat_map(|h| h.join().expect("client"))
        .collect();
    let secs = start.elapsed().as_secs_f64();
    (lat.len() as f64 / secs, pctl(lat, 0.99))
}

struct Daemon(Child);
impl Drop for Daemon {
    fn drop(&mut self) {
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let _ = self.0.wait();
    }
}

fn main() {
    let n: usize = std::env::var("SERVE_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4000);
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("w.db");
    let tok = dir.path().join("tok");
    run(&db, &["genesis"]);
    run(
        &db,
        &[
            "publish",
            "--manifest",
            "fixtures/transitions/manifest.json",
            "--yes",
        ],
    );
    run(
        &db,
        &[
            "session",
            "mint",
            "--episode",
            "ep1",
            "--grant",
            "world.apply=world:10",
            "--yes",
            "--out",
            tok.to_str().expect("utf8"),
        ],
    );
    let token = std::fs::read_to_string(&tok)
        .expect("token")
        .trim()
        .to_string();

    // Baseline: `world invoke echo` in a loop (process start, store open, lock, commit).
    let k = 20;
    let t = Instant::now();
    for i in 0..k {
        run(
            &db,
            &[
                "-q",
                "invoke",
                "echo",
                "--session",
                tok.to_str().expect("utf8"),
                "--args",
                &format!("{{\"i\":{i}}}"),
            ],
        );
    }
    let invoke_rate = k as f64 / t.elapsed().as_secs_f64();

    let mut child = Command::new(world())
        .arg("--db")
        .arg(&db)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("listening line");
    let _daemon = Daemon(child);
    let base = line
        .trim()
        .strip_prefix("world listening on ")
        .expect("listening line")
        .to_string();

    let (h_rps, h_p99) = load(&format!("{base}/v1/health"), n, 16);
    let (l_rps, l_p99) = load(&format!("{base}/v1/log/0"), n, 16);

    let agent = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(30))
        .build();
    let calls = 200;
    let t = Instant::now();
    for i in 0..calls {
        let body = format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"i\":{i}}}}}}}");
        let r = agent
            .post(&format!("{base}/mcp/"))
            .set("Authorization", &format!("Bearer {token}"))
            .set("Content-Type", "application/json")
            .set("Accept", "application/json, text/event-stream")
            .send_string(&body)
            .expect("tools/call");
        let text = r.into_string().expect("body");
        assert!(text.contains("structuredContent"), "{text}");
    }
    let call_rate = calls as f64 / t.elapsed().as_secs_f64();

    println!("serve bench (loopback, 16 connections, {n} requests per GET route)");
    println!(
        "GET /v1/health   {h_rps:>9.0} req/s   p99 {:>7.2} ms",
        h_p99.as_secs_f64() * 1e3
    );
    println!(
        "GET /v1/log/0    {l_rps:>9.0} req/s   p99 {:>7.2} ms",
        l_p99.as_secs_f64() * 1e3
    );
    println!("MCP tools/call echo (sequential, {calls} calls)   {call_rate:>7.1} calls/s");
    println!("world invoke echo (process per call, {k} calls)   {invoke_rate:>7.1} calls/s");
    println!(
        "tools/call speed-up over world invoke: {:.1}x",
        call_rate / invoke_rate
    );
}
