//! Record payloads the store links together: invocation records (v1 pure, v2 effectful) and
//! effect records, with their exact Go-json bytes and strict decoding (transitions.md §10,
//! authority-and-broker.md §7.3).

use serde::{Deserialize, Serialize};

use crate::encoding::gojson::Obj;
use crate::encoding::hashref::HashRefError;
use crate::encoding::HashRef;

/// Why a stored record payload does not decode strictly.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// Not the record's JSON shape (unknown or missing members, wrong types).
    #[error("{0}")]
    Json(#[source] serde_json::Error),
    /// An invocation record whose `plan`/`effects` members do not match its semantic id.
    #[error("record fields do not match {0}")]
    WrongVersion(String),
    /// An invocation record whose bytes are not its canonical encoding.
    #[error("record does not re-encode to its stored bytes")]
    NotCanonical,
    /// An effect record's `requestRef` is not a ref.
    #[error("requestRef: {0}")]
    RequestRef(#[source] HashRefError),
    /// An effect record's `resultRef` is neither `""` nor a ref.
    #[error("resultRef: {0}")]
    ResultRef(#[source] HashRefError),
    /// An effect record whose bytes are not its canonical encoding.
    #[error("effect record does not re-encode to its stored bytes")]
    EffectNotCanonical,
}

/// The rule of the effect-record consistency law a record breaks (authority-and-broker.md
/// §7.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LawViolation {
    /// An allowed record (succeeded or failed) with a denial label.
    #[error("{} record carries a denial", if *failed { "failed" } else { "allowed" })]
    DenialOnAllowed {
        /// Whether the record is the failed arm.
        failed: bool,
    },
    /// An allowed record whose `budgetAfter` is not `budgetBefore − cost`.
    #[error("budgetAfter is not budgetBefore − cost")]
    BudgetArithmetic,
    /// A successful record without a `resultRef`.
    #[error("successful record has no resultRef")]
    NoResult,
    /// A failed or denied record with a `resultRef`.
    #[error("{} record has a resultRef", if *failed { "failed" } else { "denied" })]
    ResultOnUnsuccessful {
        /// Whether the record is the failed arm (else denied).
        failed: bool,
    },
    /// A denied record without a denial label.
    #[error("denied record has no denial label")]
    NoDenialLabel,
    /// A denied record whose budget moved.
    #[error("denied record changed the budget")]
    DeniedChangedBudget,
    /// `allowed=false` with `failed=true`.
    #[error("allowed=false with failed=true is illegal")]
    DeniedAndFailed,
}

/// Callers that collect findings as text take a record error as its message.
impl From<RecordError> for String {
    fn from(e: RecordError) -> String {
        e.to_string()
    }
}

/// Callers that collect findings as text take a law violation as its message.
impl From<LawViolation> for String {
    fn from(e: LawViolation) -> String {
        e.to_string()
    }
}

/// `world/invocation-record/v1`
pub const INVOCATION_RECORD_V1: &str = "world/invocation-record/v1";
/// `world/invocation-record/v2`
pub const INVOCATION_RECORD_V2: &str = "world/invocation-record/v2";
/// `world/effect-record/v1`
pub const EFFECT_RECORD: &str = "world/effect-record/v1";
/// `world/effect-request/v1`
pub const EFFECT_REQUEST: &str = "world/effect-request/v1";
/// `world/effect-result/v1`
pub const EFFECT_RESULT: &str = "world/effect-result/v1";
/// `world/invocation-input/v1`
pub const INVOCATION_INPUT: &str = "world/invocation-input/v1";
/// `world/invocation-output/v1`
pub const INVOCATION_OUTPUT: &str = "world/invocation-output/v1";
/// `world/effect-plan/v1`
pub const EFFECT_PLAN: &str = "world/effect-plan/v1";
/// `world/approval-request/v1` (format: `crate::authority::approvals`).
pub const APPROVAL_REQUEST: &str = "world/approval-request/v1";
/// `world/approval-decision/v1` (format: `crate::authority::approvals`).
pub const APPROVAL_DECISION: &str = "world/approval-decision/v1";

/// An invocation record; `plan`/`effects` present exactly for v2.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InvocationRecord {
    /// `<surface>:<ep>:<task>`
    pub invocation_id: String,
    /// The episode.
    pub episode_id: String,
    /// The descriptor id.
    pub skill_id: String,
    /// Source ref.
    pub transition_fn: String,
    /// Interpreter ref.
    pub interpreter: String,
    /// Epoch.
    pub semantics_epoch: i64,
    /// Input object ref.
    pub input: String,
    /// Output object ref.
    pub output: String,
    /// v2: plan object ref.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    /// v2: effect record refs in order (`[]` when none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effects: Option<Vec<String>>,
}

