//! One invocation through the coordinator: validate, admit, bind, receipt pre-check, load the
//! source, plan, execute, finish, commit (transitions.md §9–§11, seed 003). Surface-agnostic:
//! `world invoke`, MCP and A2A all call [`invoke`].

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::authority::approvals::StoreApprovals;
use crate::authority::grants::Grant;
use crate::authority::session::{self, Session};
use crate::broker::handlers::ailang::PinnedTool;
use crate::broker::handlers::{HandlerContext, HandlerRegistry, RunCapsConfig, Services};
use crate::broker::{self, Broker, BrokerError, Status};
use crate::encoding::gojson::{self, Obj};
use crate::encoding::trcjson::{self, Bounds, CValue};
use crate::interp::capsule::{self, CapsuleError};
use crate::store::commit::{apply, Commit};
use crate::store::entry::{entry_hash, world_row};
use crate::store::journal::{self, ReceiptState};
use crate::store::records::{self, InvocationRecord};
use crate::store::{head_in, object_in, Error as StoreError, Header, LogEntry, Object, Store};
use crate::transitions::publish::{read_head, InterpreterProvider};
use crate::transitions::registry::Descriptor;

use crate::plan::{self, PhaseResult, Triple, WorldEffect};

/// Whole-invocation deadline (20 s); defined with the plan laws replay shares.
pub use crate::plan::INVOCATION;
/// Plan and finish phases (2 s each).
pub const PHASE: Duration = Duration::from_secs(2);
/// Post-effect tail, detached from the caller (4 s).
pub const TAIL: Duration = Duration::from_secs(4);
/// `world/invocation-started/v1`: written before an effectful call's first effect so a resent
/// id can never run a handler twice (DEC-COORD-3).
pub const STARTED: &str = "world/invocation-started/v1";

/// The surface an invocation came through (`writtenBy = coordinator:<surface>`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Surface {
    /// `world invoke` (DEC-COORD-1).
    Cli,
    /// MCP `tools/call`.
    Mcp,
    /// A2A `tasks/send` / `SendMessage`.
    A2a,
}

impl Surface {
    /// `cli`, `mcp`, `a2a`.
    pub fn name(self) -> &'static str {
        match self {
            Surface::Cli => "cli",
            Surface::Mcp => "mcp",
            Surface::A2a => "a2a",
        }
    }
}

/// A call.
#[derive(Clone, Debug)]
pub struct Call {
    /// The surface.
    pub surface: Surface,
    /// The session token (64 hex).
    pub token: String,
    /// The transition id.
    pub transition: String,
    /// The arguments: a JSON object.
    pub args: serde_json::Value,
    /// The task id (`[A-Za-z0-9._-]{1,128}`); `None` draws a random one (no idempotency).
    pub task: Option<String>,
    /// The clock: read once per call for the logical time of the effects and the commit
    /// intent (Unix seconds), and for the ledger's and mission's millisecond clocks.
    pub clock: crate::clock::Clock,
}

/// Host configuration for handlers and interpreters.
pub struct Host<'a> {
    /// Where pinned interpreters come from.
    pub interpreters: &'a dyn InterpreterProvider,
    /// `--workspace-root` override (else the episode's binding).
    pub workspace_root: Option<PathBuf>,
    /// `--tool-ailang-bin`, pinned ([`PinnedTool::pin`]); re-hashed before every exec.
    pub tool: Option<PinnedTool>,
    /// The run allowlist.
    pub run_caps: RunCapsConfig,
    /// `--examples-dir`.
    pub examples_dir: Option<PathBuf>,
    /// Handler services (approvals, model backend).
    pub services: Services,
    /// `--exec-profile` and friends (`Workspace.Exec`, exec-and-agui.md §1).
    pub exec: Option<Arc<crate::broker::handlers::exec::ExecConfig>>,
    /// Told what the call does as it goes (MCP progress and log notifications); `None`: nobody.
    pub observer: Option<Arc<dyn Observer>>,
    /// `--allow-unattested`: accept credential rows without a mint record (DEC-TRUST3-2).
    pub unattested: session::Unattested,
}

/// One step of an invocation, as an [`Observer`] hears it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// The session was admitted for the transition (step 2–3): `invocation_id` is final.
    Admitted {
        /// `<surface>:<episode>:<task>`.
        invocation_id: String,
        /// The transition id.
        transition: String,
    },
    /// The plan phase answered (effectful calls only): how many effects it planned.
    Planned {
        /// The number of planned effects.
        effects: usize,
    },
    /// An effect is handed to the broker (admission, then its handler).
    EffectDispatched {
        /// 1-based position in the plan.
        index: usize,
        /// The number of planned effects.
        total: usize,
        /// The effect name (`Workspace.Read`, …).
        effect: String,
        /// The effect's scope.
        scope: String,
    },
    /// The invocation committed at `entry_index`.
    Committed {
        /// The log index.
        entry_index: i64,
        /// The new world ref.
        world_ref: String,
    },
}

/// Hears the [`Step`]s of one invocation, on the invocation's thread; must not block.
pub trait Observer: Send + Sync {
    /// One step happened.
    fn step(&self, step: &Step);
}

fn observe(host: &Host<'_>, step: impl FnOnce() -> Step) {
    if let Some(o) = &host.observer {
        o.step(&step());
    }
}

/// The owned, per-process part of a [`Host`]: what `world invoke`, `world serve` and
/// `world mcp` configure once from their flags. [`HostConfig::host`] lends it to one call with
/// that call's interpreter provider and terminal, so the three surfaces build their `Host` one
/// way.
#[derive(Clone, Default)]
pub struct HostConfig {
    /// `--workspace-root` override (else the episode's binding).
    pub workspace_root: Option<PathBuf>,
    /// `--tool-ailang-bin`, pinned ([`PinnedTool::pin`]); re-hashed before every exec.
    pub tool: Option<PinnedTool>,
    /// The run allowlist.
    pub run_caps: RunCapsConfig,
    /// `--examples-dir`.
    pub examples_dir: Option<PathBuf>,
    /// `--ledger`: the standalone limits/mission ledger effects are paired with (issue 18).
    pub limits_ledger: Option<String>,
    /// `--exec-profile` and friends (`Workspace.Exec`, exec-and-agui.md §1).
    pub exec: Option<Arc<crate::broker::handlers::exec::ExecConfig>>,
    /// `--allow-unattested`: accept credential rows without a mint record (DEC-TRUST3-2).
    pub unattested: session::Unattested,
}

