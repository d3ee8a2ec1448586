//! Publish transitions as a new transition-registry revision (transitions.md §2–§3):
//! `world publish`.
//!
//! Two steps with the caller's decision between them: [`plan`] resolves the interpreter and
//! checks the manifest against the store under the writer lock (writes nothing) and returns
//! the diff; the caller shows it and, when attended, asks for confirmation; [`commit`] then
//! writes the revision (and the epoch bootstrap the plan carries) in one transaction, or
//! nothing when the head moved since the plan.

use std::path::PathBuf;

use crate::store::{self, Store};
use crate::transitions::epoch;
use crate::transitions::manifest::Manifest;
use crate::transitions::publish::{
    commit_publish, plan_publish, resolve_interpreter, InterpreterChoice, InterpreterProvider,
    Outcome, Plan, PlanOptions, Progress, ProviderError, PublishError,
};

/// What to plan.
#[derive(Clone, Debug)]
pub struct Options {
    /// The interpreter to pin (`--interpreter`); [`InterpreterChoice::Default`] is the store's
    /// only archived interpreter, else the embedded one.
    pub choice: InterpreterChoice,
    /// The directory `transitionFnFile` paths are relative to (the current directory).
    pub base_dir: PathBuf,
}

/// A plan ready to show and commit.
#[derive(Debug)]
pub struct Planned {
    /// The checked revision, its base and diff, and the epoch bootstrap it carries, if any.
    pub plan: Plan,
    /// The resolved interpreter's release text (`AILANG v0.41.0`).
    pub release: String,
}

/// Why [`plan`] failed; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The interpreter could not be resolved or archived (`integrity` set when an archived
    /// binary no longer matches its ref).
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// Reading the epoch registry's head failed.
    #[error(transparent)]
    Store(#[from] store::Error),
    /// The manifest does not publish: epochs, sources, checks (boxed: it is large).
    #[error(transparent)]
    Publish(Box<PublishError>),
}

impl From<PublishError> for PlanError {
    fn from(e: PublishError) -> Self {
        PlanError::Publish(Box::new(e))
    }
}

/// Resolve the interpreter and plan the revision: the epoch registry is bootstrapped from the
/// interpreter's release when an interpreter was named or the store has none yet
/// (transitions.md §4). `progress` sees each entry as it is checked. Writes nothing.
///
/// # Errors
/// [`PlanError`].
pub fn plan(
    store: &Store,
    provider: &dyn InterpreterProvider,
    manifest: &Manifest,
    opts: &Options,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Planned, PlanError> {
    let interp = resolve_interpreter(&opts.choice, provider)?;
    let has_epochs = store.registry_head(epoch::SEMANTIC_ID)?.is_some();
    let plan_opts = PlanOptions {
        base_dir: opts.base_dir.clone(),
        bootstrap_epoch: opts.choice.is_explicit() || !has_epochs,
    };
    let plan = plan_publish(
        store.conn(),
        manifest,
        interp.as_ref(),
        &plan_opts,
        progress,
    )?;
    Ok(Planned {
        plan,
        release: interp.release(),
    })
}

/// Write the planned revision in one transaction (`unattended` is recorded in it); an
/// unchanged plan writes nothing.
///
/// # Errors
/// [`PublishError`]: the head moved since the plan (`HeadMoved`, or `SameIdConflict` when the
/// other revision set one of these ids differently), epoch divergence, a store failure;
/// nothing is written on error.
pub fn commit(store: &mut Store, plan: &Plan, unattended: bool) -> Result<Outcome, PublishError> {
    commit_publish(store, plan, unattended)
}
