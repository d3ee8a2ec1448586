//! `world limits settle`: a DISPATCHED attempt's outcome and actual cost.

use super::*;

/// Run `world limits settle`.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    attempt: String,
    settle: crate::cli::common::SettleArgs,
    common: Common,
) -> Result<Exit, CliError> {
    let crate::cli::common::SettleArgs { actual, failed, .. } = settle;
    let place = match open_place_write(ctx, common.ledger.as_deref(), "limits settle", false)? {
        Ok(p) => p,
        Err(v) => return emit(out, "limits settle", &v),
    };
    let (outcome, actual_cost) = match actual {
        None => (Outcome::Unknown, None),
        Some(text) => match amount(&place, &text) {
            Ok(a) if failed => (Outcome::Failed, Some(a)),
            Ok(a) => (Outcome::Succeeded, Some(a)),
            Err(v) => return emit(out, "limits settle", &v),
        },
    };
    let command = Command::Settle {
        attempt_id: attempt,
        outcome,
        actual_cost,
        effect_outcome: false,
    };
    operator(ctx, out, &place, "limits settle", &common, command, None)
}
