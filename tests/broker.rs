//! The broker's live pipeline against a real store and the native Workspace handlers:
//! allowed, failed (confinement) and denied effects, spend seeding and receipts.

use std::time::{Duration, Instant};

use world::authority::grants::parse_grant;
use world::authority::session::{self, MintRequest};
use world::broker::handlers::{HandlerContext, HandlerRegistry, Services};
use world::broker::{spend, Broker, Request, Status};
use world::store::journal::{self, ReceiptState};
use world::store::{Store, WriteOptions};

struct Env {
    _dir: tempfile::TempDir,
    db: std::path::PathBuf,
    worktree: std::path::PathBuf,
}

fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("w.db");
    let root = dir.path().join("ws");
    let worktree = root.join("ep1");
    std::fs::create_dir_all(&worktree).unwrap();
    std::fs::write(worktree.join("notes.txt"), "a\nb\n").unwrap();
    Env {
        _dir: dir,
        db,
        worktree,
    }
}

fn req(effect: &str, payload: &str) -> Request {
    Request {
        effect: effect.into(),
        scope: "worktree".into(),
        cost: 1,
        payload: payload.as_bytes().to_vec(),
    }
}

#[test]
fn allowed_failed_and_denied_effects_are_recorded_and_spend_survives() {
    let e = env();
    let mut store = Store::open_write(
        &e.db,
        WriteOptions {
            create: true,
            wait_lock: None,
        },
    )
    .unwrap();
    let now = 1_700_000_000;
    let token = session::new_token().unwrap();
    let grants = vec![parse_grant("Workspace.Read=worktree:2").unwrap()];
    {
        let tx = store.immediate().unwrap();
        let r = MintRequest {
            episode: "ep1".into(),
            grants,
            ttl: 3600,
            now,
            attended: false,
            workspace_root: None,
            limits_scope: None,
            mission: None,
        };
        session::mint(&tx, &token, &r).unwrap();
        tx.commit().unwrap();
    }
    let s = session::resolve(store.conn(), &token, now).unwrap();
    let ctx = HandlerContext {
        episode: "ep1".into(),
        worktree: Some(e.worktree.clone()),
        db_path: e.db.clone(),
        ..Default::default()
    };
    let handlers = HandlerRegistry::for_episode(&ctx, Services::default());
    let broker = Broker {
        episode: "ep1",
        grants: &s.grants,
        now,
        handlers: &handlers,
        ctx: &ctx,
        limits: None,
        mission: None,
        // As the coordinator drives it: every intent travels with its started marker.
        with_intent: Some(world::ops::invoke::started_marker("cli:ep1:t")),
        new_store_id: None,
        intent_committed: std::cell::Cell::new(false),
    };
    let deadline = Instant::now() + Duration::from_secs(5);

    let ok = broker
        .execute(
            &mut store,
            &req("Workspace.Read", r#"{"op":"read","path":"notes.txt"}"#),
            deadline,
        )
        .unwrap();
    assert_eq!(ok.status, Status::Ok);
    let out: serde_json::Value = serde_json::from_slice(ok.output.as_ref().unwrap()).unwrap();
    assert_eq!(out["content"], "a\nb\n");
    let rec = ok.record_body.clone().unwrap();
    assert_eq!(
        (rec.budget_before, rec.budget_after, rec.allowed, rec.failed),
        (2, 1, true, false)
    );
    rec.check_law().unwrap();

    // An escape is a handler failure: recorded failed, and the unit stays spent.
    let failed = broker
        .execute(
            &mut store,
            &req(
                "Workspace.Read",
                r#"{"op":"read","path":"../../etc/passwd"}"#,
            ),
            deadline,
        )
        .unwrap();
    assert_eq!(failed.status, Status::Failed);
    let frec = failed.record_body.clone().unwrap();
    assert_eq!(
        (
            frec.budget_before,
            frec.budget_after,
            frec.failed,
            frec.result_ref.as_str()
        ),
        (1, 0, true, "")
    );

    // Budget exhausted: a denial, recorded, not spend.
    let denied = broker
        .execute(
            &mut store,
            &req("Workspace.Read", r#"{"op":"read","path":"notes.txt"}"#),
            deadline,
        )
        .unwrap();
    assert_eq!(denied.status, Status::Denied);
    assert_eq!(denied.message.as_deref(), Some("denied:budget"));
    assert!(denied.intent_id.is_none());
    let spent = spend(store.conn(), "ep1").unwrap();
    assert_eq!(
        spent.get(&("Workspace.Read".to_string(), "worktree".to_string())),
        Some(&2)
    );

    // Receipts for both effect intents are resolved with their records.
    let r1 = journal::receipt(store.conn(), ok.intent_id.as_ref().unwrap()).unwrap();
    assert_eq!(
        (r1.state, r1.record_ref.as_deref(), r1.status.as_deref()),
        (
            ReceiptState::Resolved,
            ok.record.as_deref(),
            Some("succeeded")
        )
    );
    let r2 = journal::receipt(store.conn(), failed.intent_id.as_ref().unwrap()).unwrap();
    assert_eq!(r2.status.as_deref(), Some("failed"));

    // A re-minted session for the same episode starts from the spend, not the minted budget.
    let token2 = session::new_token().unwrap();
    {
        let tx = store.immediate().unwrap();
        let r = MintRequest {
            episode: "ep1".into(),
            grants: vec![parse_grant("Workspace.Read=worktree:2").unwrap()],
            ttl: 3600,
            now,
            attended: true,
            workspace_root: None,
            limits_scope: None,
            mission: None,
        };
        session::mint(&tx, &token2, &r).unwrap();
        tx.commit().unwrap();
    }
    let s2 = session::resolve(store.conn(), &token2, now).unwrap();
    let broker2 = Broker {
        episode: "ep1",
        grants: &s2.grants,
        now,
        handlers: &handlers,
        ctx: &ctx,
        limits: None,
        mission: None,
        // As the coordinator drives it: every intent travels with its started marker.
        with_intent: Some(world::ops::invoke::started_marker("cli:ep1:t")),
        new_store_id: None,
        intent_committed: std::cell::Cell::new(false),
    };
    let again = broker2
        .execute(
            &mut store,
            &req("Workspace.Read", r#"{"op":"read","path":"notes.txt"}"#),
            deadline,
        )
        .unwrap();
    assert_eq!(again.status, Status::Denied);

    drop(store);
    let ro = Store::open_read(&e.db).unwrap();
    let report = world::ops::verify::verify(&ro, false, &mut |_, _| {}).unwrap();
    assert!(report.ok(), "{:?}", report.failures);
}

#[test]
fn an_effect_without_a_handler_writes_nothing() {
    let e = env();
    let mut store = Store::open_write(
        &e.db,
        WriteOptions {
            create: true,
            wait_lock: None,
        },
    )
    .unwrap();
    let grants = vec![parse_grant("Nope.Effect=worktree:5").unwrap()];
    let grants: Vec<_> = grants
        .into_iter()
        .map(|g| world::authority::grants::Grant {
            expires_at: i64::MAX,
            ..g
        })
        .collect();
    let ctx = HandlerContext {
        episode: "ep1".into(),
        worktree: None,
        db_path: e.db.clone(),
        ..Default::default()
    };
    let handlers = HandlerRegistry::for_episode(&ctx, Services::default());
    let broker = Broker {
        episode: "ep1",
        grants: &grants,
        now: 10,
        handlers: &handlers,
        ctx: &ctx,
        limits: None,
        mission: None,
        // As the coordinator drives it: every intent travels with its started marker.
        with_intent: Some(world::ops::invoke::started_marker("cli:ep1:t")),
        new_store_id: None,
        intent_committed: std::cell::Cell::new(false),
    };
    let before: i64 = store
        .conn()
        .query_row("SELECT count(*) FROM objects", [], |r| r.get(0))
        .unwrap();
    let err = broker
        .execute(
            &mut store,
            &req("Nope.Effect", "{}"),
            Instant::now() + Duration::from_secs(1),
        )
        .unwrap_err();
    assert!(err.to_string().contains("no handler"), "{err}");
    let after: i64 = store
        .conn()
        .query_row("SELECT count(*) FROM objects", [], |r| r.get(0))
        .unwrap();
    assert_eq!(before, after);
}
