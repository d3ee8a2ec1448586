//! The writer lock: one process holds write authority over a store file (store-format.md §11).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fs4::fs_std::FileExt;

use super::Error;

/// Who holds the writer lock, as its lock file says: `PID\n` then, from `world` 0.x on, one
/// line naming the holder's command (`world commit`, `world serve`, `world publish (waiting
/// at its confirmation prompt)`). The reference daemon writes nothing (DEC-CLI-21, DEC-UX-11).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    /// The holder's process id (alive when read).
    pub pid: u32,
    /// What it is doing, when it said (control characters removed, at most 200 chars).
    pub command: Option<String>,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.command {
            Some(c) => write!(f, "pid {} ({c})", self.pid),
            None => write!(f, "pid {}", self.pid),
        }
    }
}

/// The command this process names in the lock files it takes (set once by the CLI from the
/// subcommand, e.g. `world commit`; never its arguments, which may hold secrets).
static LABEL: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

/// Name what this process is, for the lock files it takes from now on (see [`Holder`]).
pub fn set_label(label: &str) {
    if let Ok(mut l) = LABEL.lock() {
        *l = clean(label);
    }
}

fn label() -> String {
    LABEL.lock().map(|l| l.clone()).unwrap_or_default()
}

/// One line, no control characters, at most 200 chars.
fn clean(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).take(200).collect()
}

/// A held writer lock; dropping it (or the process dying) releases it. The lock file is never
/// deleted.
#[derive(Debug)]
pub struct WriterLock {
    _file: Option<File>,
    /// `<canonical db path>.writer.lock`.
    pub path: PathBuf,
}

/// Whether `db` names an in-memory database (no lock is taken for those).
pub fn is_memory(db: &str) -> bool {
    db == ":memory:" || db.starts_with("file::memory:") || db.contains("mode=memory")
}

