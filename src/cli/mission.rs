//! `world mission create|apply|start-run|grant|admit|dispatch|settle|release|reconcile|approve|
//! revoke|complete-run|report|list|log`: finite-v1 missions from the command line (missions.md
//! §6, issue 15 part 3).
//!
//! Where the missions live: by default in the World store file (writers take the store's writer
//! lock and run each command in one `BEGIN IMMEDIATE` transaction); with `--ledger FILE|URL`
//! (or `WORLD_LEDGER`) in a standalone ledger made by `world limits init` — a SQLite ledger
//! file or PostgreSQL (issue 18 §2, `crate::mission::ledger`) — with no store lock; the store
//! is then opened read-only, and only when `--session`, `--evidence REF` or `--criterion` needs
//! it. Either way the journal row, the state rows and the outbox intent of one command commit
//! or roll back together. The flag
//! forms build the seed's command JSON and parse it with the same [`Command::parse`] as
//! `apply`, so both paths produce exactly the same command objects.
//!
//! Who acts: the HOST (`host:<login>`) by default; `--session S` makes it the AGENT of a session
//! minted with `--mission M` (its subject is the bound grant's subject); `reconcile` and
//! `approve` are always HUMAN acts at the controlling terminal (typed phrase `reconcile <M>
//! <attemptId>` / `approve <M> <operationId>`), and `create` is one unless `--yes` (recorded
//! as unattended). An attended act first dry-runs the command (a rejection is reported without
//! asking anybody); without a terminal it prints `STOP fence=tty
//! reason=no-controlling-terminal`, exits 3 and writes nothing.
//!
//! Output, the convention of every command (DEC-LEDGER-CLI-1): `OK revision=N seq=S` is the
//! summary on stdout, silenced by `-q` (`--json`: the result object), exit 0; a rejection
//! prints the seed-shaped `<CODE> key=value …: reason` on stderr only and exits 4 (`--json`:
//! the one envelope `{"error":{"code":"<CODE>",…,"exitCode":4,…members}}` on stdout). Times
//! print as RFC 3339 UTC; `--now` takes Unix ms or RFC 3339 (DEC-LEDGER-CLI-2).

use std::path::{Path, PathBuf};

use clap::{Args as ClapArgs, Subcommand};
use rusqlite::Connection;
use serde_json::{json, Value};

pub(crate) use super::error::mission_err as store_err;
use super::error::VERIFY_HINT;
use super::output::{rfc3339_ms, Output};
use super::{fence, read_input, CliError, Context, Exit};
use crate::authority::session;
use crate::encoding::HashRef;
use crate::ledger::EvidenceKind;
use crate::ledger::{ActorKind, Amount};
use crate::mission::durable::{self as mstore, MissionStore, Request};
use crate::mission::{
    self, Actor, AttemptStatus, Code, Command, Contract, Rejection, State, MAX_JSON_BYTES,
};
use crate::ops::{self, mission::Place as Target};
use crate::store::Store;
use crate::store::{self, Object};

/// Largest `--evidence-file`, bytes.
pub const MAX_EVIDENCE_BYTES: usize = 16 * 1024 * 1024;
/// Largest `--commands` file, bytes.
pub const MAX_COMMANDS_BYTES: usize = 64 * 1024 * 1024;
/// How far ahead of the system clock `--now` may be, ms (missions.md §4.2 "Clock").
pub const MAX_NOW_AHEAD_MS: u128 = super::limits::MAX_NOW_AHEAD_MS;

/// `world mission [--ledger FILE|URL] VERB …`.
#[derive(ClapArgs, Debug)]
pub struct Args {
    /// A standalone ledger holding the missions (a file made by `world limits init`, or
    /// postgres://user@host/db) instead of the store file
    #[arg(
        long,
        value_name = "FILE|URL",
        env = "WORLD_LEDGER",
        hide_env_values = true,
        global = true
    )]
    pub ledger: Option<String>,
    /// The verb
    #[command(subcommand)]
    pub cmd: Cmd,
}

