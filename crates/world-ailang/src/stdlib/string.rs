//! `std/string` (ailang.md §5): rune semantics, Go `strings` behaviour.

use super::{arg_int, arg_list, arg_str, b, ret_list, ret_str};
use crate::diag::Span;
use crate::eval::{rt, Fail, Machine};
use crate::value::{Builtin, Value};

/// Largest string `repeat` may build (bytes); beyond it the memory cap would refuse anyway.
const MAX_REPEAT_BYTES: usize = 64 * 1024 * 1024;

fn s0(a: &[Value], sp: Span) -> Result<&str, Fail> {
    arg_str(&a[0], sp)
}

fn length(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    Ok(Value::Int(s0(&a, sp)?.chars().count() as i64))
}

/// `substring(s, start, end)`: runes `[start, end)`, indices clamped to `[0, length]`.
fn substring(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let s = s0(&a, sp)?;
    let n = s.chars().count() as i64;
    let start = arg_int(&a[1], sp)?.clamp(0, n) as usize;
    let end = arg_int(&a[2], sp)?.clamp(0, n) as usize;
    if end <= start {
        return ret_str(String::new());
    }
    ret_str(s.chars().skip(start).take(end - start).collect())
}

fn to_upper(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    ret_str(s0(&a, sp)?.to_uppercase())
}
fn to_lower(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    ret_str(s0(&a, sp)?.to_lowercase())
}
/// `trim`: Go `strings.TrimSpace` (Unicode white space).
fn trim(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    ret_str(s0(&a, sp)?.trim().to_string())
}

/// `split(s, sep)`: Go `strings.Split` (`split("a\n", "\n")` = `["a", ""]`; empty `sep`
/// splits into runes).
fn split(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let s = s0(&a, sp)?;
    let sep = arg_str(&a[1], sp)?;
    let mut out = Vec::new();
    if sep.is_empty() {
        for c in s.chars() {
            out.push(Value::str(c.to_string())?);
        }
    } else {
        for part in s.split(sep) {
            out.push(Value::str(part)?);
        }
    }
    ret_list(out)
}

/// `join(xs, sep)`.
/// `join(delimiter, xs)` (v0.41.0); `join(xs, delimiter)`, the dialect-1 order, still runs.
fn join(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let (sep, xs) = match (&a[0], &a[1]) {
        (Value::List(_), _) => (arg_str(&a[1], sp)?, arg_list(&a[0], sp)?),
        _ => (arg_str(&a[0], sp)?, arg_list(&a[1], sp)?),
    };
    let mut out = String::new();
    for (i, x) in xs.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(arg_str(x, sp)?);
    }
    ret_str(out)
}

fn chars(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let mut out = Vec::new();
    for c in s0(&a, sp)?.chars() {
        out.push(Value::str(c.to_string())?);
    }
    ret_list(out)
}

fn contains(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    Ok(Value::Bool(s0(&a, sp)?.contains(arg_str(&a[1], sp)?)))
}
fn starts_with(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    Ok(Value::Bool(s0(&a, sp)?.starts_with(arg_str(&a[1], sp)?)))
}
fn ends_with(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    Ok(Value::Bool(s0(&a, sp)?.ends_with(arg_str(&a[1], sp)?)))
}

/// `find(hay, needle)`: rune index of the first occurrence, or -1.
fn find(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let hay = s0(&a, sp)?;
    Ok(Value::Int(match hay.find(arg_str(&a[1], sp)?) {
        Some(byte) => hay[..byte].chars().count() as i64,
        None => -1,
    }))
}

/// `count(s, sub)`: non-overlapping occurrences (Go `strings.Count`).
fn count(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let s = s0(&a, sp)?;
    let sub = arg_str(&a[1], sp)?;
    let n = if sub.is_empty() {
        s.chars().count() + 1
    } else {
        s.matches(sub).count()
    };
    Ok(Value::Int(n as i64))
}

