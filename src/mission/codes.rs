//! Mission result codes (missions.md §4, §4.1, §4.2) and the [`Rejection`] every refused
//! command returns.
//!
//! Codes are SCREAMING_SNAKE_CASE as the seed writes them (`BUDGET_EXHAUSTED`). Within one
//! command the checks run in the order missions.md §4.2 gives; [`Code::ALL`] lists every code
//! grouped by the command that can return it, each group in its own precedence order.

use serde::Serialize;
use std::fmt;

use crate::ledger::Amount;

/// One mission result code. `OK` is success; every other code is a rejection (CLI exit 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Code {
    /// Applied.
    Ok,
    // --- parse (contract and command) ---
    /// A contract member is missing, unknown, mistyped or out of grammar (§2).
    ContractInvalid,
    /// `aiwsEdition` is not `"0.4"`.
    UnsupportedEdition,
    /// `profile` (of the contract or of a grant) is not `"finite-v1"`.
    UnsupportedProfile,
    /// A `features` name other than `triggers` and `graphs`.
    UnsupportedFeature,
    /// A command member is missing, unknown, mistyped or out of grammar (§4).
    CommandInvalid,
    // --- every command ---
    /// `now` is earlier than the mission's last recorded time.
    TimeRegressed,
    /// The actor kind may not issue this command (e.g. `reconcile` without a HUMAN).
    ActorNotPermitted,
    // --- runs ---
    /// `startRun` of a run id already used.
    RunExists,
    /// Unknown run.
    RunNotFound,
    /// The run is COMPLETED.
    RunNotActive,
    /// `now ≥ deadline`.
    DeadlinePassed,
    // --- grants (§4.1) ---
    /// `grant` of a grant id already used.
    GrantExists,
    /// Unknown grant (or parent, or ancestor).
    GrantNotFound,
    /// The grant or an ancestor is revoked.
    GrantRevoked,
    /// The parent grant has `canDelegate` false.
    DelegationNotAllowed,
    /// Parent `depth` is 0, or the child's depth is not below the parent's.
    DelegationDepthExceeded,
    /// A delegation wider than its parent (actions, resources, window or limit).
    AttenuationViolated,
    /// A root grant wider than the contract (actions, resources, limit or expiry).
    GrantExceedsContract,
    // --- admission (§4.2, in precedence order) ---
    /// `attemptId` already used.
    AttemptExists,
    /// The command's `subject` is not the grant's.
    SubjectMismatch,
    /// `now` outside `[notBefore, expiresAt)` for the grant or an ancestor.
    GrantNotLive,
    /// The capability is outside the grant chain or the contract.
    ActionNotGranted,
    /// The resource is outside the grant chain or the contract.
    ResourceNotGranted,
    /// `policy` is not `"ALLOW"`.
    PolicyDenied,
    /// `mandatoryChecksOk` is not true.
    MandatoryChecksFailed,
    /// The authorization check is older than `maxAuthorizationAgeMs`, or in the future.
    AuthorizationStale,
    /// `requiresApproval` and the operation has no HUMAN approval.
    ApprovalRequired,
    /// The operation already has `maxAttempts` attempts.
    AttemptsExhausted,
    /// `dependsOn` used without the contract feature `graphs`.
    FeatureNotEnabled,
    /// A `dependsOn` operation has no SUCCEEDED attempt.
    DependencyNotMet,
    /// `reserved + settled + amount > budget`.
    BudgetExhausted,
    /// A grant's or an ancestor's `used + amount > limit`.
    GrantLimitExhausted,
    // --- attempts ---
    /// Unknown attempt.
    AttemptNotFound,
    /// `dispatch` of an attempt that is not ADMITTED.
    NotAdmitted,
    /// `release` of a DISPATCHED or UNKNOWN attempt: a dispatched attempt is never refunded.
    AlreadyDispatched,
    /// The attempt is SETTLED or RELEASED.
    AlreadySettled,
    /// `settle` of an UNKNOWN attempt: only a HUMAN `reconcile` resolves it.
    ReconciliationRequired,
    /// `settle` of an ADMITTED attempt (release it, or dispatch it first).
    NotDispatched,
    /// Actual cost above the admitted amount: rejected, and a violation is recorded.
    ExposureExceeded,
    /// `reconcile` of an attempt that is not UNKNOWN.
    NotUnknown,
    /// A sum would exceed 2^128 − 1 (only reachable through reconcile above the amount).
    AmountOverflow,
    // --- approvals and runs ---
    /// `approve` of an operation already approved.
    AlreadyApproved,
    /// `completeRun` while the run has ADMITTED, DISPATCHED or UNKNOWN attempts.
    RunHasOutstanding,
    /// `completeRun` whose criteria are not exactly the contract's.
    CriteriaNotMet,
    // --- the durable store (§6) ---
    /// No mission with that id in the store.
    MissionNotFound,
    /// `create` of a `missionId` already in the store.
    MissionExists,
    /// A request id reused for a different command.
    RequestIdReused,
}