/// The mission verbs.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Store a new mission from a contract (attended; --yes for scripts, recorded as unattended)
    Create {
        /// The contract JSON (missions.md §2)
        #[arg(long, value_name = "FILE")]
        contract: PathBuf,
        /// Unattended: no terminal, no phrase; recorded as unattended
        #[arg(long)]
        yes: bool,
        /// The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the
        /// system clock
        #[arg(long, value_name = "MS|RFC3339", allow_hyphen_values = true)]
        now: Option<String>,
    },
    /// Apply the seed's command JSON: one (--command FILE, - for stdin) or a JSON-lines file
    Apply {
        /// The mission id
        mission: String,
        /// One command JSON (`-` = stdin)
        #[arg(
            long,
            value_name = "FILE",
            conflicts_with = "commands",
            required_unless_present = "commands"
        )]
        command: Option<PathBuf>,
        /// One command per line; all are parsed first, then applied in order, stopping at the first rejection
        #[arg(long, value_name = "FILE.jsonl")]
        commands: Option<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
    /// startRun: a new ACTIVE run
    StartRun {
        /// The mission id
        mission: String,
        /// Run id
        #[arg(long, value_name = "R")]
        run: String,
        #[command(flatten)]
        common: Common,
    },
    /// grant: a root grant, or a delegation with --parent (attenuation only)
    Grant {
        /// The mission id
        mission: String,
        /// Grant id
        #[arg(long, value_name = "G")]
        id: String,
        /// The parent grant (a delegation)
        #[arg(long, value_name = "P")]
        parent: Option<String>,
        /// Who may act under the grant
        #[arg(long, value_name = "S")]
        subject: String,
        /// A capability (repeatable)
        #[arg(long = "action", value_name = "A", required = true)]
        actions: Vec<String>,
        /// A resource (repeatable)
        #[arg(long = "resource", value_name = "X", required = true)]
        resources: Vec<String>,
        /// Live from (inclusive): Unix ms or RFC 3339, as --now
        #[arg(
            long,
            value_name = "TIME",
            default_value = "0",
            allow_hyphen_values = true
        )]
        not_before: String,
        /// Live until (exclusive): Unix ms or RFC 3339, as --now
        #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
        expires_at: String,
        /// Ceiling on the chain's share of reserved + settled
        #[arg(long, value_name = "N", allow_hyphen_values = true)]
        limit: String,
        /// The subject may delegate
        #[arg(long)]
        can_delegate: bool,
        /// Remaining delegation depth
        #[arg(
            long,
            value_name = "N",
            default_value = "0",
            allow_hyphen_values = true
        )]
        depth: String,
        #[command(flatten)]
        common: Common,
    },
    /// admit: reserve an attempt's maximum exposure against the mission and the grant chain
    Admit {
        /// The mission id
        mission: String,
        /// Run id
        #[arg(long, value_name = "R")]
        run: String,
        /// Operation id (retries share it)
        #[arg(long, value_name = "O")]
        operation: String,
        /// Attempt id (unique; also the default idempotency key)
        #[arg(long, value_name = "A")]
        attempt: String,
        /// The grant acted under
        #[arg(long, value_name = "G")]
        grant: String,
        /// Who acts
        #[arg(long, value_name = "S")]
        subject: String,
        /// The capability
        #[arg(long, value_name = "C")]
        capability: String,
        /// The resource
        #[arg(long, value_name = "X")]
        resource: String,
        /// Maximum exposure to reserve
        #[arg(long, value_name = "N", allow_hyphen_values = true)]
        amount: String,
        /// Opaque payload JSON for the adapter
        #[arg(long, value_name = "JSON", default_value = "{}")]
        payload: String,
        /// Opaque preconditions JSON for the adapter
        #[arg(long, value_name = "JSON", default_value = "{}")]
        preconditions: String,
        /// When authorization was last checked: Unix ms or RFC 3339 (default: --now)
        #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
        authorization_checked_at: Option<String>,
        /// The policy decision (ALLOW admits)
        #[arg(long, value_name = "P", default_value = "ALLOW")]
        policy: String,
        /// The mandatory checks failed
        #[arg(long)]
        mandatory_checks_failed: bool,
        /// An operation that must have SUCCEEDED first (repeatable; contract feature graphs)
        #[arg(long = "depends-on", value_name = "O")]
        depends_on: Vec<String>,
        #[command(flatten)]
        common: Common,
    },
    /// dispatch: ADMITTED -> DISPATCHED, before any external call
    Dispatch {
        /// The mission id
        mission: String,
        /// The attempt
        #[arg(long, value_name = "A")]
        attempt: String,
        #[command(flatten)]
        common: Common,
    },
    /// settle: --actual X (SUCCEEDED, or FAILED with --failed), or --unknown (keeps the reservation)
    Settle {
        /// The mission id
        mission: String,
        /// The attempt
        #[arg(long, value_name = "A")]
        attempt: String,
        /// Actual cost; above the admitted amount is EXPOSURE_EXCEEDED
        #[arg(
            long,
            value_name = "X",
            allow_hyphen_values = true,
            required_unless_present = "unknown",
            conflicts_with = "unknown"
        )]
        actual: Option<String>,
        /// The effect failed (it still cost --actual)
        #[arg(long, requires = "actual")]
        failed: bool,
        /// Nobody knows: the full reservation is kept until a human reconciles
        #[arg(long)]
        unknown: bool,
        #[command(flatten)]
        common: Common,
    },
    /// release: ADMITTED -> RELEASED (the attempt still counts)
    Release {
        /// The mission id
        mission: String,
        /// The attempt
        #[arg(long, value_name = "A")]
        attempt: String,
        #[command(flatten)]
        common: Common,
    },
    /// reconcile: a HUMAN resolves an UNKNOWN attempt (always attended); or, with --from-store
    /// and --ledger, the HOST settles this store's paired attempts from its journal
    Reconcile {
        /// The mission id
        mission: String,
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
        /// The effect failed
        #[arg(long)]
        failed: bool,
        /// Settle the attempts this store paired with the mission in the standalone --ledger
        /// from the store's journal (HOST, unattended; a dispatched attempt without an outcome
        /// is settled UNKNOWN, never refunded)
        #[arg(long, conflicts_with_all = ["attempt", "actual", "failed", "evidence", "evidence_file"])]
        from_store: bool,
        /// A sha256: ref of an object in the store (re-hashed before use)
        #[arg(
            long,
            value_name = "REF",
            conflicts_with = "evidence_file",
            required_unless_present_any = ["evidence_file", "from_store"]
        )]
        evidence: Option<String>,
        /// A file hashed on the spot and stored as a world/mission-evidence/v1 object
        #[arg(long, value_name = "F")]
        evidence_file: Option<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
    /// approve: a HUMAN approves an operation (always attended)
    Approve {
        /// The mission id
        mission: String,
        /// The operation
        #[arg(long, value_name = "O")]
        operation: String,
        #[command(flatten)]
        evidence: Evidence,
        #[command(flatten)]
        common: Common,
    },
    /// revoke: the grant and its delegations stop admitting
    Revoke {
        /// The mission id
        mission: String,
        /// The grant
        #[arg(long, value_name = "G")]
        grant: String,
        #[command(flatten)]
        common: Common,
    },
    /// completeRun: every contract criterion evidenced (NAME=sha256:REF, repeatable)
    CompleteRun {
        /// The mission id
        mission: String,
        /// Run id
        #[arg(long, value_name = "R")]
        run: String,
        /// NAME=sha256:… (repeatable)
        #[arg(long = "criterion", value_name = "NAME=REF")]
        criteria: Vec<String>,
        #[command(flatten)]
        common: Common,
    },
    /// Budget, reserved, settled, remaining; runs; the grant tree; outstanding and UNKNOWN attempts; violations
    Report {
        /// The mission id
        mission: String,
        /// The clock for liveness and the deadline: Unix milliseconds or RFC 3339; default:
        /// the system clock
        #[arg(long, value_name = "MS|RFC3339", allow_hyphen_values = true)]
        now: Option<String>,
    },
    /// Every mission in the store
    List,
    /// The mission's hash-chained command journal
    Log {
        /// The mission id
        mission: String,
    },
    /// Re-fold every mission's journal and compare it with the stored state, outbox and hash chain (read-only; exit 3 on a finding)
    Verify,
}

/// Flags every writing verb takes.
#[derive(ClapArgs, Debug, Clone, Default)]
pub struct Common {
    /// The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system
    /// clock; never more than 24 h ahead of it, never before the mission's last recorded time
    #[arg(long, value_name = "MS|RFC3339", allow_hyphen_values = true)]
    pub now: Option<String>,
    /// Idempotency key: the same command again answers the recorded result (admit: default
    /// admit:<attemptId>)
    #[arg(long, value_name = "R", value_parser = parse_request_id)]
    pub request_id: Option<String>,
    /// Act as the AGENT of this session (minted with --mission); default: the HOST
    #[arg(long, value_name = "FILE")]
    pub session: Option<String>,
}

/// `--request-id`: the id grammar of every other mission id (missions.md §2, 1–128 chars of
/// `[A-Za-z0-9._:-]`), so a key stays bounded and printable in the journal (usage error, exit
/// 2, otherwise).
fn parse_request_id(s: &str) -> Result<String, crate::mission::GrammarError> {
    crate::mission::check_id(s).map(|()| s.to_string())
}

/// `--evidence REF | --evidence-file F`.
#[derive(ClapArgs, Debug, Clone, Default)]
pub struct Evidence {
    /// A sha256: ref of an object in the store (re-hashed before use)
    #[arg(
        long,
        value_name = "REF",
        conflicts_with = "evidence_file",
        required_unless_present = "evidence_file"
    )]
    pub evidence: Option<String>,
    /// A file hashed on the spot and stored as a world/mission-evidence/v1 object
    #[arg(long, value_name = "F")]
    pub evidence_file: Option<PathBuf>,
}

/// Parse `--now` (Unix ms or RFC 3339; at most 24 h ahead of the system clock), or read the
/// clock: [`super::limits::parse_now`], the one `--now` of the ledger commands.
///
/// # Errors
/// A usage error (exit 2) naming the value.
pub fn parse_now(text: Option<&str>) -> Result<Amount, CliError> {
    super::limits::parse_now(text).map(Amount)
}