/// `replace(s, old, new)`: every non-overlapping occurrence (Go `strings.ReplaceAll`).
fn replace(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let s = s0(&a, sp)?;
    let old = arg_str(&a[1], sp)?;
    let new = arg_str(&a[2], sp)?;
    if old.is_empty() {
        return ret_str(s.to_string());
    }
    ret_str(s.replace(old, new))
}

fn repeat(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let s = s0(&a, sp)?;
    let n = arg_int(&a[1], sp)?;
    if n < 0 {
        return Err(rt("RT_ARG_001", "repeat: negative count", sp));
    }
    let total = (s.len() as u128) * (n as u128);
    if total > MAX_REPEAT_BYTES as u128 {
        return Err(rt(
            "RT_MEM_001",
            format!("repeat would build {total} bytes; the cap is {MAX_REPEAT_BYTES}"),
            sp,
        ));
    }
    ret_str(s.repeat(n as usize))
}

/// `stringToInt`: Go `strconv.Atoi` on the text (optional sign, decimal digits).
fn string_to_int(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let s = s0(&a, sp)?;
    Ok(match s.parse::<i64>() {
        Ok(i) => Value::some(Value::Int(i)),
        _ => Value::none(),
    })
}

fn string_to_float(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let s = s0(&a, sp)?;
    let bad = s.is_empty() || s.chars().any(|c| c.is_whitespace());
    Ok(match s.parse::<f64>() {
        Ok(f) if !bad => Value::some(Value::Float(f)),
        _ => Value::none(),
    })
}

fn int_to_str(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    ret_str(arg_int(&a[0], sp)?.to_string())
}

/// `floatToStr`: Go `%g` shortest form (as `encode` writes numbers).
fn float_to_str(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    ret_str(super::json::format_g(super::arg_float(&a[0], sp)?))
}

/// `words`: Go `strings.Fields`.
fn words(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let mut out = Vec::new();
    for w in s0(&a, sp)?.split_whitespace() {
        out.push(Value::str(w)?);
    }
    ret_list(out)
}

/// `compare(a, b)`: -1, 0 or 1 by byte order.
fn compare(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    Ok(Value::Int(match s0(&a, sp)?.cmp(arg_str(&a[1], sp)?) {
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Greater => 1,
    }))
}

/// Exports of `std/string`.
pub static EXPORTS: &[Builtin] = &[
    b!("std/string", "length", "(string) -> int", length),
    b!(
        "std/string",
        "substring",
        "(string, int, int) -> string",
        substring
    ),
    b!("std/string", "toUpper", "(string) -> string", to_upper),
    b!("std/string", "toLower", "(string) -> string", to_lower),
    b!("std/string", "trim", "(string) -> string", trim),
    b!("std/string", "split", "(string, string) -> [string]", split),
    b!("std/string", "join", "(string, [string]) -> string", join),
    b!("std/string", "chars", "(string) -> [string]", chars),
    b!(
        "std/string",
        "contains",
        "(string, string) -> bool",
        contains
    ),
    b!(
        "std/string",
        "startsWith",
        "(string, string) -> bool",
        starts_with
    ),
    b!(
        "std/string",
        "endsWith",
        "(string, string) -> bool",
        ends_with
    ),
    b!("std/string", "find", "(string, string) -> int", find),
    b!("std/string", "count", "(string, string) -> int", count),
    b!(
        "std/string",
        "replace",
        "(string, string, string) -> string",
        replace
    ),
    b!("std/string", "repeat", "(string, int) -> string", repeat),
    b!(
        "std/string",
        "stringToInt",
        "(string) -> Option[int]",
        string_to_int
    ),
    b!(
        "std/string",
        "stringToFloat",
        "(string) -> Option[float]",
        string_to_float
    ),
    b!("std/string", "intToStr", "(int) -> string", int_to_str),
    b!(
        "std/string",
        "floatToStr",
        "(float) -> string",
        float_to_str
    ),
    b!("std/string", "words", "(string) -> [string]", words),
    b!("std/string", "compare", "(string, string) -> int", compare),
];
