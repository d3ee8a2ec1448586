//! `world status`: what a person asks first, read in one place (issue 16 item 5, issue 28
//! item 1). The front end prints a [`Summary`]; nothing is written and no lock is taken.

use crate::ops::outcome::{self, Outcome};
use crate::store::read::LogQuery;
use crate::store::{Error, Store};

/// The store summarised: head, the last entry, registry revision, sessions, approvals,
/// intents and limits scopes.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// The selected world head, if any.
    pub head: Option<String>,
    /// The last log entry's index, if the log has any.
    pub last_index: Option<i64>,
    /// The last entry's outcome, in the words `log` and `show` use (DEC-UX-3).
    pub head_outcome: Option<Outcome>,
    /// Whether the last entry is a client commit (not a coordinator entry).
    pub head_client: bool,
    /// The invocation id the last entry was written for, if known.
    pub head_invocation: Option<String>,
    /// The transition registry head's revision number (`None`: no registry, or unreadable).
    pub registry_revision: Option<i64>,
    /// How many session credentials are live at `now`.
    pub live_sessions: usize,
    /// The request refs of pending approvals.
    pub pending_approvals: Vec<String>,
    /// Commit intents without an outcome (not effects).
    pub pending_intents: Vec<String>,
    /// Effect intents without an outcome: indeterminate.
    pub indeterminate: Vec<String>,
    /// The limits scopes blocked at `now`.
    pub blocked_scopes: Vec<String>,
}

/// Read the [`Summary`] of `store` at `now` (Unix seconds). The registry revision, pending
/// approvals and blocked scopes are best effort (an unreadable one reads as none), as `status`
/// has always shown them.
///
/// An intent without an outcome is indeterminate once nothing holds the writer lock that
/// could still finish it; `status` cannot know, so effect intents (which the coordinator
/// never leaves open on success) are indeterminate and commit intents pending.
///
/// # Errors
/// Store reads of the head, the log, the sessions and the journal.
pub fn summary(store: &Store, now: i64) -> Result<Summary, Error> {
    let head = store.head()?;
    let (_, last_index) = store.log_bounds()?;
    let mut last_row = None;
    store.log_rows(
        &LogQuery {
            reverse: true,
            limit: Some(1),
            ..Default::default()
        },
        |r| {
            last_row = Some(r);
            Ok(())
        },
    )?;
    let head_outcome = match &last_row {
        Some(r) => Some(outcome::of_row(store, r)?),
        None => None,
    };
    let head_client = last_row.as_ref().is_some_and(|r| !r.coordinator);
    let head_invocation = last_row.and_then(|r| r.invocation_id);
    let registry_revision = crate::transitions::publish::registry_head(store)
        .ok()
        .flatten()
        .map(|h| h.revision.revision);
    let conn = store.conn();
    let live_sessions = crate::authority::session::list(conn, None, now, false)?
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
    let mut pending_intents = Vec::new();
    let mut indeterminate = Vec::new();
    for (_, id, _) in store.pending_intents()? {
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
    Ok(Summary {
        head,
        last_index,
        head_outcome,
        head_client,
        head_invocation,
        registry_revision,
        live_sessions,
        pending_approvals,
        pending_intents,
        indeterminate,
        blocked_scopes,
    })
}
