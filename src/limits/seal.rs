//! Fold digests kept with every event, and the check a deciding command runs before it acts
//! (issue 27 §3, DEC-LEDGER-1..4).
//!
//! The `limits_*` tables the commands decide on (`limits_scopes`' usage and bounds,
//! `limits_attempts`' amounts and states) are caches of the fold of `limits_events`. A full
//! re-fold ([`super::fold::check`], `world verify`) proves them, but it reads every event, so a
//! command cannot afford it. Instead every applied command appends, beside its event, one
//! `limits_folds` row per scope or attempt row it changed: `(kind, key, revision, live,
//! digest)`, where `digest` is the SHA-256 of the row's column values as the command left them
//! ([`row_digest`]). `limits_folds` is append-only (triggers), so the latest digest of a key is
//! what the ledger itself last wrote there.
//!
//! [`check`] runs in every command's transaction before it reads anything it decides on:
//! - the append-only triggers are present and raise (a dropped or disabled trigger, or a
//!   trigger function replaced by a no-op, is refused);
//! - the chain head: the newest event is at `limits_meta.revision` with
//!   `limits_meta.head_event_hash`, and there are exactly that many events (a deleted, forged
//!   or truncated event is refused);
//! - every scope row hashes to its latest digest, and the scope keys match (an edited usage
//!   or bound, a deleted or truncated scope is refused);
//! - every outstanding attempt (RESERVED, DISPATCHED, UNKNOWN) — whether the row says so or
//!   its latest digest does — and the attempt the command names hash to their latest digests.
//!
//! Any disagreement is [`Error::Corrupt`] (exit 3) and the command writes nothing. A ledger
//! written before `limits_folds` existed is upgraded by its first command: a full re-fold
//! must come back clean, then the table (and, on PostgreSQL, the TRUNCATE refusals on every
//! ledger table) is created and every scope and attempt gets a baseline digest. Dropping
//! `limits_folds` therefore gains an attacker nothing: the next command re-folds everything.
//!
//! What this cannot catch: a writer with the runtime role's own rights appending a
//! consistent, valid command (it could have run that command) — the limit every unkeyed
//! hash chain has (DEC-LEDGER-2).

use std::collections::{BTreeMap, BTreeSet};

use super::ledger::Meta;
use super::Error;
use crate::ledger::db::{query_opt, vals, Db};
use crate::ledger::seal::{missing_triggers, row_digest, AppendOnly};

