//! Listing effect records with their context (for `world effects`).

use std::collections::HashMap;

use rusqlite::Connection;
use serde::Serialize;

use crate::store::records::{EffectRecord, InvocationRecord, EFFECT_RECORD, INVOCATION_RECORD_V2};
use crate::store::Error as StoreError;

/// One effect record with where it came from; JSON uses the record's own field names.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Listed {
    /// The record ref.
    #[serde(rename = "ref")]
    pub reference: String,
    /// The record's fields.
    #[serde(flatten)]
    pub record: EffectRecord,
    /// The invocation that planned it, when committed.
    pub invocation_id: Option<String>,
    /// The episode, when known.
    pub episode_id: Option<String>,
    /// The effect intent id, when allowed.
    pub intent_id: Option<String>,
}

/// (invocation id, episode id, intent id) known for a record.
type Context = (Option<String>, Option<String>, Option<String>);

/// Filters for [`list`].
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Only this episode.
    pub episode: Option<String>,
    /// Only this invocation.
    pub invocation: Option<String>,
    /// Only denials.
    pub denied: bool,
    /// Only this effect name.
    pub effect: Option<String>,
}

/// Every effect record in the store with its context, filtered; order: by invocation/intent
/// discovery, then the remaining records by ref.
pub fn list(conn: &Connection, f: &Filter) -> Result<Vec<Listed>, StoreError> {
    // Records are content-addressed and carry no episode, so one record can stand for effects
    // of several invocations (the same write with the same budget in two episodes): each
    // record keeps every context it was found in, and is listed once per context.
    let mut context: HashMap<String, Vec<Context>> = HashMap::new();
    if let Some(ep) = &f.episode {
        // One episode: its records through the derived index, its outcomes through the
        // journal's id range, its effect records by ref (DEC-PERF-8); the same answer as the
        // full pass below, filtered.
        for (_, r) in crate::store::episodes::records_of(conn, ep)? {
            add_record(&mut context, r);
        }
        for (id, p) in crate::store::episodes::effect_outcomes_of(conn, ep)? {
            add_outcome(&mut context, id, &p);
        }
        let mut refs: Vec<&String> = context.keys().collect();
        refs.sort();
        let mut all = Vec::new();
        for r in refs {
            if let Some(o) = crate::store::object_in(conn, r)? {
                if o.meta.semantic_id == EFFECT_RECORD {
                    all.push((o.meta.hash, o.payload));
                }
            }
        }
        return finish(context, all, f);
    }
    // Committed invocations name their records in order.
    for (_, p) in crate::store::payloads_by_semantic_id(conn, INVOCATION_RECORD_V2)? {
        if let Ok(r) = InvocationRecord::decode(INVOCATION_RECORD_V2, &p) {
            add_record(&mut context, r);
        }
    }
    // Effect outcomes name their records; intents name the episode.
    for (id, p) in crate::store::episodes::effect_outcomes(conn)? {
        add_outcome(&mut context, id, &p);
    }
    let all = crate::store::payloads_by_semantic_id(conn, EFFECT_RECORD)?;
    finish(context, all, f)
}

/// A committed invocation's record names its effect records in order: one context each.
fn add_record(context: &mut HashMap<String, Vec<Context>>, r: InvocationRecord) {
    for e in r.effects.unwrap_or_default() {
        context.entry(e).or_default().push((
            Some(r.invocation_id.clone()),
            Some(r.episode_id.clone()),
            None,
        ));
    }
}

/// An effect outcome (journal id `id`, payload `p`) names its record; the id names the episode.
fn add_outcome(context: &mut HashMap<String, Vec<Context>>, id: String, p: &[u8]) {
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(p) else {
        return;
    };
    let Some(rec) = v.get("recordRef").and_then(|x| x.as_str()) else {
        return;
    };
    let ep = id
        .strip_prefix("effect:")
        .and_then(|r| r.rsplit_once(':'))
        .map(|(ep, _)| ep.to_string());
    let slots = context.entry(rec.to_string()).or_default();
    // The intent belongs to the first context of its episode that has none yet.
    match slots
        .iter_mut()
        .find(|c| c.2.is_none() && (c.1.is_none() || c.1 == ep))
    {
        Some(c) => {
            c.2 = Some(id);
            if c.1.is_none() {
                c.1 = ep;
            }
        }
        None => slots.push((None, ep, Some(id))),
    }
}

