//! Tokens of the AILANG subset (ailang.md §4): `--` and `//` comments, identifiers, numbers, strings
//! with escapes and nested `${…}` interpolation, operators.

use super::diag::{Diag, Span};
use std::rc::Rc;

/// Deepest nesting of `${ … "${ … }" … }` accepted before `PAR_DEPTH`.
pub const MAX_INTERP_NESTING: usize = 64;

/// One piece of a string token.
#[derive(Clone, Debug, PartialEq)]
pub enum LexPart {
    /// Literal text (escapes already decoded).
    Lit(String),
    /// The tokens of `${ … }`, with the position of the `${`.
    Expr(Vec<Token>, Span),
}

/// Token kinds.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// Identifier or keyword (shared, so the parser keeps it without copying).
    Ident(Rc<str>),
    /// Integer literal.
    Int(i64),
    /// Float literal.
    Float(f64),
    /// String literal (possibly interpolated); shared so a lookahead copy is cheap.
    Str(Rc<Vec<LexPart>>),
    /// Punctuation / operator, as written.
    Sym(&'static str),
    /// End of input.
    Eof,
}

/// A token and where it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// Kind.
    pub tok: Tok,
    /// Start position.
    pub span: Span,
}

/// The lexer walks the UTF-8 bytes of the source: ASCII (all of the syntax) is decided a byte
/// at a time, and a character is decoded only where a non-ASCII byte appears (identifiers,
/// whitespace, string text). Columns count characters, as [`Span`] says.
struct Lexer<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    line: u32,
    col: u32,
    /// Pass over the body of every `tests [...]` clause ([`lex_for_run`]).
    skip_tests: bool,
}

/// Tokenise `src`; the first error is returned as a `PAR` diagnostic.
///
/// Errors: `PAR_LEX_001` unexpected character, `PAR_LEX_002` unterminated string,
/// `PAR_LEX_003` bad escape, `PAR_LEX_004` bad number, `PAR_DEPTH` interpolation nested too
/// deep.
pub fn lex(src: &str) -> Result<Vec<Token>, Diag> {
    lex_with(src, false)
}

/// [`lex`] for a run that leaves tests unparsed (`parser::parse_module_for_run`): the body
/// of each `tests [ … ]` clause is passed over without making tokens, and the clause comes
/// out as the two tokens `[` `]`, so the parser skips an empty clause. Strings (with their
/// `${…}` parts) and comments inside the clause are honoured when matching the brackets;
/// a clause whose brackets never close is lexed normally, so the parser reports it.
///
/// Errors: as [`lex`], except for errors inside a skipped clause.
pub fn lex_for_run(src: &str) -> Result<Vec<Token>, Diag> {
    lex_with(src, true)
}

fn lex_with(src: &str, skip_tests: bool) -> Result<Vec<Token>, Diag> {
    let mut lx = Lexer {
        src,
        bytes: src.as_bytes(),
        pos: 0,
        line: 1,
        col: 1,
        skip_tests,
    };
    let (toks, _) = lx.tokens(0)?;
    Ok(toks)
}

/// Words written often enough (keywords and built-in type names) to share one copy each.
const COMMON_WORDS: [&str; 24] = [
    "func", "pure", "export", "let", "in", "if", "then", "else", "match", "true", "false", "not",
    "import", "type", "tests", "string", "int", "bool", "float", "Json", "Some", "None", "Ok",
    "Err",
];

thread_local! {
    static COMMON_IDENTS: [Rc<str>; 24] = COMMON_WORDS.map(Rc::from);
}

/// An identifier token's text: a shared copy for a [`COMMON_WORDS`] entry (no allocation),
/// else a new one.
fn ident(word: &str) -> Rc<str> {
    match COMMON_WORDS.iter().position(|w| *w == word) {
        Some(i) => COMMON_IDENTS.with(|c| Rc::clone(&c[i])),
        None => Rc::from(word),
    }
}

