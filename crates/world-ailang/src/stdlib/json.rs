//! `std/json` (ailang.md §5): the `Json` ADT, `decode`/`encode` with Go `encoding/json`
//! behaviour (streaming decoder, `%g` numbers, escapes, duplicates kept, U+FFFD), and the
//! constructors and accessors.

use super::{arg_bool, arg_float, arg_int, arg_list, arg_str, b, ret_list, ret_str};
use crate::diag::Span;
use crate::eval::{rt, Fail, Machine};
use crate::value::{Builtin, List, Value};
use std::fmt::Write as _;
use std::rc::Rc;

/// Deepest array/object nesting `decode` accepts (Go's scanner limit).
pub const MAX_JSON_DEPTH: usize = 10_000;

// ------------------------------------------------------------------ number formatting

pub use world_encoding::gojson::format_g;

// ------------------------------------------------------------------ encode

fn encode_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if (c as u32) > 0xFFFF => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{:04x}", unit);
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Encode a `Json` value (members in list order, duplicates kept). NaN and infinities,
/// which JSON cannot hold, encode as `null`.
pub fn encode(v: &Value, out: &mut String, span: Span) -> Result<(), Fail> {
    encode_at(v, out, span, 0)
}

fn encode_at(v: &Value, out: &mut String, span: Span, depth: usize) -> Result<(), Fail> {
    if depth > MAX_JSON_DEPTH {
        return Err(rt(
            "RT_DEPTH_001",
            format!("encode: the value nests deeper than {MAX_JSON_DEPTH} levels"),
            span,
        ));
    }
    let encode = |x: &Value, out: &mut String, span: Span| encode_at(x, out, span, depth + 1);
    let Value::Ctor(name, args) = v else {
        return Err(rt(
            "RT_TYPE_001",
            format!("encode expects a Json value, got {}", v.kind()),
            span,
        ));
    };
    match (&**name, &args[..]) {
        ("JNull", []) => out.push_str("null"),
        ("JBool", [Value::Bool(b)]) => out.push_str(if *b { "true" } else { "false" }),
        ("JNumber", [Value::Float(f)]) => {
            if f.is_finite() {
                out.push_str(&format_g(*f))
            } else {
                out.push_str("null")
            }
        }
        ("JString", [Value::Str(s)]) => encode_str(s.as_str(), out),
        ("JArray", [Value::List(items)]) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                encode(x, out, span)?;
            }
            out.push(']');
        }
        ("JObject", [Value::List(members)]) => {
            out.push('{');
            for (i, m) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let (Some(Value::Str(k)), Some(val)) = (m.field("key"), m.field("value")) else {
                    return Err(rt(
                        "RT_TYPE_001",
                        "a JObject member is not {key: string, value: Json}",
                        span,
                    ));
                };
                encode_str(k.as_str(), out);
                out.push(':');
                encode(val, out, span)?;
            }
            out.push('}');
        }
        _ => {
            return Err(rt(
                "RT_TYPE_001",
                format!("encode expects a Json value, got {name}"),
                span,
            ))
        }
    }
    Ok(())
}

// ------------------------------------------------------------------ decode

/// A decoded JSON tree, independent of the evaluator.
#[derive(Clone, Debug, PartialEq)]
pub enum J {
    /// null
    Null,
    /// true/false
    Bool(bool),
    /// number (as float; see [`decode_bytes`])
    Num(f64),
    /// string
    Str(String),
    /// array
    Arr(Vec<J>),
    /// object, members in source order, duplicates kept
    Obj(Vec<(String, J)>),
}

struct Dec<'a> {
    b: &'a [u8],
    i: usize,
    depth: usize,
}

fn quote_char(c: u8) -> String {
    match c {
        b'\'' => "'\\''".to_string(),
        b'"' => "'\"'".to_string(),
        b'\x07' => "'\\a'".to_string(),
        b'\x08' => "'\\b'".to_string(),
        b'\x0c' => "'\\f'".to_string(),
        b'\n' => "'\\n'".to_string(),
        b'\r' => "'\\r'".to_string(),
        b'\t' => "'\\t'".to_string(),
        b'\x0b' => "'\\v'".to_string(),
        c if c < 0x20 || c == 0x7f => format!("'\\x{c:02x}'"),
        c if (0x80..0xa0).contains(&c) => format!("'\\u{:04x}'", c as u32),
        c => format!("'{}'", char::from(c)),
    }
}

