//! The one integration-test binary of `world` (issue 17 §7; `autotests = false` in Cargo.toml).
//!
//! Every `tests/*.rs` file is a module of this crate, declared below, and the shared harness
//! modules are declared once: `common` (the test environment: a temp store, the `world`
//! binary, a scrubbed environment, the fixed clock, the repository root and re-running one
//! test of this binary in a child process), `invoke_support` (a store with the test
//! transitions published), `pgtest` (one throwaway PostgreSQL cluster for the whole process)
//! and `terminal` (pseudo-terminals). One binary means one link step instead of ~35 and one
//! process whose tests run in parallel.
//!
//! Run one former test file with a module filter: `cargo test --test runner invoke::`; one
//! test with `cargo test --test runner invoke::session_reuse -- --exact`.

mod common;
mod invoke_support;
mod pgtest;
mod registry_double;
mod terminal;

mod agent_rule;
mod ailang_bad_input;
mod ailang_cli;
mod ailang_conformance;
mod ailang_deep_values;
mod approvals;
mod broker;
mod capsule;
mod checkpoint;
// `cli` keeps its own `#[path = "cli/…"]` submodule declarations, which resolve relative to
// tests/ only when the file itself is loaded through a path attribute.
#[path = "cli.rs"]
mod cli;
mod exec;
mod generated;
mod handlers_tool_lane;
mod inspection;
mod integrity_files;
mod invoke;
mod invoke_reliability;
mod layering;
mod ledger_integrity;
mod limits_cli;
mod limits_ledger_file;
mod limits_pairing;
mod limits_pg;
mod limits_pg_hosts;
mod mcp_conformance;
mod mcp_stdio;
mod mission_cli;
mod mission_ledger;
mod mission_ledger_pairing;
mod mission_pairing;
mod number_exactness;
mod outcomes;
mod outputs;
mod package;
mod packaging;
mod prompts;
mod publish;
mod quickstart;
mod release_hooks;
mod replay;
mod sdk_interop;
mod serve;
mod tables;
mod tamper;
mod trust_inputs;
mod ux_messages;

/// Every `tests/*.rs` file and every harness directory must be declared above: with
/// `autotests = false` cargo no longer finds test files by itself, so a file left out would
/// silently never run.
#[test]
fn every_test_file_is_a_module_of_the_runner() {
    let root = common::repo().join("tests");
    let runner = std::fs::read_to_string(root.join("runner.rs")).expect("read tests/runner.rs");
    let declared: std::collections::BTreeSet<&str> = runner
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .collect();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&root).expect("read tests/") {
        let path = entry.expect("dir entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("utf-8 file name")
            .to_string();
        let module = if path.is_dir() {
            if !path.join("mod.rs").exists() {
                continue; // cli/, fixtures/, interop/, snapshots/: not modules of the crate root
            }
            name
        } else if let Some(stem) = name.strip_suffix(".rs") {
            if stem == "runner" {
                continue;
            }
            stem.to_string()
        } else {
            continue;
        };
        if !declared.contains(module.as_str()) {
            missing.push(module);
        }
    }
    assert!(
        missing.is_empty(),
        "tests/ holds modules tests/runner.rs does not declare (they would never run): {missing:?}"
    );
}
