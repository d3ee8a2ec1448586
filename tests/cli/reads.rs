//! Read commands after genesis and commits: head, log, log get, world get, object get/find,
//! registry get.

use base64::Engine;
use serde_json::json;

use crate::common::{sha, TestEnv};

/// Genesis plus `n` client commits; returns the bodies' tips in order.
fn store_with(env: &TestEnv, n: usize) -> Vec<crate::common::Body> {
    let mut tip = env.genesis();
    let mut bodies = Vec::new();
    for i in 0..n {
        let b = tip.next(&format!("c{i}"));
        tip = env.commit_ok(&b);
        bodies.push(b);
    }
    bodies
}

#[test]
fn head_prints_the_selected_world() {
    let env = TestEnv::new();
    let bodies = store_with(&env, 2);
    let r = env.run(&["head"]).ok();
    assert_eq!(r.stdout, format!("{}\n", bodies[1].world_ref));
    let v = env.run(&["head", "--json"]).ok().json();
    assert_eq!(v["head"], bodies[1].world_ref.as_str());
    assert_eq!(v["world"]["revision"], 2);
    assert_eq!(v["world"]["logHead"], bodies[1].entry_hash.as_str());
}

#[test]
fn head_on_a_missing_store_fails_without_creating_it() {
    let env = TestEnv::new();
    let r = env.run(&["head"]).code(1);
    r.one_line_error();
    assert!(!env.db.exists());
}

#[test]
fn log_lists_entries_as_table_and_json_lines() {
    let env = TestEnv::new();
    let bodies = store_with(&env, 3);
    let r = env.run(&["log"]).ok();
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 5, "header + 4 entries: {r:#?}");
    assert!(lines[0].contains("INDEX") && lines[0].contains("WRITTEN BY"));
    assert!(lines[1].contains("world:genesis"));
    assert!(lines[4].trim_start().starts_with('3') && lines[4].contains("client:test"));
    let js = env.run(&["log", "--json"]).ok().json_lines();
    assert_eq!(js.len(), 4);
    for (i, e) in js.iter().enumerate() {
        assert_eq!(e["header"]["entryIndex"], i as i64);
    }
    assert_eq!(js[3]["entryHash"], bodies[2].entry_hash.as_str());
    assert_eq!(js[3]["transitionRef"], bodies[2].objects[0].as_str());
}

