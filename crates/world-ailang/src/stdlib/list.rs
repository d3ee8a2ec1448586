//! `std/list` (ailang.md §5), with the reference's argument orders (function first for
//! `map`/`filter`/`foldl`/`foldr`/`any`/`sortBy`/`flatMap`; `nth(xs, i)`, `take(n, xs)`).

use super::{arg_int, arg_list, b, ret_list};
use crate::diag::Span;
use crate::eval::{rt, Fail, Machine};
use crate::value::{values_equal, Builtin, Items, List, Value};

fn truthy(v: Value, sp: Span) -> Result<bool, Fail> {
    match v {
        Value::Bool(b) => Ok(b),
        other => Err(rt(
            "RT_TYPE_001",
            format!("predicate returned {}, not a bool", other.kind()),
            sp,
        )),
    }
}

fn map(m: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let mut out = Vec::new();
    for x in arg_list(&a[1], sp)?.iter() {
        out.push(m.apply(a[0].clone(), vec![x.clone()], sp)?);
    }
    ret_list(out)
}

fn filter(m: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let mut out = Vec::new();
    for x in arg_list(&a[1], sp)?.iter() {
        if truthy(m.apply(a[0].clone(), vec![x.clone()], sp)?, sp)? {
            out.push(x.clone());
        }
    }
    ret_list(out)
}

/// `foldl(f, acc, xs)`: `f(acc, x)` left to right.
fn foldl(m: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let mut acc = a[1].clone();
    for x in arg_list(&a[2], sp)?.iter() {
        acc = m.apply(a[0].clone(), vec![acc, x.clone()], sp)?;
    }
    Ok(acc)
}

/// `foldr(f, acc, xs)`: `f(x, acc)` right to left.
fn foldr(m: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let mut acc = a[1].clone();
    let items = arg_list(&a[2], sp)?.to_vec();
    for x in items.into_iter().rev() {
        acc = m.apply(a[0].clone(), vec![x, acc], sp)?;
    }
    Ok(acc)
}

fn length(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    Ok(Value::Int(arg_list(&a[0], sp)?.len() as i64))
}

fn opt(v: Option<Value>) -> Value {
    v.map(Value::some).unwrap_or_else(Value::none)
}

fn head(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    Ok(opt(arg_list(&a[0], sp)?.iter().next().cloned()))
}

/// `tail(xs)`: all but the first element; `[]` for `[]`.
fn tail(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let l = arg_list(&a[0], sp)?;
    Ok(Value::List(match &l.0 {
        Some(cell) => cell.tail.clone(),
        None => List::nil(),
    }))
}

fn reverse(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let mut out = List::nil();
    for x in arg_list(&a[0], sp)?.iter() {
        out = List::cons(x.clone(), out)?;
    }
    Ok(Value::List(out))
}

fn concat(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let mut items = arg_list(&a[0], sp)?.to_vec();
    let mut out = arg_list(&a[1], sp)?.clone();
    while let Some(x) = items.pop() {
        out = List::cons(x, out)?;
    }
    Ok(Value::List(out))
}

fn take(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let n = arg_int(&a[0], sp)?.max(0) as usize;
    ret_list(arg_list(&a[1], sp)?.iter().take(n).cloned().collect())
}

fn drop(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let n = arg_int(&a[0], sp)?.max(0);
    let mut l = arg_list(&a[1], sp)?.clone();
    for _ in 0..n {
        match l.0 {
            Some(cell) => l = cell.tail.clone(),
            None => break,
        }
    }
    Ok(Value::List(l))
}

fn nth(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let i = arg_int(&a[1], sp)?;
    if i < 0 {
        return Ok(Value::none());
    }
    Ok(opt(arg_list(&a[0], sp)?.iter().nth(i as usize).cloned()))
}

fn last(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    Ok(opt(arg_list(&a[0], sp)?.iter().last().cloned()))
}

fn any(m: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    for x in arg_list(&a[1], sp)?.iter() {
        if truthy(m.apply(a[0].clone(), vec![x.clone()], sp)?, sp)? {
            return Ok(Value::Bool(true));
        }
    }
    Ok(Value::Bool(false))
}

