//! Mission throughput (issue 15, "Performance"): admit + dispatch + settle cycles per second
//! through `world::mission` (the durable store boundary) and through the `world mission` CLI,
//! with grant chains of depth 1 and 4, and on a mission already holding 100,000 settled
//! attempts — each as a ratio against a bare rusqlite baseline that performs the same number
//! of row writes (counted with `total_changes` on the mission side) in the same number of
//! `BEGIN IMMEDIATE` transactions, in the same process.
//!
//! Each baseline runs in the journal mode of the file it is compared with, both with
//! `synchronous=FULL`: the library side writes a WAL file (as a standalone `--ledger` file is),
//! the CLI side writes a World store, which `world` never switches out of SQLite's default
//! rollback journal (store-format.md DEC-STORE-1) — a commit there costs more fsyncs than in
//! WAL, and a WAL baseline would charge that to the mission code. Run: `cargo bench --bench
//! mission` (`MISSION_BENCH_CYCLES=N`, default 300; `MISSION_BENCH_SETTLED=N`, default 100000).

use std::path::Path;
use std::process::Command as Proc;
use std::time::{Duration, Instant};

use rusqlite::{params, Connection, TransactionBehavior};
use serde_json::json;
use world::ledger::Amount;
use world::mission::durable::{self, MissionStore, Request, SqliteMissions};
use world::mission::{Actor, Command, Contract};

#[path = "common/shipped.rs"]
mod shipped;

/// The journal mode a side writes in.
#[derive(Clone, Copy)]
enum Mode {
    /// WAL, as a standalone ledger file.
    Wal,
    /// SQLite's default rollback journal, as a World store.
    Rollback,
}

fn open(path: &Path) -> Connection {
    open_in(path, Mode::Wal)
}

fn open_in(path: &Path, mode: Mode) -> Connection {
    let conn = Connection::open(path).unwrap_or_else(|e| panic!("{e}"));
    if let Mode::Wal = mode {
        conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
            .unwrap_or_else(|e| panic!("{e}"));
    }
    conn.execute_batch("PRAGMA synchronous=FULL;")
        .unwrap_or_else(|e| panic!("{e}"));
    conn
}

fn contract() -> Contract {
    let c = json!({"id": "c", "missionId": "m", "aiwsEdition": "0.4", "profile": "finite-v1",
        "budget": "1000000000000", "deadline": "100000000000000", "criteria": ["review"],
        "actions": ["write"], "resources": ["doc"], "requiresApproval": false,
        "maxAttempts": "2", "maxAuthorizationAgeMs": "1000000000", "features": []});
    Contract::parse(&serde_json::to_vec(&c).unwrap_or_default()).unwrap_or_else(|e| panic!("{e}"))
}

fn cmd(v: serde_json::Value) -> Command {
    Command::parse(&serde_json::to_vec(&v).unwrap_or_default()).unwrap_or_else(|e| panic!("{e}"))
}

/// The setup commands: a run and a grant chain of `depth` grants (g0 root … g{depth-1}).
fn setup_cmds(depth: usize) -> Vec<serde_json::Value> {
    let mut out = vec![json!({"type": "startRun", "runId": "r"})];
    for d in 0..depth {
        let mut v = json!({"type": "grant", "grant": {"id": format!("g{d}"), "subject": "agent",
            "profile": "finite-v1", "actions": ["write"], "resources": ["doc"], "notBefore": "0",
            "expiresAt": "100000000000000", "limit": "1000000000000", "canDelegate": true,
            "depth": (depth - d).to_string()}});
        if d > 0 {
            v["parentId"] = format!("g{}", d - 1).into();
        }
        out.push(v);
    }
    out
}

fn cycle_cmds(i: usize, leaf: &str) -> [serde_json::Value; 3] {
    let a = format!("a{i}");
    [
        json!({"type": "admit", "runId": "r", "operationId": format!("o{i}"), "attemptId": a, "grantId": leaf,
            "subject": "agent", "action": {"capability": "write", "resource": "doc", "payload": {"n": i},
            "preconditions": {}}, "amount": "5", "authorizationCheckedAt": "10", "policy": "ALLOW",
            "mandatoryChecksOk": true}),
        json!({"type": "dispatch", "attemptId": a}),
        json!({"type": "settle", "attemptId": a, "outcome": "SUCCEEDED", "actualCost": "3"}),
    ]
}

