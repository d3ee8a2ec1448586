//! The host of an invocation, built once from flags (issue 28 §1 `ops::host`).
//!
//! `world invoke`, `world mcp` and `world serve` take the same host flags (`--workspace-root`,
//! `--tool-ailang-bin`, the run allowlist, `--examples-dir`, `--ledger`, the `Workspace.Exec`
//! profile flags, `--allow-unattested`) and lend the result to every call as a
//! [`HostConfig`]. They build it here, in two steps, so all three check the same things in
//! the same order (DEC-ARCH2-2):
//!
//! 1. [`HostFlags::check`], before the store opens: the workspace root resolves, is a
//!    directory and does not contain the store; the examples corpus is not inside it; the run
//!    allowlist is well formed and has the workspace tools it needs; the exec profiles load and
//!    the sandbox is detected and probed ([`ExecConfig::from_flags`]).
//! 2. [`Checked::pin`], under the writer lock where the caller holds it: the tool binary is
//!    archived next to the store and re-hashed before every exec ([`PinnedTool::pin`]).
//!
//! A missing or unproven sandbox is not an error of either step: [`Checked::sandbox_error`]
//! says why, and the caller decides (the daemon refuses to start, a one-shot command warns and
//! leaves `Workspace.Exec` unbound, so its calls are refused with R8).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::authority::session::Unattested;
use crate::broker::handlers::ailang::{PinnedTool, ToolError};
use crate::broker::handlers::exec::{ExecConfig, ExecError};
use crate::broker::handlers::policy::{validate_run_caps_config, PolicyError};
use crate::broker::handlers::RunCapsConfig;
use crate::ops::invoke::HostConfig;

/// The host flags as given (exec-and-agui.md §1.2, surfaces.md §1, transitions.md §9).
#[derive(Clone, Debug, Default)]
pub struct HostFlags {
    /// `--workspace-root` (episode worktrees `<root>/<episode>`); else the episode's binding.
    pub workspace_root: Option<PathBuf>,
    /// `--tool-ailang-bin`: the AILANG tool binary for the `Ailang.*` effects.
    pub tool_bin: Option<PathBuf>,
    /// `--run-allow-caps`, `--run-net-allow`, `--run-net-allow-http`.
    pub run_caps: RunCapsConfig,
    /// `--examples-dir` (the corpus `Ailang.Examples` reads).
    pub examples_dir: Option<PathBuf>,
    /// `--ledger`: the standalone limits/mission ledger effects are paired with.
    pub limits_ledger: Option<String>,
    /// `--exec-profile` files.
    pub exec_profiles: Vec<PathBuf>,
    /// `--exec-episode-project EP=PROJECT`.
    pub exec_episode_projects: Vec<String>,
    /// `--exec-max-output-bytes`.
    pub exec_max_output_bytes: Option<u64>,
    /// `--allow-unattested` (DEC-TRUST3-2).
    pub unattested: Unattested,
}

/// Why the host flags were refused. [`HostError::flag`] names the flag at fault.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// `--workspace-root` does not resolve.
    #[error("workspace root {}: {source}", .root.display())]
    Root {
        /// The root as given.
        root: PathBuf,
        /// Why it does not resolve.
        #[source]
        source: std::io::Error,
    },
    /// `--workspace-root` is not a directory.
    #[error("workspace root {} is not a directory", .0.display())]
    NotADirectory(PathBuf),
    /// The store's directory does not resolve.
    #[error("store directory {}: {source}", .dir.display())]
    StoreDir {
        /// The store's directory.
        dir: PathBuf,
        /// Why it does not resolve.
        #[source]
        source: std::io::Error,
    },
    /// The root holds the store (and so its archive, policies and cache).
    #[error("workspace root {} contains the store {} (and its archive, policies/ and cache/)", .root.display(), .db.display())]
    ContainsStore {
        /// The canonical root.
        root: PathBuf,
        /// The store path.
        db: PathBuf,
    },
    /// `--examples-dir` is inside the workspace root (an agent could edit the corpus).
    #[error("the corpus is inside the workspace root")]
    ExamplesInsideRoot,
    /// A run flag without `--workspace-root` and `--tool-ailang-bin`.
    #[error("the run flags need the workspace tools (--workspace-root and --tool-ailang-bin)")]
    RunCapsNeedTools,
    /// The run allowlist is malformed.
    #[error(transparent)]
    RunCaps(PolicyError),
    /// An exec flag or profile is refused.
    #[error(transparent)]
    Exec(ExecError),
    /// The tool binary could not be pinned (boxed: the largest cause by far).
    #[error(transparent)]
    Tool(Box<ToolError>),
}

impl HostError {
    /// The flag the error is about, as the user typed it (`--workspace-root`,
    /// `--examples-dir`, `--run-allow-caps`, `--exec-profile`, `--tool-ailang-bin`).
    pub fn flag(&self) -> &'static str {
        match self {
            HostError::Root { .. }
            | HostError::NotADirectory(_)
            | HostError::StoreDir { .. }
            | HostError::ContainsStore { .. } => "--workspace-root",
            HostError::ExamplesInsideRoot => "--examples-dir",
            HostError::RunCapsNeedTools | HostError::RunCaps(_) => "--run-allow-caps",
            HostError::Exec(_) => "--exec-profile",
            HostError::Tool(_) => "--tool-ailang-bin",
        }
    }
}

