//! `world broker check`: what the broker would decide, without writing anything.

use clap::Subcommand;

use super::output::Output;
use super::{read_err, resolve_session, CliError, Context, Exit};
use crate::broker;

/// Broker commands.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Decide EFFECT SCOPE COST for a session (budgets seeded from the journal); writes nothing
    Check {
        #[command(flatten)]
        session: super::SessionArgs,
        /// Effect name
        effect: String,
        /// Scope
        scope: String,
        /// Cost in budget units
        #[arg(allow_negative_numbers = true)]
        cost: i64,
        #[command(flatten)]
        unattested: super::UnattestedFlag,
    },
}

/// Run `world broker …`.
pub fn run(ctx: &Context, out: &mut Output, cmd: Cmd) -> Result<Exit, CliError> {
    let Cmd::Check {
        session,
        effect,
        scope,
        cost,
        unattested,
    } = cmd;
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
    if out.json {
        out.json_line(&serde_json::json!({
            "allowed": d.denial.is_none(),
            "denial": d.denial.map(|x| x.label()),
            "budgetBefore": d.budget_before,
            "budgetAfter": d.budget_after,
            "grant": grant.as_ref().map(|g| g.spec()),
            "episode": s.episode,
        }))?;
    } else {
        match (d.denial, &grant) {
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
