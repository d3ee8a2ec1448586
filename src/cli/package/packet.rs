//! `world package packet DIR [--golden FILE]`: recompute the ready packet from the bytes on
//! disk and hold it to a golden (read only, headless-permitted). `--json` prints the packet's
//! canonical bytes, which are a golden.

use super::{plan, refuse_live, PacketArgs};
use crate::cli::output::Output;
use crate::cli::{CliError, Context, Exit};
use crate::package::packet::FIELDS;
use crate::package::registry::Origins;

/// Recompute a package's ready packet.
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    packet: PacketArgs,
    /// Refused: packet performs no public write
    #[arg(long, hide = true)]
    live: bool,
}

/// Run `world package packet`.
pub fn run(_ctx: &Context, out: &mut Output, a: Args) -> Result<Exit, CliError> {
    const WHAT: &str = "package packet";
    refuse_live(WHAT, "packet", a.live)?;
    let origins = Origins::production(None).map_err(|e| CliError::failed(WHAT, e))?;
    let (plan, golden) = plan(WHAT, &a.packet, None, origins)?;
    let p = plan.packet();
    if out.json {
        out.bytes(&p.encode())?;
        return Ok(Exit::Success);
    }
    out.line(format!(
        "ready packet for {}@{} (compiler {})",
        p.package,
        p.version,
        if p.compiler_version.is_empty() {
            "unstated"
        } else {
            &p.compiler_version
        }
    ))?;
    for f in FIELDS {
        out.line(format!("  {f:<16} {}", p.field(f)))?;
    }
    if golden.is_some() {
        out.line("  recomputed from disk and EQUAL to the golden in every field")?;
    }
    Ok(Exit::Success)
}
