//! Issue 26 §5 and §7: every file the CLI opens is a regular file read with a bound (a FIFO
//! or a device is refused at once, never read until memory runs out or blocked on), and no
//! command prints a session token or a prefix of one.

use std::path::Path;
use std::time::Duration;

use crate::invoke_support::Env;

fn mkfifo(path: &Path) {
    let st = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(st.success(), "mkfifo {}", path.display());
}

/// `--db` naming a FIFO or a device: refused quickly with a usage error naming the path;
/// nothing blocks.
#[test]
fn a_store_that_is_not_a_regular_file_is_refused_without_blocking() {
    let env = Env::new();
    let fifo = env.db.with_file_name("fifo.db");
    mkfifo(&fifo);
    for db in [fifo.to_str().unwrap(), "/dev/zero"] {
        for args in [vec!["head"], vec!["verify"], vec!["log"]] {
            let mut full = vec!["--db", db];
            full.extend(&args);
            let out = env
                .cmd(&full)
                .timeout(Duration::from_secs(20))
                .output()
                .expect("run world");
            assert!(
                out.status.code().is_some_and(|c| c != 0),
                "{args:?} --db {db}: {out:?}"
            );
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains(db),
                "{args:?} --db {db}: the error names the path: {err}"
            );
        }
    }
}

/// `--exec-profile` naming a FIFO or `/dev/zero`: `invoke` fails at once, nothing committed.
#[test]
fn an_exec_profile_that_is_not_a_regular_file_is_refused_without_blocking() {
    let env = Env::new();
    let tok = env.mint("ep1", &["Workspace.Read=worktree:9"]);
    let fifo = env.db.with_file_name("profile.json");
    mkfifo(&fifo);
    let before = env.fingerprint();
    for profile in [fifo.to_str().unwrap(), "/dev/zero"] {
        let tok = tok.to_str().unwrap();
        let out = env
            .cmd(&[
                "invoke",
                "echo",
                "--session",
                tok,
                "--args",
                "{}",
                "--exec-profile",
                profile,
            ])
            .timeout(Duration::from_secs(20))
            .output()
            .expect("run world");
        assert!(
            out.status.code().is_some_and(|c| c != 0),
            "--exec-profile {profile}: {out:?}"
        );
    }
    assert_eq!(
        env.fingerprint(),
        before,
        "a refused invoke changed the store"
    );
}

/// No command prints the token it was given, nor a prefix of it; a token argument is named by
/// its credential id.
#[test]
fn no_command_echoes_a_token() {
    let env = Env::new();
    let tok_file = env.mint("ep1", &["Workspace.Read=worktree:9"]);
    let token = std::fs::read_to_string(&tok_file)
        .unwrap()
        .trim()
        .to_string();
    assert!(token.len() >= 32, "token file holds {token:?}");
    let prefix = &token[..10];
    let tf = tok_file.to_str().unwrap();
    let runs: Vec<Vec<&str>> = vec![
        vec!["session", "show", &token],
        vec!["session", "show", &token, "--json"],
        vec!["session", "list"],
        vec!["session", "list", "--json"],
        vec![
            "broker",
            "check",
            "--session",
            tf,
            "Workspace.Read",
            "worktree",
            "1",
        ],
        vec![
            "broker",
            "check",
            "--session",
            &token,
            "Workspace.Read",
            "worktree",
            "1",
        ],
        vec!["invoke", "echo", "--session", &token, "--args", "{}"],
        vec!["invoke", "echo", "--session", tf, "--args", "not json"],
        vec!["session", "revoke", &token, "--yes"],
        vec!["session", "revoke", &token, "--yes"],
        vec!["session", "show", &token],
        vec![
            "broker",
            "check",
            "--session",
            tf,
            "Workspace.Read",
            "worktree",
            "1",
        ],
    ];
    for args in &runs {
        let out = env.run(args);
        let all = [out.stdout.as_slice(), out.stderr.as_slice()].concat();
        let text = String::from_utf8_lossy(&all);
        assert!(
            !text.contains(prefix),
            "{args:?} printed the token or a prefix of it:\n{text}"
        );
    }
}

