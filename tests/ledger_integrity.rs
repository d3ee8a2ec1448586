//! Tamper-evident ledgers on every backend (issue 27 §3, "Done means"): on the World store
//! file, a standalone ledger file and PostgreSQL, each of these edits — an UPDATE of a usage
//! column, a DELETE of an event, an INSERT of a forged event, a TRUNCATE, a dropped
//! append-only trigger, a counter edit in a mission (the mission row's `reserved`, a grant's
//! `used`) — is reported by `world verify --ledger L` (plain `world verify` for the store file)
//! with exit 3, and refused by the next deciding command (`limits reserve`, a mission `admit`)
//! with exit 3, writing nothing.
//!
//! The edits are made the way an attacker with SQL access would: PostgreSQL's DELETE and
//! TRUNCATE run as the superuser with `session_replication_role = replica` (the triggers stay
//! in the catalog but do not fire), SQLite's DELETE drops the trigger, deletes and re-creates
//! it, so each case exercises one edit only. The server is the throwaway one of
//! `tests/pgtest` (skipped outside CI when PostgreSQL is not installed).

use crate::pgtest;

use std::path::{Path, PathBuf};
use std::process::Output;

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/limits/example.json");
const SEED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/mission/seed");

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Store,
    File,
    Pg,
}

/// One backend with a ledger holding the limits example and the seed's mission.
struct Target {
    kind: Kind,
    dir: tempfile::TempDir,
    /// The ledger file, the PostgreSQL URL, or the store file.
    ledger: String,
    _pg: Option<pgtest::Shared>,
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

impl Target {
    /// `None` when PostgreSQL is not installed (outside CI).
    fn new(kind: Kind, test: &str) -> Option<Target> {
        let dir = tempfile::tempdir().unwrap();
        let (ledger, pg) = match kind {
            Kind::Store => (dir.path().join("w.db").display().to_string(), None),
            Kind::File => (dir.path().join("led.db").display().to_string(), None),
            Kind::Pg => {
                let pg = pgtest::server(test)?;
                (pg.fresh_db(), Some(pg))
            }
        };
        let t = Target {
            kind,
            dir,
            ledger,
            _pg: pg,
        };
        if kind == Kind::Store {
            t.ok(&["genesis"]);
        }
        t.setup();
        Some(t)
    }

    fn d(&self) -> &Path {
        self.dir.path()
    }

    fn world(&self, args: &[&str]) -> Output {
        let store: PathBuf = self.d().join("w.db");
        let mut c = pgtest::ledger_world(self.d(), &store, &self.ledger);
        if self.kind == Kind::Store {
            c.env_remove("WORLD_LEDGER");
        }
        c.args(args).output().unwrap()
    }

    #[track_caller]
    fn code(&self, args: &[&str], code: i32) -> Output {
        let o = self.world(args);
        assert_eq!(
            o.status.code(),
            Some(code),
            "{:?} on {:?}: stdout {} stderr {}",
            args,
            self.kind,
            text(&o.stdout),
            text(&o.stderr)
        );
        o
    }

    #[track_caller]
    fn ok(&self, args: &[&str]) -> Output {
        self.code(args, 0)
    }

    /// The example's limits ledger with a settled and an outstanding attempt, and the seed's
    /// mission m with attempt a admitted (80 of 100).
    fn setup(&self) {
        self.ok(&[
            "limits", "init", "--config", EXAMPLE, "--yes", "--now", "1000",
        ]);
        let reserve = |a: &str, amount: &str, now: &str| {
            self.ok(&[
                "limits",
                "reserve",
                "--scope",
                "run",
                "--attempt",
                a,
                "--operation",
                a,
                "--purpose",
                "ordinary",
                "--amount",
                amount,
                "--max-active-ms",
                "1000",
                "--now",
                now,
            ]);
        };
        reserve("a1", "30", "1001");
        self.ok(&["limits", "dispatch", "--attempt", "a1", "--now", "1002"]);
        self.ok(&[
            "limits",
            "settle",
            "--attempt",
            "a1",
            "--actual",
            "20",
            "--now",
            "1003",
        ]);
        reserve("a2", "10", "1004");
        let contract = format!("{SEED}/contract.json");
        self.ok(&[
            "mission",
            "create",
            "--contract",
            &contract,
            "--yes",
            "--now",
            "0",
        ]);
        for n in 1..=3 {
            let step = format!("{SEED}/step{n}.json");
            self.ok(&["mission", "apply", "m", "--command", &step, "--now", "10"]);
        }
        self.verify(0);
    }

