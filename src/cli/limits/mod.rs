//! `world limits init|reserve|dispatch|settle|reconcile|release|stop|adjust|report`: the nested
//! limits ledger from the command line (limits.md §5, issue 7 parts 2–4).
//!
//! Where the ledger lives (limits.md §7): by default its `limits_*` tables are in the World
//! store file and every verb but `report` takes the store's writer lock; `--ledger FILE` names a
//! standalone ledger database instead (no store lock; the store is then opened read-only, and
//! only when `--session` or `--evidence REF` needs it).
//!
//! Who acts (limits.md §5 "Actor facts in world"): `--session S` makes the actor an AGENT (the
//! credential resolved against the World store); `init` without `--yes`, `adjust` and
//! `reconcile` are attended HUMAN acts (the controlling terminal plus a typed phrase naming the
//! exact change); everything else is the HOST (the operator). Order for an attended act: open
//! the ledger → `tty` fence → dry run as the human (a command the ledger would refuse is
//! reported without asking anybody) → `confirmation` fence → the real command. A fence refusal
//! prints `STOP fence=<name> reason=<reason>`, exits 3 and writes nothing.
//!
//! Output, the convention of every command (DEC-LEDGER-CLI-1): `ok revision=N` (or `exists …`)
//! is the summary on stdout, silenced by `-q`; `--json` prints the §5 object
//! `{"code","revision",…}`, exit 0. A rejection prints the §5 line `<code> scope=<id>
//! limit=<kind> …` on stderr only and exits 4; under `--json` stdout holds the one error
//! envelope `{"error":{"code":"<code>",…,"exitCode":4,"revision",…}}`. Times print as RFC 3339
//! UTC; `--now` takes Unix ms or RFC 3339 (DEC-LEDGER-CLI-2).

mod adjust;
mod dispatch;
mod init;
mod reconcile;
mod release;
mod report;
mod reserve;
mod settle;
mod stop;

pub use self::reserve::ReserveArgs;

use std::path::PathBuf;

use clap::{Args as ClapArgs, Subcommand};
use rusqlite::Connection;

pub use super::error::ledger_err;
use super::output::Output;
use super::{fence, read_input, CliError, Context, Exit};
use crate::authority::session;
use crate::encoding::HashRef;
use crate::ledger::{ActorKind, Amount, AmountError};
use crate::limits::config::{self, MAX_CONFIG_BYTES};
use crate::limits::{
    self, ActorFacts, BoundsPatch, Code, Command, Config, LimitKind, Outcome, Purpose, Request,
    Verdict,
};
use crate::ops::{
    self,
    limits::{FromStore, FromStoreError, Place},
};
use crate::store::Store;

/// Largest `--evidence-file` accepted, bytes.
pub const MAX_EVIDENCE_BYTES: usize = 16 * 1024 * 1024;

