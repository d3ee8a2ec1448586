//! The read-only view of one log entry that `world show --json` prints and MCP's
//! `world://entries/{index}` resource returns (issue 16 item 4, issue 30): header, world,
//! and for a coordinator entry its invocation — input, plan, effect records with budget
//! before→after, output, receipt, outcome.

use serde_json::{json, Value};

use crate::ops::outcome::{derive, EffectState, Evidence, Outcome};
use crate::store::records::{EffectRecord, InvocationRecord};
use crate::store::{Error, Store};

/// A payload as JSON when it parses, else as text.
fn payload_value(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()))
}

/// The view of entry `index` (docs/json/show.schema.json), `None` when there is no such entry.
/// `invocation.episodeId` names the episode a coordinator entry belongs to; `kind` is
/// `invocation` or `commit` (a client commit, no `invocation`; its `invocationId` is the
/// `rest:` id it was sent with, or null); `outcome` (also
/// `invocation.outcome`) is [`crate::ops::outcome::derive`]'s, a client commit `ok`.
///
/// # Errors
/// [`Error`] for a failed read or a receipt that cannot be derived.
pub fn entry_view(store: &Store, index: i64) -> Result<Option<Value>, Error> {
    let Some(entry) = store.log_entry(index)? else {
        return Ok(None);
    };
    let world = store.world_for_entry(&entry.entry_hash)?;
    let record = store
        .object(&entry.transition_ref)?
        .and_then(|o| InvocationRecord::decode(&o.meta.semantic_id, &o.payload).ok());
    let object_json = |r: &str| -> Result<Value, Error> {
        Ok(match store.object(r)? {
            Some(o) => payload_value(&o.payload),
            None => Value::Null,
        })
    };
    let mut v = json!({
        "entryIndex": index,
        "entryHash": entry.entry_hash,
        "world": world,
        "header": entry.header,
        "transitionRef": entry.transition_ref,
    });
    let Some(rec) = &record else {
        v["kind"] = "commit".into();
        // The `rest:` id the client sent it with, as `world log` shows it (issue 29).
        let rest = store.rest_invocation_of(&entry.entry_hash)?;
        v["invocationId"] = rest.map(|(id, _)| id).into();
        v["outcome"] = Outcome::Ok.as_str().into();
        return Ok(Some(v));
    };
    let mut effects = Vec::new();
    let mut states = Vec::new();
    for r in rec.effects.clone().unwrap_or_default() {
        let decoded = store
            .object(&r)?
            .and_then(|o| EffectRecord::decode(&o.payload).ok());
        states.push(
            decoded
                .as_ref()
                .map_or(EffectState::Indeterminate, EffectState::of_record),
        );
        effects.push(match decoded {
            Some(d) => {
                let mut x = serde_json::to_value(&d).unwrap_or(Value::Null);
                x["ref"] = r.clone().into();
                x
            }
            None => json!({"ref": r, "missing": true}),
        });
    }
    let receipt = store.receipt(&rec.invocation_id)?;
    let output = object_json(&rec.output)?;
    let outcome = derive(&Evidence {
        committed: true,
        output_ok: output.get("ok").and_then(Value::as_bool),
        effects: &states,
    })
    .as_str();
    v["kind"] = "invocation".into();
    v["outcome"] = outcome.into();
    v["invocation"] = json!({
        "invocationId": rec.invocation_id,
        "episodeId": rec.episode_id,
        "transition": rec.skill_id,
        "input": object_json(&rec.input)?,
        "inputRef": rec.input,
        "plan": match &rec.plan { Some(p) => object_json(p)?, None => Value::Null },
        "planRef": rec.plan,
        "effects": effects,
        "output": output,
        "outputRef": rec.output,
        "receipt": receipt,
        "outcome": outcome,
    });
    Ok(Some(v))
}
