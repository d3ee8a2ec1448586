//! Fold digests kept with every journal entry, and the check a mission command runs before it
//! decides (issue 27 §3, DEC-LEDGER-1..4) — the mission side of [`crate::ledger::seal`].
//!
//! The mission row's counters (`reserved`, `settled`, `revision`, `journal_seq`, `head_hash`,
//! …) and the state rows (runs, grants with their `used`, operations, approvals, attempts) are
//! caches of the fold of `mission_journal`. `verify` re-folds them all; a command cannot. So
//! every command appends, beside its journal entry, one `mission_folds` row per row it left
//! changed: `(mission_id, kind, key, seq, digest)`, `digest` the SHA-256 of the row's columns
//! ([`crate::ledger::seal::row_digest`]). `mission_folds` is append-only (triggers).
//!
//! Before a command decides, [`check_head`] refuses (exit 3, nothing written) a missing or
//! disabled append-only trigger, a journal whose newest entry is not the mission row's
//! `journal_seq`/`head_hash` (or that holds another number of entries), and a mission row whose
//! digest is not the latest recorded; [`check_rows`] then does the same for every state row
//! the command read. A mission that has no digests yet (made before this table existed, or
//! whose table was just created) is fully re-folded first (`verify`'s per-mission check),
//! and must come back clean, before its baseline digests are recorded.

use std::collections::BTreeSet;

use super::durable::{self, Error};
use super::state::State;
use crate::ledger::db::{query_opt, vals, Backend, Db, Row};
use crate::ledger::seal::{missing_triggers, row_digest, AppendOnly};

/// The `mission_folds` DDL for SQLite.
pub(crate) const SQLITE_DDL: &str = r#"
CREATE TABLE IF NOT EXISTS mission_folds (
  mission_id TEXT NOT NULL,
  kind       TEXT NOT NULL,
  key        TEXT NOT NULL,
  seq        INTEGER NOT NULL,
  digest     TEXT NOT NULL,
  PRIMARY KEY (mission_id, kind, key, seq)
) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS mission_folds_no_update BEFORE UPDATE ON mission_folds
BEGIN SELECT RAISE(ABORT, 'mission_folds is append-only'); END;
CREATE TRIGGER IF NOT EXISTS mission_folds_no_delete BEFORE DELETE ON mission_folds
BEGIN SELECT RAISE(ABORT, 'mission_folds is append-only'); END;
"#;

/// The mission tables on PostgreSQL that get a statement-level TRUNCATE refusal besides the
/// journal (whose `mission_journal_no_truncate` the mission DDL creates), `mission_folds` last.
pub const PG_TRUNCATE_GUARDED: [&str; 11] = [
    "mission_schema",
    "mission_missions",
    "mission_requests",
    "mission_runs",
    "mission_grants",
    "mission_operations",
    "mission_approvals",
    "mission_attempts",
    "mission_violations",
    "mission_outbox",
    "mission_folds",
];

/// The mission tables' append-only shape (the journal, the folds, the TRUNCATE refusals).
pub(crate) const APPEND_ONLY: AppendOnly = AppendOnly {
    log: "mission_journal",
    folds: "mission_folds",
    truncate_guarded: &PG_TRUNCATE_GUARDED,
};

/// The `mission_folds` DDL for PostgreSQL, with the TRUNCATE refusal on every mission table.
pub fn pg_ddl() -> String {
    let mut sql = String::from(
        r#"
CREATE TABLE IF NOT EXISTS mission_folds (
  mission_id TEXT COLLATE "C" NOT NULL,
  kind       TEXT COLLATE "C" NOT NULL,
  key        TEXT COLLATE "C" NOT NULL,
  seq        BIGINT NOT NULL,
  digest     TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (mission_id, kind, key, seq)
);
CREATE OR REPLACE FUNCTION mission_folds_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'mission_folds is append-only'; END; $$;
DROP TRIGGER IF EXISTS mission_folds_no_change ON mission_folds;
CREATE TRIGGER mission_folds_no_change BEFORE UPDATE OR DELETE ON mission_folds
  FOR EACH ROW EXECUTE FUNCTION mission_folds_append_only();
CREATE OR REPLACE FUNCTION ledger_no_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'TRUNCATE of % is refused: the ledger is append-only', TG_TABLE_NAME; END; $$;
"#,
    );
    sql.push_str(&APPEND_ONLY.truncate_refusals());
    sql
}

/// The append-only triggers the mission tables must have (with `mission_folds` when it
/// exists).
pub(crate) fn expected_triggers(db: &dyn Db, folds: bool) -> Vec<String> {
    APPEND_ONLY.expected_triggers(db, folds)
}