#[test]
fn log_from_limit_and_reverse() {
    let env = TestEnv::new();
    store_with(&env, 5); // entries 0..=5
    let idx = |args: &[&str]| -> Vec<i64> {
        let mut a = vec!["log", "--json"];
        a.extend_from_slice(args);
        env.run(&a)
            .ok()
            .json_lines()
            .iter()
            .map(|e| e["header"]["entryIndex"].as_i64().unwrap())
            .collect()
    };
    assert_eq!(idx(&[]), vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(idx(&["--from", "2"]), vec![2, 3, 4, 5]);
    assert_eq!(idx(&["--limit", "2"]), vec![0, 1]);
    assert_eq!(idx(&["--from", "2", "--limit", "3"]), vec![2, 3, 4]);
    assert_eq!(idx(&["--reverse"]), vec![5, 4, 3, 2, 1, 0]);
    assert_eq!(idx(&["--reverse", "--limit", "2"]), vec![5, 4]);
    assert_eq!(idx(&["--reverse", "--from", "3"]), vec![3, 2, 1, 0]);
    assert_eq!(
        idx(&["--reverse", "--from", "3", "--limit", "2"]),
        vec![3, 2]
    );
    assert_eq!(idx(&["--from", "99"]), Vec::<i64>::new());
    assert_eq!(idx(&["--limit", "0"]), Vec::<i64>::new());
}

#[test]
fn log_get_reads_one_entry_and_refuses_absent_or_bad_indexes() {
    let env = TestEnv::new();
    let bodies = store_with(&env, 1);
    let e = env.run(&["log", "get", "1", "--json"]).ok().json();
    assert_eq!(e["entryHash"], bodies[0].entry_hash.as_str());
    assert_eq!(e["header"]["writtenBy"], "client:test");
    let text = env.run(&["log", "get", "1"]).ok();
    assert!(text.stdout.contains(&bodies[0].entry_hash));
    let r = env.run(&["log", "get", "7"]).code(1);
    assert!(r.one_line_error().contains("not found"));
    let r = env.run(&["log", "get", "--", "-1"]).code(1);
    assert!(r.one_line_error().contains("non-negative"), "{r:#?}");
    env.run(&["log", "get", "-1"]).code(2); // clap: looks like a flag
    let r = env.run(&["log", "get", "x"]).code(1);
    r.one_line_error();
}

#[test]
fn world_get_reads_a_row() {
    let env = TestEnv::new();
    let bodies = store_with(&env, 1);
    let w = env
        .run(&["world", "get", &bodies[0].world_ref, "--json"])
        .ok()
        .json();
    assert_eq!(
        w,
        json!({"ref": bodies[0].world_ref, "revision": 1, "stateRoot": bodies[0].objects[0], "logHead": bodies[0].entry_hash})
    );
    let r = env.run(&["world", "get", &sha(b"nope")]).code(1);
    assert!(r.one_line_error().contains("not found"));
    let r = env.run(&["world", "get", "sha256:ABC"]).code(1);
    r.one_line_error();
}

#[test]
fn object_get_text_payload_and_json() {
    let env = TestEnv::new();
    let tip = env.genesis();
    let payload: &[u8] = b"\x00\x01binary\xffpayload";
    let b = tip.body("bin", &[payload]);
    env.commit_ok(&b);
    let h = &b.objects[0];
    let text = env.run(&["object", "get", h]).ok();
    assert!(
        text.stdout.contains("semanticId     test/object/v1"),
        "{text:#?}"
    );
    assert!(text
        .stdout
        .contains(&format!("size           {} bytes", payload.len())));
    let raw = env.run(&["object", "get", h, "--payload"]).ok();
    assert_eq!(raw.raw_stdout, payload, "--payload prints the exact bytes");
    let v = env
        .run(&["object", "get", h, "--json", "--payload"])
        .ok()
        .json();
    assert_eq!(v["hash"], h.as_str());
    assert_eq!(v["interfaceHash"], sha(b"iface-v1"));
    assert_eq!(v["provenance"], "test");
    assert_eq!(
        v["payload"],
        base64::engine::general_purpose::STANDARD.encode(payload)
    );
    let v = env.run(&["object", "get", h, "--json"]).ok().json();
    assert!(
        v.get("payload").is_none(),
        "no payload without --payload: {v}"
    );
    let r = env.run(&["object", "get", &sha(b"absent")]).code(1);
    assert!(r.one_line_error().contains("not found"));
}

#[test]
fn object_find_pages_in_ascending_hash_order() {
    let env = TestEnv::new();
    let tip = env.genesis();
    let payloads: Vec<Vec<u8>> = (0..7).map(|i| format!("obj-{i}").into_bytes()).collect();
    let refs: Vec<&[u8]> = payloads.iter().map(|p| p.as_slice()).collect();
    let b = tip.body("many", &refs);
    env.commit_ok(&b);
    let mut want = b.objects.clone();
    want.sort();
    let mut got = Vec::new();
    let mut after: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut args = vec!["object", "find", "test/object/v1", "--json", "--limit", "3"];
        if let Some(a) = &after {
            args.push("--after");
            args.push(a);
        }
        let page: Vec<String> = env
            .run(&args)
            .ok()
            .json_lines()
            .iter()
            .map(|o| o["hash"].as_str().unwrap().to_string())
            .collect();
        pages += 1;
        if page.is_empty() {
            break;
        }
        assert!(page.len() <= 3);
        after = page.last().cloned();
        got.extend(page);
    }
    assert_eq!(got, want);
    assert_eq!(pages, 4, "3 + 3 + 1, then an empty page");
    let none = env.run(&["object", "find", "no/such/v1", "--json"]).ok();
    assert_eq!(none.stdout, "");
    let r = env
        .run(&["object", "find", "test/object/v1", "--after", "sha256:XYZ"])
        .code(1);
    r.one_line_error();
}