/// A point in time a mission command carries (`--not-before`, `--expires-at`,
/// `--authorization-checked-at`): Unix milliseconds or an RFC 3339 time, read by `--now`'s
/// parser ([`super::output::parse_time_ms`]), as the decimal milliseconds the mission's grammar
/// takes. A text of digits and signs only goes to the mission as given, so a non-canonical or
/// negative number is its `COMMAND_INVALID`, as before (DEC-LEDGER3-2).
///
/// # Errors
/// A usage error (exit 2) naming `flag` for a text that is neither.
fn time_arg(flag: &str, text: &str) -> Result<String, CliError> {
    if text
        .bytes()
        .all(|b| b.is_ascii_digit() || b == b'-' || b == b'+')
    {
        return Ok(text.to_string());
    }
    super::output::parse_time_ms(text)
        .map(|ms| ms.to_string())
        .ok_or_else(|| {
            CliError::usage(
                flag,
                format!("{text:?} is neither Unix milliseconds (e.g. 1700000000000) nor an RFC 3339 time (e.g. 2023-11-14T22:13:20Z)"),
            )
        })
}

/// Print the result of `what`: `OK` is the command's summary (`OK revision=N seq=S
/// [intentRef=…]` on stdout, nothing under `-q`; `--json`: the result object with
/// `missionId`, `seq` and `replayed`), exit 0. The resend of a journalled rejection
/// (`EXPOSURE_EXCEEDED`) is that rejection again, as an error with `"replayed":true`.
fn emit_applied(
    out: &mut Output,
    what: &str,
    mission_id: &str,
    a: &mstore::Applied,
) -> Result<Exit, CliError> {
    if a.code != Code::Ok {
        let mut e = CliError::new(
            Exit::LimitRejected,
            what,
            format!("{} (resend: the recorded result)", a.code.as_str()),
        )
        .with_code(a.code.as_str());
        e.verbatim = Some(format!(
            "{} (resend: the recorded result) {}",
            a.code.as_str(),
            a.result
        ));
        if let Value::Object(m) = &a.result {
            for (k, v) in m {
                if k != "code" {
                    e = e.detail(k, v.clone());
                }
            }
        }
        return Err(e
            .detail("missionId", mission_id)
            .detail("seq", a.seq)
            .detail("replayed", true));
    }
    if out.json {
        let mut v = a.result.clone();
        v["missionId"] = mission_id.into();
        v["seq"] = a.seq.into();
        v["replayed"] = a.replayed.into();
        out.json_line(&v)?;
    } else {
        let mut line = format!("OK revision={} seq={}", a.revision, a.seq);
        if let Some(r) = a.result.get("intentRef").and_then(Value::as_str) {
            line.push_str(&format!(" intentRef={r}"));
        }
        if a.replayed {
            line.push_str(" (resend: the recorded result)");
        }
        out.summary(line)?;
    }
    Ok(Exit::Success)
}

/// A rejection of `what`: exit 4, on stderr, the one envelope under `--json`
/// ([`super::error::mission_rejection`]).
fn rejection(what: &str, r: &Rejection) -> CliError {
    super::error::mission_rejection(what, r)
}

/// Open for writing: the ledger, or the store under its writer lock.
fn open_write(ctx: &Context, ledger: Option<&str>, what: &str) -> Result<Target, CliError> {
    match ledger {
        Some(l) => open_ledger(l, what),
        None => Ok(Target::Store(ctx.open_write(false)?)),
    }
}

/// Open for reading: the ledger, or the store read-only.
fn open_read(ctx: &Context, ledger: Option<&str>, what: &str) -> Result<Target, CliError> {
    match ledger {
        Some(l) => open_ledger(l, what),
        None => Ok(Target::Store(ctx.open_read()?)),
    }
}

fn open_ledger(location: &str, what: &str) -> Result<Target, CliError> {
    crate::mission::ledger::open(location)
        .map(Target::Standalone)
        .map_err(|e| store_err(what, e))
}

/// The World store connection for `--session` and `--evidence REF`: the open store, or (with
/// a ledger) a read-only open of `--db` kept in `aux`.
fn store_conn<'a>(
    target: &'a Target,
    ctx: &Context,
    aux: &'a mut Option<Store>,
) -> Result<&'a Connection, CliError> {
    match target {
        Target::Store(s) => Ok(s.conn()),
        Target::Standalone(_) => {
            if aux.is_none() {
                *aux = Some(ctx.open_read()?);
            }
            Ok(aux
                .as_ref()
                .map(Store::conn)
                .ok_or_else(|| CliError::failed("mission", "the World store did not open"))?)
        }
    }
}

/// Apply (or dry-run) one command through [`ops::mission::apply`].
fn apply(
    target: &Target,
    mission_id: &str,
    request: &Request,
    actor: &Actor,
    now: Amount,
    evidence: Option<&Object>,
    dry_run: bool,
) -> Result<mstore::Applied, mstore::Error> {
    ops::mission::apply(
        target,
        &ops::mission::Options {
            mission_id,
            request,
            actor,
            now,
            evidence,
            dry_run,
        },
    )
}

/// Build a command from a JSON value exactly as `apply` would parse it.
fn build(v: &Value) -> Result<Command, Rejection> {
    Command::parse(&serde_json::to_vec(v).unwrap_or_default())
}

/// The phrase a human types to confirm an attended act.
fn phrase(mission_id: &str, c: &Command) -> String {
    match c {
        Command::Reconcile { attempt_id, .. } => format!("reconcile {mission_id} {attempt_id}"),
        Command::Approve { operation_id, .. } => format!("approve {mission_id} {operation_id}"),
        other => format!("{} {mission_id}", other.name()),
    }
}

/// The AGENT actor of `--session`: the session must be live and bound to `mission_id` in
/// this very place — the store file when the binding names no ledger, else the ledger and the
/// mission the binding names (DEC-MIS-15); its subject is the bound grant's subject.
fn agent_actor(
    ctx: &Context,
    out: &mut Output,
    conn: &Connection,
    missions: &dyn MissionStore,
    value: &str,
    mission_id: &str,
    in_ledger: bool,
) -> Result<Actor, CliError> {
    let input = session::read_token(value, true).map_err(crate::cli::error::session_err)?;
    if let Some(w) = &input.warning {
        out.warn(w);
    }
    let s = session::agent(conn, &input.token, ctx.now(), session::Unattested::Refuse)
        .map_err(crate::cli::error::session_err)?;
    let b = session::binding(conn, &s.episode)
        .map_err(|e| CliError::store("session", e))?
        .unwrap_or_default();
    if b.mission_id != mission_id || b.mission_grant.is_empty() {
        return Err(CliError::failed(
            "session",
            format!("episode {} is not bound to mission {mission_id}", s.episode),
        )
        .hint("mint the session with --mission M --mission-run R --mission-grant G"));
    }
    let elsewhere = match (in_ledger, b.mission_ledger.is_empty()) {
        (false, true) => None,
        (false, false) => Some(format!(
            "episode {}'s mission {mission_id} is in the ledger {}, not in this store",
            s.episode, b.mission_ledger
        )),
        (true, true) => Some(format!(
            "episode {}'s mission {mission_id} is in the store file, not in --ledger {}",
            s.episode,
            missions.describe()
        )),
        (true, false) => crate::mission::ledger::check_bound(
            missions,
            mission_id,
            &b.mission_ledger,
            &b.mission_root,
        )
        .map_err(|e| match e {
            mstore::Error::Rejected(r) => CliError::failed("session", r),
            e => store_err("session", e),
        })?,
    };
    if let Some(why) = elsewhere {
        return Err(CliError::failed("session", why)
            .hint("name the ledger (or the store) the session was minted for, or mint a session for this one"));
    }
    let st = missions.state(mission_id).map_err(|e| match e {
        mstore::Error::Rejected(r) => CliError::failed("session", r),
        e => store_err("session", e),
    })?;
    let g = st.grants.get(&b.mission_grant).ok_or_else(|| {
        CliError::failed(
            "session",
            format!(
                "the bound grant {} is not in mission {mission_id}",
                b.mission_grant
            ),
        )
    })?;
    Ok(Actor::agent(&s.credential_id, &g.subject))
}

