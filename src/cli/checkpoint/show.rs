//! `world checkpoint show [SIZE]`: a stored checkpoint's note.

use crate::cli::output::Output;
use crate::cli::{CliError, Context, Exit};

/// Print the latest stored checkpoint, or the one of tree size `size`.
pub(super) fn run(ctx: &Context, out: &mut Output, size: Option<u64>) -> Result<Exit, CliError> {
    let what = "checkpoint show";
    let store = ctx.open_read()?;
    let rows =
        crate::store::checkpoints::list(store.conn()).map_err(|e| CliError::store(what, e))?;
    let row = match size {
        None => rows.last(),
        Some(n) => rows.iter().rev().find(|r| r.tree_size == n),
    }
    .ok_or_else(|| {
        CliError::failed(
            what,
            match size {
                None => "this store has no checkpoint".to_string(),
                Some(n) => format!("no checkpoint of tree size {n}"),
            },
        )
    })?;
    if out.json {
        out.json_line(row)?;
    } else {
        out.bytes(row.note.as_bytes())?;
    }
    Ok(Exit::Success)
}
