//! The one bounded child-process runner: every child `world` starts (the interpreter capsule,
//! the tool lane, git, model commands, version probes) runs through [`run`].
//!
//! The rules (transitions.md §6 "Capsule", authority-and-broker.md §12.2 "Handler deadline",
//! §13 "Environment"):
//! - no shell: the program is an explicit path and the arguments are passed verbatim;
//! - the parent's environment is never inherited: [`Spec::env`] is the child's whole
//!   environment (`env_clear` first);
//! - stdin is `/dev/null`, or the bytes of [`Spec::stdin`] written on a thread and then closed;
//! - the child leads a new process group; at the deadline, when a stream passes its cap, and
//!   after the leader exits, the whole group gets `SIGKILL`;
//! - stdout and stderr are drained on two threads, each capped at [`Spec::output_cap`] bytes
//!   ([`run`]), or kept as head + tail with a count and a sha256 of the whole stream under a
//!   hard cap ([`run_captured`], `Workspace.Exec`); pipes held open by a process outside the
//!   group are abandoned [`PIPE_GRACE`] later;
//! - descriptors named in [`Spec::keep_fds`] (e.g. a seccomp program for `bwrap --seccomp`)
//!   are inherited by the child; every other descriptor is close-on-exec;
//! - at most [`MAX_CONCURRENT_CHILDREN`] children run at once in one process; waiting for a
//!   slot counts against the deadline.
//!
//! This module depends on nothing else in the crate.

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

/// At most this many children run at once in one process (transitions.md §6).
pub const MAX_CONCURRENT_CHILDREN: usize = 8;

/// Grace after the deadline (or after the child exits) before pipes are force-closed.
pub const PIPE_GRACE: Duration = Duration::from_secs(1);

/// One child process to run.
#[derive(Clone, Debug)]
pub struct Spec {
    /// The program: a path, never looked up in `PATH` by this module.
    pub program: PathBuf,
    /// Arguments, passed verbatim (no shell).
    pub args: Vec<OsString>,
    /// Working directory; `None` keeps the parent's.
    pub cwd: Option<PathBuf>,
    /// The whole environment of the child; the parent's is never inherited.
    pub env: Vec<(OsString, OsString)>,
    /// Bytes written to the child's stdin, which is then closed (empty = `/dev/null`).
    pub stdin: Vec<u8>,
    /// Cap on stdout bytes and, separately, on stderr bytes.
    pub output_cap: usize,
    /// Absolute deadline: past it the whole process group is killed.
    pub deadline: Instant,
    /// Open descriptors the child inherits under the same numbers (their close-on-exec flag
    /// is cleared in the child only). Empty for every child but the exec sandbox.
    pub keep_fds: Vec<RawFd>,
}

impl Spec {
    /// A spec for `program` with no arguments, no environment, stdin `/dev/null`, the
    /// parent's working directory, `output_cap` bytes per stream and `deadline`.
    pub fn new(program: impl Into<PathBuf>, output_cap: usize, deadline: Instant) -> Spec {
        Spec {
            program: program.into(),
            args: Vec::new(),
            cwd: None,
            env: Vec::new(),
            stdin: Vec::new(),
            output_cap,
            deadline,
            keep_fds: Vec::new(),
        }
    }

    /// Append one argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Spec {
        self.args.push(arg.into());
        self
    }

    /// Append arguments.
    pub fn args<I, S>(mut self, args: I) -> Spec
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Set the working directory.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Spec {
        self.cwd = Some(dir.into());
        self
    }

    /// Add one environment variable (the environment starts empty).
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Spec {
        self.env.push((key.into(), value.into()));
        self
    }
}

/// What a child produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    /// The exit code; `128 + N` when the child was killed by signal N.
    pub exit_code: i32,
    /// stdout bytes, at most the cap.
    pub stdout: Vec<u8>,
    /// stderr bytes, at most the cap.
    pub stderr: Vec<u8>,
}