/// Evidence of an attended act: a ref resolved in the store, or a file stored now (with a
/// ledger: hashed, its ref recorded; the file itself stays with the operator, as for
/// `world limits --ledger`).
fn evidence(
    ctx: &Context,
    target: &Target,
    aux: &mut Option<Store>,
    ev: &Evidence,
    what: &str,
) -> Result<(String, Option<Object>), CliError> {
    if let Some(f) = &ev.evidence_file {
        let bytes = read_input(f, MAX_EVIDENCE_BYTES, what)?;
        let r = HashRef::of(&bytes).to_string();
        return Ok((
            r,
            Some(Object::new(
                EvidenceKind::Mission.semantic_id(),
                EvidenceKind::Mission.provenance(),
                bytes,
            )),
        ));
    }
    let r = ev.evidence.clone().unwrap_or_default();
    mission::check_evidence(&r).map_err(|e| CliError::failed(what, format!("--evidence: {e}")))?;
    let conn = store_conn(target, ctx, aux)?;
    match store::object_in(conn, &r) {
        Ok(Some(o)) if o.verifies() => Ok((r, None)),
        Ok(_) => Err(CliError::failed(
            what,
            format!("--evidence {r} names no object in the store that re-hashes to it"),
        )
        .hint("pass --evidence-file FILE to store and use a file")),
        Err(e) => Err(CliError::store(what, e)),
    }
}

/// A writing verb once its command is built.
struct Job<'a> {
    what: &'static str,
    ledger: Option<&'a str>,
    mission: &'a str,
    common: &'a Common,
    command: Result<Command, Rejection>,
    attended: bool,
    evidence: Option<&'a Evidence>,
    /// `now` already read for the command (an admit's default `authorizationCheckedAt` is the
    /// same reading, so an implicit clock moves both, DEC-MIS-17); `None`: read it here.
    now: Option<Amount>,
}

fn write(ctx: &Context, out: &mut Output, job: Job<'_>) -> Result<Exit, CliError> {
    let now = match job.now {
        Some(n) => n,
        None => parse_now(job.common.now.as_deref())?,
    };
    let mut command = match job.command {
        Ok(c) => c,
        Err(r) => return Err(rejection(job.what, &r)),
    };
    let target = open_write(ctx, job.ledger, job.what)?;
    let mut aux = None;
    let mut obj = None;
    if let Some(ev) = job.evidence {
        let (r, o) = evidence(ctx, &target, &mut aux, ev, job.what)?;
        if matches!(target, Target::Store(_)) {
            obj = o;
        }
        match &mut command {
            Command::Reconcile { evidence_ref, .. } | Command::Approve { evidence_ref, .. } => {
                *evidence_ref = r
            }
            _ => {}
        }
    }
    let req = Request {
        command,
        request_id: job.common.request_id.clone(),
        implicit_now: job.common.now.is_none(),
    };
    let actor = if job.attended {
        let mut tty = fence::open_tty()
            .map_err(|_| CliError::fence("mission", "tty", Some("no-controlling-terminal"), ""))?;
        let human = Actor::human(&format!("human:{}", super::limits::login()));
        match apply(&target, job.mission, &req, &human, now, obj.as_ref(), true) {
            Ok(a) if a.replayed => return emit_applied(out, job.what, job.mission, &a),
            Ok(_) => {}
            Err(mstore::Error::Rejected(r)) => return Err(rejection(job.what, &r)),
            Err(e) => return Err(store_err(job.what, e)),
        }
        let words = phrase(job.mission, &req.command);
        out.flush()?;
        let state = target.with(|m| m.state(job.mission)).ok();
        let prompt = format!(
            "About to {} in mission {} in {}{}.\nType exactly, to confirm as {}:\n  {words}\n> ",
            req.command.name(),
            job.mission,
            target.describe(),
            attended_detail(&req.command, state.as_ref()),
            human.id
        );
        tty.confirm("mission", &prompt, &words)?;
        human
    } else if let Some(s) = &job.common.session {
        let conn = store_conn(&target, ctx, &mut aux)?;
        target.with(|m| {
            agent_actor(
                ctx,
                out,
                conn,
                m,
                s,
                job.mission,
                matches!(target, Target::Standalone(_)),
            )
        })?
    } else {
        host()
    };
    match apply(&target, job.mission, &req, &actor, now, obj.as_ref(), false) {
        Ok(a) => emit_applied(out, job.what, job.mission, &a),
        Err(mstore::Error::Rejected(r)) => Err(rejection(job.what, &r)),
        Err(e) => Err(store_err(job.what, e)),
    }
}

/// The numbers a person approves in an attended act, one per line under the prompt's first
/// line: `reconcile` the attempt's reserved amount, the actual cost (and what it frees) and
/// the evidence hash; `approve` the operation and the evidence hash. `state` is the mission
/// just before asking (`None` when it could not be read).
fn attended_detail(c: &Command, state: Option<&State>) -> String {
    match c {
        Command::Reconcile {
            attempt_id,
            actual_cost,
            outcome,
            evidence_ref,
        } => {
            let held = state.and_then(|s| s.attempts.get(attempt_id));
            let reserved = match held {
                Some(a) => format!(
                    "\n  attempt {attempt_id} (operation {}, grant {}, {} {}), status {}\n  reserved {} → actual {actual_cost} {} (frees {})",
                    a.operation_id,
                    a.grant_id,
                    a.capability,
                    a.resource,
                    a.status.as_str(),
                    a.amount,
                    outcome.as_str(),
                    a.amount.get().saturating_sub(actual_cost.get())
                ),
                None => format!(
                    "\n  attempt {attempt_id}\n  actual {actual_cost} {}",
                    outcome.as_str()
                ),
            };
            format!("{reserved}\n  evidence {evidence_ref}")
        }
        Command::Approve {
            operation_id,
            evidence_ref,
        } => format!("\n  operation {operation_id}\n  evidence {evidence_ref}"),
        _ => String::new(),
    }
}

/// The HOST actor (the operator).
fn host() -> Actor {
    Actor {
        kind: ActorKind::Host,
        id: format!("host:{}", super::limits::login()),
        subject: None,
    }
}

