//! Go-json: the bytes Go's `encoding/json.Marshal` produces (store-format.md §7.1).
//!
//! Used for entry-hash and world-ref preimages, invocation and effect records, journal
//! payloads, `grants_json`, invocation input and phase input. A default serde_json writer is
//! not Go-json: Go escapes `<`, `>`, `&`, U+2028 and U+2029, replaces invalid UTF-8 with
//! U+FFFD, sorts map keys and formats floats its own way.
//!
//! Two ways in:
//! - [`Obj`]: an ordered builder for struct-shaped payloads whose member order the spec fixes.
//! - [`write_any`] / [`any_to_vec`]: a decoded JSON value as Go holds it in `map[string]any`
//!   (object keys sorted by byte order, every number a float64).
//! - [`to_vec`]: any `Serialize` value, objects in serde order (struct declaration order).

use serde_json::Value;
use std::fmt::Write as _;

/// Append `s` as a Go-json string literal (quotes included).
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    write_bytes_as_str(out, s.as_bytes());
}

/// Append raw bytes as a Go-json string literal; each invalid UTF-8 sequence becomes `\ufffd`
/// exactly as Go's encoder does.
pub fn write_bytes_as_str(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    for chunk in bytes.utf8_chunks() {
        write_valid(out, chunk.valid().as_bytes(), true);
        // Go decodes an invalid sequence one byte at a time: one U+FFFD per invalid byte.
        for _ in chunk.invalid() {
            out.extend_from_slice(b"\\ufffd");
        }
    }
    out.push(b'"');
}

/// Append a Go-json string with HTML escaping off (`json.Encoder.SetEscapeHTML(false)`): as
/// [`write_str`], except that `<`, `>` and `&` stay raw (U+2028/U+2029 and controls are still
/// escaped).
pub fn write_str_no_html(out: &mut Vec<u8>, s: &str) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    write_valid(out, s.as_bytes(), false);
    out.push(b'"');
}

/// Append valid UTF-8 `s` escaped as Go does, copying each run of bytes that needs no escape
/// in one go: `"` `\\` and controls are escaped, U+2028 U+2029 become `\\u` forms, and so do
/// `<` `>` `&` when `html` is set (Go's default `SetEscapeHTML(true)`).
fn write_valid(out: &mut Vec<u8>, s: &[u8], html: bool) {
    /// Bytes that may start an escape: controls, `"`, `\\`, `<`, `>`, `&`, and 0xE2 (the lead
    /// byte of U+2028 and U+2029).
    const SPECIAL: [bool; 256] = {
        let mut t = [false; 256];
        let mut b = 0;
        while b < 0x20 {
            t[b] = true;
            b += 1;
        }
        t[b'"' as usize] = true;
        t[b'\\' as usize] = true;
        t[b'<' as usize] = true;
        t[b'>' as usize] = true;
        t[b'&' as usize] = true;
        t[0xE2] = true;
        t
    };
    let mut start = 0;
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        if !SPECIAL[usize::from(b)] || (!html && matches!(b, b'<' | b'>' | b'&')) {
            i += 1;
            continue;
        }
        let escape: Option<&[u8]> = match b {
            b'"' => Some(b"\\\""),
            b'\\' => Some(b"\\\\"),
            b'\n' => Some(b"\\n"),
            b'\r' => Some(b"\\r"),
            b'\t' => Some(b"\\t"),
            0x08 => Some(b"\\b"),
            0x0c => Some(b"\\f"),
            b'<' => Some(b"\\u003c"),
            b'>' => Some(b"\\u003e"),
            b'&' => Some(b"\\u0026"),
            // U+2028 and U+2029 are E2 80 A8 and E2 80 A9 (the input is valid UTF-8).
            0xE2 if s.get(i + 1) == Some(&0x80) && matches!(s.get(i + 2), Some(0xA8 | 0xA9)) => {
                Some(if s[i + 2] == 0xA8 {
                    b"\\u2028"
                } else {
                    b"\\u2029"
                })
            }
            c if c < 0x20 => None,
            _ => {
                i += 1;
                continue;
            }
        };
        out.extend_from_slice(&s[start..i]);
        match escape {
            Some(e) => out.extend_from_slice(e),
            None => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 0x0f)]);
            }
        }
        i += if b == 0xE2 { 3 } else { 1 };
        start = i;
    }
    out.extend_from_slice(&s[start..]);
}

/// Format a float64 as Go's encoder does: shortest round-trip digits, plain decimal when
/// `1e-6 <= |x| < 1e21` (or x is 0), else exponent form `1e+21` / `1e-7`; `-0` stays `-0`.
/// Non-finite values cannot come from JSON and are written as `null`.
pub fn format_float(x: f64) -> String {
    if !x.is_finite() {
        return "null".to_string();
    }
    let abs = x.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let s = format!("{x:e}");
        match s.split_once('e') {
            Some((mant, exp)) if !exp.starts_with('-') => format!("{mant}e+{exp}"),
            _ => s,
        }
    } else {
        format!("{x}")
    }
}

