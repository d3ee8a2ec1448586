//! The store's encodings: `HashRef` and the three canonical encoders (store-format.md §5, §7).
//!
//! The store has no single canonical JSON: each semantic id uses exactly one of Go-json
//! ([`gojson`]), TR-CJSON-1 ([`trcjson`]) or `canon.Source` ([`canon`]), byte for byte.

pub mod canon;
pub mod gojson;
pub mod hashref;
pub mod trcjson;

pub use hashref::HashRef;

/// `sha256(semanticId)`: the `interfaceHash` every coordinator, broker, journal and registry
/// writer uses (store-format.md §6.2).
pub fn interface_hash(semantic_id: &str) -> HashRef {
    HashRef::of(semantic_id.as_bytes())
}
