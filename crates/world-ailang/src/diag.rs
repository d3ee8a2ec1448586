//! Diagnostics: code families `PAR`, `MOD`, `LDR`, `TC`, `RT` with `file:line:column`
//! (ailang.md §3 "Error-code families").

use std::fmt;

/// A 1-based source position (`line`, `column` in characters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, counted in characters (runes).
    pub col: u32,
}

impl Span {
    /// A position at `line`:`col`.
    pub fn new(line: u32, col: u32) -> Self {
        Span { line, col }
    }
}

/// How serious a diagnostic is: errors fail `check`/`run`, warnings are printed only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// Fails the command (exit 1).
    Error,
    /// Printed on stderr; does not fail.
    Warning,
}

/// One diagnostic, printed as `Error: <CODE>: <message> (at <file>:<line>:<col>)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diag {
    /// Code such as `PAR001`, `LDR001`, `TC_ARITY_001`, `RT_DIV_001`.
    pub code: String,
    /// Human message, without the location.
    pub message: String,
    /// The file label (the path as given on the command line).
    pub file: String,
    /// Where; `None` for whole-file problems.
    pub span: Option<Span>,
    /// Error or warning.
    pub severity: Severity,
}

impl Diag {
    /// An error diagnostic.
    pub fn error(code: &str, message: impl Into<String>, span: Option<Span>) -> Self {
        Diag {
            code: code.to_string(),
            message: message.into(),
            file: String::new(),
            span,
            severity: Severity::Error,
        }
    }

    /// A warning diagnostic.
    pub fn warning(code: &str, message: impl Into<String>, span: Option<Span>) -> Self {
        Diag {
            severity: Severity::Warning,
            ..Diag::error(code, message, span)
        }
    }

    /// The same diagnostic labelled with `file`.
    pub fn in_file(mut self, file: &str) -> Self {
        self.file = file.to_string();
        self
    }

    /// The line printed on stderr: `Error: CODE: message (at file:line:col)` (or `Warning: …`);
    /// the location suffix appears when the position is known.
    pub fn render(&self) -> String {
        let head = match self.severity {
            Severity::Error => "Error",
            Severity::Warning => "Warning",
        };
        if self.code.is_empty() {
            return format!("{head}: {}", self.message);
        }
        format!("{head}: {}: {}", self.code, self.located())
    }

    /// `message (at file:line:col)`; just `message` when the position is unknown.
    pub fn located(&self) -> String {
        match self.span {
            None => self.message.clone(),
            Some(s) if self.file.is_empty() => {
                format!("{} (at {}:{})", self.message, s.line, s.col)
            }
            Some(s) => format!("{} (at {}:{}:{})", self.message, self.file, s.line, s.col),
        }
    }
}

impl fmt::Display for Diag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

/// Several diagnostics, as returned by the front end.
pub type Diags = Vec<Diag>;
