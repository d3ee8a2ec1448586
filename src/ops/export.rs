//! Export one episode as a self-contained bundle store (issue 6 part 4): `world export-episode`.
//!
//! The source store is only read; the bundle is a new store file (never overwritten) written
//! through the store's own row writers ([`crate::store::bundle`]), with the pinned interpreters
//! copied next to it or embedded. What goes in is [`crate::replay::bundle`]'s choice; with
//! `checkpoint`, the entries' inclusion proofs against the latest signed checkpoint
//! ([`super::checkpoint::bundle_proofs`]) go in too.

use std::path::PathBuf;

use crate::replay::bundle::{self, ExportError, Exported};
use crate::store::Store;

/// What to export.
#[derive(Clone, Debug)]
pub struct Options {
    /// The episode id.
    pub episode: String,
    /// The bundle store to create (refused when it, or `FILE.artifacts`, exists).
    pub out: PathBuf,
    /// Store the pinned interpreter binaries inside the bundle instead of `FILE.artifacts/`.
    pub embed: bool,
    /// Put the store's latest signed checkpoint and every exported entry's inclusion proof
    /// into the bundle (DEC-TRUST-4).
    pub checkpoint: bool,
}

/// Export `opts.episode` from `src` into `opts.out`; `progress(done, total)` is called as
/// objects are copied.
///
/// # Errors
/// [`ExportError`]: the target exists, no such episode, a pinned interpreter that cannot be
/// bundled (`integrity` when its archived bytes no longer match the ref), a store or I/O
/// failure. The source store is never written.
pub fn export_episode(
    src: &Store,
    opts: &Options,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Exported, ExportError> {
    let prove = |indexes: &[i64]| {
        super::checkpoint::bundle_proofs(src, indexes).map_err(|e| ExportError::Proofs {
            integrity: matches!(e, super::checkpoint::TrustError::Integrity(_)),
            message: e.to_string(),
        })
    };
    let prover: Option<bundle::Prover<'_>> = opts.checkpoint.then_some(&prove);
    bundle::export_episode_with(src, &opts.episode, &opts.out, opts.embed, prover, progress)
}
