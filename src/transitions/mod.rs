//! Transitions as stored objects: the epoch registry, the transition registry, the publish
//! manifest and the publish algorithm (transitions.md §1–§5, store-format.md §7.2, §14).
//!
//! - [`epoch`]: `world/epoch-registry/v1`, its single-epoch bootstrap and epoch derivation.
//! - [`registry`]: descriptors and revisions of `world/transition-registry/v1` (TR-CJSON-1),
//!   the id grammar, `InterfaceHashV1` and the MCP tool-name escape.
//! - [`manifest`]: the `world publish --manifest` input format.
//! - [`publish`]: interpreter resolution, `plan_publish` (pure planning and checking) and
//!   `commit_publish` (one `BEGIN IMMEDIATE` transaction with a registry-head CAS).

pub mod epoch;
pub mod manifest;
pub mod pins;
pub mod publish;
pub mod registry;
pub mod schema_check;

/// Semantic id of published transition sources (`canon.Source` bytes; transitions.md §3).
pub const SOURCE_SEMANTIC_ID: &str = "world/transition-source/v1";

/// Provenance of transition sources `world publish` stores (first writer wins; store-format.md §6.3).
pub const SOURCE_PROVENANCE: &str = "cmd/world-publish";
