//! Issue 29 items 2 and 3: one outcome vocabulary (`ok`, `refused`, `denied`, `failed`,
//! `indeterminate`, `effects-unrecorded`) derived from the records and used alike by
//! `invoke`'s exit code and `--json`, `log` (table and `--json`), `show`, `effects` and
//! `status`; `log --json` lines carry every column of the table (docs/json/log-line.schema.json).
//!
//! Real runs of the test transitions (fixtures/transitions/test/manifest.json): a write and a
//! read that succeed, a write and a read the budget denies (the write's transition answers
//! `ok:false` after the denial), a pure refusal and a read whose handler fails.

use crate::invoke_support::{assert_exit, json_lines, stdout_json, Env};
use serde_json::Value;

/// Validate `v` against docs/json/NAME.schema.json, failing with every error.
#[track_caller]
pub fn assert_schema(name: &str, v: &Value) {
    let path = crate::common::repo().join(format!("docs/json/{name}.schema.json"));
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("schema")).expect("json");
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator.iter_errors(v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{name}: {v} does not match: {errors:?}");
}

/// What each invocation of [`scenario`] must come to: (invocation id, transition, outcome,
/// exit code).
pub const CASES: [(&str, &str, &str, i32); 6] = [
    ("cli:sc1:w-3", "ailang-write", "ok", 0),
    ("cli:sc1:w-4", "ailang-write", "denied", 8),
    ("cli:sc1:r-1", "readcount", "ok", 0),
    ("cli:sc1:r-2", "readcount", "denied", 8),
    ("cli:sc1:p-1", "pure", "refused", 7),
    ("cli:sc2:f-1", "probe", "failed", 9),
];

/// A store with the six invocations of [`CASES`] committed, in order.
pub fn scenario() -> Env {
    let env = Env::new();
    std::fs::create_dir_all(env.ws.join("sc1")).expect("mkdir");
    std::fs::create_dir_all(env.ws.join("sc2")).expect("mkdir");
    std::fs::write(env.ws.join("sc1/notes.txt"), "a b\nc\n").expect("write");
    std::os::unix::fs::symlink("/etc/hostname", env.ws.join("sc2/escape")).expect("symlink");
    let sc1 = env.mint(
        "sc1",
        &[
            "world.apply=world:20",
            "Workspace.Write=worktree:1",
            "Workspace.Read=worktree:1",
        ],
    );
    let sc2 = env.mint(
        "sc2",
        &["world.apply=world:20", "Workspace.Read=worktree:2"],
    );
    let args = [
        r#"{"path":"src/a.ail","content":"module a\n"}"#,
        r#"{"path":"src/b.ail","content":"module b\n"}"#,
        r#"{"path":"notes.txt"}"#,
        r#"{"path":"notes.txt"}"#,
        r#"{"case":"refuse"}"#,
        r#"{"case":"effect","finish":true,"payload":{"op":"read","path":"escape"}}"#,
    ];
    for ((id, transition, outcome, code), args) in CASES.iter().zip(args) {
        let tok = if id.starts_with("cli:sc2:") {
            &sc2
        } else {
            &sc1
        };
        let task = id.rsplit(':').next().unwrap_or_default();
        let out = env.invoke(tok, transition, args, &["--json", "--invocation-id", task]);
        assert_exit(&out, *code);
        let v = stdout_json(&out);
        assert_eq!(v["outcome"], *outcome, "invoke --json of {id}: {v}");
        assert_eq!(v["invocationId"], *id);
    }
    env
}