    /// `world verify --ledger L` (plain `world verify` on the store file); its output.
    #[track_caller]
    fn verify(&self, code: i32) -> String {
        let o = match self.kind {
            Kind::Store => self.code(&["verify"], code),
            _ => self.code(&["verify", "--ledger", &self.ledger.clone()], code),
        };
        text(&o.stdout)
    }

    /// The next deciding limits command: a reservation of 5 that fits the budget.
    fn reserve(&self) -> Output {
        self.world(&[
            "limits",
            "reserve",
            "--scope",
            "run",
            "--attempt",
            "a3",
            "--operation",
            "a3",
            "--purpose",
            "ordinary",
            "--amount",
            "5",
            "--max-active-ms",
            "1000",
            "--now",
            "1010",
        ])
    }

    /// The next deciding mission command: the seed's second admit (30 more).
    fn admit(&self) -> Output {
        let step = format!("{SEED}/step4.json");
        self.world(&["mission", "apply", "m", "--command", &step, "--now", "10"])
    }

    /// Run the SQLite or the PostgreSQL statements (as the superuser) on the ledger.
    fn sql(&self, sqlite: &str, postgres: &str) {
        match self.kind {
            Kind::Pg => pgtest::Server::client(&self.ledger)
                .batch_execute(postgres)
                .unwrap(),
            _ => rusqlite::Connection::open(&self.ledger)
                .unwrap()
                .execute_batch(sqlite)
                .unwrap(),
        }
    }

    /// Grant g's stored body.
    fn grant_body(&self) -> String {
        let sql = "SELECT body FROM mission_grants WHERE mission_id = 'm' AND grant_id = 'g'";
        match self.kind {
            Kind::Pg => pgtest::Server::client(&self.ledger)
                .query_one(sql, &[])
                .unwrap()
                .get(0),
            _ => rusqlite::Connection::open(&self.ledger)
                .unwrap()
                .query_row(sql, [], |r| r.get(0))
                .unwrap(),
        }
    }

    /// Every row of every ledger table (`limits_*`, `mission_*`), for "nothing was written".
    fn dump(&self) -> Vec<String> {
        let mut out = Vec::new();
        match self.kind {
            Kind::Pg => {
                let mut c = pgtest::Server::client(&self.ledger);
                let tables: Vec<String> = c
                    .query(
                        "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema() AND (tablename LIKE 'limits%' OR tablename LIKE 'mission%') ORDER BY 1",
                        &[],
                    )
                    .unwrap()
                    .iter()
                    .map(|r| r.get(0))
                    .collect();
                for t in tables {
                    for r in c
                        .query(&format!("SELECT x::text FROM {t} x ORDER BY 1"), &[])
                        .unwrap()
                    {
                        out.push(format!("{t}: {}", r.get::<_, String>(0)));
                    }
                }
            }
            _ => out = Target::dump_sqlite(&self.ledger),
        }
        out
    }

    /// [`Target::dump`] of a SQLite file.
    fn dump_sqlite(path: &str) -> Vec<String> {
        let mut out = Vec::new();
        let c = rusqlite::Connection::open(path).unwrap();
        let tables: Vec<String> = c
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND (name LIKE 'limits%' OR name LIKE 'mission%') ORDER BY 1")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for t in tables {
            let mut s = c.prepare(&format!("SELECT * FROM {t}")).unwrap();
            let n = s.column_count();
            let mut rows = s.query([]).unwrap();
            let mut all = Vec::new();
            while let Some(r) = rows.next().unwrap() {
                let vals: Vec<String> = (0..n)
                    .map(|i| match r.get_ref(i).unwrap() {
                        rusqlite::types::ValueRef::Text(t) => {
                            String::from_utf8_lossy(t).into_owned()
                        }
                        v => format!("{v:?}"),
                    })
                    .collect();
                all.push(format!("{t}: {}", vals.join("|")));
            }
            all.sort();
            out.extend(all);
        }
        out
    }

