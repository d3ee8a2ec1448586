//! The one escaping rule for human output (issue 26 §4, DEC-TRUST3-4).
//!
//! Every text (not `--json`) output of a value a client or a file supplied — a commit's
//! `writtenBy`, an object's `semanticId` or `provenance`, a `rest:` id, a manifest's title, an
//! approval summary — goes through this module before it reaches a terminal, so it cannot
//! clear the screen, set the window title, move the cursor or print a line that looks like
//! `world`'s own. Control characters (C0, DEL, C1) and the format characters that reorder or
//! hide text (bidi embeddings, overrides and isolates, zero-width characters, the BOM) are
//! shown escaped the way Rust escapes a character (`\u{1b}`, `\n`, `\t`, `\u{202e}`); all
//! other text, non-ASCII included, is shown as is. JSON output needs nothing: JSON escapes
//! control characters itself.
//!
//! [`escape_line`] is for a value shown on one line or in one table cell (a newline too is
//! escaped); [`escape_text`] for multi-line text shown as lines (an approval summary), where
//! newlines are kept and every other control is escaped.

use std::borrow::Cow;

/// Unicode format characters that reorder or hide text on a terminal (bidi embeddings,
/// overrides and isolates, zero-width characters, the BOM).
pub fn is_deceptive(c: char) -> bool {
    matches!(c,
        '\u{061C}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

/// Whether `c` is shown escaped (newlines aside, see [`escape_text`]).
pub fn needs_escape(c: char) -> bool {
    c.is_control() || is_deceptive(c)
}

fn escape(text: &str, keep_newlines: bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| needs_escape(c) && !(keep_newlines && c == '\n');
    // Printable ASCII (0x20–0x7e) is never a control or deceptive character: most values are
    // only that, checked a byte at a time (`world log` escapes every cell, issue 34).
    if text.bytes().all(|b| (0x20..0x7f).contains(&b)) || !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A value shown on one line or in one table cell: every control character, the newline
/// included, and every deceptive format character escaped.
pub fn escape_line(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

/// Multi-line text shown as lines: newlines kept, every other control character and every
/// deceptive format character escaped.
pub fn escape_text(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_deceptive_characters_are_escaped() {
        let evil = "evil\u{1b}[2J\u{1b}]0;PWNED\u{7}\nINDEX FAKE LINE\r\u{202e}x\u{9b}";
        let line = escape_line(evil);
        assert!(!line.chars().any(needs_escape), "{line}");
        assert_eq!(
            line,
            "evil\\u{1b}[2J\\u{1b}]0;PWNED\\u{7}\\nINDEX FAKE LINE\\r\\u{202e}x\\u{9b}"
        );
        let text = escape_text(evil);
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(!text.chars().any(|c| c != '\n' && needs_escape(c)));
        assert!(matches!(escape_line("plain ünïcode"), Cow::Borrowed(_)));
    }
}