/// A mission file with its chain set up and `settled` settled attempts already (written in
/// batches of one transaction each, only to build the starting state).
fn prepared(path: &Path, depth: usize, settled: usize) -> Connection {
    let conn = open(path);
    let m = SqliteMissions::new(&conn);
    m.create(&contract(), &Actor::host(), false, Amount(0))
        .unwrap_or_else(|e| panic!("{e}"));
    for v in setup_cmds(depth) {
        m.apply(
            "m",
            &Request {
                command: cmd(v),
                request_id: None,
                implicit_now: false,
            },
            &Actor::host(),
            Amount(10),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    let leaf = format!("g{}", depth - 1);
    for chunk in (0..settled).collect::<Vec<_>>().chunks(5000) {
        let tx = rusqlite::Transaction::new_unchecked(&conn, TransactionBehavior::Immediate)
            .unwrap_or_else(|e| panic!("{e}"));
        for &i in chunk {
            for v in cycle_cmds(1_000_000_000 + i, &leaf) {
                durable::apply_in(
                    &tx,
                    "m",
                    &Request {
                        command: cmd(v),
                        request_id: None,
                        implicit_now: false,
                    },
                    &Actor::host(),
                    Amount(10),
                )
                .unwrap_or_else(|e| panic!("{e}"));
            }
        }
        tx.commit().unwrap_or_else(|e| panic!("{e}"));
    }
    conn
}

/// Library cycles; returns the time and the row writes per cycle.
fn library(conn: &Connection, depth: usize, cycles: usize) -> (Duration, u64) {
    let m = SqliteMissions::new(conn);
    let leaf = format!("g{}", depth - 1);
    let cmds: Vec<[Command; 3]> = (0..cycles).map(|i| cycle_cmds(i, &leaf).map(cmd)).collect();
    let before = conn.total_changes();
    let start = Instant::now();
    for c in cmds {
        for command in c {
            m.apply(
                "m",
                &Request {
                    command,
                    request_id: None,
                    implicit_now: false,
                },
                &Actor::host(),
                Amount(10),
            )
            .unwrap_or_else(|e| panic!("{e}"));
        }
    }
    let t = start.elapsed();
    (t, (conn.total_changes() - before) / cycles as u64)
}

/// `writes` row writes per cycle in 3 IMMEDIATE transactions, no reads, checks or hashing,
/// in journal mode `mode`.
fn bare(path: &Path, writes: u64, cycles: usize, mode: Mode) -> Duration {
    let conn = open_in(path, mode);
    conn.execute_batch("CREATE TABLE rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL);")
        .unwrap_or_else(|e| panic!("{e}"));
    let per = [writes / 3 + writes % 3, writes / 3, writes / 3];
    let mut id: i64 = 0;
    let start = Instant::now();
    for _ in 0..cycles {
        for n in per {
            let tx = rusqlite::Transaction::new_unchecked(&conn, TransactionBehavior::Immediate)
                .unwrap_or_else(|e| panic!("{e}"));
            for _ in 0..n {
                id += 1;
                tx.execute(
                    "INSERT INTO rows VALUES (?1, ?2)",
                    params![id, "a row body of about mission size"],
                )
                .unwrap_or_else(|e| panic!("{e}"));
            }
            tx.commit().unwrap_or_else(|e| panic!("{e}"));
        }
    }
    start.elapsed()
}

/// CLI cycles: one `world mission apply --commands` process, each command its own transaction.
fn cli(dir: &Path, depth: usize, cycles: usize) -> Duration {
    let db = dir.join("cli.db");
    let run = |args: &[&str]| {
        let o = Proc::new(shipped::world())
            .env("WORLD_DB", &db)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    run(&["genesis"]);
    let c = dir.join("contract.json");
    std::fs::write(&c, &contract().canonical).unwrap_or_else(|e| panic!("{e}"));
    run(&[
        "mission",
        "create",
        "--contract",
        c.to_str().unwrap_or_default(),
        "--yes",
        "--now",
        "0",
    ]);
    let setup: Vec<String> = setup_cmds(depth).iter().map(|v| v.to_string()).collect();
    std::fs::write(dir.join("setup.jsonl"), setup.join("\n")).unwrap_or_else(|e| panic!("{e}"));
    run(&[
        "-q",
        "mission",
        "apply",
        "m",
        "--commands",
        dir.join("setup.jsonl").to_str().unwrap_or_default(),
        "--now",
        "10",
    ]);
    let leaf = format!("g{}", depth - 1);
    let lines: Vec<String> = (0..cycles)
        .flat_map(|i| cycle_cmds(i, &leaf).map(|v| v.to_string()))
        .collect();
    let f = dir.join("cycles.jsonl");
    std::fs::write(&f, lines.join("\n")).unwrap_or_else(|e| panic!("{e}"));
    let start = Instant::now();
    run(&[
        "-q",
        "mission",
        "apply",
        "m",
        "--commands",
        f.to_str().unwrap_or_default(),
        "--now",
        "10",
    ]);
    start.elapsed()
}

fn main() {
    let env = |k: &str, d: usize| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let cycles = env("MISSION_BENCH_CYCLES", 300);
    let settled = env("MISSION_BENCH_SETTLED", 100_000);
    println!("missions: admit+dispatch+settle cycles (3 IMMEDIATE transactions each), {cycles} cycles, synchronous=FULL; each baseline in its side's journal mode");
    println!(
        "{:<34} {:>5} {:>10} {:>12} {:>12} {:>7}",
        "path", "depth", "rows/cyc", "mission c/s", "bare c/s", "ratio"
    );
    let mut fresh_rate = [0.0f64; 2];
    for (k, depth) in [1usize, 4].into_iter().enumerate() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let conn = prepared(&dir.path().join("lib.db"), depth, 0);
        let (t, writes) = library(&conn, depth, cycles);
        let b = bare(&dir.path().join("bare.db"), writes, cycles, Mode::Wal);
        let (mr, br) = (
            cycles as f64 / t.as_secs_f64(),
            cycles as f64 / b.as_secs_f64(),
        );
        fresh_rate[k] = mr;
        println!(
            "{:<34} {depth:>5} {writes:>10} {mr:>12.1} {br:>12.1} {:>7.2}",
            "library, WAL (fresh mission)",
            mr / br
        );
        let t = cli(dir.path(), depth, cycles);
        let b = bare(&dir.path().join("bare2.db"), writes, cycles, Mode::Rollback);
        let (mr, br) = (
            cycles as f64 / t.as_secs_f64(),
            cycles as f64 / b.as_secs_f64(),
        );
        println!(
            "{:<34} {depth:>5} {writes:>10} {mr:>12.1} {br:>12.1} {:>7.2}",
            "cli apply --commands, store (fresh)",
            mr / br
        );
    }
    for (k, depth) in [1usize, 4].into_iter().enumerate() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let build = Instant::now();
        let conn = prepared(&dir.path().join("big.db"), depth, settled);
        eprintln!(
            "(built a mission with {settled} settled attempts in {:.1} s)",
            build.elapsed().as_secs_f64()
        );
        let (t, writes) = library(&conn, depth, cycles);
        let b = bare(&dir.path().join("bare.db"), writes, cycles, Mode::Wal);
        let (mr, br) = (
            cycles as f64 / t.as_secs_f64(),
            cycles as f64 / b.as_secs_f64(),
        );
        println!(
            "{:<34} {depth:>5} {writes:>10} {mr:>12.1} {br:>12.1} {:>7.2}   (vs fresh: {:.2})",
            format!("library, WAL ({settled} settled)"),
            mr / br,
            mr / fresh_rate[k]
        );
    }
}
