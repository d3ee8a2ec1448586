//! The ledger config file (limits.md §2–§3): parsing, TR-CJSON-1 canonicalisation, `configRef`
//! and validation.

use crate::encoding::hashref::HashRef;
use crate::encoding::trcjson;
use crate::ledger::amount::{Amount, AmountError};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// The only accepted `profile` value.
pub const PROFILE: &str = "aiws-limits/1";
/// Most scopes one ledger may hold.
pub const MAX_SCOPES: usize = 100_000;
/// Deepest parent chain (the root has depth 1).
pub const MAX_DEPTH: usize = 64;
/// Largest config file, raw or canonical, in bytes.
pub const MAX_CONFIG_BYTES: usize = 16 * 1024 * 1024;

const CONFIG_BOUNDS: trcjson::Bounds = trcjson::Bounds {
    raw: MAX_CONFIG_BYTES,
    canonical: MAX_CONFIG_BYTES,
    what: "config",
};

/// Why a config is refused (result code `config_invalid`; the text is the reason).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("config_invalid: {0}")]
pub struct ConfigError(pub String);

fn invalid(reason: impl Into<String>) -> ConfigError {
    ConfigError(reason.into())
}

/// A scope kind (limits.md §2). `NODE` is reserved by the seed and refused in v1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ScopeKind {
    /// A work order: the root, or a child of a work order.
    WorkOrder,
    /// A run: child of a work order.
    Run,
    /// A branch: child of a run or a branch.
    Branch,
}

impl ScopeKind {
    /// `WORK_ORDER`, `RUN` or `BRANCH`.
    pub fn as_str(self) -> &'static str {
        match self {
            ScopeKind::WorkOrder => "WORK_ORDER",
            ScopeKind::Run => "RUN",
            ScopeKind::Branch => "BRANCH",
        }
    }

    /// Parse the stored text form.
    pub fn parse(text: &str) -> Option<ScopeKind> {
        match text {
            "WORK_ORDER" => Some(ScopeKind::WorkOrder),
            "RUN" => Some(ScopeKind::Run),
            "BRANCH" => Some(ScopeKind::Branch),
            _ => None,
        }
    }

    fn parent_allowed(self, parent: Option<ScopeKind>) -> bool {
        matches!(
            (self, parent),
            (ScopeKind::WorkOrder, None | Some(ScopeKind::WorkOrder))
                | (ScopeKind::Run, Some(ScopeKind::WorkOrder))
                | (ScopeKind::Branch, Some(ScopeKind::Run | ScopeKind::Branch))
        )
    }
}

/// A limit kind (limits.md §4), serialised `cost`, `handoff`, `activeMs`, `elapsedMs`,
/// `attempts`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum LimitKind {
    /// Cost units: settled cost plus unsettled maximum exposure.
    Cost,
    /// Cost units: the protected partition inside `cost`.
    Handoff,
    /// Milliseconds of summed execution time.
    ActiveMs,
    /// Milliseconds since the scope start.
    ElapsedMs,
    /// A count of successful reservations.
    Attempts,
}

impl LimitKind {
    /// All kinds in report order.
    pub const ALL: [LimitKind; 5] = [
        LimitKind::Cost,
        LimitKind::Handoff,
        LimitKind::ActiveMs,
        LimitKind::ElapsedMs,
        LimitKind::Attempts,
    ];

    /// The JSON name.
    pub fn as_str(self) -> &'static str {
        match self {
            LimitKind::Cost => "cost",
            LimitKind::Handoff => "handoff",
            LimitKind::ActiveMs => "activeMs",
            LimitKind::ElapsedMs => "elapsedMs",
            LimitKind::Attempts => "attempts",
        }
    }

    /// Parse the JSON name (also accepted by `adjust --set KIND=VALUE`).
    pub fn parse(text: &str) -> Option<LimitKind> {
        LimitKind::ALL.into_iter().find(|k| k.as_str() == text)
    }
}

/// Bounds of one scope; `None` = null (inherit). Units: cost units for `cost` and `handoff`,
/// milliseconds for `active_ms` and `elapsed_ms`, a count for `attempts`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Bounds {
    /// `cost`.
    pub cost: Option<Amount>,
    /// `handoff`.
    pub handoff: Option<Amount>,
    /// `activeMs`.
    pub active_ms: Option<Amount>,
    /// `elapsedMs`.
    pub elapsed_ms: Option<Amount>,
    /// `attempts`.
    pub attempts: Option<Amount>,
}

