//! `world ailang check FILE`: parse, resolve and type-check a module.

use std::path::Path;

use super::program::{pass_through, read};
use crate::ailang::{self, Options};
use crate::cli::output::Output;
use crate::cli::{CliError, Exit};

/// Check `file` (MOD010 only with `strict_modules`); the report as `ailang check` prints it,
/// `--json` its JSON form; exit 0 pass, 1 errors.
pub(super) fn run(out: &mut Output, strict_modules: bool, file: &Path) -> Result<Exit, CliError> {
    let (json, quiet) = (out.json, out.quiet);
    let bytes = read(file)?;
    let opts = Options {
        quiet,
        strict_modules,
        ..Options::default()
    };
    let label = file.display().to_string();
    let outcome = if json {
        ailang::cli_check_json(&label, &bytes, &opts)
    } else {
        ailang::cli_check(&label, &bytes, &opts)
    };
    pass_through(out, outcome)
}
