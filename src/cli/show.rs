//! `world show TARGET`: one log entry in one view — header, input, plan, effects with budget
//! before→after, output, receipts and outcome (issue 16 item 4).

use serde_json::Value;

use super::output::{rfc3339, Output};
use super::{read_err, CliError, Context, Exit};
use crate::store::read::Space;
use crate::termtext::escape_line;

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
        let found = store.entry_of_invocation(t).map_err(read_err(what))?;
        match found {
            Some(i) => i,
            None => {
                // A `rest:` commit has no invocation record; its receipt names the world.
                let r = store.receipt(t).map_err(read_err(what))?;
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
                let found = store
                    .entry_of_transition(&c.reference)
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
    let v = crate::ops::show::entry_view(&store, index)
        .map_err(read_err(what))?
        .ok_or_else(|| {
            CliError::failed(what, format!("log entry not found: {index}")).with_code("not_found")
        })?;
    let exit = Exit::Success;
    if out.json {
        out.json_line(&v)?;
        return Ok(exit);
    }
    let h = &v["header"];
    // Values a client or a transition wrote are shown escaped (DEC-TRUST3-4).
    let esc = escape_line;
    let text = |x: &Value| {
        let raw = x
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| x.to_string());
        esc(&raw).into_owned()
    };
    out.view(format!("entry {index}  {}", text(&v["entryHash"])))?;
    out.view(format!("  writtenBy       {}", text(&h["writtenBy"])))?;
    out.view(format!(
        "  world           {}",
        v["world"].as_str().unwrap_or("-")
    ))?;
    out.view(format!("  prevEntryHash   {}", text(&h["prevEntryHash"])))?;
    out.view(format!("  transitionFn    {}", text(&h["transitionFn"])))?;
    out.view(format!("  interpreter     {}", text(&h["interpreter"])))?;
    out.view(format!("  semanticsEpoch  {}", text(&h["semanticsEpoch"])))?;
    out.view(format!("  transitionRef   {}", text(&v["transitionRef"])))?;
    let Some(inv) = v.get("invocation").cloned() else {
        if let Some(id) = v["invocationId"].as_str() {
            out.view(format!("  invocationId    {}", esc(id)))?;
        }
        out.view("  outcome         ok (a client commit: no invocation record)")?;
        return Ok(exit);
    };
    let s = |k: &str| esc(inv[k].as_str().unwrap_or("-")).into_owned();
    out.view("")?;
    out.view(format!(
        "invocation {}  (transition {}, episode {})",
        s("invocationId"),
        s("transition"),
        s("episodeId")
    ))?;
    out.view(format!("input   {}", inv["input"]))?;
    if !inv["plan"].is_null() {
        out.view(format!("plan    {}", inv["plan"]))?;
    }
    print_effects(out, &inv["effects"])?;
    out.view(format!("output  {}", inv["output"]))?;
    let r = &inv["receipt"];
    out.view(format!(
        "receipt {} {}{}",
        s("invocationId"),
        esc(r["state"].as_str().unwrap_or("?")),
        r["logicalTime"]
            .as_i64()
            .map(|t| format!(" at {}", rfc3339(t)))
            .unwrap_or_default()
    ))?;
    out.view(format!("outcome {}", s("outcome")))?;
    Ok(exit)
}

/// The invocation's effects, one line each with its outcome (`effects none` when there are
/// none); stored values are shown escaped (DEC-TRUST3-4).
fn print_effects(out: &mut Output, effects: &Value) -> Result<(), CliError> {
    let effects = effects.as_array().cloned().unwrap_or_default();
    let esc = escape_line;
    if effects.is_empty() {
        out.view("effects none")?;
    } else {
        out.view("effects")?;
        for e in &effects {
            // The effect's outcome in the one vocabulary, with the broker's denial label.
            let status = if e["allowed"] == false {
                format!("denied ({})", esc(e["denial"].as_str().unwrap_or("")))
            } else if e["failed"] == true {
                "failed".to_string()
            } else if e.get("missing").is_some() {
                "indeterminate (record missing)".to_string()
            } else {
                "ok".to_string()
            };
            out.view(format!(
                "  {} {} cost {} budget {}→{} {}  {}",
                esc(e["effect"].as_str().unwrap_or("?")),
                esc(e["scope"].as_str().unwrap_or("?")),
                e["cost"],
                e["budgetBefore"],
                e["budgetAfter"],
                status,
                e["ref"].as_str().unwrap_or("?")
            ))?;
        }
    }
    Ok(())
}