impl Bounds {
    /// The bound of `kind`.
    pub fn get(&self, kind: LimitKind) -> Option<Amount> {
        match kind {
            LimitKind::Cost => self.cost,
            LimitKind::Handoff => self.handoff,
            LimitKind::ActiveMs => self.active_ms,
            LimitKind::ElapsedMs => self.elapsed_ms,
            LimitKind::Attempts => self.attempts,
        }
    }

    /// Set the bound of `kind`.
    pub fn set(&mut self, kind: LimitKind, value: Option<Amount>) {
        match kind {
            LimitKind::Cost => self.cost = value,
            LimitKind::Handoff => self.handoff = value,
            LimitKind::ActiveMs => self.active_ms = value,
            LimitKind::ElapsedMs => self.elapsed_ms = value,
            LimitKind::Attempts => self.attempts = value,
        }
    }

    /// The effective bounds of a scope with these own bounds under a parent whose effective
    /// bounds are `parent`: per kind the minimum of the non-null values (limits.md §4).
    pub fn tighten(&self, parent: &Bounds) -> Bounds {
        let mut out = Bounds::default();
        for kind in LimitKind::ALL {
            let v = match (self.get(kind), parent.get(kind)) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            out.set(kind, v);
        }
        out
    }
}

/// One scope of the config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopeConfig {
    /// `scopeId`, matching `[a-z0-9][a-z0-9._-]{0,63}`.
    pub scope_id: String,
    /// `kind`.
    pub kind: ScopeKind,
    /// `parentId` (`None` for the root).
    pub parent_id: Option<String>,
    /// Own bounds (`limits`).
    pub limits: Bounds,
    /// `dependsOn`: admission gates, immutable after init.
    pub depends_on: Vec<String>,
}

/// A validated config (limits.md §3) with its canonical bytes and `configRef`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// `ledgerId`.
    pub ledger_id: String,
    /// `unit`: the documented unit scale of cost amounts.
    pub unit: String,
    /// The scopes in file order.
    pub scopes: Vec<ScopeConfig>,
    /// The TR-CJSON-1 canonical bytes of the file.
    pub canonical: Vec<u8>,
    /// sha256 of `canonical`.
    pub config_ref: HashRef,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    profile: String,
    #[serde(rename = "ledgerId")]
    ledger_id: String,
    unit: String,
    scopes: Vec<RawScope>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScope {
    #[serde(rename = "scopeId")]
    scope_id: String,
    kind: String,
    #[serde(rename = "parentId", default)]
    parent_id: Option<String>,
    #[serde(default)]
    limits: RawLimits,
    #[serde(rename = "dependsOn", default)]
    depends_on: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    #[serde(default)]
    cost: Option<String>,
    #[serde(default)]
    handoff: Option<String>,
    #[serde(rename = "activeMs", default)]
    active_ms: Option<String>,
    #[serde(rename = "elapsedMs", default)]
    elapsed_ms: Option<String>,
    #[serde(default)]
    attempts: Option<String>,
}

/// `true` when `id` matches `[a-z0-9][a-z0-9._-]{0,63}` (ledger and scope ids).
pub fn valid_id(id: &str) -> bool {
    let b = id.as_bytes();
    let first_ok = b
        .first()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    first_ok
        && b.len() <= 64
        && b.iter().all(|c| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'.' | b'_' | b'-')
        })
}

/// The `configRef` of a config file: sha256 of its TR-CJSON-1 canonical form. Used for the
/// attended phrase `init <ledgerId> <first 12 hex of configRef>` (limits.md §5).
///
/// # Errors
/// [`ConfigError`] when the bytes are not strict TR-CJSON-1 input.
pub fn config_ref(raw: &[u8]) -> Result<HashRef, ConfigError> {
    let canonical = trcjson::canonicalize(raw, CONFIG_BOUNDS)
        .map_err(|e| invalid(format!("not canonicalisable JSON: {e}")))?;
    Ok(HashRef::of(&canonical))
}

fn parse_bound(
    scope: &str,
    kind: &str,
    text: Option<String>,
) -> Result<Option<Amount>, ConfigError> {
    match text {
        None => Ok(None),
        Some(t) => Amount::parse(&t).map(Some).map_err(|e| match e {
            AmountError::Invalid(_) => invalid(format!(
                "scope {scope:?}: {kind} bound {t:?} is not a canonical unsigned decimal"
            )),
            AmountError::Overflow(_) => invalid(format!(
                "scope {scope:?}: {kind} bound {t:?} is above 2^128 - 1"
            )),
        }),
    }
}

