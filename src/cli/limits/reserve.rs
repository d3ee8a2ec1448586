//! `world limits reserve`: reserve an attempt's maximum cost and active time against a scope
//! and its ancestors.

use super::*;

/// The flags of `world limits reserve`.
#[derive(ClapArgs, Debug)]
pub struct ReserveArgs {
    /// Target scope
    #[arg(long, value_name = "S")]
    scope: String,
    /// New attempt id
    #[arg(long, value_name = "A")]
    attempt: String,
    /// Operation id (default: the attempt id)
    #[arg(long, value_name = "O")]
    operation: Option<String>,
    /// Run id (informational)
    #[arg(long, value_name = "R")]
    run: Option<String>,
    /// ordinary or handoff (case-insensitive); an AGENT may reserve ordinary only
    #[arg(long, value_parser = parse_purpose, value_name = "ordinary|handoff")]
    purpose: Purpose,
    /// Maximum cost, a canonical unsigned decimal in the config's unit
    #[arg(long, value_name = "X", allow_hyphen_values = true)]
    amount: String,
    /// Maximum active time, milliseconds (canonical unsigned decimal)
    #[arg(long, value_name = "M", allow_hyphen_values = true)]
    max_active_ms: String,
    #[command(flatten)]
    pub(super) common: Common,
}

/// Run `world limits reserve`.
pub(super) fn run(ctx: &Context, out: &mut Output, a: ReserveArgs) -> Result<Exit, CliError> {
    let ReserveArgs {
        scope,
        attempt,
        operation,
        run,
        purpose,
        amount: amount_text,
        max_active_ms,
        common,
    } = a;
    let place = match open_place_write(ctx, common.ledger.as_deref(), "limits reserve", false)? {
        Ok(p) => p,
        Err(v) => return emit(out, "limits reserve", &v),
    };
    let parsed =
        amount(&place, &amount_text).and_then(|a| amount(&place, &max_active_ms).map(|m| (a, m)));
    let (amount_v, max_ms) = match parsed {
        Ok(p) => p,
        Err(v) => return emit(out, "limits reserve", &v),
    };
    let command = Command::Reserve {
        operation_id: operation.unwrap_or_else(|| attempt.clone()),
        attempt_id: attempt,
        scope_id: scope,
        run_id: run,
        purpose,
        amount: amount_v,
        max_active_ms: max_ms,
        paired: false,
    };
    operator(ctx, out, &place, "limits reserve", &common, command, None)
}
