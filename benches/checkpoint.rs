//! The cost of the log's Merkle tree (issue 33, DEC-TRUST-1): every commit appends its leaf
//! and the subtrees it completes to `world_merkle` in its own transaction. Measured in one
//! process against the baseline of the same commits on a store whose tree tables were dropped
//! (the only difference: `store::merkle::record` finds no table and does nothing):
//!
//! 1. commit cost with the tree / without, on a short log (target ratio ≤ 1.05);
//! 2. the same on a log of `BENCH_CHECKPOINT_LOG` entries (default 20,000): the tree's cost
//!    per commit does not grow with the log (target ratio ≤ 1.05);
//! 3. `world checkpoint`'s signing (catch-up, root recomputed from the whole log, earlier
//!    checkpoints re-checked) and one inclusion proof, on the long log.
//!
//! Rounds alternate between the two stores and the median per-round time is compared, so a
//! slow moment of the disk falls on both. `BENCH_QUICK=1` runs fewer rounds.

use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine;
use world::encoding::HashRef;
use world::store::commit::{BodyObject, CommitBody};
use world::store::{Header, LogEntry, Store, WorldRow, WriteOptions};

fn sha(b: &[u8]) -> String {
    HashRef::of(b).to_string()
}

fn open(path: &Path) -> Store {
    Store::open_write(
        path,
        WriteOptions {
            create: true,
            wait_lock: None,
        },
    )
    .expect("open store")
}

/// Where a store's log ends: (head, next index, last entry hash).
fn tip(store: &Store) -> (String, i64, String) {
    let head = store.head().expect("head").unwrap_or_default();
    let (_, last) = store.log_bounds().expect("bounds");
    match last {
        Some(i) => {
            let e = store.log_entry(i).expect("entry").expect("last entry");
            (head, i + 1, e.entry_hash)
        }
        None => (head, 0, sha(b"genesis-prev")),
    }
}

/// One client commit extending the log ending at `(head, index, prev)` with a 256-byte
/// object.
fn make_commit(
    (head, index, prev): (String, i64, String),
    tag: &str,
) -> world::store::commit::Commit {
    let mut payload = format!("{{\"bench\":\"{tag}\",\"i\":{index},\"pad\":\"").into_bytes();
    payload.resize(254, b'x');
    payload.extend_from_slice(b"\"}");
    let object = sha(&payload);
    let entry_hash = sha(format!("bench:{tag}:{index}").as_bytes());
    let world_ref = sha(format!(
        r#"{{"revision":{index},"stateRoot":"{object}","logHead":"{entry_hash}"}}"#
    )
    .as_bytes());
    CommitBody {
        invocation_id: None,
        observed_head: head,
        objects: vec![BodyObject {
            hash: object.clone(),
            interface_hash: sha(b"iface-v1"),
            semantic_id: "bench/object/v1".into(),
            provenance: "bench".into(),
            payload: base64::engine::general_purpose::STANDARD.encode(&payload),
        }],
        next_world: WorldRow {
            reference: world_ref,
            revision: index,
            state_root: object.clone(),
            log_head: entry_hash.clone(),
        },
        entry: LogEntry {
            header: Header {
                entry_index: index,
                semantics_epoch: 1,
                transition_fn: sha(b"fn"),
                interpreter: sha(b"interp"),
                prev_entry_hash: prev,
                written_by: "client:bench".into(),
            },
            entry_hash,
            transition_ref: object,
        },
    }
    .validate()
    .expect("valid commit")
}

fn next_commit(store: &Store, tag: &str) -> world::store::commit::Commit {
    make_commit(tip(store), tag)
}

/// Append `n` entries with plain SQL in one transaction (a long log built fast), then bring
/// the tree up to it when `tree`.
fn prefill(store: &mut Store, n: i64, tree: bool) {
    let (_, start, mut prev) = tip(store);
    let tx = store.immediate().expect("tx");
    let mut last_world = String::new();
    for i in start..start + n {
        let entry_hash = sha(format!("prefill:{i}").as_bytes());
        let e = LogEntry {
            header: Header {
                entry_index: i,
                semantics_epoch: 1,
                transition_fn: sha(b"fn"),
                interpreter: sha(b"interp"),
                prev_entry_hash: prev.clone(),
                written_by: "client:bench".into(),
            },
            entry_hash: entry_hash.clone(),
            transition_ref: sha(b"fn"),
        };
        let w = world::store::entry::world_row(i, &sha(b"fn"), &entry_hash);
        world::store::rows::insert_world(&tx, &w).expect("world");
        world::store::rows::insert_log_entry(&tx, &e).expect("entry");
        last_world = w.reference;
        prev = entry_hash;
    }
    world::store::rows::set_selected_head(&tx, &last_world).expect("head");
    if tree {
        world::store::merkle::catch_up(&tx, None).expect("catch up");
    }
    tx.commit().expect("commit");
}

