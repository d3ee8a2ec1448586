//! The external `ailang` binary as an [`Interpreter`] (transitions.md §6, §6.1; ailang.md §1–§3).
//!
//! Every call re-hashes the archived binary first and refuses a modified one before exec.
//! A run happens in a fresh temp root `world-capsule-*`:
//!
//! ```text
//! <root>/host/capsule/main.ail   the source
//! <root>/args.json               the Args bytes (the input as a Go-json string)
//! <root>/.capsule-cache/         AILANG_CACHE_DIR, seeded from the compile-cache template
//! ```
//!
//! and the child runs as `<ailang> run --quiet --caps "" --entry main --args-file args.json
//! host/capsule/main.ail` with cwd `<root>`, an environment of exactly `AILANG_FS_SANDBOX`,
//! `AILANG_RELAX_MODULES=1` and `AILANG_CACHE_DIR`, stdin `/dev/null`, in its own process
//! group that is SIGKILLed whole at the deadline or when a stream passes its cap — all of it
//! done by the one bounded runner, [`world_io::process`].

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::archive::{self, Archive, Archived, ResolveError};
use super::{CheckOutcome, Interpreter, RunError, RunLimits, RunOutcome};
use world_io::process;

/// The publish-time check's own bound (transitions.md §6.1: 10 s).
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// Path of the source inside the temp root, relative to it.
pub const SOURCE_PATH: &str = "host/capsule/main.ail";

/// Name of the args file inside the temp root.
pub const ARGS_FILE: &str = "args.json";

/// Name of the private compile cache inside the temp root.
pub const CACHE_DIR: &str = ".capsule-cache";

/// The external `ailang` interpreter, resolved from a store's archive.
#[derive(Clone, Debug)]
pub struct External {
    binary: PathBuf,
    hash_ref: String,
    version: String,
    /// `<db>.artifacts/capsule-cache/<interp-hex>`, when compile-cache templates are used.
    cache: Option<PathBuf>,
}

impl External {
    /// Resolve `hash_ref` in `archive` (re-hashing the binary) and use the store's
    /// compile-cache templates under `<db>.artifacts/capsule-cache/<hex>`.
    ///
    /// Errors: every [`ResolveError`] kind (transitions.md §5).
    pub fn resolve(archive: &Archive, hash_ref: &str) -> Result<External, ResolveError> {
        let archived = archive.resolve(hash_ref)?;
        Ok(External::from_archived(archive, archived))
    }

    /// Use an already-resolved archive entry (it is still re-hashed before every call).
    pub fn from_archived(archive: &Archive, archived: Archived) -> External {
        let hex = archived.hash_ref.trim_start_matches("sha256:").to_string();
        External {
            binary: archived.binary,
            hash_ref: archived.hash_ref,
            version: archived.manifest.version,
            cache: Some(archive.capsule_cache_dir(&hex)),
        }
    }

    /// The absolute path of the archived binary that is executed.
    pub fn binary(&self) -> &Path {
        &self.binary
    }

    /// Stop using compile-cache templates (every run starts with an empty cache).
    pub fn without_cache(mut self) -> External {
        self.cache = None;
        self
    }

    fn verify(&self) -> Result<(), RunError> {
        archive::verify(&self.hash_ref, &self.binary).map_err(RunError::from)
    }

    fn template_for(&self, source: &[u8]) -> Option<PathBuf> {
        let digest = hex::encode(Sha256::digest(source));
        self.cache.as_ref().map(|c| c.join(digest))
    }
}

impl Interpreter for External {
    fn interpreter_ref(&self) -> &str {
        &self.hash_ref
    }

    fn version_text(&self) -> &str {
        &self.version
    }

