//! The `Workspace.Exec` argument law (exec-and-agui.md §1.4): the agent's `args` are matched
//! against the one profile command the call names. Only flags the command lists, values of
//! their class, positionals of its class and `--` where it declares passthrough get through,
//! normalized so `-f v` and `-f=v` record the same argv.
//!
//! The law is not an execution fence (running a project's tests runs project code); it keeps
//! the agent off the sandbox's options and off any shell, keeps the executable the operator's
//! choice, and makes every call an exact, recorded argv.

use std::collections::BTreeMap;

/// Flag value class `bool`: the flag takes no value.
pub const CLASS_BOOL: &str = "bool";
/// Flag value class `regex`: 1–256 bytes, no LF or NUL.
pub const CLASS_REGEX: &str = "regex";
/// Flag value class `int`: 1–7 ASCII digits, at most 1 000 000.
pub const CLASS_INT: &str = "int";
/// Flag value class `relpath`: non-empty, no leading `/` or `-`, no `..` segment.
pub const CLASS_RELPATH: &str = "relpath";

/// Positional class `relpath`.
pub const POS_RELPATH: &str = "relpath";
/// Positional class `pkgpattern`: `./...`, a relpath without `...`, or one plus `/...`.
pub const POS_PKGPATTERN: &str = "pkgpattern";
/// Positional class `testfile`: a relpath ending in, and longer than, a listed suffix.
pub const POS_TESTFILE: &str = "testfile";

/// The only passthrough a command may declare.
pub const PASSTHROUGH: &str = "--";

/// How an admitted valued flag is emitted: `-f=v` (`Eq`, the default) or `-f`, `v` (`Sep`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// One item, `-f=v`.
    Eq,
    /// Two items, `-f`, `v`.
    Sep,
}

/// One command's grammar (the profile's `flags`, `positional`, `suffixes`, `max_args`,
/// `passthrough`). `argv` is the operator's fixed prefix and is not matched.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Grammar {
    /// Listed flag name → value class (`bool`, `regex`, `int`, `relpath`, `enum:[a,b]`).
    pub flags: BTreeMap<String, String>,
    /// Flags emitted as two items.
    pub sep_flags: Vec<String>,
    /// The positional class, or `None` (no positional admitted).
    pub positional: Option<String>,
    /// Suffixes of the `testfile` class.
    pub suffixes: Vec<String>,
    /// At most this many normalized items (0–16).
    pub max_args: usize,
    /// `--` admitted.
    pub passthrough: bool,
}

/// Why an argument was refused (the reason texts are the reference's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// `the command does not list this flag`
    Flag,
    /// `the value does not match the flag's class`
    Value,
    /// `the flag takes a value and none follows`
    MissingValue,
    /// `"--" is admitted only where the command declares passthrough`
    DashDash,
    /// `not a positional of the command's class`
    Positional,
    /// `more arguments than the command's max_args`
    MaxArgs,
}

impl Reason {
    /// The reason text.
    pub fn text(self) -> &'static str {
        match self {
            Reason::Flag => "the command does not list this flag",
            Reason::Value => "the value does not match the flag's class",
            Reason::MissingValue => "the flag takes a value and none follows",
            Reason::DashDash => "\"--\" is admitted only where the command declares passthrough",
            Reason::Positional => "not a positional of the command's class",
            Reason::MaxArgs => "more arguments than the command's max_args",
        }
    }
}

/// The first refused argument: `argument <i> "<arg>" refused: <reason>` (0-based `i`, the
/// argument in Go `%q` quoting).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("argument {index} {} refused: {}", go_quote(arg), reason.text())]
pub struct ArgError {
    /// Position in the agent's args.
    pub index: usize,
    /// The argument itself.
    pub arg: String,
    /// Why.
    pub reason: Reason,
}

