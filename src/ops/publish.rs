//! Publish transitions as a new transition-registry revision (transitions.md §2–§3):
//! `world publish`.
//!
//! Two steps with the caller's decision between them: [`plan`] resolves the interpreter and
//! checks the manifest against the store under the writer lock (writes nothing) and returns
//! the diff; the caller shows it and, when attended, asks for confirmation; [`commit`] then
//! writes the revision (and the epoch bootstrap the plan carries) in one transaction, or
//! nothing when the head moved since the plan.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::replay::candidate::{Candidate, CandidateTransition, Pinned};
use crate::store::{self, Store};
use crate::transitions::epoch;
use crate::transitions::manifest::Manifest;
use crate::transitions::publish::{
    commit_publish, plan_publish, resolve_interpreter, InterpreterChoice, InterpreterProvider,
    Outcome, Plan, PlanOptions, Progress, ProviderError, PublishError,
};
/// The transition registry head read through the store's typed reads, and its shape (the
/// read `status`, `verify` and the servers' tool lists use).
pub use crate::transitions::publish::{registry_head, Head};

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

/// The ids of a planned publish whose behaviour can change: every added id, and every changed
/// id whose `transitionFn`, `interpreter` or `declaredEffects` differ (a new title or schema
/// runs the same code on the same calls).
pub fn behaviour_changes(plan: &Plan) -> Vec<String> {
    let mut ids: Vec<String> = plan.diff.added.clone();
    ids.extend(
        plan.diff
            .changed
            .iter()
            .filter(|c| {
                c.fields
                    .iter()
                    .any(|f| matches!(*f, "transitionFn" | "interpreter" | "declaredEffects"))
            })
            .map(|c| c.id.clone()),
    );
    ids.sort();
    ids
}

/// The candidate a planned publish is (`world publish --check-against`, issue 32): for each
/// [`behaviour_changes`] id, the planned source (a file source from the plan, a ref source
/// from `store`), declared effects and pinned interpreter (resolved through `provider`).
/// Only those transitions' entries are visited ([`Candidate::only`]).
///
/// # Errors
/// [`PlanError::Provider`] when the pinned interpreter cannot be resolved;
/// [`PlanError::Store`] when a ref source cannot be read.
pub fn candidate_of(
    store: &Store,
    plan: &Plan,
    provider: &dyn InterpreterProvider,
) -> Result<Candidate, PlanError> {
    let mut pinned: BTreeMap<String, Pinned> = BTreeMap::new();
    let mut transitions = BTreeMap::new();
    for id in behaviour_changes(plan) {
        let Some(d) = plan.revision.get(&id) else {
            continue;
        };
        let fn_ref = d.transition_fn.to_string();
        let source =
            match plan.sources.iter().find(|o| o.meta.hash == fn_ref) {
                Some(o) => o.payload.clone(),
                None => store.object(&fn_ref)?.map(|o| o.payload).ok_or_else(|| {
                    store::Error::Corrupt {
                        what: "transition source".into(),
                        detail: format!("{fn_ref} of {id:?} is not in the store"),
                    }
                })?,
            };
        let key = d.interpreter.to_string();
        let interp = match pinned.get(&key) {
            Some(p) => p.clone(),
            None => {
                let p = Pinned::new(provider.resolve(&d.interpreter)?);
                pinned.insert(key, p.clone());
                p
            }
        };
        transitions.insert(
            id.clone(),
            CandidateTransition {
                id: id.clone(),
                source: Arc::new(source),
                transition_fn: fn_ref.clone(),
                declared: Some(crate::ops::replay::triples(&d.declared_effects)),
                interpreter: Some(interp),
                label: plan
                    .source_labels
                    .iter()
                    .find(|(r, _)| *r == fn_ref)
                    .map_or(fn_ref.clone(), |(_, name)| name.clone()),
            },
        );
    }
    Ok(Candidate {
        transitions,
        interpreter: None,
        only: true,
    })
}
