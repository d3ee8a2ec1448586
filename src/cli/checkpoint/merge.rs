//! `world checkpoint merge`: witness cosignature lines merged into the stored checkpoint.

use std::path::Path;

use crate::cli::key::{read_note, read_verifier, trust_err};
use crate::cli::output::Output;
use crate::cli::{CliError, Context, Exit};
use crate::ops::checkpoint as ops;

/// Merge the cosignatures of the cosigned copy in `file` into the stored checkpoint, each
/// `witness` key's verified first.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    file: &Path,
    witnesses: &[String],
) -> Result<Exit, CliError> {
    let what = "checkpoint merge";
    let note = read_note(file, what)?;
    let ws = witnesses
        .iter()
        .map(|w| read_verifier(w, what))
        .collect::<Result<Vec<_>, _>>()?;
    let mut store = ctx.open_write(false)?;
    let (row, added) = ops::merge(&mut store, &note, &ws).map_err(trust_err(what))?;
    if out.json {
        out.json_line(&row)?;
    } else {
        out.status(format!(
            "checkpoint {} ({} entries): {added} signature line(s) added",
            row.id, row.tree_size
        ));
    }
    Ok(Exit::Success)
}
