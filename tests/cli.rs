//! The `world` CLI integration tests: one module of tests/runner.rs, one submodule per area
//! under tests/cli/, shared helpers in tests/common/.

#[path = "cli/bad_input.rs"]
mod bad_input;
#[path = "cli/chain_rules.rs"]
mod chain_rules;
#[path = "cli/commit.rs"]
mod commit;
#[path = "cli/contract.rs"]
mod contract;
#[path = "cli/genesis.rs"]
mod genesis;
#[path = "cli/leftovers.rs"]
mod leftovers;
#[path = "cli/lock.rs"]
mod lock;
#[path = "cli/output.rs"]
mod output;
#[path = "cli/reads.rs"]
mod reads;
#[path = "cli/receipts.rs"]
mod receipts;
#[path = "cli/reliability.rs"]
mod reliability;
#[path = "cli/sessions.rs"]
mod sessions;
#[path = "cli/small_faults.rs"]
mod small_faults;
#[path = "cli/verify.rs"]
mod verify;

/// The schema check of docs/json/, for the ledger tests outside tests/cli/.
pub(crate) use output::assert_schema;

/// Every file in tests/cli/ must be declared above, or its tests would silently never run.
#[test]
fn every_test_module_is_listed() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let listing = std::fs::read_to_string(root.join("cli.rs")).expect("read tests/cli.rs");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(root.join("cli")).expect("read tests/cli") {
        let path = entry.expect("dir entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("utf-8 file name");
        let declared = format!("#[path = \"cli/{stem}.rs\"]\nmod {stem};");
        if !listing.contains(&declared) {
            missing.push(stem.to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "tests/cli/ holds modules not listed in tests/cli.rs: {missing:?}"
    );
}
