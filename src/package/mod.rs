//! AILANG packages and the registry they are published to (`world package`, issue 31): the
//! manifest, the ready packet and its digests, the tarball, the `Registry.Publish` wire
//! (scopes, request payload, result, outcome classes) and the registry protocol (origins, the
//! credential file, `POST /publish`, the read-only bucket probe).
//!
//! Pure and local except [`registry`]'s HTTP calls; nothing here touches the store. The broker's
//! `Registry.Publish` handler (`broker::handlers::registry`) and the use cases in
//! `ops::package` are its callers.

pub mod manifest;
pub mod packet;
pub mod publish;
pub mod registry;
pub mod tarball;

pub use manifest::Manifest;
pub use packet::ReadyPacket;
