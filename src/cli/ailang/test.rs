//! `world ailang test FILE`: run a module's inline tests and test blocks.

use std::path::Path;
use std::time::{Duration, Instant};

use super::program::{pass_through, read};
use crate::ailang;
use crate::cli::output::Output;
use crate::cli::{CliError, Exit};

/// Run `file`'s tests within `timeout` seconds (0..=86400, else exit 2); each pass or failure
/// with FILE:LINE:COL, then the totals; exit 0 when all pass, 1 otherwise.
pub(super) fn run(out: &mut Output, timeout: f64, file: &Path) -> Result<Exit, CliError> {
    let json = out.json;
    if !(0.0..=86_400.0).contains(&timeout) {
        return Err(CliError::usage(
            "ailang test",
            "--timeout must be between 0 and 86400 seconds",
        ));
    }
    let bytes = read(file)?;
    let deadline = Instant::now() + Duration::from_secs_f64(timeout);
    let outcome =
        ailang::run::test_outcome(&file.display().to_string(), &bytes, json, Some(deadline));
    pass_through(out, outcome)
}
