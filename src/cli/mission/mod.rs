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

mod admit;
mod apply;
mod approve;
mod binding;
mod complete_run;
mod create;
mod grant;
mod read;
mod reconcile;
mod write;

pub use self::admit::AdmitArgs;
use self::apply::*;
use self::approve::*;
pub use self::binding::*;
pub use self::complete_run::CompleteRunArgs;
use self::create::*;
pub use self::grant::GrantArgs;
pub use self::read::report_value;
use self::read::*;
use self::reconcile::*;
use self::write::*;

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
    Grant(GrantArgs),
    /// admit: reserve an attempt's maximum exposure against the mission and the grant chain
    Admit(AdmitArgs),
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
    CompleteRun(CompleteRunArgs),
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
    match &cmd {
        Cmd::Create { contract, yes, now } => {
            create(ctx, out, ledger, contract, *yes, now.as_deref())
        }
        Cmd::Apply {
            mission,
            command: Some(f),
            common,
            ..
        } => apply_one(ctx, out, ledger, mission, f, common),
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
        } => write_plain(
            ctx,
            out,
            ledger,
            "mission start-run",
            mission,
            common,
            &json!({"type": "startRun", "runId": run}),
        ),
        Cmd::Grant(a) => grant::run(ctx, out, ledger, a),
        Cmd::Admit(a) => admit::run(ctx, out, ledger, a),
        Cmd::Dispatch {
            mission,
            attempt,
            common,
        } => write_plain(
            ctx,
            out,
            ledger,
            "mission dispatch",
            mission,
            common,
            &json!({"type": "dispatch", "attemptId": attempt}),
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
            write_plain(ctx, out, ledger, "mission settle", mission, common, &v)
        }
        Cmd::Release {
            mission,
            attempt,
            common,
        } => write_plain(
            ctx,
            out,
            ledger,
            "mission release",
            mission,
            common,
            &json!({"type": "release", "attemptId": attempt}),
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
                attended(
                    "mission reconcile",
                    ledger,
                    mission,
                    common,
                    build(&v),
                    evidence,
                ),
            )
        }
        Cmd::Approve {
            mission,
            operation,
            evidence,
            common,
        } => approve(ctx, out, ledger, mission, operation, evidence, common),
        Cmd::Revoke {
            mission,
            grant,
            common,
        } => write_plain(
            ctx,
            out,
            ledger,
            "mission revoke",
            mission,
            common,
            &json!({"type": "revoke", "grantId": grant}),
        ),
        Cmd::CompleteRun(a) => complete_run::run(ctx, out, ledger, a),
        Cmd::Report { mission, now } => report(ctx, out, ledger, mission, now.as_deref()),
        Cmd::List => list(ctx, out, ledger),
        Cmd::Log { mission } => log(ctx, out, ledger, mission),
        Cmd::Verify => verify(ctx, out, ledger),
    }
}

#[cfg(test)]
mod tests;