/// Why [`decode_bytes`] refused its input; `Display` is Go's `encoding/json` message, which
/// programs see (`invalid json: <message>`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Nothing but whitespace.
    #[error("EOF")]
    Empty,
    /// The input ends inside a value.
    #[error("unexpected EOF")]
    UnexpectedEof,
    /// A byte that cannot appear here; `context` is Go's phrase (`looking for beginning of
    /// value`, `after array element`, …).
    #[error("invalid character {} {}", quote_char(*.byte), .context)]
    InvalidCharacter {
        /// The offending byte.
        byte: u8,
        /// Where it was found.
        context: String,
    },
    /// Nested deeper than `MAX_JSON_DEPTH`.
    #[error("exceeded max depth")]
    TooDeep,
}

/// Decoder results.
type DResult<T> = Result<T, DecodeError>;

impl Dec<'_> {
    fn ws(&mut self) {
        while let Some(c) = self.b.get(self.i) {
            if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                self.i += 1;
            } else {
                break;
            }
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn bad(&self, c: u8, ctx: &str) -> DecodeError {
        DecodeError::InvalidCharacter {
            byte: c,
            context: ctx.to_string(),
        }
    }

    fn value(&mut self) -> DResult<J> {
        self.ws();
        let Some(c) = self.peek() else {
            return Err(DecodeError::UnexpectedEof);
        };
        match c {
            b'{' => {
                self.i += 1;
                self.nest()?;
                let mut members = Vec::new();
                self.ws();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    self.depth -= 1;
                    return Ok(J::Obj(members));
                }
                loop {
                    self.ws();
                    match self.peek() {
                        None => return Err(DecodeError::UnexpectedEof),
                        Some(b'"') => {}
                        Some(c) => {
                            return Err(self.bad(c, "looking for beginning of object key string"))
                        }
                    }
                    self.i += 1;
                    let k = self.string()?;
                    self.ws();
                    match self.peek() {
                        None => return Err(DecodeError::UnexpectedEof),
                        Some(b':') => self.i += 1,
                        Some(c) => return Err(self.bad(c, "after object key")),
                    }
                    let v = self.value()?;
                    members.push((k, v));
                    self.ws();
                    match self.peek() {
                        None => return Err(DecodeError::UnexpectedEof),
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            self.depth -= 1;
                            return Ok(J::Obj(members));
                        }
                        Some(c) => return Err(self.bad(c, "after object key:value pair")),
                    }
                }
            }
            b'[' => {
                self.i += 1;
                self.nest()?;
                let mut items = Vec::new();
                self.ws();
                if self.peek() == Some(b']') {
                    self.i += 1;
                    self.depth -= 1;
                    return Ok(J::Arr(items));
                }
                loop {
                    items.push(self.value()?);
                    self.ws();
                    match self.peek() {
                        None => return Err(DecodeError::UnexpectedEof),
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            self.depth -= 1;
                            return Ok(J::Arr(items));
                        }
                        Some(c) => return Err(self.bad(c, "after array element")),
                    }
                }
            }
            b'"' => {
                self.i += 1;
                Ok(J::Str(self.string()?))
            }
            b't' => self.lit("true", J::Bool(true)),
            b'f' => self.lit("false", J::Bool(false)),
            b'n' => self.lit("null", J::Null),
            b'-' | b'0'..=b'9' => self.number(),
            c => Err(self.bad(c, "looking for beginning of value")),
        }
    }

    fn nest(&mut self) -> DResult<()> {
        self.depth += 1;
        if self.depth > MAX_JSON_DEPTH {
            return Err(DecodeError::TooDeep);
        }
        Ok(())
    }

    fn lit(&mut self, word: &str, v: J) -> DResult<J> {
        for (k, expect) in word.bytes().enumerate() {
            match self.peek() {
                None => return Err(DecodeError::UnexpectedEof),
                Some(c) if c == expect => self.i += 1,
                Some(c) => {
                    let ctx = format!("in literal {word} (expecting {})", quote_char(expect));
                    return Err(if k == 0 {
                        self.bad(c, "looking for beginning of value")
                    } else {
                        self.bad(c, &ctx)
                    });
                }
            }
        }
        Ok(v)
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> DResult<J> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            None => return Err(DecodeError::UnexpectedEof),
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            Some(c) => return Err(self.bad(c, "in numeric literal")),
        }
        let mut integral = true;
        if self.peek() == Some(b'.') {
            integral = false;
            self.i += 1;
            match self.peek() {
                None => return Err(DecodeError::UnexpectedEof),
                Some(c) if c.is_ascii_digit() => {
                    self.digits();
                }
                Some(c) => return Err(self.bad(c, "after decimal point in numeric literal")),
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            integral = false;
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            match self.peek() {
                None => return Err(DecodeError::UnexpectedEof),
                Some(c) if c.is_ascii_digit() => {
                    self.digits();
                }
                Some(c) => return Err(self.bad(c, "in exponent of numeric literal")),
            }
        }
        let text = std::str::from_utf8(&self.b[start..self.i]).unwrap_or("0");
        // An integer literal outside int64 becomes 0; an out-of-range float too.
        let v = if integral {
            text.parse::<i64>().map(|i| i as f64).unwrap_or(0.0)
        } else {
            text.parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .unwrap_or(0.0)
        };
        Ok(J::Num(v))
    }

    fn hex4(&mut self) -> DResult<u32> {
        let mut v = 0u32;
        for _ in 0..4 {
            match self.peek() {
                None => return Err(DecodeError::UnexpectedEof),
                Some(c) if c.is_ascii_hexdigit() => {
                    v = v * 16 + (c as char).to_digit(16).unwrap_or(0);
                    self.i += 1;
                }
                Some(c) => return Err(self.bad(c, "in \\u hexadecimal character escape")),
            }
        }
        Ok(v)
    }

    /// After the opening quote.
    fn string(&mut self) -> DResult<String> {
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(DecodeError::UnexpectedEof);
            };
            match c {
                b'"' => {
                    self.i += 1;
                    return Ok(out);
                }
                b'\\' => {
                    self.i += 1;
                    let Some(e) = self.peek() else {
                        return Err(DecodeError::UnexpectedEof);
                    };
                    self.i += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let u = self.hex4()?;
                            if (0xD800..0xDC00).contains(&u) {
                                // A high surrogate needs `\uDC00-\uDFFF` next; else U+FFFD.
                                let save = self.i;
                                if self.b.get(self.i) == Some(&b'\\')
                                    && self.b.get(self.i + 1) == Some(&b'u')
                                {
                                    self.i += 2;
                                    let lo = self.hex4()?;
                                    if (0xDC00..0xE000).contains(&lo) {
                                        let cp = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                                        out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
                                        continue;
                                    }
                                    self.i = save;
                                }
                                out.push('\u{FFFD}');
                            } else {
                                out.push(char::from_u32(u).unwrap_or('\u{FFFD}'));
                            }
                        }
                        other => return Err(self.bad(other, "in string escape code")),
                    }
                }
                c if c < 0x20 => return Err(self.bad(c, "in string literal")),
                c if c < 0x80 => {
                    out.push(c as char);
                    self.i += 1;
                }
                _ => {
                    // Decode one UTF-8 sequence; each invalid byte becomes U+FFFD (Go).
                    let end = (self.i + 4).min(self.b.len());
                    let chunk = &self.b[self.i..end];
                    let valid = match std::str::from_utf8(chunk) {
                        Ok(s) => s,
                        Err(e) => std::str::from_utf8(&chunk[..e.valid_up_to()]).unwrap_or(""),
                    };
                    match valid.chars().next() {
                        Some(ch) => {
                            out.push(ch);
                            self.i += ch.len_utf8();
                        }
                        None => {
                            out.push('\u{FFFD}');
                            self.i += 1;
                        }
                    }
                }
            }
        }
    }
}