/// The canonical store path: absolute with symlinks resolved; for a file that does not exist
/// yet, the canonical parent joined with the base name. A `file:` URI is reduced to its path.
///
/// # Errors
/// [`Error::NoParent`] when the parent directory does not exist (it is never created).
pub fn canonical_db_path(db: &Path) -> Result<PathBuf, Error> {
    let text = db.to_string_lossy();
    let path: PathBuf = match text.strip_prefix("file:") {
        Some(rest) => {
            let rest = rest.split('?').next().unwrap_or("");
            let rest = rest
                .strip_prefix("//localhost")
                .or_else(|| rest.strip_prefix("//"))
                .unwrap_or(rest);
            PathBuf::from(percent_decode(rest))
        }
        None => db.to_path_buf(),
    };
    if let Ok(c) = path.canonicalize() {
        return Ok(c);
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path.file_name().ok_or_else(|| Error::NoParent {
        path: path.display().to_string(),
    })?;
    let parent = parent.canonicalize().map_err(|_| Error::NoParent {
        path: path.display().to_string(),
    })?;
    Ok(parent.join(name))
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Take the writer lock for the store at `db`, before SQLite opens it.
///
/// Locks `<canonical db path>.writer.lock` (created mode 0600, never deleted) with
/// `flock(LOCK_EX | LOCK_NB)`. With `wait = Some(d)` the same non-blocking try is repeated
/// every 50 ms until `d` has passed; it never blocks in the kernel. In-memory DSNs get a
/// no-op guard.
///
/// # Errors
/// - [`Error::WriterAlreadyActive`] when another process holds it (exit 6).
/// - [`Error::NoParent`] when the store's directory does not exist.
/// - [`Error::Io`] when the lock file cannot be created or locked.
pub fn acquire_writer(db: &Path, wait: Option<Duration>) -> Result<WriterLock, Error> {
    if is_memory(&db.to_string_lossy()) {
        return Ok(WriterLock {
            _file: None,
            path: PathBuf::new(),
        });
    }
    let canonical = canonical_db_path(db)?;
    let mut lock_path = canonical.clone().into_os_string();
    lock_path.push(".writer.lock");
    let lock_path = PathBuf::from(lock_path);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        // Never block on a FIFO planted at the lock path (issue 26 §5).
        .custom_flags(libc::O_NONBLOCK)
        .open(&lock_path)
        .map_err(|e| Error::Io {
            what: format!("open writer lock {}", lock_path.display()),
            source: e,
        })?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(Error::Io {
            what: format!("open writer lock {}", lock_path.display()),
            source: std::io::Error::other("the lock path is not a regular file"),
        });
    }
    let start = Instant::now();
    loop {
        match FileExt::try_lock_exclusive(&file) {
            Ok(true) => {
                // Name this process as the holder (the file's content is ours to use: the
                // spec fixes only its path, mode and flock; DEC-CLI-21).
                let _ = write_holder(&file, &label());
                return Ok(WriterLock {
                    _file: Some(file),
                    path: lock_path,
                });
            }
            Ok(false) => match wait {
                Some(d) if start.elapsed() < d => std::thread::sleep(Duration::from_millis(50)),
                _ => {
                    return Err(Error::WriterAlreadyActive {
                        db: canonical,
                        holder: read_holder(&file),
                        lock: lock_path,
                    });
                }
            },
            Err(e) => {
                return Err(Error::Io {
                    what: format!("lock {}", lock_path.display()),
                    source: e,
                });
            }
        }
    }
}

fn write_holder(mut file: &File, label: &str) -> std::io::Result<()> {
    use std::io::{Seek, Write};
    let text = if label.is_empty() {
        format!("{}\n", std::process::id())
    } else {
        format!("{}\n{}\n", std::process::id(), clean(label))
    };
    file.set_len(0)?;
    file.seek(std::io::SeekFrom::Start(0))?;
    file.write_all(text.as_bytes())
}

impl WriterLock {
    /// Say what the holder is doing now (e.g. waiting at a prompt), for a refused writer's
    /// hint. Best effort: the lock itself is unaffected.
    pub fn describe(&self, what: &str) {
        if let Some(f) = &self._file {
            let _ = write_holder(f, what);
        }
    }
}

/// The holder the lock file names, when its first line is a decimal PID of a live process
/// (the optional second line is its command); `None` for an empty file (the reference, or a
/// holder that has not written yet) or a dead PID.
fn read_holder(mut file: &File) -> Option<Holder> {
    use std::io::{Read, Seek};
    let mut text = String::new();
    file.seek(std::io::SeekFrom::Start(0)).ok()?;
    file.take(512).read_to_string(&mut text).ok()?;
    let mut lines = text.lines();
    let pid: u32 = lines.next()?.trim().parse().ok()?;
    let command = lines.next().map(clean).filter(|c| !c.trim().is_empty());
    let raw = i32::try_from(pid).ok().filter(|p| *p > 0)?;
    // SAFETY: signal 0 only checks that the process exists.
    let alive = unsafe { libc::kill(raw, 0) } == 0
        || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    alive.then_some(Holder { pid, command })
}

impl Drop for WriterLock {
    /// Clear the PID before the lock is released (best effort; a crash leaves it, and the next
    /// holder overwrites it, while a reader checks the PID is alive).
    fn drop(&mut self) {
        if let Some(f) = &self._file {
            let _ = f.set_len(0);
        }
    }
}

/// Probe whether some process holds the writer lock (doctor-style, read-only: tries a shared
/// non-blocking lock and releases it at once).
pub fn is_held(db: &Path) -> bool {
    let Ok(canonical) = canonical_db_path(db) else {
        return false;
    };
    let mut lock_path = canonical.into_os_string();
    lock_path.push(".writer.lock");
    let Ok(file) = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(PathBuf::from(lock_path))
    else {
        return false;
    };
    match FileExt::try_lock_shared(&file) {
        Ok(true) => {
            let _ = FileExt::unlock(&file);
            false
        }
        Ok(false) | Err(_) => true,
    }
}