/// Append a decoded JSON value the way Go marshals `any`: object keys sorted by byte order,
/// every number as a float64 (so integers above 2^53 lose precision, `1.0` becomes `1`).
pub fn write_any(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or(0.0);
            out.extend_from_slice(format_float(f).as_bytes())
        }
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_any(out, item);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push(b'{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(out, k);
                out.push(b':');
                write_any(out, &map[k.as_str()]);
            }
            out.push(b'}');
        }
    }
}

/// [`any`] into a fresh buffer.
pub fn any_to_vec(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    write_any(&mut out, v);
    out
}

/// Append a value keeping object members in their stored order (struct declaration order
/// when the value came from `serde_json::to_value` of a struct); integers stay integers.
fn ordered(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                out.extend_from_slice(i.to_string().as_bytes());
            } else if let Some(u) = n.as_u64() {
                out.extend_from_slice(u.to_string().as_bytes());
            } else {
                out.extend_from_slice(format_float(n.as_f64().unwrap_or(0.0)).as_bytes());
            }
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                ordered(out, item);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            out.push(b'{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(out, k);
                out.push(b':');
                ordered(out, item);
            }
            out.push(b'}');
        }
        other => write_any(out, other),
    }
}

/// Go-json of any `Serialize` value: struct members in declaration order, `BTreeMap` keys
/// sorted, integers plain. Fields that hold decoded JSON (`map[string]any` in Go) must be
/// written with [`any_to_vec`] instead, through [`Obj::raw`].
pub fn to_vec<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, serde_json::Error> {
    let v = serde_json::to_value(value)?;
    let mut out = Vec::new();
    ordered(&mut out, &v);
    Ok(out)
}

/// An ordered Go-json object builder: members appear exactly in call order, as a Go struct's
/// fields do. `Obj::new().str("a", "x").int("n", 1).finish()` → `{"a":"x","n":1}`.
#[derive(Debug, Default)]
pub struct Obj {
    buf: Vec<u8>,
}

impl Obj {
    /// Start an empty object.
    pub fn new() -> Self {
        let mut buf = Vec::with_capacity(256);
        buf.push(b'{');
        Obj { buf }
    }

    fn key(&mut self, k: &str) -> &mut Vec<u8> {
        if self.buf.len() > 1 {
            self.buf.push(b',');
        }
        write_str(&mut self.buf, k);
        self.buf.push(b':');
        &mut self.buf
    }

    /// A string member.
    pub fn str(mut self, k: &str, v: &str) -> Self {
        let buf = self.key(k);
        write_str(buf, v);
        self
    }

    /// An int64 member (plain decimal).
    pub fn int(mut self, k: &str, v: i64) -> Self {
        let buf = self.key(k);
        buf.extend_from_slice(v.to_string().as_bytes());
        self
    }

    /// A bool member.
    pub fn bool(mut self, k: &str, v: bool) -> Self {
        let buf = self.key(k);
        buf.extend_from_slice(if v { b"true" } else { b"false" });
        self
    }

    /// A member whose value is already-encoded JSON bytes (e.g. from [`any_to_vec`]).
    pub fn raw(mut self, k: &str, json: &[u8]) -> Self {
        let buf = self.key(k);
        buf.extend_from_slice(json);
        self
    }

    /// A `[]string` member; `None` is Go's nil slice (`null`).
    pub fn strs(mut self, k: &str, v: Option<&[String]>) -> Self {
        let buf = self.key(k);
        match v {
            None => buf.extend_from_slice(b"null"),
            Some(items) => {
                buf.push(b'[');
                for (i, s) in items.iter().enumerate() {
                    if i > 0 {
                        buf.push(b',');
                    }
                    write_str(buf, s);
                }
                buf.push(b']');
            }
        }
        self
    }

    /// Close the object and return its bytes.
    pub fn finish(mut self) -> Vec<u8> {
        self.buf.push(b'}');
        self.buf
    }
}

