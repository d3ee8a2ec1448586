//! `world limits reconcile`: `--attempt A --actual X`, the actual cost of an UNKNOWN attempt on
//! evidence (attended), or `--from-store`, the HOST settling this store's paired attempts.

use super::*;

/// Run `world limits reconcile --attempt A --actual X`.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    attempt: Option<String>,
    actual: Option<String>,
    evidence: Evidence,
    common: Common,
) -> Result<Exit, CliError> {
    let (Some(attempt), Some(actual)) = (attempt, actual) else {
        return Err(CliError::usage(
            "limits reconcile",
            "pass --attempt A --actual X, or --from-store",
        ));
    };
    let place = match open_place_write(ctx, common.ledger.as_deref(), "limits reconcile", false)? {
        Ok(p) => p,
        Err(v) => return emit(out, "limits reconcile", &v),
    };
    let actual_cost = match amount(&place, &actual) {
        Ok(a) => a,
        Err(v) => return emit(out, "limits reconcile", &v),
    };
    let ev = EvidenceInput::read(&evidence, "limits reconcile")?;
    let job = Job {
        what: "limits reconcile",
        common: &common,
        command: Command::Reconcile {
            attempt_id: attempt,
            actual_cost,
            evidence_ref: ev.reference.clone(),
        },
        attendance: Attendance::Attended,
        evidence: Some(ev),
    };
    execute(ctx, out, &place, job)
}

/// `world limits reconcile --from-store`: the HOST settles this store's outstanding attempts in
/// the standalone ledger from the store's journal evidence (limits::pairing). One line per
/// attempt (`--json`: one object per line); exit 0 when none is left, 5 while any needs a human.
pub(super) fn from_store(
    ctx: &Context,
    out: &mut Output,
    common: &Common,
) -> Result<Exit, CliError> {
    let what = "limits reconcile --from-store";
    let Some(location) = common.ledger.as_deref() else {
        return Err(CliError::usage(
            what,
            "--from-store reconciles a standalone ledger: pass --ledger FILE|URL (or WORLD_LEDGER)",
        ));
    };
    // The writer lock: no invocation of this store is in flight while its attempts are read.
    let store = ctx.open_write(false)?;
    let ledger = match limits::open_standalone_ledger(location) {
        Ok(l) => l,
        Err(limits::Error::Rejected(v)) => return emit(out, "limits reconcile --from-store", &v),
        Err(e) => return Err(ledger_err(what, e)),
    };
    let now_ms = parse_now(common.now.as_deref())?;
    let name = ledger.describe();
    let (id, done) = match ops::limits::reconcile_from_store(&store, ledger, now_ms) {
        Ok(FromStore::NeverPaired) => {
            out.warn("this store was never paired with a standalone ledger: nothing to reconcile");
            return Ok(Exit::Success);
        }
        Ok(FromStore::Reconciled { store_id, done }) => (store_id, done),
        Err(FromStoreError::Store(e)) => return Err(CliError::store(what, e)),
        Err(FromStoreError::Pairing(e)) => return Err(pairing_err(what, e)),
    };
    let kept = print_reconciled(out, &done)?;
    if done.is_empty() {
        out.warn(format!("no outstanding attempts of {id} in {name}"));
    }
    Ok(if kept > 0 {
        Exit::Indeterminate
    } else {
        Exit::Success
    })
}

/// Print what `reconcile --from-store` did, one line (`--json`: one object) per attempt;
/// returns how many attempts still await a person. Shared with `world mission reconcile
/// --from-store`.
pub(in crate::cli) fn print_reconciled(
    out: &mut Output,
    done: &[crate::ledger::paired::Reconciled],
) -> Result<usize, CliError> {
    for r in done {
        if out.json {
            out.json_line(r)?;
        } else {
            out.line(r.to_string())?;
        }
    }
    Ok(done.iter().filter(|r| r.awaits_a_person()).count())
}

/// A pairing step's failure during `reconcile --from-store` as the one CLI error: a limits
/// rejection exit 4 (a mission's is the caller's) (with its code), an integrity refusal 3, a busy ledger 6, anything else 1
/// (what was applied before stays applied; each step is idempotent, so run it again).
pub(in crate::cli) fn pairing_err(what: &str, e: crate::broker::BrokerError) -> CliError {
    use crate::broker::BrokerError as B;
    match e {
        B::LimitsRejected(v) => crate::cli::error::limits_rejection(what, &v),
        B::LedgerIntegrity(m) => CliError::new(Exit::Integrity, what, m),
        B::LedgerBusy(m) => CliError::new(Exit::LockHeld, what, m)
            .hint("another process is writing the ledger; retry later (a lock wait is exit 6, docs/LEDGER.md)"),
        e => CliError::failed(what, e).hint(
            "what was reconciled before the failure stays reconciled; run the command again",
        ),
    }
}
