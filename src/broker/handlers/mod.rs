//! Effect handlers: what actually happens when the broker allows an effect
//! (authority-and-broker.md §12, §12.1–§12.3, §13).
//!
//! A [`Handler`] serves one effect name (one instance per name) and turns a request payload
//! into a [`HandlerOutcome`]: output bytes (a JSON object's text), a failure message (the
//! effect is recorded `failed`, the unit stays spent), or an indeterminate message (the handler
//! cannot tell whether its effect happened; the broker leaves the intent without an outcome,
//! DEC-BROKER-2). A [`HandlerRegistry`] is built per episode from a [`HandlerContext`]; an
//! effect with no handler in it is refused before anything runs (rule R8).
//!
//! | Effect | Handler | Module |
//! |---|---|---|
//! | `Workspace.Read`, `Workspace.Write` | native, confined to the worktree | [`workspace`] |
//! | `FS.Read`, `FS.Write` | native, scope = one canonical absolute file | [`fs`] |
//! | `Git.Commit` | `git` CLI on the worktree | [`git`] |
//! | `Model.Infer` | pluggable backend, none by default | [`model`] |
//! | `Human.Approve`, `Human.PollApproval` | approval store + controlling terminal | [`approval`] |
//! | `Ailang.*` | the pinned tool binary under a rendered policy | [`ailang`] |
//! | `Workspace.Exec` | one profile command in a bubblewrap sandbox (exec-and-agui.md §1) | [`exec`] |
//! | `Registry.Publish` | attended package publish only (`world package publish`) | [`registry`] |

pub mod ailang;
pub mod approval;
pub mod confine;
pub mod exec;
pub mod fs;
pub mod git;
pub mod model;
pub mod policy;
pub mod process;
pub mod registry;
pub mod workspace;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};

/// `Workspace.Read` (§12.1: op `read`).
pub const WORKSPACE_READ: &str = "Workspace.Read";
/// `Workspace.Write` (§12.1: ops `write`, `edit`).
pub const WORKSPACE_WRITE: &str = "Workspace.Write";
/// `Workspace.Exec` (exec-and-agui.md §1: one command of the operator's exec profile).
pub const WORKSPACE_EXEC: &str = "Workspace.Exec";
/// `FS.Read` (§12: scope = one canonical absolute file path).
pub const FS_READ: &str = "FS.Read";
/// `FS.Write` (§12: scope = one canonical absolute file path).
pub const FS_WRITE: &str = "FS.Write";
/// `Git.Commit` (§12: commits the worktree's staged changes).
pub const GIT_COMMIT: &str = "Git.Commit";
/// `Model.Infer` (§12: pluggable backend).
pub const MODEL_INFER: &str = "Model.Infer";
/// `Human.Approve` (§12: attended approval).
pub const HUMAN_APPROVE: &str = "Human.Approve";
/// `Human.PollApproval` (§12: pending / approved / denied).
pub const HUMAN_POLL_APPROVAL: &str = "Human.PollApproval";
/// `Ailang.Check` (§12.1: op `ai_check`).
pub const AILANG_CHECK: &str = "Ailang.Check";
/// `Ailang.Run` (§12.3: a run whose caps hold neither Env nor Net).
pub const AILANG_RUN: &str = "Ailang.Run";
/// `Ailang.RunEnv` (§12.3: a run whose caps hold Env).
pub const AILANG_RUN_ENV: &str = "Ailang.RunEnv";
/// `Ailang.RunNet` (§12.3: a run whose caps hold Net).
pub const AILANG_RUN_NET: &str = "Ailang.RunNet";
/// `Ailang.Discover` (§12.1: ops `builtins_list`, `examples_search`).
pub const AILANG_DISCOVER: &str = "Ailang.Discover";
/// `Ailang.CLI` (§12.1: the 20 ops of transitions.md §13.3).
pub const AILANG_CLI: &str = "Ailang.CLI";

/// The symbolic scope of the worktree-bound effects (§4, §12).
pub const WORKTREE_SCOPE: &str = "worktree";

/// R8's refusal text (§12).
pub const NO_HANDLER_MESSAGE: &str = "transition declares an effect this daemon has no handler for";

/// What a handler reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HandlerOutcome {
    /// The handler ran; its output is the text of one JSON object (it may say `"ok":false`
    /// for a tool-level refusal such as a missing file, transitions.md §13.4).
    Succeeded(Vec<u8>),
    /// The handler ran and reported an error, or refused the request (every host-side
    /// confinement refusal, §13): the effect is recorded `failed` and the unit stays spent.
    Failed(String),
    /// The handler cannot tell whether its effect happened (a killed run, a timed-out commit):
    /// fail closed, never retried (§9, DEC-BROKER-2).
    Indeterminate(String),
}

