//! What every `world ailang` verb shares: the bounded read of the program file, and the
//! interpreter's outcome passed through unchanged.

use crate::ailang;
use crate::cli::output::Output;
use crate::cli::{CliError, Exit};

/// Read the program file: a regular file only (a FIFO or `/dev/zero` is refused without
/// blocking), at most [`ailang::loader::MAX_SOURCE_BYTES`] read (issue 13 §5's bounded reader);
/// exit 1 otherwise.
pub(super) fn read(file: &std::path::Path) -> Result<Vec<u8>, CliError> {
    crate::fileread::read_regular(file, ailang::loader::MAX_SOURCE_BYTES)
        .map_err(|e| CliError::failed("ailang", format!("read {e}")))
}

/// Pass `outcome` through: its stdout on stdout, its stderr on stderr, its exit code as
/// [`Exit::of_ailang`] maps it.
pub(super) fn pass_through(
    out: &mut Output,
    outcome: crate::interp::RunOutcome,
) -> Result<Exit, CliError> {
    out.bytes(&outcome.stdout)?;
    out.flush()?;
    if !outcome.stderr.is_empty() {
        eprint!("{}", String::from_utf8_lossy(&outcome.stderr));
    }
    Ok(Exit::of_ailang(outcome.exit_code))
}
