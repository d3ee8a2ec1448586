//! How a command ended: the exit-code table (DEC-CLI-1) and the one error type commands
//! return, with the single place where a library error becomes a user-facing line.

use std::fmt;

use crate::authority::session::SessionError;
use crate::ops::classify::Classify;
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

    /// The stable machine name of this exit class, used as `error.code` in the `--json` error
    /// envelope unless a command names a more specific code (DEC-CLI-16).
    pub fn name(self) -> &'static str {
        match self {
            Exit::Success => "ok",
            Exit::Failed => "failed",
            Exit::Usage => "usage",
            Exit::Integrity => "integrity",
            Exit::LimitRejected => "limit_rejected",
            Exit::Indeterminate => "indeterminate",
            Exit::LockHeld => "lock_held",
            Exit::Refused => "refused",
            Exit::EffectDenied => "effect_denied",
            Exit::HandlerFailed => "handler_failed",
            Exit::Internal => "internal",
        }
    }

    /// The exit of an `ailang` program run, passed through (ailang.md §3): 0 success, 2 usage,
    /// anything else failed (exit 1).
    pub fn of_ailang(code: i32) -> Exit {
        match code {
            0 => Exit::Success,
            2 => Exit::Usage,
            _ => Exit::Failed,
        }
    }

    /// A check that found a break (exit 3, [`Exit::Integrity`]) when `broken`, else success:
    /// the outcome of a read-only verification (`verify`, `mission verify`, `replay`).
    pub fn found_break(broken: bool) -> Exit {
        if broken {
            Exit::Integrity
        } else {
            Exit::Success
        }
    }

    /// The outcome of a reconcile: exit 5 ([`Exit::Indeterminate`]) while anything is left
    /// `open` to a human, else exit 1 when something `conflicted`, else success.
    pub fn of_reconcile(open: bool, conflicted: bool) -> Exit {
        if open {
            Exit::Indeterminate
        } else if conflicted {
            Exit::Failed
        } else {
            Exit::Success
        }
    }

    /// The exit of `world receipt` (README "Receipts"): indeterminate 5, not started 1,
    /// resolved 0.
    pub fn of_receipt(state: crate::store::journal::ReceiptState) -> Exit {
        use crate::store::journal::ReceiptState;
        match state {
            ReceiptState::Indeterminate => Exit::Indeterminate,
            ReceiptState::NotStarted => Exit::Failed,
            ReceiptState::Resolved => Exit::Success,
        }
    }
}

impl From<crate::ops::outcome::Outcome> for Exit {
    /// The exit code of an outcome (DEC-UX-3; README "Outcomes"): `ok` 0, `refused` 7,
    /// `denied` 8, `failed` 9, `indeterminate` and `effects-unrecorded` 5.
    fn from(o: crate::ops::outcome::Outcome) -> Exit {
        use crate::ops::outcome::Outcome;
        match o {
            Outcome::Ok => Exit::Success,
            Outcome::Refused => Exit::Refused,
            Outcome::Denied => Exit::EffectDenied,
            Outcome::Failed => Exit::HandlerFailed,
            Outcome::Indeterminate | Outcome::EffectsUnrecorded => Exit::Indeterminate,
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
  5    outcome indeterminate or effects-unrecorded (nothing committed); never retry automatically
  6    the writer lock is held by another process; retry, or pass --wait-lock SECONDS
  7    invoke: outcome refused: committed, but the transition answered ok:false
  8    invoke: outcome denied: committed, and an effect was denied
  9    invoke: outcome failed: committed, and an effect's handler failed
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
    /// The JSON envelope's specific code and extra members (boxed: most errors have none,
    /// and `Result<_, CliError>` stays small).
    pub extra: Option<Box<Extra>>,
}

/// What the `--json` error envelope adds to an error's text.
#[derive(Debug, Default)]
pub struct Extra {
    /// A specific `error.code` (`head_conflict`, `not_found`, `ambiguous_ref`, …); `None`
    /// uses [`Exit::name`].
    pub code: Option<&'static str>,
    /// Extra members of the envelope's `error` object (camelCase keys), in order.
    pub details: Vec<(String, serde_json::Value)>,
    /// The error's `source()` chain, outermost first, each printed as a `caused by:` line
    /// (causes whose text the message above already shows are left out).
    pub causes: Vec<String>,
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
            extra: None,
        }
    }

    /// Name a specific `error.code` for the JSON envelope.
    pub fn with_code(mut self, code: &'static str) -> Self {
        self.extra.get_or_insert_with(Default::default).code = Some(code);
        self
    }

