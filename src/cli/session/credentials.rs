//! What the credential readers share (`session list`, `show`, `revoke`): the id argument,
//! the grant budgets as the broker would seed them, and the row's JSON and text forms.

use crate::authority::session;
use crate::cli::output::Output;
use crate::cli::{read_err, CliError};

/// One grant's budget as the broker would seed it now (authority-and-broker.md §8): the
/// minted `budget`, what the episode `spent` on `(effect, scope)`, and `remaining` =
/// `max(budget − spent, 0)`. Units: the effect's cost units; `expiresAt` Unix seconds.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GrantBudget {
    /// Effect name.
    pub effect: String,
    /// Scope.
    pub scope: String,
    /// The minted budget.
    pub budget: i64,
    /// Σ cost of the episode's intents on this effect and scope (clamped to int64).
    pub spent: i64,
    /// What the broker would seed: `max(budget − spent, 0)`.
    pub remaining: i64,
    /// The grant's expiry (Unix seconds).
    pub expires_at: i64,
}

/// Spend per episode, read once per episode.
#[derive(Default)]
pub(super) struct SpendCache(
    std::collections::HashMap<String, std::collections::HashMap<(String, String), i64>>,
);

impl SpendCache {
    /// Each minted grant of `r` with what its episode spent and what remains.
    pub(super) fn budgets(
        &mut self,
        conn: &rusqlite::Connection,
        r: &session::Listed,
    ) -> Result<Vec<GrantBudget>, CliError> {
        if !self.0.contains_key(&r.episode) {
            let spend =
                crate::broker::spend(conn, &r.episode).map_err(read_err("session budgets"))?;
            self.0.insert(r.episode.clone(), spend);
        }
        let spend = &self.0[&r.episode];
        let seeded = crate::broker::seed(&r.minted, spend);
        Ok(r.minted
            .iter()
            .zip(seeded)
            .map(|(g, s)| GrantBudget {
                effect: g.effect.clone(),
                scope: g.scope.clone(),
                budget: g.budget,
                spent: spend
                    .get(&(g.effect.clone(), g.scope.clone()))
                    .copied()
                    .unwrap_or(0),
                remaining: s.budget,
                expires_at: g.expires_at,
            })
            .collect())
    }
}

/// A `session list`/`show` row as JSON: the listed fields plus `budgets`.
pub(super) fn listed_json(r: &session::Listed, budgets: &[GrantBudget]) -> serde_json::Value {
    let mut v = serde_json::to_value(r).unwrap_or_default();
    v["budgets"] = serde_json::to_value(budgets).unwrap_or_default();
    v
}

/// `attended`, `unattended` or `unknown` (no mint record).
pub(super) fn attended_text(a: Option<bool>) -> &'static str {
    match a {
        Some(true) => "attended",
        Some(false) => "unattended",
        None => "unknown",
    }
}

/// A credential id as tables print it: 12 hex, a prefix every id argument takes.
pub(super) fn short_id(id: &str) -> String {
    id.get(..12).unwrap_or(id).to_string()
}

/// The one row `text` (a full id or a unique prefix of ≥ 6 hex, as tables print it) names.
/// The credential id an argument names: the argument itself, or — when it is a session token
/// of this store rather than an id — the token's credential id, with a warning that names the
/// credential, never the token (issue 26 §7).
pub(super) fn credential_arg(store: &crate::store::Store, out: &mut Output, text: &str) -> String {
    let t = text.trim();
    if !session::is_hex64(t) {
        return text.to_string();
    }
    let hex = t.to_ascii_lowercase();
    if crate::store::refs::names_anything(store.conn(), &hex).unwrap_or(true) {
        return text.to_string();
    }
    let id = session::credential_id(t);
    if session::credential_known(store.conn(), &id).unwrap_or(false) {
        out.warn(format!(
            "the argument is a session token, not a credential id: it names credential {id} (give credential ids; a token on the command line ends up in shell history)"
        ));
        return id;
    }
    text.to_string()
}

/// The row among `rows` whose credential id `text` names: 64 hex or a unique prefix of at
/// least 6 (a trailing `…` ignored); exit 1 otherwise, an ambiguous prefix listing the
/// candidates.
pub(super) fn pick<'a>(
    rows: &'a [session::Listed],
    text: &str,
    what: &str,
) -> Result<&'a session::Listed, CliError> {
    let t = text.trim().trim_end_matches('…').to_ascii_lowercase();
    if t.len() < 6 || t.len() > 64 || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(CliError::failed(
            what,
            format!("{text:?} is not a credential_id: give 64 hex or a unique prefix of at least 6 hex digits"),
        )
        .with_code("bad_ref"));
    }
    let hits: Vec<&session::Listed> = rows
        .iter()
        .filter(|r| r.credential_id.starts_with(&t))
        .collect();
    match hits.as_slice() {
        [one] => Ok(one),
        [] => Err(CliError::failed(
            what,
            format!(
                "no session credential matches {text} in this store (live, expired or revoked)"
            ),
        )
        .with_code("not_found")
        .hint("`world session list --all` lists them")),
        many => {
            let mut err = CliError::failed(
                what,
                format!(
                    "{text} is ambiguous: {} session credentials match",
                    many.len()
                ),
            )
            .with_code("ambiguous_ref");
            for r in many.iter().take(10) {
                err = err.hint(format!(
                    "{} (episode {}, {})",
                    r.credential_id, r.episode, r.state
                ));
            }
            Err(err.hint("give more hex digits"))
        }
    }
}