/// The ledger verbs.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Load a ledger config (attended; --yes for scripts, recorded as an unattended HOST act)
    Init {
        /// The config file (limits.md §3), canonicalised with TR-CJSON-1
        #[arg(long, value_name = "FILE")]
        config: PathBuf,
        /// Unattended: no terminal, no phrase; recorded with actor kind HOST
        #[arg(long)]
        yes: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Reserve an attempt's maximum cost and active time against a scope and its ancestors
    Reserve(ReserveArgs),
    /// Mark a RESERVED attempt DISPATCHED, before any external call
    Dispatch {
        /// The attempt
        #[arg(long, value_name = "A")]
        attempt: String,
        #[command(flatten)]
        common: Common,
    },
    /// Settle a DISPATCHED attempt: --actual X (SUCCEEDED, or FAILED with --failed) or --unknown
    Settle {
        /// The attempt
        #[arg(long, value_name = "A")]
        attempt: String,
        #[command(flatten)]
        settle: super::common::SettleArgs,
        #[command(flatten)]
        common: Common,
    },
    /// Human settlement of an UNKNOWN attempt (attended; always needs the terminal)
    Reconcile {
        /// The attempt
        #[arg(long, value_name = "A", required_unless_present = "from_store")]
        attempt: Option<String>,
        /// Actual cost attested by the evidence
        #[arg(
            long,
            value_name = "X",
            allow_hyphen_values = true,
            required_unless_present = "from_store"
        )]
        actual: Option<String>,
        /// As the HOST, settle or release every outstanding attempt of this store (--db) in the
        /// standalone --ledger from the store's journal: never-dispatched reservations are
        /// released, journaled outcomes settled; DISPATCHED attempts without an outcome are kept
        /// for an attended reconcile (exit 5 while any remain). Takes the store's writer lock
        #[arg(long, conflicts_with_all = ["attempt", "actual", "evidence", "evidence_file"])]
        from_store: bool,
        #[command(flatten)]
        evidence: Evidence,
        #[command(flatten)]
        common: Common,
    },
    /// Free a RESERVED attempt (a DISPATCHED one can only be settled)
    Release {
        /// The attempt
        #[arg(long, value_name = "A")]
        attempt: String,
        #[command(flatten)]
        common: Common,
    },
    /// Stop a scope's subtree: freezes time, keeps exposure, blocks reserve and dispatch
    Stop {
        /// The scope
        #[arg(long, value_name = "S")]
        scope: String,
        /// Why (recorded with the event)
        #[arg(long, value_name = "TEXT")]
        reason: String,
        #[command(flatten)]
        evidence: Evidence,
        #[command(flatten)]
        common: Common,
    },
    /// Change bounds or lift a stop (attended; always needs the terminal and evidence)
    Adjust {
        /// The scope
        #[arg(long, value_name = "S")]
        scope: String,
        /// KIND=VALUE or KIND=null (cost, handoff, activeMs, elapsedMs, attempts); repeatable
        #[arg(
            long = "set",
            value_name = "KIND=VALUE|null",
            allow_hyphen_values = true
        )]
        set: Vec<String>,
        /// Lift a stop on this scope
        #[arg(long)]
        resume: bool,
        #[command(flatten)]
        evidence: Evidence,
        #[command(flatten)]
        common: Common,
    },
    /// Blocked scopes, dependents, usage, outstanding and unknown attempts, violations (read-only)
    Report {
        /// Only this scope and its subtree
        #[arg(long, value_name = "S")]
        scope: Option<String>,
        /// The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the
        /// system clock
        #[arg(long, value_name = "MS|RFC3339", allow_hyphen_values = true)]
        now: Option<String>,
        /// A standalone ledger (a file, or postgres://user@host/db) instead of the tables in
        /// the store file
        #[arg(
            long,
            value_name = "FILE|URL",
            env = "WORLD_LEDGER",
            hide_env_values = true
        )]
        ledger: Option<String>,
    },
}

/// Flags every writing verb takes (limits.md §5 "Common flags").
#[derive(ClapArgs, Debug, Clone, Default)]
pub struct Common {
    /// Idempotency key (default: random, so no idempotency); a retry with the same id and
    /// command answers `exists`
    #[arg(long, value_name = "R")]
    pub request_id: Option<String>,
    /// Refuse (revision_mismatch) unless the ledger is at revision N
    #[arg(long, value_name = "N")]
    pub expected_revision: Option<u64>,
    /// Act as the AGENT holding this session (a token file, or the token); default: the HOST
    #[arg(long, value_name = "FILE")]
    pub session: Option<String>,
    /// The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system
    /// clock; never earlier than the ledger's last recorded time
    #[arg(long, value_name = "MS|RFC3339", allow_hyphen_values = true)]
    pub now: Option<String>,
    /// A standalone ledger (a file, or postgres://user@host/db) instead of the tables in the
    /// store file
    #[arg(
        long,
        value_name = "FILE|URL",
        env = "WORLD_LEDGER",
        hide_env_values = true
    )]
    pub ledger: Option<String>,
}

/// `--evidence REF | --evidence-file F` (required by adjust and reconcile: evidence_required).
#[derive(ClapArgs, Debug, Clone, Default)]
pub struct Evidence {
    /// A sha256: ref of an object in the World store (re-hashed before use)
    #[arg(long, value_name = "REF", conflicts_with = "evidence_file")]
    pub evidence: Option<String>,
    /// A file hashed on the spot (stored as a world/limits-evidence/v1 object when the ledger
    /// is in the store file)
    #[arg(long, value_name = "F")]
    pub evidence_file: Option<PathBuf>,
}

/// A `--purpose` that is neither `ordinary` nor `handoff` (any case).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not ordinary or handoff")]
struct BadPurpose(String);

fn parse_purpose(text: &str) -> Result<Purpose, BadPurpose> {
    Purpose::parse(text).ok_or_else(|| BadPurpose(text.to_owned()))
}

