//! Host-side path confinement for the file handlers (authority-and-broker.md §13, README C14).
//!
//! The rules, in the order they are applied:
//!
//! 1. **Plan-level predicate** ([`check_plan_path`]): a request path is valid UTF-8, non-empty,
//!    relative, has no `..` segment, no leading `-` and no NUL byte.
//! 2. **Resolve, don't normalise** ([`resolve_physical`]): the worktree root is canonical (it
//!    must be a real directory that resolves to itself, [`Sandbox::open`]); the target is
//!    resolved component by component, following every symlink (also a dangling one, through
//!    its link text), until the first component that does not exist; the remaining components
//!    are appended as they are.
//! 3. **Component comparison**: the resolved path must have the canonical root as a
//!    component-wise prefix ([`Path::starts_with`]), so `/ws/ep1` never admits `/ws/ep1_secret`.
//! 4. **Protected paths** (writes only, [`check_protected`]): any component that case-folds to
//!    `.git`, or to a deny-listed name (`.github`, `.pi`, `.claude`, `.ailang`, `.gitmodules`,
//!    `.gitattributes`), is refused, in the request path and in the resolved path.
//! 5. **Opening**: the resolved path holds no symlink, so it is opened one component at a time
//!    from the root's descriptor with `O_NOFOLLOW` ([`open_read`], [`write_atomic`]); a symlink
//!    swapped in after resolution makes the open fail instead of leading outside.
//!
//! Every refusal here is a handler failure for the broker (the effect is recorded `failed`, the
//! unit stays spent, §13 last paragraph); an I/O error on a confined path (a missing file, a
//! directory where a file was expected) is an ordinary `ok:false` tool answer instead, which the
//! handlers decide from [`ConfineError::Io`].