impl InvocationRecord {
    /// The semantic id this record is stored under.
    pub fn semantic_id(&self) -> &'static str {
        if self.plan.is_some() {
            INVOCATION_RECORD_V2
        } else {
            INVOCATION_RECORD_V1
        }
    }

    /// The exact Go-json bytes (struct order; v2 appends `plan` and `effects`).
    pub fn encode(&self) -> Vec<u8> {
        let obj = Obj::new()
            .str("invocationId", &self.invocation_id)
            .str("episodeId", &self.episode_id)
            .str("skillId", &self.skill_id)
            .str("transitionFn", &self.transition_fn)
            .str("interpreter", &self.interpreter)
            .int("semanticsEpoch", self.semantics_epoch)
            .str("input", &self.input)
            .str("output", &self.output);
        match &self.plan {
            Some(plan) => obj
                .str("plan", plan)
                .strs("effects", Some(self.effects.as_deref().unwrap_or(&[])))
                .finish(),
            None => obj.finish(),
        }
    }

    /// Strictly decode a stored record of either version; it must re-encode byte-identically.
    ///
    /// # Errors
    /// [`RecordError::Json`], [`RecordError::WrongVersion`], [`RecordError::NotCanonical`].
    pub fn decode(semantic_id: &str, bytes: &[u8]) -> Result<Self, RecordError> {
        let r: InvocationRecord = serde_json::from_slice(bytes).map_err(RecordError::Json)?;
        match (semantic_id, r.plan.is_some(), r.effects.is_some()) {
            (INVOCATION_RECORD_V1, false, false) | (INVOCATION_RECORD_V2, true, true) => {}
            _ => return Err(RecordError::WrongVersion(semantic_id.to_string())),
        }
        if r.encode() != bytes {
            return Err(RecordError::NotCanonical);
        }
        Ok(r)
    }
}

/// A `world/effect-record/v1` (authority-and-broker.md §7.3).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EffectRecord {
    /// Effect name.
    pub effect: String,
    /// Scope.
    pub scope: String,
    /// Cost in budget units.
    pub cost: i64,
    /// Remaining budget before.
    pub budget_before: i64,
    /// Remaining budget after.
    pub budget_after: i64,
    /// Whether the broker allowed it.
    pub allowed: bool,
    /// Whether the handler failed.
    pub failed: bool,
    /// Denial label, `""` when allowed.
    pub denial: String,
    /// Request object ref.
    pub request_ref: String,
    /// Result object ref, `""` when none.
    pub result_ref: String,
}

impl EffectRecord {
    /// The exact Go-json bytes.
    pub fn encode(&self) -> Vec<u8> {
        Obj::new()
            .str("effect", &self.effect)
            .str("scope", &self.scope)
            .int("cost", self.cost)
            .int("budgetBefore", self.budget_before)
            .int("budgetAfter", self.budget_after)
            .bool("allowed", self.allowed)
            .bool("failed", self.failed)
            .str("denial", &self.denial)
            .str("requestRef", &self.request_ref)
            .str("resultRef", &self.result_ref)
            .finish()
    }