/// Go `strconv.FormatFloat(f, 'g', -1, 64)`: shortest round-trip digits, exponent form when
/// the decimal exponent is < -4 or >= 6, with at least two exponent digits (`1e+06`).
pub fn format_g(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.to_string();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    // Rust's `{:e}` gives the shortest round-trip digits: `d.ddde±x`.
    let sci = format!("{:e}", f.abs());
    let (mant, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let mut out = String::new();
    if f < 0.0 {
        out.push('-');
    }
    if !(-4..6).contains(&exp) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    } else if exp < 0 {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            out.push_str(&digits);
            for _ in digits.len()..int_len {
                out.push('0');
            }
        } else {
            out.push_str(&digits[..int_len]);
            out.push('.');
            out.push_str(&digits[int_len..]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Go's string encoding written one char at a time: the oracle for the run-copying
    /// [`write_bytes_as_str`].
    fn char_by_char(bytes: &[u8], html: bool) -> Vec<u8> {
        let mut out = vec![b'"'];
        for chunk in bytes.utf8_chunks() {
            for c in chunk.valid().chars() {
                match c {
                    '<' | '>' | '&' if !html => out.push(c as u8),
                    '"' => out.extend_from_slice(b"\\\""),
                    '\\' => out.extend_from_slice(b"\\\\"),
                    '\n' => out.extend_from_slice(b"\\n"),
                    '\r' => out.extend_from_slice(b"\\r"),
                    '\t' => out.extend_from_slice(b"\\t"),
                    '\u{8}' => out.extend_from_slice(b"\\b"),
                    '\u{c}' => out.extend_from_slice(b"\\f"),
                    '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                        out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes())
                    }
                    c if (c as u32) < 0x20 => {
                        out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes())
                    }
                    c => out.extend_from_slice(c.encode_utf8(&mut [0u8; 4]).as_bytes()),
                }
            }
            for _ in chunk.invalid() {
                out.extend_from_slice(b"\\ufffd");
            }
        }
        out.push(b'"');
        out
    }

    proptest! {
        #[test]
        fn bytes_as_str_matches_the_char_by_char_encoding(
            bytes in proptest::collection::vec(any::<u8>(), 0..64),
            text in "[\\PC<>&\"\\\\\u{2028}\u{2029}\u{0}-\u{1f}]{0,24}",
        ) {
            for b in [bytes.as_slice(), text.as_bytes()] {
                let mut out = Vec::new();
                write_bytes_as_str(&mut out, b);
                prop_assert_eq!(&out, &char_by_char(b, true));
            }
            let mut out = Vec::new();
            write_str_no_html(&mut out, &text);
            prop_assert_eq!(&out, &char_by_char(text.as_bytes(), false));
        }
    }

    #[test]
    fn bytes_as_str_escapes_the_line_separators_and_keeps_their_neighbours() {
        let mut out = Vec::new();
        write_bytes_as_str(&mut out, "a\u{2028}b\u{2029}\u{2027}\u{e9}".as_bytes());
        assert_eq!(out, "\"a\\u2028b\\u2029\u{2027}\u{e9}\"".as_bytes());
    }

    fn s(text: &str) -> String {
        let mut out = Vec::new();
        write_str(&mut out, text);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn escapes_follow_go() {
        assert_eq!(s("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(s("\n\r\t\u{8}\u{c}"), r#""\n\r\t\b\f""#);
        assert_eq!(s("\u{1}\u{1f}"), r#""\u0001\u001f""#);
        assert_eq!(s("<a&b>"), r#""\u003ca\u0026b\u003e""#);
        assert_eq!(s("\u{2028}\u{2029}"), r#""\u2028\u2029""#);
        assert_eq!(s("/\u{7f}é☕"), "\"/\u{7f}é☕\"");
        let mut out = Vec::new();
        write_bytes_as_str(&mut out, b"a\x80\xffb");
        assert_eq!(out, br#""a\ufffd\ufffdb""#);
        let mut out = Vec::new();
        write_bytes_as_str(&mut out, b"x\xf0\x9f\x98y");
        assert_eq!(
            out, br#""x\ufffd\ufffd\ufffdy""#,
            "one U+FFFD per invalid byte, as Go"
        );
    }

    #[test]
    fn floats_follow_go() {
        let cases = [
            (1.0, "1"),
            (0.1, "0.1"),
            (-0.0, "-0"),
            (0.0, "0"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (1.5e300, "1.5e+300"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (1.25e-10, "1.25e-10"),
            (123456789.0, "123456789"),
            (9007199254740993.0, "9007199254740992"),
        ];
        for (x, want) in cases {
            assert_eq!(format_float(x), want, "{x}");
        }
    }

    #[test]
    fn any_sorts_keys_and_floats_numbers() {
        let v: Value =
            serde_json::from_str(r#"{"z":1.0,"a":[true,null,"<"],"m":{"b":2,"a":1e21}}"#).unwrap();
        assert_eq!(
            String::from_utf8(any_to_vec(&v)).unwrap(),
            r#"{"a":[true,null,"\u003c"],"m":{"a":1e+21,"b":2},"z":1}"#
        );
    }

    #[test]
    fn ordered_builder_keeps_call_order() {
        let b = Obj::new()
            .str("z", "1")
            .int("a", -3)
            .bool("m", true)
            .strs("n", None)
            .finish();
        assert_eq!(b, br#"{"z":"1","a":-3,"m":true,"n":null}"#);
        #[derive(serde::Serialize)]
        struct S {
            b: i64,
            a: String,
        }
        assert_eq!(
            to_vec(&S {
                b: 2,
                a: "&".into()
            })
            .unwrap(),
            br#"{"b":2,"a":"\u0026"}"#
        );
    }

    proptest! {
        #[test]
        fn deterministic_and_valid_json(text in any::<String>(), x in any::<f64>()) {
            let mut a = Vec::new();
            write_str(&mut a, &text);
            let mut b = Vec::new();
            write_str(&mut b, &text);
            prop_assert_eq!(&a, &b);
            let back: String = serde_json::from_slice(&a).unwrap();
            prop_assert_eq!(back, text);
            if x.is_finite() {
                let f = format_float(x);
                prop_assert_eq!(f.parse::<f64>().unwrap(), x);
            }
        }
    }
}