use std::collections::VecDeque;
use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Most symlinks followed while resolving one path (Linux's `MAXSYMLINKS`).
pub const MAX_SYMLINK_HOPS: usize = 40;

/// Directory names whose whole subtree is write-protected (`fs_deny_write`, §12.2), before
/// case folding; refused with the pattern `<name>/**`.
pub const DENY_DIRS: [&str; 4] = [".github", ".pi", ".claude", ".ailang"];

/// File names that are write-protected (`fs_deny_write`, §12.2), before case folding.
pub const DENY_FILES: [&str; 2] = [".gitmodules", ".gitattributes"];

/// Why a path was refused, or why it could not be resolved.
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    /// The plan-level predicate failed (transitions.md §13.4 text).
    #[error("path {path:?} refused: it must be relative and non-empty, with no \"..\" segment and no leading \"-\"")]
    BadPath {
        /// The request path as given.
        path: String,
    },
    /// The request path contains a NUL byte.
    #[error("path {path:?} refused: it contains a NUL byte")]
    Nul {
        /// The request path as given.
        path: String,
    },
    /// The request path is not valid UTF-8 (given as bytes; `lossy` shows it with U+FFFD).
    #[error("path {lossy:?} refused: it is not valid UTF-8")]
    NotUtf8 {
        /// The path with invalid sequences replaced by U+FFFD.
        lossy: String,
    },
    /// The resolved path leaves the sandbox root (reference refusal text, §13).
    #[error("path {path:?} escapes sandbox {root:?}")]
    Escapes {
        /// The request path.
        path: String,
        /// The canonical sandbox root.
        root: String,
    },
    /// A write under any case-fold of `.git` (reference refusal text, §13).
    #[error("path {path:?}: .git/ is read-only to the lane's tools")]
    GitReadOnly {
        /// The request path.
        path: String,
    },
    /// A write matching the deny list (reference refusal text, §13).
    #[error("path {path:?} matches fs_deny_write {pattern:?} — read-only under this policy")]
    DenyWrite {
        /// The request path.
        path: String,
        /// The deny-list pattern it matches (lowercase form, e.g. `.ailang/**`).
        pattern: String,
    },
    /// The final component of a write is a symlink (writes never follow one).
    #[error(
        "path {path:?} refused: its final component is a symlink, and writes never follow one"
    )]
    SymlinkLeaf {
        /// The request path.
        path: String,
    },
    /// The episode worktree is not usable as a sandbox root (§3).
    #[error("worktree {worktree:?} refused: {why}")]
    BadWorktree {
        /// The configured worktree directory.
        worktree: String,
        /// What is wrong with it.
        why: String,
    },
    /// An I/O error while resolving or opening a confined path (a missing file, a file used as
    /// a directory, permission denied). Rendered by [`go_errno_text`].
    #[error("{path}: {}", go_errno_text(.source))]
    Io {
        /// The request path.
        path: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

/// Applies the plan-level predicate (§13 row 1, transitions.md §13.1) to a path given as bytes,
/// and returns it as text.
///
/// Errors: [`ConfineError::NotUtf8`], [`ConfineError::Nul`], [`ConfineError::BadPath`].
pub fn check_plan_path_bytes(raw: &[u8]) -> Result<&str, ConfineError> {
    let text = std::str::from_utf8(raw).map_err(|_| ConfineError::NotUtf8 {
        lossy: String::from_utf8_lossy(raw).into_owned(),
    })?;
    check_plan_path(text)?;
    Ok(text)
}

/// Applies the plan-level predicate (§13 row 1): non-empty, relative (no leading `/`), no `..`
/// segment, no leading `-`, no NUL byte.
///
/// Errors: [`ConfineError::Nul`], [`ConfineError::BadPath`].
pub fn check_plan_path(path: &str) -> Result<(), ConfineError> {
    if path.contains('\0') {
        return Err(ConfineError::Nul {
            path: path.to_owned(),
        });
    }
    let bad = path.is_empty()
        || path.starts_with('/')
        || path.starts_with('-')
        || path.split('/').any(|segment| segment == "..");
    if bad {
        return Err(ConfineError::BadPath {
            path: path.to_owned(),
        });
    }
    Ok(())
}

/// Resolves an absolute path physically (§13 row 2): every existing component is looked up
/// with `lstat`; a symlink is replaced by its link text (relative to the directory holding it,
/// or absolute) and resolution continues, also for a dangling link, so its final destination
/// is what gets judged; at the first component that does not exist, the remaining components
/// are appended unchanged. A `..` left in the remainder (from a link text) is `ENOENT`, as the
/// kernel would answer.
///
/// Errors: `ELOOP` after [`MAX_SYMLINK_HOPS`] links; `ENOTDIR` when a regular file is used as a
/// directory; any other `lstat`/`readlink` error. `path` must be absolute (`EINVAL` otherwise).
pub fn resolve_physical(path: &Path) -> io::Result<PathBuf> {
    if !path.is_absolute() {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let mut pending: VecDeque<OsString> = VecDeque::new();
    push_components_front(&mut pending, path);
    let mut current = PathBuf::from("/");
    let mut hops = 0usize;
    while let Some(component) = pending.pop_front() {
        if component == "/" {
            current = PathBuf::from("/");
            continue;
        }
        if component == "." {
            continue;
        }
        if component == ".." {
            // `current` holds no symlink, so its parent is the physical parent.
            current.pop();
            continue;
        }
        let next = current.join(&component);
        match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() => {
                hops += 1;
                if hops > MAX_SYMLINK_HOPS {
                    return Err(io::Error::from_raw_os_error(libc::ELOOP));
                }
                let target = std::fs::read_link(&next)?;
                push_components_front(&mut pending, &target);
            }
            Ok(meta) => {
                if !meta.is_dir() && !pending.is_empty() {
                    return Err(io::Error::from_raw_os_error(libc::ENOTDIR));
                }
                current = next;
            }
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                current = next;
                for rest in pending.drain(..) {
                    if rest == ".." {
                        return Err(io::Error::from_raw_os_error(libc::ENOENT));
                    }
                    if rest == "." {
                        continue;
                    }
                    if rest == "/" {
                        // Only a link text can start with `/`, and none is read past a
                        // missing component.
                        return Err(io::Error::from_raw_os_error(libc::ENOENT));
                    }
                    current.push(rest);
                }
                return Ok(current);
            }
            Err(err) => return Err(err),
        }
    }
    Ok(current)
}

