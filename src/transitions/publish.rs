//! Publishing transitions (transitions.md §2–§5): interpreter resolution, then
//! [`plan_publish`] (reads the store, derives epochs, canonicalises and checks every source,
//! builds revision N+1 and its diff; writes nothing) and [`commit_publish`] (one
//! `BEGIN IMMEDIATE` transaction: epoch bootstrap when planned, sources, the revision object,
//! the registry-head compare-and-set). The CLI shows the diff and asks for confirmation
//! between the two.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::Connection;

use crate::encoding::{canon, interface_hash, HashRef};
use crate::interp::{Interpreter, RunError, RunLimits};
use crate::store::{self, Object, Store};

use super::epoch::{self, BootstrapPlan, EpochError, EpochRegistry};
use super::manifest::{Manifest, ManifestEntry, SourceSpec};
use super::registry::{
    self, Descriptor, RegistryError, Revision, INTERFACE_HASH_V1, PROVENANCE, PROVENANCE_UNATTENDED,
};
use super::{SOURCE_PROVENANCE, SOURCE_SEMANTIC_ID};

/// Deadline per checked entry (transitions.md §3: 10 s per entry plus 3 s).
pub const CHECK_DEADLINE: Duration = Duration::from_secs(10);
/// The fixed part of the publish deadline.
pub const DEADLINE_SLACK: Duration = Duration::from_secs(3);
/// Largest source file read, in bytes (8 MiB; DEC-TR-5 in docs/DECISIONS.md).
pub const MAX_SOURCE_BYTES: usize = 8 * 1024 * 1024;
/// Diagnostics quoted in errors are trimmed to this many bytes (transitions.md §6.1).
pub const QUOTE_BYTES: usize = 400;

/// Which interpreter a command names (`--interpreter PATH|REF|embedded`, or nothing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InterpreterChoice {
    /// `embedded`: the built-in AILANG subset (ailang.md §6).
    Embedded,
    /// A path to an `ailang` binary, archived next to the store.
    Path(PathBuf),
    /// A `sha256:` ref of an already archived interpreter.
    Ref(HashRef),
    /// Nothing named: the store's only pinned interpreter, else the embedded one.
    Default,
}

/// Why an `--interpreter` value names no interpreter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChoiceError {
    /// The value is empty.
    #[error("--interpreter is empty")]
    Empty,
    /// A `sha256:`-prefixed value that is not a ref.
    #[error("{0}")]
    BadRef(#[source] crate::encoding::hashref::HashRefError),
}

impl InterpreterChoice {
    /// Parse an `--interpreter` value: `embedded`, a `sha256:` ref, or a path.
    ///
    /// # Errors
    /// [`ChoiceError::Empty`]; [`ChoiceError::BadRef`] for a `sha256:`-prefixed value that is
    /// not a ref.
    pub fn parse(text: &str) -> Result<Self, ChoiceError> {
        if text.is_empty() {
            return Err(ChoiceError::Empty);
        }
        if text == "embedded" {
            return Ok(InterpreterChoice::Embedded);
        }
        if text.starts_with("sha256:") {
            return HashRef::parse(text)
                .map(InterpreterChoice::Ref)
                .map_err(ChoiceError::BadRef);
        }
        Ok(InterpreterChoice::Path(PathBuf::from(text)))
    }

    /// Was an interpreter named on the command line? (The epoch registry is bootstrapped only
    /// then; transitions.md §4.)
    pub fn is_explicit(&self) -> bool {
        !matches!(self, InterpreterChoice::Default)
    }
}

/// Why an interpreter could not be provided.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ProviderError {
    /// What went wrong, for the user.
    pub message: String,
    /// True for integrity failures (an archived binary no longer matches its ref: exit 3).
    pub integrity: bool,
}

impl ProviderError {
    /// An ordinary failure.
    pub fn new(message: impl Into<String>) -> Self {
        ProviderError {
            message: message.into(),
            integrity: false,
        }
    }
}

/// Where interpreters come from: the archive next to the store and the embedded interpreter.
/// The CLI backs this with `interp::archive` and `ailang::Embedded`; tests use a double.
pub trait InterpreterProvider {
    /// The embedded interpreter.
    fn embedded(&self) -> Result<Box<dyn Interpreter>, ProviderError>;
    /// Archive the binary at `path` (`<db>.artifacts/interpreters/sha256/<hex>/ailang`) and
    /// return it, resolved from the archive.
    fn archive(&self, path: &Path) -> Result<Box<dyn Interpreter>, ProviderError>;
    /// Resolve an archived interpreter by ref (re-hashed before every run).
    fn resolve(&self, reference: &HashRef) -> Result<Box<dyn Interpreter>, ProviderError>;
    /// The refs of every interpreter archived for this store.
    fn archived(&self) -> Result<Vec<HashRef>, ProviderError>;
}

