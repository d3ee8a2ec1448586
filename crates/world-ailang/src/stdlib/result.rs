//! `std/result` (ailang.md §5; the reference's `std/result.ail` argument orders).

use super::b;
use crate::diag::Span;
use crate::eval::{rt, Fail, Machine};
use crate::value::{show, Builtin, Value};

fn split(v: &Value) -> Option<(bool, Value)> {
    match v {
        Value::Ctor(n, args) if &**n == "Ok" => args.first().map(|x| (true, x.clone())),
        Value::Ctor(n, args) if &**n == "Err" => args.first().map(|x| (false, x.clone())),
        _ => None,
    }
}

fn map(m: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    match split(&a[1]) {
        Some((true, x)) => Ok(Value::ctor("Ok", vec![m.apply(a[0].clone(), vec![x], sp)?])),
        _ => Ok(a[1].clone()),
    }
}
fn map_err(m: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    match split(&a[1]) {
        Some((false, e)) => Ok(Value::ctor(
            "Err",
            vec![m.apply(a[0].clone(), vec![e], sp)?],
        )),
        _ => Ok(a[1].clone()),
    }
}
fn flat_map(m: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    match split(&a[1]) {
        Some((true, x)) => m.apply(a[0].clone(), vec![x], sp),
        _ => Ok(a[1].clone()),
    }
}
fn is_ok(_: &mut Machine, a: Vec<Value>, _: Span) -> Result<Value, Fail> {
    Ok(Value::Bool(matches!(split(&a[0]), Some((true, _)))))
}
fn is_err(_: &mut Machine, a: Vec<Value>, _: Span) -> Result<Value, Fail> {
    Ok(Value::Bool(matches!(split(&a[0]), Some((false, _)))))
}
fn unwrap_or(_: &mut Machine, a: Vec<Value>, _: Span) -> Result<Value, Fail> {
    Ok(match split(&a[0]) {
        Some((true, x)) => x,
        _ => a[1].clone(),
    })
}
/// `unwrap`: the `Ok` value; an `Err` is the runtime error `RT_UNWRAP_001`.
fn unwrap(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    match split(&a[0]) {
        Some((true, x)) => Ok(x),
        _ => {
            let mut s = String::new();
            show(&a[0], &mut s);
            Err(rt("RT_UNWRAP_001", format!("unwrap of {s}"), sp))
        }
    }
}

/// Exports of `std/result`.
pub static EXPORTS: &[Builtin] = &[
    b!(
        "std/result",
        "map",
        "(a -> b, Result[a, e]) -> Result[b, e]",
        map
    ),
    b!(
        "std/result",
        "mapErr",
        "(e -> f, Result[a, e]) -> Result[a, f]",
        map_err
    ),
    b!(
        "std/result",
        "flatMap",
        "(a -> Result[b, e], Result[a, e]) -> Result[b, e]",
        flat_map
    ),
    b!("std/result", "isOk", "(Result[a, e]) -> bool", is_ok),
    b!("std/result", "isErr", "(Result[a, e]) -> bool", is_err),
    b!(
        "std/result",
        "unwrapOr",
        "(Result[a, e], a) -> a",
        unwrap_or
    ),
    b!("std/result", "unwrap", "(Result[a, e]) -> a", unwrap),
];
