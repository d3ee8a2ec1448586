//! `Workspace.Exec`: one command of the operator's exec profile, run in the episode worktree
//! inside a bubblewrap sandbox with no network (exec-and-agui.md §1, DEC-EXEC-1..6).
//!
//! | Situation | `Workspace.Exec` |
//! |---|---|
//! | no `--exec-profile` | bound to the typed refusal [`NO_PROFILE_REFUSAL`] (never R8) |
//! | a profile, no usable sandbox | `world serve` refuses to start; otherwise unbound (R8) |
//! | a profile, a sandbox, the episode's worktree | [`ExecHandler`] |
//! | several profiles, the episode unmapped | bound to a per-call refusal |
//!
//! The handler order (§1.5): payload checks, command lookup and the argument law are
//! **refusals** (handler success `{"ok":false,"refused":…}`, nothing spawned); drifted
//! binaries, a settings file that is not World's, a bad cwd, cache setup and a spent budget
//! are **failures**. A run that starts always answers the result object of §1.7.

pub mod args;
pub mod probe;
pub mod profile;
pub mod sandbox;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use sha2::{Digest, Sha256};

use self::args::go_quote;
use self::profile::{Command, Profile};
use self::sandbox::{Bwrap, Layout, SeccompFd};
use super::{Handler, HandlerContext, HandlerOutcome, WORKSPACE_EXEC, WORKTREE_SCOPE};
use crate::encoding::gojson::{self, Obj};
use crate::process;

/// Why an exec configuration, the sandbox or one call could not proceed. Each variant holds
/// the exact text the operator, the record or the refusal shows.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    /// Flags, a profile or a placement rule refused (exit 1 / `serve` exit 2).
    #[error("{0}")]
    Config(String),
    /// No usable sandbox, or its binaries drifted.
    #[error("{0}")]
    Sandbox(String),
    /// A call failed (§1.5 failures: recorded `failed`, debited).
    #[error("{0}")]
    Call(String),
    /// A call was refused (§1.5 refusals: `{"ok":false,"refused":…}`, debited, nothing run).
    #[error("{0}")]
    Refused(String),
    /// The startup probe refused a profile or could not be set up.
    #[error("{0}")]
    Probe(String),
}

impl From<profile::ProfileError> for ExecError {
    fn from(e: profile::ProfileError) -> ExecError {
        ExecError::Config(e.to_string())
    }
}

/// The answer when no profile is configured (DEC-EXEC-6).
pub const NO_PROFILE_REFUSAL: &str =
    "no exec profile configured: start world serve with --exec-profile FILE";

/// The default per-stream runaway-output kill: 64 MiB (`--exec-max-output-bytes`).
pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = 64 << 20;

/// Bytes kept from the start of each stream.
pub const HEAD_BYTES: usize = 8 << 10;
/// Bytes kept from the end of each stream.
pub const TAIL_BYTES: usize = 56 << 10;

/// The payload's `args` bound.
const MAX_PAYLOAD_ARGS: usize = 16;

/// The host side of `--exec-profile`, `--exec-episode-project`, `--exec-max-output-bytes`:
/// loaded profiles, the episode mapping, the cap and the sandbox (or why there is none).
#[derive(Debug)]
pub struct ExecConfig {
    /// The profiles, by project.
    pub profiles: BTreeMap<String, Arc<Profile>>,
    /// `EP=PROJECT` mappings.
    pub episode_projects: BTreeMap<String, String>,
    /// The per-stream hard cap in bytes.
    pub max_output_bytes: u64,
    /// The sandbox, or why none is usable (DEC-EXEC-4).
    pub sandbox: Result<Arc<Bwrap>, ExecError>,
    /// The settings files this process rendered, by path: written on the first call of an
    /// episode × project, re-verified on every later one.
    rendered: Rendered,
}

/// Settings files rendered by this process, by path.
type Rendered = Arc<Mutex<BTreeMap<PathBuf, Arc<Settings>>>>;

/// `--exec-max-output-bytes` as clap parses it: a positive byte count.
///
/// # Errors
/// `"<v>" is not a positive byte count`.
pub fn parse_max_output(v: &str) -> Result<u64, ExecError> {
    match v.parse::<i64>() {
        Ok(n) if n > 0 => Ok(n as u64),
        _ => Err(ExecError::Config(format!(
            "{} is not a positive byte count",
            go_quote(v)
        ))),
    }
}

