//! Fold a ledger's event chain and compare it with the materialised tables (issue 13 §3).
//!
//! The `limits_*` tables hold materialised state (`limits_meta`, `limits_scopes`,
//! `limits_closure`, `limits_attempts`, `limits_requests`) beside the append-only, hash-chained
//! `limits_events` that record every accepted command with its actor facts, its clock and its
//! result (limits.md §7). The broker and `world limits` act on the materialised rows, so an edit
//! of those rows (zeroed usage, an edited attempt amount, a deleted attempt) or of an event
//! (after dropping the append-only trigger) would change what the ledger admits.
//!
//! [`check`] re-derives the whole ledger: it walks the chain (contiguous revisions from 1,
//! `prevHash` links, `eventHash = sha256(prevHash ‖ event)`, canonical event bytes), then
//! re-applies every recorded command, in order, to an empty in-memory ledger with the recorded
//! actor facts and clock, and compares every table row by row with what is stored. The
//! `limits_violations` rows are not in the chain (a rejection appends them), so each is copied
//! into the replay at the revision it was recorded at; only their `resolved_revision`, which a
//! `reconcile` event sets, is re-derived.
//!
//! What it cannot catch: someone who rewrites the whole chain consistently (re-hashing every
//! event after a forged one) together with the materialised rows — the same limit as the World
//! log's (README, "What `world verify` guarantees").

use super::{
    config, ledger, schema, ActorFacts, ActorKind, Amount, BoundsPatch, Command, Error, Outcome,
    Purpose, Request, Verdict,
};
use crate::encoding::hashref::HashRef;
use crate::encoding::trcjson;
use crate::ledger::db::{Db, Row, Val};
use serde_json::Value;

/// One thing the fold found wrong. `category` is `ledger_chain` (the event chain itself is
/// broken: a gap, a bad link or hash, non-canonical bytes, an event that cannot be decoded or
/// re-applied) or `ledger_state` (a materialised table differs from the fold of the chain).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// `ledger_chain` or `ledger_state`.
    pub category: &'static str,
    /// The event revision involved, when there is one.
    pub revision: Option<i64>,
    /// What differs, for people.
    pub detail: String,
}

impl Problem {
    fn chain(revision: Option<i64>, detail: impl Into<String>) -> Problem {
        Problem {
            category: "ledger_chain",
            revision,
            detail: detail.into(),
        }
    }
}

/// The tables compared after the replay, each with its ordering key.
const COMPARED: [(&str, &str); 7] = [
    ("limits_meta", "id"),
    ("limits_scopes", "scope_id"),
    ("limits_closure", "scope_id, ancestor_id"),
    ("limits_attempts", "attempt_id"),
    ("limits_requests", "request_id"),
    ("limits_events", "revision"),
    ("limits_violations", "id"),
];

