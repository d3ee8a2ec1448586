//! `world limits adjust`: change a scope's limits or resume it (attended).

use super::*;

/// Run `world limits adjust`.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    scope: String,
    set: Vec<String>,
    resume: bool,
    evidence: Evidence,
    common: Common,
) -> Result<Exit, CliError> {
    if set.is_empty() && !resume {
        return Err(CliError::usage(
            "limits adjust",
            "nothing to change: pass --set KIND=VALUE|null and/or --resume",
        ));
    }
    let place = match open_place_write(ctx, common.ledger.as_deref(), "limits adjust", false)? {
        Ok(p) => p,
        Err(v) => return emit(out, "limits adjust", &v),
    };
    let limits = match parse_patch(&place, &set)? {
        Ok(p) => p,
        Err(v) => return emit(out, "limits adjust", &v),
    };
    let ev = EvidenceInput::read(&evidence, "limits adjust")?;
    let job = Job {
        what: "limits adjust",
        common: &common,
        command: Command::Adjust {
            scope_id: scope,
            limits,
            resume,
            evidence_ref: ev.reference.clone(),
        },
        attendance: Attendance::Attended,
        evidence: Some(ev),
    };
    execute(ctx, out, &place, job)
}