/// Parse `--now` — Unix milliseconds (a canonical decimal, `1700000000000`) or an RFC 3339
/// time (`2023-11-14T22:13:20Z`, `2023-11-14T22:13:20.250+01:00`) — into Unix milliseconds,
/// or read the system clock. The one `--now` of `world limits` and `world mission`.
///
/// # Errors
/// A usage error (exit 2) naming the bad value, or a time more than 24 h ahead of the system
/// clock (the ledger would then refuse every later real-clock command, issue 13 §7).
pub fn parse_now(text: Option<&str>) -> Result<u128, CliError> {
    let clock = crate::clock::Clock::System.now_ms();
    let Some(t) = text else {
        return Ok(clock);
    };
    let now = super::output::parse_time_ms(t).ok_or_else(|| {
        CliError::usage(
            "--now",
            format!("{t:?} is neither Unix milliseconds (e.g. 1700000000000) nor an RFC 3339 time (e.g. 2023-11-14T22:13:20Z)"),
        )
    })?;
    if now > clock + MAX_NOW_AHEAD_MS {
        return Err(CliError::usage(
            "--now",
            format!(
                "{t} ({}) is more than 24 h ahead of the system clock ({}); the ledger would refuse every later real-clock command",
                super::output::rfc3339_ms(now),
                super::output::rfc3339_ms(clock)
            ),
        ));
    }
    Ok(now)
}

/// How far `--now` may run ahead of the system clock, in milliseconds (24 h).
pub const MAX_NOW_AHEAD_MS: u128 = 86_400_000;

/// The login for `human:<login>` and `host:<login>`: `USER`, else `LOGNAME`, else `unknown`.
pub fn login() -> String {
    let ok = |v: &String| !v.is_empty() && !v.chars().any(|c| c.is_whitespace() || c.is_control());
    ["USER", "LOGNAME"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .find(ok)
        .or_else(|| passwd_name().filter(ok))
        .unwrap_or_else(|| "unknown".to_string())
}

/// The login name of the real uid from the password database (`getpwuid_r`), when it has one.
fn passwd_name() -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 4096];
    // SAFETY: getpwuid_r writes one passwd into `pw`, its strings into `buf` (whose length we
    // pass), and `result` points at `pw` or is null; nothing is kept past this call.
    unsafe {
        let mut pw: libc::passwd = std::mem::zeroed();
        let mut result: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwuid_r(
            libc::getuid(),
            &mut pw,
            buf.as_mut_ptr(),
            buf.len(),
            &mut result,
        );
        if rc != 0 || result.is_null() || pw.pw_name.is_null() {
            return None;
        }
        std::ffi::CStr::from_ptr(pw.pw_name)
            .to_str()
            .ok()
            .map(str::to_string)
    }
}

/// A fresh request id (`cli-` + 32 hex): no two invocations share it, so no idempotency.
fn random_request_id() -> Result<String, CliError> {
    let mut b = [0u8; 16];
    getrandom::getrandom(&mut b)
        .map_err(|e| CliError::failed("limits", format!("random request id: {e}")))?;
    Ok(format!("cli-{}", hex::encode(b)))
}

/// `invoke`, `serve` and `mcp --ledger`: refuse, before anything starts, a ledger file that is
/// missing or empty (exit 4, `ledger_not_initialized` naming the path; nothing created).
///
/// # Errors
/// The refusal as a [`CliError`] with [`Exit::LimitRejected`].
pub fn check_ledger_flag(what: &str, ledger: Option<&str>) -> Result<(), CliError> {
    match ledger.map(limits::check_ledger_location) {
        Some(Err(limits::Error::Rejected(v))) => Err(super::error::limits_rejection(what, &v)),
        Some(Err(e)) => Err(ledger_err(what, e)),
        _ => Ok(()),
    }
}

/// Open the ledger for a writing verb: the store file under its writer lock, or `--ledger`.
/// Only `init` (`create`) may create a ledger file; for the others a missing or empty file is
/// the inner `ledger_not_initialized` verdict naming the path (exit 4, nothing created).
fn open_place_write(
    ctx: &Context,
    ledger: Option<&str>,
    what: &str,
    create: bool,
) -> Result<Result<Place, Box<Verdict>>, CliError> {
    match ledger {
        Some(p) => {
            let opened = if create {
                limits::create_standalone_ledger(p)
            } else {
                limits::open_standalone_ledger(p)
            };
            match opened {
                Ok(l) => Ok(Ok(Place::Standalone(l))),
                Err(limits::Error::Rejected(v)) => Ok(Err(v)),
                Err(e) => Err(ledger_err(what, e)),
            }
        }
        None => ctx.open_write(false).map(|s| Ok(Place::Store(s))),
    }
}

