//! `world approval request|list|show|decide`: the person's side of `Human.Approve` /
//! `Human.PollApproval` (authority-and-broker.md §11–§12; DECISIONS H-13).

use clap::{Subcommand, ValueEnum};

use super::output::{short, Output};
use super::table::{Col, Table};
use super::{fence, CliError, Context, Exit};
use crate::authority::approvals::{self, Approval, ApprovalError, NewDecision, NewRequest};
use crate::broker::handlers::approval::{prompt_text, ApprovalState};
use crate::termtext::{escape_line, escape_text};

/// Approval commands.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Open a pending approval request for an episode and print its ref
    ///
    /// A transition passes the ref to Human.Approve (`{"op":"approve","approval_ref":R}`) or
    /// Human.PollApproval; a transition can also open one itself with
    /// `{"op":"approve","summary":TEXT}`.
    Request {
        /// The episode the request is bound to (only its sessions can use it)
        #[arg(long)]
        episode: String,
        /// What the approver is shown (at most 4096 bytes)
        #[arg(long)]
        summary: String,
        /// Who asks: 1-128 characters of [A-Za-z0-9._@:-]
        #[arg(long, default_value = "operator")]
        requester: String,
    },
    /// List approval requests with their state and the effect that consumed each
    List {
        /// Only this episode
        #[arg(long)]
        episode: Option<String>,
        /// Only requests in this state
        #[arg(long, value_enum)]
        state: Option<StateFilter>,
    },
    /// Show one approval request with its decision and claim
    Show {
        /// The request ref: sha256:<hex>, the bare hex, or a unique prefix (≥ 6 hex)
        #[arg(value_name = "REF")]
        reference: String,
    },
    /// Decide a pending request (attended: a human confirms at the terminal)
    ///
    /// --yes skips the terminal for scripts and is recorded as unattended in the decision.
    /// A decision is written once; an approval is consumed by the first Human.Approve effect
    /// of the request's episode that claims it.
    Decide {
        /// The request ref: sha256:<hex>, the bare hex, or a unique prefix (≥ 6 hex)
        #[arg(value_name = "REF")]
        reference: String,
        /// Approve the request
        #[arg(long, conflicts_with = "deny", required_unless_present = "deny")]
        approve: bool,
        /// Deny the request
        #[arg(long)]
        deny: bool,
        /// Who decides: 1-128 characters of [A-Za-z0-9._@:-]
        #[arg(long, default_value = "operator")]
        decided_by: String,
        /// No terminal confirmation (scripts, CI): recorded as unattended
        #[arg(long)]
        yes: bool,
    },
}

/// `--state` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StateFilter {
    /// Not decided yet
    Pending,
    /// Approved (consumed or not)
    Approved,
    /// Denied
    Denied,
}

/// Resolve an approval-request ref argument (full, bare hex or unique prefix; DEC-CLI-19).
fn check_ref(ctx: &Context, what: &str, reference: &mut String) -> Result<(), CliError> {
    let store = ctx.open_read()?;
    let space = crate::store::refs::Space::ObjectOf(crate::store::records::APPROVAL_REQUEST);
    *reference = super::refs::resolve_usage(&store, &[space], reference, what)?.reference;
    Ok(())
}

fn approval_err(what: &str, e: ApprovalError) -> CliError {
    match e {
        ApprovalError::Store(s) => CliError::store(what, s),
        ApprovalError::Corrupt { .. } => CliError::new(Exit::Integrity, what, e),
        ApprovalError::Invalid(_) => CliError::usage(what, e),
        other => CliError::failed(what, other),
    }
}

fn state_text(a: &Approval) -> String {
    match (&a.claimed_by, a.state.name()) {
        (Some(_), "approved") => "approved, consumed".into(),
        (_, s) => s.into(),
    }
}

fn print_one(out: &mut Output, a: &Approval) -> Result<(), CliError> {
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

/// Run `world approval …`.
pub fn run(ctx: &Context, out: &mut Output, cmd: Cmd) -> Result<Exit, CliError> {
    match cmd {
        Cmd::Request {
            episode,
            summary,
            requester,
        } => request(ctx, out, episode, summary, requester),
        Cmd::List { episode, state } => list(ctx, out, episode, state),
        Cmd::Show { reference } => show(ctx, out, reference),
        Cmd::Decide {
            reference,
            approve,
            deny,
            decided_by,
            yes,
        } => decide(ctx, out, reference, approve, deny, decided_by, yes),
    }
}

/// `world approval request`: open a pending request and print its ref.
fn request(
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

/// `world approval list`: the requests (of one episode, in one state), as a table or JSON lines.
fn list(
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

/// `world approval show REF`.
fn show(ctx: &Context, out: &mut Output, mut reference: String) -> Result<Exit, CliError> {
    let what = "approval show";
    check_ref(ctx, what, &mut reference)?;
    let store = ctx.open_read()?;
    let a = approvals::get(store.conn(), &reference)
        .map_err(|e| approval_err(what, e))?
        .ok_or_else(|| approval_err(what, ApprovalError::NotFound(reference.clone())))?;
    print_one(out, &a)?;
    Ok(Exit::Success)
}

/// `world approval decide REF`: write the decision once, attended unless `--yes`.
fn decide(
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
            .map_err(|e| {
                let mut err = CliError::new(Exit::Integrity, what, format!("terminal: {e}"));
                if fence::timed_out(&e) {
                    err.verbatim = Some(format!("aborted ({e}); nothing was written"));
                }
                err
            })?;
        if !crate::broker::handlers::approval::is_yes(&answer.unwrap_or_default()) {
            let mut err = CliError::new(Exit::Integrity, what, "");
            err.verbatim = Some("aborted (not confirmed); nothing was written".into());
            return Err(err);
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
