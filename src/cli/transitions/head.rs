//! The selected transition registry revision, read and rendered for `transitions list` and
//! `transitions show` (transitions.md §1).

use crate::cli::{CliError, Context};
use crate::encoding::trcjson::{self, CValue};
use crate::transitions::publish::{self, Head, PublishError};
use crate::transitions::registry::{self, Descriptor, Effect};

/// A registry-head read error: the store's own, exit 3 for a damaged revision, else exit 1.
fn head_err(what: &str, e: PublishError) -> CliError {
    match e {
        PublishError::Store(s) => CliError::store(what, s),
        e if e.is_integrity() => {
            CliError::integrity(what, e).hint("run `world verify` for a full report")
        }
        e => CliError::failed(what, e),
    }
}

/// The effects one per line, `-` for none.
pub(super) fn effects(list: &[Effect]) -> String {
    if list.is_empty() {
        return "-".into();
    }
    list.iter()
        .map(Effect::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The descriptor's canonical JSON plus `extra` members.
pub(super) fn json(d: &Descriptor, extra: Vec<(String, CValue)>) -> Vec<u8> {
    let mut members = match d.to_cvalue() {
        CValue::Object(m) => m,
        other => vec![("descriptor".into(), other)],
    };
    members.extend(extra);
    let mut bytes = trcjson::encode(&CValue::object(members));
    bytes.push(b'\n');
    bytes
}

/// The selected transition registry head and its provenance; `None` before any publish.
pub(super) fn read(ctx: &Context, what: &str) -> Result<Option<(Head, String)>, CliError> {
    let store = ctx.open_read()?;
    let Some(head) = publish::read_head(store.conn()).map_err(|e| head_err(what, e))? else {
        return Ok(None);
    };
    let provenance = store
        .object(&head.reference.to_string())
        .map_err(|e| CliError::store(what, e))?
        .map(|o| o.meta.provenance)
        .unwrap_or_default();
    Ok(Some((head, provenance)))
}

/// The status line naming the revision, its head, its size and who published it.
pub(super) fn revision_line(head: &Head, provenance: &str) -> String {
    let who = if provenance == registry::PROVENANCE_UNATTENDED {
        "published unattended (--yes): no human confirmed it".to_string()
    } else {
        format!("provenance {provenance}")
    };
    format!(
        "transition registry revision {} (head {}), {} descriptor(s), {who}",
        head.revision.revision,
        head.reference,
        head.revision.entries.len()
    )
}