/// Host flags that passed [`HostFlags::check`]: the workspace root canonical, the exec
/// configuration loaded and probed; the tool not yet pinned.
#[derive(Clone)]
pub struct Checked {
    flags: HostFlags,
    exec: Option<Arc<ExecConfig>>,
}

impl HostFlags {
    /// Step 1, before the store opens: check the flags against the store file `db`.
    ///
    /// # Errors
    /// [`HostError`] for the first flag refused, in this order: the workspace root, the
    /// examples corpus, the run allowlist, the exec flags and profiles.
    pub fn check(mut self, db: &Path) -> Result<Checked, HostError> {
        if let Some(root) = &self.workspace_root {
            let canon = check_workspace_root(root, db)?;
            if let Some(ex) = &self.examples_dir {
                if std::fs::canonicalize(ex).is_ok_and(|ex| ex.starts_with(&canon)) {
                    return Err(HostError::ExamplesInsideRoot);
                }
            }
            self.workspace_root = Some(canon);
        }
        let caps = &self.run_caps;
        let has_caps = !caps.allow.is_empty() || !caps.net_allow.is_empty() || caps.net_allow_http;
        if has_caps && (self.workspace_root.is_none() || self.tool_bin.is_none()) {
            return Err(HostError::RunCapsNeedTools);
        }
        validate_run_caps_config(caps).map_err(HostError::RunCaps)?;
        let exec = ExecConfig::from_flags(
            &self.exec_profiles,
            &self.exec_episode_projects,
            self.exec_max_output_bytes,
            db,
            self.workspace_root.as_deref(),
        )
        .map_err(HostError::Exec)?
        .map(Arc::new);
        Ok(Checked { flags: self, exec })
    }
}

impl Checked {
    /// Why `Workspace.Exec` has no usable sandbox (detection or the startup probe failed), or
    /// `None` (no exec profile, or a proven sandbox).
    pub fn sandbox_error(&self) -> Option<&ExecError> {
        self.exec.as_ref().and_then(|c| c.sandbox.as_ref().err())
    }

    /// Step 2: pin `--tool-ailang-bin` for the store `db` (archived next to it) and return the
    /// configuration every call borrows.
    ///
    /// # Errors
    /// [`HostError::Tool`]: the binary's `--version` run, the archive, or an unmeasured version.
    pub fn pin(self, db: &Path) -> Result<HostConfig, HostError> {
        let tool = self
            .flags
            .tool_bin
            .as_deref()
            .map(|bin| PinnedTool::pin(db, bin))
            .transpose()
            .map_err(|e| HostError::Tool(Box::new(e)))?;
        let f = self.flags;
        Ok(HostConfig {
            workspace_root: f.workspace_root,
            tool,
            run_caps: f.run_caps,
            examples_dir: f.examples_dir,
            limits_ledger: f.limits_ledger,
            exec: self.exec,
            unattested: f.unattested,
        })
    }
}

/// The canonical workspace root: it resolves, is a directory, and does not contain the store
/// `db` (whose directory holds the archive, the policies and the cache).
fn check_workspace_root(root: &Path, db: &Path) -> Result<PathBuf, HostError> {
    let canon = std::fs::canonicalize(root).map_err(|source| HostError::Root {
        root: root.to_path_buf(),
        source,
    })?;
    if !canon.is_dir() {
        return Err(HostError::NotADirectory(root.to_path_buf()));
    }
    let db_dir = db
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let db_dir = std::fs::canonicalize(db_dir).map_err(|source| HostError::StoreDir {
        dir: db_dir.to_path_buf(),
        source,
    })?;
    if db_dir.starts_with(&canon) {
        return Err(HostError::ContainsStore {
            root: canon,
            db: db.to_path_buf(),
        });
    }
    Ok(canon)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_root_holding_the_store_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("world.db");
        let flags = HostFlags {
            workspace_root: Some(dir.path().to_path_buf()),
            ..HostFlags::default()
        };
        let err = flags.check(&db).err().expect("refused");
        assert!(matches!(err, HostError::ContainsStore { .. }), "{err}");
        assert_eq!(err.flag(), "--workspace-root");
    }

    #[test]
    fn run_caps_need_the_workspace_tools_and_a_valid_list() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("world.db");
        let caps = |allow: &[&str]| RunCapsConfig {
            allow: allow.iter().map(|s| s.to_string()).collect(),
            ..RunCapsConfig::default()
        };
        let err = HostFlags {
            run_caps: caps(&["Env"]),
            ..HostFlags::default()
        }
        .check(&db)
        .err()
        .expect("refused");
        assert!(matches!(err, HostError::RunCapsNeedTools), "{err}");
        let ws = tempfile::tempdir().unwrap();
        let err = HostFlags {
            workspace_root: Some(ws.path().to_path_buf()),
            tool_bin: Some(PathBuf::from("/bin/true")),
            run_caps: caps(&["Env", "Env"]),
            ..HostFlags::default()
        }
        .check(&db)
        .err()
        .expect("refused");
        assert!(matches!(err, HostError::RunCaps(_)), "{err}");
        assert_eq!(err.flag(), "--run-allow-caps");
    }

    #[test]
    fn no_flags_give_the_default_host() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("world.db");
        let checked = HostFlags::default().check(&db).expect("no flags");
        assert!(checked.sandbox_error().is_none());
        let host = checked.pin(&db).expect("no tool");
        assert!(host.tool.is_none() && host.exec.is_none() && host.workspace_root.is_none());
    }
}
