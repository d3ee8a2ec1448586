//! Attended acts: the controlling-terminal fence and typed confirmations (DEC-CLI-3).
//!
//! Every prompt is written to the controlling terminal (`/dev/tty`), never stdout, and its
//! keys come from the controlling terminal through dialoguer's terminal layer
//! (`dialoguer::console`), so a script cannot answer it by piping text in. The line editor
//! here ([`read_line_on`]) is shared by every prompt (mint, approval decide, publish, limits,
//! missions): Backspace/Delete, ←/→, Home/End (Ctrl-A/Ctrl-E), Ctrl-U, Ctrl-K and Ctrl-W edit
//! the line; Enter answers; Ctrl-D and Ctrl-C answer no (DEC-CLI-24). dialoguer's own
//! `Input`/`Confirm` drop control keys, so Ctrl-U and Ctrl-D would do nothing there.

use std::fs::{File, OpenOptions};

use dialoguer::console::{Key, Term};

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
    /// Print `prompt` on the terminal (its last line stays in front of the answer) and read one
    /// edited line; `None` when the person pressed Ctrl-D or Ctrl-C, or the terminal closed.
    pub fn ask(&mut self, prompt: &str) -> std::io::Result<Option<String>> {
        if stdin_is_another_terminal() {
            // dialoguer's terminal layer reads keys from stdin whenever stdin is a terminal;
            // when that terminal is not the controlling one, read the controlling terminal's
            // line discipline instead (Ctrl-U and Backspace still edit; Ctrl-D answers no).
            return self.ask_canonical(prompt);
        }
        let term = Term::read_write_pair(self.file.try_clone()?, self.file.try_clone()?);
        read_line_on(&term, prompt)
    }

    /// Read one line in the terminal's canonical mode; a read without a newline is Ctrl-D.
    fn ask_canonical(&mut self, prompt: &str) -> std::io::Result<Option<String>> {
        use std::io::{Read, Write};
        self.file.write_all(prompt.as_bytes())?;
        self.file.flush()?;
        let mut buf = [0u8; 4096];
        let n = self.file.read(&mut buf)?;
        if n == 0 || buf[n - 1] != b'\n' {
            self.file.write_all(b"\n")?;
            return Ok(None);
        }
        Ok(Some(
            String::from_utf8_lossy(&buf[..n])
                .trim_end_matches(['\n', '\r'])
                .to_string(),
        ))
    }
}

/// Whether stdin is a terminal other than this process's controlling terminal.
fn stdin_is_another_terminal() -> bool {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() {
        return false;
    }
    // SAFETY: tcgetsid and getsid take plain integers and touch no memory of ours.
    let (tty_sid, our_sid) = unsafe { (libc::tcgetsid(0), libc::getsid(0)) };
    tty_sid < 0 || tty_sid != our_sid
}

/// The most characters an answer may hold.
const MAX_ANSWER: usize = 4096;

/// Show `prompt` on `term` and read one line with line editing (see the module docs).
/// `Ok(None)`: Ctrl-D, Ctrl-C or end of input — every caller treats it as "no".
pub fn read_line_on(term: &Term, prompt: &str) -> std::io::Result<Option<String>> {
    let (head, last) = match prompt.rfind('\n') {
        Some(i) => (&prompt[..=i], &prompt[i + 1..]),
        None => ("", prompt),
    };
    term.write_str(head)?;
    term.write_str(last)?;
    let mut chars: Vec<char> = Vec::new();
    let mut pos = 0usize;
    loop {
        let key = match term.read_key() {
            Ok(k) => k,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::Interrupted | std::io::ErrorKind::UnexpectedEof
                ) =>
            {
                term.write_line("")?;
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        match key {
            Key::Enter => {
                term.write_line("")?;
                return Ok(Some(chars.into_iter().collect()));
            }
            // Ctrl-D answers no, whatever was typed.
            Key::Char('\x04') => {
                term.write_line("")?;
                return Ok(None);
            }
            Key::Char('\x15') => {
                chars.drain(..pos);
                pos = 0;
            }
            Key::Char('\x0b') => chars.truncate(pos),
            Key::Char('\x17') => {
                let mut start = pos;
                while start > 0 && chars[start - 1] == ' ' {
                    start -= 1;
                }
                while start > 0 && chars[start - 1] != ' ' {
                    start -= 1;
                }
                chars.drain(start..pos);
                pos = start;
            }
            Key::Backspace if pos > 0 => {
                pos -= 1;
                chars.remove(pos);
            }
            Key::Del if pos < chars.len() => {
                chars.remove(pos);
            }
            Key::ArrowLeft if pos > 0 => pos -= 1,
            Key::ArrowRight if pos < chars.len() => pos += 1,
            Key::Home => pos = 0,
            Key::End => pos = chars.len(),
            Key::Char(c) if !c.is_control() && chars.len() < MAX_ANSWER => {
                chars.insert(pos, c);
                pos += 1;
            }
            _ => continue,
        }
        // Redraw the prompt's last line and the answer, then put the cursor back.
        term.clear_line()?;
        let text: String = chars.iter().collect();
        term.write_str(&format!("{last}{text}"))?;
        let back = chars.len() - pos;
        if back > 0 {
            term.move_cursor_left(back)?;
        }
    }
}

/// Whether a `[y/N]` answer is yes: `y` or `yes`, any case, surrounding blanks ignored.
pub fn is_yes(answer: Option<&str>) -> bool {
    matches!(
        answer.map(|a| a.trim().to_ascii_lowercase()).as_deref(),
        Some("y" | "yes")
    )
}
