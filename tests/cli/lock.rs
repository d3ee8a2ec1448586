//! The writer lock: a second writer is refused at once (exit 6, naming both paths) while a
//! first holds it; readers keep working; after the first dies, the next writer gets in at once.

use std::time::{Duration, Instant};

use crate::common::{tip_via_cli, wait_for_log_len_above, write_batch, TestEnv};

#[test]
fn second_writer_refused_readers_work_and_lock_freed_by_kill() {
    let env = TestEnv::new();
    let tip = env.genesis();
    let (file, bodies) = write_batch(&env, &tip, 4000, "long", "long.jsonl");
    let mut first = env
        .std_cmd()
        .args(["commit", "--batch", file.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        wait_for_log_len_above(&env.db, 1, Duration::from_secs(30)),
        "the batch writer never started committing"
    );

    // A second writer is refused at once with exit 6, naming the store and the lock file.
    let other = crate::common::Tip::empty().next("intruder");
    let started = Instant::now();
    let r = env.commit(&other).code(6);
    let elapsed = started.elapsed();
    let line = r.one_line_error();
    let canon = env.dir.path().canonicalize().unwrap().join("world.db");
    assert!(
        line.contains(&format!("store {}", canon.display())),
        "{line}"
    );
    assert!(
        line.contains(&format!("lock {}.writer.lock", canon.display())),
        "{line}"
    );
    assert!(
        line.contains("another process already holds writer authority"),
        "{line}"
    );
    assert!(r.stderr.contains("hint: "), "a retry hint is given: {r:#?}");
    // The message names the holder's PID (world writes it into the lock file; issue 16 §11).
    let pid = first.id();
    assert!(line.contains(&format!("held by pid {pid}")), "{line}");
    // …and its command, which the holder wrote on the lock file's second line (issue 29 §6).
    assert!(
        line.contains(&format!("held by pid {pid} (world commit)")),
        "{line}"
    );
    assert!(
        r.stderr.contains(&format!(
            "hint: process {pid}, `world commit`, holds the writer lock; retry later"
        )),
        "{r:#?}"
    );
    assert!(elapsed < Duration::from_secs(2), "refusal took {elapsed:?}");
    let r = env.run(&["genesis"]).code(6);
    r.one_line_error();
    // A bounded wait that runs out says it waited.
    let r = env.run(&["--wait-lock", "0.2", "genesis"]).code(6);
    assert!(r.stderr.contains("waited 0.2 s (--wait-lock)"), "{r:#?}");

    // Readers take no lock and keep working while the writer commits back to back (this
    // once failed with "database is locked": SQLite's default busy handler polls too rarely).
    for _ in 0..20 {
        let head = env.run(&["head"]).ok();
        assert!(head.stdout.starts_with("sha256:"));
        let v = env.run(&["log", "get", "1", "--json"]).ok().json();
        assert_eq!(v["entryHash"], bodies[0].entry_hash.as_str());
        env.run(&["log", "--json", "--limit", "3"]).ok();
        env.run(&["object", "find", "test/object/v1", "--json", "--limit", "2"])
            .ok();
        env.run(&["receipt", "rest:none"]).code(1); // not-started: exit 1
    }
    assert!(
        first.try_wait().unwrap().is_none(),
        "the batch finished before the test could kill it; make it longer"
    );

    // Kill the holder; the OS releases the flock, and the next writer succeeds at once.
    first.kill().unwrap();
    let status = first.wait().unwrap();
    assert!(!status.success());
    let tip = tip_via_cli(&env);
    let next = tip.next("after-kill");
    let started = Instant::now();
    env.commit_ok(&next);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the next writer waited {:?}",
        started.elapsed()
    );
    let lock = env
        .dir
        .path()
        .canonicalize()
        .unwrap()
        .join("world.db.writer.lock");
    assert!(lock.exists(), "the lock file is never deleted");
    env.verify_ok();
}

#[test]
fn wait_lock_polls_until_the_holder_finishes() {
    let env = TestEnv::new();
    let tip = env.genesis();
    let (file, bodies) = write_batch(&env, &tip, 150, "short", "short.jsonl");
    let mut first = env
        .std_cmd()
        .args(["commit", "--batch", file.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(wait_for_log_len_above(&env.db, 1, Duration::from_secs(30)));
    // Observes the head the batch will end on, so it can only land after the batch.
    let after = bodies.last().unwrap().tip().next("waiter");
    let f = env.write("waiter.json", &after.bytes());
    let r = env.run(&["--wait-lock", "30", "commit", f.to_str().unwrap()]);
    assert!(first.wait().unwrap().success());
    assert_eq!(r.code, 0, "{r:#?}");
    assert_eq!(env.tip(), after.tip());
}
