//! The tamper corpus of issue 13 §3: a store with a real history (genesis, publish, a session,
//! pure and effectful invocations) is copied once per tamper, edited directly with SQLite the
//! way an attacker with file access would, and `world verify --json` must fail (exit 3) with a
//! named finding. The broker and `world receipt` must refuse to act on what they read.

use crate::invoke_support;

use std::path::{Path, PathBuf};

use invoke_support::{repo, Env};
use rusqlite::{Connection, OptionalExtension};
use serde_json::Value;
use sha2::{Digest, Sha256};

const GRANTS: [&str; 3] = [
    "world.apply=world:9",
    "Workspace.Read=worktree:9",
    "Workspace.Write=worktree:9",
];

fn sha(b: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(b)))
}

struct Base {
    env: Env,
    tok: PathBuf,
    /// The cli: invocation id of the effectful write.
    write_id: String,
    /// The cli: invocation id of the pure echo.
    echo_id: String,
}

fn base() -> Base {
    let env = Env::new();
    let tok = env.mint("ep1", &GRANTS);
    let run = |id: &str, args: &str| -> String {
        let out = env.invoke(&tok, id, args, &["--json"]);
        assert!(
            out.status.success(),
            "{id}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["invocationId"].as_str().unwrap().to_string()
    };
    let echo_id = run("echo", r#"{"a":1}"#);
    let write_id = run("ailang-write", r#"{"path":"a.txt","content":"x"}"#);
    run("ailang-read", r#"{"path":"a.txt"}"#);
    env.verify_ok();
    Base {
        env,
        tok,
        write_id,
        echo_id,
    }
}

/// A copy of the base store in its own directory.
fn copy(base: &Base) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    std::fs::copy(&base.env.db, &db).unwrap();
    (dir, db)
}

fn world(db: &Path, args: &[&str]) -> std::process::Output {
    assert_cmd::Command::cargo_bin("world")
        .unwrap()
        .current_dir(repo())
        .env_remove("WORLD_SESSION")
        .env_remove("WORLD_DB")
        .env("NO_COLOR", "1")
        .arg("--db")
        .arg(db)
        .args(args)
        .output()
        .unwrap()
}

fn one(c: &Connection, sql: &str) -> String {
    c.query_row(sql, [], |r| r.get::<_, String>(0))
        .optional()
        .unwrap()
        .unwrap_or_else(|| panic!("no row for {sql}"))
}

/// Replace object `old`'s payload with `payload`, storing it under its correct new hash and
/// re-pointing every reference this helper knows (journal rows, log refs, world roots).
fn rehash(c: &Connection, old: &str, payload: &[u8]) -> String {
    let new = sha(payload);
    c.execute(
        "INSERT OR REPLACE INTO objects SELECT ?1, interface_hash_ref, semantic_id, provenance, ?2 FROM objects WHERE hash_ref = ?3",
        rusqlite::params![new, payload, old],
    )
    .unwrap();
    c.execute(
        "UPDATE journal SET object_ref = ?1 WHERE object_ref = ?2",
        [&new, old],
    )
    .unwrap();
    c.execute(
        "UPDATE log_entries SET transition_ref = ?1 WHERE transition_ref = ?2",
        [&new, old],
    )
    .unwrap();
    c.execute(
        "UPDATE worlds SET state_root = ?1 WHERE state_root = ?2",
        [&new, old],
    )
    .unwrap();
    new
}

fn payload(c: &Connection, r: &str) -> Vec<u8> {
    c.query_row(
        "SELECT payload FROM objects WHERE hash_ref = ?1",
        [r],
        |x| x.get(0),
    )
    .unwrap()
}

type Tamper = Box<dyn Fn(&Connection, &Base)>;

fn sql(s: &'static str) -> Tamper {
    Box::new(move |c, _| {
        c.execute_batch(s)
            .unwrap_or_else(|e| panic!("tamper {s}: {e}"))
    })
}

/// Re-hash the echo's commit outcome after `edit` changed its payload text (every reference
/// re-pointed, so only the outcome's own content is wrong).
fn outcome_edit(edit: fn(&str) -> String) -> Tamper {
    Box::new(move |c, b| {
        let o = one(
            c,
            &format!(
                "SELECT object_ref FROM journal WHERE invocation_id = '{}' AND kind = 'outcome'",
                b.echo_id
            ),
        );
        let p = String::from_utf8(payload(c, &o)).unwrap();
        let edited = edit(&p);
        assert_ne!(edited, p, "the edit changed nothing in {p}");
        rehash(c, &o, edited.as_bytes());
    })
}

/// `payload` with its `"logicalTime":N` member set to 1 (1970-01-01T00:00:01Z), earlier than
/// any entry the base store's coordinator wrote.
fn backdated(payload: &str) -> String {
    let key = "\"logicalTime\":";
    let at = payload.find(key).expect("a logicalTime member") + key.len();
    let digits = payload[at..].bytes().take_while(u8::is_ascii_digit).count();
    assert!(digits > 1, "logicalTime is not a number: {payload}");
    format!("{}1{}", &payload[..at], &payload[at + digits..])
}

fn corpus(ids: &[String]) -> Vec<(String, &'static str, Tamper)> {
    let mut v: Vec<(String, &'static str, Tamper)> = vec![
        ("log: delete entry 1".into(), "log_gap", sql("DELETE FROM log_entries WHERE entry_index = 1")),
        ("log: delete the last entry".into(), "journal_mismatch", sql("DELETE FROM log_entries WHERE entry_index = (SELECT MAX(entry_index) FROM log_entries)")),
        ("log: delete genesis".into(), "log_gap", sql("DELETE FROM log_entries WHERE entry_index = 0")),
        ("log: relabel a coordinator entry as client-written".into(), "journal_mismatch", sql("UPDATE log_entries SET written_by = 'client:x' WHERE entry_index = 2")),
        ("log: edit transitionFn".into(), "entry_hash_mismatch", sql("UPDATE log_entries SET transition_fn_ref = 'sha256:' || substr(hex(randomblob(32)), 1, 64) WHERE entry_index = 2")),
        ("log: edit interpreter".into(), "entry_hash_mismatch", sql("UPDATE log_entries SET interpreter_ref = (SELECT transition_fn_ref FROM log_entries WHERE entry_index = 2) WHERE entry_index = 3")),
        ("log: edit semanticsEpoch".into(), "entry_hash_mismatch", sql("UPDATE log_entries SET semantics_epoch = semantics_epoch + 1 WHERE entry_index = 1")),
        ("log: edit prevEntryHash".into(), "entry_hash_mismatch", sql("UPDATE log_entries SET prev_entry_hash_ref = (SELECT entry_hash_ref FROM log_entries WHERE entry_index = 0) WHERE entry_index = 3")),
        ("worlds: edit a stateRoot".into(), "world_mismatch", sql("UPDATE worlds SET state_root = (SELECT transition_ref FROM log_entries WHERE entry_index = 0) WHERE revision = 2")),
        ("worlds: edit a revision".into(), "world_mismatch", sql("UPDATE worlds SET revision = 7 WHERE revision = 1")),
        ("worlds: delete the head world".into(), "head_mismatch", sql("DELETE FROM worlds WHERE world_ref = (SELECT world_ref FROM store_heads)")),
        ("heads: move the head back to genesis".into(), "head_mismatch", sql("UPDATE store_heads SET world_ref = (SELECT world_ref FROM worlds WHERE revision = 0)")),
        ("heads: delete the selected head".into(), "head_mismatch", sql("DELETE FROM store_heads")),
        ("objects: delete an output".into(), "dangling_ref", sql("DELETE FROM objects WHERE hash_ref IN (SELECT state_root FROM worlds WHERE revision = 2)")),
        ("objects: delete an input".into(), "dangling_ref", sql("DELETE FROM objects WHERE semantic_id = 'world/invocation-input/v1'")),
        ("objects: delete a plan".into(), "dangling_ref", sql("DELETE FROM objects WHERE semantic_id = 'world/effect-plan/v1'")),
        ("objects: delete an effect record".into(), "dangling_ref", sql("DELETE FROM objects WHERE semantic_id = 'world/effect-record/v1'")),
        ("objects: delete the transition sources".into(), "dangling_ref", sql("DELETE FROM objects WHERE hash_ref IN (SELECT transition_fn_ref FROM log_entries WHERE entry_index > 0)")),
        ("objects: a malformed interfaceHash".into(), "bad_ref", sql("UPDATE objects SET interface_hash_ref = 'nope' WHERE semantic_id = 'world/invocation-input/v1'")),
        ("journal: delete a commit outcome".into(), "journal_gap", Box::new(|c, b| { c.execute("DELETE FROM journal WHERE invocation_id = ?1 AND kind = 'outcome'", [&b.echo_id]).unwrap(); })),
        ("journal: delete a commit intent".into(), "orphan_outcome", Box::new(|c, b| { c.execute("DELETE FROM journal WHERE invocation_id = ?1 AND kind = 'intent'", [&b.echo_id]).unwrap(); })),
        ("journal: delete a commit intent and outcome".into(), "journal_gap", Box::new(|c, b| { c.execute("DELETE FROM journal WHERE invocation_id = ?1", [&b.write_id]).unwrap(); })),
        ("journal: delete an effect intent and outcome".into(), "effect_gap", sql("DELETE FROM journal WHERE invocation_id = (SELECT MIN(invocation_id) FROM journal WHERE invocation_id LIKE 'effect:%')")),
        ("journal: delete an effect outcome".into(), "effect_gap", sql("DELETE FROM journal WHERE kind = 'outcome' AND invocation_id LIKE 'effect:%'")),
        ("journal: renumber an effect intent".into(), "journal_mismatch", sql("UPDATE journal SET invocation_id = 'effect:ep1:7' WHERE invocation_id = (SELECT MAX(invocation_id) FROM journal WHERE invocation_id LIKE 'effect:%')")),
        ("journal: point an outcome at another object".into(), "journal_mismatch", Box::new(|c, b| { c.execute("UPDATE journal SET object_ref = (SELECT object_ref FROM journal WHERE invocation_id = ?1 AND kind = 'outcome') WHERE invocation_id = ?2 AND kind = 'outcome'", [&b.echo_id, &b.write_id]).unwrap(); })),
        ("journal: a stray outcome".into(), "orphan_outcome", sql("INSERT INTO journal (seq, kind, invocation_id, object_ref) SELECT MAX(seq) + 1, 'outcome', 'rest:stray', (SELECT object_ref FROM journal WHERE kind = 'outcome' LIMIT 1) FROM journal")),
        ("sessions: raise a budget in grants_json".into(), "session_mismatch", sql("UPDATE session_credentials SET grants_json = replace(grants_json, '\"Budget\":9', '\"Budget\":500')")),
        ("sessions: extend the expiry".into(), "session_mismatch", sql("UPDATE session_credentials SET expires_at = expires_at + 86400")),
        ("sessions: move to another episode".into(), "session_mismatch", sql("UPDATE session_credentials SET episode_id = 'ep2'")),
        ("schema: drop approval_claims".into(), "schema", sql("DROP TABLE approval_claims")),
        ("schema: drop session_credentials".into(), "schema", sql("DROP TABLE session_credentials")),
        ("schema: drop commit_objects (the store no longer opens)".into(), "schema", sql("DROP TABLE commit_objects")),
        ("schema: drop an index".into(), "schema", sql("DROP INDEX objects_by_semantic_id")),
        ("registry: head names a missing object".into(), "dangling_ref", sql("UPDATE epoch_registry_heads SET object_ref = 'sha256:' || lower(hex(randomblob(32))) WHERE registry_name = 'world/transition-registry/v1'")),
        ("derived: delete the episode index rows".into(), "episode_index", sql("DELETE FROM world_records_by_episode")),
        ("derived: move an indexed record to another episode".into(), "episode_index", sql("UPDATE world_records_by_episode SET episode_id = 'ep2'")),
        ("commit_objects: a row naming a missing entry".into(), "dangling_ref", sql("INSERT INTO commit_objects (object_ref, entry_index) SELECT object_ref, 99 FROM commit_objects LIMIT 1")),
        ("forgery: a re-hashed output behind a client relabel".into(), "entry_hash_mismatch", Box::new(|c, _| {
            let rec = one(c, "SELECT transition_ref FROM log_entries WHERE entry_index = 1");
            let mut r: Value = serde_json::from_slice(&payload(c, &rec)).unwrap();
            let out = r["output"].as_str().unwrap().to_string();
            let forged = rehash(c, &out, br#"{"a":666}"#);
            r["output"] = Value::String(forged);
            rehash(c, &rec, &serde_json::to_vec(&r).unwrap());
            c.execute_batch("UPDATE log_entries SET written_by = 'client:x' WHERE entry_index = 1").unwrap();
        })),
        ("forgery: a re-hashed commit outcome".into(), "journal_mismatch", Box::new(|c, b| {
            let o = one(c, &format!("SELECT object_ref FROM journal WHERE invocation_id = '{}' AND kind = 'outcome'", b.echo_id));
            let p = String::from_utf8(payload(c, &o)).unwrap();
            let v: Value = serde_json::from_str(&p).unwrap();
            let fake = sha(b"no-such-world");
            rehash(c, &o, p.replace(v["resultRef"].as_str().unwrap(), &fake).as_bytes());
        })),
        // Issue 26: links other commands need.
        ("commit_objects: delete an entry's rows".into(), "commit_objects", sql("DELETE FROM commit_objects WHERE entry_index = 2")),
        ("schema: drop the worlds-by-log-head index".into(), "schema", sql("DROP INDEX world_worlds_by_log_head")),
        ("schema: drop a log_entries index".into(), "schema", sql("DROP INDEX log_entries_by_transition_ref")),
        ("forgery: a re-hashed outcome with status aborted".into(), "journal_mismatch", outcome_edit(|p| p.replace("\"status\":\"committed\"", "\"status\":\"aborted\""))),
        ("forgery: a re-hashed outcome with status abortedX".into(), "journal_mismatch", outcome_edit(|p| p.replace("\"status\":\"committed\"", "\"status\":\"abortedX\""))),
        ("forgery: a re-hashed outcome with an extra member".into(), "journal_mismatch", outcome_edit(|p| p.replacen('{', "{\"extra\":1,", 1))),
        ("forgery: a re-hashed outcome with another logicalTime".into(), "journal_mismatch", outcome_edit(|p| p.replacen("\"logicalTime\":", "\"logicalTime\":1", 1))),
        ("forgery: a coordinator entry's logical time moved backwards (intent and outcome re-hashed together)".into(), "logical_time", Box::new(|c, b| {
            for kind in ["intent", "outcome"] {
                let o = one(c, &format!("SELECT object_ref FROM journal WHERE invocation_id = '{}' AND kind = '{kind}'", b.write_id));
                let p = String::from_utf8(payload(c, &o)).unwrap();
                rehash(c, &o, backdated(&p).as_bytes());
            }
        })),
        ("forgery: a re-hashed effect intent with another ordinal".into(), "journal_mismatch", Box::new(|c, _| {
            let o = one(c, "SELECT object_ref FROM journal WHERE invocation_id LIKE 'effect:%' AND kind = 'intent' ORDER BY seq LIMIT 1");
            let p = String::from_utf8(payload(c, &o)).unwrap();
            rehash(c, &o, p.replacen("\"ordinal\":", "\"ordinal\":4", 1).as_bytes());
        })),
    ];
    // One payload flip per semantic id present in the base store.
    for sid in ids {
        let sid = sid.clone();
        v.push((
            format!("payload flip: {sid}"),
            "object_hash_mismatch",
            Box::new(move |c, _| {
                c.execute(
                    "UPDATE objects SET payload = CAST(payload || X'20' AS BLOB) WHERE hash_ref = (SELECT MIN(hash_ref) FROM objects WHERE semantic_id = ?1)",
                    [&sid],
                )
                .unwrap();
            }),
        ));
    }
    v
}

fn semantic_ids(db: &Path) -> Vec<String> {
    let c = Connection::open(db).unwrap();
    let mut st = c
        .prepare("SELECT DISTINCT semantic_id FROM objects ORDER BY semantic_id")
        .unwrap();
    let ids: Vec<String> = st
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    ids
}

#[test]
fn every_tamper_in_the_corpus_is_a_named_verify_finding() {
    let b = base();
    let corpus = corpus(&semantic_ids(&b.env.db));
    assert!(
        corpus.len() >= 40,
        "the corpus holds {} tampers",
        corpus.len()
    );
    let mut missed = Vec::new();
    for (name, want, tamper) in &corpus {
        let (_dir, db) = copy(&b);
        {
            let c = Connection::open(&db).unwrap();
            c.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
            tamper(&c, &b);
        }
        let out = world(&db, &["verify", "--json"]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let v: Value = serde_json::from_str(text.trim()).unwrap_or(Value::Null);
        let cats: Vec<String> = v["failures"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|f| f["category"].as_str().unwrap_or("").to_string())
                    .collect()
            })
            .unwrap_or_default();
        if out.status.code() != Some(3) || !cats.iter().any(|c| c == want) {
            missed.push(format!(
                "{name}: want {want}, exit {:?}, failures {cats:?}, stderr {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    assert!(
        missed.is_empty(),
        "tampers verify missed:\n{}",
        missed.join("\n")
    );
}

/// What the broker and `world receipt` read, they refuse when it was tampered with.
#[test]
fn the_broker_and_receipt_refuse_tampered_inputs() {
    let b = base();
    // A raised budget in the credential row: the session fails closed.
    let (_d, db) = copy(&b);
    Connection::open(&db)
        .unwrap()
        .execute_batch("UPDATE session_credentials SET grants_json = replace(grants_json, '\"Budget\":9', '\"Budget\":500')")
        .unwrap();
    let tok = b.tok.to_string_lossy().into_owned();
    let ws = b.env.ws.to_string_lossy().into_owned();
    let out = world(
        &db,
        &[
            "invoke",
            "echo",
            "--session",
            &tok,
            "--args",
            "{}",
            "--workspace-root",
            &ws,
        ],
    );
    assert_ne!(
        out.status.code(),
        Some(0),
        "a tampered session was honoured"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("mint record"), "{err}");
    // An edited commit outcome: the receipt re-hashes it and refuses.
    let (_d, db) = copy(&b);
    Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE objects SET payload = CAST(payload || X'20' AS BLOB) WHERE hash_ref = (SELECT object_ref FROM journal WHERE invocation_id = ?1 AND kind = 'outcome')",
            [&b.echo_id],
        )
        .unwrap();
    let out = world(&db, &["receipt", &b.echo_id, "--json"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("does not hash"),
        "{out:?}"
    );
    // `why` answers through the same receipt: no "all links verified" over an edited outcome.
    let out = world(&db, &["why", &b.echo_id]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "why over an edited outcome: {out:?}"
    );
    // An effect record edited in place: `effects`, `effects show` refuse to answer from it.
    let (_d, db) = copy(&b);
    Connection::open(&db)
        .unwrap()
        .execute_batch(
            "UPDATE objects SET payload = CAST(replace(CAST(payload AS TEXT), 'worktree', 'elsewhere') AS BLOB)
             WHERE semantic_id = 'world/effect-record/v1'",
        )
        .unwrap();
    for args in [vec!["effects"], vec!["effects", "show", "effect:ep1:0"]] {
        let out = world(&db, &args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {out:?}");
    }
    // An effect intent edited in place (cost 1 → 0) with the spend tally rebuilt: the broker
    // re-hashes every intent it counts and refuses, instead of refunding the budget.
    let (_d, db) = copy(&b);
    Connection::open(&db)
        .unwrap()
        .execute_batch(
            "DELETE FROM world_spend_tally;
             UPDATE objects SET payload = CAST(replace(CAST(payload AS TEXT), '\"cost\":1', '\"cost\":0') AS BLOB)
             WHERE hash_ref = (SELECT object_ref FROM journal WHERE kind = 'intent' AND invocation_id LIKE 'effect:%' ORDER BY seq DESC LIMIT 1)",
        )
        .unwrap();
    for args in [
        vec![
            "broker",
            "check",
            "--session",
            &tok,
            "Workspace.Read",
            "worktree",
            "1",
        ],
        vec![
            "invoke",
            "ailang-read",
            "--session",
            &tok,
            "--args",
            r#"{"path":"a.txt"}"#,
            "--workspace-root",
            &ws,
        ],
    ] {
        let out = world(&db, &args);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("re-hashes"),
            "{args:?}: {out:?}"
        );
    }
}

/// Effect records are content-addressed and carry no episode: the same write with the same
/// budget in two episodes is one record that two effect outcomes name. Such a store is not
/// tampered, so `verify` must pass (it used to keep one outcome per record and report the
/// other episode's effect as `marker_missing`).
#[test]
fn identical_effects_in_two_episodes_share_a_record_and_verify_clean() {
    let env = invoke_support::Env::new();
    for ep in ["e1", "e2", "e3"] {
        let tok = env.mint(ep, &["Workspace.Write=worktree:5"]);
        // The effect request carries the call's time (unix seconds): one fixed instant, so
        // the three requests — and so the records — are byte-identical.
        let tok = tok.to_string_lossy().into_owned();
        let out = env
            .cmd(&[
                "invoke",
                "ailang-write",
                "--session",
                &tok,
                "--args",
                r#"{"path":"same.txt","content":"x"}"#,
            ])
            .env("WORLD_TEST_NOW", "1796181636")
            .output()
            .expect("run world");
        assert!(
            out.status.success(),
            "{ep}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let c = env.conn();
    let records = one(
        &c,
        "SELECT CAST(COUNT(*) AS TEXT) FROM objects WHERE semantic_id = 'world/effect-record/v1'",
    );
    assert_eq!(records, "1", "the three effects share one record object");
    let out = world(&env.db, &["verify", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // `world effects` lists the shared record once per effect, each under its own episode
    // and intent; `--episode` finds every one of them.
    let all = world(&env.db, &["effects", "--json"]);
    let rows: Vec<Value> = String::from_utf8_lossy(&all.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 3, "{rows:?}");
    for ep in ["e1", "e2", "e3"] {
        let out = world(&env.db, &["effects", "--episode", ep, "--json"]);
        let rows: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(rows.len(), 1, "{ep}: {rows:?}");
        assert_eq!(rows[0]["episodeId"], ep, "{rows:?}");
        assert_eq!(rows[0]["intentId"], format!("effect:{ep}:0"), "{rows:?}");
    }
}

fn effects_of(db: &Path, ep: &str) -> (Option<i32>, String) {
    let out = world(db, &["effects", "--episode", ep, "--json"]);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn verify_categories(db: &Path) -> (Option<i32>, Vec<String>, Vec<String>) {
    let out = world(db, &["verify", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let cats = |k: &str| -> Vec<String> {
        v[k].as_array()
            .map(|a| {
                a.iter()
                    .map(|f| f["category"].as_str().unwrap_or("").to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    (out.status.code(), cats("failures"), cats("warnings"))
}

/// The episode index behind `world effects --episode` (DEC-PERF-8) is derived state: an edited
/// state row is not used (the listing falls back to reading every record, same answer) and is
/// rebuilt by the next commit; rows that differ from the records are a `verify` failure; a row
/// naming a record under the wrong episode never lists it there.
#[test]
fn the_episode_index_is_checked_and_never_trusted() {
    let b = base();
    let (code, want) = effects_of(&b.env.db, "ep1");
    assert_eq!(code, Some(0));
    assert_eq!(want.lines().count(), 2, "{want}");
    let rows = one(
        &b.env.conn(),
        "SELECT CAST(count(*) AS TEXT) FROM world_records_by_episode WHERE episode_id = 'ep1'",
    );
    assert_eq!(rows, "2", "the two effectful invocations are indexed");

    // An edited state row (rowid moved back, checksum not recomputed): not trusted.
    let (_d, db) = copy(&b);
    Connection::open(&db)
        .unwrap()
        .execute_batch(
            "DELETE FROM world_records_by_episode;
             UPDATE world_records_by_episode_state SET valid_to_rowid = 1",
        )
        .unwrap();
    assert_eq!(effects_of(&db, "ep1"), (Some(0), want.clone()));
    let (code, fails, warns) = verify_categories(&db);
    assert_eq!(code, Some(0), "{fails:?}");
    assert!(
        warns.iter().any(|w| w == "episode_index_stale"),
        "{warns:?}"
    );
    // The next commit rebuilds it; verify is clean again.
    let tok = b.tok.to_string_lossy().into_owned();
    let ws = b.env.ws.to_string_lossy().into_owned();
    let out = world(
        &db,
        &[
            "invoke",
            "echo",
            "--session",
            &tok,
            "--args",
            "{}",
            "--workspace-root",
            &ws,
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let (code, fails, warns) = verify_categories(&db);
    assert_eq!(code, Some(0), "{fails:?}");
    assert!(
        !warns.iter().any(|w| w.starts_with("episode_index")),
        "{warns:?}"
    );
    assert_eq!(
        one(
            &Connection::open(&db).unwrap(),
            "SELECT CAST(count(*) AS TEXT) FROM world_records_by_episode WHERE episode_id = 'ep1'"
        ),
        "2"
    );
    assert_eq!(effects_of(&db, "ep1"), (Some(0), want.clone()));

    // Rows moved to another episode under a valid state: ep2 lists none of ep1's records
    // (each row is re-read and must decode to a record of that episode); verify fails.
    let (_d, db) = copy(&b);
    Connection::open(&db)
        .unwrap()
        .execute_batch("UPDATE world_records_by_episode SET episode_id = 'ep2'")
        .unwrap();
    let (code, out) = effects_of(&db, "ep2");
    assert_eq!(code, Some(0));
    assert!(
        out.trim().is_empty(),
        "ep1's records listed under ep2: {out}"
    );
    let (code, fails, _) = verify_categories(&db);
    assert_eq!(code, Some(3));
    assert!(fails.iter().any(|f| f == "episode_index"), "{fails:?}");

    // One row deleted under a valid state (the tester's F10: the denied effect's invocation
    // vanished from the listing): the episode's rows no longer agree with its sums row, so
    // the listing reads every record instead — same answer; verify fails.
    let (_d, db) = copy(&b);
    let victim = one(
        &Connection::open(&db).unwrap(),
        "SELECT record_ref FROM world_records_by_episode WHERE episode_id = 'ep1' LIMIT 1",
    );
    Connection::open(&db)
        .unwrap()
        .execute(
            "DELETE FROM world_records_by_episode WHERE record_ref = ?1",
            [&victim],
        )
        .unwrap();
    assert_eq!(effects_of(&db, "ep1"), (Some(0), want.clone()));
    let (code, fails, _) = verify_categories(&db);
    assert_eq!(code, Some(3));
    assert!(fails.iter().any(|f| f == "episode_index"), "{fails:?}");
    // A forged row added to the episode (naming another record) is not trusted either.
    let (_d, db) = copy(&b);
    Connection::open(&db)
        .unwrap()
        .execute_batch(
            "INSERT INTO world_records_by_episode (episode_id, record_ref)
             SELECT 'ep1', hash_ref FROM objects WHERE semantic_id = 'world/invocation-input/v1' LIMIT 1",
        )
        .unwrap();
    assert_eq!(effects_of(&db, "ep1"), (Some(0), want.clone()));
    // An edited sums row: readers of the episode fall back; verify fails; the next commit
    // that indexes a record of the episode recomputes it, and verify is clean again.
    let (_d, db) = copy(&b);
    Connection::open(&db)
        .unwrap()
        .execute_batch("UPDATE world_records_by_episode_sums SET n = n + 5")
        .unwrap();
    assert_eq!(effects_of(&db, "ep1"), (Some(0), want.clone()));
    let (code, fails, _) = verify_categories(&db);
    assert_eq!(code, Some(3));
    assert!(fails.iter().any(|f| f == "episode_index"), "{fails:?}");
    let out = world(
        &db,
        &[
            "invoke",
            "ailang-read",
            "--session",
            &tok,
            "--args",
            r#"{"path":"a.txt"}"#,
            "--workspace-root",
            &ws,
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let (code, fails, _) = verify_categories(&db);
    assert_eq!(code, Some(0), "{fails:?}");
    assert_eq!(effects_of(&db, "ep1").1.lines().count(), 3);

    // A dropped table loses nothing: the listing reads every record instead.
    let (_d, db) = copy(&b);
    Connection::open(&db)
        .unwrap()
        .execute_batch(
            "DROP TABLE world_records_by_episode; DROP TABLE world_records_by_episode_state",
        )
        .unwrap();
    assert_eq!(effects_of(&db, "ep1"), (Some(0), want));
    let (code, fails, _) = verify_categories(&db);
    assert_eq!(code, Some(0), "{fails:?}");
}

/// `world verify` while another process commits (the tester's F12): its checks read without
/// holding the store, so a commit between two of them once made a false `journal_gap` or
/// `episode_index` finding (exit 3) that the next, quiet verify did not repeat. A run that
/// found something while the store changed is now repeated on one snapshot, so no verify here
/// may report anything: every commit is a complete, valid one.
#[test]
fn verify_during_concurrent_commits_reports_nothing() {
    let b = base();
    let db = b.env.db.clone();
    let tok = b.tok.to_string_lossy().into_owned();
    let ws = b.env.ws.to_string_lossy().into_owned();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (db, stop) = (db.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) && n < 60 {
                // Alternate an effectful read and a pure echo (distinct args: a new entry each).
                let (id, args) = if n % 2 == 0 {
                    ("ailang-read", r#"{"path":"a.txt"}"#.to_string())
                } else {
                    ("echo", format!(r#"{{"n":{n}}}"#))
                };
                world(
                    &db,
                    &[
                        "--wait-lock",
                        "10",
                        "invoke",
                        id,
                        "--session",
                        &tok,
                        "--args",
                        &args,
                        "--workspace-root",
                        &ws,
                    ],
                );
                n += 1;
            }
        })
    };
    let mut bad = Vec::new();
    for _ in 0..30 {
        let (code, fails, warns) = verify_categories(&db);
        if code != Some(0) || !fails.is_empty() || !warns.is_empty() {
            bad.push((code, fails, warns));
        }
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    writer.join().unwrap();
    assert!(
        bad.is_empty(),
        "verify reported findings under a concurrent writer: {bad:?}"
    );
    let (code, fails, warns) = verify_categories(&db);
    assert_eq!((code, fails, warns), (Some(0), vec![], vec![]));
}

/// `world log`'s view (`world_log_view`, DEC-PERF-11) is derived state: rows edited without
/// their seal or deleted are never used (the table prints the same bytes, decoded from each
/// entry's objects), and `verify` warns about unsealed rows; entries another writer appended
/// without rows print the same and the next commit fills them; a store from before the table
/// (dropped here) prints the same read-only and gets it back, filled, on the next commit.
#[test]
fn the_log_view_is_checked_and_never_trusted() {
    let b = base();
    let log = |db: &Path, args: &[&str]| -> String {
        let out = world(db, args);
        assert!(out.status.success(), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let want = log(&b.env.db, &["log"]);
    let want_ep = log(&b.env.db, &["log", "--episode", "ep1", "--reverse"]);
    assert!(want.lines().count() >= 5, "{want}");
    let c = b.env.conn();
    let entries = one(&c, "SELECT CAST(count(*) AS TEXT) FROM log_entries");
    let viewed = one(&c, "SELECT CAST(count(*) AS TEXT) FROM world_log_view");
    assert_eq!(viewed, entries, "every entry `world` wrote has its row");
    let invoke = |db: &Path| {
        let tok = b.tok.to_string_lossy().into_owned();
        let ws = b.env.ws.to_string_lossy().into_owned();
        let out = world(
            db,
            &[
                "invoke",
                "echo",
                "--session",
                &tok,
                "--args",
                "{}",
                "--workspace-root",
                &ws,
            ],
        );
        assert!(out.status.success(), "{out:?}");
    };
    // A copy of the base store with `sql` applied to it.
    let edited = |sql: &str| {
        let (d, db) = copy(&b);
        Connection::open(&db).unwrap().execute_batch(sql).unwrap();
        (d, db)
    };
    // `world verify` exits 0 and says nothing about the view.
    let verifies_without_view_findings = |db: &Path| {
        let (code, fails, warns) = verify_categories(db);
        assert_eq!(code, Some(0), "{fails:?}");
        assert!(
            !warns.iter().any(|w| w.starts_with("log_view")),
            "{warns:?}"
        );
    };

    // Rows edited without their seal: not used; verify warns, exit 0.
    let (_d, db) = edited(
        "UPDATE world_log_view SET episode_id = 'ep2', ok = 0, logical_time = 0
          WHERE invocation_id IS NOT NULL",
    );
    assert_eq!(log(&db, &["log"]), want);
    assert_eq!(log(&db, &["log", "--episode", "ep1", "--reverse"]), want_ep);
    let (code, fails, warns) = verify_categories(&db);
    assert_eq!(code, Some(0), "{fails:?}");
    assert!(warns.iter().any(|w| w == "log_view_stale"), "{warns:?}");

    // Rows deleted: the same output, nothing to report.
    let (_d, db) = edited("DELETE FROM world_log_view WHERE entry_index % 2 = 1");
    assert_eq!(log(&db, &["log"]), want);
    verifies_without_view_findings(&db);

    // The last two entries as another writer appends them: no rows, `world`'s last commit
    // before them. Same output; the next commit fills them and writes its own.
    let (_d, db) = edited(
        "DELETE FROM world_log_view WHERE entry_index >= (SELECT max(entry_index) - 1 FROM log_entries);
         UPDATE world_log_view_state SET next_index = (SELECT max(entry_index) - 1 FROM log_entries)",
    );
    assert_eq!(log(&db, &["log"]), want);
    invoke(&db);
    let c = Connection::open(&db).unwrap();
    assert_eq!(
        one(&c, "SELECT CAST(count(*) AS TEXT) FROM world_log_view"),
        one(&c, "SELECT CAST(count(*) AS TEXT) FROM log_entries")
    );
    let after = log(&db, &["log"]);
    assert!(after.starts_with(&want), "{after}");
    assert_eq!(after.lines().count(), want.lines().count() + 1);
    verifies_without_view_findings(&db);

    // A store from before the table: read-only commands print the same and create nothing;
    // the next writable open creates the tables and its commit fills them.
    let (_d, db) = edited("DROP TABLE world_log_view; DROP TABLE world_log_view_state");
    assert_eq!(log(&db, &["log"]), want);
    assert_eq!(log(&db, &["log", "--episode", "ep1", "--reverse"]), want_ep);
    let (code, fails, _) = verify_categories(&db);
    assert_eq!(code, Some(0), "{fails:?}");
    assert_eq!(
        one(
            &Connection::open(&db).unwrap(),
            "SELECT CAST(count(*) AS TEXT) FROM sqlite_master WHERE name LIKE 'world_log_view%'"
        ),
        "0",
        "read-only commands create no table"
    );
    invoke(&db);
    let c = Connection::open(&db).unwrap();
    assert_eq!(
        one(&c, "SELECT CAST(count(*) AS TEXT) FROM world_log_view"),
        one(&c, "SELECT CAST(count(*) AS TEXT) FROM log_entries")
    );
    assert!(log(&db, &["log"]).starts_with(&want));
    verifies_without_view_findings(&db);
}

/// Issue 26 §3: the readers refuse what `verify` would fail — `receipt` never prints a
/// `resultRef` that names no world, and `replay` stops (exit 3) on a log gap unless told to
/// skip it.
#[test]
fn readers_refuse_what_verify_would_fail() {
    let b = base();
    // A commit outcome re-hashed (hash valid) to name a world that does not exist.
    let (_d, db) = copy(&b);
    {
        let c = Connection::open(&db).unwrap();
        let o = one(
            &c,
            &format!(
                "SELECT object_ref FROM journal WHERE invocation_id = '{}' AND kind = 'outcome'",
                b.echo_id
            ),
        );
        let p = String::from_utf8(payload(&c, &o)).unwrap();
        let v: Value = serde_json::from_str(&p).unwrap();
        let fake = sha(b"no-such-world");
        rehash(
            &c,
            &o,
            p.replace(v["resultRef"].as_str().unwrap(), &fake)
                .as_bytes(),
        );
    }
    let out = world(&db, &["receipt", &b.echo_id]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains(&sha(b"no-such-world")),
        "receipt printed a resultRef naming no world: {out:?}"
    );
    // A deleted log entry: replay --all exits 3 before replaying anything; --allow-gaps skips.
    let (_d, db) = copy(&b);
    Connection::open(&db)
        .unwrap()
        .execute_batch("PRAGMA foreign_keys = OFF; DELETE FROM log_entries WHERE entry_index = 2")
        .unwrap();
    let out = world(&db, &["replay", "--all"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let out = world(&db, &["replay", "--all", "--allow-gaps"]);
    assert_ne!(out.status.code(), Some(3), "{out:?}");
}

/// Issue 26 §2: a credential row inserted with no mint record is `unattested` — a warning
/// from `verify`, shown as such by `session list`, and refused by the broker unless
/// `--allow-unattested`.
#[test]
fn an_inserted_credential_row_is_unattested_and_refused() {
    let b = base();
    let (dir, db) = copy(&b);
    let token = "ab".repeat(32);
    let id = hex::encode(Sha256::digest(token.as_bytes()));
    Connection::open(&db)
        .unwrap()
        .execute(
            "INSERT INTO session_credentials (credential_id, episode_id, grants_json, expires_at, created_at)
             SELECT ?1, episode_id, replace(grants_json, '\"Budget\":9', '\"Budget\":100000'), expires_at, created_at
             FROM session_credentials LIMIT 1",
            [&id],
        )
        .unwrap();
    let tok = dir.path().join("forged.tok");
    std::fs::write(&tok, &token).unwrap();
    let tok = tok.to_str().unwrap();
    let list = world(&db, &["session", "list", "--json"]);
    let text = String::from_utf8_lossy(&list.stdout).into_owned();
    assert!(
        text.lines()
            .filter(|l| l.contains(&id[..12]))
            .any(|l| l.contains("unattested")),
        "session list does not mark the forged row: {text}"
    );
    let check = [
        "broker",
        "check",
        "--session",
        tok,
        "Workspace.Read",
        "worktree",
        "1",
    ];
    let out = world(&db, &check);
    assert_ne!(
        out.status.code(),
        Some(0),
        "the broker honoured a forged row: {out:?}"
    );
    let mut allowed = check.to_vec();
    allowed.push("--allow-unattested");
    let out = world(&db, &allowed);
    assert_eq!(out.status.code(), Some(0), "--allow-unattested: {out:?}");
    let v = world(&db, &["verify", "--json"]);
    assert!(
        String::from_utf8_lossy(&v.stdout).contains("unattested"),
        "verify does not report the forged row: {v:?}"
    );
    for out in [&list, &v] {
        let all = [out.stdout.as_slice(), out.stderr.as_slice()].concat();
        assert!(
            !String::from_utf8_lossy(&all).contains(&token),
            "a token was echoed"
        );
    }
}

/// Issue 26 §2, `entry.transition_fn`: a transition republished with another source, then the
/// old source object (the `transitionFn` of the entries before the republish) deleted. `verify`
/// fails (exit 3, `dangling_ref` naming that source) on the store and on an episode bundle
/// exported before the deletion and tampered the same way, as `replay --all` does.
#[test]
fn a_deleted_source_of_a_republished_transition_fails_verify_on_a_store_and_a_bundle() {
    let b = base();
    let env = &b.env;
    let old_fn = one(
        &env.conn(),
        "SELECT transition_fn_ref FROM log_entries WHERE entry_index = 2",
    );
    // Republish `echo` with a cosmetically different source and invoke it again.
    let mut m: Value = serde_json::from_slice(
        &std::fs::read(repo().join("fixtures/transitions/test/manifest.json")).unwrap(),
    )
    .unwrap();
    let echo = m
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|t| t["id"] == "echo")
        .expect("the test manifest publishes echo");
    let src =
        std::fs::read_to_string(repo().join(echo["transitionFnFile"].as_str().unwrap())).unwrap();
    let new_src = env.root.join("echo-v2.ail");
    std::fs::write(&new_src, format!("-- republished\n{src}")).unwrap();
    echo["transitionFnFile"] = Value::from(new_src.to_str().unwrap());
    let manifest = env.root.join("m2.json");
    std::fs::write(&manifest, serde_json::to_vec(&m).unwrap()).unwrap();
    env.ok(&["publish", "--manifest", manifest.to_str().unwrap(), "--yes"]);
    let out = env.invoke(&b.tok, "echo", r#"{"b":2}"#, &[]);
    assert!(out.status.success(), "{out:?}");
    let fns: Vec<String> = {
        let c = env.conn();
        let mut st = c
            .prepare("SELECT DISTINCT transition_fn_ref FROM log_entries l JOIN objects o ON o.hash_ref = l.transition_ref WHERE o.semantic_id LIKE 'world/invocation-record/%'")
            .unwrap();
        let v = st
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        v
    };
    assert!(fns.contains(&old_fn) && fns.len() >= 2, "{fns:?}");
    env.verify_ok();
    let bundle = env.root.join("ep1.bundle.db");
    env.ok(&["export-episode", "ep1", "--out", bundle.to_str().unwrap()]);
    assert_eq!(world(&bundle, &["verify"]).status.code(), Some(0));
    for db in [&env.db, &bundle] {
        let c = Connection::open(db).unwrap();
        c.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
        let n = c
            .execute("DELETE FROM objects WHERE hash_ref = ?1", [&old_fn])
            .unwrap();
        assert_eq!(n, 1, "{} holds the old source", db.display());
        drop(c);
        let out = world(db, &["verify", "--json"]);
        assert_eq!(
            out.status.code(),
            Some(3),
            "verify {}: {out:?}",
            db.display()
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let hit =
            v["failures"].as_array().unwrap().iter().any(|f| {
                f["category"] == "dangling_ref" && f["ref"].as_str() == Some(old_fn.as_str())
            });
        assert!(hit, "verify {} does not name the source: {v}", db.display());
        let out = world(db, &["replay", "--all"]);
        assert_eq!(
            out.status.code(),
            Some(3),
            "replay {}: {out:?}",
            db.display()
        );
    }
}

/// Issue 26 §2: the links table of docs/STORE-CHECKS.md (our store-format §13 addendum) and
/// `store::verify::links::LINKS` enumerate the same links, row for row and cell for cell.
#[test]
fn the_store_links_doc_table_is_the_code_table() {
    use world::store::verify::links::LINKS;
    let doc = std::fs::read_to_string(repo().join("docs/STORE-CHECKS.md")).unwrap();
    let rows: Vec<Vec<String>> = doc
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect();
    let code: Vec<Vec<String>> = LINKS
        .iter()
        .map(|l| {
            vec![
                format!("`{}`", l.id),
                l.from.to_string(),
                l.to.to_string(),
                l.readers.to_string(),
                format!("`{}`", l.finding),
                if l.warning { "warning" } else { "failure" }.to_string(),
            ]
        })
        .collect();
    for (i, (d, c)) in rows.iter().zip(&code).enumerate() {
        assert_eq!(d, c, "row {i} of docs/STORE-CHECKS.md differs from LINKS");
    }
    assert_eq!(
        rows.len(),
        code.len(),
        "docs/STORE-CHECKS.md lists {} links, LINKS {}",
        rows.len(),
        code.len()
    );
    let ids: std::collections::HashSet<_> = LINKS.iter().map(|l| l.id).collect();
    assert_eq!(ids.len(), LINKS.len(), "link ids are unique");
}