#[test]
fn registry_get_absent_is_exit_1() {
    let env = TestEnv::new();
    env.genesis();
    let r = env
        .run(&["registry", "get", "world/transition-registry/v1"])
        .code(1);
    assert!(r.one_line_error().contains("not found"));
}

#[test]
fn registry_get_reads_a_head() {
    let env = TestEnv::new();
    env.genesis();
    {
        let c = rusqlite::Connection::open(&env.db).unwrap();
        c.execute(
            "INSERT INTO epoch_registry_heads (registry_name, object_ref) VALUES ('world/approvals/v1', ?1)",
            [sha(b"{}")],
        )
        .unwrap();
    }
    let r = env.run(&["registry", "get", "world/approvals/v1"]).ok();
    assert_eq!(r.stdout, format!("{}\n", sha(b"{}")));
    let v = env
        .run(&["registry", "get", "world/approvals/v1", "--json"])
        .ok()
        .json();
    assert_eq!(v["head"], sha(b"{}"));
}

/// A reader closing the pipe early (`world log --json | head -n 1`) ends `world` quietly
/// with exit 0 and nothing on stderr, even with far more output than a pipe buffer holds.
#[test]
fn log_into_a_closed_pipe_is_not_an_error() {
    let env = TestEnv::new();
    env.genesis();
    crate::common::append_client_entries(&env.db, 20_000);
    for args in ["log --json", "log", "log --reverse"] {
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!(
                "\"$0\" {args} | head -n 1; exit ${{PIPESTATUS[0]}}"
            ))
            .arg(crate::common::world_bin())
            .env_clear()
            .env("WORLD_DB", &env.db)
            .output()
            .unwrap();
        assert!(out.status.success(), "world {args}: {out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "world {args}");
    }
}

/// The table's REVISION column comes from the world row whose `logHead` is the entry hash;
/// a log of thousands of entries lists each entry once, and entries without a world show `-`.
#[test]
fn log_table_prints_each_entry_once_in_order() {
    let env = TestEnv::new();
    env.genesis();
    crate::common::append_client_entries(&env.db, 3000);
    {
        let c = rusqlite::Connection::open(&env.db).unwrap();
        // A second world row naming entry 5's hash, and an entry 3001 without any world row.
        let eh: String = c
            .query_row(
                "SELECT entry_hash_ref FROM log_entries WHERE entry_index = 5",
                [],
                |r| r.get(0),
            )
            .unwrap();
        c.execute(
            "INSERT INTO worlds VALUES (?1, 5, ?2, ?3)",
            rusqlite::params![sha(b"dup-world"), sha(b"other-root"), eh],
        )
        .unwrap();
        c.execute(
            "INSERT INTO log_entries VALUES (3001, ?1, 1, ?2, ?2, ?3, 'client:bare', ?2)",
            rusqlite::params![sha(b"bare-entry"), sha(b"x"), eh],
        )
        .unwrap();
    }
    let r = env.run(&["log"]).ok();
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 1 + 3002, "header + one line per entry");
    let cols = |l: &str| l.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    // Issue 16 replaced the REVISION column (always equal to the index for a valid chain;
    // `world show` prints the world) with what happened; each entry still prints once,
    // in order, even with two world rows naming it.
    for (i, l) in lines[1..].iter().enumerate().take(3001) {
        let c = cols(l);
        assert_eq!(c[0], i.to_string(), "{l}");
    }
    assert!(
        lines[3002].trim_start().starts_with("3001"),
        "{}",
        lines[3002]
    );
    assert!(lines[3002].contains("client:bare"), "{}", lines[3002]);
    let r = env
        .run(&["log", "--reverse", "--limit", "3", "--from", "6"])
        .ok();
    let idx: Vec<String> = r
        .stdout
        .lines()
        .skip(1)
        .map(|l| cols(l)[0].clone())
        .collect();
    assert_eq!(idx, vec!["6", "5", "4"]);
}
