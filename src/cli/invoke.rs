//! `world invoke`: run a published transition through the coordinator and commit the result
//! with its provenance (transitions.md §9–§11, seed 003, DEC-COORD-1).

use std::path::PathBuf;

use super::error::{host_err, invoke_err};
use super::output::Output;
use super::pin::provider;
use super::{read_input, CliError, Context, Exit};
use crate::broker::handlers::RunCapsConfig;
use crate::broker::Status;
use crate::ops::invoke::{self, Call, Surface};
use crate::ops::outcome::{derive, output_ok, EffectState, Evidence};

/// Call a transition as a session: admit, bind, plan, execute, finish, commit.
///
/// Prints the committed output (effectful outputs carry a `world` block naming the plan and
/// each effect's status and record); stderr names the outcome. The exit code is the outcome's
/// (README "Outcomes"): 0 ok; 7 refused (`ok:false`); 8 denied (an effect was denied); 9
/// failed (an effect's handler failed); 5 indeterminate or effects-unrecorded (never retry
/// automatically); 3 integrity; 1 other failures (nothing committed).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The transition id
    transition: String,
    #[command(flatten)]
    session: super::SessionArgs,
    /// Arguments as a JSON object (default {})
    #[arg(long, value_name = "JSON", conflicts_with = "args_file")]
    args: Option<String>,
    /// Arguments from a file; `-` reads stdin
    #[arg(long, value_name = "FILE")]
    args_file: Option<PathBuf>,
    /// Idempotency key: the invocation id is cli:<episode>:<ID> ([A-Za-z0-9._-]{1,128});
    /// without it a random id is used (no idempotency)
    #[arg(long, value_name = "ID")]
    invocation_id: Option<String>,
    /// Override the episode's recorded workspace root (worktree = DIR/<episode>)
    #[arg(long, value_name = "DIR")]
    workspace_root: Option<PathBuf>,
    /// The pinned AILANG tool binary for the Ailang.* effects
    #[arg(long, value_name = "PATH")]
    tool_ailang_bin: Option<PathBuf>,
    /// Capabilities ailang-run may use beyond IO and FS: Env, Net, Declassify
    #[arg(long, value_delimiter = ',', value_name = "CAPS")]
    run_allow_caps: Vec<String>,
    /// IP:PORT a Net run may reach (repeatable)
    #[arg(long, value_name = "IP:PORT")]
    run_net_allow: Vec<String>,
    /// Pair effects of episodes bound to a limits scope with this standalone ledger (a file,
    /// or postgres://user@host/db) instead of the store file's tables (docs/LEDGER.md)
    #[arg(
        long,
        value_name = "FILE|URL",
        env = "WORLD_LEDGER",
        hide_env_values = true
    )]
    ledger: Option<String>,
    #[command(flatten)]
    exec: super::ExecFlags,
    #[command(flatten)]
    unattested: super::UnattestedFlag,
}

/// Refuse `--args` text that would not reach the transition as written (issue 13 §4): a
/// repeated member name (refused as in commit bodies), or a number that does not cross into
/// the interpreter exactly (checked on the exact number text, before serde rounds it).
fn check_args_text(raw: &[u8]) -> Result<(), CliError> {
    use crate::encoding::trcjson::{self, Bounds, Error as CError};
    match trcjson::parse(raw, Bounds::UNBOUNDED) {
        Err(CError::DuplicateMember(k)) => Err(CliError::failed(
            "invoke",
            format!("--args repeats the member {k:?}; each name may appear once"),
        )),
        Ok(v) => match crate::interp::numbers::first_inexact(&v) {
            Some((path, n, why)) => Err(CliError::failed(
                "invoke",
                format!("--args number {n} at {} would not reach the transition exactly: {why}; nothing was written (send it as a string)", if path.is_empty() { "/" } else { &path }),
            )),
            None => Ok(()),
        },
        // Text TR-CJSON-1 refuses for other reasons (e.g. an escaped surrogate) is still
        // checked on the parsed value by the coordinator.
        Err(_) => Ok(()),
    }
}