    /// `<ailang> check host/capsule/main.ail` in a scratch root holding only that file,
    /// environment `AILANG_RELAX_MODULES=1` and `AILANG_CACHE_DIR=<tmp>` only, bounded by
    /// `min(limits.deadline, now + 10 s)`. A passing check whose cache holds
    /// `compile/manifest.json` is promoted to the compile-cache template.
    fn check(&self, source: &[u8], limits: RunLimits) -> Result<CheckOutcome, RunError> {
        self.verify()?;
        let deadline = limits.deadline.min(Instant::now() + CHECK_TIMEOUT);
        let scratch = scratch_root("world-check-")?;
        write_source(scratch.path(), source)?;
        let cache_tmp = match &self.cache {
            Some(dir) => {
                fs::create_dir_all(dir)?;
                tempfile::Builder::new().prefix(".tmp-").tempdir_in(dir)?
            }
            None => tempfile::Builder::new()
                .prefix("world-check-cache-")
                .tempdir()?,
        };
        let spec = process::Spec::new(&self.binary, limits.output_cap, deadline)
            .args(["check", SOURCE_PATH])
            .cwd(scratch.path())
            .env("AILANG_RELAX_MODULES", "1")
            .env("AILANG_CACHE_DIR", cache_tmp.path());
        let out = run_bounded(&spec)?;
        let passed = out.exit_code == 0;
        if passed && cache_tmp.path().join("compile/manifest.json").is_file() {
            if let Some(template) = self.template_for(source) {
                if !template.exists() {
                    let tmp = cache_tmp.keep();
                    if fs::rename(&tmp, &template).is_err() {
                        let _ = fs::remove_dir_all(&tmp);
                    }
                }
            }
        }
        let mut diagnostics = String::from_utf8_lossy(&out.stderr).into_owned();
        if diagnostics.trim().is_empty() && !passed {
            diagnostics = String::from_utf8_lossy(&out.stdout).into_owned();
        }
        Ok(CheckOutcome {
            passed,
            diagnostics,
        })
    }

    /// The capsule run (transitions.md §6); see the module docs for the exact staging.
    fn run(&self, source: &[u8], args: &[u8], limits: RunLimits) -> Result<RunOutcome, RunError> {
        self.verify()?;
        let root = scratch_root("world-capsule-")?;
        // The sandbox and cache paths are passed absolute; the child's cwd is the root.
        let root_path = std::path::absolute(root.path())?;
        write_source(&root_path, source)?;
        fs::write(root_path.join(ARGS_FILE), args)?;
        let cache = root_path.join(CACHE_DIR);
        let template = self.template_for(source);
        let warm = match &template {
            Some(t) if t.join("compile/manifest.json").is_file() => copy_dir(t, &cache).is_ok(),
            _ => false,
        };
        if !warm {
            fs::create_dir_all(&cache)?;
        }
        let spec = process::Spec::new(&self.binary, limits.output_cap, limits.deadline)
            .args([
                "run",
                "--quiet",
                "--caps",
                "",
                "--entry",
                "main",
                "--args-file",
                ARGS_FILE,
                SOURCE_PATH,
            ])
            .cwd(&root_path)
            .env("AILANG_FS_SANDBOX", &root_path)
            .env("AILANG_RELAX_MODULES", "1")
            .env("AILANG_CACHE_DIR", &cache);
        let out = run_bounded(&spec)?;
        if out.exit_code == 0 && !warm && cache.join("compile/manifest.json").is_file() {
            if let Some(t) = template {
                promote(&cache, &t);
            }
        }
        drop(root);
        Ok(RunOutcome {
            exit_code: out.exit_code,
            stdout: out.stdout,
            stderr: out.stderr,
        })
    }
}

/// A fresh scratch root for one run: under `$TMPDIR` when it is set, else under `/dev/shm`
/// when that is a writable directory (tmpfs: creating and removing the root's few files costs
/// no file-system journal commits, which on a busy disk took milliseconds per run; DEC-PERF-6),
/// else under the system temp directory.
fn scratch_root(prefix: &str) -> io::Result<tempfile::TempDir> {
    let mut b = tempfile::Builder::new();
    b.prefix(prefix);
    if std::env::var_os("TMPDIR").is_none() {
        let shm = Path::new("/dev/shm");
        if shm.is_dir() {
            if let Ok(root) = b.tempdir_in(shm) {
                return Ok(root);
            }
        }
    }
    b.tempdir()
}

