//! `world object get|find`: read content-addressed objects (store-format.md §6).

use base64::Engine;
use clap::Subcommand;

use super::output::Output;
use super::table::{Col, Table};
use super::{read_err, CliError, Context, Exit};
use crate::encoding::HashRef;
use crate::store::refs::Space;

/// `--after REF`: a full ref, or a hex prefix taken as the last ref starting with it
/// (`sha256:<prefix>fff…`), so a short ref printed as a paging hint continues the listing.
fn after_bound(text: &str) -> Result<String, CliError> {
    let hex = crate::store::refs::hex_of(text)
        .map_err(|e| CliError::failed("object find --after", e).with_code("bad_ref"))?;
    Ok(format!("sha256:{hex}{}", "f".repeat(64 - hex.len())))
}

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
        Cmd::Get { reference, payload } => {
            let store = ctx.open_read()?;
            let reference =
                super::refs::resolve(&store, &[Space::Object], &reference, "object get")?.reference;
            let Some(obj) = store.object(&reference).map_err(read_err("object get"))? else {
                return Err(CliError::failed(
                    "object get",
                    format!("object not found: {reference}"),
                ));
            };
            if !obj.verifies() {
                return Err(CliError::new(
                    Exit::Integrity,
                    "object get",
                    format!(
                        "object {reference} payload hashes to {}; the store is damaged",
                        HashRef::of(&obj.payload)
                    ),
                )
                .hint("run `world verify` for a full report"));
            }
            if out.json {
                let mut v = serde_json::to_value(&obj.meta)
                    .map_err(|e| CliError::failed("object get", e))?;
                if payload {
                    v["payload"] = base64::engine::general_purpose::STANDARD
                        .encode(&obj.payload)
                        .into();
                }
                out.json_line(&v)?;
            } else if payload {
                // The bytes as stored for a pipe or a file; escaped on a terminal, where they
                // could otherwise drive it (DEC-TRUST3-4).
                if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
                    let text = String::from_utf8_lossy(&obj.payload);
                    out.bytes(crate::termtext::escape_text(&text).as_bytes())?;
                } else {
                    out.bytes(&obj.payload)?;
                }
            } else {
                let esc = crate::termtext::escape_line;
                out.line(format!("hash           {}", obj.meta.hash))?;
                out.line(format!("interfaceHash  {}", esc(&obj.meta.interface_hash)))?;
                out.line(format!("semanticId     {}", esc(&obj.meta.semantic_id)))?;
                out.line(format!("provenance     {}", esc(&obj.meta.provenance)))?;
                out.line(format!("size           {} bytes", obj.payload.len()))?;
            }
        }
        Cmd::Find {
            semantic_id,
            after,
            limit,
        } => {
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
                        super::output::short(&i.hash),
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
        }
    }
    Ok(Exit::Success)
}
