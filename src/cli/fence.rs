//! Attended acts: the controlling-terminal fence and typed confirmations (DEC-CLI-3).
//!
//! The prompt is written to and read from `/dev/tty`, never stdin/stdout, so a script cannot
//! answer it by piping text in. dialoguer reads from stdin's terminal and cannot target the
//! controlling terminal when stdin is redirected, so the fence talks to `/dev/tty` itself.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};

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
