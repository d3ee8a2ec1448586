//! `world transitions list`: every descriptor of the selected registry revision.

use super::head::{effects, json, read, revision_line};
use crate::cli::output::{short, Output};
use crate::cli::table::{Col, Table};
use crate::cli::{CliError, Context, Exit};

/// `world transitions list [--json]`: a table (or JSON lines) of the current revision's
/// descriptors, with the revision line on stderr.
pub(super) fn run(ctx: &Context, out: &mut Output) -> Result<Exit, CliError> {
    let Some((head, provenance)) = read(ctx, "transitions list")? else {
        out.status("no transition registry in this store yet; publish one with `world publish --manifest FILE`");
        return Ok(Exit::Success);
    };
    if out.json {
        for d in &head.revision.entries {
            out.bytes(&json(d, Vec::new()))?;
        }
        return Ok(Exit::Success);
    }
    // docs/TABLES.md: ID always; TITLE is cut first; then INTERPRETER, EPOCH,
    // TRANSITION FN, TITLE, DECLARED EFFECTS and ACCESS are hidden in that order.
    let mut t = Table::new(vec![
        Col::id("id"),
        Col::text("title").drop(4),
        Col::id("access").drop(6),
        Col::list("declared effects").drop(5),
        Col::id("transition fn").drop(3),
        Col::id("interpreter").drop(1),
        Col::id("epoch").drop(2),
    ]);
    for d in &head.revision.entries {
        t.add_row(vec![
            d.id.clone(),
            crate::termtext::escape_line(&d.title).into_owned(),
            d.access.to_string(),
            effects(&d.declared_effects),
            short(&d.transition_fn.to_string()),
            short(&d.interpreter.to_string()),
            d.semantics_epoch.to_string(),
        ]);
    }
    out.status(revision_line(&head, &provenance));
    if !head.revision.entries.is_empty() {
        out.table(&t)?;
    }
    Ok(Exit::Success)
}