impl Config {
    /// Parse, canonicalise and validate a config file (limits.md §3).
    ///
    /// Rules: strict TR-CJSON-1 input; `profile` = [`PROFILE`]; unknown keys refused; bounds are
    /// JSON strings holding canonical amounts, or null / absent (inherit); `dependsOn` defaults
    /// to `[]`, `parentId` to null; ids match `[a-z0-9][a-z0-9._-]{0,63}` and are unique;
    /// exactly one root, a `WORK_ORDER`; parents exist and respect §2; no cycle through
    /// `parentId` or `dependsOn` (taken together); `dependsOn` names existing scopes that are
    /// neither the scope itself nor an ancestor nor repeated; a non-null bound is not above the
    /// effective bound its parent chain already imposes (DEC-LIM-3); where both are bounded the
    /// effective `handoff` ≤ the effective `cost`; at most [`MAX_SCOPES`] scopes and
    /// [`MAX_DEPTH`] levels.
    ///
    /// # Errors
    /// [`ConfigError`] naming the first rule broken.
    pub fn parse(raw: &[u8]) -> Result<Config, ConfigError> {
        let canonical = trcjson::canonicalize(raw, CONFIG_BOUNDS)
            .map_err(|e| invalid(format!("not canonicalisable JSON: {e}")))?;
        let parsed: RawConfig =
            serde_json::from_slice(&canonical).map_err(|e| invalid(format!("bad shape: {e}")))?;
        if parsed.profile != PROFILE {
            return Err(invalid(format!(
                "profile is {:?}; expected {PROFILE:?}",
                parsed.profile
            )));
        }
        if !valid_id(&parsed.ledger_id) {
            return Err(invalid(format!(
                "ledgerId {:?} does not match [a-z0-9][a-z0-9._-]{{0,63}}",
                parsed.ledger_id
            )));
        }
        if parsed.scopes.len() > MAX_SCOPES {
            return Err(invalid(format!(
                "{} scopes; at most {MAX_SCOPES}",
                parsed.scopes.len()
            )));
        }
        let mut scopes = Vec::with_capacity(parsed.scopes.len());
        for raw in parsed.scopes {
            let id = raw.scope_id;
            if !valid_id(&id) {
                return Err(invalid(format!(
                    "scopeId {id:?} does not match [a-z0-9][a-z0-9._-]{{0,63}}"
                )));
            }
            let kind = ScopeKind::parse(&raw.kind).ok_or_else(|| {
                invalid(format!(
                    "scope {id:?}: kind {:?} is not WORK_ORDER, RUN or BRANCH (NODE is reserved)",
                    raw.kind
                ))
            })?;
            let l = raw.limits;
            let limits = Bounds {
                cost: parse_bound(&id, "cost", l.cost)?,
                handoff: parse_bound(&id, "handoff", l.handoff)?,
                active_ms: parse_bound(&id, "activeMs", l.active_ms)?,
                elapsed_ms: parse_bound(&id, "elapsedMs", l.elapsed_ms)?,
                attempts: parse_bound(&id, "attempts", l.attempts)?,
            };
            scopes.push(ScopeConfig {
                scope_id: id,
                kind,
                parent_id: raw.parent_id,
                limits,
                depends_on: raw.depends_on,
            });
        }
        validate_structure(&scopes)?;
        validate_bounds(&scopes, &HashMap::new())?;
        let config_ref = HashRef::of(&canonical);
        Ok(Config {
            ledger_id: parsed.ledger_id,
            unit: parsed.unit,
            scopes,
            canonical,
            config_ref,
        })
    }
}

