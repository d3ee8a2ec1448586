//! `world world get REF`: one world row.

use clap::Subcommand;

use super::output::Output;
use super::{read_err, CliError, Context, Exit};
use crate::store::refs::Space;

/// World-row commands.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Print one world row `{ref, revision, stateRoot, logHead}` (GET /v1/worlds/{ref})
    Get {
        /// The world ref: sha256:<hex>, the bare hex, a unique prefix (≥ 6 hex), or `head`
        #[arg(value_name = "REF")]
        reference: String,
    },
}

/// Run `world world …`.
pub fn run(ctx: &Context, out: &mut Output, cmd: Cmd) -> Result<Exit, CliError> {
    let Cmd::Get { reference } = cmd;
    let store = ctx.open_read()?;
    let reference = if reference == "head" {
        store
            .head()
            .map_err(read_err("world get"))?
            .ok_or_else(|| {
                CliError::failed("world get", "the store has no selected head yet")
                    .with_code("not_found")
                    .hint("create one with `world genesis`")
            })?
    } else {
        super::refs::resolve(&store, &[Space::World], &reference, "world get")?.reference
    };
    let Some(w) = store.world(&reference).map_err(read_err("world get"))? else {
        return Err(CliError::failed(
            "world get",
            format!("world not found: {reference}"),
        ));
    };
    if out.json {
        out.json_line(&w)?;
    } else {
        out.view(format!("ref        {}", w.reference))?;
        out.view(format!("revision   {}", w.revision))?;
        out.view(format!("stateRoot  {}", w.state_root))?;
        out.view(format!("logHead    {}", w.log_head))?;
    }
    Ok(Exit::Success)
}
