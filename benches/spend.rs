//! Per-effect decision cost against episode length (authority-and-broker.md §7.4, §8): the
//! broker seeds the grants from the episode's spend and mints the next ordinal before every
//! effect. Measures, in one process on one store, the cost of that step at 100 and at 10,000
//! earlier intents of the episode, for the full scan (`spend_full_scan` +
//! `next_ordinal_full_scan`, the code before the cache) and for the incremental tally
//! (`tally_at_transaction_start`, as `Broker::execute` calls it), and prints the ratio
//! cost(10,000) / cost(100) of each. A ratio near 1 means the cost does not grow with N.
//!
//! Each measured request is what the broker does: `BEGIN IMMEDIATE`, seed + ordinal (timed),
//! append the intent, commit. The whole request is timed too. Also prints the cold cost (first
//! request of a fresh process, cache empty).
//!
//! The old full scan joins `objects` first (the planner picks `objects_by_semantic_id`), then
//! walks the episode's id range for each intent object: O(N²) per request, so at the large N
//! it is measured over few requests.
//!
//! `cargo bench --bench spend` (requests per point from `SPEND_BENCH_REQUESTS`, default 30;
//! full-scan requests at the large N from `SPEND_BENCH_OLD_REQUESTS`, default 2; the large N
//! from `SPEND_BENCH_N`, default 10000).

use std::time::{Duration, Instant};

use world::broker::spend::{
    clear_cache, next_ordinal_full_scan, spend_full_scan, tally_at_transaction_start,
};
use world::store::journal::{self, EffectIntent, Kind};
use world::store::{Store, WriteOptions};

const EPISODE: &str = "ep1";

fn intent(ordinal: i64, episode: &str) -> (String, Vec<u8>) {
    let id = format!("effect:{episode}:{ordinal}");
    let payload = EffectIntent {
        invocation_id: id.clone(),
        episode_id: episode.into(),
        ordinal,
        effect: "Workspace.Read".into(),
        scope: if ordinal % 2 == 0 { "worktree" } else { "repo" }.into(),
        cost: 1,
        request_ref: format!("sha256:{}", "0".repeat(64)),
        logical_time: 1_700_000_000,
    }
    .payload();
    (id, payload)
}

fn append(conn: &rusqlite::Connection, ordinal: i64, episode: &str) {
    let (id, payload) = intent(ordinal, episode);
    journal::append(conn, Kind::Intent, &id, journal::EFFECT_INTENT, payload)
        .unwrap_or_else(|e| panic!("append {id}: {e}"));
}

/// Grow the episode to `n` intents (plus one other episode's intent every ten, sharing the
/// `ep1` prefix) in one transaction.
fn grow_to(store: &mut Store, have: &mut i64, n: i64) {
    let tx = store.immediate().unwrap_or_else(|e| panic!("tx: {e}"));
    while *have < n {
        *have += 1;
        append(&tx, *have, EPISODE);
        if *have % 10 == 0 {
            append(&tx, *have, "ep10");
        }
    }
    tx.commit().unwrap_or_else(|e| panic!("commit: {e}"));
}

#[derive(Clone, Copy)]
enum Way {
    FullScan,
    Incremental,
}

/// One broker-shaped request; returns (decision time, whole request time).
fn request(store: &mut Store, have: &mut i64, way: Way) -> (Duration, Duration) {
    let start = Instant::now();
    let tx = store.immediate().unwrap_or_else(|e| panic!("tx: {e}"));
    let ordinal = match way {
        Way::FullScan => {
            let spend = spend_full_scan(&tx, EPISODE).unwrap_or_else(|e| panic!("spend: {e}"));
            std::hint::black_box(spend);
            next_ordinal_full_scan(&tx, EPISODE).unwrap_or_else(|e| panic!("ordinal: {e}"))
        }
        Way::Incremental => {
            let t = tally_at_transaction_start(&tx, EPISODE).unwrap_or_else(|e| panic!("{e}"));
            std::hint::black_box(t.spend_map().unwrap_or_else(|e| panic!("spend: {e}")));
            t.next_ordinal()
        }
    };
    let decided = start.elapsed();
    let ordinal = ordinal.unwrap_or_else(|| panic!("ordinal space exhausted"));
    assert_eq!(ordinal, *have + 1, "ordinal");
    append(&tx, ordinal, EPISODE);
    *have = ordinal;
    tx.commit().unwrap_or_else(|e| panic!("commit: {e}"));
    (decided, start.elapsed())
}

