//! `world package status`: the store's publish approvals (spent or not, expiry) and its
//! `Registry.Publish` effects (succeeded, failed, indeterminate). Read only.

use crate::cli::output::{rfc3339, short, table, Output};
use crate::cli::{CliError, Context, Exit};
use crate::ops::package;

/// List publish approvals and effects.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Run `world package status`.
pub fn run(ctx: &Context, out: &mut Output, _a: Args) -> Result<Exit, CliError> {
    const WHAT: &str = "package status";
    let store = ctx.open_read()?;
    let report = package::status(&store).map_err(|e| CliError::failed(WHAT, e))?;
    if out.json {
        out.json_line(&report)?;
        return Ok(Exit::Success);
    }
    let mut t = table(
        &["APPROVAL", "STATE", "SCOPE", "EXPIRES", "SPENT BY"],
        out.color,
    );
    for a in &report.approvals {
        t.add_row(vec![
            short(&a.approval_ref),
            a.state.to_string(),
            a.scope.clone(),
            rfc3339(a.expires_at),
            a.claimed_by.clone().unwrap_or_else(|| "-".into()),
        ]);
    }
    out.line(format!("{} publish approval(s)", report.approvals.len()))?;
    if !report.approvals.is_empty() {
        out.table(&t)?;
    }
    let mut t = table(&["INTENT", "STATE", "SCOPE", "RECORD"], out.color);
    for e in &report.effects {
        t.add_row(vec![
            e.intent_id.clone(),
            e.state.clone(),
            e.scope.clone(),
            e.record_ref.as_deref().map_or_else(|| "-".into(), short),
        ]);
    }
    out.line(format!(
        "{} Registry.Publish effect(s)",
        report.effects.len()
    ))?;
    if !report.effects.is_empty() {
        out.table(&t)?;
    }
    Ok(Exit::Success)
}
