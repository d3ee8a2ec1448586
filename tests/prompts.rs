//! Issue 16 §10 and §9 on a pseudo-terminal: every attended prompt shows what is being
//! approved, the line editor works (Backspace, Ctrl-U, Ctrl-W, arrows), Ctrl-D answers no,
//! and progress bars appear on a terminal only.

use crate::common;
use crate::terminal;

use std::io::{Read, Write};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::TestEnv;

/// Run `c` in a new session whose controlling terminal (and stdin) is a fresh pty; for each step wait
/// until the terminal has shown `wait_for`, then type its keys one at a time (each arrives
/// while the prompt is reading). Returns the output and everything the terminal showed.
fn drive(mut c: Command, steps: &[(&str, &[&[u8]])]) -> (Output, String) {
    let (master, slave) = terminal::pty();
    // stdin is the terminal too, as in an interactive shell (`publish` checks that it is).
    c.stdin(Stdio::from(slave.try_clone().expect("clone pty")))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    terminal::with_terminal(&mut c, &slave);
    let child = c.spawn().expect("spawn world");
    // The command holds nothing of the pty, but drop it and the slave so the master reads
    // end-of-file once the child exits.
    drop(c);
    drop(slave);
    let shown = Arc::new(Mutex::new(Vec::<u8>::new()));
    let mut reader = master.try_clone().expect("clone pty");
    let sink = Arc::clone(&shown);
    let pump = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().extend_from_slice(&buf[..n]);
        }
    });
    let mut writer = master;
    for (wait_for, keys) in steps {
        let start = Instant::now();
        while !String::from_utf8_lossy(&shown.lock().unwrap()).contains(wait_for) {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "the terminal never showed {wait_for:?}: {:?}",
                String::from_utf8_lossy(&shown.lock().unwrap())
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        for k in keys.iter() {
            std::thread::sleep(Duration::from_millis(60));
            writer.write_all(k).expect("type");
        }
    }
    let out = child.wait_with_output().expect("wait");
    drop(writer);
    let _ = pump.join();
    let text = String::from_utf8_lossy(&shown.lock().unwrap()).into_owned();
    (out, text)
}

fn keys(text: &str) -> Vec<&[u8]> {
    text.as_bytes().chunks(1).collect()
}

fn mint_cmd(env: &TestEnv, out: &str) -> Command {
    let mut c = env.std_cmd();
    c.args([
        "session",
        "mint",
        "--episode",
        "ep1",
        "--grant",
        "world.apply=world:10",
        "--grant",
        "Workspace.Read=worktree:2",
        "--ttl",
        "3600",
        "--out",
        env.path(out).to_str().unwrap(),
    ]);
    c
}

#[test]
fn mint_shows_the_grants_and_expiry_and_the_line_editor_works() {
    let env = TestEnv::new();
    env.genesis();
    // Type "no", erase it with Ctrl-U, type "yx", erase x with Backspace, then Enter.
    let mut typed: Vec<&[u8]> = keys("no");
    typed.push(b"\x15");
    typed.extend(keys("yx"));
    typed.push(b"\x7f");
    typed.push(b"\r");
    let (out, shown) = drive(mint_cmd(&env, "tok"), &[("Mint it? [y/N] ", &typed)]);
    assert_eq!(out.status.code(), Some(0), "{shown}\n{out:?}");
    for want in [
        "Mint a session credential for episode ep1",
        "grant  world.apply on scope world, budget 10",
        "grant  Workspace.Read on scope worktree, budget 2",
        // WORLD_TEST_NOW + 3600 s.
        "expires 2023-11-14T23:13:20Z (in 3600 s",
    ] {
        assert!(shown.contains(want), "prompt lacks {want:?}: {shown:?}");
    }
    assert!(env.path("tok").exists());
    let rows = env.run(&["session", "list", "--json"]).ok().json_lines();
    assert_eq!(rows[0]["attended"], true);
}