/// Why a child produced no usable output. A non-zero exit is not an error.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The program could not be started (`exec_failure`).
    #[error("cannot start {program}: {source}")]
    Spawn {
        /// The program path.
        program: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The deadline passed (also while waiting for a child slot, or on pipes held open past
    /// [`PIPE_GRACE`]); the process group was killed. Output so far is kept.
    #[error("{program} passed its deadline of {after_ms} ms and was killed")]
    Deadline {
        /// The program path.
        program: String,
        /// Milliseconds from the call to the kill.
        after_ms: u128,
        /// What the child wrote before the kill.
        partial: Output,
    },
    /// A stream went over the cap; the process group was killed at once. Wins over a
    /// deadline.
    #[error("{program} wrote more than {cap} bytes on {stream}")]
    OutputLimit {
        /// The program path.
        program: String,
        /// `stdout` or `stderr`.
        stream: &'static str,
        /// The cap in bytes.
        cap: usize,
    },
    /// Waiting on the child or reading its pipes failed.
    #[error("waiting for {program}: {source}")]
    Io {
        /// The program path.
        program: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

/// How [`run_captured`] keeps one stream: the first `head` bytes, the last `tail` bytes, the
/// count of every byte and the sha256 of the whole stream. A stream whose count passes
/// `hard_cap` kills the process group at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeadTail {
    /// Bytes kept from the start of each stream.
    pub head: usize,
    /// Bytes kept from the end of each stream.
    pub tail: usize,
    /// More than this many bytes on one stream kills the group (`limit:"output"`).
    pub hard_cap: u64,
}

/// One stream as [`run_captured`] kept it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamCapture {
    /// The first [`HeadTail::head`] bytes.
    pub head: Vec<u8>,
    /// The last [`HeadTail::tail`] bytes, or fewer: the bytes after `head` when the stream
    /// was no longer than `head + tail`.
    pub tail: Vec<u8>,
    /// Every byte read from the stream.
    pub total: u64,
    /// sha256 of every byte read, bare lowercase hex.
    pub sha256: String,
}

impl StreamCapture {
    /// True when bytes between the head and the tail were dropped.
    pub fn truncated(&self) -> bool {
        self.total > (self.head.len() + self.tail.len()) as u64
    }

    /// The bytes dropped between the head and the tail.
    pub fn omitted(&self) -> u64 {
        self.total
            .saturating_sub((self.head.len() + self.tail.len()) as u64)
    }
}

/// What [`run_captured`] observed. Never an error for how the child ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Captured {
    /// The exit code (`128 + N` for a death by signal N); `None` when the deadline or the
    /// hard cap ended the run (the group was killed).
    pub exit_code: Option<i32>,
    /// The deadline passed (or pipes stayed open past [`PIPE_GRACE`]).
    pub timed_out: bool,
    /// A stream passed [`HeadTail::hard_cap`]. Wins over a timeout.
    pub over_cap: bool,
    /// stdout.
    pub stdout: StreamCapture,
    /// stderr.
    pub stderr: StreamCapture,
}

/// Run `spec` to completion under the rules of the module docs.
///
/// # Errors
/// [`RunError::OutputLimit`] (wins over a timeout), [`RunError::Deadline`],
/// [`RunError::Spawn`] when the program cannot be executed, [`RunError::Io`] for wait and
/// pipe failures.
pub fn run(spec: &Spec) -> Result<Output, RunError> {
    let program = spec.program.display().to_string();
    let started = Instant::now();
    let cap = spec.output_cap;
    let fin = launch(spec, || Sink::Capped {
        bytes: Vec::new(),
        cap,
    })?;
    let deadline_err = |partial: Output| RunError::Deadline {
        program: program.clone(),
        after_ms: started.elapsed().as_millis(),
        partial,
    };
    let Some(fin) = fin else {
        return Err(deadline_err(Output::default()));
    };
    for d in [&fin.out, &fin.err] {
        if d.end == DrainEnd::Overflow {
            return Err(RunError::OutputLimit {
                program,
                stream: d.stream,
                cap,
            });
        }
    }
    if let Some(e) = fin.failure() {
        return Err(RunError::Io {
            program,
            source: io::Error::other(e),
        });
    }
    let abandoned = fin.abandoned();
    let timed_out = fin.timed_out;
    let output = Output {
        exit_code: fin.exit_code,
        stdout: fin.out.sink.into_bytes(),
        stderr: fin.err.sink.into_bytes(),
    };
    if timed_out || abandoned {
        return Err(deadline_err(output));
    }
    Ok(output)
}

