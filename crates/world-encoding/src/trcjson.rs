//! TR-CJSON-1, the transition-registry canonical JSON (store-format.md §7.2).
//!
//! Used for registry revisions and descriptor schemas, effect plans and payloads, finish and
//! effectful outputs, and handler outputs placed in phase results. Parsing is strict (valid
//! UTF-8, no escaped surrogates, no duplicate members, one top-level value, bounded numbers);
//! output has no whitespace, object members sorted by key bytes, numbers normalised to plain
//! decimals, and only the minimal string escapes.

use std::fmt;

/// A parsed TR-CJSON-1 value. Object members are kept sorted by key bytes; numbers hold their
/// normalised decimal text (`1.50e1` → `"15"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CValue {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// A normalised number: plain decimal, no exponent, no leading or trailing zeros.
    Number(String),
    /// A string.
    String(String),
    /// An array, order kept.
    Array(Vec<CValue>),
    /// An object, members sorted by key bytes, keys unique.
    Object(Vec<(String, CValue)>),
}

/// Why a text is not acceptable TR-CJSON-1; the texts follow the reference where it has one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The bytes are not UTF-8.
    #[error("JSON is not valid UTF-8")]
    InvalidUtf8,
    /// A `\ud800`–`\udfff` escape (even a valid pair).
    #[error("JSON string contains an escaped surrogate")]
    EscapedSurrogate,
    /// An object repeats a member name.
    #[error("duplicate object member {0:?}")]
    DuplicateMember(String),
    /// A number's coefficient is too long.
    #[error("number coefficient has {0} digits; limit is 1024")]
    CoefficientTooLong(usize),
    /// A number's exponent is outside ±10000.
    #[error("number exponent {0} is outside ±10000")]
    ExponentTooLarge(String),
    /// A normalised number is longer than 16 384 bytes.
    #[error("normalised number is {0} bytes; limit is 16384")]
    NumberTooLong(usize),
    /// The raw input is over the bound for its use.
    #[error("raw JSON is {size} bytes; limit is {limit}")]
    RawTooLarge {
        /// Input size in bytes.
        size: usize,
        /// The bound in bytes.
        limit: usize,
    },
    /// The canonical output is over the bound for its use.
    #[error("canonical {what} is {size} bytes; limit is {limit}")]
    CanonicalTooLarge {
        /// What was encoded (`schema`, `revision`, `payload`, ...).
        what: &'static str,
        /// Output size in bytes.
        size: usize,
        /// The bound in bytes.
        limit: usize,
    },
    /// Nesting deeper than [`MAX_DEPTH`].
    #[error("JSON nests deeper than {MAX_DEPTH} levels")]
    TooDeep,
    /// Any other syntax error, with the byte offset.
    #[error("invalid JSON at byte {offset}: {reason}")]
    Syntax {
        /// Byte offset of the problem.
        offset: usize,
        /// What was expected or found.
        reason: &'static str,
    },
}

/// Deepest nesting accepted (arrays and objects), so parsing can never exhaust the stack.
pub const MAX_DEPTH: usize = 1000;
const MAX_COEFFICIENT: usize = 1024;
const MAX_EXPONENT: i64 = 10_000;
const MAX_NUMBER_LEN: usize = 16_384;

/// Size bounds for one use of the encoding (store-format.md §7.2 table).
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    /// Largest raw input in bytes.
    pub raw: usize,
    /// Largest canonical output in bytes (`usize::MAX` = unbounded).
    pub canonical: usize,
    /// Name used in the canonical-size message.
    pub what: &'static str,
}