impl HandlerOutcome {
    /// A successful outcome holding `value`'s JSON text (object keys in insertion order).
    pub fn json(value: &Value) -> HandlerOutcome {
        match serde_json::to_vec(value) {
            Ok(bytes) => HandlerOutcome::Succeeded(bytes),
            Err(err) => HandlerOutcome::Failed(format!("cannot encode handler output: {err}")),
        }
    }
}

/// The operator's run allowlist (§12.3 gate 2, §13 "Capabilities"): `--run-allow-caps`,
/// `--run-net-allow IP:PORT`…, `--run-net-allow-http`. Validate with
/// [`policy::validate_run_caps_config`] at startup.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunCapsConfig {
    /// Extra capabilities a run may request: a subset of `Declassify`, `Env`, `Net`.
    pub allow: Vec<String>,
    /// Loopback `IP:PORT` literals a Net run may reach, rendered as `net_allow`.
    pub net_allow: Vec<String>,
    /// Render `net_allow_http = true` for Net runs.
    pub net_allow_http: bool,
}

/// Everything a handler may know about the episode it serves.
#[derive(Clone, Debug, Default)]
pub struct HandlerContext {
    /// The episode id (names the policy file, the cache dir and the budget ledger, §3).
    pub episode: String,
    /// The episode worktree (`<workspace-root>/<episode>`), when the episode has one.
    pub worktree: Option<PathBuf>,
    /// The store database path; `<db-dir>` holds `policies/` and `cache/` (§12.2).
    pub db_path: PathBuf,
    /// The pinned tool binary (`--tool-ailang-bin`, archived; [`ailang::PinnedTool`]).
    pub tool: Option<ailang::PinnedTool>,
    /// The run allowlist (`--run-allow-caps` and friends).
    pub run_caps: RunCapsConfig,
    /// The examples corpus (`--examples-dir`), passed as `AILANG_EXAMPLES`.
    pub examples_dir: Option<PathBuf>,
    /// The `git` executable for `Git.Commit`, absolute (see [`process::find_in_path`]).
    pub git_bin: Option<PathBuf>,
    /// `--exec-profile` and friends ([`exec::ExecConfig`]); `None` binds `Workspace.Exec` to
    /// the unconfigured refusal.
    pub exec: Option<Arc<exec::ExecConfig>>,
}

impl HandlerContext {
    /// `<db-dir>`: the directory holding the store file (`.` for a bare file name).
    pub fn db_dir(&self) -> PathBuf {
        match self.db_path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }

    /// `<db-dir>/cache/<episode>`: `HOME` and `AILANG_CACHE_DIR` of every child (§12.2).
    pub fn cache_dir(&self) -> PathBuf {
        self.db_dir().join("cache").join(&self.episode)
    }

    /// `<db-dir>/policies`: where episode policies are rendered (§12.2).
    pub fn policy_dir(&self) -> PathBuf {
        self.db_dir().join("policies")
    }
}

/// One effect's handler.
pub trait Handler: Send + Sync {
    /// The effect name this handler serves (one instance per name).
    fn effect(&self) -> &'static str;

    /// Runs the effect. `scope` is the request's scope string (the grant already matched it);
    /// `payload` the request payload; `deadline` the handler deadline
    /// ([`process::handler_deadline`]). Never panics on any payload.
    fn execute(
        &self,
        ctx: &HandlerContext,
        scope: &str,
        payload: &Value,
        deadline: Instant,
    ) -> HandlerOutcome;

    /// Runs the effect for the broker's journaled intent `intent` (its id and logical time).
    /// The broker always calls this; handlers whose effect is bound to the intent (the
    /// approval handlers record their claim under the intent id) override it, every other
    /// handler keeps this default, which is [`Handler::execute`].
    fn execute_intent(
        &self,
        ctx: &HandlerContext,
        intent: &Intent<'_>,
        scope: &str,
        payload: &Value,
        deadline: Instant,
    ) -> HandlerOutcome {
        let _ = intent;
        self.execute(ctx, scope, payload, deadline)
    }

