//! `world session list`: live (or all) session credentials with each grant's remaining budget.

use super::credentials::{attended_text, listed_json, short_id, SpendCache};
use crate::authority::session;
use crate::cli::output::Output;
use crate::cli::table::{Col, Table};
use crate::cli::{read_err, CliError, Context, Exit};

/// The members of a `world session list --json` line (docs/json/session.schema.json), the
/// fields `--json=FIELDS` may select.
pub const JSON_FIELDS: &[&str] = &[
    "credentialId",
    "episode",
    "state",
    "live",
    "attended",
    "createdAt",
    "expiresAt",
    "grants",
    "budgets",
];

/// `world session list`.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    episode: Option<&str>,
    all: bool,
) -> Result<Exit, CliError> {
    let store = ctx.open_read()?;
    let rows =
        session::list(store.conn(), episode, ctx.now(), all).map_err(read_err("session list"))?;
    let mut spends = SpendCache::default();
    if out.json {
        for r in &rows {
            let budgets = spends.budgets(store.conn(), r)?;
            out.json_line(&listed_json(r, &budgets))?;
        }
    } else {
        // docs/TABLES.md: CREDENTIAL_ID (the id `session show`/`revoke` take) always;
        // REMAINING BUDGET is cut between grants first; then ATTENDED, EXPIRES, EPISODE,
        // REMAINING BUDGET and STATE are hidden in that order.
        let mut t = Table::new(vec![
            Col::id("credential_id"),
            Col::id("episode").drop(3),
            Col::id("state").drop(5),
            Col::id("attended").drop(1),
            Col::id("expires").drop(2),
            Col::list("remaining budget").drop(4),
        ]);
        for r in &rows {
            let budgets = spends.budgets(store.conn(), r)?;
            t.add_row(vec![
                short_id(&r.credential_id),
                r.episode.clone(),
                r.state.to_string(),
                attended_text(r.attended).to_string(),
                crate::cli::output::rfc3339(r.expires_at),
                budgets
                    .iter()
                    .map(|b| format!("{}={}:{}/{}", b.effect, b.scope, b.remaining, b.budget))
                    .collect::<Vec<_>>()
                    .join(" "),
            ]);
        }
        if !rows.is_empty() {
            out.table(&t)?;
        }
        out.status(format!(
            "{} session credential(s){}",
            rows.len(),
            if all {
                ""
            } else {
                " live (--all adds expired and revoked)"
            }
        ));
    }
    Ok(Exit::Success)
}