fn is_episode(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

impl ExecConfig {
    /// Builds the configuration from the flags, in the reference's refusal order (§1.2): a
    /// flag without a profile; each profile (load, `is configured twice`, read-root and seed
    /// placement); each `EP=PROJECT`; then the sandbox is detected ([`Bwrap::detect`]) and
    /// proved by the startup probe ([`probe::probe_all`], the same for every surface) — a
    /// missing or unproven sandbox is not an error here (the caller decides: `serve` refuses to
    /// start, a one-shot call leaves the effect unbound). `Ok(None)` when no exec flag is
    /// given.
    ///
    /// # Errors
    /// The refusal text.
    pub fn from_flags(
        profiles: &[PathBuf],
        mappings: &[String],
        max_output: Option<u64>,
        db_path: &Path,
        workspace_root: Option<&Path>,
    ) -> Result<Option<ExecConfig>, ExecError> {
        if profiles.is_empty() {
            if !mappings.is_empty() {
                return Err(ExecError::Config(needs_profile("--exec-episode-project")));
            }
            if max_output.is_some() {
                return Err(ExecError::Config(needs_profile("--exec-max-output-bytes")));
            }
            return Ok(None);
        }
        let state = state_dir(db_path)?;
        let home = operator_home()?;
        let mut loaded: BTreeMap<String, Arc<Profile>> = BTreeMap::new();
        let ws = workspace_root.and_then(|w| std::fs::canonicalize(w).ok());
        for file in profiles {
            let p = Profile::load(file)?;
            // Placement: a profile an agent could edit (the workspace) or one inside World's
            // own state is refused.
            if let Ok(real) = std::fs::canonicalize(file) {
                let inside = if real.starts_with(&state) {
                    Some(format!("the state dir {}", state.display()))
                } else {
                    ws.as_ref()
                        .filter(|w| real.starts_with(w))
                        .map(|w| format!("the workspace root {}", w.display()))
                };
                if let Some(where_) = inside {
                    return Err(ExecError::Config(format!(
                        "exec profile {}: lies inside {where_}; keep profiles where agents and World's state cannot reach them",
                        file.display()
                    )));
                }
            }
            if loaded.contains_key(&p.project) {
                return Err(ExecError::Config(format!(
                    "exec profile {}: project {} is configured twice",
                    file.display(),
                    go_quote(&p.project)
                )));
            }
            check_placement(&p, &home, &state, workspace_root)?;
            loaded.insert(p.project.clone(), Arc::new(p));
        }
        let mut episode_projects = BTreeMap::new();
        for m in mappings {
            let Some((ep, project)) = m.split_once('=') else {
                return Err(ExecError::Config(format!(
                    "--exec-episode-project {} is not EP=PROJECT",
                    go_quote(m)
                )));
            };
            if !is_episode(ep) {
                return Err(ExecError::Config(format!(
                    "--exec-episode-project {}: episode {} is outside the episode grammar",
                    go_quote(m),
                    go_quote(ep)
                )));
            }
            if !loaded.contains_key(project) {
                let names: Vec<&str> = loaded.keys().map(String::as_str).collect();
                return Err(ExecError::Config(format!(
                    "--exec-episode-project {}: {} names no configured profile (projects: {})",
                    go_quote(m),
                    go_quote(project),
                    names.join(", ")
                )));
            }
            if episode_projects
                .insert(ep.to_string(), project.to_string())
                .is_some()
            {
                return Err(ExecError::Config(format!(
                    "--exec-episode-project {}: maps episode {} a second time",
                    go_quote(m),
                    go_quote(ep)
                )));
            }
        }
        let mut cfg = ExecConfig {
            profiles: loaded,
            episode_projects,
            max_output_bytes: max_output.unwrap_or(DEFAULT_MAX_OUTPUT_BYTES),
            sandbox: Bwrap::detect().map(Arc::new),
            rendered: Rendered::default(),
        };
        // The one confinement probe (issue 26 §6): `invoke`, `mcp` and `serve` all run the
        // seven arms before any `Workspace.Exec`, so a `bwrap` that does not confine (one
        // that runs the command directly) is never used and never recorded as a sandbox.
        if let Ok(bwrap) = cfg.sandbox.clone() {
            if let Err(e) = probe::probe_all(&cfg, &bwrap, db_path, workspace_root) {
                cfg.sandbox = Err(e);
            }
        }
        Ok(Some(cfg))
    }

    /// The profile serving `episode`: its mapping, else the only profile.
    fn profile_for(&self, episode: &str) -> Option<Arc<Profile>> {
        match self.episode_projects.get(episode) {
            Some(project) => self.profiles.get(project).cloned(),
            None if self.profiles.len() == 1 => self.profiles.values().next().cloned(),
            None => None,
        }
    }
}

fn needs_profile(flag: &str) -> String {
    format!("{flag}: needs --exec-profile (it configures workspace-exec, which is off without a profile)")
}

/// `<state>`: the store file's canonical directory.
fn state_dir(db_path: &Path) -> Result<PathBuf, ExecError> {
    let dir = match db_path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::canonicalize(&dir)
        .map_err(|e| ExecError::Config(format!("state dir {}: {e}", dir.display())))
}

/// The operator's canonical HOME (hidden from every command).
fn operator_home() -> Result<PathBuf, ExecError> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .ok_or_else(|| ExecError::Config("operator HOME is not set".to_string()))?;
    let home = std::fs::canonicalize(&home).map_err(|e| {
        ExecError::Config(format!("operator HOME {}: {e}", Path::new(&home).display()))
    })?;
    if home == Path::new("/") {
        return Err(ExecError::Config(
            "operator HOME is /; the sandbox cannot hide it".into(),
        ));
    }
    Ok(home)
}