impl Code {
    /// Every code, grouped by command, each group in precedence order.
    pub const ALL: [Code; 48] = [
        Code::Ok,
        Code::ContractInvalid,
        Code::UnsupportedEdition,
        Code::UnsupportedProfile,
        Code::UnsupportedFeature,
        Code::CommandInvalid,
        Code::TimeRegressed,
        Code::ActorNotPermitted,
        Code::RunExists,
        Code::RunNotFound,
        Code::RunNotActive,
        Code::DeadlinePassed,
        Code::GrantExists,
        Code::GrantNotFound,
        Code::GrantRevoked,
        Code::DelegationNotAllowed,
        Code::DelegationDepthExceeded,
        Code::AttenuationViolated,
        Code::GrantExceedsContract,
        Code::AttemptExists,
        Code::SubjectMismatch,
        Code::GrantNotLive,
        Code::ActionNotGranted,
        Code::ResourceNotGranted,
        Code::PolicyDenied,
        Code::MandatoryChecksFailed,
        Code::AuthorizationStale,
        Code::ApprovalRequired,
        Code::AttemptsExhausted,
        Code::FeatureNotEnabled,
        Code::DependencyNotMet,
        Code::BudgetExhausted,
        Code::GrantLimitExhausted,
        Code::AttemptNotFound,
        Code::NotAdmitted,
        Code::AlreadyDispatched,
        Code::AlreadySettled,
        Code::ReconciliationRequired,
        Code::NotDispatched,
        Code::ExposureExceeded,
        Code::NotUnknown,
        Code::AmountOverflow,
        Code::AlreadyApproved,
        Code::RunHasOutstanding,
        Code::CriteriaNotMet,
        Code::MissionNotFound,
        Code::MissionExists,
        Code::RequestIdReused,
    ];

    /// The SCREAMING_SNAKE name (`BUDGET_EXHAUSTED`).
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Ok => "OK",
            Code::ContractInvalid => "CONTRACT_INVALID",
            Code::UnsupportedEdition => "UNSUPPORTED_EDITION",
            Code::UnsupportedProfile => "UNSUPPORTED_PROFILE",
            Code::UnsupportedFeature => "UNSUPPORTED_FEATURE",
            Code::CommandInvalid => "COMMAND_INVALID",
            Code::TimeRegressed => "TIME_REGRESSED",
            Code::ActorNotPermitted => "ACTOR_NOT_PERMITTED",
            Code::RunExists => "RUN_EXISTS",
            Code::RunNotFound => "RUN_NOT_FOUND",
            Code::RunNotActive => "RUN_NOT_ACTIVE",
            Code::DeadlinePassed => "DEADLINE_PASSED",
            Code::GrantExists => "GRANT_EXISTS",
            Code::GrantNotFound => "GRANT_NOT_FOUND",
            Code::GrantRevoked => "GRANT_REVOKED",
            Code::DelegationNotAllowed => "DELEGATION_NOT_ALLOWED",
            Code::DelegationDepthExceeded => "DELEGATION_DEPTH_EXCEEDED",
            Code::AttenuationViolated => "ATTENUATION_VIOLATED",
            Code::GrantExceedsContract => "GRANT_EXCEEDS_CONTRACT",
            Code::AttemptExists => "ATTEMPT_EXISTS",
            Code::SubjectMismatch => "SUBJECT_MISMATCH",
            Code::GrantNotLive => "GRANT_NOT_LIVE",
            Code::ActionNotGranted => "ACTION_NOT_GRANTED",
            Code::ResourceNotGranted => "RESOURCE_NOT_GRANTED",
            Code::PolicyDenied => "POLICY_DENIED",
            Code::MandatoryChecksFailed => "MANDATORY_CHECKS_FAILED",
            Code::AuthorizationStale => "AUTHORIZATION_STALE",
            Code::ApprovalRequired => "APPROVAL_REQUIRED",
            Code::AttemptsExhausted => "ATTEMPTS_EXHAUSTED",
            Code::FeatureNotEnabled => "FEATURE_NOT_ENABLED",
            Code::DependencyNotMet => "DEPENDENCY_NOT_MET",
            Code::BudgetExhausted => "BUDGET_EXHAUSTED",
            Code::GrantLimitExhausted => "GRANT_LIMIT_EXHAUSTED",
            Code::AttemptNotFound => "ATTEMPT_NOT_FOUND",
            Code::NotAdmitted => "NOT_ADMITTED",
            Code::AlreadyDispatched => "ALREADY_DISPATCHED",
            Code::AlreadySettled => "ALREADY_SETTLED",
            Code::ReconciliationRequired => "RECONCILIATION_REQUIRED",
            Code::NotDispatched => "NOT_DISPATCHED",
            Code::ExposureExceeded => "EXPOSURE_EXCEEDED",
            Code::NotUnknown => "NOT_UNKNOWN",
            Code::AmountOverflow => "AMOUNT_OVERFLOW",
            Code::AlreadyApproved => "ALREADY_APPROVED",
            Code::RunHasOutstanding => "RUN_HAS_OUTSTANDING",
            Code::CriteriaNotMet => "CRITERIA_NOT_MET",
            Code::MissionNotFound => "MISSION_NOT_FOUND",
            Code::MissionExists => "MISSION_EXISTS",
            Code::RequestIdReused => "REQUEST_ID_REUSED",
        }
    }

    /// Parse a code name (`BUDGET_EXHAUSTED`).
    pub fn parse(text: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|c| c.as_str() == text)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A refused command: its code, the numbers and ids involved, and a sentence for people.
