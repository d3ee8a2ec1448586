//! The checked-in completions/ and man/ must match what the CLI renders now.
//! Regenerate with: cargo run -- util completions && cargo run -- util man

use std::path::Path;

fn check(dir: &str, files: Vec<(String, Vec<u8>)>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut stale = Vec::new();
    for (name, bytes) in &files {
        match std::fs::read(root.join(name)) {
            Ok(have) if &have == bytes => {}
            _ => stale.push(name.clone()),
        }
    }
    let mut on_disk: Vec<String> = std::fs::read_dir(&root)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    on_disk.retain(|n| !files.iter().any(|(f, _)| f == n));
    assert!(
        stale.is_empty() && on_disk.is_empty(),
        "{dir}/ is stale (changed: {stale:?}, no longer generated: {on_disk:?}); regenerate with `cargo run -- util completions && cargo run -- util man`"
    );
}

#[test]
fn completions_are_current() {
    check("completions", world::cli::util::completions());
}

#[test]
fn man_pages_are_current() {
    check(
        "man",
        world::cli::util::man_pages().expect("render man pages"),
    );
}

#[test]
fn clap_definition_is_consistent() {
    use clap::CommandFactory;
    world::cli::Cli::command().debug_assert();
}
