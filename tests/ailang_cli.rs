//! `world ailang …` driven as a binary (issue 14): the CLI contract of the external `ailang`
//! for the arguments `world` passes (ailang.md §1–§3), `world ailang test`, and diagnostics that
//! name the user's file.

use crate::common;

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

#[test]
fn test_runs_tests_pairs_and_test_blocks_with_positions() {
    let env = TestEnv::new();
    env.write(
        "t.ail",
        b"module t\nexport func inc(x: int) -> int tests [(1, 2), (2, 4)] = x + 1\n\
          test \"sums\" {\n  1 + 1 == 2;\n  assert inc(1) == 2\n}\n\
          test \"wrong\" { inc(1) == 3 }\n",
    );
    let r = env.run(&["ailang", "test", "t.ail"]).code(1);
    assert_eq!(
        r.stdout,
        "✓ t.ail:2:39 inc #1\n\
         ✗ t.ail:2:47 inc #2 — expected 4, got 3\n\
         ✓ t.ail:3:1 test \"sums\"\n\
         ✗ t.ail:7:1 test \"wrong\" — statement at 7:16: statement is false, not true\n\
         2 passed, 2 failed\n"
    );
    let r = env.run(&["ailang", "test", "--json", "t.ail"]).code(1);
    let v = r.json();
    assert_eq!(v["passed"], 2);
    assert_eq!(v["failed"], 2);
    assert_eq!(v["cases"][1]["line"], 2);
    assert_eq!(v["cases"][1]["column"], 47);
    assert_eq!(v["cases"][1]["message"], "expected 4, got 3");
    assert_eq!(v["cases"][2]["name"], "test \"sums\"");
    env.write("ok.ail", b"module ok\ntest \"t\" { true }\n");
    let r = env.run(&["ailang", "test", "ok.ail"]).ok();
    assert_eq!(r.stdout, "✓ ok.ail:2:1 test \"t\"\n1 passed, 0 failed\n");
}

#[test]
fn the_v041_corpus_program_checks_tests_and_runs() {
    let env = TestEnv::new();
    let f = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/ailang/v041_features.ail"
    );
    env.run(&["ailang", "check", f]).ok();
    let r = env.run(&["ailang", "test", f]).ok();
    assert!(r.stdout.ends_with("9 passed, 0 failed\n"), "{}", r.stdout);
}

#[test]
fn publish_diagnostics_name_the_users_file() {
    use world::ailang::Embedded;
    use world::store::{Store, WriteOptions};
    use world::transitions::{manifest, publish};
    let env = TestEnv::new();
    std::fs::create_dir_all(env.path("tx")).expect("mkdir");
    env.write(
        "tx/bad.ail",
        b"module tx/bad\nexport func main(i: string) -> string = nope\n",
    );
    let store = Store::open_write(
        &env.path("world.db"),
        WriteOptions {
            create: true,
            wait_lock: None,
        },
    )
    .expect("open store");
    let entry = r#"[{"id":"bad","title":"Bad","description":"d","transitionFnFile":"tx/bad.ail","inputSchema":{"type":"object"},"outputSchema":{"type":"object"},"access":{"effect":"world.apply","scope":"world","cost":0},"declaredEffects":[]}]"#;
    let m = manifest::parse(entry.as_bytes()).expect("manifest");
    let opts = publish::PlanOptions {
        base_dir: env.path(""),
        bootstrap_epoch: true,
    };
    let e = publish::plan_publish(store.conn(), &m, &Embedded::new(), &opts, &mut |_| {})
        .expect_err("a type error is not publishable");
    let msg = e.to_string();
    assert!(msg.contains("(at tx/bad.ail:2:41)"), "{msg}");
    assert!(!msg.contains("host/capsule"), "{msg}");
}

