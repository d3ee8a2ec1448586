//! How a command ended: the exit-code table (DEC-CLI-1) and the one error type commands
//! return, with the single place where a library error becomes a user-facing line.

use std::fmt;

use crate::store;

/// How a command ended; the only place `world`'s exit codes are written down (spec README,
/// DEC-CLI-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// 0: success.
    Success,
    /// 1: operation failed — not found, bad input, store conflict, host failure, session denial.
    Failed,
    /// 2: usage error, or the store refused at open (schema version, not a database), or the
    /// registry-key guard.
    Usage,
    /// 3: integrity refusal (verify/why/replay found a break, an archived interpreter changed)
    /// or a fence said STOP.
    Integrity,
    /// 4: rejected by the limits ledger.
    LimitRejected,
    /// 5: indeterminate or unrecorded; never retry automatically.
    Indeterminate,
    /// 6: the writer lock is held by another process; nothing was done.
    LockHeld,
    /// 7: invoke committed, but the transition refused (`ok:false`).
    Refused,
    /// 8: invoke committed, and the broker denied an effect.
    EffectDenied,
    /// 9: invoke committed, and an effect's handler failed.
    HandlerFailed,
    /// 255: a bug in world.
    Internal,
}

impl Exit {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Failed => 1,
            Exit::Usage => 2,
            Exit::Integrity => 3,
            Exit::LimitRejected => 4,
            Exit::Indeterminate => 5,
            Exit::LockHeld => 6,
            Exit::Refused => 7,
            Exit::EffectDenied => 8,
            Exit::HandlerFailed => 9,
            Exit::Internal => 255,
        }
    }
}

/// The exit-code table shown in `world --help` and the README.
pub const EXIT_CODES: &str = "\
Exit codes:
  0    success
  1    operation failed: not found, bad input, store conflict, session denial
  2    usage error, or the store was refused at open
  3    integrity failure, or a terminal fence said STOP
  4    rejected by the limits ledger
  5    indeterminate or unrecorded: an intent without outcome; never retry automatically
  6    the writer lock is held by another process; retry, or pass --wait-lock SECONDS
  7    invoke: committed, but the transition refused (ok:false)
  8    invoke: committed, and an effect was denied
  9    invoke: committed, and an effect's handler failed
  255  internal error (a bug in world)";

/// A failed command: what failed, why, and optional hints; rendered as
/// `world: <what>: <why>` plus `hint: …` lines.
#[derive(Debug)]
pub struct CliError {
    /// Exit code class.
    pub exit: Exit,
    /// What failed (`commit`, `open store`, …).
    pub what: String,
    /// Why.
    pub why: String,
    /// Hints, one line each.
    pub hints: Vec<String>,
    /// Exact text to print instead of the `world:` line (spec-fixed messages such as fences).
    pub verbatim: Option<String>,
}

impl CliError {
    /// A new error.
    pub fn new(exit: Exit, what: impl Into<String>, why: impl fmt::Display) -> Self {
        CliError {
            exit,
            what: what.into(),
            why: why.to_string(),
            hints: Vec::new(),
            verbatim: None,
        }
    }

    /// Bad input (exit 1).
    pub fn failed(what: impl Into<String>, why: impl fmt::Display) -> Self {
        Self::new(Exit::Failed, what, why)
    }

    /// A usage error (exit 2).
    pub fn usage(what: impl Into<String>, why: impl fmt::Display) -> Self {
        Self::new(Exit::Usage, what, why)
    }

    /// Add a hint line.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }

    /// Replace the `what` part (context added by the caller).
    pub fn context(mut self, what: impl Into<String>) -> Self {
        self.what = what.into();
        self
    }

    /// Render the lines printed on stderr.
    pub fn render(&self) -> String {
        let mut out = match &self.verbatim {
            Some(v) => v.clone(),
            None => format!("world: {}: {}", self.what, self.why.replace('\n', "\\n")),
        };
        for h in &self.hints {
            out.push_str("\nhint: ");
            out.push_str(h);
        }
        out
    }

    /// Convert a store error met while doing `what`.
    pub fn store(what: impl Into<String>, err: store::Error) -> Self {
        let mut e = CliError::from(err);
        e.what = what.into();
        e
    }
}

impl From<store::Error> for CliError {
    fn from(err: store::Error) -> Self {
        use store::Error as E;
        let (exit, hint): (Exit, Option<String>) = match &err {
            E::WriterAlreadyActive { .. } => (Exit::LockHeld, Some("another world command or `world serve` is writing; retry later, or pass --wait-lock SECONDS".into())),
            E::Conflict { selected, .. } => (
                Exit::Failed,
                Some(if selected.is_empty() { "no head is selected yet; a genesis commit observes the empty head \"\"".into() } else { format!("the selected head is now {selected}; re-plan against it") }),
            ),
            E::Missing { .. } => (Exit::Failed, Some("create it with `world genesis`".into())),
            E::NoParent { .. } => (Exit::Failed, Some("the store's directory is never created; create it first".into())),
            E::IsDirectory { .. } | E::NotADatabase { .. } | E::Uninitialized { .. } | E::LegacySchema { .. }
            | E::FutureSchema { .. } | E::InvalidSchemaVersion { .. } | E::SchemaIntegrity { .. } => (Exit::Usage, None),
            E::Corrupt { .. } => (Exit::Integrity, Some("run `world verify` for a full report".into())),
            E::Sqlite(rusqlite::Error::SqliteFailure(f, _))
                if f.code == rusqlite::ErrorCode::DatabaseCorrupt =>
            {
                (Exit::Integrity, Some("run `world verify` for a full report".into()))
            }
            E::ReadOnly { .. } => (Exit::Internal, None),
            E::DuplicateEntry { .. } => (Exit::Failed, Some("read the current head with `world head` and commit the next index".into())),
            _ => (Exit::Failed, None),
        };
        CliError {
            exit,
            what: "store".into(),
            why: err.to_string(),
            hints: hint.into_iter().collect(),
            verbatim: None,
        }
    }
}

impl From<std::io::Error> for CliError {
    /// A closed stdout pipe (`world log | head`) ends the command quietly with success.
    fn from(err: std::io::Error) -> Self {
        if err.kind() == std::io::ErrorKind::BrokenPipe {
            let mut e = CliError::new(Exit::Success, "", "");
            e.verbatim = Some(String::new());
            return e;
        }
        CliError::failed("write output", err)
    }
}