impl Bounds {
    /// Descriptor schemas: raw 262 144 B, canonical 65 536 B.
    pub const SCHEMA: Bounds = Bounds {
        raw: 262_144,
        canonical: 65_536,
        what: "schema",
    };
    /// Registry revisions: raw 16 777 216 B, canonical 8 388 608 B.
    pub const REVISION: Bounds = Bounds {
        raw: 16_777_216,
        canonical: 8_388_608,
        what: "revision",
    };
    /// Effect plans: raw 4 MiB.
    pub const PLAN: Bounds = Bounds {
        raw: 4 * 1024 * 1024,
        canonical: usize::MAX,
        what: "plan",
    };
    /// Effect payloads and invocation outputs: canonical 1 MiB.
    pub const MIB: Bounds = Bounds {
        raw: usize::MAX,
        canonical: 1024 * 1024,
        what: "output",
    };
    /// No bound beyond the machine's.
    pub const UNBOUNDED: Bounds = Bounds {
        raw: usize::MAX,
        canonical: usize::MAX,
        what: "value",
    };
}

/// Parse `raw` strictly (refusing anything §7.2 refuses) within `bounds.raw`.
pub fn parse(raw: &[u8], bounds: Bounds) -> Result<CValue, Error> {
    if raw.len() > bounds.raw {
        return Err(Error::RawTooLarge {
            size: raw.len(),
            limit: bounds.raw,
        });
    }
    let text = std::str::from_utf8(raw).map_err(|_| Error::InvalidUtf8)?;
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
    };
    p.ws();
    let v = p.value(0)?;
    p.ws();
    if p.i != p.s.len() {
        return Err(p.err("text after the top-level value"));
    }
    Ok(v)
}

/// Parse and re-encode canonically, checking both bounds.
pub fn canonicalize(raw: &[u8], bounds: Bounds) -> Result<Vec<u8>, Error> {
    let v = parse(raw, bounds)?;
    encode_bounded(&v, bounds)
}

/// Encode a value canonically and check the canonical bound.
pub fn encode_bounded(v: &CValue, bounds: Bounds) -> Result<Vec<u8>, Error> {
    let out = encode(v);
    if out.len() > bounds.canonical {
        return Err(Error::CanonicalTooLarge {
            what: bounds.what,
            size: out.len(),
            limit: bounds.canonical,
        });
    }
    Ok(out)
}

/// Encode a value canonically (no bound).
pub fn encode(v: &CValue) -> Vec<u8> {
    let mut out = Vec::new();
    write(&mut out, v);
    out
}

fn write(out: &mut Vec<u8>, v: &CValue) {
    match v {
        CValue::Null => out.extend_from_slice(b"null"),
        CValue::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        CValue::Number(n) => out.extend_from_slice(n.as_bytes()),
        CValue::String(s) => write_string(out, s),
        CValue::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write(out, item);
            }
            out.push(b']');
        }
        CValue::Object(members) => {
            out.push(b'{');
            for (i, (k, item)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_string(out, k);
                out.push(b':');
                write(out, item);
            }
            out.push(b'}');
        }
    }
}

/// Append a TR-CJSON-1 string literal: only `"`, `\`, the short escapes and other control
/// characters (`\u00xx`, lowercase) are escaped; everything else is raw UTF-8.
pub fn write_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\u{8}' => out.extend_from_slice(b"\\b"),
            '\t' => out.extend_from_slice(b"\\t"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\u{c}' => out.extend_from_slice(b"\\f"),
            '\r' => out.extend_from_slice(b"\\r"),
            c if (c as u32) < 0x20 => {
                out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes())
            }
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

impl CValue {
    /// The member `key` of an object, if this is an object holding it.
    pub fn get(&self, key: &str) -> Option<&CValue> {
        match self {
            CValue::Object(members) => members
                .binary_search_by(|(k, _)| k.as_bytes().cmp(key.as_bytes()))
                .ok()
                .map(|i| &members[i].1),
            _ => None,
        }
    }

    /// The members, if this is an object.
    pub fn as_object(&self) -> Option<&[(String, CValue)]> {
        match self {
            CValue::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The string, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            CValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The value as an int64, if it is a number that is an integer in range.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            CValue::Number(n) => n.parse().ok(),
            _ => None,
        }
    }