/// The read-root and seed placement rules of §1.3 that need the host's paths.
fn check_placement(
    p: &Profile,
    home: &Path,
    state: &Path,
    workspace_root: Option<&Path>,
) -> Result<(), ExecError> {
    let ws = workspace_root.and_then(|w| std::fs::canonicalize(w).ok());
    for r in &p.read_roots {
        let real = std::fs::canonicalize(r).map_err(|e| {
            ExecError::Config(format!("exec profile: read_roots: {}: {e}", go_quote(r)))
        })?;
        for cand in [Path::new(r), real.as_path()] {
            let why = if cand == Path::new("/") {
                Some("is /".to_string())
            } else if home.starts_with(cand) {
                Some(format!("is HOME {} or an ancestor of it", home.display()))
            } else if state.starts_with(cand) || cand.starts_with(state) {
                Some(format!(
                    "is, contains or lies inside the state dir {}",
                    state.display()
                ))
            } else {
                ws.as_ref()
                    .filter(|w| w.starts_with(cand) || cand.starts_with(w))
                    .map(|w| {
                        format!(
                            "is, contains or lies inside the workspace root {}",
                            w.display()
                        )
                    })
            };
            if let Some(why) = why {
                return Err(ExecError::Config(format!(
                    "exec profile: read_roots: {} {why}",
                    go_quote(&cand.to_string_lossy())
                )));
            }
        }
    }
    for (name, seed) in &p.caches {
        let Some(seed) = seed else { continue };
        let real = std::fs::canonicalize(seed).map_err(|e| {
            ExecError::Config(format!(
                "exec profile: caches.{name}.seed: {}: {e}",
                go_quote(seed)
            ))
        })?;
        let inside_ws = ws.as_ref().is_some_and(|w| real.starts_with(w));
        if real.starts_with(state) || inside_ws {
            return Err(ExecError::Config(format!(
                "exec profile: caches.{name}.seed: {} lies inside the state dir or the workspace root",
                go_quote(seed)
            )));
        }
    }
    Ok(())
}

/// `{"ok":false,"refused":why}` as a successful outcome (a refusal, §1.5).
fn refusal(why: &str) -> HandlerOutcome {
    HandlerOutcome::Succeeded(Obj::new().bool("ok", false).str("refused", why).finish())
}

fn check_effect(scope: &str) -> Result<(), ExecError> {
    if scope != WORKTREE_SCOPE {
        return Err(ExecError::Call(format!(
            "broker: exec handler: scope {} is not {}",
            go_quote(scope),
            go_quote(WORKTREE_SCOPE)
        )));
    }
    Ok(())
}

/// `Workspace.Exec` with a fixed refusal: the unconfigured one, or an unmapped episode's.
pub struct FixedExecHandler {
    why: String,
}

