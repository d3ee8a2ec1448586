//! Publish-time checks that a descriptor's schemas can ever be used (issue 13 §7): a schema
//! that fails to compile (an invalid `pattern` regex such as `((`), names a remote `$ref`
//! (never fetched: refused), or nests deeper than [`MAX_SCHEMA_NESTING`] would refuse every
//! call at invoke time, so `publish` refuses it naming the descriptor.

use crate::encoding::trcjson::CValue;

/// Deepest array/object nesting a published schema may have.
pub const MAX_SCHEMA_NESTING: usize = 64;

/// Why schema `which` (`inputSchema`/`outputSchema`) of transition `id` is unusable, if it is.
pub fn unusable(id: &str, which: &str, schema: &CValue) -> Option<String> {
    fn depth(v: &CValue) -> usize {
        match v {
            CValue::Array(xs) => 1 + xs.iter().map(depth).max().unwrap_or(0),
            CValue::Object(ms) => 1 + ms.iter().map(|(_, x)| depth(x)).max().unwrap_or(0),
            _ => 0,
        }
    }
    fn remote_ref(v: &CValue) -> Option<String> {
        match v {
            CValue::Array(xs) => xs.iter().find_map(remote_ref),
            CValue::Object(ms) => ms.iter().find_map(|(k, x)| match (k.as_str(), x) {
                ("$ref", CValue::String(r)) if !r.starts_with('#') => Some(r.clone()),
                _ => remote_ref(x),
            }),
            _ => None,
        }
    }
    let d = depth(schema);
    if d > MAX_SCHEMA_NESTING {
        return Some(format!(
            "transition {id:?}: {which} nests {d} levels deep; the bound is {MAX_SCHEMA_NESTING}"
        ));
    }
    if let Some(r) = remote_ref(schema) {
        return Some(format!(
            "transition {id:?}: {which} names the remote $ref {r:?}; only local refs (#…) are resolved"
        ));
    }
    if let Err(e) = jsonschema::validator_for(&schema.to_json()) {
        return Some(format!("transition {id:?}: {which} does not compile: {e}"));
    }
    None
}