    /// `verify` reports the edit (exit 3, `want` in its output) and `decide` refuses it with
    /// exit 3, naming an integrity failure, writing nothing.
    #[track_caller]
    /// A report (`limits report`, `mission report m`) on the edited ledger: refused as an
    /// integrity failure (exit 3), never printing the edited totals (issue 27 §3: a total is
    /// shown only once checked).
    fn report_refused(&self, case: &str, report: &[&str]) {
        let o = self.world(report);
        assert_eq!(
            o.status.code(),
            Some(3),
            "{case} on {:?}: limits report: stdout {} stderr {}",
            self.kind,
            text(&o.stdout),
            text(&o.stderr)
        );
        assert!(text(&o.stdout).is_empty(), "{case}: {}", text(&o.stdout));
        assert!(
            text(&o.stderr).contains("integrity"),
            "{case} on {:?}: {}",
            self.kind,
            text(&o.stderr)
        );
    }

    fn reported_and_refused(&self, case: &str, want: &str, decide: fn(&Target) -> Output) {
        let report = self.verify(3);
        assert!(
            report.contains(want),
            "{case} on {:?}: verify does not say {want:?}: {report}",
            self.kind
        );
        let before = self.dump();
        let o = decide(self);
        assert_eq!(
            o.status.code(),
            Some(3),
            "{case} on {:?}: the deciding command was not refused as an integrity failure: stdout {} stderr {}",
            self.kind,
            text(&o.stdout),
            text(&o.stderr)
        );
        assert!(
            text(&o.stderr).contains("integrity") || text(&o.stderr).contains("corrupt"),
            "{case} on {:?}: {}",
            self.kind,
            text(&o.stderr)
        );
        // The verifier the refusal suggests names this ledger, not a placeholder.
        assert!(
            !text(&o.stderr).contains("--ledger L`"),
            "{case} on {:?}: {}",
            self.kind,
            text(&o.stderr)
        );
        if self.kind == Kind::File {
            assert!(
                text(&o.stderr).contains(&format!("verify --ledger {}", self.ledger)),
                "{case}: the hint does not name the ledger file: {}",
                text(&o.stderr)
            );
        }
        assert_eq!(
            self.dump(),
            before,
            "{case} on {:?}: the refused command wrote",
            self.kind
        );
    }
}

