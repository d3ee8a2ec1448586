//! `world mission revoke`: the grant and its delegations stop admitting.

use super::*;

/// `world mission revoke`: apply the `revoke` command to `mission`.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    ledger: Option<&str>,
    mission: &str,
    grant: &str,
    common: &Common,
) -> Result<Exit, CliError> {
    write_plain(
        ctx,
        out,
        ledger,
        "mission revoke",
        mission,
        common,
        &json!({"type": "revoke", "grantId": grant}),
    )
}
