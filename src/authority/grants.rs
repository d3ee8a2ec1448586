//! Grants `EFFECT=SCOPE:BUDGET` and the broker's decision law (authority-and-broker.md §4, §6;
//! seed 000).

use serde::{Deserialize, Serialize};

use crate::encoding::gojson::Obj;

/// A capability as stored in `grants_json`, with the reference's Go field names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grant {
    /// Effect name, e.g. `Workspace.Read` (not checked against a list).
    #[serde(rename = "Effect")]
    pub effect: String,
    /// Scope, compared by exact string equality (`worktree` is symbolic).
    #[serde(rename = "Scope")]
    pub scope: String,
    /// Unix seconds; the grant is live while `0 <= now < expires_at`.
    #[serde(rename = "ExpiresAt")]
    pub expires_at: i64,
    /// Budget in the effect's cost units (int64, >= 0).
    #[serde(rename = "Budget")]
    pub budget: i64,
}

/// A `--grant` that does not follow `EFFECT=SCOPE:BUDGET`; messages per the spec.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrantError {
    /// No `=` or no `:` after it.
    #[error("invalid --grant {0:?}: want EFFECT=SCOPE:BUDGET")]
    Shape(String),
    /// Empty effect or scope.
    #[error("invalid --grant {0:?}: EFFECT and SCOPE must be non-empty")]
    Empty(String),
    /// The budget is not a base-10 integer.
    #[error("invalid --grant {0:?}: budget {1:?} is not an integer")]
    NotInteger(String, String),
    /// The budget does not fit int64 (2^63 and above).
    #[error("invalid --grant {0:?}: budget {1:?} overflows int64 (at most 9223372036854775807)")]
    Overflow(String, String),
    /// Negative budget.
    #[error("invalid --grant {0:?}: budget must be non-negative")]
    Negative(String),
}

/// Parse `EFFECT=SCOPE:BUDGET`: the effect is the text before the first `=`; the rest splits
/// at the last `:` (so a scope may contain `:`); the budget is a base-10 int64 >= 0.
/// `expires_at` is filled by the caller (the session expiry).
pub fn parse_grant(spec: &str) -> Result<Grant, GrantError> {
    let (effect, rest) = spec
        .split_once('=')
        .ok_or_else(|| GrantError::Shape(spec.to_string()))?;
    let (scope, budget) = rest
        .rsplit_once(':')
        .ok_or_else(|| GrantError::Shape(spec.to_string()))?;
    if effect.is_empty() || scope.is_empty() {
        return Err(GrantError::Empty(spec.to_string()));
    }
    let digits = budget.strip_prefix(['-', '+']).unwrap_or(budget);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(GrantError::NotInteger(spec.to_string(), budget.to_string()));
    }
    let value: i64 = budget
        .parse()
        .map_err(|_| GrantError::Overflow(spec.to_string(), budget.to_string()))?;
    if value < 0 {
        return Err(GrantError::Negative(spec.to_string()));
    }
    Ok(Grant {
        effect: effect.to_string(),
        scope: scope.to_string(),
        expires_at: 0,
        budget: value,
    })
}

impl Grant {
    /// `EFFECT=SCOPE:BUDGET`.
    pub fn spec(&self) -> String {
        format!("{}={}:{}", self.effect, self.scope, self.budget)
    }

    /// Live at `now` (Unix seconds): `0 <= now < expires_at`.
    pub fn live(&self, now: i64) -> bool {
        now >= 0 && now < self.expires_at
    }

    /// Does this grant satisfy an access triple (visibility and admission, §5)? Uses the
    /// minted budget, not the seeded remainder.
    pub fn satisfies(&self, effect: &str, scope: &str, cost: i64, now: i64) -> bool {
        self.effect == effect
            && self.scope == scope
            && self.live(now)
            && cost >= 0
            && cost <= self.budget
    }
}

/// `grants_json`: the Go-json array of grants with Go field names.
pub fn grants_json(grants: &[Grant]) -> Vec<u8> {
    let mut out = vec![b'['];
    for (i, g) in grants.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend(
            Obj::new()
                .str("Effect", &g.effect)
                .str("Scope", &g.scope)
                .int("ExpiresAt", g.expires_at)
                .int("Budget", g.budget)
                .finish(),
        );
    }
    out.push(b']');
    out
}

/// The four fixed denial labels (seed 000), ranked effect-name < scope < expired < budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Denial {
    /// `denied:effect-name`: no grant for this effect.
    EffectName,
    /// `denied:scope`: a grant exists for another scope.
    Scope,
    /// `denied:expired`: the grant is not live.
    Expired,
    /// `denied:budget`: remaining budget below the cost.
    Budget,
}

impl Denial {
    /// The stored label.
    pub fn label(self) -> &'static str {
        match self {
            Denial::EffectName => "denied:effect-name",
            Denial::Scope => "denied:scope",
            Denial::Expired => "denied:expired",
            Denial::Budget => "denied:budget",
        }
    }
}

/// The broker's decision for one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// `None` when allowed; the denial otherwise.
    pub denial: Option<Denial>,
    /// The index of the chosen grant (the allowing one, or the highest-ranked denial's).
    pub grant: Option<usize>,
    /// The chosen grant's (seeded) budget before the request; 0 with no grants.
    pub budget_before: i64,
    /// `budget_before - cost` when allowed, else `budget_before`.
    pub budget_after: i64,
}

