//! Issue 29 item 1: every table at 80 and 200 columns, on a store with realistic data (the six
//! outcomes of tests/outcomes.rs, long identifiers such as `ailang-write`, `Workspace.Write`,
//! `denied:budget`, full hashes): every line fits the width, no identifier or hash is cut or
//! wrapped (it is printed whole or its column is hidden), the short-hash column `show`/`why`
//! take always shows, and the columns hidden are the documented ones (docs/TABLES.md).
//!
//! Snapshots: tests/snapshots/tables__*.snap. Hashes and times differ per run, so every hex
//! run of 12+ digits and every RFC 3339 time is replaced by a placeholder of the same width
//! before the snapshot (the layout is unchanged by the replacement).

use std::process::Output;

use crate::invoke_support::{assert_exit, Env};
use crate::outcomes::scenario;

/// `s` with every run of ≥ 12 hex digits (and every RFC 3339 UTC time) replaced, width kept.
fn redact(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        // 2026-12-05T21:40:09Z
        if i + 20 <= chars.len() {
            let w: String = chars[i..i + 20].iter().collect();
            let b = w.as_bytes();
            if b[4] == b'-'
                && b[7] == b'-'
                && b[10] == b'T'
                && b[13] == b':'
                && b[19] == b'Z'
                && w.chars().filter(|c| c.is_ascii_digit()).count() == 14
            {
                out.push_str("2000-01-01T00:00:00Z");
                i += 20;
                continue;
            }
        }
        let run = chars[i..]
            .iter()
            .take_while(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
            .count();
        let boundary = i == 0 || !chars[i - 1].is_ascii_alphanumeric();
        let end_ok = chars
            .get(i + run)
            .is_none_or(|c| !c.is_ascii_alphanumeric());
        if run >= 12 && boundary && end_ok {
            out.extend(std::iter::repeat_n('x', run));
            i += run;
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// Run `world ARGS` at `cols` columns; returns (stdout, stderr).
fn at(env: &Env, cols: usize, args: &[&str]) -> (String, String) {
    let out: Output = env
        .cmd(args)
        .env("COLUMNS", cols.to_string())
        .output()
        .expect("run world");
    assert_exit(&out, 0);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The table's invariants at `cols`: every line fits; each of `whole` (identifiers the table
/// holds) is printed whole or not at all (no line holds a cut prefix of it); each of `keys`
/// is printed.
#[track_caller]
fn check(name: &str, table: &str, cols: usize, whole: &[&str], keys: &[&str]) {
    for line in table.lines() {
        let w = line.chars().count();
        assert!(w <= cols, "{name} at {cols}: {w} columns: {line}\n{table}");
    }
    for id in whole {
        for line in table.lines() {
            // A cut identifier would leave a prefix of it followed by `…` or a line end.
            for cut in 4..id.chars().count() {
                let prefix: String = id.chars().take(cut).collect();
                for bad in [format!("{prefix}…"), format!("{prefix}\n")] {
                    assert!(
                        !format!("{line}\n").contains(&bad) || line.contains(id),
                        "{name} at {cols}: {id} cut: {line}\n{table}"
                    );
                }
            }
        }
    }
    for k in keys {
        assert!(table.contains(k), "{name} at {cols}: {k} missing:\n{table}");
    }
}

/// Snapshot `text` (redacted) as `tables__NAME-COLS`. Rows of the tables in [`UNORDERED`]
/// are sorted first: their order follows record hashes or creation instants that differ per run.
fn snap(name: &str, cols: usize, text: &str) {
    let mut text = redact(text);
    if UNORDERED.contains(&name) {
        let mut lines: Vec<&str> = text.lines().collect();
        lines[1..].sort_unstable();
        text = lines.join("\n");
    }
    insta::with_settings!({ prepend_module_to_snapshot => false, omit_expression => true }, {
        insta::assert_snapshot!(format!("tables__{name}-{cols}"), text);
    });
}

/// Tables whose row order depends on hashes or instants (one line per row).
const UNORDERED: [&str; 2] = ["effects", "session-list"];

/// The short form of a `sha256:` ref as tables print it (12 hex digits).
fn short12(r: &str) -> String {
    r.trim_start_matches("sha256:").chars().take(12).collect()
}

#[test]
fn every_table_fits_80_and_200_columns_without_cutting_an_identifier() {
    let env = scenario();
    let db = env.db.to_string_lossy().into_owned();
    let _ = db;
    // More rows: an approval request, a client commit of a note, a checkpoint.
    let approval = env
        .ok(&[
            "approval",
            "request",
            "--episode",
            "sc1",
            "--summary",
            "Deploy release 2026-q4 to every region, rotate the on-call credentials and tell the incident channel",
        ])
        .trim()
        .to_string();
    std::fs::write(env.root.join("note.json"), br#"{"note":"hello"}"#).expect("write");
    let note = env.root.join("note.json").to_string_lossy().into_owned();
    env.ok(&[
        "commit",
        "--put",
        &note,
        "--semantic-id",
        "demo/release-note/v1",
        "--writer",
        "client:release-pipeline",
    ]);
    let key = env.root.join("log.key").to_string_lossy().into_owned();
    env.ok(&["key", "generate", "--out", &key]);
    env.ok(&["checkpoint", "--key", &key]);
    let limits = crate::common::repo()
        .join("fixtures/limits/example.json")
        .to_string_lossy()
        .into_owned();
    env.ok(&["limits", "init", "--config", &limits, "--yes", "--now", "0"]);
    env.create_mission(None, "Workspace.Write", "worktree", "25", "3");
    let tok = env.mint(
        "sc3",
        &["world.apply=world:5", "Workspace.Write=worktree:3"],
    );
    let tok = tok.to_string_lossy().into_owned();

    let log_lines = crate::invoke_support::json_lines(&env.ok(&["log", "--json"]));
    let entries: Vec<String> = log_lines
        .iter()
        .filter_map(|l| l["entry"].as_str().map(str::to_string))
        .collect();
    let effects = env.effects(&[]);
    let records: Vec<String> = effects
        .iter()
        .filter_map(|e| e["ref"].as_str().map(short12))
        .collect();
    let sessions =
        crate::invoke_support::json_lines(&env.ok(&["session", "list", "--all", "--json"]));
    let session = sessions
        .iter()
        .find(|s| s["episode"] == "sc1")
        .unwrap_or(&sessions[0])["credentialId"]
        .as_str()
        .unwrap_or_default()
        .to_string();

    let ids: Vec<&str> = vec![
        "ailang-write",
        "ailang-read",
        "Workspace.Write",
        "Workspace.Read",
        "denied:budget",
        "cli:sc1:w-3",
        "cli:sc1:w-4",
        "cli:sc2:f-1",
        "coordinator:cli",
        "client:release-pipeline",
        "demo/release-note/v1",
        "Workspace.Write=worktree:3/3",
    ];
    let entry_refs: Vec<&str> = entries.iter().map(String::as_str).collect();
    let record_refs: Vec<&str> = records.iter().map(String::as_str).collect();
    let approval_short = short12(&approval);

    let cases: Vec<(&str, Vec<&str>, Vec<&str>)> = vec![
        // (name, args, keys that always show)
        ("log", vec!["log"], entry_refs.clone()),
        (
            "transitions-list",
            vec!["transitions", "list"],
            vec!["ailang-write", "readcount"],
        ),
        ("effects", vec!["effects"], record_refs.clone()),
        ("session-list", vec!["session", "list", "--all"], vec![]),
        (
            "approval-list",
            vec!["approval", "list"],
            vec![approval_short.as_str()],
        ),
        (
            "object-find",
            vec!["object", "find", "demo/release-note/v1"],
            vec![],
        ),
        ("checkpoint-list", vec!["checkpoint", "list"], vec![]),
        (
            "tools-list",
            vec!["tools", "list", "--session", tok.as_str()],
            vec!["ailang-write"],
        ),
        (
            "limits-report",
            vec!["limits", "report", "--now", "0"],
            vec![],
        ),
        ("mission-list", vec!["mission", "list"], vec!["m"]),
    ];
    for (name, args, keys) in &cases {
        for cols in [80, 200] {
            let (table, err) = at(&env, cols, args);
            check(name, &table, cols, &ids, keys);
            if cols == 200 && *name == "log" {
                assert!(!err.contains("hidden"), "{err}");
            }
            snap(name, cols, &table);
        }
    }
    // The key a table prints at 80 columns pastes into the command that reads it (the
    // workflow the README teaches: copy a short hash from a table).
    for (args, reader) in [
        (vec!["log"], vec!["show"]),
        (vec!["effects"], vec!["effects", "show"]),
        (vec!["approval", "list"], vec!["approval", "show"]),
        (
            vec!["object", "find", "demo/release-note/v1"],
            vec!["object", "get"],
        ),
    ] {
        let (table, _) = at(&env, 80, &args);
        let col = if args[0] == "log" { 4 } else { 0 };
        for row in table.lines().skip(1) {
            let cells: Vec<&str> = row.split_whitespace().collect();
            let key = if args[0] == "log" {
                // INDEX TIME TRANSITION OUTCOME ENTRY INVOCATION at 80 columns.
                cells.get(col).copied().unwrap_or_default()
            } else {
                cells[0]
            };
            let mut a = reader.clone();
            a.push(key);
            env.ok(&a);
        }
    }
    // session show: its budget table.
    assert!(!session.is_empty(), "{sessions:?}");
    {
        for cols in [80, 200] {
            let (table, _) = at(&env, cols, &["session", "show", &session]);
            check("session-show", &table, cols, &ids, &["REMAINING"]);
            let budgets: String = table
                .lines()
                .skip_while(|l| !l.starts_with("EFFECT"))
                .collect::<Vec<_>>()
                .join("\n");
            snap("session-show", cols, &budgets);
        }
    }
    // The publish diff (stderr of an unattended publish that changes the registry).
    let manifest = env.root.join("m.json");
    let mut m: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            crate::common::repo().join("fixtures/transitions/test/manifest.json"),
        )
        .expect("manifest"),
    )
    .expect("json");
    for d in m.as_array_mut().expect("array") {
        if d["id"] == "ailang-write" {
            d["title"] = "Write a file of the episode worktree, creating its directories".into();
        }
    }
    std::fs::write(&manifest, m.to_string()).expect("write manifest");
    let manifest = manifest.to_string_lossy().into_owned();
    for cols in [80, 200] {
        // Each width publishes a different title, so each run has a diff.
        let mut m2 = m.clone();
        for d in m2.as_array_mut().expect("array") {
            if d["id"] == "ailang-write" {
                d["title"] = format!("Write a file of the episode worktree ({cols})").into();
            }
        }
        std::fs::write(&manifest, m2.to_string()).expect("write manifest");
        let (_, err) = at(&env, cols, &["publish", "--manifest", &manifest, "--yes"]);
        let diff: String = err
            .lines()
            .skip_while(|l| !l.starts_with("CHANGE"))
            .take_while(|l| !l.is_empty() && !l.starts_with("published"))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(diff.contains("ailang-write"), "{err}");
        check(
            "publish-diff",
            &diff,
            cols,
            &ids,
            &["changed", "ailang-write"],
        );
        snap("publish-diff", cols, &diff);
    }
}

/// Every full hash in `text`: a run of exactly 64 hex digits, with its `sha256:` prefix when
/// it has one (a ref, 71 characters; a credential id is bare).
fn full_refs(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let n = b[i..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
        if n == 0 {
            i += 1;
            continue;
        }
        if n == 64 && (i == 0 || !b[i - 1].is_ascii_alphanumeric()) {
            let start = if text[..i].ends_with("sha256:") {
                i - 7
            } else {
                i
            };
            out.push(text[start..i + 64].to_string());
        }
        i += n;
    }
    out
}

/// Issue 29 (the walk after item 1): the `key value` views — `show`, `receipt`, `why`,
/// `effects show`, `session show`, `status`, `world get`, `log get`, `transitions show` —
/// at 80 and 200 columns: a line wider than the terminal is broken between tokens only
/// (docs/TABLES.md "Key/value views"), so every full hash the 200-column view prints is on
/// one line at 80 columns too, every line fits unless it is one token wider than the
/// terminal (a JSON document, printed whole), and the tokens and their order are unchanged.
#[test]
fn key_value_views_never_split_a_hash_at_80_and_200_columns() {
    let env = scenario();
    let put = env.root.join("kv-note.json");
    std::fs::write(&put, br#"{"note":"kv"}"#).expect("write");
    env.ok(&[
        "commit",
        "--put",
        &put.to_string_lossy(),
        "--semantic-id",
        "demo/note",
        "--invocation-id",
        "rest:kv-1",
    ]);
    let record = env.effects(&[])[0]["ref"]
        .as_str()
        .expect("a record")
        .to_string();
    let session =
        crate::invoke_support::json_lines(&env.ok(&["session", "list", "--all", "--json"]))[0]
            ["credentialId"]
            .as_str()
            .expect("credential")
            .to_string();
    let views: Vec<(&str, Vec<&str>, bool)> = vec![
        // (name, args, snapshot: false where the text holds the temp path)
        ("show-invocation", vec!["show", "cli:sc1:r-1"], true),
        ("show-commit", vec!["show", "rest:kv-1"], true),
        ("receipt", vec!["receipt", "cli:sc1:r-1"], true),
        ("why", vec!["why", "cli:sc1:r-1"], true),
        (
            "effects-show",
            vec!["effects", "show", record.as_str()],
            false,
        ),
        (
            "session-show",
            vec!["session", "show", session.as_str()],
            false,
        ),
        ("status", vec!["status"], false),
        ("world-get", vec!["world", "get", "head"], true),
        ("log-get", vec!["log", "get", "1"], true),
        (
            "transitions-show",
            vec!["transitions", "show", "ailang-write"],
            true,
        ),
    ];
    for (name, args, snapshot) in &views {
        let (wide, _) = at(&env, 200, args);
        let (narrow, _) = at(&env, 80, args);
        let words = |t: &str| -> Vec<String> {
            // A `key=value` token may break after `=`: compare with `=` spaced.
            t.replace('=', "= ")
                .split_whitespace()
                .map(str::to_string)
                .collect()
        };
        assert_eq!(words(&narrow), words(&wide), "{name}: tokens differ");
        for line in narrow.lines() {
            let w = line.chars().count();
            assert!(
                w <= 80 || line.split_whitespace().count() == 1,
                "{name} at 80: {w} columns and more than one token: {line}\n{narrow}"
            );
        }
        let on_lines: Vec<String> = narrow.lines().flat_map(full_refs).collect();
        let wide_refs = full_refs(&wide);
        assert!(!wide_refs.is_empty() || *name == "status", "{name}: {wide}");
        for r in &wide_refs {
            assert!(on_lines.contains(r), "{name} at 80 splits {r}:\n{narrow}");
        }
        if *snapshot {
            snap(&format!("kv-{name}"), 80, &narrow);
            snap(&format!("kv-{name}"), 200, &wide);
        }
    }
}