/// Puts the components of `path` in front of `pending`, keeping their order; a root component
/// is represented as `/`.
fn push_components_front(pending: &mut VecDeque<OsString>, path: &Path) {
    let parts: Vec<OsString> = path
        .components()
        .map(|c| match c {
            Component::RootDir | Component::Prefix(_) => OsString::from("/"),
            Component::CurDir => OsString::from("."),
            Component::ParentDir => OsString::from(".."),
            Component::Normal(name) => name.to_os_string(),
        })
        .collect();
    for part in parts.into_iter().rev() {
        pending.push_front(part);
    }
}

/// One simple case-fold step to a canonical representative: ASCII lowercase, `ſ` (U+017F) → `s`,
/// the Kelvin sign → `k`, the Ångström sign → `å`, otherwise the single-character lowercase.
fn fold_char(c: char) -> char {
    match c {
        '\u{017F}' => 's',
        '\u{212A}' => 'k',
        '\u{212B}' => 'å',
        c if c.is_ascii() => c.to_ascii_lowercase(),
        c => {
            let mut lower = c.to_lowercase();
            match (lower.next(), lower.next()) {
                (Some(l), None) => l,
                _ => c,
            }
        }
    }
}

/// True when `name` equals `target` (lowercase ASCII) under simple case folding.
pub fn fold_eq(name: &OsStr, target: &str) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    let mut a = name.chars().map(fold_char);
    let mut b = target.chars().map(fold_char);
    loop {
        match (a.next(), b.next()) {
            (None, None) => return true,
            (Some(x), Some(y)) if x == y => continue,
            _ => return false,
        }
    }
}

/// Refuses a write whose path (relative to the sandbox root) has a component that case-folds
/// to `.git` or to a deny-listed name (§13 "Protected paths"). `request` names the path in the
/// error. Deny-listed names are refused at any depth (decision in docs/DECISIONS.md).
///
/// Errors: [`ConfineError::GitReadOnly`], [`ConfineError::DenyWrite`].
pub fn check_protected(relative: &Path, request: &str) -> Result<(), ConfineError> {
    for component in relative.components() {
        let Component::Normal(name) = component else {
            continue;
        };
        if fold_eq(name, ".git") {
            return Err(ConfineError::GitReadOnly {
                path: request.to_owned(),
            });
        }
        if let Some(dir) = DENY_DIRS.iter().find(|d| fold_eq(name, d)) {
            return Err(ConfineError::DenyWrite {
                path: request.to_owned(),
                pattern: format!("{dir}/**"),
            });
        }
        if let Some(file) = DENY_FILES.iter().find(|f| fold_eq(name, f)) {
            return Err(ConfineError::DenyWrite {
                path: request.to_owned(),
                pattern: (*file).to_owned(),
            });
        }
    }
    Ok(())
}

/// An episode worktree as a sandbox root (§3, §13): a real directory that resolves to itself.
#[derive(Clone, Debug)]
pub struct Sandbox {
    root: PathBuf,
}

