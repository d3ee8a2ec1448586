//! Transparency-log formats, independent of the store: RFC 9162 Merkle trees and proofs
//! ([`merkle`]), C2SP `signed-note` and `tlog-cosignature` with Ed25519 keys ([`note`]), and
//! C2SP `tlog-checkpoint` and `tlog-proof` texts ([`checkpoint`]). The store keeps its log's
//! tree in a derived table (`store::merkle`); `ops::checkpoint` signs, proves and checks.
//! Nothing here reads a file, a clock or a store.

pub mod checkpoint;
pub mod merkle;
pub mod note;
