//! `world mission apply`: one command from `--command FILE`, or `--commands FILE.jsonl` with
//! one command per line, stopping at the first rejection.

use super::*;

/// `world mission apply`: `--command FILE` or `--commands FILE.jsonl` (clap requires one).
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    ledger: Option<&str>,
    mission: &str,
    command: &Option<PathBuf>,
    commands: &Option<PathBuf>,
    common: &Common,
) -> Result<Exit, CliError> {
    match (command, commands) {
        (Some(f), _) => apply_one(ctx, out, ledger, mission, f, common),
        (None, Some(f)) => apply_lines(ctx, out, ledger, mission, f, common),
        (None, None) => Err(CliError::usage(
            "mission apply",
            "pass --command FILE or --commands FILE.jsonl",
        )),
    }
}

/// `world mission apply --command FILE`: the one command the file holds.
fn apply_one(
    ctx: &Context,
    out: &mut Output,
    ledger: Option<&str>,
    mission: &str,
    path: &Path,
    common: &Common,
) -> Result<Exit, CliError> {
    let raw = read_input(path, MAX_JSON_BYTES, "mission apply")?;
    write(
        ctx,
        out,
        plain(
            "mission apply",
            ledger,
            mission,
            common,
            Command::parse(&raw),
        ),
    )
}

/// `world mission apply --commands FILE.jsonl`: every line parsed first, then applied in
/// order, stopping at the first rejection.
fn apply_lines(
    ctx: &Context,
    out: &mut Output,
    ledger: Option<&str>,
    mission: &str,
    path: &Path,
    common: &Common,
) -> Result<Exit, CliError> {
    let what = "mission apply";
    let now = parse_now(common.now.as_deref())?;
    let raw = read_input(path, MAX_COMMANDS_BYTES, what)?;
    let text = std::str::from_utf8(&raw)
        .map_err(|_| CliError::failed(what, format!("{} is not UTF-8", path.display())))?;
    let mut cmds = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match Command::parse(line.as_bytes()) {
            Ok(c) => cmds.push(c),
            Err(mut r) => {
                r.details.insert(0, ("line", (i + 1).to_string()));
                return Err(rejection(what, &r).hint(format!(
                    "line {}: refused before anything was written",
                    i + 1
                )));
            }
        }
    }
    if common.request_id.is_some() && cmds.len() > 1 {
        return Err(CliError::usage(
            what,
            "--request-id names one command; --commands applies several",
        ));
    }
    let target = open_write(ctx, ledger, what)?;
    let mut aux = None;
    let actor = match &common.session {
        Some(s) => {
            let conn = store_conn(&target, ctx, &mut aux)?;
            target.with(|m| {
                agent_actor(
                    ctx,
                    out,
                    conn,
                    m,
                    s,
                    mission,
                    matches!(target, Target::Standalone(_)),
                )
            })?
        }
        None => host(),
    };
    let total = cmds.len();
    for (i, c) in cmds.into_iter().enumerate() {
        let req = Request {
            command: c,
            request_id: common.request_id.clone(),
            implicit_now: common.now.is_none(),
        };
        let stopped = format!(
            "stopped at command {} of {total}; the {i} before it were applied",
            i + 1
        );
        match apply(&target, mission, &req, &actor, now, None, false) {
            Ok(a) => emit_applied(out, what, mission, &a).map_err(|e| e.hint(stopped))?,
            Err(mstore::Error::Rejected(r)) => return Err(rejection(what, &r).hint(stopped)),
            Err(e) => return Err(store_err(what, e)),
        };
    }
    Ok(Exit::Success)
}
