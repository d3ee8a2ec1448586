//! `world mission grant`: a root grant, or a delegation with `--parent` (attenuation only).

use super::*;

/// The flags of `world mission grant`.
#[derive(ClapArgs, Debug)]
pub struct GrantArgs {
    /// The mission id
    mission: String,
    /// Grant id
    #[arg(long, value_name = "G")]
    id: String,
    /// The parent grant (a delegation)
    #[arg(long, value_name = "P")]
    parent: Option<String>,
    /// Who may act under the grant
    #[arg(long, value_name = "S")]
    subject: String,
    /// A capability (repeatable)
    #[arg(long = "action", value_name = "A", required = true)]
    actions: Vec<String>,
    /// A resource (repeatable)
    #[arg(long = "resource", value_name = "X", required = true)]
    resources: Vec<String>,
    /// Live from (inclusive): Unix ms or RFC 3339, as --now
    #[arg(
        long,
        value_name = "TIME",
        default_value = "0",
        allow_hyphen_values = true
    )]
    not_before: String,
    /// Live until (exclusive): Unix ms or RFC 3339, as --now
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    expires_at: String,
    /// Ceiling on the chain's share of reserved + settled
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    limit: String,
    /// The subject may delegate
    #[arg(long)]
    can_delegate: bool,
    /// Remaining delegation depth
    #[arg(
        long,
        value_name = "N",
        default_value = "0",
        allow_hyphen_values = true
    )]
    depth: String,
    #[command(flatten)]
    common: Common,
}

/// Run `world mission grant`.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    ledger: Option<&str>,
    a: &GrantArgs,
) -> Result<Exit, CliError> {
    let GrantArgs {
        mission,
        id,
        parent,
        subject,
        actions,
        resources,
        not_before,
        expires_at,
        limit,
        can_delegate,
        depth,
        common,
    } = a;
    let not_before = time_arg("--not-before", not_before)?;
    let expires_at = time_arg("--expires-at", expires_at)?;
    let mut v = json!({"type": "grant", "grant": {"id": id, "subject": subject, "profile": "finite-v1",
        "actions": actions, "resources": resources, "notBefore": not_before, "expiresAt": expires_at,
        "limit": limit, "canDelegate": can_delegate, "depth": depth}});
    if let Some(p) = parent {
        v["parentId"] = p.clone().into();
    }
    write(
        ctx,
        out,
        plain("mission grant", ledger, mission, common, build(&v)),
    )
}
