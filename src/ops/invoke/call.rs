//! What a call is ([`Call`], [`Surface`]), the host it runs on ([`Host`], lent per call from
//! the per-process [`HostConfig`]), what it returns ([`Committed`]) and what an [`Observer`]
//! hears of it ([`Step`]).

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use crate::authority::session;
use crate::broker::handlers::ailang::PinnedTool;
use crate::broker::handlers::{RunCapsConfig, Services};
use crate::broker::Status;
use crate::transitions::publish::InterpreterProvider;

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

pub(super) fn observe(host: &Host<'_>, step: impl FnOnce() -> Step) {
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