/// Run `spec` keeping each stream as head + tail with a count and a digest ([`HeadTail`];
/// `spec.output_cap` is not used). A deadline, an abandoned pipe or a stream over the hard
/// cap ends the run with the group killed and is reported in [`Captured`], with everything
/// read so far.
///
/// # Errors
/// [`RunError::Spawn`] when the program cannot be executed, [`RunError::Io`] for wait and
/// pipe failures.
pub fn run_captured(spec: &Spec, keep: HeadTail) -> Result<Captured, RunError> {
    let program = spec.program.display().to_string();
    let fin = launch(spec, || Sink::HeadTail(HeadTailSink::new(keep)))?;
    let Some(fin) = fin else {
        return Ok(Captured {
            timed_out: true,
            stdout: HeadTailSink::new(keep).snapshot(),
            stderr: HeadTailSink::new(keep).snapshot(),
            ..Captured::default()
        });
    };
    if let Some(e) = fin.failure() {
        return Err(RunError::Io {
            program,
            source: io::Error::other(e),
        });
    }
    let over_cap = fin.out.end == DrainEnd::Overflow || fin.err.end == DrainEnd::Overflow;
    let timed_out = !over_cap && (fin.timed_out || fin.abandoned());
    Ok(Captured {
        exit_code: (!over_cap && !timed_out).then_some(fin.exit_code),
        timed_out,
        over_cap,
        stdout: fin.out.sink.snapshot(),
        stderr: fin.err.sink.snapshot(),
    })
}

/// How one run ended, before it is mapped to [`run`]'s or [`run_captured`]'s answer.
struct Finished {
    exit_code: i32,
    timed_out: bool,
    out: Drained,
    err: Drained,
}

impl Finished {
    fn failure(&self) -> Option<String> {
        [&self.out, &self.err]
            .into_iter()
            .find_map(|d| match &d.end {
                DrainEnd::Failed(msg) => Some(msg.clone()),
                _ => None,
            })
    }

    fn abandoned(&self) -> bool {
        self.out.end == DrainEnd::Abandoned || self.err.end == DrainEnd::Abandoned
    }
}

