//! Candidate replay throughput (issue 32 §5): `world replay --transition …` over an exported
//! N-entry episode bundle against today's plain `world replay` of the same bundle, in the same
//! run. Target: candidate speed ≥ 0.8 × plain replay speed (ratio = plain time / candidate
//! time).
//!
//! The episode (alternating pure `echo` and effectful `readcount` plan+finish entries on the
//! embedded interpreter) is built once through the real coordinator (benches/common/episode.rs)
//! and exported with `world export-episode`; both sides then run `world::ops::replay::replay`
//! — what `world replay --db BUNDLE --episode ep1` runs — on that bundle. The candidate names
//! both transitions with a cosmetically changed source (a comment line prepended), so every
//! entry is re-run with the candidate's source and gets the verdict `same`: the candidate
//! path's whole per-entry work (plan, recorded results fed back, finish, output comparison and
//! verdict) is timed, with no early stop.
//!
//! `cargo bench --bench candidate` (N from env `CANDIDATE_BENCH_N`, default 10000; rounds from
//! `CANDIDATE_BENCH_ROUNDS`, default 3, best of each kept, the two sides alternating;
//! `CANDIDATE_BENCH_DB=PATH` keeps the built store at PATH and reuses it when it exists).

use std::path::{Path, PathBuf};
use std::time::Instant;

use world::ops::replay::{replay, CandidateSpec, Options};
use world::replay::{Options as ReplayOptions, Report, Selection};
use world::store::Store;

#[path = "common/episode.rs"]
mod episode;

fn main() {
    let n: usize = std::env::var("CANDIDATE_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let rounds: usize = std::env::var("CANDIDATE_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let dir = tempfile::tempdir().expect("temp dir");
    let kept = std::env::var_os("CANDIDATE_BENCH_DB").map(PathBuf::from);
    let db = kept.clone().unwrap_or_else(|| dir.path().join("w.db"));
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::env::set_current_dir(repo).expect("cd repo");
    if kept.as_ref().is_some_and(|p| p.exists()) {
        eprintln!("reusing the episode in {}", db.display());
    } else {
        episode::build(&db, dir.path(), n);
    }
    let bundle = dir.path().join("ep1.bundle.db");
    let t = Instant::now();
    episode::cli(
        &db,
        &[
            "export-episode",
            "ep1",
            "--out",
            bundle.to_str().expect("utf-8"),
        ],
    );
    eprintln!("exported the episode in {:.1} s", t.elapsed().as_secs_f64());

    // Cosmetic candidates of both transitions: same behaviour, other transitionFn.
    let mut transitions = Vec::new();
    for id in ["echo", "readcount"] {
        let src = std::fs::read_to_string(repo.join(format!("fixtures/transitions/{id}.ail")))
            .expect("fixture source");
        let path = dir.path().join(format!("{id}-candidate.ail"));
        std::fs::write(&path, format!("-- candidate (benchmark)\n{src}")).expect("write");
        transitions.push((id.to_string(), path));
    }
    let opts = |candidate: Option<CandidateSpec>| Options {
        selection: Selection::Episode("ep1".into()),
        db: bundle.clone(),
        replay: ReplayOptions::default(),
        candidate,
    };
    let plain = opts(None);
    let cand = opts(Some(CandidateSpec {
        transitions,
        base_dir: repo.to_path_buf(),
        ..CandidateSpec::default()
    }));
    let store = Store::open_read(&bundle).expect("open the bundle");
    let run = |o: &Options| -> (f64, Report) {
        let t = Instant::now();
        let (report, _) = replay(&store, o, &mut |_, _, _| {}).expect("replay");
        (t.elapsed().as_secs_f64(), report)
    };
    let (mut best_plain, mut best_cand) = (f64::MAX, f64::MAX);
    for _ in 0..rounds.max(1) {
        let (secs, r) = run(&plain);
        assert!(
            r.ok() && r.replayed as usize == n,
            "plain replay: ok {}, {} of {n} replayed",
            r.ok(),
            r.replayed
        );
        best_plain = best_plain.min(secs);
        let (secs, r) = run(&cand);
        assert!(r.ok(), "candidate replay diverged");
        assert_eq!(r.reran as usize, n, "every entry re-run with the candidate");
        assert_eq!(r.changed, 0, "a cosmetic candidate changed a verdict");
        best_cand = best_cand.min(secs);
    }
    let rate = |secs: f64| n as f64 / secs;
    println!("candidate replay benchmark: {n}-entry exported episode bundle (half pure echo, half readcount plan+finish), embedded interpreter, best of {rounds} alternating rounds");
    println!(
        "  world replay (plain):                       {best_plain:.3} s, {:.0} entries/s",
        rate(best_plain)
    );
    println!(
        "  world replay --transition echo=… readcount=…: {best_cand:.3} s, {:.0} entries/s (every verdict same)",
        rate(best_cand)
    );
    println!(
        "  ratio candidate/plain speed: {:.3} (target >= 0.8)",
        best_plain / best_cand
    );
}