/// The six edits on one backend, each on a fresh ledger.
fn every_edit(kind: Kind, test: &str) {
    // An UPDATE of a usage column: the runtime role may UPDATE limits_scopes.
    let Some(t) = Target::new(kind, test) else {
        return;
    };
    t.sql(
        "UPDATE limits_scopes SET usage_ordinary = '0' WHERE scope_id = 'wo'",
        "UPDATE limits_scopes SET usage_ordinary = '0' WHERE scope_id = 'wo'",
    );
    t.reported_and_refused("usage UPDATE", "limits_scopes row", Target::reserve);
    t.report_refused("usage UPDATE", &["limits", "report"]);

    // A DELETE of an event (below the trigger).
    let Some(t) = Target::new(kind, test) else {
        return;
    };
    t.sql(
        "DROP TRIGGER limits_events_no_delete; DELETE FROM limits_events WHERE revision = 2; \
         CREATE TRIGGER limits_events_no_delete BEFORE DELETE ON limits_events \
         BEGIN SELECT RAISE(ABORT, 'limits_events is append-only'); END;",
        "SET session_replication_role = replica; DELETE FROM limits_events WHERE revision = 2;",
    );
    t.reported_and_refused("event DELETE", "ledger_chain", Target::reserve);

    // An INSERT of a forged event at the head of the chain.
    let Some(t) = Target::new(kind, test) else {
        return;
    };
    t.sql(
        "INSERT INTO limits_events (revision, prev_hash, event_hash, event) \
         SELECT max(revision) + 1, (SELECT event_hash FROM limits_events ORDER BY revision DESC LIMIT 1), \
         'sha256:' || hex(randomblob(32)), CAST('{\"forged\":true}' AS BLOB) FROM limits_events",
        "INSERT INTO limits_events (revision, prev_hash, event_hash, event) \
         SELECT max(revision) + 1, (SELECT event_hash FROM limits_events ORDER BY revision DESC LIMIT 1), \
         'sha256:' || md5(random()::text) || md5(random()::text), convert_to('{\"forged\":true}', 'UTF8') FROM limits_events",
    );
    t.reported_and_refused("forged event INSERT", "ledger_", Target::reserve);

    // A TRUNCATE. PostgreSQL refuses it outright; below the triggers it empties the scopes and
    // everything referencing them. SQLite has no TRUNCATE: its equivalent, a DELETE of every
    // row of the materialised tables.
    let Some(t) = Target::new(kind, test) else {
        return;
    };
    if kind == Kind::Pg {
        let mut c = pgtest::Server::client(&t.ledger);
        for table in [
            "limits_scopes CASCADE",
            "limits_events",
            "limits_folds",
            "limits_meta",
            "mission_missions CASCADE",
            "mission_journal",
            "mission_grants",
        ] {
            assert!(
                c.batch_execute(&format!("TRUNCATE {table}")).is_err(),
                "TRUNCATE {table} was not refused"
            );
        }
        t.verify(0);
    }
    t.sql(
        "DELETE FROM limits_violations; DELETE FROM limits_closure; DELETE FROM limits_attempts; DELETE FROM limits_scopes;",
        "SET session_replication_role = replica; TRUNCATE limits_scopes CASCADE;",
    );
    t.reported_and_refused("TRUNCATE", "limits_scopes", Target::reserve);
    t.report_refused("TRUNCATE", &["limits", "report"]);

    // A dropped append-only trigger (then anything could be edited unseen).
    let Some(t) = Target::new(kind, test) else {
        return;
    };
    t.sql(
        "DROP TRIGGER limits_events_no_update",
        "DROP TRIGGER limits_events_no_change ON limits_events",
    );
    t.reported_and_refused("dropped trigger", "limits_events_no_", Target::reserve);
    // The mission journal's trigger, with a mission command deciding.
    let Some(t) = Target::new(kind, test) else {
        return;
    };
    t.sql(
        "DROP TRIGGER mission_journal_no_delete",
        "ALTER TABLE mission_journal DISABLE TRIGGER mission_journal_no_change",
    );
    t.reported_and_refused(
        "dropped mission trigger",
        "mission_journal_no_",
        Target::admit,
    );

    // A counter edit in a mission: the mission row's reserved, then a grant's used.
    let Some(t) = Target::new(kind, test) else {
        return;
    };
    t.sql(
        "UPDATE mission_missions SET reserved = '0' WHERE mission_id = 'm'",
        "UPDATE mission_missions SET reserved = '0' WHERE mission_id = 'm'",
    );
    t.reported_and_refused("mission counter", "mission_state", Target::admit);
    let Some(t) = Target::new(kind, test) else {
        return;
    };
    let edit = "UPDATE mission_grants SET body = replace(body, '\"used\":\"80\"', '\"used\":\"0\"') WHERE mission_id = 'm' AND grant_id = 'g'";
    t.sql(edit, edit);
    let body = t.grant_body();
    assert!(
        body.contains("\"used\":\"0\""),
        "the grant edit did not apply: {body}"
    );
    t.reported_and_refused("grant used", "mission_state", Target::admit);
}

#[test]
fn every_edit_is_reported_and_refused_in_the_store_file() {
    every_edit(
        Kind::Store,
        "every_edit_is_reported_and_refused_in_the_store_file",
    );
}

#[test]
fn every_edit_is_reported_and_refused_in_a_ledger_file() {
    every_edit(
        Kind::File,
        "every_edit_is_reported_and_refused_in_a_ledger_file",
    );
}

#[test]
fn every_edit_is_reported_and_refused_on_postgres() {
    every_edit(Kind::Pg, "every_edit_is_reported_and_refused_on_postgres");
}

/// A ledger written before the fold digests existed (its `limits_folds` and `mission_folds`
/// dropped here) still verifies (with an upgrade warning) and its next commands upgrade it
/// after a clean re-fold; an edit made before the upgrade is still refused, by that re-fold.
#[test]
fn ledgers_without_fold_digests_are_upgraded_after_a_clean_refold() {
    for (kind, test) in [
        (Kind::File, "upgrade_file"),
        (Kind::Store, "upgrade_store"),
        (Kind::Pg, "upgrade_pg"),
    ] {
        let Some(t) = Target::new(kind, test) else {
            continue;
        };
        t.sql(
            "DROP TABLE limits_folds; DROP TABLE mission_folds;",
            "DROP TABLE limits_folds; DROP TABLE mission_folds;",
        );
        let out = t.verify(0);
        assert!(!out.contains("FAIL"), "{out}");
        t.ok(&["limits", "report"]);
        // The next commands re-fold, then record their baselines.
        let o = t.reserve();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let o = t.admit();
        assert_eq!(o.status.code(), Some(4), "{}", text(&o.stdout));
        t.verify(0);
        // An edit made on a ledger without digests is caught by the re-fold of the upgrade.
        let Some(t) = Target::new(kind, test) else {
            continue;
        };
        t.sql(
            "DROP TABLE limits_folds; UPDATE limits_scopes SET usage_ordinary = '0' WHERE scope_id = 'wo'",
            "DROP TABLE limits_folds; UPDATE limits_scopes SET usage_ordinary = '0' WHERE scope_id = 'wo'",
        );
        t.reported_and_refused(
            "usage UPDATE before the upgrade",
            "ledger_state",
            Target::reserve,
        );
    }
}

