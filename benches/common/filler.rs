//! History filler for the benchmarks of issue 19: append `n` coordinator-shaped entries to a
//! store with rusqlite, fast, so commands can be timed on a store of a million entries without
//! running a million `world invoke`s.
//!
//! Each filler entry is what `world invoke` of a pure transition leaves: an input, an output
//! and an invocation record object, a commit intent and outcome in the journal (with their
//! objects), the log entry (`coordinator:cli`, `transitionRef` = the record), its world row and
//! its `commit_objects` rows. Every fourth entry is an effectful one: a v2 record naming an
//! effect record, and the effect's intent and outcome journal rows. Entries are spread over
//! 1,000 episodes `filler<k>` that no benchmark looks up. Hashes are the real sha256 of the
//! payloads; the entry chain links (`prevEntryHash`), and every filler world keeps the state
//! root of the store's head, so commands that run after the filler (an invoke) see the same
//! state. One transaction per 50,000 entries.

#![allow(dead_code)]

use std::path::Path;

use rusqlite::Connection;
use sha2::{Digest, Sha256};
use world::store::journal::{
    effect_outcome_payload, CommitIntent, EffectIntent, COMMIT_INTENT, COMMIT_OUTCOME,
    EFFECT_INTENT, EFFECT_OUTCOME,
};
use world::store::records::{
    EffectRecord, InvocationRecord, EFFECT_RECORD, INVOCATION_INPUT, INVOCATION_OUTPUT,
};