fn write_source(root: &Path, source: &[u8]) -> io::Result<()> {
    let dir = root.join("host/capsule");
    fs::create_dir_all(&dir)?;
    fs::write(dir.join("main.ail"), source)
}

/// Copy a directory tree (regular files and directories only; symlinks are skipped).
fn copy_dir(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let dest = to.join(entry.file_name());
        if kind.is_dir() {
            copy_dir(&entry.path(), &dest)?;
        } else if kind.is_file() {
            fs::copy(entry.path(), &dest)?;
        }
    }
    Ok(())
}

/// Promote a run's cache to the template by copy into `.tmp-*` then rename; best effort
/// (a failed promotion only costs the next run a cold compile).
fn promote(cache: &Path, template: &Path) {
    let Some(parent) = template.parent() else {
        return;
    };
    if template.exists() || fs::create_dir_all(parent).is_err() {
        return;
    }
    let Ok(tmp) = tempfile::Builder::new().prefix(".tmp-").tempdir_in(parent) else {
        return;
    };
    if copy_dir(cache, tmp.path()).is_ok() {
        let tmp_path = tmp.keep();
        if fs::rename(&tmp_path, template).is_err() {
            let _ = fs::remove_dir_all(&tmp_path);
        }
    }
}

/// Run `spec` through the one bounded runner ([`world_io::process::run`]) and map its errors to
/// the interpreter's: a deadline is [`RunError::Timeout`], a flood [`RunError::OutputLimit`],
/// a program that cannot start `exec_failure` ([`RunError::Unavailable`]).
pub(crate) fn run_bounded(spec: &process::Spec) -> Result<process::Output, RunError> {
    process::run(spec).map_err(|e| match e {
        process::RunError::Deadline { .. } => RunError::Timeout,
        process::RunError::OutputLimit { stream, cap, .. } => RunError::OutputLimit { stream, cap },
        process::RunError::Spawn { program, source } => RunError::Unavailable(format!(
            "exec_failure: cannot execute {program:?}: {source}"
        )),
        process::RunError::Io { source, .. } => RunError::Io(source),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, cap: usize, deadline: Instant) -> process::Spec {
        process::Spec::new("/bin/sh", cap, deadline)
            .arg("-c")
            .arg(script)
    }

    #[test]
    fn overflow_is_its_own_error_even_on_stderr() {
        let deadline = Instant::now() + Duration::from_secs(10);
        let err =
            run_bounded(&sh("head -c 100000 /dev/zero >&2; sleep 5", 1000, deadline)).unwrap_err();
        assert!(
            matches!(
                err,
                RunError::OutputLimit {
                    stream: "stderr",
                    cap: 1000
                }
            ),
            "{err}"
        );
        let exact = run_bounded(&sh("head -c 1000 /dev/zero", 1000, deadline)).unwrap();
        assert_eq!(exact.stdout.len(), 1000);
    }

    #[test]
    fn deadline_kills_the_group() {
        let start = Instant::now();
        let err = run_bounded(&sh(
            "sleep 30 & sleep 30",
            1024,
            start + Duration::from_millis(300),
        ))
        .unwrap_err();
        assert!(matches!(err, RunError::Timeout), "{err}");
        // The backgrounded sleep holds the pipes; it must have died with the group.
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn a_missing_binary_is_an_exec_failure() {
        let err = run_bounded(&process::Spec::new(
            "/nonexistent/ailang",
            10,
            Instant::now() + Duration::from_secs(1),
        ))
        .unwrap_err();
        assert!(err.to_string().contains("exec_failure"), "{err}");
    }
}
