//! Replay's effect steps (transitions.md §12 steps 6–7): each effect record and its request
//! loaded and checked against the re-run plan, the grants rebuilt from the records, and the
//! replay broker session that decides every request again and reads each result back from its
//! record (never a handler); plus the episode-wide journal reads those steps need.

use std::collections::HashMap;

use rusqlite::Connection;

use super::engine::{Engine, Stop};
use super::{div, Stage};
use crate::authority::grants::{decide, Grant};
use crate::encoding::trcjson::{self, Bounds, CValue};
use crate::encoding::HashRef;
use crate::plan::{PhaseResult, PlannedEffect, Triple, WorldEffect};
use crate::store::journal::{self, Kind};
use crate::store::records::{request_bytes, EffectRecord, InvocationRecord, EFFECT_RECORD};
use crate::store::Error as StoreError;

/// An episode's effect intents by the request ref they carry (one scan of its journal range).
pub(super) fn episode_intents(
    conn: &Connection,
    episode: &str,
) -> Result<HashMap<String, Vec<IntentInfo>>, StoreError> {
    let rows = journal::episode_effect_rows(conn, episode, Kind::Intent)?;
    let mut map: HashMap<String, Vec<IntentInfo>> = HashMap::new();
    for (id, payload) in rows {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(&payload) else {
            continue;
        };
        let (Some(req), Some(t)) = (
            v.get("requestRef").and_then(|x| x.as_str()),
            v.get("logicalTime").and_then(|x| x.as_i64()),
        ) else {
            continue;
        };
        map.entry(req.to_string()).or_default().push(IntentInfo {
            id,
            logical_time: t,
        });
    }
    Ok(map)
}

/// recordRef → `(the effect intent id whose outcome names it, that outcome's status)`.
pub(super) type OwnerMap = HashMap<String, (String, String)>;

/// The [`OwnerMap`] of one episode's effect outcomes.
pub(super) fn outcome_owners(conn: &Connection, episode: &str) -> Result<OwnerMap, StoreError> {
    let rows = journal::episode_effect_rows(conn, episode, Kind::Outcome)?;
    let mut map = HashMap::new();
    for (id, payload) in rows {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(&payload) else {
            continue;
        };
        if let Some(r) = v.get("recordRef").and_then(|x| x.as_str()) {
            let status = v.get("status").and_then(|x| x.as_str()).unwrap_or_default();
            map.insert(r.to_string(), (id, status.to_string()));
        }
    }
    Ok(map)
}

/// One effect intent of an episode: its id and logical time.
#[derive(Clone, Debug)]
pub(super) struct IntentInfo {
    /// The intent's journal id.
    pub(super) id: String,
    /// The logical time it was journalled at.
    pub(super) logical_time: i64,
}

/// The `now` encoded in `world/effect-request/v1` bytes
/// (`<len>:<effect><len>:<scope><cost>:<now>:<payload>`).
pub fn request_time(bytes: &[u8]) -> Option<i64> {
    pub(super) fn field(b: &[u8]) -> Option<&[u8]> {
        let colon = b.iter().position(|&c| c == b':')?;
        let n: usize = std::str::from_utf8(b.get(..colon)?).ok()?.parse().ok()?;
        b.get(colon + 1 + n..)
    }
    let rest = field(field(bytes)?)?;
    let mut parts = rest.splitn(3, |&c| c == b':');
    let _cost = parts.next()?;
    let now = parts.next()?;
    parts.next()?;
    std::str::from_utf8(now).ok()?.parse().ok()
}

/// The `status` a phase result and a world effect carry for an effect record: `denied`,
/// `failed` or `ok`.
pub(super) fn status_of(r: &EffectRecord) -> &'static str {
    if !r.allowed {
        "denied"
    } else if r.failed {
        "failed"
    } else {
        "ok"
    }
}

