//! The standard library subset (ailang.md §5): `std/json`, `std/string`, `std/list`,
//! `std/option`, `std/result`, `std/math`, `std/io` and the prelude, implemented natively.

pub mod bytes;
pub mod json;
pub mod list;
pub mod option;
pub mod result;
pub mod string;

use super::diag::Span;
use super::eval::{rt, Fail, Machine};
use super::value::{display, show, Builtin, List, Str, Value};

/// Module paths the loader resolves, with their exports.
pub static MODULES: &[(&str, &[Builtin])] = &[
    ("prelude", PRELUDE),
    ("std/json", json::EXPORTS),
    ("std/bytes", bytes::EXPORTS),
    ("std/string", string::EXPORTS),
    ("std/list", list::EXPORTS),
    ("std/option", option::EXPORTS),
    ("std/result", result::EXPORTS),
    ("std/math", MATH),
    ("std/io", IO),
];

/// Types each module exports, with their constructors and arities.
pub fn module_types(path: &str) -> &'static [(&'static str, &'static [(&'static str, usize)])] {
    match path {
        "std/json" => &[(
            "Json",
            &[
                ("JNull", 0),
                ("JBool", 1),
                ("JNumber", 1),
                ("JString", 1),
                ("JArray", 1),
                ("JObject", 1),
            ],
        )],
        "std/option" => &[("Option", &[("Some", 1), ("None", 0)])],
        "std/result" => &[("Result", &[("Ok", 1), ("Err", 1)])],
        _ => &[],
    }
}

/// Names that programs use but that came after AILANG v0.41.0, with the module they belong
/// to: importing one is refused by name (`IMP011`) rather than as a plain unknown export.
pub const AFTER_PINNED_RELEASE: &[(&str, &str)] =
    &[("std/string", "foldChars"), ("std/string", "charAt")];

/// Exports of module `path`, if it exists.
pub fn module(path: &str) -> Option<&'static [Builtin]> {
    MODULES.iter().find(|(p, _)| *p == path).map(|(_, b)| *b)
}

/// The builtin `name` of module `path`.
pub fn lookup(path: &str, name: &str) -> Option<&'static Builtin> {
    module(path)?.iter().find(|b| b.name == name)
}

/// Number of parameters in a builtin's signature.
pub fn arity(b: &Builtin) -> usize {
    let sig = b.sig.trim();
    if !sig.starts_with('(') {
        return 1;
    }
    let mut depth = 0i32;
    let mut commas = 0usize;
    let mut empty = true;
    for (i, c) in sig.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    // A parenthesised tuple not followed by `->` is a single parameter.
                    let rest = sig[i + 1..].trim_start();
                    if !rest.starts_with("->") {
                        return 1;
                    }
                    return if empty { 0 } else { commas + 1 };
                }
            }
            ',' if depth == 1 => commas += 1,
            c if depth >= 1 && !c.is_whitespace() => empty = false,
            _ => {}
        }
    }
    1
}

// ------------------------------------------------------------------ argument helpers

/// The string argument, or `RT_TYPE_001`.
pub fn arg_str(v: &Value, span: Span) -> Result<&str, Fail> {
    match v {
        Value::Str(s) => Ok(s.as_str()),
        other => Err(rt(
            "RT_TYPE_001",
            format!("expected a string argument, got {}", other.kind()),
            span,
        )),
    }
}

/// The int argument, or `RT_TYPE_001`.
pub fn arg_int(v: &Value, span: Span) -> Result<i64, Fail> {
    match v {
        Value::Int(i) => Ok(*i),
        other => Err(rt(
            "RT_TYPE_001",
            format!("expected an int argument, got {}", other.kind()),
            span,
        )),
    }
}

/// The float argument, or `RT_TYPE_001`.
pub fn arg_float(v: &Value, span: Span) -> Result<f64, Fail> {
    match v {
        Value::Float(f) => Ok(*f),
        other => Err(rt(
            "RT_TYPE_001",
            format!("expected a float argument, got {}", other.kind()),
            span,
        )),
    }
}