#[test]
fn ctrl_d_answers_no_even_after_typing_yes() {
    let env = TestEnv::new();
    env.genesis();
    let before = env.snapshot();
    let mut typed = keys("y");
    typed.push(b"\x04");
    let (out, shown) = drive(mint_cmd(&env, "tok"), &[("Mint it? [y/N] ", &typed)]);
    assert_eq!(out.status.code(), Some(3), "{shown}\n{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("aborted (not confirmed)"));
    assert_eq!(env.snapshot(), before, "nothing minted");
    assert!(!env.path("tok").exists());
}

#[test]
fn approval_decide_edits_with_arrows_and_ctrl_w() {
    let env = TestEnv::new();
    env.genesis();
    let r = env
        .run(&[
            "approval",
            "request",
            "--episode",
            "ep1",
            "--summary",
            "ship v2",
        ])
        .ok()
        .stdout
        .trim()
        .to_string();
    let mut c = env.std_cmd();
    c.args(["approval", "decide", &r, "--approve"]);
    // "maybe yes" → Ctrl-W deletes "yes" → Ctrl-W deletes "maybe " → "es", ←←, "y", → …
    // ends as "yes".
    let mut typed = keys("maybe yes");
    typed.push(b"\x17");
    typed.push(b"\x17");
    typed.extend(keys("es"));
    typed.push(b"\x1b[D");
    typed.push(b"\x1b[D");
    typed.push(b"y");
    typed.push(b"\r");
    let (out, shown) = drive(c, &[("[y/N] ", &typed)]);
    assert_eq!(out.status.code(), Some(0), "{shown}\n{out:?}");
    assert!(shown.contains("ship v2"), "{shown:?}");
    let v = env.run(&["approval", "show", &r, "--json"]).ok().json();
    assert_eq!(v["state"], "approved", "{v}");
}

#[test]
fn limits_init_shows_scopes_and_bounds_and_names_the_human() {
    let env = TestEnv::new();
    env.genesis();
    let config =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/limits/example.json");
    let mut c = env.std_cmd();
    c.env("USER", "alice")
        .args(["limits", "init", "--config", config.to_str().unwrap()]);
    // Read the phrase from the prompt, then type it.
    let (out, shown) = drive(c, &[("> ", &[b"\x04"])]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "Ctrl-D answers no: {shown}\n{out:?}"
    );
    for want in [
        "ledger guide",
        "WORK_ORDER wo: cost≤100, handoff≤10",
        // The run's null bounds inherit its parent's: named as inherited, with the value.
        "RUN run (under wo): cost≤100 (inherited from wo), handoff≤10 (inherited from wo), activeMs unbounded",
        "confirm as human:alice",
    ] {
        assert!(shown.contains(want), "prompt lacks {want:?}: {shown:?}");
    }
    assert!(!shown.contains("human:unknown"), "{shown:?}");
}

/// Issue 27 §4: each attended ledger prompt shows every number being approved. Ctrl-D answers
/// no, so nothing is written; what the terminal showed is checked.
#[test]
fn ledger_prompts_show_every_number_being_approved() {
    let env = TestEnv::new();
    env.genesis();
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = repo.join("fixtures/limits/example.json");
    let evidence = env.write("evidence.txt", b"invoice 42: 60 units\n");
    let evidence_ref = common::sha(b"invoice 42: 60 units\n");
    let cfg = config.to_str().unwrap();
    env.run(&["limits", "init", "--config", cfg, "--yes", "--now", "0"])
        .ok();
    for args in [
        &[
            "limits",
            "reserve",
            "--scope",
            "run",
            "--attempt",
            "u",
            "--purpose",
            "ordinary",
            "--amount",
            "70",
            "--max-active-ms",
            "5",
            "--now",
            "1",
        ][..],
        &["limits", "dispatch", "--attempt", "u", "--now", "1"],
        &[
            "limits",
            "settle",
            "--attempt",
            "u",
            "--unknown",
            "--now",
            "2",
        ],
    ] {
        env.run(args).ok();
    }
    let ev = evidence.to_str().unwrap();
    let ask = |args: &[&str]| {
        let mut c = env.std_cmd();
        c.env("USER", "alice").args(args);
        let (out, shown) = drive(c, &[("> ", &[b"\x04"])]);
        assert_eq!(
            out.status.code(),
            Some(3),
            "Ctrl-D answers no: {shown}\n{out:?}"
        );
        shown
    };
    // adjust: before → after, and the evidence.
    let shown = ask(&[
        "limits",
        "adjust",
        "--scope",
        "wo",
        "--set",
        "cost=150",
        "--set",
        "attempts=3",
        "--evidence-file",
        ev,
        "--now",
        "3",
    ]);
    for want in [
        "cost 100 → 150",
        "attempts unbounded → 3",
        &format!("evidence {evidence_ref}"),
    ] {
        assert!(
            shown.contains(want),
            "adjust prompt lacks {want:?}: {shown:?}"
        );
    }
    // reconcile: the reserved amount, the actual cost and the evidence hash.
    let shown = ask(&[
        "limits",
        "reconcile",
        "--attempt",
        "u",
        "--actual",
        "60",
        "--evidence-file",
        ev,
        "--now",
        "3",
    ]);
    for want in [
        "scope run, state UNKNOWN",
        "reserved 70 → actual 60 (frees 10)",
        &format!("evidence {evidence_ref}"),
    ] {
        assert!(
            shown.contains(want),
            "reconcile prompt lacks {want:?}: {shown:?}"
        );
    }

    // mission create: actions, resources, maxAttempts (and the other bounds).
    let seed = repo.join("fixtures/mission/seed");
    let contract = seed.join("contract.json");
    let shown = ask(&[
        "mission",
        "create",
        "--contract",
        contract.to_str().unwrap(),
        "--now",
        "0",
    ]);
    for want in [
        "budget 100",
        "deadline 1970-01-01T00:00:10Z (10000 ms)",
        "actions write",
        "resources doc",
        "maxAttempts 2 per operation",
        "maxAuthorizationAgeMs 10",
        "criteria review",
        "features triggers, graphs",
    ] {
        assert!(
            shown.contains(want),
            "create prompt lacks {want:?}: {shown:?}"
        );
    }
    // mission reconcile: reserved, actual, evidence hash.
    env.run(&[
        "mission",
        "create",
        "--contract",
        contract.to_str().unwrap(),
        "--yes",
        "--now",
        "0",
    ])
    .ok();
    for n in 1..=3 {
        let step = seed.join(format!("step{n}.json"));
        env.run(&[
            "mission",
            "apply",
            "m",
            "--command",
            step.to_str().unwrap(),
            "--now",
            "10",
        ])
        .ok();
    }
    env.run(&["mission", "dispatch", "m", "--attempt", "a", "--now", "10"])
        .ok();
    env.run(&[
        "mission",
        "settle",
        "m",
        "--attempt",
        "a",
        "--unknown",
        "--now",
        "10",
    ])
    .ok();
    let shown = ask(&[
        "mission",
        "reconcile",
        "m",
        "--attempt",
        "a",
        "--actual",
        "60",
        "--evidence-file",
        ev,
        "--now",
        "11",
    ]);
    for want in [
        "attempt a (operation o, grant g, write doc), status UNKNOWN",
        "reserved 80 → actual 60 SUCCEEDED (frees 20)",
        &format!("evidence {evidence_ref}"),
    ] {
        assert!(
            shown.contains(want),
            "mission reconcile prompt lacks {want:?}: {shown:?}"
        );
    }
}

#[test]
fn progress_bars_draw_on_a_terminal_only() {
    let env = TestEnv::new();
    let tip = env.genesis();
    let (file, _) = common::write_batch(&env, &tip, 300, "bar", "bar.jsonl");
    // stderr on the terminal: the bar draws there; stdout (piped) holds only the heads.
    let mut c = env.std_cmd();
    c.args(["commit", "--batch", file.to_str().unwrap()]);
    let (master, slave) = terminal::pty();
    c.stdout(Stdio::piped())
        .stderr(Stdio::from(slave.try_clone().unwrap()));
    terminal::with_terminal(&mut c, &slave);
    let child = c.spawn().unwrap();
    drop(c); // it holds a copy of the slave as the child's stderr
    drop(slave);
    let mut reader = master.try_clone().unwrap();
    let pump = std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            all.extend_from_slice(&buf[..n]);
        }
        all
    });
    let out = child.wait_with_output().unwrap();
    drop(master);
    let shown = String::from_utf8_lossy(&pump.join().unwrap()).into_owned();
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains("committing"),
        "no bar on the terminal: {shown:?}"
    );
    assert!(shown.contains("/300"), "{shown:?}");
    // Issue 29 §8: the rate is whole units per second (`434/s`), never `433.9596/s`.
    for (i, _) in shown.match_indices("/s") {
        let token = shown[..i].rsplit(['(', ' ']).next().unwrap_or("");
        let sane = token == "-"
            || token.chars().all(|c| c.is_ascii_digit())
            || (token.len() == 3 && token.as_bytes()[1] == b'.');
        assert!(sane, "rate {token:?}/s in {shown:?}");
    }
    assert!(shown.contains("300 of 300 bodies committed"), "{shown:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 300);
    // With stderr piped there is no bar, only the summary.
    let more = common::tip_of(&env.db);
    let (file, _) = common::write_batch(&env, &more, 5, "pipe", "pipe.jsonl");
    let r = env.run(&["commit", "--batch", file.to_str().unwrap()]).ok();
    assert!(!r.stderr.contains("committing"), "{r:#?}");
    assert!(!r.stderr.contains('\x1b'), "{r:#?}");
    // verify, replay and export-episode draw only on a terminal too.
    for args in [vec!["verify"], vec!["replay", "--all", "--allow-empty"]] {
        let r = env.run(&args);
        assert!(
            !r.stderr.contains('\x1b') && !r.stderr.contains('\r'),
            "{args:?}: {r:#?}"
        );
    }
}

