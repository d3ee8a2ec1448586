//! `world ailang run FILE`: run a module's entry function with one JSON argument.

use std::path::Path;
use std::time::{Duration, Instant};

use super::program::{pass_through, read};
use crate::ailang::{self, Options};
use crate::cli::output::Output;
use crate::cli::{CliError, Exit};
use crate::interp::{RunError, RunLimits};

/// The flags of `world ailang run` but the file.
pub(super) struct RunArgs {
    /// The entry function.
    pub entry: String,
    /// The argument as JSON; `-` reads stdin; `None` is null.
    pub args_json: Option<String>,
    /// Enforce MOD010.
    pub strict_modules: bool,
    /// Maximum call depth.
    pub max_recursion_depth: usize,
    /// Wall-clock limit, seconds (0..=86400, else exit 2).
    pub timeout: f64,
}

/// Run `file`'s entry with the argument; the result on stdout (strings raw), the program's
/// exit code passed through.
pub(super) fn run(out: &mut Output, a: RunArgs, file: &Path) -> Result<Exit, CliError> {
    let RunArgs {
        entry,
        args_json,
        strict_modules,
        max_recursion_depth,
        timeout,
    } = a;
    // The banners are not data: `-q` and `--json` both drop them.
    let quiet = out.quiet || out.json;
    let bytes = read(file)?;
    let args = match args_json.as_deref() {
        Some("-") => {
            crate::cli::stdin_not_terminal("ailang run --args-json", "the JSON arguments")?;
            let mut s = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)?;
            Some(s)
        }
        other => other.map(str::to_string),
    };
    if !(0.0..=86_400.0).contains(&timeout) {
        return Err(CliError::usage(
            "ailang run",
            "--timeout must be between 0 and 86400 seconds",
        ));
    }
    let opts = Options {
        quiet,
        strict_modules,
        max_recursion_depth,
        ..Options::default()
    };
    let limits = RunLimits::until(Instant::now() + Duration::from_secs_f64(timeout));
    let outcome = match ailang::cli_run(
        &file.display().to_string(),
        &bytes,
        &entry,
        args.as_deref(),
        limits,
        &opts,
    ) {
        Ok(o) => o,
        Err(RunError::Timeout) => {
            return Err(CliError::failed(
                "ailang run",
                "Error: TIMEOUT: the run exceeded its deadline",
            ))
        }
        Err(e) => return Err(CliError::failed("ailang run", e)),
    };
    pass_through(out, outcome)
}