impl Engine<'_> {
    pub(super) fn intents_for(
        &mut self,
        episode: &str,
    ) -> Result<&HashMap<String, Vec<IntentInfo>>, Stop> {
        if !self.effect_intents.contains_key(episode) {
            let map = match self.pre.intents.take() {
                Some((ep, map)) if ep == episode => map,
                _ => episode_intents(self.conn, episode)?,
            };
            self.effect_intents.insert(episode.to_string(), map);
        }
        self.effect_intents
            .get(episode)
            .ok_or_else(|| Stop::Diverged(div(Stage::Effects, "intent cache lost an episode")))
    }

    /// The intent id whose outcome names `record_ref`, from one scan of the episode's
    /// effect outcomes (cached).
    pub(super) fn outcome_owner(
        &mut self,
        episode: &str,
        record_ref: &str,
    ) -> Result<Option<(String, String)>, Stop> {
        if !self.outcome_owners.contains_key(episode) {
            let map = match self.pre.owners.take() {
                Some((ep, map)) if ep == episode => map,
                _ => outcome_owners(self.conn, episode)?,
            };
            self.outcome_owners.insert(episode.to_string(), map);
        }
        Ok(self
            .outcome_owners
            .get(episode)
            .and_then(|m| m.get(record_ref))
            .cloned())
    }

    /// The recorded outcome of an effect intent: `(status, recordRef)`.
    pub(super) fn effect_outcome(
        &mut self,
        intent_id: &str,
    ) -> Result<Option<(String, String)>, Stop> {
        let Some(r) = journal::row(self.conn, intent_id, Kind::Outcome)? else {
            return Ok(None);
        };
        let Some(obj) = self.object(&r)? else {
            return Ok(None);
        };
        let v: serde_json::Value = serde_json::from_slice(&obj.payload).map_err(|e| {
            div(
                Stage::Effects,
                format!("effect outcome of {intent_id} is not JSON: {e}"),
            )
        })?;
        let text = |k: &str| {
            v.get(k)
                .and_then(|x| x.as_str())
                .unwrap_or_default()
                .to_string()
        };
        Ok(Some((text("status"), text("recordRef"))))
    }

    /// Steps 6–7 for planned `effects` against the records `record_refs`: load and check
    /// every effect record and its request, rebuild the grants, and walk the replay broker
    /// (never a handler), reading each result back from the record.
    pub(super) fn walk_effects(
        &mut self,
        rec: &InvocationRecord,
        effects: &[PlannedEffect],
        record_refs: &[String],
    ) -> Result<Walked, Stop> {
        if effects.len() != record_refs.len() {
            return Err(div(
                Stage::Effects,
                format!(
                    "the plan requests {} effect(s) but the record holds {}",
                    effects.len(),
                    record_refs.len()
                ),
            )
            .into());
        }
        // Load every effect record and its request; find each request's logical time.
        let mut walked: Vec<(EffectRecord, i64)> = Vec::with_capacity(effects.len());
        for (pe, rref) in effects.iter().zip(record_refs) {
            let (er, now) = self.effect_step(rec, pe, rref)?;
            self.effect_intent(rec, rref, &er)?;
            walked.push((er, now));
        }
        // 6. One grant per distinct (effect, scope), reproducing the recorded decisions.
        let mut grants = replay_grants(&walked);
        self.broker_session(effects, record_refs, &walked, &mut grants)
    }

    /// Step 6 for one planned effect `pe` and its record `rref`: the record loaded, decoded
    /// and checked (consistency law, planned triple), its request loaded, and the request's
    /// logical time (its first intent's, else the time the request bytes carry); the request
    /// must be the bytes re-derived from the plan at that time.
    fn effect_step(
        &mut self,
        rec: &InvocationRecord,
        pe: &PlannedEffect,
        rref: &String,
    ) -> Result<(EffectRecord, i64), Stop> {
        let obj = self.load(rref, "effect record", Stage::Effects)?;
        if obj.meta.semantic_id != EFFECT_RECORD {
            return Err(div(
                Stage::Effects,
                format!("{rref} is a {}, not an effect record", obj.meta.semantic_id),
            )
            .into());
        }
        let decoded = match self.pre.effect_records.remove(rref.as_str()) {
            Some(er) => Ok(er),
            None => EffectRecord::decode(&obj.payload),
        };
        let er = decoded.map_err(|err| {
            div(
                Stage::Effects,
                format!("effect record {rref} is malformed: {err}"),
            )
        })?;
        er.check_law().map_err(|err| {
            div(
                Stage::Effects,
                format!("ReplayGapError: effect record {rref} breaks the consistency law: {err}"),
            )
        })?;
        if (pe.effect.as_str(), pe.scope.as_str(), pe.cost)
            != (er.effect.as_str(), er.scope.as_str(), er.cost)
        {
            return Err(div(
                Stage::Effects,
                format!(
                    "effect {} was planned as ({}, {}, {}) but record {rref} is ({}, {}, {})",
                    pe.id, pe.effect, pe.scope, pe.cost, er.effect, er.scope, er.cost
                ),
            )
            .into());
        }
        let request = self.load(&er.request_ref, "effect request", Stage::Effects)?;
        let first_time = self
            .intents_for(&rec.episode_id)?
            .get(&er.request_ref)
            .and_then(|v| v.first())
            .map(|i| i.logical_time);
        let now = match first_time {
            None => request_time(&request.payload).ok_or_else(|| {
                div(
                    Stage::Effects,
                    format!(
                        "request {} has no effect intent and no readable logical time",
                        er.request_ref
                    ),
                )
            })?,
            Some(t) => t,
        };
        let derived = request_bytes(&pe.effect, &pe.scope, pe.cost, now, &pe.payload);
        // `request` was hash-checked against er.request_ref by `load`, so the derived
        // bytes hash to that ref exactly when they equal its bytes.
        if derived != request.payload {
            let derived_ref = HashRef::of(&derived).to_string();
            return Err(div(
                Stage::Effects,
                format!(
                    "the re-derived request of effect {} differs from record {rref}'s request",
                    pe.id
                ),
            )
            .refs(&er.request_ref, derived_ref)
            .bytes(&request.payload, &derived)
            .into());
        }
        Ok((er, now))
    }

    /// Step 6, the returned refs: an effect `er` (record `rref` of `rec`) that was allowed
    /// must have an effect intent whose outcome names that record with the record's status;
    /// otherwise a gap.
    fn effect_intent(
        &mut self,
        rec: &InvocationRecord,
        rref: &String,
        er: &EffectRecord,
    ) -> Result<(), Stop> {
        if er.allowed {
            let want = if er.failed { "failed" } else { "succeeded" };
            let mut found = false;
            // Several intents can carry identical request bytes (same payload in the same
            // second); the outcome naming this record picks the right one.
            let owner = self.outcome_owner(&rec.episode_id, rref)?;
            let carrying = |i: &IntentInfo| owner.as_ref().is_none_or(|(o, _)| *o == i.id);
            let candidates: Vec<String> = self
                .intents_for(&rec.episode_id)?
                .get(&er.request_ref)
                .into_iter()
                .flatten()
                .filter(|i| carrying(i))
                .map(|i| i.id.clone())
                .collect();
            for id in &candidates {
                // The owner's outcome was read with the episode's outcomes; any other
                // candidate's is read now.
                let outcome = match &owner {
                    Some((o, status)) if o == id => Some((status.clone(), rref.clone())),
                    _ => self.effect_outcome(id)?,
                };
                if let Some((status, recorded)) = outcome {
                    if &recorded == rref {
                        if status != want {
                            return Err(div(
                                Stage::Effects,
                                format!(
                                    "ReplayGapError: outcome of {id} is {status:?} but record {rref} says {want:?}"
                                ),
                            )
                            .into());
                        }
                        found = true;
                        break;
                    }
                }
            }
            if !found {
                return Err(div(
                    Stage::Effects,
                    format!(
                        "ReplayGapError: allowed effect record {rref} has no effect intent whose outcome names it"
                    ),
                )
                .into());
            }
        }
        Ok(())
    }

    /// Step 7, the replay broker session: decide each request against `grants`, never call
    /// a handler, and read each allowed result back from its record.
    fn broker_session(
        &mut self,
        effects: &[PlannedEffect],
        record_refs: &[String],
        walked: &[(EffectRecord, i64)],
        grants: &mut [Grant],
    ) -> Result<Walked, Stop> {
        let mut results = Vec::new();
        let mut world_effects = Vec::new();
        let mut handler_output: Option<CValue> = None;
        for ((pe, rref), (er, now)) in effects.iter().zip(record_refs).zip(walked) {
            let d = decide(grants, &er.effect, &er.scope, er.cost, *now);
            let label = d.denial.map(|x| x.label()).unwrap_or("");
            let gap = if label != er.denial {
                Some(format!(
                    "decision {:?} but record {rref} says {:?}",
                    if label.is_empty() { "allowed" } else { label },
                    if er.denial.is_empty() {
                        "allowed"
                    } else {
                        er.denial.as_str()
                    }
                ))
            } else if d.budget_before != er.budget_before {
                Some(format!(
                    "budgetBefore {} but record {rref} says {}",
                    d.budget_before, er.budget_before
                ))
            } else if d.denial.is_none() && d.budget_after != er.budget_after {
                Some(format!(
                    "budgetAfter {} but record {rref} says {}",
                    d.budget_after, er.budget_after
                ))
            } else {
                None
            };
            if let Some(g) = gap {
                return Err(div(Stage::Effects, format!("ReplayGapError: {g}")).into());
            }
            if d.denial.is_none() {
                if let Some(g) = d.grant.and_then(|i| grants.get_mut(i)) {
                    g.budget = d.budget_after;
                }
            }
            let out = if er.allowed && !er.failed {
                let result = self.load(&er.result_ref, "effect result", Stage::Effects)?;
                match self.pre.results.remove(&er.result_ref) {
                    Some(parsed) => parsed,
                    None => trcjson::parse(&result.payload, Bounds::PLAN).ok(),
                }
            } else {
                None
            };
            handler_output = out.clone();
            let status = status_of(er);
            results.push(PhaseResult {
                id: pe.id.clone(),
                effect: pe.effect.clone(),
                status,
                record: Some(rref.clone()),
                output: out,
            });
            world_effects.push(WorldEffect {
                id: pe.id.clone(),
                status,
                record: Some(rref.clone()),
            });
        }
        Ok(Walked {
            results,
            world_effects,
            handler_output,
        })
    }
}

