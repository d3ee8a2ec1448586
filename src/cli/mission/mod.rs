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
mod dispatch;
mod flags;
mod grant;
mod list;
mod log;
mod place;
mod reconcile;
mod reconcile_attended;
mod release;
mod report;
mod revoke;
mod settle;
mod start_run;
mod verify;
mod write;

pub use self::admit::AdmitArgs;
use self::approve::*;
pub use self::binding::*;
pub use self::complete_run::CompleteRunArgs;
use self::create::*;
pub use self::flags::*;
pub use self::grant::GrantArgs;
use self::place::*;
use self::reconcile::*;
pub use self::report::report_value;
use self::write::*;

use std::path::{Path, PathBuf};

use clap::{Args as ClapArgs, Subcommand};
use rusqlite::Connection;
use serde_json::{json, Value};

use super::common::SettleArgs;
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
        #[command(flatten)]
        settle: SettleArgs,
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

/// Hand each verb to its file.
fn run_verb(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    let ledger = args.ledger.as_deref();
    match &args.cmd {
        Cmd::Create { contract, yes, now } => {
            create(ctx, out, ledger, contract, *yes, now.as_deref())
        }
        Cmd::Apply {
            mission,
            command,
            commands,
            common,
        } => apply::run(ctx, out, ledger, mission, command, commands, common),
        Cmd::StartRun {
            mission,
            run,
            common,
        } => start_run::run(ctx, out, ledger, mission, run, common),
        Cmd::Grant(a) => grant::run(ctx, out, ledger, a),
        Cmd::Admit(a) => admit::run(ctx, out, ledger, a),
        Cmd::Dispatch {
            mission,
            attempt,
            common,
        } => dispatch::run(ctx, out, ledger, mission, attempt, common),
        Cmd::Settle {
            mission,
            attempt,
            settle,
            common,
        } => settle::run(ctx, out, ledger, mission, attempt, settle, common),
        Cmd::Release {
            mission,
            attempt,
            common,
        } => release::run(ctx, out, ledger, mission, attempt, common),
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
        } => reconcile_attended::run(
            ctx,
            out,
            ledger,
            mission,
            reconcile_attended::Attested {
                attempt,
                actual,
                failed: *failed,
                evidence,
                evidence_file,
            },
            common,
        ),
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
        } => revoke::run(ctx, out, ledger, mission, grant, common),
        Cmd::CompleteRun(a) => complete_run::run(ctx, out, ledger, a),
        Cmd::Report { mission, now } => report::run(ctx, out, ledger, mission, now.as_deref()),
        Cmd::List => list::run(ctx, out, ledger),
        Cmd::Log { mission } => log::run(ctx, out, ledger, mission),
        Cmd::Verify => verify::run(ctx, out, ledger),
    }
}

#[cfg(test)]
mod tests;
