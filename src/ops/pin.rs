//! Pin an interpreter and bootstrap the epoch registry from its release (transitions.md §4–§5):
//! `world pin`, `world genesis --interpreter`, and `world serve` at startup.

use crate::store::{self, Store};
use crate::transitions::epoch::{self, Bootstrapped, EpochError};
use crate::transitions::publish::{
    resolve_interpreter, InterpreterChoice, InterpreterProvider, ProviderError,
};

/// What [`pin`] did.
#[derive(Clone, Debug)]
pub struct Pinned {
    /// The interpreter's ref (`sha256:…` of the archived binary, or the embedded identity).
    pub interpreter_ref: String,
    /// Its release text (the first line of `--version`, e.g. `AILANG v0.41.0`).
    pub release: String,
    /// Its full version text.
    pub version_text: String,
    /// The epoch registry after the bootstrap: created now, or already nominating this release.
    pub epoch: Bootstrapped,
}

impl Pinned {
    /// `true` when this call created the epoch registry.
    pub fn created(&self) -> bool {
        matches!(self.epoch, Bootstrapped::Created(_))
    }
}

/// Why [`pin`] failed; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    /// The interpreter could not be resolved or archived (an archived binary that no longer
    /// matches its ref has `integrity` set).
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// The epoch registry refused the bootstrap (divergence, corrupt head).
    #[error(transparent)]
    Epoch(#[from] EpochError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// Resolve `choice` through `provider` (archiving a path), then bootstrap the epoch registry
/// from its release in one transaction. A registry that already nominates the release is left
/// as it is; one naming another release is never rewritten ([`EpochError::Divergence`]).
///
/// # Errors
/// [`PinError`]; the store is unchanged on any error.
pub fn pin(
    store: &mut Store,
    provider: &dyn InterpreterProvider,
    choice: &InterpreterChoice,
) -> Result<Pinned, PinError> {
    let interp = resolve_interpreter(choice, provider)?;
    let release = interp.release();
    let tx = store.immediate()?;
    let done = epoch::bootstrap(&tx, &release)?;
    tx.commit().map_err(store::Error::from)?;
    Ok(Pinned {
        interpreter_ref: interp.interpreter_ref().to_string(),
        release,
        version_text: interp.version_text().to_string(),
        epoch: done,
    })
}
