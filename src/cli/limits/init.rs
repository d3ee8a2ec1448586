//! `world limits init`: load the config into a fresh ledger (attended unless `--yes`).

use super::*;

/// Run `world limits init`.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    config: PathBuf,
    yes: bool,
    common: Common,
) -> Result<Exit, CliError> {
    let place = match open_place_write(ctx, common.ledger.as_deref(), "limits init", true)? {
        Ok(p) => p,
        Err(v) => return emit(out, "limits init", &v),
    };
    let raw = read_input(&config, MAX_CONFIG_BYTES, "limits init")?;
    let attendance = if yes {
        Attendance::Unattended
    } else {
        Attendance::Attended
    };
    let job = Job {
        what: "limits init",
        common: &common,
        command: Command::Init { config: raw },
        attendance,
        evidence: None,
    };
    execute(ctx, out, &place, job)
}