/// Resolve a choice through `provider` (transitions.md §2): a path is archived, a ref
/// resolved, `embedded` is the embedded interpreter; with nothing named, the store's only
/// archived interpreter, else the embedded one.
///
/// # Errors
/// The provider's error, or a [`ProviderError`] when several interpreters are archived and
/// none was named.
pub fn resolve_interpreter(
    choice: &InterpreterChoice,
    provider: &dyn InterpreterProvider,
) -> Result<Box<dyn Interpreter>, ProviderError> {
    match choice {
        InterpreterChoice::Embedded => provider.embedded(),
        InterpreterChoice::Path(p) => provider.archive(p),
        InterpreterChoice::Ref(r) => provider.resolve(r),
        InterpreterChoice::Default => match provider.archived()?.as_slice() {
            [] => provider.embedded(),
            [one] => provider.resolve(one),
            many => Err(ProviderError::new(format!(
                "the store pins {} interpreters ({}); name one with --interpreter",
                many.len(),
                many.iter()
                    .map(HashRef::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        },
    }
}

/// Publish failures (exit 1 unless the CLI maps them otherwise).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PublishError {
    /// Epoch derivation or bootstrap failed.
    #[error(transparent)]
    Epoch(#[from] EpochError),
    /// The source file is in none of the places it is looked for.
    #[error("transition {id:?}: source {path} not found (looked for {})", tried.join(" and "))]
    SourceNotFound {
        /// Descriptor id.
        id: String,
        /// `transitionFnFile` as written.
        path: String,
        /// The paths tried, in order (the manifest's directory, then the current one).
        tried: Vec<String>,
    },
    /// The source file could not be read.
    #[error("transition {id:?}: cannot read source {path}: {error}")]
    ReadSource {
        /// Descriptor id.
        id: String,
        /// The path as resolved.
        path: String,
        /// The OS error.
        error: std::io::Error,
    },
    /// The source file is over [`MAX_SOURCE_BYTES`].
    #[error("transition {id:?}: source {path} is over the {MAX_SOURCE_BYTES}-byte limit")]
    SourceTooLarge {
        /// Descriptor id.
        id: String,
        /// The path.
        path: String,
    },
    /// `canon.Source` refused the bytes (BOM, NUL, invalid UTF-8).
    #[error("transition {id:?}: source {path}: {error}")]
    Canon {
        /// Descriptor id.
        id: String,
        /// The path.
        path: String,
        /// The refusal.
        error: canon::CanonError,
    },
    /// The source is empty after canonicalisation.
    #[error("transition {id:?}: source {path} is empty (or all blank) after canonicalisation")]
    EmptySource {
        /// Descriptor id.
        id: String,
        /// The path.
        path: String,
    },
    /// The interpreter's `check` failed: never stored.
    #[error("transition {id:?}: source {source_name} is not loadable under its pinned interpreter {interpreter} ({release}): {diagnostics}{}", world_note(*.world_import))]
    NotLoadable {
        /// Descriptor id.
        id: String,
        /// The source path or ref.
        source_name: String,
        /// Interpreter ref.
        interpreter: String,
        /// Interpreter release.
        release: String,
        /// Diagnostics, trimmed to 400 bytes.
        diagnostics: String,
        /// True when the failure is an `LDR001` on a `world/*` import.
        world_import: bool,
    },
    /// The source checks but has no entry the capsule can run: `main(input: string) -> string`
    /// is missing or has another shape (transitions.md §7). Never stored.
    #[error("transition {id:?}: source {source_name} has no capsule entry: {problem} — every transition exports `main(input: string) -> string` (transitions.md §7)")]
    NoEntry {
        /// Descriptor id.
        id: String,
        /// The source path or ref.
        source_name: String,
        /// What is wrong with `main`, one line.
        problem: String,
    },
    /// The check itself could not run (timeout, output cap, unavailable interpreter).
    #[error("transition {id:?}: checking the source under {interpreter} failed: {error}")]
    Check {
        /// Descriptor id.
        id: String,
        /// Interpreter ref.
        interpreter: String,
        /// The failure.
        error: RunError,
    },
    /// A `transitionFn` ref (or a kept entry's source) is not in the store.
    #[error("transition {id:?}: transition source {reference} is not in the store — publish the transition source object first, or name it via transitionFnFile")]
    MissingSource {
        /// Descriptor id.
        id: String,
        /// The ref.
        reference: String,
    },
    /// A stored source object is not a usable transition source (integrity).
    #[error(
        "transition {id:?}: stored object {reference} is not a usable transition source: {detail}"
    )]
    CorruptSource {
        /// Descriptor id.
        id: String,
        /// The ref.
        reference: String,
        /// Why.
        detail: String,
    },
    /// The current registry head does not decode or re-hash (integrity).
    #[error("{} head {head} is unusable: {detail}", registry::SEMANTIC_ID)]
    CorruptHead {
        /// The head ref text.
        head: String,
        /// Why.
        detail: String,
    },
    /// The new revision breaks a registry rule (entries, size bounds).
    #[error("the new registry revision is refused: {0}")]
    Registry(#[from] RegistryError),
    /// The concurrent revision set one of this publish's ids with different bytes.
    #[error("both this publish and the registry's revision {revision} set {id:?} with different bytes; nothing was written — review revision {revision} (world transitions show {id}) and re-run the command")]
    SameIdConflict {
        /// The concurrent revision number.
        revision: i64,
        /// The id.
        id: String,
    },
    /// The head moved between plan and commit.
    #[error("the registry head kept moving during publish; re-run the command")]
    HeadMoved,
    /// The publish deadline (10 s per entry plus 3 s) passed.
    #[error(
        "publish exceeded its deadline of {0} s (10 s per entry plus 3 s); nothing was written"
    )]
    Deadline(u64),
    /// A store failure.
    #[error(transparent)]
    Store(#[from] store::Error),
}

fn world_note(world_import: bool) -> &'static str {
    if world_import {
        " — world/* imports are not publishable (only std/* imports are); a transition source must be self-contained"
    } else {
        ""
    }
}

impl PublishError {
    /// Is this an integrity failure (a stored object or the head no longer matches)?
    pub fn is_integrity(&self) -> bool {
        matches!(
            self,
            PublishError::CorruptSource { .. }
                | PublishError::CorruptHead { .. }
                | PublishError::Epoch(EpochError::Corrupt { .. })
                | PublishError::Epoch(EpochError::Divergence { .. })
        )
    }
}

/// Options for [`plan_publish`].
#[derive(Clone, Debug)]
pub struct PlanOptions {
    /// Directory `transitionFnFile` paths are relative to (the current directory).
    pub base_dir: PathBuf,
    /// Bootstrap the epoch registry from the interpreter's release (when `--interpreter` was
    /// given, or the store has no epoch registry yet; transitions.md §4).
    pub bootstrap_epoch: bool,
}

/// Progress events from [`plan_publish`], for a progress bar.
#[derive(Clone, Copy, Debug)]
pub enum Progress<'a> {
    /// About to check entry `index` (0-based) of `total`.
    Checking {
        /// 0-based index.
        index: usize,
        /// Entry count.
        total: usize,
        /// Its id.
        id: &'a str,
    },
    /// All entries checked.
    Done,
}

