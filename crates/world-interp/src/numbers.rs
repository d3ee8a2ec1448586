//! Which JSON numbers cross into and out of an interpreter exactly (issue 13 §4).
//!
//! An invocation's input is Go-json of `any` (every number a float64, transitions.md §7), the
//! interpreter decodes it (ailang.md §5: every number a float; an integer literal outside int64
//! becomes 0) and encodes its output with Go `%g`. A number is accepted only when that whole
//! trip gives back the same exact decimal value: the nearest double, printed by Go-json, read
//! by the interpreter and printed again, must denote the number the caller wrote. Anything
//! else is refused before anything is written, naming the number and what it would become.

use world_encoding::gojson::format_float;
use world_encoding::gojson::format_g;
use world_encoding::trcjson::{self, Bounds, CValue};

/// The exact decimal value of JSON number text, normalised (TR-CJSON-1: plain decimal, no
/// exponent, no redundant zeros), or `None` when it is not a JSON number.
fn exact(text: &str) -> Option<String> {
    match trcjson::parse(text.as_bytes(), Bounds::UNBOUNDED) {
        Ok(CValue::Number(n)) => Some(n),
        _ => None,
    }
}

/// Why the number with normalised decimal text `text` would not cross exactly, or `None` when
/// it does. The reason names what the interpreter would see or give back.
pub fn crossing_problem(text: &str) -> Option<String> {
    let d: f64 = match text.parse::<f64>() {
        Ok(d) if d.is_finite() => d,
        _ => return Some("it is outside the range of an IEEE-754 double".into()),
    };
    let sent = format_float(d);
    let integral = !sent.contains(['.', 'e', 'E']);
    if integral && sent.parse::<i64>().is_err() {
        return Some(format!(
            "it crosses as the integer literal {sent}, outside int64, which the interpreter reads as 0"
        ));
    }
    let back = format_g(d);
    match exact(&back) {
        Some(b) if b == text => None,
        Some(b) => Some(format!(
            "it is not exactly an IEEE-754 double; the interpreter would see {b}"
        )),
        None => Some(format!("the interpreter would print {back}")),
    }
}

/// Check every number in `v` (a parsed TR-CJSON-1 value, so number texts are exact);
/// returns `(JSON pointer, number, reason)` of the first that would not cross exactly.
pub fn first_inexact(v: &CValue) -> Option<(String, String, String)> {
    fn walk(v: &CValue, path: &mut String) -> Option<(String, String, String)> {
        match v {
            CValue::Number(n) => crossing_problem(n).map(|r| (path.clone(), n.clone(), r)),
            CValue::Array(items) => items.iter().enumerate().find_map(|(i, x)| {
                let len = path.len();
                path.push_str(&format!("/{i}"));
                let r = walk(x, path);
                path.truncate(len);
                r
            }),
            CValue::Object(members) => members.iter().find_map(|(k, x)| {
                let len = path.len();
                path.push('/');
                path.push_str(&k.replace('~', "~0").replace('/', "~1"));
                let r = walk(x, path);
                path.truncate(len);
                r
            }),
            _ => None,
        }
    }
    walk(v, &mut String::new())
}

/// [`first_inexact`] for a `serde_json` value (surfaces that parsed the arguments
/// themselves): integers are exact there; a float is checked as the double it already is.
pub fn first_inexact_value(v: &serde_json::Value) -> Option<(String, String, String)> {
    let text = serde_json::to_vec(v).ok()?;
    let c = trcjson::parse(&text, Bounds::UNBOUNDED).ok()?;
    first_inexact(&c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(t: &str) -> bool {
        crossing_problem(&exact(t).unwrap()).is_none()
    }

    #[test]
    fn exact_numbers_cross_and_the_issue_cases_do_not() {
        for t in [
            "0",
            "1",
            "-1",
            "1.5",
            "0.1",
            "123456",
            "1e6",
            "9007199254740992",
            "1e21",
            "-2.5e-7",
            "1e300",
        ] {
            assert!(
                ok(t),
                "{t} should cross: {:?}",
                crossing_problem(&exact(t).unwrap())
            );
        }
        for t in [
            "9223372036854775807",
            "1e19",
            "1e20",
            "-9.3e18",
            "12345678901234567890",
            "9007199254740993",
            "1152921504606846976",
            "0.10000000000000000001",
            "1e400",
        ] {
            assert!(!ok(t), "{t} must be refused");
        }
    }
}
