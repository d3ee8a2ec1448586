//! `world genesis`: create the store if needed and commit a deterministic genesis world
//! (store-format.md §8.5, DEC-STORE-3).

use std::path::PathBuf;

use super::output::Output;
use super::{read_input, CliError, Context, Exit};
use crate::genesis;
use crate::interp;

/// Commit a genesis world; refuses when a head already exists.
///
/// The goal object holds the `--goal-file` bytes (default `{}`); the header records the
/// store's only pinned interpreter, else the embedded interpreter's identity.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// File whose bytes become the goal object (default: `{}`)
    #[arg(long, value_name = "FILE")]
    goal_file: Option<PathBuf>,
    /// Semantic id of the goal object
    #[arg(long, value_name = "ID", default_value = genesis::GOAL_SEMANTIC_ID)]
    goal_semantic_id: String,
}

/// Run `world genesis`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    let goal = match &args.goal_file {
        Some(p) => read_input(p, crate::store::commit::MAX_BODY, "genesis")?,
        None => b"{}".to_vec(),
    };
    if args.goal_semantic_id.is_empty() {
        return Err(CliError::usage(
            "genesis",
            "--goal-semantic-id must not be empty",
        ));
    }
    let mut store = ctx.open_write(true)?;
    if let Some(head) = store.head().map_err(|e| CliError::store("genesis", e))? {
        return Err(CliError::failed(
            "genesis",
            format!("the store already has a selected head {head}; genesis happens once"),
        ));
    }
    let commit = genesis::build(goal, &args.goal_semantic_id, &interp::embedded_ref(), 1);
    let landed = store
        .commit(&commit, ctx.now())
        .map_err(|e| CliError::store("genesis", e))?;
    if out.json {
        out.json_line(&serde_json::json!({
            "selectedHead": landed.selected_head,
            "entryIndex": landed.entry_index,
            "entryHash": landed.entry_hash,
            "goal": commit.objects[0].meta.hash,
            "interpreter": commit.entry.header.interpreter,
        }))?;
    } else {
        out.line(&landed.selected_head)?;
        out.status(format!(
            "genesis world committed at entry 0 (entry hash {}) in {}",
            landed.entry_hash,
            ctx.db.display()
        ));
    }
    Ok(Exit::Success)
}
