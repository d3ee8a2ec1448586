//! `world mission settle`: --actual X (SUCCEEDED, or FAILED with --failed), or
//! --unknown (keeps the reservation).

use super::*;

/// `world mission settle`: apply the `settle` command to `mission`.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    ledger: Option<&str>,
    mission: &str,
    attempt: &str,
    settle: &SettleArgs,
    common: &Common,
) -> Result<Exit, CliError> {
    let v = match &settle.actual {
        None => json!({"type": "settle", "attemptId": attempt, "outcome": "UNKNOWN"}),
        Some(a) => {
            json!({"type": "settle", "attemptId": attempt, "outcome": if settle.failed { "FAILED" } else { "SUCCEEDED" }, "actualCost": a})
        }
    };
    write_plain(ctx, out, ledger, "mission settle", mission, common, &v)
}