/// The bool argument, or `RT_TYPE_001`.
pub fn arg_bool(v: &Value, span: Span) -> Result<bool, Fail> {
    match v {
        Value::Bool(b) => Ok(*b),
        other => Err(rt(
            "RT_TYPE_001",
            format!("expected a bool argument, got {}", other.kind()),
            span,
        )),
    }
}

/// The list argument, or `RT_TYPE_001`.
pub fn arg_list(v: &Value, span: Span) -> Result<&List, Fail> {
    match v {
        Value::List(l) => Ok(l),
        other => Err(rt(
            "RT_TYPE_001",
            format!("expected a list argument, got {}", other.kind()),
            span,
        )),
    }
}

/// A string result.
pub fn ret_str(s: String) -> Result<Value, Fail> {
    Ok(Value::Str(Str::new(s)?))
}

/// A list result.
pub fn ret_list(items: Vec<Value>) -> Result<Value, Fail> {
    Ok(Value::List(List::from_vec(items)?))
}

fn show_b(_: &mut Machine, a: Vec<Value>, _: Span) -> Result<Value, Fail> {
    let mut s = String::new();
    if let Some(v) = a.first() {
        show(v, &mut s);
    }
    ret_str(s)
}

fn print_common(m: &mut Machine, a: &[Value], nl: bool) -> Result<Value, Fail> {
    let mut text = a.first().map(display).unwrap_or_default();
    if nl {
        text.push('\n');
    }
    m.write_out(text.as_bytes())?;
    Ok(Value::Unit)
}

fn println_b(m: &mut Machine, a: Vec<Value>, _: Span) -> Result<Value, Fail> {
    print_common(m, &a, true)
}

fn print_b(m: &mut Machine, a: Vec<Value>, _: Span) -> Result<Value, Fail> {
    print_common(m, &a, false)
}

fn int_to_float(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    Ok(Value::Float(arg_int(&a[0], sp)? as f64))
}

/// `floatToInt`: truncation toward zero; NaN gives 0 and out-of-range values saturate.
fn float_to_int(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    Ok(Value::Int(arg_float(&a[0], sp)? as i64))
}

fn num2(
    a: &[Value],
    sp: Span,
    fi: fn(i64, i64) -> i64,
    ff: fn(f64, f64) -> f64,
) -> Result<Value, Fail> {
    match (&a[0], &a[1]) {
        (Value::Int(x), Value::Int(y)) => Ok(Value::Int(fi(*x, *y))),
        (Value::Float(x), Value::Float(y)) => Ok(Value::Float(ff(*x, *y))),
        _ => Err(rt("RT_TYPE_001", "expected two ints or two floats", sp)),
    }
}

fn min_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    num2(&a, sp, i64::min, f64::min)
}

fn max_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    num2(&a, sp, i64::max, f64::max)
}

fn abs_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    match &a[0] {
        Value::Int(x) => Ok(Value::Int(x.wrapping_abs())),
        Value::Float(x) => Ok(Value::Float(x.abs())),
        _ => Err(rt("RT_TYPE_001", "abs expects a number", sp)),
    }
}

fn f1(a: &[Value], sp: Span, f: fn(f64) -> f64) -> Result<Value, Fail> {
    Ok(Value::Float(f(arg_float(&a[0], sp)?)))
}

fn floor_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    f1(&a, sp, f64::floor)
}
fn ceil_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    f1(&a, sp, f64::ceil)
}
fn round_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    f1(&a, sp, f64::round)
}
fn sqrt_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    f1(&a, sp, f64::sqrt)
}
fn sin_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    f1(&a, sp, f64::sin)
}
fn cos_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    f1(&a, sp, f64::cos)
}
fn tan_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    f1(&a, sp, f64::tan)
}
fn asin_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    f1(&a, sp, f64::asin)
}
fn acos_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    f1(&a, sp, f64::acos)
}
fn atan_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    f1(&a, sp, f64::atan)
}
/// `atan2(y, x)`.
fn atan2_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    Ok(Value::Float(
        arg_float(&a[0], sp)?.atan2(arg_float(&a[1], sp)?),
    ))
}
fn exp_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    f1(&a, sp, f64::exp)
}
fn log_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    f1(&a, sp, f64::ln)
}
fn log10_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    f1(&a, sp, f64::log10)
}
fn abs_float_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    f1(&a, sp, f64::abs)
}
/// `abs_Int`: wraps at `i64::MIN` like Go's `-x`.
fn abs_int_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    Ok(Value::Int(arg_int(&a[0], sp)?.wrapping_abs()))
}
fn pi_b(_: &mut Machine, _: Vec<Value>, _: Span) -> Result<Value, Fail> {
    Ok(Value::Float(std::f64::consts::PI))
}
fn e_b(_: &mut Machine, _: Vec<Value>, _: Span) -> Result<Value, Fail> {
    Ok(Value::Float(std::f64::consts::E))
}
fn pow_b(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    Ok(Value::Float(
        arg_float(&a[0], sp)?.powf(arg_float(&a[1], sp)?),
    ))
}