fn create(
    ctx: &Context,
    out: &mut Output,
    ledger: Option<&str>,
    contract: &Path,
    yes: bool,
    now: Option<&str>,
) -> Result<Exit, CliError> {
    let what = "mission create";
    let now = parse_now(now)?;
    let raw = read_input(contract, MAX_JSON_BYTES, what)?;
    let c = match Contract::parse(&raw) {
        Ok(c) => c,
        Err(r) => return Err(rejection(what, &r)),
    };
    let target = open_write(ctx, ledger, what)?;
    let r = c.contract_ref().to_string();
    let hex12 = &r[7..19];
    let actor = if yes {
        host()
    } else {
        let mut tty = fence::open_tty()
            .map_err(|_| CliError::fence("mission", "tty", Some("no-controlling-terminal"), ""))?;
        // Refuse a duplicate before asking anybody.
        let exists = target
            .with(|m| crate::mission::ledger::exists(m, &c.mission_id))
            .map_err(|e| store_err(what, e))?;
        if exists {
            return Err(rejection(
                what,
                &Rejection::new(
                    Code::MissionExists,
                    "a mission with that id is already in the store",
                )
                .with("missionId", &c.mission_id),
            ));
        }
        let words = format!("create {} {hex12}", c.mission_id);
        out.flush()?;
        let list = |v: &[String]| {
            if v.is_empty() {
                "(none)".to_string()
            } else {
                v.join(", ")
            }
        };
        let prompt = format!(
            "About to create mission {} in {}:\n  contract {r}\n  budget {}\n  deadline {} ({} ms)\n  actions {}\n  resources {}\n  maxAttempts {} per operation\n  maxAuthorizationAgeMs {}\n  requiresApproval {}\n  criteria {}\n  features {}\nType exactly, to confirm as human:{}:\n  {words}\n> ",
            c.mission_id,
            target.describe(),
            c.budget,
            rfc3339_ms(c.deadline.0),
            c.deadline,
            list(&c.actions),
            list(&c.resources),
            c.max_attempts,
            c.max_authorization_age_ms,
            c.requires_approval,
            list(&c.criteria),
            list(&c.features),
            super::limits::login()
        );
        tty.confirm("mission", &prompt, &words)?;
        Actor::human(&format!("human:{}", super::limits::login()))
    };
    match ops::mission::create(&target, &c, &actor, !yes, now) {
        Ok(s) => {
            if out.json {
                out.json_line(&json!({"code": "OK", "missionId": s.mission_id, "contractRef": s.contract_ref, "attended": !yes}))?;
            } else {
                out.summary(format!(
                    "OK mission={} contractRef={}",
                    s.mission_id, s.contract_ref
                ))?;
                if yes {
                    out.status("recorded as unattended (--yes)");
                }
            }
            Ok(Exit::Success)
        }
        Err(mstore::Error::Rejected(r)) => Err(rejection(what, &r)),
        Err(e) => Err(store_err(what, e)),
    }
}

fn apply_lines(
    ctx: &Context,
    out: &mut Output,
    ledger: Option<&str>,
    mission: &str,
    path: &Path,
    common: &Common,
) -> Result<Exit, CliError> {
    let what = "mission apply";
    let now = parse_now(common.now.as_deref())?;
    let raw = read_input(path, MAX_COMMANDS_BYTES, what)?;
    let text = std::str::from_utf8(&raw)
        .map_err(|_| CliError::failed(what, format!("{} is not UTF-8", path.display())))?;
    let mut cmds = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match Command::parse(line.as_bytes()) {
            Ok(c) => cmds.push(c),
            Err(mut r) => {
                r.details.insert(0, ("line", (i + 1).to_string()));
                return Err(rejection(what, &r).hint(format!(
                    "line {}: refused before anything was written",
                    i + 1
                )));
            }
        }
    }
    if common.request_id.is_some() && cmds.len() > 1 {
        return Err(CliError::usage(
            what,
            "--request-id names one command; --commands applies several",
        ));
    }
    let target = open_write(ctx, ledger, what)?;
    let mut aux = None;
    let actor = match &common.session {
        Some(s) => {
            let conn = store_conn(&target, ctx, &mut aux)?;
            target.with(|m| {
                agent_actor(
                    ctx,
                    out,
                    conn,
                    m,
                    s,
                    mission,
                    matches!(target, Target::Standalone(_)),
                )
            })?
        }
        None => host(),
    };
    let total = cmds.len();
    for (i, c) in cmds.into_iter().enumerate() {
        let req = Request {
            command: c,
            request_id: common.request_id.clone(),
            implicit_now: common.now.is_none(),
        };
        let stopped = format!(
            "stopped at command {} of {total}; the {i} before it were applied",
            i + 1
        );
        match apply(&target, mission, &req, &actor, now, None, false) {
            Ok(a) => emit_applied(out, what, mission, &a).map_err(|e| e.hint(stopped))?,
            Err(mstore::Error::Rejected(r)) => return Err(rejection(what, &r).hint(stopped)),
            Err(e) => return Err(store_err(what, e)),
        };
    }
    Ok(Exit::Success)
}

fn read_state(ctx: &Context, ledger: Option<&str>, mission: &str) -> Result<State, CliError> {
    let target = open_read(ctx, ledger, "mission report")?;
    target.with(|m| m.state(mission)).map_err(|e| match e {
        mstore::Error::Rejected(r) => {
            CliError::failed("mission", r.human()).with_code(r.code.as_str())
        }
        e => store_err("mission", e),
    })
}

/// The report object (`world mission report --json`): the ms members (`now`, `deadline`,
/// `startedAt`, a violation's `at`) are decimal strings, each followed by its RFC 3339 UTC
/// form under the same name plus `Utc` (DEC-LEDGER-CLI-2).
pub fn report_value(s: &State, now: Amount) -> Value {
    let c = &s.contract;
    let mut grants = Vec::new();
    for (id, g) in &s.grants {
        let live = now >= g.not_before && now < g.expires_at && !g.revoked;
        grants.push(json!({
            "grantId": id, "parentId": g.parent_id, "subject": g.subject, "used": g.used.to_string(),
            "limit": g.limit.to_string(), "remaining": g.limit.saturating_sub(g.used).to_string(),
            "depth": g.depth.to_string(), "canDelegate": g.can_delegate, "revoked": g.revoked, "live": live,
        }));
    }
    let pick = |want: &[AttemptStatus]| -> Vec<Value> {
        s.attempts
            .iter()
            .filter(|(_, a)| want.contains(&a.status))
            .map(|(id, a)| {
                let mut v = json!({"attemptId": id, "operationId": a.operation_id, "runId": a.run_id, "grantId": a.grant_id,
                    "status": a.status.as_str(), "amount": a.amount.to_string(), "capability": a.capability, "resource": a.resource});
                // An attempt a World store paired through a standalone ledger: which store and
                // which effect intent (episode, ordinal) it belongs to (issue 18).
                if let Some((store, intent)) = mission::pairing::parse_attempt_id(id) {
                    v["store"] = store.into();
                    v["intentId"] = intent.into();
                }
                v
            })
            .collect()
    };
    let counts = |st: AttemptStatus| s.attempts.values().filter(|a| a.status == st).count();
    json!({
        "missionId": s.mission_id,
        "contractRef": s.contract_ref,
        "revision": s.revision.to_string(),
        "now": now.to_string(),
        "nowUtc": rfc3339_ms(now.0),
        "deadline": c.deadline.to_string(),
        "deadlineUtc": rfc3339_ms(c.deadline.0),
        "deadlinePassed": now >= c.deadline,
        "budget": s.budget.to_string(),
        "reserved": s.reserved.to_string(),
        "settled": s.settled.to_string(),
        "remaining": s.remaining().to_string(),
        "runs": s.runs.iter().map(|(id, r)| json!({"runId": id, "status": r.status, "startedAt": r.started_at.to_string(), "startedAtUtc": rfc3339_ms(r.started_at.0)})).collect::<Vec<_>>(),
        "grants": grants,
        "outstanding": pick(&[AttemptStatus::Admitted, AttemptStatus::Dispatched]),
        "unknown": pick(&[AttemptStatus::Unknown]),
        "attempts": {"settled": counts(AttemptStatus::Settled), "released": counts(AttemptStatus::Released)},
        "violations": s.violations.iter().map(|x| {
            let mut v = serde_json::to_value(x).unwrap_or(Value::Null);
            v["atUtc"] = rfc3339_ms(x.at.0).into();
            v
        }).collect::<Vec<_>>(),
    })
}

