//! Issue 29, the round after the tables: what a fresh walk still had to work around.
//! 1. a client commit's `rest:` id shows in `world log` (table and `--json`), is matched by
//!    `log --invocation`, and `show`, `why` and `status` say the same;
//! 2. commands reading `-` from stdin do not wait silently on a terminal;
//! 3. `effects show effect:EP:N` without an intent says what exists;
//! 4. `key: value` views never split a hash (docs/TABLES.md "Key/value views");
//! 6. `--json FIELDS` selects fields as `gh` does.

use crate::common::TestEnv;
use serde_json::Value;

fn put(env: &TestEnv, name: &str, body: &str, id: Option<&str>) {
    let f = env.write(name, body.as_bytes());
    let mut args = vec![
        "commit",
        "--put",
        f.to_str().expect("utf-8"),
        "--semantic-id",
        "demo/note",
    ];
    if let Some(id) = id {
        args.extend(["--invocation-id", id]);
    }
    env.run(&args).ok();
}

/// A store: genesis, a client commit sent as `rest:n1`, one sent without an id, and
/// `rest:n1` retried (already committed, nothing written).
fn client_commits() -> TestEnv {
    let env = TestEnv::new();
    env.genesis();
    put(&env, "a.json", r#"{"note":"a"}"#, Some("rest:n1"));
    put(&env, "b.json", r#"{"note":"b"}"#, None);
    put(&env, "a.json", r#"{"note":"a"}"#, Some("rest:n1"));
    assert_eq!(env.log_len(), 3);
    env
}

#[test]
fn a_client_commits_rest_id_shows_in_log_show_why_and_status() {
    let env = client_commits();
    let lines = env.run(&["log", "--json"]).ok().json_lines();
    assert_eq!(lines.len(), 3);
    for l in &lines {
        crate::outcomes::assert_schema("log-line", l);
        assert_eq!(l["kind"], "commit", "{l}");
        assert_eq!(l["outcome"], "ok", "{l}");
    }
    assert_eq!(lines[1]["invocation"], "rest:n1", "{}", lines[1]);
    assert!(lines[1]["time"].as_str().is_some_and(|t| t.ends_with('Z')));
    assert!(lines[2]["invocation"].is_null() && lines[2]["time"].is_null());
    assert!(lines[0]["invocation"].is_null());

    // The table shows it, and `--invocation` matches it (table and JSON).
    let table = env
        .cmd()
        .env("COLUMNS", "200")
        .arg("log")
        .output()
        .expect("run");
    let table = String::from_utf8_lossy(&table.stdout).into_owned();
    let row1 = table.lines().nth(2).expect("row 1");
    assert!(row1.contains("rest:n1"), "{table}");
    assert!(
        !table.lines().nth(3).expect("row 2").contains("rest:"),
        "{table}"
    );
    let one = env
        .run(&["log", "--json", "--invocation", "rest:n1"])
        .ok()
        .json_lines();
    assert_eq!(one.len(), 1);
    assert_eq!(one[0]["index"], 1);
    let t = env.run(&["log", "--invocation", "rest:n1"]).ok();
    assert_eq!(t.stdout.lines().count(), 2, "{t:?}");
    assert!(t.stdout.contains("rest:n1"));
    let none = env.run(&["log", "--invocation", "rest:never"]).ok();
    assert!(none.stdout.is_empty() && none.stderr.contains("no log entries match"));
    // `--since` now keeps the client commit that has a time.
    let since = env
        .run(&["log", "--json", "--since", "2000-01-01"])
        .ok()
        .json_lines();
    assert_eq!(
        since.iter().map(|l| l["index"].clone()).collect::<Vec<_>>(),
        [1]
    );

    // show: by the id, by the entry; JSON and text agree.
    for target in ["rest:n1", "1", lines[1]["entry"].as_str().expect("entry")] {
        let v = env.run(&["show", target, "--json"]).ok().json();
        crate::outcomes::assert_schema("show", &v);
        assert_eq!(v["entryIndex"], 1, "show {target}");
        assert_eq!(v["invocationId"], "rest:n1", "show {target}");
    }
    let v = env.run(&["show", "2", "--json"]).ok().json();
    crate::outcomes::assert_schema("show", &v);
    assert!(v["invocationId"].is_null());
    let text = env.run(&["show", "rest:n1"]).ok().stdout;
    assert!(
        text.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["invocationId", "rest:n1"]),
        "{text}"
    );

    // why: the same entry.
    let why: Value = env.run(&["why", "rest:n1", "--json"]).ok().json();
    assert_eq!(why["entry"]["header"]["entryIndex"], 1, "{why}");
    assert_eq!(why["matchedBy"], "receipt", "{why}");

    // status: the last entry is the commit without an id; after another `rest:` commit it
    // names that id.
    let st = env.run(&["status", "--json"]).ok().json();
    assert!(st["headInvocation"].is_null(), "{st}");
    put(&env, "c.json", r#"{"note":"c"}"#, Some("rest:n3"));
    let st = env.run(&["status", "--json"]).ok().json();
    crate::outcomes::assert_schema("status", &st);
    assert_eq!(st["headInvocation"], "rest:n3");
    let text = env.run(&["status"]).ok().stdout;
    assert!(text.contains("ok (a client commit, rest:n3)"), "{text}");
    env.verify_ok();
}

/// Run `world ARGS` with stdin a terminal (a pty nobody types into); fails if it waits more
/// than 20 s (the silent wait issue 29 found), else returns its exit code and stderr.
fn on_a_terminal(env: &TestEnv, args: &[&str]) -> (i32, String) {
    use std::process::Stdio;
    let (_master, slave) = crate::terminal::pty();
    let mut c = env.std_cmd();
    c.args(args)
        .stdin(Stdio::from(slave))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawn world");
    let start = std::time::Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        if start.elapsed() > std::time::Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`world {}` waited on a terminal stdin", args.join(" "));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("output");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn reading_dash_from_a_terminal_stdin_is_refused_with_a_hint() {
    let env = client_commits();
    env.write("m.ail", b"module m\n");
    let before = env.snapshot();
    for args in [
        &["why", "-"][..],
        &["why", "--result", "-"],
        &["commit", "-"],
        &["genesis", "--goal-file", "-"],
        &["commit", "--put", "-", "--semantic-id", "demo/note"],
        &["publish", "--manifest", "-", "--yes"],
        &["invoke", "tools.echo", "--args-file", "-"],
        &["ailang", "run", "--args-json", "-", "m.ail"],
        &[
            "checkpoint",
            "cosign",
            "-",
            "--key",
            "witness.key",
            "--log-key",
            "log+00000000+AAAA",
        ],
    ] {
        let (code, stderr) = on_a_terminal(&env, args);
        assert_eq!(code, 2, "world {}: {stderr}", args.join(" "));
        let mut lines = stderr.lines();
        let first = lines.next().unwrap_or_default();
        assert!(
            first.starts_with("world: ") && first.contains("from stdin, which is a terminal"),
            "world {}: {stderr}",
            args.join(" ")
        );
        assert!(
            lines.any(|l| l.starts_with("hint: ") && l.contains("pipe it in")),
            "world {}: {stderr}",
            args.join(" ")
        );
    }
    assert_eq!(env.snapshot(), before, "nothing is written");
    // A pipe still works.
    let r = env.run_stdin(&["why", "-"], b"not a result");
    assert_ne!(r.code, 2, "{r:?}");
}

#[test]
fn an_effect_id_without_an_intent_says_what_exists() {
    let env = crate::outcomes::scenario();
    let ids: Vec<String> = env
        .effects(&[])
        .iter()
        .filter_map(|e| e["intentId"].as_str().map(str::to_string))
        .collect();
    let stderr = |args: &[&str]| -> String {
        let out = env.run(args);
        assert_eq!(out.status.code(), Some(1), "world {args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    for cmd in [&["effects", "show"][..], &["show"]] {
        let mut a = cmd.to_vec();
        a.push("effect:sc1:99");
        let e = stderr(&a);
        assert!(
            e.starts_with("world: ") && e.contains("no effect intent effect:sc1:99"),
            "{e}"
        );
        let hint = e
            .lines()
            .find(|l| l.starts_with("hint: "))
            .unwrap_or_default();
        assert!(hint.contains("episode sc1 has "), "{e}");
        assert!(hint.contains("effect:sc1:0"), "{e}");
        assert!(hint.contains("world effects --episode sc1"), "{e}");
        for id in ids.iter().filter(|i| i.starts_with("effect:sc1:")) {
            assert!(hint.contains(id.as_str()), "{id} missing: {e}");
        }
    }
    let e = stderr(&["effects", "show", "effect:nope:0"]);
    assert!(
        e.contains("hint: episode nope has no effect intents"),
        "{e}"
    );
    let e = stderr(&["effects", "show", "effect:sc1"]);
    assert!(
        e.contains("hint: an effect intent id is effect:<episode>:<n>"),
        "{e}"
    );
    let json = env.run(&["effects", "show", "effect:sc1:99", "--json"]);
    let v: Value = serde_json::from_slice(&json.stdout).expect("json error on stdout");
    assert_eq!(v["error"]["code"], "not_found", "{v}");
}

#[test]
fn json_fields_select_members_as_gh_does() {
    let env = client_commits();
    let lines = env
        .run(&["log", "--json=index,outcome,invocation"])
        .ok()
        .json_lines();
    assert_eq!(lines.len(), 3);
    for (i, l) in lines.iter().enumerate() {
        let keys: Vec<&String> = l.as_object().expect("object").keys().collect();
        assert_eq!(keys, ["index", "outcome", "invocation"], "{l}");
        assert_eq!(l["index"], i);
    }
    assert_eq!(lines[1]["invocation"], "rest:n1");
    // Filters, and the flag before the command.
    let one = env
        .run(&["--json=entry", "log", "--invocation", "rest:n1"])
        .ok()
        .json_lines();
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].as_object().expect("object").len(), 1);
    // `--json` alone is every field; `--json head` is still the flag and a target.
    let all = env.run(&["log", "--json"]).ok().json_lines();
    assert_eq!(all[0].as_object().expect("object").len(), 13);
    env.run(&["show", "--json", "head"]).ok().json();
    // Unknown field: exit 2, the valid ones listed, nothing on stdout but the JSON error.
    let r = env.run(&["log", "--json=index,bogus"]).code(2);
    assert!(r.stderr.contains("unknown field \"bogus\""), "{r:?}");
    assert!(
        r.stderr
            .contains("hint: valid fields: index, time, logicalTime, writtenBy"),
        "{r:?}"
    );
    let e = r.json();
    assert_eq!(e["error"]["code"], "usage");
    for bad in ["index,,outcome", "index,index"] {
        env.run(&["log", &format!("--json={bad}")]).code(2);
    }
    // A command that prints whole objects refuses FIELDS and says which commands take them.
    let r = env.run(&["show", "head", "--json=entryHash"]).code(2);
    assert!(
        r.stderr
            .contains("world log, world effects, world session list"),
        "{r:?}"
    );
    // The other list commands.
    let v = crate::outcomes::scenario();
    let eff = crate::invoke_support::json_lines(&v.ok(&["effects", "--json=outcome,effect"]));
    assert!(!eff.is_empty());
    assert!(eff
        .iter()
        .all(|l| l.as_object().is_some_and(|m| m.len() == 2) && l["outcome"].is_string()));
    let s =
        crate::invoke_support::json_lines(&v.ok(&["session", "list", "--all", "--json=episode"]));
    assert!(s.iter().any(|l| l["episode"] == "sc1"));
    let out = v.run(&["effects", "--json=nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("valid fields: ref, intentId"));
}

/// Every full hash (`sha256:` + 64 hex) of `text`, and whether each sits whole on one line.
fn hashes_whole(text: &str) -> (usize, bool) {
    let joined: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut n = 0;
    let mut rest = joined.as_str();
    while let Some(at) = rest.find("sha256:") {
        let hex = rest[at + 7..]
            .bytes()
            .take_while(u8::is_ascii_hexdigit)
            .count();
        if hex == 64 {
            n += 1;
            let h = &rest[at..at + 71];
            if !text.lines().any(|l| l.contains(h)) {
                return (n, false);
            }
        }
        rest = &rest[at + 7..];
    }
    (n, true)
}

/// Summaries, status lines and errors that name full hashes break between tokens at 80
/// columns too (a pipe without COLUMNS gets them unchanged, one line each).
#[test]
fn summaries_and_errors_never_split_a_hash_at_80_columns() {
    let env = client_commits();
    let other = env.write("other.json", br#"{"note":"other"}"#);
    let args = [
        "commit",
        "--put",
        other.to_str().expect("utf-8"),
        "--semantic-id",
        "demo/note",
        "--invocation-id",
        "rest:n1",
    ];
    let narrow = env
        .cmd()
        .env("COLUMNS", "80")
        .args(args)
        .output()
        .expect("run");
    assert_eq!(narrow.status.code(), Some(1));
    let err = String::from_utf8_lossy(&narrow.stderr).into_owned();
    assert!(err.lines().all(|l| l.chars().count() <= 80), "{err}");
    assert_eq!(hashes_whole(&err), (2, true), "{err}");
    assert!(
        err.starts_with("world: ") && err.contains("\nhint: "),
        "{err}"
    );
    let piped = env.run(&args);
    assert_eq!(piped.stderr.lines().count(), 2, "{piped:?}");

    let c = env.write("c.json", br#"{"note":"c"}"#);
    let put = [
        "commit",
        "--put",
        c.to_str().expect("utf-8"),
        "--semantic-id",
        "demo/note",
    ];
    let out = env
        .cmd()
        .env("COLUMNS", "80")
        .args(put)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0));
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    let (n, whole) = hashes_whole(&text);
    assert!(n >= 2 && whole, "{text}");
}
