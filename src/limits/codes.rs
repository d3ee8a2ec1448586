//! The flat, precedence-ordered result codes (limits.md §6) and the result body every command
//! returns (`{code, revision, scopeId?, limit?, attemptId?, bound?, used?, requested?}`, §5).

use super::config::LimitKind;
use crate::ledger::amount::Amount;
use serde::Serialize;
use std::fmt;

/// One result code of limits.md §6. The declaration order **is** the precedence: when several
/// codes apply, the ledger returns the first. `ok` and `exists` are successes (exit 0); every
/// other code is a rejection (exit 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Code {
    /// Applied.
    Ok,
    /// Undecodable, unknown type or key, missing field.
    MalformedCommand,
    /// An amount is not a canonical unsigned decimal.
    AmountInvalid,
    /// An amount is above 2^128 − 1.
    OverflowsAmount,
    /// No config yet (every command but `init`).
    LedgerNotInitialized,
    /// `init` on a ledger that already has a config.
    LedgerAlreadyInitialized,
    /// The config fails §3 validation.
    ConfigInvalid,
    /// Actor facts missing or `allowed = false`.
    ActorUnauthenticated,
    /// The actor kind may not issue this command (§5).
    ActorKindNotPermitted,
    /// `adjust` / `reconcile` without an `evidenceRef`.
    EvidenceRequired,
    /// The evidence does not resolve (or does not re-hash).
    EvidenceUnverified,
    /// Same `requestId`, identical command: the original result, nothing changed.
    Exists,
    /// `requestId` reused for a different command.
    ExistsWithDifferentCommand,
    /// `expectedRevision` differs from the current revision.
    RevisionMismatch,
    /// Unknown scope.
    ScopeNotFound,
    /// Unknown attempt.
    AttemptNotFound,
    /// `attemptId` already used.
    AttemptIdExists,
    /// `dispatch` of an attempt that is not RESERVED.
    AttemptNotReserved,
    /// `settle` of a RESERVED attempt (release it instead).
    AttemptNotDispatched,
    /// `release` of a DISPATCHED or UNKNOWN attempt: dispatched attempts are never refunded.
    AttemptDispatched,
    /// The attempt is SETTLED.
    AttemptAlreadySettled,
    /// The attempt is RELEASED.
    AttemptAlreadyReleased,
    /// An UNKNOWN attempt can only be settled by a human `reconcile`.
    AttemptUnknownRequiresReconciliation,
    /// The scope or an ancestor is stopped.
    ScopeStopped,
    /// A `dependsOn` gate is blocked.
    DependencyBlocked,
    /// The elapsed-time bound is reached.
    ElapsedMsExhausted,
    /// The attempt bound is reached.
    AttemptsExhausted,
    /// ORDINARY work would consume the protected handoff partition.
    HandoffProtected,
    /// The handoff partition is too small for a HANDOFF reservation.
    HandoffExhausted,
    /// The cost bound would be exceeded.
    CostExhausted,
    /// The active-time bound would be exceeded.
    ActiveMsExhausted,
    /// Settlement claims an actual cost above the admitted amount (a control violation).
    ExposureExceeded,
    /// A usage sum would exceed 2^128 − 1.
    OverflowsUsage,
    /// `now` is earlier than the ledger's last recorded time.
    TimeRegressed,
    /// `reconcile` of an attempt that is neither UNKNOWN nor an unresolved DISPATCHED one.
    AttemptNotReconcilable,
    /// The attempt is paired to a World effect (§9); only the broker or a human settles it.
    AttemptPairedToEffect,
}

impl Code {
    /// Every code in precedence order (limits.md §6, rows 1–36).
    pub const ALL: [Code; 36] = [
        Code::Ok,
        Code::MalformedCommand,
        Code::AmountInvalid,
        Code::OverflowsAmount,
        Code::LedgerNotInitialized,
        Code::LedgerAlreadyInitialized,
        Code::ConfigInvalid,
        Code::ActorUnauthenticated,
        Code::ActorKindNotPermitted,
        Code::EvidenceRequired,
        Code::EvidenceUnverified,
        Code::Exists,
        Code::ExistsWithDifferentCommand,
        Code::RevisionMismatch,
        Code::ScopeNotFound,
        Code::AttemptNotFound,
        Code::AttemptIdExists,
        Code::AttemptNotReserved,
        Code::AttemptNotDispatched,
        Code::AttemptDispatched,
        Code::AttemptAlreadySettled,
        Code::AttemptAlreadyReleased,
        Code::AttemptUnknownRequiresReconciliation,
        Code::ScopeStopped,
        Code::DependencyBlocked,
        Code::ElapsedMsExhausted,
        Code::AttemptsExhausted,
        Code::HandoffProtected,
        Code::HandoffExhausted,
        Code::CostExhausted,
        Code::ActiveMsExhausted,
        Code::ExposureExceeded,
        Code::OverflowsUsage,
        Code::TimeRegressed,
        Code::AttemptNotReconcilable,
        Code::AttemptPairedToEffect,
    ];