/// The listing of the effect records `all` (`(ref, payload)` by ref) in their `context`s.
fn finish(
    mut context: HashMap<String, Vec<Context>>,
    all: Vec<(String, Vec<u8>)>,
    f: &Filter,
) -> Result<Vec<Listed>, StoreError> {
    let mut out = Vec::new();
    for (reference, payload) in all {
        // Every read that answers from an object re-hashes it (issue 13 §3).
        if crate::encoding::HashRef::of(&payload).to_string() != reference {
            return Err(StoreError::Corrupt {
                what: "effect record".into(),
                detail: format!("{reference} does not re-hash (edited)"),
            });
        }
        let Ok(record) = EffectRecord::decode(&payload) else {
            continue;
        };
        let contexts = context.remove(&reference).unwrap_or_default();
        let contexts = if contexts.is_empty() {
            vec![Context::default()]
        } else {
            contexts
        };
        for (invocation_id, episode_id, intent_id) in contexts {
            if f.episode
                .as_ref()
                .is_some_and(|e| episode_id.as_ref() != Some(e))
            {
                continue;
            }
            if f.invocation
                .as_ref()
                .is_some_and(|i| invocation_id.as_ref() != Some(i))
            {
                continue;
            }
            if f.denied && record.allowed {
                continue;
            }
            if f.effect.as_ref().is_some_and(|e| &record.effect != e) {
                continue;
            }
            out.push(Listed {
                reference: reference.clone(),
                record: record.clone(),
                invocation_id,
                episode_id,
                intent_id,
            });
        }
    }
    out.sort_by(|a, b| {
        let key = |l: &Listed| {
            l.intent_id
                .as_ref()
                .and_then(|i| i.rsplit(':').next()?.parse::<i64>().ok())
                .unwrap_or(i64::MAX)
        };
        (a.episode_id.clone(), key(a), a.reference.clone()).cmp(&(
            b.episode_id.clone(),
            key(b),
            b.reference.clone(),
        ))
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::journal::{append, effect_outcome_payload, Kind, EFFECT_OUTCOME};
    use crate::store::records::INVOCATION_RECORD_V2;
    use crate::store::{episodes, put_object, Object, Store, WriteOptions};

    fn record(i: u64) -> Object {
        let r = EffectRecord {
            effect: if i % 2 == 0 { "fs.read" } else { "fs.write" }.into(),
            scope: format!("/s/{i}"),
            cost: 1,
            budget_before: 9,
            budget_after: 8,
            allowed: i % 5 != 0,
            failed: false,
            denial: if i % 5 != 0 {
                String::new()
            } else {
                "budget".into()
            },
            request_ref: format!("sha256:{:064x}", i),
            result_ref: String::new(),
        };
        Object::new(EFFECT_RECORD, "test", r.encode())
    }

    /// The episode path of [`list`] against the full pass filtered afterwards, on a store with
    /// records shared across episodes, episodes that are prefixes of others (`a`, `a:b`),
    /// effects without a committed invocation, and objects before and after the index's
    /// last catch-up (the reader folds the tail itself).
    #[test]
    fn the_episode_path_lists_what_the_full_pass_lists() {
        let eps = ["a", "a:b", "b", "a:", "c"];
        for seed in 1..6u64 {
            let dir = tempfile::tempdir().expect("tempdir");
            let mut store = Store::open_write(
                &dir.path().join("w.db"),
                WriteOptions {
                    create: true,
                    wait_lock: None,
                },
            )
            .expect("store");
            let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let mut next = |n: u64| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % n
            };
            let mut ordinal = HashMap::new();
            for step in 0..60u64 {
                let tx = store.immediate().expect("tx");
                let ep = eps[next(eps.len() as u64) as usize];
                let k = 1 + next(3);
                let mut effects = Vec::new();
                for _ in 0..k {
                    // Few distinct records, so episodes share them.
                    let rec = record(next(7));
                    put_object(&tx, &rec).expect("record");
                    let o = ordinal.entry(ep).or_insert(0i64);
                    let id = format!("effect:{ep}:{o}");
                    *o += 1;
                    if next(4) != 0 {
                        append(
                            &tx,
                            Kind::Outcome,
                            &id,
                            EFFECT_OUTCOME,
                            effect_outcome_payload(&id, true, &rec.meta.hash, 1),
                        )
                        .expect("outcome");
                    }
                    effects.push(rec.meta.hash.clone());
                }
                // Some effects never reach a committed record.
                if next(5) != 0 {
                    let r = InvocationRecord {
                        invocation_id: format!("cli:{ep}:t{step}"),
                        episode_id: ep.into(),
                        skill_id: "s".into(),
                        transition_fn: format!("sha256:{:064x}", 1),
                        interpreter: format!("sha256:{:064x}", 2),
                        semantics_epoch: 1,
                        input: format!("sha256:{:064x}", 3),
                        output: format!("sha256:{:064x}", 4),
                        plan: Some(format!("sha256:{:064x}", 5)),
                        effects: Some(effects),
                    };
                    put_object(&tx, &Object::new(INVOCATION_RECORD_V2, "test", r.encode()))
                        .expect("v2");
                }
                if next(3) == 0 {
                    episodes::catch_up(&tx).expect("catch up");
                }
                tx.commit().expect("commit");
            }
            let all = list(store.conn(), &Filter::default()).expect("all");
            for ep in eps.iter().chain(&["", "zz"]) {
                let f = Filter {
                    episode: Some(ep.to_string()),
                    ..Filter::default()
                };
                let fast = list(store.conn(), &f).expect("episode");
                let want: Vec<_> = all
                    .iter()
                    .filter(|l| l.episode_id.as_deref() == Some(ep))
                    .collect();
                let got: Vec<_> = fast.iter().collect();
                assert_eq!(
                    format!("{got:?}"),
                    format!("{want:?}"),
                    "seed {seed}, episode {ep:?}"
                );
                // And without the index (a store no writable `world` has opened yet).
                store
                    .conn()
                    .execute_batch("DELETE FROM world_records_by_episode_state")
                    .expect("drop state");
                let scan = list(store.conn(), &f).expect("scan");
                assert_eq!(format!("{scan:?}"), format!("{want:?}"), "seed {seed}");
                let tx = store.immediate().expect("tx");
                episodes::catch_up(&tx).expect("rebuild");
                tx.commit().expect("commit");
                assert!(episodes::check(store.conn()).expect("check").is_empty());
            }
        }
    }
}
