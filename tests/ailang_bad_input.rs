//! Bad input for the embedded interpreter (issue 9, "Bad input"): every case ends in a typed
//! error or a bounded result, never a crash, a hang or a stack overflow.

use sha2::{Digest, Sha256};
use std::time::{Duration, Instant};
use world::ailang::Embedded;
use world::interp::{Interpreter, RunError, RunLimits, RunOutcome};

fn limits(secs: u64) -> RunLimits {
    RunLimits::until(Instant::now() + Duration::from_secs(secs))
}

/// Run `src` as a transition with `input` (a JSON text, passed as a JSON string).
fn run(src: &str, input: &str) -> Result<RunOutcome, RunError> {
    let args = serde_json::to_string(input).unwrap_or_default();
    Embedded::new().run(src.as_bytes(), args.as_bytes(), limits(20))
}

fn stderr(o: &RunOutcome) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn check_fails_with(src: &[u8], code: &str) {
    let c = Embedded::new().check(src, limits(20));
    match c {
        Ok(c) => {
            assert!(!c.passed, "check passed unexpectedly");
            assert!(
                c.diagnostics.contains(code),
                "diagnostics {:?} lack {code}",
                c.diagnostics
            );
        }
        Err(e) => panic!("check failed to run: {e}"),
    }
}

#[test]
fn identity_and_version() {
    let e = Embedded::new();
    let want = format!(
        "sha256:{}",
        hex::encode(Sha256::digest(b"world/ailang-subset/v1|dialect:1"))
    );
    assert_eq!(e.interpreter_ref(), want);
    assert_eq!(e.version_text(), "world-ailang-subset dialect 1\n");
}

#[test]
fn unterminated_string_and_interpolation() {
    check_fails_with(
        b"module m\nexport func main(i: string) -> string = \"abc\n",
        "PAR_LEX_002",
    );
    check_fails_with(
        b"module m\nexport func main(i: string) -> string = \"a ${i\n",
        "PAR_LEX_002",
    );
    check_fails_with(
        b"module m\nexport func main(i: string) -> string = \"a ${\"b ${i}\n",
        "PAR_LEX_002",
    );
}

#[test]
fn ten_thousand_levels_of_nesting_are_an_error_not_an_overflow() {
    let n = 10_000;
    let shapes = [
        format!("{}1{}", "(".repeat(n), ")".repeat(n)),
        format!("{}1{}", "[".repeat(n), "]".repeat(n)),
        format!("{}1", "- ".repeat(n)),
        format!("1{}", " + 1".repeat(n)),
        format!("{}0{}", "f(".repeat(n), ")".repeat(n)),
        format!("{}1{}", "{ ".repeat(n), " }".repeat(n)),
        format!("{}1", "if true then 1 else ".repeat(n)),
        format!("{}1", "\\x. ".repeat(n)),
        format!("x{}", ".a".repeat(n)),
        format!("\"{}x{}\"", "${\"".repeat(n), "\"}".repeat(n)),
        format!("match 1 {{ {}_ => 1 }}", "(".repeat(n)),
    ];
    for body in shapes {
        let src = format!("module m\nfunc f(x: int) -> int = x\nexport func main(i: string) -> string = show({body})\n");
        let c = Embedded::new().check(src.as_bytes(), limits(20));
        let Ok(c) = c else {
            panic!("check did not run")
        };
        assert!(!c.passed);
        assert!(
            c.diagnostics.contains("PAR_DEPTH"),
            "{}",
            &c.diagnostics[..c.diagnostics.len().min(300)]
        );
        let o = run(&src, "{}").unwrap_or_default();
        assert_eq!(o.exit_code, 1);
    }
}