    /// Build an object from members in any order (sorted here); duplicate keys keep the last.
    pub fn object(mut members: Vec<(String, CValue)>) -> CValue {
        members.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        members.dedup_by(|later, earlier| {
            if later.0 == earlier.0 {
                std::mem::swap(later, earlier);
                true
            } else {
                false
            }
        });
        CValue::Object(members)
    }

    /// Convert to a `serde_json::Value` (numbers through f64 when they are not int64).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            CValue::Null => Value::Null,
            CValue::Bool(b) => Value::Bool(*b),
            CValue::Number(n) => n
                .parse::<i64>()
                .map(Value::from)
                .or_else(|_| n.parse::<u64>().map(Value::from))
                .unwrap_or_else(|_| n.parse::<f64>().map(Value::from).unwrap_or(Value::Null)),
            CValue::String(s) => Value::String(s.clone()),
            CValue::Array(items) => Value::Array(items.iter().map(CValue::to_json).collect()),
            CValue::Object(m) => {
                Value::Object(m.iter().map(|(k, v)| (k.clone(), v.to_json())).collect())
            }
        }
    }
}

impl fmt::Display for CValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(&encode(self)))
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn err(&self, reason: &'static str) -> Error {
        Error::Syntax {
            offset: self.i,
            reason,
        }
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    fn lit(&mut self, word: &[u8], v: CValue) -> Result<CValue, Error> {
        if self.s[self.i..].starts_with(word) {
            self.i += word.len();
            Ok(v)
        } else {
            Err(self.err("invalid literal"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<CValue, Error> {
        if depth >= MAX_DEPTH {
            return Err(Error::TooDeep);
        }
        match self.s.get(self.i) {
            None => Err(self.err("unexpected end of JSON input")),
            Some(b'n') => self.lit(b"null", CValue::Null),
            Some(b't') => self.lit(b"true", CValue::Bool(true)),
            Some(b'f') => self.lit(b"false", CValue::Bool(false)),
            Some(b'"') => self.string().map(CValue::String),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(CValue::Array(items));
                }
                loop {
                    self.ws();
                    items.push(self.value(depth + 1)?);
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(CValue::Array(items));
                        }
                        _ => return Err(self.err("expected , or ] in array")),
                    }
                }
            }
            Some(b'{') => {
                self.i += 1;
                let mut members: Vec<(String, CValue)> = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Ok(CValue::Object(members));
                }
                loop {
                    self.ws();
                    if self.s.get(self.i) != Some(&b'"') {
                        return Err(self.err("expected a member name"));
                    }
                    let key = self.string()?;
                    self.ws();
                    if self.s.get(self.i) != Some(&b':') {
                        return Err(self.err("expected : after a member name"));
                    }
                    self.i += 1;
                    self.ws();
                    let v = self.value(depth + 1)?;
                    members.push((key, v));
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            break;
                        }
                        _ => return Err(self.err("expected , or } in object")),
                    }
                }
                members.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                if let Some(w) = members.windows(2).find(|w| w[0].0 == w[1].0) {
                    return Err(Error::DuplicateMember(w[0].0.clone()));
                }
                Ok(CValue::Object(members))
            }
            Some(_) => Err(self.err("invalid character looking for beginning of value")),
        }
    }

    fn hex4(&mut self) -> Result<u32, Error> {
        let digits = self
            .s
            .get(self.i..self.i + 4)
            .ok_or_else(|| self.err("short \\u escape"))?;
        let text = std::str::from_utf8(digits).map_err(|_| self.err("bad \\u escape"))?;
        let v = u32::from_str_radix(text, 16).map_err(|_| self.err("bad \\u escape"))?;
        self.i += 4;
        Ok(v)
    }

    fn string(&mut self) -> Result<String, Error> {
        self.i += 1; // opening quote
        let mut out = String::new();
        loop {
            let start = self.i;
            while let Some(&b) = self.s.get(self.i) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.i += 1;
            }
            // The input was validated as UTF-8 and we only stop at ASCII bytes.
            out.push_str(
                std::str::from_utf8(&self.s[start..self.i]).map_err(|_| Error::InvalidUtf8)?,
            );
            match self.s.get(self.i) {
                None => return Err(self.err("unterminated string")),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.i += 1;
                    let esc = *self
                        .s
                        .get(self.i)
                        .ok_or_else(|| self.err("unterminated string"))?;
                    self.i += 1;
                    match esc {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let cp = self.hex4()?;
                            if (0xD800..=0xDFFF).contains(&cp) {
                                return Err(Error::EscapedSurrogate);
                            }
                            out.push(char::from_u32(cp).ok_or_else(|| self.err("bad \\u escape"))?);
                        }
                        _ => return Err(self.err("invalid escape in string")),
                    }
                }
                Some(_) => return Err(self.err("control character in string")),
            }
        }
    }

    fn digits(&mut self) -> &[u8] {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.s.get(self.i) {
            self.i += 1;
        }
        &self.s[start..self.i]
    }

    fn number(&mut self) -> Result<CValue, Error> {
        let negative = self.s.get(self.i) == Some(&b'-');
        if negative {
            self.i += 1;
        }
        let int = self.digits().to_vec();
        if int.is_empty() {
            return Err(self.err("invalid number"));
        }
        if int.len() > 1 && int[0] == b'0' {
            return Err(self.err("number has a leading zero"));
        }
        let mut frac = Vec::new();
        if self.s.get(self.i) == Some(&b'.') {
            self.i += 1;
            frac = self.digits().to_vec();
            if frac.is_empty() {
                return Err(self.err("invalid number"));
            }
        }
        let mut exp: i64 = 0;
        if let Some(b'e' | b'E') = self.s.get(self.i) {
            self.i += 1;
            let neg_exp = match self.s.get(self.i) {
                Some(b'-') => {
                    self.i += 1;
                    true
                }
                Some(b'+') => {
                    self.i += 1;
                    false
                }
                _ => false,
            };
            let digits = self.digits();
            if digits.is_empty() {
                return Err(self.err("invalid number exponent"));
            }
            let text = String::from_utf8_lossy(digits).into_owned();
            let trimmed = text.trim_start_matches('0');
            if trimmed.len() > 6 {
                return Err(Error::ExponentTooLarge(text));
            }
            let value: i64 = trimmed.parse().unwrap_or(0);
            if value > MAX_EXPONENT {
                return Err(Error::ExponentTooLarge(text));
            }
            exp = if neg_exp { -value } else { value };
        }
        let coefficient = int.len() + frac.len();
        if coefficient > MAX_COEFFICIENT {
            return Err(Error::CoefficientTooLong(coefficient));
        }
        let text = normalise(negative, &int, &frac, exp);
        if text.len() > MAX_NUMBER_LEN {
            return Err(Error::NumberTooLong(text.len()));
        }
        Ok(CValue::Number(text))
    }
}