/// The operator or punctuation starting with ASCII byte `b` followed by `next`, longest
/// first (`...`, two-character operators, then one character); `None` if `b` starts none.
fn symbol(b: u8, next: Option<u8>, next2: Option<u8>) -> Option<&'static str> {
    let two = |want: u8, long: &'static str, short: Option<&'static str>| {
        if next == Some(want) {
            Some(long)
        } else {
            short
        }
    };
    match b {
        b'.' if next == Some(b'.') && next2 == Some(b'.') => Some("..."),
        b'.' => Some("."),
        b'-' => two(b'>', "->", Some("-")),
        b'=' => match next {
            Some(b'>') => Some("=>"),
            Some(b'=') => Some("=="),
            _ => Some("="),
        },
        b':' => two(b':', "::", Some(":")),
        b'+' => two(b'+', "++", Some("+")),
        b'|' => two(b'|', "||", Some("|")),
        b'&' => two(b'&', "&&", None),
        b'!' => two(b'=', "!=", Some("!")),
        b'<' => two(b'=', "<=", Some("<")),
        b'>' => two(b'=', ">=", Some(">")),
        b'(' => Some("("),
        b')' => Some(")"),
        b'[' => Some("["),
        b']' => Some("]"),
        b'{' => Some("{"),
        b'}' => Some("}"),
        b',' => Some(","),
        b';' => Some(";"),
        b'*' => Some("*"),
        b'/' => Some("/"),
        b'%' => Some("%"),
        b'\\' => Some("\\"),
        b'@' => Some("@"),
        b'?' => Some("?"),
        b'#' => Some("#"),
        _ => None,
    }
}

