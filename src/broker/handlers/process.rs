//! Running a handler child process: no shell, a scrubbed environment, its own process group,
//! bounded output, and a hard deadline that kills the whole group (authority-and-broker.md
//! §12.2 "Handler deadline", §13 "Environment").

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::process;

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

/// How a child ended: exit code (`128 + signal` when killed by a signal) and the captured
/// streams, each at most `output_cap` bytes.
pub type ChildOutput = process::Output;

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
    /// Waiting on the child or reading its pipes failed.
    #[error("waiting for {program}: {source}")]
    Wait {
        /// The program path.
        program: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
}

/// Runs `spec` until it exits or `deadline` passes, through the one bounded runner
/// ([`crate::process::run`]): a new process group killed whole at the deadline, when a
/// stream exceeds the cap (at once) and after the leader exits; the environment is exactly
/// `spec.env`.
///
/// Errors: [`ChildError`]. A non-zero exit is not an error; it is in [`ChildOutput`].
pub fn run_child(spec: &ChildSpec, deadline: Instant) -> Result<ChildOutput, ChildError> {
    let runner = process::Spec {
        program: spec.program.clone(),
        args: spec.args.clone(),
        cwd: Some(spec.cwd.clone()),
        env: spec.env.clone(),
        stdin: spec.stdin.clone(),
        output_cap: spec.output_cap,
        deadline,
        keep_fds: Vec::new(),
    };
    process::run(&runner).map_err(|e| match e {
        process::RunError::Spawn { program, source } => ChildError::Spawn { program, source },
        process::RunError::Deadline {
            program,
            after_ms,
            partial,
        } => ChildError::Deadline {
            program,
            after_ms,
            partial,
        },
        process::RunError::OutputLimit {
            program,
            stream,
            cap,
        } => ChildError::OutputFlood {
            program,
            stream,
            cap,
        },
        process::RunError::Io { program, source } => ChildError::Wait { program, source },
    })
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