/// docs/LEDGER.md's least-privilege roles, with its exact GRANTs: the owner initialises the
/// ledger and the missions; the runtime role reserves, admits and verifies; its UPDATE, DELETE
/// and TRUNCATE of an append-only table are refused by PostgreSQL, and what it may UPDATE (a
/// usage column) is refused by the next deciding command.
#[test]
fn the_documented_runtime_role_cannot_rewrite_append_only_tables() {
    let Some(pg) = pgtest::server("the_documented_runtime_role_cannot_rewrite_append_only_tables")
    else {
        return;
    };
    let url = pg.fresh_db();
    let db = url.rsplit('/').next().unwrap().to_string();
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/LEDGER.md")).unwrap();
    // The two SQL blocks of "Roles and grants", as documented (passwords dropped: trust auth).
    let section = &docs[docs.find("## Roles and grants").unwrap()..];
    let blocks: Vec<&str> = section
        .split("```sql")
        .skip(1)
        .take(2)
        .map(|b| &b[..b.find("```").unwrap()])
        .collect();
    let roles = blocks[0].replace(" PASSWORD '…'", "");
    let n = std::process::id();
    let rename = |s: &str| {
        s.replace("world_owner", &format!("wo{n}"))
            .replace("world_runtime", &format!("wr{n}"))
            .replace("world_auditor", &format!("wa{n}"))
    };
    pg.sql(&db, &rename(&roles));
    let owner = format!(
        "{}?options=-csearch_path%3Dwo42",
        url.replace("postgres@", &format!("wo{n}@"))
    );
    let runtime = format!(
        "{}?options=-csearch_path%3Dwo42",
        url.replace("postgres@", &format!("wr{n}@"))
    );
    let dir = tempfile::tempdir().unwrap();
    let as_role = |ledger: &str, args: &[&str], code: i32| {
        let o = pgtest::ledger_world(dir.path(), &dir.path().join("w.db"), ledger)
            .args(args)
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(code),
            "{args:?}: {} {}",
            text(&o.stdout),
            text(&o.stderr)
        );
    };
    as_role(
        &owner,
        &[
            "limits", "init", "--config", EXAMPLE, "--yes", "--now", "1000",
        ],
        0,
    );
    let contract = format!("{SEED}/contract.json");
    as_role(
        &owner,
        &[
            "mission",
            "create",
            "--contract",
            &contract,
            "--yes",
            "--now",
            "0",
        ],
        0,
    );
    let mut c = pgtest::Server::client(&owner);
    c.batch_execute(&rename(blocks[1])).unwrap();
    // The runtime role works.
    as_role(
        &runtime,
        &[
            "limits",
            "reserve",
            "--scope",
            "run",
            "--attempt",
            "a1",
            "--operation",
            "a1",
            "--purpose",
            "ordinary",
            "--amount",
            "30",
            "--max-active-ms",
            "1000",
            "--now",
            "1001",
        ],
        0,
    );
    for step in 1..=3 {
        let f = format!("{SEED}/step{step}.json");
        as_role(
            &runtime,
            &["mission", "apply", "m", "--command", &f, "--now", "10"],
            0,
        );
    }
    as_role(&runtime, &["verify", "--ledger", &runtime], 0);
    // …but may not rewrite what is append-only.
    let mut r = pgtest::Server::client(&runtime);
    for sql in [
        "UPDATE limits_events SET event = event",
        "DELETE FROM limits_events",
        "TRUNCATE limits_events",
        "TRUNCATE limits_scopes CASCADE",
        "UPDATE mission_journal SET entry = entry",
        "DELETE FROM mission_journal",
        "TRUNCATE mission_journal",
        "DELETE FROM limits_folds",
        "DELETE FROM mission_folds",
        "DROP TRIGGER limits_events_no_change ON limits_events",
        "ALTER TABLE limits_events DISABLE TRIGGER limits_events_no_change",
    ] {
        assert!(r.batch_execute(sql).is_err(), "the runtime role ran {sql}");
    }
    // What it may UPDATE is refused by the next deciding command.
    r.batch_execute("UPDATE limits_scopes SET usage_ordinary = '0' WHERE scope_id = 'wo'")
        .unwrap();
    as_role(
        &runtime,
        &[
            "limits",
            "reserve",
            "--scope",
            "run",
            "--attempt",
            "a2",
            "--operation",
            "a2",
            "--purpose",
            "ordinary",
            "--amount",
            "60",
            "--max-active-ms",
            "1000",
            "--now",
            "1002",
        ],
        3,
    );
    as_role(&runtime, &["verify", "--ledger", &runtime], 3);
}