/// Decode the first JSON value in `b` like Go's `json.Decoder` (text after it is ignored).
///
/// Every number is a float; an integer literal outside int64 (and an out-of-range float)
/// becomes 0; invalid UTF-8 and lone surrogates become U+FFFD. Errors carry Go's message
/// (`EOF` for empty input, `unexpected EOF`, `invalid character 'x' looking for beginning of value`).
///
/// # Errors
/// [`DecodeError`].
pub fn decode_bytes(b: &[u8]) -> Result<J, DecodeError> {
    decode_prefix(b).map(|(j, _)| j)
}

/// Like [`decode_bytes`], also returning the byte offset just after the value.
///
/// # Errors
/// [`DecodeError`].
pub fn decode_prefix(b: &[u8]) -> Result<(J, usize), DecodeError> {
    let mut d = Dec { b, i: 0, depth: 0 };
    d.ws();
    if d.peek().is_none() {
        return Err(DecodeError::Empty);
    }
    let j = d.value()?;
    Ok((j, d.i))
}

/// Convert a decoded tree to an AILANG `Json` value.
pub fn to_value(j: &J) -> Result<Value, Fail> {
    Ok(match j {
        J::Null => Value::ctor("JNull", vec![]),
        J::Bool(b) => Value::ctor("JBool", vec![Value::Bool(*b)]),
        J::Num(f) => Value::ctor("JNumber", vec![Value::Float(*f)]),
        J::Str(s) => Value::ctor("JString", vec![Value::str(s.clone())?]),
        J::Arr(items) => {
            let mut vs = Vec::with_capacity(items.len());
            for x in items {
                vs.push(to_value(x)?);
            }
            Value::ctor("JArray", vec![Value::List(List::from_vec(vs)?)])
        }
        J::Obj(ms) => {
            let mut vs = Vec::with_capacity(ms.len());
            for (k, x) in ms {
                vs.push(kv_value(Value::str(k.clone())?, to_value(x)?));
            }
            Value::ctor("JObject", vec![Value::List(List::from_vec(vs)?)])
        }
    })
}