/// The missing, disabled or non-refusing append-only triggers of the mission tables, as one
/// finding (`None` when all are live). For `verify`, and the first step of [`check_head`].
///
/// # Errors
/// Storage errors.
pub(crate) fn trigger_finding(db: &dyn Db) -> Result<Option<String>, Error> {
    let folds = db.table_exists("mission_folds")?;
    let missing = missing_triggers(db, &expected_triggers(db, folds))?;
    Ok((!missing.is_empty()).then(|| {
        format!(
            "append-only trigger(s) of the mission tables missing, disabled or not refusing: {}",
            missing.join(", ")
        )
    }))
}

fn integrity(mission_id: &str, why: impl std::fmt::Display) -> Error {
    Error::Corrupt(format!(
        "integrity: mission {mission_id}: {why}; the command was refused and nothing was written"
    ))
}

/// The kinds of state rows: `(kind, table, key column, extra columns hashed before the body)`.
const KINDS: [(&str, &str, &str, &str); 5] = [
    ("run", "mission_runs", "run_id", ""),
    ("grant", "mission_grants", "grant_id", ""),
    ("operation", "mission_operations", "operation_id", ""),
    ("approval", "mission_approvals", "operation_id", ""),
    (
        "attempt",
        "mission_attempts",
        "attempt_id",
        "run_id, status, ",
    ),
];

/// The mission row's columns (every one).
const HEAD_SQL: &str = "SELECT mission_id, contract_ref, contract, created_by, attended, \
    created_at_ms, revision, reserved, settled, last_now, journal_seq, head_hash, violations \
    FROM mission_missions WHERE mission_id = ?1";

fn digest_of(
    db: &dyn Db,
    mission_id: &str,
    kind: &str,
    key: &str,
) -> Result<Option<String>, Error> {
    let row: Option<Row> = if kind == "mission" {
        query_opt(db, HEAD_SQL, &vals![mission_id])?
    } else {
        let Some((_, table, col, extra)) = KINDS.iter().find(|k| k.0 == kind) else {
            return Ok(None);
        };
        query_opt(
            db,
            &format!("SELECT {extra}body FROM {table} WHERE mission_id = ?1 AND {col} = ?2"),
            &vals![mission_id, key],
        )?
    };
    Ok(row.as_ref().map(row_digest))
}

fn latest(db: &dyn Db, mission_id: &str, kind: &str, key: &str) -> Result<Option<String>, Error> {
    Ok(query_opt(
        db,
        "SELECT digest FROM mission_folds WHERE mission_id = ?1 AND kind = ?2 AND key = ?3 ORDER BY seq DESC LIMIT 1",
        &vals![mission_id, kind, key],
    )?
    .map(|r| r.text(0))
    .transpose()?)
}

/// Every `(kind, key)` of the state rows `s` holds.
fn keys_of(s: &State) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    out.extend(s.runs.keys().map(|k| ("run", k.clone())));
    out.extend(s.grants.keys().map(|k| ("grant", k.clone())));
    out.extend(s.operations.keys().map(|k| ("operation", k.clone())));
    out.extend(s.approvals.keys().map(|k| ("approval", k.clone())));
    out.extend(s.attempts.keys().map(|k| ("attempt", k.clone())));
    out
}

/// Create `mission_folds` (on PostgreSQL with the TRUNCATE refusals, under the ledger's lock
/// so two first commands do not race on the DDL) when it is missing.
///
/// # Errors
/// Storage errors (on PostgreSQL, a role that may not create tables or triggers: run one
/// mission command as the tables' owner, docs/LEDGER.md).
pub(crate) fn ensure_table(db: &dyn Db) -> Result<(), Error> {
    if db.table_exists("mission_folds")? {
        return Ok(());
    }
    match db.backend() {
        Backend::Sqlite => db.exec_batch(SQLITE_DDL)?,
        Backend::Postgres => {
            db.lock_ledger()?;
            db.exec_batch(&pg_ddl())?;
        }
    }
    Ok(())
}