fn all(m: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    for x in arg_list(&a[1], sp)?.iter() {
        if !truthy(m.apply(a[0].clone(), vec![x.clone()], sp)?, sp)? {
            return Ok(Value::Bool(false));
        }
    }
    Ok(Value::Bool(true))
}

fn find_index(m: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    for (i, x) in arg_list(&a[1], sp)?.iter().enumerate() {
        if truthy(m.apply(a[0].clone(), vec![x.clone()], sp)?, sp)? {
            return Ok(Value::some(Value::Int(i as i64)));
        }
    }
    Ok(Value::none())
}

fn zip(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let xs = arg_list(&a[0], sp)?;
    let ys = arg_list(&a[1], sp)?;
    ret_list(
        xs.iter()
            .zip(ys.iter())
            .map(|(x, y)| Value::Tuple(Items::rc(vec![x.clone(), y.clone()])))
            .collect(),
    )
}

fn zip_with(m: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let pairs: Vec<(Value, Value)> = arg_list(&a[1], sp)?
        .iter()
        .cloned()
        .zip(arg_list(&a[2], sp)?.iter().cloned())
        .collect();
    let mut out = Vec::with_capacity(pairs.len());
    for (x, y) in pairs {
        out.push(m.apply(a[0].clone(), vec![x, y], sp)?);
    }
    ret_list(out)
}

fn sort_vec(m: &mut Machine, f: &Value, v: Vec<Value>, sp: Span) -> Result<Vec<Value>, Fail> {
    if v.len() <= 1 {
        return Ok(v);
    }
    let mut left = v;
    let right = left.split_off(left.len() / 2);
    let left = sort_vec(m, f, left, sp)?;
    let right = sort_vec(m, f, right, sp)?;
    let mut out = Vec::with_capacity(left.len() + right.len());
    let (mut li, mut ri) = (left.into_iter().peekable(), right.into_iter().peekable());
    while let (Some(x), Some(y)) = (li.peek(), ri.peek()) {
        let c = match m.apply(f.clone(), vec![x.clone(), y.clone()], sp)? {
            Value::Int(c) => c,
            other => {
                return Err(rt(
                    "RT_TYPE_001",
                    format!("sortBy comparator returned {}", other.kind()),
                    sp,
                ))
            }
        };
        let next = if c <= 0 { li.next() } else { ri.next() };
        out.extend(next);
    }
    out.extend(li);
    out.extend(ri);
    Ok(out)
}

/// `sortBy(cmp, xs)`: stable merge sort; `cmp(a, b)` negative/zero/positive.
fn sort_by(m: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let items = arg_list(&a[1], sp)?.to_vec();
    let sorted = sort_vec(m, &a[0], items, sp)?;
    ret_list(sorted)
}

fn flat_map(m: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let mut out = Vec::new();
    for x in arg_list(&a[1], sp)?.iter() {
        let r = m.apply(a[0].clone(), vec![x.clone()], sp)?;
        out.extend(arg_list(&r, sp)?.iter().cloned());
    }
    ret_list(out)
}

/// `contains(xs, x)`.
fn contains(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    Ok(Value::Bool(
        arg_list(&a[0], sp)?.iter().any(|y| values_equal(y, &a[1])),
    ))
}

/// `member(x, xs)`.
fn member(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    Ok(Value::Bool(
        arg_list(&a[1], sp)?.iter().any(|y| values_equal(y, &a[0])),
    ))
}

