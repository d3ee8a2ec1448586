//! Values nested far deeper than the call depth (built iteratively by `foldl`) must be shown,
//! compared and dropped without overflowing the stack.

use std::time::{Duration, Instant};
use world::ailang::Embedded;
use world::interp::{Interpreter, RunLimits};

fn run(src: &str) -> (i32, String, String) {
    let lim = RunLimits::until(Instant::now() + Duration::from_secs(60));
    match Embedded::new().run(src.as_bytes(), b"\"{}\"", lim) {
        Ok(o) => (
            o.exit_code,
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        ),
        Err(e) => (-1, String::new(), e.to_string()),
    }
}

#[test]
fn deeply_nested_values_are_bounded() {
    let n = 1_000_000;
    let drop_only = format!(
        "module m\nimport std/list (foldl)\nimport std/string (repeat, chars)\ntype Nat = Z | S(Nat)\n\
         export func main(i: string) -> string = {{ let v = foldl(\\acc c. S(acc), Z, chars(repeat(\"x\", {n}))); \"built\" }}\n"
    );
    let (code, out, err) = run(&drop_only);
    assert_eq!((code, out.as_str()), (0, "built\n"), "{err}");
    let closures = format!(
        "module m\nimport std/list (foldl)\nimport std/string (repeat, chars)\ntype Box = B(int -> Box) | E\n\
         export func main(i: string) -> string = {{ let v = foldl(\\acc c. B(\\x. acc), E, chars(repeat(\"x\", {n}))); \"closures\" }}\n"
    );
    let (code, out, err) = run(&closures);
    assert_eq!((code, out.as_str()), (0, "closures\n"), "{err}");
    let n = 100_000;
    let compare = format!(
        "module m\nimport std/list (foldl)\nimport std/string (repeat, chars)\nimport std/json (ja, jn, Json)\n\
         func build(n: int) -> Json = foldl(\\acc c. ja([acc]), jn(()), chars(repeat(\"x\", n)))\n\
         export func main(i: string) -> string = if build({n}) == build({n}) then \"same\" else \"differ\"\n"
    );
    let (code, out, err) = run(&compare);
    assert_eq!((code, out.as_str()), (0, "same\n"), "{err}");
    let shown = format!(
        "module m\nimport std/list (foldl)\nimport std/string (repeat, chars, length)\nimport std/json (ja, jn, encode)\n\
         export func main(i: string) -> string = show(length(encode(foldl(\\acc c. ja([acc]), jn(()), chars(repeat(\"x\", {n}))))))\n"
    );
    let (code, _, err) = run(&shown);
    assert_eq!(code, 1);
    assert!(
        err.contains("RT_DEPTH_001: encode: the value nests deeper than 10000 levels"),
        "{err}"
    );
    let show = format!(
        "module m\nimport std/list (foldl)\nimport std/string (repeat, chars, contains)\ntype Nat = Z | S(Nat)\n\
         export func main(i: string) -> string = show(contains(show(foldl(\\acc c. S(acc), Z, chars(repeat(\"x\", {n})))), \"(…)\"))\n"
    );
    let (code, out, err) = run(&show);
    assert_eq!((code, out.as_str()), (0, "true\n"), "{err}");
}