#[test]
fn every_reader_derives_the_same_outcome_and_the_exit_code_follows_it() {
    let env = scenario();
    // log --json: every line matches the schema and carries the table's fields.
    let lines = json_lines(&env.ok(&["log", "--json"]));
    for l in &lines {
        assert_schema("log-line", l);
    }
    let by_inv = |id: &str| -> Value {
        lines
            .iter()
            .find(|l| l["invocation"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no log line for {id}"))
    };
    for (id, transition, outcome, _) in CASES {
        let l = by_inv(id);
        assert_eq!(l["outcome"], outcome, "{l}");
        assert_eq!(l["transition"], transition, "{l}");
        assert_eq!(l["kind"], "invocation");
        assert_eq!(l["episode"], id.split(':').nth(1).unwrap_or_default());
        assert!(l["time"].as_str().is_some_and(|t| t.ends_with('Z')), "{l}");
        assert_eq!(
            l["entry"].as_str().unwrap_or_default(),
            &l["entryHash"].as_str().unwrap_or_default()[7..19]
        );
        // show, by invocation id and by the short entry hash the table prints.
        for target in [id, l["entry"].as_str().unwrap_or_default()] {
            let show: Value =
                serde_json::from_str(&env.ok(&["show", target, "--json"])).expect("show json");
            assert_schema("show", &show);
            assert_eq!(show["outcome"], outcome, "show {target}");
            assert_eq!(show["invocation"]["outcome"], outcome, "show {target}");
        }
        let text = env.ok(&["show", id]);
        assert!(text.contains(&format!("outcome {outcome}")), "{text}");
    }
    // Client commits (genesis, publish) are `ok`, kind `commit`.
    let commits: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "commit").collect();
    assert!(!commits.is_empty());
    assert!(commits
        .iter()
        .all(|l| l["outcome"] == "ok" && l["invocation"].is_null()));
    // `world log --json | jq 'select(.outcome=="denied")'`, as a script writes it.
    let denied: Vec<&str> = lines
        .iter()
        .filter(|l| l["outcome"] == "denied")
        .filter_map(|l| l["invocation"].as_str())
        .collect();
    assert_eq!(denied, ["cli:sc1:w-4", "cli:sc1:r-2"]);
    // Filters keep the fields.
    let one = json_lines(&env.ok(&["log", "--json", "--invocation", "cli:sc2:f-1"]));
    assert_eq!(one.len(), 1);
    assert_eq!(one[0]["outcome"], "failed");
    // effects: each record's own outcome, with the broker's label kept as `denial`.
    let effects = env.effects(&[]);
    for e in &effects {
        assert_schema("effect", e);
    }
    let outcomes_of = |inv: &str| -> Vec<String> {
        effects
            .iter()
            .filter(|e| e["invocationId"] == inv)
            .map(|e| e["outcome"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    assert_eq!(outcomes_of("cli:sc1:w-3"), ["ok"]);
    assert_eq!(outcomes_of("cli:sc1:w-4"), ["denied"]);
    assert_eq!(outcomes_of("cli:sc1:r-2"), ["denied"]);
    assert_eq!(outcomes_of("cli:sc2:f-1"), ["failed"]);
    let denial = effects
        .iter()
        .find(|e| e["invocationId"] == "cli:sc1:w-4")
        .map(|e| e["denial"].clone());
    assert_eq!(denial, Some(Value::from("denied:budget")));
    let rec = effects
        .iter()
        .find(|e| e["invocationId"] == "cli:sc2:f-1")
        .and_then(|e| e["ref"].as_str())
        .expect("failed record")
        .to_string();
    let show: Value =
        serde_json::from_str(&env.ok(&["effects", "show", &rec, "--json"])).expect("json");
    assert_schema("effect-show", &show);
    assert_eq!(show["outcome"], "failed");
    assert!(env
        .ok(&["effects", "show", &rec])
        .contains("outcome  failed"));
    // status names the head entry's outcome in the same words.
    let st: Value = serde_json::from_str(&env.ok(&["status", "--json"])).expect("status");
    assert_schema("status", &st);
    assert_eq!(st["headOutcome"], "failed", "{st}");
    assert!(env.ok(&["status"]).contains("failed (cli:sc2:f-1"));
    // The table says the same, and never cuts an invocation id.
    for cols in ["80", "200"] {
        let out = env
            .cmd(&["log"])
            .env("COLUMNS", cols)
            .output()
            .expect("log");
        let table = String::from_utf8_lossy(&out.stdout).to_string();
        let width: usize = cols.parse().unwrap_or_default();
        for line in table.lines() {
            assert!(line.chars().count() <= width, "{cols}: {line}");
        }
        for (id, _, outcome, _) in CASES {
            let entry = by_inv(id)["entry"].as_str().unwrap_or_default().to_string();
            let row = table
                .lines()
                .find(|l| l.contains(&entry))
                .unwrap_or_else(|| panic!("{cols}: no row for {id}: {table}"));
            assert!(
                row.contains(&format!(" {outcome} ")) || row.ends_with(outcome),
                "{row}"
            );
            assert!(!row.contains('…'), "{row}");
            if row.contains("cli:sc") {
                assert!(row.contains(id), "{row}");
            }
        }
    }
    env.verify_ok();
}
