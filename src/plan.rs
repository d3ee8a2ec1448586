//! Calling conventions, plan laws and output composition (transitions.md §7–§8).

use serde::Serialize;

use crate::encoding::gojson::{self, Obj};
use crate::encoding::trcjson::{self, Bounds, CValue};

/// Whole-invocation deadline (20 s): the live coordinator's bound and the phase timeout
/// replay reports.
pub const INVOCATION: std::time::Duration = std::time::Duration::from_secs(20);

/// `world/effect-plan/v1`
pub const PLAN_ID: &str = "world/effect-plan/v1";
/// Largest invocation input and output, in bytes (`MaxInput`, `MaxOutput`).
pub const MAX_IO: usize = 1024 * 1024;

/// A plan-law violation (`PlanLawError{Law, Reason}`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("plan law {law}: {reason}")]
pub struct PlanLawError {
    /// `shape`, `L1`, `L2`, `L3`, `L4`, `L6` or `L7`.
    pub law: &'static str,
    /// What was wrong.
    pub reason: String,
}

fn law(law: &'static str, reason: impl Into<String>) -> PlanLawError {
    PlanLawError {
        law,
        reason: reason.into(),
    }
}

/// A declared effect triple.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Triple {
    /// Effect name.
    pub effect: String,
    /// Scope.
    pub scope: String,
    /// Cost.
    pub cost: i64,
}

/// One planned effect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedEffect {
    /// `[a-z0-9]{1,16}`
    pub id: String,
    /// Effect name.
    pub effect: String,
    /// Scope.
    pub scope: String,
    /// Cost.
    pub cost: i64,
    /// Canonical payload bytes (a JSON object, ≤ 1 MiB).
    pub payload: Vec<u8>,
}

/// A parsed plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The canonical plan bytes (stored as the `world/effect-plan/v1` object).
    pub canonical: Vec<u8>,
    /// The effects (at most one in v1).
    pub effects: Vec<PlannedEffect>,
    /// Whether a finish phase runs.
    pub finish: bool,
    /// The result for zero-effect plans.
    pub result: Option<CValue>,
}

