//! `world approval show REF`: one approval request with its decision and claim.

use super::view::{check_ref, print_one};
use crate::authority::approvals::{self, ApprovalError};
use crate::cli::error::approval_err;
use crate::cli::output::Output;
use crate::cli::{CliError, Context, Exit};

/// `world approval show REF`.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    mut reference: String,
) -> Result<Exit, CliError> {
    let what = "approval show";
    check_ref(ctx, what, &mut reference)?;
    let store = ctx.open_read()?;
    let a = approvals::get(store.conn(), &reference)
        .map_err(|e| approval_err(what, e))?
        .ok_or_else(|| approval_err(what, ApprovalError::NotFound(reference.clone())))?;
    print_one(out, &a)?;
    Ok(Exit::Success)
}
