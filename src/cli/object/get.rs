//! `world object get REF`: an object's metadata or payload (GET /v1/objects/{ref}).

use base64::Engine;

use crate::cli::output::Output;
use crate::cli::{read_err, CliError, Context, Exit};
use crate::encoding::HashRef;
use crate::store::refs::Space;

/// `world object get REF [--payload]`: the metadata of the object `reference` names, or its
/// payload bytes; exit 3 when the payload no longer hashes to its ref.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    reference: String,
    payload: bool,
) -> Result<Exit, CliError> {
    let store = ctx.open_read()?;
    let reference =
        crate::cli::refs::resolve(&store, &[Space::Object], &reference, "object get")?.reference;
    let Some(obj) = store.object(&reference).map_err(read_err("object get"))? else {
        return Err(CliError::failed(
            "object get",
            format!("object not found: {reference}"),
        ));
    };
    if !obj.verifies() {
        return Err(CliError::integrity(
            "object get",
            format!(
                "object {reference} payload hashes to {}; the store is damaged",
                HashRef::of(&obj.payload)
            ),
        )
        .hint("run `world verify` for a full report"));
    }
    if out.json {
        let mut v =
            serde_json::to_value(&obj.meta).map_err(|e| CliError::failed("object get", e))?;
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
    Ok(Exit::Success)
}