    /// The envelope's `error.code`: the specific one, else the exit class name.
    pub fn code(&self) -> &'static str {
        self.extra
            .as_ref()
            .and_then(|x| x.code)
            .unwrap_or_else(|| self.exit.name())
    }

    /// Add a member to the JSON envelope's `error` object.
    pub fn detail(mut self, key: &str, value: impl Into<serde_json::Value>) -> Self {
        self.extra
            .get_or_insert_with(Default::default)
            .details
            .push((key.to_string(), value.into()));
        self
    }

    /// Whether this is the quiet end of a closed stdout pipe (nothing to print).
    pub fn is_silent(&self) -> bool {
        self.exit == Exit::Success || self.verbatim.as_deref() == Some("")
    }

    /// The one `--json` error envelope, printed as one line on stdout by `main`:
    /// `{"error":{"code":STRING,"message":STRING,"hints":[STRING…], …details}}`.
    /// `message` is the same text as the human `world: …` line without the `world: ` prefix
    /// (or the verbatim text). Schema: docs/json/error.schema.json (DEC-CLI-16).
    pub fn envelope(&self) -> serde_json::Value {
        let message = match &self.verbatim {
            Some(v) => v.clone(),
            None if self.what.is_empty() => self.why.clone(),
            None => format!("{}: {}", self.what, self.why),
        };
        let mut e = serde_json::Map::new();
        e.insert("code".into(), self.code().into());
        e.insert("message".into(), message.into());
        e.insert("hints".into(), self.hints.clone().into());
        e.insert("exitCode".into(), self.exit.code().into());
        for (k, v) in self.extra.iter().flat_map(|x| x.details.iter()) {
            e.insert(k.clone(), v.clone());
        }
        serde_json::json!({ "error": e })
    }

    /// The message without the `world: ` prefix (the envelope's `message`).
    pub fn message_line(&self) -> String {
        match &self.verbatim {
            Some(v) => v.clone(),
            None if self.what.is_empty() => self.why.clone(),
            None => format!("{}: {}", self.what, self.why),
        }
    }

    /// The store, a record or an object is damaged (exit 3, [`Exit::Integrity`]).
    pub fn integrity(what: impl Into<String>, why: impl fmt::Display) -> Self {
        Self::new(Exit::Integrity, what, why)
    }

    /// An outcome nobody knows yet (exit 5, [`Exit::Indeterminate`]): never retry on your own.
    pub fn indeterminate(what: impl Into<String>, why: impl fmt::Display) -> Self {
        Self::new(Exit::Indeterminate, what, why)
    }

    /// The controlling terminal failed during an attended prompt (exit 3): `terminal: <e>`,
    /// or, when the prompt timed out, exactly `aborted (<e>); nothing was written`.
    pub fn terminal(what: impl Into<String>, e: &std::io::Error) -> Self {
        let mut err = Self::new(Exit::Integrity, what, format!("terminal: {e}"));
        if e.kind() == std::io::ErrorKind::TimedOut {
            err.verbatim = Some(format!("aborted ({e}); nothing was written"));
        }
        err
    }

    /// The human did not confirm an attended act (exit 3); `verbatim` is the exact stderr
    /// line (`aborted (not confirmed)…`).
    pub fn aborted(what: impl Into<String>, verbatim: impl Into<String>) -> Self {
        let mut err = Self::new(Exit::Integrity, what, "");
        err.verbatim = Some(verbatim.into());
        err
    }

    /// A ledger refused the command (exit 4, [`Exit::LimitRejected`]).
    pub fn rejected(what: impl Into<String>, why: impl fmt::Display) -> Self {
        Self::new(Exit::LimitRejected, what, why)
    }

    /// Bad input (exit 1).
    pub fn failed(what: impl Into<String>, why: impl fmt::Display) -> Self {
        Self::new(Exit::Failed, what, why)
    }

    /// The one fence refusal (issue 28): stderr is exactly `STOP fence=<fence>[ reason=<reason>]`,
    /// then each line of `detail` (when not empty) indented two spaces; exit 3
    /// ([`Exit::Integrity`]); the JSON message `fence <fence> refused`. The caller refuses before
    /// writing anything.
    pub fn fence(what: impl Into<String>, fence: &str, reason: Option<&str>, detail: &str) -> Self {
        let mut line = format!("STOP fence={fence}");
        if let Some(r) = reason {
            line.push_str(&format!(" reason={r}"));
        }
        let mut e = Self::new(Exit::Integrity, what, format!("fence {fence} refused"));
        e.verbatim = Some(if detail.is_empty() {
            line
        } else {
            format!("{line}\n  {}", detail.replace('\n', "\n  "))
        });
        e
    }

    /// A usage error (exit 2).
    pub fn usage(what: impl Into<String>, why: impl fmt::Display) -> Self {
        Self::new(Exit::Usage, what, why)
    }

    /// An error from a typed library error: its text is the `why`, and its `source()` chain
    /// becomes the `caused by:` lines (jj's `command_error.rs` shape).
    pub fn caused(
        exit: Exit,
        what: impl Into<String>,
        err: &(dyn std::error::Error + 'static),
    ) -> Self {
        let mut e = Self::new(exit, what, err);
        e.set_causes(cause_chain(err));
        e
    }

    /// Record the `caused by:` chain (nothing is stored for an empty one).
    pub fn set_causes(&mut self, causes: Vec<String>) {
        if !causes.is_empty() {
            self.extra.get_or_insert_with(Default::default).causes = causes;
        }
    }

    /// The `caused by:` chain.
    pub fn causes(&self) -> &[String] {
        self.extra.as_ref().map_or(&[], |x| x.causes.as_slice())
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

    /// Render the lines printed on stderr. The message, causes and hints may quote what a
    /// client or a file supplied, so each is shown escaped on its one line (DEC-TRUST3-4).
    pub fn render(&self) -> String {
        use crate::termtext::escape_line;
        let mut out = match &self.verbatim {
            Some(v) => v.clone(),
            None => format!(
                "world: {}: {}",
                escape_line(&self.what),
                escape_line(&self.why)
            ),
        };
        for c in self.causes() {
            out.push_str("\ncaused by: ");
            out.push_str(&escape_line(c));
        }
        for h in &self.hints {
            out.push_str("\nhint: ");
            out.push_str(&escape_line(h));
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

/// The exit-6 hint for a lock whose holder is known: what it is (from its lock file) and
/// what to do about it.
fn lock_hint(h: &store::lock::Holder) -> String {
    let pid = h.pid;
    let cmd = h.command.as_deref().unwrap_or("");
    let what = if cmd.is_empty() {
        format!("process {pid} is writing (`ps -p {pid}` shows it)")
    } else {
        format!("process {pid}, `{cmd}`, holds the writer lock")
    };
    let todo = if cmd.contains("prompt") {
        "answer or cancel that prompt (it gives up by itself after its timeout), or pass --wait-lock SECONDS"
    } else if cmd.starts_with("world serve") {
        "the daemon holds it for its lifetime: send the work to it (REST POST /v1/commit, MCP tools/call, A2A message/send; `GET /v1/` lists the routes), or stop it"
    } else if cmd.starts_with("world mcp") {
        "`world mcp` holds it while its stdio client is connected: send the work through that client, or end it"
    } else {
        "retry later, or pass --wait-lock SECONDS"
    };
    format!("{what}; {todo}")
}

/// The `source()` chain of `err`, outermost first, without causes an earlier message already
/// says (many errors print their source inline as well): a cause is left out when its last
/// four words, compared case-insensitively, already appear above it.
pub fn cause_chain(err: &(dyn std::error::Error + 'static)) -> Vec<String> {
    let mut seen = err.to_string().to_lowercase();
    let mut out = Vec::new();
    let mut next = err.source();
    while let Some(e) = next {
        let text = e.to_string();
        let lower = text.to_lowercase();
        let words: Vec<&str> = lower.split_whitespace().collect();
        let tail = words[words.len().saturating_sub(4)..].join(" ");
        if !tail.is_empty() && !seen.contains(&tail) {
            seen.push('\n');
            seen.push_str(&lower);
            out.push(text);
        }
        next = e.source();
    }
    out
}

impl From<store::Error> for CliError {
    fn from(err: store::Error) -> Self {
        use store::Error as E;
        let (exit, hint): (Exit, Option<String>) = match &err {
            E::WriterAlreadyActive { holder: Some(h), .. } => (Exit::LockHeld, Some(lock_hint(h))),
            E::WriterAlreadyActive { .. } => (Exit::LockHeld, Some("another process is writing (another world command, a prompt, or `world serve`, which holds it for its lifetime); retry later, or pass --wait-lock SECONDS".into())),
            E::Conflict { selected, .. } => (
                Exit::Failed,
                Some(if selected.is_empty() { "no head is selected yet; a genesis commit observes the empty head \"\"".into() } else { format!("the selected head is now {selected}; re-plan against it") }),
            ),
            E::Missing { .. } => (Exit::Failed, Some("create it with `world genesis`".into())),
            E::NoParent { .. } => (Exit::Failed, Some("the store's directory is never created; create it first".into())),
            E::EmptyFile { .. } => (Exit::Usage, Some("create the store with `world genesis` first".into())),
            E::IsDirectory { .. } | E::NotRegular { .. } | E::NotADatabase { .. } | E::Uninitialized { .. } | E::LegacySchema { .. }
            | E::FutureSchema { .. } | E::InvalidSchemaVersion { .. } | E::SchemaIntegrity { .. } => (Exit::Usage, None),
            E::Corrupt { .. } => (Exit::Integrity, Some("run `world verify` for a full report".into())),
            E::Sqlite(_) if err.is_corrupt() => {
                (Exit::Integrity, Some("run `world verify` for a full report".into()))
            }
            E::ReadOnly { .. } => (Exit::Internal, None),
            E::DuplicateEntry { .. } => (Exit::Failed, Some("read the current head with `world head` and commit the next index".into())),
            E::InvocationReused { id, .. } => (Exit::Failed, Some(format!("a retry under {id} must send the same content; `world receipt {id}` shows what was committed, and a different commit needs a new id"))),
            E::InvocationMismatch { .. } => (Exit::Failed, Some("a retry must resend the body recorded under its invocation id; a different commit needs a new id".into())),
            _ => (Exit::Failed, None),
        };
        let code = match &err {
            E::Conflict { .. } => Some("head_conflict"),
            E::Missing { .. } => Some("store_missing"),
            E::WriterAlreadyActive { .. } => Some("lock_held"),
            E::DuplicateEntry { .. } => Some("duplicate_entry"),
            E::InvocationReused { .. } | E::InvocationMismatch { .. } => Some("invocation_reused"),
            _ => None,
        };
        CliError {
            exit,
            what: "store".into(),
            why: err.to_string(),
            hints: hint.into_iter().collect(),
            verbatim: None,
            extra: {
                let causes = cause_chain(&err);
                (code.is_some() || !causes.is_empty()).then(|| {
                    Box::new(Extra {
                        code,
                        details: Vec::new(),
                        causes,
                    })
                })
            },
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

/// Whether the raw command line asks for `--json` (looked at before parsing, so a parse
/// failure can still answer with the JSON envelope). Stops at `--`.
pub fn argv_wants_json<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> bool {
    args.into_iter()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json" || a.to_string_lossy().starts_with("--json="))
}

/// The single error-printing path (called by `main` for every failing command): the human
/// lines (`world: …`, `hint: …`) on stderr, and with `--json` also the envelope
/// [`CliError::envelope`] as one line on stdout. A closed pipe prints nothing.
pub fn print_error(err: &CliError, json: bool) {
    if err.is_silent() {
        return;
    }
    // On a narrow terminal a message naming full hashes breaks between tokens, never inside
    // one (docs/TABLES.md "Key/value views"); a pipe gets it unchanged.
    let text =
        crate::cli::secrets::redact(&crate::cli::output::fold_stderr(&err.render())).into_owned();
    if !text.is_empty() {
        let text = if crate::cli::output::stderr_color() {
            text.replacen("world: ", "\x1b[31mworld:\x1b[0m ", 1)
        } else {
            text
        };
        eprintln!("{text}");
    }
    if json {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let envelope = err.envelope().to_string();
        let _ = writeln!(out, "{}", crate::cli::secrets::redact(&envelope));
        let _ = out.flush();
    }
}

/// Print a clap parse failure and pick the exit code: help and version go to stdout with 0;
/// a usage error is clap's text on stderr (exit 2), plus the JSON envelope with code `usage`
/// on stdout under `--json`.
pub fn print_clap_error(e: clap::Error, json: bool) -> std::process::ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let code = e.exit_code();
            let _ = e.print();
            std::process::ExitCode::from(code as u8)
        }
        _ => {
            // clap echoes the offending argument: printed withheld like every other output.
            if crate::cli::secrets::active() {
                eprint!("{}", crate::cli::secrets::redact(&e.render().to_string()));
            } else {
                let _ = e.print();
            }
            if json {
                let text = e.render().to_string();
                let message = text
                    .lines()
                    .next()
                    .unwrap_or("")
                    .trim_start_matches("error: ")
                    .to_string();
                let err = CliError::usage("", message).with_code("usage");
                println!(
                    "{}",
                    crate::cli::secrets::redact(&err.envelope().to_string())
                );
            }
            std::process::ExitCode::from(Exit::Usage.code())
        }
    }
}

/// Map an [`crate::ops::genesis::GenesisError`] by its cause: a second genesis exits 1, an
/// interpreter or epoch failure as `world pin` maps it, a store failure by its kind.
pub fn genesis_err(what: &str, e: crate::ops::genesis::GenesisError) -> CliError {
    use crate::ops::genesis::GenesisError as G;
    match e {
        G::EmptySemanticId => CliError::usage(what, e),
        G::HeadExists(_) => CliError::failed(what, e),
        G::Provider(p) => super::pin::provider_err(what, p),
        G::Epoch(x) => super::pin::epoch_err(what, x),
        G::Store(s) => CliError::store(what, s),
    }
}

// ---- Library errors of the use cases, mapped to exit codes and hints (the one place). ----

use crate::ops::outcome::Outcome;

/// The outcome of an invocation that did not commit (`None` for failures before anything ran):
/// `effects-unrecorded` when effect records or intents are durable, `indeterminate` for a
/// resent id whose earlier run has no outcome (`ops::outcome::derive`).
fn not_committed_outcome(e: &crate::ops::invoke::InvokeError) -> Option<Outcome> {
    use crate::ops::invoke::InvokeError;
    use crate::ops::outcome::{derive, EffectState, Evidence};
    let effects: Vec<EffectState> = match e {
        InvokeError::EffectsUnrecorded {
            records, intents, ..
        } => records
            .iter()
            .map(|_| EffectState::Ok)
            .chain(intents.iter().map(|_| EffectState::Indeterminate))
            .collect(),
        InvokeError::NotCommitted(_) => Vec::new(),
        _ => return None,
    };
    Some(derive(&Evidence {
        committed: false,
        output_ok: None,
        effects: &effects,
    }))
}

/// A refused host flag of a one-shot command (`what`: `invoke`, `mcp`; [`crate::ops::host`]):
/// exit 1, the tool and exec refusals worded as before the host had one builder.
pub fn host_err(what: &str, e: crate::ops::host::HostError) -> CliError {
    use crate::ops::host::HostError;
    match e {
        HostError::Exec(e) => CliError::failed(what, e),
        other => CliError::failed(what, format!("{}: {other}", other.flag())),
    }
}

/// Map an invocation failure to a CLI error and exit code.
/// The one mapping of a refused `--session` (DEC-ARCH-11): a store failure keeps the store's
/// exit mapping; every other refusal (malformed, unknown, revoked, tampered, unattested,
/// expired, unreadable input) is `session: <why>`, exit 1 ([`Exit::Failed`]), the same from
/// `invoke`, `limits` and `mission`.
pub fn session_err(e: SessionError) -> CliError {
    match e {
        SessionError::Store(s) => CliError::store("session", s),
        other => CliError::failed("session", other),
    }
}

pub fn invoke_err(e: crate::ops::invoke::InvokeError) -> CliError {
    use crate::ops::invoke::InvokeError;
    let e = match e {
        // Store failures keep the store's own exit mapping (lock held 6, corrupt 3, …).
        InvokeError::Store(s) => return CliError::store("invoke", s),
        InvokeError::Session(s) => return session_err(s),
        other => other,
    };
    let exit = match &e {
        InvokeError::Integrity(_) => Exit::Integrity,
        InvokeError::LimitsRejected(_) | InvokeError::MissionRejected(_) => Exit::LimitRejected,
        InvokeError::LimitsUnavailable(_) | InvokeError::MissionUnavailable(_) => Exit::Failed,
        InvokeError::LedgerBusy(_) => Exit::LockHeld,
        InvokeError::NotCommitted(_) | InvokeError::EffectsUnrecorded { .. } => {
            Exit::from(not_committed_outcome(&e).unwrap_or(Outcome::Indeterminate))
        }
        _ => Exit::Failed,
    };
    let mut err = CliError::new(exit, "invoke", &e);
    if let Some(o) = not_committed_outcome(&e) {
        // The one vocabulary (DEC-UX-3) in the JSON envelope: `error.outcome`.
        err = err.detail("outcome", o.as_str());
    }
    if let InvokeError::EffectsUnrecorded { cause, .. } = &e {
        err = err.hint(format!("cause: {cause}"));
        err = err.hint("resolve each record with `world effects show REF` and inspect the worktree before retrying a write, edit or run");
    }
    if let InvokeError::EffectsUnsupported(_, why) = &e {
        for w in why {
            err = err.hint(w.trim_start_matches("world: ").to_string());
        }
    }
    if let InvokeError::NotAuthorized(_) = &e {
        err = err.hint("`world tools list --session S` shows what this session can call (a published transition is visible only with a grant for its access effect)");
    }
    if matches!(e, InvokeError::LedgerBusy(_)) {
        err = err.hint("another process is writing the ledger; retry the call (a lock wait is exit 6, docs/LEDGER.md)");
    }
    if matches!(e, InvokeError::NotCommitted(_)) {
        err = err.hint("check `world receipt` and `world effects --pending`; send a new --invocation-id to try again");
    }
    err
}

/// A ledger failure as a CLI error (exit codes in docs/LEDGER.md): a bad URL, a foreign file
/// or another schema version 2; lock/busy 6; corrupt 3; unreachable, refused or failed 1.
pub fn ledger_err(what: &str, e: crate::limits::Error) -> CliError {
    use crate::ledger::Error as S;
    use crate::limits::Error as L;
    use crate::ops::classify::Classify;
    if let Some(why) = e.foreign() {
        return not_a_ledger(what, &why);
    }
    match e {
        L::Rejected(v) => limits_rejection(what, &v),
        L::Storage(S::NotALedger { why, .. }) => not_a_ledger(what, &why)
            .hint("to use the ledger inside the World store, drop --ledger"),
        L::Storage(S::BadLedgerUrl { .. }) => CliError::usage(what, e)
            .hint("a PostgreSQL ledger is postgres://USER@HOST[:PORT]/DB (or ?host=/socket/dir); see docs/LEDGER.md"),
        L::Storage(S::BadLedgerLocation { .. }) => CliError::usage(what, e)
            .hint("--ledger names a ledger file (made by `world limits init`) or a postgres:// URL; see docs/LEDGER.md"),
        L::Storage(S::SchemaVersion { .. }) => CliError::usage(what, e)
            .hint("use the world release that created this ledger schema, or a fresh schema (docs/LEDGER.md)"),
        L::Storage(S::Postgres { ref source, .. }) if source.is_busy() => {
            CliError::new(Exit::LockHeld, what, e).hint("the ledger is busy; retry later")
        }
        L::Storage(S::Postgres { .. }) => CliError::failed(what, e)
            .hint("nothing was applied: the ledger transaction was rolled back (or never began)"),
        L::Storage(S::Corrupt(_)) => CliError::new(Exit::Integrity, what, e),
        L::Storage(S::Sqlite(ref s)) if s.is_busy() => {
            CliError::new(Exit::LockHeld, what, "the ledger is busy (another writer holds it)")
                .hint("retry later")
        }
        L::Storage(S::Busy { .. }) => CliError::new(Exit::LockHeld, what, e)
            .hint("another process is writing the ledger; retry later (a lock wait is exit 6, docs/LEDGER.md)"),
        L::Storage(ref s) if s.is_read_only() => CliError::failed(what, e).hint(READ_ONLY_LEDGER_HINT),
        e => CliError::failed(what, e),
    }
}

/// The `--json` code of a `--ledger` that names something other than a world ledger.
pub const NOT_A_LEDGER: &str = "not_a_ledger";

/// The error of a `--ledger` that is not a world ledger (exit 2, code `not_a_ledger`, nothing
/// read or written); [`name_ledger`] adds which ledger once the caller knows it.
pub fn not_a_ledger(what: &str, why: &str) -> CliError {
    CliError::usage(what, format!("not a world ledger ({why})"))
        .with_code(NOT_A_LEDGER)
        .hint("--ledger names a ledger file made by `world limits init`, or a PostgreSQL schema holding one (postgres://USER@HOST/DB?options=-csearch_path%3DSCHEMA); name another file or schema (docs/LEDGER.md)")
}

/// Name the ledger in a `not_a_ledger` error: `<location> is not a world ledger (…)`, with
/// the location as [`crate::ledger::location::describe_location`] prints it (it parses back).
///
/// An integrity refusal's "run `world verify --ledger L`" names the same ledger, quoted for the
/// shell so the command can be pasted as printed.
pub fn name_ledger(mut e: CliError, location: Option<&str>) -> CliError {
    const PLACEHOLDER: &str = "`world verify --ledger L`";
    const EITHER: &str =
        "`world verify --ledger L`, or `world verify` for the ledger in the store file";
    if location.is_none() {
        // The ledger inside the store file: its verifier is plain `world verify`.
        e.why = e
            .why
            .replace(EITHER, "`world verify`")
            .replace(PLACEHOLDER, "`world verify`");
    }
    if let Some(l) = location {
        let named = crate::ledger::location::describe_location(l);
        if e.code() == NOT_A_LEDGER && e.why.starts_with("not a world ledger") {
            e.why = format!("{named} is {}", e.why);
        }
        // A named ledger has one verifier: drop the store-file alternative.
        e.why = e.why.replace(EITHER, PLACEHOLDER);
        if e.why.contains(PLACEHOLDER) {
            let cmd = format!(
                "`world verify --ledger {}`",
                crate::ledger::location::location_arg(&named)
            );
            e.why = e.why.replace(PLACEHOLDER, &cmd);
        }
    }
    e
}

/// Why a ledger file this user may only read cannot be read (docs/LEDGER.md "Files").
pub(crate) const READ_ONLY_LEDGER_HINT: &str = "a ledger file is in WAL mode: even `report` and `verify` need write access to it and to its directory (SQLite creates FILE-wal and FILE-shm there); run as the ledger's owner, or copy the ledger (with any FILE-wal) to a directory you may write";

/// The hint of a corrupt mission row in the store file; `world mission` names the ledger's verifier
/// instead when the missions are in a ledger (`world verify` covers the store file; `world verify --ledger L` a ledger).
pub(crate) const VERIFY_HINT: &str = "run `world verify`";

/// A limits ledger rejection (limits.md §6) as the one CLI error (DEC-LEDGER-CLI-1): exit 4,
/// the §5 line `<code> scope=… limit=…: reason` as it is on stderr (then `hint:` lines), and under `--json` the
/// envelope `{"error":{"code":"<snake_case code>","message",…,"exitCode":4,"revision":"N",
/// "scopeId"?,"limit"?,"attemptId"?,"bound"?,"used"?,"requested"?}}` (the §5 members kept
/// inside it). `time_regressed` adds a hint naming the ledger's last recorded time and how to
/// pass a later one; `ledger_not_initialized` how to make a ledger.
pub fn limits_rejection(what: &str, v: &crate::limits::Verdict) -> CliError {
    use crate::limits::Code;
    let mut e = CliError::new(Exit::LimitRejected, what, v.human()).with_code(v.code.as_str());
    if let Ok(serde_json::Value::Object(m)) = serde_json::to_value(v) {
        for (k, val) in m {
            if k != "code" {
                e = e.detail(&k, val);
            }
        }
    }
    if v.code == Code::TimeRegressed {
        if let Some(last) = v.last_now_ms {
            e = e
                .detail("lastNowMs", last.to_string())
                .detail("lastNow", super::output::rfc3339_ms(last.get()))
                .hint(time_regressed_hint(last.get()));
        }
    }
    if v.code == Code::LedgerNotInitialized && v.reason.is_none() {
        e.why = format!("{}: this store file has no limits ledger", v.human());
        e = e.hint(
            "initialise it with `world limits init --config FILE` (or name a ledger with --ledger)",
        );
    }
    // The §5 line is printed as it is (DEC-LEDGER-CLI-1): its text is the spec's.
    e.verbatim = Some(e.why.clone());
    e
}

/// The hint of a `time_regressed` / `TIME_REGRESSED` rejection: the ledger's clock never runs
/// backwards, so name its last recorded time (`last_ms`, Unix ms) and a `--now` it accepts.
pub fn time_regressed_hint(last_ms: u128) -> String {
    format!(
        "the ledger's last recorded time is {} ({last_ms} ms); pass --now {last_ms} or later (RFC 3339 or Unix ms), or leave --now out to use the system clock",
        super::output::rfc3339_ms(last_ms)
    )
}

/// A mission rejection (missions.md §4) as the one CLI error (DEC-LEDGER-CLI-1): exit 4, the
/// seed-shaped line `<CODE> key=value…: reason` as it is on stderr (then `hint:` lines), and under `--json`
/// the envelope `{"error":{"code":"<SCREAMING_CODE>","message",…,"exitCode":4, …the
/// rejection's key/value members, "violation"?, "reason"}}`.
pub fn mission_rejection(what: &str, r: &crate::mission::Rejection) -> CliError {
    let mut e = CliError::new(Exit::LimitRejected, what, r.human()).with_code(r.code.as_str());
    // The seed-shaped line is printed as it is (DEC-LEDGER-CLI-1), byte for byte.
    e.verbatim = Some(r.human());
    if let serde_json::Value::Object(m) = r.to_json() {
        for (k, val) in m {
            if k != "code" {
                e = e.detail(&k, val);
            }
        }
    }
    if r.code == crate::mission::Code::TimeRegressed {
        let last = r
            .details
            .iter()
            .find(|(k, _)| *k == "lastNow")
            .and_then(|(_, v)| v.parse::<u128>().ok());
        if let Some(last) = last {
            e = e.hint(time_regressed_hint(last));
        }
    }
    e
}

/// A mission store error as the CLI reports it (exit codes of docs/LEDGER.md).
pub(crate) fn mission_err(what: &str, e: crate::mission::durable::Error) -> CliError {
    use crate::mission::durable as mstore;
    use crate::ops::classify::Classify;
    if let Some(why) = e.foreign() {
        return not_a_ledger(what, &why);
    }
    match e {
        mstore::Error::Rejected(r) => mission_rejection(what, &r),
        // The same line, code and exit as limits' (a storage `NotInitialized` is limits'
        // `ledger_not_initialized` rejection).
        mstore::Error::Ledger(l) => ledger_err(what, crate::limits::Error::from(*l)),
        mstore::Error::SchemaVersion { .. } => CliError::usage(what, e)
            .hint("use the world release that created this ledger's mission tables, or a fresh schema (docs/LEDGER.md)"),
        mstore::Error::Corrupt(_) => CliError::new(Exit::Integrity, what, e).hint(VERIFY_HINT),
        mstore::Error::Sqlite(ref s) if s.is_busy() => {
            CliError::new(
                Exit::LockHeld,
                what,
                "the store is busy (another writer holds it)",
            )
            .hint("retry later")
        }
        mstore::Error::Sqlite(ref s) if s.is_read_only() => {
            CliError::failed(what, e).hint(READ_ONLY_LEDGER_HINT)
        }
        e => CliError::failed(what, e),
    }
}

#[cfg(test)]
mod cause_tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer failed")]
    struct Outer(#[source] Middle);
    #[derive(Debug, thiserror::Error)]
    #[error("middle: {0}")]
    struct Middle(#[source] std::io::Error);

    #[test]
    fn the_cause_chain_is_printed_once_per_new_cause() {
        let err = Outer(Middle(std::io::Error::other("disk on fire")));
        let e = CliError::caused(Exit::Failed, "commit", &err);
        // "middle: disk on fire" already shows the io error, so it is not repeated.
        assert_eq!(e.causes(), ["middle: disk on fire".to_string()]);
        assert_eq!(
            e.render(),
            "world: commit: outer failed\ncaused by: middle: disk on fire"
        );
    }
}

#[cfg(test)]
mod outcome_tests {
    use super::*;
    use crate::ops::invoke::InvokeError;

    fn outcome_of(e: InvokeError) -> (u8, Option<serde_json::Value>) {
        let err = invoke_err(e);
        let detail = err.extra.as_ref().and_then(|x| {
            x.details
                .iter()
                .find(|(k, _)| k == "outcome")
                .map(|(_, v)| v.clone())
        });
        (err.exit.code(), detail)
    }

    #[test]
    fn an_invocation_that_did_not_commit_names_its_outcome_and_exits_5() {
        let unrecorded = InvokeError::EffectsUnrecorded {
            invocation_id: "cli:ep1:t".into(),
            records: vec!["sha256:00".into()],
            intents: Vec::new(),
            cause: "head moved".into(),
        };
        assert_eq!(
            outcome_of(unrecorded),
            (5, Some("effects-unrecorded".into()))
        );
        assert_eq!(
            outcome_of(InvokeError::NotCommitted("cli:ep1:t".into())),
            (5, Some("indeterminate".into()))
        );
        assert_eq!(outcome_of(InvokeError::Conflict("x".into())).1, None);
    }

    #[test]
    fn every_outcome_has_its_documented_exit_code() {
        use crate::ops::outcome::Outcome;
        let codes: Vec<(&str, u8)> = Outcome::ALL
            .iter()
            .map(|o| (o.as_str(), Exit::from(*o).code()))
            .collect();
        assert_eq!(
            codes,
            [
                ("ok", 0),
                ("refused", 7),
                ("denied", 8),
                ("failed", 9),
                ("indeterminate", 5),
                ("effects-unrecorded", 5)
            ]
        );
        for (name, code) in codes {
            if code != 0 {
                assert!(EXIT_CODES.contains(name), "EXIT_CODES names outcome {name}");
            }
        }
    }
}

/// Map a checkpoint error to its exit code: bad input and keys 1, a log that does not match or
/// a signature that fails 3.
pub(crate) fn trust_err(
    what: &'static str,
) -> impl Fn(crate::ops::checkpoint::TrustError) -> CliError {
    move |e| match e {
        crate::ops::checkpoint::TrustError::Store(s) => CliError::store(what, s),
        crate::ops::checkpoint::TrustError::Key(_)
        | crate::ops::checkpoint::TrustError::Input(_) => CliError::failed(what, e),
        crate::ops::checkpoint::TrustError::Integrity(_) => CliError::new(Exit::Integrity, what, e),
    }
}

/// An approval error: the store's own, exit 3 for a damaged record, exit 2 for bad input,
/// else exit 1.
pub(crate) fn approval_err(what: &str, e: crate::authority::approvals::ApprovalError) -> CliError {
    match e {
        crate::authority::approvals::ApprovalError::Store(s) => CliError::store(what, s),
        crate::authority::approvals::ApprovalError::Corrupt { .. } => CliError::integrity(what, e),
        crate::authority::approvals::ApprovalError::Invalid(_) => CliError::usage(what, e),
        other => CliError::failed(what, other),
    }
}

/// `world serve` could not start: exit 6 when the writer lock is held elsewhere, else exit 2
/// (a flag, a profile or the address was refused); the message verbatim.
pub(crate) fn serve_err(e: &crate::serve::StartupError) -> CliError {
    let exit = if e.lock_held {
        Exit::LockHeld
    } else {
        Exit::Usage
    };
    let mut err = CliError::new(exit, "serve", e);
    err.verbatim = Some(e.to_string());
    err
}
