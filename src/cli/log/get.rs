//! `world log get ENTRY`: one log entry's header (GET /v1/log/{index}).

use super::entry_index;
use crate::cli::output::Output;
use crate::cli::{read_err, CliError, Context, Exit};

/// `world log get INDEX`: one log entry's header, as a view or JSON.
pub(super) fn run(ctx: &Context, out: &mut Output, index: &str) -> Result<Exit, CliError> {
    let store = ctx.open_read()?;
    let idx = entry_index(&store, index, "log get")?;
    let Some(e) = store.log_entry(idx).map_err(read_err("log get"))? else {
        return Err(
            CliError::failed("log get", format!("log entry not found: {idx}"))
                .with_code("not_found"),
        );
    };
    if out.json {
        out.json_line(&e)?;
    } else {
        out.view(format!("entry {}", e.header.entry_index))?;
        out.view(format!("  entryHash       {}", e.entry_hash))?;
        out.view(format!("  semanticsEpoch  {}", e.header.semantics_epoch))?;
        out.view(format!("  transitionFn    {}", e.header.transition_fn))?;
        out.view(format!("  interpreter     {}", e.header.interpreter))?;
        out.view(format!("  prevEntryHash   {}", e.header.prev_entry_hash))?;
        out.view(format!(
            "  writtenBy       {}",
            crate::termtext::escape_line(&e.header.written_by)
        ))?;
        out.view(format!("  transitionRef   {}", e.transition_ref))?;
    }
    Ok(Exit::Success)
}