/// Start `spec`, drain both streams into sinks made by `sink`, wait for the exit, the first
/// overflow or the deadline, kill the group and reap. `Ok(None)`: the deadline passed while
/// waiting for a child slot (nothing was started).
fn launch(spec: &Spec, sink: impl Fn() -> Sink) -> Result<Option<Finished>, RunError> {
    let program = spec.program.display().to_string();
    let deadline = spec.deadline;
    let Some(_slot) = Slot::acquire(deadline) else {
        return Ok(None);
    };
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(if spec.stdin.is_empty() {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if let Some(dir) = &spec.cwd {
        cmd.current_dir(dir);
    }
    if !spec.keep_fds.is_empty() {
        let fds = spec.keep_fds.clone();
        // SAFETY: runs in the forked child before exec; fcntl is async-signal-safe and only
        // touches the listed descriptors, which the parent keeps open for the whole spawn.
        unsafe {
            cmd.pre_exec(move || {
                for &fd in &fds {
                    let flags = libc::fcntl(fd, libc::F_GETFD);
                    if flags < 0 || libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) < 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
    }
    let mut child = spawn_retrying(&mut cmd).map_err(|source| RunError::Spawn {
        program: program.clone(),
        source,
    })?;
    let Ok(pid) = libc::pid_t::try_from(child.id()) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(RunError::Spawn {
            program,
            source: io::Error::other("child pid out of range"),
        });
    };
    let stdin_writer = child.stdin.take().map(|mut pipe| {
        let data = spec.stdin.clone();
        // A child that exits without reading its stdin makes this fail; that is fine.
        thread::spawn(move || {
            let _ = pipe.write_all(&data);
        })
    });
    let (tx, rx) = mpsc::channel::<Event>();
    let stop_at = Arc::new(Mutex::new(deadline.max(Instant::now()) + PIPE_GRACE));
    let drain_out = child.stdout.take().map(|p| {
        let (tx, stop, s) = (tx.clone(), Arc::clone(&stop_at), sink());
        thread::spawn(move || drain(p, s, "stdout", &stop, &tx))
    });
    let drain_err = child.stderr.take().map(|p| {
        let (tx, stop, s) = (tx.clone(), Arc::clone(&stop_at), sink());
        thread::spawn(move || drain(p, s, "stderr", &stop, &tx))
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
    let status = child.wait().map_err(|source| RunError::Io {
        program: program.clone(),
        source,
    })?;
    if let Some(handle) = stdin_writer {
        let _ = handle.join();
    }
    // Whatever still holds the pipes is outside the group: give it the grace, then abandon.
    if let Ok(mut s) = stop_at.lock() {
        *s = (*s).min(Instant::now() + PIPE_GRACE);
    }
    let out = join_drain(drain_out, &sink);
    let err = join_drain(drain_err, &sink);
    let exit_code = status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(-1);
    Ok(Some(Finished {
        exit_code,
        timed_out,
        out,
        err,
    }))
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

/// Where a drained stream goes.
enum Sink {
    /// Keep at most `cap` bytes; more is an overflow.
    Capped { bytes: Vec<u8>, cap: usize },
    /// Head + tail, count and digest; past the hard cap is an overflow.
    HeadTail(HeadTailSink),
}

impl Sink {
    /// Take `data`; true when the stream just went over its cap.
    fn push(&mut self, data: &[u8]) -> bool {
        match self {
            Sink::Capped { bytes, cap } => {
                let room = cap.saturating_sub(bytes.len());
                if data.len() > room {
                    bytes.extend_from_slice(data.get(..room).unwrap_or_default());
                    return true;
                }
                bytes.extend_from_slice(data);
                false
            }
            Sink::HeadTail(s) => s.push(data),
        }
    }

    fn into_bytes(self) -> Vec<u8> {
        match self {
            Sink::Capped { bytes, .. } => bytes,
            Sink::HeadTail(s) => s.snapshot().head,
        }
    }

    fn snapshot(&self) -> StreamCapture {
        match self {
            Sink::Capped { bytes, .. } => {
                let mut h = HeadTailSink::new(HeadTail {
                    head: bytes.len(),
                    tail: 0,
                    hard_cap: u64::MAX,
                });
                h.push(bytes);
                h.snapshot()
            }
            Sink::HeadTail(s) => s.snapshot(),
        }
    }
}

/// One stream's head, rolling tail, count and running sha256.
struct HeadTailSink {
    keep: HeadTail,
    head: Vec<u8>,
    /// The last ≤ 2 × tail bytes; read as the last `tail`.
    tail: Vec<u8>,
    total: u64,
    hash: Sha256,
}

impl HeadTailSink {
    fn new(keep: HeadTail) -> HeadTailSink {
        HeadTailSink {
            keep,
            head: Vec::new(),
            tail: Vec::new(),
            total: 0,
            hash: Sha256::new(),
        }
    }

    fn push(&mut self, data: &[u8]) -> bool {
        self.hash.update(data);
        self.total = self.total.saturating_add(data.len() as u64);
        let room = self.keep.head.saturating_sub(self.head.len());
        if room > 0 {
            self.head
                .extend_from_slice(data.get(..room.min(data.len())).unwrap_or_default());
        }
        let keep_from = data.len().saturating_sub(self.keep.tail);
        self.tail
            .extend_from_slice(data.get(keep_from..).unwrap_or_default());
        if self.tail.len() > 2 * self.keep.tail {
            let cut = self.tail.len() - self.keep.tail;
            self.tail.drain(..cut);
        }
        self.total > self.keep.hard_cap
    }

    fn snapshot(&self) -> StreamCapture {
        let tail_start = self.tail.len().saturating_sub(self.keep.tail);
        let mut tail = self.tail.get(tail_start..).unwrap_or_default();
        let kept = (self.head.len() + self.keep.tail) as u64;
        if self.total <= kept {
            // Whole: the head plus the bytes after it, which the tail holds.
            let rest = usize::try_from(self.total)
                .unwrap_or(usize::MAX)
                .saturating_sub(self.head.len());
            tail = tail
                .get(tail.len().saturating_sub(rest)..)
                .unwrap_or_default();
        }
        StreamCapture {
            head: self.head.clone(),
            tail: tail.to_vec(),
            total: self.total,
            sha256: hex::encode(self.hash.clone().finalize()),
        }
    }
}

struct Drained {
    stream: &'static str,
    sink: Sink,
    end: DrainEnd,
}

fn join_drain(handle: Option<thread::JoinHandle<Drained>>, sink: &impl Fn() -> Sink) -> Drained {
    match handle.map(|h| h.join()) {
        Some(Ok(d)) => d,
        Some(Err(_)) => Drained {
            stream: "pipe",
            sink: sink(),
            end: DrainEnd::Failed("drain thread panicked".into()),
        },
        None => Drained {
            stream: "pipe",
            sink: sink(),
            end: DrainEnd::Eof,
        },
    }
}

/// Read `pipe` to EOF into `sink`; report overflow at once on `tx`.
/// Polls in slices of at most 50 ms so a moved `stop_at` is noticed.
fn drain<R: Read + AsRawFd>(
    mut pipe: R,
    mut sink: Sink,
    stream: &'static str,
    stop_at: &Mutex<Instant>,
    tx: &mpsc::Sender<Event>,
) -> Drained {
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
                if sink.push(buf.get(..n).unwrap_or_default()) {
                    let _ = tx.send(Event::Overflow);
                    break DrainEnd::Overflow;
                }
            }
            Err(e)
                if e.kind() == io::ErrorKind::Interrupted
                    || e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => break DrainEnd::Failed(format!("{stream}: read: {e}")),
        }
    };
    Drained { stream, sink, end }
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
fn spawn_retrying(cmd: &mut Command) -> io::Result<Child> {
    let mut attempt = 0;
    loop {
        match cmd.spawn() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && attempt < 20 => {
                attempt += 1;
                thread::sleep(Duration::from_millis(5));
            }
            other => return other,
        }
    }
}

static SLOTS: Mutex<usize> = Mutex::new(0);
static SLOT_FREED: Condvar = Condvar::new();

/// One of the [`MAX_CONCURRENT_CHILDREN`] child slots, released on drop.
struct Slot;

impl Slot {
    /// Wait for a free slot until `deadline`; `None` when the deadline passed first.
    fn acquire(deadline: Instant) -> Option<Slot> {
        let mut used = SLOTS.lock().unwrap_or_else(|p| p.into_inner());
        while *used >= MAX_CONCURRENT_CHILDREN {
            let now = Instant::now();
            if now >= deadline {
                return None;
            }
            used = match SLOT_FREED.wait_timeout(used, deadline - now) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
        *used += 1;
        Some(Slot)
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

    fn sh(script: &str, secs: u64) -> Spec {
        Spec::new("/bin/sh", 1024, Instant::now() + Duration::from_secs(secs))
            .arg("-c")
            .arg(script)
    }

    #[test]
    fn captures_stdout_stderr_and_exit_code() {
        let out = run(&sh("echo out; echo err >&2; exit 3", 5)).expect("run");
        assert_eq!(out.exit_code, 3);
        assert_eq!(out.stdout, b"out\n");
        assert_eq!(out.stderr, b"err\n");
    }

    #[test]
    fn environment_is_exactly_the_spec() {
        std::env::set_var("WORLD_PROCESS_TEST_LEAK", "leak");
        let out = run(&sh("env", 5).env("ONLY", "this")).expect("run");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!text.contains("WORLD_PROCESS_TEST_LEAK"), "{text}");
        assert!(text.contains("ONLY=this"), "{text}");
    }

    #[test]
    fn stdin_bytes_are_delivered_then_closed() {
        let mut spec = sh("cat", 5);
        spec.stdin = b"hello".to_vec();
        assert_eq!(run(&spec).expect("run").stdout, b"hello");
    }

    #[test]
    fn deadline_kills_the_group_and_keeps_partial_output() {
        let started = Instant::now();
        let err = run(&Spec {
            deadline: Instant::now() + Duration::from_millis(300),
            ..sh("echo early; sleep 30 & sleep 30", 0)
        })
        .expect_err("deadline");
        assert!(started.elapsed() < Duration::from_secs(5));
        match err {
            RunError::Deadline { partial, .. } => assert_eq!(partial.stdout, b"early\n"),
            other => panic!("{other}"),
        }
    }

    #[test]
    fn output_over_the_cap_is_an_error_at_once() {
        let started = Instant::now();
        let err = run(&sh("yes; sleep 30", 20)).expect_err("flood");
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(
            matches!(
                err,
                RunError::OutputLimit {
                    stream: "stdout",
                    cap: 1024,
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn a_missing_program_is_a_spawn_error() {
        let err = run(&Spec::new(
            "/nonexistent/ailang",
            16,
            Instant::now() + Duration::from_secs(1),
        ))
        .expect_err("spawn");
        assert!(matches!(err, RunError::Spawn { .. }), "{err}");
    }

    fn keep(head: usize, tail: usize, hard_cap: u64) -> HeadTail {
        HeadTail {
            head,
            tail,
            hard_cap,
        }
    }

    #[test]
    fn head_tail_keeps_both_ends_counts_and_hashes_the_whole_stream() {
        // 100000 bytes: "0123456789" repeated.
        let cap = run_captured(
            &sh(
                "i=0; while [ $i -lt 10000 ]; do printf 0123456789; i=$((i+1)); done",
                20,
            ),
            keep(16, 24, 1 << 20),
        )
        .expect("run");
        assert_eq!(cap.exit_code, Some(0));
        assert!(!cap.timed_out && !cap.over_cap);
        let whole: Vec<u8> = b"0123456789".repeat(10_000);
        assert_eq!(cap.stdout.total, 100_000);
        assert_eq!(cap.stdout.head, whole[..16]);
        assert_eq!(cap.stdout.tail, whole[100_000 - 24..]);
        assert!(cap.stdout.truncated());
        assert_eq!(cap.stdout.omitted(), 100_000 - 40);
        assert_eq!(cap.stdout.sha256, hex::encode(Sha256::digest(&whole)));
        assert_eq!(cap.stderr.total, 0);
        assert_eq!(cap.stderr.sha256, hex::encode(Sha256::digest(b"")));
    }

    #[test]
    fn head_tail_short_stream_is_whole() {
        let cap = run_captured(
            &sh("printf abcdefgh; printf e >&2; exit 4", 5),
            keep(3, 100, 1000),
        )
        .expect("run");
        assert_eq!(cap.exit_code, Some(4));
        assert_eq!(cap.stdout.head, b"abc");
        assert_eq!(cap.stdout.tail, b"defgh");
        assert!(!cap.stdout.truncated());
        assert_eq!(cap.stderr.head, b"e");
        assert!(cap.stderr.tail.is_empty());
    }

    #[test]
    fn head_tail_over_the_hard_cap_kills_the_group() {
        let started = Instant::now();
        let cap = run_captured(&sh("yes; sleep 30", 20), keep(4, 4, 100_000)).expect("run");
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(cap.over_cap && !cap.timed_out);
        assert_eq!(cap.exit_code, None);
        assert!(cap.stdout.total > 100_000);
        assert_eq!(cap.stdout.head, b"y\ny\n");
    }

    #[test]
    fn head_tail_deadline_is_reported_with_partial_output() {
        let cap = run_captured(
            &Spec {
                deadline: Instant::now() + Duration::from_millis(300),
                ..sh("echo early; sleep 30", 0)
            },
            keep(100, 100, 1000),
        )
        .expect("run");
        assert!(cap.timed_out && !cap.over_cap);
        assert_eq!(cap.exit_code, None);
        assert_eq!(cap.stdout.head, b"early\n");
    }

    #[test]
    fn kept_descriptors_are_inherited_and_others_are_not() {
        use std::os::fd::AsRawFd;
        let kept = tempfile::tempfile().expect("tempfile");
        let other = tempfile::tempfile().expect("tempfile");
        let (k, o) = (kept.as_raw_fd(), other.as_raw_fd());
        let mut spec = sh(&format!("[ -e /proc/self/fd/{k} ] && echo kept; [ -e /proc/self/fd/{o} ] && echo leaked; true"), 5);
        spec.keep_fds = vec![k];
        let out = run(&spec).expect("run");
        assert_eq!(out.stdout, b"kept\n");
    }
}