///
/// JSON shape: `{"code":"BUDGET_EXHAUSTED","budget":"100","reserved":"80","settled":"0",
/// "requested":"30","reason":"…"}` — `details` members flattened in insertion order, amounts as
/// canonical decimal strings. For `EXPOSURE_EXCEEDED` it also carries the `violation` the caller
/// must append ([`super::State::with_violation`]): the one trace a rejection leaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// The code.
    pub code: Code,
    /// Ids and numbers involved (`("budget", "100")`, `("grantId", "g")`), in a fixed order.
    pub details: Vec<(&'static str, String)>,
    /// A sentence for people (names the member for `COMMAND_INVALID` / `CONTRACT_INVALID`).
    pub reason: String,
    /// The control-violation record of `EXPOSURE_EXCEEDED`.
    pub violation: Option<Box<super::state::Violation>>,
}

impl Rejection {
    /// A rejection with `code` and `reason`, no details.
    pub fn new(code: Code, reason: impl Into<String>) -> Rejection {
        Rejection {
            code,
            details: Vec::new(),
            reason: reason.into(),
            violation: None,
        }
    }

    /// Add one detail (`key=value`).
    pub fn with(mut self, key: &'static str, value: impl fmt::Display) -> Rejection {
        self.details.push((key, value.to_string()));
        self
    }

    /// Add an amount detail.
    pub fn amount(self, key: &'static str, value: Amount) -> Rejection {
        self.with(key, value)
    }

    /// The value of detail `key`, if present.
    pub fn detail(&self, key: &str) -> Option<&str> {
        self.details
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_str())
    }

    /// One line for people: `BUDGET_EXHAUSTED budget=100 reserved=80 settled=0 requested=30:
    /// <reason>`.
    pub fn human(&self) -> String {
        let mut s = self.code.as_str().to_string();
        for (k, v) in &self.details {
            s.push(' ');
            s.push_str(k);
            s.push('=');
            s.push_str(v);
        }
        if !self.reason.is_empty() {
            s.push_str(": ");
            s.push_str(&self.reason);
        }
        s
    }

    /// The JSON object (see the type docs).
    pub fn to_json(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        m.insert("code".into(), self.code.as_str().into());
        for (k, v) in &self.details {
            m.insert((*k).to_string(), v.clone().into());
        }
        if let Some(v) = &self.violation {
            m.insert(
                "violation".into(),
                serde_json::to_value(v).unwrap_or_default(),
            );
        }
        m.insert("reason".into(), self.reason.clone().into());
        serde_json::Value::Object(m)
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.human())
    }
}

impl std::error::Error for Rejection {}
