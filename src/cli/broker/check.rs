//! `world broker check`: what the broker would decide for a session, without writing anything.

use crate::broker;
use crate::cli::output::Output;
use crate::cli::{read_err, resolve_session, CliError, Context, Exit, SessionArgs, UnattestedFlag};

/// What `world broker check` was asked: EFFECT SCOPE COST for the session.
pub(super) struct Ask {
    /// The effect name.
    pub effect: String,
    /// The scope.
    pub scope: String,
    /// The cost, in budget units.
    pub cost: i64,
}

/// `world broker check`: the broker's dry-run decision for `ask` under the session's grants
/// (budgets seeded from the journal); prints it and writes nothing.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    session: &SessionArgs,
    ask: Ask,
    unattested: &UnattestedFlag,
) -> Result<Exit, CliError> {
    let Ask {
        effect,
        scope,
        cost,
    } = ask;
    let store = ctx.open_read()?;
    let now = ctx.now();
    let s = resolve_session(
        ctx,
        out,
        store.conn(),
        session.value(),
        now,
        unattested.policy(),
    )?;
    let (d, seeded) = broker::dry_run(
        store.conn(),
        &s.episode,
        &s.grants,
        &effect,
        &scope,
        cost,
        now,
    )
    .map_err(read_err("broker check"))?;
    let grant = d.grant.map(|i| seeded[i].clone());
    // A grant that is only some transition's access effect is never spent by a call (a call
    // spends only what its plan requests, and no published transition declares it): saying
    // `2 → 1` for it would mislead (issue 29 §7).
    let access_only = access_only(store.conn(), &effect, &scope)?;
    if out.json {
        out.json_line(&serde_json::json!({
            "allowed": d.denial.is_none(),
            "denial": d.denial.map(|x| x.label()),
            "budgetBefore": d.budget_before,
            "budgetAfter": d.budget_after,
            "grant": grant.as_ref().map(|g| g.spec()),
            "episode": s.episode,
            "spentByCalls": access_only.is_none(),
        }))?;
    } else {
        match (d.denial, &grant) {
            (None, Some(g)) if access_only.is_some() => out.line(format!(
                "allowed by {}: an access grant — it lets the session see and call {} transition(s), and calls never spend it (no published transition declares {}/{} as an effect); {} remain",
                g.spec(),
                access_only.unwrap_or(0),
                effect,
                scope,
                d.budget_before
            ))?,
            (None, Some(g)) => out.line(format!(
                "allowed by {} (budget {} → {})",
                g.spec(),
                d.budget_before,
                d.budget_after
            ))?,
            (Some(x), Some(g)) => out.line(format!(
                "{} (closest grant {}, remaining {})",
                x.label(),
                g.spec(),
                d.budget_before
            ))?,
            (Some(x), None) => out.line(format!("{} (no grants)", x.label()))?,
            (None, None) => out.line("allowed")?,
        }
    }
    Ok(Exit::Success)
}

/// `Some(n)` when (`effect`, `scope`) is the access effect of `n` published transitions and the
/// declared effect of none; `None` otherwise (no registry yet, or some plan may spend it).
fn access_only(
    conn: &rusqlite::Connection,
    effect: &str,
    scope: &str,
) -> Result<Option<usize>, CliError> {
    let head = crate::transitions::publish::read_head(conn)
        .map_err(|e| CliError::failed("broker check", e))?;
    let Some(head) = head else { return Ok(None) };
    let is = |e: &crate::transitions::registry::Effect| e.effect == effect && e.scope == scope;
    let entries = &head.revision.entries;
    if entries.iter().any(|d| d.declared_effects.iter().any(is)) {
        return Ok(None);
    }
    let n = entries.iter().filter(|d| is(&d.access)).count();
    Ok((n > 0).then_some(n))
}