fn report(
    ctx: &Context,
    out: &mut Output,
    ledger: Option<&str>,
    mission: &str,
    now: Option<&str>,
) -> Result<Exit, CliError> {
    let now = parse_now(now)?;
    let s = read_state(ctx, ledger, mission)?;
    let v = report_value(&s, now);
    if out.json {
        out.json_line(&v)?;
        return Ok(Exit::Success);
    }
    out.line(format!(
        "mission {}  contract {}  revision {}",
        s.mission_id,
        super::output::short(&s.contract_ref),
        s.revision
    ))?;
    out.line(format!(
        "budget {}  reserved {}  settled {}  remaining {}  deadline {}{}",
        s.budget,
        s.reserved,
        s.settled,
        s.remaining(),
        rfc3339_ms(s.contract.deadline.0),
        if now >= s.contract.deadline {
            " (passed)"
        } else {
            ""
        }
    ))?;
    for (id, r) in &s.runs {
        out.line(format!(
            "run {id}  {}  started {}",
            if r.status == mission::RunStatus::Active {
                "ACTIVE"
            } else {
                "COMPLETED"
            },
            rfc3339_ms(r.started_at.0)
        ))?;
    }
    // The grant tree, roots first, children indented.
    fn tree(
        out: &mut Output,
        s: &State,
        parent: Option<&str>,
        depth: usize,
    ) -> std::io::Result<()> {
        for (id, g) in s
            .grants
            .iter()
            .filter(|(_, g)| g.parent_id.as_deref() == parent)
        {
            out.line(format!(
                "{}grant {id}  subject {}  used {}/{}{}",
                "  ".repeat(depth + 1),
                g.subject,
                g.used,
                g.limit,
                if g.revoked { "  REVOKED" } else { "" }
            ))?;
            tree(out, s, Some(id), depth + 1)?;
        }
        Ok(())
    }
    out.line("grants:")?;
    tree(out, &s, None, 0)?;
    for key in ["outstanding", "unknown"] {
        let list = v[key].as_array().cloned().unwrap_or_default();
        out.line(format!("{key}: {}", list.len()))?;
        for a in list {
            let paired = match (a["store"].as_str(), a["intentId"].as_str()) {
                (Some(s), Some(i)) => format!(", store {s}, effect {i}"),
                _ => String::new(),
            };
            out.line(format!(
                "  {} {} amount {} (operation {}, grant {}{paired})",
                a["attemptId"].as_str().unwrap_or(""),
                a["status"].as_str().unwrap_or(""),
                a["amount"].as_str().unwrap_or(""),
                a["operationId"].as_str().unwrap_or(""),
                a["grantId"].as_str().unwrap_or("")
            ))?;
        }
    }
    out.line(format!("violations: {}", s.violations.len()))?;
    for x in &s.violations {
        out.line(format!(
            "  {} {}: admitted {}, claimed {} by {} at {}",
            x.attempt_id,
            x.command,
            x.admitted,
            x.claimed,
            x.actor_id,
            rfc3339_ms(x.at.0)
        ))?;
    }
    Ok(Exit::Success)
}

fn list(ctx: &Context, out: &mut Output, ledger: Option<&str>) -> Result<Exit, CliError> {
    let target = open_read(ctx, ledger, "mission list")?;
    let rows = target
        .with(|m| m.list())
        .map_err(|e| store_err("mission list", e))?;
    if out.json {
        for r in &rows {
            out.json_line(r)?;
        }
        return Ok(Exit::Success);
    }
    if rows.is_empty() {
        out.status(format!("no missions in {}", target.describe()));
        return Ok(Exit::Success);
    }
    let mut t = super::output::table(
        &[
            "mission", "revision", "budget", "reserved", "settled", "journal", "contract",
        ],
        out.color,
    );
    for r in &rows {
        t.add_row(vec![
            r.mission_id.clone(),
            r.revision.to_string(),
            r.budget.to_string(),
            r.reserved.to_string(),
            r.settled.to_string(),
            r.journal.to_string(),
            super::output::short(&r.contract_ref),
        ]);
    }
    out.line(t.to_string())?;
    Ok(Exit::Success)
}

fn log(
    ctx: &Context,
    out: &mut Output,
    ledger: Option<&str>,
    mission: &str,
) -> Result<Exit, CliError> {
    let target = open_read(ctx, ledger, "mission log")?;
    let entries = target.with(|m| m.journal(mission)).map_err(|e| match e {
        mstore::Error::Rejected(r) => {
            CliError::failed("mission log", r.human()).with_code(r.code.as_str())
        }
        e => store_err("mission log", e),
    })?;
    for e in &entries {
        let d = mstore::decode_entry(&e.entry).map_err(|why| {
            CliError::new(
                Exit::Integrity,
                "mission log",
                format!("entry {}: {why}", e.seq),
            )
        })?;
        let code = d
            .result
            .get("code")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if out.json {
            out.json_line(&json!({
                "seq": e.seq, "entryHash": e.entry_hash, "prevHash": e.prev_hash, "now": d.now.to_string(), "nowUtc": rfc3339_ms(d.now.0),
                "actor": d.actor, "requestId": d.request_id, "command": d.command.to_value().to_json(), "result": d.result,
            }))?;
        } else {
            out.line(format!(
                "{:>6}  {}  {:<12} now={} {} {}{}",
                e.seq,
                super::output::short(&e.entry_hash),
                d.command.name(),
                rfc3339_ms(d.now.0),
                d.actor.id,
                code,
                d.command
                    .attempt_id()
                    .map(|a| format!(" attempt={a}"))
                    .unwrap_or_default()
            ))?;
        }
    }
    Ok(Exit::Success)
}

/// `world mission verify`: every mission's journal re-folded and compared with the stored
/// state, outbox and hash chain (the mission part of `world verify`, for a ledger too). One
/// line per finding (`--json`: one object each; when clean, one `{"ok":true,"findings":0,
/// "place":…}` object); exit 0 when clean, 3 on any finding.
fn verify(ctx: &Context, out: &mut Output, ledger: Option<&str>) -> Result<Exit, CliError> {
    let what = "mission verify";
    let target = open_read(ctx, ledger, what)?;
    let problems = target
        .with(|m| m.verify())
        .map_err(|e| store_err(what, e))?;
    for p in &problems {
        if out.json {
            out.json_line(&json!({"category": p.category, "missionId": p.mission_id, "seq": p.seq, "reason": p.reason}))?;
        } else {
            out.line(format!(
                "{} mission={}{}: {}",
                p.category,
                p.mission_id,
                p.seq.map(|s| format!(" seq={s}")).unwrap_or_default(),
                p.reason
            ))?;
        }
    }
    if problems.is_empty() {
        if out.json {
            // A clean result is data too (as `world --json verify`'s `"ok":true`): a script
            // reading stdout tells "clean" from "did not run".
            out.json_line(&json!({"ok": true, "findings": 0, "place": target.describe()}))?;
        }
        out.status(format!(
            "ok: every mission journal in {} folds to its stored state",
            target.describe()
        ));
        Ok(Exit::Success)
    } else {
        out.status(format!("{} finding(s)", problems.len()));
        Ok(Exit::Integrity)
    }
}

