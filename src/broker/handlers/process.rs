//! Running a handler child process: no shell, a scrubbed environment, its own process group,
//! bounded output, and a hard deadline that kills the whole group (authority-and-broker.md
//! §12.2 "Handler deadline", §13 "Environment").

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Default cap on each captured stream: 8 MiB (the policy's `max_output_bytes`).
pub const DEFAULT_OUTPUT_CAP: usize = 8 * 1024 * 1024;

/// The longest a handler may run: 10 s (§12.2).
pub const HANDLER_MAX: Duration = Duration::from_secs(10);

/// What the handler leaves for the coordinator after its own deadline: 6 s (§12.2).
pub const HANDLER_RESERVE: Duration = Duration::from_secs(6);

/// The handler deadline of §12.2: `min(now + 10 s, invocation_deadline − 6 s)`; never earlier
/// than `now` (a call with under 6 s left gets a deadline that has already passed).
pub fn handler_deadline(now: Instant, invocation_deadline: Instant) -> Instant {
    let cap = now + HANDLER_MAX;
    let reserved = invocation_deadline
        .checked_sub(HANDLER_RESERVE)
        .unwrap_or(now)
        .max(now);
    cap.min(reserved)
}

/// One child process to run.
#[derive(Clone, Debug)]
pub struct ChildSpec {
    /// The program, an absolute path (never looked up in `PATH`).
    pub program: PathBuf,
    /// Arguments, passed verbatim (no shell).
    pub args: Vec<OsString>,
    /// Working directory.
    pub cwd: PathBuf,
    /// The whole environment of the child; the parent's is never inherited.
    pub env: Vec<(OsString, OsString)>,
    /// Bytes written to the child's stdin, which is then closed (empty = `/dev/null`).
    pub stdin: Vec<u8>,
    /// Cap on stdout bytes and, separately, on stderr bytes.
    pub output_cap: usize,
}

/// How a child ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChildOutput {
    /// Exit code, or `128 + signal` when killed by a signal.
    pub exit_code: i32,
    /// Captured stdout (at most `output_cap` bytes).
    pub stdout: Vec<u8>,
    /// Captured stderr (at most `output_cap` bytes).
    pub stderr: Vec<u8>,
}

/// Why a child produced no usable output.
#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    /// The program could not be started.
    #[error("cannot start {program}: {source}")]
    Spawn {
        /// The program path.
        program: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The deadline passed; the process group was killed. Output so far is kept.
    #[error("{program} passed its deadline of {after_ms} ms and was killed")]
    Deadline {
        /// The program path.
        program: String,
        /// Milliseconds from start to the kill.
        after_ms: u128,
        /// What the child wrote before the kill.
        partial: ChildOutput,
    },
    /// A stream went over the cap; the process group was killed.
    #[error("{program} wrote more than {cap} bytes on {stream}")]
    OutputFlood {
        /// The program path.
        program: String,
        /// `stdout` or `stderr`.
        stream: &'static str,
        /// The cap in bytes.
        cap: usize,
    },
    /// Waiting on the child failed.
    #[error("waiting for {program}: {source}")]
    Wait {
        /// The program path.
        program: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

/// Reads `reader` to the end, keeping at most `cap` bytes; returns the bytes and whether more
/// were offered (the rest is drained so the child never blocks on a full pipe).
fn read_capped(mut reader: impl Read, cap: usize) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    let mut over = false;
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let chunk = buf.get(..n).unwrap_or(&[]);
                let room = cap.saturating_sub(kept.len());
                if chunk.len() > room {
                    kept.extend_from_slice(chunk.get(..room).unwrap_or(&[]));
                    over = true;
                } else {
                    kept.extend_from_slice(chunk);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    (kept, over)
}

fn kill_group(pid: u32) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: signalling our own child's process group; a stale group id only fails.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
}

/// Runs `spec` until it exits or `deadline` passes. The child is the leader of a new process
/// group; at the deadline (or when a stream exceeds the cap) the whole group gets `SIGKILL`.
///
/// Errors: [`ChildError`]. A non-zero exit is not an error; it is in [`ChildOutput`].
pub fn run_child(spec: &ChildSpec, deadline: Instant) -> Result<ChildOutput, ChildError> {
    let program = spec.program.display().to_string();
    let started = Instant::now();
    let mut command = Command::new(&spec.program);
    command
        .args(&spec.args)
        .current_dir(&spec.cwd)
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
    let mut child = command.spawn().map_err(|source| ChildError::Spawn {
        program: program.clone(),
        source,
    })?;
    let pid = child.id();
    let stdin_writer = child.stdin.take().map(|mut pipe| {
        let data = spec.stdin.clone();
        thread::spawn(move || {
            // A child that exits without reading its stdin makes this fail; that is fine.
            let _ = pipe.write_all(&data);
        })
    });
    let cap = spec.output_cap;
    let stdout_reader = child
        .stdout
        .take()
        .map(|pipe| thread::spawn(move || read_capped(pipe, cap)));
    let stderr_reader = child
        .stderr
        .take()
        .map(|pipe| thread::spawn(move || read_capped(pipe, cap)));

    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {
                if Instant::now() >= deadline {
                    timed_out = true;
                    kill_group(pid);
                    match child.wait() {
                        Ok(status) => break status,
                        Err(source) => return Err(ChildError::Wait { program, source }),
                    }
                }
                thread::sleep(Duration::from_millis(5));
            }
            Err(source) => {
                kill_group(pid);
                let _ = child.wait();
                return Err(ChildError::Wait { program, source });
            }
        }
    };
    // The leader is gone; descendants that still hold the pipes would keep the readers
    // waiting, so the group is killed before joining them.
    kill_group(pid);
    if let Some(handle) = stdin_writer {
        let _ = handle.join();
    }
    let (stdout, stdout_over) = stdout_reader
        .and_then(|h| h.join().ok())
        .unwrap_or_default();
    let (stderr, stderr_over) = stderr_reader
        .and_then(|h| h.join().ok())
        .unwrap_or_default();
    let exit_code = status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
    let output = ChildOutput {
        exit_code,
        stdout,
        stderr,
    };
    if timed_out {
        return Err(ChildError::Deadline {
            program,
            after_ms: started.elapsed().as_millis(),
            partial: output,
        });
    }
    if stdout_over {
        return Err(ChildError::OutputFlood {
            program,
            stream: "stdout",
            cap,
        });
    }
    if stderr_over {
        return Err(ChildError::OutputFlood {
            program,
            stream: "stderr",
            cap,
        });
    }
    Ok(output)
}

