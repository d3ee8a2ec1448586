//! Interpreters a store can pin, behind one trait (transitions.md §5–§6, ailang.md §6).
//!
//! Two implementations exist: the external `ailang` binary archived next to the store
//! (`external`), and the embedded AILANG subset interpreter (`world_ailang`). Nothing above
//! this trait knows which one runs: the capsule (`capsule`) stages the call, enforces the
//! deadline and output caps, and turns a [`RunOutcome`] into a typed result.

use std::time::Instant;

pub mod archive;
pub mod capsule;
pub mod external;
pub mod numbers;

/// Bounds for one interpreter call.
#[derive(Clone, Copy, Debug)]
pub struct RunLimits {
    /// Absolute wall-clock deadline; past it the run ends with [`RunError::Timeout`].
    pub deadline: Instant,
    /// Cap on stdout bytes and, separately, on stderr bytes (8 MiB in the capsule).
    pub output_cap: usize,
}

impl RunLimits {
    /// The capsule's stream cap: 8 MiB each for stdout and stderr (transitions.md §6).
    pub const OUTPUT_CAP: usize = 8 * 1024 * 1024;

    /// Limits ending at `deadline` with the capsule's 8 MiB stream cap.
    pub fn until(deadline: Instant) -> Self {
        RunLimits {
            deadline,
            output_cap: Self::OUTPUT_CAP,
        }
    }
}

/// What an interpreter process (or the embedded evaluator) produced, unvalidated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunOutcome {
    /// Exit status: 0 success, 1 compile/type/runtime error, 2 usage error (ailang.md §3).
    pub exit_code: i32,
    /// Everything written to stdout, verbatim (the trailing LF is *not* stripped here).
    pub stdout: Vec<u8>,
    /// Everything written to stderr, verbatim (`Error: <CODE>: <message>` lines).
    pub stderr: Vec<u8>,
}

/// Result of `check` on one source (ailang.md §2).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckOutcome {
    /// True when the source parses, resolves and type-checks (exit 0).
    pub passed: bool,
    /// Diagnostics as the CLI prints them (`Error: <CODE>: <message>` lines), possibly empty.
    pub diagnostics: String,
}

/// Failures of the call itself, distinct from a program that ran and exited non-zero.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The deadline passed; the process group was killed (transitions.md §6, `TimeoutError`).
    #[error("interpreter run exceeded its deadline")]
    Timeout,
    /// stdout or stderr passed the stream cap; never reported as a timeout (`OutputLimitError`).
    #[error("interpreter {stream} exceeded the {cap}-byte output cap")]
    OutputLimit {
        /// `"stdout"` or `"stderr"`.
        stream: &'static str,
        /// The cap in bytes.
        cap: usize,
    },
    /// The archived binary no longer hashes to its ref (`HashMismatchError`, exit 3).
    #[error(
        "interpreter {expected} failed its integrity check: the archived bytes hash to {actual}"
    )]
    HashMismatch {
        /// The pinned ref.
        expected: String,
        /// What the file hashes to now.
        actual: String,
    },
    /// The interpreter could not be found or started (`absent_artifact`, `exec_failure`).
    #[error("interpreter unavailable: {0}")]
    Unavailable(String),
    /// Staging or pipe I/O failed.
    #[error("interpreter I/O: {0}")]
    Io(#[from] std::io::Error),
}

/// An interpreter the store can pin: identified by a sha256 ref, run with no capabilities.
///
/// `source` is always `canon.Source` output (UTF-8, LF line ends). `args` is the exact
/// args-file content: the Go-json encoding of the input **as a JSON string**
/// (e.g. `"{\"a\":1}"`), as the capsule passes it (transitions.md §6).
pub trait Interpreter: Send + Sync {
    /// The pin: `sha256:<hex>` of the binary bytes, or of the embedded identity string.
    fn interpreter_ref(&self) -> &str;
    /// The whole `--version` stdout (stored verbatim in the archive sidecar).
    fn version_text(&self) -> &str;
    /// The release string: the first non-blank trimmed line of [`Self::version_text`].
    fn release(&self) -> String {
        release_of(self.version_text())
    }
    /// `check` the source in an empty scratch root (transitions.md §6.1), `MOD010` relaxed.
    fn check(&self, source: &[u8], limits: RunLimits) -> Result<CheckOutcome, RunError>;
    /// `run --quiet --caps "" --entry main` with `args` as the args file.
    fn run(&self, source: &[u8], args: &[u8], limits: RunLimits) -> Result<RunOutcome, RunError>;
}

/// The release string of a `--version` text: its first non-blank line, trimmed; `unpinned`
/// when there is none (transitions.md §4).
pub fn release_of(version_text: &str) -> String {
    version_text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("unpinned")
        .to_string()
}

/// The embedded interpreter's dialect number: changes only when the subset's meaning changes
/// (ailang.md §6), never with a `world` release.
pub const EMBEDDED_DIALECT: u32 = 1;

/// The identity string whose sha256 is the embedded interpreter's ref (ailang.md §6).
pub fn embedded_identity() -> String {
    format!("world/ailang-subset/v1|dialect:{EMBEDDED_DIALECT}")
}

/// The embedded interpreter's ref: sha256 of [`embedded_identity`].
pub fn embedded_ref() -> world_encoding::HashRef {
    world_encoding::HashRef::of(embedded_identity().as_bytes())
}
