//! Where output goes: data to stdout (text or JSON), diagnostics to stderr.

use std::io::{self, BufWriter, Stdout, Write};
use std::sync::atomic::{AtomicBool, Ordering};

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
    /// [`terminal_width`], read on the first [`Output::view`].
    width: Option<Option<usize>>,
    /// `--json=FIELDS`: the members [`Output::json_line`] keeps, in this order.
    fields: Option<Vec<String>>,
}

impl Output {
    /// Output for this context.
    pub fn new(ctx: &Context) -> Self {
        COLOR.store(ctx.color, Ordering::Relaxed);
        Output {
            out: BufWriter::new(io::stdout()),
            json: ctx.json,
            quiet: ctx.quiet,
            color: ctx.color,
            width: None,
            fields: None,
        }
    }

    /// One line of text on stdout.
    pub fn line(&mut self, text: impl AsRef<str>) -> io::Result<()> {
        self.out
            .write_all(super::secrets::redact(text.as_ref()).as_bytes())?;
        self.out.write_all(b"\n")
    }

    /// One line (or several, split on `\n`) of a human key/value view (`show`, `receipt`,
    /// `effects show`, `session show`, `status`, `why`, `log get`, `transitions show`): on a
    /// terminal narrower than a line, it is broken between tokens and never inside one
    /// ([`super::table::fold`]; docs/TABLES.md "Key/value views"). A pipe gets it unchanged.
    pub fn view(&mut self, text: impl AsRef<str>) -> io::Result<()> {
        let limit = *self
            .width
            .get_or_insert_with(|| terminal_width().map(usize::from));
        for l in text.as_ref().split('\n') {
            for piece in super::table::fold(l, limit) {
                self.line(piece)?;
            }
        }
        Ok(())
    }

    /// A table (`cli::table`) on stdout, fitted to the terminal; when columns had to be
    /// hidden to fit, a status line on stderr names them.
    pub fn table(&mut self, t: &super::table::Table) -> io::Result<()> {
        let layout = t.layout();
        self.line(t.render())?;
        let hidden = layout.hidden();
        if !hidden.is_empty() {
            self.status(hidden_note(&hidden));
        }
        Ok(())
    }

    /// Raw bytes on stdout.
    pub fn bytes(&mut self, b: &[u8]) -> io::Result<()> {
        self.out.write_all(b)
    }

    /// Keep only `fields` of each JSON object line, in that order (`--json=FIELDS`, checked
    /// by [`super::select_fields`]); a member a line lacks is `null`.
    pub fn select(&mut self, fields: Vec<String>) {
        self.fields = Some(fields);
    }

    /// One JSON value on one line (only the selected members of an object under
    /// `--json=FIELDS`).
    pub fn json_line<T: Serialize + ?Sized>(&mut self, v: &T) -> io::Result<()> {
        if let Some(fields) = &self.fields {
            let full = serde_json::to_value(v).map_err(io::Error::from)?;
            if let serde_json::Value::Object(mut m) = full {
                let mut kept = serde_json::Map::new();
                for f in fields {
                    kept.insert(f.clone(), m.remove(f).unwrap_or(serde_json::Value::Null));
                }
                let text = serde_json::to_string(&kept).map_err(io::Error::from)?;
                return self.line(text);
            }
        }
        if super::secrets::active() {
            let text = serde_json::to_string(v).map_err(io::Error::from)?;
            return self.line(text);
        }
        // `From<serde_json::Error>` gives back the underlying io::Error (keeping BrokenPipe).
        serde_json::to_writer(&mut self.out, v).map_err(io::Error::from)?;
        self.out.write_all(b"\n")
    }

    /// The human summary of a command whose result is a side effect (`published …`,
    /// `minted …`): one line on stdout, like `git commit`'s summary, and nothing under `-q`
    /// (DEC-CLI-16). Commands that read data print it with [`Output::line`] instead.
    pub fn summary(&mut self, text: impl AsRef<str>) -> io::Result<()> {
        if self.quiet {
            return Ok(());
        }
        // On a narrow terminal a summary naming a full hash breaks between tokens, as the
        // key/value views do (docs/TABLES.md "Key/value views").
        self.view(text)
    }

    /// A status line on stderr (suppressed by `-q`).
    pub fn status(&mut self, text: impl AsRef<str>) {
        if !self.quiet {
            let _ = self.out.flush();
            // Status text may quote stored values: the one escaping rule (DEC-TRUST3-4).
            let text = crate::termtext::escape_text(text.as_ref());
            eprintln!("{}", super::secrets::redact(&fold_stderr(&text)));
        }
    }

    /// A warning on stderr (suppressed by `-q`).
    pub fn warn(&mut self, text: impl AsRef<str>) {
        if !self.quiet {
            let _ = self.out.flush();
            let text = crate::termtext::escape_text(text.as_ref());
            let text = fold_stderr(&format!("world: warning: {text}"));
            let text = super::secrets::redact(&text);
            if self.color {
                eprintln!(
                    "{}",
                    text.replacen("world: warning:", "world: \x1b[33mwarning:\x1b[0m", 1)
                );
            } else {
                eprintln!("{text}");
            }
        }
    }