/// Check a `session mint --mission M --mission-run R --mission-grant G` binding: the mission,
/// the run and the grant exist (missions.md §7).
///
/// # Errors
/// Exit 1 naming what is missing, or why the mission does not load.
pub fn check_binding(
    what: &str,
    conn: &Connection,
    m: &session::MissionBinding,
) -> Result<(), CliError> {
    let s = mstore::load_full(conn, &m.mission_id).map_err(|e| CliError::failed(what, e))?;
    match binding_problem(&s, m) {
        Some(p) => Err(CliError::failed(what, p)),
        None => Ok(()),
    }
}

/// [`check_binding`] for a mission in a standalone ledger: the mission, run and grant exist
/// in `missions` (issue 18, DEC-MIS-14).
///
/// # Errors
/// Exit 1 naming what is missing (and the ledger), or the ledger's error.
pub fn check_binding_in(
    what: &str,
    missions: &dyn MissionStore,
    m: &session::MissionBinding,
) -> Result<(), CliError> {
    let s = missions.state(&m.mission_id).map_err(|e| match e {
        mstore::Error::Rejected(r) => {
            CliError::failed(what, format!("{r} (in ledger {})", missions.describe()))
        }
        e => store_err(what, e),
    })?;
    match binding_problem(&s, m) {
        Some(p) => Err(CliError::failed(what, p)),
        None => Ok(()),
    }
}

/// What is missing from mission state `s` for binding `m`, if anything.
fn binding_problem(s: &State, m: &session::MissionBinding) -> Option<String> {
    if !s.runs.contains_key(&m.run_id) {
        return Some(format!(
            "--mission-run {}: no such run in mission {}",
            m.run_id, m.mission_id
        ));
    }
    if !s.grants.contains_key(&m.grant_id) {
        return Some(format!(
            "--mission-grant {}: no such grant in mission {}",
            m.grant_id, m.mission_id
        ));
    }
    None
}

/// `world mission reconcile M --from-store --ledger L`: the HOST settles the attempts this
/// store paired with mission `M` in the standalone ledger from the store's journal evidence
/// (`mission::pairing::reconcile_from_store`), as `world limits reconcile --from-store` does
/// for limits (unattended: it acts only on the journal's evidence and never refunds a
/// dispatched attempt; DEC-MIS-14). One line per attempt (`--json`: one object per line);
/// exit 0 when nothing is left outstanding, 5 when an attempt was settled UNKNOWN and awaits
/// an attended `world mission reconcile`.
fn reconcile_from_store(
    ctx: &Context,
    out: &mut Output,
    ledger: Option<&str>,
    mission: &str,
    common: &Common,
) -> Result<Exit, CliError> {
    let what = "mission reconcile --from-store";
    let Some(location) = ledger else {
        return Err(CliError::usage(
            what,
            "--from-store reconciles a mission in a standalone ledger: pass --ledger FILE|URL (or WORLD_LEDGER)",
        ));
    };
    let now = parse_now(common.now.as_deref())?;
    // The writer lock: no invocation of this store is in flight while its attempts are read.
    let store = ctx.open_write(false)?;
    let missions = crate::mission::ledger::open(location).map_err(|e| store_err(what, e))?;
    let (id, done) = match ops::mission::reconcile_from_store(
        &store,
        missions.as_ref(),
        mission,
        now,
        common.now.is_none(),
    ) {
        Ok(ops::mission::FromStore::NeverPaired) => {
            out.warn("this store was never paired with a standalone ledger: nothing to reconcile");
            return Ok(Exit::Success);
        }
        Ok(ops::mission::FromStore::Reconciled { store_id, done }) => (store_id, done),
        Err(ops::mission::FromStoreError::Store(e)) => return Err(CliError::store(what, e)),
        Err(ops::mission::FromStoreError::Missions(mstore::Error::Rejected(r))) => {
            return Err(rejection(what, &r))
        }
        Err(ops::mission::FromStoreError::Missions(e)) => return Err(store_err(what, e)),
    };
    let mut unknown = 0;
    for r in &done {
        if matches!(r.action, "unknown" | "held") {
            unknown += 1;
        }
        if out.json {
            out.json_line(r)?;
        } else {
            out.line(format!(
                "{} {} {} ({}): {}",
                r.action, r.attempt_id, r.status, r.intent_id, r.why
            ))?;
        }
    }
    if done.is_empty() {
        out.warn(format!(
            "no outstanding attempts of {id} in mission {mission} of {}",
            missions.describe()
        ));
    }
    if unknown > 0 {
        out.status(format!(
            "{unknown} attempt(s) of {id} stay held until a person reconciles each with `world mission reconcile {mission} --attempt A --actual X --evidence-file F --ledger {}` (attended)",
            crate::ledger::location::location_arg(&missions.describe())
        ));
        return Ok(Exit::Indeterminate);
    }
    Ok(Exit::Success)
}

/// Run `world mission …`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    let ledger = args.ledger.clone();
    let mut r =
        run_verb(ctx, out, args).map_err(|e| super::error::name_ledger(e, ledger.as_deref()));
    if let (Err(e), Some(l)) = (&mut r, ledger.as_deref()) {
        for h in &mut e.hints {
            if h == VERIFY_HINT {
                *h = format!(
                    "run `world mission verify --ledger {}`",
                    crate::ledger::location::location_arg(
                        &crate::ledger::location::describe_location(l)
                    )
                );
            }
        }
    }
    r
}