    /// The snake_case name (`cost_exhausted`).
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Ok => "ok",
            Code::MalformedCommand => "malformed_command",
            Code::AmountInvalid => "amount_invalid",
            Code::OverflowsAmount => "overflows_amount",
            Code::LedgerNotInitialized => "ledger_not_initialized",
            Code::LedgerAlreadyInitialized => "ledger_already_initialized",
            Code::ConfigInvalid => "config_invalid",
            Code::ActorUnauthenticated => "actor_unauthenticated",
            Code::ActorKindNotPermitted => "actor_kind_not_permitted",
            Code::EvidenceRequired => "evidence_required",
            Code::EvidenceUnverified => "evidence_unverified",
            Code::Exists => "exists",
            Code::ExistsWithDifferentCommand => "exists_with_different_command",
            Code::RevisionMismatch => "revision_mismatch",
            Code::ScopeNotFound => "scope_not_found",
            Code::AttemptNotFound => "attempt_not_found",
            Code::AttemptIdExists => "attempt_id_exists",
            Code::AttemptNotReserved => "attempt_not_reserved",
            Code::AttemptNotDispatched => "attempt_not_dispatched",
            Code::AttemptDispatched => "attempt_dispatched",
            Code::AttemptAlreadySettled => "attempt_already_settled",
            Code::AttemptAlreadyReleased => "attempt_already_released",
            Code::AttemptUnknownRequiresReconciliation => "attempt_unknown_requires_reconciliation",
            Code::ScopeStopped => "scope_stopped",
            Code::DependencyBlocked => "dependency_blocked",
            Code::ElapsedMsExhausted => "elapsed_ms_exhausted",
            Code::AttemptsExhausted => "attempts_exhausted",
            Code::HandoffProtected => "handoff_protected",
            Code::HandoffExhausted => "handoff_exhausted",
            Code::CostExhausted => "cost_exhausted",
            Code::ActiveMsExhausted => "active_ms_exhausted",
            Code::ExposureExceeded => "exposure_exceeded",
            Code::OverflowsUsage => "overflows_usage",
            Code::TimeRegressed => "time_regressed",
            Code::AttemptNotReconcilable => "attempt_not_reconcilable",
            Code::AttemptPairedToEffect => "attempt_paired_to_effect",
        }
    }

    /// 1-based row number in limits.md §6 (1 = `ok`; lower wins).
    pub fn precedence(self) -> usize {
        Code::ALL
            .iter()
            .position(|c| *c == self)
            .map_or(0, |i| i + 1)
    }

    /// `true` for `ok` and `exists` (exit 0); every other code is a rejection (exit 4).
    pub fn is_success(self) -> bool {
        matches!(self, Code::Ok | Code::Exists)
    }

    /// The seed's (AIWS finite-v1) code this one maps to, if any: `BUDGET_EXHAUSTED` for the
    /// handoff/cost admission failures, `EXPOSURE_EXCEEDED` for an over-admitted settlement.
    pub fn seed_code(self) -> Option<&'static str> {
        match self {
            Code::HandoffProtected | Code::HandoffExhausted | Code::CostExhausted => {
                Some("BUDGET_EXHAUSTED")
            }
            Code::ExposureExceeded => Some("EXPOSURE_EXCEEDED"),
            _ => None,
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The result of one command: success (`ok`, `exists`) or a rejection, ready for `--json`.
///
/// JSON shape (limits.md §5): `{"code","revision","scopeId"?,"limit"?,"attemptId"?,"bound"?,
/// "used"?,"requested"?}`; `revision` is the ledger revision as a decimal string (after the
/// command for `ok`, the original one for `exists`, the unchanged current one for a rejection).
/// `reason` is for people only (config and malformed-command details) and is not serialised.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    /// The result code.
    pub code: Code,
    /// The ledger revision (decimal string).
    pub revision: Amount,
    /// The scope the result is about (the failing scope for a limit rejection).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub scope_id: Option<String>,
    /// The limit kind that failed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub limit: Option<LimitKind>,
    /// The attempt the result is about.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub attempt_id: Option<String>,
    /// The effective bound that failed (for `handoff_protected`: cost − handoff).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub bound: Option<Amount>,
    /// The usage counted against `bound` before this command.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub used: Option<Amount>,
    /// What the command asked for (amount, maxActiveMs, 1 attempt, claimed actual cost).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub requested: Option<Amount>,
    /// Human-readable detail (not part of the JSON contract).
    #[serde(skip)]
    pub reason: Option<String>,
    /// For `time_regressed`: the ledger's last recorded time, Unix ms (not part of the §5
    /// JSON; the CLI turns it into a hint naming a `--now` that would be accepted).
    #[serde(skip)]
    pub last_now_ms: Option<Amount>,
}

