//! `world limits stop`: stop a scope and everything under it, on evidence.

use super::*;

/// Run `world limits stop`.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    scope: String,
    reason: String,
    evidence: Evidence,
    common: Common,
) -> Result<Exit, CliError> {
    let place = match open_place_write(ctx, common.ledger.as_deref(), "limits stop", false)? {
        Ok(p) => p,
        Err(v) => return emit(out, "limits stop", &v),
    };
    let ev = EvidenceInput::read(&evidence, "limits stop")?;
    let command = Command::Stop {
        scope_id: scope,
        reason,
        evidence_ref: ev.reference.clone(),
    };
    operator(ctx, out, &place, "limits stop", &common, command, Some(ev))
}
