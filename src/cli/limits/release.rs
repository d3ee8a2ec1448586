//! `world limits release`: free a RESERVED attempt's reservation.

use super::*;

/// Run `world limits release`.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    attempt: String,
    common: Common,
) -> Result<Exit, CliError> {
    let place = match open_place_write(ctx, common.ledger.as_deref(), "limits release", false)? {
        Ok(p) => p,
        Err(v) => return emit(out, "limits release", &v),
    };
    let command = Command::Release {
        attempt_id: attempt,
        never_dispatched: false,
    };
    operator(ctx, out, &place, "limits release", &common, command, None)
}