impl Sandbox {
    /// Admits `worktree` as a sandbox root: it must be absolute, must not be a symlink, must be
    /// a directory, and `realpath(worktree)` must equal it (so no ancestor is a symlink either).
    ///
    /// Errors: [`ConfineError::BadWorktree`] naming what is wrong.
    pub fn open(worktree: &Path) -> Result<Sandbox, ConfineError> {
        let shown = worktree.display().to_string();
        let bad = |why: String| ConfineError::BadWorktree {
            worktree: shown.clone(),
            why,
        };
        if !worktree.is_absolute() {
            return Err(bad("it is not an absolute path".into()));
        }
        let meta = std::fs::symlink_metadata(worktree)
            .map_err(|e| bad(format!("it cannot be read: {}", go_errno_text(&e))))?;
        if meta.file_type().is_symlink() {
            return Err(bad(
                "it is a symlink; the worktree must be a real directory".into(),
            ));
        }
        if !meta.is_dir() {
            return Err(bad("it is not a directory".into()));
        }
        let canonical = std::fs::canonicalize(worktree)
            .map_err(|e| bad(format!("it cannot be resolved: {}", go_errno_text(&e))))?;
        if canonical != worktree {
            return Err(bad(format!(
                "it resolves to {:?}, not to itself",
                canonical.display().to_string()
            )));
        }
        Ok(Sandbox { root: canonical })
    }

    /// The canonical root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a request path for reading: predicate, physical resolution, component-wise
    /// containment. Returns the resolved absolute path (no symlink in it).
    ///
    /// Errors: the predicate's errors, [`ConfineError::Escapes`], [`ConfineError::Io`] for an
    /// error while resolving (e.g. `ENOTDIR`, `ELOOP`).
    pub fn resolve(&self, request: &str) -> Result<PathBuf, ConfineError> {
        check_plan_path(request)?;
        let resolved =
            resolve_physical(&self.root.join(request)).map_err(|source| ConfineError::Io {
                path: request.to_owned(),
                source,
            })?;
        if !resolved.starts_with(&self.root) {
            return Err(ConfineError::Escapes {
                path: request.to_owned(),
                root: self.root.display().to_string(),
            });
        }
        Ok(resolved)
    }

    /// Resolves a request path for writing: [`Sandbox::resolve`] plus the protected-path rule
    /// on both the request path and the resolved path (a symlink `g -> .git` cannot reach
    /// `.git/config` as `g/config`).
    ///
    /// Errors: those of [`Sandbox::resolve`] and [`check_protected`].
    pub fn resolve_for_write(&self, request: &str) -> Result<PathBuf, ConfineError> {
        check_plan_path(request)?;
        check_protected(Path::new(request), request)?;
        let resolved = self.resolve(request)?;
        let relative = resolved.strip_prefix(&self.root).unwrap_or(Path::new(""));
        check_protected(relative, request)?;
        if relative.as_os_str().is_empty() {
            return Err(ConfineError::Io {
                path: request.to_owned(),
                source: io::Error::from_raw_os_error(libc::EISDIR),
            });
        }
        Ok(resolved)
    }

    /// The resolved path's components below the root (for [`open_read`] / [`write_atomic`]).
    pub fn relative<'a>(&self, resolved: &'a Path) -> Option<&'a Path> {
        resolved.strip_prefix(&self.root).ok()
    }
}

/// Renders an I/O error the way Go's `syscall.Errno` prints (`no such file or directory`), which
/// is how the reference's tool refusals read (transitions.md §13.4).
pub fn go_errno_text(err: &io::Error) -> String {
    let text = match err.raw_os_error() {
        Some(code) => {
            // SAFETY: strerror returns a pointer to a static, NUL-terminated message.
            let ptr = unsafe { libc::strerror(code) };
            if ptr.is_null() {
                err.to_string()
            } else {
                // SAFETY: non-null pointer from strerror, valid until the next strerror call
                // on this thread; it is copied immediately.
                unsafe { std::ffi::CStr::from_ptr(ptr) }
                    .to_string_lossy()
                    .into_owned()
            }
        }
        None => err.to_string(),
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => text,
    }
}

fn cstring(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes()).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

