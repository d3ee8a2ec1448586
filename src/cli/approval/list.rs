//! `world approval list`: approval requests with their state and the effect that consumed each.

use super::view::state_text;
use super::StateFilter;
use crate::authority::approvals::{self, Approval};
use crate::broker::handlers::approval::ApprovalState;
use crate::cli::error::approval_err;
use crate::cli::output::{short, Output};
use crate::cli::table::{Col, Table};
use crate::cli::{CliError, Context, Exit};
use crate::termtext::escape_line;

/// `world approval list`: the requests (of one episode, in one state), as a table or JSON lines.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    episode: Option<String>,
    state: Option<StateFilter>,
) -> Result<Exit, CliError> {
    if let Some(ep) = &episode {
        crate::authority::session::check_episode(ep)
            .map_err(|e| CliError::usage("approval list", e))?;
    }
    let store = ctx.open_read()?;
    let rows = approvals::list(store.conn(), episode.as_deref())
        .map_err(|e| approval_err("approval list", e))?;
    let rows: Vec<Approval> = rows
        .into_iter()
        .filter(|a| match state {
            None => true,
            Some(StateFilter::Pending) => a.state == ApprovalState::Pending,
            Some(StateFilter::Approved) => {
                matches!(a.state, ApprovalState::Approved { .. })
            }
            Some(StateFilter::Denied) => matches!(a.state, ApprovalState::Denied { .. }),
        })
        .collect();
    if out.json {
        for a in &rows {
            out.json_line(a)?;
        }
        return Ok(Exit::Success);
    }
    // docs/TABLES.md: REQUEST (the short ref `approval show` takes) and STATE
    // always; SUMMARY is cut first; then SUMMARY, CONSUMED BY and EPISODE are
    // hidden in that order.
    let mut t = Table::new(vec![
        Col::id("request"),
        Col::id("episode").drop(3),
        Col::id("state"),
        Col::id("consumed by").drop(2),
        Col::text("summary").drop(1),
    ]);
    for a in &rows {
        let mut summary = escape_line(a.summary.lines().next().unwrap_or("")).into_owned();
        let more = a.summary.lines().count().saturating_sub(1);
        if more > 0 {
            summary.push_str(&format!(" (+{more} line(s))"));
        }
        t.add_row(vec![
            short(&a.request_ref),
            a.episode.clone(),
            state_text(a),
            a.claimed_by.clone().unwrap_or_default(),
            summary,
        ]);
    }
    if !rows.is_empty() {
        out.table(&t)?;
    }
    out.status(format!("{} approval request(s)", rows.len()));
    Ok(Exit::Success)
}