/// One changed id with the descriptor fields that differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Changed {
    /// The id.
    pub id: String,
    /// Descriptor keys whose values differ (`transitionFn`, `title`, …).
    pub fields: Vec<&'static str>,
}

/// The difference between the current revision and the planned one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diff {
    /// Ids only in the new revision.
    pub added: Vec<String>,
    /// Ids in both with different descriptors.
    pub changed: Vec<Changed>,
    /// Ids only in the current revision.
    pub removed: Vec<String>,
}

impl Diff {
    /// Compute the diff of two entry lists (each sorted by id).
    pub fn between(old: &[Descriptor], new: &[Descriptor]) -> Diff {
        let old: BTreeMap<&str, &Descriptor> = old.iter().map(|d| (d.id.as_str(), d)).collect();
        let new: BTreeMap<&str, &Descriptor> = new.iter().map(|d| (d.id.as_str(), d)).collect();
        let mut diff = Diff::default();
        for (id, n) in &new {
            match old.get(id) {
                None => diff.added.push(id.to_string()),
                Some(o) if o != n => diff.changed.push(Changed {
                    id: id.to_string(),
                    fields: changed_fields(o, n),
                }),
                Some(_) => {}
            }
        }
        diff.removed = old
            .keys()
            .filter(|id| !new.contains_key(*id))
            .map(|id| id.to_string())
            .collect();
        diff
    }

    /// True when nothing differs.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.changed.is_empty() && self.removed.is_empty()
    }
}

fn changed_fields(a: &Descriptor, b: &Descriptor) -> Vec<&'static str> {
    let mut f = Vec::new();
    if a.access != b.access {
        f.push("access");
    }
    if a.declared_effects != b.declared_effects {
        f.push("declaredEffects");
    }
    if a.description != b.description {
        f.push("description");
    }
    if a.input_schema != b.input_schema {
        f.push("inputSchema");
    }
    if a.interpreter != b.interpreter {
        f.push("interpreter");
    }
    if a.output_schema != b.output_schema {
        f.push("outputSchema");
    }
    if a.semantics_epoch != b.semantics_epoch {
        f.push("semanticsEpoch");
    }
    if a.title != b.title {
        f.push("title");
    }
    if a.transition_fn != b.transition_fn {
        f.push("transitionFn");
    }
    f
}

/// The registry head as read: its ref and decoded revision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    /// The head ref.
    pub reference: HashRef,
    /// The decoded revision.
    pub revision: Revision,
}

