//! `world status`: what a person asks first, in one read (issue 16 item 5).

use serde::Serialize;

use super::output::{rfc3339, Output};
use super::{CliError, Context, Exit};

/// Summarise the store: head, entry count, the last entry's outcome, registry revision, live
/// sessions, pending approvals, pending and indeterminate intents, blocked limits scopes.
///
/// Read-only (takes no lock). `--json` prints one object (docs/json/status.schema.json).
///
/// Examples:
///   world status
///   world status --json | jq .indeterminate
#[derive(clap::Args, Debug)]
pub struct Args {}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Status {
    db: String,
    head: Option<String>,
    entries: i64,
    last_index: Option<i64>,
    head_outcome: Option<crate::ops::outcome::Outcome>,
    head_invocation: Option<String>,
    registry_revision: Option<i64>,
    live_sessions: usize,
    pending_approvals: Vec<String>,
    pending_intents: Vec<String>,
    indeterminate: Vec<String>,
    blocked_scopes: Vec<String>,
    now: i64,
    now_text: String,
}

/// Run `world status`.
pub fn run(ctx: &Context, out: &mut Output, _args: Args) -> Result<Exit, CliError> {
    let what = "status";
    let store = ctx.open_read()?;
    let conn = store.conn();
    let now = ctx.now();
    let head = store.head().map_err(|e| CliError::store(what, e))?;
    let (_, last) = store.log_bounds().map_err(|e| CliError::store(what, e))?;
    // The last entry's outcome, in the words `log` and `show` use (DEC-UX-3).
    let mut last_row = None;
    crate::store::logview::for_each(
        conn,
        &crate::store::logview::Query {
            reverse: true,
            limit: Some(1),
            ..Default::default()
        },
        |r| {
            last_row = Some(r);
            Ok(())
        },
    )
    .map_err(|e| CliError::store(what, e))?;
    let head_outcome = match &last_row {
        Some(r) => {
            Some(crate::ops::outcome::of_row(&store, r).map_err(|e| CliError::store(what, e))?)
        }
        None => None,
    };
    let head_client = last_row.as_ref().is_some_and(|r| !r.coordinator);
    let head_invocation = last_row.and_then(|r| r.invocation_id);
    let registry_revision = crate::transitions::publish::read_head(conn)
        .ok()
        .flatten()
        .map(|h| h.revision.revision);
    let live_sessions = crate::authority::session::list(conn, None, now, false)
        .map_err(|e| CliError::store(what, e))?
        .iter()
        .filter(|s| s.live)
        .count();
    let pending_approvals = crate::authority::approvals::list(conn, None)
        .map(|all| {
            all.into_iter()
                .filter(|a| a.state.name() == "pending")
                .map(|a| a.request_ref)
                .collect()
        })
        .unwrap_or_default();
    // An intent without an outcome is indeterminate once nothing holds the writer lock
    // that could still finish it; `status` cannot know, so effect intents (which the
    // coordinator never leaves open on success) are indeterminate and commit intents pending.
    let mut pending_intents = Vec::new();
    let mut indeterminate = Vec::new();
    for (_, id, _) in crate::store::journal::pending(conn).map_err(|e| CliError::store(what, e))? {
        if id.starts_with("effect:") {
            indeterminate.push(id);
        } else {
            pending_intents.push(id);
        }
    }
    let blocked_scopes = crate::limits::report::report(conn, (now.max(0) as u128) * 1000, None)
        .map(|r| {
            r.scopes
                .into_iter()
                .filter(|s| s.blocked)
                .map(|s| s.scope_id)
                .collect()
        })
        .unwrap_or_default();
    let st = Status {
        db: ctx.db.display().to_string(),
        head,
        entries: last.map_or(0, |l| l + 1),
        last_index: last,
        head_outcome,
        head_invocation,
        registry_revision,
        live_sessions,
        pending_approvals,
        pending_intents,
        indeterminate,
        blocked_scopes,
        now,
        now_text: rfc3339(now),
    };
    if out.json {
        out.json_line(&st)?;
        return Ok(Exit::Success);
    }
    let list = |v: &[String]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            // Ids a client chose (`rest:…`) are shown escaped (DEC-TRUST3-4).
            format!(
                "{} ({})",
                v.len(),
                crate::termtext::escape_line(&v.join(", "))
            )
        }
    };
    out.view(format!("store               {}", st.db))?;
    out.view(format!(
        "head                {}",
        st.head.as_deref().unwrap_or("(none: run `world genesis`)")
    ))?;
    out.view(format!(
        "entries             {}{}",
        st.entries,
        st.last_index
            .map(|l| format!(" (last index {l})"))
            .unwrap_or_default()
    ))?;
    if let Some(o) = st.head_outcome {
        out.view(format!(
            "last outcome        {o}{}",
            match (st.head_invocation.as_deref(), head_client) {
                (Some(i), false) => format!(" ({})", crate::termtext::escape_line(i)),
                (Some(i), true) =>
                    format!(" (a client commit, {})", crate::termtext::escape_line(i)),
                (None, _) => " (a client commit)".into(),
            }
        ))?;
    }
    out.view(format!(
        "registry revision   {}",
        st.registry_revision
            .map(|r| r.to_string())
            .unwrap_or_else(|| "none (nothing published)".into())
    ))?;
    out.view(format!("live sessions       {}", st.live_sessions))?;
    out.view(format!(
        "pending approvals   {}",
        list(&st.pending_approvals)
    ))?;
    out.view(format!("pending intents     {}", list(&st.pending_intents)))?;
    out.view(format!("indeterminate       {}", list(&st.indeterminate)))?;
    out.view(format!("blocked scopes      {}", list(&st.blocked_scopes)))?;
    if !st.indeterminate.is_empty() {
        out.warn("indeterminate effects are never retried automatically; `world effects --pending` lists them");
    }
    Ok(Exit::Success)
}
