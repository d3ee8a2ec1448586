//! `world show TARGET`: one log entry in one view — header, input, plan, effects with budget
//! before→after, output, receipts and outcome (issue 16 item 4).

use serde_json::{json, Value};

use super::output::{rfc3339, Output};
use super::{read_err, CliError, Context, Exit};
use crate::store::records::{EffectRecord, InvocationRecord};
use crate::store::refs::Space;

/// Show what happened at one log entry.
///
/// TARGET is an entry index, `head`, an invocation id (`cli:ep1:task-3`, `rest:deploy-7`), an
/// effect intent id (`effect:attended-publish:0`: its record, as `world effects show`), or
/// any ref as tables print it (entry hash, world, invocation record; full, bare hex or unique
/// prefix ≥ 6 hex). `--json` prints one object (docs/json/show.schema.json).
///
/// Examples:
///   world show head
///   world show 12
///   world show cli:ep1:task-3 --json | jq '.effects[].budgetAfter'
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Entry index, `head`, invocation id, effect intent id, or a ref
    #[arg(value_name = "TARGET")]
    target: String,
}

/// A payload as JSON when it parses, else as text.
fn payload_value(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()))
}

/// Run `world show`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    let what = "show";
    let t = args.target.as_str();
    if t.starts_with("effect:") {
        // An effect intent id: its record, request and result (no log entry holds an
        // attended publish's effect).
        return super::effects::run_show(ctx, out, t.to_string());
    }
    let store = ctx.open_read()?;
    let index = if ["cli:", "a2a:", "mcp:", "rest:"]
        .iter()
        .any(|p| t.starts_with(p))
    {
        // Through the journal and an index, not a scan of the log (issue 19 item 2).
        let found =
            crate::store::logview::entry_of_invocation(store.conn(), t).map_err(read_err(what))?;
        match found {
            Some(i) => i,
            None => {
                // A `rest:` commit has no invocation record; its receipt names the world.
                let r = crate::store::journal::receipt(store.conn(), t).map_err(read_err(what))?;
                let world = r.result_ref.ok_or_else(|| {
                    CliError::failed(what, format!("no log entry for invocation {t}"))
                        .with_code("not_found")
                        .hint(format!("`world receipt {t}` says what happened to it"))
                })?;
                let w = store
                    .world(&world)
                    .map_err(read_err(what))?
                    .ok_or_else(|| CliError::failed(what, format!("world {world} not found")))?;
                w.revision
            }
        }
    } else if t == "head" || t.bytes().all(|b| b.is_ascii_digit()) {
        super::log::entry_index(&store, t, what)?
    } else {
        let c = super::refs::resolve(
            &store,
            &[Space::Entry, Space::World, Space::Object],
            t,
            what,
        )?;
        match c.space {
            Space::Entry => super::log::entry_index(&store, &c.reference, what)?,
            Space::World => {
                store
                    .world(&c.reference)
                    .map_err(read_err(what))?
                    .ok_or_else(|| {
                        CliError::failed(what, format!("world {} not found", c.reference))
                    })?
                    .revision
            }
            _ => {
                let found = crate::store::logview::entry_of_transition(store.conn(), &c.reference)
                    .map_err(read_err(what))?;
                found.ok_or_else(|| {
                    CliError::failed(
                        what,
                        format!("{} is not the transition ref of any entry", c.reference),
                    )
                    .hint(format!(
                        "`world why {}` walks an object's provenance",
                        c.reference
                    ))
                })?
            }
        }
    };
    let entry = store
        .log_entry(index)
        .map_err(read_err(what))?
        .ok_or_else(|| {
            CliError::failed(what, format!("log entry not found: {index}")).with_code("not_found")
        })?;
    let world = store
        .world_for_entry(&entry.entry_hash)
        .map_err(read_err(what))?;
    let record = store
        .object(&entry.transition_ref)
        .map_err(read_err(what))?
        .and_then(|o| InvocationRecord::decode(&o.meta.semantic_id, &o.payload).ok());
    let object_json = |r: &str| -> Result<Value, CliError> {
        Ok(match store.object(r).map_err(read_err(what))? {
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
    let mut exit = Exit::Success;
    if let Some(rec) = &record {
        let mut effects = Vec::new();
        for r in rec.effects.clone().unwrap_or_default() {
            let e = store.object(&r).map_err(read_err(what))?;
            let decoded = e
                .as_ref()
                .and_then(|o| EffectRecord::decode(&o.payload).ok());
            effects.push(match decoded {
                Some(d) => {
                    let mut x = serde_json::to_value(&d).unwrap_or(Value::Null);
                    x["ref"] = r.clone().into();
                    x
                }
                None => json!({"ref": r, "missing": true}),
            });
        }
        let receipt = crate::store::journal::receipt(store.conn(), &rec.invocation_id)
            .map_err(read_err(what))?;
        let output = object_json(&rec.output)?;
        let outcome = match output.get("ok").and_then(Value::as_bool) {
            Some(true) => "ok",
            Some(false) => "refused",
            None => "-",
        };
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
    } else {
        v["outcome"] = "commit".into();
    }
    if out.json {
        out.json_line(&v)?;
        return Ok(exit);
    }
    let h = &entry.header;
    out.line(format!("entry {index}  {}", entry.entry_hash))?;
    out.line(format!("  writtenBy       {}", h.written_by))?;
    out.line(format!(
        "  world           {}",
        world.as_deref().unwrap_or("-")
    ))?;
    out.line(format!("  prevEntryHash   {}", h.prev_entry_hash))?;
    out.line(format!("  transitionFn    {}", h.transition_fn))?;
    out.line(format!("  interpreter     {}", h.interpreter))?;
    out.line(format!("  semanticsEpoch  {}", h.semantics_epoch))?;
    out.line(format!("  transitionRef   {}", entry.transition_ref))?;
    let Some(inv) = v.get("invocation").cloned() else {
        out.line("  outcome         commit (a client commit: no invocation record)")?;
        return Ok(exit);
    };
    let s = |k: &str| inv[k].as_str().unwrap_or("-").to_string();
    out.line("")?;
    out.line(format!(
        "invocation {}  (transition {}, episode {})",
        s("invocationId"),
        s("transition"),
        s("episodeId")
    ))?;
    out.line(format!("input   {}", inv["input"]))?;
    if !inv["plan"].is_null() {
        out.line(format!("plan    {}", inv["plan"]))?;
    }
    let effects = inv["effects"].as_array().cloned().unwrap_or_default();
    if effects.is_empty() {
        out.line("effects none")?;
    } else {
        out.line("effects")?;
        for e in &effects {
            let status = if e["allowed"] == false {
                format!("denied {}", e["denial"].as_str().unwrap_or(""))
            } else if e["failed"] == true {
                "failed".to_string()
            } else {
                "allowed".to_string()
            };
            out.line(format!(
                "  {} {} cost {} budget {}→{} {}  {}",
                e["effect"].as_str().unwrap_or("?"),
                e["scope"].as_str().unwrap_or("?"),
                e["cost"],
                e["budgetBefore"],
                e["budgetAfter"],
                status,
                e["ref"].as_str().unwrap_or("?")
            ))?;
        }
    }
    out.line(format!("output  {}", inv["output"]))?;
    let r = &inv["receipt"];
    out.line(format!(
        "receipt {} {}{}",
        s("invocationId"),
        r["state"].as_str().unwrap_or("?"),
        r["logicalTime"]
            .as_i64()
            .map(|t| format!(" at {}", rfc3339(t)))
            .unwrap_or_default()
    ))?;
    out.line(format!("outcome {}", s("outcome")))?;
    if s("outcome") == "refused" {
        exit = Exit::Success;
    }
    Ok(exit)
}