impl FixedExecHandler {
    /// Every call is refused with `why` (a handler success, debited).
    pub fn refusing(why: impl Into<String>) -> FixedExecHandler {
        FixedExecHandler { why: why.into() }
    }
}

impl Handler for FixedExecHandler {
    fn effect(&self) -> &'static str {
        WORKSPACE_EXEC
    }

    fn execute(
        &self,
        _ctx: &HandlerContext,
        scope: &str,
        _payload: &Value,
        _deadline: Instant,
    ) -> HandlerOutcome {
        if let Err(e) = check_effect(scope) {
            return HandlerOutcome::Failed(e.to_string());
        }
        refusal(&self.why)
    }
}

/// The payload checks (defence in depth, §1.5 step 1): `Ok((command, args))` or the refusal
/// text. Keys are visited in byte order (the payload is canonical).
pub fn parse_payload(payload: &Value) -> Result<(String, Vec<String>), ExecError> {
    let Some(obj) = payload.as_object() else {
        return Err(ExecError::Refused("payload is not a JSON object".into()));
    };
    let mut keys: Vec<&String> = obj.keys().collect();
    keys.sort();
    let mut command = String::new();
    let mut items = Vec::new();
    for key in keys {
        let value = &obj[key.as_str()];
        match key.as_str() {
            "command" => match value.as_str() {
                Some(c) if profile::is_command_id(c) => command = c.to_string(),
                _ => {
                    return Err(ExecError::Refused(
                        "command must be a string matching ^[a-z][a-z0-9-]{0,31}$".into(),
                    ))
                }
            },
            "args" => {
                let Some(list) = value.as_array() else {
                    return Err(ExecError::Refused(
                        "args must be an array of strings".into(),
                    ));
                };
                let mut strs = Vec::with_capacity(list.len());
                for a in list {
                    match a.as_str() {
                        Some(s) => strs.push(s.to_string()),
                        None => {
                            return Err(ExecError::Refused(
                                "args must be an array of strings".into(),
                            ))
                        }
                    }
                }
                if strs.len() > MAX_PAYLOAD_ARGS {
                    return Err(ExecError::Refused(format!(
                        "args has {} items; the limit is {MAX_PAYLOAD_ARGS}",
                        strs.len()
                    )));
                }
                if strs
                    .iter()
                    .any(|a| a.is_empty() || a.len() > 512 || a.contains('\0'))
                {
                    return Err(ExecError::Refused(
                        "every arg must be 1–512 bytes with no NUL".into(),
                    ));
                }
                items = strs;
            }
            other => {
                for name in ["command", "args"] {
                    if other.eq_ignore_ascii_case(name) {
                        return Err(ExecError::Refused(format!(
                            "key {} aliases {}",
                            go_quote(other),
                            go_quote(name)
                        )));
                    }
                }
                return Err(ExecError::Refused(format!(
                    "unknown payload key {}",
                    go_quote(other)
                )));
            }
        }
    }
    if command.is_empty() {
        return Err(ExecError::Refused("command is required".into()));
    }
    Ok((command, items))
}

/// The settings file of one episode × project, rendered once and verified before each call.
#[derive(Debug)]
struct Settings {
    path: PathBuf,
    bytes: Vec<u8>,
    digest: String,
}

/// `Workspace.Exec` for one episode × project (§1.5–§1.7).
pub struct ExecHandler {
    profile: Arc<Profile>,
    bwrap: Arc<Bwrap>,
    episode: String,
    worktree: PathBuf,
    max_output: u64,
    /// Settings rendered by this process ([`ExecHandler::settings`]).
    rendered: Rendered,
}

impl ExecHandler {
    /// A handler for `episode` working in the canonical `worktree`, sharing `rendered` (the
    /// settings files this process wrote) with the other handlers of its configuration.
    fn new(
        profile: Arc<Profile>,
        bwrap: Arc<Bwrap>,
        episode: &str,
        worktree: PathBuf,
        max_output: u64,
        rendered: Rendered,
    ) -> ExecHandler {
        ExecHandler {
            profile,
            bwrap,
            episode: episode.to_string(),
            worktree,
            max_output,
            rendered,
        }
    }

