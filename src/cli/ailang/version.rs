//! `world ailang version` (or `--version`): the embedded interpreter's version text.

use crate::ailang;
use crate::cli::output::Output;
use crate::cli::{CliError, Exit};

/// Print the version text as `ailang --version` does (`--json`: `{"version": …}`).
pub(super) fn run(out: &mut Output) -> Result<Exit, CliError> {
    if out.json {
        let text = ailang::cli_version();
        out.json_line(&serde_json::json!({"version": text.trim_end()}))?;
        return Ok(Exit::Success);
    }
    out.bytes(ailang::cli_version().as_bytes())?;
    Ok(Exit::Success)
}
