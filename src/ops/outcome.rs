//! The one outcome vocabulary (issue 29 item 2, DEC-UX-3): what happened to an invocation,
//! a client commit or one effect, derived from the records in [`derive`] and nowhere else.
//!
//! | Outcome | Derived from | Exit |
//! |---|---|---|
//! | `ok` | committed; no effect denied or failed; the output is not `ok:false` (a client commit is `ok`) | 0 |
//! | `refused` | committed; no effect denied or failed; the output's top-level `ok` is `false` | 7 |
//! | `denied` | committed; an effect record has `allowed:false` (the broker's decision law) | 8 |
//! | `failed` | committed; an effect record has `failed:true` (its handler failed), none denied | 9 |
//! | `indeterminate` | an intent without an outcome row (an effect, or a commit of nothing that ran) | 5 |
//! | `effects-unrecorded` | effects ran (their records or intents are durable) but no log entry holds the invocation (transitions.md §11) | 5 |
//!
//! `denied` wins over `failed`, and both over `refused`: a transition that saw its write
//! denied and answered `ok:false` is `denied`, because the denial is what happened. The exit
//! code of each outcome is [`crate::cli::error`]'s table (`Exit::from(Outcome)`).

use serde::Serialize;

use crate::store::records::{EffectRecord, InvocationRecord};
use crate::store::{Error, Store};

/// What happened (module docs for the derivation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Committed as asked.
    Ok,
    /// Committed; the transition answered `ok:false`.
    Refused,
    /// Committed; the broker denied an effect.
    Denied,
    /// Committed; an effect's handler failed.
    Failed,
    /// Not known whether it happened: an intent without an outcome.
    Indeterminate,
    /// Effects ran but the invocation did not commit.
    EffectsUnrecorded,
}

impl Outcome {
    /// Every outcome, in the documented order.
    pub const ALL: [Outcome; 6] = [
        Outcome::Ok,
        Outcome::Refused,
        Outcome::Denied,
        Outcome::Failed,
        Outcome::Indeterminate,
        Outcome::EffectsUnrecorded,
    ];

    /// The outcome's name as tables and JSON print it.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Refused => "refused",
            Outcome::Denied => "denied",
            Outcome::Failed => "failed",
            Outcome::Indeterminate => "indeterminate",
            Outcome::EffectsUnrecorded => "effects-unrecorded",
        }
    }

    /// The outcome named `s` (one of [`Outcome::ALL`]'s names).
    pub fn parse(s: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.as_str() == s)
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one effect's records say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EffectState {
    /// Allowed and the handler succeeded.
    Ok,
    /// Denied by the decision law (`allowed:false`).
    Denied,
    /// Allowed and the handler failed (`failed:true`).
    Failed,
    /// An intent without an outcome (no record may exist).
    Indeterminate,
}

impl EffectState {
    /// The state an effect record states.
    pub fn of_record(r: &EffectRecord) -> EffectState {
        if !r.allowed {
            EffectState::Denied
        } else if r.failed {
            EffectState::Failed
        } else {
            EffectState::Ok
        }
    }

    /// The state of a broker status.
    pub fn of_status(s: &crate::broker::Status) -> EffectState {
        match s {
            crate::broker::Status::Ok => EffectState::Ok,
            crate::broker::Status::Denied => EffectState::Denied,
            crate::broker::Status::Failed => EffectState::Failed,
            crate::broker::Status::Indeterminate => EffectState::Indeterminate,
        }
    }
}

/// The records an outcome is derived from.
#[derive(Clone, Copy, Debug)]
pub struct Evidence<'a> {
    /// Whether a log entry holds it: the invocation committed. For one effect: `false` only
    /// when it belongs to a coordinator invocation no log entry holds (its record is named by
    /// no committed invocation record); a standalone effect (an attended publish's) or a
    /// pending intent judged on its own is `true`.
    pub committed: bool,
    /// The output's top-level `ok` (`None`: no output, or no boolean `ok` member).
    pub output_ok: Option<bool>,
    /// The effects' states, in plan order (empty for a pure call or a client commit).
    pub effects: &'a [EffectState],
}

/// THE derivation (module docs): every command's outcome and exit code comes from here.
pub fn derive(e: &Evidence<'_>) -> Outcome {
    let any = |s: EffectState| e.effects.contains(&s);
    if !e.committed {
        return if e.effects.is_empty() {
            Outcome::Indeterminate
        } else {
            Outcome::EffectsUnrecorded
        };
    }
    if any(EffectState::Denied) {
        Outcome::Denied
    } else if any(EffectState::Failed) {
        Outcome::Failed
    } else if any(EffectState::Indeterminate) {
        Outcome::Indeterminate
    } else if e.output_ok == Some(false) {
        Outcome::Refused
    } else {
        Outcome::Ok
    }
}

