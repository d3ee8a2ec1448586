//! `world genesis`: create the store if needed and commit a deterministic genesis world
//! (store-format.md §8.5, DEC-STORE-3).

use std::path::PathBuf;

use super::output::Output;
use super::{read_input, CliError, Context, Exit};
use crate::encoding::HashRef;
use crate::genesis;
use crate::interp;
use crate::transitions::epoch;
use crate::transitions::publish::resolve_interpreter;

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
    let choice = args
        .interpreter
        .as_deref()
        .map(super::pin::parse_choice)
        .transpose()?;
    let mut store = ctx.open_write(true)?;
    if let Some(head) = store.head().map_err(|e| CliError::store("genesis", e))? {
        return Err(CliError::failed(
            "genesis",
            format!("the store already has a selected head {head}; genesis happens once"),
        ));
    }
    let pins = super::pin::provider(ctx);
    // With --interpreter: resolve (archiving a path) and bootstrap the epoch registry in the
    // same transaction as the genesis commit. Without: record the only pinned interpreter,
    // else the embedded identity, in the header only.
    let (interpreter, release) = match &choice {
        Some(c) => {
            let i = resolve_interpreter(c, pins.as_ref())
                .map_err(|e| super::pin::provider_err("genesis", e))?;
            let r =
                HashRef::parse(i.interpreter_ref()).map_err(|e| CliError::failed("genesis", e))?;
            (r, Some(i.release()))
        }
        None => {
            let archived = pins
                .archived()
                .map_err(|e| super::pin::provider_err("genesis", e))?;
            (
                if archived.len() == 1 {
                    archived[0]
                } else {
                    interp::embedded_ref()
                },
                None,
            )
        }
    };
    let commit = genesis::build(goal, &args.goal_semantic_id, &interpreter, 1);
    let tx = store
        .immediate()
        .map_err(|e| CliError::store("genesis", e))?;
    if let Some(release) = &release {
        epoch::bootstrap(&tx, release).map_err(|e| super::pin::epoch_err("genesis", e))?;
    }
    let landed = crate::store::commit::apply(&tx, &commit, ctx.now(), true)
        .map_err(|e| CliError::store("genesis", e))?;
    tx.commit()
        .map_err(|e| CliError::store("genesis", e.into()))?;
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