impl HostConfig {
    /// The [`Host`] of one call: this configuration, `interpreters` to resolve pins, and the
    /// terminal `Human.Approve` prompts on (`None`: the handlers' default, the controlling
    /// terminal).
    pub fn host<'a>(
        &self,
        interpreters: &'a dyn InterpreterProvider,
        prompter: Option<Arc<dyn crate::broker::handlers::approval::Prompter>>,
    ) -> Host<'a> {
        Host {
            interpreters,
            workspace_root: self.workspace_root.clone(),
            tool: self.tool.clone(),
            run_caps: self.run_caps.clone(),
            examples_dir: self.examples_dir.clone(),
            services: Services {
                prompter,
                limits_ledger: self.limits_ledger.clone(),
                ..Services::default()
            },
            exec: self.exec.clone(),
            observer: None,
            unattested: self.unattested,
        }
    }
}

/// What a committed invocation returns.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Committed {
    /// `<surface>:<ep>:<task>`
    pub invocation_id: String,
    /// The log index.
    pub entry_index: i64,
    /// The new world ref.
    pub world_ref: String,
    /// The output object ref (= `stateRoot`).
    pub output_ref: String,
    /// The committed output bytes.
    #[serde(skip)]
    pub output: Vec<u8>,
    /// Effect statuses in plan order (empty for pure calls).
    #[serde(skip)]
    pub effects: Vec<(Status, Option<String>)>,
    /// True when this answer is the recorded result of an earlier identical call.
    pub replayed: bool,
}

impl Committed {
    /// `ok:false` at the top level of the output (a committed refusal).
    pub fn refused(&self) -> bool {
        serde_json::from_slice::<serde_json::Value>(&self.output)
            .ok()
            .and_then(|v| v.get("ok").and_then(|x| x.as_bool()))
            == Some(false)
    }
}