/// Mean (decision, request) per request over `k` requests, after one warm-up request for the
/// incremental way (the full scan keeps nothing between requests).
fn measure(store: &mut Store, have: &mut i64, way: Way, k: u32) -> (Duration, Duration) {
    if let Way::Incremental = way {
        request(store, have, way);
    }
    let (mut d, mut r) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..k {
        let (a, b) = request(store, have, way);
        d += a;
        r += b;
    }
    (d / k, r / k)
}

fn cold(store: &mut Store) -> Duration {
    clear_cache();
    let start = Instant::now();
    let tx = store.immediate().unwrap_or_else(|e| panic!("tx: {e}"));
    let t = tally_at_transaction_start(&tx, EPISODE).unwrap_or_else(|e| panic!("{e}"));
    std::hint::black_box(t.spend_map().unwrap_or_else(|e| panic!("spend: {e}")));
    drop(tx);
    start.elapsed()
}

fn env(name: &str, default: i64) -> i64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let k = u32::try_from(env("SPEND_BENCH_REQUESTS", 30).max(1)).unwrap_or(30);
    let big = env("SPEND_BENCH_N", 10_000).max(200);
    let old_k = u32::try_from(env("SPEND_BENCH_OLD_REQUESTS", 2).max(1)).unwrap_or(2);
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let mut store = Store::open_write(
        &dir.path().join("world.db"),
        WriteOptions {
            create: true,
            wait_lock: None,
        },
    )
    .unwrap_or_else(|e| panic!("store: {e}"));
    let mut have = 0i64;

    let mut rows = Vec::new();
    for n in [100, big] {
        grow_to(&mut store, &mut have, n);
        let k_old = if n == 100 { k } else { old_k };
        let old = measure(&mut store, &mut have, Way::FullScan, k_old);
        let new = measure(&mut store, &mut have, Way::Incremental, k);
        let cold = cold(&mut store);
        rows.push((n, old, new, cold));
    }
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!("per-effect cost, mean of {k} requests (µs): decision = seed + ordinal; request = BEGIN IMMEDIATE .. COMMIT");
    println!(
        "{:>8} {:>14} {:>14} {:>14} {:>14} {:>12}",
        "prior", "old decision", "new decision", "old request", "new request", "new cold"
    );
    for (n, old, new, cold) in &rows {
        println!(
            "{n:>8} {:>14.1} {:>14.1} {:>14.1} {:>14.1} {:>12.1}",
            us(old.0),
            us(new.0),
            us(old.1),
            us(new.1),
            us(*cold)
        );
    }
    if let [(_, o1, n1, c1), (nb, o2, n2, c2)] = rows.as_slice() {
        let r = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-12);
        println!("ratio cost({nb}) / cost(100):");
        println!(
            "  old (full scan):   decision {:>8.2}   request {:>8.2}",
            r(o2.0, o1.0),
            r(o2.1, o1.1)
        );
        println!(
            "  new (incremental): decision {:>8.2}   request {:>8.2}",
            r(n2.0, n1.0),
            r(n2.1, n1.1)
        );
        println!(
            "  new, cold cache (first request of a process): {:>8.2}",
            r(*c2, *c1)
        );
        println!(
            "speed-up new vs old at {nb}: decision {:.0}x, request {:.1}x",
            r(o2.0, n2.0),
            r(o2.1, n2.1)
        );
    }
}
