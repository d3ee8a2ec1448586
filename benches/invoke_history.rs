//! Per-call cost against episode history (issue 19 item 1): the wall time of one effectful
//! `world invoke readcount` (one process per call, release binary) in an episode that already
//! has 100 effect intents, against the same call in an episode with 100,000. Prints the median
//! of each and the ratio large/small; the target is ≤ 1.2.
//!
//! The prior effects (an intent and an outcome each, with their payload objects) are written
//! straight into the journal with rusqlite, as another writer (the reference daemon) would leave
//! them: running 100,000 invokes would take most of an hour. One untimed invoke per store then
//! folds them into the persisted tally (`world_spend_tally`, DEC-PERF-1); the timed calls are
//! what every later call of the episode costs. The two stores are timed interleaved so machine
//! noise hits both alike. Also prints the cost of a call that has to rebuild the tally from the
//! whole journal (the table dropped first): the cost every call had before.
//!
//! `cargo bench --bench invoke_history` (calls per store from `HISTORY_BENCH_CALLS`, default 30;
//! the large history from `HISTORY_BENCH_N`, default 100000).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use world::store::journal::{self, EffectIntent, Kind};
use world::store::{Store, WriteOptions};

#[path = "common/shipped.rs"]
mod shipped;

const EPISODE: &str = "ep1";

fn world(db: &Path, args: &[&str]) -> Duration {
    let t = Instant::now();
    let st = Command::new(shipped::world())
        .arg("-q")
        .arg("--db")
        .arg(db)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .expect("run world");
    let d = t.elapsed();
    assert!(st.success(), "world {args:?} failed: {st}");
    d
}

struct Fixture {
    _dir: tempfile::TempDir,
    db: PathBuf,
    token: PathBuf,
}

/// A store with the fixture transitions, a session for [`EPISODE`] and `prior` earlier effects.
fn fixture(prior: i64) -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("w.db");
    let ws = dir.path().join("ws");
    fs::create_dir_all(ws.join(EPISODE)).expect("ws");
    fs::write(ws.join(EPISODE).join("notes.txt"), "one two\nthree\n").expect("notes");
    let token = dir.path().join("tok");
    world(&db, &["genesis"]);
    world(
        &db,
        &[
            "publish",
            "--manifest",
            "fixtures/transitions/manifest.json",
            "--yes",
        ],
    );
    world(
        &db,
        &[
            "session",
            "mint",
            "--episode",
            EPISODE,
            "--grant",
            "world.apply=world:1000000",
            "--grant",
            "Workspace.Read=worktree:1000000000",
            "--workspace-root",
            ws.to_str().expect("utf-8"),
            "--ttl",
            "86400",
            "--yes",
            "--out",
            token.to_str().expect("utf-8"),
        ],
    );
    let mut store = Store::open_write(&db, WriteOptions::default()).expect("open");
    let tx = store.immediate().expect("tx");
    let result = format!("sha256:{}", "1".repeat(64));
    for n in 1..=prior {
        let id = format!("effect:{EPISODE}:{n}");
        let payload = EffectIntent {
            invocation_id: id.clone(),
            episode_id: EPISODE.into(),
            ordinal: n,
            effect: "Workspace.Read".into(),
            scope: "worktree".into(),
            cost: 1,
            request_ref: format!("sha256:{}", "0".repeat(64)),
            logical_time: 1_700_000_000,
        }
        .payload();
        journal::append(&tx, Kind::Intent, &id, journal::EFFECT_INTENT, payload).expect("intent");
        journal::append(
            &tx,
            Kind::Outcome,
            &id,
            journal::EFFECT_OUTCOME,
            journal::effect_outcome_payload(&id, true, &result, 1_700_000_000),
        )
        .expect("outcome");
    }
    tx.commit().expect("commit");
    drop(store);
    Fixture {
        _dir: dir,
        db,
        token,
    }
}

fn invoke(f: &Fixture) -> Duration {
    world(
        &f.db,
        &[
            "invoke",
            "readcount",
            "--session",
            f.token.to_str().expect("utf-8"),
            "--args",
            r#"{"path":"notes.txt"}"#,
        ],
    )
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let calls: usize = std::env::var("HISTORY_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    let large: i64 = std::env::var("HISTORY_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    std::env::set_current_dir(env!("CARGO_MANIFEST_DIR")).expect("cd repo");
    let t = Instant::now();
    let small = fixture(100);
    let big = fixture(large);
    eprintln!(
        "built the stores (100 and {large} prior effects) in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let first_big = invoke(&big);
    invoke(&small);
    let (mut s, mut b) = (Vec::new(), Vec::new());
    for _ in 0..calls {
        s.push(invoke(&small));
        b.push(invoke(&big));
    }
    let (ms_small, ms_big) = (median(s), median(b));
    // The old cost: a call that folds the whole journal (no persisted tally).
    let conn = rusqlite::Connection::open(&big.db).expect("open");
    conn.execute_batch("DROP TABLE world_spend_tally")
        .expect("drop tally");
    drop(conn);
    let cold = invoke(&big);
    println!(
        "effectful invoke, one process per call, median of {calls}: after 100 prior effects {:.2} ms, after {large} {:.2} ms, ratio {:.3} (target <= 1.2)",
        ms(ms_small),
        ms(ms_big),
        ms(ms_big) / ms(ms_small)
    );
    println!(
        "first call after {large} effects written by another writer (folds them into the tally): {:.1} ms; a call with the tally table dropped (full fold, the cost before the persisted tally): {:.1} ms",
        ms(first_big),
        ms(cold)
    );
}
