//! Flags more than one command takes, each defined once (issue 28 §2): the session a command
//! acts as, the unattested-session rule, the `Workspace.Exec` host flags, the ledger location,
//! the ledger clock and the settle outcome. A command flattens the struct (`#[command(flatten)]`),
//! so the flag's name, value name and help are written here only.

use std::path::PathBuf;

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
