//! The token file `session mint --out` writes: staged next to it first, linked into place
//! after the commit, never overwriting.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

/// Why the token could not be staged next to `--out` (nothing was committed yet).
#[derive(Debug, thiserror::Error)]
pub(super) enum StageError {
    /// The temp file could not be created.
    #[error("create a temp file next to {}: {source}", .out.display())]
    Create {
        /// The `--out` path.
        out: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Writing or syncing it failed (it was removed).
    #[error("write {}: {source}", .tmp.display())]
    Write {
        /// The temp file.
        tmp: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// Write `token` + LF to a new hidden temp file (mode 0600) in `out`'s directory and fsync
/// it, after sweeping temps of dead mints there; returns the temp path.
pub(super) fn stage_token(out: &std::path::Path, token: &str) -> Result<PathBuf, StageError> {
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let base = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name
                .rsplit_once(".world-mint-")
                .and_then(|(_, r)| r.strip_suffix(".tmp"))
                .and_then(|p| p.parse::<i32>().ok())
            else {
                continue;
            };
            // SAFETY: signal 0 only checks for existence.
            let alive = unsafe { libc::kill(pid, 0) } == 0
                || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
            if name.starts_with('.') && !alive {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    let tmp = dir.join(format!(".{base}.world-mint-{}.tmp", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(|source| StageError::Create {
            out: out.to_path_buf(),
            source,
        })?;
    if let Err(source) = f
        .write_all(format!("{token}\n").as_bytes())
        .and_then(|_| f.sync_all())
    {
        let _ = std::fs::remove_file(&tmp);
        return Err(StageError::Write { tmp, source });
    }
    Ok(tmp)
}
