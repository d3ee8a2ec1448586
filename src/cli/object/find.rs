//! `world object find SEMANTIC_ID`: objects with a semantic id, ascending hash, paged
//! (GET /v1/objects/by-semantic-id).

use crate::cli::output::Output;
use crate::cli::table::{Col, Table};
use crate::cli::{read_err, CliError, Context, Exit};

/// `--after REF`: a full ref, or a hex prefix taken as the last ref starting with it
/// (`sha256:<prefix>fff…`), so a short ref printed as a paging hint continues the listing.
fn after_bound(text: &str) -> Result<String, CliError> {
    let hex = crate::store::refs::hex_of(text)
        .map_err(|e| CliError::failed("object find --after", e).with_code("bad_ref"))?;
    Ok(format!("sha256:{hex}{}", "f".repeat(64 - hex.len())))
}

/// `world object find SEMANTIC_ID [--after REF] [--limit N]`: one page of the objects with
/// `semantic_id`, after `after` (exclusive), at most `limit`.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    semantic_id: String,
    after: Option<String>,
    limit: u32,
) -> Result<Exit, CliError> {
    if semantic_id.is_empty() {
        return Err(CliError::failed("object find", "the semantic id is empty"));
    }
    let store = ctx.open_read()?;
    // `--after` is a position, not a lookup: a prefix is padded, never resolved, so
    // the hint below (a short ref) pages on even when the object has gone.
    let after = match after {
        Some(a) => Some(after_bound(&a)?),
        None => None,
    };
    let items = store
        .objects_by_semantic_id(&semantic_id, after.as_deref(), limit as usize)
        .map_err(read_err("object find"))?;
    if out.json {
        for i in &items {
            out.json_line(i)?;
        }
    } else if items.is_empty() {
        out.status(format!(
            "no objects with semantic id {}",
            crate::termtext::escape_line(&semantic_id)
        ));
    } else {
        let esc = |s: &str| crate::termtext::escape_line(s).into_owned();
        // docs/TABLES.md: HASH (12 hex digits, the prefix `object get` takes; --json
        // has the full ref) always; PROVENANCE, then SEMANTIC ID, are hidden.
        let mut t = Table::new(vec![
            Col::id("hash"),
            Col::id("semantic id").drop(2),
            Col::id("provenance").drop(1),
        ]);
        for i in &items {
            t.add_row(vec![
                crate::cli::output::short(&i.hash),
                esc(&i.semantic_id),
                esc(&i.provenance),
            ]);
        }
        out.table(&t)?;
        if items.len() == limit as usize {
            out.status(format!(
                "more may follow: --after {}",
                items[items.len() - 1].hash
            ));
        }
    }
    Ok(Exit::Success)
}