    fn layout(&self, ctx: &HandlerContext) -> Result<Layout, ExecError> {
        let fail = |e: String| ExecError::Call(format!("broker: exec handler: {e}"));
        if !is_episode(&self.episode) {
            return Err(fail(format!(
                "episode id {} is outside the grammar",
                go_quote(&self.episode)
            )));
        }
        let state = state_dir(&ctx.db_path).map_err(|e| fail(e.to_string()))?;
        let home = operator_home().map_err(|e| fail(e.to_string()))?;
        let workspace_root = self
            .worktree
            .parent()
            .filter(|p| *p != Path::new("/"))
            .ok_or_else(|| fail("the worktree has no workspace root".into()))?
            .to_path_buf();
        let mut read_roots = Vec::new();
        for r in &self.profile.read_roots {
            let real = std::fs::canonicalize(r)
                .map_err(|e| fail(format!("read_root {}: {e}", go_quote(r))))?;
            for p in [PathBuf::from(r), real] {
                if !read_roots.contains(&p) {
                    read_roots.push(p);
                }
            }
        }
        Ok(Layout {
            worktree: self.worktree.clone(),
            cache: state
                .join("exec-cache")
                .join(&self.episode)
                .join(&self.profile.project),
            home,
            state,
            workspace_root,
            read_roots,
        })
    }

    fn settings_path(&self, layout: &Layout) -> PathBuf {
        layout.state.join("exec").join(format!(
            "{}.{}.srt.json",
            self.episode, self.profile.project
        ))
    }

    /// Writes the settings file once (0600, atomically), then re-verifies it on every call:
    /// a regular 0600 file holding exactly World's rendering.
    fn settings(&self, layout: &Layout) -> Result<Arc<Settings>, ExecError> {
        let path = self.settings_path(layout);
        let mut done = self.rendered.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = done.get(&path) {
            verify_settings(&s.path, &s.bytes)?;
            return Ok(s.clone());
        }
        let bytes = layout.settings();
        write_settings(&path, &bytes)?;
        verify_settings(&path, &bytes)?;
        let s = Arc::new(Settings {
            digest: format!("sha256:{}", hex::encode(Sha256::digest(&bytes))),
            path,
            bytes,
        });
        done.insert(s.path.clone(), s.clone());
        Ok(s)
    }

    /// `<worktree>/<root>`: an existing directory reached without a symlink.
    fn project_dir(&self) -> Result<PathBuf, ExecError> {
        let want = if self.profile.root == "." {
            self.worktree.clone()
        } else {
            self.worktree.join(&self.profile.root)
        };
        match std::fs::canonicalize(&want) {
            Ok(got) if got == want && got.is_dir() => Ok(got),
            Ok(_) => Err(ExecError::Call(format!(
                "broker: exec handler: project root {} is not a directory inside the worktree",
                go_quote(&want.to_string_lossy())
            ))),
            Err(e) => Err(ExecError::Call(format!(
                "broker: exec handler: project root {} is not a directory inside the worktree ({e})",
                go_quote(&want.to_string_lossy())
            ))),
        }
    }

    /// The episode's cache dirs (0700): World's own four, then each `caches` entry, seeded on
    /// first use by `cp -a --reflink=auto` of the operator's seed (through the one runner).
    fn prepare_cache(&self, cache: &Path, deadline: Instant) -> Result<(), ExecError> {
        let mkdir = |d: &Path| {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(d)
                .map_err(|e| {
                    ExecError::Call(format!(
                        "broker: exec handler: cache dir {}: {e}",
                        d.display()
                    ))
                })
        };
        for d in ["home", "tmp", "pycache", "npm"] {
            mkdir(&cache.join(d))?;
        }
        for (name, seed) in &self.profile.caches {
            let dst = cache.join(name);
            if dst.symlink_metadata().is_ok() {
                continue;
            }
            let Some(seed) = seed else {
                mkdir(&dst)?;
                continue;
            };
            let spec = process::Spec::new("/bin/cp", 64 * 1024, deadline)
                .args(["-a", "--reflink=auto"])
                .arg(seed)
                .arg(&dst)
                .cwd(cache)
                .env("PATH", "/usr/bin:/bin");
            let ok = matches!(process::run(&spec), Ok(o) if o.exit_code == 0);
            if !ok {
                let _ = std::fs::remove_dir_all(&dst);
                return Err(ExecError::Call(format!(
                    "broker: exec handler: seed cache {name} from {seed} failed"
                )));
            }
        }
        Ok(())
    }