/// Exports of `std/list`.
pub static EXPORTS: &[Builtin] = &[
    b!("std/list", "map", "(a -> b, [a]) -> [b]", map),
    b!("std/list", "filter", "(a -> bool, [a]) -> [a]", filter),
    b!("std/list", "foldl", "((b, a) -> b, b, [a]) -> b", foldl),
    b!("std/list", "foldr", "((a, b) -> b, b, [a]) -> b", foldr),
    b!("std/list", "length", "([a]) -> int", length),
    b!("std/list", "head", "([a]) -> Option[a]", head),
    b!("std/list", "tail", "([a]) -> [a]", tail),
    b!("std/list", "reverse", "([a]) -> [a]", reverse),
    b!("std/list", "concat", "([a], [a]) -> [a]", concat),
    b!("std/list", "take", "(int, [a]) -> [a]", take),
    b!("std/list", "drop", "(int, [a]) -> [a]", drop),
    b!("std/list", "nth", "([a], int) -> Option[a]", nth),
    b!("std/list", "last", "([a]) -> Option[a]", last),
    b!("std/list", "any", "(a -> bool, [a]) -> bool", any),
    b!("std/list", "all", "(a -> bool, [a]) -> bool", all),
    b!(
        "std/list",
        "findIndex",
        "(a -> bool, [a]) -> Option[int]",
        find_index
    ),
    b!("std/list", "zip", "([a], [b]) -> [(a, b)]", zip),
    b!(
        "std/list",
        "zipWith",
        "((a, b) -> c, [a], [b]) -> [c]",
        zip_with
    ),
    b!("std/list", "sortBy", "((a, a) -> int, [a]) -> [a]", sort_by),
    b!("std/list", "flatMap", "(a -> [b], [a]) -> [b]", flat_map),
    b!("std/list", "contains", "([a], a) -> bool", contains),
    b!("std/list", "member", "(a, [a]) -> bool", member),
    b!("std/list", "dedup", "([a]) -> [a]", dedup),
    b!(
        "std/list",
        "maximumInt",
        "([int]) -> Option[int]",
        extreme_max
    ),
    b!(
        "std/list",
        "minimumInt",
        "([int]) -> Option[int]",
        extreme_min
    ),
    b!(
        "std/list",
        "maximumFloat",
        "([float]) -> Option[float]",
        extreme_max
    ),
    b!(
        "std/list",
        "minimumFloat",
        "([float]) -> Option[float]",
        extreme_min
    ),
    b!(
        "std/list",
        "maximumString",
        "([string]) -> Option[string]",
        extreme_max
    ),
    b!(
        "std/list",
        "minimumString",
        "([string]) -> Option[string]",
        extreme_min
    ),
    // The effect-polymorphic combinators: with a pure function they are map/filter/foldl/
    // flatMap; an effectful one is checked where the lambda is written.
    b!("std/list", "mapE", "(a -> b, [a]) -> [b]", map),
    b!("std/list", "filterE", "(a -> bool, [a]) -> [a]", filter),
    b!("std/list", "foldlE", "((b, a) -> b, b, [a]) -> b", foldl),
    b!("std/list", "flatMapE", "(a -> [b], [a]) -> [b]", flat_map),
    b!("std/list", "forEachE", "(a -> (), [a]) -> ()", for_each),
];

/// `dedup(xs)`: the first occurrence of each element, in order.
fn dedup(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    let mut out: Vec<Value> = Vec::new();
    for x in arg_list(&a[0], sp)?.iter() {
        if !out.iter().any(|y| values_equal(x, y)) {
            out.push(x.clone());
        }
    }
    ret_list(out)
}

/// The release's recursion `max(x :: rest) = if x > m then x else m` with `m` the maximum
/// of `rest`: folded from the right.
fn extreme(a: &[Value], sp: Span, want_greater: bool) -> Result<Value, Fail> {
    let items = arg_list(&a[0], sp)?.to_vec();
    let mut it = items.into_iter().rev();
    let Some(mut m) = it.next() else {
        return Ok(Value::none());
    };
    for x in it {
        let op = if want_greater {
            crate::ast::BinOp::Gt
        } else {
            crate::ast::BinOp::Lt
        };
        if let Value::Bool(true) = crate::eval::binop(op, x.clone(), m.clone(), sp)? {
            m = x;
        }
    }
    Ok(Value::some(m))
}

fn extreme_max(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    extreme(&a, sp, true)
}

fn extreme_min(_: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    extreme(&a, sp, false)
}

/// `forEachE(f, xs)`: `f` on each element left to right; `()`.
fn for_each(m: &mut Machine, a: Vec<Value>, sp: Span) -> Result<Value, Fail> {
    for x in arg_list(&a[1], sp)?.iter() {
        m.apply(a[0].clone(), vec![x.clone()], sp)?;
    }
    Ok(Value::Unit)
}
