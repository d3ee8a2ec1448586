//! `world ailang --version | check | run | test`: the embedded interpreter behind the external
//! `ailang` CLI contract (ailang.md §1–§3, §6).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Subcommand;

use super::output::Output;
use super::{CliError, Context, Exit};
use crate::ailang::{self, Options};
use crate::interp::{RunError, RunLimits};

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

/// Read the program file: a regular file only (a FIFO or `/dev/zero` is refused without
/// blocking), at most [`ailang::loader::MAX_SOURCE_BYTES`] read (issue 13 §5's bounded reader);
/// exit 1 otherwise.
fn read(file: &std::path::Path) -> Result<Vec<u8>, CliError> {
    crate::fileread::read_regular(file, ailang::loader::MAX_SOURCE_BYTES)
        .map_err(|e| CliError::failed("ailang", format!("read {e}")))
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
    let outcome = match cmd {
        Cmd::Version => {
            if out.json {
                let text = ailang::cli_version();
                out.json_line(&serde_json::json!({"version": text.trim_end()}))?;
                return Ok(Exit::Success);
            }
            out.bytes(ailang::cli_version().as_bytes())?;
            return Ok(Exit::Success);
        }
        Cmd::Check {
            strict_modules,
            file,
        } => {
            let (json, quiet) = (out.json, out.quiet);
            let bytes = read(&file)?;
            let opts = Options {
                quiet,
                strict_modules,
                ..Options::default()
            };
            let label = file.display().to_string();
            if json {
                ailang::cli_check_json(&label, &bytes, &opts)
            } else {
                ailang::cli_check(&label, &bytes, &opts)
            }
        }
        Cmd::Test { timeout, file } => {
            let json = out.json;
            if !(0.0..=86_400.0).contains(&timeout) {
                return Err(CliError::usage(
                    "ailang test",
                    "--timeout must be between 0 and 86400 seconds",
                ));
            }
            let bytes = read(&file)?;
            let deadline = Instant::now() + Duration::from_secs_f64(timeout);
            ailang::run::test_outcome(&file.display().to_string(), &bytes, json, Some(deadline))
        }
        Cmd::Run {
            entry,
            args_json,
            strict_modules,
            max_recursion_depth,
            timeout,
            file,
        } => {
            // The banners are not data: `-q` and `--json` both drop them.
            let quiet = out.quiet || out.json;
            let bytes = read(&file)?;
            let args = match args_json.as_deref() {
                Some("-") => {
                    super::stdin_not_terminal("ailang run --args-json", "the JSON arguments")?;
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
            match ailang::cli_run(
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
            }
        }
    };
    out.bytes(&outcome.stdout)?;
    out.flush()?;
    if !outcome.stderr.is_empty() {
        eprint!("{}", String::from_utf8_lossy(&outcome.stderr));
    }
    Ok(match outcome.exit_code {
        0 => Exit::Success,
        2 => Exit::Usage,
        _ => Exit::Failed,
    })
}
