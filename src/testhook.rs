//! Test hooks: the one place `world` reads a `WORLD_TEST_*` variable (issue 26 §1,
//! DEC-TRUST3-1).
//!
//! A hook lets the test suite fix behaviour that is otherwise the host's: the clock, or a
//! bound too long to wait for in a test. Every hook is read through [`var`], which reads the
//! environment only when the crate is built with the cargo feature `test-hooks`. Nothing
//! ships with it: the feature is turned on by the package's dev-dependency on itself, which
//! cargo (resolver 2) applies only when it builds tests, benches or examples — so `cargo
//! test` builds the binary the integration tests run with the hooks, whatever the profile
//! (`--release` included), while `cargo build`, `cargo build --release` and `cargo install`
//! build it without them. There [`var`] answers `None` for every name without looking at the
//! environment, so setting a hook variable has no effect: an expired credential cannot be
//! revived by naming an earlier time, and no entry can be backdated. `tests/release_hooks.rs`
//! builds the binary the way `cargo build --release` does (profile `hookcheck`: the release
//! settings at opt-level 0) and proves it; `tests/layering.rs` keeps every other module from
//! reading a `WORLD_TEST_` variable itself.

/// Every hook: its variable and what it does in a test build.
pub const HOOKS: [(&str, &str); 3] = [
    (
        "WORLD_TEST_NOW",
        "fixes the clock at these Unix seconds (`clock::Clock::from_env`)",
    ),
    (
        "WORLD_TEST_HTTP_READ_MS",
        "shortens `world serve`'s request-body read bound (never lengthens it)",
    ),
    (
        "WORLD_TEST_AGUI_RUN_MS",
        "shortens the AG-UI run budget (never lengthens it)",
    ),
];

/// Whether this build honours the hooks (cargo feature `test-hooks`); `false` in every build
/// but the test harness's.
pub const ENABLED: bool = cfg!(feature = "test-hooks");

/// The value of hook `name` (one of [`HOOKS`]) in a test build; always `None` in any other
/// build, whatever the environment holds.
pub fn var(name: &str) -> Option<String> {
    debug_assert!(
        HOOKS.iter().any(|(n, _)| *n == name),
        "{name} is not a declared test hook"
    );
    #[cfg(feature = "test-hooks")]
    {
        std::env::var(name).ok()
    }
    #[cfg(not(feature = "test-hooks"))]
    {
        let _ = name;
        None
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn hooks_are_named_world_test() {
        for (name, _) in super::HOOKS {
            assert!(name.starts_with("WORLD_TEST_"), "{name}");
        }
    }
}
