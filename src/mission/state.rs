//! Mission state (missions.md §3): the value `reduce` folds commands into.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::encoding::trcjson;
use crate::encoding::HashRef;
use crate::ledger::{ActorKind, Amount};

use super::command::Outcome;
use super::contract::Contract;

/// Who issues a command: the operator (HOST), an agent with a session (AGENT, acting as
/// `subject`), or a human at a terminal (HUMAN).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Actor {
    /// The kind.
    pub kind: ActorKind,
    /// `host:<login>`, `human:<login>` or a session credential id.
    pub id: String,
    /// For AGENT: the grant subject it acts as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
}

impl Actor {
    /// The HOST with id `host:world` (what [`super::reduce`] assumes).
    pub fn host() -> Actor {
        Actor {
            kind: ActorKind::Host,
            id: "host:world".into(),
            subject: None,
        }
    }

    /// A HUMAN with id `id` (`human:<login>`).
    pub fn human(id: &str) -> Actor {
        Actor {
            kind: ActorKind::Human,
            id: id.into(),
            subject: None,
        }
    }

    /// An AGENT with credential `id` acting as `subject`.
    pub fn agent(id: &str, subject: &str) -> Actor {
        Actor {
            kind: ActorKind::Agent,
            id: id.into(),
            subject: Some(subject.into()),
        }
    }
}

/// A run's status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum RunStatus {
    /// Admitting work.
    Active,
    /// Completed with evidence for every criterion.
    Completed,
}

/// One run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    /// ACTIVE or COMPLETED.
    pub status: RunStatus,
    /// When `startRun` was applied (ms).
    pub started_at: Amount,
    /// When `completeRun` was applied (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<Amount>,
    /// Criterion → evidence, once completed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub criteria: BTreeMap<String, String>,
}

/// One grant with its accounting.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Grant {
    /// The parent (absent for a root grant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// Who may act under it.
    pub subject: String,
    /// Capabilities.
    pub actions: Vec<String>,
    /// Resources.
    pub resources: Vec<String>,
    /// Live from (inclusive, ms).
    pub not_before: Amount,
    /// Live until (exclusive, ms).
    pub expires_at: Amount,
    /// Ceiling on `used`.
    pub limit: Amount,
    /// Whether the subject may delegate.
    pub can_delegate: bool,
    /// Remaining delegation depth.
    pub depth: Amount,
    /// This grant's subtree's share of reserved + settled.
    pub used: Amount,
    /// Revoked: neither it nor its delegations admit.
    pub revoked: bool,
    /// When granted (ms).
    pub granted_at: Amount,
}

/// One operation (the thing attempts retry).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Operation {
    /// Attempts admitted so far (never decreases).
    pub attempts: Amount,
    /// Whether an attempt SUCCEEDED (for `dependsOn`).
    pub succeeded: bool,
}

/// Where an attempt is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum AttemptStatus {
    /// Reserved, not yet dispatched.
    Admitted,
    /// The external call is (about to be) made.
    Dispatched,
    /// Settled UNKNOWN: full reservation kept until a HUMAN reconciles.
    Unknown,
    /// Settled (or reconciled) with an actual cost.
    Settled,
    /// Released before dispatch.
    Released,
}

impl AttemptStatus {
    /// The status name.
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptStatus::Admitted => "ADMITTED",
            AttemptStatus::Dispatched => "DISPATCHED",
            AttemptStatus::Unknown => "UNKNOWN",
            AttemptStatus::Settled => "SETTLED",
            AttemptStatus::Released => "RELEASED",
        }
    }

    /// Whether the attempt's amount is counted in `reserved`.
    pub fn holds_reservation(self) -> bool {
        matches!(
            self,
            AttemptStatus::Admitted | AttemptStatus::Dispatched | AttemptStatus::Unknown
        )
    }
}

/// One attempt.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attempt {
    /// Its operation.
    pub operation_id: String,
    /// Its run.
    pub run_id: String,
    /// The grant it was admitted under.
    pub grant_id: String,
    /// Who acted.
    pub subject: String,
    /// The capability.
    pub capability: String,
    /// The resource.
    pub resource: String,
    /// The reserved (admitted) amount.
    pub amount: Amount,
    /// Where it is.
    pub status: AttemptStatus,
    /// The settlement outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// The actual cost, once settled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual_cost: Option<Amount>,
    /// sha256 of the canonical payload.
    pub payload_ref: String,
    /// sha256 of the canonical preconditions.
    pub preconditions_ref: String,
    /// sha256 of the outbox intent.
    pub intent_ref: String,
    /// Admitted at (ms).
    pub admitted_at: Amount,
    /// Dispatched at (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatched_at: Option<Amount>,
    /// Settled, released or reconciled at (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled_at: Option<Amount>,
    /// The HUMAN reconciliation's evidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence_ref: Option<String>,
}

/// A HUMAN approval of an operation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    /// The evidence.
    pub evidence_ref: String,
    /// The human.
    pub actor_id: String,
    /// When (ms).
    pub at: Amount,
}

