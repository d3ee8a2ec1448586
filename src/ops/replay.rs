//! Re-derive recorded episodes (replay.md): `world replay`, and candidate replay (issue 32):
//! `world replay --candidate/--transition/--interpreter` and `world publish --check-against`.
//!
//! Read-only: the store is opened for reading and nothing is written to it. A bundle exported
//! with `--embed` carries its interpreters as objects; they are materialized into a private
//! temporary directory for the run and resolved from there, else from the store's own archive.
//! An `--interpreter PATH` is archived into a private temporary archive too (DEC-CAND-4), never
//! next to the store.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::encoding::HashRef;
use crate::interp::archive::Archive;
use crate::interp::external::External;
use crate::interp::Interpreter;
use crate::plan::Triple;
use crate::replay::bundle::{self, ReadOnlyPins};
use crate::replay::candidate::{Candidate, CandidateTransition, Pinned};
use crate::replay::{self, EntryResult, ReplayError, Report, Selection};
use crate::store::{self, Store};
use crate::transitions::manifest::{self, SourceSpec};
use crate::transitions::publish::{
    source_bytes, InterpreterChoice, InterpreterProvider, ProviderError, PublishError,
};
use crate::transitions::registry::Effect;

/// What to replay.
#[derive(Clone, Debug)]
pub struct Options {
    /// Which entries.
    pub selection: Selection,
    /// The store file's path (its interpreter archive sits next to it).
    pub db: PathBuf,
    /// How to replay (`keep_going` past the first divergence, …).
    pub replay: replay::Options,
    /// A candidate to re-run the selected entries with (issue 32); `None`: a plain replay.
    pub candidate: Option<CandidateSpec>,
}

/// A candidate as named on the command line (`world replay --candidate M --transition ID=FILE
/// --interpreter X`).
#[derive(Clone, Debug, Default)]
pub struct CandidateSpec {
    /// The manifest's bytes (`--candidate`, the `world publish` format) and its name.
    pub manifest: Option<(String, Vec<u8>)>,
    /// `--transition ID=FILE`, in order.
    pub transitions: Vec<(String, PathBuf)>,
    /// `--interpreter`: every selected entry is re-run under it; `None` (or
    /// [`InterpreterChoice::Default`]): each entry under its own pin.
    pub interpreter: Option<InterpreterChoice>,
    /// The directory source paths are relative to (the current directory).
    pub base_dir: PathBuf,
}