/// Check ids, parents, kinds, depth and the acyclicity of `parentId` + `dependsOn`.
fn validate_structure(scopes: &[ScopeConfig]) -> Result<(), ConfigError> {
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(scopes.len());
    for (i, s) in scopes.iter().enumerate() {
        if index.insert(s.scope_id.as_str(), i).is_some() {
            return Err(invalid(format!("scopeId {:?} is used twice", s.scope_id)));
        }
    }
    let roots: Vec<&str> = scopes
        .iter()
        .filter(|s| s.parent_id.is_none())
        .map(|s| s.scope_id.as_str())
        .collect();
    if roots.len() != 1 {
        return Err(invalid(format!(
            "exactly one root scope (parentId null) is required; found {}",
            roots.len()
        )));
    }
    let mut parent_of: Vec<Option<usize>> = Vec::with_capacity(scopes.len());
    for s in scopes {
        let parent = match &s.parent_id {
            None => None,
            Some(p) => Some(*index.get(p.as_str()).ok_or_else(|| {
                invalid(format!(
                    "scope {:?}: parent {p:?} does not exist",
                    s.scope_id
                ))
            })?),
        };
        let parent_kind = parent.and_then(|p| scopes.get(p)).map(|p| p.kind);
        if !s.kind.parent_allowed(parent_kind) {
            return Err(invalid(format!(
                "scope {:?}: a {} cannot have {}",
                s.scope_id,
                s.kind.as_str(),
                parent_kind.map_or("no parent".to_string(), |k| format!(
                    "a {} parent",
                    k.as_str()
                ))
            )));
        }
        parent_of.push(parent);
    }
    // Parent chains: no cycle, bounded depth.
    for (i, s) in scopes.iter().enumerate() {
        let mut depth = 1;
        let mut cur = parent_of.get(i).copied().flatten();
        while let Some(p) = cur {
            depth += 1;
            if depth > MAX_DEPTH || p == i {
                return Err(invalid(format!(
                    "scope {:?}: parent chain is cyclic or deeper than {MAX_DEPTH}",
                    s.scope_id
                )));
            }
            cur = parent_of.get(p).copied().flatten();
        }
    }
    // dependsOn targets.
    let mut deps: Vec<Vec<usize>> = Vec::with_capacity(scopes.len());
    for (i, s) in scopes.iter().enumerate() {
        let mut seen = HashSet::new();
        let mut list = Vec::with_capacity(s.depends_on.len());
        for d in &s.depends_on {
            let di = *index.get(d.as_str()).ok_or_else(|| {
                invalid(format!(
                    "scope {:?}: dependsOn {d:?} does not exist",
                    s.scope_id
                ))
            })?;
            if !seen.insert(di) {
                return Err(invalid(format!(
                    "scope {:?}: dependsOn names {d:?} twice",
                    s.scope_id
                )));
            }
            let mut cur = Some(i);
            while let Some(c) = cur {
                if c == di {
                    return Err(invalid(format!(
                        "scope {:?}: dependsOn {d:?} is the scope itself or an ancestor",
                        s.scope_id
                    )));
                }
                cur = parent_of.get(c).copied().flatten();
            }
            list.push(di);
        }
        deps.push(list);
    }
    // Cycles through parentId and dependsOn together (iterative three-colour DFS).
    let n = scopes.len();
    let mut colour = vec![0u8; n]; // 0 white, 1 grey, 2 black
    for start in 0..n {
        if colour.get(start) != Some(&0) {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        if let Some(c) = colour.get_mut(start) {
            *c = 1;
        }
        while let Some((node, next)) = stack.pop() {
            let parent_edge = parent_of.get(node).copied().flatten();
            let edges: Vec<usize> = parent_edge
                .into_iter()
                .chain(deps.get(node).into_iter().flatten().copied())
                .collect();
            if let Some(&to) = edges.get(next) {
                stack.push((node, next + 1));
                match colour.get(to) {
                    Some(0) => {
                        if let Some(c) = colour.get_mut(to) {
                            *c = 1;
                        }
                        stack.push((to, 0));
                    }
                    Some(1) => {
                        let name = scopes.get(node).map_or("?", |s| s.scope_id.as_str());
                        return Err(invalid(format!(
                            "dependency cycle through scope {name:?} (parentId and dependsOn together must be acyclic)"
                        )));
                    }
                    _ => {}
                }
            } else if let Some(c) = colour.get_mut(node) {
                *c = 2;
            }
        }
    }
    Ok(())
}

/// Check bounds along parent chains: a child's own bound never exceeds the effective bound of
/// its parent, and effective handoff ≤ effective cost where both are bounded. `scopes` must
/// already be structurally valid; `overrides` replaces the own bounds of some scopes (used by
/// `adjust`).
pub(crate) fn validate_bounds(
    scopes: &[ScopeConfig],
    overrides: &HashMap<String, Bounds>,
) -> Result<(), ConfigError> {
    let index: HashMap<&str, usize> = scopes
        .iter()
        .enumerate()
        .map(|(i, s)| (s.scope_id.as_str(), i))
        .collect();
    let own = |i: usize| -> Bounds {
        scopes.get(i).map_or(Bounds::default(), |s| {
            overrides.get(&s.scope_id).copied().unwrap_or(s.limits)
        })
    };
    let mut effective: Vec<Option<Bounds>> = vec![None; scopes.len()];
    for i in 0..scopes.len() {
        // Collect the chain root-first, then compute effective bounds down it.
        let mut chain = vec![i];
        let mut cur = scopes
            .get(i)
            .and_then(|s| s.parent_id.as_deref())
            .and_then(|p| index.get(p).copied());
        while let Some(p) = cur {
            if effective.get(p).is_some_and(Option::is_some) {
                chain.push(p);
                break;
            }
            chain.push(p);
            cur = scopes
                .get(p)
                .and_then(|s| s.parent_id.as_deref())
                .and_then(|q| index.get(q).copied());
        }
        chain.reverse();
        let mut parent_eff: Option<Bounds> = None;
        for &c in &chain {
            if let Some(Some(done)) = effective.get(c) {
                parent_eff = Some(*done);
                continue;
            }
            let o = own(c);
            let name = scopes.get(c).map_or("?", |s| s.scope_id.as_str());
            let eff = match parent_eff {
                None => o,
                Some(pe) => {
                    for kind in LimitKind::ALL {
                        if let (Some(mine), Some(theirs)) = (o.get(kind), pe.get(kind)) {
                            if mine > theirs {
                                return Err(invalid(format!(
                                    "scope {name:?}: {} bound {mine} exceeds the bound {theirs} its parent chain imposes",
                                    kind.as_str()
                                )));
                            }
                        }
                    }
                    o.tighten(&pe)
                }
            };
            if let (Some(h), Some(c)) = (eff.handoff, eff.cost) {
                if h > c {
                    return Err(invalid(format!(
                        "scope {name:?}: effective handoff {h} exceeds effective cost {c}"
                    )));
                }
            }
            if let Some(slot) = effective.get_mut(c) {
                *slot = Some(eff);
            }
            parent_eff = Some(eff);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) const EXAMPLE: &str = r#"{
      "profile": "aiws-limits/1", "ledgerId": "guide", "unit": "cost units (integer minor units)",
      "scopes": [
        { "scopeId": "wo", "kind": "WORK_ORDER", "parentId": null,
          "limits": { "cost": "100", "handoff": "10", "activeMs": null, "elapsedMs": null, "attempts": null },
          "dependsOn": [] },
        { "scopeId": "run", "kind": "RUN", "parentId": "wo",
          "limits": { "cost": null, "handoff": null, "activeMs": null, "elapsedMs": null, "attempts": null },
          "dependsOn": [] } ] }"#;

    fn reason(raw: &str) -> String {
        match Config::parse(raw.as_bytes()) {
            Ok(_) => String::from("<accepted>"),
            Err(e) => e.0,
        }
    }

    fn with_scopes(scopes: &str) -> String {
        format!(r#"{{"profile":"aiws-limits/1","ledgerId":"l","unit":"u","scopes":[{scopes}]}}"#)
    }

    #[test]
    fn the_seed_example_is_valid() {
        let c = Config::parse(EXAMPLE.as_bytes());
        let c = match c {
            Ok(c) => c,
            Err(e) => panic!("example refused: {e}"),
        };
        assert_eq!(c.ledger_id, "guide");
        assert_eq!(c.scopes.len(), 2);
        assert_eq!(c.scopes[0].limits.cost, Some(Amount(100)));
        assert_eq!(c.scopes[1].limits, Bounds::default());
        assert_eq!(c.config_ref, HashRef::of(&c.canonical));
        assert_eq!(config_ref(EXAMPLE.as_bytes()), Ok(c.config_ref));
    }

    #[test]
    fn a_child_bound_above_its_parent_is_refused() {
        let r = reason(&with_scopes(
            r#"{"scopeId":"wo","kind":"WORK_ORDER","limits":{"cost":"100"}},
               {"scopeId":"run","kind":"RUN","parentId":"wo","limits":{"cost":"101"}}"#,
        ));
        assert!(r.contains("cost bound 101 exceeds the bound 100"), "{r}");
    }

    #[test]
    fn a_dependency_cycle_is_refused() {
        let r = reason(&with_scopes(
            r#"{"scopeId":"wo","kind":"WORK_ORDER"},
               {"scopeId":"run","kind":"RUN","parentId":"wo"},
               {"scopeId":"a","kind":"BRANCH","parentId":"run","dependsOn":["b"]},
               {"scopeId":"b","kind":"BRANCH","parentId":"run","dependsOn":["a"]}"#,
        ));
        assert!(r.contains("dependency cycle"), "{r}");
        // A cycle through a descendant: the run depends on its own branch.
        let r = reason(&with_scopes(
            r#"{"scopeId":"wo","kind":"WORK_ORDER"},
               {"scopeId":"run","kind":"RUN","parentId":"wo","dependsOn":["a"]},
               {"scopeId":"a","kind":"BRANCH","parentId":"run"}"#,
        ));
        assert!(r.contains("dependency cycle"), "{r}");
    }

    #[test]
    fn structural_rules_are_enforced() {
        let cases = [
            (
                r#"{"scopeId":"wo","kind":"WORK_ORDER","extra":1}"#,
                "unknown field",
            ),
            (
                r#"{"scopeId":"wo","kind":"WORK_ORDER","limits":{"tokens":"1"}}"#,
                "unknown field",
            ),
            (
                r#"{"scopeId":"wo","kind":"WORK_ORDER","limits":{"cost":"01"}}"#,
                "not a canonical",
            ),
            (
                r#"{"scopeId":"wo","kind":"WORK_ORDER","limits":{"cost":100}}"#,
                "bad shape",
            ),
            (r#"{"scopeId":"Wo","kind":"WORK_ORDER"}"#, "does not match"),
            (r#"{"scopeId":"wo","kind":"NODE"}"#, "NODE is reserved"),
            (r#"{"scopeId":"wo","kind":"RUN"}"#, "cannot have no parent"),
            (
                r#"{"scopeId":"wo","kind":"WORK_ORDER"},{"scopeId":"wo","kind":"RUN","parentId":"wo"}"#,
                "used twice",
            ),
            (
                r#"{"scopeId":"wo","kind":"WORK_ORDER"},{"scopeId":"w2","kind":"WORK_ORDER"}"#,
                "exactly one root",
            ),
            (
                r#"{"scopeId":"wo","kind":"WORK_ORDER"},{"scopeId":"r","kind":"RUN","parentId":"nope"}"#,
                "does not exist",
            ),
            (
                r#"{"scopeId":"wo","kind":"WORK_ORDER"},{"scopeId":"b","kind":"BRANCH","parentId":"wo"}"#,
                "cannot have a WORK_ORDER",
            ),
            (
                r#"{"scopeId":"wo","kind":"WORK_ORDER"},{"scopeId":"r","kind":"RUN","parentId":"wo","dependsOn":["wo"]}"#,
                "ancestor",
            ),
            (
                r#"{"scopeId":"wo","kind":"WORK_ORDER","dependsOn":["x"]}"#,
                "does not exist",
            ),
            (
                r#"{"scopeId":"wo","kind":"WORK_ORDER","limits":{"cost":"5","handoff":"6"}}"#,
                "effective handoff 6 exceeds effective cost 5",
            ),
            (
                r#"{"scopeId":"wo","kind":"WORK_ORDER","limits":{"handoff":"6"}},{"scopeId":"r","kind":"RUN","parentId":"wo","limits":{"cost":"5"}}"#,
                "effective handoff 6 exceeds",
            ),
        ];
        for (scopes, want) in cases {
            let r = reason(&with_scopes(scopes));
            assert!(r.contains(want), "{scopes}: got {r:?}, want {want:?}");
        }
        assert!(
            reason(r#"{"profile":"aiws-limits/2","ledgerId":"l","unit":"u","scopes":[]}"#)
                .contains("profile")
        );
        assert!(reason(
            r#"{"profile":"aiws-limits/1","ledgerId":"l","unit":"u","scopes":[],"x":1}"#
        )
        .contains("unknown field"));
        assert!(reason(r#"{"a":1,"a":2}"#).contains("duplicate"));
    }

    #[test]
    fn child_work_orders_and_nested_branches_are_accepted() {
        let r = reason(&with_scopes(
            r#"{"scopeId":"wo","kind":"WORK_ORDER","limits":{"cost":"100","handoff":"10"}},
               {"scopeId":"wo.child","kind":"WORK_ORDER","parentId":"wo","limits":{"cost":"50"}},
               {"scopeId":"r","kind":"RUN","parentId":"wo.child"},
               {"scopeId":"b1","kind":"BRANCH","parentId":"r"},
               {"scopeId":"b2","kind":"BRANCH","parentId":"b1","dependsOn":["r2"]},
               {"scopeId":"r2","kind":"RUN","parentId":"wo"}"#,
        ));
        assert_eq!(r, "<accepted>");
    }
}
