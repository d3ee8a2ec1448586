//! `world tools list --session S`: the tools this session can see and call.

use crate::cli::output::Output;
use crate::cli::table::{Col, Table};
use crate::cli::{read_err, resolve_session, CliError, Context, Exit};
use crate::ops::invoke::visible;
use crate::transitions::publish::read_head;

/// `world tools list`: the transitions the session's live grants can see and call.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    session: &crate::cli::SessionArgs,
    unattested: &crate::cli::UnattestedFlag,
) -> Result<Exit, CliError> {
    let store = ctx.open_read()?;
    let now = ctx.now();
    let s = resolve_session(
        ctx,
        out,
        store.conn(),
        session.value(),
        now,
        unattested.policy(),
    )?;
    let head = read_head(store.conn()).map_err(|e| CliError::integrity("tools list", e))?;
    let _ = read_err("tools list");
    let all = head.map(|h| h.revision.entries).unwrap_or_default();
    let tools = visible(&all, &s.grants, now);
    let required = |d: &crate::transitions::registry::Descriptor| -> Vec<String> {
        d.input_schema
            .to_json()
            .get("required")
            .and_then(|r| r.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    if out.json {
        for d in &tools {
            out.json_line(&serde_json::json!({
                "id": d.id,
                "name": d.mcp_name(),
                "title": d.title,
                "description": d.description,
                "required": required(d),
                "access": d.access,
                "declaredEffects": d.declared_effects,
                "inputSchema": d.input_schema.to_json(),
            }))?;
        }
    } else {
        // docs/TABLES.md: ID always; TITLE is cut first; then TITLE, REQUIRED ARGUMENTS and
        // EFFECTS are hidden in that order.
        let mut t = Table::new(vec![
            Col::id("id"),
            Col::text("title").drop(1),
            Col::list("required arguments").drop(2),
            Col::list("effects").drop(3),
        ]);
        for d in &tools {
            t.add_row(vec![
                d.id.clone(),
                crate::termtext::escape_line(&d.title).into_owned(),
                required(d).join(", "),
                if d.declared_effects.is_empty() {
                    "pure".into()
                } else {
                    d.declared_effects
                        .iter()
                        .map(|e| e.to_string())
                        .collect::<Vec<_>>()
                        .join(" ")
                },
            ]);
        }
        if !tools.is_empty() {
            out.table(&t)?;
        }
        out.line(format!(
            "{} tool(s) visible to episode {}",
            tools.len(),
            s.episode
        ))?;
    }
    Ok(Exit::Success)
}
