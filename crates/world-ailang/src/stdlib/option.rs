//! `std/option` (ailang.md §5; the reference's `std/option.ail` argument orders).

use super::{arg_bool, b};
use crate::diag::Span;
use crate::eval::{Fail, Machine};
use crate::value::{Builtin, Value};

fn inner(v: &Value) -> Option<&Value> {
    match v {
        Value::Ctor(n, args) if &**n == "Some" => args.first(),
        _ => None,
    }
}

fn map(m: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    match inner(&a[1]).cloned() {
        Some(x) => Ok(Value::some(m.apply(a[0].clone(), vec![x], sp)?)),
        None => Ok(Value::none()),
    }
}
fn flat_map(m: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    match inner(&a[1]).cloned() {
        Some(x) => m.apply(a[0].clone(), vec![x], sp),
        None => Ok(Value::none()),
    }
}
fn get_or_else(_: &mut Machine, a: Vec<Value>, _: Span) -> Result<Value, Fail> {
    Ok(inner(&a[0]).cloned().unwrap_or_else(|| a[1].clone()))
}
fn is_some(_: &mut Machine, a: Vec<Value>, _: Span) -> Result<Value, Fail> {
    Ok(Value::Bool(inner(&a[0]).is_some()))
}
fn is_none(_: &mut Machine, a: Vec<Value>, _: Span) -> Result<Value, Fail> {
    Ok(Value::Bool(inner(&a[0]).is_none()))
}
fn filter(m: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    match inner(&a[1]).cloned() {
        Some(x) => {
            let keep = m.apply(a[0].clone(), vec![x.clone()], sp)?;
            Ok(if arg_bool(&keep, sp)? {
                Value::some(x)
            } else {
                Value::none()
            })
        }
        None => Ok(Value::none()),
    }
}

/// Exports of `std/option`.
pub static EXPORTS: &[Builtin] = &[
    b!("std/option", "map", "(a -> b, Option[a]) -> Option[b]", map),
    b!(
        "std/option",
        "flatMap",
        "(a -> Option[b], Option[a]) -> Option[b]",
        flat_map
    ),
    b!(
        "std/option",
        "getOrElse",
        "(Option[a], a) -> a",
        get_or_else
    ),
    b!("std/option", "isSome", "(Option[a]) -> bool", is_some),
    b!("std/option", "isNone", "(Option[a]) -> bool", is_none),
    b!(
        "std/option",
        "filter",
        "(a -> bool, Option[a]) -> Option[a]",
        filter
    ),
];
