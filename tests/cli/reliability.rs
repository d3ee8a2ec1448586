//! Reliability (issue 2): racing writers on one observed head, and `kill -9` at random points.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::{ro, tip_via_cli, write_batch, Rng, TestEnv};

fn spawn_commit(env: &TestEnv, file: &std::path::Path) -> Child {
    env.std_cmd()
        .args(["--wait-lock", "5", "commit", file.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Two processes commit different worlds on the same observed head, 200 rounds: exactly one
/// lands per round, the other gets a head conflict, and the log length equals the successes.
#[test]
fn racing_commits_on_one_head_exactly_one_lands() {
    let env = TestEnv::new();
    let mut tip = env.genesis();
    let mut successes = 0i64;
    for round in 0..200 {
        let a = tip.next(&format!("a{round}"));
        let b = tip.next(&format!("b{round}"));
        let fa = env.write("a.json", &a.bytes());
        let fb = env.write("b.json", &b.bytes());
        let (pa, pb) = (spawn_commit(&env, &fa), spawn_commit(&env, &fb));
        let (oa, ob) = (
            pa.wait_with_output().unwrap(),
            pb.wait_with_output().unwrap(),
        );
        let (ca, cb) = (oa.status.code(), ob.status.code());
        let (winner, loser) = match (ca, cb) {
            (Some(0), Some(1)) => (&a, &ob),
            (Some(1), Some(0)) => (&b, &oa),
            _ => panic!("round {round}: exit codes {ca:?} and {cb:?}; a: {oa:?}; b: {ob:?}"),
        };
        let err = String::from_utf8_lossy(&loser.stderr);
        assert!(
            err.starts_with("world: commit: store: stale observed world head"),
            "round {round}: loser said {err}"
        );
        let out = String::from_utf8_lossy(&loser.stdout);
        assert!(
            out.contains(&format!("selected head: {}", winner.world_ref)),
            "round {round}: loser names the winner's head: {out}"
        );
        successes += 1;
        tip = winner.tip();
    }
    assert_eq!(
        env.log_len(),
        successes + 1,
        "log = genesis + one entry per round"
    );
    assert_eq!(env.tip(), tip);
    env.verify_ok();
}

/// Invariants after any crash: the log is contiguous, and every entry of `bodies` landed whole
/// (log row, world row, objects, memberships) or not at all, as a prefix of the batch.
fn check_batch(
    env: &TestEnv,
    before: &crate::common::Tip,
    bodies: &[crate::common::Body],
) -> usize {
    let c = ro(&env.db);
    let (count, max): (i64, i64) = c
        .query_row(
            "SELECT count(*), max(entry_index) FROM log_entries",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(count, max + 1, "log is contiguous from 0");
    let mut landed = 0;
    for b in bodies {
        let stored: Option<String> = c
            .query_row(
                "SELECT entry_hash_ref FROM log_entries WHERE entry_index = ?1",
                [b.index],
                |r| r.get(0),
            )
            .ok();
        let world: i64 = c
            .query_row(
                "SELECT count(*) FROM worlds WHERE world_ref = ?1",
                [&b.world_ref],
                |r| r.get(0),
            )
            .unwrap();
        let members: i64 = c
            .query_row(
                "SELECT count(*) FROM commit_objects co JOIN objects o ON o.hash_ref = co.object_ref WHERE co.entry_index = ?1 AND co.object_ref = ?2",
                rusqlite::params![b.index, b.objects[0]],
                |r| r.get(0),
            )
            .unwrap();
        match stored {
            Some(h) => {
                assert_eq!(h, b.entry_hash, "entry {} is ours", b.index);
                assert_eq!(
                    landed,
                    (b.index - before.next_index) as usize,
                    "landed entries are a prefix"
                );
                assert_eq!((world, members), (1, 1), "entry {} landed whole", b.index);
                landed += 1;
            }
            None => assert_eq!(
                (world, members),
                (0, 0),
                "entry {} left no part behind",
                b.index
            ),
        }
    }
    let head: String = c
        .query_row("SELECT world_ref FROM store_heads", [], |r| r.get(0))
        .unwrap();
    let want = if landed == 0 {
        before.head.clone()
    } else {
        bodies[landed - 1].world_ref.clone()
    };
    assert_eq!(head, want, "the head is the last landed world");
    landed
}

/// `kill -9` of `world commit --batch` after a random delay, 100 times: afterwards `world`
/// opens the store (recovering any hot journal), `world verify` passes, and every entry
/// landed whole or not at all.
#[test]
fn kill_9_at_random_points_never_leaves_a_partial_entry() {
    const BODIES: usize = 12;
    let env = TestEnv::new();
    let mut rng = Rng::from_env("kill_9");
    env.genesis();
    // Calibrate: how long does an unkilled batch take from spawn to exit?
    let tip = env.tip();
    let (file, bodies) = write_batch(&env, &tip, BODIES, "calibrate", "batch.jsonl");
    let t = Instant::now();
    let st = env
        .std_cmd()
        .args(["commit", "--batch", file.to_str().unwrap()])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    let full = t.elapsed();
    assert!(st.success());
    assert_eq!(check_batch(&env, &tip, &bodies), BODIES);
    let span = (full.as_micros() as u64).max(1000);

    let (mut partial, mut none, mut all) = (0, 0, 0);
    for round in 0..100 {
        let tip = tip_via_cli(&env);
        let (file, bodies) = write_batch(&env, &tip, BODIES, &format!("k{round}"), "batch.jsonl");
        let mut child = env
            .std_cmd()
            .args(["commit", "--batch", file.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.below(span)));
        let _ = child.kill(); // SIGKILL; it may already have exited
        child.wait().unwrap();
        env.verify_ok();
        match check_batch(&env, &tip, &bodies) {
            0 => none += 1,
            n if n == BODIES => all += 1,
            _ => partial += 1,
        }
    }
    eprintln!(
        "kill -9: batch of {BODIES} takes {full:?}; {partial} partial, {none} none, {all} whole"
    );
    assert!(
        partial >= 10,
        "too few kills landed mid-batch ({partial}); the test is not exercising crashes"
    );
    // The store still takes writes after all that.
    let tip = tip_via_cli(&env);
    env.commit_ok(&tip.next("after"));
    env.verify_ok();
}