fn kv_value(k: Value, v: Value) -> Value {
    Value::record(vec![(Rc::from("key"), k), (Rc::from("value"), v)])
}

// ------------------------------------------------------------------ builtins

fn decode_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let s = arg_str(&a[0], sp)?;
    match decode_bytes(s.as_bytes()) {
        Ok(j) => Ok(Value::ctor("Ok", vec![to_value(&j)?])),
        Err(e) => Ok(Value::ctor(
            "Err",
            vec![Value::str(format!("invalid json: {e}"))?],
        )),
    }
}

fn encode_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let mut out = String::new();
    encode(&a[0], &mut out, sp)?;
    ret_str(out)
}

fn jn(_: &mut Machine, _: Vec<Value>, _: Span) -> Result<Value, Fail> {
    Ok(Value::ctor("JNull", vec![]))
}
fn jb(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    Ok(Value::ctor(
        "JBool",
        vec![Value::Bool(arg_bool(&a[0], sp)?)],
    ))
}
fn jnum(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    Ok(Value::ctor(
        "JNumber",
        vec![Value::Float(arg_float(&a[0], sp)?)],
    ))
}
fn jint(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    Ok(Value::ctor(
        "JNumber",
        vec![Value::Float(arg_int(&a[0], sp)? as f64)],
    ))
}
fn js(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    arg_str(&a[0], sp)?;
    Ok(Value::ctor("JString", a))
}
fn ja(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    arg_list(&a[0], sp)?;
    Ok(Value::ctor("JArray", a))
}
fn jo(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    arg_list(&a[0], sp)?;
    Ok(Value::ctor("JObject", a))
}
fn kv(_: &mut Machine, mut a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    arg_str(&a[0], sp)?;
    let v = a.pop().unwrap_or(Value::Unit);
    let k = a.pop().unwrap_or(Value::Unit);
    Ok(kv_value(k, v))
}

fn variant<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    match v {
        Value::Ctor(n, args) if &**n == name => args.first(),
        _ => None,
    }
}

fn get_in(obj: &Value, key: &str) -> Option<Value> {
    let Some(Value::List(ms)) = variant(obj, "JObject") else {
        return None;
    };
    ms.iter()
        .find(|m| matches!(m.field("key"), Some(Value::Str(k)) if k.as_str() == key))
        .and_then(|m| m.field("value").cloned())
}

fn opt(v: Option<Value>) -> Value {
    match v {
        Some(x) => Value::some(x),
        None => Value::none(),
    }
}

fn get_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    Ok(opt(get_in(&a[0], arg_str(&a[1], sp)?)))
}
fn has_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    Ok(Value::Bool(get_in(&a[0], arg_str(&a[1], sp)?).is_some()))
}
fn get_or_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    Ok(get_in(&a[0], arg_str(&a[1], sp)?).unwrap_or_else(|| a[2].clone()))
}

fn as_variant(v: &Value, name: &str) -> Value {
    opt(variant(v, name).cloned())
}

