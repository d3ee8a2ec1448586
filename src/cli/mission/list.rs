//! `world mission list`: every mission in the store (or the ledger).

use super::*;

pub(super) fn run(ctx: &Context, out: &mut Output, ledger: Option<&str>) -> Result<Exit, CliError> {
    let target = open_read(ctx, ledger, "mission list")?;
    let rows = target
        .with(|m| m.list())
        .map_err(|e| store_err("mission list", e))?;
    if out.json {
        for r in &rows {
            out.json_line(r)?;
        }
        return Ok(Exit::Success);
    }
    if rows.is_empty() {
        out.status(format!("no missions in {}", target.describe()));
        return Ok(Exit::Success);
    }
    let mut t = crate::cli::output::table(
        &[
            "mission", "revision", "budget", "reserved", "settled", "journal", "contract",
        ],
        out.color,
    );
    for r in &rows {
        t.add_row(vec![
            r.mission_id.clone(),
            r.revision.to_string(),
            r.budget.to_string(),
            r.reserved.to_string(),
            r.settled.to_string(),
            r.journal.to_string(),
            crate::cli::output::short(&r.contract_ref),
        ]);
    }
    out.line(t.to_string())?;
    Ok(Exit::Success)
}