/// Normalise sign, integer digits, fraction digits and exponent to the canonical plain decimal.
fn normalise(negative: bool, int: &[u8], frac: &[u8], exp: i64) -> String {
    let mut digits: Vec<u8> = int.iter().chain(frac).copied().collect();
    let mut scale = exp - frac.len() as i64; // value = digits × 10^scale
    let lead = digits.iter().take_while(|&&d| d == b'0').count();
    digits.drain(..lead);
    if digits.is_empty() {
        return "0".to_string();
    }
    while digits.last() == Some(&b'0') {
        digits.pop();
        scale += 1;
    }
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    let d = String::from_utf8_lossy(&digits).into_owned();
    if scale >= 0 {
        out.push_str(&d);
        out.extend(std::iter::repeat_n('0', scale as usize));
    } else {
        let point = d.len() as i64 + scale;
        if point > 0 {
            out.push_str(&d[..point as usize]);
            out.push('.');
            out.push_str(&d[point as usize..]);
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-point) as usize));
            out.push_str(&d);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn canon(s: &str) -> Result<String, Error> {
        canonicalize(s.as_bytes(), Bounds::UNBOUNDED).map(|b| String::from_utf8(b).unwrap())
    }

    #[test]
    fn number_normalisation_vectors() {
        for (input, want) in [
            ("1.0", "1"),
            ("1e0", "1"),
            ("-0", "0"),
            ("-0.000e5", "0"),
            ("1.50", "1.5"),
            ("1e-3", "0.001"),
            ("12e2", "1200"),
            ("-12.5E+1", "-125"),
            ("0.0100", "0.01"),
            ("123.456e-5", "0.00123456"),
        ] {
            assert_eq!(canon(input).unwrap(), want, "{input}");
        }
        assert_eq!(
            canon(r#"{"a":1,"b":1.0,"c":1e0,"d":-0}"#).unwrap(),
            r#"{"a":1,"b":1,"c":1,"d":0}"#
        );
    }

    #[test]
    fn keys_sorted_and_strings_minimal() {
        assert_eq!(
            canon(r#" { "z" : [3,2,1], "a":"<&é\u2028", "é":"\u0001\/" } "#).unwrap(),
            "{\"a\":\"<&é\u{2028}\",\"z\":[3,2,1],\"é\":\"\\u0001/\"}"
        );
        // NFC and NFD stay distinct.
        assert_ne!(
            canon(r#"{"s":"é"}"#).unwrap(),
            canon(r#"{"s":"e\u0301"}"#).unwrap()
        );
    }

    #[test]
    fn refusals_with_reference_texts() {
        assert_eq!(
            canon(r#"{"a":1,"a":2}"#).unwrap_err().to_string(),
            r#"duplicate object member "a""#
        );
        assert_eq!(
            canon(r#""\ud800""#).unwrap_err().to_string(),
            "JSON string contains an escaped surrogate"
        );
        assert_eq!(
            canon(r#""\ud83d\ude00""#).unwrap_err(),
            Error::EscapedSurrogate
        );
        assert_eq!(
            canonicalize(b"\"\xff\"", Bounds::UNBOUNDED)
                .unwrap_err()
                .to_string(),
            "JSON is not valid UTF-8"
        );
        let long = "1".repeat(1025);
        assert_eq!(
            canon(&long).unwrap_err().to_string(),
            "number coefficient has 1025 digits; limit is 1024"
        );
        assert!(canon("1e10001").is_err());
        assert!(canon("1 2").is_err());
        assert!(canon("").is_err());
        assert!(canon("01").is_err());
        assert!(canon("[1,]").is_err());
        let raw = format!("\"{}\"", "a".repeat(262_144));
        assert_eq!(
            canonicalize(raw.as_bytes(), Bounds::SCHEMA)
                .unwrap_err()
                .to_string(),
            "raw JSON is 262146 bytes; limit is 262144"
        );
        let big = format!("{{\"a\":\"{}\"}}", "b".repeat(65_536));
        assert_eq!(
            canonicalize(big.as_bytes(), Bounds::SCHEMA)
                .unwrap_err()
                .to_string(),
            "canonical schema is 65544 bytes; limit is 65536"
        );
        let deep = "[".repeat(MAX_DEPTH + 1);
        assert_eq!(canon(&deep).unwrap_err(), Error::TooDeep);
    }

    fn arb_json() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            (-1e9f64..1e9).prop_map(serde_json::Value::from),
            "[a-z<&\u{e9}\"\\\\\n]{0,8}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
                prop::collection::btree_map("[a-z]{1,4}", inner, 0..6)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn deterministic_and_idempotent(v in arb_json()) {
            let raw = serde_json::to_vec_pretty(&v).unwrap();
            let once = canonicalize(&raw, Bounds::UNBOUNDED).unwrap();
            prop_assert_eq!(&canonicalize(&raw, Bounds::UNBOUNDED).unwrap(), &once);
            prop_assert_eq!(&canonicalize(&once, Bounds::UNBOUNDED).unwrap(), &once);
        }
    }
}