/// Decide one request against `grants` (budgets already seeded) at `now` (Unix seconds):
/// per grant effect → scope → liveness → budget; the first allowing grant wins; otherwise
/// the highest-ranked denial, earliest grant on ties (authority-and-broker.md §6).
pub fn decide(grants: &[Grant], effect: &str, scope: &str, cost: i64, now: i64) -> Decision {
    let mut best: Option<(Denial, usize)> = None;
    for (i, g) in grants.iter().enumerate() {
        let denial = if g.effect != effect {
            Some(Denial::EffectName)
        } else if g.scope != scope {
            Some(Denial::Scope)
        } else if !g.live(now) {
            Some(Denial::Expired)
        } else if cost < 0 || g.budget < 0 || cost > g.budget {
            Some(Denial::Budget)
        } else {
            None
        };
        match denial {
            None => {
                return Decision {
                    denial: None,
                    grant: Some(i),
                    budget_before: g.budget,
                    budget_after: g.budget - cost,
                }
            }
            Some(d) => {
                if best.is_none_or(|(b, _)| d > b) {
                    best = Some((d, i));
                }
            }
        }
    }
    match best {
        None => Decision {
            denial: Some(Denial::EffectName),
            grant: None,
            budget_before: 0,
            budget_after: 0,
        },
        Some((d, i)) => Decision {
            denial: Some(d),
            grant: Some(i),
            budget_before: grants[i].budget,
            budget_after: grants[i].budget,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(spec: &str, expires: i64) -> Grant {
        Grant {
            expires_at: expires,
            ..parse_grant(spec).unwrap()
        }
    }

    #[test]
    fn grammar_and_errors() {
        let x = parse_grant("Workspace.Read=worktree:50").unwrap();
        assert_eq!(
            (x.effect.as_str(), x.scope.as_str(), x.budget),
            ("Workspace.Read", "worktree", 50)
        );
        let y = parse_grant("Net=http://h:80:3").unwrap();
        assert_eq!((y.scope.as_str(), y.budget), ("http://h:80", 3));
        let z = parse_grant("A=b=c:1").unwrap();
        assert_eq!(z.scope, "b=c");
        assert_eq!(
            parse_grant("nope").unwrap_err().to_string(),
            "invalid --grant \"nope\": want EFFECT=SCOPE:BUDGET"
        );
        assert!(matches!(parse_grant("A=b"), Err(GrantError::Shape(_))));
        assert!(matches!(parse_grant("=b:1"), Err(GrantError::Empty(_))));
        assert!(matches!(parse_grant("A=:1"), Err(GrantError::Empty(_))));
        assert!(matches!(
            parse_grant("A=b:"),
            Err(GrantError::NotInteger(..))
        ));
        assert!(matches!(
            parse_grant("A=b:1.5"),
            Err(GrantError::NotInteger(..))
        ));
        assert!(matches!(
            parse_grant("A=b:-1"),
            Err(GrantError::Negative(_))
        ));
        assert!(matches!(
            parse_grant("A=b:9223372036854775808"),
            Err(GrantError::Overflow(..))
        ));
        assert_eq!(
            parse_grant("A=b:9223372036854775807").unwrap().budget,
            i64::MAX
        );
    }

    #[test]
    fn grants_json_uses_go_field_names() {
        let v = vec![g("Workspace.Read=worktree:50", 1700003600)];
        assert_eq!(grants_json(&v), br#"[{"Effect":"Workspace.Read","Scope":"worktree","ExpiresAt":1700003600,"Budget":50}]"#);
        let back: Vec<Grant> = serde_json::from_slice(&grants_json(&v)).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn decision_law_order_and_ranking() {
        let now = 100;
        assert_eq!(
            decide(&[], "E", "s", 1, now).denial,
            Some(Denial::EffectName)
        );
        let gs = vec![g("E=other:5", 200), g("E=s:0", 200), g("E=s:5", 50)];
        let d = decide(&gs, "E", "s", 1, now);
        // scope (grant 0), budget (grant 1), expired (grant 2): budget ranks highest.
        assert_eq!(
            (d.denial, d.grant, d.budget_before),
            (Some(Denial::Budget), Some(1), 0)
        );
        let gs = vec![g("E=s:0", 200), g("E=s:3", 200)];
        let d = decide(&gs, "E", "s", 1, now);
        assert_eq!(
            (d.denial, d.grant, d.budget_before, d.budget_after),
            (None, Some(1), 3, 2)
        );
        // Expiry boundary: live while now < expiresAt.
        assert_eq!(
            decide(&[g("E=s:1", 100)], "E", "s", 1, 100).denial,
            Some(Denial::Expired)
        );
        assert_eq!(decide(&[g("E=s:1", 101)], "E", "s", 1, 100).denial, None);
        assert_eq!(
            decide(&[g("E=s:1", 101)], "E", "s", -1, 100).denial,
            Some(Denial::Budget)
        );
        assert_eq!(
            decide(&[g("F=s:1", 101)], "E", "s", 1, 100).denial,
            Some(Denial::EffectName)
        );
    }
}
