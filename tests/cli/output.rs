//! Issue 16: stdout carries data and nothing else, `-q` leaves only the data, every failure
//! under `--json` answers with the one error envelope, and refs are taken the way tables
//! print them (DEC-CLI-16, DEC-CLI-19).

use crate::common::{sha, TestEnv};

/// Validate `v` against docs/json/NAME.schema.json, failing with every error.
#[track_caller]
pub fn assert_schema(name: &str, v: &serde_json::Value) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/json")
        .join(format!("{name}.schema.json"));
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("read schema"))
            .expect("schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator.iter_errors(v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{name}: {v} does not match: {errors:?}");
}

/// A store with genesis and two client commits; returns (env, entry hashes, world refs).
fn store() -> (TestEnv, Vec<String>, Vec<String>) {
    let env = TestEnv::new();
    let g = env.genesis();
    let a = g.next("a");
    let t = env.commit_ok(&a);
    let b = t.next("b");
    env.commit_ok(&b);
    (
        env,
        vec![a.entry_hash.clone(), b.entry_hash.clone()],
        vec![a.world_ref.clone(), b.world_ref.clone()],
    )
}

/// Every read command under `-q`: exit 0, data on stdout, nothing at all on stderr.
#[test]
fn quiet_leaves_only_data_on_stdout_and_nothing_on_stderr() {
    let (env, entries, worlds) = store();
    let obj = env.run(&["object", "find", "test/object/v1", "--json", "--limit", "1"]);
    let obj = obj.json_lines();
    let obj_ref = obj
        .first()
        .and_then(|o| o["hash"].as_str())
        .map(str::to_string);
    let mut cases: Vec<Vec<String>> = vec![
        vec!["head".into()],
        vec!["log".into()],
        vec!["log".into(), "get".into(), "1".into()],
        vec!["world".into(), "get".into(), worlds[0].clone()],
        vec!["verify".into()],
        vec!["why".into(), "1".into()],
        vec!["why".into(), entries[1].clone()],
        vec!["session".into(), "list".into()],
    ];
    if let Some(o) = obj_ref {
        cases.push(vec!["object".into(), "get".into(), o]);
    }
    for args in &cases {
        for json in [false, true] {
            let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
            a.push("-q");
            if json {
                a.push("--json");
            }
            let r = env.run(&a);
            assert_eq!(r.code, 0, "{a:?}: {r:#?}");
            assert_eq!(r.stderr, "", "{a:?} -q wrote to stderr: {r:#?}");
            if json {
                for l in r.stdout.lines() {
                    serde_json::from_str::<serde_json::Value>(l)
                        .unwrap_or_else(|e| panic!("{a:?}: stdout line {l:?} is not JSON: {e}"));
                }
            }
        }
    }
    // A listing with no rows prints nothing at all under -q.
    let r = env.run(&["session", "list", "-q"]).ok();
    assert_eq!((r.stdout.as_str(), r.stderr.as_str()), ("", ""));
    // verify -q on a clean store prints nothing: success is the exit code.
    let r = env.run(&["verify", "-q"]).ok();
    assert_eq!(r.stdout, "");
}

/// Every failing command under `--json` prints exactly one envelope line on stdout and the
/// human error on stderr.
#[test]
fn every_failure_under_json_prints_the_one_error_envelope() {
    let (env, _, _) = store();
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (vec!["world", "get", "sha256:ABC"], 1, "bad_ref"),
        (vec!["object", "get", "000000"], 1, "not_found"),
        (vec!["log", "get", "99"], 1, "not_found"),
        (vec!["receipt", "nonsense"], 1, "failed"),
        (vec!["frobnicate"], 2, "usage"),
        (vec!["log", "--bogus"], 2, "usage"),
        (vec!["--db", "/nonexistent/dir/w.db", "head"], 1, "failed"),
    ];
    for (args, code, want) in cases {
        let mut a = args.clone();
        a.push("--json");
        let r = env.run(&a);
        assert_eq!(r.code, code, "{a:?}: {r:#?}");
        let lines = r.json_lines();
        assert_eq!(lines.len(), 1, "{a:?}: one envelope line: {r:#?}");
        assert_schema("error", &lines[0]);
        let e = &lines[0]["error"];
        assert!(e["code"].is_string(), "{a:?}: {r:#?}");
        assert!(
            e["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{a:?}"
        );
        assert!(e["hints"].is_array(), "{a:?}");
        assert_eq!(e["code"], want, "{a:?}: {r:#?}");
        assert_eq!(e["exitCode"], code, "{a:?}");
        assert!(
            !r.stderr.is_empty(),
            "{a:?}: the human error stays on stderr"
        );
    }
    // The commit conflict keeps its structured fields inside the envelope.
    let g = env.tip();
    let rival = crate::common::tip_of(&env.db);
    let mut stale = rival.next("rival");
    stale.json["observedHead"] = serde_json::Value::String(sha(b"not the head"));
    let p = env.write("stale.json", &stale.bytes());
    let r = env.run(&["commit", p.to_str().unwrap(), "--json"]).code(1);
    let v = r.json();
    assert_eq!(v["error"]["code"], "head_conflict", "{r:#?}");
    assert_eq!(v["error"]["selectedHead"], g.head.as_str());
}

/// Full refs, bare hex and unique prefixes (≥ 6 hex, with `…` as tables print them) all
/// resolve; an entry hash from `log` works in `why`.
#[test]
fn refs_are_taken_full_bare_or_as_a_unique_prefix() {
    let (env, entries, worlds) = store();
    let full = env.run(&["world", "get", &worlds[0], "--json"]).ok().json();
    let hex = worlds[0].trim_start_matches("sha256:");
    for form in [
        hex.to_string(),
        hex[..12].to_string(),
        format!("sha256:{}…", &hex[..12]),
        hex[..8].to_uppercase(),
    ] {
        let got = env.run(&["world", "get", &form, "--json"]).ok().json();
        assert_eq!(got, full, "world get {form}");
    }
    let r = env.run(&["world", "get", &hex[..5]]).code(1);
    assert!(r.one_line_error().contains("too short"), "{r:#?}");
    // An entry hash as `log` prints it works in `why`.
    let e = entries[1].trim_start_matches("sha256:");
    let mut by_hash = env.run(&["why", &e[..10], "--json"]).ok().json();
    let mut by_index = env.run(&["why", "2", "--json"]).ok().json();
    // The same walk; only how the target matched differs.
    assert_eq!(by_hash["matchedBy"], "entry");
    assert_eq!(by_index["matchedBy"], "index");
    by_hash["matchedBy"] = serde_json::Value::Null;
    by_index["matchedBy"] = serde_json::Value::Null;
    assert_eq!(by_hash, by_index);
    // Ambiguous prefixes need two rows sharing 6 hex digits (about 16 million objects);
    // the resolver's unit test (store::refs::tests) builds them directly.
    let r = env.run(&["object", "get", "ffffff"]).code(1);
    assert!(r.one_line_error().contains("no object matches"), "{r:#?}");
}
