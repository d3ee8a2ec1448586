//! `world approval decide REF`: write a decision once, attended unless `--yes`.

use super::view::check_ref;
use crate::authority::approvals::{self, ApprovalError, NewDecision};
use crate::broker::handlers::approval::prompt_text;
use crate::cli::error::approval_err;
use crate::cli::output::{short, Output};
use crate::cli::{fence, CliError, Context, Exit};

/// `world approval decide REF`: write the decision once, attended unless `--yes`.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    mut reference: String,
    approve: bool,
    deny: bool,
    decided_by: String,
    yes: bool,
) -> Result<Exit, CliError> {
    let what = "approval decide";
    check_ref(ctx, what, &mut reference)?;
    approvals::check_name("--decided-by", &decided_by).map_err(|e| approval_err(what, e))?;
    let approved = approve && !deny;
    // Read what is being decided first; the person answers without the lock held.
    let current = {
        let store = ctx.open_read()?;
        approvals::get(store.conn(), &reference)
            .map_err(|e| approval_err(what, e))?
            .ok_or_else(|| approval_err(what, ApprovalError::NotFound(reference.clone())))?
    };
    if let Some(d) = current.state.decision_ref() {
        return Err(approval_err(
            what,
            ApprovalError::AlreadyDecided {
                request: reference.clone(),
                state: current.state.name(),
                decision: d.to_owned(),
            },
        ));
    }
    if !yes {
        let mut tty = fence::attended(what, "deciding an approval")?;
        let verb = if approved { "APPROVE" } else { "DENY" };
        let answer = tty
            .ask(&format!(
                "{} [y/N] ",
                prompt_text(&current.episode, &reference, &current.summary, verb)
            ))
            .map_err(|e| CliError::terminal(what, &e))?;
        if !crate::broker::handlers::approval::is_yes(&answer.unwrap_or_default()) {
            return Err(CliError::aborted(
                what,
                "aborted (not confirmed); nothing was written",
            ));
        }
    }
    let mut store = ctx.open_write(false)?;
    let d = crate::ops::approval::decide(
        &mut store,
        &reference,
        &NewDecision {
            approved,
            decided_by: &decided_by,
            attended: !yes,
            now: ctx.now(),
        },
    )
    .map_err(|e| approval_err(what, e))?;
    let state = if approved { "approved" } else { "denied" };
    if out.json {
        out.json_line(&serde_json::json!({"requestRef": reference, "state": state, "decisionRef": d, "attended": !yes}))?;
    } else {
        out.line(&d)?;
        out.status(format!(
            "{state} approval request {}{}",
            short(&reference),
            if yes { " [unattended]" } else { "" }
        ));
    }
    Ok(Exit::Success)
}