fn openat_raw(
    dir: libc::c_int,
    name: &OsStr,
    flags: libc::c_int,
    mode: libc::mode_t,
) -> io::Result<OwnedFd> {
    let name = cstring(name)?;
    // SAFETY: `name` is a valid NUL-terminated string; `dir` is an open descriptor or AT_FDCWD.
    let fd = unsafe {
        libc::openat(
            dir,
            name.as_ptr(),
            flags | libc::O_CLOEXEC,
            mode as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Opens `base` (an absolute directory that holds no symlink) and then each directory of
/// `dirs` with `O_DIRECTORY | O_NOFOLLOW`, creating missing ones (mode 0755) when `create` is
/// set. Returns the descriptor of the last directory.
fn open_dir_chain(base: &Path, dirs: &[&OsStr], create: bool) -> io::Result<OwnedFd> {
    let dir_flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;
    let mut fd = openat_raw(libc::AT_FDCWD, base.as_os_str(), dir_flags, 0)?;
    for name in dirs {
        let next = match openat_raw(fd.as_raw_fd(), name, dir_flags, 0) {
            Err(err) if create && err.raw_os_error() == Some(libc::ENOENT) => {
                let cname = cstring(name)?;
                // SAFETY: valid descriptor and NUL-terminated name.
                let rc = unsafe { libc::mkdirat(fd.as_raw_fd(), cname.as_ptr(), 0o755) };
                if rc != 0 {
                    let err = io::Error::last_os_error();
                    if err.raw_os_error() != Some(libc::EEXIST) {
                        return Err(err);
                    }
                }
                openat_raw(fd.as_raw_fd(), name, dir_flags, 0)?
            }
            other => other?,
        };
        fd = next;
    }
    Ok(fd)
}

/// Splits a relative path into its directory components and final name.
fn split_relative(relative: &Path) -> io::Result<(Vec<&OsStr>, &OsStr)> {
    let mut parts: Vec<&OsStr> = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(name) => parts.push(name),
            Component::CurDir => {}
            _ => return Err(io::Error::from_raw_os_error(libc::EINVAL)),
        }
    }
    let name = parts
        .pop()
        .ok_or_else(|| io::Error::from_raw_os_error(libc::EISDIR))?;
    Ok((parts, name))
}

/// Reads the regular file at `base/relative` (a resolved path: no symlink, no `..`), opening
/// every component with `O_NOFOLLOW`. At most `limit` bytes are accepted.
///
/// Errors: the `openat` error (`ENOENT`, `ELOOP` for a symlink swapped in, `ENOTDIR`),
/// `EINVAL` when the target is not a regular file, `EFBIG` when it holds more than `limit`
/// bytes.
pub fn open_read(base: &Path, relative: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let (dirs, name) = split_relative(relative)?;
    let dir = open_dir_chain(base, &dirs, false)?;
    let fd = openat_raw(
        dir.as_raw_fd(),
        name,
        libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK,
        0,
    )?;
    let file = File::from(fd);
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(io::Error::from_raw_os_error(libc::EISDIR));
    }
    if !meta.is_file() {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let mut content = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut content)?;
    if content.len() as u64 > limit {
        return Err(io::Error::from_raw_os_error(libc::EFBIG));
    }
    Ok(content)
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Replaces (or creates) the file at `base/relative` with `content` atomically: a temporary
/// file is created next to it (`O_CREAT | O_EXCL | O_NOFOLLOW`), written, synced and renamed
/// over the final name. Missing parent directories are created when `create_dirs` is set. An
/// existing file keeps its permission bits; a new one gets 0644 (less the umask).
///
/// Errors: `ELOOP` when the final component is a symlink (it is never followed or replaced),
/// `EISDIR` when it is a directory, `EINVAL` when it is another non-regular file, and any
/// `openat`/`write`/`renameat` error. On error the temporary file is removed.
pub fn write_atomic(
    base: &Path,
    relative: &Path,
    content: &[u8],
    create_dirs: bool,
) -> io::Result<()> {
    let (dirs, name) = split_relative(relative)?;
    let dir = open_dir_chain(base, &dirs, create_dirs)?;
    let cname = cstring(name)?;
    let mut mode: libc::mode_t = 0o644;
    // SAFETY: zeroed stat is a valid out-parameter for fstatat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid descriptor, NUL-terminated name, valid out pointer.
    let rc = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            cname.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if rc == 0 {
        match st.st_mode & libc::S_IFMT {
            libc::S_IFREG => mode = st.st_mode & 0o7777,
            libc::S_IFLNK => return Err(io::Error::from_raw_os_error(libc::ELOOP)),
            libc::S_IFDIR => return Err(io::Error::from_raw_os_error(libc::EISDIR)),
            _ => return Err(io::Error::from_raw_os_error(libc::EINVAL)),
        }
    } else {
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::ENOENT) {
            return Err(err);
        }
    }
    sweep_stale_temps(dir.as_raw_fd());
    let tmp_name = OsString::from(format!(
        ".world-write-{}-{}.tmp",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let tmp_c = cstring(&tmp_name)?;
    let fd = openat_raw(
        dir.as_raw_fd(),
        &tmp_name,
        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW,
        mode,
    )?;
    let mut file = File::from(fd);
    let written = (|| -> io::Result<()> {
        file.write_all(content)?;
        // SAFETY: valid descriptor.
        if unsafe { libc::fchmod(file.as_raw_fd(), mode) } != 0 {
            return Err(io::Error::last_os_error());
        }
        file.sync_all()?;
        // SAFETY: valid descriptor and NUL-terminated names in the same directory.
        if unsafe {
            libc::renameat(
                dir.as_raw_fd(),
                tmp_c.as_ptr(),
                dir.as_raw_fd(),
                cname.as_ptr(),
            )
        } != 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    })();
    if let Err(err) = written {
        // SAFETY: valid descriptor and name; failure to unlink leaves only a temp file.
        unsafe { libc::unlinkat(dir.as_raw_fd(), tmp_c.as_ptr(), 0) };
        return Err(err);
    }
    // Make the rename durable; a failure here does not undo the write.
    let _ = File::from(dir).sync_all();
    Ok(())
}

/// Remove `.world-write-<pid>-<n>.tmp` files in directory `dirfd` left by a writer that died
/// (kill -9) before renaming them (issue 13 §6). Only names of this exact shape whose `pid`
/// is no longer alive are removed; errors are ignored (a best-effort sweep).
fn sweep_stale_temps(dirfd: std::os::fd::RawFd) {
    let Ok(entries) = std::fs::read_dir(format!("/proc/self/fd/{dirfd}")) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(text) = name.to_str() else { continue };
        let Some(rest) = text
            .strip_prefix(".world-write-")
            .and_then(|r| r.strip_suffix(".tmp"))
        else {
            continue;
        };
        let Some((pid, n)) = rest.split_once('-') else {
            continue;
        };
        let (Ok(pid), true) = (pid.parse::<i32>(), n.bytes().all(|b| b.is_ascii_digit())) else {
            continue;
        };
        // SAFETY: signal 0 only checks for existence.
        let alive = pid > 0
            && (unsafe { libc::kill(pid, 0) } == 0
                || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM));
        if alive {
            continue;
        }
        if let Ok(c) = std::ffi::CString::new(text) {
            // SAFETY: valid descriptor and NUL-terminated name.
            unsafe { libc::unlinkat(dirfd, c.as_ptr(), 0) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn sandbox() -> (tempfile::TempDir, Sandbox) {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        let ws = root.join("ep1");
        std::fs::create_dir(&ws).expect("mkdir");
        let sb = Sandbox::open(&ws).expect("sandbox");
        (dir, sb)
    }

    #[test]
    fn predicate_refuses_each_bad_form() {
        for bad in [
            "",
            "/etc/passwd",
            "a/../../x",
            "..",
            "a/..",
            "-rf",
            "-",
            "a\0b",
        ] {
            assert!(check_plan_path(bad).is_err(), "{bad:?} must be refused");
        }
        for good in ["a", "a/b.ail", "./a", "a..b", "a/-b", "..a/b"] {
            assert!(check_plan_path(good).is_ok(), "{good:?} must pass");
        }
        let err = check_plan_path("a/../../x").unwrap_err().to_string();
        assert_eq!(
            err,
            r#"path "a/../../x" refused: it must be relative and non-empty, with no ".." segment and no leading "-""#
        );
    }

    #[test]
    fn predicate_refuses_invalid_utf8() {
        let err = check_plan_path_bytes(b"a/\xff\xfe.ail").unwrap_err();
        assert!(matches!(err, ConfineError::NotUtf8 { .. }), "{err}");
        assert_eq!(check_plan_path_bytes(b"ok.ail").expect("valid"), "ok.ail");
    }

    #[test]
    fn worktree_symlink_to_etc_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        let link = root.join("ep1");
        symlink("/etc", &link).expect("symlink");
        let err = Sandbox::open(&link).unwrap_err();
        assert!(err.to_string().contains("is a symlink"), "{err}");
        // A worktree reached through a symlinked ancestor does not resolve to itself either.
        std::fs::create_dir(root.join("real")).expect("mkdir");
        std::fs::create_dir(root.join("real/ep2")).expect("mkdir");
        symlink(root.join("real"), root.join("alias")).expect("symlink");
        let err = Sandbox::open(&root.join("alias/ep2")).unwrap_err();
        assert!(err.to_string().contains("not to itself"), "{err}");
        assert!(Sandbox::open(Path::new("relative/ws")).is_err());
    }

    #[test]
    fn sibling_sharing_the_prefix_is_outside() {
        let (_dir, sb) = sandbox();
        let sibling = PathBuf::from(format!("{}_secret", sb.root().display()));
        std::fs::create_dir(&sibling).expect("mkdir");
        std::fs::write(sibling.join("key"), "secret").expect("write");
        // A symlink in the tree pointing at the sibling must not be admitted by a string prefix.
        symlink(&sibling, sb.root().join("s")).expect("symlink");
        let err = sb.resolve("s/key").unwrap_err();
        assert!(matches!(err, ConfineError::Escapes { .. }), "{err}");
        assert_eq!(
            err.to_string(),
            format!(
                "path \"s/key\" escapes sandbox {:?}",
                sb.root().display().to_string()
            )
        );
    }

    #[test]
    fn in_tree_symlink_escaping_is_refused_and_inside_link_is_followed() {
        let (_dir, sb) = sandbox();
        symlink("/etc/hosts", sb.root().join("hosts")).expect("symlink");
        assert!(matches!(
            sb.resolve("hosts"),
            Err(ConfineError::Escapes { .. })
        ));
        std::fs::write(sb.root().join("real.txt"), "x").expect("write");
        symlink("real.txt", sb.root().join("alias.txt")).expect("symlink");
        assert_eq!(
            sb.resolve("alias.txt").expect("inside"),
            sb.root().join("real.txt")
        );
        // A relative link climbing out through `..` is judged where it lands.
        std::fs::create_dir(sb.root().join("d")).expect("mkdir");
        symlink("../../outside", sb.root().join("d/up")).expect("symlink");
        assert!(matches!(
            sb.resolve("d/up/x"),
            Err(ConfineError::Escapes { .. })
        ));
    }

    #[test]
    fn missing_leaf_under_symlinked_parent_resolves_through_the_parent() {
        let (dir, sb) = sandbox();
        let outside = std::fs::canonicalize(dir.path())
            .expect("canonical")
            .join("outside");
        std::fs::create_dir(&outside).expect("mkdir");
        symlink(&outside, sb.root().join("out")).expect("symlink");
        let err = sb.resolve_for_write("out/new.txt").unwrap_err();
        assert!(matches!(err, ConfineError::Escapes { .. }), "{err}");
        assert!(!outside.join("new.txt").exists());
    }

    #[test]
    fn dangling_symlink_is_judged_by_its_destination() {
        let (dir, sb) = sandbox();
        let target = std::fs::canonicalize(dir.path())
            .expect("canonical")
            .join("not-yet");
        symlink(&target, sb.root().join("dangling")).expect("symlink");
        assert!(matches!(
            sb.resolve_for_write("dangling"),
            Err(ConfineError::Escapes { .. })
        ));
        symlink("inside-later.txt", sb.root().join("dangling-in")).expect("symlink");
        assert_eq!(
            sb.resolve_for_write("dangling-in").expect("inside"),
            sb.root().join("inside-later.txt")
        );
    }

    #[test]
    fn symlink_loop_is_an_io_error() {
        let (_dir, sb) = sandbox();
        symlink("b", sb.root().join("a")).expect("symlink");
        symlink("a", sb.root().join("b")).expect("symlink");
        match sb.resolve("a") {
            Err(ConfineError::Io { source, .. }) => {
                assert_eq!(source.raw_os_error(), Some(libc::ELOOP))
            }
            other => panic!("want ELOOP, got {other:?}"),
        }
    }

    #[test]
    fn protected_paths_fold_case() {
        let (_dir, sb) = sandbox();
        for p in [".git/config", ".GIT/x", "sub/.Git/hooks/pre-commit", ".git"] {
            assert!(
                matches!(
                    sb.resolve_for_write(p),
                    Err(ConfineError::GitReadOnly { .. })
                ),
                "{p}"
            );
        }
        for (p, pat) in [
            (".github/workflows/ci.yml", ".github/**"),
            (".CLAUDE/settings.json", ".claude/**"),
            (".ailang/cache", ".ailang/**"),
            (".Pi/x", ".pi/**"),
            (".gitmoduleſ", ".gitmodules"),
            (".GitAttributes", ".gitattributes"),
        ] {
            match sb.resolve_for_write(p) {
                Err(ConfineError::DenyWrite { pattern, .. }) => assert_eq!(pattern, pat, "{p}"),
                other => panic!("{p}: want DenyWrite, got {other:?}"),
            }
        }
        // A symlink aliasing .git is caught on the resolved path.
        std::fs::create_dir(sb.root().join(".git")).expect("mkdir");
        symlink(".git", sb.root().join("g")).expect("symlink");
        assert!(matches!(
            sb.resolve_for_write("g/config"),
            Err(ConfineError::GitReadOnly { .. })
        ));
        // Reads are not protected.
        assert!(sb.resolve(".git/config").is_ok());
        assert!(sb.resolve_for_write(".gitignore").is_ok());
        assert!(sb.resolve_for_write("github/x").is_ok());
    }

    #[test]
    fn write_atomic_refuses_symlink_leaf_and_creates_parents() {
        let (dir, sb) = sandbox();
        let outside = std::fs::canonicalize(dir.path())
            .expect("canonical")
            .join("victim");
        std::fs::write(&outside, "keep").expect("write");
        symlink(&outside, sb.root().join("leaf")).expect("symlink");
        let err = write_atomic(sb.root(), Path::new("leaf"), b"x", false).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ELOOP));
        assert_eq!(std::fs::read_to_string(&outside).expect("read"), "keep");
        write_atomic(sb.root(), Path::new("a/b/c.txt"), b"hello", true).expect("write");
        assert_eq!(
            std::fs::read(sb.root().join("a/b/c.txt")).expect("read"),
            b"hello"
        );
        assert_eq!(
            open_read(sb.root(), Path::new("a/b/c.txt"), 5).expect("read"),
            b"hello"
        );
        assert_eq!(
            open_read(sb.root(), Path::new("a/b/c.txt"), 4)
                .unwrap_err()
                .raw_os_error(),
            Some(libc::EFBIG)
        );
        // A symlinked directory in the middle is never traversed by the O_NOFOLLOW walk.
        symlink(dir.path(), sb.root().join("dirlink")).expect("symlink");
        assert!(open_read(sb.root(), Path::new("dirlink/victim"), 100).is_err());
    }

    #[test]
    fn errno_text_reads_like_go() {
        assert_eq!(
            go_errno_text(&io::Error::from_raw_os_error(libc::ENOENT)),
            "no such file or directory"
        );
    }
}