/// Read and decode the transition registry head on `conn` (re-hashing its payload); a writer
/// reads it inside its transaction with this, a reader with [`registry_head`].
///
/// # Errors
/// [`PublishError::CorruptHead`] when the object is missing, altered or undecodable.
pub fn read_head(conn: &Connection) -> Result<Option<Head>, PublishError> {
    let Some(text) = store::registry_head_in(conn, registry::SEMANTIC_ID)? else {
        return Ok(None);
    };
    decode_head(text, |r| store::object_in(conn, r)).map(Some)
}

/// [`read_head`] through the open store's typed reads (no transaction): what `status`,
/// `verify` and the servers read.
///
/// # Errors
/// As [`read_head`].
pub fn registry_head(s: &Store) -> Result<Option<Head>, PublishError> {
    let Some(text) = s.registry_head(registry::SEMANTIC_ID)? else {
        return Ok(None);
    };
    decode_head(text, |r| s.object(r)).map(Some)
}

/// The head `text` names: parsed, its object read with `object`, re-hashed and decoded.
fn decode_head(
    text: String,
    object: impl FnOnce(&str) -> Result<Option<Object>, store::Error>,
) -> Result<Head, PublishError> {
    let corrupt = |detail: String| PublishError::CorruptHead {
        head: text.clone(),
        detail,
    };
    let reference = HashRef::parse(&text).map_err(|e| corrupt(e.to_string()))?;
    let obj = object(&text)?.ok_or_else(|| corrupt("the object is not in the store".into()))?;
    let computed = HashRef::of(&obj.payload);
    if computed != reference {
        return Err(corrupt(format!("the payload hashes to {computed}")));
    }
    let revision = Revision::decode(&obj.payload).map_err(|e| corrupt(e.to_string()))?;
    Ok(Head {
        reference,
        revision,
    })
}

/// A planned publish: everything [`commit_publish`] writes, and what the human is shown.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The registry head the plan was built on (`None`: no registry yet).
    pub base: Option<Head>,
    /// The new revision (number N+1, parent = the base head).
    pub revision: Revision,
    /// Its TR-CJSON-1 bytes (no LF).
    pub revision_bytes: Vec<u8>,
    /// sha256 of [`Plan::revision_bytes`].
    pub revision_ref: HashRef,
    /// Source objects to store (`world/transition-source/v1`, provenance
    /// `cmd/world-publish`), one per distinct source, in manifest order.
    pub sources: Vec<Object>,
    /// `(source ref, transitionFnFile)` for every file source, recorded in
    /// [`super::labels`] so invoke diagnostics name the user's file.
    pub source_labels: Vec<(String, String)>,
    /// The epoch-registry object to store and set as head (no epoch registry yet).
    pub epoch_bootstrap: Option<Object>,
    /// The epoch derived for entries that omitted it, with the interpreter release.
    pub derived_epoch: Option<(i64, String)>,
    /// Added / changed / removed ids against the base.
    pub diff: Diff,
    /// Descriptors in the manifest.
    pub manifest_len: usize,
}

impl Plan {
    /// True when the new entries equal the current revision's: nothing will be written.
    pub fn unchanged(&self) -> bool {
        self.base.is_some() && self.diff.is_empty()
    }
}

/// What [`commit_publish`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A new revision was written and the head moved to it.
    Published {
        /// Revision number.
        revision: i64,
        /// The new head.
        head: HashRef,
    },
    /// The manifest changes nothing: nothing was written.
    Unchanged {
        /// The current revision number.
        revision: i64,
        /// The current head.
        head: HashRef,
    },
}

impl Outcome {
    /// The outcome line of transitions.md §3.
    pub fn line(&self) -> String {
        match self {
            Outcome::Published { revision, head } => format!(
                "published transition registry revision {revision} (head {head}); the daemon's A2A card will list these skills on its next read"
            ),
            Outcome::Unchanged { revision, head } => format!(
                "transition registry UNCHANGED at revision {revision} (head {head}); nothing written"
            ),
        }
    }
}

fn trim_quote(text: &str) -> String {
    let t = text.trim();
    if t.len() <= QUOTE_BYTES {
        return t.to_string();
    }
    let mut end = QUOTE_BYTES;
    while !t.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &t[..end])
}

