//! Episode bundles: `world export-episode EP --out FILE [--embed]` writes a new schema-v4
//! store holding exactly what replaying one episode needs, marked as a bundle so
//! `world verify` accepts its gaps (DEC-REPLAY-5..8).
//!
//! Contents: the episode's coordinator log entries and their world rows; each entry's
//! invocation record, input, output and plan objects; its effect records with their request
//! and result objects; the transition-source objects; the `commit_objects` rows of those
//! entries; the commit intents/outcomes of those invocations and every effect intent/outcome
//! of the episode (`effect:<ep>:*`), with their payload objects; the selected head set to the
//! last exported world. Rows and objects are copied verbatim (a tampered source stays
//! tampered, so replay of the bundle reports it).
//!
//! Archived external interpreters the entries pin go to `FILE.artifacts/interpreters/
//! sha256/<hex>/` (binary + sidecar), or with `--embed` into the store as
//! `world/interpreter-binary/v1` (payload = the binary, so its hash is the interpreter ref)
//! and `world/interpreter-manifest/v1` objects, which [`materialize`] writes to a temporary
//! archive for replay. Embedded-interpreter entries need nothing.
//!
//! The marker: a `world/episode-bundle/v1` object (Go-json
//! `{"bundle":"world/episode-bundle/v1","episode":…,"sourceStore":…,"entries":[…],
//! "interpreters":[{"ref":…,"binary":…,"manifest":…}]}`; `binary`/`manifest` are `""`
//! unless embedded) recorded as the registry head named [`BUNDLE`].

use std::collections::{BTreeSet, HashSet};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use crate::ailang::Embedded;
use crate::encoding::gojson::{self, Obj};
use crate::encoding::HashRef;
use crate::interp::archive::{Archive, Archived, ResolveError};
use crate::interp::external::External;
use crate::interp::{embedded_ref, Interpreter};
use crate::store::bundle::{self as bundle_rows, Contents};
use crate::store::journal::{self, JournalRow};
use crate::store::records::{EffectRecord, InvocationRecord};
use crate::store::rows::commit_objects_of;
use crate::store::{
    object_in, registry_head_in, set_registry_head, Error as StoreError, Object, Store,
    WriteOptions,
};
use crate::transitions::publish::{InterpreterProvider, ProviderError};

use super::{select, ReplayError, Selection};

/// The bundle marker's semantic id and the registry head name it is recorded under.
pub const BUNDLE: &str = "world/episode-bundle/v1";
/// Semantic id of an embedded interpreter binary (`--embed`).
pub const INTERPRETER_BINARY: &str = "world/interpreter-binary/v1";
/// Semantic id of an embedded interpreter sidecar (`--embed`).
pub const INTERPRETER_MANIFEST: &str = "world/interpreter-manifest/v1";
/// Provenance of the marker and embedded interpreter objects.
pub const PROVENANCE: &str = "world/export-episode";

/// One pinned external interpreter named by the marker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundledInterpreter {
    /// The interpreter ref (`sha256:<hex>` of the binary).
    #[serde(rename = "ref")]
    pub reference: String,
    /// The embedded binary object's ref, `""` when copied to `FILE.artifacts`.
    pub binary: String,
    /// The embedded sidecar object's ref, `""` when copied to `FILE.artifacts`.
    pub manifest: String,
}

/// The decoded bundle marker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Marker {
    /// Always [`BUNDLE`].
    pub bundle: String,
    /// The exported episode.
    pub episode: String,
    /// The source store path as given to export.
    pub source_store: String,
    /// The exported entry indexes, ascending.
    pub entries: Vec<i64>,
    /// The external interpreters the entries pin.
    pub interpreters: Vec<BundledInterpreter>,
}

impl Marker {
    /// The marker's Go-json bytes (member order as declared, no LF).
    pub fn encode(&self) -> Vec<u8> {
        let entries = gojson::any_to_vec(&serde_json::json!(self.entries));
        let mut interps = vec![b'['];
        for (i, b) in self.interpreters.iter().enumerate() {
            if i > 0 {
                interps.push(b',');
            }
            interps.extend(
                Obj::new()
                    .str("ref", &b.reference)
                    .str("binary", &b.binary)
                    .str("manifest", &b.manifest)
                    .finish(),
            );
        }
        interps.push(b']');
        Obj::new()
            .str("bundle", &self.bundle)
            .str("episode", &self.episode)
            .str("sourceStore", &self.source_store)
            .raw("entries", &entries)
            .raw("interpreters", &interps)
            .finish()
    }
}

