//! `world util completions|man`: generate the checked-in shell completions and man pages.

mod completions;
mod exec_probe;
mod man;

pub use self::completions::completions;
pub use self::man::man_pages;

use std::path::{Path, PathBuf};

use clap::Subcommand;

use super::output::Output;
use super::{CliError, Context, Exit};

/// Generators for files shipped with `world`.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Write bash, zsh and fish completions into DIR (default: completions/)
    Completions {
        /// Output directory
        #[arg(long, default_value = "completions")]
        out: PathBuf,
    },
    /// Write man pages (one per command) into DIR (default: man/)
    Man {
        /// Output directory
        #[arg(long, default_value = "man")]
        out: PathBuf,
    },
    /// The Workspace.Exec startup probe's client, run inside the sandbox (internal)
    #[command(hide = true)]
    ExecProbe {
        /// OP ARG pairs: write PATH, read PATH, connect PORT
        ops: Vec<String>,
    },
}

/// Run `world util …`.
pub fn run(_ctx: &Context, out: &mut Output, cmd: Cmd) -> Result<Exit, CliError> {
    match cmd {
        Cmd::ExecProbe { ops } => exec_probe::run(out, &ops),
        Cmd::Completions { out: dir } => write_files(out, &dir, completions()),
        Cmd::Man { out: dir } => write_files(out, &dir, man_pages()?),
    }
}

/// Write generated `files` (name, bytes) into `dir`, creating it, one status line each.
fn write_files(
    out: &mut Output,
    dir: &Path,
    files: Vec<(String, Vec<u8>)>,
) -> Result<Exit, CliError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::failed("util", format!("create {}: {e}", dir.display())))?;
    for (name, bytes) in files {
        let path = dir.join(&name);
        std::fs::write(&path, bytes)
            .map_err(|e| CliError::failed("util", format!("write {}: {e}", path.display())))?;
        out.status(format!("wrote {}", path.display()));
    }
    Ok(Exit::Success)
}
