//! `world util completions|man`: generate the checked-in shell completions and man pages.

use std::path::PathBuf;

use clap::{CommandFactory, Subcommand};

use super::output::Output;
use super::{Cli, CliError, Context, Exit};

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

/// Render every completion file: (file name, bytes).
pub fn completions() -> Vec<(String, Vec<u8>)> {
    use clap_complete::Shell;
    let mut files = Vec::new();
    for (shell, name) in [
        (Shell::Bash, "world.bash"),
        (Shell::Zsh, "_world"),
        (Shell::Fish, "world.fish"),
    ] {
        let mut buf = Vec::new();
        clap_complete::generate(shell, &mut Cli::command(), "world", &mut buf);
        files.push((name.to_string(), buf));
    }
    files
}

/// Render every man page: (file name, bytes), one for `world` and one per subcommand.
pub fn man_pages() -> Result<Vec<(String, Vec<u8>)>, std::io::Error> {
    let mut files = Vec::new();
    let cmd = Cli::command();
    fn walk(
        cmd: &clap::Command,
        prefix: &str,
        files: &mut Vec<(String, Vec<u8>)>,
    ) -> Result<(), std::io::Error> {
        let name = if prefix.is_empty() {
            cmd.get_name().to_string()
        } else {
            format!("{prefix}-{}", cmd.get_name())
        };
        let mut buf = Vec::new();
        clap_mangen::Man::new(cmd.clone().name(name.clone())).render(&mut buf)?;
        files.push((format!("{name}.1"), buf));
        for sub in cmd.get_subcommands() {
            if sub.get_name() == "help" || sub.is_hide_set() {
                continue;
            }
            walk(sub, &name, files)?;
        }
        Ok(())
    }
    walk(&cmd, "", &mut files)?;
    Ok(files)
}

/// Run `world util …`.
pub fn run(_ctx: &Context, out: &mut Output, cmd: Cmd) -> Result<Exit, CliError> {
    let (dir, files) = match cmd {
        Cmd::ExecProbe { ops } => {
            out.bytes(crate::broker::handlers::exec::probe::client(&ops).as_bytes())?;
            return Ok(Exit::Success);
        }
        Cmd::Completions { out } => (out, completions()),
        Cmd::Man { out } => (out, man_pages()?),
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| CliError::failed("util", format!("create {}: {e}", dir.display())))?;
    for (name, bytes) in files {
        let path = dir.join(&name);
        std::fs::write(&path, bytes)
            .map_err(|e| CliError::failed("util", format!("write {}: {e}", path.display())))?;
        out.status(format!("wrote {}", path.display()));
    }
    Ok(Exit::Success)
}