/// The bundle marker of a store, if it is a bundle.
///
/// # Errors
/// [`StoreError::Corrupt`] when the head names a missing, altered or undecodable marker.
pub fn marker(conn: &Connection) -> Result<Option<Marker>, StoreError> {
    let Some(head) = registry_head_in(conn, BUNDLE)? else {
        return Ok(None);
    };
    let corrupt = |detail: String| StoreError::Corrupt {
        what: "episode bundle marker".into(),
        detail,
    };
    let obj = object_in(conn, &head)?.ok_or_else(|| corrupt(format!("{head} is missing")))?;
    if !obj.verifies() {
        return Err(corrupt(format!("{head} is altered")));
    }
    let m: Marker = serde_json::from_slice(&obj.payload).map_err(|e| corrupt(e.to_string()))?;
    Ok(Some(m))
}

/// Export failures.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// `--out` (or `FILE.artifacts`) already exists; nothing is overwritten.
    #[error("{0} already exists; refusing to overwrite it")]
    Exists(PathBuf),
    /// Selecting the episode failed (no such episode, or a read error).
    #[error(transparent)]
    Select(#[from] ReplayError),
    /// A pinned interpreter cannot be bundled (absent from the archive or altered).
    #[error("pinned interpreter {reference} cannot be bundled: {message}")]
    Interpreter {
        /// The interpreter ref.
        reference: String,
        /// Why.
        message: String,
        /// True when its archived bytes no longer match the ref.
        integrity: bool,
    },
    /// Reading the source or writing the bundle store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// `--checkpoint`: the entries' inclusion proofs could not be made (`integrity` when the
    /// log does not match the checkpoint).
    #[error("{message}")]
    Proofs {
        /// Why.
        message: String,
        /// True when the log does not match the checkpoint (exit 3).
        integrity: bool,
    },
    /// Writing `FILE.artifacts` failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being written.
        what: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// What an export wrote.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Exported {
    /// The bundle store path.
    pub out: PathBuf,
    /// The episode.
    pub episode: String,
    /// Exported entry indexes.
    pub entries: Vec<i64>,
    /// Objects copied (marker and embedded interpreters included).
    pub objects: u64,
    /// Journal rows copied.
    pub journal_rows: u64,
    /// External interpreters bundled (refs).
    pub interpreters: Vec<String>,
    /// Where external interpreters went: `FILE.artifacts`, or `None` when embedded / none.
    pub artifacts: Option<PathBuf>,
    /// The marker object's ref.
    pub marker: String,
    /// Entries stored with an inclusion proof (`--checkpoint`).
    pub proofs: u64,
}

fn artifacts_of(out: &Path) -> PathBuf {
    Archive::for_db(out).root().to_path_buf()
}

/// Export one episode of `src` into a new bundle store at `out` (module docs).
///
/// # Errors
/// [`ExportError::Exists`] (checked first, nothing written), [`ExportError::Select`] for an
/// unknown episode, [`ExportError::Interpreter`] for a pinned interpreter that is absent or
/// altered (nothing is left behind), [`ExportError::Store`], [`ExportError::Io`].
pub fn export_episode(
    src: &Store,
    episode: &str,
    out: &Path,
    embed: bool,
) -> Result<Exported, ExportError> {
    export_episode_with(src, episode, out, embed, None, &mut |_, _| {})
}

/// Makes the inclusion proofs of an export's entries (`export-episode --checkpoint`): given the
/// entry indexes, `(index, c2sp.org/tlog-proof@v1 text)` for each.
pub type Prover<'a> = &'a dyn Fn(&[i64]) -> Result<Vec<(i64, String)>, ExportError>;

