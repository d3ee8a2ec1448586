//! Ledger throughput (issue 7, "Performance"): reserve + dispatch + settle cycles per second
//! through `world::limits` at chain depths 1, 3 and 6, against a bare rusqlite transaction
//! doing the same number of row writes per command, and `report` on 10,000 scopes.
//!
//! Both sides use a standalone ledger file's settings (WAL, synchronous=FULL) in a temp dir
//! and one `BEGIN IMMEDIATE` transaction per command. Run: `cargo bench --bench limits`
//! (`LIMITS_BENCH_CYCLES=N` changes the cycle count, default 300).

use rusqlite::{params, Connection, TransactionBehavior};
use std::time::{Duration, Instant};
use world::ledger::{ActorKind, Amount};
use world::limits::{ActorFacts, Command, Ledger, NoEvidence, Outcome, Purpose, Request};

fn chain_config(depth: usize) -> Vec<u8> {
    let mut scopes = vec![
        r#"{"scopeId":"s0","kind":"WORK_ORDER","limits":{"cost":"1000000000000","handoff":"10","attempts":"1000000000"}}"#
            .to_string(),
    ];
    for i in 1..depth {
        let kind = if i == 1 { "RUN" } else { "BRANCH" };
        scopes.push(format!(
            r#"{{"scopeId":"s{i}","kind":"{kind}","parentId":"s{}"}}"#,
            i - 1
        ));
    }
    format!(
        r#"{{"profile":"aiws-limits/1","ledgerId":"bench","unit":"u","scopes":[{}]}}"#,
        scopes.join(",")
    )
    .into_bytes()
}

fn run(ledger: &Ledger<'_>, id: String, cmd: Command, now: u128) {
    let host = ActorFacts::new(ActorKind::Host, "host:bench", now);
    if let Err(e) = ledger.execute(&Request::new(id, cmd), &host, now, &NoEvidence) {
        eprintln!("bench command failed: {e}");
        std::process::exit(1);
    }
}

fn ledger_cycles(depth: usize, cycles: usize) -> Duration {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let ledger = Ledger::create_standalone(&dir.path().join("ledger.db"))
        .unwrap_or_else(|e| panic!("open: {e}"));
    run(
        &ledger,
        "init".into(),
        Command::Init {
            config: chain_config(depth),
        },
        0,
    );
    let leaf = format!("s{}", depth - 1);
    let start = Instant::now();
    for i in 0..cycles {
        let now = i as u128 + 1;
        let a = format!("a{i}");
        run(
            &ledger,
            format!("r{i}"),
            Command::Reserve {
                attempt_id: a.clone(),
                operation_id: a.clone(),
                scope_id: leaf.clone(),
                run_id: None,
                purpose: Purpose::Ordinary,
                amount: Amount(5),
                max_active_ms: Amount(100),
                paired: false,
            },
            now,
        );
        run(
            &ledger,
            format!("d{i}"),
            Command::Dispatch {
                attempt_id: a.clone(),
            },
            now,
        );
        run(
            &ledger,
            format!("s{i}"),
            Command::Settle {
                attempt_id: a,
                outcome: Outcome::Succeeded,
                actual_cost: Some(Amount(3)),
                effect_outcome: false,
            },
            now,
        );
    }
    start.elapsed()
}