/// The verdict of `what`: `ok`/`exists` is the command's summary (`ok revision=N` on stdout,
/// nothing under `-q`; `--json`: the §5 object `{"code","revision",…}`, exit 0); any other
/// code is the rejection error of [`super::error::limits_rejection`] (exit 4, stderr, the one
/// `{"error":{…}}` envelope under `--json`; DEC-LEDGER-CLI-1).
fn emit(out: &mut Output, what: &str, v: &Verdict) -> Result<Exit, CliError> {
    if !v.code.is_success() {
        return Err(super::error::limits_rejection(what, v));
    }
    if out.json {
        out.json_line(v)?;
    } else {
        out.summary(v.human())?;
    }
    Ok(Exit::Success)
}

/// Parse a user amount; the error is the ledger's `amount_invalid` / `overflows_amount`
/// verdict at the current revision.
fn amount(place: &Place, text: &str) -> Result<Amount, Box<Verdict>> {
    Amount::parse(text).map_err(|e: AmountError| {
        Box::new(Verdict::from_amount_error(&e, place.revision()).because(format!("{text:?}: {e}")))
    })
}

/// The evidence of one command: a ref to check against the store, or a file hashed here.
struct EvidenceInput {
    /// The `evidenceRef` text passed to the ledger.
    reference: Option<String>,
    /// The file's bytes and ref, when `--evidence-file` was given.
    file: Option<(HashRef, Vec<u8>)>,
}

impl EvidenceInput {
    fn read(ev: &Evidence, what: &str) -> Result<EvidenceInput, CliError> {
        if let Some(f) = &ev.evidence_file {
            let bytes = read_input(f, MAX_EVIDENCE_BYTES, what)?;
            let r = HashRef::of(&bytes);
            return Ok(EvidenceInput {
                reference: Some(r.to_string()),
                file: Some((r, bytes)),
            });
        }
        Ok(EvidenceInput {
            reference: ev.evidence.clone(),
            file: None,
        })
    }
}

/// How the actor of a writing verb is established.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Attendance {
    /// HOST, or AGENT with `--session`.
    Operator,
    /// `init --yes`: HOST, recorded unattended.
    Unattended,
    /// An attended HUMAN act: the tty fence and a typed phrase.
    Attended,
}

/// Everything one writing verb needs once its arguments are parsed.
struct Job<'a> {
    what: &'static str,
    common: &'a Common,
    command: Command,
    attendance: Attendance,
    evidence: Option<EvidenceInput>,
}

/// Run `world limits …`.
pub fn run(ctx: &Context, out: &mut Output, cmd: Cmd) -> Result<Exit, CliError> {
    let location = match &cmd {
        Cmd::Report { ledger, .. } => ledger.clone(),
        Cmd::Reserve(a) => a.common.ledger.clone(),
        Cmd::Init { common, .. }
        | Cmd::Dispatch { common, .. }
        | Cmd::Settle { common, .. }
        | Cmd::Reconcile { common, .. }
        | Cmd::Release { common, .. }
        | Cmd::Stop { common, .. }
        | Cmd::Adjust { common, .. } => common.ledger.clone(),
    };
    run_verb(ctx, out, cmd).map_err(|e| super::error::name_ledger(e, location.as_deref()))
}

fn run_verb(ctx: &Context, out: &mut Output, cmd: Cmd) -> Result<Exit, CliError> {
    match cmd {
        Cmd::Report { scope, now, ledger } => report::run(
            ctx,
            out,
            scope.as_deref(),
            now.as_deref(),
            ledger.as_deref(),
        ),
        Cmd::Init {
            config,
            yes,
            common,
        } => init::run(ctx, out, config, yes, common),
        Cmd::Reserve(a) => reserve::run(ctx, out, a),
        Cmd::Dispatch { attempt, common } => dispatch::run(ctx, out, attempt, common),
        Cmd::Settle {
            attempt,
            settle,
            common,
        } => settle::run(ctx, out, attempt, settle, common),
        Cmd::Release { attempt, common } => release::run(ctx, out, attempt, common),
        Cmd::Stop {
            scope,
            reason,
            evidence,
            common,
        } => stop::run(ctx, out, scope, reason, evidence, common),
        Cmd::Reconcile {
            from_store: true,
            common,
            ..
        } => reconcile::from_store(ctx, out, &common),
        Cmd::Reconcile {
            attempt,
            actual,
            evidence,
            common,
            ..
        } => reconcile::run(ctx, out, attempt, actual, evidence, common),
        Cmd::Adjust {
            scope,
            set,
            resume,
            evidence,
            common,
        } => adjust::run(ctx, out, scope, set, resume, evidence, common),
    }
}

