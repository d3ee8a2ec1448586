//! `world effects --pending`: effect intents without an outcome (indeterminate; never retried).

use crate::cli::output::Output;
use crate::cli::{read_err, CliError, Context, Exit};
use crate::store::journal;

/// `world effects --pending`: the effect intents without an outcome (of one episode).
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    episode: Option<&str>,
) -> Result<Exit, CliError> {
    let store = ctx.open_read()?;
    let pending = journal::pending(store.conn()).map_err(read_err("effects --pending"))?;
    let mut n = 0;
    for (seq, id, obj_ref) in pending {
        if !id.starts_with("effect:") {
            continue;
        }
        if let Some(ep) = episode {
            if !id.starts_with(&format!("effect:{ep}:")) {
                continue;
            }
        }
        let payload = store
            .object(&obj_ref)
            .map_err(read_err("effects --pending"))?
            .map(|o| o.payload)
            .unwrap_or_default();
        let v: serde_json::Value =
            serde_json::from_slice(&payload).unwrap_or(serde_json::Value::Null);
        n += 1;
        if out.json {
            out.json_line(&serde_json::json!({"seq": seq, "invocationId": id, "state": "indeterminate", "outcome": crate::ops::outcome::of_pending_effect(), "intent": v}))?;
        } else {
            let esc = crate::termtext::escape_line;
            out.line(format!(
                "{} {}: {} {} cost {} request {} (never retried automatically)",
                esc(&id),
                crate::ops::outcome::of_pending_effect(),
                esc(v["effect"].as_str().unwrap_or("?")),
                esc(v["scope"].as_str().unwrap_or("?")),
                v["cost"],
                esc(v["requestRef"].as_str().unwrap_or("?"))
            ))?;
        }
    }
    if !out.json && n == 0 {
        out.status("no pending effect intents");
    }
    Ok(Exit::Success)
}