/// The interpreter's diagnostics without the source's own text (issue 26): only lines that
/// carry a diagnostic code (`PAR001: …`, not the excerpt lines some interpreters print under
/// them), with every quoted span (`'…'`, `"…"`, `` `…` ``) elided, so a source that is a
/// symlink to a secret cannot have its first token printed. `world ailang check FILE` shows
/// the full text to whoever may read the file.
fn without_source_text(diagnostics: &str) -> String {
    let coded = |l: &str| {
        let l = l.trim_start().trim_start_matches("Error: ");
        l.split_once(':').is_some_and(|(code, _)| {
            code.len() >= 4
                && code.starts_with(|c: char| c.is_ascii_uppercase())
                && code.bytes().any(|b| b.is_ascii_digit())
                && code
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        })
    };
    let mut out = Vec::new();
    for line in diagnostics.lines().filter(|l| coded(l)) {
        // `Error: CODE: message`: an unquoted `: NAME` inside the message (`module not found:
        // NAME`) is source text too; it is elided up to the location suffix ` (at …)`.
        let line = line.trim_start();
        let (head, line) = match line.strip_prefix("Error: ") {
            Some(rest) => ("Error: ", rest),
            None => ("", line),
        };
        let line = match line.split_once(": ") {
            Some((code, message)) => match message.find(": ") {
                Some(at) => {
                    let end = message[at..]
                        .rfind(" (at ")
                        .map_or(message.len(), |l| at + l);
                    let (name, tail) = (&message[at + 2..end], &message[end..]);
                    // A `world/…` module path names the reference's own modules (the hint
                    // that world/* imports are not publishable needs it), not the source's.
                    let kept = name.starts_with("world/")
                        && name
                            .bytes()
                            .all(|b| b.is_ascii_lowercase() || b"/_-".contains(&b));
                    let name = if kept { name } else { "…" };
                    format!("{head}{code}: {}: {name}{tail}", &message[..at])
                }
                None => format!("{head}{line}"),
            },
            None => format!("{head}{line}"),
        };
        let mut s = String::with_capacity(line.len());
        let mut open: Option<char> = None;
        for c in line.chars() {
            match open {
                Some(q) if c == q => {
                    s.push('…');
                    s.push(c);
                    open = None;
                }
                Some(_) => {}
                None if matches!(c, '\'' | '"' | '`') => {
                    s.push(c);
                    open = Some(c);
                }
                None => s.push(c),
            }
        }
        if open.is_some() {
            s.push('…');
        }
        out.push(s);
    }
    if out.is_empty() {
        "the interpreter refused it (its diagnostics quote the source and are not shown)".into()
    } else {
        out.join("; ")
    }
}

/// Does a diagnostic report an `LDR001` on a `world/*` import?
fn is_world_import(diagnostics: &str) -> bool {
    diagnostics
        .lines()
        .any(|l| l.contains("LDR001") && l.contains("world/"))
}

