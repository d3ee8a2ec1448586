//! Test hooks: the one place `world` reads a `WORLD_TEST_*` variable (issue 26 §1,
//! DEC-TRUST3-1).
//!
//! A hook lets the test suite fix behaviour that is otherwise the host's: the clock, or a
//! bound too long to wait for in a test. Every hook is read through [`var`], which exists
//! only in builds with `debug_assertions` — the `dev` and `test` profiles `cargo build` and
//! `cargo test` use. In a release build (`cargo install`, `cargo build --release`) [`var`]
//! answers `None` for every name without looking at the environment, so setting a hook
//! variable has no effect: a revoked or expired credential cannot be revived by naming an
//! earlier time, and no entry can be backdated. `tests/release_hooks.rs` builds the binary
//! with the release configuration and proves it; `tests/layering.rs` keeps every other
//! module from reading a `WORLD_TEST_` variable itself.

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

/// Whether this build honours the hooks (`cfg(debug_assertions)`); `false` in a release
/// build.
pub const ENABLED: bool = cfg!(debug_assertions);

/// The value of hook `name` (one of [`HOOKS`]) in a test build; always `None` in a release
/// build, whatever the environment holds.
pub fn var(name: &str) -> Option<String> {
    debug_assert!(
        HOOKS.iter().any(|(n, _)| *n == name),
        "{name} is not a declared test hook"
    );
    #[cfg(debug_assertions)]
    {
        std::env::var(name).ok()
    }
    #[cfg(not(debug_assertions))]
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