    /// Strict decode: unknown members refused, `requestRef` must parse, `resultRef` is `""`
    /// or a ref, and the bytes must re-encode identically.
    ///
    /// # Errors
    /// [`RecordError::Json`], [`RecordError::RequestRef`], [`RecordError::ResultRef`],
    /// [`RecordError::EffectNotCanonical`].
    pub fn decode(bytes: &[u8]) -> Result<Self, RecordError> {
        let r: EffectRecord = serde_json::from_slice(bytes).map_err(RecordError::Json)?;
        HashRef::parse(&r.request_ref).map_err(RecordError::RequestRef)?;
        HashRef::parse_optional(&r.result_ref).map_err(RecordError::ResultRef)?;
        if r.encode() != bytes {
            return Err(RecordError::EffectNotCanonical);
        }
        Ok(r)
    }

    /// The consistency law: success, failed and denied arms; `allowed=false, failed=true` is
    /// illegal.
    ///
    /// # Errors
    /// The first [`LawViolation`] found.
    pub fn check_law(&self) -> Result<(), LawViolation> {
        use LawViolation as L;
        let after = self.budget_before.checked_sub(self.cost);
        match (self.allowed, self.failed) {
            (true, failed) => {
                if !self.denial.is_empty() {
                    return Err(L::DenialOnAllowed { failed });
                }
                if Some(self.budget_after) != after {
                    return Err(L::BudgetArithmetic);
                }
                if !failed && self.result_ref.is_empty() {
                    return Err(L::NoResult);
                }
                if failed && !self.result_ref.is_empty() {
                    return Err(L::ResultOnUnsuccessful { failed });
                }
            }
            (false, false) => {
                if self.denial.is_empty() {
                    return Err(L::NoDenialLabel);
                }
                if self.budget_after != self.budget_before {
                    return Err(L::DeniedChangedBudget);
                }
                if !self.result_ref.is_empty() {
                    return Err(L::ResultOnUnsuccessful { failed: false });
                }
            }
            (false, true) => return Err(L::DeniedAndFailed),
        }
        Ok(())
    }
}

