//! Approval requests and decisions made from the command line (authority-and-broker.md §11,
//! DECISIONS H-13): each one transaction. The attended confirmation is the caller's.

use crate::authority::approvals::{self, ApprovalError, NewDecision, NewRequest};
use crate::store::{self, Store};

/// Open a pending request; its ref.
///
/// # Errors
/// [`ApprovalError`]; nothing is written on error.
pub fn request(store: &mut Store, req: &NewRequest<'_>) -> Result<String, ApprovalError> {
    let tx = store.immediate()?;
    let r = approvals::open_request(&tx, req)?;
    tx.commit().map_err(store::Error::from)?;
    Ok(r)
}

/// Record the (only) decision of a pending request; the decision's ref.
///
/// # Errors
/// [`ApprovalError`] (unknown request, already decided, a bad decider name); nothing is
/// written on error.
pub fn decide(
    store: &mut Store,
    request_ref: &str,
    decision: &NewDecision<'_>,
) -> Result<String, ApprovalError> {
    let tx = store.immediate()?;
    let d = approvals::decide(&tx, request_ref, decision, None)?;
    tx.commit().map_err(store::Error::from)?;
    Ok(d)
}