fn sha(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// Append `n` filler entries after the store's last entry and move the selected head to the
/// last one. Returns the number of log entries afterwards.
pub fn append(db: &Path, n: i64) -> i64 {
    let mut conn = Connection::open(db).expect("open");
    conn.execute_batch(
        "PRAGMA synchronous = OFF; PRAGMA journal_mode = MEMORY; PRAGMA cache_size = -200000",
    )
    .expect("pragmas");
    let (mut next, mut prev): (i64, String) = conn
        .query_row(
            "SELECT entry_index + 1, entry_hash_ref FROM log_entries ORDER BY entry_index DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("last entry");
    let (state_root, fn_ref, interp): (String, String, String) = conn
        .query_row(
            "SELECT w.state_root, l.transition_fn_ref, l.interpreter_ref FROM store_heads h
               JOIN worlds w ON w.world_ref = h.world_ref
               JOIN log_entries l ON l.entry_hash_ref = w.log_head
              WHERE h.head_key = 'selected_world_head'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("head");
    let iface = sha(b"world/bench-filler/interface");
    let mut head: String = conn
        .query_row(
            "SELECT world_ref FROM store_heads WHERE head_key = 'selected_world_head'",
            [],
            |r| r.get(0),
        )
        .expect("selected head");
    let mut done = 0;
    while done < n {
        let chunk = (n - done).min(50_000);
        let tx = conn.transaction().expect("begin");
        {
            let mut obj = tx
                .prepare_cached("INSERT OR IGNORE INTO objects VALUES (?1, ?2, ?3, ?4, ?5)")
                .expect("prepare");
            let mut put = |semantic: &str, payload: &[u8]| -> String {
                let h = sha(payload);
                obj.execute(rusqlite::params![
                    h,
                    iface,
                    semantic,
                    "bench/filler",
                    payload
                ])
                .expect("object");
                h
            };
            let mut journal = tx
                .prepare_cached(
                    "INSERT INTO journal (kind, invocation_id, object_ref) VALUES (?1, ?2, ?3)",
                )
                .expect("prepare");
            let mut log = tx
                .prepare_cached(
                    "INSERT INTO log_entries VALUES (?1, ?2, 1, ?3, ?4, ?5, 'coordinator:cli', ?6)",
                )
                .expect("prepare");
            let mut world = tx
                .prepare_cached("INSERT INTO worlds VALUES (?1, ?2, ?3, ?4)")
                .expect("prepare");
            let mut member = tx
                .prepare_cached("INSERT OR IGNORE INTO commit_objects VALUES (?1, ?2)")
                .expect("prepare");
            for k in done..done + chunk {
                let ep = format!("filler{}", k % 1000);
                let inv = format!("cli:{ep}:f{k}");
                let time = 1_700_000_000 + k;
                let input = put(INVOCATION_INPUT, format!("{{\"n\":{k}}}\n").as_bytes());
                let output = put(
                    INVOCATION_OUTPUT,
                    format!("{{\"ok\":true,\"value\":{{\"n\":{k}}}}}\n").as_bytes(),
                );
                let effectful = k % 4 == 0;
                let mut effects = Vec::new();
                if effectful {
                    let ordinal = k / 1000; // unique within the episode k % 1000
                    let eff = format!("effect:{ep}:{ordinal}");
                    let rec = EffectRecord {
                        effect: "fs.read".into(),
                        scope: format!("/filler/{k}"),
                        cost: 1,
                        budget_before: 1_000_000 - ordinal,
                        budget_after: 1_000_000 - ordinal - 1,
                        allowed: true,
                        failed: false,
                        denial: String::new(),
                        request_ref: sha(format!("req{k}").as_bytes()),
                        result_ref: sha(format!("res{k}").as_bytes()),
                    };
                    let rec_ref = put(EFFECT_RECORD, &rec.encode());
                    let ei = EffectIntent {
                        invocation_id: eff.clone(),
                        episode_id: ep.clone(),
                        ordinal,
                        effect: rec.effect.clone(),
                        scope: rec.scope.clone(),
                        cost: 1,
                        request_ref: rec.request_ref.clone(),
                        logical_time: time,
                    };
                    let intent = put(EFFECT_INTENT, &ei.payload());
                    journal.execute(["intent", &eff, &intent]).expect("journal");
                    let outcome = put(
                        EFFECT_OUTCOME,
                        &effect_outcome_payload(&eff, true, &rec_ref, time),
                    );
                    journal
                        .execute(["outcome", &eff, &outcome])
                        .expect("journal");
                    effects.push(rec_ref);
                }
                let record = InvocationRecord {
                    invocation_id: inv.clone(),
                    episode_id: ep.clone(),
                    skill_id: if effectful {
                        "tools.readcount"
                    } else {
                        "tools.echo"
                    }
                    .into(),
                    transition_fn: fn_ref.clone(),
                    interpreter: interp.clone(),
                    semantics_epoch: 1,
                    input: input.clone(),
                    output: output.clone(),
                    plan: effectful.then(|| sha(format!("plan{k}").as_bytes())),
                    effects: effectful.then_some(effects),
                };
                let record_ref = put(record.semantic_id(), &record.encode());
                let index = next;
                next += 1;
                let entry_hash = sha(format!("filler-entry:{index}:{record_ref}").as_bytes());
                let world_ref = sha(format!("filler-world:{index}:{entry_hash}").as_bytes());
                let ci = CommitIntent {
                    invocation_id: inv.clone(),
                    world_ref: world_ref.clone(),
                    entry_hash: entry_hash.clone(),
                    observed_head: head.clone(),
                    prev_entry_hash: prev.clone(),
                    transition_fn: fn_ref.clone(),
                    transition_ref: record_ref.clone(),
                    interpreter: interp.clone(),
                    logical_time: time,
                };
                let intent = put(COMMIT_INTENT, &ci.payload());
                journal.execute(["intent", &inv, &intent]).expect("journal");
                log.execute(rusqlite::params![
                    index, entry_hash, fn_ref, interp, prev, record_ref
                ])
                .expect("log");
                world
                    .execute(rusqlite::params![world_ref, index, state_root, entry_hash])
                    .expect("world");
                for m in [&input, &output, &record_ref] {
                    member.execute(rusqlite::params![m, index]).expect("member");
                }
                let outcome = put(COMMIT_OUTCOME, &ci.outcome_payload());
                journal
                    .execute(["outcome", &inv, &outcome])
                    .expect("journal");
                prev = entry_hash;
                head = world_ref;
            }
            tx.execute(
                "UPDATE store_heads SET world_ref = ?1 WHERE head_key = 'selected_world_head'",
                [&head],
            )
            .expect("head");
        }
        tx.commit().expect("commit");
        done += chunk;
    }
    next
}
