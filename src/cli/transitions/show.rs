//! `world transitions show ID`: one descriptor and its MCP tool name.

use super::head::{effects, json, read};
use crate::cli::output::Output;
use crate::cli::{CliError, Context, Exit};
use crate::encoding::trcjson::{self, CValue};
use crate::transitions::registry::mcp_decode;

/// `world transitions show ID`: the descriptor `id` names (a transition id or its escaped MCP
/// tool name) in the current revision; exit 1 when there is none.
pub(super) fn run(ctx: &Context, out: &mut Output, id: String) -> Result<Exit, CliError> {
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