/// Plan a publish (transitions.md §3, steps 1–4 up to the CAS): read the epoch registry and
/// the registry head on `conn`, derive each entry's epoch, canonicalise and `check` each
/// source under `interp` (10 s each, 13 s plus 10 s per entry in all), build revision N+1
/// from the head's entries plus the manifest's (same id replaced), re-verify that every
/// entry's source exists, and diff against the head. Writes nothing.
///
/// # Errors
/// The first failing step as a [`PublishError`]; a source that does not load is reported with
/// its diagnostics (and, for `world/*` imports, that they are not publishable).
pub fn plan_publish(
    conn: &Connection,
    manifest: &Manifest,
    interp: &dyn Interpreter,
    opts: &PlanOptions,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Plan, PublishError> {
    let total = manifest.entries.len();
    let budget = CHECK_DEADLINE * u32::try_from(total).unwrap_or(u32::MAX) + DEADLINE_SLACK;
    let deadline = Instant::now() + budget;
    let release = interp.release();
    let interp_ref = HashRef::parse(interp.interpreter_ref()).map_err(|e| PublishError::Check {
        id: String::new(),
        interpreter: interp.interpreter_ref().to_string(),
        error: RunError::Unavailable(format!("the interpreter's ref is invalid: {e}")),
    })?;

    // Step 1 (registry part): the epoch registry that will hold after this publish.
    let (registry, epoch_bootstrap) = planned_registry(conn, &release, opts)?;

    let base = read_head(conn)?;
    let mut sources: Vec<Object> = Vec::new();
    let mut source_labels: Vec<(String, String)> = Vec::new();
    let mut checked: BTreeSet<HashRef> = BTreeSet::new();
    let mut derived_epoch = None;
    let mut drafted: Vec<Descriptor> = Vec::with_capacity(total);
    for (index, entry) in manifest.entries.iter().enumerate() {
        progress(Progress::Checking {
            index,
            total,
            id: &entry.id,
        });
        let epoch = registry.derive(&release, entry.semantics_epoch)?;
        if entry.semantics_epoch.is_none() {
            derived_epoch = Some((epoch, release.clone()));
        }
        let (source_name, canonical) = load_source(conn, entry, &opts.base_dir)?;
        let fn_ref = HashRef::of(&canonical);
        if matches!(entry.source, SourceSpec::File(_)) {
            source_labels.push((fn_ref.to_string(), source_name.clone()));
        }
        if !checked.contains(&fn_ref) {
            let check = SourceCheck {
                interp,
                interp_ref: &interp_ref,
                release: &release,
                deadline,
                budget,
            };
            check.check(entry, &source_name, &canonical)?;
            checked.insert(fn_ref);
            if matches!(entry.source, SourceSpec::File(_)) {
                sources.push(Object::new(
                    SOURCE_SEMANTIC_ID,
                    SOURCE_PROVENANCE,
                    canonical,
                ));
            }
        }
        drafted.push(Descriptor {
            id: entry.id.clone(),
            title: entry.title.clone(),
            description: entry.description.clone(),
            transition_fn: fn_ref,
            interpreter: interp_ref,
            semantics_epoch: epoch,
            input_schema: entry.input_schema.clone(),
            output_schema: entry.output_schema.clone(),
            access: entry.access.clone(),
            declared_effects: entry.declared_effects.clone(),
        });
    }
    progress(Progress::Done);

    // Step 4: revision N+1 from the head's entries plus the manifest's (same id replaced).
    let revision = next_revision(base.as_ref(), drafted);
    let revision_bytes = revision.encode()?;
    verify_stored_sources(conn, &revision, &sources, &checked)?;
    let diff = Diff::between(
        base.as_ref().map_or(&[][..], |h| &h.revision.entries),
        &revision.entries,
    );
    Ok(Plan {
        revision_ref: HashRef::of(&revision_bytes),
        base,
        revision,
        revision_bytes,
        sources,
        source_labels,
        epoch_bootstrap,
        derived_epoch,
        diff,
        manifest_len: total,
    })
}

/// The epoch registry that will hold after this publish, and the registry object to store
/// when `opts.bootstrap_epoch` creates it.
///
/// # Errors
/// The epoch's errors; [`EpochError::NotNominated`] when the store has no registry and the
/// publish does not bootstrap one.
fn planned_registry(
    conn: &Connection,
    release: &str,
    opts: &PlanOptions,
) -> Result<(EpochRegistry, Option<Object>), PublishError> {
    if opts.bootstrap_epoch {
        return Ok(match epoch::check_bootstrap(conn, release)? {
            BootstrapPlan::Create(obj) => (EpochRegistry::single(release), Some(obj)),
            BootstrapPlan::Unchanged(_) => (EpochRegistry::single(release), None),
        });
    }
    match epoch::read(conn)? {
        Some((_, reg)) => Ok((reg, None)),
        None => Err(EpochError::NotNominated {
            release: release.to_string(),
            detail: "the store has no epoch registry yet — run `world pin --interpreter …`, or pass --interpreter to publish".into(),
        }
        .into()),
    }
}

/// What checking one manifest source needs: the interpreter, its ref and release, and the
/// publish's whole deadline (`budget` from its start).
struct SourceCheck<'a> {
    interp: &'a dyn Interpreter,
    interp_ref: &'a HashRef,
    release: &'a str,
    deadline: Instant,
    budget: Duration,
}

impl SourceCheck<'_> {
    /// Type-checks `canonical` (the source of `entry`, named `source_name` in messages) within
    /// [`CHECK_DEADLINE`] and the publish's deadline.
    ///
    /// # Errors
    /// [`PublishError::Deadline`], [`PublishError::Check`] when the interpreter could not run,
    /// [`PublishError::NotLoadable`] when the source does not check.
    fn check(
        &self,
        entry: &ManifestEntry,
        source_name: &str,
        canonical: &[u8],
    ) -> Result<(), PublishError> {
        let now = Instant::now();
        if now >= self.deadline {
            return Err(PublishError::Deadline(self.budget.as_secs()));
        }
        let limits = RunLimits::until((now + CHECK_DEADLINE).min(self.deadline));
        let outcome =
            self.interp
                .check(canonical, limits)
                .map_err(|error| PublishError::Check {
                    id: entry.id.clone(),
                    interpreter: self.interp_ref.to_string(),
                    error,
                })?;
        if !outcome.passed {
            // The capsule checks its copy at `host/capsule/main.ail`; name the user's file.
            let diagnostics = outcome
                .diagnostics
                .replace(crate::interp::external::SOURCE_PATH, source_name);
            return Err(PublishError::NotLoadable {
                id: entry.id.clone(),
                source_name: source_name.to_string(),
                interpreter: self.interp_ref.to_string(),
                release: self.release.to_string(),
                world_import: is_world_import(&outcome.diagnostics),
                diagnostics: trim_quote(&without_source_text(&diagnostics)),
            });
        }
        let problem = std::str::from_utf8(canonical)
            .ok()
            .and_then(crate::ailang::capsule_entry_problem);
        if let Some(problem) = problem {
            return Err(PublishError::NoEntry {
                id: entry.id.clone(),
                source_name: source_name.to_string(),
                problem,
            });
        }
        Ok(())
    }
}

