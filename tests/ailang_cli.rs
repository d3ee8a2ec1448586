//! `world ailang …` driven as a binary (issue 14): the CLI contract of the external `ailang`
//! for the arguments `world` passes (ailang.md §1–§3), `world ailang test`, and diagnostics that
//! name the user's file.

#[path = "common/mod.rs"]
mod common;

use common::TestEnv;

const DOUBLE: &[u8] = b"module m\nexport func main(x: int) -> int = x * 2\n";

#[test]
fn version_flag_and_subcommand_print_the_same_text() {
    let env = TestEnv::new();
    let flag = env.run(&["ailang", "--version"]).ok();
    let sub = env.run(&["ailang", "version"]).ok();
    assert_eq!(flag.stdout, "world-ailang-subset dialect 1\n");
    assert_eq!(flag.stdout, sub.stdout);
    assert!(flag.stderr.is_empty(), "{}", flag.stderr);
    // Neither a subcommand nor --version: a usage error (exit 2).
    env.run(&["ailang"]).code(2);
}

#[test]
fn negative_numbers_are_argument_values() {
    let env = TestEnv::new();
    let f = env.write("m.ail", DOUBLE);
    let f = f.to_string_lossy();
    let r = env
        .run(&["ailang", "run", "--quiet", "--args-json", "-21", &f])
        .ok();
    assert_eq!(r.stdout, "-42\n");
    let r = env
        .run(&["ailang", "run", "--quiet", "--args-json=-1", &f])
        .ok();
    assert_eq!(r.stdout, "-2\n");
}

#[test]
fn run_prints_banners_unless_quiet() {
    let env = TestEnv::new();
    env.write("m.ail", DOUBLE);
    let r = env
        .run(&["ailang", "run", "--args-json", "4", "m.ail"])
        .ok();
    assert_eq!(
        r.stdout,
        "→ Type checking...\n→ Effect checking...\n✓ Running m.ail\n8\n"
    );
    let r = env
        .run(&["ailang", "run", "--quiet", "--args-json", "4", "m.ail"])
        .ok();
    assert_eq!(r.stdout, "8\n");
}

#[test]
fn check_prints_progress_and_the_success_line() {
    let env = TestEnv::new();
    env.write("m.ail", DOUBLE);
    let r = env.run(&["ailang", "check", "m.ail"]).ok();
    assert_eq!(
        r.stdout,
        "→ Type checking m.ail...\n→ Effect checking...\n✓ No errors found!\n"
    );
    let r = env.run(&["ailang", "check", "--quiet", "m.ail"]).ok();
    assert_eq!(r.stdout, "");
    env.write("bad.ail", b"module bad\nexport func main() -> int = nope\n");
    let r = env.run(&["ailang", "check", "bad.ail"]).code(1);
    assert!(!r.stdout.contains("No errors"), "{}", r.stdout);
    assert!(
        r.stderr
            .contains("Error: TC_UNBOUND_001: unbound name 'nope' (at bad.ail:2:29)"),
        "{}",
        r.stderr
    );
}
