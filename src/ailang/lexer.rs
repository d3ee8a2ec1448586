//! Tokens of the AILANG subset (ailang.md §4): `--` and `//` comments, identifiers, numbers, strings
//! with escapes and nested `${…}` interpolation, operators.

use super::diag::{Diag, Span};

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
    /// Identifier or keyword.
    Ident(String),
    /// Integer literal.
    Int(i64),
    /// Float literal.
    Float(f64),
    /// String literal (possibly interpolated).
    Str(Vec<LexPart>),
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

const SYMS: [&str; 35] = [
    "...", "->", "=>", "::", "++", "||", "&&", "==", "!=", "<=", ">=", "(", ")", "[", "]", "{",
    "}", ",", ";", ":", ".", "=", "|", "<", ">", "+", "-", "*", "/", "%", "!", "\\", "@", "?", "#",
];

struct Lexer<'a> {
    chars: Vec<char>,
    pos: usize,
    line: u32,
    col: u32,
    _src: &'a str,
}

/// Tokenise `src`; the first error is returned as a `PAR` diagnostic.
///
/// Errors: `PAR_LEX_001` unexpected character, `PAR_LEX_002` unterminated string,
/// `PAR_LEX_003` bad escape, `PAR_LEX_004` bad number, `PAR_DEPTH` interpolation nested too
/// deep.
pub fn lex(src: &str) -> Result<Vec<Token>, Diag> {
    let mut lx = Lexer {
        chars: src.chars().collect(),
        pos: 0,
        line: 1,
        col: 1,
        _src: src,
    };
    let (toks, _) = lx.tokens(0)?;
    Ok(toks)
}

impl Lexer<'_> {
    fn peek(&self, k: usize) -> Option<char> {
        self.chars.get(self.pos + k).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.chars.get(self.pos).copied()?;
        self.pos += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    fn here(&self) -> Span {
        Span::new(self.line, self.col)
    }

    /// Lex until EOF (nesting 0) or the `}` closing an interpolation (nesting > 0).
    fn tokens(&mut self, nesting: usize) -> Result<(Vec<Token>, Span), Diag> {
        let mut out = Vec::new();
        let mut braces = 0usize;
        loop {
            self.skip_trivia();
            let span = self.here();
            let Some(c) = self.peek(0) else {
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
            if c == '"' {
                self.bump();
                let parts = self.string(span, nesting)?;
                out.push(Token {
                    tok: Tok::Str(parts),
                    span,
                });
                continue;
            }
            if c.is_ascii_digit() {
                out.push(Token {
                    tok: self.number(span)?,
                    span,
                });
                continue;
            }
            if c.is_alphabetic() || c == '_' {
                let mut s = String::new();
                while let Some(d) = self.peek(0) {
                    if d.is_alphanumeric() || d == '_' || d == '\'' {
                        s.push(d);
                        self.bump();
                    } else {
                        break;
                    }
                }
                out.push(Token {
                    tok: Tok::Ident(s),
                    span,
                });
                continue;
            }
            if nesting > 0 && c == '}' && braces == 0 {
                self.bump();
                out.push(Token {
                    tok: Tok::Eof,
                    span,
                });
                return Ok((out, span));
            }
            let sym = SYMS.iter().find(|s| {
                s.chars()
                    .enumerate()
                    .all(|(i, ch)| self.peek(i) == Some(ch))
            });
            match sym {
                Some(s) => {
                    for _ in 0..s.chars().count() {
                        self.bump();
                    }
                    if *s == "{" {
                        braces += 1;
                    } else if *s == "}" {
                        braces = braces.saturating_sub(1);
                    }
                    out.push(Token {
                        tok: Tok::Sym(s),
                        span,
                    });
                }
                None => {
                    return Err(Diag::error(
                        "PAR_LEX_001",
                        format!("unexpected character {c:?}"),
                        Some(span),
                    ))
                }
            }
        }
    }

    fn skip_trivia(&mut self) {
        loop {
            match self.peek(0) {
                Some(c) if c.is_whitespace() || c == '\u{feff}' => {
                    self.bump();
                }
                // Both comment spellings of the v0.41.0 lexer: `--` and `//` to end of line.
                Some('-' | '/') if self.peek(1) == self.peek(0) => {
                    while let Some(c) = self.peek(0) {
                        if c == '\n' {
                            break;
                        }
                        self.bump();
                    }
                }
                _ => return,
            }
        }
    }

    fn number(&mut self, span: Span) -> Result<Tok, Diag> {
        let mut s = String::new();
        while let Some(d) = self.peek(0).filter(|d| d.is_ascii_digit() || *d == '_') {
            if d != '_' {
                s.push(d);
            }
            self.bump();
        }
        let mut is_float = false;
        if self.peek(0) == Some('.') && self.peek(1).is_some_and(|d| d.is_ascii_digit()) {
            is_float = true;
            s.push('.');
            self.bump();
            while let Some(d) = self.peek(0).filter(|d| d.is_ascii_digit()) {
                s.push(d);
                self.bump();
            }
        }
        if matches!(self.peek(0), Some('e' | 'E'))
            && (self.peek(1).is_some_and(|d| d.is_ascii_digit())
                || (matches!(self.peek(1), Some('+' | '-'))
                    && self.peek(2).is_some_and(|d| d.is_ascii_digit())))
        {
            is_float = true;
            s.push('e');
            self.bump();
            if let Some(sign) = self.peek(0).filter(|c| *c == '+' || *c == '-') {
                s.push(sign);
                self.bump();
            }
            while let Some(d) = self.peek(0).filter(|d| d.is_ascii_digit()) {
                s.push(d);
                self.bump();
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
                '$' if self.peek(0) == Some('{') => {
                    self.bump();
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
