//! Tests of the durable mission store (missions.md §6).

use proptest::prelude::*;
use rusqlite::Connection;
use serde_json::{json, Value};

use super::durable::{self, MissionStore, Request, SqliteMissions};
use super::tests::{admit_json, contract_json, grant_json, EV};
use super::*;
use crate::ledger::Amount;

fn contract() -> Contract {
    Contract::parse(&serde_json::to_vec(&contract_json()).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn cmd(v: Value) -> Command {
    Command::parse(&serde_json::to_vec(&v).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {v}"))
}

fn req(v: Value) -> Request {
    Request {
        command: cmd(v),
        request_id: None,
        implicit_now: false,
    }
}

/// Every mission row of every table, for "the store is unchanged" checks.
fn dump(conn: &Connection) -> Vec<String> {
    let mut out = Vec::new();
    for t in durable::TABLES {
        let mut stmt = conn
            .prepare(&format!("SELECT * FROM {t} ORDER BY 1, 2"))
            .unwrap_or_else(|e| panic!("{e}"));
        let n = stmt.column_count();
        let rows = stmt
            .query_map([], |r| {
                let mut s = t.to_string();
                for i in 0..n {
                    s.push('|');
                    s.push_str(&format!("{:?}", r.get_ref(i)?));
                }
                Ok(s)
            })
            .unwrap_or_else(|e| panic!("{e}"));
        out.extend(rows.map(|r| r.unwrap_or_default()));
    }
    out
}

fn setup() -> Connection {
    let conn = Connection::open_in_memory().unwrap_or_else(|e| panic!("{e}"));
    let m = SqliteMissions::new(&conn);
    m.create(&contract(), &Actor::host(), false, Amount(0))
        .unwrap_or_else(|e| panic!("{e}"));
    conn
}

/// Apply `commands` to mission `m` as the host at time 10; each must succeed.
fn apply_all(m: &SqliteMissions<'_>, commands: impl IntoIterator<Item = Value>) {
    for v in commands {
        m.apply("m", &req(v), &Actor::host(), Amount(10))
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

/// Start run `r`, grant `g` (agent may spend 100), admit attempt `a` of operation `o` for
/// `amount`.
fn run_grant_admit(amount: &str) -> Vec<Value> {
    vec![
        json!({"type": "startRun", "runId": "r"}),
        json!({"type": "grant", "grant": grant_json("g", "agent", "100", "1")}),
        admit_json("o", "a", "g", amount),
    ]
}

#[test]
fn the_seeds_example_through_the_store() {
    let conn = setup();
    let m = SqliteMissions::new(&conn);
    for step in ["step1.json", "step2.json", "step3.json"] {
        let raw = std::fs::read(format!(
            "{}/fixtures/mission/seed/{step}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap_or_default();
        let c = Command::parse(&raw).unwrap_or_else(|e| panic!("{e}"));
        m.apply(
            "m",
            &Request {
                command: c,
                request_id: None,
                implicit_now: false,
            },
            &Actor::host(),
            Amount(10),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    let before = dump(&conn);
    let raw = std::fs::read(format!(
        "{}/fixtures/mission/seed/step4.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap_or_default();
    let e = m.apply(
        "m",
        &Request {
            command: Command::parse(&raw).unwrap_or_else(|e| panic!("{e}")),
            request_id: None,
            implicit_now: false,
        },
        &Actor::host(),
        Amount(10),
    );
    assert_eq!(
        e.err().and_then(|e| e.rejection().map(|r| r.code)),
        Some(Code::BudgetExhausted)
    );
    assert_eq!(dump(&conn), before, "journal, state and outbox unchanged");
    let s = m.state("m").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.reserved, Amount(80));
    let outbox: i64 = conn
        .query_row("SELECT count(*) FROM mission_outbox", [], |r| r.get(0))
        .unwrap_or(0);
    assert_eq!(outbox, 1);
    assert_eq!(durable::check_all(&conn).unwrap_or_default(), vec![]);
}

#[test]
fn resends_answer_the_recorded_result_and_reused_ids_are_refused() {
    let conn = setup();
    let m = SqliteMissions::new(&conn);
    m.apply(
        "m",
        &req(json!({"type": "startRun", "runId": "r"})),
        &Actor::host(),
        Amount(10),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    m.apply(
        "m",
        &req(json!({"type": "grant", "grant": grant_json("g", "agent", "100", "1")})),
        &Actor::host(),
        Amount(10),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let admit = req(admit_json("o", "a", "g", "10"));
    let first = m
        .apply("m", &admit, &Actor::host(), Amount(10))
        .unwrap_or_else(|e| panic!("{e}"));
    let before = dump(&conn);
    let again = m
        .apply("m", &admit, &Actor::host(), Amount(11))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(again.replayed);
    assert_eq!(
        (again.code, again.seq, &again.result),
        (Code::Ok, first.seq, &first.result)
    );
    assert_eq!(dump(&conn), before, "a resend writes nothing");
    // Same attemptId, different command: the reducer's ATTEMPT_EXISTS.
    let other = req(admit_json("o", "a", "g", "11"));
    let e = m.apply("m", &other, &Actor::host(), Amount(11)).err();
    assert_eq!(
        e.and_then(|e| e.rejection().map(|r| r.code)),
        Some(Code::AttemptExists)
    );
    // An explicit request id reused for a different command.
    let with_id = |v: Value| Request {
        command: cmd(v),
        request_id: Some("req-1".into()),
        implicit_now: false,
    };
    m.apply(
        "m",
        &with_id(json!({"type": "startRun", "runId": "r2"})),
        &Actor::host(),
        Amount(11),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let e = m
        .apply(
            "m",
            &with_id(json!({"type": "startRun", "runId": "r3"})),
            &Actor::host(),
            Amount(11),
        )
        .err();
    assert_eq!(
        e.and_then(|e| e.rejection().map(|r| r.code)),
        Some(Code::RequestIdReused)
    );
    let e = m.apply("zz", &admit, &Actor::host(), Amount(11)).err();
    assert_eq!(
        e.and_then(|e| e.rejection().map(|r| r.code)),
        Some(Code::MissionNotFound)
    );
    let e = m.create(&contract(), &Actor::host(), true, Amount(0)).err();
    assert_eq!(
        e.and_then(|e| e.rejection().map(|r| r.code)),
        Some(Code::MissionExists)
    );
    assert_eq!(durable::check_all(&conn).unwrap_or_default(), vec![]);
}

#[test]
fn exposure_exceeded_persists_its_violation_and_verify_folds_it() {
    let conn = setup();
    let m = SqliteMissions::new(&conn);
    apply_all(
        &m,
        run_grant_admit("10")
            .into_iter()
            .chain([json!({"type": "dispatch", "attemptId": "a"})]),
    );
    let e = m.apply(
        "m",
        &req(
            json!({"type": "settle", "attemptId": "a", "outcome": "SUCCEEDED", "actualCost": "11"}),
        ),
        &Actor::host(),
        Amount(10),
    );
    assert_eq!(
        e.err().and_then(|e| e.rejection().map(|r| r.code)),
        Some(Code::ExposureExceeded)
    );
    let s = m.state("m").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (s.reserved, s.violations.len(), s.revision),
        (Amount(10), 1, Amount(4))
    );
    assert_eq!(m.journal("m").map(|j| j.len()).unwrap_or(0), 5);
    assert_eq!(durable::check_all(&conn).unwrap_or_default(), vec![]);
}

#[test]
fn verify_reports_a_broken_chain_and_a_drifted_state() {
    let conn = setup();
    let m = SqliteMissions::new(&conn);
    apply_all(&m, run_grant_admit("10"));
    // Drift: somebody edits the materialised reserved.
    conn.execute("UPDATE mission_missions SET reserved = '0'", [])
        .unwrap_or_else(|e| panic!("{e}"));
    let p = durable::check_all(&conn).unwrap_or_default();
    assert_eq!(
        p.first().map(|p| p.category),
        Some("mission_state"),
        "{p:?}"
    );
    conn.execute("UPDATE mission_missions SET reserved = '10'", [])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(durable::check_all(&conn).unwrap_or_default(), vec![]);
    // A grant row edited to a larger limit.
    conn.execute(
        "UPDATE mission_grants SET body = replace(body, '\"limit\":\"100\"', '\"limit\":\"999\"')",
        [],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let p = durable::check_all(&conn).unwrap_or_default();
    assert!(
        p.iter()
            .any(|p| p.category == "mission_state" && p.reason.contains("grant g")),
        "{p:?}"
    );
    // A broken chain: the journal is append-only, so tamper below the triggers.
    conn.execute_batch("DROP TRIGGER mission_journal_no_update; UPDATE mission_journal SET entry = CAST(replace(CAST(entry AS TEXT), '\"10\"', '\"11\"') AS BLOB) WHERE seq = 3;")
        .unwrap_or_else(|e| panic!("{e}"));
    let p = durable::check_all(&conn).unwrap_or_default();
    assert!(
        p.iter()
            .any(|p| (p.category, p.seq) == ("mission_chain", Some(3))),
        "{p:?}"
    );
    // The dropped trigger is a finding of its own (issue 27 §3).
    assert!(
        p.iter()
            .any(|p| p.category == "mission_schema"
                && p.reason.contains("mission_journal_no_update")),
        "{p:?}"
    );
}

/// The creation facts (`created_by`, `attended`, `created_at_ms`) are not commands, so no
/// journal entry carries them; they are bound into the chain root instead (DEC-MIS-13). Each
/// edit — on a mission with entries and on one without — is a `mission_chain` finding.
#[test]
fn edited_creation_facts_break_the_chain() {
    for entries in [false, true] {
        for (edit, undo) in [
            (
                "UPDATE mission_missions SET attended = 1",
                "UPDATE mission_missions SET attended = 0",
            ),
            (
                "UPDATE mission_missions SET created_by = replace(created_by, 'host', 'human')",
                "UPDATE mission_missions SET created_by = replace(created_by, 'human', 'host')",
            ),
            (
                "UPDATE mission_missions SET created_at_ms = '5'",
                "UPDATE mission_missions SET created_at_ms = '0'",
            ),
        ] {
            let conn = setup();
            if entries {
                SqliteMissions::new(&conn)
                    .apply(
                        "m",
                        &req(json!({"type": "startRun", "runId": "r"})),
                        &Actor::host(),
                        Amount(10),
                    )
                    .unwrap_or_else(|e| panic!("{e}"));
            }
            assert_eq!(durable::check_all(&conn).unwrap_or_default(), vec![]);
            conn.execute(edit, []).unwrap_or_else(|e| panic!("{e}"));
            let p = durable::check_all(&conn).unwrap_or_default();
            assert_eq!(
                p.first().map(|p| p.category),
                Some("mission_chain"),
                "{edit} (entries: {entries}): {p:?}"
            );
            conn.execute(undo, []).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                durable::check_all(&conn).unwrap_or_default(),
                vec![],
                "{undo}"
            );
        }
    }
}

#[test]
fn the_journal_refuses_update_and_delete() {
    let conn = setup();
    let m = SqliteMissions::new(&conn);
    m.apply(
        "m",
        &req(json!({"type": "startRun", "runId": "r"})),
        &Actor::host(),
        Amount(10),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(conn.execute("DELETE FROM mission_journal", []).is_err());
    assert!(conn
        .execute("UPDATE mission_journal SET prev_hash = 'x'", [])
        .is_err());
}

fn arb_cmd() -> impl Strategy<Value = Value> {
    let s0 = (0u8..4, 0u8..8, 0u128..50).prop_map(|(o, a, amt)| {
        admit_json(
            &format!("o{o}"),
            &format!("a{a}"),
            if a % 2 == 0 { "g" } else { "h" },
            &amt.to_string(),
        )
    });
    let s1 = (0u8..8).prop_map(|a| json!({"type": "dispatch", "attemptId": format!("a{a}")}));
    let s2 = (0u8..8, 0u8..3, 0u128..60).prop_map(|(a, o, c)| {
        let outcome = ["SUCCEEDED", "FAILED", "UNKNOWN"][o as usize];
        let mut v = json!({"type": "settle", "attemptId": format!("a{a}"), "outcome": outcome});
        if o < 2 {
            v["actualCost"] = json!(c.to_string());
        }
        v
    });
    let s3 = (0u8..8).prop_map(|a| json!({"type": "release", "attemptId": format!("a{a}")}));
    let s4 = Just(json!({"type": "revoke", "grantId": "h"}));
    prop_oneof![4 => s0, 3 => s1, 3 => s2, 1 => s3, 1 => s4]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// The fold of the journal equals the stored state, and the stored state equals the
    /// in-memory fold of the same commands, after any sequence.
    #[test]
    fn the_fold_of_the_journal_equals_the_stored_state(cmds in proptest::collection::vec(arb_cmd(), 1..40)) {
        let conn = setup();
        let m = SqliteMissions::new(&conn);
        let c = contract();
        let mut mem = State::create(&c);
        let prelude = [
            json!({"type": "startRun", "runId": "r"}),
            json!({"type": "grant", "grant": grant_json("g", "agent", "100", "1")}),
            json!({"type": "grant", "parentId": "g", "grant": grant_json("h", "agent", "60", "0")}),
        ];
        for v in prelude.into_iter().chain(cmds) {
            let r = req(v);
            let durable = m.apply("m", &r, &Actor::host(), Amount(10));
            match reduce(&mem, &r.command, Amount(10)) {
                Ok(next) => { prop_assert!(durable.is_ok()); mem = next; }
                Err(rej) => {
                    let code = durable.err().and_then(|e| e.rejection().map(|r| r.code));
                    // A resend of an identical admit answers the recorded result instead.
                    if rej.code != Code::AttemptExists {
                        prop_assert_eq!(code, Some(rej.code));
                    }
                    mem = mem.with_violation(&rej);
                }
            }
        }
        let stored = m.state("m").map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&stored, &mem);
        prop_assert_eq!(durable::check_all(&conn).unwrap_or_default(), vec![]);
    }
}

/// DEC-MIS-17 (F1): an implicit clock (the system clock read before the transaction) takes
/// `max(now, lastNow)` under the mission's lock, and an admit whose authorization check is that
/// same reading moves with it; a given clock is still checked as given.
#[test]
fn an_implicit_clock_never_regresses_and_moves_its_own_authorization_check() {
    let conn = setup();
    let m = SqliteMissions::new(&conn);
    let host = Actor::host();
    m.apply(
        "m",
        &req(json!({"type": "startRun", "runId": "r"})),
        &host,
        Amount(10),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let grant = json!({"type": "grant", "grant": grant_json("g", "agent", "100", "1")});
    m.apply("m", &req(grant), &host, Amount(50))
        .unwrap_or_else(|e| panic!("{e}")); // lastNow = 50
    let admit = |attempt: &str, checked: &str| {
        let mut v = admit_json("o", attempt, "g", "10");
        v["authorizationCheckedAt"] = json!(checked);
        req(v)
    };
    // Given: 20 < lastNow 50 is refused, nothing written.
    let before = dump(&conn);
    let e = m.apply("m", &admit("a1", "20"), &host, Amount(20)).err();
    assert_eq!(
        e.and_then(|e| e.rejection().map(|r| r.code)),
        Some(Code::TimeRegressed)
    );
    assert_eq!(dump(&conn), before);
    // Implicit: the same call is applied at 50, its own check (20, the same reading) with it.
    let implicit = admit("a1", "20").on_implicit_clock(true);
    m.apply("m", &implicit, &host, Amount(20))
        .unwrap_or_else(|e| panic!("{e}"));
    let s = m.state("m").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.last_now, Amount(50));
    let last = m.journal("m").unwrap_or_else(|e| panic!("{e}"));
    let d = durable::decode_entry(&last[last.len() - 1].entry).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(d.now, Amount(50), "the journal records the clock used");
    let replay = m.apply("m", &implicit, &host, Amount(20));
    assert!(
        replay.map(|a| a.replayed).unwrap_or(false),
        "a resend answers the recorded result"
    );
    // A check that is not the call's own reading is not moved: 30 is 20 ms old at 50.
    let e = m
        .apply(
            "m",
            &admit("a2", "30").on_implicit_clock(true),
            &host,
            Amount(20),
        )
        .err();
    assert_eq!(
        e.and_then(|e| e.rejection().map(|r| r.code)),
        Some(Code::AuthorizationStale)
    );
    assert!(m.verify().unwrap_or_else(|e| panic!("{e}")).is_empty());
}

fn corrupt_err(r: Result<durable::Applied, durable::Error>) -> String {
    match r {
        Err(durable::Error::Corrupt(c)) => c,
        other => panic!("expected a corruption error, got {other:?}"),
    }
}

fn has(p: &[durable::Problem], category: &str, text: &str) -> bool {
    p.iter()
        .any(|p| p.category == category && p.reason.contains(text))
}

/// F4: `mission_attempts.status`/`run_id` duplicate the verified body. An edited column is a
/// `mission_state` finding, and `completeRun` (which used to select outstanding attempts by
/// the columns) refuses with a corruption error instead of closing a run with an UNKNOWN
/// attempt.
#[test]
fn edited_attempt_index_columns_are_findings_and_never_trusted() {
    let conn = setup();
    let m = SqliteMissions::new(&conn);
    apply_all(
        &m,
        run_grant_admit("10").into_iter().chain([
            json!({"type": "dispatch", "attemptId": "a"}),
            json!({"type": "settle", "attemptId": "a", "outcome": "UNKNOWN"}),
        ]),
    );
    let complete = req(json!({"type": "completeRun", "runId": "r", "criteria": {"review": EV}}));
    for (edit, undo) in [
        (
            "UPDATE mission_attempts SET status = 'SETTLED' WHERE attempt_id = 'a'",
            "UPDATE mission_attempts SET status = 'UNKNOWN' WHERE attempt_id = 'a'",
        ),
        (
            "UPDATE mission_attempts SET run_id = 'other' WHERE attempt_id = 'a'",
            "UPDATE mission_attempts SET run_id = 'r' WHERE attempt_id = 'a'",
        ),
    ] {
        conn.execute(edit, []).unwrap_or_else(|e| panic!("{e}"));
        let p = durable::check_all(&conn).unwrap_or_default();
        assert!(has(&p, "mission_state", "attempt a: the"), "{edit}: {p:?}");
        let before = dump(&conn);
        let why = corrupt_err(m.apply("m", &complete, &Actor::host(), Amount(11)));
        assert!(why.contains("mission_attempts row a"), "{why}");
        assert_eq!(dump(&conn), before, "a refused completeRun writes nothing");
        conn.execute(undo, []).unwrap_or_else(|e| panic!("{e}"));
    }
    assert_eq!(durable::check_all(&conn).unwrap_or_default(), vec![]);
    // With the columns true, the body's UNKNOWN keeps the run open.
    let e = m.apply("m", &complete, &Actor::host(), Amount(11)).err();
    assert_eq!(
        e.and_then(|e| e.rejection().map(|r| r.code)),
        Some(Code::RunHasOutstanding)
    );
}

/// F5: each idempotency row must name the journal entry that used its key, with that entry's
/// command, and each outbox row must carry the payload and preconditions its attempt's refs
/// name. Verify reports every edit; a resend re-checks the entry it would answer from.
#[test]
fn request_rows_and_outbox_bytes_are_verified_and_resends_recheck_their_entry() {
    let conn = setup();
    let m = SqliteMissions::new(&conn);
    apply_all(&m, run_grant_admit("10"));
    let with_id = Request {
        command: cmd(json!({"type": "startRun", "runId": "r2"})),
        request_id: Some("req1".into()),
        implicit_now: false,
    };
    let first = m
        .apply("m", &with_id, &Actor::host(), Amount(10))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(durable::check_all(&conn).unwrap_or_default(), vec![]);
    let seq = first.seq;
    let zero = format!("sha256:{}", "0".repeat(64));
    for (edit, undo, finding) in [
        (
            "UPDATE mission_requests SET seq = 2 WHERE request_id = 'req1'".to_string(),
            format!("UPDATE mission_requests SET seq = {seq} WHERE request_id = 'req1'"),
            "request req1 names entry 2",
        ),
        (
            format!("UPDATE mission_requests SET command_ref = '{zero}' WHERE request_id = 'req1'"),
            format!(
                "UPDATE mission_requests SET command_ref = '{}' WHERE request_id = 'req1'",
                with_id.command.command_ref()
            ),
            "request req1 names entry",
        ),
    ] {
        conn.execute(&edit, []).unwrap_or_else(|e| panic!("{e}"));
        let p = durable::check_all(&conn).unwrap_or_default();
        assert!(has(&p, "mission_state", finding), "{edit}: {p:?}");
        // The resend neither answers another entry as replayed nor calls itself a reuse.
        let why = corrupt_err(m.apply("m", &with_id, &Actor::host(), Amount(11)));
        assert!(why.contains("request req1"), "{why}");
        conn.execute(&undo, []).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(durable::check_all(&conn).unwrap_or_default(), vec![]);
    }
    // A deleted key: a resend would apply the command again.
    conn.execute("DELETE FROM mission_requests WHERE request_id = 'req1'", [])
        .unwrap_or_else(|e| panic!("{e}"));
    let p = durable::check_all(&conn).unwrap_or_default();
    assert!(has(&p, "mission_state", "carries requestId req1"), "{p:?}");
    conn.execute(
        "INSERT INTO mission_requests (mission_id, request_id, command_ref, seq) VALUES ('m', 'req1', ?1, ?2)",
        rusqlite::params![with_id.command.command_ref().to_string(), seq as i64],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(durable::check_all(&conn).unwrap_or_default(), vec![]);
    let again = m
        .apply("m", &with_id, &Actor::host(), Amount(11))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(again.replayed && again.seq == seq, "{again:?}");
    // The outbox payload an adapter enforces, swapped.
    conn.execute(
        "UPDATE mission_outbox SET payload = CAST('{\"path\":\"/etc/shadow\"}' AS BLOB) WHERE attempt_id = 'a'",
        [],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let p = durable::check_all(&conn).unwrap_or_default();
    assert!(has(&p, "mission_state", "payloadRef"), "{p:?}");
}

/// F9: a deleted mission row no longer hides its journal and state from verify, and `create`
/// refuses the id (the leftover journal would collide; the budget would start afresh).
#[test]
fn a_deleted_mission_row_is_a_finding_and_blocks_re_creation() {
    let conn = setup();
    let m = SqliteMissions::new(&conn);
    apply_all(&m, run_grant_admit("60"));
    // As `sqlite3` does it (no foreign-key enforcement there by default).
    conn.execute_batch("PRAGMA foreign_keys = OFF; DELETE FROM mission_missions")
        .unwrap_or_else(|e| panic!("{e}"));
    let p = durable::check_all(&conn).unwrap_or_default();
    assert!(
        p.iter().any(|p| p.category == "mission_chain"
            && p.mission_id == "m"
            && p.reason.contains("mission_journal")
            && p.reason.contains("no mission_missions row")),
        "{p:?}"
    );
    let before = dump(&conn);
    match m.create(&contract(), &Actor::host(), false, Amount(0)) {
        Err(durable::Error::Corrupt(why)) => {
            assert!(why.contains("mission_journal"), "{why}")
        }
        other => panic!("re-created over its journal: {other:?}"),
    }
    assert_eq!(dump(&conn), before, "the refused create wrote nothing");
}

/// F12: the check reads one snapshot. A writer that commits between two reads of the check
/// (here: right after the check began its transaction, on a WAL file) is not seen half-way.
#[test]
fn verify_reads_one_snapshot_of_a_ledger_file() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("led.db");
    let a = Connection::open(&path).unwrap_or_else(|e| panic!("{e}"));
    a.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
        .unwrap_or_else(|e| panic!("{e}"));
    let m = SqliteMissions::new(&a);
    m.create(&contract(), &Actor::host(), false, Amount(0))
        .unwrap_or_else(|e| panic!("{e}"));
    m.apply(
        "m",
        &req(json!({"type": "startRun", "runId": "r"})),
        &Actor::host(),
        Amount(10),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // The reader opens its snapshot (as check_all's transaction does) ...
    let b = Connection::open(&path).unwrap_or_else(|e| panic!("{e}"));
    b.execute_batch("BEGIN").unwrap_or_else(|e| panic!("{e}"));
    let n: i64 = b
        .query_row("SELECT count(*) FROM mission_missions", [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(n, 1);
    // ... a writer commits a command in between ...
    m.apply(
        "m",
        &req(json!({"type": "startRun", "runId": "r2"})),
        &Actor::host(),
        Amount(10),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    // ... and the check inside the reader's transaction sees one consistent state.
    assert_eq!(durable::check_all(&b).unwrap_or_default(), vec![]);
    b.execute_batch("ROLLBACK")
        .unwrap_or_else(|e| panic!("{e}"));
    // check_all on an idle connection opens (and ends) its own read transaction.
    assert_eq!(durable::check_all(&b).unwrap_or_default(), vec![]);
    assert!(b.is_autocommit());
}
