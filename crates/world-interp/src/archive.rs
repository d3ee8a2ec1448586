//! The interpreter archive next to a store (transitions.md §5, store-format.md §1).
//!
//! Layout, under `<db>.artifacts` (formed from the db path string as given, never the
//! canonical path):
//!
//! ```text
//! interpreters/.ailang-XXXXXX.tmp              while archiving
//! interpreters/sha256/<hex>/ailang             the binary, mode 0555
//! interpreters/sha256/<hex>/manifest.json      the sidecar (Go indented JSON + LF)
//! ```
//!
//! An interpreter is resolved by its ref only, and the file is checked before **every** run: a
//! binary modified after archiving is refused before it is executed
//! ([`ResolveError::HashMismatch`], which the capsule reports as an integrity failure). The
//! check re-hashes the file unless this process hashed the same unchanged file before
//! ([`verify`], DEC-PERF-6).

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use std::time::{Duration, Instant};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::external;
use super::{capsule, RunError};

/// How long the `--version` probe may take (transitions.md §5: 10 s).
pub const VERSION_PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Cap on the `--version` stdout kept in the sidecar, in bytes (a banner is a few hundred).
pub const VERSION_CAP: usize = 64 * 1024;

/// The prefix a real `--version` first line starts with; a stored version lacking it is
/// re-probed when identical bytes are archived again (transitions.md §5).
pub const VERSION_PREFIX: &str = "AILANG v";

/// Failures while archiving or listing interpreters.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ArchiveError {
    /// The path to archive is missing, a directory, or has no execute bit.
    #[error("interpreter path {path:?} is not an executable regular file: {why}")]
    NotExecutable {
        /// The path as given.
        path: PathBuf,
        /// What is wrong with it (`no such file`, `is a directory`, `mode 0644 has no execute bit`).
        why: String,
    },
    /// `<ailang> --version` could not be run to completion within 10 s.
    #[error("interpreter {path:?}: the `--version` probe failed: {why}")]
    Probe {
        /// The binary probed.
        path: PathBuf,
        /// Why (timeout, exec failure).
        why: String,
    },
    /// A sidecar exists but is not the manifest this module writes.
    #[error("interpreter sidecar {path:?} is unreadable: {why}")]
    BadSidecar {
        /// The `manifest.json` path.
        path: PathBuf,
        /// The parse error.
        why: String,
    },
    /// Filesystem I/O on the archive failed.
    #[error("interpreter archive {path:?}: {source}")]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

fn io_at(path: &Path) -> impl FnOnce(io::Error) -> ArchiveError + '_ {
    move |source| ArchiveError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Why an archived interpreter cannot be run; [`Self::kind`] gives the spec's kind string.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// The ref does not parse as `sha256:<64 lowercase hex>`.
    #[error("interpreter ref {0:?} is not sha256:<64 lowercase hex>")]
    BadRef(String),
    /// No archived binary for this ref (`absent_artifact`).
    #[error("interpreter {hash_ref} is not archived at {path:?}")]
    AbsentArtifact {
        /// The requested ref.
        hash_ref: String,
        /// Where the binary was expected.
        path: PathBuf,
    },
    /// The sidecar names another OS or architecture (`unsupported_platform`).
    #[error(
        "interpreter {hash_ref} was archived for {os}/{arch}; this is {}/{}",
        go_os(),
        go_arch()
    )]
    UnsupportedPlatform {
        /// The requested ref.
        hash_ref: String,
        /// The sidecar's `os`.
        os: String,
        /// The sidecar's `arch`.
        arch: String,
    },
    /// The archived bytes no longer hash to the ref (`hash_mismatch`).
    #[error(
        "interpreter {expected} failed its integrity check: the archived bytes hash to {actual}"
    )]
    HashMismatch {
        /// The pinned ref.
        expected: String,
        /// What the file hashes to now.
        actual: String,
    },
    /// Reading the archived file failed (`exec_failure`).
    #[error("interpreter {hash_ref} at {path:?} cannot be read: {source}")]
    Io {
        /// The requested ref.
        hash_ref: String,
        /// The binary path.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

impl ResolveError {
    /// The spec's kind string: `absent_artifact`, `unsupported_platform`, `hash_mismatch`
    /// or `exec_failure` (transitions.md §5). A malformed ref counts as `absent_artifact`.
    pub fn kind(&self) -> &'static str {
        match self {
            ResolveError::BadRef(_) | ResolveError::AbsentArtifact { .. } => "absent_artifact",
            ResolveError::UnsupportedPlatform { .. } => "unsupported_platform",
            ResolveError::HashMismatch { .. } => "hash_mismatch",
            ResolveError::Io { .. } => "exec_failure",
        }
    }
}

