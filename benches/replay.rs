//! Replay throughput (issue 6, "Performance"): `world::replay::replay` over an N-entry episode
//! (alternating pure `echo` and effectful `readcount` plan/finish entries on the embedded
//! interpreter) against running exactly the same interpreter calls directly in this process
//! (the pure run; the plan and finish phases with the recorded results). Prints entries/second
//! for both and the ratio replay/direct.
//!
//! The direct calls are timed two ways: from this thread, each handed to the interpreter's
//! worker thread as every ordinary caller's call is (`world invoke`, `serve`: the baseline
//! issue 19 measured), and from one evaluation thread that runs them with no hand-off
//! (`ailang::as_eval_thread`, as replay's runner does since DEC-PERF-12): the bare interpreter
//! calls of issue 34, whose target is replay ≥ 0.8 of them. The last line of the output is
//! that ratio (`REPLAY RATIO …`), with the load average at the start and the end of the run.
//!
//! `REPLAY_BENCH_ONLY=replay`, `=direct` (both direct forms) or `=eval` (the bare calls only)
//! times one side, for profiling it (`valgrind --tool=callgrind --separate-threads=yes`).
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
    // `REPLAY_BENCH_ONLY=replay`, `=direct` or `=eval` times one side only (for profiling).
    let only = std::env::var("REPLAY_BENCH_ONLY").unwrap_or_default();
    let load_before = load_average();
    let (mut direct, mut eval, mut replayed) = (f64::MAX, f64::MAX, f64::MAX);
    // CPU time (user + system, every thread of this process) of each side, best of the rounds:
    // far less sensitive to other processes on the machine than the wall time.
    let (mut eval_cpu, mut replay_cpu) = (f64::MAX, f64::MAX);
    for _ in 0..rounds.max(1) {
        if only.is_empty() || only == "direct" {
            direct = direct.min(run_direct_here());
        }
        if only.is_empty() || only == "direct" || only == "eval" {
            let c = cpu_seconds();
            eval = eval.min(run_direct_eval());
            eval_cpu = eval_cpu.min(cpu_seconds() - c);
        }
        if only.is_empty() || only == "replay" {
            let c = cpu_seconds();
            replayed = replayed.min(run_replay());
            replay_cpu = replay_cpu.min(cpu_seconds() - c);
        }
    }
    let load_after = load_average();

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
        "  ratio replay/direct, calls handed to the worker: {:.3} (issue 19's baseline, target >= 0.9)",
        direct / replayed
    );
    println!(
        "  CPU time (all threads): bare calls {eval_cpu:.3} s, world replay {replay_cpu:.3} s, ratio {:.3} (replay's reads and checks on top of the same calls)",
        eval_cpu / replay_cpu
    );
    let ratio = eval / replayed;
    println!(
        "REPLAY RATIO replay/bare interpreter calls (one evaluation thread): {ratio:.3} (target >= 0.8: {}); load average {load_before} at the start, {load_after} at the end",
        if ratio >= 0.8 { "met" } else { "NOT met" }
    );
}

/// User plus system CPU time of this process so far, every thread, in seconds (`getrusage`).
fn cpu_seconds() -> f64 {
    // SAFETY: `getrusage` only writes the `rusage` it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return f64::NAN;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(u.ru_utime) + secs(u.ru_stime)
}

/// The 1-minute load average from `/proc/loadavg` (`?` where it cannot be read).
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "?".to_string())
}
