//! Packaging (issue 29 item 7): what `cargo install --path .` puts on the PATH and how much
//! debug info the installed binary carries, read from `Cargo.toml` (DEC-UX-2).

use std::path::Path;

fn manifest() -> toml::Table {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
        .expect("read Cargo.toml");
    text.parse().expect("Cargo.toml parses")
}

#[test]
fn install_puts_exactly_one_binary_world_on_the_path() {
    let m = manifest();
    let bins = m
        .get("bin")
        .and_then(|b| b.as_array())
        .expect("[[bin]] targets");
    let names: Vec<&str> = bins
        .iter()
        .filter_map(|b| b.get("name").and_then(|n| n.as_str()))
        .collect();
    assert_eq!(names, ["world"], "cargo install installs every [[bin]]");
    // No auto-discovered binaries either (src/bin/*.rs would be installed too).
    assert!(!Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/bin")
        .exists());
    // The test double is an example, which cargo install never installs.
    let examples = m
        .get("example")
        .and_then(|e| e.as_array())
        .expect("[[example]]");
    assert!(examples
        .iter()
        .any(|e| e.get("name").and_then(|n| n.as_str()) == Some("fake-ailang")));
}

#[test]
fn the_release_build_keeps_at_most_line_tables_and_profiling_keeps_everything() {
    let m = manifest();
    let profiles = m
        .get("profile")
        .and_then(|p| p.as_table())
        .expect("[profile]");
    let release = profiles
        .get("release")
        .and_then(|p| p.as_table())
        .expect("release");
    let debug = release.get("debug").cloned();
    let ok = match &debug {
        None => true,
        Some(toml::Value::Boolean(b)) => !b,
        Some(toml::Value::Integer(i)) => *i == 0,
        Some(toml::Value::String(s)) => {
            ["none", "line-tables-only", "line-directives-only"].contains(&s.as_str())
        }
        _ => false,
    };
    assert!(ok, "release debug = {debug:?}");
    // Line tables alone measured 130 MB; the installed binary carries no debug info at all.
    let strip = release.get("strip").and_then(|v| v.as_str());
    assert!(
        matches!(strip, Some("debuginfo") | Some("symbols")),
        "release strip = {strip:?}"
    );
    let profiling = profiles
        .get("profiling")
        .and_then(|p| p.as_table())
        .expect("profiling");
    assert_eq!(
        profiling.get("inherits").and_then(|v| v.as_str()),
        Some("release")
    );
    assert_eq!(profiling.get("debug").and_then(|v| v.as_bool()), Some(true));
    assert_eq!(
        profiling.get("strip").and_then(|v| v.as_str()),
        Some("none")
    );
}