impl From<ResolveError> for RunError {
    fn from(err: ResolveError) -> Self {
        match err {
            ResolveError::HashMismatch { expected, actual } => {
                RunError::HashMismatch { expected, actual }
            }
            other => RunError::Unavailable(format!("{}: {other}", other.kind())),
        }
    }
}

/// The sidecar `manifest.json` (transitions.md §5). Members in this order on disk.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// `sha256:<hex>` of the exact binary bytes.
    pub hash: String,
    /// The whole `--version` stdout, verbatim.
    pub version: String,
    /// Binary size in bytes.
    pub size: u64,
    /// Go `GOOS` name: `linux`, `darwin`.
    pub os: String,
    /// Go `GOARCH` name: `amd64`, `arm64`.
    pub arch: String,
}

impl Manifest {
    /// The sidecar bytes: Go `json.MarshalIndent(v, "", "  ")` plus one LF (Go escaping of
    /// `<`, `>`, `&`, U+2028/U+2029 included).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(160 + self.version.len());
        out.extend_from_slice(b"{\n  \"hash\": ");
        capsule::write_go_string(&mut out, self.hash.as_bytes());
        out.extend_from_slice(b",\n  \"version\": ");
        capsule::write_go_string(&mut out, self.version.as_bytes());
        out.extend_from_slice(format!(",\n  \"size\": {},\n  \"os\": ", self.size).as_bytes());
        capsule::write_go_string(&mut out, self.os.as_bytes());
        out.extend_from_slice(b",\n  \"arch\": ");
        capsule::write_go_string(&mut out, self.arch.as_bytes());
        out.extend_from_slice(b"\n}\n");
        out
    }

    /// The release string: the first non-blank trimmed line of the version, or `unpinned`.
    pub fn release(&self) -> String {
        super::release_of(&self.version)
    }
}

/// Go's `GOOS` name for the running platform (`linux`, `darwin`, else Rust's own name).
pub fn go_os() -> &'static str {
    match std::env::consts::OS {
        "macos" => "darwin",
        other => other,
    }
}

/// Go's `GOARCH` name for the running platform (`amd64`, `arm64`, else Rust's own name).
pub fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    }
}

/// One archived interpreter: where its binary is and what its sidecar says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Archived {
    /// `sha256:<hex>`.
    pub hash_ref: String,
    /// Absolute path of the archived `ailang` binary.
    pub binary: PathBuf,
    /// The sidecar.
    pub manifest: Manifest,
}

/// What [`Archive::archive`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArchiveStatus {
    /// New bytes were written.
    Added,
    /// Identical bytes were already archived; nothing changed.
    Unchanged,
    /// Identical bytes were archived but the sidecar was rewritten (missing, or its version
    /// lacked the `AILANG v` prefix and was re-probed), or a damaged binary was replaced.
    Repaired,
}

/// The interpreter archive of one store: `<db>.artifacts`.
#[derive(Clone, Debug)]
pub struct Archive {
    root: PathBuf,
}

impl Archive {
    /// The archive for the store at `db`: `<db>.artifacts`, formed from the path string as
    /// given (store-format.md §1). Nothing is created until [`Self::archive`].
    pub fn for_db(db: &Path) -> Archive {
        let mut s: OsString = db.as_os_str().to_owned();
        s.push(".artifacts");
        Archive {
            root: PathBuf::from(s),
        }
    }

    /// An archive rooted at an explicit `<db>.artifacts` directory.
    pub fn at_root(root: PathBuf) -> Archive {
        Archive { root }
    }

    /// `<db>.artifacts`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<db>.artifacts/interpreters`.
    pub fn interpreters_dir(&self) -> PathBuf {
        self.root.join("interpreters")
    }

    /// `<db>.artifacts/interpreters/sha256/<hex>`.
    pub fn dir_for(&self, hex: &str) -> PathBuf {
        self.interpreters_dir().join("sha256").join(hex)
    }

    /// `<db>.artifacts/capsule-cache/<hex>`: where compile-cache templates for one
    /// interpreter live (transitions.md §5).
    pub fn capsule_cache_dir(&self, hex: &str) -> PathBuf {
        self.root.join("capsule-cache").join(hex)
    }