fn operator(
    ctx: &Context,
    out: &mut Output,
    place: &Place,
    what: &'static str,
    common: &Common,
    command: Command,
    evidence: Option<EvidenceInput>,
) -> Result<Exit, CliError> {
    let job = Job {
        what,
        common,
        command,
        attendance: Attendance::Operator,
        evidence,
    };
    execute(ctx, out, place, job)
}

/// Parse `--set KIND=VALUE|null …`: an unknown kind, a missing `=` or a repeated kind is a
/// usage error (outer `Err`); a bad amount is the ledger's verdict (inner `Err`).
fn parse_patch(
    place: &Place,
    set: &[String],
) -> Result<Result<BoundsPatch, Box<Verdict>>, CliError> {
    let mut patch = BoundsPatch::default();
    for item in set {
        let Some((k, v)) = item.split_once('=') else {
            return Err(CliError::usage(
                "--set",
                format!("{item:?} is not KIND=VALUE or KIND=null"),
            ));
        };
        let Some(kind) = LimitKind::parse(k) else {
            let kinds: Vec<&str> = LimitKind::ALL.iter().map(|k| k.as_str()).collect();
            return Err(CliError::usage(
                "--set",
                format!("unknown limit kind {k:?}; one of {}", kinds.join(", ")),
            ));
        };
        if patch.get(kind).is_some() {
            return Err(CliError::usage(
                "--set",
                format!("{} is set more than once", kind.as_str()),
            ));
        }
        let value = if v == "null" {
            None
        } else {
            match amount(place, v) {
                Ok(a) => Some(a),
                Err(verdict) => return Ok(Err(verdict)),
            }
        };
        patch.set(kind, value);
    }
    Ok(Ok(patch))
}

/// The World store connection for `--session` and `--evidence REF`: the open store, or (with a
/// standalone ledger) a read-only open of `--db` when something needs it.
fn store_conn<'a>(
    ctx: &Context,
    place: &'a Place,
    read_only: &'a mut Option<Store>,
    needed: bool,
) -> Result<Option<&'a Connection>, CliError> {
    match place {
        Place::Store(s) => Ok(Some(s.conn())),
        Place::Standalone(_) if needed => {
            let s = ctx.open_read()?;
            Ok(Some(read_only.insert(s).conn()))
        }
        Place::Standalone(_) => Ok(None),
    }
}

/// Establish the actor facts of an operator (HOST or AGENT) at `now_ms`.
fn operator_actor(
    ctx: &Context,
    out: &mut Output,
    conn: Option<&Connection>,
    session_arg: Option<&str>,
    now_ms: u128,
) -> Result<ActorFacts, CliError> {
    let Some(value) = session_arg else {
        return Ok(ActorFacts::new(
            ActorKind::Host,
            &format!("host:{}", login()),
            now_ms,
        ));
    };
    let conn = conn.ok_or_else(|| CliError::failed("session", "no World store to resolve it"))?;
    let input = session::read_token(value, true).map_err(crate::cli::error::session_err)?;
    if let Some(w) = &input.warning {
        out.warn(w);
    }
    // An unknown, revoked or expired credential is an authentication failure, refused here
    // like `invoke` and `mission` refuse it, not `allowed=false` facts (DEC-ARCH-11).
    let s = session::agent(conn, &input.token, ctx.now(), session::Unattested::Refuse)
        .map_err(crate::cli::error::session_err)?;
    Ok(ActorFacts::agent(&s.credential_id, &s.episode, now_ms))
}

