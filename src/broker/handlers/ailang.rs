//! The workspace tool handlers: `Ailang.Check`, `Ailang.Run`, `Ailang.RunEnv`,
//! `Ailang.RunNet`, `Ailang.Discover`, `Ailang.CLI` through the pinned tool binary
//! (authority-and-broker.md §12 row 2, §12.1–§12.3, §13; transitions.md §13.2–§13.3).
//!
//! One [`ToolLane`] per episode is set up lazily (§12.2): version check (`AILANG v0.52.1`),
//! policy rendered at `<db-dir>/policies/<ep>.toml` (mode 0600), cache dir
//! `<db-dir>/cache/<ep>`, and one `policy-tool` summary proving the binary reads that policy
//! (mode, caps, `fs_sandbox` = the worktree, `policy_digest` = sha256 of the bytes written).
//!
//! Two execution branches, no shell, cwd = the worktree, environment exactly §12.2:
//! - ops: `ailang policy-tool --policy <policy>` with the handler's own re-encoding of the
//!   checked request on stdin; the answer must be one JSON object with a boolean `ok` and no
//!   reserved key; the handler adds `tool` (sha256 ref of the binary) and `policy_digest`;
//! - runs: `ailang run --policy <variant> [--args-json J] -- <path> [-- <argv…>]`, stdin piped;
//!   the result must match one of the four outcome shapes of §12.3.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::confine::{fold_eq, resolve_physical, ConfineError, Sandbox};
use super::policy::{render_policy, PolicySpec, BASE_CAPS, KNOWN_CAPS};
use super::process::{base_env, run_child, ChildError, ChildOutput, ChildSpec, DEFAULT_OUTPUT_CAP};
use super::{
    payload_object, Handler, HandlerContext, HandlerOutcome, RunCapsConfig, WORKTREE_SCOPE,
};
use super::{
    AILANG_CHECK, AILANG_CLI, AILANG_DISCOVER, AILANG_RUN, AILANG_RUN_ENV, AILANG_RUN_NET,
};

/// The only tool binary release the workspace tools accept (README C6).
pub const TOOL_VERSION: &str = "AILANG v0.52.1";

/// The six effects served through the tool binary.
pub const TOOL_EFFECTS: [&str; 6] = [
    AILANG_CHECK,
    AILANG_RUN,
    AILANG_RUN_ENV,
    AILANG_RUN_NET,
    AILANG_DISCOVER,
    AILANG_CLI,
];

/// `ailang-run` payload bounds (transitions.md §13.2).
pub const MAX_STDIN_BYTES: usize = 65536;
/// Most argv items of one run.
pub const MAX_ARGV: usize = 32;
/// Longest argv item, in bytes.
pub const MAX_ARG_BYTES: usize = 1024;

/// The answer to `examples_search` when no corpus is configured (transitions.md §13.3).
pub const NO_EXAMPLES_CORPUS: &str = "no examples corpus configured: start world serve with --examples-dir DIR \
(an AILANG examples corpus: manifest.json plus runnable/; `ailang examples download` makes one at ~/.ailang/examples)";

/// The `ailang-cli` op allowlist with each op's admitted flags (transitions.md §13.3).
pub const CLI_OPS: [(&str, &[&str]); 20] = [
    ("agent_prompt", &[]),
    ("axioms", &[]),
    ("devtools_prompt", &[]),
    ("examples_search", &[]),
    ("examples_show", &[]),
    ("examples_tags", &[]),
    ("builtins_show", &[]),
    ("pkg_docs", &[]),
    ("policy_check", &[]),
    ("prompt", &[]),
    ("tree", &[]),
    ("version", &[]),
    ("ai_check", &["timeout"]),
    (
        "builtins_list",
        &[
            "by-effect",
            "by-module",
            "json",
            "module",
            "query",
            "verbose",
        ],
    ),
    ("check", &["json", "quiet", "strict-syntax"]),
    ("docs_search", &["json", "limit"]),
    ("examples_list", &["status", "tags"]),
    ("fmt", &["check"]),
    ("iface", &["compact"]),
    ("test", &["allow-skips", "json", "no-color", "package"]),
];

/// The policy-tool request keys a payload may carry.
const OP_KEYS: [&str; 6] = ["op", "path", "module", "query", "package", "flags"];

/// The response keys the handler adds itself.
const RESERVED_KEYS: [&str; 3] = ["tool", "policy_digest", "world"];

fn admitted_flags(op: &str) -> &'static [&'static str] {
    CLI_OPS
        .iter()
        .find(|(name, _)| *name == op)
        .map_or(&[], |(_, flags)| flags)
}

/// The ops an effect serves through policy-tool (§12.1).
pub fn ops_for(effect: &str) -> Vec<&'static str> {
    match effect {
        AILANG_CHECK => vec!["ai_check"],
        AILANG_DISCOVER => vec!["builtins_list", "examples_search"],
        AILANG_CLI => CLI_OPS.iter().map(|(op, _)| *op).collect(),
        _ => Vec::new(),
    }
}