fn as_string(_: &mut Machine, a: Vec<Value>, _: Span) -> Result<Value, Fail> {
    Ok(as_variant(&a[0], "JString"))
}
fn as_number(_: &mut Machine, a: Vec<Value>, _: Span) -> Result<Value, Fail> {
    Ok(as_variant(&a[0], "JNumber"))
}
fn as_bool(_: &mut Machine, a: Vec<Value>, _: Span) -> Result<Value, Fail> {
    Ok(as_variant(&a[0], "JBool"))
}
fn as_array(_: &mut Machine, a: Vec<Value>, _: Span) -> Result<Value, Fail> {
    Ok(as_variant(&a[0], "JArray"))
}
fn as_object(_: &mut Machine, a: Vec<Value>, _: Span) -> Result<Value, Fail> {
    Ok(as_variant(&a[0], "JObject"))
}

fn members(v: &Value, field: &str) -> Result<Value, Fail> {
    let mut out = Vec::new();
    if let Some(Value::List(ms)) = variant(v, "JObject") {
        for m in ms.iter() {
            if let Some(x) = m.field(field) {
                out.push(x.clone());
            }
        }
    }
    ret_list(out)
}

fn keys_b(_: &mut Machine, a: Vec<Value>, _: Span) -> Result<Value, Fail> {
    members(&a[0], "key")
}
fn values_b(_: &mut Machine, a: Vec<Value>, _: Span) -> Result<Value, Fail> {
    members(&a[0], "value")
}

fn get_as(a: &[Value], sp: Span, name: &str) -> Result<Value, Fail> {
    Ok(opt(
        get_in(&a[0], arg_str(&a[1], sp)?).and_then(|v| variant(&v, name).cloned())
    ))
}

fn get_string(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    get_as(&a, sp, "JString")
}
fn get_number(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    get_as(&a, sp, "JNumber")
}
/// `getInt`: the number truncated toward zero (the reference's `floatToInt`).
fn get_int(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    Ok(match get_as(&a, sp, "JNumber")? {
        Value::Ctor(_, args) => match args.first() {
            Some(Value::Float(f)) => Value::some(Value::Int(*f as i64)),
            _ => Value::none(),
        },
        other => other,
    })
}
fn get_bool(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    get_as(&a, sp, "JBool")
}
fn get_array(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    get_as(&a, sp, "JArray")
}
/// `getObject`: the member when it is an object (as `Json`).
fn get_object(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    Ok(opt(
        get_in(&a[0], arg_str(&a[1], sp)?).filter(|v| variant(v, "JObject").is_some())
    ))
}