#[test]
fn infinite_recursion_is_the_depth_error() {
    let srcs = [
        "module m\nfunc loop(n: int) -> int = loop(n + 1) + 1\nexport func main(i: string) -> string = show(loop(0))\n",
        "module m\nfunc a(n: int) -> int = b(n) + 1\nfunc b(n: int) -> int = a(n) + 1\nexport func main(i: string) -> string = show(a(0))\n",
        "module m\nexport func main(i: string) -> string = { letrec go = \\n. go(n + 1) + 1; show(go(0)) }\n",
        "module m\nimport std/list (map)\nfunc deep(xs: [int]) -> [int] = map(\\x. x, deep(xs))\nexport func main(i: string) -> string = show(deep([1]))\n",
    ];
    for src in srcs {
        let o = run(src, "{}").unwrap_or_default();
        assert_eq!(o.exit_code, 1, "{src}");
        assert!(
            stderr(&o).contains("RT_REC_001: maximum recursion depth 10000 exceeded"),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn recursion_just_under_the_limit_succeeds() {
    let src = "module m\nfunc count(n: int) -> int = if n == 0 then 0 else 1 + count(n - 1)\n\
               export func main(i: string) -> string = show(count(9990))\n";
    let o = run(src, "{}").unwrap_or_default();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "9990\n",
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_ten_megabyte_source_is_handled() {
    let comment = format!("-- {}\n", "x".repeat(100)).repeat(10 * 1024 * 1024 / 104);
    let src = format!("module m\n{comment}export func main(i: string) -> string = i\n");
    assert!(src.len() >= 10 * 1024 * 1024 - 200);
    let o = run(&src, "{\"a\":1}").unwrap_or_default();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "{\"a\":1}\n",
        "{}",
        stderr(&o)
    );
    let lit = format!(
        "module m\nimport std/string (length)\nexport func main(i: string) -> string = show(length(\"{}\"))\n",
        "y".repeat(10 * 1024 * 1024)
    );
    let o = run(&lit, "{}").unwrap_or_default();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "10485760\n",
        "{}",
        stderr(&o)
    );
    let huge = format!("module m\n{}", " ".repeat(17 * 1024 * 1024));
    check_fails_with(huge.as_bytes(), "PAR_SIZE_001");
}

#[test]
fn invalid_utf8_source_and_arguments() {
    check_fails_with(
        b"module m\nexport func main(i: string) -> string = \"\xff\"\n",
        "PAR_UTF8_001",
    );
    // Invalid UTF-8 inside the argument string becomes U+FFFD, as Go's decoder does.
    let src = "module m\nexport func main(i: string) -> string = i\n";
    let o = Embedded::new()
        .run(src.as_bytes(), b"\"a\xffb\"", limits(20))
        .unwrap_or_default();
    assert_eq!(String::from_utf8_lossy(&o.stdout), "a\u{FFFD}b\n");
}

#[test]
fn unbounded_allocation_hits_the_memory_cap() {
    let srcs = [
        "module m\nfunc grow(s: string) -> string = grow(\"${s}${s}\")\nexport func main(i: string) -> string = grow(\"x\")\n",
        "module m\nfunc grow(xs: [int]) -> [int] = grow(xs ++ xs)\nexport func main(i: string) -> string = show(grow([1]))\n",
        "module m\nimport std/string (repeat)\nexport func main(i: string) -> string = repeat(\"abc\", 1000000000)\n",
    ];
    for src in srcs {
        let o = run(src, "{}").unwrap_or_default();
        assert_eq!(o.exit_code, 1, "{src}");
        assert!(stderr(&o).contains("RT_MEM_001"), "{}", stderr(&o));
    }
}

#[test]
fn an_entry_with_two_parameters_is_refused() {
    let o = run(
        "module m\nexport func main(a: string, b: string) -> string = a\n",
        "{}",
    )
    .unwrap_or_default();
    assert_eq!(o.exit_code, 1);
    assert_eq!(
        stderr(&o).lines().last().unwrap_or_default(),
        "Error: entrypoint 'main' takes 2 parameters; an entrypoint takes at most one argument"
    );
}

#[test]
fn the_argument_must_be_a_json_string() {
    let src = "module m\nexport func main(i: string) -> string = i\n";
    let o = Embedded::new()
        .run(src.as_bytes(), b"{\"a\":1}", limits(20))
        .unwrap_or_default();
    assert_eq!(o.exit_code, 1);
    assert_eq!(
        stderr(&o),
        "Error: ARG_DECODE_MISMATCH: expected string, got object\n"
    );
    let o = Embedded::new().run(
        b"module m\nexport func other(i: string) -> string = i\n",
        b"\"x\"",
        limits(20),
    );
    assert_eq!(
        stderr(&o.unwrap_or_default()),
        "Error: entrypoint 'main' not found in module\n"
    );
}

#[test]
fn a_runaway_loop_ends_at_the_deadline() {
    let src = "module m\nfunc fib(n: int) -> int = if n < 2 then n else fib(n - 1) + fib(n - 2)\n\
               export func main(i: string) -> string = show(fib(60))\n";
    let start = Instant::now();
    let r = Embedded::new().run(
        src.as_bytes(),
        b"\"{}\"",
        RunLimits::until(Instant::now() + Duration::from_millis(300)),
    );
    assert!(matches!(r, Err(RunError::Timeout)), "{r:?}");
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[test]
fn output_over_the_cap_is_an_output_limit_error() {
    let src = "module m\nimport std/string (repeat)\nexport func main(i: string) -> string = repeat(\"z\", 5000)\n";
    let lim = RunLimits {
        deadline: Instant::now() + Duration::from_secs(20),
        output_cap: 1000,
    };
    let r = Embedded::new().run(src.as_bytes(), b"\"{}\"", lim);
    assert!(
        matches!(
            r,
            Err(RunError::OutputLimit {
                stream: "stdout",
                cap: 1000
            })
        ),
        "{r:?}"
    );
}

#[test]
fn deep_json_and_long_lists_are_bounded() {
    let src = "module m\nimport std/json (decode)\nexport func main(i: string) -> string = \
               match decode(i) { Ok(_) => \"ok\", Err(e) => e }\n";
    let deep = "[".repeat(20_000);
    let o = run(src, &deep).unwrap_or_default();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "invalid json: exceeded max depth\n"
    );
    let long = format!("[{}1]", "1,".repeat(1_000_000));
    let o = run(src, &long).unwrap_or_default();
    assert_eq!(String::from_utf8_lossy(&o.stdout), "ok\n", "{}", stderr(&o));
}