/// Issue 26 §4: a value a client wrote (writtenBy, semanticId, provenance, payload) with
/// terminal control sequences never reaches the terminal raw from any reading command; the
/// commit is either refused or every human output shows the bytes escaped.
#[test]
fn client_written_control_sequences_never_reach_the_terminal() {
    let nasty = [
        "\u{1b}[2J",
        "\u{1b}]0;PWNED\u{7}",
        "\r\nINDEX FAKE LINE",
        "\u{9b}31m",
        "\u{202e}gnp.exe",
    ];
    for (i, bad) in nasty.iter().enumerate() {
        let env = Env::new();
        let note = env.db.with_file_name(format!("note{i}.json"));
        std::fs::write(&note, format!("{{\"t\":{}}}", serde_json::json!(bad))).unwrap();
        let sid = format!("demo/x{bad}/v1");
        let writer = format!("client:evil{bad}");
        let out = env.run(&[
            "commit",
            "--put",
            note.to_str().unwrap(),
            "--semantic-id",
            &sid,
            "--writer",
            &writer,
        ]);
        if out.status.code() != Some(0) {
            // Refused: the error itself must not carry the raw bytes either.
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                !err.contains(bad),
                "{bad:?}: the refusal echoes it raw: {err:?}"
            );
            continue;
        }
        let head = env.ok(&["head"]).trim().to_string();
        let obj = env.objects_of(&sid);
        let mut runs: Vec<Vec<String>> = vec![
            vec!["log".into()],
            vec!["show".into(), "head".into()],
            vec!["why".into(), "head".into()],
            vec!["object".into(), "find".into(), sid.clone()],
            vec!["status".into()],
        ];
        if let Some(o) = obj.first() {
            runs.push(vec!["object".into(), "get".into(), o.clone()]);
        }
        let _ = head;
        for args in &runs {
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = env.run(&a);
            let all = [out.stdout.as_slice(), out.stderr.as_slice()].concat();
            let text = String::from_utf8_lossy(&all);
            for c in ['\u{1b}', '\u{7}', '\r', '\u{9b}', '\u{202e}'] {
                assert!(
                    !text.contains(c),
                    "{args:?} printed {c:?} raw for {bad:?}:\n{text:?}"
                );
            }
        }
    }
}

/// Issue 26: `publish` of a source it cannot parse never quotes the file's words, so a
/// manifest whose `transitionFnFile` is a symlink to a secret does not print the secret
/// (whatever the secret's shape makes the parser, loader or checker say); the store is
/// unchanged and the error still names the file and the diagnostic code.
#[test]
fn publish_of_an_unparseable_source_never_prints_its_text() {
    let env = Env::new();
    let secret = env.root.join("secret.txt");
    let source = env.root.join("t.ail");
    std::os::unix::fs::symlink(&secret, &source).unwrap();
    let mut m: serde_json::Value = serde_json::from_slice(
        &std::fs::read(crate::common::repo().join("fixtures/transitions/test/manifest.json"))
            .unwrap(),
    )
    .unwrap();
    m[0]["transitionFnFile"] = serde_json::Value::from(source.to_str().unwrap());
    let manifest = env.root.join("m.json");
    std::fs::write(&manifest, serde_json::to_vec(&m).unwrap()).unwrap();
    let word = "sk_live_hunter2XYZ";
    let shapes = [
        format!("{word}\n"),
        format!("{word} = 1\n"),
        format!("\"{word}\"\n"),
        format!("'{word}\n"),
        format!("`{word}\n"),
        format!("@{word}\n"),
        format!("import {word}\n"),
        format!("import std/{word}\n"),
        format!("import std/json ({word})\n"),
        format!("func main() -> int {{ {word} }}\n"),
        format!("{word}: {word}\n"),
    ];
    let before = env.fingerprint();
    for shape in &shapes {
        std::fs::write(&secret, shape).unwrap();
        let out = env.run(&["publish", "--manifest", manifest.to_str().unwrap(), "--yes"]);
        let all = [out.stdout.as_slice(), out.stderr.as_slice()].concat();
        let text = String::from_utf8_lossy(&all);
        assert_ne!(out.status.code(), Some(0), "{shape:?} published: {text}");
        assert!(
            !text.contains("hunter2"),
            "publish quoted the source {shape:?}:\n{text}"
        );
        assert!(text.contains("t.ail"), "the error names the file: {text}");
        for args in [
            vec![
                "--json",
                "publish",
                "--manifest",
                manifest.to_str().unwrap(),
                "--yes",
            ],
            vec!["publish", "--manifest", manifest.to_str().unwrap()],
        ] {
            let out = env.run(&args);
            let all = [out.stdout.as_slice(), out.stderr.as_slice()].concat();
            assert!(
                !String::from_utf8_lossy(&all).contains("hunter2"),
                "{args:?} quoted the source {shape:?}"
            );
        }
    }
    assert_eq!(
        env.fingerprint(),
        before,
        "a refused publish changed the store"
    );
}