/// `world/effect-request/v1` bytes: `<len(effect)>:<effect><len(scope)>:<scope><cost>:<now>:<payload>`
/// (byte lengths in decimal; `now` in Unix seconds; not JSON).
pub fn request_bytes(effect: &str, scope: &str, cost: i64, now: i64, payload: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "{}:{}{}:{}{}:{}:",
        effect.len(),
        effect,
        scope.len(),
        scope,
        cost,
        now
    )
    .into_bytes();
    out.extend_from_slice(payload);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_example_record_v1() {
        let r = InvocationRecord {
            invocation_id: "a2a:ep1:t1".into(),
            episode_id: "ep1".into(),
            skill_id: "tools.echo".into(),
            transition_fn: HashRef::of(b"fn").to_string(),
            interpreter: HashRef::of(b"interp").to_string(),
            semantics_epoch: 1,
            input: HashRef::of(br#"{"a":1}"#).to_string(),
            output: HashRef::of(br#"{"ok":true}"#).to_string(),
            plan: None,
            effects: None,
        };
        assert_eq!(
            r.input,
            "sha256:015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862"
        );
        assert_eq!(
            r.output,
            "sha256:4062edaf750fb8074e7e83e0c9028c94e32468a8b6f1614774328ef045150f93"
        );
        let bytes = r.encode();
        assert_eq!(
            HashRef::of(&bytes).to_string(),
            "sha256:ed2d235feb247d02d32baa53565786e4728b1c8eb517c1e493bc1c7375921237"
        );
        assert_eq!(
            InvocationRecord::decode(INVOCATION_RECORD_V1, &bytes).unwrap(),
            r
        );
        assert!(InvocationRecord::decode(INVOCATION_RECORD_V2, &bytes).is_err());
    }

    #[test]
    fn effect_record_law() {
        let ok = EffectRecord {
            effect: "Workspace.Read".into(),
            scope: "worktree".into(),
            cost: 1,
            budget_before: 2,
            budget_after: 1,
            allowed: true,
            failed: false,
            denial: String::new(),
            request_ref: HashRef::of(b"r").to_string(),
            result_ref: HashRef::of(b"o").to_string(),
        };
        assert!(ok.check_law().is_ok());
        assert_eq!(EffectRecord::decode(&ok.encode()).unwrap(), ok);
        let denied = EffectRecord {
            allowed: false,
            budget_after: 2,
            denial: "denied:budget".into(),
            result_ref: String::new(),
            ..ok.clone()
        };
        assert!(denied.check_law().is_ok());
        let illegal = EffectRecord {
            allowed: false,
            failed: true,
            ..denied.clone()
        };
        assert!(illegal.check_law().is_err());
        let spent_on_denial = EffectRecord {
            budget_after: 1,
            ..denied
        };
        assert!(spent_on_denial.check_law().is_err());
    }

    /// Each broken rule is named with the text verify, why, replay and `effects show` print.
    #[test]
    fn law_violations_and_decode_errors_keep_their_texts() {
        let ok = EffectRecord {
            effect: "FS.Read".into(),
            scope: "s".into(),
            cost: 1,
            budget_before: 2,
            budget_after: 1,
            allowed: true,
            failed: false,
            denial: String::new(),
            request_ref: HashRef::of(b"r").to_string(),
            result_ref: HashRef::of(b"o").to_string(),
        };
        let failed = EffectRecord {
            failed: true,
            result_ref: String::new(),
            ..ok.clone()
        };
        let denied = EffectRecord {
            allowed: false,
            budget_after: 2,
            denial: "denied:budget".into(),
            result_ref: String::new(),
            ..ok.clone()
        };
        let text = |r: EffectRecord| r.check_law().map_err(String::from).unwrap_err();
        let cases = [
            (
                EffectRecord {
                    denial: "x".into(),
                    ..ok.clone()
                },
                "allowed record carries a denial",
            ),
            (
                EffectRecord {
                    budget_after: 0,
                    ..ok.clone()
                },
                "budgetAfter is not budgetBefore − cost",
            ),
            (
                EffectRecord {
                    result_ref: String::new(),
                    ..ok.clone()
                },
                "successful record has no resultRef",
            ),
            (
                EffectRecord {
                    denial: "x".into(),
                    ..failed.clone()
                },
                "failed record carries a denial",
            ),
            (
                EffectRecord {
                    budget_after: 2,
                    ..failed.clone()
                },
                "budgetAfter is not budgetBefore − cost",
            ),
            (
                EffectRecord {
                    result_ref: ok.result_ref.clone(),
                    ..failed
                },
                "failed record has a resultRef",
            ),
            (
                EffectRecord {
                    denial: String::new(),
                    ..denied.clone()
                },
                "denied record has no denial label",
            ),
            (
                EffectRecord {
                    budget_after: 1,
                    ..denied.clone()
                },
                "denied record changed the budget",
            ),
            (
                EffectRecord {
                    result_ref: ok.result_ref.clone(),
                    ..denied.clone()
                },
                "denied record has a resultRef",
            ),
            (
                EffectRecord {
                    failed: true,
                    ..denied
                },
                "allowed=false with failed=true is illegal",
            ),
        ];
        for (r, want) in cases {
            assert_eq!(text(r), want);
        }
        let mut bytes = ok.encode();
        bytes.push(b' ');
        assert_eq!(
            EffectRecord::decode(&bytes).unwrap_err().to_string(),
            "effect record does not re-encode to its stored bytes"
        );
        let bad_ref = EffectRecord {
            request_ref: "nope".into(),
            ..ok
        };
        assert!(EffectRecord::decode(&bad_ref.encode())
            .unwrap_err()
            .to_string()
            .starts_with("requestRef: "));
        assert_eq!(
            InvocationRecord::decode(INVOCATION_RECORD_V2, b"{}")
                .unwrap_err()
                .to_string(),
            serde_json::from_slice::<InvocationRecord>(b"{}")
                .unwrap_err()
                .to_string()
        );
    }
}