/// Finds `name` in the directories of the `PATH` given (for locating `git` once, at setup;
/// children themselves get `PATH=/usr/bin:/bin`). Returns an absolute path to an executable.
pub fn find_in_path(name: &str, path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path_var = path_var?;
    std::env::split_paths(path_var)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                .unwrap_or(false)
        })
}

/// The fixed part of every handler child's environment (§12.2): `PATH=/usr/bin:/bin`,
/// `LANG=C`, `LC_ALL=C`, `HOME=<home>`.
pub fn base_env(home: &Path) -> Vec<(OsString, OsString)> {
    vec![
        ("HOME".into(), home.as_os_str().to_owned()),
        ("PATH".into(), "/usr/bin:/bin".into()),
        ("LANG".into(), "C".into()),
        ("LC_ALL".into(), "C".into()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> ChildSpec {
        ChildSpec {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            cwd: "/".into(),
            env: base_env(Path::new("/nonexistent")),
            stdin: Vec::new(),
            output_cap: 1024,
        }
    }

    #[test]
    fn captures_output_exit_code_and_stdin() {
        let mut spec = sh("cat; echo err >&2; exit 3");
        spec.stdin = b"hello".to_vec();
        let out = run_child(&spec, Instant::now() + Duration::from_secs(5)).expect("run");
        assert_eq!(out.exit_code, 3);
        assert_eq!(out.stdout, b"hello");
        assert_eq!(out.stderr, b"err\n");
    }

    #[test]
    fn environment_is_never_inherited() {
        std::env::set_var("WORLD_HANDLER_SECRET_PROBE", "leak");
        let out = run_child(&sh("env"), Instant::now() + Duration::from_secs(5)).expect("run");
        let env = String::from_utf8_lossy(&out.stdout);
        assert!(!env.contains("WORLD_HANDLER_SECRET_PROBE"), "{env}");
        assert!(env.contains("PATH=/usr/bin:/bin"), "{env}");
    }

    #[test]
    fn deadline_kills_the_whole_group() {
        let started = Instant::now();
        // The grandchild would keep stdout open for 30 s if only the leader were killed.
        let err = run_child(
            &sh("sleep 30 & sleep 30"),
            Instant::now() + Duration::from_millis(300),
        )
        .unwrap_err();
        assert!(matches!(err, ChildError::Deadline { .. }), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "took {:?}",
            started.elapsed()
        );
    }

    #[test]
    fn output_flood_is_refused() {
        let err = run_child(
            &sh("head -c 5000 /dev/zero"),
            Instant::now() + Duration::from_secs(5),
        )
        .unwrap_err();
        assert!(
            matches!(
                err,
                ChildError::OutputFlood {
                    stream: "stdout",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn deadline_math() {
        let now = Instant::now();
        assert_eq!(
            handler_deadline(now, now + Duration::from_secs(60)),
            now + HANDLER_MAX
        );
        assert_eq!(
            handler_deadline(now, now + Duration::from_secs(9)),
            now + Duration::from_secs(3)
        );
        assert_eq!(handler_deadline(now, now + Duration::from_secs(2)), now);
    }
}
