//! `world limits dispatch`: a RESERVED attempt becomes DISPATCHED, before any external call.

use super::*;

/// Run `world limits dispatch`.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    attempt: String,
    common: Common,
) -> Result<Exit, CliError> {
    let place = match open_place_write(ctx, common.ledger.as_deref(), "limits dispatch", false)? {
        Ok(p) => p,
        Err(v) => return emit(out, "limits dispatch", &v),
    };
    let command = Command::Dispatch {
        attempt_id: attempt,
    };
    operator(ctx, out, &place, "limits dispatch", &common, command, None)
}