/// Fold the ledger in `db` and compare. An absent ledger (no `limits_meta` table, or no meta
/// row and no events) is not a problem: `Ok(vec![])`.
///
/// # Errors
/// [`Error::Sqlite`] (or the PostgreSQL error) when the stored tables cannot be read; every
/// inconsistency is a [`Problem`], never an error.
pub(crate) fn check(db: &dyn Db) -> Result<Vec<Problem>, Error> {
    if !db.table_exists("limits_meta")? {
        return Ok(vec![]);
    }
    let mut missing = Vec::new();
    for t in schema::TABLES {
        if !db.table_exists(t)? {
            missing.push(t);
        }
    }
    if !missing.is_empty() {
        return Ok(vec![Problem::chain(
            None,
            format!("ledger table(s) missing: {}", missing.join(", ")),
        )]);
    }
    let meta = db.query("SELECT config_json FROM limits_meta WHERE id = 1", &[])?;
    let events = db.query(
        "SELECT revision, prev_hash, event_hash, event FROM limits_events ORDER BY revision",
        &[],
    )?;
    let Some(meta) = meta.first() else {
        if events.is_empty() {
            return Ok(vec![]);
        }
        return Ok(vec![Problem::chain(
            None,
            format!("{} event(s) but no limits_meta row", events.len()),
        )]);
    };
    let config_json = match meta.0.first() {
        Some(Val::Blob(b)) => b.clone(),
        Some(Val::Text(t)) => t.clone().into_bytes(),
        other => {
            return Ok(vec![Problem::chain(
                None,
                format!("limits_meta.config_json is {other:?}"),
            )])
        }
    };

    let mut problems = Vec::new();
    let mut decoded = Vec::with_capacity(events.len());
    let mut prev = String::new();
    for (i, row) in events.iter().enumerate() {
        match walk_event(row, i, &prev) {
            Ok((hash, ev)) => {
                prev = hash;
                decoded.push(ev);
            }
            Err(p) => {
                problems.push(p);
                // Later links cannot be judged against a broken one; the replay needs them all.
                return Ok(problems);
            }
        }
    }

    let violations = db.query(
        "SELECT id, attempt_id, scope_id, admitted, claimed, actor_id, actor_kind, at_ms, revision \
         FROM limits_violations ORDER BY id",
        &[],
    )?;
    let replay = rusqlite::Connection::open_in_memory()?;
    super::schema::create(&replay)?;
    for (i, ev) in decoded.iter().enumerate() {
        copy_violations(&replay, &violations, i as i64)?;
        let req = match request_of(ev, &config_json) {
            Ok(r) => r,
            Err(why) => {
                problems.push(Problem::chain(Some(ev.revision), why.to_string()));
                return Ok(problems);
            }
        };
        let accept_all = |_: &HashRef| true;
        match ledger::apply_db(&replay, &req, &ev.actor, ev.now_ms, &accept_all) {
            Ok(v) if json(&v) == json(&ev.result) => {}
            Ok(v) => {
                problems.push(Problem::chain(
                    Some(ev.revision),
                    format!(
                        "re-applying the {} command answers {} where the event records {}",
                        req.command.name(),
                        json(&v),
                        json(&ev.result)
                    ),
                ));
                return Ok(problems);
            }
            Err(e) => {
                problems.push(Problem::chain(
                    Some(ev.revision),
                    format!(
                        "the recorded {} command does not re-apply: {e}",
                        req.command.name()
                    ),
                ));
                return Ok(problems);
            }
        }
    }
    copy_violations(&replay, &violations, decoded.len() as i64)?;

    for (table, key) in COMPARED {
        let sql = format!("SELECT * FROM {table} ORDER BY {key}");
        let stored = db.query(&sql, &[])?;
        let folded = replay.query(&sql, &[])?;
        if let Some(detail) = first_difference(table, &stored, &folded) {
            problems.push(Problem {
                category: "ledger_state",
                revision: None,
                detail,
            });
        }
    }
    Ok(problems)
}

/// One decoded event.
struct Event {
    revision: i64,
    request_id: String,
    command: Value,
    actor: ActorFacts,
    now_ms: u128,
    result: Verdict,
}

/// Check row `i` of the chain (revision `i + 1`, linked to `prev`) and decode it; its hash.
fn walk_event(row: &Row, i: usize, prev: &str) -> Result<(String, Event), Problem> {
    let want = i as i64 + 1;
    let revision = row
        .int(0)
        .map_err(|e| Problem::chain(None, e.to_string()))?;
    if revision != want {
        return Err(Problem::chain(
            Some(want),
            format!(
                "event revision {revision} where {want} was expected (a gap or a deleted event)"
            ),
        ));
    }
    let at = Some(revision);
    let prev_hash = row.text(1).map_err(|e| Problem::chain(at, e.to_string()))?;
    let event_hash = row.text(2).map_err(|e| Problem::chain(at, e.to_string()))?;
    let bytes = match row.0.get(3) {
        Some(Val::Blob(b)) => b.clone(),
        Some(Val::Text(t)) => t.clone().into_bytes(),
        other => return Err(Problem::chain(at, format!("event column is {other:?}"))),
    };
    if prev_hash != prev {
        return Err(Problem::chain(
            at,
            format!("prev_hash {prev_hash:?} does not link to the previous event {prev:?}"),
        ));
    }
    let computed = ledger::event_hash(prev, &bytes).to_string();
    if computed != event_hash {
        return Err(Problem::chain(
            at,
            format!("event_hash {event_hash} but the event re-hashes to {computed}"),
        ));
    }
    match trcjson::canonicalize(&bytes, trcjson::Bounds::UNBOUNDED) {
        Ok(c) if c == bytes => {}
        _ => {
            return Err(Problem::chain(
                at,
                "event bytes are not canonical TR-CJSON-1",
            ))
        }
    }
    let v: Value = serde_json::from_slice(&bytes)
        .map_err(|e| Problem::chain(at, format!("event is not JSON: {e}")))?;
    let field = |k: &str| {
        v.get(k)
            .ok_or_else(|| Problem::chain(at, format!("event has no {k:?}")))
    };
    if field("revision")?.as_str() != Some(revision.to_string().as_str()) {
        return Err(Problem::chain(
            at,
            "the event's own revision differs from its row",
        ));
    }
    if field("prevHash")?.as_str() != Some(prev) {
        return Err(Problem::chain(
            at,
            "the event's own prevHash differs from its row",
        ));
    }
    let now_ms = field("nowMs")?
        .as_str()
        .and_then(|s| Amount::parse(s).ok())
        .ok_or_else(|| Problem::chain(at, "nowMs is not a canonical decimal"))?
        .get();
    let request_id = field("requestId")?
        .as_str()
        .ok_or_else(|| Problem::chain(at, "requestId is not a string"))?
        .to_string();
    let actor = actor_of(field("actor")?).map_err(|why| Problem::chain(at, why.to_string()))?;
    let result: Verdict = serde_json::from_value(field("result")?.clone())
        .map_err(|e| Problem::chain(at, format!("result: {e}")))?;
    Ok((
        event_hash,
        Event {
            revision,
            request_id,
            command: field("command")?.clone(),
            actor,
            now_ms,
            result,
        },
    ))
}