/// Failures before or instead of a commit (transitions.md §9 rules).
#[derive(Debug, thiserror::Error)]
pub enum InvokeError {
    /// R1: bad task id, episode, missing or oversized input, or input failing the schema.
    #[error("invalid call: {0}")]
    InvalidCall(String),
    /// The session cannot be used.
    #[error("{0}")]
    Session(#[from] session::SessionError),
    /// R2–R4: unknown or invisible transition (indistinguishable).
    #[error("unknown transition {0:?}")]
    NotAuthorized(String),
    /// R6: the source object is missing or corrupt.
    #[error("transition invocation is not available in this daemon: source {0}")]
    Source(String),
    /// R7: no selected world.
    #[error("no world is selected; commit a genesis world first")]
    WorldAbsent,
    /// R8: a declared effect has no handler for this episode: the effect, and why the
    /// episode's registry lacks it when it knows (its warnings; not part of the wire text).
    #[error("transition declares an effect this daemon has no handler for ({0})")]
    EffectsUnsupported(String, Vec<String>),
    /// R9: the calling convention is not implemented.
    #[error("transition does not implement the invocation calling convention: {0}")]
    Incompatible(String),
    /// R10: other execution failure.
    #[error("transition execution failed: {0}")]
    Execution(String),
    /// R11: deadline before the commit boundary.
    #[error("invocation exceeded its deadline ({0})")]
    Deadline(String),
    /// R12: output too large or not an object.
    #[error("transition output is not a JSON object: {0}")]
    Output(String),
    /// A plan law was broken.
    #[error("{0}")]
    PlanLaw(#[from] plan::PlanLawError),
    /// R13 / an interpreter or object failed its integrity check.
    #[error("integrity: {0}")]
    Integrity(String),
    /// R14: the head moved at commit (pure calls).
    #[error("world head moved during invocation; not committed; send a new task id ({0})")]
    Conflict(String),
    /// R15: a resent id whose earlier run has no outcome.
    #[error("invocation was not committed; send a new task id ({0} is indeterminate)")]
    NotCommitted(String),
    /// R17: the id was used for a different call.
    #[error("task id already used in this session ({0} was used for a different call)")]
    InFlight(String),
    /// Effects ran but the invocation did not commit (§11).
    #[error("effects were requested but the invocation was not confirmed committed; effect records: {}{}", records.join(" "), if intents.is_empty() { String::new() } else { format!("; pending effect intents: {}", intents.join(" ")) })]
    EffectsUnrecorded {
        /// The invocation id.
        invocation_id: String,
        /// Effect record refs written.
        records: Vec<String>,
        /// Effect intents without outcome (indeterminate effects).
        intents: Vec<String>,
        /// The cause.
        cause: String,
    },
    /// The limits ledger refused the effect's reservation; nothing ran, nothing was committed.
    #[error("{}", .0.human())]
    LimitsRejected(Box<crate::limits::Verdict>),
    /// The paired mission refused the effect's admission; nothing ran, nothing was committed.
    #[error("{}", .0.human())]
    MissionRejected(Box<crate::mission::Rejection>),
    /// The standalone limits ledger could not be reached or failed before the effect's intent
    /// was journaled; nothing ran, nothing was committed (issue 18).
    #[error("{0}")]
    LimitsUnavailable(String),
    /// The standalone ledger holding the episode's mission is not named by `--ledger`, could
    /// not be reached, or failed before the effect's intent was journaled; nothing ran,
    /// nothing was committed (issue 18, DEC-MIS-14).
    #[error("{0}")]
    MissionUnavailable(String),
    /// A standalone ledger (limits or mission) stayed locked by another process for the whole
    /// lock wait before the effect's intent was journaled; nothing ran, nothing was committed
    /// (exit 6, docs/LEDGER.md).
    #[error("{0}")]
    LedgerBusy(String),
    /// Store failure before anything durable happened.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl InvokeError {
    /// The rule class name used on the wire (`error.data.class`).
    pub fn class(&self) -> &'static str {
        match self {
            InvokeError::InvalidCall(_) => "InvalidCallError",
            InvokeError::Session(_) => "SessionError",
            InvokeError::NotAuthorized(_) => "NotAuthorized",
            InvokeError::Source(_) => "SourceError",
            InvokeError::WorldAbsent => "WorldAbsentError",
            InvokeError::EffectsUnsupported(..) => "EffectsUnsupportedError",
            InvokeError::Incompatible(_) => "IncompatibleError",
            InvokeError::Execution(_) => "ExecutionError",
            InvokeError::Deadline(_) => "DeadlineError",
            InvokeError::Output(_) => "OutputError",
            InvokeError::PlanLaw(_) => "PlanLawError",
            InvokeError::Integrity(_) => "IntegrityError",
            InvokeError::Conflict(_) => "ConflictError",
            InvokeError::NotCommitted(_) => "NotCommittedError",
            InvokeError::InFlight(_) => "InFlightError",
            InvokeError::EffectsUnrecorded { .. } => "EffectsUnrecordedError",
            InvokeError::LimitsRejected(_) => "LimitsRejectedError",
            InvokeError::MissionRejected(_) => "MissionRejectedError",
            InvokeError::LimitsUnavailable(_) => "LimitsUnavailableError",
            InvokeError::MissionUnavailable(_) => "MissionUnavailableError",
            InvokeError::LedgerBusy(_) => "LedgerBusyError",
            InvokeError::Store(_) => "StoreError",
        }
    }
}

/// The mission pairing of an episode's binding (missions.md §7), with the bound grant's subject.
/// A binding that names a standalone ledger (`session mint --ledger`) needs the invocation's
/// `--ledger` to name the same ledger (DEC-MIS-14); the mission is then read there.
fn mission_pairing(
    store: &mut Store,
    binding: Option<&session::Binding>,
    ledger: Option<&str>,
    clock: crate::clock::Clock,
    now: i64,
    store_id: &mut StoreId,
) -> Result<Option<broker::MissionPairing>, InvokeError> {
    let Some(b) = binding.filter(|b| !b.mission_id.is_empty()) else {
        return Ok(None);
    };
    let mut pairing = broker::MissionPairing {
        mission_id: b.mission_id.clone(),
        run_id: b.mission_run.clone(),
        grant_id: b.mission_grant.clone(),
        subject: String::new(),
        now_ms: ledger_now_ms(clock, now),
        clock,
        standalone: None,
    };
    if b.mission_ledger.is_empty() {
        pairing.subject =
            crate::mission::durable::grant_subject(store.conn(), &b.mission_id, &b.mission_grant)
                .map_err(|e| {
                    InvokeError::Store(StoreError::Corrupt {
                        what: "mission binding".into(),
                        detail: e.to_string(),
                    })
                })?
                .unwrap_or_default();
        return Ok(Some(pairing));
    }
    let unavailable = |why: String| InvokeError::MissionUnavailable(why);
    let Some(location) = ledger else {
        return Err(unavailable(format!(
            "the episode's mission {} is in the ledger {}: pass --ledger naming it (or WORLD_LEDGER)",
            b.mission_id, b.mission_ledger
        )));
    };
    let missions =
        crate::mission::ledger::open_canonical(location).map_err(|e| unavailable(e.to_string()))?;
    // The same ledger and the same mission the binding names (DEC-MIS-15).
    let mismatch = crate::mission::ledger::check_bound(
        missions.as_ref(),
        &b.mission_id,
        &b.mission_ledger,
        &b.mission_root,
    )
    .map_err(|e| match e {
        crate::mission::durable::Error::Rejected(r) => InvokeError::MissionRejected(r),
        e => unavailable(e.to_string()),
    })?;
    if let Some(why) = mismatch {
        return Err(unavailable(why));
    }
    let state = missions.state(&b.mission_id).map_err(|e| match e {
        crate::mission::durable::Error::Rejected(r) => InvokeError::MissionRejected(r),
        e => unavailable(e.to_string()),
    })?;
    pairing.subject = state
        .grants
        .get(&b.mission_grant)
        .map(|g| g.subject.clone())
        .unwrap_or_default();
    pairing.standalone = Some(std::rc::Rc::new(crate::mission::pairing::Standalone {
        missions,
        mission_id: b.mission_id.clone(),
        link: crate::ledger::paired::StoreLink::new(store_id.get(store)?),
        implicit_clock: !clock.is_fixed(),
    }));
    Ok(Some(pairing))
}

/// The store's id for standalone pairings, read (or written, for a store never paired) once
/// per call: the limits and the mission pairing of one invocation name the store alike, and an
/// id this call wrote is removed again when the ledger cleanly refuses its first effect
/// (DEC-MIS-19).
#[derive(Default)]
struct StoreId {
    id: Option<String>,
    created: Option<Object>,
}

impl StoreId {
    fn get(&mut self, store: &mut Store) -> Result<String, InvokeError> {
        if let Some(id) = &self.id {
            return Ok(id.clone());
        }
        let (id, created) = crate::store::markers::ensure_store_id_new(store)?;
        self.id = Some(id.clone());
        self.created = created;
        Ok(id)
    }
}

/// The ledger clock for pairing: the wall clock in ms, or `now * 1000` (the call's own
/// instant) when the clock is fixed.
fn ledger_now_ms(clock: crate::clock::Clock, now: i64) -> u128 {
    if clock.is_fixed() {
        (now.max(0) as u128) * 1000
    } else {
        clock.now_ms()
    }
}

/// The task-id grammar `[A-Za-z0-9._-]{1,128}`.
pub fn valid_task(t: &str) -> bool {
    (1..=128).contains(&t.len())
        && t.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

fn random_task() -> String {
    let mut b = [0u8; 8];
    let _ = getrandom::getrandom(&mut b);
    hex::encode(b)
}

/// The started-marker object for an invocation id (deterministic, so it is found by hash).
pub fn started_marker(invocation_id: &str) -> Object {
    Object::new(
        STARTED,
        "coordinator",
        Obj::new().str("invocationId", invocation_id).finish(),
    )
}

/// The receipt of a coordinator call as `world receipt` answers it: the journal's
/// ([`journal::receipt`]), except that a call whose effect ran but whose commit never landed
/// (no commit intent, but its [`started_marker`]) is indeterminate, never not-started.
///
/// # Errors
/// The journal's errors ([`journal::receipt`]) and object reads.
pub fn receipt(store: &Store, invocation_id: &str) -> Result<journal::Receipt, StoreError> {
    let mut r = journal::receipt(store.conn(), invocation_id)?;
    if r.state == ReceiptState::NotStarted
        && ["cli:", "a2a:", "mcp:"]
            .iter()
            .any(|p| invocation_id.starts_with(p))
        && store
            .object(&started_marker(invocation_id).meta.hash)?
            .is_some()
    {
        r.state = ReceiptState::Indeterminate;
    }
    Ok(r)
}

/// The descriptors this session can see: `access` satisfied by a live grant (minted budget).
pub fn visible(descriptors: &[Descriptor], grants: &[Grant], now: i64) -> Vec<Descriptor> {
    descriptors
        .iter()
        .filter(|d| {
            grants
                .iter()
                .any(|g| g.satisfies(&d.access.effect, &d.access.scope, d.access.cost, now))
        })
        .cloned()
        .collect()
}

fn capsule_err(e: CapsuleError, phase: &str) -> InvokeError {
    match e {
        CapsuleError::InvalidCall { .. } => InvokeError::InvalidCall(e.to_string()),
        CapsuleError::Incompatible { .. } => InvokeError::Incompatible(e.to_string()),
        CapsuleError::Timeout => InvokeError::Deadline(format!("{phase} phase")),
        CapsuleError::Output(_) => InvokeError::Output(e.to_string()),
        CapsuleError::Integrity { .. } => InvokeError::Integrity(e.to_string()),
        _ => InvokeError::Execution(e.to_string()),
    }
}

/// The handler context and registry for an episode: worktree from the override or the
/// episode's binding (`<root>/<episode>`).
pub fn episode_handlers(
    store: &Store,
    episode: &str,
    host: &Host<'_>,
) -> Result<(HandlerContext, HandlerRegistry), StoreError> {
    let root = match &host.workspace_root {
        Some(r) => Some(r.clone()),
        None => session::binding(store.conn(), episode)?
            .map(|b| b.workspace_root)
            .filter(|r| !r.is_empty())
            .map(PathBuf::from),
    };
    let ctx = HandlerContext {
        episode: episode.to_string(),
        worktree: root.map(|r| r.join(episode)),
        db_path: store.path().to_path_buf(),
        tool: host.tool.clone(),
        run_caps: host.run_caps.clone(),
        examples_dir: host.examples_dir.clone(),
        git_bin: broker::handlers::process::find_in_path(
            "git",
            std::env::var_os("PATH").as_deref(),
        ),
        exec: host.exec.clone(),
    };
    let mut services = host.services.clone();
    if services.approvals.is_none() && store.is_writer() {
        // `Human.*` are served over this store (§12); a read-only caller (`world tools list`)
        // lists them without a writing connection.
        services.approvals = Some(Arc::new(StoreApprovals::for_writer(store)?));
    }
    let reg = HandlerRegistry::for_episode(&ctx, services);
    Ok((ctx, reg))
}

/// Why `effect` has no handler for this episode, for the operator (R8 keeps the wire text).
fn unserved_reasons(effect: &str, ctx: &HandlerContext, handlers: &HandlerRegistry) -> Vec<String> {
    let mut why: Vec<String> = handlers.warnings().to_vec();
    let needs_worktree =
        effect.starts_with("Workspace.") || effect.starts_with("Ailang.") || effect == "Git.Commit";
    if needs_worktree {
        match &ctx.worktree {
            None => why.push(format!(
                "{effect} needs the episode worktree: mint the session with --workspace-root DIR (or pass --workspace-root DIR) and create DIR/{}",
                ctx.episode
            )),
            Some(w) if !w.is_dir() => why.push(format!(
                "{effect} needs the episode worktree {}, which is not a directory; create it",
                w.display()
            )),
            Some(_) => {}
        }
    }
    if effect.starts_with("Ailang.") && ctx.tool.is_none() {
        why.push(format!(
            "{effect} runs the pinned tool binary: pass --tool-ailang-bin PATH"
        ));
    }
    if effect == "Git.Commit" && ctx.worktree.as_ref().is_some_and(|w| w.is_dir()) {
        why.push(
            "Git.Commit needs a git repository in the worktree and a git executable on PATH".into(),
        );
    }
    why
}

/// How an [`InvokeError::InvalidCall`] for arguments failing the inputSchema begins (MCP
/// surfaces it as a tool error, DEC-MCP-3).
pub const SCHEMA_FAILURE: &str = "arguments fail the inputSchema";

/// Check `args` against a transition's input schema (step 7).
///
/// # Errors
/// [`InvokeError::InvalidCall`] beginning [`SCHEMA_FAILURE`] and naming the failing path, or
/// naming an unusable schema.
pub fn validate_input(schema: &CValue, args: &serde_json::Value) -> Result<(), InvokeError> {
    let schema = schema.to_json();
    let validator = jsonschema::validator_for(&schema).map_err(|e| {
        InvokeError::InvalidCall(format!("the transition's inputSchema is not usable: {e}"))
    })?;
    if let Some(err) = validator.iter_errors(args).next() {
        let path = err.instance_path().to_string();
        let at = if path.is_empty() {
            "/".to_string()
        } else {
            path
        };
        return Err(InvokeError::InvalidCall(format!(
            "{SCHEMA_FAILURE} at {at}: {err}"
        )));
    }
    Ok(())
}

/// Run one invocation to a commit (or a typed failure) on a store opened for writing.
///
/// The steps of transitions.md §9–§11, each its own function below: [`validate_call`] (1),
/// [`admit`] (2–3), [`precheck`] (4, 4b), [`load_source`] (5), the observed head (6),
/// [`check_handlers`] and the schema (7), then [`run_pure`] (v1) or [`run_effectful`] (v2:
/// plan, [`execute_effects`], [`finish_body`], compose, commit).
pub fn invoke(store: &mut Store, call: &Call, host: &Host<'_>) -> Result<Committed, InvokeError> {
    let deadline = Instant::now() + INVOCATION;
    // The call's one instant (Unix seconds): every step below reads this, never the clock.
    let now = call.clock.now_unix();
    let (task, input) = validate_call(call)?;
    let (sess, desc) = admit(store, call, now, host.unattested)?;
    let invocation_id = format!("{}:{}:{}", call.surface.name(), sess.episode, task);
    observe(host, || Step::Admitted {
        invocation_id: invocation_id.clone(),
        transition: desc.id.clone(),
    });
    let surface = format!("coordinator:{}", call.surface.name());
    let input_obj = Object::new(records::INVOCATION_INPUT, &surface, input.clone());
    if let Some(done) = precheck(store, &invocation_id, &desc, &input_obj, &sess.episode)? {
        return Ok(done);
    }
    let (source, label) = load_source(store, &desc)?;
    // 6. World: the selected world read here is the commit's observedHead (§10), so a head
    // moved by another writer before the commit is a conflict (R14), never silently absorbed.
    let observed = head_in(store.conn())?.ok_or(InvokeError::WorldAbsent)?;
    // 7. Handlers for every declared effect, the arguments, the pinned interpreter.
    let (hctx, handlers) = episode_handlers(store, &sess.episode, host)?;
    check_handlers(&desc, &hctx, &handlers)?;
    validate_input(&desc.input_schema, &call.args)?;
    let interp = host.interpreters.resolve(&desc.interpreter).map_err(|e| {
        if e.integrity {
            InvokeError::Integrity(e.message)
        } else {
            InvokeError::Execution(e.message)
        }
    })?;
    let run = Prepared {
        sess,
        desc,
        invocation_id,
        surface,
        input,
        input_obj,
        source: source.payload,
        label,
        observed,
        interp,
        now,
        deadline,
    };
    let done = if run.desc.declared_effects.is_empty() {
        run_pure(store, run)
    } else {
        run_effectful(store, run, call, host, &hctx, &handlers)
    }?;
    observe(host, || Step::Committed {
        entry_index: done.entry_index,
        world_ref: done.world_ref.clone(),
    });
    Ok(done)
}

/// Everything an admitted call has gathered before it runs.
struct Prepared {
    sess: Session,
    desc: Descriptor,
    /// `<surface>:<episode>:<task>`.
    invocation_id: String,
    /// `coordinator:<surface>`, the `writtenBy` of every object the call writes.
    surface: String,
    /// The Go-encoded arguments.
    input: Vec<u8>,
    input_obj: Object,
    /// The re-hashed transition source.
    source: Vec<u8>,
    /// The file the source was published from, where publish recorded it (for messages).
    label: Option<String>,
    /// The selected world ref read before running: the commit's `observedHead`.
    observed: String,
    interp: Box<dyn crate::interp::Interpreter>,
    /// The call's instant, Unix seconds.
    now: i64,
    /// The whole-invocation deadline.
    deadline: Instant,
}

impl Prepared {
    /// [`InvokeError::EffectsUnrecorded`] for a failure after `records` were written.
    fn unrecorded(&self, records: &[String], cause: String) -> InvokeError {
        InvokeError::EffectsUnrecorded {
            invocation_id: self.invocation_id.clone(),
            records: records.to_vec(),
            intents: vec![],
            cause,
        }
    }

    /// The invocation record of this call, given its output and (v2) plan and effect records.
    fn record(
        &self,
        output: &Object,
        plan: Option<String>,
        effects: Option<Vec<String>>,
    ) -> InvocationRecord {
        InvocationRecord {
            invocation_id: self.invocation_id.clone(),
            episode_id: self.sess.episode.clone(),
            skill_id: self.desc.id.clone(),
            transition_fn: self.desc.transition_fn.to_string(),
            interpreter: self.desc.interpreter.to_string(),
            semantics_epoch: self.desc.semantics_epoch,
            input: self.input_obj.meta.hash.clone(),
            output: output.meta.hash.clone(),
            plan,
            effects,
        }
    }
}

/// Step 1: the task id (drawn when absent), the arguments an exact JSON object within
/// [`plan::MAX_IO`] bytes once Go-encoded. Returns `(task, input bytes)`; errors are
/// [`InvokeError::InvalidCall`].
fn validate_call(call: &Call) -> Result<(String, Vec<u8>), InvokeError> {
    let task = match &call.task {
        Some(t) if !valid_task(t) => {
            return Err(InvokeError::InvalidCall(format!(
                "task id {t:?} must match [A-Za-z0-9._-]{{1,128}}"
            )))
        }
        Some(t) => t.clone(),
        None => random_task(),
    };
    if !call.args.is_object() {
        return Err(InvokeError::InvalidCall(
            "arguments must be a JSON object".into(),
        ));
    }
    if let Some((path, n, why)) = crate::interp::numbers::first_inexact_value(&call.args) {
        return Err(InvokeError::InvalidCall(format!(
            "argument number {n} at {path} would not reach the transition exactly: {why}"
        )));
    }
    let input = gojson::any_to_vec(&call.args);
    if input.len() > plan::MAX_IO {
        return Err(InvokeError::InvalidCall(format!(
            "input is {} bytes; limit is {}",
            input.len(),
            plan::MAX_IO
        )));
    }
    Ok((task, input))
}

/// Steps 2–3: resolve the session (fail closed) and bind the transition from a fresh registry
/// snapshot; a transition the session's live grants cannot see is
/// [`InvokeError::NotAuthorized`], the same answer as for an id that does not exist.
fn admit(
    store: &Store,
    call: &Call,
    now: i64,
    unattested: session::Unattested,
) -> Result<(Session, Descriptor), InvokeError> {
    let sess: Session = session::agent(store.conn(), &call.token, now, unattested)?;
    let registry = read_head(store.conn()).map_err(|e| InvokeError::Integrity(e.to_string()))?;
    let descriptors = registry.map(|h| h.revision.entries).unwrap_or_default();
    let desc = visible(&descriptors, &sess.grants, now)
        .into_iter()
        .find(|d| d.id == call.transition)
        .ok_or_else(|| InvokeError::NotAuthorized(call.transition.clone()))?;
    Ok((sess, desc))
}

/// Step 4: the receipt pre-check. `Some` is the recorded answer of a resolved id; an
/// indeterminate or started id is [`InvokeError::NotCommitted`]. Step 4b (INT-7): when the
/// episode's latest effect belongs to no committed invocation and no started marker covers
/// it, this call may be the resend of the one that made it, so it is refused
/// ([`InvokeError::Integrity`]) rather than run a write twice.
fn precheck(
    store: &Store,
    invocation_id: &str,
    desc: &Descriptor,
    input_obj: &Object,
    episode: &str,
) -> Result<Option<Committed>, InvokeError> {
    let receipt = journal::receipt(store.conn(), invocation_id)?;
    match receipt.state {
        ReceiptState::Resolved => return recorded(store, invocation_id, desc, input_obj).map(Some),
        ReceiptState::Indeterminate => {
            return Err(InvokeError::NotCommitted(invocation_id.to_string()))
        }
        ReceiptState::NotStarted => {
            if object_in(store.conn(), &started_marker(invocation_id).meta.hash)?.is_some() {
                return Err(InvokeError::NotCommitted(invocation_id.to_string()));
            }
        }
    }
    if desc.declared_effects.is_empty() {
        return Ok(None);
    }
    let Some(max) = crate::broker::next_ordinal(store.conn(), episode)?
        .and_then(|n| n.checked_sub(1))
        .filter(|m| *m >= 0)
    else {
        return Ok(None);
    };
    if let Some(intent) = journal::uncovered_tail_intent(store.conn(), episode, max)? {
        return Err(InvokeError::Integrity(format!(
            "episode {episode} has effect {intent} that no committed invocation owns and no started marker covers (the marker was removed?); a resend could repeat it, so nothing runs in this episode until `world verify` is clean"
        )));
    }
    Ok(None)
}

/// Step 5: the transition's source object, re-hashed ([`InvokeError::Source`] when absent or
/// corrupt), with the file label publish recorded for it.
fn load_source(store: &Store, desc: &Descriptor) -> Result<(Object, Option<String>), InvokeError> {
    let source = object_in(store.conn(), &desc.transition_fn.to_string())?
        .ok_or_else(|| InvokeError::Source(format!("{} is absent", desc.transition_fn)))?;
    if !source.verifies() {
        return Err(InvokeError::Source(format!(
            "{} is corrupt",
            desc.transition_fn
        )));
    }
    // Messages name the file the source was published from, where publish recorded it.
    let label = crate::store::labels::lookup(store.conn(), &desc.transition_fn.to_string());
    Ok((source, label))
}

/// Step 7 (R8): every declared effect needs a handler, else
/// [`InvokeError::EffectsUnsupported`] with the reasons none serves it.
fn check_handlers(
    desc: &Descriptor,
    hctx: &HandlerContext,
    handlers: &HandlerRegistry,
) -> Result<(), InvokeError> {
    for e in &desc.declared_effects {
        if handlers.handler_for(&e.effect).is_none() {
            return Err(InvokeError::EffectsUnsupported(
                e.effect.clone(),
                unserved_reasons(&e.effect, hctx, handlers),
            ));
        }
    }
    Ok(())
}

/// A pure (v1) call: one capsule run bounded by the invocation deadline, then the commit.
fn run_pure(store: &mut Store, run: Prepared) -> Result<Committed, InvokeError> {
    let output = capsule::run_phase(run.interp.as_ref(), &run.source, &run.input, run.deadline)
        .map_err(|e| capsule_err(e.naming(run.label.as_deref()), "pure"))?;
    let output_obj = Object::new(records::INVOCATION_OUTPUT, &run.surface, output);
    let rec = run.record(&output_obj, None, None);
    commit_invocation(
        store,
        &run.observed,
        &run.desc,
        &run.invocation_id,
        &run.surface,
        vec![run.input_obj.clone(), output_obj],
        rec,
        run.now,
        Vec::new(),
    )
    .map_err(|e| match e {
        CommitFailure::Conflict(m) => InvokeError::Conflict(m),
        CommitFailure::Other(e) => e,
    })
}

/// An effectful (v2) call: the plan phase (2 s), the limits and mission pairings, each effect
/// through the broker ([`execute_effects`]), the finish body on the 4 s tail budget,
/// composition and the commit. Any failure after an effect ran is
/// [`InvokeError::EffectsUnrecorded`] naming the records written.
fn run_effectful(
    store: &mut Store,
    run: Prepared,
    call: &Call,
    host: &Host<'_>,
    hctx: &HandlerContext,
    handlers: &HandlerRegistry,
) -> Result<Committed, InvokeError> {
    let label = run.label.as_deref();
    let plan_deadline = (Instant::now() + PHASE).min(run.deadline);
    let raw_plan = capsule::run_phase(
        run.interp.as_ref(),
        &run.source,
        &plan::plan_input(&run.input),
        plan_deadline,
    )
    .map_err(|e| capsule_err(e.naming(label), "plan"))?;
    let declared: Vec<Triple> = run
        .desc
        .declared_effects
        .iter()
        .map(|e| Triple {
            effect: e.effect.clone(),
            scope: e.scope.clone(),
            cost: e.cost,
        })
        .collect();
    let parsed = plan::parse_plan(&raw_plan, &declared)?;
    observe(host, || Step::Planned {
        effects: parsed.effects.len(),
    });
    let plan_obj = Object::new(records::EFFECT_PLAN, &run.surface, parsed.canonical.clone());
    let (limits, mission, new_store_id) = pairings(store, &run, call, host)?;
    let b = Broker {
        new_store_id,
        intent_committed: std::cell::Cell::new(false),
        episode: &run.sess.episode,
        grants: &run.sess.grants,
        now: run.now,
        handlers,
        ctx: hctx,
        limits,
        mission,
        with_intent: Some(started_marker(&run.invocation_id)),
    };
    let done = execute_effects(store, &b, &parsed.effects, &run, host, hctx, handlers)?;
    // Everything after the effect runs on its own tail budget.
    let tail_deadline = Instant::now() + TAIL;
    let records_written = &done.records;
    let unrecorded = |cause: String| run.unrecorded(records_written, cause);
    let body = finish_body(&run, &parsed, &done, tail_deadline)?;
    let output = plan::compose(body, &plan_obj.meta.hash, &done.world_effects)
        .map_err(|e| unrecorded(e.to_string()))?;
    let output_obj = Object::new(records::INVOCATION_OUTPUT, &run.surface, output);
    let rec = run.record(
        &output_obj,
        Some(plan_obj.meta.hash.clone()),
        Some(records_written.clone()),
    );
    if Instant::now() > tail_deadline {
        return Err(unrecorded(
            "the post-effect tail exceeded its 4 s budget".into(),
        ));
    }
    commit_invocation(
        store,
        &run.observed,
        &run.desc,
        &run.invocation_id,
        &run.surface,
        vec![run.input_obj.clone(), output_obj, plan_obj],
        rec,
        run.now,
        done.statuses.clone(),
    )
    .map_err(|e| match e {
        CommitFailure::Conflict(m) if records_written.is_empty() => InvokeError::Conflict(m),
        CommitFailure::Conflict(m) => unrecorded(format!("commit: {m}")),
        CommitFailure::Other(e) if records_written.is_empty() => e,
        CommitFailure::Other(e) => unrecorded(format!("commit: {e}")),
    })
}

/// An invocation's limits pairing, mission pairing, and the store-id object it wrote.
type Pairings = (
    Option<broker::LimitsPairing>,
    Option<broker::MissionPairing>,
    Option<Object>,
);

/// The episode's limits pairing (its binding's scope, on the store's ledger or the
/// `--ledger` one) and mission pairing (DEC-LIM-20, DEC-MIS-14), both `None` when unbound,
/// and the store-id object this call wrote for a store never paired (DEC-MIS-19).
fn pairings(
    store: &mut Store,
    run: &Prepared,
    call: &Call,
    host: &Host<'_>,
) -> Result<Pairings, InvokeError> {
    let binding = session::binding(store.conn(), &run.sess.episode)?;
    let mut store_id = StoreId::default();
    let mission = mission_pairing(
        store,
        binding.as_ref(),
        host.services.limits_ledger.as_deref(),
        call.clock,
        run.now,
        &mut store_id,
    )?;
    let limits = binding
        .map(|b| b.limits_scope)
        .filter(|s| !s.is_empty())
        .map(|scope| broker::LimitsPairing {
            scope,
            now_ms: ledger_now_ms(call.clock, run.now),
            clock: call.clock,
            standalone: None,
        });
    let limits = match (limits, &host.services.limits_ledger) {
        (Some(mut p), Some(location)) => {
            let id = store_id.get(store)?;
            p.standalone = Some(std::rc::Rc::new(
                crate::limits::pairing::Standalone::open_for(location, id, &run.invocation_id)
                    .map_err(|e| match e {
                        crate::limits::Error::Rejected(v) => InvokeError::LimitsRejected(v),
                        e => InvokeError::LimitsUnavailable(e.to_string()),
                    })?,
            ));
            Some(p)
        }
        (p, _) => p,
    };
    Ok((limits, mission, store_id.created))
}

/// What the effects of one plan left behind, in plan order.
struct Executed {
    /// The finish phase's `results`.
    results: Vec<PhaseResult>,
    /// The composed output's `effects`.
    world_effects: Vec<WorldEffect>,
    /// The effect records written (refs).
    records: Vec<String>,
    /// Each effect's status and record, for the commit's outcome.
    statuses: Vec<(Status, Option<String>)>,
    /// The last handler's output (the body of a single-effect plan without finish).
    handler_output: Option<CValue>,
}

/// Run each planned effect through the broker, each handler bounded by what is left of the
/// deadline less the 6 s the tail needs (at most 10 s). A refusal before any record was
/// written keeps its own error (limits, mission, spend, no handler); anything after is
/// [`InvokeError::EffectsUnrecorded`]; an indeterminate handler stops the call there.
fn execute_effects(
    store: &mut Store,
    b: &Broker<'_>,
    effects: &[plan::PlannedEffect],
    run: &Prepared,
    host: &Host<'_>,
    hctx: &HandlerContext,
    handlers: &HandlerRegistry,
) -> Result<Executed, InvokeError> {
    let mut done = Executed {
        results: Vec::new(),
        world_effects: Vec::new(),
        records: Vec::new(),
        statuses: Vec::new(),
        handler_output: None,
    };
    for (i, pe) in effects.iter().enumerate() {
        observe(host, || Step::EffectDispatched {
            index: i + 1,
            total: effects.len(),
            effect: pe.effect.clone(),
            scope: pe.scope.clone(),
        });
        let remaining = run.deadline.saturating_duration_since(Instant::now());
        let handler_deadline = Instant::now()
            + remaining
                .saturating_sub(Duration::from_secs(6))
                .min(Duration::from_secs(10));
        let req = broker::Request {
            effect: pe.effect.clone(),
            scope: pe.scope.clone(),
            cost: pe.cost,
            payload: pe.payload.clone(),
        };
        let nothing_written = done.records.is_empty();
        let ex = match b.execute(store, &req, handler_deadline) {
            Ok(ex) => ex,
            Err(BrokerError::OutcomeWrite { record, cause }) => {
                return Err(InvokeError::EffectsUnrecorded {
                    invocation_id: run.invocation_id.clone(),
                    records: vec![record],
                    intents: vec![],
                    cause,
                })
            }
            Err(BrokerError::NoHandler(e)) => {
                let why = unserved_reasons(&e, hctx, handlers);
                return Err(InvokeError::EffectsUnsupported(e, why));
            }
            Err(BrokerError::LimitsRejected(v)) if nothing_written => {
                return Err(InvokeError::LimitsRejected(v))
            }
            Err(BrokerError::MissionRejected(r)) if nothing_written => {
                return Err(InvokeError::MissionRejected(r))
            }
            Err(e @ BrokerError::SpendUnreadable(_)) if nothing_written => {
                // The spend fold found an edited intent before this effect was journaled:
                // nothing ran; an integrity failure, not an indeterminate call.
                return Err(InvokeError::Integrity(e.to_string()));
            }
            Err(BrokerError::Limits(m)) if nothing_written => {
                return Err(InvokeError::LimitsUnavailable(m))
            }
            Err(BrokerError::Mission(m)) if nothing_written => {
                return Err(InvokeError::MissionUnavailable(m))
            }
            Err(BrokerError::LedgerBusy(m)) if nothing_written => {
                return Err(InvokeError::LedgerBusy(m))
            }
            Err(BrokerError::LedgerIntegrity(m)) if nothing_written => {
                // The ledger refused to decide on rows it did not write: nothing ran.
                return Err(InvokeError::Integrity(m));
            }
            Err(e) => {
                return Err(InvokeError::EffectsUnrecorded {
                    invocation_id: run.invocation_id.clone(),
                    records: done.records,
                    intents: vec![],
                    cause: e.to_string(),
                })
            }
        };
        if ex.status == Status::Indeterminate {
            return Err(InvokeError::EffectsUnrecorded {
                invocation_id: run.invocation_id.clone(),
                records: done.records,
                intents: ex.intent_id.into_iter().collect(),
                cause: format!(
                    "the {} handler could not tell whether its effect happened: {}",
                    pe.effect,
                    ex.message.unwrap_or_default()
                ),
            });
        }
        let status = match ex.status {
            Status::Ok => "ok",
            Status::Failed => "failed",
            _ => "denied",
        };
        let output = match (&ex.status, &ex.output) {
            (Status::Ok, Some(bytes)) => trcjson::parse(bytes, Bounds::PLAN).ok(),
            _ => None,
        };
        if ex.status == Status::Ok && output.is_none() {
            // A handler output that is not canonical JSON cannot feed the finish phase.
            done.statuses.push((Status::Failed, ex.record.clone()));
        } else {
            done.statuses.push((ex.status.clone(), ex.record.clone()));
        }
        done.handler_output = output.clone();
        done.results.push(PhaseResult {
            id: pe.id.clone(),
            effect: pe.effect.clone(),
            status,
            record: ex.record.clone(),
            output,
        });
        done.world_effects.push(WorldEffect {
            id: pe.id.clone(),
            status,
            record: ex.record.clone(),
        });
        done.records.extend(ex.record);
    }
    Ok(done)
}

/// The output body before composition: the plan's own `result` when it planned no effect,
/// the finish phase's output when the plan asked for one (2 s, within the tail), else the
/// single handler's object output (an empty object when it did not succeed). Errors are
/// [`InvokeError::EffectsUnrecorded`]: the effects already ran.
fn finish_body(
    run: &Prepared,
    parsed: &plan::Plan,
    done: &Executed,
    tail_deadline: Instant,
) -> Result<CValue, InvokeError> {
    let unrecorded = |cause: String| run.unrecorded(&done.records, cause);
    if parsed.effects.is_empty() {
        return Ok(parsed.result.clone().unwrap_or(CValue::Object(vec![])));
    }
    if parsed.finish {
        let raw = capsule::run_phase(
            run.interp.as_ref(),
            &run.source,
            &plan::finish_input(&run.input, &done.results),
            (Instant::now() + PHASE).min(tail_deadline),
        )
        .map_err(|e| {
            unrecorded(format!(
                "finish phase: {}",
                capsule_err(e.naming(run.label.as_deref()), "finish")
            ))
        })?;
        return plan::parse_finish(&raw).map_err(|e| unrecorded(format!("finish output: {e}")));
    }
    match (done.results.first().map(|r| r.status), &done.handler_output) {
        (Some("ok"), Some(v @ CValue::Object(_))) => Ok(v.clone()),
        (Some("ok"), _) => Err(unrecorded("the handler output is not a JSON object".into())),
        _ => Ok(CValue::Object(vec![])),
    }
}

enum CommitFailure {
    Conflict(String),
    Other(InvokeError),
}

#[allow(clippy::too_many_arguments)]
fn commit_invocation(
    store: &mut Store,
    observed: &str,
    desc: &Descriptor,
    invocation_id: &str,
    surface: &str,
    mut objects: Vec<Object>,
    rec: InvocationRecord,
    now: i64,
    effects: Vec<(Status, Option<String>)>,
) -> Result<Committed, CommitFailure> {
    let rec_obj = Object::new(rec.semantic_id(), surface, rec.encode());
    let output = objects
        .get(1)
        .map(|o| o.payload.clone())
        .unwrap_or_default();
    let output_ref = rec.output.clone();
    objects.push(rec_obj.clone());
    let tx = store
        .immediate()
        .map_err(|e| CommitFailure::Other(e.into()))?;
    let observed = observed.to_string();
    let world = crate::store::world_in(&tx, &observed)
        .and_then(|w| {
            w.map(|w| (w.revision, w.log_head))
                .ok_or_else(|| StoreError::Corrupt {
                    what: "world".into(),
                    detail: "no such row".into(),
                })
        })
        .map_err(|e| {
            CommitFailure::Other(InvokeError::Integrity(format!(
                "selected world {observed} is unreadable: {e}"
            )))
        })?;
    let header = Header {
        entry_index: world.0 + 1,
        semantics_epoch: desc.semantics_epoch,
        transition_fn: desc.transition_fn.to_string(),
        interpreter: desc.interpreter.to_string(),
        prev_entry_hash: world.1,
        written_by: surface.to_string(),
    };
    let eh = entry_hash(&header, &rec_obj.meta.hash).to_string();
    let next = world_row(header.entry_index, &output_ref, &eh);
    let commit = Commit {
        invocation_id: Some(invocation_id.to_string()),
        observed_head: observed,
        objects,
        next_world: next.clone(),
        entry: LogEntry {
            header,
            entry_hash: eh,
            transition_ref: rec_obj.meta.hash.clone(),
        },
    };
    commit.check().map_err(|e| CommitFailure::Other(e.into()))?;
    let landed = match apply(&tx, &commit, now, true) {
        Ok(l) => l,
        Err(StoreError::Conflict { observed, selected }) => {
            return Err(CommitFailure::Conflict(format!(
                "observed {observed}, selected {selected}"
            )))
        }
        Err(e) => return Err(CommitFailure::Other(e.into())),
    };
    tx.commit()
        .map_err(|e| CommitFailure::Other(StoreError::from(e).into()))?;
    Ok(Committed {
        invocation_id: invocation_id.to_string(),
        entry_index: landed.entry_index,
        world_ref: next.reference,
        output_ref,
        output,
        effects,
        replayed: false,
    })
}

/// The recorded answer for a resolved invocation id: re-verified, and refused when the call
/// differs from the recorded one (skill or input).
fn recorded(
    store: &Store,
    invocation_id: &str,
    desc: &Descriptor,
    input: &Object,
) -> Result<Committed, InvokeError> {
    let receipt = journal::receipt(store.conn(), invocation_id)?;
    let world_ref = receipt.result_ref.ok_or_else(|| {
        InvokeError::Integrity(format!(
            "{invocation_id}: resolved receipt without resultRef"
        ))
    })?;
    let world = store
        .world(&world_ref)?
        .ok_or_else(|| InvokeError::Integrity(format!("world {world_ref} is absent")))?;
    if crate::store::entry::world_ref(world.revision, &world.state_root, &world.log_head)
        .to_string()
        != world_ref
    {
        return Err(InvokeError::Integrity(format!(
            "world {world_ref} does not re-derive"
        )));
    }
    let entry = store
        .log_entry(world.revision)?
        .filter(|e| e.entry_hash == world.log_head)
        .ok_or_else(|| InvokeError::Integrity(format!("entry for world {world_ref} is absent")))?;
    let rec_obj = object_in(store.conn(), &entry.transition_ref)?
        .filter(Object::verifies)
        .ok_or_else(|| {
            InvokeError::Integrity(format!(
                "record {} is absent or altered",
                entry.transition_ref
            ))
        })?;
    let rec = InvocationRecord::decode(&rec_obj.meta.semantic_id, &rec_obj.payload)
        .map_err(|e| InvokeError::Integrity(format!("record: {e}")))?;
    if rec.skill_id != desc.id || rec.input != input.meta.hash {
        return Err(InvokeError::InFlight(invocation_id.to_string()));
    }
    let out = object_in(store.conn(), &rec.output)?
        .filter(Object::verifies)
        .ok_or_else(|| {
            InvokeError::Integrity(format!("output {} is absent or altered", rec.output))
        })?;
    if rec.output != world.state_root {
        return Err(InvokeError::Integrity(
            "stateRoot is not the record's output".into(),
        ));
    }
    let mut effects = Vec::new();
    for r in rec.effects.clone().unwrap_or_default() {
        let status = match broker::resolve_record(store.conn(), &r)? {
            Some((er, _, _)) if !er.allowed => Status::Denied,
            Some((er, _, _)) if er.failed => Status::Failed,
            Some(_) => Status::Ok,
            None => {
                return Err(InvokeError::Integrity(format!(
                    "effect record {r} is absent"
                )))
            }
        };
        effects.push((status, Some(r)));
    }
    Ok(Committed {
        invocation_id: invocation_id.to_string(),
        entry_index: entry.header.entry_index,
        world_ref,
        output_ref: rec.output,
        output: out.payload,
        effects,
        replayed: true,
    })
}

/// A JSON rendering of an invocation failure for machine clients:
/// `{class, message, invocationId?, effectRecords[]}`.
pub fn error_data(err: &InvokeError) -> serde_json::Value {
    let (id, records) = match err {
        InvokeError::EffectsUnrecorded {
            invocation_id,
            records,
            ..
        } => (Some(invocation_id.clone()), records.clone()),
        _ => (None, vec![]),
    };
    serde_json::json!({"class": err.class(), "message": err.to_string(), "invocationId": id, "effectRecords": records})
}
