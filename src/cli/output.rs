//! Where output goes: data to stdout (text or JSON), diagnostics to stderr.

use std::io::{self, BufWriter, Stdout, Write};

use serde::Serialize;

use super::{CliError, Context};

/// Buffered stdout plus the output mode. A closed pipe (`world log | head`) is not an error:
/// [`crate::cli::run`]'s caller exits quietly on `BrokenPipe`.
pub struct Output {
    out: BufWriter<Stdout>,
    /// `--json`
    pub json: bool,
    /// `-q`
    pub quiet: bool,
    /// colour on stderr
    pub color: bool,
}

impl Output {
    /// Output for this context.
    pub fn new(ctx: &Context) -> Self {
        Output {
            out: BufWriter::new(io::stdout()),
            json: ctx.json,
            quiet: ctx.quiet,
            color: ctx.color,
        }
    }

    /// One line of text on stdout.
    pub fn line(&mut self, text: impl AsRef<str>) -> io::Result<()> {
        self.out.write_all(text.as_ref().as_bytes())?;
        self.out.write_all(b"\n")
    }

    /// Raw bytes on stdout.
    pub fn bytes(&mut self, b: &[u8]) -> io::Result<()> {
        self.out.write_all(b)
    }

    /// One JSON value on one line.
    pub fn json_line<T: Serialize + ?Sized>(&mut self, v: &T) -> io::Result<()> {
        // `From<serde_json::Error>` gives back the underlying io::Error (keeping BrokenPipe).
        serde_json::to_writer(&mut self.out, v).map_err(io::Error::from)?;
        self.out.write_all(b"\n")
    }

    /// A status line on stderr (suppressed by `-q`).
    pub fn status(&mut self, text: impl AsRef<str>) {
        if !self.quiet {
            let _ = self.out.flush();
            eprintln!("{}", text.as_ref());
        }
    }

    /// A warning on stderr (suppressed by `-q`).
    pub fn warn(&mut self, text: impl AsRef<str>) {
        if !self.quiet {
            let _ = self.out.flush();
            if self.color {
                eprintln!("\x1b[33mwarning:\x1b[0m {}", text.as_ref());
            } else {
                eprintln!("warning: {}", text.as_ref());
            }
        }
    }

    /// Flush stdout.
    pub fn flush(&mut self) -> Result<(), CliError> {
        self.out.flush().map_err(CliError::from)
    }
}

/// Shorten a ref for tables: `sha256:0123456789ab…`.
pub fn short(r: &str) -> String {
    match r.strip_prefix("sha256:") {
        Some(hex) if hex.len() > 12 => format!("{}…", &hex[..12]),
        _ => r.to_string(),
    }
}

/// A comfy-table with the project's look (no colours unless asked).
pub fn table(headers: &[&str], color: bool) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    if !color {
        t.force_no_tty();
    }
    t.set_header(headers.iter().map(comfy_table::Cell::new));
    t
}
