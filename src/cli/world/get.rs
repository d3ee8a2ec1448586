//! `world world get REF`: print one world row.

use crate::cli::output::Output;
use crate::cli::{read_err, CliError, Context, Exit};
use crate::store::refs::Space;

/// `world world get REF`: the world row `reference` names (`head`, a ref or a unique prefix).
pub(super) fn run(ctx: &Context, out: &mut Output, reference: String) -> Result<Exit, CliError> {
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
        crate::cli::refs::resolve(&store, &[Space::World], &reference, "world get")?.reference
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
