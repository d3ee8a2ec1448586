//! Re-derive recorded episodes (replay.md): `world replay`.
//!
//! Read-only: the store is opened for reading and nothing is written to it. A bundle exported
//! with `--embed` carries its interpreters as objects; they are materialized into a private
//! temporary directory for the run and resolved from there, else from the store's own archive.

use std::path::PathBuf;

use crate::replay::bundle::{self, ReadOnlyPins};
use crate::replay::{self, EntryResult, ReplayError, Report, Selection};
use crate::store::{self, Store};

/// What to replay.
#[derive(Clone, Debug)]
pub struct Options {
    /// Which entries.
    pub selection: Selection,
    /// The store file's path (its interpreter archive sits next to it).
    pub db: PathBuf,
    /// How to replay (`keep_going` past the first divergence, …).
    pub replay: replay::Options,
}

/// Why [`replay`] produced no report.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The bundled interpreters could not be materialized.
    #[error("materialize bundled interpreters: {0}")]
    Materialize(#[source] store::Error),
    /// The selection or a read failed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
}

/// Replay `opts.selection` of `store`; `on_entry(result, done, total)` sees each entry as it is
/// re-derived.
///
/// # Errors
/// [`Error`]. A divergence is not an error: it is in the [`Report`].
pub fn replay(
    store: &Store,
    opts: &Options,
    on_entry: &mut dyn FnMut(&EntryResult, usize, usize),
) -> Result<Report, Error> {
    let materialized = bundle::materialize(store.conn()).map_err(Error::Materialize)?;
    let pins = match &materialized {
        Some(m) => ReadOnlyPins::for_db(&m.db_path()),
        None => ReadOnlyPins::for_db(&opts.db),
    };
    Ok(replay::replay(
        store,
        &opts.selection,
        &pins,
        &opts.replay,
        on_entry,
    )?)
}
