//! `world mission start-run`: a new ACTIVE run.

use super::*;

/// `world mission start-run`: apply the `startRun` command to `mission`.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    ledger: Option<&str>,
    mission: &str,
    run: &str,
    common: &Common,
) -> Result<Exit, CliError> {
    write_plain(
        ctx,
        out,
        ledger,
        "mission start-run",
        mission,
        common,
        &json!({"type": "startRun", "runId": run}),
    )
}