/// The run effect a cap set spends (§12.3): Env → `Ailang.RunEnv`, Net → `Ailang.RunNet`,
/// otherwise `Ailang.Run`.
pub fn run_effect_for(caps: &[String]) -> &'static str {
    if caps.iter().any(|c| c == "Env") {
        AILANG_RUN_ENV
    } else if caps.iter().any(|c| c == "Net") {
        AILANG_RUN_NET
    } else {
        AILANG_RUN
    }
}

/// Why the tool binary cannot be pinned, run or set up for an episode (§12.2). The text is what
/// the operator sees (startup) or what a tool effect's failed result records.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// `--version` reports another version.
    #[error("tool binary is {found:?}; only {TOOL_VERSION:?} is measured for the workspace tools")]
    Version {
        /// The first non-blank line of its output.
        found: String,
    },
    /// `<bin> --version` could not be run.
    #[error("run {bin} --version: {source}")]
    Probe {
        /// The binary as given.
        bin: String,
        /// Why it did not run.
        #[source]
        source: crate::process::RunError,
    },
    /// Archiving the binary failed.
    #[error("{0}")]
    Archive(#[source] crate::interp::archive::ArchiveError),
    /// The archived copy is altered, absent or cannot run.
    #[error("the pinned tool binary {reference} cannot be run ({}): {source}; nothing ran", source.kind())]
    Unrunnable {
        /// The pinned ref.
        reference: String,
        /// Why it cannot run.
        #[source]
        source: crate::interp::archive::ResolveError,
    },
    /// The episode id cannot name a policy file.
    #[error("episode {0:?} cannot name a policy file")]
    BadEpisode(String),
    /// The policy or cache directory cannot be resolved.
    #[error("resolve {path}: {source}")]
    Resolve {
        /// The directory.
        path: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The policy or cache directory lies inside the worktree.
    #[error("{path} resolves inside the worktree {root}; policy and cache must live outside it")]
    InsideWorktree {
        /// The directory.
        path: String,
        /// The worktree.
        root: String,
    },
    /// A file-system step of the setup failed (`create <dir>`, `write policy`, …).
    #[error("{what}: {source}")]
    Io {
        /// The step.
        what: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// `<tool> --version` did not finish.
    #[error("{program} --version: {source}")]
    VersionRun {
        /// The archived tool path.
        program: String,
        /// Why.
        #[source]
        source: ChildError,
    },
    /// `<tool> --version` exited non-zero.
    #[error("{program} --version exited {code}")]
    VersionExit {
        /// The archived tool path.
        program: String,
        /// The exit code.
        code: i32,
    },
    /// The worktree path is not UTF-8 (a policy names it as text).
    #[error("the worktree path is not UTF-8")]
    NonUtf8Root,
    /// The policy for a cap set cannot be made.
    #[error("{0}")]
    Policy(#[source] super::policy::PolicyError),
    /// `policy-tool` did not finish.
    #[error("{0}")]
    PolicyToolRun(#[source] ChildError),
    /// `policy-tool` exited non-zero.
    #[error("policy-tool exited {code} (stderr {stderr:?})")]
    PolicyToolExit {
        /// The exit code.
        code: i32,
        /// Its stderr, trimmed.
        stderr: String,
    },
    /// `policy-tool` answered something other than one JSON object.
    #[error("policy-tool answered no JSON object: {0:?}")]
    PolicyToolAnswer(String),
    /// The summary `policy-tool` gave is not an ok summary.
    #[error("policy-tool summary of {0} is not an ok summary")]
    NotOkSummary(String),
    /// The summary disagrees with the rendered policy.
    #[error("policy {path} is not verified by policy-tool summary: {why}")]
    Unverified {
        /// The policy file.
        path: String,
        /// The first disagreement.
        why: String,
    },
    /// A previous setup panicked while holding the lane's lock.
    #[error("tool lane lock poisoned")]
    LanePoisoned,
    /// A previous render panicked while holding the variants' lock.
    #[error("variant lock poisoned")]
    VariantPoisoned,
    /// The episode's setup failed: every tool effect of the episode fails with this.
    #[error("world: workspace tools unavailable for episode {episode:?}: {cause}")]
    Unavailable {
        /// The episode.
        episode: String,
        /// The setup failure (shared: the first result is returned ever after).
        #[source]
        cause: Arc<ToolError>,
    },
}

/// Checks the first non-blank line of `ailang --version` output against [`TOOL_VERSION`].
///
/// # Errors
/// [`ToolError::Version`]: `tool binary is "<line>"; only "AILANG v0.52.1" is measured for
/// the workspace tools`.
pub fn check_version_output(stdout: &[u8]) -> Result<(), ToolError> {
    let text = String::from_utf8_lossy(stdout);
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if first == TOOL_VERSION {
        Ok(())
    } else {
        Err(ToolError::Version {
            found: first.to_string(),
        })
    }
}

/// A policy file verified by the binary's own summary.
#[derive(Clone, Debug)]
struct Variant {
    path: PathBuf,
    digest: String,
    mode: String,
    caps: Vec<String>,
    net_allow: Vec<String>,
}

/// The pinned `--tool-ailang-bin` (transitions.md §5 "Tool binary", authority-and-broker.md
/// §12.2, residual R-SE-8): archived like an interpreter (sha256 of the bytes, mode 0555,
/// `manifest.json` sidecar with the `--version` text) but in its own archive,
/// `<db>.artifacts/tool/interpreters/sha256/<hex>/ailang`, so it never counts as a pinned
/// interpreter (docs/DECISIONS.md, serve). Every exec of the tool re-hashes the archived copy
/// and runs that copy, never the operator's path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PinnedTool {
    /// `sha256:<hex>` of the binary's bytes when it was pinned.
    pub hash_ref: String,
    /// The tool archive's root, `<db>.artifacts/tool`.
    pub root: PathBuf,
}

impl PinnedTool {
    /// The tool archive root of the store at `db`: `<db>.artifacts/tool`.
    pub fn root_for(db: &Path) -> PathBuf {
        crate::interp::archive::Archive::for_db(db)
            .root()
            .join("tool")
    }

    /// Check that `bin --version` reports `AILANG v0.52.1`, archive it for the store at `db`
    /// and check the archived copy's recorded `--version` again.
    ///
    /// # Errors
    /// `run <bin> --version: …`, the archive failure, or `tool binary is "…"; only
    /// "AILANG v0.52.1" is measured …`.
    pub fn pin(db: &Path, bin: &Path) -> Result<PinnedTool, ToolError> {
        // Bounded like every other child: a hanging or flooding tool binary cannot hang the
        // caller, and it sees none of our environment.
        // The same bounds as the interpreter's version probe (10 s, 64 KiB per stream).
        use crate::interp::archive::{VERSION_CAP, VERSION_PROBE_TIMEOUT};
        let program = std::path::absolute(bin).unwrap_or_else(|_| bin.to_path_buf());
        let spec = crate::process::Spec::new(
            program,
            VERSION_CAP,
            std::time::Instant::now() + VERSION_PROBE_TIMEOUT,
        )
        .arg("--version");
        let out = crate::process::run(&spec).map_err(|source| ToolError::Probe {
            bin: bin.display().to_string(),
            source,
        })?;
        check_version_output(&out.stdout)?;
        let root = Self::root_for(db);
        let (archived, _) = crate::interp::archive::Archive::at_root(root.clone())
            .archive(bin)
            .map_err(ToolError::Archive)?;
        check_version_output(archived.manifest.version.as_bytes())?;
        Ok(PinnedTool {
            hash_ref: archived.hash_ref,
            root,
        })
    }

    /// Re-hash the archived copy now and return its absolute path to run.
    ///
    /// # Errors
    /// `the pinned tool binary <ref> cannot be run (<kind>): <cause>; nothing ran`, where kind
    /// is `hash_mismatch`, `absent_artifact`, `unsupported_platform` or `exec_failure`.
    pub fn verify(&self) -> Result<PathBuf, ToolError> {
        crate::interp::archive::Archive::at_root(self.root.clone())
            .resolve(&self.hash_ref)
            .map(|a| a.binary)
            .map_err(|source| ToolError::Unrunnable {
                reference: self.hash_ref.clone(),
                source,
            })
    }
}

/// What a successful setup yields.
#[derive(Debug)]
struct Ready {
    tool_ref: String,
    base: Variant,
}

/// One episode's tool binary setup, shared by its six handlers.
pub struct ToolLane {
    episode: String,
    sandbox: Sandbox,
    tool: PinnedTool,
    policy_dir: PathBuf,
    cache_dir: PathBuf,
    examples_dir: Option<PathBuf>,
    run_caps: RunCapsConfig,
    state: Mutex<Option<Result<Arc<Ready>, Arc<ToolError>>>>,
    variants: Mutex<BTreeMap<String, Variant>>,
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

impl ToolLane {
    /// A lane for `ctx`'s episode, confined to `sandbox`, running the pinned `tool`. Nothing
    /// runs yet.
    pub fn new(ctx: &HandlerContext, sandbox: Sandbox, tool: PinnedTool) -> Self {
        ToolLane {
            episode: ctx.episode.clone(),
            sandbox,
            tool,
            policy_dir: ctx.policy_dir(),
            cache_dir: ctx.cache_dir(),
            examples_dir: ctx.examples_dir.clone(),
            run_caps: ctx.run_caps.clone(),
            state: Mutex::new(None),
            variants: Mutex::new(BTreeMap::new()),
        }
    }

    /// True once setup has been tried and failed (the episode then has no tools).
    pub fn failed(&self) -> bool {
        self.state
            .lock()
            .map(|s| matches!(*s, Some(Err(_))))
            .unwrap_or(true)
    }

    /// The environment of every tool child (§12.2), never the parent's.
    fn child_env(&self) -> Vec<(OsString, OsString)> {
        let mut env = base_env(&self.cache_dir);
        env.push((
            "AILANG_CACHE_DIR".into(),
            self.cache_dir.as_os_str().to_owned(),
        ));
        if let Some(examples) = &self.examples_dir {
            env.push(("AILANG_EXAMPLES".into(), examples.as_os_str().to_owned()));
        }
        env
    }

    /// The child to run: the archived tool binary, re-hashed now (before every exec).
    ///
    /// Errors: the [`PinnedTool::verify`] message.
    fn spec(&self, args: Vec<OsString>, stdin: Vec<u8>) -> Result<ChildSpec, ToolError> {
        Ok(ChildSpec {
            program: self.tool.verify()?,
            args,
            cwd: self.sandbox.root().to_path_buf(),
            env: self.child_env(),
            stdin,
            output_cap: DEFAULT_OUTPUT_CAP,
        })
    }

    /// Runs the per-episode setup now (once; later calls return the first result).
    ///
    /// Errors: `world: workspace tools unavailable for episode "<ep>": …`.
    ///
    /// # Errors
    /// [`ToolError::Unavailable`] (`world: workspace tools unavailable for episode "<ep>": …`).
    pub fn prepare(&self, deadline: Instant) -> Result<(), ToolError> {
        self.ready(deadline).map(|_| ())
    }

    /// Runs the setup once and returns its result ever after.
    fn ready(&self, deadline: Instant) -> Result<Arc<Ready>, ToolError> {
        let mut state = self.state.lock().map_err(|_| ToolError::LanePoisoned)?;
        let done = match state.as_ref() {
            Some(done) => done.clone(),
            None => {
                let result = self.setup(deadline).map(Arc::new).map_err(Arc::new);
                *state = Some(result.clone());
                result
            }
        };
        done.map_err(|cause| ToolError::Unavailable {
            episode: self.episode.clone(),
            cause,
        })
    }

    fn outside_root(&self, path: &Path) -> Result<(), ToolError> {
        let resolved = resolve_physical(path).map_err(|source| ToolError::Resolve {
            path: path.display().to_string(),
            source,
        })?;
        if resolved.starts_with(self.sandbox.root()) {
            return Err(ToolError::InsideWorktree {
                path: path.display().to_string(),
                root: self.sandbox.root().display().to_string(),
            });
        }
        Ok(())
    }

    fn setup(&self, deadline: Instant) -> Result<Ready, ToolError> {
        let ep = &self.episode;
        if ep.is_empty() || ep.starts_with('.') || ep.contains(['/', '\0']) {
            return Err(ToolError::BadEpisode(ep.clone()));
        }
        for dir in [&self.policy_dir, &self.cache_dir] {
            self.outside_root(dir)?;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|source| ToolError::Io {
                    what: format!("create {}", dir.display()),
                    source,
                })?;
        }
        let spec = self.spec(vec!["--version".into()], Vec::new())?;
        let version = run_child(&spec, deadline).map_err(|source| ToolError::VersionRun {
            program: spec.program.display().to_string(),
            source,
        })?;
        if version.exit_code != 0 {
            return Err(ToolError::VersionExit {
                program: spec.program.display().to_string(),
                code: version.exit_code,
            });
        }
        check_version_output(&version.stdout)?;
        let tool_ref = self.tool.hash_ref.clone();
        let path = self.policy_dir.join(format!("{ep}.toml"));
        let base = self.render_and_verify(&path, &PolicySpec::base(), deadline)?;
        Ok(Ready { tool_ref, base })
    }

    /// Writes `spec`'s policy at `path` (mode 0600, atomically) and verifies it with the
    /// binary's summary.
    fn render_and_verify(
        &self,
        path: &Path,
        spec: &PolicySpec,
        deadline: Instant,
    ) -> Result<Variant, ToolError> {
        let io = |what: String| move |source| ToolError::Io { what, source };
        let root = self.sandbox.root().to_str().ok_or(ToolError::NonUtf8Root)?;
        let bytes = render_policy(root, spec).map_err(ToolError::Policy)?;
        self.outside_root(path)?;
        let mut tmp = tempfile::NamedTempFile::new_in(&self.policy_dir).map_err(io(format!(
            "create a policy file in {}",
            self.policy_dir.display()
        )))?;
        tmp.write_all(&bytes)
            .and_then(|_| tmp.as_file().sync_all())
            .map_err(io("write policy".into()))?;
        let mode = <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o600);
        std::fs::set_permissions(tmp.path(), mode).map_err(io("chmod policy".into()))?;
        tmp.persist(path)
            .map_err(|e| io(format!("write {}", path.display()))(e.error))?;
        let answer = self.policy_tool(path, br#"{"op":"summary"}"#.to_vec(), deadline)?;
        let summary = answer
            .get("summary")
            .filter(|_| answer.get("ok") == Some(&Value::Bool(true)))
            .and_then(Value::as_object)
            .ok_or_else(|| ToolError::NotOkSummary(path.display().to_string()))?;
        let text = |k: &str| {
            summary
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let list = |k: &str| -> Vec<String> {
            summary
                .get(k)
                .and_then(Value::as_array)
                .map_or(Vec::new(), |a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
        };
        let mode = text("security_mode");
        let digest = text("policy_digest");
        let mut caps = list("caps");
        let net_allow = list("net_allow");
        caps.sort();
        let mut want_caps = spec.caps.clone();
        want_caps.sort();
        let sandbox = resolve_physical(Path::new(&text("fs_sandbox"))).ok();
        let why = if mode != spec.mode {
            Some(format!("security_mode {mode:?}, rendered {:?}", spec.mode))
        } else if caps != want_caps {
            Some(format!("caps {caps:?}, rendered {want_caps:?}"))
        } else if net_allow != spec.net_allow {
            Some(format!(
                "net_allow {net_allow:?}, rendered {:?}",
                spec.net_allow
            ))
        } else if sandbox.as_deref() != Some(self.sandbox.root()) {
            Some(format!(
                "fs_sandbox {:?} is not the worktree {:?}",
                text("fs_sandbox"),
                root
            ))
        } else if digest != sha256_hex(&bytes) {
            Some(format!(
                "policy_digest {digest:?} is not the sha256 of the rendered bytes"
            ))
        } else {
            None
        };
        match why {
            Some(why) => Err(ToolError::Unverified {
                path: path.display().to_string(),
                why,
            }),
            None => Ok(Variant {
                path: path.to_path_buf(),
                digest,
                mode,
                caps: spec.caps.clone(),
                net_allow,
            }),
        }
    }

    /// Runs `policy-tool --policy <policy>` with `request` on stdin; a non-zero exit or a
    /// stdout that is not one JSON object is an error.
    fn policy_tool(
        &self,
        policy: &Path,
        request: Vec<u8>,
        deadline: Instant,
    ) -> Result<Map<String, Value>, ToolError> {
        let args = vec![
            OsString::from("policy-tool"),
            "--policy".into(),
            policy.as_os_str().to_owned(),
        ];
        let out =
            run_child(&self.spec(args, request)?, deadline).map_err(ToolError::PolicyToolRun)?;
        if out.exit_code != 0 {
            return Err(ToolError::PolicyToolExit {
                code: out.exit_code,
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        match serde_json::from_slice::<Value>(&out.stdout) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(ToolError::PolicyToolAnswer(
                String::from_utf8_lossy(&out.stdout).into_owned(),
            )),
        }
    }

    /// The verified policy for a canonical cap set, rendered on first use at
    /// `<db-dir>/policies/<ep>.run-<caps joined by '.'>.toml`.
    fn variant_for(
        &self,
        ready: &Ready,
        caps: &[String],
        deadline: Instant,
    ) -> Result<Variant, ToolError> {
        if caps.iter().map(String::as_str).eq(BASE_CAPS) {
            return Ok(ready.base.clone());
        }
        let key = caps.join(".");
        let mut variants = self
            .variants
            .lock()
            .map_err(|_| ToolError::VariantPoisoned)?;
        if let Some(v) = variants.get(&key) {
            return Ok(v.clone());
        }
        let spec = PolicySpec::for_caps(caps, &self.run_caps).map_err(ToolError::Policy)?;
        let path = self
            .policy_dir
            .join(format!("{}.run-{key}.toml", self.episode));
        let v = self.render_and_verify(&path, &spec, deadline)?;
        variants.insert(key, v.clone());
        Ok(v)
    }
}

/// One of the six tool effects of an episode.
pub struct AilangHandler {
    effect: &'static str,
    lane: Arc<ToolLane>,
}

impl AilangHandler {
    /// A handler for `effect` (one of [`TOOL_EFFECTS`]) on `lane`.
    pub fn new(effect: &'static str, lane: Arc<ToolLane>) -> Self {
        AilangHandler { effect, lane }
    }

    fn refused(&self, why: impl std::fmt::Display) -> Refusal {
        Refusal::Refused {
            effect: self.effect,
            why: why.to_string(),
        }
    }

    fn refused_text(&self, why: impl std::fmt::Display) -> String {
        self.refused(why).to_string()
    }

    fn stamp(&self, ready: &Ready, mut answer: Map<String, Value>) -> HandlerOutcome {
        answer.insert("tool".into(), json!(ready.tool_ref));
        answer.insert("policy_digest".into(), json!(ready.base.digest));
        HandlerOutcome::json(&Value::Object(answer))
    }

    /// A confinement check of a path argument (host-side, §13): predicate, resolution,
    /// containment. A missing file is left for the tool to report.
    fn check_path(&self, path: &str) -> Result<(), Refusal> {
        match self.lane.sandbox.resolve(path) {
            Ok(_) | Err(ConfineError::Io { .. }) => Ok(()),
            Err(err) => Err(Refusal::Confine(err)),
        }
    }

    /// Checks an op request. `Ok(Ok(bytes))`: the re-encoded request to send;
    /// `Ok(Err(outcome))`: a tool-level answer without running anything; `Err`: a failure.
    fn op_checked(
        &self,
        ready: &Ready,
        obj: &Map<String, Value>,
    ) -> Result<Result<Vec<u8>, HandlerOutcome>, Refusal> {
        for key in obj.keys() {
            for name in ["op", "flags"] {
                if key != name && fold_eq(OsStr::new(key), name) {
                    return Err(self.refused(format!("key {key:?} aliases {name:?}")));
                }
            }
            if !OP_KEYS.contains(&key.as_str()) {
                return Err(self.refused(format!(
                    "unknown payload key {key:?}; it admits only: {}",
                    OP_KEYS.join(", ")
                )));
            }
        }
        let op = match obj.get("op") {
            Some(Value::String(op)) => op.as_str(),
            Some(_) => return Err(self.refused("op is not a string")),
            None => return Err(self.refused("op is missing")),
        };
        if !ops_for(self.effect).contains(&op) {
            return Err(Refusal::OpNotAllowed {
                effect: self.effect,
                op: op.to_owned(),
            });
        }
        for key in ["path", "module", "query", "package"] {
            match obj.get(key) {
                None | Some(Value::String(_)) => {}
                Some(_) => return Err(self.refused(format!("argument {key:?} must be a string"))),
            }
        }
        if let Some(Value::String(path)) = obj.get("path") {
            self.check_path(path)?;
        }
        if let Some(flags) = obj.get("flags") {
            let Some(flags) = flags
                .as_object()
                .filter(|f| f.values().all(Value::is_string))
            else {
                return Err(self.refused("argument \"flags\" must be an object of string values"));
            };
            if op == "fmt" && flags.contains_key("write") {
                return Err(Refusal::FmtWrite {
                    effect: self.effect,
                });
            }
            let admitted = admitted_flags(op);
            if let Some(bad) = flags.keys().find(|k| !admitted.contains(&k.as_str())) {
                let list = if admitted.is_empty() {
                    "none".to_owned()
                } else {
                    admitted
                        .iter()
                        .map(|f| format!("--{f}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                let mut answer = Map::new();
                answer.insert("ok".into(), json!(false));
                answer.insert(
                    "refused".into(),
                    json!(format!(
                        "op {op} does not admit flag --{bad} (admitted: {list})"
                    )),
                );
                return Ok(Err(self.stamp(ready, answer)));
            }
        }
        if op == "examples_search" && self.lane.examples_dir.is_none() {
            let mut answer = Map::new();
            answer.insert("ok".into(), json!(false));
            answer.insert("refused".into(), json!(NO_EXAMPLES_CORPUS));
            return Ok(Err(self.stamp(ready, answer)));
        }
        // Re-encode what was checked (sorted keys), so policy-tool reads exactly that.
        let sorted: BTreeMap<&String, &Value> = obj.iter().collect();
        serde_json::to_vec(&sorted).map(Ok).map_err(Refusal::Encode)
    }

    fn op(&self, ready: &Ready, obj: &Map<String, Value>, deadline: Instant) -> HandlerOutcome {
        let request = match self.op_checked(ready, obj) {
            Ok(Ok(request)) => request,
            Ok(Err(answer)) => return answer,
            Err(refusal) => return HandlerOutcome::Failed(refusal.to_string()),
        };
        let answer = match self.lane.policy_tool(&ready.base.path, request, deadline) {
            Ok(answer) => answer,
            Err(msg) => return HandlerOutcome::Failed(format!("{}: {msg}", self.effect)),
        };
        if !matches!(answer.get("ok"), Some(Value::Bool(_))) {
            return HandlerOutcome::Failed(format!(
                "{}: policy-tool answer has no boolean ok",
                self.effect
            ));
        }
        if let Some(key) = RESERVED_KEYS.iter().find(|k| answer.contains_key(**k)) {
            return HandlerOutcome::Failed(format!(
                "{}: policy-tool answer carries the reserved key {key:?}",
                self.effect
            ));
        }
        self.stamp(ready, answer)
    }

    /// Validates a run payload; returns (path, args_json, stdin, argv, canonical caps).
    #[allow(clippy::type_complexity)]
    fn run_request<'a>(
        &self,
        obj: &'a Map<String, Value>,
    ) -> Result<(&'a str, Option<&'a str>, &'a str, Vec<&'a str>, Vec<String>), Refusal> {
        const KEYS: [&str; 5] = ["path", "args_json", "stdin", "argv", "caps"];
        if let Some(key) = obj.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(self.refused(format!(
                "unknown payload key {key:?}; ailang-run admits only: {}",
                KEYS.join(", ")
            )));
        }
        let string = |key: &str| -> Result<Option<&'a str>, Refusal> {
            match obj.get(key) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.as_str())),
                Some(_) => Err(self.refused(format!("argument {key:?} must be a string"))),
            }
        };
        let path =
            string("path")?.ok_or_else(|| self.refused("missing required argument \"path\""))?;
        self.check_path(path)?;
        let args_json = string("args_json")?;
        if let Some(j) = args_json {
            if serde_json::from_str::<Value>(j).is_err() {
                return Err(self.refused("argument \"args_json\" must be a string holding JSON"));
            }
        }
        let stdin = string("stdin")?.unwrap_or("");
        if stdin.len() > MAX_STDIN_BYTES {
            return Err(self.refused(format!(
                "argument \"stdin\" is {} bytes; the limit is {MAX_STDIN_BYTES}",
                stdin.len()
            )));
        }
        let mut argv = Vec::new();
        if let Some(value) = obj.get("argv") {
            let items = value
                .as_array()
                .ok_or_else(|| self.refused("argument \"argv\" must be an array of strings"))?;
            if items.len() > MAX_ARGV {
                return Err(self.refused(format!(
                    "argument \"argv\" has {} items; the limit is {MAX_ARGV}",
                    items.len()
                )));
            }
            for item in items {
                let s = item
                    .as_str()
                    .ok_or_else(|| self.refused("argument \"argv\" must be an array of strings"))?;
                if s.len() > MAX_ARG_BYTES {
                    return Err(self.refused(format!(
                        "an argv item is {} bytes; the limit is {MAX_ARG_BYTES}",
                        s.len()
                    )));
                }
                if s.contains('\0') {
                    return Err(self.refused("an argv item contains a NUL byte"));
                }
                argv.push(s);
            }
        }
        let mut caps: Vec<String> = match obj.get("caps") {
            None => BASE_CAPS.iter().map(|c| c.to_string()).collect(),
            Some(Value::Array(items)) => {
                let mut caps = Vec::new();
                for item in items {
                    let c = item.as_str().ok_or_else(|| {
                        self.refused("argument \"caps\" must be an array of strings")
                    })?;
                    if !KNOWN_CAPS.contains(&c) {
                        return Err(self.refused(format!(
                            "unknown capability {c:?}; caps admits only: {}",
                            KNOWN_CAPS.join(", ")
                        )));
                    }
                    if caps.iter().any(|x: &String| x == c) {
                        return Err(self.refused(format!("capability {c:?} is listed twice")));
                    }
                    caps.push(c.to_owned());
                }
                caps
            }
            Some(_) => return Err(self.refused("argument \"caps\" must be an array of strings")),
        };
        caps.sort();
        if caps.is_empty() {
            return Err(self.refused("argument \"caps\" names no capability"));
        }
        if caps.iter().any(|c| c == "Env") && caps.iter().any(|c| c == "Net") {
            return Err(
                self.refused("caps names both Env and Net; one run takes at most one of them")
            );
        }
        Ok((path, args_json, stdin, argv, caps))
    }

    fn run(
        &self,
        ctx: &HandlerContext,
        ready: &Ready,
        obj: &Map<String, Value>,
        deadline: Instant,
    ) -> HandlerOutcome {
        let (path, args_json, stdin, argv, caps) = match self.run_request(obj) {
            Ok(request) => request,
            Err(refusal) => return HandlerOutcome::Failed(refusal.to_string()),
        };
        let spends = run_effect_for(&caps);
        if spends != self.effect {
            return HandlerOutcome::Failed(
                self.refused_text(format!("caps {caps:?} spend {spends}, not {}", self.effect)),
            );
        }
        // Gate 2: the operator's allowlist (the context is the serving side's configuration).
        for cap in caps
            .iter()
            .filter(|c| super::policy::OPERATOR_CAPS.contains(&c.as_str()))
        {
            if !ctx.run_caps.allow.contains(cap) {
                return HandlerOutcome::Failed(self.refused_text(format!(
                    "capability {cap:?} is not enabled on this server (start it with --run-allow-caps {cap})"
                )));
            }
        }
        if caps.iter().any(|c| c == "Net") && ctx.run_caps.net_allow.is_empty() {
            return HandlerOutcome::Failed(
                self.refused_text("a Net run needs --run-net-allow IP:PORT on this server"),
            );
        }
        let variant = match self.lane.variant_for(ready, &caps, deadline) {
            Ok(v) => v,
            Err(msg) => return HandlerOutcome::Failed(format!("{}: {msg}", self.effect)),
        };
        let mut args: Vec<OsString> = vec![
            "run".into(),
            "--policy".into(),
            variant.path.as_os_str().to_owned(),
        ];
        if let Some(j) = args_json {
            args.push("--args-json".into());
            args.push(j.into());
        }
        args.push("--".into());
        args.push(path.into());
        if !argv.is_empty() {
            args.push("--".into());
            args.extend(argv.iter().map(OsString::from));
        }
        let spec = match self.lane.spec(args, stdin.as_bytes().to_vec()) {
            Ok(spec) => spec,
            Err(msg) => return HandlerOutcome::Failed(format!("{}: {msg}", self.effect)),
        };
        match run_child(&spec, deadline) {
            Ok(out) => match compose_run_result(&out, &variant) {
                Ok(result) => HandlerOutcome::json(&result),
                Err(msg) => HandlerOutcome::Failed(format!("{}: {msg}", self.effect)),
            },
            Err(err @ ChildError::Deadline { .. }) => HandlerOutcome::Indeterminate(format!(
                "{}: {err}; what the program did before the kill is unknown",
                self.effect
            )),
            Err(err) => HandlerOutcome::Failed(format!("{}: {err}", self.effect)),
        }
    }
}

/// Maps a finished run onto exactly one of the four outcome shapes of §12.3; anything else is
/// an error naming the exit code and both streams.
fn compose_run_result(out: &ChildOutput, variant: &Variant) -> Result<Value, Unrecognised> {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let unrecognised = || Unrecognised {
        exit_code: out.exit_code,
        stdout: stdout.clone(),
        stderr: stderr.clone(),
    };
    let policy_lines: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("policy: "))
        .collect();
    let result_lines: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("policy-result: "))
        .collect();
    let decision_ok = |d: &Value| {
        d.as_object()
            .and_then(|m| m.get("ok"))
            .and_then(Value::as_bool)
    };
    let (admitted, decision, limit) = match (policy_lines.as_slice(), result_lines.as_slice()) {
        ([line], results) if results.len() <= 1 => {
            let parsed: Value = serde_json::from_str(line).map_err(|_| unrecognised())?;
            if parsed.get("ok") != Some(&Value::Bool(true)) {
                return Err(unrecognised());
            }
            let decision = parsed.get("decision").cloned().unwrap_or(Value::Null);
            if decision_ok(&decision) != Some(true) {
                return Err(unrecognised());
            }
            let limit = match results.first() {
                None => Value::Null,
                Some(line) => {
                    let limit: Value = serde_json::from_str(line).map_err(|_| unrecognised())?;
                    let field = |k: &str| {
                        limit
                            .get(k)
                            .and_then(Value::as_str)
                            .is_some_and(|s| !s.is_empty())
                    };
                    if out.exit_code != 3 || !field("reason") || !field("stage") {
                        return Err(unrecognised());
                    }
                    limit
                }
            };
            (true, decision, limit)
        }
        ([], []) if out.exit_code != 0 && out.stderr.is_empty() => {
            let parsed: Value = serde_json::from_slice(&out.stdout).map_err(|_| unrecognised())?;
            let decision = parsed.get("decision").cloned().unwrap_or(Value::Null);
            if decision_ok(&decision) != Some(false) {
                return Err(unrecognised());
            }
            (false, decision, Value::Null)
        }
        _ => return Err(unrecognised()),
    };
    Ok(json!({
        "admitted": admitted,
        "exit_code": out.exit_code,
        "decision": decision,
        "limit": limit,
        "stdout": stdout,
        "stderr": stderr,
        "policy": {
            "digest": variant.digest,
            "security_mode": variant.mode,
            "caps": variant.caps,
            "net_allow": variant.net_allow,
        },
    }))
}

/// Why an `Ailang.*` request was refused before anything ran; its text is the `failed`
/// outcome's message.
#[derive(Debug, thiserror::Error)]
enum Refusal {
    /// `<effect> refused: <why>`: a payload, argument or capability the lane does not admit.
    #[error("{effect} refused: {why}")]
    Refused {
        /// The effect.
        effect: &'static str,
        /// What is wrong.
        why: String,
    },
    /// An op outside this effect's op allowlist.
    #[error("{effect} refuses op {op:?}: not in this effect's op allowlist")]
    OpNotAllowed {
        /// The effect.
        effect: &'static str,
        /// The op asked for.
        op: String,
    },
    /// `fmt --write`: `Ailang.CLI` never writes the worktree.
    #[error("{effect} refuses op \"fmt\": flag \"write\" writes the worktree; Ailang.CLI never writes (use Workspace.Write)")]
    FmtWrite {
        /// The effect.
        effect: &'static str,
    },
    /// A path argument the sandbox refuses (host-side confinement, §13).
    #[error(transparent)]
    Confine(ConfineError),
    /// The checked request could not be re-encoded.
    #[error("re-encode the request: {0}")]
    Encode(#[source] serde_json::Error),
}

/// `ailang run` ended without one of the four outcome shapes of §12.3.
#[derive(Debug, thiserror::Error)]
#[error("ailang run produced no recognised outcome envelope (rc {exit_code}, stdout {stdout:?}, stderr {stderr:?})")]
struct Unrecognised {
    /// The child's exit code.
    exit_code: i32,
    /// Its stdout (lossy UTF-8).
    stdout: String,
    /// Its stderr (lossy UTF-8).
    stderr: String,
}

impl Handler for AilangHandler {
    fn effect(&self) -> &'static str {
        self.effect
    }

    fn execute(
        &self,
        ctx: &HandlerContext,
        scope: &str,
        payload: &Value,
        deadline: Instant,
    ) -> HandlerOutcome {
        if scope != WORKTREE_SCOPE {
            return HandlerOutcome::Failed(
                self.refused_text(format!("scope {scope:?} is not {WORKTREE_SCOPE:?}")),
            );
        }
        let obj = match payload_object(payload) {
            Ok(obj) => obj,
            Err(msg) => return HandlerOutcome::Failed(self.refused_text(msg)),
        };
        let ready = match self.lane.ready(deadline) {
            Ok(ready) => ready,
            Err(e) => return HandlerOutcome::Failed(e.to_string()),
        };
        match self.effect {
            AILANG_RUN | AILANG_RUN_ENV | AILANG_RUN_NET => self.run(ctx, &ready, obj, deadline),
            _ => self.op(&ready, obj, deadline),
        }
    }
}

#[cfg(test)]
mod tests;
