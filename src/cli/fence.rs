//! Attended acts: the controlling-terminal fence and typed confirmations (DEC-CLI-3).
//!
//! Every prompt is written to the controlling terminal (`/dev/tty`), never stdout, and its
//! keys come from the controlling terminal through dialoguer's terminal layer
//! (`dialoguer::console`), so a script cannot answer it by piping text in. The line editor
//! here ([`read_line_on`]) is shared by every prompt (mint, approval decide, publish, limits,
//! missions): Backspace/Delete, ←/→, Home/End (Ctrl-A/Ctrl-E), Ctrl-U, Ctrl-K and Ctrl-W edit
//! the line; Enter answers; Ctrl-D and Ctrl-C answer no (DEC-CLI-24). dialoguer's own
//! `Input`/`Confirm` drop control keys, so Ctrl-U and Ctrl-D would do nothing there.
//!
//! Every prompt gives up after [`prompt_timeout`] (default [`DEFAULT_PROMPT_TIMEOUT`] seconds;
//! `WORLD_PROMPT_TIMEOUT` sets it for every prompt, `publish --prompt-timeout` for publish's): the read
//! ends with an [`std::io::ErrorKind::TimedOut`] error, which every caller treats as "no", so
//! nothing is written and the command exits, releasing the lock (DEC-UX-11).

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Seconds a prompt waits for its answer unless `--prompt-timeout` says otherwise.
pub const DEFAULT_PROMPT_TIMEOUT: u64 = 120;

static PROMPT_TIMEOUT: AtomicU64 = AtomicU64::new(DEFAULT_PROMPT_TIMEOUT);

/// Set how long prompts wait from now on, in seconds (at least 1).
pub fn set_prompt_timeout(seconds: u64) {
    PROMPT_TIMEOUT.store(seconds.max(1), Ordering::Relaxed);
}

/// How long a prompt waits for its answer.
pub fn prompt_timeout() -> Duration {
    Duration::from_secs(PROMPT_TIMEOUT.load(Ordering::Relaxed))
}

/// The line every prompt shows above its answer line: how long it waits and that no answer
/// is "no" (`undone` says what then does not happen, e.g. `nothing is published`).
pub fn timeout_note(undone: &str) -> String {
    format!(
        "(no answer within {} s cancels: {undone})",
        prompt_timeout().as_secs()
    )
}

/// Whether a prompt's error is its timeout running out.
pub fn timed_out(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::TimedOut
}

/// The terminal in raw mode for the whole prompt (restored on drop), so waiting for the next
/// key with `poll` sees each key as it is typed rather than after Enter.
struct RawMode {
    fd: i32,
    saved: libc::termios,
    _file: Option<File>,
}

impl RawMode {
    /// The fd dialoguer's terminal layer reads keys from: stdin when it is a terminal, else
    /// the controlling terminal.
    fn enter() -> std::io::Result<Self> {
        // SAFETY: isatty takes a plain integer.
        let (fd, file) = if unsafe { libc::isatty(0) } == 1 {
            (0, None)
        } else {
            let f = OpenOptions::new().read(true).write(true).open("/dev/tty")?;
            (f.as_raw_fd(), Some(f))
        };
        let mut t = std::mem::MaybeUninit::<libc::termios>::uninit();
        // SAFETY: tcgetattr fills the termios on success, checked before use.
        if unsafe { libc::tcgetattr(fd, t.as_mut_ptr()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: initialised by the successful tcgetattr above.
        let saved = unsafe { t.assume_init() };
        let mut raw = saved;
        // SAFETY: cfmakeraw and tcsetattr only touch the termios passed.
        unsafe {
            libc::cfmakeraw(&mut raw);
            raw.c_oflag = saved.c_oflag;
            if libc::tcsetattr(fd, libc::TCSADRAIN, &raw) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(RawMode {
            fd,
            saved,
            _file: file,
        })
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        // SAFETY: restores the attributes read in `enter` on the same fd.
        unsafe {
            libc::tcsetattr(self.fd, libc::TCSADRAIN, &self.saved);
        }
    }
}

/// Wait until `fd` has input or `deadline` passes (`TimedOut`).
fn wait_readable(fd: i32, deadline: Instant) -> std::io::Result<()> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no answer within {} s", prompt_timeout().as_secs()),
            ));
        }
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = i32::try_from(left.as_millis().max(1)).unwrap_or(i32::MAX);
        // SAFETY: one valid pollfd for the duration of the call.
        let n = unsafe { libc::poll(&mut p, 1, ms) };
        if n > 0 {
            return Ok(());
        }
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