/// Copy the violation rows recorded at ledger revision `revision` (after that event, before
/// the next) into the replay, unresolved.
fn copy_violations(replay: &dyn Db, rows: &[Row], revision: i64) -> Result<(), Error> {
    for r in rows
        .iter()
        .filter(|r| r.0.get(8) == Some(&Val::Int(revision)))
    {
        replay.exec(
            "INSERT INTO limits_violations (id, attempt_id, scope_id, admitted, claimed, actor_id, \
             actor_kind, at_ms, revision) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            &r.0,
        )?;
    }
    Ok(())
}

fn json(v: &Verdict) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The first row that differs between `stored` and `folded`, described.
fn first_difference(table: &str, stored: &[Row], folded: &[Row]) -> Option<String> {
    for (i, (s, f)) in stored.iter().zip(folded).enumerate() {
        if s.0 != f.0 {
            return Some(format!(
                "{table} row {} differs from the fold of the event chain: stored {} / folded {}",
                i + 1,
                show(s),
                show(f)
            ));
        }
    }
    if stored.len() != folded.len() {
        return Some(format!(
            "{table} holds {} row(s) where the fold of the event chain gives {}",
            stored.len(),
            folded.len()
        ));
    }
    None
}

fn show(r: &Row) -> String {
    let cells: Vec<String> =
        r.0.iter()
            .map(|v| match v {
                Val::Null => "NULL".into(),
                Val::Int(i) => i.to_string(),
                Val::Text(t) if t.chars().count() > 80 => {
                    format!("{:?}…", t.chars().take(80).collect::<String>())
                }
                Val::Text(t) => format!("{t:?}"),
                Val::Blob(b) => format!("<{} bytes>", b.len()),
            })
            .collect();
    format!("({})", cells.join(", "))
}

/// The request an event records.
fn request_of(ev: &Event, config_json: &[u8]) -> Result<Request, FieldError> {
    let command = command_of(&ev.command, config_json)?;
    Ok(Request::new(ev.request_id.clone(), command))
}

fn actor_of(v: &Value) -> Result<ActorFacts, FieldError> {
    let kind: ActorKind = enum_field(v, "actorKind")?;
    Ok(ActorFacts {
        allowed: v.get("allowed").and_then(Value::as_bool).unwrap_or(false),
        actor_id: str_field(v, "actorId")?,
        actor_kind: kind,
        policy_ref: opt_str(v, "policyRef")?,
        evidence_ref: opt_str(v, "evidenceRef")?,
        authorized_at_ms: amount(v, "authorizedAtMs")?,
    })
}

fn str_field(v: &Value, k: &str) -> Result<String, FieldError> {
    v.get(k)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| FieldError::Type(k.to_string(), "a string"))
}

fn opt_str(v: &Value, k: &str) -> Result<Option<String>, FieldError> {
    match v.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(FieldError::Type(k.to_string(), "a string or null")),
    }
}

fn amount(v: &Value, k: &str) -> Result<Amount, FieldError> {
    let text = str_field(v, k)?;
    Amount::parse(&text).map_err(|e| FieldError::Amount(k.to_string(), e))
}

fn opt_amount(v: &Value, k: &str) -> Result<Option<Amount>, FieldError> {
    match opt_str(v, k)? {
        None => Ok(None),
        Some(t) => Amount::parse(&t)
            .map(Some)
            .map_err(|e| FieldError::Amount(k.to_string(), e)),
    }
}

fn flag(v: &Value, k: &str) -> Result<bool, FieldError> {
    match v.get(k) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(FieldError::Type(k.to_string(), "a boolean")),
    }
}

