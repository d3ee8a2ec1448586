//! `world mission … --ledger FILE|URL` through the binary (issue 18 §2): missions in a
//! standalone SQLite ledger file and in PostgreSQL, with the store file's guarantees — the
//! seed's example byte for byte (the same output on both backends), a rejection that leaves
//! the ledger unchanged, idempotent resends, 8 processes racing for one mission budget on
//! PostgreSQL never admitting past it, and bad URLs, wrong passwords, missing or foreign
//! schemas failing clearly without partial state.
//!
//! The PostgreSQL server is the throwaway one of `tests/pgtest` (skipped with a message when
//! PostgreSQL is not installed, a failure under `CI=true`).

use crate::pgtest;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use assert_cmd::prelude::*;
use serde_json::{json, Value};

const SEED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/mission/seed");
const LIMITS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/limits/example.json");

const MISSION_TABLES: [&str; 11] = [
    "mission_schema",
    "mission_missions",
    "mission_journal",
    "mission_requests",
    "mission_runs",
    "mission_grants",
    "mission_operations",
    "mission_approvals",
    "mission_attempts",
    "mission_violations",
    "mission_outbox",
];

/// `world ARGS` with `WORLD_LEDGER=ledger` and a store path that does not exist (a ledger
/// needs no World store).
fn world(dir: &Path, ledger: &str, args: &[&str]) -> Output {
    pgtest::ledger_world(dir, &dir.join("no-store.db"), ledger)
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `world mission ARGS`, asserting the exit code; stdout.
fn mission(dir: &Path, ledger: &str, args: &[&str], code: i32) -> String {
    let mut full = vec!["mission"];
    full.extend_from_slice(args);
    let o = world(dir, ledger, &full);
    assert_eq!(
        o.status.code(),
        Some(code),
        "world {full:?}\nstdout: {}\nstderr: {}",
        text(&o.stdout),
        text(&o.stderr)
    );
    // Data on stdout; a failure says why on stderr only (the one CLI convention).
    if code == 0 {
        return text(&o.stdout);
    }
    if args.contains(&"--json") {
        // The one error envelope; its `error` member carries the rejection's members.
        let v: Value = serde_json::from_str(text(&o.stdout).trim()).unwrap();
        assert_eq!(v["error"]["exitCode"], code, "{v}");
        return v["error"].to_string();
    }
    if code != 4 {
        // `verify` findings (exit 3) are data: stdout.
        return text(&o.stdout);
    }
    assert!(
        o.stdout.is_empty(),
        "a rejection printed data: {}",
        text(&o.stdout)
    );
    text(&o.stderr)
}

fn step(n: u8) -> String {
    format!("{SEED}/step{n}.json")
}

/// Every mission row of a ledger (file or PostgreSQL), for "unchanged" checks.
fn dump(ledger: &str) -> Vec<String> {
    let mut out = Vec::new();
    if ledger.starts_with("postgres") {
        let mut c = pgtest::Server::client(ledger);
        for t in MISSION_TABLES {
            let exists: bool = c
                .query_one("SELECT to_regclass($1) IS NOT NULL", &[&t])
                .unwrap()
                .get(0);
            if !exists {
                continue;
            }
            for r in c
                .query(&format!("SELECT t::text FROM {t} t ORDER BY 1"), &[])
                .unwrap()
            {
                out.push(format!("{t}: {}", r.get::<_, String>(0)));
            }
        }
    } else {
        let conn = rusqlite::Connection::open(ledger).unwrap();
        for t in MISSION_TABLES {
            let Ok(mut stmt) = conn.prepare(&format!("SELECT * FROM {t} ORDER BY 1, 2")) else {
                continue;
            };
            let n = stmt.column_count();
            let rows: Vec<String> = stmt
                .query_map([], |r| {
                    let mut s = t.to_string();
                    for i in 0..n {
                        s.push_str(&format!("|{:?}", r.get_ref(i)?));
                    }
                    Ok(s)
                })
                .unwrap()
                .map(Result::unwrap)
                .collect();
            out.extend(rows);
        }
    }
    out
}

/// The journal entry bytes of mission `m`, in order.
fn entries(ledger: &str) -> Vec<Vec<u8>> {
    if ledger.starts_with("postgres") {
        let mut c = pgtest::Server::client(ledger);
        c.query(
            "SELECT entry FROM mission_journal WHERE mission_id = 'm' ORDER BY seq",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get::<_, Vec<u8>>(0))
        .collect()
    } else {
        let conn = rusqlite::Connection::open(ledger).unwrap();
        let mut stmt = conn
            .prepare("SELECT entry FROM mission_journal WHERE mission_id = 'm' ORDER BY seq")
            .unwrap();
        stmt.query_map([], |r| r.get::<_, Vec<u8>>(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }
}

/// The seed's example (missions.md §5) on `ledger`, and the idempotency rules; the transcript
/// of every stdout, for comparing backends.
fn seed_session(dir: &Path, ledger: &str) -> Vec<String> {
    let mut t = Vec::new();
    let o = world(
        dir,
        ledger,
        &["limits", "init", "--config", LIMITS, "--yes", "--now", "0"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // No missions yet: an empty list, a missing mission.
    t.push(mission(dir, ledger, &["list", "--json"], 0));
    let o = world(dir, ledger, &["mission", "report", "m", "--now", "10"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("MISSION_NOT_FOUND"),
        "{}",
        text(&o.stderr)
    );
    t.push(mission(
        dir,
        ledger,
        &[
            "create",
            "--contract",
            &format!("{SEED}/contract.json"),
            "--yes",
            "--now",
            "0",
        ],
        0,
    ));
    assert!(
        t[1].starts_with("OK mission=m contractRef=sha256:"),
        "{}",
        t[1]
    );
    // A second create of the same mission: MISSION_EXISTS, nothing written.
    let before = dump(ledger);
    t.push(mission(
        dir,
        ledger,
        &[
            "create",
            "--contract",
            &format!("{SEED}/contract.json"),
            "--yes",
            "--now",
            "0",
        ],
        4,
    ));
    assert!(t[2].starts_with("MISSION_EXISTS"), "{}", t[2]);
    assert_eq!(dump(ledger), before);
    for n in 1..=3 {
        let out = mission(
            dir,
            ledger,
            &["apply", "m", "--command", &step(n), "--now", "10"],
            0,
        );
        assert!(
            out.starts_with(&format!("OK revision={n} seq={n}")),
            "{out}"
        );
        t.push(out);
    }
    // The seed's step 4: BUDGET_EXHAUSTED, the ledger unchanged.
    let before = dump(ledger);
    let out = mission(
        dir,
        ledger,
        &["apply", "m", "--command", &step(4), "--now", "10"],
        4,
    );
    assert_eq!(out.trim(), "BUDGET_EXHAUSTED budget=100 reserved=80 settled=0 requested=30: the mission budget would be exceeded");
    t.push(out);
    let j: Value = serde_json::from_str(
        mission(
            dir,
            ledger,
            &["--json", "apply", "m", "--command", &step(4), "--now", "10"],
            4,
        )
        .trim(),
    )
    .unwrap();
    assert_eq!(
        (
            j["code"].as_str(),
            j["reserved"].as_str(),
            j["requested"].as_str()
        ),
        (Some("BUDGET_EXHAUSTED"), Some("80"), Some("30"))
    );
    assert_eq!(dump(ledger), before, "journal, state and outbox unchanged");
    // An identical resend answers the recorded result and writes nothing.
    let out = mission(
        dir,
        ledger,
        &["apply", "m", "--command", &step(3), "--now", "10"],
        0,
    );
    assert!(
        out.starts_with("OK revision=3 seq=3") && out.contains("(resend: the recorded result)"),
        "{out}"
    );
    t.push(out);
    assert_eq!(dump(ledger), before, "a resend writes nothing");
    // An explicit request id reused for another command: REQUEST_ID_REUSED.
    t.push(mission(
        dir,
        ledger,
        &[
            "start-run",
            "m",
            "--run",
            "r2",
            "--request-id",
            "q",
            "--now",
            "10",
        ],
        0,
    ));
    let before = dump(ledger);
    let out = mission(
        dir,
        ledger,
        &[
            "start-run",
            "m",
            "--run",
            "r3",
            "--request-id",
            "q",
            "--now",
            "10",
        ],
        4,
    );
    assert!(out.starts_with("REQUEST_ID_REUSED"), "{out}");
    t.push(out);
    assert_eq!(dump(ledger), before);
    // The journal holds the seed's command, canonicalised, byte for byte.
    let e = entries(ledger);
    assert_eq!(e.len(), 4);
    let v: Value = serde_json::from_slice(&e[2]).unwrap();
    let seed: Value = serde_json::from_slice(&std::fs::read(step(3)).unwrap()).unwrap();
    assert_eq!(v["command"], seed);
    let r: Value = serde_json::from_str(
        mission(dir, ledger, &["--json", "report", "m", "--now", "10"], 0).trim(),
    )
    .unwrap();
    assert_eq!(r["reserved"], json!("80"));
    assert_eq!(r["remaining"], json!("20"));
    assert_eq!(r["outstanding"][0]["attemptId"], json!("a"));
    t.push(r.to_string());
    let log = mission(dir, ledger, &["log", "m"], 0);
    assert_eq!(log.lines().count(), 4);
    t.push(mission(dir, ledger, &["--json", "log", "m"], 0));
    t.push(mission(dir, ledger, &["--json", "list"], 0));
    let o = world(dir, ledger, &["mission", "verify"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    assert!(
        !dir.join("no-store.db").exists(),
        "a ledger-held mission needs no World store, and none was created"
    );
    t
}

#[test]
fn the_seeds_example_on_a_ledger_file() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger.db").display().to_string();
    seed_session(dir.path(), &ledger);
}

#[test]
fn a_missing_or_foreign_ledger_file_is_refused_and_nothing_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("typo.db");
    let l = ledger.display().to_string();
    let create = [
        "mission",
        "create",
        "--contract",
        &format!("{SEED}/contract.json"),
        "--yes",
    ];
    let o = world(dir.path(), &l, &create);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("ledger_not_initialized") && err.contains("world limits init"),
        "{err}"
    );
    assert!(
        !ledger.exists(),
        "only `world limits init` creates a ledger"
    );
    // A World store passed as the ledger: not a ledger (exit 2), untouched.
    let store = dir.path().join("w.db");
    let o = Command::cargo_bin("world")
        .unwrap()
        .env("WORLD_DB", &store)
        .arg("genesis")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let before = std::fs::read(&store).unwrap();
    let o = world(dir.path(), &store.display().to_string(), &create);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("is not a world ledger ("));
    assert_eq!(std::fs::read(&store).unwrap(), before);
}

#[test]
fn the_seeds_example_on_postgres_answers_as_on_the_ledger_file() {
    let Some(pg) = pgtest::server("the_seeds_example_on_postgres_answers_as_on_the_ledger_file")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ledger.db").display().to_string();
    let on_file = seed_session(dir.path(), &file);
    let url = pg.fresh_db();
    let on_pg = seed_session(dir.path(), &url);
    assert_eq!(on_pg, on_file, "the same answers, byte for byte");
    assert_eq!(entries(&url), entries(&file), "the same journal entries");
    // The journal is append-only on PostgreSQL too.
    let mut c = pgtest::Server::client(&url);
    let e = c
        .execute("UPDATE mission_journal SET prev_hash = 'x'", &[])
        .unwrap_err();
    assert!(e.to_string().contains("append-only") || format!("{e:?}").contains("append-only"));
    // A tampered state row is a finding of `world mission verify` (exit 3).
    c.batch_execute("UPDATE mission_missions SET reserved = '1'")
        .unwrap();
    let o = world(dir.path(), &url, &["mission", "verify"]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    assert!(
        text(&o.stdout).contains("mission_state mission=m"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn eight_processes_admitting_against_one_budget_on_postgres_never_admit_past_it() {
    let Some(pg) = pgtest::server(
        "eight_processes_admitting_against_one_budget_on_postgres_never_admit_past_it",
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = pg.fresh_db();
    let o = world(
        dir.path(),
        &url,
        &["limits", "init", "--config", LIMITS, "--yes"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let d = dir.path();
    mission(
        d,
        &url,
        &[
            "create",
            "--contract",
            &format!("{SEED}/contract.json"),
            "--yes",
            "--now",
            "0",
        ],
        0,
    );
    mission(d, &url, &["start-run", "m", "--run", "r", "--now", "10"], 0);
    mission(
        d,
        &url,
        &[
            "grant",
            "m",
            "--id",
            "g",
            "--subject",
            "agent",
            "--action",
            "write",
            "--resource",
            "doc",
            "--expires-at",
            "10000",
            "--limit",
            "100",
            "--now",
            "10",
        ],
        0,
    );
    let children: Vec<_> = (0..8)
        .map(|i| {
            let a = format!("a{i}");
            let o = format!("o{i}");
            pgtest::ledger_world(d, &d.join("no-store.db"), &url)
                .args([
                    "--json",
                    "mission",
                    "admit",
                    "m",
                    "--ledger",
                    &url,
                    "--run",
                    "r",
                    "--operation",
                    &o,
                    "--attempt",
                    &a,
                    "--grant",
                    "g",
                    "--subject",
                    "agent",
                    "--capability",
                    "write",
                    "--resource",
                    "doc",
                    "--amount",
                    "30",
                    "--authorization-checked-at",
                    "10",
                    "--now",
                    "10",
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut admitted = 0;
    let mut refused = 0;
    for c in children {
        let out = c.wait_with_output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        match (
            out.status.code(),
            v["code"].as_str().or(v["error"]["code"].as_str()),
        ) {
            (Some(0), Some("OK")) => admitted += 1,
            (Some(4), Some("BUDGET_EXHAUSTED")) => refused += 1,
            other => panic!("{other:?}: {}", text(&out.stderr)),
        }
    }
    assert_eq!((admitted, refused), (3, 5), "100 / 30 = 3 admissions");
    let r: Value =
        serde_json::from_str(mission(d, &url, &["--json", "report", "m", "--now", "10"], 0).trim())
            .unwrap();
    assert_eq!(r["reserved"], json!("90"));
    assert_eq!(r["outstanding"].as_array().map(Vec::len), Some(3));
    let o = world(d, &url, &["mission", "verify"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
}

#[test]
fn bad_urls_wrong_passwords_and_missing_or_foreign_schemas_fail_cleanly() {
    let Some(pg) =
        pgtest::server("bad_urls_wrong_passwords_and_missing_or_foreign_schemas_fail_cleanly")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let contract = format!("{SEED}/contract.json");
    let create = ["mission", "create", "--contract", &contract, "--yes"];
    // A URL that does not parse: usage error, exit 2.
    let o = world(d, "postgres://ann@host:notaport/db", &create);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("ledger URL does not parse"));
    // A refused connection: exit 1, the ledger named.
    let empty = tempfile::tempdir().unwrap();
    let nowhere = format!(
        "postgres://ann@{}/db",
        empty.path().display().to_string().replace('/', "%2F")
    );
    let o = world(d, &nowhere, &["mission", "list"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("ledger postgres://ann@"));
    // A wrong password: exit 1, never printed.
    let url = pg.fresh_db();
    let db = url.rsplit('/').next().unwrap().to_string();
    let sock = pg.socket_dir().display().to_string().replace('/', "%2F");
    let wrong = format!("postgres://pwuser:{}@{sock}/{db}", "wrong-secret-pw");
    let o = world(d, &wrong, &create);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("password authentication failed"), "{err}");
    assert!(!err.contains("wrong-secret-pw") && !text(&o.stdout).contains("wrong-secret-pw"));
    // A database without the ledger schema: ledger_not_initialized (exit 4) naming the ledger
    // (never the password) and `world limits init`; nothing created.
    let right = format!("postgres://pwuser:{}@{sock}/{db}", pgtest::PW_PASSWORD);
    let o = world(d, &right, &create);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("ledger_not_initialized")
            && err.contains("ledger postgres://pwuser@")
            && err.contains("world limits init"),
        "{err}"
    );
    assert!(
        !err.contains(pgtest::PW_PASSWORD),
        "the password leaked: {err}"
    );
    assert!(dump(&url).is_empty(), "a refused command created tables");
    // A mission schema of another version: refused before anything is read or written (2).
    let o = world(d, &url, &["limits", "init", "--config", LIMITS, "--yes"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    mission(
        d,
        &url,
        &["create", "--contract", &contract, "--yes", "--now", "0"],
        0,
    );
    pg.sql(&db, "UPDATE mission_schema SET version = 2");
    let before = dump(&url);
    for args in [
        &["mission", "start-run", "m", "--run", "r", "--now", "10"][..],
        &["mission", "report", "m"][..],
        &["mission", "list"][..],
    ] {
        let o = world(d, &url, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains("mission schema version 2; this world reads version 1"),
            "{}",
            text(&o.stderr)
        );
    }
    assert_eq!(dump(&url), before, "a refused command changed the ledger");
    // Back at the version this build reads, the same command applies.
    pg.sql(&db, "UPDATE mission_schema SET version = 1");
    mission(d, &url, &["start-run", "m", "--run", "r", "--now", "10"], 0);
}

/// A ledger with mission m of the seed (run r, grant g, attempt a admitted then settled
/// UNKNOWN, a start-run sent with --request-id req1).
fn tampering_setup(d: &Path, ledger: &str) {
    let o = world(
        d,
        ledger,
        &["limits", "init", "--config", LIMITS, "--yes", "--now", "0"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let contract = format!("{SEED}/contract.json");
    mission(
        d,
        ledger,
        &["create", "--contract", &contract, "--yes", "--now", "0"],
        0,
    );
    mission(
        d,
        ledger,
        &["apply", "m", "--command", &step(1), "--now", "10"],
        0,
    );
    mission(
        d,
        ledger,
        &["apply", "m", "--command", &step(2), "--now", "10"],
        0,
    );
    mission(
        d,
        ledger,
        &["apply", "m", "--command", &step(3), "--now", "10"],
        0,
    );
    let a = serde_json::from_slice::<Value>(&std::fs::read(step(3)).unwrap()).unwrap();
    let attempt = a["attemptId"].as_str().unwrap().to_string();
    mission(
        d,
        ledger,
        &["dispatch", "m", "--attempt", &attempt, "--now", "11"],
        0,
    );
    mission(
        d,
        ledger,
        &[
            "settle",
            "m",
            "--attempt",
            &attempt,
            "--unknown",
            "--now",
            "12",
        ],
        0,
    );
    mission(
        d,
        ledger,
        &[
            "start-run",
            "m",
            "--run",
            "r2",
            "--request-id",
            "req1",
            "--now",
            "13",
        ],
        0,
    );
    mission(d, ledger, &["verify"], 0);
}

fn sql(ledger: &str, statement: &str) {
    if ledger.starts_with("postgres") {
        pgtest::Server::client(ledger)
            .batch_execute(statement)
            .unwrap();
    } else {
        rusqlite::Connection::open(ledger)
            .unwrap()
            .execute_batch(statement)
            .unwrap();
    }
}

/// F4, F5, F9 on `ledger`: edited index columns, idempotency rows and outbox bytes, and a
/// deleted mission row are `mission verify` findings (exit 3) and the commands that used to
/// trust them refuse with an integrity error (exit 3) naming `world mission verify --ledger`.
fn edits_are_findings_and_not_trusted(d: &Path, ledger: &str) {
    tampering_setup(d, ledger);
    let a = serde_json::from_slice::<Value>(&std::fs::read(step(3)).unwrap()).unwrap();
    let attempt = a["attemptId"].as_str().unwrap().to_string();
    let verify_finds = |what: &str| {
        let out = mission(d, ledger, &["verify"], 3);
        assert!(out.contains(what), "expected {what:?} in: {out}");
    };
    // F4: the status column says SETTLED, the body UNKNOWN (complete-run's refusal: the
    // library test `edited_attempt_index_columns_are_findings_and_never_trusted`).
    sql(
        ledger,
        &format!("UPDATE mission_attempts SET status = 'SETTLED' WHERE attempt_id = '{attempt}'"),
    );
    verify_finds("the status column says SETTLED");
    sql(
        ledger,
        &format!("UPDATE mission_attempts SET status = 'UNKNOWN' WHERE attempt_id = '{attempt}'"),
    );
    mission(d, ledger, &["verify"], 0);
    // F5: the idempotency row points at the grant's entry.
    sql(
        ledger,
        "UPDATE mission_requests SET seq = 2 WHERE request_id = 'req1'",
    );
    verify_finds("request req1 names entry 2");
    let o = world(
        d,
        ledger,
        &[
            "mission",
            "start-run",
            "m",
            "--run",
            "r2",
            "--request-id",
            "req1",
            "--now",
            "14",
        ],
    );
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(!text(&o.stdout).contains("replayed"), "{}", text(&o.stdout));
    // L1: the hint names the ledger's verifier, not `world verify`.
    assert!(
        text(&o.stderr).contains("world mission verify --ledger"),
        "{}",
        text(&o.stderr)
    );
    sql(
        ledger,
        "UPDATE mission_requests SET seq = 6 WHERE request_id = 'req1'",
    );
    mission(d, ledger, &["verify"], 0);
    // F5: the outbox payload swapped.
    let payload = if ledger.starts_with("postgres") {
        "UPDATE mission_outbox SET payload = convert_to('{\"path\":\"/etc/shadow\"}', 'UTF8')"
    } else {
        "UPDATE mission_outbox SET payload = CAST('{\"path\":\"/etc/shadow\"}' AS BLOB)"
    };
    let keep = dump(ledger);
    sql(ledger, payload);
    verify_finds("payloadRef");
    assert_ne!(dump(ledger), keep);
    // F9: the mission row deleted: its journal is reported, `create` refuses the id.
    if ledger.starts_with("postgres") {
        sql(ledger, "ALTER TABLE mission_journal DROP CONSTRAINT mission_journal_mission_id_fkey; DELETE FROM mission_missions");
    } else {
        sql(
            ledger,
            "PRAGMA foreign_keys = OFF; DELETE FROM mission_missions",
        );
    }
    verify_finds("no mission_missions row");
    let contract = format!("{SEED}/contract.json");
    let o = world(
        d,
        ledger,
        &[
            "mission",
            "create",
            "--contract",
            &contract,
            "--yes",
            "--now",
            "20",
        ],
    );
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("refusing to create it again"),
        "{}",
        text(&o.stderr)
    );
    // L1: a missing mission in a ledger is not said to be missing "in the store".
    let o = world(d, ledger, &["mission", "report", "m"]);
    assert!(
        !text(&o.stderr).contains("in the store"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn edited_columns_requests_outbox_and_deleted_missions_in_a_ledger_file() {
    let dir = tempfile::tempdir().unwrap();
    let led = dir.path().join("led.db").display().to_string();
    edits_are_findings_and_not_trusted(dir.path(), &led);
}

#[test]
fn edited_columns_requests_outbox_and_deleted_missions_on_postgres() {
    let Some(pg) =
        pgtest::server("edited_columns_requests_outbox_and_deleted_missions_on_postgres")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    edits_are_findings_and_not_trusted(dir.path(), &pg.fresh_db());
}

/// L2, L3, L7, L8: a bad `--ledger` is a usage error (exit 2) on every command, before
/// anything is created; `--request-id` follows the id grammar; a clean `--json mission
/// verify` prints its result on stdout.
#[test]
fn bad_ledger_values_and_request_ids_are_usage_errors_and_clean_verify_prints_json() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for bad in ["", "mysql://x/y", "postgres://", "postgres://a:b@[::1"] {
        for args in [
            &["mission", "list"][..],
            &["limits", "report"][..],
            &["invoke", "probe", "--args", "{}"][..],
            &["serve"][..],
        ] {
            let mut c = pgtest::ledger_world(d, &d.join("no-store.db"), "");
            c.args(args)
                .args(["--ledger", bad])
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
            // `serve` would listen forever if it took the value: stop it after 20 s.
            let mut child = c.spawn().unwrap();
            let start = std::time::Instant::now();
            let code = loop {
                if let Some(st) = child.try_wait().unwrap() {
                    break st.code();
                }
                if start.elapsed() > std::time::Duration::from_secs(20) {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            };
            assert_eq!(code, Some(2), "{args:?} --ledger {bad:?}");
        }
    }
    assert!(!d.join("mysql:").exists(), "nothing created");
    let led = d.join("led.db").display().to_string();
    tampering_setup(d, &led);
    for rid in ["", "has space", &"q".repeat(129)] {
        let o = world(
            d,
            &led,
            &[
                "mission",
                "start-run",
                "m",
                "--run",
                "r9",
                "--request-id",
                rid,
            ],
        );
        assert_eq!(o.status.code(), Some(2), "{rid:?}: {}", text(&o.stderr));
    }
    let out = mission(d, &led, &["--json", "verify"], 0);
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["ok"], json!(true), "{out}");
    // A session minted against a missing ledger file: ledger_not_initialized, exit 4 (as
    // every other command answers it).
    let o = world(d, &led, &["genesis", "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let missing = d.join("missing.db").display().to_string();
    let o = world(
        d,
        &missing,
        &[
            "session",
            "mint",
            "--episode",
            "e",
            "--grant",
            "Workspace.Read=w:1",
            "--yes",
            "--mission",
            "m",
            "--mission-run",
            "r",
            "--mission-grant",
            "g",
            "--ledger",
            &missing,
        ],
    );
    assert_eq!(o.status.code(), Some(4), "{}", text(&o.stderr));
    assert!(!d.join("missing.db").exists(), "nothing created");
}

/// F12: `world mission verify` on a ledger file reads one snapshot, so admits committed by
/// another process while it runs are never findings.
#[test]
fn mission_verify_during_concurrent_admits_reports_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let led = d.join("led.db").display().to_string();
    tampering_setup(&d, &led);
    let writer = {
        let (d, led) = (d.clone(), led.clone());
        std::thread::spawn(move || {
            for k in 0..40 {
                let (op, at) = (format!("o{k}"), format!("a{k}"));
                let o = world(
                    &d,
                    &led,
                    &[
                        "mission",
                        "admit",
                        "m",
                        "--run",
                        "r2",
                        "--operation",
                        &op,
                        "--attempt",
                        &at,
                        "--grant",
                        "g",
                        "--subject",
                        "agent",
                        "--capability",
                        "write",
                        "--resource",
                        "doc",
                        "--amount",
                        "1",
                        "--now",
                        "20",
                    ],
                );
                let _ = o;
            }
        })
    };
    let mut bad = Vec::new();
    for _ in 0..30 {
        let o = world(&d, &led, &["mission", "verify"]);
        if o.status.code() != Some(0) {
            bad.push(format!("{}{}", text(&o.stdout), text(&o.stderr)));
        }
    }
    writer.join().unwrap();
    assert!(
        bad.is_empty(),
        "false findings under a concurrent writer: {bad:?}"
    );
    mission(&d, &led, &["verify"], 0);
}

/// L13: on PostgreSQL the append-only tables refuse TRUNCATE too, and a ledger made without
/// the guards (an older build) gets them from the next `mission create`.
#[test]
fn postgres_append_only_tables_refuse_truncate_and_old_ledgers_are_upgraded() {
    let Some(pg) =
        pgtest::server("postgres_append_only_tables_refuse_truncate_and_old_ledgers_are_upgraded")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let url = pg.fresh_db();
    tampering_setup(d, &url);
    let mut c = pgtest::Server::client(&url);
    for t in ["mission_journal", "limits_events"] {
        let e = c.batch_execute(&format!("TRUNCATE {t}"));
        assert!(e.is_err(), "TRUNCATE {t} succeeded");
    }
    // As an older build left it: no TRUNCATE triggers.
    c.batch_execute(
        "DROP TRIGGER mission_journal_no_truncate ON mission_journal; DROP TRIGGER limits_events_no_truncate ON limits_events",
    )
    .unwrap();
    let contract = std::fs::read_to_string(format!("{SEED}/contract.json"))
        .unwrap()
        .replace("\"m\"", "\"m2\"");
    let c2 = d.join("c2.json");
    std::fs::write(&c2, contract).unwrap();
    mission(
        d,
        &url,
        &[
            "create",
            "--contract",
            &c2.display().to_string(),
            "--yes",
            "--now",
            "0",
        ],
        0,
    );
    for t in ["mission_journal", "limits_events"] {
        let e = c.batch_execute(&format!("TRUNCATE {t}"));
        assert!(e.is_err(), "TRUNCATE {t} succeeded after the upgrade");
    }
    mission(d, &url, &["verify"], 0);
}

/// F6: six first `mission create`s racing on a fresh PostgreSQL ledger all succeed — the DDL
/// and the `mission_schema` row are made race-free under the ledger's lock (DEC-MIS-9), never
/// a raw duplicate-key error.
#[test]
fn concurrent_first_creates_on_postgres_all_succeed() {
    let Some(pg) = pgtest::server("concurrent_first_creates_on_postgres_all_succeed") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let url = pg.fresh_db();
    let o = world(d, &url, &["limits", "init", "--config", LIMITS, "--yes"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let contract: Value =
        serde_json::from_slice(&std::fs::read(format!("{SEED}/contract.json")).unwrap()).unwrap();
    let children: Vec<_> = (0..6)
        .map(|i| {
            let mut c = contract.clone();
            c["missionId"] = json!(format!("m{i}"));
            let f = d.join(format!("c{i}.json"));
            std::fs::write(&f, c.to_string()).unwrap();
            pgtest::ledger_world(d, &d.join("no-store.db"), &url)
                .args(["mission", "create", "--contract"])
                .arg(&f)
                .args(["--yes", "--now", "0"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    }
    let o = world(d, &url, &["--json", "mission", "list"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).lines().count(), 6, "{}", text(&o.stdout));
    mission(d, &url, &["verify"], 0);
}
