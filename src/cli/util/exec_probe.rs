//! `world util exec-probe` (hidden): the Workspace.Exec startup probe's client, run inside
//! the sandbox.

use crate::cli::output::Output;
use crate::cli::{CliError, Exit};

/// Run the probe's OP ARG pairs (`write PATH`, `read PATH`, `connect PORT`) and print what
/// each found, for the probe outside the sandbox to read.
pub(super) fn run(out: &mut Output, ops: &[String]) -> Result<Exit, CliError> {
    out.bytes(crate::broker::handlers::exec::probe::client(ops).as_bytes())?;
    Ok(Exit::Success)
}