/// [`export_episode`], calling `progress(objects_copied, objects_total)` while objects are
/// copied into the bundle (for a progress bar; the counts are objects, not bytes), and with
/// `prove` the inclusion proof of every exported entry, made before anything is written and
/// stored in the bundle's `world_bundle_proofs` in the same transaction (DEC-TRUST-4).
///
/// # Errors
/// As [`export_episode`].
pub fn export_episode_with(
    src: &Store,
    episode: &str,
    out: &Path,
    embed: bool,
    prove: Option<Prover<'_>>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Exported, ExportError> {
    if out.symlink_metadata().is_ok() {
        return Err(ExportError::Exists(out.to_path_buf()));
    }
    let artifacts = artifacts_of(out);
    if artifacts.symlink_metadata().is_ok() {
        return Err(ExportError::Exists(artifacts));
    }
    let selected = select(src, &Selection::Episode(episode.to_string()))?;
    let conn = src.conn();
    let mut objects: BTreeSet<String> = BTreeSet::new();
    let mut ids: Vec<String> = Vec::new();
    let mut interps: BTreeSet<String> = BTreeSet::new();
    for (e, id) in &selected {
        objects.insert(e.transition_ref.clone());
        objects.insert(e.header.transition_fn.clone());
        interps.insert(e.header.interpreter.clone());
        ids.extend(id.clone());
        let Some(obj) = object_in(conn, &e.transition_ref)? else {
            continue;
        };
        let Ok(rec) = InvocationRecord::decode(&obj.meta.semantic_id, &obj.payload) else {
            continue;
        };
        objects.insert(rec.transition_fn.clone());
        objects.insert(rec.input.clone());
        objects.insert(rec.output.clone());
        objects.extend(rec.plan.clone());
        interps.insert(rec.interpreter.clone());
        for r in rec.effects.unwrap_or_default() {
            objects.insert(r.clone());
            if let Some(o) = object_in(conn, &r)? {
                if let Ok(er) = EffectRecord::decode(&o.payload) {
                    objects.insert(er.request_ref);
                    if !er.result_ref.is_empty() {
                        objects.insert(er.result_ref);
                    }
                }
            }
        }
    }
    let indexes: Vec<i64> = selected.iter().map(|(e, _)| e.header.entry_index).collect();
    let proofs = match prove {
        Some(p) => p(&indexes)?,
        None => Vec::new(),
    };
    // Journal rows: commit intents/outcomes of these invocations, effect rows of the episode.
    let mut journal_rows: Vec<JournalRow> = Vec::new();
    for id in &ids {
        journal_rows.extend(journal::rows_of(conn, id)?);
    }
    journal_rows.extend(journal::effect_rows_of_episode(conn, episode)?);
    journal_rows.sort();
    journal_rows.dedup();
    for row in &journal_rows {
        objects.insert(row.object_ref.clone());
    }
    // Commit-object membership rows of the exported entries.
    let mut members: Vec<(String, i64)> = Vec::new();
    for i in &indexes {
        for o in commit_objects_of(conn, *i)? {
            objects.insert(o.clone());
            members.push((o, *i));
        }
    }
    // External interpreters: resolved (re-hashed) now, before anything is written.
    let archive = Archive::for_db(src.path());
    let mut bundled = Vec::new();
    let embedded = embedded_ref().to_string();
    for r in interps.iter().filter(|r| **r != embedded) {
        let archived = archive.resolve(r).map_err(|e| ExportError::Interpreter {
            reference: r.clone(),
            integrity: matches!(e, ResolveError::HashMismatch { .. }),
            message: e.to_string(),
        })?;
        bundled.push(archived);
    }

    let mut store = Store::open_write(
        out,
        WriteOptions {
            create: true,
            wait_lock: None,
        },
    )?;
    let result = (|| -> Result<Exported, ExportError> {
        let (mut extra, marker_interps) = interpreter_objects(&bundled, embed)?;
        let m = Marker {
            bundle: BUNDLE.to_string(),
            episode: episode.to_string(),
            source_store: src.path().display().to_string(),
            entries: indexes.clone(),
            interpreters: marker_interps,
        };
        let marker_obj = Object::new(BUNDLE, PROVENANCE, m.encode());
        extra.push(marker_obj.clone());

        let entries: Vec<_> = selected.iter().map(|(e, _)| e.clone()).collect();
        let tx = store.immediate()?;
        let written = bundle_rows::write(
            &tx,
            conn,
            &Contents {
                objects: &objects,
                new_objects: &extra,
                entries: &entries,
                members: &members,
                journal: &journal_rows,
                proofs: &proofs,
            },
            progress,
        )?;
        set_registry_head(&tx, BUNDLE, &marker_obj.meta.hash)?;
        tx.commit().map_err(StoreError::from)?;

        let artifacts_dir = if !embed && !bundled.is_empty() {
            Some(copy_interpreters(out, &bundled)?)
        } else {
            None
        };
        Ok(Exported {
            out: out.to_path_buf(),
            episode: episode.to_string(),
            entries: indexes.clone(),
            objects: written.objects,
            journal_rows: journal_rows.len() as u64,
            interpreters: bundled.iter().map(|a| a.hash_ref.clone()).collect(),
            artifacts: artifacts_dir,
            marker: marker_obj.meta.hash.clone(),
            proofs: proofs.len() as u64,
        })
    })();
    drop(store);
    if result.is_err() {
        // Leave nothing half-written behind.
        let _ = fs::remove_file(out);
        let _ = fs::remove_dir_all(artifacts_of(out));
        let mut lock = out.as_os_str().to_owned();
        lock.push(".lock");
        let _ = fs::remove_file(PathBuf::from(lock));
    }
    result
}