macro_rules! b {
    ($m:expr, $n:expr, $sig:expr, $f:expr) => {
        Builtin {
            module: $m,
            name: $n,
            sig: $sig,
            effect: None,
            f: $f,
        }
    };
    ($m:expr, $n:expr, $sig:expr, $f:expr, $eff:expr) => {
        Builtin {
            module: $m,
            name: $n,
            sig: $sig,
            effect: Some($eff),
            f: $f,
        }
    };
}
pub(crate) use b;

/// Always in scope: `show`, `println`, `print`, numeric conversions.
pub static PRELUDE: &[Builtin] = &[
    b!("prelude", "show", "(a) -> string", show_b),
    b!("prelude", "println", "(string) -> ()", println_b, "IO"),
    b!("prelude", "print", "(string) -> ()", print_b, "IO"),
    b!("prelude", "intToFloat", "(int) -> float", int_to_float),
    b!("prelude", "floatToInt", "(float) -> int", float_to_int),
];

/// `std/io`.
pub static IO: &[Builtin] = &[
    b!("std/io", "println", "(string) -> ()", println_b, "IO"),
    b!("std/io", "print", "(string) -> ()", print_b, "IO"),
];

/// `std/math`.
pub static MATH: &[Builtin] = &[
    b!("std/math", "intToFloat", "(int) -> float", int_to_float),
    b!("std/math", "floatToInt", "(float) -> int", float_to_int),
    b!("std/math", "abs", "(a) -> a", abs_b),
    b!("std/math", "min", "(a, a) -> a", min_b),
    b!("std/math", "max", "(a, a) -> a", max_b),
    b!("std/math", "floor", "(float) -> float", floor_b),
    b!("std/math", "ceil", "(float) -> float", ceil_b),
    b!("std/math", "round", "(float) -> float", round_b),
    b!("std/math", "sqrt", "(float) -> float", sqrt_b),
    b!("std/math", "pow", "(float, float) -> float", pow_b),
    b!("std/math", "sin", "(float) -> float", sin_b),
    b!("std/math", "cos", "(float) -> float", cos_b),
    b!("std/math", "tan", "(float) -> float", tan_b),
    b!("std/math", "asin", "(float) -> float", asin_b),
    b!("std/math", "acos", "(float) -> float", acos_b),
    b!("std/math", "atan", "(float) -> float", atan_b),
    b!("std/math", "atan2", "(float, float) -> float", atan2_b),
    b!("std/math", "exp", "(float) -> float", exp_b),
    b!("std/math", "log", "(float) -> float", log_b),
    b!("std/math", "log10", "(float) -> float", log10_b),
    b!("std/math", "abs_Float", "(float) -> float", abs_float_b),
    b!("std/math", "abs_Int", "(int) -> int", abs_int_b),
    b!("std/math", "PI", "() -> float", pi_b),
    b!("std/math", "E", "() -> float", e_b),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arity_from_signatures() {
        for (_, bs) in MODULES {
            for b in *bs {
                let n = arity(b);
                assert!(n <= 3, "{} has arity {n}", b.name);
            }
        }
        assert_eq!(lookup("std/json", "jn").map(arity), Some(0));
        assert_eq!(lookup("std/list", "foldl").map(arity), Some(3));
        assert_eq!(lookup("std/json", "encode").map(arity), Some(1));
        assert_eq!(lookup("prelude", "show").map(arity), Some(1));
    }
}
