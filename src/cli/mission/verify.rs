//! `world mission verify`: re-fold every journal and compare it with the stored state, outbox
//! and hash chain (read-only; exit 3 on a finding).

use super::*;

/// `world mission verify`: every mission's journal re-folded and compared with the stored
/// state, outbox and hash chain (the mission part of `world verify`, for a ledger too). One
/// line per finding (`--json`: one object each; when clean, one `{"ok":true,"findings":0,
/// "place":…}` object); exit 0 when clean, 3 on any finding.
pub(super) fn run(ctx: &Context, out: &mut Output, ledger: Option<&str>) -> Result<Exit, CliError> {
    let what = "mission verify";
    let target = open_read(ctx, ledger, what)?;
    let problems = target
        .with(|m| m.verify())
        .map_err(|e| store_err(what, e))?;
    for p in &problems {
        if out.json {
            out.json_line(&json!({"category": p.category, "missionId": p.mission_id, "seq": p.seq, "reason": p.reason}))?;
        } else {
            out.line(format!(
                "{} mission={}{}: {}",
                p.category,
                p.mission_id,
                p.seq.map(|s| format!(" seq={s}")).unwrap_or_default(),
                p.reason
            ))?;
        }
    }
    if problems.is_empty() {
        if out.json {
            // A clean result is data too (as `world --json verify`'s `"ok":true`): a script
            // reading stdout tells "clean" from "did not run".
            out.json_line(&json!({"ok": true, "findings": 0, "place": target.describe()}))?;
        }
        out.status(format!(
            "ok: every mission journal in {} folds to its stored state",
            target.describe()
        ));
        Ok(Exit::Success)
    } else {
        out.status(format!("{} finding(s)", problems.len()));
        Ok(Exit::found_break(true))
    }
}
