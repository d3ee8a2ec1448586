//! `world replay` and `world export-episode` through the binary (transitions.md §12, issue 6).
//! Episodes are built with genesis + publish (fixtures/transitions/manifest.json) + session
//! mint + invoke; tampering is done with rusqlite on the store file.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use rusqlite::Connection;
use world::encoding::HashRef;
use world::store::records::InvocationRecord;

fn repo() -> PathBuf {
    crate::common::repo().to_path_buf()
}

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn db(&self) -> PathBuf {
        self.dir.path().join("w.db")
    }
    fn p(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    fn world_at(&self, db: &Path, args: &[&str]) -> Output {
        Command::cargo_bin("world")
            .unwrap()
            .current_dir(repo())
            .env_remove("WORLD_DB")
            .env_remove("WORLD_SESSION")
            .arg("--db")
            .arg(db)
            .args(args)
            .output()
            .unwrap()
    }
    fn world(&self, args: &[&str]) -> Output {
        self.world_at(&self.db(), args)
    }
    fn ok(&self, args: &[&str]) -> String {
        let o = self.world(args);
        assert!(o.status.success(), "{args:?}: {}", text(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    }
    fn invoke(&self, transition: &str, args: &str, want_code: i32) -> String {
        let tok = self.p("tok");
        let o = self.world(&[
            "invoke",
            transition,
            "--session",
            tok.to_str().unwrap(),
            "--args",
            args,
        ]);
        assert_eq!(
            o.status.code(),
            Some(want_code),
            "{transition} {args}: {}",
            text(&o)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }
    fn conn(&self) -> Connection {
        Connection::open(self.db()).unwrap()
    }
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A mixed episode `ep1`: entries 1 pure, 2 effectful ok, 3 effectful failed (a read
/// escaping the worktree through a symlink), 4 refusal plan (no effect), 5 effectful denied
/// (budget spent), 6 pure refusal, 7 pure (counter).
fn mixed() -> Env {
    let env = Env::new();
    env.ok(&["genesis"]);
    env.ok(&[
        "publish",
        "--manifest",
        "fixtures/transitions/manifest.json",
        "--yes",
    ]);
    let ws = env.p("ws");
    fs::create_dir_all(ws.join("ep1")).unwrap();
    fs::write(ws.join("ep1/notes.txt"), "hi\nthere\n").unwrap();
    let outside = env.p("secret.txt");
    fs::write(&outside, "outside the worktree\n").unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("ep1/escape.txt")).unwrap();
    env.ok(&[
        "session",
        "mint",
        "--episode",
        "ep1",
        "--grant",
        "world.apply=world:10",
        "--grant",
        "Workspace.Read=worktree:2",
        "--workspace-root",
        ws.to_str().unwrap(),
        "--yes",
        "--out",
        env.p("tok").to_str().unwrap(),
    ]);
    env.invoke("echo", r#"{"a":[1,2.50,"x"]}"#, 0);
    let ok = env.invoke("readcount", r#"{"path":"notes.txt"}"#, 0);
    assert!(ok.contains(r#""status":"ok""#), "{ok}");
    let failed = env.invoke("readcount", r#"{"path":"escape.txt"}"#, 9);
    assert!(failed.contains(r#""status":"failed""#), "{failed}");
    env.invoke("readcount", r#"{"path":"../x"}"#, 7);
    let denied = env.invoke("readcount", r#"{"path":"notes.txt"}"#, 8);
    assert!(denied.contains(r#""status":"denied""#), "{denied}");
    env.invoke("refuse", r#"{"name":""}"#, 7);
    env.invoke("counter", r#"{"a":1,"b":[1,2]}"#, 0);
    env
}

fn record_at(env: &Env, index: i64) -> (String, InvocationRecord) {
    let conn = env.conn();
    let (tref,): (String,) = conn
        .query_row(
            "SELECT transition_ref FROM log_entries WHERE entry_index = ?1",
            [index],
            |r| Ok((r.get(0)?,)),
        )
        .unwrap();
    let (sid, payload): (String, Vec<u8>) = conn
        .query_row(
            "SELECT semantic_id, payload FROM objects WHERE hash_ref = ?1",
            [&tref],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    (tref, InvocationRecord::decode(&sid, &payload).unwrap())
}

fn diverged_line(out: &str) -> &str {
    out.lines().find(|l| l.contains("DIVERGED")).unwrap_or("")
}

#[test]
fn a_mixed_episode_replays_identical() {
    let env = mixed();
    let o = env.world(&["replay", "--episode", "ep1"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.matches(": identical").count(), 7, "{out}");
    for i in 1..=7 {
        assert!(out.contains(&format!("(entry {i}): identical")), "{out}");
    }
    assert!(
        out.contains("replayed 7 entries, 0 skipped (client commits), 0 diverged"),
        "{out}"
    );
    // --all lists genesis as a client commit, never as passed.
    let junit = env.p("junit.xml");
    let o = env.world(&["replay", "--all", "--junit", junit.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("(entry 0): not replayable: client commit"),
        "{out}"
    );
    assert!(
        out.contains("replayed 7 entries, 1 skipped (client commits), 0 diverged"),
        "{out}"
    );
    let xml = fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<testcase ").count(), 8, "{xml}");
    assert_eq!(xml.matches("<skipped ").count(), 1, "{xml}");
    assert!(!xml.contains("<failure"), "{xml}");
    // JSON lines.
    let o = env.world(&["replay", "--from", "2", "--to", "3", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Two entries, then the summary object (issue 16: a summary where a command summarises).
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[2]["summary"]["replayed"], 2);
    assert_eq!(lines[2]["summary"]["ok"], true);
    let schema: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("docs/json/replay-summary.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let v = jsonschema::validator_for(&schema).expect("schema compiles");
    assert!(v.is_valid(&lines[2]), "{}", lines[2]);
    assert_eq!(lines[0]["entryIndex"], 2);
    assert_eq!(lines[0]["ok"], true);
    assert!(lines[1]["invocationId"]
        .as_str()
        .unwrap()
        .starts_with("cli:ep1:"));
    // One invocation by id.
    let (_, rec) = record_at(&env, 5);
    let o = env.world(&["replay", "--invocation", &rec.invocation_id]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("(entry 5): identical"));
}

#[test]
fn usage_problems_exit_1() {
    let env = mixed();
    for args in [
        &["replay", "--episode", "nope"][..],
        &["replay", "--invocation", "cli:ep1:nope"][..],
        &["replay", "--from", "50", "--to", "60"][..],
    ] {
        let o = env.world(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o));
    }
    let o = env.world(&["replay"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn replay_calls_no_handler_the_worktree_can_be_gone() {
    let env = mixed();
    fs::remove_dir_all(env.p("ws")).unwrap();
    fs::remove_file(env.p("secret.txt")).unwrap();
    let o = env.world(&["replay", "--all"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("7 entries, 1 skipped"));
}

#[test]
fn an_altered_output_object_diverges_at_output() {
    let env = mixed();
    let (_, rec) = record_at(&env, 2);
    env.conn()
        .execute(
            "UPDATE objects SET payload = CAST(replace(CAST(payload AS TEXT), '\"lines\":3', '\"lines\":4') AS BLOB) WHERE hash_ref = ?1",
            [&rec.output],
        )
        .unwrap();
    let o = env.world(&["replay", "--all"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let line = diverged_line(&out);
    assert!(line.contains("(entry 2): DIVERGED at output:"), "{out}");
    assert!(line.contains(&rec.output), "{line}");
    // Stops at the first divergence.
    assert!(!out.contains("(entry 3)"), "{out}");
    assert!(out.contains("1 diverged"), "{out}");
}

#[test]
fn a_swapped_effect_record_diverges_at_effects() {
    let env = mixed();
    // Entry 2 (the successful read) gets entry 3's effect record (the failed read); the
    // record is re-stored under its new hash and the entry's transitionRef rewritten.
    let (old_ref, mut rec2) = record_at(&env, 2);
    let (_, rec3) = record_at(&env, 3);
    rec2.effects = rec3.effects.clone();
    let bytes = rec2.encode();
    let new_ref = HashRef::of(&bytes).to_string();
    let conn = env.conn();
    conn.execute(
        "INSERT INTO objects (hash_ref, interface_hash_ref, semantic_id, provenance, payload) SELECT ?1, interface_hash_ref, semantic_id, provenance, ?2 FROM objects WHERE hash_ref = ?3",
        rusqlite::params![new_ref, bytes, old_ref],
    )
    .unwrap();
    conn.execute(
        "UPDATE log_entries SET transition_ref = ?1 WHERE entry_index = 2",
        [&new_ref],
    )
    .unwrap();
    // Without --keep-going replay stops at the divergence, and the JUnit file still lists
    // every selected entry: the ones after it as skipped (issue 16).
    let junit = env.p("stopped.xml");
    let o = env.world(&[
        "replay",
        "--episode",
        "ep1",
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let xml = fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("<testcase ").count(), 7, "{xml}");
    assert_eq!(xml.matches("<failure").count(), 1, "{xml}");
    assert!(
        xml.contains("not replayed: stopped at the first divergence"),
        "{xml}"
    );
    // An unwritable --junit path fails before anything is replayed (exit 1, no entry line)
    // and leaves nothing behind.
    let nowhere = env.p("no-such-dir/report.xml");
    let o = env.world(&[
        "replay",
        "--episode",
        "ep1",
        "--junit",
        nowhere.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(o.stdout.is_empty(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("cannot write the JUnit report"),
        "{}",
        text(&o)
    );
    assert!(!nowhere.exists());
    let o = env.world(&["replay", "--episode", "ep1", "--keep-going", "--json"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let bad: Vec<&serde_json::Value> = lines.iter().filter(|l| l["ok"] == false).collect();
    assert_eq!(bad.len(), 1, "{lines:?}");
    assert_eq!(bad[0]["entryIndex"], 2);
    assert_eq!(bad[0]["stage"], "effects");
    assert!(bad[0]["expected"].is_string() && bad[0]["actual"].is_string());
    // --keep-going replayed the rest; the last line is the summary.
    assert_eq!(lines.len(), 8);
    assert_eq!(lines[7]["summary"]["diverged"], 1);
}

#[test]
fn an_edited_transition_source_diverges_at_transition_source() {
    let env = mixed();
    let (_, rec) = record_at(&env, 2);
    env.conn()
        .execute(
            "UPDATE objects SET payload = CAST(CAST(payload AS TEXT) || '-- edited' AS BLOB) WHERE hash_ref = ?1",
            [&rec.transition_fn],
        )
        .unwrap();
    let o = env.world(&["replay", "--all", "--keep-going"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    // readcount is entries 2, 3, 4 and 5.
    for i in [2, 3, 4, 5] {
        assert!(
            out.contains(&format!("(entry {i}): DIVERGED at transition_source:")),
            "{out}"
        );
    }
    assert!(out.contains("(entry 1): identical"), "{out}");
    assert!(out.contains("replayed 7 entries, 1 skipped (client commits), 4 diverged"));
}

#[test]
fn an_altered_input_or_plan_diverges() {
    let env = mixed();
    let (_, rec) = record_at(&env, 7);
    env.conn()
        .execute(
            "UPDATE objects SET payload = CAST('{\"a\":2}' AS BLOB) WHERE hash_ref = ?1",
            [&rec.input],
        )
        .unwrap();
    let o = env.world(&["replay", "--from", "7", "--to", "7"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(diverged_line(&String::from_utf8_lossy(&o.stdout))
        .contains("(entry 7): DIVERGED at input:"));
}

fn fake_store() -> Env {
    let env = fake_transition_env("fecho", "-- fake: echo-input\n", 10);
    env.invoke("fecho", r#"{"a":1}"#, 0);
    env.invoke("fecho", r#"{"b":2}"#, 0);
    env
}

/// A genesis store with transition `id` published on the fake interpreter (a TEST DOUBLE
/// driven by the `-- fake:` lines in `directives`) and a session for episode `ep1`, granted
/// `world.apply=world:BUDGET`, in `tok`.
fn fake_transition_env(id: &str, directives: &str, budget: u32) -> Env {
    let env = Env::new();
    env.ok(&["genesis"]);
    let src = env.p(&format!("{id}.ail"));
    fs::write(
        &src,
        format!(
            "module fake/{id}\n{directives}export func main(input: string) -> string =\n  input\n"
        ),
    )
    .unwrap();
    let manifest = serde_json::json!([{
        "id": id, "title": "Fake echo", "description": "echo through the TEST DOUBLE",
        "transitionFnFile": src, "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object"},
        "access": {"effect": "world.apply", "scope": "world", "cost": 0},
        "declaredEffects": []
    }]);
    let m = env.p("m.json");
    fs::write(&m, manifest.to_string()).unwrap();
    env.ok(&[
        "publish",
        "--manifest",
        m.to_str().unwrap(),
        "--interpreter",
        crate::common::fake_ailang().to_str().unwrap(),
        "--yes",
    ]);
    let grant = format!("world.apply=world:{budget}");
    env.ok(&[
        "session",
        "mint",
        "--episode",
        "ep1",
        "--grant",
        &grant,
        "--yes",
        "--out",
        env.p("tok").to_str().unwrap(),
    ]);
    env
}

/// [`fake_transition_env`] with `slow`: it echoes its input after sleeping `sleep` seconds.
fn slow_echo_env(sleep: f64) -> Env {
    fake_transition_env(
        "slow",
        &format!("-- fake: sleep {sleep}\n-- fake: echo-input\n"),
        100,
    )
}

fn archived_binary(db: &Path) -> PathBuf {
    let base = PathBuf::from(format!("{}.artifacts/interpreters/sha256", db.display()));
    let hex = fs::read_dir(&base)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name();
    base.join(hex).join("ailang")
}

#[test]
fn a_different_interpreter_diverges_at_interpreter() {
    let env = fake_store();
    let o = env.world(&["replay", "--all"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let bin = archived_binary(&env.db());
    fs::set_permissions(&bin, fs::Permissions::from_mode(0o755)).unwrap();
    let mut bytes = fs::read(&bin).unwrap();
    bytes.extend_from_slice(b"\nFAKE-AILANG-VERSION:AILANG v9.9.9-other\n");
    fs::write(&bin, bytes).unwrap();
    let o = env.world(&["replay", "--all"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        diverged_line(&out).contains("(entry 1): DIVERGED at interpreter:"),
        "{out}"
    );
    // An absent interpreter is an integrity failure too, never a skip.
    fs::remove_dir_all(bin.parent().unwrap()).unwrap();
    let o = env.world(&["replay", "--episode", "ep1", "--keep-going"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.matches("DIVERGED at interpreter:").count(), 2, "{out}");
}

/// A file's path with its bytes and mtime (`None` when absent).
type FileState = (PathBuf, Option<(Vec<u8>, std::time::SystemTime)>);

fn snapshot(db: &Path) -> Vec<FileState> {
    ["", "-journal", "-wal"]
        .iter()
        .map(|s| {
            let p = PathBuf::from(format!("{}{s}", db.display()));
            let v = fs::read(&p)
                .ok()
                .map(|b| (b, fs::metadata(&p).unwrap().modified().unwrap()));
            (p, v)
        })
        .collect()
}

#[test]
fn replay_never_writes_and_runs_under_a_held_writer_lock() {
    let env = mixed();
    let before = snapshot(&env.db());
    // Another process (this test) holds the writer lock for the whole replay.
    let held =
        world::store::Store::open_write(&env.db(), world::store::WriteOptions::default()).unwrap();
    let o = env.world(&["replay", "--all"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // A writer is refused meanwhile, proving the lock was really held.
    let w = env.world(&["genesis"]);
    assert_eq!(w.status.code(), Some(6), "{}", text(&w));
    drop(held);
    // And again without the lock held.
    let o = env.world(&["replay", "--all", "--keep-going"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(snapshot(&env.db()), before);
}

#[test]
fn an_exported_episode_replays_and_verifies_as_a_bundle() {
    let env = mixed();
    // A second episode in the same store must not leak into the bundle.
    fs::create_dir_all(env.p("ws/ep2")).unwrap();
    fs::remove_file(env.p("tok")).unwrap();
    env.ok(&[
        "session",
        "mint",
        "--episode",
        "ep2",
        "--grant",
        "world.apply=world:10",
        "--yes",
        "--out",
        env.p("tok").to_str().unwrap(),
    ]);
    env.invoke("echo", r#"{"ep":2}"#, 0);
    let b = env.p("bundle.db");
    let o = env.world(&["export-episode", "ep1", "--out", b.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // Never overwritten.
    let o = env.world(&["export-episode", "ep1", "--out", b.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let o = env.world(&[
        "export-episode",
        "nope",
        "--out",
        env.p("x.db").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(!env.p("x.db").exists());
    // The source store can go away entirely.
    fs::remove_dir_all(env.p("ws")).unwrap();
    let o = env.world_at(&b, &["replay", "--all"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("replayed 7 entries, 0 skipped (client commits), 0 diverged"),
        "{out}"
    );
    assert!(!out.contains("(entry 8)"), "{out}");
    let o = env.world_at(&b, &["verify", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["ok"], true, "{v}");
    // A fresh, untouched bundle verifies clean: the gaps its marker declares are not
    // findings (issue 16 §11).
    assert_eq!(v["warnings"], serde_json::json!([]), "{v}");
    assert_eq!(v["failures"], serde_json::json!([]), "{v}");
    // A tampered bundle still diverges.
    let conn = Connection::open(&b).unwrap();
    let (_, rec) = record_at(&env, 2);
    conn.execute(
        "UPDATE objects SET payload = CAST('{}' AS BLOB) WHERE hash_ref = ?1",
        [&rec.output],
    )
    .unwrap();
    let o = env.world_at(&b, &["replay", "--all"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
}

#[test]
fn a_bundle_carries_its_archived_interpreter() {
    for embed in [false, true] {
        let env = fake_store();
        let b = env.p("bundle.db");
        let mut args = vec!["export-episode", "ep1", "--out", b.to_str().unwrap()];
        if embed {
            args.push("--embed");
        }
        let o = env.world(&args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        assert_eq!(
            PathBuf::from(format!("{}.artifacts", b.display())).exists(),
            !embed
        );
        // The source archive is gone: the bundle must be self-contained.
        fs::remove_dir_all(format!("{}.artifacts", env.db().display())).unwrap();
        let o = env.world_at(&b, &["replay", "--all"]);
        assert_eq!(o.status.code(), Some(0), "embed={embed}: {}", text(&o));
        assert!(String::from_utf8_lossy(&o.stdout).contains("replayed 2 entries"));
        let o = env.world_at(&b, &["verify"]);
        assert_eq!(o.status.code(), Some(0), "embed={embed}: {}", text(&o));
    }
}

/// DEC-PERF-10, DEC-PERF-12: reading ahead and the runner thread are pure caches. A replay that
/// reads ahead and takes its interpreter outputs from the runner, and one that reads and runs
/// each entry only when a check needs it (`read_ahead: false`), report exactly the same
/// entries over a store tampered at several stages: an altered output, an altered effect
/// request, an altered input.
#[test]
fn reading_ahead_reports_the_same_divergences_as_reading_inline() {
    let env = mixed();
    let (_, rec2) = record_at(&env, 2);
    let (_, rec3) = record_at(&env, 3);
    let (_, rec7) = record_at(&env, 7);
    let conn = env.conn();
    conn.execute(
        "UPDATE objects SET payload = CAST(replace(CAST(payload AS TEXT), '\"lines\":3', '\"lines\":4') AS BLOB) WHERE hash_ref = ?1",
        [&rec2.output],
    )
    .unwrap();
    let er_ref = rec3.effects.clone().unwrap().remove(0);
    let er_payload: Vec<u8> = conn
        .query_row(
            "SELECT payload FROM objects WHERE hash_ref = ?1",
            [&er_ref],
            |r| r.get(0),
        )
        .unwrap();
    let er = world::store::records::EffectRecord::decode(&er_payload).unwrap();
    conn.execute(
        "UPDATE objects SET payload = CAST(CAST(payload AS TEXT) || ' ' AS BLOB) WHERE hash_ref = ?1",
        [&er.request_ref],
    )
    .unwrap();
    conn.execute(
        "UPDATE objects SET payload = CAST('{\"a\":2}' AS BLOB) WHERE hash_ref = ?1",
        [&rec7.input],
    )
    .unwrap();
    drop(conn);

    let run = |inline: bool| {
        let store = world::store::Store::open_read(&env.db()).unwrap();
        let pins = world::replay::bundle::ReadOnlyPins::for_db(&env.db());
        let opts = world::replay::Options {
            keep_going: true,
            read_ahead: !inline,
            ..Default::default()
        };
        world::replay::replay(
            &store,
            &world::replay::Selection::All,
            &pins,
            &opts,
            &mut |_, _, _| {},
        )
        .unwrap()
    };
    let ahead = run(false);
    let inline = run(true);
    assert_eq!(ahead.entries, inline.entries);
    let stages: Vec<(i64, String)> = ahead
        .entries
        .iter()
        .filter_map(|e| match &e.outcome {
            world::replay::Outcome::Diverged(d) => Some((e.entry_index, d.stage.to_string())),
            _ => None,
        })
        .collect();
    assert_eq!(
        stages,
        vec![
            (2, "output".to_string()),
            (3, "effects".to_string()),
            (7, "input".to_string())
        ],
        "{:?}",
        ahead.entries
    );
    assert_eq!(ahead.diverged, 3);
}

/// The replay report of the store `db` with reading ahead on or off.
fn replay_report(
    db: &Path,
    selection: &world::replay::Selection,
    keep_going: bool,
    read_ahead: bool,
) -> Result<world::replay::Report, String> {
    let store = world::store::Store::open_read(db).unwrap();
    let pins = world::replay::bundle::ReadOnlyPins::for_db(db);
    let opts = world::replay::Options {
        keep_going,
        read_ahead,
        ..Default::default()
    };
    world::replay::replay(&store, selection, &pins, &opts, &mut |_, _, _| {})
        .map_err(|e| e.to_string())
}

/// Every way the differential test below edits one row: `(label, SQL, parameter)`.
fn one_row_edits(db: &Path) -> Vec<(String, &'static str, String)> {
    let conn = Connection::open(db).unwrap();
    // One text column of every row, in the query's order.
    let column = |sql: &str| -> Vec<String> {
        conn.prepare(sql)
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let mut edits = Vec::new();
    for r in column("SELECT hash_ref FROM objects ORDER BY hash_ref") {
        edits.push((
            format!("append a space to object {r}"),
            "UPDATE objects SET payload = CAST(CAST(payload AS TEXT) || ' ' AS BLOB) WHERE hash_ref = ?1",
            r.clone(),
        ));
        edits.push((
            format!("delete object {r}"),
            "DELETE FROM objects WHERE hash_ref = ?1",
            r.clone(),
        ));
        edits.push((
            format!("relabel object {r}"),
            "UPDATE objects SET semantic_id = semantic_id || 'x' WHERE hash_ref = ?1",
            r,
        ));
    }
    for s in column("SELECT CAST(seq AS TEXT) FROM journal ORDER BY seq") {
        edits.push((
            format!("delete journal row {s}"),
            "DELETE FROM journal WHERE seq = ?1",
            s.clone(),
        ));
        edits.push((
            format!("point journal row {s} at the previous row's object"),
            "UPDATE journal SET object_ref = (SELECT j.object_ref FROM journal j WHERE j.seq < journal.seq ORDER BY j.seq DESC LIMIT 1) WHERE seq = ?1 AND seq > 1",
            s.clone(),
        ));
    }
    for w in column("SELECT world_ref FROM worlds ORDER BY world_ref") {
        edits.push((
            format!("delete world {w}"),
            "DELETE FROM worlds WHERE world_ref = ?1",
            w.clone(),
        ));
        edits.push((
            format!("bump the revision of world {w}"),
            "UPDATE worlds SET revision = revision + 100 WHERE world_ref = ?1",
            w,
        ));
    }
    for i in 0..20 {
        edits.push((
            format!("retag log entry {i}"),
            "UPDATE log_entries SET written_by = 'coordinator:cli' WHERE entry_index = ?1",
            i.to_string(),
        ));
        edits.push((
            format!("bump the epoch of log entry {i}"),
            "UPDATE log_entries SET semantics_epoch = semantics_epoch + 1 WHERE entry_index = ?1",
            i.to_string(),
        ));
    }
    edits
}

/// DEC-PERF-12, attacked: every single-row edit of a mixed store (each object's payload,
/// existence and semantic id, each journal row, each world row, each log header) gives the
/// same replay report with reading ahead on and off, with and without `--keep-going`.
#[test]
fn every_single_row_edit_reports_the_same_with_and_without_reading_ahead() {
    let env = mixed();
    // Enough further entries that the read-ahead window and its largest batches are used,
    // with a client commit and a second episode in between.
    fs::write(env.p("note.json"), r#"{"n":1}"#).unwrap();
    env.ok(&[
        "commit",
        "--put",
        env.p("note.json").to_str().unwrap(),
        "--semantic-id",
        "demo/note/v1",
    ]);
    for i in 0..3 {
        env.invoke("counter", &format!(r#"{{"i":{i}}}"#), 0);
    }
    let pristine = env.p("pristine.db");
    fs::copy(env.db(), &pristine).unwrap();
    let case = env.p("case.db");
    let mut failures = Vec::new();
    for (label, sql, param) in one_row_edits(&pristine) {
        fs::copy(&pristine, &case).unwrap();
        {
            let conn = Connection::open(&case).unwrap();
            conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
            conn.execute(sql, [&param]).unwrap();
        }
        for keep_going in [false, true] {
            for selection in [
                world::replay::Selection::All,
                world::replay::Selection::Episode("ep1".into()),
                world::replay::Selection::Range { from: 3, to: 9 },
            ] {
                let off = replay_report(&case, &selection, keep_going, false);
                let on = replay_report(&case, &selection, keep_going, true);
                let same = match (&off, &on) {
                    (Ok(a), Ok(b)) => {
                        a.entries == b.entries
                            && a.stopped_early == b.stopped_early
                            && (a.replayed, a.skipped, a.diverged)
                                == (b.replayed, b.skipped, b.diverged)
                    }
                    (Err(a), Err(b)) => a == b,
                    _ => false,
                };
                if !same {
                    failures.push(format!(
                        "{label} (keep_going={keep_going}, {selection:?}):\n  off: {:?}\n  on:  {:?}",
                        off.map(|r| r.entries),
                        on.map(|r| r.entries)
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// DEC-PERF-12, attacked: a replay that stops at a divergence neither waits for runs of
/// entries after the one it checks (the runner sent runs back only with their whole batch, up
/// to 32 entries) nor for the rest of the runner's batch once it stopped (up to 32 calls, each
/// up to the phase timeout). Every run here takes `SLEEP`; entry 16's input is altered, so the
/// engine needs the runs of entries 1–15 (the batch of entries 15–30 holds the last of them)
/// and stops at 16. It must take about as long as replaying entries 0–15 alone; before the
/// fixes it took about 29 runs instead of 15.
#[test]
fn a_replay_stopped_early_waits_only_for_the_runs_it_needs() {
    const SLEEP: f64 = 0.25;
    let env = slow_echo_env(SLEEP);
    for i in 1..=30 {
        env.invoke("slow", &format!(r#"{{"i":{i}}}"#), 0);
    }
    let (_, rec) = record_at(&env, 16);
    env.conn()
        .execute(
            "UPDATE objects SET payload = CAST('{\"i\":160}' AS BLOB) WHERE hash_ref = ?1",
            [&rec.input],
        )
        .unwrap();
    let timed = |args: &[&str]| {
        let started = std::time::Instant::now();
        let o = env.world(args);
        (o, started.elapsed().as_secs_f64())
    };
    let (o, needed) = timed(&["replay", "--from", "0", "--to", "15"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let (o, took) = timed(&["replay", "--all"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(diverged_line(&String::from_utf8_lossy(&o.stdout))
        .contains("(entry 16): DIVERGED at input:"));
    // At most one run more (in progress when the engine stopped), and slack.
    assert!(
        took < needed + SLEEP + 1.0,
        "replay took {took:.1}s; entries 0-15 alone take {needed:.1}s"
    );
}

/// A replay holds no read lock while it waits for an interpreter run: a writer that commits
/// meanwhile (busy timeout 2 s, store-format.md §4) is not refused "database is locked" because
/// a replayed transition is slow. Both with reading ahead (the engine waits for the runner) and
/// without (the engine runs the call), through the library; and through the binary.
#[test]
fn a_writer_commits_while_a_replay_waits_for_a_slow_run() {
    const SLEEP: f64 = 4.0;
    let env = slow_echo_env(SLEEP);
    env.invoke("slow", r#"{"i":1}"#, 0);
    for (n, read_ahead) in [(1, true), (2, false)] {
        let db = env.db();
        let replay = std::thread::spawn(move || {
            replay_report(&db, &world::replay::Selection::All, false, read_ahead)
        });
        std::thread::sleep(std::time::Duration::from_secs(1));
        let note = env.p(&format!("note{n}.json"));
        fs::write(&note, format!(r#"{{"n":{n}}}"#)).unwrap();
        let o = env.world(&[
            "commit",
            "--put",
            note.to_str().unwrap(),
            "--semantic-id",
            "demo/note/v1",
        ]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "read_ahead={read_ahead}: {}",
            text(&o)
        );
        let report = replay.join().unwrap().unwrap();
        assert!(report.ok(), "{:?}", report.entries);
    }
    let mut replay = std::process::Command::new(env!("CARGO_BIN_EXE_world"))
        .arg("--db")
        .arg(env.db())
        .args(["replay", "--all", "-q"])
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(1));
    let note = env.p("note3.json");
    fs::write(&note, r#"{"n":3}"#).unwrap();
    let o = env.world(&[
        "commit",
        "--put",
        note.to_str().unwrap(),
        "--semantic-id",
        "demo/note/v1",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(replay.wait().unwrap().success());
}

/// `--from N --to M` selects the entries whose index is in [N, M]: a negative N neither
/// shifts the window (`--from=-3 --to=-1` replayed entries 0-2) nor overflows `M - N` (an
/// `i64::MIN` start replayed the whole log past `--to`, and panics in a debug build).
#[test]
fn a_range_with_a_negative_start_selects_by_index() {
    let env = mixed();
    let o = env.world(&["replay", "--from=-3", "--to=-1"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no log entries between index -3 and -1"));
    let o = env.world(&["replay", "--from=-9223372036854775808", "--to", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("(entry 2)") && !out.contains("(entry 3)"),
        "{out}"
    );
    let o = env.world(&["replay", "--from=-2", "--to", "1"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("(entry 1)") && !out.contains("(entry 2)"),
        "{out}"
    );
}

/// An echo variant: `body` is what `main` returns for an object input.
fn echo_variant(env: &Env, name: &str, body: &str) -> String {
    let src = fs::read_to_string(repo().join("fixtures/transitions/echo.ail")).unwrap();
    let changed = src.replace("Some(_) => encode(doc),", &format!("Some(_) => {body},"));
    assert_ne!(changed, src, "the echo fixture's body moved");
    let path = env.p(name);
    fs::write(&path, changed).unwrap();
    format!("echo={}", path.display())
}

#[test]
fn a_candidate_transition_gets_a_verdict_per_entry_on_a_store_and_a_bundle() {
    let env = mixed();
    // Cosmetic change: same output, another transitionFn.
    let cosmetic = env.p("cosmetic.ail");
    let src = fs::read_to_string(repo().join("fixtures/transitions/echo.ail")).unwrap();
    fs::write(&cosmetic, format!("-- a cosmetic comment\n{src}")).unwrap();
    let t = format!("echo={}", cosmetic.display());
    let o = env.world(&["replay", "--episode", "ep1", "--transition", &t]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("echo: same (transitionFn sha256:"), "{out}");
    assert!(out.contains("echo: 1 same"), "{out}");

    // A changed output: exit 3, a structural diff, --report-only exits 0.
    let changed = echo_variant(
        &env,
        "changed.ail",
        r#"encode(jo([kv("echoed", jb(true))]))"#,
    );
    let junit = env.p("junit.xml");
    let o = env.world(&[
        "replay",
        "--all",
        "--transition",
        &changed,
        "--junit",
        junit.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("echo: OUTPUT-CHANGED"), "{out}");
    assert!(
        out.contains("- /a: [1,2.50,\"x\"]") || out.contains("- /a:"),
        "{out}"
    );
    assert!(out.contains("+ /echoed: true"), "{out}");
    assert!(
        out.contains("echo: 0 same, 1 output-changed — entry"),
        "{out}"
    );
    let x = fs::read_to_string(&junit).unwrap();
    assert!(
        x.contains("classname=\"world.replay.candidate.echo\""),
        "{x}"
    );
    assert!(x.contains("<failure type=\"output-changed\""), "{x}");
    assert_eq!(x.matches("<testcase ").count(), 8, "{x}");
    let o = env.world(&["replay", "--all", "--transition", &changed, "--report-only"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));

    // --json: one verdict line and a summary object.
    let o = env.world(&["--json", "replay", "--all", "--transition", &changed]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let v = lines.iter().find(|l| l["verdict"].is_string()).unwrap();
    assert_eq!(v["verdict"], "output-changed", "{v}");
    assert_eq!(v["outputDiff"]["added"][0]["path"], "/echoed", "{v}");
    assert_eq!(v["outputDiff"]["removed"][0]["path"], "/a", "{v}");
    let s = &lines.last().unwrap()["summary"];
    assert_eq!(s["ok"], false, "{s}");
    assert_eq!(s["candidate"]["changed"], 1, "{s}");
    assert_eq!(s["candidate"]["transitions"][0]["outputChanged"], 1, "{s}");

    // A new refusal, and a source that does not load.
    let refusing = echo_variant(
        &env,
        "refusing.ail",
        r#"encode(jo([kv("ok", jb(false)), kv("refused", js("closed"))]))"#,
    );
    let o = env.world(&["replay", "--all", "--transition", &refusing]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("echo: NOW-REFUSED: \"closed\""), "{out}");
    let broken = echo_variant(&env, "broken.ail", "1 + true");
    let o = env.world(&["replay", "--all", "--transition", &broken]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("echo: NOW-FAILS (type error)"), "{out}");

    // The same candidate on an exported bundle, the source store gone.
    let b = env.p("bundle.db");
    env.ok(&["export-episode", "ep1", "--out", b.to_str().unwrap()]);
    fs::remove_dir_all(env.p("ws")).unwrap();
    let o = env.world_at(&b, &["replay", "--all", "--transition", &changed]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("echo: OUTPUT-CHANGED"));
    let o = env.world_at(&b, &["replay", "--all", "--transition", &t]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // Bad candidate input: exit 1, nothing replayed.
    let o = env.world(&["replay", "--all", "--transition", "echo"]);
    assert_eq!(o.status.code(), Some(2).or(o.status.code()), "{}", text(&o));
    assert_ne!(o.status.code(), Some(0), "{}", text(&o));
    let missing = format!("echo={}", env.p("nope.ail").display());
    let o = env.world(&["replay", "--all", "--transition", &missing]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
}

#[test]
fn an_unattended_publish_with_check_against_fails_on_a_changed_behaviour() {
    let env = mixed();
    let changed = echo_variant(
        &env,
        "changed.ail",
        r#"encode(jo([kv("echoed", jb(true))]))"#,
    );
    let file = changed.trim_start_matches("echo=");
    let mut m: serde_json::Value = serde_json::from_slice(
        &fs::read(repo().join("fixtures/transitions/manifest.json")).unwrap(),
    )
    .unwrap();
    m[0]["transitionFnFile"] = serde_json::Value::from(file);
    let mp = env.p("candidate.json");
    fs::write(&mp, serde_json::to_vec(&m).unwrap()).unwrap();
    let db = env.db();
    let args = [
        "publish",
        "--manifest",
        mp.to_str().unwrap(),
        "--check-against",
        db.to_str().unwrap(),
        "--yes",
    ];
    let o = env.world(&args);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("echo: 0 same, 1 output-changed — entry"),
        "{err}"
    );
    let mut accept = args.to_vec();
    accept.push("--accept-changes");
    let o = env.world(&accept);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn every_entry_reruns_under_a_named_interpreter() {
    let env = mixed();
    let o = env.world(&["replay", "--all", "--interpreter", "embedded"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    // Every coordinator entry of the episode got a verdict, the pure and the effectful ones.
    assert_eq!(out.matches(": same").count(), 7, "{out}");
    assert!(out.contains("readcount: 4 same"), "{out}");
}

/// Validate `v` against docs/json/NAME.schema.json.
#[track_caller]
fn assert_schema(name: &str, v: &serde_json::Value) {
    let path = repo().join("docs/json").join(format!("{name}.schema.json"));
    let schema: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator.iter_errors(v).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{name}: {v} does not match: {errors:?}");
}

/// The lines of a candidate `replay --json`, each checked against its schema: a verdict line
/// (replay-verdict), an entry the candidate does not apply to (replay-entry), the summary last
/// (replay-summary, with its `candidate` member).
fn candidate_json_lines(o: &Output) -> Vec<serde_json::Value> {
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let (last, entries) = lines.split_last().expect("a summary line");
    for l in entries {
        if l.get("verdict").is_some() {
            assert_schema("replay-verdict", l);
        } else {
            assert_schema("replay-entry", l);
        }
    }
    assert_schema("replay-summary", last);
    assert!(last["summary"]["candidate"].is_object(), "{last}");
    lines
}

/// A source file derived from fixture `fixture` with `from` replaced by `to`.
fn variant(env: &Env, fixture: &str, name: &str, from: &str, to: &str) -> PathBuf {
    let src = fs::read_to_string(repo().join("fixtures/transitions").join(fixture)).unwrap();
    let changed = src.replace(from, to);
    assert_ne!(changed, src, "{fixture} no longer holds {from:?}");
    let path = env.p(name);
    fs::write(&path, changed).unwrap();
    path
}

/// Issue 32 §2: a candidate whose plan asks for another effect (here the same read of another
/// path) is `plan-changed` with both requests shown, and stops there; a candidate that accepts
/// what the recording refused is `no-longer-refused` with the recorded refusal and the output
/// diff. Both exit 3 (0 with --report-only), on a store and on an exported bundle, with the
/// JSON lines matching docs/json and one JUnit failure per changed entry.
#[test]
fn plan_changed_and_no_longer_refused_verdicts_on_a_store_and_a_bundle() {
    let env = mixed();
    let other = variant(
        &env,
        "readcount.ail",
        "other-path.ail",
        r#"kv("path", js(p))"#,
        r#"kv("path", js("other.txt"))"#,
    );
    let plan_t = format!("readcount={}", other.display());
    let accepting = variant(
        &env,
        "refuse.ail",
        "accepting.ail",
        r#"Some(name) if trim(name) == "" => refused("argument \"name\" must not be blank"),"#,
        r#"Some(name) if trim(name) == "" => encode(jo([kv("ok", jb(true)), kv("name", js("anonymous"))])),"#,
    );
    let refuse_t = format!("refuse={}", accepting.display());
    let b = env.p("bundle.db");
    env.ok(&["export-episode", "ep1", "--out", b.to_str().unwrap()]);
    for db in [env.db(), b.clone()] {
        // plan-changed: entries 2, 3 and 5 read notes.txt / escape.txt; the candidate reads
        // other.txt. Entry 4 refuses before planning any effect: same.
        let o = env.world_at(
            &db,
            &["replay", "--episode", "ep1", "--transition", &plan_t],
        );
        assert_eq!(o.status.code(), Some(3), "{}", text(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("readcount: PLAN-CHANGED"), "{out}");
        assert!(
            out.contains(
                r#"recorded : r1 (Workspace.Read, worktree, 1) {"op":"read","path":"notes.txt"}"#
            ),
            "{out}"
        );
        assert!(
            out.contains(
                r#"candidate: r1 (Workspace.Read, worktree, 1) {"op":"read","path":"other.txt"}"#
            ),
            "{out}"
        );
        assert!(
            out.contains("readcount: 1 same, 3 plan-changed — entries 2, 3, 5"),
            "{out}"
        );
        let o = env.world_at(
            &db,
            &[
                "replay",
                "--episode",
                "ep1",
                "--transition",
                &plan_t,
                "--report-only",
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let o = env.world_at(
            &db,
            &[
                "--json",
                "replay",
                "--episode",
                "ep1",
                "--transition",
                &plan_t,
            ],
        );
        assert_eq!(o.status.code(), Some(3), "{}", text(&o));
        let lines = candidate_json_lines(&o);
        let v: Vec<&serde_json::Value> = lines
            .iter()
            .filter(|l| l["verdict"] == "plan-changed")
            .collect();
        assert_eq!(v.len(), 3, "{lines:?}");
        assert_eq!(v[0]["entryIndex"], 2, "{}", v[0]);
        assert_eq!(v[0]["plan"]["recorded"][0]["payload"]["path"], "notes.txt");
        assert_eq!(v[0]["plan"]["candidate"][0]["payload"]["path"], "other.txt");
        assert_eq!(v[0]["plan"]["candidate"][0]["effect"], "Workspace.Read");
        assert!(
            v[0].get("outputDiff").is_none(),
            "the entry stops at the plan"
        );
        let s = &lines.last().unwrap()["summary"];
        assert_eq!(s["ok"], false, "{s}");
        assert_eq!(s["candidate"]["transitions"][0]["planChanged"], 3, "{s}");
        assert_eq!(
            s["candidate"]["transitions"][0]["changedEntries"],
            serde_json::json!([2, 3, 5]),
            "{s}"
        );

        // no-longer-refused: entry 6 refused a blank name; the candidate accepts it.
        let junit = env.p("nlr.xml");
        let o = env.world_at(
            &db,
            &[
                "replay",
                "--all",
                "--transition",
                &refuse_t,
                "--junit",
                junit.to_str().unwrap(),
            ],
        );
        assert_eq!(o.status.code(), Some(3), "{}", text(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            out.contains(r#"refuse: NO-LONGER-REFUSED (recorded refusal: "argument \"name\" must not be blank")"#),
            "{out}"
        );
        assert!(out.contains("+ /name: \"anonymous\""), "{out}");
        assert!(
            out.contains("refuse: 0 same, 1 no-longer-refused — entry 6"),
            "{out}"
        );
        let x = fs::read_to_string(&junit).unwrap();
        assert!(x.contains("<failure type=\"no-longer-refused\""), "{x}");
        assert_eq!(x.matches("<failure ").count(), 1, "{x}");
        let o = env.world_at(
            &db,
            &["--json", "replay", "--all", "--transition", &refuse_t],
        );
        assert_eq!(o.status.code(), Some(3), "{}", text(&o));
        let lines = candidate_json_lines(&o);
        let v = lines
            .iter()
            .find(|l| l["verdict"] == "no-longer-refused")
            .expect("a no-longer-refused line");
        assert_eq!(v["entryIndex"], 6, "{v}");
        assert_eq!(v["ok"], false, "{v}");
        assert_eq!(
            v["recordedRefusal"], "argument \"name\" must not be blank",
            "{v}"
        );
        assert_eq!(v["outputDiff"]["changed"][0]["path"], "/ok", "{v}");
        assert_ne!(
            v["recorded"]["transitionFn"],
            v["candidate"]["transitionFn"]
        );
        let s = &lines.last().unwrap()["summary"];
        assert_eq!(
            s["candidate"]["transitions"][0]["noLongerRefused"], 1,
            "{s}"
        );
    }
    // Every verdict kind's JSON matches the schema: the other four on the store.
    let cosmetic = env.p("cosmetic.ail");
    let src = fs::read_to_string(repo().join("fixtures/transitions/echo.ail")).unwrap();
    fs::write(&cosmetic, format!("-- cosmetic\n{src}")).unwrap();
    for t in [
        format!("echo={}", cosmetic.display()),
        echo_variant(&env, "c.ail", r#"encode(jo([kv("echoed", jb(true))]))"#),
        echo_variant(
            &env,
            "r.ail",
            r#"encode(jo([kv("ok", jb(false)), kv("refused", js("closed"))]))"#,
        ),
        echo_variant(&env, "f.ail", "1 + true"),
    ] {
        let o = env.world(&["--json", "replay", "--all", "--transition", &t]);
        let lines = candidate_json_lines(&o);
        assert!(
            lines.iter().any(|l| l["verdict"].is_string()),
            "{t}: {lines:?}"
        );
    }
}

/// The fixture manifest with absolute source paths, `edit` applied; written to `name`.
fn candidate_manifest(env: &Env, name: &str, edit: impl Fn(&mut serde_json::Value)) -> PathBuf {
    let mut m: serde_json::Value = serde_json::from_slice(
        &fs::read(repo().join("fixtures/transitions/manifest.json")).unwrap(),
    )
    .unwrap();
    for t in m.as_array_mut().unwrap() {
        let f = repo().join(t["transitionFnFile"].as_str().unwrap());
        t["transitionFnFile"] = serde_json::Value::from(f.to_str().unwrap());
    }
    edit(&mut m);
    let p = env.p(name);
    fs::write(&p, serde_json::to_vec(&m).unwrap()).unwrap();
    p
}

/// Issue 32 §1: `--candidate MANIFEST` (the `world publish` format) re-runs the entries of the
/// transitions it names with its sources, under the usual selection flags; an unchanged
/// manifest is all `same` (exit 0); its declared effects are the plan law's (DEC-CAND-2): a
/// plan asking for an undeclared effect is `now-fails (plan law broken)`.
#[test]
fn a_candidate_manifest_reruns_its_transitions_over_the_selection() {
    let env = mixed();
    let same = candidate_manifest(&env, "same.json", |_| {});
    let o = env.world(&["replay", "--all", "--candidate", same.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for want in [
        "echo: 1 same",
        "readcount: 4 same",
        "refuse: 1 same",
        "counter: 1 same",
    ] {
        assert!(out.contains(want), "{want}: {out}");
    }
    assert!(
        out.contains("candidate: 7 same, 0 changed, 0 failed"),
        "{out}"
    );
    // A changed readcount source over a range: only the selected entries get verdicts.
    let other = variant(
        &env,
        "readcount.ail",
        "other-path-m.ail",
        r#"kv("path", js(p))"#,
        r#"kv("path", js("other.txt"))"#,
    );
    let m = candidate_manifest(&env, "changed.json", |m| {
        m[3]["transitionFnFile"] = serde_json::Value::from(other.to_str().unwrap());
    });
    let o = env.world(&[
        "replay",
        "--from",
        "2",
        "--to",
        "3",
        "--candidate",
        m.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("readcount: 0 same, 2 plan-changed — entries 2, 3"),
        "{out}"
    );
    assert!(!out.contains("(entry 5)"), "{out}");
    // Declared effects from the manifest: a plan outside them breaks law L3.
    let undeclared = candidate_manifest(&env, "undeclared.json", |m| {
        m[3]["declaredEffects"] =
            serde_json::json!([{"effect": "Workspace.Write", "scope": "worktree", "cost": 1}]);
    });
    let o = env.world(&[
        "--json",
        "replay",
        "--episode",
        "ep1",
        "--candidate",
        undeclared.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let lines = candidate_json_lines(&o);
    let fails: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l["verdict"] == "now-fails")
        .collect();
    assert_eq!(
        fails.len(),
        3,
        "entries 2, 3 and 5 plan a Workspace.Read: {lines:?}"
    );
    assert!(fails
        .iter()
        .all(|f| f["failure"]["kind"] == "plan-law" && f["transition"] == "readcount"));
    // A manifest that is not one: exit 1, nothing replayed.
    let bad = env.p("bad.json");
    fs::write(&bad, "{not json").unwrap();
    let o = env.world(&["replay", "--all", "--candidate", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(o.stdout.is_empty(), "{}", text(&o));
}
