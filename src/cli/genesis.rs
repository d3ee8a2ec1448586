//! `world genesis`: create the store if needed and commit a deterministic genesis world
//! (store-format.md §8.5, DEC-STORE-3).

use std::path::PathBuf;

use super::output::Output;
use super::{read_input, CliError, Context, Exit};
use crate::genesis;
use crate::ops;

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
    /// Pin an interpreter first (a path is archived, a sha256: ref resolved, or `embedded`)
    /// and bootstrap the epoch registry from its release; without it the header records the
    /// store's only pinned interpreter, else the embedded one, and nothing is bootstrapped
    #[arg(long, visible_alias = "ailang-bin", value_name = "PATH|REF|embedded")]
    interpreter: Option<String>,
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
    let interpreter = args
        .interpreter
        .as_deref()
        .map(super::pin::parse_choice)
        .transpose()?;
    let mut store = ctx.open_write(true)?;
    let pins = super::pin::provider(ctx);
    let opts = ops::genesis::Options {
        goal,
        goal_semantic_id: args.goal_semantic_id,
        interpreter,
        now: ctx.now(),
    };
    let done = ops::genesis::genesis(&mut store, pins.as_ref(), &opts)
        .map_err(|e| super::error::genesis_err("genesis", e))?;
    if out.json {
        out.json_line(&serde_json::json!({
            "selectedHead": done.landed.selected_head,
            "entryIndex": done.landed.entry_index,
            "entryHash": done.landed.entry_hash,
            "goal": done.goal,
            "interpreter": done.interpreter,
        }))?;
    } else {
        out.line(&done.landed.selected_head)?;
        out.status(format!(
            "genesis world committed at entry 0 (entry hash {}) in {}",
            done.landed.entry_hash,
            ctx.db.display()
        ));
    }
    Ok(Exit::Success)
}