    /// Archive the binary at `path` (transitions.md §5).
    ///
    /// Streams it through sha256 into `interpreters/.ailang-*.tmp`, fsyncs, chmods 0555,
    /// probes `--version` (10 s, stdout verbatim, empty environment) on the temporary copy,
    /// renames it into place and writes the sidecar atomically. Identical bytes already
    /// archived are a no-op, except that a sidecar that is missing or whose version lacks
    /// the `AILANG v` prefix is re-probed and rewritten.
    ///
    /// Errors: [`ArchiveError::NotExecutable`] when `path` is not an executable regular
    /// file (symlinks followed); [`ArchiveError::Probe`] when `--version` cannot run or
    /// takes over 10 s (nothing is archived then); [`ArchiveError::Io`].
    pub fn archive(&self, path: &Path) -> Result<(Archived, ArchiveStatus), ArchiveError> {
        check_executable(path)?;
        let interp_dir = self.interpreters_dir();
        fs::create_dir_all(&interp_dir).map_err(io_at(&interp_dir))?;

        // Opened non-blocking and re-checked on the descriptor: a path swapped for a FIFO after
        // the check cannot hang the copy (issue 26 §5).
        let mut src = world_io::fileread::open_regular(path)
            .map_err(|e| io_at(path)(io::Error::other(e.to_string())))?;
        let mut tmp = tempfile::Builder::new()
            .prefix(".ailang-")
            .suffix(".tmp")
            .tempfile_in(&interp_dir)
            .map_err(io_at(&interp_dir))?;
        let mut hasher = Sha256::new();
        let mut size: u64 = 0;
        let mut buf = vec![0u8; 256 * 1024];
        loop {
            let n = match src.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(ArchiveError::Io {
                        path: path.to_path_buf(),
                        source: e,
                    })
                }
            };
            let chunk = buf.get(..n).unwrap_or_default();
            hasher.update(chunk);
            tmp.write_all(chunk).map_err(io_at(tmp.path()))?;
            size += n as u64;
        }
        let hex = hex::encode(hasher.finalize());
        let hash_ref = format!("sha256:{hex}");
        let dir = self.dir_for(&hex);
        let binary = dir.join("ailang");
        let sidecar = dir.join("manifest.json");

        // Identical bytes already in place: a no-op unless the sidecar needs repair.
        if let Ok(actual) = hash_file(&binary) {
            if actual == hash_ref {
                drop(tmp);
                return match read_manifest(&sidecar) {
                    Ok(m) if m.version.starts_with(VERSION_PREFIX) => Ok((
                        Archived {
                            hash_ref,
                            binary: absolute(&binary),
                            manifest: m,
                        },
                        ArchiveStatus::Unchanged,
                    )),
                    _ => {
                        let version = probe_version(&binary)?;
                        let manifest = new_manifest(&hash_ref, version, size);
                        write_atomic(&dir, &sidecar, &manifest.to_bytes())?;
                        Ok((
                            Archived {
                                hash_ref,
                                binary: absolute(&binary),
                                manifest,
                            },
                            ArchiveStatus::Repaired,
                        ))
                    }
                };
            }
        }

        tmp.as_file().sync_all().map_err(io_at(tmp.path()))?;
        fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o555))
            .map_err(io_at(tmp.path()))?;
        // Close the write descriptor before executing the file (ETXTBSY otherwise).
        let tmp_path = tmp.into_temp_path();
        let version = probe_version(&tmp_path)?;
        let damaged = binary.exists();
        fs::create_dir_all(&dir).map_err(io_at(&dir))?;
        tmp_path.persist(&binary).map_err(|e| ArchiveError::Io {
            path: binary.clone(),
            source: e.error,
        })?;
        sync_dir(&dir)?;
        let manifest = new_manifest(&hash_ref, version, size);
        write_atomic(&dir, &sidecar, &manifest.to_bytes())?;
        let status = if damaged {
            ArchiveStatus::Repaired
        } else {
            ArchiveStatus::Added
        };
        Ok((
            Archived {
                hash_ref,
                binary: absolute(&binary),
                manifest,
            },
            status,
        ))
    }

    /// Resolve `hash_ref` to its archived binary and re-hash it now (transitions.md §5).
    ///
    /// Errors: [`ResolveError::BadRef`], [`ResolveError::AbsentArtifact`] (no binary, or no
    /// readable sidecar), [`ResolveError::UnsupportedPlatform`],
    /// [`ResolveError::HashMismatch`], [`ResolveError::Io`].
    pub fn resolve(&self, hash_ref: &str) -> Result<Archived, ResolveError> {
        let hex = parse_ref(hash_ref)?;
        let dir = self.dir_for(hex);
        let binary = dir.join("ailang");
        if !binary.is_file() {
            return Err(ResolveError::AbsentArtifact {
                hash_ref: hash_ref.to_string(),
                path: binary,
            });
        }
        let manifest = read_manifest(&dir.join("manifest.json")).map_err(|_| {
            ResolveError::AbsentArtifact {
                hash_ref: hash_ref.to_string(),
                path: dir.join("manifest.json"),
            }
        })?;
        if manifest.os != go_os() || manifest.arch != go_arch() {
            return Err(ResolveError::UnsupportedPlatform {
                hash_ref: hash_ref.to_string(),
                os: manifest.os,
                arch: manifest.arch,
            });
        }
        let archived = Archived {
            hash_ref: hash_ref.to_string(),
            binary: absolute(&binary),
            manifest,
        };
        verify(&archived.hash_ref, &archived.binary)?;
        Ok(archived)
    }

    /// Every archived interpreter with a readable sidecar, sorted by ref. A missing archive
    /// is an empty list. Directories that are not a 64-hex name, or lack a binary or a
    /// readable sidecar, are skipped (they are not usable pins). Nothing is re-hashed here.
    ///
    /// Errors: [`ArchiveError::Io`] when the directory exists but cannot be read.
    pub fn list(&self) -> Result<Vec<Archived>, ArchiveError> {
        let base = self.interpreters_dir().join("sha256");
        let entries = match fs::read_dir(&base) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(ArchiveError::Io {
                    path: base,
                    source: e,
                })
            }
        };
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.map_err(io_at(&base))?;
            let name = entry.file_name();
            let Some(hex) = name.to_str() else { continue };
            if parse_ref(&format!("sha256:{hex}")).is_err() {
                continue;
            }
            let dir = entry.path();
            let binary = dir.join("ailang");
            if !binary.is_file() {
                continue;
            }
            let Ok(manifest) = read_manifest(&dir.join("manifest.json")) else {
                continue;
            };
            out.push(Archived {
                hash_ref: format!("sha256:{hex}"),
                binary: absolute(&binary),
                manifest,
            });
        }
        out.sort_by(|a, b| a.hash_ref.cmp(&b.hash_ref));
        Ok(out)
    }

    /// The store's only archived interpreter, if exactly one exists (used where the spec
    /// says "the store's only pinned interpreter"). `Ok(None)` for zero or several.
    pub fn only(&self) -> Result<Option<Archived>, ArchiveError> {
        let mut all = self.list()?;
        Ok(if all.len() == 1 { all.pop() } else { None })
    }
}