    /// The child environment, fresh per call (§1.6): World's set, then `env` and the cache
    /// variables, each in byte order.
    fn child_env(&self, cache: &Path) -> Vec<String> {
        let c = |d: &str| cache.join(d).to_string_lossy().into_owned();
        let mut kv = vec![
            format!("HOME={}", c("home")),
            format!("TMPDIR={}", c("tmp")),
            format!("PATH={}", self.profile.path.join(":")),
            "LANG=C.UTF-8".to_string(),
            "LC_ALL=C.UTF-8".to_string(),
            format!("PYTHONPYCACHEPREFIX={}", c("pycache")),
            format!("npm_config_cache={}", c("npm")),
            "CI=1".to_string(),
            "NO_COLOR=1".to_string(),
        ];
        for (k, v) in &self.profile.env {
            kv.push(format!("{k}={v}"));
        }
        for name in self.profile.caches.keys() {
            kv.push(format!("{name}={}", c(name)));
        }
        kv
    }

    fn run(&self, ctx: &HandlerContext, payload: &Value, deadline: Instant) -> HandlerOutcome {
        let (id, agent_args) = match parse_payload(payload) {
            Ok(v) => v,
            Err(why) => return refusal(&why.to_string()),
        };
        let Some(cmd) = self.profile.commands.get(&id) else {
            return refusal(&format!(
                "command {} is not a command of exec profile {}",
                go_quote(&id),
                go_quote(&self.profile.project)
            ));
        };
        let normalized = match args::match_args(&cmd.grammar, &agent_args) {
            Ok(n) => n,
            Err(e) => return refusal(&format!("command {}: {e}", go_quote(&id))),
        };
        let emitted = args::emit_args(&cmd.grammar, &normalized);
        match self.launch(ctx, cmd, &id, &emitted, deadline) {
            Ok(bytes) => HandlerOutcome::Succeeded(bytes),
            Err(why) => HandlerOutcome::Failed(why.to_string()),
        }
    }

    fn launch(
        &self,
        ctx: &HandlerContext,
        cmd: &Command,
        id: &str,
        emitted: &[String],
        deadline: Instant,
    ) -> Result<Vec<u8>, ExecError> {
        // §1.5 step 3: the stack is re-verified before every call.
        self.bwrap.verify()?;
        sandbox::verify_file(&cmd.argv0, &cmd.argv0_sha256)?;
        let layout = self.layout(ctx)?;
        let settings = self.settings(&layout)?;
        // Step 4.
        let cwd = self.project_dir()?;
        self.prepare_cache(&layout.cache, deadline)?;
        let budget = Duration::from_millis(self.profile.timeout_ms)
            .min(deadline.saturating_duration_since(Instant::now()));
        if budget.is_zero() {
            return Err(ExecError::Call(format!(
                "broker: exec handler: the call's budget is spent before {} could start",
                go_quote(id)
            )));
        }
        let mut command: Vec<OsString> = vec![cmd.argv0.clone().into_os_string()];
        command.extend(cmd.argv.iter().skip(1).map(OsString::from));
        command.extend(emitted.iter().map(OsString::from));
        let (cap, duration_ms) = self.spawn(&layout, &cwd, command, &[], budget)?;
        let mut full_argv = cmd.argv.clone();
        full_argv.extend(emitted.iter().cloned());
        Ok(self.result(&cap, duration_ms, &full_argv, cmd, id, &settings.digest))
    }