fn enum_field<T: serde::de::DeserializeOwned>(v: &Value, k: &str) -> Result<T, FieldError> {
    serde_json::from_value(v.get(k).cloned().unwrap_or_default())
        .map_err(|e| FieldError::Enum(k.to_string(), e))
}

/// The [`Command`] a recorded event's `command` object names (the inverse of its
/// serialisation); `init` takes the config from `limits_meta`, which must hash to the event's
/// `configRef`.
fn command_of(v: &Value, config_json: &[u8]) -> Result<Command, FieldError> {
    let ty = str_field(v, "type")?;
    Ok(match ty.as_str() {
        "init" => {
            let recorded = str_field(v, "configRef")?;
            let stored = config::config_ref(config_json).map_err(FieldError::Config)?;
            if stored.to_string() != recorded {
                return Err(FieldError::ConfigRef { stored, recorded });
            }
            Command::Init {
                config: config_json.to_vec(),
            }
        }
        "reserve" => Command::Reserve {
            attempt_id: str_field(v, "attemptId")?,
            operation_id: str_field(v, "operationId")?,
            scope_id: str_field(v, "scopeId")?,
            run_id: opt_str(v, "runId")?,
            purpose: enum_field::<Purpose>(v, "purpose")?,
            amount: amount(v, "amount")?,
            max_active_ms: amount(v, "maxActiveMs")?,
            paired: flag(v, "paired")?,
        },
        "dispatch" => Command::Dispatch {
            attempt_id: str_field(v, "attemptId")?,
        },
        "settle" => Command::Settle {
            attempt_id: str_field(v, "attemptId")?,
            outcome: enum_field::<Outcome>(v, "outcome")?,
            actual_cost: opt_amount(v, "actualCost")?,
            effect_outcome: flag(v, "effectOutcome")?,
        },
        "reconcile" => Command::Reconcile {
            attempt_id: str_field(v, "attemptId")?,
            actual_cost: amount(v, "actualCost")?,
            evidence_ref: opt_str(v, "evidenceRef")?,
        },
        "release" => Command::Release {
            attempt_id: str_field(v, "attemptId")?,
            never_dispatched: flag(v, "neverDispatched")?,
        },
        "stop" => Command::Stop {
            scope_id: str_field(v, "scopeId")?,
            reason: str_field(v, "reason")?,
            evidence_ref: opt_str(v, "evidenceRef")?,
        },
        "adjust" => {
            let lim = v
                .get("limits")
                .filter(|l| l.is_object())
                .ok_or_else(|| FieldError::Type("limits".into(), "an object"))?;
            let mut patch = BoundsPatch::default();
            for kind in config::LimitKind::ALL {
                match lim.get(kind.as_str()) {
                    None => {}
                    Some(Value::Null) => patch.set(kind, None),
                    Some(Value::String(s)) => patch.set(
                        kind,
                        Some(Amount::parse(s).map_err(|e| {
                            FieldError::Amount(format!("limits.{}", kind.as_str()), e)
                        })?),
                    ),
                    Some(_) => {
                        return Err(FieldError::Type(
                            format!("limits.{}", kind.as_str()),
                            "a decimal string or null",
                        ))
                    }
                }
            }
            Command::Adjust {
                scope_id: str_field(v, "scopeId")?,
                limits: patch,
                resume: flag(v, "resume")?,
                evidence_ref: opt_str(v, "evidenceRef")?,
            }
        }
        other => return Err(FieldError::UnknownCommand(other.to_string())),
    })
}

/// Why a recorded event's command or actor could not be decoded.
#[derive(Debug, thiserror::Error)]
enum FieldError {
    /// A field is missing or of the wrong JSON type (field, what it must be).
    #[error("{0} is missing or not {1}")]
    Type(String, &'static str),
    /// An amount field is not a canonical decimal.
    #[error("{0}: {1}")]
    Amount(String, #[source] crate::ledger::AmountError),
    /// An enumerated field (purpose, outcome, actor kind) has an unknown value.
    #[error("{0}: {1}")]
    Enum(String, #[source] serde_json::Error),
    /// The stored config does not parse.
    #[error("limits_meta.config_json: {0}")]
    Config(#[source] config::ConfigError),
    /// The stored config is not the one the init event names.
    #[error("limits_meta.config_json hashes to {stored}, the init event names {recorded}")]
    ConfigRef {
        /// The stored config's ref.
        stored: HashRef,
        /// The ref the event records.
        recorded: String,
    },
    /// The command type is not one the ledger knows.
    #[error("unknown command type {0:?}")]
    UnknownCommand(String),
}