/// The `limits_folds` DDL for SQLite (a ledger file, the store file).
pub(crate) const SQLITE_DDL: &str = r#"
CREATE TABLE IF NOT EXISTS limits_folds (
  kind     TEXT NOT NULL,
  key      TEXT NOT NULL,
  revision INTEGER NOT NULL,
  live     INTEGER NOT NULL,
  digest   TEXT NOT NULL,
  PRIMARY KEY (kind, key, revision)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS limits_folds_live ON limits_folds(kind, live, key);
CREATE INDEX IF NOT EXISTS limits_folds_by_revision ON limits_folds(kind, revision);
CREATE TRIGGER IF NOT EXISTS limits_folds_no_update BEFORE UPDATE ON limits_folds
BEGIN SELECT RAISE(ABORT, 'limits_folds is append-only'); END;
CREATE TRIGGER IF NOT EXISTS limits_folds_no_delete BEFORE DELETE ON limits_folds
BEGIN SELECT RAISE(ABORT, 'limits_folds is append-only'); END;
"#;

/// Every limits table on PostgreSQL that gets a statement-level TRUNCATE refusal.
pub const PG_TABLES: [&str; 9] = [
    "limits_schema",
    "limits_meta",
    "limits_scopes",
    "limits_closure",
    "limits_attempts",
    "limits_requests",
    "limits_events",
    "limits_violations",
    "limits_folds",
];

/// The `limits_folds` DDL for PostgreSQL, with the TRUNCATE refusal on every ledger table
/// (`TRUNCATE limits_scopes CASCADE` empties nothing).
pub fn pg_ddl() -> String {
    let mut sql = String::from(
        r#"
CREATE TABLE IF NOT EXISTS limits_folds (
  kind     TEXT COLLATE "C" NOT NULL,
  key      TEXT COLLATE "C" NOT NULL,
  revision BIGINT NOT NULL,
  live     BIGINT NOT NULL,
  digest   TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (kind, key, revision)
);
CREATE INDEX IF NOT EXISTS limits_folds_live ON limits_folds(kind, live, key);
CREATE INDEX IF NOT EXISTS limits_folds_by_revision ON limits_folds(kind, revision);
CREATE OR REPLACE FUNCTION limits_folds_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'limits_folds is append-only'; END; $$;
DROP TRIGGER IF EXISTS limits_folds_no_change ON limits_folds;
CREATE TRIGGER limits_folds_no_change BEFORE UPDATE OR DELETE ON limits_folds
  FOR EACH ROW EXECUTE FUNCTION limits_folds_append_only();
CREATE OR REPLACE FUNCTION ledger_no_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'TRUNCATE of % is refused: the ledger is append-only', TG_TABLE_NAME; END; $$;
"#,
    );
    sql.push_str(&APPEND_ONLY.truncate_refusals());
    sql
}

/// Create `limits_folds` (and on PostgreSQL the TRUNCATE refusals), in this transaction.
///
/// # Errors
/// Storage errors.
pub(crate) fn create_folds(db: &dyn Db) -> Result<(), Error> {
    if is_pg(db) {
        db.exec_batch(&pg_ddl())?;
    } else {
        db.exec_batch(SQLITE_DDL)?;
    }
    Ok(())
}

/// `true` on PostgreSQL (the catalog queries differ).
fn is_pg(db: &dyn Db) -> bool {
    db.backend() == crate::ledger::db::Backend::Postgres
}

/// The limits tables' append-only shape (the log, the folds, the TRUNCATE refusals).
pub(crate) const APPEND_ONLY: AppendOnly = AppendOnly {
    log: "limits_events",
    folds: "limits_folds",
    truncate_guarded: &PG_TABLES,
};

/// The append-only triggers the limits tables must have on this backend (names).
pub(crate) fn expected_triggers(db: &dyn Db, folds: bool) -> Vec<String> {
    APPEND_ONLY.expected_triggers(db, folds)
}

/// The columns of a scope row, in a fixed order (what its digest covers: every column).
const SCOPE_SQL: &str = "SELECT scope_id, ordinal, kind, parent_id, depends_on, bound_cost, \
    bound_handoff, bound_active_ms, bound_elapsed_ms, bound_attempts, started_at_ms, \
    stopped_at_ms, stop_reason, usage_ordinary, usage_handoff, active_static, attempts \
    FROM limits_scopes";
/// The columns of an attempt row, in a fixed order.
const ATTEMPT_COLS: &str = "attempt_id, operation_id, scope_id, run_id, purpose, amount, \
    max_active_ms, state, outcome, actual_cost, paired, reserved_at_ms, dispatched_at_ms, \
    settled_at_ms, settled_active_ms, actor_id, actor_kind, revision";

fn integrity(why: impl std::fmt::Display) -> Error {
    Error::corrupt(format!(
        "integrity: {why}; the command was refused and nothing was written (run `world verify --ledger L`, or `world verify` for the ledger in the store file)"
    ))
}

/// The latest fold row of one key: `(revision, live, digest)`.
fn latest(db: &dyn Db, kind: &str, key: &str) -> Result<Option<(i64, bool, String)>, Error> {
    let r = query_opt(
        db,
        "SELECT revision, live, digest FROM limits_folds WHERE kind = ?1 AND key = ?2 ORDER BY revision DESC LIMIT 1",
        &vals![kind, key],
    )?;
    r.map(|r| Ok((r.int(0)?, r.flag(1)?, r.text(2)?)))
        .transpose()
}

fn scope_digests(db: &dyn Db) -> Result<BTreeMap<String, String>, Error> {
    db.query(SCOPE_SQL, &[])?
        .iter()
        .map(|r| Ok((r.text(0)?, row_digest(r))))
        .collect()
}

/// One attempt row: `(digest, outstanding)`.
fn attempt_digest(db: &dyn Db, attempt_id: &str) -> Result<Option<(String, bool)>, Error> {
    let r = query_opt(
        db,
        &format!("SELECT {ATTEMPT_COLS} FROM limits_attempts WHERE attempt_id = ?1"),
        &vals![attempt_id],
    )?;
    r.map(|r| Ok((row_digest(&r), outstanding(&r.text(7)?))))
        .transpose()
}

fn outstanding(state: &str) -> bool {
    matches!(state, "RESERVED" | "DISPATCHED" | "UNKNOWN")
}

/// Every finding of the deciding check, without acting on the first (what `verify` prints).
/// Empty when the ledger may be decided on. `folds` is whether `limits_folds` exists (a
/// ledger not yet upgraded has only its chain head and triggers checked here).
///
/// # Errors
/// Storage errors.
pub(crate) fn findings(
    db: &dyn Db,
    meta: &Meta,
    attempt: Option<&str>,
) -> Result<Vec<String>, Error> {
    let mut out = Vec::new();
    let folds = db.table_exists("limits_folds")?;
    let missing = missing_triggers(db, &expected_triggers(db, folds))?;
    if !missing.is_empty() {
        out.push(format!(
            "append-only trigger(s) missing, disabled or not refusing: {}",
            missing.join(", ")
        ));
    }
    // The chain head.
    let head = query_opt(
        db,
        "SELECT revision, event_hash FROM limits_events ORDER BY revision DESC LIMIT 1",
        &[],
    )?;
    let count = query_opt(db, "SELECT count(*) FROM limits_events", &[])?
        .map(|r| r.int(0))
        .transpose()?
        .unwrap_or(0);
    let rev = i64::try_from(meta.revision).unwrap_or(i64::MAX);
    match head {
        Some(h) => {
            let (r, hash) = (h.int(0)?, h.text(1)?);
            if r != rev || hash != meta.head {
                out.push(format!(
                    "the newest event is revision {r} ({hash}) but limits_meta records revision {rev} ({})",
                    meta.head
                ));
            }
        }
        None if rev != 0 => out.push(format!(
            "limits_events is empty but limits_meta records revision {rev}"
        )),
        None => {}
    }
    if count != rev {
        out.push(format!(
            "limits_events holds {count} event(s) where revisions 1..={rev} were written"
        ));
    }
    if !folds {
        return Ok(out);
    }
    // Scopes: every row against its latest digest, and the same keys.
    let rows = scope_digests(db)?;
    let mut seen = BTreeSet::new();
    // The scope set is fixed at init (the config is immutable), and the first revision with
    // scope digests (init, or an upgrade's baseline) holds every scope: two index lookups,
    // whatever the ledger's length.
    for r in db.query(
        "SELECT key FROM limits_folds WHERE kind = 'scope' AND revision = \
         (SELECT min(revision) FROM limits_folds WHERE kind = 'scope')",
        &[],
    )? {
        seen.insert(r.text(0)?);
    }
    for key in seen.union(&rows.keys().cloned().collect()) {
        match (rows.get(key), latest(db, "scope", key)?) {
            (Some(d), Some((r, _, want))) if *d == want && r <= rev => {}
            (Some(_), Some((r, _, _))) if r > rev => out.push(format!(
                "scope {key} has a fold digest at revision {r}, after the ledger's revision {rev}"
            )),
            (Some(_), Some((r, _, _))) => out.push(format!(
                "limits_scopes row {key} differs from what revision {r} wrote (an edited usage, bound or stop)"
            )),
            (Some(_), None) => out.push(format!("limits_scopes row {key} was never written by the ledger")),
            (None, _) => out.push(format!("limits_scopes row {key} is missing (deleted or truncated)")),
        }
    }
    // Attempts: outstanding by row or by latest digest, and the one named.
    let mut keys: BTreeSet<String> = BTreeSet::new();
    for r in db.query(
        "SELECT attempt_id FROM limits_attempts WHERE state IN ('RESERVED', 'DISPATCHED', 'UNKNOWN')",
        &[],
    )? {
        keys.insert(r.text(0)?);
    }
    // Attempts whose latest digest is outstanding: one statement (an index probe per attempt
    // ever reserved), so an attempt edited out of RESERVED/DISPATCHED/UNKNOWN is still checked.
    for r in db.query(
        "SELECT f.key FROM limits_folds f WHERE f.kind = 'attempt' AND f.live = 1 \
         AND NOT EXISTS (SELECT 1 FROM limits_folds g WHERE g.kind = 'attempt' \
         AND g.key = f.key AND g.revision > f.revision)",
        &[],
    )? {
        keys.insert(r.text(0)?);
    }
    if let Some(a) = attempt {
        if attempt_digest(db, a)?.is_some() {
            keys.insert(a.to_string());
        }
    }
    for key in keys {
        match (attempt_digest(db, &key)?, latest(db, "attempt", &key)?) {
            (Some((d, _)), Some((r, _, want))) if d == want && r <= rev => {}
            (Some(_), Some((r, _, _))) => out.push(format!(
                "limits_attempts row {key} differs from what revision {r} wrote (an edited amount, state or cost)"
            )),
            (Some(_), None) => out.push(format!("limits_attempts row {key} was never written by the ledger")),
            (None, _) => out.push(format!("limits_attempts row {key} is missing (deleted or truncated)")),
        }
    }
    Ok(out)
}

/// The deciding check: refuse (exit 3, nothing written) unless the rows this command decides
/// on are what the ledger wrote. Upgrades a ledger without `limits_folds` (a clean full
/// re-fold first). `attempt` is the attempt the command names.
///
/// # Errors
/// [`Error::Corrupt`] naming the first disagreement; storage errors.
pub(crate) fn check(db: &dyn Db, meta: &Meta, attempt: Option<&str>) -> Result<(), Error> {
    if let Some(first) = findings(db, meta, attempt)?.into_iter().next() {
        return Err(integrity(first));
    }
    if !db.table_exists("limits_folds")? {
        upgrade(db, meta)?;
    }
    Ok(())
}

/// The reading check: a report never shows a total the ledger did not write. Like [`check`],
/// but read-only (no upgrade of a ledger made before `limits_folds`, which is then checked by
/// its chain and triggers only).
///
/// # Errors
/// [`Error::Corrupt`] naming the first disagreement (exit 3, `world verify --ledger L` for
/// the rest); storage errors.
pub(crate) fn check_read(db: &dyn Db, meta: &Meta) -> Result<(), Error> {
    match findings(db, meta, None)?.into_iter().next() {
        Some(first) => Err(integrity(first)),
        None => Ok(()),
    }
}

/// Create `limits_folds` on a ledger made before it, after a clean full re-fold, with a
/// baseline digest of every scope and attempt at the current revision.
fn upgrade(db: &dyn Db, meta: &Meta) -> Result<(), Error> {
    let problems = super::fold::check(db)?;
    if let Some(p) = problems.first() {
        return Err(integrity(format!(
            "upgrading the ledger needs a clean re-fold, and it found {} problem(s), first: {}",
            problems.len(),
            p.detail
        )));
    }
    create_folds(db)?;
    let rev = i64::try_from(meta.revision).unwrap_or(i64::MAX);
    for (key, d) in scope_digests(db)? {
        db.exec(
            "INSERT INTO limits_folds (kind, key, revision, live, digest) VALUES ('scope', ?1, ?2, 1, ?3)",
            &vals![key, rev, d],
        )?;
    }
    for r in db.query(&format!("SELECT {ATTEMPT_COLS} FROM limits_attempts"), &[])? {
        db.exec(
            "INSERT INTO limits_folds (kind, key, revision, live, digest) VALUES ('attempt', ?1, ?2, ?3, ?4)",
            &vals![r.text(0)?, rev, outstanding(&r.text(7)?), row_digest(&r)],
        )?;
    }
    Ok(())
}

/// Record, at `revision`, the digest of every scope row that changed and of `attempt`'s row
/// (the command's own event was just appended). A no-op on a ledger without `limits_folds`.
///
/// # Errors
/// Storage errors.
pub(crate) fn record(db: &dyn Db, revision: u64, attempt: Option<&str>) -> Result<(), Error> {
    if !db.table_exists("limits_folds")? {
        return Ok(());
    }
    let rev = i64::try_from(revision).map_err(|_| Error::corrupt("revision overflow"))?;
    for (key, d) in scope_digests(db)? {
        if latest(db, "scope", &key)?.map(|(_, _, w)| w) != Some(d.clone()) {
            db.exec(
                "INSERT INTO limits_folds (kind, key, revision, live, digest) VALUES ('scope', ?1, ?2, 1, ?3)",
                &vals![key, rev, d],
            )?;
        }
    }
    if let Some(a) = attempt {
        if let Some((d, live)) = attempt_digest(db, a)? {
            if latest(db, "attempt", a)?.map(|(_, _, w)| w) != Some(d.clone()) {
                db.exec(
                    "INSERT INTO limits_folds (kind, key, revision, live, digest) VALUES ('attempt', ?1, ?2, ?3, ?4)",
                    &vals![a, rev, live, d],
                )?;
            }
        }
    }
    Ok(())
}

/// What `world verify` adds to the full re-fold for a ledger: the deciding check's findings
/// (triggers, the chain head, fold digests), as `(failures, warnings)`. A ledger whose
/// `limits_folds` is not yet created is a warning (`ledger_upgrade`): its next command
/// re-folds it and adds them. An absent ledger (no `limits_meta`) has nothing to check here.
///
/// # Errors
/// Storage errors.
pub(crate) fn verify_findings(db: &dyn Db) -> Result<(Vec<String>, Vec<String>), Error> {
    let Some(meta) = super::ledger::load_meta(db)? else {
        return Ok((Vec::new(), Vec::new()));
    };
    let mut warnings = Vec::new();
    if !db.table_exists("limits_folds")? {
        warnings.push(
            "limits_folds is missing (a ledger written before issue 27, or the table was dropped): the next limits command re-folds the whole chain and adds it".to_string(),
        );
    }
    Ok((findings(db, &meta, None)?, warnings))
}