/// The phrase a human types to confirm `command` (limits.md §5 "Actor facts in world").
fn phrase(command: &Command) -> Result<String, CliError> {
    let hex12 = |r: &HashRef| -> String {
        let s = r.to_string();
        s.strip_prefix("sha256:")
            .unwrap_or(&s)
            .chars()
            .take(12)
            .collect()
    };
    match command {
        Command::Init { config: raw } => {
            let cfg = Config::parse(raw).map_err(|e| CliError::failed("limits init", e))?;
            let r = config::config_ref(raw).map_err(|e| CliError::failed("limits init", e))?;
            Ok(format!("init {} {}", cfg.ledger_id, hex12(&r)))
        }
        Command::Adjust { scope_id, .. } => {
            let r = command
                .change_ref()
                .ok_or_else(|| CliError::failed("limits adjust", "no change ref"))?;
            Ok(format!("adjust {scope_id} {}", hex12(&r)))
        }
        Command::Reconcile { attempt_id, .. } => Ok(format!("reconcile {attempt_id}")),
        Command::Reserve { attempt_id, .. }
        | Command::Dispatch { attempt_id }
        | Command::Settle { attempt_id, .. }
        | Command::Release { attempt_id, .. } => Ok(format!("{} {attempt_id}", command.name())),
        Command::Stop { scope_id, .. } => Ok(format!("stop {scope_id}")),
    }
}

/// The effective bound of `kind` for scope `id` in a config: its own, or the nearest
/// ancestor's (null bounds inherit, limits.md §3), with the ancestor's id when inherited.
fn config_bound<'a>(
    c: &'a Config,
    id: &'a str,
    kind: LimitKind,
) -> (Option<Amount>, Option<&'a str>) {
    let mut at = Some(id);
    let mut inherited = None;
    let mut hops = 0;
    while let (Some(sid), true) = (at, hops <= c.scopes.len()) {
        let Some(sc) = c.scopes.iter().find(|s| s.scope_id == sid) else {
            break;
        };
        if let Some(a) = sc.limits.get(kind) {
            return (Some(a), inherited);
        }
        at = sc.parent_id.as_deref();
        inherited = at;
        hops += 1;
    }
    (None, None)
}

/// A bound for people: `cost≤100`, `cost≤100 (inherited from wo)`, `cost unbounded`.
fn bound_text(kind: LimitKind, bound: Option<Amount>, from: Option<&str>) -> String {
    match (bound, from) {
        (Some(a), Some(p)) => format!("{}≤{a} (inherited from {p})", kind.as_str()),
        (Some(a), None) => format!("{}≤{a}", kind.as_str()),
        (None, _) => format!("{} unbounded", kind.as_str()),
    }
}

/// What the human is asked to confirm, shown above the phrase: every number being approved.
/// `init` lists each scope's bounds (an inherited bound named as inherited, with its value);
/// `adjust` each changed bound as `before → after` (effective bounds at `report`'s time);
/// `reconcile` the attempt's reserved amount, the actual cost and the evidence hash. `report`
/// is the ledger's report just before asking (`None` when it could not be read).
fn describe(command: &Command, ledger: &str, report: Option<&limits::report::Report>) -> String {
    let scope_of = |id: &str| report.and_then(|r| r.scopes.iter().find(|s| s.scope_id == id));
    match command {
        Command::Init { config } => match config::Config::parse(config) {
            Ok(c) => {
                let mut text = format!(
                    "load config {} (ledger {}, unit {}) into the limits ledger in {ledger}, with {} scope(s):",
                    c.config_ref,
                    c.ledger_id,
                    c.unit,
                    c.scopes.len()
                );
                for sc in &c.scopes {
                    let bounds: Vec<String> = LimitKind::ALL
                        .iter()
                        .map(|k| {
                            let (b, from) = config_bound(&c, &sc.scope_id, *k);
                            bound_text(*k, b, from)
                        })
                        .collect();
                    text.push_str(&format!(
                        "\n  {} {}{}: {}{}",
                        sc.kind.as_str(),
                        sc.scope_id,
                        sc.parent_id
                            .as_deref()
                            .map(|p| format!(" (under {p})"))
                            .unwrap_or_default(),
                        bounds.join(", "),
                        if sc.depends_on.is_empty() {
                            String::new()
                        } else {
                            format!("; waits for {}", sc.depends_on.join(", "))
                        }
                    ));
                }
                text
            }
            Err(_) => format!("load this config into the limits ledger in {ledger}"),
        },
        Command::Adjust {
            scope_id,
            limits,
            resume,
            evidence_ref,
        } => {
            let before = scope_of(scope_id);
            let show = |a: Option<Amount>| a.map_or("unbounded".to_string(), |a| a.to_string());
            let mut parts: Vec<String> = LimitKind::ALL
                .iter()
                .filter_map(|k| {
                    limits.get(*k).map(|v| {
                        let was = match before {
                            Some(s) => show(s.bounds.get(*k)),
                            None => "?".to_string(),
                        };
                        let now = match v {
                            Some(a) => a.to_string(),
                            None => "null (inherit)".to_string(),
                        };
                        format!("{} {was} → {now}", k.as_str())
                    })
                })
                .collect();
            if *resume {
                parts.push(match before {
                    Some(s) if s.stopped => "resume (lift the stop)".into(),
                    _ => "resume".into(),
                });
            }
            format!(
                "change scope {scope_id} in the limits ledger in {ledger}:\n  {}\n  evidence {}",
                parts.join("\n  "),
                evidence_ref.as_deref().unwrap_or("(none)")
            )
        }
        Command::Reconcile {
            attempt_id,
            actual_cost,
            evidence_ref,
        } => {
            let held = report.and_then(|r| {
                r.unknown
                    .iter()
                    .find(|a| &a.attempt_id == attempt_id)
                    .map(|a| (a.scope_id.clone(), a.state, a.amount))
                    .or_else(|| {
                        r.outstanding
                            .iter()
                            .find(|a| &a.attempt_id == attempt_id)
                            .map(|a| (a.scope_id.clone(), a.state, a.amount))
                    })
            });
            let reserved = match &held {
                Some((scope, state, amount)) => {
                    let freed = amount.get().saturating_sub(actual_cost.get());
                    format!(
                        "\n  scope {scope}, state {state}\n  reserved {amount} → actual {actual_cost} (frees {freed})"
                    )
                }
                None => format!("\n  actual {actual_cost}"),
            };
            format!(
                "settle attempt {attempt_id} in the limits ledger in {ledger}:{reserved}\n  evidence {}",
                evidence_ref.as_deref().unwrap_or("(none)")
            )
        }
        other => format!("{} in the limits ledger in {ledger}", other.name()),
    }
}