/// Before a command on `mission_id` decides: the triggers, the journal head, and the mission
/// row's digest. Creates `mission_folds` when missing; a mission without digests is re-folded
/// in full (clean, or refused) and gets its baseline.
///
/// # Errors
/// [`Error::Corrupt`] (exit 3) naming the disagreement; storage errors.
pub(crate) fn check_head(db: &dyn Db, mission_id: &str) -> Result<(), Error> {
    ensure_table(db)?;
    if let Some(t) = trigger_finding(db)? {
        return Err(integrity(mission_id, t));
    }
    let head = query_opt(
        db,
        "SELECT journal_seq, head_hash FROM mission_missions WHERE mission_id = ?1",
        &vals![mission_id],
    )?
    .ok_or_else(|| durable::not_found(mission_id))?;
    let (seq, hash) = (head.int(0)?, head.text(1)?);
    let newest = query_opt(
        db,
        "SELECT seq, entry_hash FROM mission_journal WHERE mission_id = ?1 ORDER BY seq DESC LIMIT 1",
        &vals![mission_id],
    )?;
    let count = query_opt(
        db,
        "SELECT count(*) FROM mission_journal WHERE mission_id = ?1",
        &vals![mission_id],
    )?
    .map(|r| r.int(0))
    .transpose()?
    .unwrap_or(0);
    match newest {
        Some(n) if n.int(0)? != seq || n.text(1)? != hash => {
            return Err(integrity(
                mission_id,
                format!(
                "the newest journal entry is {} ({}) but the mission row records {seq} ({hash})",
                n.int(0)?,
                n.text(1)?
            ),
            ))
        }
        None if seq != 0 => {
            return Err(integrity(
                mission_id,
                format!("the journal is empty but the mission row records entry {seq}"),
            ))
        }
        _ => {}
    }
    if count != seq {
        return Err(integrity(
            mission_id,
            format!("the journal holds {count} entries where 1..={seq} were written"),
        ));
    }
    let have = query_opt(
        db,
        "SELECT 1 FROM mission_folds WHERE mission_id = ?1 LIMIT 1",
        &vals![mission_id],
    )?;
    if have.is_none() {
        return baseline(db, mission_id, seq);
    }
    let now = digest_of(db, mission_id, "mission", "")?;
    if now != latest(db, mission_id, "mission", "")? {
        return Err(integrity(
            mission_id,
            "the mission row (reserved, settled, revision or journal head) differs from what its last command wrote",
        ));
    }
    Ok(())
}

/// The state rows a command read (`working`) against their latest digests.
///
/// # Errors
/// [`Error::Corrupt`] (exit 3); storage errors.
pub(crate) fn check_rows(db: &dyn Db, mission_id: &str, working: &State) -> Result<(), Error> {
    for (kind, key) in keys_of(working) {
        let now = digest_of(db, mission_id, kind, &key)?;
        match latest(db, mission_id, kind, &key)? {
            Some(want) if now.as_deref() == Some(want.as_str()) => {}
            Some(_) => {
                return Err(integrity(
                    mission_id,
                    format!("the {kind} row {key} differs from what its last command wrote (an edited counter or status)"),
                ))
            }
            None => {
                return Err(integrity(
                    mission_id,
                    format!("the {kind} row {key} was never written by a mission command"),
                ))
            }
        }
    }
    Ok(())
}

/// After a command's writes (journal entry `seq`): record the digest of the mission row and
/// of every state row of `touched` whose digest changed.
///
/// # Errors
/// Storage errors.
pub(crate) fn record(
    db: &dyn Db,
    mission_id: &str,
    seq: u64,
    touched: &State,
) -> Result<(), Error> {
    let seq = i64::try_from(seq).map_err(|_| Error::Corrupt("journal sequence overflow".into()))?;
    let mut keys = vec![("mission", String::new())];
    keys.extend(keys_of(touched));
    let mut done = BTreeSet::new();
    for (kind, key) in keys {
        if !done.insert((kind, key.clone())) {
            continue;
        }
        let Some(d) = digest_of(db, mission_id, kind, &key)? else {
            continue;
        };
        if latest(db, mission_id, kind, &key)?.as_deref() != Some(d.as_str()) {
            db.exec(
                "INSERT INTO mission_folds (mission_id, kind, key, seq, digest) VALUES (?1, ?2, ?3, ?4, ?5)",
                &vals![mission_id, kind, key, seq, d],
            )?;
        }
    }
    Ok(())
}

/// A mission with no digests: re-fold it in full (as `verify` does), and record every row's
/// digest at entry `seq` when clean.
fn baseline(db: &dyn Db, mission_id: &str, seq: i64) -> Result<(), Error> {
    let mut problems = Vec::new();
    durable::check_one(db, mission_id, &mut problems)?;
    if let Some(p) = problems.first() {
        return Err(integrity(
            mission_id,
            format!(
                "recording its first fold digests needs a clean re-fold of its journal, and it found {} problem(s), first: {}",
                problems.len(),
                p.reason
            ),
        ));
    }
    let mut keys = vec![("mission", String::new())];
    for (kind, table, col, _) in KINDS {
        for r in db.query(
            &format!("SELECT {col} FROM {table} WHERE mission_id = ?1"),
            &vals![mission_id],
        )? {
            keys.push((kind, r.text(0)?));
        }
    }
    for (kind, key) in keys {
        if let Some(d) = digest_of(db, mission_id, kind, &key)? {
            db.exec(
                "INSERT INTO mission_folds (mission_id, kind, key, seq, digest) VALUES (?1, ?2, ?3, ?4, ?5)",
                &vals![mission_id, kind, key, seq, d],
            )?;
        }
    }
    Ok(())
}