/// Revision N+1: the head's entries (`base`) plus the `drafted` ones, a drafted id replacing
/// the head's.
fn next_revision(base: Option<&Head>, drafted: Vec<Descriptor>) -> Revision {
    let mut merged: BTreeMap<String, Descriptor> = base
        .map(|h| {
            h.revision
                .entries
                .iter()
                .map(|d| (d.id.clone(), d.clone()))
                .collect()
        })
        .unwrap_or_default();
    for d in drafted {
        merged.insert(d.id.clone(), d);
    }
    Revision {
        revision: base.map_or(1, |h| h.revision.revision + 1),
        parent: base.map(|h| h.reference),
        entries: merged.into_values().collect(),
    }
}

/// Re-verifies that the source of every entry of `revision` is stored, except those this
/// publish plans (`sources`) or just `checked`.
///
/// # Errors
/// [`stored_source`]'s error for the first entry whose source is missing.
fn verify_stored_sources(
    conn: &Connection,
    revision: &Revision,
    sources: &[Object],
    checked: &BTreeSet<HashRef>,
) -> Result<(), PublishError> {
    let planned: BTreeSet<String> = sources.iter().map(|o| o.meta.hash.clone()).collect();
    for d in &revision.entries {
        let r = d.transition_fn.to_string();
        if planned.contains(&r) || checked.contains(&d.transition_fn) {
            continue;
        }
        stored_source(conn, &d.id, &d.transition_fn)?;
    }
    Ok(())
}

/// Load an entry's canonical source bytes and a name for messages.
fn load_source(
    conn: &Connection,
    entry: &ManifestEntry,
    base_dir: &Path,
) -> Result<(String, Vec<u8>), PublishError> {
    source_bytes(conn, &entry.id, &entry.source, base_dir)
}

/// The canonical source bytes of transition `id` from `spec` and a name for messages: a file
/// (relative to `base_dir` unless absolute; a regular file of at most 8 MiB, through
/// `canon.Source`, not empty) or a stored `world/transition-source/v1` object on `conn`
/// (present, re-hashing, canonical). Used by publish and by candidate replay (issue 32).
///
/// # Errors
/// [`PublishError::ReadSource`], [`PublishError::SourceTooLarge`], [`PublishError::Canon`],
/// [`PublishError::EmptySource`], [`PublishError::MissingSource`],
/// [`PublishError::CorruptSource`], [`PublishError::Store`].
pub fn source_bytes(
    conn: &Connection,
    id: &str,
    spec: &SourceSpec,
    base_dir: &Path,
) -> Result<(String, Vec<u8>), PublishError> {
    match spec {
        SourceSpec::File(p) => {
            // Relative to `base_dir` (the manifest's directory, as cargo and npm read
            // theirs); when it is not there, relative to the current directory, where the
            // reference reads it (DEC-UX-13).
            let beside = base_dir.join(p);
            let path = if p.is_relative() && !beside.exists() && p.exists() {
                p.clone()
            } else {
                beside.clone()
            };
            if !path.exists() {
                return Err(PublishError::SourceNotFound {
                    id: id.to_string(),
                    path: p.display().to_string(),
                    tried: if p.is_relative() {
                        vec![
                            beside.display().to_string(),
                            std::env::current_dir()
                                .map(|d| d.join(p).display().to_string())
                                .unwrap_or_else(|_| p.display().to_string()),
                        ]
                    } else {
                        vec![p.display().to_string()]
                    },
                });
            }
            let name = p.display().to_string();
            // A regular file only, bounded while reading (issue 13 §5): /dev/zero or a FIFO
            // never holds the writer lock.
            let raw = match crate::fileread::read_regular(&path, MAX_SOURCE_BYTES) {
                Ok(raw) => raw,
                Err(crate::fileread::ReadError::TooLarge { .. }) => {
                    return Err(PublishError::SourceTooLarge {
                        id: id.to_string(),
                        path: name,
                    })
                }
                Err(crate::fileread::ReadError::Io { source, .. }) => {
                    return Err(PublishError::ReadSource {
                        id: id.to_string(),
                        path: name,
                        error: source,
                    })
                }
                Err(e @ crate::fileread::ReadError::NotRegular { .. }) => {
                    return Err(PublishError::ReadSource {
                        id: id.to_string(),
                        path: name,
                        error: std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()),
                    })
                }
            };
            let canonical = canon::source(&raw).map_err(|error| PublishError::Canon {
                id: id.to_string(),
                path: name.clone(),
                error,
            })?;
            if canonical.is_empty() {
                return Err(PublishError::EmptySource {
                    id: id.to_string(),
                    path: name,
                });
            }
            Ok((name, canonical))
        }
        SourceSpec::Ref(r) => Ok((r.to_string(), stored_source(conn, id, r)?)),
    }
}

