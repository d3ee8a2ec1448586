//! Issue 13 §5–§6: user-named files are bounded regular-file reads that never block, no error
//! prints a token, and killed writers leave nothing a user can see (or the next run sweeps it).

use std::time::{Duration, Instant};

use crate::common::TestEnv;

fn mkfifo(p: &std::path::Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn publish_refuses_dev_zero_and_fifo_sources_quickly_and_args_file_fifos() {
    let env = TestEnv::new();
    env.genesis();
    let fifo = env.path("src.fifo");
    mkfifo(&fifo);
    for src in ["/dev/zero", fifo.to_str().unwrap()] {
        let manifest = serde_json::json!([{
            "id": "x", "title": "X", "description": "d", "transitionFnFile": src,
            "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"},
            "access": {"effect": "world.apply", "scope": "world", "cost": 0}, "declaredEffects": []
        }]);
        let m = env.write("m.json", manifest.to_string().as_bytes());
        let before = env.snapshot();
        let t = Instant::now();
        let r = env.run(&["publish", "--manifest", m.to_str().unwrap(), "--yes"]);
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "{src} took {:?}",
            t.elapsed()
        );
        assert_ne!(r.code, 0, "{r:#?}");
        assert!(r.stderr.contains("not a regular file"), "{src}: {r:#?}");
        assert_eq!(env.snapshot(), before);
    }
    let r = env.run(&["invoke", "echo", "--args-file", fifo.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{r:#?}");
    assert!(r.stderr.contains("not a regular file (a FIFO)"), "{r:#?}");
}

#[test]
fn no_error_prints_a_token() {
    let env = TestEnv::new();
    env.genesis();
    let tok = "8028aa55aa55aa55aa55aa55aa55aa55aa55aa55aa55aa55aa55aa55aa55b574";
    for v in [
        format!("{tok} "),
        format!("Bearer {tok}"),
        format!("{tok}\n"),
        format!(" {tok}"),
    ] {
        let r = env.run(&["invoke", "echo", "--args", "{}", "--session", &v]);
        assert_ne!(r.code, 0);
        assert!(!r.stderr.contains(&tok[8..56]), "token echoed: {r:#?}");
        assert!(r.stderr.contains("looks like a token"), "{r:#?}");
    }
}

#[test]
fn a_killed_mint_leaves_no_token_file_and_stale_temps_are_swept() {
    let env = TestEnv::new();
    env.genesis();
    let out = env.path("tok");
    // What a mint killed before its commit leaves behind: a hidden temp of a dead pid.
    let stale = env.path(".tok.world-mint-999999.tmp");
    std::fs::write(&stale, "x\n").unwrap();
    let r = env.run(&[
        "session",
        "mint",
        "--episode",
        "ep1",
        "--yes",
        "--grant",
        "world.apply=world:1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{r:#?}");
    assert!(!stale.exists(), "the stale temp was swept");
    let token = std::fs::read_to_string(&out).unwrap();
    assert_eq!(token.trim().len(), 64);
    let leftovers: Vec<_> = std::fs::read_dir(env.dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("world-mint"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
