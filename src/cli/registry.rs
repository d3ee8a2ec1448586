//! `world registry get NAME`: a named registry head.

use clap::Subcommand;

use super::output::Output;
use super::{read_err, CliError, Context, Exit};

/// Registry-head commands.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Print a registry head, e.g. world/transition-registry/v1 (GET /v1/registry/{name})
    Get {
        /// Registry name
        name: String,
    },
}

/// Run `world registry …`.
pub fn run(ctx: &Context, out: &mut Output, cmd: Cmd) -> Result<Exit, CliError> {
    let Cmd::Get { name } = cmd;
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