fn is_id(s: &str) -> bool {
    (1..=16).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// `parsePlan`: the 16 checks of transitions.md §8, in order, against `declared`.
pub fn parse_plan(raw: &[u8], declared: &[Triple]) -> Result<Plan, PlanLawError> {
    let v = trcjson::parse(raw, Bounds::PLAN).map_err(|e| law("shape", e.to_string()))?;
    let canonical = trcjson::encode(&v);
    let Some(members) = v.as_object() else {
        return Err(law("shape", "the plan is not a JSON object"));
    };
    if v.get("world").is_some() {
        return Err(law("L6", "the plan uses the reserved key \"world\""));
    }
    let keys: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
    if keys != ["effects", "finish", "plan", "result"] {
        return Err(law(
            "shape",
            format!(
                "plan keys must be exactly effects, finish, plan, result; got {}",
                keys.join(", ")
            ),
        ));
    }
    if v.get("plan").and_then(CValue::as_str) != Some(PLAN_ID) {
        return Err(law("shape", format!("plan must be {PLAN_ID:?}")));
    }
    let finish = match v.get("finish") {
        Some(CValue::Bool(b)) => *b,
        _ => return Err(law("shape", "finish must be a boolean")),
    };
    let Some(CValue::Array(effects)) = v.get("effects") else {
        return Err(law("shape", "effects must be an array"));
    };
    if effects.len() > 1 {
        return Err(law(
            "L1",
            format!(
                "a plan may request at most 1 effect; this one requests {}",
                effects.len()
            ),
        ));
    }
    let mut planned = Vec::new();
    for e in effects {
        let Some(m) = e.as_object() else {
            return Err(law("shape", "an effect must be an object"));
        };
        let keys: Vec<&str> = m.iter().map(|(k, _)| k.as_str()).collect();
        if keys != ["cost", "effect", "id", "payload", "scope"] {
            return Err(law(
                "shape",
                format!(
                    "effect keys must be exactly cost, effect, id, payload, scope; got {}",
                    keys.join(", ")
                ),
            ));
        }
        let (Some(id), Some(effect), Some(scope)) = (
            e.get("id").and_then(CValue::as_str),
            e.get("effect").and_then(CValue::as_str),
            e.get("scope").and_then(CValue::as_str),
        ) else {
            return Err(law("shape", "effect id, effect and scope must be strings"));
        };
        let Some(cost) = e.get("cost").and_then(CValue::as_i64) else {
            return Err(law("shape", "effect cost must be an integer"));
        };
        if !is_id(id) {
            return Err(law(
                "L2",
                format!("effect id {id:?} must match [a-z0-9]{{1,16}}"),
            ));
        }
        let payload = e.get("payload").cloned().unwrap_or(CValue::Null);
        if payload.as_object().is_none() {
            return Err(law("L4", "effect payload must be a JSON object"));
        }
        if !declared
            .iter()
            .any(|t| t.effect == effect && t.scope == scope && t.cost == cost)
        {
            return Err(law(
                "L3",
                format!("({effect}, {scope}, {cost}) is not one of the declared effects"),
            ));
        }
        let payload = trcjson::encode_bounded(
            &payload,
            Bounds {
                raw: usize::MAX,
                canonical: MAX_IO,
                what: "payload",
            },
        )
        .map_err(|e| law("L4", e.to_string()))?;
        if planned.iter().any(|p: &PlannedEffect| p.id == id) {
            return Err(law("L2", format!("effect id {id:?} is used twice")));
        }
        planned.push(PlannedEffect {
            id: id.to_string(),
            effect: effect.to_string(),
            scope: scope.to_string(),
            cost,
            payload,
        });
    }
    let result = match v.get("result") {
        Some(CValue::Null) | None => None,
        Some(r @ CValue::Object(_)) => Some(r.clone()),
        Some(_) => return Err(law("L7", "result must be null or an object")),
    };
    if planned.is_empty() != result.is_some() {
        return Err(law(
            "L7",
            if planned.is_empty() {
                "a zero-effect plan must carry a non-null result"
            } else {
                "a plan with effects must have a null result"
            },
        ));
    }
    if finish && planned.is_empty() {
        return Err(law("L7", "finish: true needs at least one effect"));
    }
    if result.as_ref().is_some_and(|r| r.get("world").is_some()) {
        return Err(law("L6", "the result uses the reserved key \"world\""));
    }
    Ok(Plan {
        canonical,
        effects: planned,
        finish,
        result,
    })
}

/// Phase input for the plan phase: Go-json `{"phase":"plan","args":<input>}`, where `input` is
/// the Go-json invocation input bytes.
pub fn plan_input(input: &[u8]) -> Vec<u8> {
    Obj::new().str("phase", "plan").raw("args", input).finish()
}

/// One result handed to the finish phase.
#[derive(Clone, Debug)]
pub struct PhaseResult {
    /// Effect id from the plan.
    pub id: String,
    /// Effect name.
    pub effect: String,
    /// `ok`, `failed` or `denied`.
    pub status: &'static str,
    /// The effect record ref, or `None` (`null`).
    pub record: Option<String>,
    /// The TR-CJSON-1 handler output, or `None` (`null`).
    pub output: Option<CValue>,
}

/// Phase input for the finish phase: `{"phase":"finish","args":…,"results":[…]}`; `results` is
/// omitted when empty.
pub fn finish_input(input: &[u8], results: &[PhaseResult]) -> Vec<u8> {
    let mut obj = Obj::new().str("phase", "finish").raw("args", input);
    if !results.is_empty() {
        let mut arr = vec![b'['];
        for (i, r) in results.iter().enumerate() {
            if i > 0 {
                arr.push(b',');
            }
            let output = match &r.output {
                Some(v) => gojson::any_to_vec(&v.to_json()),
                None => b"null".to_vec(),
            };
            let record = match &r.record {
                Some(x) => {
                    let mut b = Vec::new();
                    gojson::write_str(&mut b, x);
                    b
                }
                None => b"null".to_vec(),
            };
            arr.extend(
                Obj::new()
                    .str("id", &r.id)
                    .str("effect", &r.effect)
                    .str("status", r.status)
                    .raw("record", &record)
                    .raw("output", &output)
                    .finish(),
            );
        }
        arr.push(b']');
        obj = obj.raw("results", &arr);
    }
    obj.finish()
}

/// Check a finish output: canonical object with no `world` or `effects` key (L6).
pub fn parse_finish(raw: &[u8]) -> Result<CValue, PlanLawError> {
    let v = trcjson::parse(raw, Bounds::PLAN).map_err(|e| law("shape", e.to_string()))?;
    if v.as_object().is_none() {
        return Err(law("shape", "the finish output is not a JSON object"));
    }
    if v.get("world").is_some() || v.get("effects").is_some() {
        return Err(law(
            "L6",
            "the finish output uses a reserved key (world or effects)",
        ));
    }
    Ok(v)
}

/// One effect's entry in the output's `world` block.
#[derive(Clone, Debug)]
pub struct WorldEffect {
    /// Effect id.
    pub id: String,
    /// `ok`, `failed`, `denied`.
    pub status: &'static str,
    /// Record ref.
    pub record: Option<String>,
}

/// Compose the effectful output: `body` plus `"world":{"effects":[…],"plan":<planRef>}`,
/// TR-CJSON-1 encoded and bounded by `MaxOutput`.
pub fn compose(
    body: CValue,
    plan_ref: &str,
    effects: &[WorldEffect],
) -> Result<Vec<u8>, PlanLawError> {
    let CValue::Object(mut members) = body else {
        return Err(law("shape", "the output body is not a JSON object"));
    };
    if members.iter().any(|(k, _)| k == "world") {
        return Err(law("L6", "the output body uses the reserved key \"world\""));
    }
    let effs = effects
        .iter()
        .map(|e| {
            CValue::object(vec![
                ("id".into(), CValue::String(e.id.clone())),
                ("status".into(), CValue::String(e.status.into())),
                (
                    "record".into(),
                    e.record.clone().map(CValue::String).unwrap_or(CValue::Null),
                ),
            ])
        })
        .collect();
    let world = CValue::object(vec![
        ("effects".into(), CValue::Array(effs)),
        ("plan".into(), CValue::String(plan_ref.to_string())),
    ]);
    members.push(("world".into(), world));
    let out = CValue::object(members);
    trcjson::encode_bounded(
        &out,
        Bounds {
            raw: usize::MAX,
            canonical: MAX_IO,
            what: "output",
        },
    )
    .map_err(|e| law("shape", e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared() -> Vec<Triple> {
        vec![Triple {
            effect: "Workspace.Read".into(),
            scope: "worktree".into(),
            cost: 1,
        }]
    }

    #[test]
    fn the_seed_plan_parses() {
        let raw = br#"{"plan":"world/effect-plan/v1","effects":[{"id":"e1","effect":"Workspace.Read","scope":"worktree","cost":1,"payload":{"op":"read","path":"src/main.ail"}}],"finish":false,"result":null}"#;
        let p = parse_plan(raw, &declared()).unwrap();
        assert_eq!(p.effects.len(), 1);
        assert_eq!(
            p.effects[0].payload,
            br#"{"op":"read","path":"src/main.ail"}"#
        );
        assert!(p.canonical.starts_with(br#"{"effects":[{"cost":1,"#));
    }

    #[test]
    fn each_law_is_enforced() {
        let d = declared();
        let eff = |id: &str, e: &str, cost: i64, payload: &str| {
            format!(
                r#"{{"id":"{id}","effect":"{e}","scope":"worktree","cost":{cost},"payload":{payload}}}"#
            )
        };
        let plan = |effects: &str, finish: bool, result: &str| {
            format!(
                r#"{{"plan":"world/effect-plan/v1","effects":[{effects}],"finish":{finish},"result":{result}}}"#
            )
        };
        let one = eff("e1", "Workspace.Read", 1, "{}");
        let cases: Vec<(String, &str)> = vec![
            ("[]".into(), "shape"),
            (r#"{"plan":"world/effect-plan/v1","effects":[],"finish":false,"result":{},"world":1}"#.into(), "L6"),
            (r#"{"plan":"x","effects":[],"finish":false,"result":{}}"#.into(), "shape"),
            (plan(&format!("{one},{}", eff("e2", "Workspace.Read", 1, "{}")), false, "null"), "L1"),
            (plan(&eff("E1", "Workspace.Read", 1, "{}"), false, "null"), "L2"),
            (plan(&eff("e1", "Workspace.Write", 1, "{}"), false, "null"), "L3"),
            (plan(&eff("e1", "Workspace.Read", 2, "{}"), false, "null"), "L3"),
            (plan(&eff("e1", "Workspace.Read", 1, "[]"), false, "null"), "L4"),
            (plan(&eff("e1", "Workspace.Read", 1, &format!(r#"{{"x":"{}"}}"#, "a".repeat(MAX_IO))), false, "null"), "L4"),
            (plan("", false, "null"), "L7"),
            (plan(&one, false, "{}"), "L7"),
            (plan("", true, "{}"), "L7"),
            (plan("", false, "[]"), "L7"),
            (plan("", false, r#"{"world":1}"#), "L6"),
        ];
        for (raw, want) in cases {
            let err = parse_plan(raw.as_bytes(), &d).unwrap_err();
            assert_eq!(err.law, want, "{raw}: {err}");
        }
        // A refusal is a valid pure plan.
        parse_plan(
            plan("", false, r#"{"ok":false,"refused":"no"}"#).as_bytes(),
            &d,
        )
        .unwrap();
    }

    #[test]
    fn composition_adds_the_world_block() {
        let body = trcjson::parse(br#"{"ok":true,"b":1.0}"#, Bounds::UNBOUNDED).unwrap();
        let out = compose(
            body,
            "sha256:p",
            &[WorldEffect {
                id: "e1".into(),
                status: "ok",
                record: Some("sha256:r".into()),
            }],
        )
        .unwrap();
        assert_eq!(out, br#"{"b":1,"ok":true,"world":{"effects":[{"id":"e1","record":"sha256:r","status":"ok"}],"plan":"sha256:p"}}"#);
        let bad = trcjson::parse(br#"{"world":1}"#, Bounds::UNBOUNDED).unwrap();
        assert_eq!(compose(bad, "p", &[]).unwrap_err().law, "L6");
    }

    #[test]
    fn phase_inputs() {
        assert_eq!(
            plan_input(br#"{"a":1}"#),
            br#"{"phase":"plan","args":{"a":1}}"#
        );
        let r = PhaseResult {
            id: "r1".into(),
            effect: "Workspace.Read".into(),
            status: "denied",
            record: Some("sha256:x".into()),
            output: None,
        };
        assert_eq!(finish_input(b"{}", &[r]), br#"{"phase":"finish","args":{},"results":[{"id":"r1","effect":"Workspace.Read","status":"denied","record":"sha256:x","output":null}]}"#);
        assert_eq!(finish_input(b"{}", &[]), br#"{"phase":"finish","args":{}}"#);
    }
}