    /// Runs inside the transaction that journals the effect's intent `intent` (request object
    /// `request_ref`), before it commits: an `Err` refuses the effect and rolls the intent
    /// back (nothing journaled, nothing spent, no record). `Registry.Publish` validates and
    /// claims its approval here; every other handler keeps this default, which does nothing.
    ///
    /// # Errors
    /// The refusal text.
    fn bind_intent(
        &self,
        conn: &rusqlite::Connection,
        intent: &Intent<'_>,
        request_ref: &str,
        scope: &str,
        payload: &Value,
    ) -> Result<(), String> {
        let _ = (conn, intent, request_ref, scope, payload);
        Ok(())
    }
}

/// The durable effect intent a handler runs under.
#[derive(Clone, Copy, Debug)]
pub struct Intent<'a> {
    /// `effect:<episode>:<ordinal>` (the journal's `invocation_id` of the intent row).
    pub id: &'a str,
    /// The logical time of the request, Unix seconds.
    pub now: i64,
    /// The effect's cost (the request's `cost`).
    pub cost: i64,
}

/// Services a registry can be given; the ones absent leave their effects unserved or failing.
#[derive(Clone, Default)]
pub struct Services {
    /// Store access for `Human.*`; without it those effects have no handler.
    pub approvals: Option<Arc<dyn approval::ApprovalStore>>,
    /// The terminal used by `Human.Approve` (default: the controlling terminal).
    pub prompter: Option<Arc<dyn approval::Prompter>>,
    /// The `Model.Infer` backend; without it the handler fails, saying how to configure one.
    pub model: Option<Arc<dyn model::ModelBackend>>,
    /// A standalone limits ledger (a file path or a `postgres://` URL) that episodes bound to a
    /// limits scope are paired with instead of the store file's tables (`--ledger`, issue 18).
    pub limits_ledger: Option<String>,
}

/// The handlers one episode can use (R8: an effect missing here is refused before anything
/// runs).
pub struct HandlerRegistry {
    handlers: BTreeMap<&'static str, Box<dyn Handler>>,
    tools: Option<Arc<ailang::ToolLane>>,
    warnings: Vec<String>,
}

impl HandlerRegistry {
    /// Builds the registry for one episode (§3 "Bad layout", §12):
    ///
    /// - a configured worktree that is not a real directory resolving to itself gives an
    ///   **empty** registry (every effectful call refused by R8) and a warning;
    /// - with a good worktree: `Workspace.Read`/`Write`; `Git.Commit` when `<worktree>/.git`
    ///   exists and a `git` executable is known; the six `Ailang.*` effects when a tool binary
    ///   is configured (set up lazily, [`HandlerRegistry::prepare_tools`]);
    /// - a tool binary without a worktree serves nothing and warns
    ///   `world: workspace tools disabled: --tool-ailang-bin needs --workspace-root`;
    /// - always `FS.Read`, `FS.Write`, `Model.Infer`; `Human.*` when an approval store is given;
    /// - `Workspace.Exec` as [`exec::bind`] decides: the unconfigured refusal without a
    ///   profile; unbound (with a warning) when a profile has no usable sandbox or no worktree.
    pub fn for_episode(ctx: &HandlerContext, services: Services) -> HandlerRegistry {
        let mut registry = HandlerRegistry {
            handlers: BTreeMap::new(),
            tools: None,
            warnings: Vec::new(),
        };
        let sandbox = match &ctx.worktree {
            Some(worktree) => match confine::Sandbox::open(worktree) {
                Ok(sandbox) => Some(sandbox),
                Err(err) => {
                    registry.warnings.push(format!(
                        "world: episode {:?} has no handlers: {err}",
                        ctx.episode
                    ));
                    return registry;
                }
            },
            None => None,
        };
        match (&sandbox, &ctx.tool) {
            (Some(sandbox), tool) => {
                for effect in [WORKSPACE_READ, WORKSPACE_WRITE] {
                    registry.add(Box::new(workspace::WorkspaceHandler::new(
                        effect,
                        sandbox.clone(),
                    )));
                }
                if sandbox.root().join(".git").symlink_metadata().is_ok() {
                    if let Some(git) = &ctx.git_bin {
                        registry.add(Box::new(git::GitCommitHandler::new(
                            sandbox.clone(),
                            git.clone(),
                        )));
                    }
                }
                if let Some(tool) = tool {
                    let lane = Arc::new(ailang::ToolLane::new(ctx, sandbox.clone(), tool.clone()));
                    for effect in ailang::TOOL_EFFECTS {
                        registry.add(Box::new(ailang::AilangHandler::new(effect, lane.clone())));
                    }
                    registry.tools = Some(lane);
                }
            }
            (None, Some(_)) => registry.warnings.push(
                "world: workspace tools disabled: --tool-ailang-bin needs --workspace-root"
                    .to_owned(),
            ),
            (None, None) => {}
        }
        match exec::bind(ctx, sandbox.as_ref().map(confine::Sandbox::root)) {
            Ok(handler) => registry.add(handler),
            Err(why) => registry.warnings.push(why.to_string()),
        }
        registry.add(Box::new(fs::FsHandler::new(FS_READ)));
        registry.add(Box::new(fs::FsHandler::new(FS_WRITE)));
        registry.add(Box::new(model::ModelInferHandler::new(
            services.model.clone(),
        )));
        if let Some(store) = &services.approvals {
            let prompter = services
                .prompter
                .clone()
                .unwrap_or_else(|| Arc::new(approval::TtyPrompter));
            registry.add(Box::new(approval::ApproveHandler::new(
                store.clone(),
                prompter,
            )));
            registry.add(Box::new(approval::PollApprovalHandler::new(store.clone())));
        }
        registry
    }

