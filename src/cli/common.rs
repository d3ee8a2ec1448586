//! Flags more than one command takes, each defined once (issue 28 §2, DEC-CLIDIRS-2): the
//! session a command acts as (`SessionArgs`, and how its token is read and resolved), the
//! unattested-session rule, the `Workspace.Exec` host flags, the settle outcome, the one
//! `--now` parser of the ledger commands and the login they record. A command flattens the
//! struct (`#[command(flatten)]`), so the flag's name, value name and help are written here
//! only.

use std::path::PathBuf;

use super::CliError;

/// `--session VALUE`, declared once (issue 28) for the commands that act as a session's agent
/// with the `WORLD_SESSION` fallback (`invoke`, `mcp`, `broker check`, `tools list`): a token
/// file or the 64-hex token itself, read by [`session_token`]. `limits` and `mission` keep their
/// own `--session` (no env fallback: without it the HOST acts).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SessionArgs {
    /// Session token file or token (else WORLD_SESSION)
    #[arg(long)]
    pub session: Option<String>,
}

impl SessionArgs {
    /// The `--session` value as given (`None`: fall back to `WORLD_SESSION`).
    pub fn value(&self) -> Option<&str> {
        self.session.as_deref()
    }
}

/// `--allow-unattested`, shared by the commands that resolve a session for the broker
/// (`invoke`, `mcp`, `serve`, `broker check`, `tools list`; DEC-TRUST3-2).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct UnattestedFlag {
    /// Accept a session credential this store holds no mint record for (a row the reference
    /// daemon minted, or one inserted into the file); refused by default, and `world verify`
    /// warns `unattested` about such rows
    #[arg(long)]
    pub allow_unattested: bool,
}

impl UnattestedFlag {
    /// The session rule this flag gives.
    pub fn policy(&self) -> crate::authority::session::Unattested {
        if self.allow_unattested {
            crate::authority::session::Unattested::Allow
        } else {
            crate::authority::session::Unattested::Refuse
        }
    }
}

/// The `Workspace.Exec` flags shared by `invoke`, `serve` and `mcp` (exec-and-agui.md §1.2).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ExecFlags {
    /// An exec profile (world/exec-profile/v1) that enables Workspace.Exec; repeatable, one
    /// per project. Commands run in a bubblewrap sandbox (bwrap >= 0.8) or not at all
    #[arg(long = "exec-profile", value_name = "FILE")]
    pub exec_profile: Vec<PathBuf>,
    /// Serve episode EP with the profile of PROJECT (repeatable; else the only profile serves
    /// every episode)
    #[arg(long = "exec-episode-project", value_name = "EP=PROJECT")]
    pub exec_episode_project: Vec<String>,
    /// Kill a command whose stdout or stderr passes N bytes (default 67108864)
    #[arg(long = "exec-max-output-bytes", value_name = "N",
          value_parser = crate::broker::handlers::exec::parse_max_output)]
    pub exec_max_output_bytes: Option<u64>,
}

impl ExecFlags {
    /// The host flags of a one-shot command (`invoke`, `mcp`): these exec flags with the
    /// others given, for [`crate::ops::host`] to check and pin.
    pub(crate) fn host_flags(
        self,
        workspace_root: Option<PathBuf>,
        tool_bin: Option<PathBuf>,
        run_caps: crate::broker::handlers::RunCapsConfig,
        limits_ledger: Option<String>,
        unattested: &UnattestedFlag,
    ) -> crate::ops::host::HostFlags {
        crate::ops::host::HostFlags {
            workspace_root,
            tool_bin,
            run_caps,
            examples_dir: None,
            limits_ledger,
            exec_profiles: self.exec_profile,
            exec_episode_projects: self.exec_episode_project,
            exec_max_output_bytes: self.exec_max_output_bytes,
            unattested: unattested.policy(),
        }
    }
}

/// The outcome flags of a settle, shared by `limits settle` and `mission settle` (issue 28
/// §2, DEC-CLIDIRS-2): `--actual X` (SUCCEEDED, or FAILED with `--failed`), or `--unknown`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SettleArgs {
    /// Actual cost (canonical unsigned decimal); above the reserved amount is refused as
    /// exposure exceeded
    #[arg(
        long,
        value_name = "X",
        allow_hyphen_values = true,
        required_unless_present = "unknown",
        conflicts_with = "unknown"
    )]
    pub actual: Option<String>,
    /// The effect failed (it still cost --actual)
    #[arg(long, requires = "actual")]
    pub failed: bool,
    /// Nobody knows: the full reservation is kept until a human reconciles (limits: HOST only)
    #[arg(long)]
    pub unknown: bool,
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

/// The session token of a command: `--session VALUE` (`arg`) or else `WORLD_SESSION`, read by
/// `authority::session::read_token` (a 64-hex value is the token, anything else a file of at
/// most 256 bytes); its warning (a token on argv, a group-readable file) goes to stderr.
/// Errors name `what` (the command): no session given, or an unreadable token.
pub(crate) fn session_token(
    what: &'static str,
    out: &mut super::output::Output,
    arg: Option<&str>,
) -> Result<String, CliError> {
    let (value, from_argv) = match arg {
        Some(v) => (v.to_string(), true),
        None => match std::env::var("WORLD_SESSION") {
            Ok(v) if !v.is_empty() => (v, false),
            _ => {
                return Err(CliError::failed(
                    what,
                    "no session: pass --session FILE or set WORLD_SESSION",
                ))
            }
        },
    };
    let input = crate::authority::session::read_token(&value, from_argv)
        .map_err(|e| CliError::failed(what, e))?;
    if let Some(w) = &input.warning {
        out.warn(w);
    }
    Ok(input.token)
}

/// Resolve `--session VALUE` (else `WORLD_SESSION`) to a live session at `now`, printing the
/// reference's warnings (a token on argv, a group-readable file) on stderr.
pub(crate) fn resolve_session(
    _ctx: &super::Context,
    out: &mut super::output::Output,
    conn: &rusqlite::Connection,
    arg: Option<&str>,
    now: i64,
    unattested: crate::authority::session::Unattested,
) -> Result<crate::authority::session::Session, CliError> {
    use crate::authority::session;
    let token = session_token("session", out, arg)?;
    session::resolve_with(conn, &token, now, unattested).map_err(|e| CliError::failed("session", e))
}
