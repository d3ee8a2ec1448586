//! Attended acts: the controlling-terminal fence and typed confirmations (DEC-CLI-3).
//!
//! The prompt is written to and read from `/dev/tty`, never stdin/stdout, so a script cannot
//! answer it by piping text in. dialoguer reads from stdin's terminal and cannot target the
//! controlling terminal when stdin is redirected, so the fence talks to `/dev/tty` itself.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};

/// Open the controlling terminal for an attended act, or refuse it (exit 3):
/// `refusing: no controlling terminal (…); <act> requires one human act at a terminal`, with a
/// hint that scripts can pass `--yes` (recorded as unattended).
pub fn attended(what: &str, act: &str) -> Result<Tty, super::CliError> {
    open_tty().map_err(|e| {
        let mut err = super::CliError::new(super::Exit::Integrity, what, "");
        err.verbatim = Some(format!(
            "refusing: no controlling terminal ({e}); {act} requires one human act at a terminal"
        ));
        err.hint("scripts and CI can pass --yes (recorded as unattended)")
    })
}

/// An open controlling terminal.
pub struct Tty {
    file: File,
}

/// Open `/dev/tty` read-write, or say why not.
pub fn open_tty() -> Result<Tty, std::io::Error> {
    let file = OpenOptions::new().read(true).write(true).open("/dev/tty")?;
    Ok(Tty { file })
}

impl Tty {
    /// Print `prompt` on the terminal and read one line (without its newline); `None` on EOF.
    pub fn ask(&mut self, prompt: &str) -> std::io::Result<Option<String>> {
        self.file.write_all(prompt.as_bytes())?;
        self.file.flush()?;
        let mut line = String::new();
        let n = BufReader::new(&self.file).read_line(&mut line)?;
        if n == 0 {
            return Ok(None);
        }
        Ok(Some(line.trim_end_matches(['\n', '\r']).to_string()))
    }
}