    /// A registry holding exactly `handlers` (an attended one-effect call such as
    /// `world package publish`).
    pub fn with_handlers(handlers: Vec<Box<dyn Handler>>) -> HandlerRegistry {
        let mut registry = HandlerRegistry {
            handlers: BTreeMap::new(),
            tools: None,
            warnings: Vec::new(),
        };
        for h in handlers {
            registry.add(h);
        }
        registry
    }

    fn add(&mut self, handler: Box<dyn Handler>) {
        self.handlers.insert(handler.effect(), handler);
    }

    /// The handler for `effect`, or `None` (R8). The `Ailang.*` handlers disappear once the
    /// episode's tool setup has failed (§12.2 "give the episode no tools").
    pub fn handler_for(&self, effect: &str) -> Option<&dyn Handler> {
        if effect.starts_with("Ailang.") && self.tools.as_ref().is_some_and(|lane| lane.failed()) {
            return None;
        }
        self.handlers.get(effect).map(|h| h.as_ref())
    }

    /// The effect names currently served, sorted.
    pub fn effects(&self) -> Vec<&'static str> {
        self.handlers
            .keys()
            .copied()
            .filter(|effect| self.handler_for(effect).is_some())
            .collect()
    }

    /// Lines to log once (a refused worktree, tools disabled).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Runs the per-episode tool setup now (§12.2: version check, policy, cache dir, summary)
    /// instead of on the first tool call, so R8 can see a failure before a plan runs. `Ok` when
    /// there are no tools to prepare.
    ///
    /// # Errors
    /// [`ailang::ToolError::Unavailable`] (`world: workspace tools unavailable for episode
    /// "<ep>": …`); afterwards the `Ailang.*` effects have no handler.
    pub fn prepare_tools(&self, deadline: Instant) -> Result<(), ailang::ToolError> {
        match &self.tools {
            Some(lane) => lane.prepare(deadline),
            None => Ok(()),
        }
    }
}

/// Why an effect payload does not have the shape its handler admits. The text is the message
/// recorded in the effect's failed result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PayloadError {
    /// The payload is not a JSON object.
    #[error("payload is not a JSON object")]
    NotAnObject,
    /// A key the effect does not admit.
    #[error("{effect} refused: unknown payload key {key:?}; it admits only: {allowed}")]
    UnknownKey {
        /// The effect.
        effect: String,
        /// The first unknown key.
        key: String,
        /// The admitted keys, `, `-joined.
        allowed: String,
    },
    /// A key whose value is not a string.
    #[error("{effect} refused: payload key {key:?} must be a string")]
    NotAString {
        /// The effect.
        effect: String,
        /// The key.
        key: String,
    },
    /// A required key is absent.
    #[error("{effect} refused: payload key {key:?} is missing")]
    Missing {
        /// The effect.
        effect: String,
        /// The key.
        key: String,
    },
}

/// Handlers that still build their failure text by hand take a payload error as its text.
impl From<PayloadError> for String {
    fn from(e: PayloadError) -> String {
        e.to_string()
    }
}

/// The payload as a JSON object.
///
/// # Errors
/// [`PayloadError::NotAnObject`].
pub(crate) fn payload_object(payload: &Value) -> Result<&Map<String, Value>, PayloadError> {
    payload.as_object().ok_or(PayloadError::NotAnObject)
}

