//! `world mission log M`: the mission's hash-chained command journal.

use super::*;

pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    ledger: Option<&str>,
    mission: &str,
) -> Result<Exit, CliError> {
    let target = open_read(ctx, ledger, "mission log")?;
    let entries = target.with(|m| m.journal(mission)).map_err(|e| match e {
        mstore::Error::Rejected(r) => {
            CliError::failed("mission log", r.human()).with_code(r.code.as_str())
        }
        e => store_err("mission log", e),
    })?;
    for e in &entries {
        let d = mstore::decode_entry(&e.entry)
            .map_err(|why| CliError::integrity("mission log", format!("entry {}: {why}", e.seq)))?;
        let code = d
            .result
            .get("code")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if out.json {
            out.json_line(&json!({
                "seq": e.seq, "entryHash": e.entry_hash, "prevHash": e.prev_hash, "now": d.now.to_string(), "nowUtc": rfc3339_ms(d.now.0),
                "actor": d.actor, "requestId": d.request_id, "command": d.command.to_value().to_json(), "result": d.result,
            }))?;
        } else {
            out.line(format!(
                "{:>6}  {}  {:<12} now={} {} {}{}",
                e.seq,
                crate::cli::output::short(&e.entry_hash),
                d.command.name(),
                rfc3339_ms(d.now.0),
                d.actor.id,
                code,
                d.command
                    .attempt_id()
                    .map(|a| format!(" attempt={a}"))
                    .unwrap_or_default()
            ))?;
        }
    }
    Ok(Exit::Success)
}
