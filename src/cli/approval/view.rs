//! What the approval verbs share: the request ref argument and one request's text view.

use crate::authority::approvals::Approval;
use crate::cli::output::Output;
use crate::cli::{CliError, Context};
use crate::termtext::{escape_line, escape_text};

/// Resolve an approval-request ref argument (full, bare hex or unique prefix; DEC-CLI-19).
pub(super) fn check_ref(ctx: &Context, what: &str, reference: &mut String) -> Result<(), CliError> {
    let store = ctx.open_read()?;
    let space = crate::store::refs::Space::ObjectOf(crate::store::records::APPROVAL_REQUEST);
    *reference = crate::cli::refs::resolve_usage(&store, &[space], reference, what)?.reference;
    Ok(())
}

/// The state as the table and the view print it (`approved, consumed` once claimed).
pub(super) fn state_text(a: &Approval) -> String {
    match (&a.claimed_by, a.state.name()) {
        (Some(_), "approved") => "approved, consumed".into(),
        (_, s) => s.into(),
    }
}

/// One request as a view (`--json`: the object).
pub(super) fn print_one(out: &mut Output, a: &Approval) -> Result<(), CliError> {
    if out.json {
        out.json_line(a)?;
        return Ok(());
    }
    out.view(format!("request   {}", escape_line(&a.request_ref)))?;
    out.view(format!("episode   {}", escape_line(&a.episode)))?;
    out.view(format!("state     {}", escape_line(&state_text(a))))?;
    out.view(format!(
        "requested by {} at {} (origin {})",
        escape_line(&a.requester),
        crate::authority::session::rfc3339(a.created_at),
        escape_line(&a.origin)
    ))?;
    if let (Some(d), Some(by), Some(at), Some(att)) = (
        a.state.decision_ref(),
        &a.decided_by,
        a.decided_at,
        a.attended,
    ) {
        out.view(format!(
            "decision  {} by {} at {}{}",
            escape_line(d),
            escape_line(by),
            crate::authority::session::rfc3339(at),
            if att { "" } else { " [unattended]" }
        ))?;
    }
    if let Some(c) = &a.claimed_by {
        out.view(format!("consumed by {}", escape_line(c)))?;
    }
    out.view("summary:")?;
    for l in escape_text(&a.summary).lines() {
        out.line(format!("  {l}"))?;
    }
    Ok(())
}
