//! `world mission reconcile --from-store`: settle the attempts this store paired with a
//! mission in a standalone ledger.

use super::*;

/// `world mission reconcile M --from-store --ledger L`: the HOST settles the attempts this
/// store paired with mission `M` in the standalone ledger from the store's journal evidence
/// (`mission::pairing::reconcile_from_store`), as `world limits reconcile --from-store` does
/// for limits (unattended: it acts only on the journal's evidence and never refunds a
/// dispatched attempt; DEC-MIS-14). One line per attempt (`--json`: one object per line);
/// exit 0 when nothing is left outstanding, 5 when an attempt was settled UNKNOWN and awaits
/// an attended `world mission reconcile`.
pub(super) fn reconcile_from_store(
    ctx: &Context,
    out: &mut Output,
    ledger: Option<&str>,
    mission: &str,
    common: &Common,
) -> Result<Exit, CliError> {
    let what = "mission reconcile --from-store";
    let Some(location) = ledger else {
        return Err(CliError::usage(
            what,
            "--from-store reconciles a mission in a standalone ledger: pass --ledger FILE|URL (or WORLD_LEDGER)",
        ));
    };
    let now = parse_now(common.now.as_deref())?;
    // The writer lock: no invocation of this store is in flight while its attempts are read.
    let store = ctx.open_write(false)?;
    let missions = crate::mission::ledger::open(location).map_err(|e| store_err(what, e))?;
    let name = missions.describe();
    let (id, done) = match ops::mission::reconcile_from_store(
        &store,
        missions,
        mission,
        now,
        common.now.is_none(),
    ) {
        Ok(ops::mission::FromStore::NeverPaired) => {
            out.warn("this store was never paired with a standalone ledger: nothing to reconcile");
            return Ok(Exit::Success);
        }
        Ok(ops::mission::FromStore::Reconciled { store_id, done }) => (store_id, done),
        Err(ops::mission::FromStoreError::Store(e)) => return Err(CliError::store(what, e)),
        Err(ops::mission::FromStoreError::Pairing(
            crate::broker::BrokerError::MissionRejected(r),
        )) => return Err(rejection(what, &r)),
        Err(ops::mission::FromStoreError::Pairing(e)) => {
            return Err(crate::cli::limits::reconcile::pairing_err(what, e))
        }
    };
    let unknown = crate::cli::limits::reconcile::print_reconciled(out, &done)?;
    if done.is_empty() {
        out.warn(format!(
            "no outstanding attempts of {id} in mission {mission} of {name}"
        ));
    }
    if unknown > 0 {
        out.status(format!(
            "{unknown} attempt(s) of {id} stay held until a person reconciles each with `world mission reconcile {mission} --attempt A --actual X --evidence-file F --ledger {}` (attended)",
            crate::ledger::location::location_arg(&name)
        ));
        return Ok(Exit::Indeterminate);
    }
    Ok(Exit::Success)
}
