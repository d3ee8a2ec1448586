//! `world mission approve`: the HUMAN approves an operation on evidence (attended).

use super::*;

/// Run `world mission approve`.
pub(super) fn approve(
    ctx: &Context,
    out: &mut Output,
    ledger: Option<&str>,
    mission: &str,
    operation: &str,
    evidence: &Evidence,
    common: &Common,
) -> Result<Exit, CliError> {
    // The evidence ref is filled in once resolved; a placeholder keeps parsing strict.
    let v = json!({"type": "approve", "operationId": operation, "evidenceRef": HashRef::of(b"").to_string()});
    write(
        ctx,
        out,
        attended(
            "mission approve",
            ledger,
            mission,
            common,
            build(&v),
            evidence,
        ),
    )
}