/// Check that `binary` still holds the bytes of `hash_ref` (done before every run).
///
/// The file is re-hashed unless this process already hashed it to `hash_ref` and its
/// [`StatKey`] (device, inode, size, mode, mtime and ctime to the nanosecond) is unchanged
/// since: the verified-digest cache of DEC-PERF-6. Only a regular file of mode 0555 whose
/// times are at least [`RACY`] old is cached, so a replacement (a new inode, or a reused one
/// with a new ctime), an in-place write (new mtime and ctime; a write needs a chmod or root,
/// and both set ctime) and a write inside the timestamp granularity are all re-hashed. The
/// cache lives in this process's memory only, never in a file an attacker could write.
///
/// Errors: [`ResolveError::HashMismatch`], [`ResolveError::Io`].
pub fn verify(hash_ref: &str, binary: &Path) -> Result<(), ResolveError> {
    let before = StatKey::of(binary);
    if let Some(key) = &before {
        if verified().lock().ok().and_then(|m| m.get(binary).cloned())
            == Some((key.clone(), hash_ref.to_string()))
        {
            return Ok(());
        }
    }
    let actual = hash_file(binary).map_err(|source| ResolveError::Io {
        hash_ref: hash_ref.to_string(),
        path: binary.to_path_buf(),
        source,
    })?;
    if actual != hash_ref {
        if let Ok(mut m) = verified().lock() {
            m.remove(binary);
        }
        return Err(ResolveError::HashMismatch {
            expected: hash_ref.to_string(),
            actual,
        });
    }
    // Cache only when nothing changed while the bytes were read.
    if let Some(key) = before.filter(|k| StatKey::of(binary).as_ref() == Some(k)) {
        if let Ok(mut m) = verified().lock() {
            m.insert(binary.to_path_buf(), (key, actual));
        }
    }
    Ok(())
}

