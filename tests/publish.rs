//! `world publish`, `world pin` and `world transitions` through the binary.
//!
//! The fences run before any interpreter is needed, so they are tested end to end here.
//! `world publish --yes` itself needs an interpreter provider (the archive and the embedded
//! interpreter are merged separately), so the registry these read commands show is written
//! through the library with `CheckDouble`, a test double standing in for the interpreter.

use crate::terminal;
use terminal::pty;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use assert_cmd::prelude::*;
use predicates::prelude::*;

use world::encoding::HashRef;
use world::interp::{CheckOutcome, Interpreter, RunError, RunLimits, RunOutcome};
use world::store::{Store, WriteOptions};
use world::transitions::{manifest, publish};

/// Test double for an interpreter: `check` passes unless the source imports `world/*`.
struct CheckDouble {
    reference: String,
}

impl Interpreter for CheckDouble {
    fn interpreter_ref(&self) -> &str {
        &self.reference
    }
    fn version_text(&self) -> &str {
        "AILANG v0.41.0\n"
    }
    fn check(&self, source: &[u8], _: RunLimits) -> Result<CheckOutcome, RunError> {
        let text = String::from_utf8_lossy(source);
        Ok(
            match text.lines().find(|l| l.starts_with("import world/")) {
                Some(l) => CheckOutcome {
                    passed: false,
                    diagnostics: format!("Error: LDR001: module not found: {}", &l[7..]),
                },
                None => CheckOutcome {
                    passed: true,
                    diagnostics: String::new(),
                },
            },
        )
    }
    fn run(&self, _: &[u8], _: &[u8], _: RunLimits) -> Result<RunOutcome, RunError> {
        Err(RunError::Unavailable("check double".into()))
    }
}

fn entry(id: &str, file: &str) -> String {
    format!(
        r#"{{"id":"{id}","title":"T {id}","description":"d","transitionFnFile":"{file}","inputSchema":{{"type":"object"}},"outputSchema":{{"type":"object"}},"access":{{"effect":"Workspace.Read","scope":"worktree","cost":0}},"declaredEffects":[{{"effect":"Workspace.Read","scope":"worktree","cost":1}}]}}"#
    )
}

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("echo.ail"),
            "module echo\nexport func main(i: string) -> string { i }\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("m.json"),
            format!(
                "[{},{}]",
                entry("tools.echo", "echo.ail"),
                entry("count", "echo.ail")
            ),
        )
        .unwrap();
        Env { dir }
    }
    fn db(&self) -> PathBuf {
        self.dir.path().join("w.db")
    }
    /// `world --db <db> ARGS` in the temp dir, without CI variables, stdin from /dev/null,
    /// in a new session (no controlling terminal).
    fn world(&self, args: &[&str]) -> Command {
        let mut c = Command::cargo_bin("world").unwrap();
        c.current_dir(self.dir.path())
            .arg("--db")
            .arg(self.db())
            .args(args)
            .env_remove("CI")
            .env_remove("GITHUB_ACTIONS")
            .env_remove("WORLD_DB")
            .stdin(Stdio::null());
        terminal::detach(&mut c);
        c
    }
    fn publish_with_double(&self, manifest_text: &str) {
        let mut store = Store::open_write(
            &self.db(),
            WriteOptions {
                create: true,
                wait_lock: None,
            },
        )
        .unwrap();
        let m = manifest::parse(manifest_text.as_bytes()).unwrap();
        let interp = CheckDouble {
            reference: HashRef::of(b"check double").to_string(),
        };
        let opts = publish::PlanOptions {
            base_dir: self.dir.path().to_path_buf(),
            bootstrap_epoch: true,
        };
        let plan = publish::plan_publish(store.conn(), &m, &interp, &opts, &mut |_| {}).unwrap();
        publish::commit_publish(&mut store, &plan, true).unwrap();
    }
}

fn registry_rows(db: &Path) -> i64 {
    if !db.exists() {
        return 0;
    }
    let s = Store::open_read(db).unwrap();
    s.conn()
        .query_row(
            "SELECT (SELECT count(*) FROM objects) + (SELECT count(*) FROM epoch_registry_heads)",
            [],
            |r| r.get(0),
        )
        .unwrap()
}