/// A stored transition source: present, re-hashing, of the right semantic id, canonical.
fn stored_source(conn: &Connection, id: &str, r: &HashRef) -> Result<Vec<u8>, PublishError> {
    let text = r.to_string();
    let obj = store::object_in(conn, &text)?.ok_or_else(|| PublishError::MissingSource {
        id: id.to_string(),
        reference: text.clone(),
    })?;
    let corrupt = |detail: String| PublishError::CorruptSource {
        id: id.to_string(),
        reference: text.clone(),
        detail,
    };
    if HashRef::of(&obj.payload) != *r {
        return Err(corrupt(format!(
            "its payload hashes to {}",
            HashRef::of(&obj.payload)
        )));
    }
    if obj.meta.semantic_id != SOURCE_SEMANTIC_ID {
        return Err(corrupt(format!(
            "its semantic id is {:?}, not {SOURCE_SEMANTIC_ID}",
            obj.meta.semantic_id
        )));
    }
    match canon::source(&obj.payload) {
        Ok(c) if c == obj.payload && !c.is_empty() => Ok(obj.payload),
        _ => Err(corrupt("its payload is not canon.Source output".into())),
    }
}

/// Write a planned publish in one `BEGIN IMMEDIATE` transaction (transitions.md §3 step 4):
/// bootstrap the epoch registry if planned, store the sources and the revision object
/// (`interfaceHash` = `InterfaceHashV1`; provenance `host/transitionreg`, or
/// `cmd/world-publish:unattended` when `unattended`), then compare-and-set the head from the
/// planned base. An unchanged plan writes nothing.
///
/// # Errors
/// When the head moved since the plan, nothing is written: [`PublishError::SameIdConflict`]
/// if the other revision set one of this publish's ids with different bytes, else
/// [`PublishError::HeadMoved`]. Epoch divergence and store errors roll back too.
pub fn commit_publish(
    store: &mut Store,
    plan: &Plan,
    unattended: bool,
) -> Result<Outcome, PublishError> {
    if let (true, Some(base)) = (plan.unchanged(), &plan.base) {
        return Ok(Outcome::Unchanged {
            revision: base.revision.revision,
            head: base.reference,
        });
    }
    let tx = store.immediate()?;
    let expected = plan.base.as_ref().map(|h| h.reference.to_string());
    let current = store::registry_head_in(&tx, registry::SEMANTIC_ID)?;
    if current != expected {
        return Err(moved_error(&tx, plan));
    }
    if let Some(obj) = &plan.epoch_bootstrap {
        epoch::apply(&tx, obj)?;
    }
    for s in &plan.sources {
        store::put_object(&tx, s)?;
    }
    for (source, label) in &plan.source_labels {
        store::labels::record(&tx, source, label).map_err(store::Error::from)?;
    }
    let obj = Object {
        meta: store::ObjectMeta {
            hash: plan.revision_ref.to_string(),
            interface_hash: INTERFACE_HASH_V1.to_string(),
            semantic_id: registry::SEMANTIC_ID.to_string(),
            provenance: if unattended {
                PROVENANCE_UNATTENDED
            } else {
                PROVENANCE
            }
            .to_string(),
        },
        payload: plan.revision_bytes.clone(),
    };
    store::put_object(&tx, &obj)?;
    match store::cas_registry_head(
        &tx,
        registry::SEMANTIC_ID,
        expected.as_deref(),
        &obj.meta.hash,
    ) {
        Ok(()) => {}
        Err(store::Error::RegistryCasConflict { .. }) => return Err(moved_error(&tx, plan)),
        Err(e) => return Err(e.into()),
    }
    tx.commit().map_err(store::Error::from)?;
    Ok(Outcome::Published {
        revision: plan.revision.revision,
        head: plan.revision_ref,
    })
}

/// Explain a moved head: a same-id conflict when the other revision set one of our ids with
/// bytes different from ours, else "kept moving".
fn moved_error(conn: &Connection, plan: &Plan) -> PublishError {
    let Ok(Some(now)) = read_head(conn) else {
        return PublishError::HeadMoved;
    };
    let base_entries = plan.base.as_ref().map_or(&[][..], |h| &h.revision.entries);
    let theirs = Diff::between(base_entries, &now.revision.entries);
    let touched: BTreeSet<&str> = theirs
        .added
        .iter()
        .map(String::as_str)
        .chain(theirs.changed.iter().map(|c| c.id.as_str()))
        .collect();
    for ours in plan
        .diff
        .added
        .iter()
        .chain(plan.diff.changed.iter().map(|c| &c.id))
    {
        if touched.contains(ours.as_str()) && now.revision.get(ours) != plan.revision.get(ours) {
            return PublishError::SameIdConflict {
                revision: now.revision.revision,
                id: ours.clone(),
            };
        }
    }
    PublishError::HeadMoved
}

/// The `interfaceHash` of transition-source objects (sha256 of the semantic id).
pub fn source_interface_hash() -> HashRef {
    interface_hash(SOURCE_SEMANTIC_ID)
}

#[cfg(test)]
mod tests;
