//! The `world` binary a bench runs: the shipped build, not the bench build's.
//!
//! `cargo bench` builds `target/release/world` with the `test-hooks` feature, because the
//! package's dev-dependency on itself turns it on for every test, bench and example build
//! (resolver 2 unifies dev-dependency features there; DEC-TRUST3-1). That binary reads the
//! `WORLD_TEST_*` variables, which no installed `world` does. [`world`] instead builds `world`
//! as `cargo build --release` and `cargo install` build it — the release profile, no features
//! — in the bench's own target directory (the dependencies are the release ones `cargo bench`
//! just built, so only the `world` crate is compiled again, once), and copies it to
//! `<target>/release/world-shipped`, a path no cargo build writes.
//!
//! In-process benches link the library as the bench build made it (with the feature); there
//! the feature changes only `testhook::var` (the clock and two `serve` bounds) from a constant
//! `None` into one environment read where it is called (DEC-PERF-18).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The shipped `world` binary, built once per bench process (see the module docs). Panics when
/// cargo cannot build it: a bench must not silently time another binary.
pub fn world() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        // The bench runs from <target>/release/deps/<bench>-<hash>.
        let exe = std::env::current_exe().expect("the bench's own path");
        let target = exe
            .ancestors()
            .nth(3)
            .expect("the bench lives in <target>/release/deps")
            .to_path_buf();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let out = Command::new(cargo)
            .args([
                "build",
                "--quiet",
                "--locked",
                "--release",
                "--bin",
                "world",
            ])
            .arg("--target-dir")
            .arg(&target)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env_remove("RUSTC_WORKSPACE_WRAPPER")
            .output()
            .expect("run cargo build --release");
        assert!(
            out.status.success(),
            "cargo build --release --bin world failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let built = target.join("release").join("world");
        let shipped = target.join("release").join("world-shipped");
        // Copied, not hard-linked: a later `cargo bench` replaces `world` with its own build.
        let _ = std::fs::remove_file(&shipped);
        std::fs::copy(&built, &shipped).expect("copy the shipped world binary");
        eprintln!(
            "timing the shipped build (cargo build --release, no test hooks): {}",
            shipped.display()
        );
        shipped
    })
}
