//! `world checkpoint list`: the checkpoints this store signed, oldest first.

use crate::cli::output::{rfc3339, Output};
use crate::cli::{CliError, Context, Exit};

/// List the stored checkpoints as a table or JSON lines.
pub(super) fn run(ctx: &Context, out: &mut Output) -> Result<Exit, CliError> {
    let store = ctx.open_read()?;
    let rows = crate::store::checkpoints::list(store.conn())
        .map_err(|e| CliError::store("checkpoint list", e))?;
    if out.json {
        for r in &rows {
            out.json_line(r)?;
        }
        return Ok(Exit::Success);
    }
    if rows.is_empty() {
        out.status("no checkpoints: sign one with world checkpoint --key FILE");
        return Ok(Exit::Success);
    }
    // docs/TABLES.md: ID always; ORIGIN, SIGNATURES, CREATED, ROOT and SIZE are hidden in
    // that order.
    let mut t = crate::cli::table::Table::new(vec![
        crate::cli::table::Col::id("id").right(),
        crate::cli::table::Col::id("size").drop(5).right(),
        crate::cli::table::Col::id("root").drop(4),
        crate::cli::table::Col::id("origin").drop(1),
        crate::cli::table::Col::id("signatures").drop(2).right(),
        crate::cli::table::Col::id("created").drop(3),
    ]);
    for r in &rows {
        let sigs = crate::tlog::note::Note::parse(r.note.as_bytes())
            .map(|n| n.signatures.len())
            .unwrap_or(0);
        t.add_row(vec![
            r.id.to_string(),
            r.tree_size.to_string(),
            hex::encode(&r.root_hash[..6]),
            r.origin.clone(),
            sigs.to_string(),
            rfc3339(r.created_at),
        ]);
    }
    out.table(&t)?;
    Ok(Exit::Success)
}
