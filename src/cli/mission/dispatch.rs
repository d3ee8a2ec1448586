//! `world mission dispatch`: ADMITTED -> DISPATCHED, before any external call.

use super::*;

/// `world mission dispatch`: apply the `dispatch` command to `mission`.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    ledger: Option<&str>,
    mission: &str,
    attempt: &str,
    common: &Common,
) -> Result<Exit, CliError> {
    write_plain(
        ctx,
        out,
        ledger,
        "mission dispatch",
        mission,
        common,
        &json!({"type": "dispatch", "attemptId": attempt}),
    )
}
