//! Replay throughput (issue 6, "Performance"): `world::replay::replay` over an N-entry episode
//! (alternating pure `echo` and effectful `readcount` plan/finish entries on the embedded
//! interpreter) against running exactly the same interpreter calls directly in this process
//! (the pure run; the plan and finish phases with the recorded results). Prints entries/second
//! for both and the ratio replay/direct; the target is ≥ 0.9 (issue 19 §3).
//!
//! The direct calls are timed two ways: from this thread, each handed to the interpreter's
//! worker thread as every ordinary caller's call is (`world invoke`, `serve`: the baseline the
//! issue measured), and from one evaluation thread that runs them with no hand-off
//! (`ailang::as_eval_thread`, as replay's runner does since DEC-PERF-12). The target line uses
//! the first; the second is printed next to it and is the stricter figure.
//!
//! `cargo bench --bench replay` (N from env `REPLAY_BENCH_N`, default 1000; rounds from
//! `REPLAY_BENCH_ROUNDS`, default 3, best of each kept; the episode is built once through the
//! real coordinator, which takes most of the wall time; `REPLAY_BENCH_DB=PATH` keeps that
//! store at PATH and reuses it when PATH exists).

use std::path::Path;
use std::time::Instant;

use world::ailang::Embedded;
use world::encoding::trcjson::{self, Bounds};
use world::interp::capsule;
use world::plan::{self, PhaseResult};
use world::replay::bundle::ReadOnlyPins;
use world::replay::{replay, Options, Selection};
use world::store::records::{EffectRecord, InvocationRecord};
use world::store::Store;

#[path = "common/episode.rs"]
mod episode;

/// One direct interpreter call sequence for an entry.
enum Calls {
    Pure {
        source: Vec<u8>,
        input: Vec<u8>,
    },
    Phases {
        source: Vec<u8>,
        plan: Vec<u8>,
        finish: Vec<u8>,
    },
}

fn main() {
    let n: usize = std::env::var("REPLAY_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let dir = tempfile::tempdir().expect("temp dir");
    // `REPLAY_BENCH_DB=PATH`: build the episode into PATH once and reuse it on later runs
    // (building takes most of the wall time); the timed work is the same either way.
    let kept = std::env::var_os("REPLAY_BENCH_DB").map(std::path::PathBuf::from);
    let db = kept.clone().unwrap_or_else(|| dir.path().join("w.db"));
    let repo = env!("CARGO_MANIFEST_DIR");
    std::env::set_current_dir(repo).expect("cd repo");
    if kept.as_ref().is_some_and(|p| p.exists()) {
        eprintln!("reusing the episode in {}", db.display());
    } else {
        episode::build(&db, dir.path(), n);
    }
    measure(&db, n);
}

/// Time the direct calls against `world replay` over the episode in `db`.
fn measure(db: &Path, n: usize) {
    let db = db.to_path_buf();

    let store = Store::open_read(&db).expect("open read");
    // The direct baseline's inputs, read from the store before timing.
    let mut calls = Vec::new();
    store
        .for_each_log(Some(1), None, false, |e| {
            let rec_obj = store.object(&e.transition_ref)?.expect("record");
            let rec = InvocationRecord::decode(&rec_obj.meta.semantic_id, &rec_obj.payload)
                .expect("decode");
            let source = store.object(&rec.transition_fn)?.expect("source").payload;
            let input = store.object(&rec.input)?.expect("input").payload;
            calls.push(match rec.effects {
                None => Calls::Pure { source, input },
                Some(effects) => {
                    let results: Vec<PhaseResult> = effects
                        .iter()
                        .map(|r| {
                            let o = store.object(r).expect("read").expect("effect record");
                            let er = EffectRecord::decode(&o.payload).expect("decode");
                            let out = store
                                .object(&er.result_ref)
                                .expect("read")
                                .and_then(|x| trcjson::parse(&x.payload, Bounds::PLAN).ok());
                            PhaseResult {
                                id: "r1".into(),
                                effect: er.effect,
                                status: "ok",
                                record: Some(r.clone()),
                                output: out,
                            }
                        })
                        .collect();
                    Calls::Phases {
                        source,
                        plan: plan::plan_input(&input),
                        finish: plan::finish_input(&input, &results),
                    }
                }
            });
            Ok(())
        })
        .expect("log");
    assert_eq!(calls.len(), n);

    let interp = Embedded::new();
    let far = || Instant::now() + std::time::Duration::from_secs(20);
    let run_direct_here = || {
        let t = Instant::now();
        for c in &calls {
            match c {
                Calls::Pure { source, input } => {
                    capsule::run_phase(&interp, source, input, far()).expect("run");
                }
                Calls::Phases {
                    source,
                    plan,
                    finish,
                } => {
                    capsule::run_phase(&interp, source, plan, far()).expect("plan");
                    capsule::run_phase(&interp, source, finish, far()).expect("finish");
                }
            }
        }
        t.elapsed().as_secs_f64()
    };
    // The same calls on one evaluation thread: no hand-off per call.
    let run_direct_eval = || {
        std::thread::scope(|s| {
            std::thread::Builder::new()
                .stack_size(world::ailang::EVAL_STACK_BYTES)
                .spawn_scoped(s, || {
                    world::ailang::as_eval_thread(world::ailang::EVAL_STACK_BYTES, run_direct_here)
                        .expect("direct calls")
                })
                .expect("spawn")
                .join()
                .expect("join")
        })
    };
    let pins = ReadOnlyPins::for_db(&db);
    let run_replay = || {
        let t = Instant::now();
        let report = replay(
            &store,
            &Selection::Episode("ep1".into()),
            &pins,
            &Options::default(),
            &mut |_, _, _| {},
        )
        .expect("replay");
        let took = t.elapsed().as_secs_f64();
        assert_eq!(report.replayed as usize, n);
        assert!(report.ok(), "replay diverged: {:?}", report.entries.last());
        took
    };
    // Alternate the two and keep the best of ROUNDS each: the machine is shared, and the
    // minimum is the least disturbed measurement of the same work.
    let rounds: usize = std::env::var("REPLAY_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    // `REPLAY_BENCH_ONLY=replay` or `=direct` times one side only (for profiling one of them).
    let only = std::env::var("REPLAY_BENCH_ONLY").unwrap_or_default();
    let (mut direct, mut eval, mut replayed) = (f64::MAX, f64::MAX, f64::MAX);
    for _ in 0..rounds.max(1) {
        if only != "replay" {
            direct = direct.min(run_direct_here());
            eval = eval.min(run_direct_eval());
        }
        if only != "direct" {
            replayed = replayed.min(run_replay());
        }
    }

    let rate = |secs: f64| n as f64 / secs;
    println!("replay benchmark: {n} entries (half pure echo, half readcount plan+finish), embedded interpreter, best of {rounds} alternating rounds");
    println!(
        "  direct calls, each handed to the interpreter worker: {direct:.3} s, {:.0} entries/s",
        rate(direct)
    );
    println!(
        "  direct calls on one evaluation thread (no hand-off): {eval:.3} s, {:.0} entries/s",
        rate(eval)
    );
    println!(
        "  world replay:                                        {replayed:.3} s, {:.0} entries/s",
        rate(replayed)
    );
    println!(
        "  ratio replay/direct: {:.3} (target >= 0.9)",
        direct / replayed
    );
    println!(
        "  ratio replay/direct without the hand-off: {:.3} (replay's own reads and checks bound it)",
        eval / replayed
    );
}
