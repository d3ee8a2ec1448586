//! `std/bytes` with v0.41.0's exports and signatures: `fromString`, `toString`, `toBase64`,
//! `fromBase64`, `fromBase64URL`, `length`, `slice`, `concat`, `concatList`, `fromInts`,
//! `byteAt`, `toInts` (all pure). A `bytes` value is the constructor `#bytes` holding one
//! string whose characters are the bytes U+0000..U+00FF (a name no program can write), so
//! equality, `show` and the memory cap work as for other values.

use super::{arg_int, arg_list, arg_str, b, ret_list};
use crate::diag::Span;
use crate::eval::{rt, Fail, Machine};
use crate::value::{Builtin, Value};
use base64::Engine;

/// The constructor name a `bytes` value carries.
pub const BYTES_CTOR: &str = "#bytes";

/// A `bytes` value holding `data`.
pub fn bytes_value(data: &[u8]) -> Result<Value, Fail> {
    let s: String = data.iter().map(|b| char::from(*b)).collect();
    Ok(Value::ctor(BYTES_CTOR, vec![Value::str(s)?]))
}

/// The bytes of a `bytes` argument, or `RT_TYPE_001`.
pub fn arg_bytes(v: &Value, sp: Span) -> Result<Vec<u8>, Fail> {
    if let Value::Ctor(n, items) = v {
        if &**n == BYTES_CTOR {
            if let Some(Value::Str(s)) = items.first() {
                return Ok(s.as_str().chars().map(|c| c as u32 as u8).collect());
            }
        }
    }
    Err(rt(
        "RT_TYPE_001",
        format!("expected a bytes argument, got {}", v.kind()),
        sp,
    ))
}

fn from_string(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    bytes_value(arg_str(&a[0], sp)?.as_bytes())
}

/// Invalid UTF-8 becomes U+FFFD (Go's `strings.ToValidUTF8`-like decoding).
fn to_string(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let b = arg_bytes(&a[0], sp)?;
    Ok(Value::str(String::from_utf8_lossy(&b).into_owned())?)
}

fn to_base64(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let b = arg_bytes(&a[0], sp)?;
    Ok(Value::str(
        base64::engine::general_purpose::STANDARD.encode(b),
    )?)
}

fn from_base64(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let s = arg_str(&a[0], sp)?;
    match base64::engine::general_purpose::STANDARD.decode(s) {
        Ok(b) => Ok(Value::some(bytes_value(&b)?)),
        Err(_) => Ok(Value::none()),
    }
}

/// Base64url without padding (RFC 4648 §5), as JWT segments are written.
fn from_base64_url(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let s = arg_str(&a[0], sp)?;
    match base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(s) {
        Ok(b) => Ok(Value::some(bytes_value(&b)?)),
        Err(_) => Ok(Value::none()),
    }
}

fn length(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    Ok(Value::Int(arg_bytes(&a[0], sp)?.len() as i64))
}

/// `slice(b, start, len)`: `None` when `start < 0`, `len < 0` or `start + len > length(b)`.
fn slice(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let b = arg_bytes(&a[0], sp)?;
    let (start, len) = (arg_int(&a[1], sp)?, arg_int(&a[2], sp)?);
    match (usize::try_from(start), usize::try_from(len)) {
        (Ok(s), Ok(l)) if s.checked_add(l).is_some_and(|e| e <= b.len()) => {
            Ok(Value::some(bytes_value(&b[s..s + l])?))
        }
        _ => Ok(Value::none()),
    }
}

fn concat(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let mut x = arg_bytes(&a[0], sp)?;
    x.extend(arg_bytes(&a[1], sp)?);
    bytes_value(&x)
}

fn concat_list(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let mut out = Vec::new();
    for x in arg_list(&a[0], sp)?.iter() {
        out.extend(arg_bytes(x, sp)?);
    }
    bytes_value(&out)
}

/// `fromInts(xs)`: each element must be 0..=255, else `RT_BYTES_001`.
fn from_ints(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let mut out = Vec::new();
    for x in arg_list(&a[0], sp)?.iter() {
        let i = arg_int(x, sp)?;
        let Ok(b) = u8::try_from(i) else {
            return Err(rt(
                "RT_BYTES_001",
                format!("fromInts: {i} is not a byte (0 to 255)"),
                sp,
            ));
        };
        out.push(b);
    }
    bytes_value(&out)
}

fn byte_at(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let b = arg_bytes(&a[0], sp)?;
    let i = arg_int(&a[1], sp)?;
    Ok(match usize::try_from(i).ok().and_then(|i| b.get(i)) {
        Some(x) => Value::some(Value::Int(i64::from(*x))),
        None => Value::none(),
    })
}

fn to_ints(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let b = arg_bytes(&a[0], sp)?;
    ret_list(b.into_iter().map(|x| Value::Int(i64::from(x))).collect())
}

/// Exports of `std/bytes`.
pub static EXPORTS: &[Builtin] = &[
    b!("std/bytes", "fromString", "(string) -> bytes", from_string),
    b!("std/bytes", "toString", "(bytes) -> string", to_string),
    b!("std/bytes", "toBase64", "(bytes) -> string", to_base64),
    b!(
        "std/bytes",
        "fromBase64",
        "(string) -> Option[bytes]",
        from_base64
    ),
    b!(
        "std/bytes",
        "fromBase64URL",
        "(string) -> Option[bytes]",
        from_base64_url
    ),
    b!("std/bytes", "length", "(bytes) -> int", length),
    b!(
        "std/bytes",
        "slice",
        "(bytes, int, int) -> Option[bytes]",
        slice
    ),
    b!("std/bytes", "concat", "(bytes, bytes) -> bytes", concat),
    b!("std/bytes", "concatList", "([bytes]) -> bytes", concat_list),
    b!("std/bytes", "fromInts", "([int]) -> bytes", from_ints),
    b!(
        "std/bytes",
        "byteAt",
        "(bytes, int) -> Option[int]",
        byte_at
    ),
    b!("std/bytes", "toInts", "(bytes) -> [int]", to_ints),
];