/// A string quoted as Go's `%q` / `strconv.Quote` does: `"` and `\` escaped, `\a \b \f \n \r
/// \t \v`, other control characters as `\xNN` (below U+0080) or `\uNNNN`, printable text
/// (non-ASCII included) as is.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}') => {
                if (c as u32) < 0x10000 {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// No path segment is `..` (the whole path, a leading `../`, a trailing `/..`, an inner
/// `/../`); a segment that merely starts with two dots is fine.
pub fn no_dotdot_segment(p: &str) -> bool {
    p != ".." && !p.starts_with("../") && !p.ends_with("/..") && !p.contains("/../")
}

/// The `relpath` class: non-empty, no leading `/` or `-`, no `..` segment.
pub fn relpath_ok(p: &str) -> bool {
    !p.is_empty() && !p.starts_with('/') && !p.starts_with('-') && no_dotdot_segment(p)
}

fn flag_name(a: &str) -> &str {
    a.split_once('=').map_or(a, |(n, _)| n)
}

fn flag_value(a: &str) -> &str {
    a.split_once('=').map_or("", |(_, v)| v)
}

fn int_ok(v: &str) -> bool {
    !v.is_empty()
        && v.len() <= 7
        && v.bytes().all(|b| b.is_ascii_digit())
        && v.parse::<u32>().is_ok_and(|n| n <= 1_000_000)
}

/// The words of an `enum:[a,b,…]` class, or `None` when `class` is not one (an empty word
/// makes it malformed).
pub fn enum_words(class: &str) -> Option<Vec<&str>> {
    let inner = class.strip_prefix("enum:[")?.strip_suffix(']')?;
    let words: Vec<&str> = inner.split(',').collect();
    words.iter().all(|w| !w.is_empty()).then_some(words)
}

/// True for a class the profile may name.
pub fn class_ok(class: &str) -> bool {
    matches!(class, CLASS_BOOL | CLASS_REGEX | CLASS_INT | CLASS_RELPATH)
        || enum_words(class).is_some()
}

/// `v` is a value of `class`.
pub fn value_ok(class: &str, v: &str) -> bool {
    match class {
        CLASS_REGEX => !v.is_empty() && v.len() <= 256 && !v.contains('\n') && !v.contains('\0'),
        CLASS_RELPATH => relpath_ok(v),
        CLASS_INT => int_ok(v),
        _ => !v.is_empty() && enum_words(class).is_some_and(|w| w.contains(&v)),
    }
}

fn pkgpattern_ok(p: &str) -> bool {
    if p == "./..." || (relpath_ok(p) && !p.contains("...")) {
        return true;
    }
    match p.strip_suffix("/...") {
        Some(prefix) if p.len() >= 5 => relpath_ok(prefix) && !prefix.contains("..."),
        _ => false,
    }
}

fn testfile_ok(p: &str, suffixes: &[String]) -> bool {
    relpath_ok(p)
        && suffixes
            .iter()
            .any(|s| !s.is_empty() && p.ends_with(s.as_str()) && p.len() > s.len())
}

fn positional_ok(g: &Grammar, p: &str) -> bool {
    match g.positional.as_deref() {
        Some(POS_RELPATH) => relpath_ok(p),
        Some(POS_PKGPATTERN) => pkgpattern_ok(p),
        Some(POS_TESTFILE) => testfile_ok(p, &g.suffixes),
        _ => false,
    }
}

/// Applies the law to `args` (scan left to right) and returns them normalized (`-f v` →
/// `-f=v`), or the first bad argument.
///
/// # Errors
/// [`ArgError`] naming the 0-based index, the argument and the [`Reason`].
pub fn match_args(g: &Grammar, args: &[String]) -> Result<Vec<String>, ArgError> {
    let mut out: Vec<String> = Vec::with_capacity(args.len());
    let mut after_dashdash = false;
    let bad = |i: usize, reason: Reason| ArgError {
        index: i,
        arg: args.get(i).cloned().unwrap_or_default(),
        reason,
    };
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if after_dashdash {
            if !positional_ok(g, a) {
                return Err(bad(i, Reason::Positional));
            }
        } else if a == "--" {
            if !g.passthrough {
                return Err(bad(i, Reason::DashDash));
            }
            after_dashdash = true;
        } else if a.starts_with('-') {
            let Some(class) = g.flags.get(flag_name(a)) else {
                return Err(bad(i, Reason::Flag));
            };
            if a.contains('=') {
                if !value_ok(class, flag_value(a)) {
                    return Err(bad(i, Reason::Value));
                }
            } else if class != CLASS_BOOL {
                let Some(v) = args.get(i + 1) else {
                    return Err(bad(i, Reason::MissingValue));
                };
                if !value_ok(class, v) {
                    return Err(bad(i + 1, Reason::Value));
                }
                if out.len() + 1 > g.max_args {
                    return Err(bad(i, Reason::MaxArgs));
                }
                out.push(format!("{a}={v}"));
                i += 2;
                continue;
            }
        } else if !positional_ok(g, a) {
            return Err(bad(i, Reason::Positional));
        }
        if out.len() + 1 > g.max_args {
            return Err(bad(i, Reason::MaxArgs));
        }
        out.push(a.clone());
        i += 1;
    }
    Ok(out)
}