/// The broker's pairing is a deciding command too: an invocation whose episode is paired
/// with an edited limits scope or mission — in the store file or a ledger file — is refused
/// with exit 3 (`IntegrityError`) before its intent is journaled: the store and the ledger
/// are left exactly as they were.
#[test]
fn an_invocation_paired_with_an_edited_ledger_is_refused_and_writes_nothing() {
    use crate::invoke_support::{assert_exit, stderr, Env};
    const READ: &str = r#"{"case":"effect","payload":{"op":"read","path":"x"}}"#;
    for (in_file, mission) in [(false, false), (true, false), (false, true), (true, true)] {
        let env = Env::new();
        std::fs::write(env.ws.join("ep1/x"), "x\n").unwrap();
        let cfg = env.root.join("limits.json");
        std::fs::write(
            &cfg,
            r#"{"profile":"aiws-limits/1","ledgerId":"l","unit":"calls","scopes":[
            {"scopeId":"ep1","kind":"WORK_ORDER","parentId":null,"limits":{"cost":"100"}}]}"#,
        )
        .unwrap();
        let cfg = cfg.display().to_string();
        let led = env.root.join("led.db").display().to_string();
        let mut init = vec!["limits", "init", "--config", &cfg, "--yes"];
        if in_file {
            init.extend(["--ledger", &led]);
        }
        env.ok(&init);
        let ledger = in_file.then_some(led.as_str());
        let tok = if mission {
            env.create_mission(ledger, "Workspace.Read", "worktree", "100", "3");
            env.mint_for_mission("ep1", &["Workspace.Read=worktree:100"], ledger, &[])
        } else {
            env.mint_with(
                "ep1",
                &["Workspace.Read=worktree:100"],
                &["--limits-scope", "ep1"],
            )
        };
        let invoke = |task: &str| {
            let mut extra = vec!["--invocation-id", task, "--wait-lock", "5"];
            if in_file {
                extra.extend(["--ledger", &led]);
            }
            env.invoke(&tok, "probe", READ, &extra)
        };
        let case = format!("in a ledger file: {in_file}, mission: {mission}");
        assert_exit(&invoke("t1"), 0);
        let edit = if mission {
            "UPDATE mission_missions SET reserved = '0', settled = '0' WHERE mission_id = 'm'"
        } else {
            "UPDATE limits_scopes SET usage_ordinary = '0' WHERE scope_id = 'ep1'"
        };
        let target = if in_file {
            led.clone()
        } else {
            env.db.display().to_string()
        };
        let n = rusqlite::Connection::open(&target)
            .unwrap()
            .execute(edit, [])
            .unwrap();
        assert_eq!(n, 1, "{case}");
        let store_before = env.fingerprint();
        let ledger_before = if in_file {
            Target::dump_sqlite(&led)
        } else {
            Vec::new()
        };
        let out = invoke("t2");
        assert_eq!(out.status.code(), Some(3), "{case}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("integrity"),
            "{case}: {}",
            stderr(&out)
        );
        assert!(
            env.fingerprint() == store_before,
            "{case}: the store changed"
        );
        if in_file {
            assert_eq!(
                Target::dump_sqlite(&led),
                ledger_before,
                "{case}: the ledger changed"
            );
        }
    }
}