fn execute(ctx: &Context, out: &mut Output, place: &Place, job: Job<'_>) -> Result<Exit, CliError> {
    let what = job.what;
    let now_ms = parse_now(job.common.now.as_deref())?;
    let request = Request {
        request_id: match &job.common.request_id {
            Some(r) => r.clone(),
            None => random_request_id()?,
        },
        expected_revision: job.common.expected_revision,
        command: job.command,
        system_clock: job.common.now.is_none(),
    };
    let evidence_ref_given = job
        .evidence
        .as_ref()
        .is_some_and(|e| e.reference.is_some() && e.file.is_none());
    let mut read_only = None;
    let needs_store = job.common.session.is_some() || evidence_ref_given;
    let conn = store_conn(ctx, place, &mut read_only, needs_store)?;
    let file = job.evidence.as_ref().and_then(|e| e.file.as_ref());
    let ledger_name = place.describe();
    let run = |actor: &ActorFacts, dry_run: bool| {
        ops::limits::apply(
            place,
            &ops::limits::Options {
                request: &request,
                actor,
                now_ms,
                evidence_file: file,
                evidence_store: conn,
                dry_run,
            },
        )
    };

    let actor = if job.attendance == Attendance::Attended && job.common.session.is_none() {
        // The tty fence first: without a controlling terminal nothing else happens.
        let mut tty = fence::open_tty()
            .map_err(|_| CliError::fence("limits", "tty", Some("no-controlling-terminal"), ""))?;
        let mut human = ActorFacts::new(ActorKind::Human, &format!("human:{}", login()), now_ms);
        human.policy_ref = Some("attended:/dev/tty".into());
        // Dry run as the human: a command the ledger would refuse is reported unconfirmed.
        match run(&human, true) {
            Ok(v) if v.code == Code::Exists => return emit(out, what, &v),
            Ok(_) => {}
            Err(limits::Error::Rejected(v)) => return emit(out, what, &v),
            Err(e) => return Err(ledger_err(what, e)),
        }
        let words = phrase(&request.command)?;
        out.flush()?;
        let report = match place {
            Place::Store(s) => limits::Ledger::open_in(s.conn()).report(now_ms, None).ok(),
            Place::Standalone(l) => l.report(now_ms, None).ok(),
        };
        let prompt = format!(
            "About to {}.\nType exactly, to confirm as {}:\n  {words}\n> ",
            describe(&request.command, &ledger_name, report.as_ref()),
            human.actor_id
        );
        tty.confirm("limits", &prompt, &words)?;
        human
    } else if job.attendance == Attendance::Unattended && job.common.session.is_none() {
        let mut host = ActorFacts::new(ActorKind::Host, &format!("host:{}", login()), now_ms);
        host.policy_ref = Some("unattended:--yes".into());
        host
    } else {
        operator_actor(ctx, out, conn, job.common.session.as_deref(), now_ms)?
    };

    match run(&actor, false) {
        Ok(v) => emit(out, what, &v),
        Err(limits::Error::Rejected(v)) => emit(out, what, &v),
        Err(e) => Err(ledger_err(what, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn purpose_is_case_insensitive_and_refuses_others() {
        assert_eq!(parse_purpose("ordinary"), Ok(Purpose::Ordinary));
        assert_eq!(parse_purpose("HANDOFF"), Ok(Purpose::Handoff));
        assert_eq!(parse_purpose("Handoff"), Ok(Purpose::Handoff));
        assert!(parse_purpose("urgent").is_err());
    }

    #[test]
    fn now_parses_milliseconds_or_rfc3339() {
        assert_eq!(parse_now(Some("0")).ok(), Some(0));
        assert_eq!(
            parse_now(Some("1700000000000")).ok(),
            Some(1_700_000_000_000)
        );
        assert_eq!(
            parse_now(Some("2023-11-14T22:13:20.250Z")).ok(),
            Some(1_700_000_000_250)
        );
        for bad in ["-1", "01", "1.5", "1e3", "", "2023-11-14"] {
            let e = parse_now(Some(bad)).err().map(|e| e.exit);
            assert_eq!(e, Some(Exit::Usage), "{bad}");
        }
        assert!(parse_now(None).is_ok_and(|n| n > 1_600_000_000_000));
    }

    #[test]
    fn patch_parses_kinds_values_and_null() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file = dir.path().join("ledger.db");
        let place = Place::Standalone(
            limits::create_standalone_ledger(&file.display().to_string())
                .unwrap_or_else(|e| panic!("{e}")),
        );
        let set = vec!["cost=120".to_string(), "handoff=null".to_string()];
        let p = parse_patch(&place, &set)
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        assert_eq!(p.get(LimitKind::Cost), Some(Some(Amount(120))));
        assert_eq!(p.get(LimitKind::Handoff), Some(None));
        assert_eq!(p.get(LimitKind::Attempts), None);

        let usage = |items: &[&str]| {
            let v: Vec<String> = items.iter().map(|s| s.to_string()).collect();
            parse_patch(&place, &v).err().map(|e| e.exit)
        };
        assert_eq!(usage(&["cost"]), Some(Exit::Usage));
        assert_eq!(usage(&["speed=1"]), Some(Exit::Usage));
        assert_eq!(usage(&["cost=1", "cost=2"]), Some(Exit::Usage));

        let bad = vec!["cost=01".to_string()];
        let v = parse_patch(&place, &bad).ok().and_then(Result::err);
        assert_eq!(v.map(|v| v.code), Some(Code::AmountInvalid));
        let huge = vec![format!("cost={}", u128::MAX).replace("455", "456")];
        let v = parse_patch(&place, &huge).ok().and_then(Result::err);
        assert_eq!(v.map(|v| v.code), Some(Code::OverflowsAmount));
    }

    #[test]
    fn phrases_name_the_exact_change() {
        let raw = include_bytes!("../../../fixtures/limits/example.json").to_vec();
        let r = config::config_ref(&raw).unwrap_or_else(|e| panic!("{e}"));
        let hex = r.to_string();
        let init = phrase(&Command::Init { config: raw }).unwrap_or_default();
        assert_eq!(init, format!("init guide {}", &hex[7..19]));

        let mut limits = BoundsPatch::default();
        limits.set(LimitKind::Cost, Some(Amount(150)));
        let adjust = Command::Adjust {
            scope_id: "wo".into(),
            limits,
            resume: false,
            evidence_ref: None,
        };
        let change = adjust
            .change_ref()
            .map(|r| r.to_string())
            .unwrap_or_default();
        assert_eq!(
            phrase(&adjust).unwrap_or_default(),
            format!("adjust wo {}", &change[7..19])
        );
        // A different change gives a different phrase.
        let mut other = BoundsPatch::default();
        other.set(LimitKind::Cost, Some(Amount(151)));
        let adjust2 = Command::Adjust {
            scope_id: "wo".into(),
            limits: other,
            resume: false,
            evidence_ref: None,
        };
        assert_ne!(phrase(&adjust).ok(), phrase(&adjust2).ok());
        let rec = Command::Reconcile {
            attempt_id: "a1".into(),
            actual_cost: Amount(5),
            evidence_ref: None,
        };
        assert_eq!(phrase(&rec).unwrap_or_default(), "reconcile a1");
    }
}
