//! The `session mint --mission` binding checks (missions.md §7).

use super::*;

/// Check a `session mint --mission M --mission-run R --mission-grant G` binding: the mission,
/// the run and the grant exist (missions.md §7).
///
/// # Errors
/// Exit 1 naming what is missing, or why the mission does not load.
pub fn check_binding(
    what: &str,
    conn: &Connection,
    m: &session::MissionBinding,
) -> Result<(), CliError> {
    let s = mstore::load_full(conn, &m.mission_id).map_err(|e| CliError::failed(what, e))?;
    match binding_problem(&s, m) {
        Some(p) => Err(CliError::failed(what, p)),
        None => Ok(()),
    }
}

/// [`check_binding`] for a mission in a standalone ledger: the mission, run and grant exist
/// in `missions` (issue 18, DEC-MIS-14).
///
/// # Errors
/// Exit 1 naming what is missing (and the ledger), or the ledger's error.
pub fn check_binding_in(
    what: &str,
    missions: &dyn MissionStore,
    m: &session::MissionBinding,
) -> Result<(), CliError> {
    let s = missions.state(&m.mission_id).map_err(|e| match e {
        mstore::Error::Rejected(r) => {
            CliError::failed(what, format!("{r} (in ledger {})", missions.describe()))
        }
        e => store_err(what, e),
    })?;
    match binding_problem(&s, m) {
        Some(p) => Err(CliError::failed(what, p)),
        None => Ok(()),
    }
}

/// What is missing from mission state `s` for binding `m`, if anything.
pub(super) fn binding_problem(s: &State, m: &session::MissionBinding) -> Option<String> {
    if !s.runs.contains_key(&m.run_id) {
        return Some(format!(
            "--mission-run {}: no such run in mission {}",
            m.run_id, m.mission_id
        ));
    }
    if !s.grants.contains_key(&m.grant_id) {
        return Some(format!(
            "--mission-grant {}: no such grant in mission {}",
            m.grant_id, m.mission_id
        ));
    }
    None
}