/// A control-violation record: an actual cost above the admitted amount (the real external
/// charge does not disappear).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Violation {
    /// The attempt.
    pub attempt_id: String,
    /// `settle` (rejected) or `reconcile` (accepted).
    pub command: String,
    /// The admitted amount.
    pub admitted: Amount,
    /// The claimed actual cost.
    pub claimed: Amount,
    /// Who claimed it.
    pub actor_id: String,
    /// When (ms).
    pub at: Amount,
}

/// The mission state. JSON: `{missionId, contractRef, revision, budget, reserved, settled,
/// lastNow, runs, grants, operations, attempts, approvals, violations}`; maps keyed by id in
/// byte order, amounts as decimal strings. The contract itself is held beside it (not
/// serialised; `contractRef` names it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct State {
    /// The mission id.
    pub mission_id: String,
    /// sha256 of the contract's TR-CJSON-1 bytes.
    pub contract_ref: String,
    /// Accepted commands so far.
    pub revision: Amount,
    /// The contract budget.
    pub budget: Amount,
    /// Sum of amounts of ADMITTED, DISPATCHED and UNKNOWN attempts.
    pub reserved: Amount,
    /// Sum of actual costs.
    pub settled: Amount,
    /// The latest `now` of an accepted command (ms).
    pub last_now: Amount,
    /// Runs by id.
    pub runs: BTreeMap<String, Run>,
    /// Grants by id.
    pub grants: BTreeMap<String, Grant>,
    /// Operations by id.
    pub operations: BTreeMap<String, Operation>,
    /// Attempts by id.
    pub attempts: BTreeMap<String, Attempt>,
    /// Approvals by operation id.
    pub approvals: BTreeMap<String, Approval>,
    /// Control violations, in order.
    pub violations: Vec<Violation>,
    /// The contract.
    #[serde(skip)]
    pub contract: Arc<Contract>,
}

impl State {
    /// The initial state of a mission (the seed's `createMission`).
    pub fn create(contract: &Contract) -> State {
        State {
            mission_id: contract.mission_id.clone(),
            contract_ref: contract.contract_ref().to_string(),
            revision: Amount::ZERO,
            budget: contract.budget,
            reserved: Amount::ZERO,
            settled: Amount::ZERO,
            last_now: Amount::ZERO,
            runs: BTreeMap::new(),
            grants: BTreeMap::new(),
            operations: BTreeMap::new(),
            attempts: BTreeMap::new(),
            approvals: BTreeMap::new(),
            violations: Vec::new(),
            contract: Arc::new(contract.clone()),
        }
    }

    /// `budget − reserved − settled`, floored at zero.
    pub fn remaining(&self) -> Amount {
        self.budget
            .saturating_sub(self.reserved)
            .saturating_sub(self.settled)
    }

    /// The state with the rejection's violation record appended (what an `EXPOSURE_EXCEEDED`
    /// rejection leaves behind); otherwise a clone.
    pub fn with_violation(&self, rejection: &super::Rejection) -> State {
        let mut s = self.clone();
        if let Some(v) = &rejection.violation {
            s.violations.push((**v).clone());
        }
        s
    }

    /// The TR-CJSON-1 bytes of the state's JSON.
    pub fn canonical(&self) -> Vec<u8> {
        let json = serde_json::to_vec(self).unwrap_or_default();
        trcjson::canonicalize(&json, trcjson::Bounds::UNBOUNDED).unwrap_or(json)
    }

    /// sha256 of [`State::canonical`].
    pub fn state_ref(&self) -> HashRef {
        HashRef::of(&self.canonical())
    }

    /// The grant chain from `grant_id` up to its root: `[grant, parent, …, root]`.
    ///
    /// # Errors
    /// [`ChainError`] naming the first id that is missing, or where a cycle closes.
    pub fn chain(&self, grant_id: &str) -> Result<Vec<(&str, &Grant)>, ChainError> {
        let mut out = Vec::new();
        let mut next = Some(grant_id);
        while let Some(id) = next {
            let (k, g) = self
                .grants
                .get_key_value(id)
                .ok_or_else(|| ChainError::Missing(id.to_string()))?;
            if out.len() > self.grants.len() {
                // A cycle cannot be built by reduce; refuse it.
                return Err(ChainError::Cycle(id.to_string()));
            }
            out.push((k.as_str(), g));
            next = g.parent_id.as_deref();
        }
        Ok(out)
    }
}

/// Why [`State::chain`] found no chain.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ChainError {
    /// A grant of the chain is not in the mission.
    #[error("grant {0} is not in the mission")]
    Missing(String),
    /// The parents loop back (a state `reduce` never builds).
    #[error("grant {0} closes a cycle of parents")]
    Cycle(String),
}

impl ChainError {
    /// The grant id the chain broke at.
    pub fn grant_id(&self) -> &str {
        match self {
            ChainError::Missing(id) | ChainError::Cycle(id) => id,
        }
    }
}