/// The bundle's objects for the external interpreters `bundled` (their binary and sidecar
/// when `embed`) and the marker's entry for each.
///
/// # Errors
/// [`ExportError::Io`] when a binary or sidecar cannot be read.
fn interpreter_objects(
    bundled: &[Archived],
    embed: bool,
) -> Result<(Vec<Object>, Vec<BundledInterpreter>), ExportError> {
    let mut extra: Vec<Object> = Vec::new();
    let mut marker_interps = Vec::new();
    for a in bundled {
        if embed {
            let bin = fs::read(&a.binary).map_err(|source| ExportError::Io {
                what: format!("read interpreter {}", a.binary.display()),
                source,
            })?;
            let man = fs::read(a.binary.with_file_name("manifest.json")).map_err(|source| {
                ExportError::Io {
                    what: format!("read the sidecar of interpreter {}", a.hash_ref),
                    source,
                }
            })?;
            let bin = Object::new(INTERPRETER_BINARY, PROVENANCE, bin);
            let man = Object::new(INTERPRETER_MANIFEST, PROVENANCE, man);
            marker_interps.push(BundledInterpreter {
                reference: a.hash_ref.clone(),
                binary: bin.meta.hash.clone(),
                manifest: man.meta.hash.clone(),
            });
            extra.push(bin);
            extra.push(man);
        } else {
            marker_interps.push(BundledInterpreter {
                reference: a.hash_ref.clone(),
                binary: String::new(),
                manifest: String::new(),
            });
        }
    }
    Ok((extra, marker_interps))
}

/// Copies the external interpreters `bundled` (binary, mode 0555, and sidecar) into the
/// archive next to the bundle `out`, re-hashing each copy; returns the archive's root.
///
/// # Errors
/// [`ExportError::Io`], or [`ExportError::Interpreter`] when a copy does not re-hash.
fn copy_interpreters(out: &Path, bundled: &[Archived]) -> Result<PathBuf, ExportError> {
    let dest = Archive::for_db(out);
    for a in bundled {
        let hex = a.hash_ref.trim_start_matches("sha256:");
        let dir = dest.dir_for(hex);
        let io = |what: String| move |source| ExportError::Io { what, source };
        fs::create_dir_all(&dir).map_err(io(format!("create {}", dir.display())))?;
        let bin = dir.join("ailang");
        fs::copy(&a.binary, &bin).map_err(io(format!("copy to {}", bin.display())))?;
        fs::set_permissions(&bin, fs::Permissions::from_mode(0o555))
            .map_err(io(format!("chmod {}", bin.display())))?;
        let man = dir.join("manifest.json");
        fs::copy(a.binary.with_file_name("manifest.json"), &man)
            .map_err(io(format!("copy to {}", man.display())))?;
        // Re-hash the copy: the bundle must hold exactly the pinned bytes.
        crate::interp::archive::verify(&a.hash_ref, &bin).map_err(|e| {
            ExportError::Interpreter {
                reference: a.hash_ref.clone(),
                message: e.to_string(),
                integrity: true,
            }
        })?;
    }
    Ok(dest.root().to_path_buf())
}

/// A temporary archive holding a bundle's embedded interpreters (removed on drop).
pub struct Materialized {
    dir: tempfile::TempDir,
}

impl Materialized {
    /// A fake store path whose `<path>.artifacts` is the temporary archive.
    pub fn db_path(&self) -> PathBuf {
        self.dir.path().join("bundle.db")
    }
}