impl<'de> serde::Deserialize<'de> for Code {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Code::ALL
            .iter()
            .copied()
            .find(|c| c.as_str() == text)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown result code {text:?}")))
    }
}

impl Verdict {
    /// A bare verdict with only a code and a revision.
    pub fn new(code: Code, revision: u128) -> Verdict {
        Verdict {
            code,
            revision: Amount(revision),
            scope_id: None,
            limit: None,
            attempt_id: None,
            bound: None,
            used: None,
            requested: None,
            reason: None,
            last_now_ms: None,
        }
    }

    /// Set `scopeId`.
    pub fn scope(mut self, scope_id: &str) -> Verdict {
        self.scope_id = Some(scope_id.to_string());
        self
    }

    /// Set `attemptId`.
    pub fn attempt(mut self, attempt_id: &str) -> Verdict {
        self.attempt_id = Some(attempt_id.to_string());
        self
    }

    /// Set `limit`, `bound`, `used` and `requested`.
    pub fn limit(
        mut self,
        limit: LimitKind,
        bound: Amount,
        used: Amount,
        requested: Amount,
    ) -> Verdict {
        self.limit = Some(limit);
        self.bound = Some(bound);
        self.used = Some(used);
        self.requested = Some(requested);
        self
    }

    /// Set the human-readable reason.
    pub fn because(mut self, reason: impl Into<String>) -> Verdict {
        self.reason = Some(reason.into());
        self
    }

    /// The one-line human form: `ok revision=N` or `<code> scope=<id> limit=<kind> …`.
    pub fn human(&self) -> String {
        let mut line = if self.code.is_success() {
            format!("{} revision={}", self.code, self.revision)
        } else {
            self.code.to_string()
        };
        if let Some(s) = &self.scope_id {
            line.push_str(&format!(" scope={s}"));
        }
        if let Some(l) = self.limit {
            line.push_str(&format!(" limit={}", l.as_str()));
        }
        if let Some(a) = &self.attempt_id {
            line.push_str(&format!(" attempt={a}"));
        }
        if let Some(b) = self.bound {
            line.push_str(&format!(" bound={b}"));
        }
        if let Some(u) = self.used {
            line.push_str(&format!(" used={u}"));
        }
        if let Some(r) = self.requested {
            line.push_str(&format!(" requested={r}"));
        }
        if let Some(reason) = &self.reason {
            line.push_str(&format!(": {reason}"));
        }
        line
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.human())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_follows_the_spec_rows() {
        assert_eq!(Code::Ok.precedence(), 1);
        assert_eq!(Code::MalformedCommand.precedence(), 2);
        assert_eq!(Code::Exists.precedence(), 12);
        assert_eq!(Code::HandoffProtected.precedence(), 28);
        assert_eq!(Code::CostExhausted.precedence(), 30);
        assert_eq!(Code::ExposureExceeded.precedence(), 32);
        assert_eq!(Code::AttemptPairedToEffect.precedence(), 36);
        for pair in Code::ALL.windows(2) {
            assert!(pair[0] < pair[1], "ALL must be sorted by declaration order");
        }
    }

    #[test]
    fn names_are_snake_case_and_round_trip_through_json() {
        for code in Code::ALL {
            let json = serde_json::to_string(&code).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", code.as_str()));
            let back: Code = serde_json::from_str(&json).unwrap_or(Code::Ok);
            assert_eq!(back, code);
        }
    }

    #[test]
    fn seed_codes_map_budget_and_exposure() {
        assert_eq!(Code::HandoffProtected.seed_code(), Some("BUDGET_EXHAUSTED"));
        assert_eq!(Code::HandoffExhausted.seed_code(), Some("BUDGET_EXHAUSTED"));
        assert_eq!(Code::CostExhausted.seed_code(), Some("BUDGET_EXHAUSTED"));
        assert_eq!(
            Code::ExposureExceeded.seed_code(),
            Some("EXPOSURE_EXCEEDED")
        );
        assert_eq!(Code::ActiveMsExhausted.seed_code(), None);
    }

    #[test]
    fn verdict_json_has_only_the_spec_fields() {
        let v = Verdict::new(Code::CostExhausted, 3)
            .scope("wo")
            .limit(LimitKind::Cost, Amount(100), Amount(90), Amount(11))
            .because("detail");
        let json = serde_json::to_string(&v).unwrap_or_default();
        assert_eq!(
            json,
            r#"{"code":"cost_exhausted","revision":"3","scopeId":"wo","limit":"cost","bound":"100","used":"90","requested":"11"}"#
        );
        assert_eq!(
            serde_json::to_string(&Verdict::new(Code::Ok, 1)).unwrap_or_default(),
            r#"{"code":"ok","revision":"1"}"#
        );
        assert_eq!(
            v.human(),
            "cost_exhausted scope=wo limit=cost bound=100 used=90 requested=11: detail"
        );
    }
}
