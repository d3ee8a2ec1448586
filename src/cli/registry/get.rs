//! `world registry get NAME`: print one named registry head.

use crate::cli::output::Output;
use crate::cli::{read_err, CliError, Context, Exit};

/// `world registry get NAME`: the head of registry `name` (exit 1 when there is none).
pub(super) fn run(ctx: &Context, out: &mut Output, name: String) -> Result<Exit, CliError> {
    if name.is_empty() {
        return Err(CliError::usage(
            "registry get",
            "the registry name is empty",
        ));
    }
    let store = ctx.open_read()?;
    let Some(head) = store
        .registry_head(&name)
        .map_err(read_err("registry get"))?
    else {
        return Err(CliError::failed(
            "registry get",
            format!("registry head not found: {name}"),
        ));
    };
    if out.json {
        out.json_line(&serde_json::json!({"name": name, "head": head}))?;
    } else {
        out.line(head)?;
    }
    Ok(Exit::Success)
}