use dialoguer::console::{Key, Term};

/// Open the controlling terminal for an attended act, or refuse it (exit 3):
/// `refusing: no controlling terminal (…); <act> requires one human act at a terminal`, with a
/// hint that scripts can pass `--yes` (recorded as unattended).
pub fn attended(what: &str, act: &str) -> Result<Tty, super::CliError> {
    open_tty().map_err(|e| {
        super::CliError::aborted(
            what,
            format!(
                "refusing: no controlling terminal ({e}); {act} requires one human act at a terminal"
            ),
        )
        .hint("scripts and CI can pass --yes (recorded as unattended)")
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
    /// The `confirmation` fence of `what` (`limits`, `mission`): [`Tty::ask`] `prompt`, and
    /// accept only a line equal to `words`.
    ///
    /// # Errors
    /// [`super::CliError::fence`] `confirmation` with reason `mismatch` (another line),
    /// `timeout` (no answer in time; the hint says nothing was written) or `eof` (Ctrl-D,
    /// Ctrl-C, a closed terminal).
    pub fn confirm(
        &mut self,
        what: &str,
        prompt: &str,
        words: &str,
    ) -> Result<(), super::CliError> {
        let refuse = |reason| super::CliError::fence(what, "confirmation", Some(reason), "");
        match self.ask(prompt) {
            Ok(Some(t)) if t == words => Ok(()),
            Ok(Some(_)) => Err(refuse("mismatch")),
            Err(e) if timed_out(&e) => {
                Err(refuse("timeout").hint(format!("{e}; nothing was written")))
            }
            Ok(None) | Err(_) => Err(refuse("eof")),
        }
    }

    /// Print `prompt` on the terminal (its last line stays in front of the answer) and read one
    /// edited line; `None` when the person pressed Ctrl-D or Ctrl-C, or the terminal closed.
    ///
    /// The prompt gains a line saying how long it waits ([`timeout_note`]); a timeout is an
    /// error for which [`timed_out`] is true.
    pub fn ask(&mut self, prompt: &str) -> std::io::Result<Option<String>> {
        let note = timeout_note("nothing is written");
        let prompt = &match prompt.rfind('\n') {
            Some(i) => format!("{}{note}\n{}", &prompt[..=i], &prompt[i + 1..]),
            None => format!("{note}\n{prompt}"),
        };
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
        if let Err(e) = wait_readable(self.file.as_raw_fd(), Instant::now() + prompt_timeout()) {
            self.file.write_all(b"\n")?;
            return Err(e);
        }
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
    let raw = RawMode::enter().ok();
    let deadline = Instant::now() + prompt_timeout();
    let mut chars: Vec<char> = Vec::new();
    let mut pos = 0usize;
    loop {
        if let Some(r) = &raw {
            if let Err(e) = wait_readable(r.fd, deadline) {
                term.write_line("")?;
                return Err(e);
            }
        }
        // `read_key_raw`: Ctrl-C is a key here (answered "no" below), not a SIGINT that would
        // end the process before it could say what was not done.
        let key = match term.read_key_raw() {
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
            // Ctrl-D and Ctrl-C answer no, whatever was typed.
            Key::Char('\x04') | Key::Char('\x03') | Key::CtrlC => {
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
