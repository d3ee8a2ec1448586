//! `world mission release`: ADMITTED -> RELEASED (the attempt still counts).

use super::*;

/// `world mission release`: apply the `release` command to `mission`.
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
        "mission release",
        mission,
        common,
        &json!({"type": "release", "attemptId": attempt}),
    )
}