#[test]
fn check_and_run_diagnostics_name_the_users_file_line_and_column() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.path("tx")).expect("mkdir");
    env.write(
        "tx/bad.ail",
        b"module tx/bad\nexport func main(i: string) -> string = nope\n",
    );
    let r = env.run(&["ailang", "check", "tx/bad.ail"]).code(1);
    assert!(r.stderr.contains("(at tx/bad.ail:2:41)"), "{}", r.stderr);
    let r = env
        .run(&[
            "ailang",
            "run",
            "--quiet",
            "--args-json",
            "\"x\"",
            "tx/bad.ail",
        ])
        .code(1);
    assert!(r.stderr.contains("(at tx/bad.ail:2:41)"), "{}", r.stderr);
    // A runtime error, too.
    env.write(
        "tx/div.ail",
        b"module tx/div\nexport func main(n: int) -> int =\n  10 / n\n",
    );
    let r = env
        .run(&["ailang", "run", "--quiet", "--args-json", "0", "tx/div.ail"])
        .code(1);
    assert!(r.stderr.contains("tx/div.ail:3:"), "{}", r.stderr);
    assert!(!r.stderr.contains("host/capsule"), "{}", r.stderr);
}

#[test]
fn devices_and_fifos_are_refused_without_reading_them() {
    let env = TestEnv::new();
    for cmd in ["check", "run", "test"] {
        let r = env.run(&["ailang", cmd, "/dev/zero"]).code(1);
        assert!(r.stderr.contains("not a regular file"), "{}", r.stderr);
    }
    let fifo = env.path("pipe.ail");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if made {
        // Nobody writes to the FIFO: a blocking open or read would hang here.
        let r = env
            .run(&["ailang", "check", &fifo.to_string_lossy()])
            .code(1);
        assert!(r.stderr.contains("(a FIFO)"), "{}", r.stderr);
    }
    // Over the 16 MiB source bound: refused while reading.
    let big = env.write("big.ail", &vec![b' '; 16 * 1024 * 1024 + 1]);
    let r = env
        .run(&["ailang", "check", &big.to_string_lossy()])
        .code(1);
    assert!(
        r.stderr.contains("over the 16777216-byte limit"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_huge_recursion_limit_is_a_clear_error_not_a_crash() {
    let env = TestEnv::new();
    env.write(
        "deep.ail",
        b"module deep\nfunc f(n: int) -> int = if n == 0 then 0 else 1 + f(n - 1)\nexport func main(n: int) -> int = f(n)\n",
    );
    let r = env
        .run(&[
            "ailang",
            "run",
            "--quiet",
            "--max-recursion-depth",
            "200000",
            "--args-json",
            "190000",
            "deep.ail",
        ])
        .code(1);
    assert!(
        r.stderr.contains("RT_REC_001") || r.stderr.contains("RT_STACK_001"),
        "{}",
        r.stderr
    );
    // Within the limit, the same program still answers.
    let r = env
        .run(&[
            "ailang",
            "run",
            "--quiet",
            "--max-recursion-depth",
            "200000",
            "--args-json",
            "20000",
            "deep.ail",
        ])
        .ok();
    assert_eq!(r.stdout, "20000\n");
}

#[test]
fn the_eight_se_tools_transitions_pass_their_tests_clauses() {
    // Their tests clauses pin the plan bytes and refusals the reference's current se-tools
    // transitions pin in theirs (issue 14 §7).
    let env = TestEnv::new();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/transitions/se-tools");
    let mut seen = 0;
    for name in [
        "ailang-check",
        "ailang-cli",
        "ailang-edit",
        "ailang-read",
        "ailang-run",
        "ailang-write",
        "builtins-search",
        "examples-search",
    ] {
        let f = format!("{dir}/{name}.ail");
        let r = env.run(&["ailang", "test", "--json", &f]).ok();
        let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("test --json");
        assert_eq!(v["failed"], 0, "{name}: {}", r.stdout);
        let main_cases = v["cases"]
            .as_array()
            .map(|cs| {
                cs.iter()
                    .filter(|c| c["name"].as_str().is_some_and(|n| n.starts_with("main #")))
                    .count()
            })
            .unwrap_or(0);
        assert!(main_cases >= 7, "{name}: only {main_cases} main cases");
        seen += main_cases;
    }
    assert!(seen >= 110, "{seen} main cases in all");
}