/// The outcome of one effect record as `world effects` lists it: `invocation` is the committed
/// invocation whose record names it, if any. An effect of the attended publish
/// ([`crate::package::publish::EFFECT`], run outside the coordinator) is never held by an
/// entry; any other record no committed invocation names ran for an invocation that did not
/// commit: `effects-unrecorded`.
pub fn of_effect(r: &EffectRecord, invocation: Option<&str>) -> Outcome {
    derive(&Evidence {
        committed: invocation.is_some() || r.effect == crate::package::publish::EFFECT,
        output_ok: None,
        effects: &[EffectState::of_record(r)],
    })
}

/// The outcome of an effect intent without an outcome row (`world effects --pending`,
/// `world status`): `indeterminate`.
pub fn of_pending_effect() -> Outcome {
    derive(&Evidence {
        committed: true,
        output_ok: None,
        effects: &[EffectState::Indeterminate],
    })
}

/// The top-level `ok` of an output payload (`None` when it is not a JSON object with a
/// boolean `ok`).
pub fn output_ok(payload: &[u8]) -> Option<bool> {
    #[derive(serde::Deserialize)]
    struct Ok {
        ok: Option<bool>,
    }
    serde_json::from_slice::<Ok>(payload)
        .ok()
        .and_then(|o| o.ok)
}

/// The states of the effects an invocation record names, in order (a record that is missing or
/// does not decode counts as [`EffectState::Indeterminate`]).
///
/// # Errors
/// [`Error`] for a failed read.
pub fn effect_states(store: &Store, rec: &InvocationRecord) -> Result<Vec<EffectState>, Error> {
    let mut out = Vec::new();
    for r in rec.effects.iter().flatten() {
        let state = store
            .object(r)?
            .and_then(|o| EffectRecord::decode(&o.payload).ok())
            .map_or(EffectState::Indeterminate, |d| EffectState::of_record(&d));
        out.push(state);
    }
    Ok(out)
}

/// The outcome of the committed entry whose transition ref is `transition_ref` and whose
/// output's `ok` is `ok` (as `world log`'s view holds it): its effect records are read only
/// for an effectful (v2) invocation record. A client commit is [`Outcome::Ok`].
///
/// # Errors
/// [`Error`] for a failed read.
pub fn of_entry(store: &Store, transition_ref: &str, ok: Option<bool>) -> Result<Outcome, Error> {
    let record = store
        .object(transition_ref)?
        .and_then(|o| InvocationRecord::decode(&o.meta.semantic_id, &o.payload).ok());
    let effects = match &record {
        Some(rec) => effect_states(store, rec)?,
        None => Vec::new(),
    };
    Ok(derive(&Evidence {
        committed: true,
        output_ok: ok,
        effects: &effects,
    }))
}

/// The outcome of a `world log` row ([`crate::store::logview::Row`]): a client commit (no
/// invocation record, with or without a `rest:` id) is `ok`; an invocation's is
/// [`of_entry`]'s.
///
/// # Errors
/// [`Error`] for a failed read.
pub fn of_row(store: &Store, row: &crate::store::logview::Row) -> Result<Outcome, Error> {
    if !row.coordinator {
        return Ok(Outcome::Ok);
    }
    of_entry(store, &row.transition_ref, row.ok)
}

#[cfg(test)]
mod tests {
    use super::*;
    use EffectState as S;

    fn d(committed: bool, ok: Option<bool>, effects: &[S]) -> &'static str {
        derive(&Evidence {
            committed,
            output_ok: ok,
            effects,
        })
        .as_str()
    }

    #[test]
    fn the_table_of_the_module_docs() {
        assert_eq!(d(true, Some(true), &[]), "ok");
        assert_eq!(d(true, None, &[S::Ok]), "ok");
        assert_eq!(d(true, None, &[]), "ok");
        assert_eq!(d(true, Some(false), &[]), "refused");
        assert_eq!(d(true, Some(false), &[S::Ok]), "refused");
        assert_eq!(d(true, None, &[S::Ok, S::Denied]), "denied");
        assert_eq!(d(true, Some(false), &[S::Denied]), "denied");
        assert_eq!(d(true, Some(false), &[S::Failed]), "failed");
        assert_eq!(d(true, Some(true), &[S::Failed, S::Denied]), "denied");
        assert_eq!(d(false, None, &[S::Ok]), "effects-unrecorded");
        assert_eq!(
            d(false, None, &[S::Denied, S::Indeterminate]),
            "effects-unrecorded"
        );
        assert_eq!(d(false, None, &[S::Indeterminate]), "effects-unrecorded");
        assert_eq!(d(true, None, &[S::Indeterminate]), "indeterminate");
        assert_eq!(d(false, None, &[]), "indeterminate");
    }

    #[test]
    fn names_round_trip_and_serialize_as_printed() {
        for o in Outcome::ALL {
            assert_eq!(Outcome::parse(o.as_str()), Some(o));
            assert_eq!(serde_json::to_value(o).unwrap(), o.as_str());
        }
        assert_eq!(output_ok(br#"{"ok":false,"refused":"x"}"#), Some(false));
        assert_eq!(output_ok(br#"{"path":"a"}"#), None);
        assert_eq!(output_ok(b"[1]"), None);
    }
}