    /// Flush stdout.
    pub fn flush(&mut self) -> Result<(), CliError> {
        self.out.flush().map_err(CliError::from)
    }
}

/// Whether stderr is coloured (set once from `--color` / `NO_COLOR` when the command starts).
static COLOR: AtomicBool = AtomicBool::new(false);

/// Whether this process colours stderr: `--color always`, or `auto` on a terminal without
/// `NO_COLOR`. Before a command has parsed its options, `false`.
pub fn stderr_color() -> bool {
    COLOR.load(Ordering::Relaxed)
}

/// Wrap `text` in an ANSI SGR colour when `on` (31 red, 32 green, 33 yellow).
pub fn paint(text: &str, sgr: u8, on: bool) -> String {
    if on {
        format!("\x1b[{sgr}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// Unix seconds as RFC 3339 UTC (`2026-12-01T21:12:48Z`); out-of-range values print as the
/// raw number. JSON output keeps the raw number beside it (DEC-CLI-17).
pub fn rfc3339(secs: i64) -> String {
    // Days from the civil date algorithm (H. Hinnant, "chrono-compatible low-level date
    // algorithms"), valid for the proleptic Gregorian calendar.
    if !(-62_135_596_800..=253_402_300_799).contains(&secs) {
        return secs.to_string();
    }
    let days = secs.div_euclid(86_400);
    let tod = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        tod / 3600,
        tod % 3600 / 60,
        tod % 60
    )
}

/// Parse an RFC 3339 UTC time (`2026-12-01T21:12:48Z`, or a date `2026-12-01`) or raw Unix
/// seconds into Unix seconds; `None` when it is neither.
pub fn parse_time(text: &str) -> Option<i64> {
    if let Ok(n) = text.parse::<i64>() {
        return Some(n);
    }
    let (date, time) = match text.split_once('T') {
        Some((d, t)) => (d, Some(t.strip_suffix('Z').unwrap_or(t))),
        None => (text, None),
    };
    let mut dp = date.splitn(3, '-');
    let y: i64 = dp.next()?.parse().ok()?;
    let m: i64 = dp.next()?.parse().ok()?;
    let d: i64 = dp.next()?.parse().ok()?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let (hh, mm, ss) = match time {
        None => (0, 0, 0),
        Some(t) => {
            let mut tp = t.splitn(3, ':');
            let hh: i64 = tp.next()?.parse().ok()?;
            let mm: i64 = tp.next()?.parse().ok()?;
            let ss: i64 = tp.next().unwrap_or("0").parse().ok()?;
            if hh > 23 || mm > 59 || ss > 60 {
                return None;
            }
            (hh, mm, ss)
        }
    };
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hh * 3600 + mm * 60 + ss)
}

/// Unix milliseconds as RFC 3339 UTC: `2026-12-01T21:12:48Z`, with `.mmm` when the value is
/// not a whole second (`1970-01-01T00:00:00.010Z`). Out-of-range values print as the raw
/// number followed by ` ms`. The ledger commands print this in text; their JSON keeps the
/// milliseconds and adds this beside them (DEC-LEDGER-CLI-2).
pub fn rfc3339_ms(ms: u128) -> String {
    let Ok(secs) = i64::try_from(ms / 1000) else {
        return format!("{ms} ms");
    };
    let base = rfc3339(secs);
    if !base.ends_with('Z') {
        return format!("{ms} ms");
    }
    match ms % 1000 {
        0 => base,
        frac => format!("{}.{frac:03}Z", base.trim_end_matches('Z')),
    }
}

/// Parse a point in time given on the command line as Unix milliseconds: a canonical unsigned
/// decimal (`1700000000000`) is taken as milliseconds; otherwise an RFC 3339 date-time
/// (`2026-12-01T21:12:48Z`, `2026-12-01T21:12:48.250+01:00`; fractions beyond milliseconds
/// are refused rather than rounded). `None` when it is neither, or before 1970.
pub fn parse_time_ms(text: &str) -> Option<u128> {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        if text.len() > 1 && text.starts_with('0') {
            return None;
        }
        return text.parse::<u128>().ok();
    }
    let (date, time) = text.split_once(['T', 't'])?;
    // The zone: Z, or ±hh:mm.
    let (clock, offset_s): (&str, i64) = if let Some(c) = time.strip_suffix(['Z', 'z']) {
        (c, 0)
    } else {
        let at = time.rfind(['+', '-'])?;
        let (c, z) = time.split_at(at);
        let sign = if z.starts_with('-') { -1 } else { 1 };
        let (h, m) = z[1..].split_once(':')?;
        if h.len() != 2 || m.len() != 2 {
            return None;
        }
        let (h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
        if h > 23 || m > 59 {
            return None;
        }
        (c, sign * (h * 3600 + m * 60))
    };
    let (whole, frac) = match clock.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (clock, None),
    };
    let mut parts = whole.split(':');
    let (h, m, sec) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some()
        || [h, m, sec]
            .iter()
            .any(|p| p.len() != 2 || !p.bytes().all(|b| b.is_ascii_digit()))
        || date.len() != 10
    {
        return None;
    }
    let millis: i64 = match frac {
        None => 0,
        Some(f) if !f.is_empty() && f.len() <= 3 && f.bytes().all(|b| b.is_ascii_digit()) => {
            format!("{f:0<3}").parse().ok()?
        }
        Some(_) => return None,
    };
    let secs = parse_time(&format!("{date}T{whole}Z"))?;
    let total = (secs - offset_s).checked_mul(1000)?.checked_add(millis)?;
    u128::try_from(total).ok()
}

