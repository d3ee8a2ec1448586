//! `world transitions list [--json]` and `world transitions show ID`: the selected transition
//! registry revision (transitions.md §1, spec README command table).

use clap::Subcommand;

use super::output::{short, Output};
use super::table::{Col, Table};
use super::{CliError, Context, Exit};
use crate::encoding::trcjson::{self, CValue};
use crate::transitions::publish::{self, Head, PublishError};
use crate::transitions::registry::{self, mcp_decode, Descriptor, Effect};

/// Transition-registry reads.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// List every descriptor of the current revision (table, or JSON lines with --json)
    List,
    /// Show one descriptor and its MCP tool name (ID may also be the MCP name)
    Show {
        /// Transition id (or its escaped MCP tool name)
        id: String,
    },
}

fn head_err(what: &str, e: PublishError) -> CliError {
    match e {
        PublishError::Store(s) => CliError::store(what, s),
        e if e.is_integrity() => {
            CliError::new(Exit::Integrity, what, e).hint("run `world verify` for a full report")
        }
        e => CliError::failed(what, e),
    }
}

fn effects(list: &[Effect]) -> String {
    if list.is_empty() {
        return "-".into();
    }
    list.iter()
        .map(Effect::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The descriptor's canonical JSON plus `extra` members.
fn json(d: &Descriptor, extra: Vec<(String, CValue)>) -> Vec<u8> {
    let mut members = match d.to_cvalue() {
        CValue::Object(m) => m,
        other => vec![("descriptor".into(), other)],
    };
    members.extend(extra);
    let mut bytes = trcjson::encode(&CValue::object(members));
    bytes.push(b'\n');
    bytes
}

fn read(ctx: &Context, what: &str) -> Result<Option<(Head, String)>, CliError> {
    let store = ctx.open_read()?;
    let Some(head) = publish::read_head(store.conn()).map_err(|e| head_err(what, e))? else {
        return Ok(None);
    };
    let provenance = store
        .object(&head.reference.to_string())
        .map_err(|e| CliError::store(what, e))?
        .map(|o| o.meta.provenance)
        .unwrap_or_default();
    Ok(Some((head, provenance)))
}

fn revision_line(head: &Head, provenance: &str) -> String {
    let who = if provenance == registry::PROVENANCE_UNATTENDED {
        "published unattended (--yes): no human confirmed it".to_string()
    } else {
        format!("provenance {provenance}")
    };
    format!(
        "transition registry revision {} (head {}), {} descriptor(s), {who}",
        head.revision.revision,
        head.reference,
        head.revision.entries.len()
    )
}

/// Run `world transitions …`.
pub fn run(ctx: &Context, out: &mut Output, cmd: Cmd) -> Result<Exit, CliError> {
    match cmd {
        Cmd::List => {
            let Some((head, provenance)) = read(ctx, "transitions list")? else {
                out.status("no transition registry in this store yet; publish one with `world publish --manifest FILE`");
                return Ok(Exit::Success);
            };
            if out.json {
                for d in &head.revision.entries {
                    out.bytes(&json(d, Vec::new()))?;
                }
                return Ok(Exit::Success);
            }
            // docs/TABLES.md: ID always; TITLE is cut first; then INTERPRETER, EPOCH,
            // TRANSITION FN, TITLE, DECLARED EFFECTS and ACCESS are hidden in that order.
            let mut t = Table::new(vec![
                Col::id("id"),
                Col::text("title").drop(4),
                Col::id("access").drop(6),
                Col::list("declared effects").drop(5),
                Col::id("transition fn").drop(3),
                Col::id("interpreter").drop(1),
                Col::id("epoch").drop(2),
            ]);
            for d in &head.revision.entries {
                t.add_row(vec![
                    d.id.clone(),
                    crate::termtext::escape_line(&d.title).into_owned(),
                    d.access.to_string(),
                    effects(&d.declared_effects),
                    short(&d.transition_fn.to_string()),
                    short(&d.interpreter.to_string()),
                    d.semantics_epoch.to_string(),
                ]);
            }
            out.status(revision_line(&head, &provenance));
            if !head.revision.entries.is_empty() {
                out.table(&t)?;
            }
            Ok(Exit::Success)
        }
        Cmd::Show { id } => {
            let Some((head, _)) = read(ctx, "transitions show")? else {
                return Err(CliError::failed(
                    "transitions show",
                    "no transition registry in this store yet",
                ));
            };
            let found = head.revision.get(&id).or_else(|| {
                mcp_decode(&id)
                    .ok()
                    .and_then(|decoded| head.revision.get(&decoded))
            });
            let Some(d) = found else {
                return Err(CliError::failed(
                    "transitions show",
                    format!(
                        "no transition {id:?} in registry revision {}",
                        head.revision.revision
                    ),
                )
                .hint("list the ids with `world transitions list`"));
            };
            if out.json {
                out.bytes(&json(
                    d,
                    vec![("mcpName".into(), CValue::String(d.mcp_name()))],
                ))?;
                return Ok(Exit::Success);
            }
            let schema = |v: &CValue| String::from_utf8_lossy(&trcjson::encode(v)).into_owned();
            out.view(format!("transition {}", d.id))?;
            out.view(format!("  mcpName          {}", d.mcp_name()))?;
            // A manifest's free text is shown escaped (DEC-TRUST3-4).
            let esc = crate::termtext::escape_line;
            out.view(format!("  title            {}", esc(&d.title)))?;
            out.view(format!("  description      {}", esc(&d.description)))?;
            out.view(format!("  transitionFn     {}", d.transition_fn))?;
            out.view(format!("  interpreter      {}", d.interpreter))?;
            out.view(format!("  semanticsEpoch   {}", d.semantics_epoch))?;
            out.view(format!("  access           {}", d.access))?;
            out.view(format!(
                "  declaredEffects  {}",
                effects(&d.declared_effects).replace('\n', ", ")
            ))?;
            out.view(format!("  inputSchema      {}", schema(&d.input_schema)))?;
            out.view(format!("  outputSchema     {}", schema(&d.output_schema)))?;
            out.view(format!(
                "  revision         {} (head {})",
                head.revision.revision, head.reference
            ))?;
            Ok(Exit::Success)
        }
    }
}