/// Refuses keys outside `allowed` (naming the first, in sorted order of the allowed list).
///
/// # Errors
/// [`PayloadError::UnknownKey`].
pub(crate) fn check_keys(
    obj: &Map<String, Value>,
    allowed: &[&str],
    effect: &str,
) -> Result<(), PayloadError> {
    for key in obj.keys() {
        if !allowed.contains(&key.as_str()) {
            return Err(PayloadError::UnknownKey {
                effect: effect.to_owned(),
                key: key.clone(),
                allowed: allowed.join(", "),
            });
        }
    }
    Ok(())
}

/// A required string field.
///
/// # Errors
/// [`PayloadError::NotAString`], [`PayloadError::Missing`].
pub(crate) fn required_str<'a>(
    obj: &'a Map<String, Value>,
    key: &str,
    effect: &str,
) -> Result<&'a str, PayloadError> {
    match obj.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(PayloadError::NotAString {
            effect: effect.to_owned(),
            key: key.to_owned(),
        }),
        None => Err(PayloadError::Missing {
            effect: effect.to_owned(),
            key: key.to_owned(),
        }),
    }
}

/// The path shown in messages for a resolved path (lossy for non-UTF-8 names).
pub(crate) fn shown(path: &Path) -> String {
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx_with(worktree: Option<PathBuf>, tool: Option<ailang::PinnedTool>) -> HandlerContext {
        HandlerContext {
            episode: "ep1".into(),
            worktree,
            db_path: PathBuf::from("/nonexistent/world.db"),
            tool,
            ..HandlerContext::default()
        }
    }

    #[test]
    fn no_worktree_serves_no_workspace_effects() {
        let reg = HandlerRegistry::for_episode(&ctx_with(None, None), Services::default());
        assert!(reg.handler_for(WORKSPACE_READ).is_none());
        assert!(reg.handler_for(AILANG_RUN).is_none());
        assert!(reg.handler_for(GIT_COMMIT).is_none());
        assert!(reg.handler_for(HUMAN_APPROVE).is_none());
        assert_eq!(
            reg.effects(),
            vec![FS_READ, FS_WRITE, MODEL_INFER, WORKSPACE_EXEC]
        );
        assert!(reg.warnings().is_empty());
    }

    #[test]
    fn tool_bin_without_worktree_warns() {
        let reg = HandlerRegistry::for_episode(
            &ctx_with(
                None,
                Some(ailang::PinnedTool {
                    hash_ref: format!("sha256:{}", "0".repeat(64)),
                    root: PathBuf::from("/nonexistent/world.db.artifacts/tool"),
                }),
            ),
            Services::default(),
        );
        assert!(reg.handler_for(AILANG_CHECK).is_none());
        assert_eq!(
            reg.warnings(),
            ["world: workspace tools disabled: --tool-ailang-bin needs --workspace-root"]
        );
    }

    #[test]
    fn bad_worktree_gives_an_empty_registry() {
        let dir = tempfile::tempdir().expect("tempdir");
        let link = std::fs::canonicalize(dir.path())
            .expect("canonical")
            .join("ep1");
        std::os::unix::fs::symlink("/etc", &link).expect("symlink");
        let reg = HandlerRegistry::for_episode(&ctx_with(Some(link), None), Services::default());
        assert!(reg.effects().is_empty());
        assert!(reg.handler_for(FS_READ).is_none());
        assert_eq!(reg.warnings().len(), 1);
        assert!(
            reg.warnings()[0].contains("is a symlink"),
            "{:?}",
            reg.warnings()
        );
    }

    #[test]
    fn good_worktree_serves_workspace_and_git_when_a_repo() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = std::fs::canonicalize(dir.path()).expect("canonical");
        let mut ctx = ctx_with(Some(ws.clone()), None);
        ctx.git_bin = Some("/usr/bin/git".into());
        let reg = HandlerRegistry::for_episode(&ctx, Services::default());
        assert!(reg.handler_for(WORKSPACE_READ).is_some());
        assert!(reg.handler_for(WORKSPACE_WRITE).is_some());
        assert!(
            reg.handler_for(GIT_COMMIT).is_none(),
            "not a repository yet"
        );
        std::fs::create_dir(ws.join(".git")).expect("mkdir");
        let reg = HandlerRegistry::for_episode(&ctx, Services::default());
        assert!(reg.handler_for(GIT_COMMIT).is_some());
        assert!(reg.handler_for("Registry.Publish").is_none());
    }

    #[test]
    fn context_paths_live_next_to_the_store() {
        let ctx = ctx_with(None, None);
        assert_eq!(ctx.cache_dir(), PathBuf::from("/nonexistent/cache/ep1"));
        assert_eq!(ctx.policy_dir(), PathBuf::from("/nonexistent/policies"));
    }
}
