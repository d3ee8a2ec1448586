//! The immutable finite-v1 mission contract (missions.md §2).

use serde::Serialize;

use crate::encoding::trcjson::{self, CValue};
use crate::encoding::HashRef;
use crate::ledger::Amount;

use super::codes::{Code, Rejection};
use super::parse::{self, Fields};

/// The only edition accepted.
pub const EDITION: &str = "0.4";
/// The only profile accepted.
pub const PROFILE: &str = "finite-v1";
/// The features a contract may name.
pub const FEATURES: [&str; 2] = ["triggers", "graphs"];

/// A parsed, validated contract. Amounts are canonical decimals; times are milliseconds on the
/// mission's clock. [`Contract::canonical`] holds its TR-CJSON-1 bytes and
/// [`Contract::contract_ref`] their sha256.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Contract {
    /// Contract id (id grammar).
    pub id: String,
    /// Mission id (id grammar), unique in a store.
    pub mission_id: String,
    /// Always `"0.4"`.
    pub aiws_edition: String,
    /// Always `"finite-v1"`.
    pub profile: String,
    /// Mission-wide ceiling: `settled + reserved ≤ budget`.
    pub budget: Amount,
    /// No admission at `now ≥ deadline` (ms).
    pub deadline: Amount,
    /// Completion criteria names (non-empty, unique).
    pub criteria: Vec<String>,
    /// Capabilities any grant may carry (non-empty, unique).
    pub actions: Vec<String>,
    /// Resources any grant may name (non-empty, unique).
    pub resources: Vec<String>,
    /// Every operation needs a HUMAN `approve` before its first admission.
    pub requires_approval: bool,
    /// Attempts per operation.
    pub max_attempts: Amount,
    /// Largest accepted `now − authorizationCheckedAt`, ms.
    pub max_authorization_age_ms: Amount,
    /// Subset of `triggers`, `graphs`.
    pub features: Vec<String>,
    /// The TR-CJSON-1 bytes.
    #[serde(skip)]
    pub canonical: Vec<u8>,
}

impl Contract {
    /// Parse a contract from raw JSON bytes (the seed's `parseContract`).
    ///
    /// # Errors
    /// `CONTRACT_INVALID` naming the missing, unknown, mistyped or out-of-grammar member;
    /// `UNSUPPORTED_EDITION`, `UNSUPPORTED_PROFILE`, `UNSUPPORTED_FEATURE`.
    pub fn parse(raw: &[u8]) -> Result<Contract, Rejection> {
        let v = parse::object(raw, Code::ContractInvalid, "the contract")?;
        Contract::from_value(&v)
    }

    /// Validate an already parsed value.
    ///
    /// # Errors
    /// As [`Contract::parse`].
    pub fn from_value(v: &CValue) -> Result<Contract, Rejection> {
        let mut f = Fields::new(v, "", Code::ContractInvalid)?;
        let id = f.id("id")?;
        let mission_id = f.id("missionId")?;
        let aiws_edition = f.string("aiwsEdition")?.to_string();
        let profile = f.string("profile")?.to_string();
        let budget = f.amount("budget")?;
        let deadline = f.amount("deadline")?;
        let criteria = f.names("criteria", true)?;
        let actions = f.names("actions", true)?;
        let resources = f.names("resources", true)?;
        let requires_approval = f.boolean("requiresApproval")?;
        let max_attempts = f.amount("maxAttempts")?;
        let max_authorization_age_ms = f.amount("maxAuthorizationAgeMs")?;
        let features = f.names("features", false)?;
        f.finish()?;
        if aiws_edition != EDITION {
            return Err(Rejection::new(
                Code::UnsupportedEdition,
                format!(
                    "aiwsEdition {aiws_edition:?} is not supported; this world reads {EDITION:?}"
                ),
            )
            .with("member", "aiwsEdition"));
        }
        if profile != PROFILE {
            return Err(Rejection::new(
                Code::UnsupportedProfile,
                format!("profile {profile:?} is not supported; this world reads {PROFILE:?}"),
            )
            .with("member", "profile"));
        }
        if let Some(bad) = features.iter().find(|x| !FEATURES.contains(&x.as_str())) {
            return Err(Rejection::new(
                Code::UnsupportedFeature,
                format!("feature {bad:?} is not supported (known: triggers, graphs)"),
            )
            .with("member", "features"));
        }
        Ok(Contract {
            id,
            mission_id,
            aiws_edition,
            profile,
            budget,
            deadline,
            criteria,
            actions,
            resources,
            requires_approval,
            max_attempts,
            max_authorization_age_ms,
            features,
            canonical: trcjson::encode(v),
        })
    }

    /// `contractRef`: sha256 of the TR-CJSON-1 bytes.
    pub fn contract_ref(&self) -> HashRef {
        HashRef::of(&self.canonical)
    }

    /// Whether the contract names `feature`.
    pub fn has_feature(&self, feature: &str) -> bool {
        self.features.iter().any(|f| f == feature)
    }
}
