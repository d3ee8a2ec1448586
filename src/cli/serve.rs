//! `world serve`: hold the writer lock and expose the core over HTTP `/v1`, MCP and A2A on
//! loopback (surfaces.md §1–§6).

use std::path::PathBuf;

use super::output::Output;
use super::pin::parse_choice;
use super::{CliError, Context, Exit};
use crate::broker::handlers::RunCapsConfig;
use crate::ops::host::HostFlags;
use crate::serve::{self, Config};
use crate::transitions::publish::InterpreterChoice;

/// Serve the store over HTTP (`/v1`), MCP (`/mcp/`) and A2A (`/a2a/`) on a loopback address.
///
/// Startup: bind policy, workspace root, store open + writer lock (held until exit), tool
/// binary, interpreter archive + epoch bootstrap, integrity scan, bind; then stdout
/// `world listening on http://HOST:PORT`. A failed start prints
/// `daemon startup failed at <stage>: <detail>: <cause>` and exits 2 (6 when another process
/// holds the writer lock). SIGINT/SIGTERM drain in-flight requests for up to 10 s, release
/// the lock and exit 0.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// host:port to listen on; the host must be 127.0.0.1, ::1 or localhost (port 0 = any)
    #[arg(long, default_value = serve::DEFAULT_BIND, value_name = "HOST:PORT")]
    bind: String,
    /// The interpreter: a path to an `ailang` binary, a sha256: ref of an archived one, or
    /// `embedded` (default: the store's pinned interpreter, else the embedded one)
    #[arg(long, alias = "ailang-bin", value_name = "PATH|REF|embedded")]
    interpreter: Option<String>,
    /// Directory of the episode worktrees (<DIR>/<episode>); overrides each episode's binding
    #[arg(long, value_name = "DIR")]
    workspace_root: Option<PathBuf>,
    /// The pinned AILANG tool binary for the Ailang.* effects (must report AILANG v0.52.1)
    #[arg(long, value_name = "PATH")]
    tool_ailang_bin: Option<PathBuf>,
    /// Corpus for examples-search
    #[arg(long, value_name = "DIR")]
    examples_dir: Option<PathBuf>,
    /// Capabilities ailang-run may use beyond IO and FS: Env, Net, Declassify
    #[arg(long, value_delimiter = ',', value_name = "CAPS")]
    run_allow_caps: Vec<String>,
    /// Loopback IP:PORT a Net run may reach (repeatable)
    #[arg(long, value_name = "IP:PORT")]
    run_net_allow: Vec<String>,
    /// Allow plain http to the --run-net-allow pairs
    #[arg(long)]
    run_net_allow_http: bool,
    /// An extra allowed Origin header value (repeatable; `null` is always refused)
    #[arg(long, value_name = "ORIGIN")]
    allow_origin: Vec<String>,
    /// Human.Approve asks on this daemon's controlling terminal (default: requests stay
    /// pending, decided with `world approval decide` once the daemon is stopped)
    #[arg(long)]
    approve_on_tty: bool,
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

/// Run `world serve` until a signal stops it.
pub fn run(ctx: &Context, _out: &mut Output, args: Args) -> Result<Exit, CliError> {
    super::limits::check_ledger_flag("serve", args.ledger.as_deref())?;
    let interpreter = match &args.interpreter {
        Some(t) => parse_choice(t)?,
        None => InterpreterChoice::Default,
    };
    let examples_dir = args.examples_dir.clone().or_else(|| {
        std::env::var_os("HOME")
            .map(|h| PathBuf::from(h).join(".ailang/examples"))
            .filter(|p| p.is_dir())
    });
    let cfg = Config {
        db: ctx.db.clone(),
        bind: args.bind,
        interpreter,
        host: HostFlags {
            workspace_root: args.workspace_root,
            tool_bin: args.tool_ailang_bin,
            examples_dir,
            run_caps: RunCapsConfig {
                allow: args.run_allow_caps,
                net_allow: args.run_net_allow,
                net_allow_http: args.run_net_allow_http,
            },
            limits_ledger: args.ledger,
            exec_profiles: args.exec.exec_profile,
            exec_episode_projects: args.exec.exec_episode_project,
            exec_max_output_bytes: args.exec.exec_max_output_bytes,
            unattested: args.unattested.policy(),
        },
        allow_origins: args.allow_origin,
        approve_on_tty: args.approve_on_tty,
        http_read: serve::http_read_bound(),
        clock: ctx.clock,
    };
    match serve::run(cfg) {
        Ok(()) => Ok(Exit::Success),
        Err(e) => Err(super::error::serve_err(&e)),
    }
}