/// Renders normalized args as the command receives them: a valued `sep` flag becomes two
/// items; after a passthrough `--` nothing is a flag.
pub fn emit_args(g: &Grammar, normalized: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(normalized.len());
    let mut after_dashdash = false;
    for a in normalized {
        if !after_dashdash && a == "--" {
            after_dashdash = true;
        } else if !after_dashdash
            && a.starts_with('-')
            && a.contains('=')
            && g.sep_flags.iter().any(|f| f == flag_name(a))
        {
            out.push(flag_name(a).to_string());
            out.push(flag_value(a).to_string());
            continue;
        }
        out.push(a.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn go_test() -> Grammar {
        let mut flags = BTreeMap::new();
        flags.insert("-run".into(), CLASS_REGEX.into());
        flags.insert("-v".into(), CLASS_BOOL.into());
        flags.insert("-count".into(), CLASS_INT.into());
        flags.insert("-k".into(), CLASS_REGEX.into());
        flags.insert("-mode".into(), "enum:[fast,slow]".into());
        Grammar {
            flags,
            sep_flags: vec!["-k".into()],
            positional: Some(POS_PKGPATTERN.into()),
            max_args: 4,
            ..Grammar::default()
        }
    }

    fn v(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    fn refused(g: &Grammar, args: &[&str]) -> String {
        match_args(g, &v(args)).expect_err("refused").to_string()
    }

    #[test]
    fn admits_and_normalizes() {
        let g = go_test();
        assert_eq!(
            match_args(&g, &v(&["-run", "TestX", "-v", "./a/..."])).unwrap(),
            v(&["-run=TestX", "-v", "./a/..."])
        );
        assert_eq!(
            match_args(&g, &v(&["-run=TestX"])).unwrap(),
            match_args(&g, &v(&["-run", "TestX"])).unwrap()
        );
        assert_eq!(
            emit_args(&g, &match_args(&g, &v(&["-k", "x y", "-count=3"])).unwrap()),
            v(&["-k", "x y", "-count=3"])
        );
        assert!(match_args(&g, &v(&[])).unwrap().is_empty());
    }

    #[test]
    fn each_refusal_reason_and_index() {
        let g = go_test();
        assert_eq!(
            refused(&g, &["-x"]),
            "argument 0 \"-x\" refused: the command does not list this flag"
        );
        assert_eq!(
            refused(&g, &["-v", "-runner=1"]),
            "argument 1 \"-runner=1\" refused: the command does not list this flag"
        );
        assert_eq!(
            refused(&g, &["-count", "12345678"]),
            "argument 1 \"12345678\" refused: the value does not match the flag's class"
        );
        assert_eq!(
            refused(&g, &["-v=true"]),
            "argument 0 \"-v=true\" refused: the value does not match the flag's class"
        );
        assert_eq!(
            refused(&g, &["-mode=medium"]),
            "argument 0 \"-mode=medium\" refused: the value does not match the flag's class"
        );
        assert_eq!(
            refused(&g, &["-run"]),
            "argument 0 \"-run\" refused: the flag takes a value and none follows"
        );
        assert_eq!(
            refused(&g, &["--", "x"]),
            "argument 0 \"--\" refused: \"--\" is admitted only where the command declares passthrough"
        );
        assert_eq!(
            refused(&g, &["../x"]),
            "argument 0 \"../x\" refused: not a positional of the command's class"
        );
        assert_eq!(
            refused(&g, &["a", "b", "c", "d", "e"]),
            "argument 4 \"e\" refused: more arguments than the command's max_args"
        );
        assert_eq!(
            refused(&g, &["-run", "a\nb"]),
            "argument 1 \"a\\nb\" refused: the value does not match the flag's class"
        );
    }

    #[test]
    fn passthrough_admits_only_positionals_after_it() {
        let mut g = go_test();
        g.passthrough = true;
        g.positional = Some(POS_TESTFILE.into());
        g.suffixes = vec!["_test.py".into()];
        assert_eq!(
            match_args(&g, &v(&["--", "a_test.py"])).unwrap(),
            v(&["--", "a_test.py"])
        );
        assert_eq!(
            refused(&g, &["--", "-v"]),
            "argument 1 \"-v\" refused: not a positional of the command's class"
        );
        assert_eq!(
            refused(&g, &["_test.py"]),
            "argument 0 \"_test.py\" refused: not a positional of the command's class"
        );
        assert_eq!(emit_args(&g, &v(&["--", "-k=x"])), v(&["--", "-k=x"]));
    }

    #[test]
    fn value_classes() {
        assert!(int_ok("1000000") && !int_ok("1000001") && !int_ok("") && !int_ok("+1"));
        assert!(pkgpattern_ok("./...") && pkgpattern_ok("a/b") && pkgpattern_ok("a/..."));
        assert!(!pkgpattern_ok("/...") && !pkgpattern_ok("a.../...") && !pkgpattern_ok("../..."));
        assert!(relpath_ok("..a/b") && !relpath_ok("a/..") && !relpath_ok("-x"));
        assert!(class_ok("enum:[a,b]") && !class_ok("enum:[a,]") && !class_ok("float"));
        assert_eq!(
            go_quote("a\"b\\c\u{1}é\u{7f}"),
            "\"a\\\"b\\\\c\\x01é\\x7f\""
        );
    }
}
