//! `world session show ID`: one credential, its state, expiry and grant budgets.

use super::credentials::{attended_text, credential_arg, listed_json, pick, SpendCache};
use crate::authority::session;
use crate::cli::output::Output;
use crate::cli::table::{Col, Table};
use crate::cli::{read_err, CliError, Context, Exit};

/// `world session show ID`.
pub(super) fn run(ctx: &Context, out: &mut Output, id: &str) -> Result<Exit, CliError> {
    let what = "session show";
    let store = ctx.open_read()?;
    let rows = session::list(store.conn(), None, ctx.now(), true).map_err(read_err(what))?;
    let id = credential_arg(&store, out, id);
    let r = pick(&rows, &id, what)?;
    let budgets = SpendCache::default().budgets(store.conn(), r)?;
    if out.json {
        out.json_line(&listed_json(r, &budgets))?;
        return Ok(Exit::Success);
    }
    out.view(format!("credential  {}", r.credential_id))?;
    out.view(format!(
        "episode     {}",
        crate::termtext::escape_line(&r.episode)
    ))?;
    out.view(format!("state       {}", r.state))?;
    out.view(format!("attended    {}", attended_text(r.attended)))?;
    out.view(format!(
        "created     {}",
        crate::cli::output::rfc3339(r.created_at)
    ))?;
    out.view(format!(
        "expires     {}",
        crate::cli::output::rfc3339(r.expires_at)
    ))?;
    out.view("")?;
    // docs/TABLES.md: EFFECT, SCOPE and REMAINING always; EXPIRES, SPENT and BUDGET are
    // hidden in that order.
    let mut t = Table::new(vec![
        Col::id("effect"),
        Col::id("scope"),
        Col::id("budget").drop(3).right(),
        Col::id("spent").drop(2).right(),
        Col::id("remaining").right(),
        Col::id("expires").drop(1),
    ]);
    for b in &budgets {
        t.add_row(vec![
            b.effect.clone(),
            b.scope.clone(),
            b.budget.to_string(),
            b.spent.to_string(),
            b.remaining.to_string(),
            crate::cli::output::rfc3339(b.expires_at),
        ]);
    }
    out.table(&t)?;
    out.status("remaining = budget − what the episode spent on that effect and scope (every intent counts, whatever its outcome); a new session for the same episode does not refill it");
    Ok(Exit::Success)
}
