//! `world head`: print the selected world ref.

use super::output::Output;
use super::{read_err, CliError, Context, Exit};

/// Print the selected world head (`GET /v1/head`).
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Run `world head`.
pub fn run(ctx: &Context, out: &mut Output, _args: Args) -> Result<Exit, CliError> {
    let store = ctx.open_read()?;
    let Some(head) = store.head().map_err(read_err("head"))? else {
        return Err(
            CliError::failed("head", "no world head has been selected yet")
                .hint("commit a genesis world first: `world genesis`"),
        );
    };
    if out.json {
        let world = store.world(&head).map_err(read_err("head"))?;
        out.json_line(&serde_json::json!({"head": head, "world": world}))?;
    } else {
        out.line(head)?;
    }
    Ok(Exit::Success)
}
