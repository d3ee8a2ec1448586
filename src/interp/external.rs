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
//! group that is SIGKILLed whole at the deadline or when a stream passes its cap.

use std::fs;
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::archive::{self, Archive, Archived, ResolveError};
use super::{CheckOutcome, Interpreter, RunError, RunLimits, RunOutcome};

/// The publish-time check's own bound (transitions.md §6.1: 10 s).
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// At most this many interpreter children run at once in one process (transitions.md §6).
pub const MAX_CONCURRENT_CHILDREN: usize = 8;

/// Grace after the deadline (or after the child exits) before pipes are force-closed.
pub const PIPE_GRACE: Duration = Duration::from_secs(1);

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
        let scratch = tempfile::Builder::new().prefix("world-check-").tempdir()?;
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
        let mut cmd = Command::new(&self.binary);
        cmd.arg("check")
            .arg(SOURCE_PATH)
            .current_dir(scratch.path())
            .env_clear()
            .env("AILANG_RELAX_MODULES", "1")
            .env("AILANG_CACHE_DIR", cache_tmp.path());
        let out = spawn_bounded(cmd, deadline, limits.output_cap)?;
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
        let root = tempfile::Builder::new()
            .prefix("world-capsule-")
            .tempdir()?;
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
        let mut cmd = Command::new(&self.binary);
        cmd.args([
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
        .current_dir(&root_path)
        .env_clear()
        .env("AILANG_FS_SANDBOX", &root_path)
        .env("AILANG_RELAX_MODULES", "1")
        .env("AILANG_CACHE_DIR", &cache);
        let out = spawn_bounded(cmd, limits.deadline, limits.output_cap)?;
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

/// What a bounded child produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Spawned {
    /// The exit code; `128 + N` when the child was killed by signal N.
    pub exit_code: i32,
    /// stdout bytes, at most the cap.
    pub stdout: Vec<u8>,
    /// stderr bytes, at most the cap.
    pub stderr: Vec<u8>,
}

/// Run `cmd` to completion under the capsule's process rules (transitions.md §6).
///
/// The caller sets argv, cwd and environment; this sets stdin to `/dev/null`, pipes stdout
/// and stderr, and puts the child in its own process group. stdout and stderr are drained on two threads, each capped at `cap` bytes. At
/// `deadline` the whole group gets SIGKILL; when either stream passes `cap` the group gets
/// SIGKILL too; when the child exits, any process left in its group is killed. Pipes held
/// open by a process outside the group are abandoned 1 s later. At most 8 children run at
/// once; waiting for a slot counts against `deadline`.
///
/// Errors: [`RunError::OutputLimit`] (wins over a timeout), [`RunError::Timeout`],
/// [`RunError::Unavailable`] when the binary cannot be executed (`exec_failure`),
/// [`RunError::Io`] for pipe failures.
pub fn spawn_bounded(mut cmd: Command, deadline: Instant, cap: usize) -> Result<Spawned, RunError> {
    let _slot = Slot::acquire(deadline)?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = spawn_retrying(&mut cmd)?;
    let pid = match libc::pid_t::try_from(child.id()) {
        Ok(p) => p,
        Err(_) => {
            return Err(RunError::Unavailable(
                "exec_failure: child pid out of range".into(),
            ))
        }
    };
    let (tx, rx) = mpsc::channel::<Event>();
    let stop_at = Arc::new(Mutex::new(deadline.max(Instant::now()) + PIPE_GRACE));
    let out_pipe = child.stdout.take();
    let err_pipe = child.stderr.take();
    let drain_out = out_pipe.map(|p| {
        let (tx, stop) = (tx.clone(), Arc::clone(&stop_at));
        thread::spawn(move || drain(p, cap, "stdout", &stop, &tx))
    });
    let drain_err = err_pipe.map(|p| {
        let (tx, stop) = (tx.clone(), Arc::clone(&stop_at));
        thread::spawn(move || drain(p, cap, "stderr", &stop, &tx))
    });
    let waiter = {
        let tx = tx.clone();
        thread::spawn(move || {
            wait_no_reap(pid);
            let _ = tx.send(Event::Exited);
        })
    };
    drop(tx);

    // The first event wins: exit, overflow, or the deadline.
    let now = Instant::now();
    let event = if now >= deadline {
        Err(mpsc::RecvTimeoutError::Timeout)
    } else {
        rx.recv_timeout(deadline - now)
    };
    let timed_out = matches!(event, Err(mpsc::RecvTimeoutError::Timeout));
    // The leader is not reaped yet (waitid WNOWAIT), so its pid still names the group.
    kill_group(pid);
    let _ = waiter.join();
    let status = child.wait()?;
    // Whatever still holds the pipes is outside the group: give it the grace, then abandon.
    if let Ok(mut s) = stop_at.lock() {
        *s = (*s).min(Instant::now() + PIPE_GRACE);
    }
    let out = join_drain(drain_out);
    let err = join_drain(drain_err);
    for d in [&out, &err] {
        if d.end == DrainEnd::Overflow {
            return Err(RunError::OutputLimit {
                stream: d.stream,
                cap,
            });
        }
    }
    if let Some(e) = [&out, &err].into_iter().find_map(|d| match &d.end {
        DrainEnd::Failed(msg) => Some(msg.clone()),
        _ => None,
    }) {
        return Err(RunError::Io(io::Error::other(e)));
    }
    if timed_out || out.end == DrainEnd::Abandoned || err.end == DrainEnd::Abandoned {
        return Err(RunError::Timeout);
    }
    let exit_code = status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(-1);
    Ok(Spawned {
        exit_code,
        stdout: out.bytes,
        stderr: err.bytes,
    })
}

enum Event {
    Exited,
    Overflow,
}

#[derive(Debug, PartialEq, Eq)]
enum DrainEnd {
    Eof,
    Overflow,
    Abandoned,
    Failed(String),
}

struct Drained {
    stream: &'static str,
    bytes: Vec<u8>,
    end: DrainEnd,
}

fn join_drain(handle: Option<thread::JoinHandle<Drained>>) -> Drained {
    match handle.map(|h| h.join()) {
        Some(Ok(d)) => d,
        Some(Err(_)) => Drained {
            stream: "pipe",
            bytes: Vec::new(),
            end: DrainEnd::Failed("drain thread panicked".into()),
        },
        None => Drained {
            stream: "pipe",
            bytes: Vec::new(),
            end: DrainEnd::Eof,
        },
    }
}

/// Read `pipe` to EOF, keeping at most `cap` bytes; report overflow at once on `tx`.
/// Polls in slices of at most 50 ms so a moved `stop_at` is noticed.
fn drain<R: Read + AsRawFd>(
    mut pipe: R,
    cap: usize,
    stream: &'static str,
    stop_at: &Mutex<Instant>,
    tx: &mpsc::Sender<Event>,
) -> Drained {
    let mut bytes = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let fd = pipe.as_raw_fd();
    let end = loop {
        let stop = stop_at
            .lock()
            .map(|s| *s)
            .unwrap_or_else(|_| Instant::now());
        let now = Instant::now();
        if now >= stop {
            break DrainEnd::Abandoned;
        }
        let slice = (stop - now).min(Duration::from_millis(50));
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let timeout_ms = libc::c_int::try_from(slice.as_millis())
            .unwrap_or(50)
            .max(1);
        // SAFETY: `pfd` is a valid pollfd for the duration of the call; nfds = 1.
        let rc = unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            break DrainEnd::Failed(format!("{stream}: poll: {e}"));
        }
        if rc == 0 {
            continue;
        }
        match pipe.read(&mut buf) {
            Ok(0) => break DrainEnd::Eof,
            Ok(n) => {
                let room = cap.saturating_sub(bytes.len());
                if n > room {
                    bytes.extend_from_slice(buf.get(..room).unwrap_or_default());
                    let _ = tx.send(Event::Overflow);
                    break DrainEnd::Overflow;
                }
                bytes.extend_from_slice(buf.get(..n).unwrap_or_default());
            }
            Err(e)
                if e.kind() == io::ErrorKind::Interrupted
                    || e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => break DrainEnd::Failed(format!("{stream}: read: {e}")),
        }
    };
    Drained { stream, bytes, end }
}