/// Write a bundle's embedded interpreters (`--embed`) into a temporary archive, verbatim
/// (an altered binary object stays altered, so resolving it fails its integrity check).
/// `Ok(None)` when the store is not a bundle or embeds no interpreter.
///
/// # Errors
/// [`StoreError::Corrupt`] for a bad marker or a missing embedded object; [`StoreError::Io`].
pub fn materialize(conn: &Connection) -> Result<Option<Materialized>, StoreError> {
    let Some(m) = marker(conn)? else {
        return Ok(None);
    };
    let embedded: Vec<&BundledInterpreter> = m
        .interpreters
        .iter()
        .filter(|b| !b.binary.is_empty())
        .collect();
    if embedded.is_empty() {
        return Ok(None);
    }
    let io = |what: String| move |source| StoreError::Io { what, source };
    let dir = tempfile::Builder::new()
        .prefix("world-replay-")
        .tempdir()
        .map_err(io("create a temporary interpreter archive".into()))?;
    let mat = Materialized { dir };
    let archive = Archive::for_db(&mat.db_path());
    let mut seen = HashSet::new();
    for b in embedded {
        let hex = HashRef::parse(&b.reference)
            .map_err(|e| StoreError::Corrupt {
                what: "episode bundle marker".into(),
                detail: format!("interpreter ref {:?}: {e}", b.reference),
            })?
            .to_string()
            .trim_start_matches("sha256:")
            .to_string();
        if !seen.insert(hex.clone()) {
            continue;
        }
        let get = |r: &str| -> Result<Object, StoreError> {
            object_in(conn, r)?.ok_or_else(|| StoreError::Corrupt {
                what: "episode bundle".into(),
                detail: format!("embedded interpreter object {r} is missing"),
            })
        };
        let bin = get(&b.binary)?;
        let man = get(&b.manifest)?;
        let d = archive.dir_for(&hex);
        fs::create_dir_all(&d).map_err(io(format!("create {}", d.display())))?;
        let path = d.join("ailang");
        fs::write(&path, &bin.payload).map_err(io(format!("write {}", path.display())))?;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o555))
            .map_err(io(format!("chmod {}", path.display())))?;
        let mpath = d.join("manifest.json");
        fs::write(&mpath, &man.payload).map_err(io(format!("write {}", mpath.display())))?;
    }
    Ok(Some(mat))
}

/// The interpreter provider replay uses: the embedded interpreter, and archived ones
/// resolved by ref and re-hashed before every run, **without** the compile-cache templates
/// (so replay writes nothing next to the store either) and never archiving anything.
pub struct ReadOnlyPins {
    archive: Archive,
}

impl ReadOnlyPins {
    /// The archive of the store at `db` (`<db>.artifacts`).
    pub fn for_db(db: &Path) -> Self {
        ReadOnlyPins {
            archive: Archive::for_db(db),
        }
    }
}

impl InterpreterProvider for ReadOnlyPins {
    fn embedded(&self) -> Result<Box<dyn Interpreter>, ProviderError> {
        Ok(Box::new(Embedded::new()))
    }

    fn archive(&self, path: &Path) -> Result<Box<dyn Interpreter>, ProviderError> {
        Err(ProviderError::new(format!(
            "replay never archives interpreters ({} was not archived)",
            path.display()
        )))
    }

    fn resolve(&self, reference: &HashRef) -> Result<Box<dyn Interpreter>, ProviderError> {
        if *reference == embedded_ref() {
            return self.embedded();
        }
        External::resolve(&self.archive, &reference.to_string())
            .map(|x| Box::new(x.without_cache()) as Box<dyn Interpreter>)
            .map_err(|e| {
                let mut p = ProviderError::new(format!("{} ({})", e, e.kind()));
                p.integrity = true;
                p
            })
    }

    fn archived(&self) -> Result<Vec<HashRef>, ProviderError> {
        let list = self
            .archive
            .list()
            .map_err(|e| ProviderError::new(e.to_string()))?;
        Ok(list
            .into_iter()
            .filter_map(|a| HashRef::parse(&a.hash_ref).ok())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_round_trips() {
        let m = Marker {
            bundle: BUNDLE.into(),
            episode: "ep1".into(),
            source_store: "/x/w.db".into(),
            entries: vec![1, 3],
            interpreters: vec![BundledInterpreter {
                reference: "sha256:aa".into(),
                binary: String::new(),
                manifest: String::new(),
            }],
        };
        let bytes = m.encode();
        assert!(bytes.starts_with(br#"{"bundle":"world/episode-bundle/v1","episode":"ep1""#));
        let back: Marker = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(back, m);
    }
}
