//! Ref arguments, resolved in one place (DEC-CLI-19): every argument that names an object,
//! world, entry, approval, session or effect goes through [`resolve`], so the short refs
//! tables print can be pasted back.

use super::CliError;
use crate::store::read::{RefError, Space, Store};

pub use crate::store::read::Candidate;

/// Resolve `text` among `spaces` for the command `what`; errors carry the candidates of an
/// ambiguous prefix as `hint:` lines (and as `candidates` in the JSON envelope).
///
/// # Errors
/// Exit 1 for a malformed, too short, unknown or ambiguous ref (codes `bad_ref`, `not_found`,
/// `ambiguous_ref`); exit 255 when the store cannot be read.
pub fn resolve(
    store: &Store,
    spaces: &[Space],
    text: &str,
    what: &str,
) -> Result<Candidate, CliError> {
    store
        .resolve_ref(spaces, text)
        .map_err(|e| ref_err(what, e))
}

/// [`resolve`] for commands that treat a malformed ref as a usage error (exit 2), as
/// `approval` and `effects` always have; unknown and ambiguous refs stay exit 1.
pub fn resolve_usage(
    store: &Store,
    spaces: &[Space],
    text: &str,
    what: &str,
) -> Result<Candidate, CliError> {
    store
        .resolve_ref(spaces, text)
        .map_err(|e| usage_ref_err(what, e))
}

/// [`ref_err`], with a malformed ref as a usage error (exit 2).
pub fn usage_ref_err(what: &str, e: RefError) -> CliError {
    let mut err = ref_err(what, e);
    if err.code() == "bad_ref" {
        err.exit = super::Exit::Usage;
    }
    err
}

/// Turn a [`RefError`] into the CLI error for `what`.
pub fn ref_err(what: &str, e: RefError) -> CliError {
    match e {
        RefError::Sqlite(s) => CliError::store(what, s.into()),
        RefError::NotARef(_) | RefError::TooShort(_) => {
            CliError::failed(what, &e).with_code("bad_ref")
        }
        RefError::NotFound { .. } => CliError::failed(what, &e).with_code("not_found"),
        RefError::Ambiguous { ref candidates, .. } => {
            let list: Vec<serde_json::Value> = candidates
                .iter()
                .map(|c| serde_json::json!({"ref": c.reference, "kind": c.space.noun(), "detail": c.detail}))
                .collect();
            let mut err = CliError::failed(what, &e)
                .with_code("ambiguous_ref")
                .detail("candidates", list);
            for c in candidates {
                err = err.hint(format!("{} ({} {})", c.reference, c.space.noun(), c.detail));
            }
            err.hint("give more hex digits")
        }
    }
}
