//! `world receipt ID`: what happened to an invocation (authority-and-broker.md §10).

use super::output::Output;
use super::{read_err, CliError, Context, Exit};
use crate::store::journal::ReceiptState;

/// Answer a receipt for any namespace: `rest:`, `cli:`, `a2a:`, `mcp:`, `effect:`.
///
/// Exit 0 for resolved, 1 for not-started (nothing with this id was ever recorded: safe to
/// send), 5 for indeterminate (an intent is durable but no outcome: never retry it
/// automatically). The answer is printed on stdout in every case (DEC-CLI-18).
///
/// Examples:
///   world receipt rest:deploy-7 || echo "never sent (exit $?)"
///   world receipt --json cli:ep1:task-3 | jq -r .state
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The invocation id, e.g. rest:deploy-7 or effect:ep1:3
    id: String,
}

/// Run `world receipt`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    let Some((ns, rest)) = args.id.split_once(':') else {
        return Err(CliError::failed("receipt", format!("{:?} is not a namespaced invocation id (rest:<id>, cli:<ep>:<id>, a2a:…, mcp:…, effect:<ep>:<n>)", args.id)));
    };
    if !matches!(ns, "rest" | "cli" | "a2a" | "mcp" | "effect") || rest.is_empty() {
        return Err(CliError::failed(
            "receipt",
            format!("unknown invocation namespace in {:?}", args.id),
        ));
    }
    let store = ctx.open_read()?;
    let r = crate::ops::invoke::receipt(&store, &args.id).map_err(read_err("receipt"))?;
    if out.json {
        out.json_line(&r)?;
    } else {
        let state = match r.state {
            ReceiptState::NotStarted => "not-started",
            ReceiptState::Indeterminate => "indeterminate",
            ReceiptState::Resolved => "resolved",
        };
        // The id as given and the stored values are shown escaped (DEC-TRUST3-4).
        let esc = crate::termtext::escape_line;
        let mut line = format!("{} {state}", esc(&r.invocation_id));
        if let Some(x) = &r.result_ref {
            line.push_str(&format!(" resultRef={}", esc(x)));
        }
        if let Some(x) = &r.status {
            line.push_str(&format!(" status={}", esc(x)));
        }
        if let Some(x) = &r.record_ref {
            line.push_str(&format!(" recordRef={}", esc(x)));
        }
        out.view(line)?;
    }
    Ok(Exit::of_receipt(r.state))
}