    /// Runs `command` (an absolute argv[0] and its arguments) in the sandbox of `layout`
    /// (DEC-EXEC-2) through the trampoline with the child environment, for at most `budget`;
    /// `extra_ro` are bound read-only too (the probe's client). Returns the capture and the
    /// milliseconds from spawn to return.
    fn spawn(
        &self,
        layout: &Layout,
        cwd: &Path,
        command: Vec<OsString>,
        extra_ro: &[PathBuf],
        budget: Duration,
    ) -> Result<(process::Captured, i64), ExecError> {
        let filter = SeccompFd::new()
            .map_err(|e| ExecError::Call(format!("broker: exec handler: seccomp program: {e}")))?;
        let mut argv: Vec<OsString> = layout.bwrap_args(filter.raw(), cwd, extra_ro);
        argv.extend(
            ["--", "/bin/sh", "-c", sandbox::TRAMPOLINE, "world-exec"]
                .iter()
                .map(OsString::from),
        );
        argv.extend(
            self.child_env(&layout.cache)
                .into_iter()
                .map(OsString::from),
        );
        argv.extend(command);
        let mut spec = process::Spec::new(&self.bwrap.path, 0, Instant::now() + budget)
            .args(argv)
            .cwd(cwd)
            .env("PATH", "/usr/bin:/bin");
        spec.keep_fds = vec![filter.raw()];
        let started = Instant::now();
        let cap = process::run_captured(
            &spec,
            process::HeadTail {
                head: HEAD_BYTES,
                tail: TAIL_BYTES,
                hard_cap: self.max_output,
            },
        )
        .map_err(|e| ExecError::Call(format!("broker: exec handler: {e}")))?;
        let duration_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
        drop(filter);
        Ok((cap, duration_ms))
    }

    /// The result object (§1.7), Go-json, members in the reference's order.
    fn result(
        &self,
        cap: &process::Captured,
        duration_ms: i64,
        argv: &[String],
        cmd: &Command,
        id: &str,
        settings_digest: &str,
    ) -> Vec<u8> {
        let mut o = Obj::new();
        o = match cap.exit_code {
            Some(code) => o.int("exit_code", i64::from(code)),
            None => o.raw("exit_code", b"null"),
        };
        o = o.bool("timed_out", cap.timed_out);
        o = if cap.over_cap {
            o.str("limit", "output")
        } else {
            o.raw("limit", b"null")
        };
        o = o.int("duration_ms", duration_ms);
        for (name, s) in [("stdout", &cap.stdout), ("stderr", &cap.stderr)] {
            let mut text = Vec::new();
            gojson::write_bytes_as_str(&mut text, &stream_text(s));
            o = o
                .raw(name, &text)
                .int(
                    &format!("{name}_bytes"),
                    i64::try_from(s.total).unwrap_or(i64::MAX),
                )
                .bool(&format!("{name}_truncated"), s.truncated())
                .str(&format!("{name}_sha256"), &s.sha256);
        }
        o = o.strs("argv", Some(argv));
        let profile = Obj::new()
            .str("project", &self.profile.project)
            .str("digest", &self.profile.digest)
            .str("command", id)
            .str("argv0_sha256", &cmd.argv0_sha256)
            .finish();
        let sandbox = Obj::new()
            .str("runtime", sandbox::RUNTIME)
            .str("version", &self.bwrap.version)
            .str("cli_sha256", &self.bwrap.sha256)
            .str("settings_digest", settings_digest)
            .bool("read_fence", true)
            .str("network", "none")
            .finish();
        o.raw("profile", &profile).raw("sandbox", &sandbox).finish()
    }
}

/// One stream's text: whole when it fit, else head + `\n[... N bytes omitted ...]\n` + tail.
fn stream_text(s: &process::StreamCapture) -> Vec<u8> {
    let mut t = s.head.clone();
    if s.truncated() {
        t.extend_from_slice(format!("\n[... {} bytes omitted ...]\n", s.omitted()).as_bytes());
    }
    t.extend_from_slice(&s.tail);
    t
}

fn write_settings(path: &Path, bytes: &[u8]) -> Result<(), ExecError> {
    use std::io::Write;
    let fail = |e: std::io::Error| ExecError::Call(format!("broker: write exec settings: {e}"));
    let dir = path
        .parent()
        .ok_or_else(|| ExecError::Call("broker: write exec settings: no directory".to_string()))?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(fail)?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        std::process::id()
    ));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(fail)?;
    f.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(fail)?;
    f.write_all(bytes).map_err(fail)?;
    f.sync_all().map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(fail)
}

fn verify_settings(path: &Path, canonical: &[u8]) -> Result<(), ExecError> {
    let bad = |why: String| {
        ExecError::Call(format!(
            "broker: exec settings {} is not World's rendering: {why}",
            path.display()
        ))
    };
    let meta = std::fs::symlink_metadata(path).map_err(|e| bad(e.to_string()))?;
    let mode = meta.permissions().mode() & 0o777;
    if !meta.file_type().is_file() || mode != 0o600 {
        return Err(bad(format!("mode {mode:o}, want a regular 0600 file")));
    }
    let got = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
    if got != canonical {
        return Err(bad("its bytes differ from the canonical rendering".into()));
    }
    Ok(())
}

