//! `world approval request`: open a pending approval request for an episode.

use crate::authority::approvals::{self, NewRequest};
use crate::cli::error::approval_err;
use crate::cli::output::Output;
use crate::cli::{CliError, Context, Exit};

/// `world approval request`: open a pending request and print its ref.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    episode: String,
    summary: String,
    requester: String,
) -> Result<Exit, CliError> {
    let what = "approval request";
    let nonce = crate::authority::session::new_token().map_err(|e| CliError::failed(what, e))?;
    let origin = format!("cli:{}", &nonce[..32]);
    let req = NewRequest {
        scope: approvals::CLI_SCOPE,
        cost: 0,
        episode: &episode,
        summary: &summary,
        requester: &requester,
        origin: &origin,
        now: ctx.now(),
    };
    // Check the input before taking the lock, so bad input never waits on it.
    crate::authority::session::check_episode(&episode).map_err(|e| CliError::usage(what, e))?;
    crate::broker::handlers::approval::check_summary(&summary)
        .map_err(|e| CliError::usage(what, e))?;
    approvals::check_name("--requester", &requester).map_err(|e| approval_err(what, e))?;
    let mut store = ctx.open_write(false)?;
    let r = crate::ops::approval::request(&mut store, &req).map_err(|e| approval_err(what, e))?;
    if out.json {
        out.json_line(
            &serde_json::json!({"requestRef": r, "episode": episode, "state": "pending"}),
        )?;
    } else {
        out.line(&r)?;
        out.status(format!(
            "opened approval request for episode {episode}; a transition passes it to Human.Approve as approval_ref"
        ));
    }
    Ok(Exit::Success)
}
