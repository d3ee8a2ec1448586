//! What the two pairing clients ([`crate::limits::pairing`], [`crate::mission::pairing`])
//! share about a standalone ledger paired with a store (issue 27 §2, DEC-PAIRING2-1): the
//! store's id and the release-failed flag ([`StoreLink`]), and what reconciling one attempt
//! from the store's journal did ([`Reconciled`]).

use std::cell::Cell;

/// The store side of one invocation's pairing with a standalone ledger: which store the
/// attempts name, and whether a release after a refusal failed (then the ledger holds an
/// attempt naming the store's id, which must persist for `reconcile --from-store`).
#[derive(Debug)]
pub struct StoreLink {
    /// The store's id in shared ledgers (`store-` + 16 hex, `store::markers::store_id`).
    pub store_id: String,
    release_failed: Cell<bool>,
}

impl StoreLink {
    /// A link for store `store_id`, no release failed yet.
    pub fn new(store_id: String) -> StoreLink {
        StoreLink {
            store_id,
            release_failed: Cell::new(false),
        }
    }

    /// Record that a release failed: an attempt held in the ledger names this store.
    pub fn set_release_failed(&self) {
        self.release_failed.set(true);
    }

    /// Whether a release of this invocation's attempt failed.
    pub fn release_failed(&self) -> bool {
        self.release_failed.get()
    }
}

/// What the attempt was made for, as `reconcile --from-store` names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReconciledOf {
    /// A limits attempt: the invocation it belongs to (`cli:<ep>:<task>`; JSON `invocation`).
    Invocation(String),
    /// A mission attempt: the effect intent it was admitted for (`effect:<ep>:<n>`; JSON
    /// `intentId`).
    Intent(String),
}

impl ReconciledOf {
    /// The invocation or intent id.
    pub fn as_str(&self) -> &str {
        match self {
            ReconciledOf::Invocation(s) | ReconciledOf::Intent(s) => s,
        }
    }
}

/// What reconciling one outstanding attempt from the store's journal did.
///
/// JSON (one object per line of `reconcile --from-store --json`): limits `{"attemptId",
/// "invocation", "action", "state", "why"}`, missions `{"attemptId", "intentId", "action",
/// "status", "why"}` — the shapes each command printed before the two shared this type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reconciled {
    /// The attempt.
    pub attempt_id: String,
    /// The invocation (limits) or effect intent (mission) it was made for.
    pub of: ReconciledOf,
    /// `released`, `settled`, `kept` (limits: awaits an attended reconcile), `unknown`
    /// (mission: settled UNKNOWN now, awaits an attended reconcile) or `held` (mission:
    /// already awaiting one).
    pub action: &'static str,
    /// The attempt's state (limits) or status (mission) now.
    pub state: String,
    /// Why, in words (and the journal evidence used).
    pub why: String,
}

impl Reconciled {
    /// Whether the attempt still awaits a person (`kept`, `unknown` or `held`).
    pub fn awaits_a_person(&self) -> bool {
        matches!(self.action, "kept" | "unknown" | "held")
    }
}

/// The text line of `reconcile --from-store`: `<action> <attempt> <state> (<invocation or
/// intent>): <why>`.
impl std::fmt::Display for Reconciled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} {} ({}): {}",
            self.action,
            self.attempt_id,
            self.state,
            self.of.as_str(),
            self.why
        )
    }
}

impl serde::Serialize for Reconciled {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut m = s.serialize_struct("Reconciled", 5)?;
        m.serialize_field("attemptId", &self.attempt_id)?;
        match &self.of {
            ReconciledOf::Invocation(i) => m.serialize_field("invocation", i)?,
            ReconciledOf::Intent(i) => m.serialize_field("intentId", i)?,
        }
        m.serialize_field("action", self.action)?;
        match &self.of {
            ReconciledOf::Invocation(_) => m.serialize_field("state", &self.state)?,
            ReconciledOf::Intent(_) => m.serialize_field("status", &self.state)?,
        }
        m.serialize_field("why", &self.why)?;
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_keeps_its_json_shape() {
        let r = |of| Reconciled {
            attempt_id: "a".into(),
            of,
            action: "released",
            state: "RELEASED".into(),
            why: "w".into(),
        };
        assert_eq!(
            serde_json::to_string(&r(ReconciledOf::Invocation("cli:ep:t".into()))).unwrap(),
            r#"{"attemptId":"a","invocation":"cli:ep:t","action":"released","state":"RELEASED","why":"w"}"#
        );
        assert_eq!(
            serde_json::to_string(&r(ReconciledOf::Intent("effect:ep:0".into()))).unwrap(),
            r#"{"attemptId":"a","intentId":"effect:ep:0","action":"released","status":"RELEASED","why":"w"}"#
        );
        assert_eq!(
            r(ReconciledOf::Intent("effect:ep:0".into())).to_string(),
            "released a RELEASED (effect:ep:0): w"
        );
        assert!(!r(ReconciledOf::Intent(String::new())).awaits_a_person());
    }
}