/// Shorten a ref for tables: `sha256:0123456789ab…`.
pub fn short(r: &str) -> String {
    match r.strip_prefix("sha256:") {
        Some(hex) if hex.len() > 12 => format!("{}…", &hex[..12]),
        _ => r.to_string(),
    }
}

/// The terminal width for tables: `COLUMNS` when set, else the width of stdout when it is a
/// terminal, else `None` (a pipe gets rows at their natural width, never wrapped).
pub fn terminal_width() -> Option<u16> {
    if let Some(c) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse::<u16>().ok())
        .filter(|c| *c >= 20)
    {
        return Some(c);
    }
    if !io::IsTerminal::is_terminal(&io::stdout()) {
        return None;
    }
    // SAFETY: TIOCGWINSZ writes one `winsize` into the struct we own.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
    (ok && ws.ws_col >= 20).then_some(ws.ws_col)
}

/// The width for lines on stderr: `COLUMNS` when set, else stderr's terminal width, else
/// `None` (a pipe or file: lines unchanged).
pub fn stderr_width() -> Option<usize> {
    if let Some(c) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse::<usize>().ok())
        .filter(|c| *c >= 20)
    {
        return Some(c);
    }
    if !io::IsTerminal::is_terminal(&io::stderr()) {
        return None;
    }
    // SAFETY: TIOCGWINSZ writes one `winsize` into the struct we own.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::ioctl(libc::STDERR_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
    (ok && ws.ws_col >= 20).then_some(usize::from(ws.ws_col))
}

/// `text`'s lines for stderr, each broken between tokens to [`stderr_width`]
/// ([`super::table::fold`]): a status line naming a full hash never splits it on a narrow
/// terminal.
pub fn fold_stderr(text: &str) -> String {
    let limit = stderr_width();
    if limit.is_none() {
        return text.to_string();
    }
    text.split('\n')
        .flat_map(|l| super::table::fold(l, limit))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The stderr note of a table whose columns were hidden to fit the terminal.
pub fn hidden_note(hidden: &[&str]) -> String {
    format!(
        "(hidden to fit the terminal: {}; a wider terminal, COLUMNS=200 or --json shows them)",
        hidden.join(", ")
    )
}

/// A table whose columns are all identifiers, the first always kept and the others hidden
/// right to left on a narrow terminal ([`super::table::Table::plain`]); commands that know
/// their columns' kinds build a [`super::table::Table`] of [`super::table::Col`]s instead.
/// `_color` is kept for the callers' signature: tables print no colour.
pub fn table(headers: &[&str], _color: bool) -> super::table::Table {
    super::table::Table::plain(headers)
}

/// Render a table without trailing spaces on any line; every control character in a cell is
/// shown escaped (DEC-TRUST3-4: the table escapes through `table::cell_text` before the table measures it).
pub fn render_table(t: &super::table::Table) -> String {
    t.render()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trips_through_parse_time() {
        for s in [0i64, 1_700_000_000, 1_796_155_661, 951_782_400, -86_400] {
            assert_eq!(parse_time(&rfc3339(s)), Some(s), "{}", rfc3339(s));
        }
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(parse_time("2023-11-14"), Some(1_699_920_000));
        assert_eq!(parse_time("yesterday"), None);
    }

    #[test]
    fn milliseconds_print_as_rfc3339_and_parse_back() {
        assert_eq!(rfc3339_ms(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_ms(10), "1970-01-01T00:00:00.010Z");
        assert_eq!(rfc3339_ms(1_700_000_000_250), "2023-11-14T22:13:20.250Z");
        for ms in [0u128, 10, 999, 1_000, 1_700_000_000_250, 4_102_444_800_000] {
            assert_eq!(
                parse_time_ms(&rfc3339_ms(ms)),
                Some(ms),
                "{}",
                rfc3339_ms(ms)
            );
            assert_eq!(parse_time_ms(&ms.to_string()), Some(ms));
        }
        assert_eq!(
            parse_time_ms("2023-11-14T23:13:20.25+01:00"),
            Some(1_700_000_000_250)
        );
        assert_eq!(
            parse_time_ms("2023-11-14T22:13:20z"),
            Some(1_700_000_000_000)
        );
        for bad in [
            "",
            "01",
            "-1",
            "1.5",
            "1e3",
            "2023-11-14",
            "2023-11-14T22:13:20",
            "2023-11-14T22:13:20.1234Z",
            "1969-12-31T23:59:59Z",
            "2023-13-01T00:00:00Z",
            "2023-11-14T22:13Z",
            "yesterday",
        ] {
            assert_eq!(parse_time_ms(bad), None, "{bad}");
        }
    }
}