/// Block until `pid` has exited without reaping it (`waitid(WEXITED | WNOWAIT)`).
fn wait_no_reap(pid: libc::pid_t) {
    let Ok(id) = libc::id_t::try_from(pid) else {
        return;
    };
    loop {
        // SAFETY: zeroed siginfo_t is a valid out-parameter for waitid.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: plain syscall on our own child's pid with a valid out-pointer.
        let rc = unsafe { libc::waitid(libc::P_PID, id, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if rc == 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return;
        }
    }
}

/// SIGKILL the process group led by `pid`, and the leader itself in case it left the group.
fn kill_group(pid: libc::pid_t) {
    // SAFETY: signals to our own unreaped child and its process group; errors (ESRCH) ignored.
    unsafe {
        libc::killpg(pid, libc::SIGKILL);
        libc::kill(pid, libc::SIGKILL);
    }
}

/// Spawn, retrying briefly on ETXTBSY (another thread may have forked while a freshly
/// written binary was still open for writing).
fn spawn_retrying(cmd: &mut Command) -> Result<Child, RunError> {
    let mut attempt = 0;
    loop {
        match cmd.spawn() {
            Ok(child) => return Ok(child),
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && attempt < 20 => {
                attempt += 1;
                thread::sleep(Duration::from_millis(5));
            }
            Err(e) => {
                return Err(RunError::Unavailable(format!(
                    "exec_failure: cannot execute {:?}: {e}",
                    cmd.get_program()
                )))
            }
        }
    }
}

static SLOTS: Mutex<usize> = Mutex::new(0);
static SLOT_FREED: Condvar = Condvar::new();
static SLOTS_POISONED: AtomicBool = AtomicBool::new(false);

/// One of the [`MAX_CONCURRENT_CHILDREN`] child slots, released on drop.
struct Slot;

impl Slot {
    fn acquire(deadline: Instant) -> Result<Slot, RunError> {
        let mut used = SLOTS.lock().unwrap_or_else(|p| {
            SLOTS_POISONED.store(true, Ordering::Relaxed);
            p.into_inner()
        });
        while *used >= MAX_CONCURRENT_CHILDREN {
            let now = Instant::now();
            if now >= deadline {
                return Err(RunError::Timeout);
            }
            used = match SLOT_FREED.wait_timeout(used, deadline - now) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
        *used += 1;
        Ok(Slot)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut used = SLOTS.lock().unwrap_or_else(|p| p.into_inner());
        *used = used.saturating_sub(1);
        SLOT_FREED.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("/bin/sh");
        c.args(["-c", script]).stdin(Stdio::null());
        c
    }

    #[test]
    fn collects_both_streams_and_the_exit_code() {
        let out = spawn_bounded(
            sh("printf out; printf err >&2; exit 3"),
            Instant::now() + Duration::from_secs(10),
            1024,
        )
        .unwrap();
        assert_eq!(
            out,
            Spawned {
                exit_code: 3,
                stdout: b"out".to_vec(),
                stderr: b"err".to_vec()
            }
        );
    }

    #[test]
    fn overflow_is_its_own_error_even_on_stderr() {
        let err = spawn_bounded(
            sh("head -c 100000 /dev/zero >&2; sleep 5"),
            Instant::now() + Duration::from_secs(10),
            1000,
        )
        .unwrap_err();
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
        let exact = spawn_bounded(
            sh("head -c 1000 /dev/zero"),
            Instant::now() + Duration::from_secs(10),
            1000,
        )
        .unwrap();
        assert_eq!(exact.stdout.len(), 1000);
    }

    #[test]
    fn deadline_kills_the_group() {
        let start = Instant::now();
        let err = spawn_bounded(
            sh("sleep 30 & sleep 30"),
            start + Duration::from_millis(300),
            1024,
        )
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
        let err = spawn_bounded(
            Command::new("/nonexistent/ailang"),
            Instant::now() + Duration::from_secs(1),
            10,
        )
        .unwrap_err();
        assert!(err.to_string().contains("exec_failure"), "{err}");
    }
}