fn run_verb(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    let ledger = args.ledger.as_deref();
    let cmd = args.cmd;
    let job = |what, mission, common, command, attended, evidence| Job {
        what,
        ledger,
        mission,
        common,
        command,
        attended,
        evidence,
        now: None,
    };
    match &cmd {
        Cmd::Create { contract, yes, now } => {
            create(ctx, out, ledger, contract, *yes, now.as_deref())
        }
        Cmd::Apply {
            mission,
            command: Some(f),
            common,
            ..
        } => {
            let raw = read_input(f, MAX_JSON_BYTES, "mission apply")?;
            write(
                ctx,
                out,
                job(
                    "mission apply",
                    mission,
                    common,
                    Command::parse(&raw),
                    false,
                    None,
                ),
            )
        }
        Cmd::Apply {
            mission,
            commands: Some(f),
            common,
            ..
        } => apply_lines(ctx, out, ledger, mission, f, common),
        Cmd::Apply { .. } => Err(CliError::usage(
            "mission apply",
            "pass --command FILE or --commands FILE.jsonl",
        )),
        Cmd::StartRun {
            mission,
            run,
            common,
        } => write(
            ctx,
            out,
            job(
                "mission start-run",
                mission,
                common,
                build(&json!({"type": "startRun", "runId": run})),
                false,
                None,
            ),
        ),
        Cmd::Grant {
            mission,
            id,
            parent,
            subject,
            actions,
            resources,
            not_before,
            expires_at,
            limit,
            can_delegate,
            depth,
            common,
        } => {
            let not_before = time_arg("--not-before", not_before)?;
            let expires_at = time_arg("--expires-at", expires_at)?;
            let mut v = json!({"type": "grant", "grant": {"id": id, "subject": subject, "profile": "finite-v1",
                "actions": actions, "resources": resources, "notBefore": not_before, "expiresAt": expires_at,
                "limit": limit, "canDelegate": can_delegate, "depth": depth}});
            if let Some(p) = parent {
                v["parentId"] = p.clone().into();
            }
            write(
                ctx,
                out,
                job("mission grant", mission, common, build(&v), false, None),
            )
        }
        Cmd::Admit {
            mission,
            run,
            operation,
            attempt,
            grant,
            subject,
            capability,
            resource,
            amount,
            payload,
            preconditions,
            authorization_checked_at,
            policy,
            mandatory_checks_failed,
            depends_on,
            common,
        } => {
            let opaque = |name: &str, text: &str| -> Result<Value, CliError> {
                serde_json::from_str(text)
                    .map_err(|e| CliError::usage(name, format!("not JSON: {e}")))
            };
            let now = parse_now(common.now.as_deref())?;
            let checked = match authorization_checked_at {
                Some(t) => time_arg("--authorization-checked-at", t)?,
                None => now.to_string(),
            };
            let mut v = json!({"type": "admit", "runId": run, "operationId": operation, "attemptId": attempt,
                "grantId": grant, "subject": subject,
                "action": {"capability": capability, "resource": resource,
                    "payload": opaque("--payload", payload)?, "preconditions": opaque("--preconditions", preconditions)?},
                "amount": amount, "authorizationCheckedAt": checked, "policy": policy,
                "mandatoryChecksOk": !mandatory_checks_failed});
            if !depends_on.is_empty() {
                v["dependsOn"] = json!(depends_on);
            }
            write(
                ctx,
                out,
                Job {
                    now: Some(now),
                    ..job("mission admit", mission, common, build(&v), false, None)
                },
            )
        }
        Cmd::Dispatch {
            mission,
            attempt,
            common,
        } => write(
            ctx,
            out,
            job(
                "mission dispatch",
                mission,
                common,
                build(&json!({"type": "dispatch", "attemptId": attempt})),
                false,
                None,
            ),
        ),
        Cmd::Settle {
            mission,
            attempt,
            actual,
            failed,
            unknown: _,
            common,
        } => {
            let v = match actual {
                None => json!({"type": "settle", "attemptId": attempt, "outcome": "UNKNOWN"}),
                Some(a) => {
                    json!({"type": "settle", "attemptId": attempt, "outcome": if *failed { "FAILED" } else { "SUCCEEDED" }, "actualCost": a})
                }
            };
            write(
                ctx,
                out,
                job("mission settle", mission, common, build(&v), false, None),
            )
        }
        Cmd::Release {
            mission,
            attempt,
            common,
        } => write(
            ctx,
            out,
            job(
                "mission release",
                mission,
                common,
                build(&json!({"type": "release", "attemptId": attempt})),
                false,
                None,
            ),
        ),
        Cmd::Reconcile {
            mission,
            from_store: true,
            common,
            ..
        } => reconcile_from_store(ctx, out, ledger, mission, common),
        Cmd::Reconcile {
            mission,
            attempt,
            actual,
            failed,
            evidence,
            evidence_file,
            common,
            ..
        } => {
            let evidence = &Evidence {
                evidence: evidence.clone(),
                evidence_file: evidence_file.clone(),
            };
            // The evidence ref is filled in once resolved; a placeholder keeps parsing strict.
            let v = json!({"type": "reconcile", "attemptId": attempt, "actualCost": actual,
                "outcome": if *failed { "FAILED" } else { "SUCCEEDED" }, "evidenceRef": HashRef::of(b"").to_string()});
            write(
                ctx,
                out,
                job(
                    "mission reconcile",
                    mission,
                    common,
                    build(&v),
                    true,
                    Some(evidence),
                ),
            )
        }
        Cmd::Approve {
            mission,
            operation,
            evidence,
            common,
        } => {
            let v = json!({"type": "approve", "operationId": operation, "evidenceRef": HashRef::of(b"").to_string()});
            write(
                ctx,
                out,
                job(
                    "mission approve",
                    mission,
                    common,
                    build(&v),
                    true,
                    Some(evidence),
                ),
            )
        }
        Cmd::Revoke {
            mission,
            grant,
            common,
        } => write(
            ctx,
            out,
            job(
                "mission revoke",
                mission,
                common,
                build(&json!({"type": "revoke", "grantId": grant})),
                false,
                None,
            ),
        ),
        Cmd::CompleteRun {
            mission,
            run,
            criteria,
            common,
        } => {
            let mut m = serde_json::Map::new();
            for c in criteria {
                let Some((k, r)) = c.split_once('=') else {
                    return Err(CliError::usage(
                        "--criterion",
                        format!("{c:?} is not NAME=sha256:REF"),
                    ));
                };
                m.insert(k.to_string(), r.into());
            }
            // As for --evidence: each criterion's evidence must be content the store holds and
            // re-hashes (approve and reconcile refuse the same refs).
            if !m.is_empty() {
                let store = ctx.open_read()?;
                for (k, r) in &m {
                    let r = r.as_str().unwrap_or_default();
                    mission::check_evidence(r)
                        .map_err(|e| CliError::usage("--criterion", format!("{k}: {e}")))?;
                    match store::object_in(store.conn(), r) {
                        Ok(Some(o)) if o.verifies() => {}
                        Ok(_) => {
                            return Err(CliError::failed(
                                "mission complete-run",
                                format!("--criterion {k}={r} names no object in the store that re-hashes to it"),
                            )
                            .hint("store the evidence first (e.g. `world mission approve … --evidence-file FILE` or `world commit --put FILE`)"))
                        }
                        Err(e) => return Err(CliError::store("mission complete-run", e)),
                    }
                }
            }
            write(
                ctx,
                out,
                job(
                    "mission complete-run",
                    mission,
                    common,
                    build(&json!({"type": "completeRun", "runId": run, "criteria": m})),
                    false,
                    None,
                ),
            )
        }
        Cmd::Report { mission, now } => report(ctx, out, ledger, mission, now.as_deref()),
        Cmd::List => list(ctx, out, ledger),
        Cmd::Log { mission } => log(ctx, out, ledger, mission),
        Cmd::Verify => verify(ctx, out, ledger),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn now_is_canonical_and_not_far_ahead() {
        assert_eq!(parse_now(Some("10")).ok(), Some(Amount(10)));
        assert_eq!(
            parse_now(Some("1970-01-01T00:00:00.010Z")).ok(),
            Some(Amount(10))
        );
        for bad in ["-1", "01", "1.5", ""] {
            assert_eq!(
                parse_now(Some(bad)).err().map(|e| e.exit),
                Some(Exit::Usage),
                "{bad}"
            );
        }
        let far = (crate::clock::Clock::System.now_ms() + MAX_NOW_AHEAD_MS + 60_000).to_string();
        assert_eq!(
            parse_now(Some(&far)).err().map(|e| e.exit),
            Some(Exit::Usage)
        );
        let near = (crate::clock::Clock::System.now_ms() + 60_000).to_string();
        assert!(parse_now(Some(&near)).is_ok());
    }

    #[test]
    fn phrases_name_the_mission_and_the_target() {
        let c = Command::Approve {
            operation_id: "o".into(),
            evidence_ref: String::new(),
        };
        assert_eq!(phrase("m", &c), "approve m o");
        let c = Command::Reconcile {
            attempt_id: "a".into(),
            actual_cost: Amount(1),
            outcome: mission::Outcome::Succeeded,
            evidence_ref: String::new(),
        };
        assert_eq!(phrase("m", &c), "reconcile m a");
    }
}