/// A file's times must be at least this old before its digest is cached: a write within the
/// file system's timestamp granularity (a few ms; coarse clocks) could otherwise leave mtime
/// and ctime unchanged.
pub const RACY: Duration = Duration::from_secs(2);

/// What identifies an archived binary's bytes without reading them (DEC-PERF-6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatKey {
    dev: u64,
    ino: u64,
    size: u64,
    mode: u32,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl StatKey {
    /// The key of `path`, or `None` when its digest may not be cached: not a regular file
    /// (symlinks are not followed), not mode 0555, or modified less than [`RACY`] ago.
    pub fn of(path: &Path) -> Option<StatKey> {
        let m = fs::symlink_metadata(path).ok()?;
        if !m.file_type().is_file() || m.mode() & 0o7777 != 0o555 {
            return None;
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_secs() as i64;
        let racy = RACY.as_secs() as i64;
        if m.mtime() > now - racy || m.ctime() > now - racy {
            return None;
        }
        Some(StatKey {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mode: m.mode(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        })
    }
}

/// Whether this process holds a verified digest for `binary` that its current [`StatKey`]
/// still matches, so the next [`verify`] will not re-hash it.
pub fn cached(binary: &Path) -> bool {
    let Some(key) = StatKey::of(binary) else {
        return false;
    };
    verified()
        .lock()
        .ok()
        .and_then(|m| m.get(binary).map(|(k, _)| k == &key))
        .unwrap_or(false)
}

type Verified = std::sync::Mutex<std::collections::HashMap<PathBuf, (StatKey, String)>>;

/// This process's verified digests: path → (key when hashed, digest).
fn verified() -> &'static Verified {
    static CACHE: std::sync::OnceLock<Verified> = std::sync::OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// `sha256:<hex>` of a file's bytes, streamed.
pub fn hash_file(path: &Path) -> io::Result<String> {
    let mut f = world_io::fileread::open_regular(path).map_err(io::Error::other)?;
    let mut hasher = Sha256::new();
    io::copy(&mut f, &mut hasher)?;
    Ok(format!("sha256:{}", hex::encode(hasher.finalize())))
}

/// The 64-hex digest of a `sha256:` ref (local until `world::encoding::hashref` is merged).
fn parse_ref(hash_ref: &str) -> Result<&str, ResolveError> {
    let bad = || ResolveError::BadRef(hash_ref.to_string());
    let hex = hash_ref.strip_prefix("sha256:").ok_or_else(bad)?;
    if hex.len() != 64
        || !hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err(bad());
    }
    Ok(hex)
}

fn check_executable(path: &Path) -> Result<(), ArchiveError> {
    let refuse = |why: String| ArchiveError::NotExecutable {
        path: path.to_path_buf(),
        why,
    };
    let meta = fs::metadata(path).map_err(|e| refuse(e.to_string()))?;
    if meta.is_dir() {
        return Err(refuse("it is a directory".into()));
    }
    if !meta.is_file() {
        return Err(refuse("it is not a regular file".into()));
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o111 == 0 {
        return Err(refuse(format!("mode {mode:04o} has no execute bit")));
    }
    Ok(())
}

fn new_manifest(hash_ref: &str, version: String, size: u64) -> Manifest {
    Manifest {
        hash: hash_ref.to_string(),
        version,
        size,
        os: go_os().to_string(),
        arch: go_arch().to_string(),
    }
}

fn read_manifest(path: &Path) -> Result<Manifest, ArchiveError> {
    let bytes = fs::read(path).map_err(io_at(path))?;
    serde_json::from_slice(&bytes).map_err(|e| ArchiveError::BadSidecar {
        path: path.to_path_buf(),
        why: e.to_string(),
    })
}

fn write_atomic(dir: &Path, target: &Path, bytes: &[u8]) -> Result<(), ArchiveError> {
    let mut tmp = tempfile::Builder::new()
        .prefix(".manifest-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(io_at(dir))?;
    tmp.write_all(bytes).map_err(io_at(tmp.path()))?;
    tmp.as_file().sync_all().map_err(io_at(tmp.path()))?;
    fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o644))
        .map_err(io_at(tmp.path()))?;
    tmp.persist(target).map_err(|e| ArchiveError::Io {
        path: target.to_path_buf(),
        source: e.error,
    })?;
    sync_dir(dir)
}

fn sync_dir(dir: &Path) -> Result<(), ArchiveError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_at(dir))
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Run `<binary> --version` with an empty environment, stdin closed, 10 s; return stdout
/// verbatim (invalid UTF-8 replaced). A non-zero exit still yields its stdout (an empty
/// text makes the release `unpinned`); exec failure or timeout is an error.
fn probe_version(binary: &Path) -> Result<String, ArchiveError> {
    let probe_err = |why: String| ArchiveError::Probe {
        path: binary.to_path_buf(),
        why,
    };
    let scratch = tempfile::Builder::new()
        .prefix("world-probe-")
        .tempdir()
        .map_err(|e| probe_err(format!("cannot create a scratch directory: {e}")))?;
    let deadline = Instant::now() + VERSION_PROBE_TIMEOUT;
    let spec = world_io::process::Spec::new(absolute(binary), VERSION_CAP, deadline)
        .arg("--version")
        .cwd(scratch.path());
    let out = external::run_bounded(&spec).map_err(|e| match e {
        RunError::Timeout => probe_err(format!(
            "no answer within {} s",
            VERSION_PROBE_TIMEOUT.as_secs()
        )),
        other => probe_err(other.to_string()),
    })?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_bytes_are_go_indented_json() {
        let m = Manifest {
            hash: format!("sha256:{}", "a".repeat(64)),
            version: "AILANG v0.41.0\nCommit: <x> & y\n".into(),
            size: 42,
            os: "linux".into(),
            arch: "amd64".into(),
        };
        let want = format!(
            "{{\n  \"hash\": \"sha256:{}\",\n  \"version\": \"AILANG v0.41.0\\nCommit: \\u003cx\\u003e \\u0026 y\\n\",\n  \"size\": 42,\n  \"os\": \"linux\",\n  \"arch\": \"amd64\"\n}}\n",
            "a".repeat(64)
        );
        assert_eq!(String::from_utf8(m.to_bytes()).unwrap(), want);
        let back: Manifest = serde_json::from_slice(&m.to_bytes()).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.release(), "AILANG v0.41.0");
    }

    #[test]
    fn artifacts_root_is_formed_from_the_path_string() {
        let a = Archive::for_db(Path::new("./x/../w.db"));
        assert_eq!(a.root(), Path::new("./x/../w.db.artifacts"));
        assert_eq!(
            a.dir_for("ab"),
            Path::new("./x/../w.db.artifacts/interpreters/sha256/ab")
        );
    }

    #[test]
    fn refs_parse_strictly() {
        assert!(parse_ref(&format!("sha256:{}", "0".repeat(64))).is_ok());
        for bad in [
            "",
            "sha256:",
            "sha256:abc",
            &format!("sha256:{}", "A".repeat(64)),
            &"0".repeat(64),
        ] {
            assert!(parse_ref(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn non_executable_paths_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let archive = Archive::for_db(&dir.path().join("w.db"));
        let plain = dir.path().join("plain");
        fs::write(&plain, b"#!/bin/sh\n").unwrap();
        fs::set_permissions(&plain, fs::Permissions::from_mode(0o644)).unwrap();
        let err = archive.archive(&plain).unwrap_err();
        assert!(matches!(err, ArchiveError::NotExecutable { .. }), "{err}");
        assert!(
            err.to_string().contains("mode 0644 has no execute bit"),
            "{err}"
        );
        let err = archive.archive(dir.path()).unwrap_err();
        assert!(err.to_string().contains("is a directory"), "{err}");
        let err = archive.archive(&dir.path().join("missing")).unwrap_err();
        assert!(matches!(err, ArchiveError::NotExecutable { .. }), "{err}");
        assert!(!archive.interpreters_dir().exists());
    }

    #[test]
    fn resolve_reports_kinds() {
        let dir = tempfile::tempdir().unwrap();
        let archive = Archive::for_db(&dir.path().join("w.db"));
        let r = format!("sha256:{}", "1".repeat(64));
        assert_eq!(archive.resolve(&r).unwrap_err().kind(), "absent_artifact");
        assert_eq!(
            archive.resolve("sha256:12").unwrap_err().kind(),
            "absent_artifact"
        );
        assert!(archive.list().unwrap().is_empty());
    }
}
