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
    let now = ctx.now();
    let s = crate::ops::status::summary(&store, now).map_err(|e| CliError::store(what, e))?;
    let head_client = s.head_client;
    let st = Status {
        db: ctx.db.display().to_string(),
        head: s.head,
        entries: s.last_index.map_or(0, |l| l + 1),
        last_index: s.last_index,
        head_outcome: s.head_outcome,
        head_invocation: s.head_invocation,
        registry_revision: s.registry_revision,
        live_sessions: s.live_sessions,
        pending_approvals: s.pending_approvals,
        pending_intents: s.pending_intents,
        indeterminate: s.indeterminate,
        blocked_scopes: s.blocked_scopes,
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
