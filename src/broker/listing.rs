//! Listing effect records with their context (for `world effects`).

use std::collections::HashMap;

use rusqlite::Connection;
use serde::Serialize;

use crate::store::journal;
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
    // Committed invocations name their records in order.
    let mut stmt = conn.prepare("SELECT payload FROM objects WHERE semantic_id = ?1")?;
    let recs: Vec<Vec<u8>> = stmt
        .query_map([INVOCATION_RECORD_V2], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for p in recs {
        if let Ok(r) = InvocationRecord::decode(INVOCATION_RECORD_V2, &p) {
            for e in r.effects.unwrap_or_default() {
                context.entry(e).or_default().push((
                    Some(r.invocation_id.clone()),
                    Some(r.episode_id.clone()),
                    None,
                ));
            }
        }
    }
    // Effect outcomes name their records; intents name the episode.
    let mut stmt = conn.prepare(
        "SELECT j.invocation_id, o.payload FROM journal j JOIN objects o ON o.hash_ref = j.object_ref
         WHERE j.kind = 'outcome' AND o.semantic_id = ?1 ORDER BY j.seq",
    )?;
    let outs: Vec<(String, Vec<u8>)> = stmt
        .query_map([journal::EFFECT_OUTCOME], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    for (id, p) in outs {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(&p) else {
            continue;
        };
        let Some(rec) = v.get("recordRef").and_then(|x| x.as_str()) else {
            continue;
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
                c.2 = Some(id.clone());
                if c.1.is_none() {
                    c.1 = ep;
                }
            }
            None => slots.push((None, ep, Some(id.clone()))),
        }
    }
    let mut stmt = conn.prepare(
        "SELECT hash_ref, payload FROM objects WHERE semantic_id = ?1 ORDER BY hash_ref",
    )?;
    let all: Vec<(String, Vec<u8>)> = stmt
        .query_map([EFFECT_RECORD], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
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