/// Exports of `std/json`.
pub static EXPORTS: &[Builtin] = &[
    b!(
        "std/json",
        "decode",
        "(string) -> Result[Json, string]",
        decode_b
    ),
    b!("std/json", "encode", "(Json) -> string", encode_b),
    b!("std/json", "jn", "() -> Json", jn),
    b!("std/json", "jb", "(bool) -> Json", jb),
    b!("std/json", "jnum", "(float) -> Json", jnum),
    b!("std/json", "jint", "(int) -> Json", jint),
    b!("std/json", "js", "(string) -> Json", js),
    b!("std/json", "ja", "([Json]) -> Json", ja),
    b!(
        "std/json",
        "jo",
        "([{key: string, value: Json}]) -> Json",
        jo
    ),
    b!(
        "std/json",
        "kv",
        "(string, Json) -> {key: string, value: Json}",
        kv
    ),
    b!("std/json", "get", "(Json, string) -> Option[Json]", get_b),
    b!("std/json", "has", "(Json, string) -> bool", has_b),
    b!(
        "std/json",
        "getOr",
        "(Json, string, Json) -> Json",
        get_or_b
    ),
    b!(
        "std/json",
        "asString",
        "(Json) -> Option[string]",
        as_string
    ),
    b!("std/json", "asNumber", "(Json) -> Option[float]", as_number),
    b!("std/json", "asBool", "(Json) -> Option[bool]", as_bool),
    b!("std/json", "asArray", "(Json) -> Option[[Json]]", as_array),
    b!(
        "std/json",
        "asObject",
        "(Json) -> Option[[{key: string, value: Json}]]",
        as_object
    ),
    b!("std/json", "keys", "(Json) -> [string]", keys_b),
    b!("std/json", "values", "(Json) -> [Json]", values_b),
    b!(
        "std/json",
        "getString",
        "(Json, string) -> Option[string]",
        get_string
    ),
    b!(
        "std/json",
        "getNumber",
        "(Json, string) -> Option[float]",
        get_number
    ),
    b!(
        "std/json",
        "getInt",
        "(Json, string) -> Option[int]",
        get_int
    ),
    b!(
        "std/json",
        "getBool",
        "(Json, string) -> Option[bool]",
        get_bool
    ),
    b!(
        "std/json",
        "getArray",
        "(Json, string) -> Option[[Json]]",
        get_array
    ),
    b!(
        "std/json",
        "getObject",
        "(Json, string) -> Option[Json]",
        get_object
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g_format_matches_go() {
        for (f, want) in [
            (1.0, "1"),
            (0.1, "0.1"),
            (123456.0, "123456"),
            (1e6, "1e+06"),
            (0.00001, "1e-05"),
            (0.0001, "0.0001"),
            (1234567.0, "1.234567e+06"),
            (-2.5, "-2.5"),
            (1e21, "1e+21"),
            (1e100, "1e+100"),
            (3.0e-10, "3e-10"),
            (9007199254740993.0, "9.007199254740992e+15"),
        ] {
            assert_eq!(format_g(f), want, "{f}");
        }
    }

    #[test]
    fn decode_go_rules() {
        // The messages are Go's, compared as the text programs see.
        let decode_bytes = |b: &[u8]| super::decode_bytes(b).map_err(|e| e.to_string());
        assert_eq!(decode_bytes(b"{} tail"), Ok(J::Obj(vec![])));
        assert_eq!(decode_bytes(b"123x"), Ok(J::Num(123.0)));
        assert_eq!(decode_bytes(b""), Err("EOF".to_string()));
        assert_eq!(decode_bytes(b"{\"a\":"), Err("unexpected EOF".to_string()));
        assert_eq!(
            decode_bytes(b"x"),
            Err("invalid character 'x' looking for beginning of value".to_string())
        );
        assert_eq!(
            decode_bytes(b"[1 2]"),
            Err("invalid character '2' after array element".to_string())
        );
        assert_eq!(decode_bytes(b"99999999999999999999"), Ok(J::Num(0.0)));
        assert_eq!(
            decode_bytes(b"\"\\ud800x\""),
            Ok(J::Str("\u{FFFD}x".into()))
        );
        assert_eq!(
            decode_bytes(b"\"\\ud83d\\ude00\""),
            Ok(J::Str("\u{1F600}".into()))
        );
        assert_eq!(decode_bytes(b"\"a\xffb\""), Ok(J::Str("a\u{FFFD}b".into())));
        assert_eq!(
            decode_bytes(b"{\"a\":1,\"a\":2}"),
            Ok(J::Obj(vec![
                ("a".into(), J::Num(1.0)),
                ("a".into(), J::Num(2.0))
            ]))
        );
        let deep = "[".repeat(MAX_JSON_DEPTH + 1);
        let r = crate::on_big_stack(move || {
            super::decode_bytes(deep.as_bytes()).map_err(|e| e.to_string())
        });
        assert_eq!(r, Some(Err("exceeded max depth".to_string())));
    }

    #[test]
    fn encode_escapes() {
        let mut out = String::new();
        encode_str("<b>&\"\\\n\u{1}\u{1F600}é", &mut out);
        assert_eq!(out, "\"<b>&\\\"\\\\\\n\\u0001\\ud83d\\ude00é\"");
    }
}

#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::*;

    fn encode_j(j: &J) -> Option<String> {
        let v = to_value(j).ok()?;
        let mut out = String::new();
        encode(&v, &mut out, Span::default()).ok()?;
        Some(out)
    }

    proptest! {
        #[test]
        fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode_bytes(&bytes);
        }

        #[test]
        fn encode_then_decode_is_identity_on_decoded_values(
            text in r#"\{("[a-z\\\\"é😀]{0,4}":(-?[0-9]{1,5}(\.[0-9]{1,3})?|true|null|"[ -~]{0,5}"|\[\]),?){0,4}\}"#
        ) {
            // Not every generated text is valid JSON (trailing commas); valid ones must round-trip.
            if let Ok(j) = decode_bytes(text.as_bytes()) {
                let enc = encode_j(&j).unwrap_or_default();
                prop_assert_eq!(decode_bytes(enc.as_bytes()), Ok(j));
            }
        }

        #[test]
        fn g_format_round_trips(f in any::<f64>().prop_filter("finite", |f| f.is_finite())) {
            let s = format_g(f);
            prop_assert_eq!(s.parse::<f64>().ok(), Some(f));
        }
    }
}