#[test]
fn without_a_terminal_the_tty_fence_says_stop() {
    let env = Env::new();
    env.world(&["publish", "--manifest", "m.json"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains(
            "STOP fence=tty reason=no-controlling-terminal",
        ));
    assert_eq!(registry_rows(&env.db()), 0, "nothing written");
}

#[test]
fn ci_fence_refuses_before_the_terminal() {
    let env = Env::new();
    for var in ["CI", "GITHUB_ACTIONS"] {
        env.world(&["publish", "--manifest", "m.json"])
            .env(var, "1")
            .assert()
            .code(3)
            .stderr(predicate::str::starts_with(format!(
                "STOP fence=ci reason={var}-is-set"
            )));
    }
    assert_eq!(registry_rows(&env.db()), 0);
}

#[test]
fn bad_manifests_fail_before_the_fences() {
    let env = Env::new();
    let cases = [
        (
            format!("[{},{}]", entry("a", "echo.ail"), entry("a", "echo.ail")),
            r#"manifest lists id "a" twice"#,
        ),
        (
            format!("[{}]", entry("A.b", "echo.ail")),
            r#"transition id "A.b" is invalid"#,
        ),
        (
            format!(
                "[{}]",
                entry("a", "echo.ail").replacen('{', r#"{"extra":true,"#, 1)
            ),
            r#"unknown key "extra""#,
        ),
        ("[]".to_string(), "manifest holds no descriptors"),
        (
            format!(
                "[{}]",
                entry("a", "echo.ail").replace(
                    r#""inputSchema":{"type":"object"}"#,
                    &format!(r#""inputSchema":{{"s":"{}"}}"#, "x".repeat(262_138))
                )
            ),
            "raw JSON is 262146 bytes; limit is 262144",
        ),
    ];
    for (text, want) in cases {
        std::fs::write(env.dir.path().join("bad.json"), text).unwrap();
        env.world(&["publish", "--manifest", "bad.json"])
            .assert()
            .code(1)
            .stderr(predicate::str::contains(want));
    }
    assert_eq!(registry_rows(&env.db()), 0);
}

#[test]
fn live_is_refused() {
    let env = Env::new();
    env.world(&["publish", "--manifest", "m.json", "--live"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--live is refused for this verb"));
}

#[test]
fn lock_held_exits_6_naming_the_holder() {
    let env = Env::new();
    let _holder = Store::open_write(
        &env.db(),
        WriteOptions {
            create: true,
            wait_lock: None,
        },
    )
    .unwrap();
    env.world(&["publish", "--manifest", "m.json", "--yes"])
        .assert()
        .code(6)
        .stderr(predicate::str::contains(
            "another process already holds writer authority",
        ))
        // The holder (this test process) wrote only its PID: the hint names the process.
        .stderr(predicate::str::contains(format!(
            "held by pid {}",
            std::process::id()
        )))
        .stderr(predicate::str::contains("stop the daemon").not());
}

#[test]
fn unopenable_store_is_a_store_fence_stop() {
    let env = Env::new();
    std::fs::write(env.db(), b"this is not sqlite, just some bytes that are long enough to be a header........................................").unwrap();
    env.world(&["publish", "--manifest", "m.json", "--yes"])
        .assert()
        .code(3)
        .stderr(predicate::str::starts_with(
            "STOP fence=store reason=unopenable ",
        ));
}

#[test]
fn transitions_list_and_show() {
    let env = Env::new();
    env.world(&["transitions", "list"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("does not exist"));
    let m = std::fs::read_to_string(env.dir.path().join("m.json")).unwrap();
    env.publish_with_double(&m);

    let out = env
        .world(&["transitions", "list", "--json"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["id"], "count");
    assert_eq!(lines[1]["id"], "tools.echo");
    assert_eq!(lines[1]["semanticsEpoch"], 1);
    assert_eq!(lines[1]["access"]["effect"], "Workspace.Read");
    assert_eq!(
        lines[1]["interpreter"],
        HashRef::of(b"check double").to_string()
    );

    env.world(&["transitions", "list"])
        .assert()
        .success()
        .stdout(predicate::str::contains("tools.echo"))
        .stdout(predicate::str::contains("Workspace.Read/worktree/0"))
        .stderr(predicate::str::contains("transition registry revision 1"))
        .stderr(predicate::str::contains("published unattended (--yes)"));

    for name in ["tools.echo", "tools_decho"] {
        env.world(&["transitions", "show", name])
            .assert()
            .success()
            .stdout(predicate::str::contains("mcpName          tools_decho"));
    }
    let out = env
        .world(&["transitions", "show", "tools.echo", "--json"])
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v["mcpName"], "tools_decho");
    env.world(&["transitions", "show", "nope"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "no transition \"nope\" in registry revision 1",
        ));
}

#[test]
fn a_world_import_is_refused_by_the_library_path() {
    let env = Env::new();
    std::fs::write(
        env.dir.path().join("bad.ail"),
        "module bad\nimport world/store\n",
    )
    .unwrap();
    let mut store = Store::open_write(
        &env.db(),
        WriteOptions {
            create: true,
            wait_lock: None,
        },
    )
    .unwrap();
    let m = manifest::parse(format!("[{}]", entry("bad", "bad.ail")).as_bytes()).unwrap();
    let interp = CheckDouble {
        reference: HashRef::of(b"check double").to_string(),
    };
    let opts = publish::PlanOptions {
        base_dir: env.dir.path().to_path_buf(),
        bootstrap_epoch: true,
    };
    let e = publish::plan_publish(store.conn(), &m, &interp, &opts, &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("LDR001"), "{e}");
    assert!(
        e.to_string()
            .contains("world/* imports are not publishable"),
        "{e}"
    );
    drop(store.immediate().unwrap());
    drop(store);
    assert_eq!(registry_rows(&env.db()), 0);
}

/// `world publish` in a new session whose controlling terminal is `ctty`, with `stdin`.
fn publish_on_pty(env: &Env, ctty: &std::fs::File, stdin: Stdio) -> std::process::Output {
    let mut c = Command::cargo_bin("world").unwrap();
    c.current_dir(env.dir.path())
        .arg("--db")
        .arg(env.db())
        .args(["publish", "--manifest", "m.json"])
        .env_remove("CI")
        .env_remove("GITHUB_ACTIONS")
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    terminal::with_terminal(&mut c, ctty);
    c.output().unwrap()
}

#[test]
fn tty_fence_reasons_on_a_pseudo_terminal() {
    let env = Env::new();
    let (_master, slave) = pty();
    let out = publish_on_pty(&env, &slave, Stdio::null());
    assert_eq!(out.status.code(), Some(3));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("STOP fence=tty reason=stdin-not-a-terminal"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_master2, other) = pty();
    let out = publish_on_pty(&env, &slave, Stdio::from(other));
    assert_eq!(out.status.code(), Some(3));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("STOP fence=tty reason=stdin-is-not-the-controlling-terminal"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(registry_rows(&env.db()), 0, "nothing written");
}

/// Run `world publish` attended on a pseudo-terminal and type `answer` at the prompt.
fn publish_typing(env: &Env, answer: &str) -> std::process::Output {
    use std::io::{Read, Write};
    let (mut master, slave) = pty();
    let stdin = Stdio::from(slave.try_clone().unwrap());
    let mut reader = master.try_clone().unwrap();
    // Drain the terminal so the child never blocks on a full pty buffer.
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
        }
    });
    let text = format!("{answer}\r");
    let writer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(1500));
        let _ = master.write_all(text.as_bytes());
        let _ = master.flush();
        std::thread::sleep(std::time::Duration::from_millis(3000));
        drop(master);
    });
    let out = publish_on_pty(env, &slave, stdin);
    let _ = writer.join();
    out
}

#[test]
fn the_typed_phrase_gates_an_attended_publish() {
    let env = Env::new();
    let out = publish_typing(&env, "publish 2 transitions somewhere else");
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("STOP fence=confirmation reason=mismatch"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(registry_rows(&env.db()), 0, "a wrong phrase writes nothing");
    let phrase = format!("publish 2 transitions to {}", env.db().display());
    let out = publish_typing(&env, &phrase);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("published transition registry revision 1"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let s = Store::open_read(&env.db()).unwrap();
    assert!(
        s.registry_head("world/transition-registry/v1")
            .unwrap()
            .is_some(),
        "the confirmed publish moved the registry head"
    );
}

/// One step's action on the terminal (typing, or another command run meanwhile).
type Act = Box<dyn FnOnce(&mut std::fs::File)>;

/// Run `world publish --manifest m.json EXTRA…` attended on a fresh pty (stdin and the
/// controlling terminal); for each step wait until the terminal showed `wait_for`, run `act`
/// (which may type on the terminal). Returns the output and what the terminal showed.
fn publish_driven(
    env: &Env,
    extra: &[&str],
    steps: Vec<(&str, Act)>,
) -> (std::process::Output, String) {
    use std::io::Read;
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};
    let (master, slave) = pty();
    let mut c = Command::cargo_bin("world").unwrap();
    c.current_dir(env.dir.path())
        .arg("--db")
        .arg(env.db())
        .args(["publish", "--manifest", "m.json"])
        .args(extra)
        .env_remove("CI")
        .env_remove("GITHUB_ACTIONS")
        .env("COLUMNS", "80")
        .stdin(Stdio::from(slave.try_clone().unwrap()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    terminal::with_terminal(&mut c, &slave);
    let child = c.spawn().unwrap();
    drop(c);
    drop(slave);
    let shown = Arc::new(Mutex::new(Vec::<u8>::new()));
    let mut reader = master.try_clone().unwrap();
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
    for (wait_for, act) in steps {
        let start = Instant::now();
        while !String::from_utf8_lossy(&shown.lock().unwrap()).contains(wait_for) {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the terminal never showed {wait_for:?}: {:?}",
                String::from_utf8_lossy(&shown.lock().unwrap())
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        act(&mut writer);
    }
    let out = child.wait_with_output().unwrap();
    drop(writer);
    let _ = pump.join();
    let text = String::from_utf8_lossy(&shown.lock().unwrap()).into_owned();
    (out, text)
}

fn typing(text: &'static str) -> Act {
    Box::new(move |w| {
        use std::io::Write;
        for b in text.as_bytes() {
            std::thread::sleep(std::time::Duration::from_millis(15));
            w.write_all(&[*b]).unwrap();
        }
    })
}

/// Issue 29 §6: the prompt states its timeout; when it runs out nothing is published, the
/// command says so, and the writer lock is free again. While it waits, another writer's
/// exit-6 hint names the publish prompt.
#[test]
fn an_unanswered_publish_prompt_times_out_and_releases_the_lock() {
    let env = Env::new();
    let db = env.db();
    let started = std::time::Instant::now();
    let (out, shown) = publish_driven(
        &env,
        &["--prompt-timeout", "4"],
        vec![(
            "> ",
            Box::new(move |_| {
                let o = Command::cargo_bin("world")
                    .unwrap()
                    .arg("--db")
                    .arg(&db)
                    .args(["pin", "--interpreter", "embedded"])
                    .env_remove("WORLD_DB")
                    .output()
                    .unwrap();
                let err = String::from_utf8_lossy(&o.stderr);
                assert_eq!(o.status.code(), Some(6), "{err}");
                assert!(
                    err.contains(
                        "`world publish, waiting at its confirmation prompt (gives up after 4 s)`"
                    ),
                    "{err}"
                );
                assert!(err.contains("answer or cancel that prompt"), "{err}");
            }),
        )],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        shown.contains(
            "(no answer within 4 s cancels: nothing is published and the writer lock is released)"
        ),
        "{shown}"
    );
    assert!(
        err.contains("STOP fence=confirmation reason=timeout"),
        "{err}"
    );
    assert!(
        err.contains("nothing was published (no answer within 4 s)"),
        "{err}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(50));
    assert_eq!(
        registry_rows(&env.db()),
        0,
        "a timed-out prompt writes nothing"
    );
    // The lock is free: an unattended publish goes through at once.
    env.world(&["publish", "--manifest", "m.json", "--yes"])
        .assert()
        .success();
}

/// Issue 29 §6: Ctrl-C, Ctrl-D and a wrong phrase each say that nothing was published.
#[test]
fn an_aborted_publish_prompt_says_nothing_was_published() {
    let env = Env::new();
    for (keys, reason) in [
        ("publish 2\x03", "eof"),
        ("publish 2 transitions\x04", "eof"),
        ("publish two\r", "mismatch"),
    ] {
        let (out, _) = publish_driven(&env, &[], vec![("> ", typing(keys))]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{keys:?}: {err}");
        assert!(
            err.contains(&format!("STOP fence=confirmation reason={reason}")),
            "{keys:?}: {err}"
        );
        assert!(err.contains("nothing was published"), "{keys:?}: {err}");
        assert_eq!(registry_rows(&env.db()), 0, "{keys:?}");
    }
}

/// Issue 29 §6: the diff shows access and declared effects, and each changed field old → new
/// (`transitionFn` included), before the phrase is asked.
#[test]
fn the_publish_diff_shows_effects_and_old_to_new_values() {
    let env = Env::new();
    env.world(&["publish", "--manifest", "m.json", "--yes"])
        .assert()
        .success();
    std::fs::write(
        env.dir.path().join("echo2.ail"),
        "module echo2\nexport func main(i: string) -> string { i ++ \"!\" }\n",
    )
    .unwrap();
    let changed = entry("count", "echo2.ail").replace(
        r#""declaredEffects":[{"effect":"Workspace.Read","scope":"worktree","cost":1}]"#,
        r#""declaredEffects":[{"effect":"Workspace.Read","scope":"worktree","cost":2}]"#,
    );
    std::fs::write(
        env.dir.path().join("m.json"),
        format!("[{},{changed}]", entry("tools.echo", "echo.ail")),
    )
    .unwrap();
    let (out, shown) = publish_driven(&env, &[], vec![("> ", typing("no\r"))]);
    assert_eq!(out.status.code(), Some(3));
    assert!(shown.contains("changed count:"), "{shown}");
    assert!(
        shown.contains("  access           Workspace.Read/worktree/0 (unchanged)"),
        "{shown}"
    );
    assert!(
        shown.contains("  declaredEffects  Workspace.Read/worktree/1 → Workspace.Read/worktree/2"),
        "{shown}"
    );
    let line = shown
        .lines()
        .find(|l| l.starts_with("  transitionFn     "))
        .unwrap_or_else(|| panic!("no transitionFn line: {shown}"));
    let (was, now) = line["  transitionFn     ".len()..]
        .split_once(" → ")
        .unwrap_or_else(|| panic!("{line}"));
    assert!(
        was != now && was.len() == now.len() && was.ends_with('…'),
        "{line}"
    );
}

/// Terminal rows `text` takes at `cols` columns (a line wider than the terminal wraps).
fn rows_at(text: &str, cols: usize) -> usize {
    text.lines()
        .map(|l| l.rsplit('\r').next().unwrap_or(l))
        .map(|l| l.chars().count().div_ceil(cols).max(1))
        .sum()
}

/// Issue 29 §5 (the walk's finding: ~57 lines before the first attended prompt): the first
/// attended publish of the README's nine fixture transitions, on an 80×24 terminal, shows a
/// summary, then each transition's access and declared effects, the timeout and what "no"
/// means, and everything it printed before the `> ` prompt fits one 24-row screen; `--details`
/// adds each added transition's block.
#[test]
fn the_first_attended_publish_fits_an_80_by_24_terminal() {
    let env = Env::new();
    let repo = crate::common::repo();
    let mut m: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo.join("fixtures/transitions/manifest.json")).unwrap(),
    )
    .unwrap();
    let mut want: Vec<(String, String, String)> = Vec::new();
    for d in m.as_array_mut().unwrap() {
        let f = d["transitionFnFile"].as_str().unwrap().to_string();
        d["transitionFnFile"] = repo.join(f).to_string_lossy().into_owned().into();
        let eff = |e: &serde_json::Value| {
            format!(
                "{}/{}/{}",
                e["effect"].as_str().unwrap(),
                e["scope"].as_str().unwrap(),
                e["cost"]
            )
        };
        let declared: Vec<String> = d["declaredEffects"]
            .as_array()
            .unwrap()
            .iter()
            .map(eff)
            .collect();
        want.push((
            d["id"].as_str().unwrap().to_string(),
            eff(&d["access"]),
            if declared.is_empty() {
                "(none)".into()
            } else {
                declared.join(" ")
            },
        ));
    }
    assert_eq!(want.len(), 9);
    std::fs::write(env.dir.path().join("m.json"), m.to_string()).unwrap();
    let ctrl_d: Act = Box::new(|w| {
        use std::io::Write;
        std::thread::sleep(std::time::Duration::from_millis(100));
        w.write_all(b"\x04").unwrap();
    });
    let (out, shown) = publish_driven(&env, &[], vec![("> ", ctrl_d)]);
    assert_eq!(out.status.code(), Some(3), "{shown}");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let before_stop: String = stderr
        .lines()
        .take_while(|l| !l.starts_with("STOP"))
        .collect::<Vec<_>>()
        .join("\n");
    let prompt_at = shown.rfind("> ").unwrap();
    let screen = &shown[..prompt_at + 2];
    let rows = rows_at(&before_stop, 80) + rows_at(screen, 80);
    assert!(
        rows <= 24,
        "{rows} rows before the prompt:\n{before_stop}\n{screen}"
    );
    // Summary first, then each transition with its access and declared effects.
    let first = screen.lines().next().unwrap_or_default();
    assert!(first.contains("9 added, 0 changed, 0 removed"), "{screen}");
    for (id, access, declared) in &want {
        let row = screen
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(id.as_str()))
            .unwrap_or_else(|| panic!("no row for {id}: {screen}"));
        assert!(row.contains(access.as_str()), "{row}");
        let first_effect = declared.split(' ').next().unwrap();
        assert!(row.contains(first_effect), "{row}");
        if declared.contains(' ') {
            // A list the table cut is given in full below it.
            assert!(
                screen.contains(&format!("  {id} declares {declared}")),
                "{screen}"
            );
        }
    }
    assert!(screen.contains("no answer within 120 s cancels: nothing is published"));
    assert!(stderr.contains("nothing was published"), "{stderr}");
    assert_eq!(registry_rows(&env.db()), 0);

    // --details: every added transition's block.
    let ctrl_d: Act = Box::new(|w| {
        use std::io::Write;
        std::thread::sleep(std::time::Duration::from_millis(100));
        w.write_all(b"\x04").unwrap();
    });
    let (_, shown) = publish_driven(&env, &["--details"], vec![("> ", ctrl_d)]);
    for (id, access, declared) in &want {
        assert!(shown.contains(&format!("added {id}:")), "{shown}");
        assert!(
            shown.contains(&format!("  access           {access}")),
            "{shown}"
        );
        assert!(
            shown.contains(&format!("  declaredEffects  {declared}")),
            "{shown}"
        );
    }
}

/// A source that checks but has no entry the capsule can run (`main(input: string) ->
/// string`, transitions.md §7) is refused at publish time, naming what is wrong, with
/// nothing stored: missing `main`, the wrong arity, and a non-string parameter or result.
#[test]
fn a_source_without_a_runnable_main_is_refused_and_nothing_is_stored() {
    let env = Env::new();
    env.world(&["genesis"]).assert().success();
    let before = registry_rows(&env.db());
    let cases = [
        (
            "export func run(input: string) -> string = input",
            "defines no function `main`",
        ),
        (
            "export func main(a: string, b: string) -> string = a",
            "`main` takes 2 parameters",
        ),
        (
            "export func main(a: int) -> string = \"x\"",
            "parameter `a` is not declared `string`",
        ),
        (
            "export func main(input: string) -> int = 1",
            "`main` does not return `string`",
        ),
    ];
    for (body, says) in cases {
        std::fs::write(
            env.dir.path().join("t.ail"),
            format!("module t\n\n{body}\n"),
        )
        .unwrap();
        std::fs::write(
            env.dir.path().join("t.json"),
            format!("[{}]", entry("t", "t.ail")),
        )
        .unwrap();
        env.world(&["publish", "--manifest", "t.json", "--yes"])
            .assert()
            .code(1)
            .stdout("")
            .stderr(predicate::str::contains(says))
            .stderr(predicate::str::contains("main(input: string) -> string"));
        assert_eq!(registry_rows(&env.db()), before, "{body}: nothing stored");
    }
    // The same module with the runnable entry publishes.
    std::fs::write(
        env.dir.path().join("t.ail"),
        "module t\n\nexport func main(input: string) -> string = input\n",
    )
    .unwrap();
    env.world(&["publish", "--manifest", "t.json", "--yes"])
        .assert()
        .success();
}
