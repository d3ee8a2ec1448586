//! Commit the deterministic genesis world (store-format.md §8.5, DEC-STORE-3): `world genesis`.

use crate::encoding::HashRef;
use crate::genesis;
use crate::interp;
use crate::store::{self, commit::Landed, Store};
use crate::transitions::epoch::{self, EpochError};
use crate::transitions::publish::{
    resolve_interpreter, InterpreterChoice, InterpreterProvider, ProviderError,
};

/// What to commit.
#[derive(Clone, Debug)]
pub struct Options {
    /// The goal object's payload (`world genesis --goal-file`, default `{}`).
    pub goal: Vec<u8>,
    /// The goal object's semantic id (non-empty).
    pub goal_semantic_id: String,
    /// Pin this interpreter first and bootstrap the epoch registry from its release, in the
    /// same transaction; `None` records the store's only archived interpreter, else the
    /// embedded identity, in the header and bootstraps nothing.
    pub interpreter: Option<InterpreterChoice>,
    /// The commit's logical time, Unix seconds.
    pub now: i64,
}

/// What [`genesis`] wrote.
#[derive(Clone, Debug)]
pub struct Committed {
    /// The landed commit (selected head, entry index and hash).
    pub landed: Landed,
    /// The goal object's ref.
    pub goal: String,
    /// The interpreter the header records.
    pub interpreter: String,
}

/// Why [`genesis`] failed; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum GenesisError {
    /// `goal_semantic_id` is empty.
    #[error("--goal-semantic-id must not be empty")]
    EmptySemanticId,
    /// The store already has a selected head: genesis happens once.
    #[error("the store already has a selected head {0}; genesis happens once")]
    HeadExists(String),
    /// The interpreter could not be resolved or listed.
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// The epoch registry refused the bootstrap.
    #[error(transparent)]
    Epoch(#[from] EpochError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// Commit the genesis world in one transaction (with the epoch bootstrap when an interpreter
/// is named).
///
/// # Errors
/// [`GenesisError`].
pub fn genesis(
    store: &mut Store,
    provider: &dyn InterpreterProvider,
    opts: &Options,
) -> Result<Committed, GenesisError> {
    if opts.goal_semantic_id.is_empty() {
        return Err(GenesisError::EmptySemanticId);
    }
    if let Some(head) = store.head()? {
        return Err(GenesisError::HeadExists(head));
    }
    let (interpreter, release) = match &opts.interpreter {
        Some(c) => {
            let i = resolve_interpreter(c, provider)?;
            let r = HashRef::parse(i.interpreter_ref()).map_err(|e| ProviderError {
                message: format!("interpreter ref {}: {e}", i.interpreter_ref()),
                integrity: false,
            })?;
            (r, Some(i.release()))
        }
        None => {
            let archived = provider.archived()?;
            (
                if archived.len() == 1 {
                    archived[0]
                } else {
                    interp::embedded_ref()
                },
                None,
            )
        }
    };
    let commit = genesis::build(opts.goal.clone(), &opts.goal_semantic_id, &interpreter, 1);
    let tx = store.immediate()?;
    if let Some(release) = &release {
        epoch::bootstrap(&tx, release)?;
    }
    let landed = store::commit::apply(&tx, &commit, opts.now, true)?;
    tx.commit().map_err(store::Error::from)?;
    Ok(Committed {
        landed,
        goal: commit.objects[0].meta.hash.clone(),
        interpreter: commit.entry.header.interpreter.clone(),
    })
}
