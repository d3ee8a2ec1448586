//! `world object get|find`: read content-addressed objects (store-format.md §6).

mod find;
mod get;

use clap::Subcommand;

use super::output::Output;
use super::{CliError, Context, Exit};

/// Object commands.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Print an object's metadata, or its payload bytes with --payload (GET /v1/objects/{ref})
    Get {
        /// The object ref: sha256:<hex>, the bare hex, or a unique prefix (≥ 6 hex)
        #[arg(value_name = "REF")]
        reference: String,
        /// Print the payload: raw bytes on stdout, or base64 in the JSON form
        #[arg(long)]
        payload: bool,
    },
    /// List objects with a semantic id, ascending hash, paged (GET /v1/objects/by-semantic-id)
    Find {
        /// The semantic id, e.g. world/effect-record/v1
        semantic_id: String,
        /// Start after this hash (exclusive)
        #[arg(long, value_name = "REF")]
        after: Option<String>,
        /// Page size: 1..500, default 100
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=500))]
        limit: u32,
    },
}

/// Run `world object …`.
pub fn run(ctx: &Context, out: &mut Output, cmd: Cmd) -> Result<Exit, CliError> {
    match cmd {
        Cmd::Get { reference, payload } => get::run(ctx, out, reference, payload),
        Cmd::Find {
            semantic_id,
            after,
            limit,
        } => find::run(ctx, out, semantic_id, after, limit),
    }
}