/// Step 6, the grants: one per distinct (effect, scope) of the `walked` records, rebuilt so
/// that deciding each request again reproduces the recorded decision (a recorded denial gets a
/// grant that cannot match, or one expired at the request's time).
fn replay_grants(walked: &[(EffectRecord, i64)]) -> Vec<Grant> {
    let mut grants: Vec<Grant> = Vec::new();
    for (er, now) in walked {
        if grants.iter().any(|g| {
            g.effect.trim_end_matches("\x00replay") == er.effect
                && g.scope.trim_end_matches("\x00replay") == er.scope
        }) {
            continue;
        }
        let mut g = Grant {
            effect: er.effect.clone(),
            scope: er.scope.clone(),
            expires_at: now.saturating_add(1),
            budget: er.budget_before,
        };
        match er.denial.as_str() {
            "denied:effect-name" => g.effect.push_str("\x00replay"),
            "denied:scope" => g.scope.push_str("\x00replay"),
            "denied:expired" => g.expires_at = *now,
            _ => {}
        }
        grants.push(g);
    }
    grants
}

/// What the effect walk gives the finish phase and the composition.
pub(super) struct Walked {
    /// The finish phase's `results`, one per planned effect.
    pub(super) results: Vec<PhaseResult>,
    /// The composed output's `effects`, one per planned effect.
    pub(super) world_effects: Vec<WorldEffect>,
    /// The last effect's handler output (a single unfinished effect's result is the body).
    pub(super) handler_output: Option<CValue>,
}

