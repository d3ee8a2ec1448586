//! Test helpers shared by the ledger's unit and property tests.

use super::*;
use std::cell::Cell;

pub(crate) const EXAMPLE: &[u8] = include_bytes!("../../fixtures/limits/example.json");

/// A sha256 ref the test evidence check accepts.
pub(crate) fn good_evidence() -> String {
    HashRef::of(b"signed approval").to_string()
}

pub(crate) fn evidence_ok(r: &HashRef) -> bool {
    *r == HashRef::of(b"signed approval")
}

pub(crate) fn host() -> ActorFacts {
    ActorFacts::new(ActorKind::Host, "host:test", 0)
}
pub(crate) fn human() -> ActorFacts {
    ActorFacts::new(ActorKind::Human, "human:ann", 0)
}
pub(crate) fn agent(episode: &str) -> ActorFacts {
    ActorFacts::agent("cred-1", episode, 0)
}

/// An in-memory database with the ledger inside it, as the store file would hold it.
pub(crate) struct T {
    pub(crate) conn: Connection,
    next: Cell<u64>,
}

impl T {
    pub(crate) fn new() -> T {
        let conn = Connection::open_in_memory().unwrap_or_else(|e| panic!("open: {e}"));
        conn.execute_batch("PRAGMA foreign_keys=ON;")
            .unwrap_or_else(|e| panic!("pragma: {e}"));
        T {
            conn,
            next: Cell::new(0),
        }
    }

    pub(crate) fn with_config(config: &[u8]) -> T {
        let t = T::new();
        let v = t.run(
            Command::Init {
                config: config.to_vec(),
            },
            &host(),
            0,
        );
        assert!(v.is_ok(), "init failed: {v:?}");
        t
    }

    pub(crate) fn rid(&self) -> String {
        let n = self.next.get() + 1;
        self.next.set(n);
        format!("req-{n}")
    }

    pub(crate) fn run(
        &self,
        cmd: Command,
        actor: &ActorFacts,
        now: u128,
    ) -> Result<Verdict, Error> {
        self.req(Request::new(self.rid(), cmd), actor, now)
    }

    pub(crate) fn req(
        &self,
        req: Request,
        actor: &ActorFacts,
        now: u128,
    ) -> Result<Verdict, Error> {
        Ledger::open_in(&self.conn).execute(&req, actor, now, &evidence_ok)
    }

    /// The result code of a command (`ok` on success).
    pub(crate) fn code(&self, cmd: Command, actor: &ActorFacts, now: u128) -> Code {
        match self.run(cmd, actor, now) {
            Ok(v) => v.code,
            Err(Error::Rejected(v)) => v.code,
            Err(e) => panic!("storage error: {e}"),
        }
    }

    pub(crate) fn report(&self, now: u128) -> Report {
        Ledger::open_in(&self.conn)
            .report(now, None)
            .unwrap_or_else(|e| panic!("report: {e}"))
    }

    pub(crate) fn usage(&self, scope: &str, now: u128) -> report::Usage {
        let r = self.report(now);
        r.scopes
            .iter()
            .find(|s| s.scope_id == scope)
            .map(|s| s.usage)
            .unwrap_or_else(|| panic!("no scope {scope}"))
    }

    /// Every row of every ledger table, in a stable order, as text.
    pub(crate) fn dump(&self) -> Vec<String> {
        let mut out = Vec::new();
        for table in schema::TABLES {
            let exists: i64 = self
                .conn
                .query_row(
                    "SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?1",
                    [table],
                    |r| r.get(0),
                )
                .unwrap_or(0);
            if exists == 0 {
                continue;
            }
            let mut stmt = self
                .conn
                .prepare(&format!("SELECT * FROM {table} ORDER BY 1, 2"))
                .unwrap_or_else(|e| panic!("{e}"));
            let cols = stmt.column_count();
            let rows = stmt
                .query_map([], |r| {
                    let mut line = format!("{table}:");
                    for i in 0..cols {
                        let v: rusqlite::types::Value = r.get(i)?;
                        line.push_str(&format!(" {v:?}"));
                    }
                    Ok(line)
                })
                .unwrap_or_else(|e| panic!("{e}"));
            for row in rows {
                out.push(row.unwrap_or_else(|e| panic!("{e}")));
            }
        }
        out
    }
}

pub(crate) fn reserve(
    attempt: &str,
    scope: &str,
    purpose: Purpose,
    amount: u128,
    max_active: u128,
) -> Command {
    Command::Reserve {
        attempt_id: attempt.into(),
        operation_id: attempt.into(),
        scope_id: scope.into(),
        run_id: None,
        purpose,
        amount: Amount(amount),
        max_active_ms: Amount(max_active),
        paired: false,
    }
}

pub(crate) fn dispatch(attempt: &str) -> Command {
    Command::Dispatch {
        attempt_id: attempt.into(),
    }
}

pub(crate) fn settle(attempt: &str, actual: u128) -> Command {
    Command::Settle {
        attempt_id: attempt.into(),
        outcome: Outcome::Succeeded,
        actual_cost: Some(Amount(actual)),
        effect_outcome: false,
    }
}

pub(crate) fn settle_unknown(attempt: &str) -> Command {
    Command::Settle {
        attempt_id: attempt.into(),
        outcome: Outcome::Unknown,
        actual_cost: None,
        effect_outcome: false,
    }
}

pub(crate) fn release(attempt: &str) -> Command {
    Command::Release {
        never_dispatched: false,
        attempt_id: attempt.into(),
    }
}

pub(crate) fn stop(scope: &str) -> Command {
    Command::Stop {
        scope_id: scope.into(),
        reason: "operator stop".into(),
        evidence_ref: None,
    }
}

pub(crate) fn reconcile(attempt: &str, actual: u128, evidence: Option<String>) -> Command {
    Command::Reconcile {
        attempt_id: attempt.into(),
        actual_cost: Amount(actual),
        evidence_ref: evidence,
    }
}

pub(crate) fn adjust(scope: &str, kind: LimitKind, value: Option<u128>, resume: bool) -> Command {
    let mut limits = BoundsPatch::default();
    if value.is_some() || !resume {
        limits.set(kind, value.map(Amount));
    }
    Command::Adjust {
        scope_id: scope.into(),
        limits,
        resume,
        evidence_ref: Some(good_evidence()),
    }
}

/// `wo` (cost 100, handoff 10) → `run` → branches `b1`, `b2` (b2 dependsOn b1).
pub(crate) fn config_with(scopes: &str) -> Vec<u8> {
    format!(r#"{{"profile":"aiws-limits/1","ledgerId":"t","unit":"cents","scopes":[{scopes}]}}"#)
        .into_bytes()
}