fn drop_tree(store: &Store) {
    store
        .conn()
        .execute_batch("DROP TABLE world_merkle; DROP TABLE world_merkle_state;")
        .expect("drop the tree tables");
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Alternate rounds of `per_round` commits on `with` and `without`; the medians per commit.
/// Each round's commits are built before it is timed.
fn compare(
    with: &mut Store,
    without: &mut Store,
    rounds: usize,
    per_round: usize,
) -> (Duration, Duration) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        for (store, out, tag) in [
            (&mut *with, &mut a, "with"),
            (&mut *without, &mut b, "without"),
        ] {
            let mut at = tip(store);
            let commits: Vec<_> = (0..per_round)
                .map(|_| {
                    let c = make_commit(at.clone(), tag);
                    at = (
                        c.next_world.reference.clone(),
                        c.entry.header.entry_index + 1,
                        c.entry.entry_hash.clone(),
                    );
                    c
                })
                .collect();
            let t = Instant::now();
            for c in &commits {
                store.commit(c, 1_700_000_000).expect("commit");
            }
            out.push(t.elapsed() / per_round as u32);
        }
    }
    (median(a), median(b))
}

fn main() {
    let quick = std::env::var_os("BENCH_QUICK").is_some();
    let (rounds, per_round) = if quick { (5, 20) } else { (21, 50) };
    let long: i64 = std::env::var("BENCH_CHECKPOINT_LOG")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let dir = tempfile::tempdir().expect("tempdir");

    // 1. A short log.
    let mut with = open(&dir.path().join("with.db"));
    let mut without = open(&dir.path().join("without.db"));
    drop_tree(&without);
    for s in [&mut with, &mut without] {
        let c = next_commit(s, "genesis");
        s.commit(&c, 1_700_000_000).expect("genesis");
    }
    let (a, b) = compare(&mut with, &mut without, rounds, per_round);
    println!(
        "commit, short log (median of {rounds} rounds of {per_round}): with the tree {:.1} µs, without {:.1} µs, ratio {:.3} (target <= 1.05)",
        a.as_secs_f64() * 1e6,
        b.as_secs_f64() * 1e6,
        a.as_secs_f64() / b.as_secs_f64()
    );

    // 2. A long log.
    let mut with = open(&dir.path().join("with-long.db"));
    let mut without = open(&dir.path().join("without-long.db"));
    drop_tree(&without);
    for (s, tree) in [(&mut with, true), (&mut without, false)] {
        let c = next_commit(s, "genesis");
        s.commit(&c, 1_700_000_000).expect("genesis");
        prefill(s, long, tree);
    }
    let (a2, b2) = compare(&mut with, &mut without, rounds, per_round);
    println!(
        "commit, {long}-entry log (median of {rounds} rounds of {per_round}): with the tree {:.1} µs, without {:.1} µs, ratio {:.3} (target <= 1.05); with the tree, long/short {:.3}",
        a2.as_secs_f64() * 1e6,
        b2.as_secs_f64() * 1e6,
        a2.as_secs_f64() / b2.as_secs_f64(),
        a2.as_secs_f64() / a.as_secs_f64()
    );

    // 3. Signing and proving on the long log.
    let signer =
        world::tlog::note::Signer::generate("bench.example/log", world::tlog::note::ALG_ED25519)
            .expect("key");
    let t = Instant::now();
    let done =
        world::ops::checkpoint::create(&mut with, &signer, 1_700_000_000).expect("checkpoint");
    let sign = t.elapsed();
    let (cp, note) = world::ops::checkpoint::read_checkpoint(done.checkpoint.note.as_bytes(), None)
        .expect("read");
    let t = Instant::now();
    let proofs = 100u64;
    for i in 0..proofs {
        world::ops::checkpoint::prove_inclusion(&with, (i * 7919) % cp.size, &cp, &note)
            .expect("prove");
    }
    let prove = t.elapsed() / proofs as u32;
    println!(
        "world checkpoint on {} entries (root recomputed from the log): {:.1} ms; one inclusion proof: {:.1} µs",
        cp.size,
        sign.as_secs_f64() * 1e3,
        prove.as_secs_f64() * 1e6
    );
}