/// Why a candidate could not be built; nothing was replayed.
#[derive(Debug, thiserror::Error)]
pub enum CandidateError {
    /// The manifest does not parse (the publish manifest's rules).
    #[error("candidate manifest {name}: {error}")]
    Manifest {
        /// The manifest's name.
        name: String,
        /// Why.
        error: manifest::ManifestError,
    },
    /// `--transition` is not `ID=FILE`, or names an id that breaks the grammar.
    #[error("--transition {0:?} must be ID=FILE with a transition id")]
    TransitionArg(String),
    /// The same id is named twice (manifest and `--transition`, or two `--transition`).
    #[error("transition {0:?} is named twice in the candidate")]
    Duplicate(String),
    /// A source could not be read or is not a loadable-looking source (boxed: it is large).
    #[error(transparent)]
    Source(Box<PublishError>),
    /// `--interpreter` could not be resolved.
    #[error("--interpreter: {0}")]
    Interpreter(#[source] ProviderError),
    /// Neither a candidate source nor an interpreter was named.
    #[error("a candidate replay needs --candidate, --transition or --interpreter")]
    Empty,
}

impl CandidateError {
    /// True when the cause is an integrity failure (an archived interpreter no longer matches
    /// its ref: exit 3).
    pub fn is_integrity(&self) -> bool {
        match self {
            CandidateError::Interpreter(p) => p.integrity,
            CandidateError::Source(p) => p.is_integrity(),
            _ => false,
        }
    }
}

/// Why [`replay`] produced no report.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The bundled interpreters could not be materialized.
    #[error("materialize bundled interpreters: {0}")]
    Materialize(#[source] store::Error),
    /// The candidate could not be built.
    #[error(transparent)]
    Candidate(#[from] CandidateError),
    /// The selection or a read failed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
}

/// Replay `opts.selection` of `store`; `on_entry(result, done, total)` sees each entry as it is
/// re-derived. With `opts.candidate`, the candidate is built first (sources read and
/// canonicalised, the interpreter resolved) and returned with the report, for its summary.
///
/// # Errors
/// [`Error`]. A divergence or a changed verdict is not an error: it is in the [`Report`].
pub fn replay(
    store: &Store,
    opts: &Options,
    on_entry: &mut dyn FnMut(&EntryResult, usize, usize),
) -> Result<(Report, Option<Candidate>), Error> {
    let materialized = bundle::materialize(store.conn()).map_err(Error::Materialize)?;
    let pins = match &materialized {
        Some(m) => ReadOnlyPins::for_db(&m.db_path()),
        None => ReadOnlyPins::for_db(&opts.db),
    };
    // Holds a private archive for `--interpreter PATH` until the replay is done.
    let mut scratch = None;
    let candidate = match &opts.candidate {
        Some(spec) => Some(build_candidate(store, spec, &pins, &mut scratch)?),
        None => None,
    };
    let report = replay::replay_with(
        store,
        &opts.selection,
        &pins,
        &opts.replay,
        candidate.as_ref(),
        on_entry,
    )?;
    Ok((report, candidate))
}

/// Candidate-replay every coordinator entry of the store or bundle at `db` whose transition
/// `candidate` names (`world publish --check-against`); each entry runs under its candidate
/// transition's interpreter. Read-only, as [`replay`]; keeps going past divergences.
///
/// # Errors
/// [`Error`]; [`Error::Replay`] with [`ReplayError::Store`] when `db` cannot be opened.
pub fn check_against(db: &Path, candidate: &Candidate) -> Result<Report, Error> {
    let store = Store::open_read(db).map_err(ReplayError::Store)?;
    let materialized = bundle::materialize(store.conn()).map_err(Error::Materialize)?;
    let pins = match &materialized {
        Some(m) => ReadOnlyPins::for_db(&m.db_path()),
        None => ReadOnlyPins::for_db(db),
    };
    let opts = replay::Options {
        keep_going: true,
        ..replay::Options::default()
    };
    Ok(replay::replay_with(
        &store,
        &Selection::All,
        &pins,
        &opts,
        Some(candidate),
        &mut |_, _, _| {},
    )?)
}

/// Build the [`Candidate`] a [`CandidateSpec`] names: sources from the manifest's
/// `transitionFnFile` (or `transitionFn`, looked up in `store`) and from `--transition`, each
/// through `canon.Source`; the interpreter resolved through `pins` (a ref or `embedded`) or,
/// for a path, archived into `scratch`, a private temporary archive.
fn build_candidate(
    store: &Store,
    spec: &CandidateSpec,
    pins: &ReadOnlyPins,
    scratch: &mut Option<tempfile::TempDir>,
) -> Result<Candidate, CandidateError> {
    let mut transitions: BTreeMap<String, CandidateTransition> = BTreeMap::new();
    let mut add = |id: &str,
                   source: &SourceSpec,
                   declared: Option<Vec<Triple>>|
     -> Result<(), CandidateError> {
        if transitions.contains_key(id) {
            return Err(CandidateError::Duplicate(id.to_string()));
        }
        let (label, canonical) = source_bytes(store.conn(), id, source, &spec.base_dir)
            .map_err(|e| CandidateError::Source(Box::new(e)))?;
        transitions.insert(
            id.to_string(),
            CandidateTransition {
                id: id.to_string(),
                transition_fn: HashRef::of(&canonical).to_string(),
                source: Arc::new(canonical),
                declared,
                interpreter: None,
                label,
            },
        );
        Ok(())
    };
    if let Some((name, bytes)) = &spec.manifest {
        let m = manifest::parse(bytes).map_err(|error| CandidateError::Manifest {
            name: name.clone(),
            error,
        })?;
        for e in &m.entries {
            add(&e.id, &e.source, Some(triples(&e.declared_effects)))?;
        }
    }
    for (id, file) in &spec.transitions {
        if crate::transitions::registry::validate_id(id).is_err() {
            return Err(CandidateError::TransitionArg(format!(
                "{id}={}",
                file.display()
            )));
        }
        add(id, &SourceSpec::File(file.clone()), None)?;
    }
    let interpreter = match &spec.interpreter {
        None | Some(InterpreterChoice::Default) => None,
        Some(choice) => Some(Pinned::new(
            resolve_read_only(choice, pins, scratch).map_err(CandidateError::Interpreter)?,
        )),
    };
    if transitions.is_empty() && interpreter.is_none() {
        return Err(CandidateError::Empty);
    }
    Ok(Candidate {
        transitions,
        interpreter,
        only: false,
    })
}

/// Declared effects as plan-law triples.
pub fn triples(effects: &[Effect]) -> Vec<Triple> {
    effects
        .iter()
        .map(|e| Triple {
            effect: e.effect.clone(),
            scope: e.scope.clone(),
            cost: e.cost,
        })
        .collect()
}

/// Resolve `--interpreter` without writing next to the store: `embedded`, a ref through the
/// store's (or bundle's) archive, or a path archived into a private temporary archive kept in
/// `scratch` (re-hashed before every run, no compile-cache templates).
fn resolve_read_only(
    choice: &InterpreterChoice,
    pins: &ReadOnlyPins,
    scratch: &mut Option<tempfile::TempDir>,
) -> Result<Box<dyn Interpreter>, ProviderError> {
    match choice {
        InterpreterChoice::Path(path) => {
            let dir = tempfile::Builder::new()
                .prefix("world-replay-interp-")
                .tempdir()
                .map_err(|e| ProviderError::new(format!("create a temporary archive: {e}")))?;
            let archive = Archive::at_root(dir.path().to_path_buf());
            let (archived, _) = archive
                .archive(path)
                .map_err(|e| ProviderError::new(e.to_string()))?;
            let external = External::from_archived(&archive, archived).without_cache();
            *scratch = Some(dir);
            Ok(Box::new(external))
        }
        InterpreterChoice::Ref(r) => pins.resolve(r),
        InterpreterChoice::Embedded | InterpreterChoice::Default => pins.embedded(),
    }
}