impl Lexer<'_> {
    /// The byte `k` bytes ahead (only compared with ASCII, so byte and character lookahead
    /// agree after an ASCII character).
    fn peek_byte(&self, k: usize) -> Option<u8> {
        self.bytes.get(self.pos + k).copied()
    }

    /// The character at the current position.
    fn peek_char(&self) -> Option<char> {
        let b = *self.bytes.get(self.pos)?;
        if b < 0x80 {
            return Some(char::from(b));
        }
        self.src.get(self.pos..)?.chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek_char()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    /// Step over `n` ASCII characters that are not newlines.
    fn bump_ascii(&mut self, n: usize) {
        self.pos += n;
        self.col += n as u32;
    }

    fn here(&self) -> Span {
        Span::new(self.line, self.col)
    }

    /// Lex until EOF (nesting 0) or the `}` closing an interpolation (nesting > 0).
    fn tokens(&mut self, nesting: usize) -> Result<(Vec<Token>, Span), Diag> {
        // About one token per 8 source bytes in the se-tools transitions.
        let mut out = Vec::with_capacity(if nesting == 0 {
            self.bytes.len() / 8
        } else {
            4
        });
        let mut braces = 0usize;
        loop {
            self.skip_trivia();
            let span = self.here();
            let Some(&b) = self.bytes.get(self.pos) else {
                if nesting > 0 {
                    return Err(Diag::error(
                        "PAR_LEX_002",
                        "unterminated string interpolation: missing '}'",
                        Some(span),
                    ));
                }
                out.push(Token {
                    tok: Tok::Eof,
                    span,
                });
                return Ok((out, span));
            };
            if b == b'"' {
                self.bump_ascii(1);
                let parts = self.string(span, nesting)?;
                out.push(Token {
                    tok: Tok::Str(Rc::new(parts)),
                    span,
                });
                continue;
            }
            if b.is_ascii_digit() {
                out.push(Token {
                    tok: self.number(span)?,
                    span,
                });
                continue;
            }
            if b.is_ascii_alphabetic()
                || b == b'_'
                || (b >= 0x80 && self.peek_char().is_some_and(char::is_alphabetic))
            {
                let start = self.pos;
                while let Some(&d) = self.bytes.get(self.pos) {
                    if d.is_ascii_alphanumeric() || d == b'_' || d == b'\'' {
                        self.bump_ascii(1);
                    } else if d >= 0x80 && self.peek_char().is_some_and(char::is_alphanumeric) {
                        self.bump();
                    } else {
                        break;
                    }
                }
                let word = &self.src[start..self.pos];
                out.push(Token {
                    tok: Tok::Ident(ident(word)),
                    span,
                });
                if self.skip_tests && nesting == 0 && word == "tests" {
                    self.pass_over_clause(&mut out);
                }
                continue;
            }
            if nesting > 0 && b == b'}' && braces == 0 {
                self.bump_ascii(1);
                out.push(Token {
                    tok: Tok::Eof,
                    span,
                });
                return Ok((out, span));
            }
            let sym = if b < 0x80 {
                symbol(b, self.peek_byte(1), self.peek_byte(2))
            } else {
                None
            };
            match sym {
                Some(s) => {
                    self.bump_ascii(s.len());
                    if s == "{" {
                        braces += 1;
                    } else if s == "}" {
                        braces = braces.saturating_sub(1);
                    }
                    out.push(Token {
                        tok: Tok::Sym(s),
                        span,
                    });
                }
                None => {
                    let c = self.peek_char().unwrap_or(char::REPLACEMENT_CHARACTER);
                    return Err(Diag::error(
                        "PAR_LEX_001",
                        format!("unexpected character {c:?}"),
                        Some(span),
                    ));
                }
            }
        }
    }

    /// After the keyword `tests`: when a `[` follows, move past its matching close and push
    /// `[` and `]` (at the positions of the two brackets) in place of the clause's tokens.
    /// Nothing is consumed when no `[` follows or the brackets do not close.
    fn pass_over_clause(&mut self, out: &mut Vec<Token>) {
        self.skip_trivia();
        if self.peek_byte(0) != Some(b'[') {
            return;
        }
        let saved = (self.pos, self.line, self.col);
        let open = self.here();
        match self.pass_balanced() {
            Some(close) => {
                out.push(Token {
                    tok: Tok::Sym("["),
                    span: open,
                });
                out.push(Token {
                    tok: Tok::Sym("]"),
                    span: close,
                });
            }
            None => (self.pos, self.line, self.col) = saved,
        }
    }

    /// Step over one byte, keeping the line and (character) column.
    fn step(&mut self) {
        if let Some(&d) = self.bytes.get(self.pos) {
            self.pos += 1;
            if d == b'\n' {
                self.line += 1;
                self.col = 1;
            } else if d & 0xC0 != 0x80 {
                self.col += 1;
            }
        }
    }

    /// From an opening bracket to just past its match, counting `(`/`[`/`{` against
    /// `)`/`]`/`}` as the parser's skip does; the position of the closing bracket, or `None`
    /// at end of input.
    fn pass_balanced(&mut self) -> Option<Span> {
        let mut depth = 0usize;
        loop {
            self.skip_trivia();
            let here = self.here();
            match *self.bytes.get(self.pos)? {
                b'"' => {
                    self.step();
                    self.pass_string(1)?;
                    continue;
                }
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
            self.step();
            if depth == 0 {
                return Some(here);
            }
        }
    }

    /// After an opening quote: to just past the closing one, through escapes and `${…}`
    /// parts (whose code may hold strings and braces of its own); `None` at end of input or
    /// past [`MAX_INTERP_NESTING`] (`nesting` counts the strings this one is inside, plus one).
    fn pass_string(&mut self, nesting: usize) -> Option<()> {
        if nesting > MAX_INTERP_NESTING {
            return None;
        }
        loop {
            match *self.bytes.get(self.pos)? {
                b'"' => {
                    self.step();
                    return Some(());
                }
                b'\\' => {
                    self.step();
                    self.bytes.get(self.pos)?;
                    self.step();
                }
                b'$' if self.peek_byte(1) == Some(b'{') => {
                    self.step();
                    self.step();
                    let mut braces = 0usize;
                    loop {
                        self.skip_trivia();
                        match *self.bytes.get(self.pos)? {
                            b'"' => {
                                self.step();
                                self.pass_string(nesting + 1)?;
                                continue;
                            }
                            b'{' => braces += 1,
                            b'}' if braces == 0 => {
                                self.step();
                                break;
                            }
                            b'}' => braces -= 1,
                            _ => {}
                        }
                        self.step();
                    }
                }
                _ => self.step(),
            }
        }
    }

    fn skip_trivia(&mut self) {
        loop {
            match self.peek_byte(0) {
                Some(b'\n') => {
                    self.pos += 1;
                    self.line += 1;
                    self.col = 1;
                }
                Some(b' ' | b'\t' | b'\r' | 0x0b | 0x0c) => self.bump_ascii(1),
                // Both comment spellings of the v0.41.0 lexer: `--` and `//` to end of line.
                Some(c @ (b'-' | b'/')) if self.peek_byte(1) == Some(c) => {
                    while let Some(&d) = self.bytes.get(self.pos) {
                        if d == b'\n' {
                            break;
                        }
                        self.pos += 1;
                        if d & 0xC0 != 0x80 {
                            self.col += 1;
                        }
                    }
                }
                Some(b) if b >= 0x80 => match self.peek_char() {
                    Some(c) if c.is_whitespace() || c == '\u{feff}' => {
                        self.bump();
                    }
                    _ => return,
                },
                _ => return,
            }
        }
    }

    fn number(&mut self, span: Span) -> Result<Tok, Diag> {
        let mut s = String::new();
        while let Some(d) = self
            .peek_byte(0)
            .filter(|d| d.is_ascii_digit() || *d == b'_')
        {
            if d != b'_' {
                s.push(char::from(d));
            }
            self.bump_ascii(1);
        }
        let mut is_float = false;
        if self.peek_byte(0) == Some(b'.') && self.peek_byte(1).is_some_and(|d| d.is_ascii_digit())
        {
            is_float = true;
            s.push('.');
            self.bump_ascii(1);
            while let Some(d) = self.peek_byte(0).filter(u8::is_ascii_digit) {
                s.push(char::from(d));
                self.bump_ascii(1);
            }
        }
        if matches!(self.peek_byte(0), Some(b'e' | b'E'))
            && (self.peek_byte(1).is_some_and(|d| d.is_ascii_digit())
                || (matches!(self.peek_byte(1), Some(b'+' | b'-'))
                    && self.peek_byte(2).is_some_and(|d| d.is_ascii_digit())))
        {
            is_float = true;
            s.push('e');
            self.bump_ascii(1);
            if let Some(sign) = self.peek_byte(0).filter(|c| *c == b'+' || *c == b'-') {
                s.push(char::from(sign));
                self.bump_ascii(1);
            }
            while let Some(d) = self.peek_byte(0).filter(u8::is_ascii_digit) {
                s.push(char::from(d));
                self.bump_ascii(1);
            }
        }
        if is_float {
            s.parse::<f64>().map(Tok::Float).map_err(|_| {
                Diag::error("PAR_LEX_004", format!("bad float literal {s}"), Some(span))
            })
        } else {
            s.parse::<i64>().map(Tok::Int).map_err(|_| {
                Diag::error(
                    "PAR_LEX_004",
                    format!("integer literal {s} does not fit in 64 bits"),
                    Some(span),
                )
            })
        }
    }

    /// After the opening quote: literal text and `${…}` parts up to the closing quote.
    fn string(&mut self, start: Span, nesting: usize) -> Result<Vec<LexPart>, Diag> {
        let mut parts = Vec::new();
        let mut lit = String::new();
        loop {
            // Plain text up to the next quote, backslash, `$` or newline, copied as one run.
            let run = self.pos;
            while let Some(&d) = self.bytes.get(self.pos) {
                if matches!(d, b'"' | b'\\' | b'$' | b'\n') {
                    break;
                }
                self.pos += 1;
                if d & 0xC0 != 0x80 {
                    self.col += 1;
                }
            }
            lit.push_str(&self.src[run..self.pos]);
            let here = self.here();
            let Some(c) = self.bump() else {
                return Err(Diag::error(
                    "PAR_LEX_002",
                    "unterminated string literal",
                    Some(start),
                ));
            };
            match c {
                '"' => break,
                '\\' => {
                    let Some(e) = self.bump() else {
                        return Err(Diag::error(
                            "PAR_LEX_002",
                            "unterminated string literal",
                            Some(start),
                        ));
                    };
                    match e {
                        'n' => lit.push('\n'),
                        't' => lit.push('\t'),
                        'r' => lit.push('\r'),
                        '0' => lit.push('\0'),
                        '"' => lit.push('"'),
                        '\'' => lit.push('\''),
                        '\\' => lit.push('\\'),
                        '$' => lit.push('$'),
                        'x' => {
                            let h: String = (0..2).filter_map(|_| self.bump()).collect();
                            let v = u32::from_str_radix(&h, 16).ok().and_then(char::from_u32);
                            match v {
                                Some(ch) if h.len() == 2 => lit.push(ch),
                                _ => {
                                    return Err(Diag::error(
                                        "PAR_LEX_003",
                                        format!("bad escape \\x{h}"),
                                        Some(here),
                                    ))
                                }
                            }
                        }
                        'u' => {
                            if self.bump() != Some('{') {
                                return Err(Diag::error(
                                    "PAR_LEX_003",
                                    "bad escape \\u: expected '{'",
                                    Some(here),
                                ));
                            }
                            let mut h = String::new();
                            loop {
                                match self.bump() {
                                    Some('}') => break,
                                    Some(d) if d.is_ascii_hexdigit() && h.len() < 6 => h.push(d),
                                    _ => {
                                        return Err(Diag::error(
                                            "PAR_LEX_003",
                                            "bad escape \\u{…}",
                                            Some(here),
                                        ))
                                    }
                                }
                            }
                            match u32::from_str_radix(&h, 16).ok().and_then(char::from_u32) {
                                Some(ch) => lit.push(ch),
                                None => {
                                    return Err(Diag::error(
                                        "PAR_LEX_003",
                                        format!("bad escape \\u{{{h}}}"),
                                        Some(here),
                                    ))
                                }
                            }
                        }
                        other => {
                            return Err(Diag::error(
                                "PAR_LEX_003",
                                format!("unknown escape \\{other}"),
                                Some(here),
                            ))
                        }
                    }
                }
                '$' if self.peek_byte(0) == Some(b'{') => {
                    self.bump_ascii(1);
                    if nesting + 1 > MAX_INTERP_NESTING {
                        return Err(Diag::error(
                            "PAR_DEPTH",
                            format!("string interpolation nested deeper than {MAX_INTERP_NESTING} levels"),
                            Some(here),
                        ));
                    }
                    if !lit.is_empty() {
                        parts.push(LexPart::Lit(std::mem::take(&mut lit)));
                    }
                    let (toks, _) = self.tokens(nesting + 1)?;
                    parts.push(LexPart::Expr(toks, here));
                }
                other => lit.push(other),
            }
        }
        if !lit.is_empty() || parts.is_empty() {
            parts.push(LexPart::Lit(lit));
        }
        Ok(parts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexes_interpolation_with_nested_strings() {
        let toks = lex(r#""a ${f("b${x}")} c""#).unwrap_or_default();
        assert_eq!(toks.len(), 2);
        let Tok::Str(parts) = &toks[0].tok else {
            panic!("not a string")
        };
        assert_eq!(parts.len(), 3);
    }

    #[test]
    fn unterminated_forms_are_errors() {
        assert_eq!(
            lex("\"abc").map_err(|d| d.code).err().as_deref(),
            Some("PAR_LEX_002")
        );
        assert_eq!(
            lex("\"a ${x").map_err(|d| d.code).err().as_deref(),
            Some("PAR_LEX_002")
        );
        assert_eq!(
            lex("\"a ${\"b").map_err(|d| d.code).err().as_deref(),
            Some("PAR_LEX_002")
        );
    }

    #[test]
    fn a_run_passes_over_tests_clauses_and_keeps_every_later_position() {
        let clause =
            "tests [(\"a]\", [1]), (\"${f(\"}]\")}\", {x: 2}) -- ]]\n // )\n , (\"\\\"]\", 3)]";
        let src = format!("func f(s: string) -> int\n  {clause} =\n  g(\"é\", [s]) -- end\n");
        let full = lex(&src).unwrap_or_default();
        let run = lex_for_run(&src).unwrap_or_default();
        let at = |toks: &[Token]| {
            toks.iter()
                .position(|t| t.tok == Tok::Ident(Rc::from("tests")))
                .unwrap_or(usize::MAX)
        };
        let (i, j) = (at(&full), at(&run));
        assert_eq!(full[..i], run[..j]);
        assert_eq!(run[j + 1].tok, Tok::Sym("["));
        assert_eq!(run[j + 1].span, Span::new(2, 9));
        assert_eq!(run[j + 2].tok, Tok::Sym("]"));
        // Everything after the clause is token for token and position for position the same.
        let after = full
            .iter()
            .position(|t| t.tok == Tok::Sym("="))
            .unwrap_or(0);
        assert_eq!(full[after..], run[j + 3..]);
        assert!(full.len() > run.len() + 10);
        // `tests` not followed by `[` (a record field) and an unclosed clause lex as before.
        for src in [
            "{tests: [1]}",
            "func f() -> int tests [(1, \"x\"",
            "tests [\"${\"]",
        ] {
            assert_eq!(lex(src), lex_for_run(src), "{src}");
        }
    }

    #[test]
    fn numbers_and_comments() {
        let toks = lex("1.5 -- hi\n 42 x.y 1e3 // c\n").unwrap_or_default();
        let kinds: Vec<_> = toks.iter().map(|t| t.tok.clone()).collect();
        assert_eq!(kinds[0], Tok::Float(1.5));
        assert_eq!(kinds[1], Tok::Int(42));
        assert_eq!(kinds[3], Tok::Sym("."));
        assert_eq!(kinds[5], Tok::Float(1000.0));
        assert_eq!(toks[1].span, Span::new(2, 2));
    }
}
