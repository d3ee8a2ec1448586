//! `world ailang --version | check | run | test`: the embedded interpreter behind the external
//! `ailang` CLI contract (ailang.md §1–§3, §6).

mod check;
mod program;
mod run;
mod test;
mod version;

use std::path::PathBuf;

use clap::Subcommand;

use super::output::Output;
use super::{CliError, Context, Exit};

/// `world ailang [--version] <COMMAND>`: the embedded interpreter, speaking the `ailang` CLI
/// contract (ailang.md §1–§3).
#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_required = false)]
pub struct Args {
    /// Print the embedded interpreter's version text (like `ailang --version`)
    #[arg(long)]
    pub version: bool,
    /// What to do
    #[command(subcommand)]
    pub cmd: Option<Cmd>,
}

/// The embedded AILANG subset interpreter's subcommands.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Print the embedded interpreter's version text
    Version,
    /// Parse, resolve and type-check FILE (exit 0 pass, 1 errors); MOD010 relaxed by default
    ///
    /// `--json` (the global flag) prints the `ailang check --json` report (one indented
    /// object, the `ailang` CLI contract's shape); `-q`/`--quiet` prints no progress or
    /// success line (errors still on stderr).
    Check {
        /// Enforce MOD010 (module header must match the file path)
        #[arg(long)]
        strict_modules: bool,
        /// The module file
        file: PathBuf,
    },
    /// Run FILE's inline `tests [...]` pairs and `test "…" { }` blocks; each pass/fail with
    /// FILE:LINE:COL, then `N passed, M failed` (exit 0 all pass, 1 otherwise)
    ///
    /// `--json` (the global flag) prints one JSON report.
    Test {
        /// Wall-clock limit for the whole run, seconds
        #[arg(long, default_value_t = 60.0)]
        timeout: f64,
        /// The module file
        file: PathBuf,
    },
    /// Run FILE's entry function with one JSON argument; prints the result (strings raw)
    ///
    /// `-q`/`--quiet` (the global flag) suppresses the three banners on stdout (`world`
    /// itself always passes it to an external `ailang`).
    Run {
        /// Entry function
        #[arg(long, default_value = "main")]
        entry: String,
        /// The argument as JSON (default null); `-` reads stdin; `-1` is the number -1
        #[arg(long, value_name = "JSON", allow_hyphen_values = true)]
        args_json: Option<String>,
        /// Enforce MOD010
        #[arg(long)]
        strict_modules: bool,
        /// Maximum call depth (default 10000)
        #[arg(long, default_value_t = 10_000)]
        max_recursion_depth: usize,
        /// Wall-clock limit in seconds
        #[arg(long, default_value_t = 60.0)]
        timeout: f64,
        /// The module file
        file: PathBuf,
    },
}

/// Run `world ailang …`; the program's stdout, stderr and exit code pass through unchanged.
pub fn run(_ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    let cmd = match (args.version, args.cmd) {
        (true, _) | (false, Some(Cmd::Version)) => Cmd::Version,
        (false, Some(c)) => c,
        (false, None) => {
            return Err(CliError::usage(
                "ailang",
                "name a subcommand (check, run, test, version) or pass --version",
            ))
        }
    };
    match cmd {
        Cmd::Version => version::run(out),
        Cmd::Check {
            strict_modules,
            file,
        } => check::run(out, strict_modules, &file),
        Cmd::Test { timeout, file } => test::run(out, timeout, &file),
        Cmd::Run {
            entry,
            args_json,
            strict_modules,
            max_recursion_depth,
            timeout,
            file,
        } => run::run(
            out,
            run::RunArgs {
                entry,
                args_json,
                strict_modules,
                max_recursion_depth,
                timeout,
            },
            &file,
        ),
    }
}
