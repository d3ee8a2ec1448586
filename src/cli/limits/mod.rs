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
mod confirm;
mod dispatch;
mod flags;
mod init;
pub(crate) mod reconcile;
mod release;
mod report;
mod reserve;
mod settle;
mod stop;
mod write;

use self::confirm::*;
pub use self::flags::*;
pub use self::reserve::ReserveArgs;
pub use self::write::check_ledger_flag;
use self::write::*;
pub use super::common::{login, parse_now, MAX_NOW_AHEAD_MS};

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

#[cfg(test)]
mod tests;