/// Why a recorded plan's effect triples cannot be read ([`recorded_triples`]); printed after
/// `recorded plan <ref> is malformed: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordedPlanError {
    /// The plan bytes are not TR-CJSON-1 (the parser's own text).
    #[error(transparent)]
    Json(#[from] trcjson::Error),
    /// `effects` is absent or not an array.
    #[error("effects is not an array")]
    EffectsNotArray,
    /// An element of `effects` lacks a string `effect`, a string `scope` or an integer `cost`.
    #[error("an effect lacks effect, scope or cost")]
    IncompleteEffect,
}

/// The `(effect, scope, cost)` triples of a recorded plan's effects (the requirements
/// `parsePlan` is checked against on replay, transitions.md §12 step 5).
///
/// # Errors
/// [`RecordedPlanError`]: the bytes are not TR-CJSON-1, `effects` is not an array, or an
/// effect lacks one of the three.
pub fn recorded_triples(plan_bytes: &[u8]) -> Result<Vec<Triple>, RecordedPlanError> {
    let v = trcjson::parse(plan_bytes, Bounds::PLAN)?;
    let Some(CValue::Array(effects)) = v.get("effects") else {
        return Err(RecordedPlanError::EffectsNotArray);
    };
    effects
        .iter()
        .map(|e| {
            match (
                e.get("effect").and_then(CValue::as_str),
                e.get("scope").and_then(CValue::as_str),
                e.get("cost").and_then(CValue::as_i64),
            ) {
                (Some(effect), Some(scope), Some(cost)) => Ok(Triple {
                    effect: effect.to_string(),
                    scope: scope.to_string(),
                    cost,
                }),
                _ => Err(RecordedPlanError::IncompleteEffect),
            }
        })
        .collect()
}
