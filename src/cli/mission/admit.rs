//! `world mission admit`: reserve an attempt's maximum exposure against the mission and the
//! grant chain.

use super::*;

/// The flags of `world mission admit`.
#[derive(ClapArgs, Debug)]
pub struct AdmitArgs {
    /// The mission id
    mission: String,
    /// Run id
    #[arg(long, value_name = "R")]
    run: String,
    /// Operation id (retries share it)
    #[arg(long, value_name = "O")]
    operation: String,
    /// Attempt id (unique; also the default idempotency key)
    #[arg(long, value_name = "A")]
    attempt: String,
    /// The grant acted under
    #[arg(long, value_name = "G")]
    grant: String,
    /// Who acts
    #[arg(long, value_name = "S")]
    subject: String,
    /// The capability
    #[arg(long, value_name = "C")]
    capability: String,
    /// The resource
    #[arg(long, value_name = "X")]
    resource: String,
    /// Maximum exposure to reserve
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    amount: String,
    /// Opaque payload JSON for the adapter
    #[arg(long, value_name = "JSON", default_value = "{}")]
    payload: String,
    /// Opaque preconditions JSON for the adapter
    #[arg(long, value_name = "JSON", default_value = "{}")]
    preconditions: String,
    /// When authorization was last checked: Unix ms or RFC 3339 (default: --now)
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    authorization_checked_at: Option<String>,
    /// The policy decision (ALLOW admits)
    #[arg(long, value_name = "P", default_value = "ALLOW")]
    policy: String,
    /// The mandatory checks failed
    #[arg(long)]
    mandatory_checks_failed: bool,
    /// An operation that must have SUCCEEDED first (repeatable; contract feature graphs)
    #[arg(long = "depends-on", value_name = "O")]
    depends_on: Vec<String>,
    #[command(flatten)]
    common: Common,
}

/// Run `world mission admit`.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    ledger: Option<&str>,
    a: &AdmitArgs,
) -> Result<Exit, CliError> {
    let AdmitArgs {
        mission,
        run,
        operation,
        attempt,
        grant,
        subject,
        capability,
        resource,
        amount,
        payload,
        preconditions,
        authorization_checked_at,
        policy,
        mandatory_checks_failed,
        depends_on,
        common,
    } = a;
    let opaque = |name: &str, text: &str| -> Result<Value, CliError> {
        serde_json::from_str(text).map_err(|e| CliError::usage(name, format!("not JSON: {e}")))
    };
    let now = parse_now(common.now.as_deref())?;
    let checked = match authorization_checked_at {
        Some(t) => time_arg("--authorization-checked-at", t)?,
        None => now.to_string(),
    };
    let mut v = json!({"type": "admit", "runId": run, "operationId": operation, "attemptId": attempt,
        "grantId": grant, "subject": subject,
        "action": {"capability": capability, "resource": resource,
            "payload": opaque("--payload", payload)?, "preconditions": opaque("--preconditions", preconditions)?},
        "amount": amount, "authorizationCheckedAt": checked, "policy": policy,
        "mandatoryChecksOk": !mandatory_checks_failed});
    if !depends_on.is_empty() {
        v["dependsOn"] = json!(depends_on);
    }
    write(
        ctx,
        out,
        Job {
            now: Some(now),
            ..plain("mission admit", ledger, mission, common, build(&v))
        },
    )
}