/// Run `world invoke`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    let raw = match (&args.args, &args.args_file) {
        (Some(a), _) => a.clone().into_bytes(),
        (None, Some(f)) => read_input(f, invoke::MAX_IO, "invoke --args-file")?,
        (None, None) => b"{}".to_vec(),
    };
    let value: serde_json::Value = serde_json::from_slice(&raw)
        .map_err(|e| CliError::failed("invoke", format!("--args is not JSON: {e}")))?;
    if !value.is_object() {
        return Err(CliError::failed("invoke", "--args must be a JSON object"));
    }
    check_args_text(&raw)?;
    super::limits::check_ledger_flag("invoke", args.ledger.as_deref())?;
    let token = super::session_token("invoke", out, args.session.value())?;
    let checked = args
        .exec
        .host_flags(
            args.workspace_root,
            args.tool_ailang_bin,
            RunCapsConfig {
                allow: args.run_allow_caps,
                net_allow: args.run_net_allow,
                net_allow_http: false,
            },
            args.ledger,
            &args.unattested,
        )
        .check(&ctx.db)
        .map_err(|e| host_err("invoke", e))?;
    if let Some(why) = checked.sandbox_error() {
        out.warn(format!(
            "Workspace.Exec unavailable: no usable sandbox: {why}; workspace-exec calls are refused (R8)"
        ));
    }
    let mut store = ctx.open_write(false)?;
    // Pinned under the writer lock: archived next to the store, re-hashed before every exec.
    let config = checked.pin(&ctx.db).map_err(|e| host_err("invoke", e))?;
    let pins = provider(ctx);
    let host = config.host(pins.as_ref(), None);
    let call = Call {
        surface: Surface::Cli,
        token,
        transition: args.transition.clone(),
        args: value,
        task: args.invocation_id.clone(),
        clock: ctx.clock,
    };
    let done = invoke::invoke(&mut store, &call, &host).map_err(invoke_err)?;
    let states: Vec<EffectState> = done
        .effects
        .iter()
        .map(|(s, _)| EffectState::of_status(s))
        .collect();
    let outcome = derive(&Evidence {
        committed: true,
        output_ok: output_ok(&done.output),
        effects: &states,
    });
    if out.json {
        let output: serde_json::Value =
            serde_json::from_slice(&done.output).unwrap_or(serde_json::Value::Null);
        out.json_line(&serde_json::json!({
            "invocationId": done.invocation_id,
            "entryIndex": done.entry_index,
            "worldRef": done.world_ref,
            "outputRef": done.output_ref,
            "output": output,
            "replayed": done.replayed,
            "outcome": outcome,
        }))?;
    } else {
        out.bytes(&done.output)?;
        out.line("")?;
        if done.replayed {
            out.status(format!(
                "{} was already committed at entry {}; nothing ran, nothing written",
                done.invocation_id, done.entry_index
            ));
        } else {
            out.status(format!(
                "committed {} at entry {} (world {}): {outcome}",
                done.invocation_id, done.entry_index, done.world_ref
            ));
        }
    }
    for (status, record) in &done.effects {
        if let (Status::Denied, Some(r)) = (status, record) {
            if let Ok(Some((rec, _, _))) = crate::ops::effects::resolve_record(&store, r) {
                out.warn(format!(
                    "effect record {} denied {} {}: {} (budget {}); `world broker check` explains",
                    super::output::short(r),
                    rec.effect,
                    rec.scope,
                    rec.denial,
                    rec.budget_before
                ));
            }
        }
        if let (Status::Failed, Some(r)) = (status, record) {
            // Best effort: the commit has landed; a read failure here only loses the hint.
            if let Ok(Some(msg)) = crate::ops::effects::failure_message(&store, r) {
                out.warn(format!(
                    "effect record {} failed: {}",
                    super::output::short(r),
                    crate::termtext::escape_text(&msg)
                ));
            }
        }
    }
    Ok(Exit::from(outcome))
}