/// The same number of row writes per command (attempt row, one update per chain scope, event,
/// request, meta), with no reads, checks or hashing.
fn bare_cycles(depth: usize, cycles: usize) -> Duration {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let conn = Connection::open(dir.path().join("bare.db")).unwrap_or_else(|e| panic!("{e}"));
    conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
        .unwrap_or_else(|e| panic!("{e}"));
    conn.execute_batch(
        "PRAGMA synchronous=FULL;
         CREATE TABLE scopes (id TEXT PRIMARY KEY, usage TEXT NOT NULL);
         CREATE TABLE attempts (id TEXT PRIMARY KEY, state TEXT NOT NULL);
         CREATE TABLE events (rev INTEGER PRIMARY KEY, body TEXT NOT NULL);
         CREATE TABLE requests (id TEXT PRIMARY KEY, result TEXT NOT NULL);
         CREATE TABLE meta (id INTEGER PRIMARY KEY, rev INTEGER NOT NULL);
         INSERT INTO meta VALUES (1, 0);",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for s in 0..depth {
        conn.execute("INSERT INTO scopes VALUES (?1, '0')", [format!("s{s}")])
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let mut rev: i64 = 0;
    let start = Instant::now();
    for i in 0..cycles {
        for step in 0..3 {
            rev += 1;
            let tx = rusqlite::Transaction::new_unchecked(&conn, TransactionBehavior::Immediate)
                .unwrap_or_else(|e| panic!("{e}"));
            let a = format!("a{i}");
            if step == 0 {
                tx.execute("INSERT INTO attempts VALUES (?1, 'RESERVED')", [&a])
            } else {
                tx.execute(
                    "UPDATE attempts SET state = ?1 WHERE id = ?2",
                    params![step, a],
                )
            }
            .unwrap_or_else(|e| panic!("{e}"));
            for s in 0..depth {
                tx.execute(
                    "UPDATE scopes SET usage = ?1 WHERE id = ?2",
                    params![rev.to_string(), format!("s{s}")],
                )
                .unwrap_or_else(|e| panic!("{e}"));
            }
            tx.execute("INSERT INTO events VALUES (?1, 'event body')", [rev])
                .unwrap_or_else(|e| panic!("{e}"));
            tx.execute(
                "INSERT INTO requests VALUES (?1, 'ok')",
                [format!("q{rev}")],
            )
            .unwrap_or_else(|e| panic!("{e}"));
            tx.execute("UPDATE meta SET rev = ?1 WHERE id = 1", [rev])
                .unwrap_or_else(|e| panic!("{e}"));
            tx.commit().unwrap_or_else(|e| panic!("{e}"));
        }
    }
    start.elapsed()
}

fn wide_config(scopes: usize) -> Vec<u8> {
    let runs = 99;
    let mut out = vec![r#"{"scopeId":"wo","kind":"WORK_ORDER","limits":{"cost":"1000000","handoff":"100","activeMs":"100000000"}}"#.to_string()];
    for r in 0..runs {
        out.push(format!(
            r#"{{"scopeId":"r{r}","kind":"RUN","parentId":"wo"}}"#
        ));
    }
    let mut b = 0;
    while out.len() < scopes {
        let r = b % runs;
        let deps = if b % 50 == 49 {
            format!(r#","dependsOn":["b{}"]"#, b - 1)
        } else {
            String::new()
        };
        out.push(format!(
            r#"{{"scopeId":"b{b}","kind":"BRANCH","parentId":"r{r}"{deps}}}"#
        ));
        b += 1;
    }
    format!(
        r#"{{"profile":"aiws-limits/1","ledgerId":"wide","unit":"u","scopes":[{}]}}"#,
        out.join(",")
    )
    .into_bytes()
}

fn main() {
    let cycles: usize = std::env::var("LIMITS_BENCH_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    println!("limits ledger: reserve+dispatch+settle cycles (3 IMMEDIATE transactions each), {cycles} cycles, WAL + synchronous=FULL");
    println!(
        "{:>5} {:>14} {:>14} {:>7}",
        "depth", "ledger cyc/s", "bare cyc/s", "ratio"
    );
    for depth in [1usize, 3, 6] {
        let l = ledger_cycles(depth, cycles);
        let b = bare_cycles(depth, cycles);
        let lr = cycles as f64 / l.as_secs_f64();
        let br = cycles as f64 / b.as_secs_f64();
        println!("{depth:>5} {lr:>14.1} {br:>14.1} {:>7.2}", lr / br);
    }

    let n = 10_000;
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let ledger = Ledger::create_standalone(&dir.path().join("wide.db"))
        .unwrap_or_else(|e| panic!("open: {e}"));
    let t0 = Instant::now();
    run(
        &ledger,
        "init".into(),
        Command::Init {
            config: wide_config(n),
        },
        0,
    );
    let init = t0.elapsed();
    for i in 0..200u128 {
        let a = format!("w{i}");
        run(
            &ledger,
            format!("wr{i}"),
            Command::Reserve {
                attempt_id: a.clone(),
                operation_id: a.clone(),
                scope_id: format!("b{}", i * 37),
                run_id: None,
                purpose: Purpose::Ordinary,
                amount: Amount(7),
                max_active_ms: Amount(50),
                paired: false,
            },
            1,
        );
        if i % 2 == 0 {
            run(
                &ledger,
                format!("wd{i}"),
                Command::Dispatch { attempt_id: a },
                1,
            );
        }
    }
    let mut times = Vec::new();
    let mut size = 0;
    for _ in 0..5 {
        let t = Instant::now();
        let report = ledger
            .report(1000, None)
            .unwrap_or_else(|e| panic!("report: {e}"));
        times.push(t.elapsed());
        size = serde_json::to_vec(&report).map(|v| v.len()).unwrap_or(0);
    }
    times.sort();
    println!(
        "report on {n} scopes (200 attempts, 100 live): median {:.1} ms, min {:.1} ms, {} bytes of JSON; init of the config {:.1} ms",
        times[2].as_secs_f64() * 1e3,
        times[0].as_secs_f64() * 1e3,
        size,
        init.as_secs_f64() * 1e3
    );
}