/// fixtures/transitions/manifest.json with absolute source paths (the commands run in the temp
/// dir), `echo`'s source replaced by `echo_source` when given; written to `name`.
fn manifest(env: &TestEnv, name: &str, echo_source: Option<&std::path::Path>) -> String {
    let repo = common::repo();
    let mut m: serde_json::Value = serde_json::from_slice(
        &std::fs::read(repo.join("fixtures/transitions/manifest.json")).unwrap(),
    )
    .unwrap();
    for t in m.as_array_mut().unwrap() {
        let file = repo.join(t["transitionFnFile"].as_str().unwrap());
        t["transitionFnFile"] = serde_json::Value::from(file.to_str().unwrap());
        if let (Some(src), "echo") = (echo_source, t["id"].as_str().unwrap()) {
            t["transitionFnFile"] = serde_json::Value::from(src.to_str().unwrap());
        }
    }
    let p = env.write(name, &serde_json::to_vec(&m).unwrap());
    p.to_str().unwrap().to_string()
}

/// Issue 32 §4: the attended `publish --check-against` shows, before its prompt, the behaviour
/// change of the changed transition against the recorded episode ("echo: 1 same,
/// 2 output-changed — entries …"), not only the hash change. Ctrl-D answers no (nothing
/// written); typing the phrase publishes.
#[test]
fn the_publish_prompt_shows_the_behaviour_diff() {
    let env = TestEnv::new();
    env.genesis();
    let base = manifest(&env, "m.json", None);
    env.run(&["publish", "--manifest", &base, "--yes"]).ok();
    let ws = env.path("ws");
    std::fs::create_dir_all(ws.join("ep1")).unwrap();
    let tok = env.path("tok");
    env.run(&[
        "session",
        "mint",
        "--episode",
        "ep1",
        "--grant",
        "world.apply=world:10",
        "--workspace-root",
        ws.to_str().unwrap(),
        "--yes",
        "--out",
        tok.to_str().unwrap(),
    ])
    .ok();
    for args in [r#"{"a":1}"#, r#"{"keep":true}"#, r#"{"b":[2]}"#] {
        env.run(&[
            "invoke",
            "echo",
            "--session",
            tok.to_str().unwrap(),
            "--args",
            args,
        ])
        .ok();
    }
    // The candidate echo answers {"keep":true} as recorded and anything else differently.
    let src =
        std::fs::read_to_string(common::repo().join("fixtures/transitions/echo.ail")).unwrap();
    let changed = src.replace(
        "Some(_) => encode(doc),",
        r#"Some(_) => if encode(doc) == "{\"keep\":true}" then encode(doc) else encode(jo([kv("echoed", jb(true))])),"#,
    );
    assert_ne!(changed, src, "the echo fixture's body moved");
    let cand_src = env.write("echo-v2.ail", changed.as_bytes());
    let cand = manifest(&env, "cand.json", Some(&cand_src));
    let db = env.db.to_str().unwrap().to_string();
    let before = env.snapshot();
    let publish = || {
        let mut c = env.std_cmd();
        c.args(["publish", "--manifest", &cand, "--check-against", &db]);
        c
    };
    let (out, shown) = drive(publish(), &[("> ", &[b"\x04"])]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "Ctrl-D answers no: {shown}\n{out:?}"
    );
    for want in [
        "changed  echo",
        "behaviour check against",
        "echo: 1 same, 2 output-changed — entries ",
        "publish 9 transitions to",
    ] {
        assert!(shown.contains(want), "prompt lacks {want:?}: {shown:?}");
    }
    let check = shown.find("behaviour check against").unwrap();
    assert!(
        check < shown.rfind("> ").unwrap(),
        "the behaviour summary comes before the prompt: {shown:?}"
    );
    assert_eq!(env.snapshot(), before, "nothing published");
    // Typing the phrase publishes the candidate.
    let phrase = format!("publish 9 transitions to {db}\r");
    let (out, shown) = drive(publish(), &[("> ", &keys(&phrase))]);
    assert_eq!(out.status.code(), Some(0), "{shown}\n{out:?}");
    assert!(
        shown.contains("echo: 1 same, 2 output-changed"),
        "{shown:?}"
    );
    assert_ne!(env.snapshot(), before, "the candidate was published");
}

/// Issue 29 §5: `WORLD_PROMPT_TIMEOUT` sets every prompt's wait (here `session mint`'s): the
/// prompt states it, an unanswered prompt gives up after it with nothing written, and a value
/// that is not a number of seconds is a usage error before anything is asked.
#[test]
fn world_prompt_timeout_sets_every_prompts_wait() {
    let env = TestEnv::new();
    env.genesis();
    let before = env.snapshot();
    let mut c = mint_cmd(&env, "tok");
    c.env("WORLD_PROMPT_TIMEOUT", "2");
    let started = Instant::now();
    let (out, shown) = drive(c, &[("Mint it? [y/N] ", &[])]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{shown}\n{err}");
    assert!(shown.contains("no answer within 2 s"), "{shown}");
    assert!(err.contains("no answer within 2 s"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(env.snapshot(), before, "nothing minted");
    assert!(!env.path("tok").exists());

    let mut c = mint_cmd(&env, "tok");
    c.env("WORLD_PROMPT_TIMEOUT", "soon");
    let out = c.output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("WORLD_PROMPT_TIMEOUT"));
    assert_eq!(env.snapshot(), before);
}