impl Handler for ExecHandler {
    fn effect(&self) -> &'static str {
        WORKSPACE_EXEC
    }

    fn execute(
        &self,
        ctx: &HandlerContext,
        scope: &str,
        payload: &Value,
        deadline: Instant,
    ) -> HandlerOutcome {
        if let Err(e) = check_effect(scope) {
            return HandlerOutcome::Failed(e.to_string());
        }
        self.run(ctx, payload, deadline)
    }
}

/// Binds `Workspace.Exec` for one episode (the table in the module docs). `worktree` is the
/// episode's canonical worktree when it has one.
///
/// # Errors
/// Why the effect stays unbound (R8): no usable sandbox ([`ExecError::Sandbox`]) or no
/// worktree ([`ExecError::Config`]); the registry logs it as a warning.
pub fn bind(ctx: &HandlerContext, worktree: Option<&Path>) -> Result<Box<dyn Handler>, ExecError> {
    let Some(cfg) = &ctx.exec else {
        return Ok(Box::new(FixedExecHandler::refusing(NO_PROFILE_REFUSAL)));
    };
    let bwrap = match &cfg.sandbox {
        Ok(b) => b.clone(),
        Err(why) => {
            return Err(ExecError::Sandbox(format!(
                "world: Workspace.Exec unavailable: no usable sandbox: {why}"
            )))
        }
    };
    let Some(worktree) = worktree else {
        return Err(ExecError::Config(format!(
            "world: Workspace.Exec needs the episode worktree of {:?}",
            ctx.episode
        )));
    };
    let Some(profile) = cfg.profile_for(&ctx.episode) else {
        let names: Vec<&str> = cfg.profiles.keys().map(String::as_str).collect();
        return Ok(Box::new(FixedExecHandler::refusing(format!(
            "several exec profiles are configured and none is mapped to episode {}: pass --exec-episode-project {}=PROJECT (projects: {})",
            go_quote(&ctx.episode),
            ctx.episode,
            names.join(", ")
        ))));
    };
    Ok(Box::new(ExecHandler::new(
        profile,
        bwrap,
        &ctx.episode,
        worktree.to_path_buf(),
        cfg.max_output_bytes,
        cfg.rendered.clone(),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn payload_refusals_in_order() {
        let p = |v: Value| parse_payload(&v).expect_err("refused").to_string();
        assert_eq!(
            p(json!({"command": "Go"})),
            "command must be a string matching ^[a-z][a-z0-9-]{0,31}$"
        );
        assert_eq!(
            p(json!({"command": "t", "args": "x"})),
            "args must be an array of strings"
        );
        assert_eq!(
            p(json!({"command": "t", "args": vec!["a"; 17]})),
            "args has 17 items; the limit is 16"
        );
        assert_eq!(
            p(json!({"command": "t", "args": [""]})),
            "every arg must be 1–512 bytes with no NUL"
        );
        assert_eq!(
            p(json!({"Command": "t"})),
            "key \"Command\" aliases \"command\""
        );
        assert_eq!(
            p(json!({"command": "t", "cwd": "/"})),
            "unknown payload key \"cwd\""
        );
        assert_eq!(p(json!({"args": []})), "command is required");
        assert_eq!(
            parse_payload(&json!({"command": "t", "args": ["-v"]})).unwrap(),
            ("t".to_string(), vec!["-v".to_string()])
        );
    }

    #[test]
    fn stream_text_marks_what_was_omitted() {
        let s = process::StreamCapture {
            head: b"ab".to_vec(),
            tail: b"yz".to_vec(),
            total: 10,
            sha256: String::new(),
        };
        assert_eq!(stream_text(&s), b"ab\n[... 6 bytes omitted ...]\nyz");
    }

    #[test]
    fn max_output_flag() {
        assert_eq!(parse_max_output("1"), Ok(1));
        assert_eq!(
            parse_max_output("0"),
            Err(ExecError::Config(
                "\"0\" is not a positive byte count".into()
            ))
        );
        assert!(parse_max_output("-5").is_err() && parse_max_output("x").is_err());
    }
}
