//! `world mcp --session S`: the MCP server on stdin/stdout (surfaces.md §5; newline-delimited
//! JSON-RPC, both eras' method handling).

use std::path::PathBuf;

use super::error::host_err;
use super::output::Output;
use super::{CliError, Context, Exit};
use crate::broker::handlers::RunCapsConfig;
use crate::serve::mcp::{serve_stdio, StdioBackend};

/// Serve MCP on stdin/stdout for a local agent client.
///
/// One JSON-RPC message per line in, one response line per request out; nothing but protocol
/// on stdout, logs on stderr. The store is opened per request (writers wait for the lock as
/// with --wait-lock), so other CLI writers can run between calls. A line over 4 MiB answers a
/// -32600 error and the server keeps serving. Ends at end of input (exit 0).
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    session: super::SessionArgs,
    /// Override the episode's recorded workspace root (worktree = DIR/<episode>)
    #[arg(long, value_name = "DIR")]
    workspace_root: Option<PathBuf>,
    /// The pinned AILANG tool binary for the Ailang.* effects
    #[arg(long, value_name = "PATH")]
    tool_ailang_bin: Option<PathBuf>,
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

/// Run `world mcp`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    super::limits::check_ledger_flag("mcp", args.ledger.as_deref())?;
    let token = super::session_token("mcp", out, args.session.value())?;
    // Fail fast on a store that cannot be read; the session itself is checked per request.
    ctx.open_read()?;
    let checked = args
        .exec
        .host_flags(
            args.workspace_root,
            args.tool_ailang_bin,
            RunCapsConfig::default(),
            args.ledger,
            &args.unattested,
        )
        .check(&ctx.db)
        .map_err(|e| host_err("mcp", e))?;
    if let Some(why) = checked.sandbox_error() {
        out.warn(format!(
            "Workspace.Exec unavailable: no usable sandbox: {why}; workspace-exec calls are refused (R8)"
        ));
    }
    let backend = StdioBackend {
        db: ctx.db.clone(),
        wait_lock: Some(ctx.wait_lock.unwrap_or(std::time::Duration::from_secs(20))),
        host: checked.pin(&ctx.db).map_err(|e| host_err("mcp", e))?,
    };
    let stdin = std::io::stdin();
    if std::io::IsTerminal::is_terminal(&stdin) {
        // Started by hand rather than by an MCP client: say what is waiting, on stderr (stdout
        // carries only protocol), instead of waiting silently (DEC-FAULTS-2).
        out.status(
            "world mcp: serving MCP on stdin/stdout; an MCP client normally starts this — type one \
             JSON-RPC message per line, or Ctrl-D to end",
        );
    }
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut output = stdout.lock();
    crate::serve::set_clock(ctx.clock);
    serve_stdio(backend, &token, &mut input, &mut output)
        .map_err(|e| CliError::failed("mcp", format!("stdio: {e}")))?;
    Ok(Exit::Success)
}
