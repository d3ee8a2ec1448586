//! Every link something reads, as one table (issue 26 §2): what links to what, which commands
//! read the link, and the `verify` finding when it is broken. docs/STORE-CHECKS.md prints the
//! same table (store-format.md §13.1 extended), `tests/tamper.rs` breaks each link at least
//! once and expects its finding, and the checks below add the links the earlier phases did
//! not read: a coordinator entry's source and `commit_objects` rows, a journal payload
//! object's row, strict journal outcomes, a credential's mint record, and the schema's
//! indexes and triggers.

use std::collections::{HashMap, HashSet};

use rusqlite::Connection;

use super::Report;
use crate::store::journal::{COMMIT_INTENT, COMMIT_OUTCOME, EFFECT_INTENT, EFFECT_OUTCOME};
use crate::store::records::{InvocationRecord, INVOCATION_RECORD_V1, INVOCATION_RECORD_V2};
use crate::store::Error;

/// One link of the store: `from` names `to`; `readers` act on it; a broken link is the
/// `verify` finding `finding` (a failure, or a warning when `warning`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// Stable id (`entry.transition_fn`), used by the doc table and the tamper corpus.
    pub id: &'static str,
    /// What holds the link.
    pub from: &'static str,
    /// What it must resolve to.
    pub to: &'static str,
    /// The commands that read it.
    pub readers: &'static str,
    /// The `verify` category when it does not.
    pub finding: &'static str,
    /// Reported as a warning (exit 0), not a failure.
    pub warning: bool,
}

const fn link(
    id: &'static str,
    from: &'static str,
    to: &'static str,
    readers: &'static str,
    finding: &'static str,
) -> Link {
    Link {
        id,
        from,
        to,
        readers,
        finding,
        warning: false,
    }
}

const fn warning(
    id: &'static str,
    from: &'static str,
    to: &'static str,
    readers: &'static str,
    finding: &'static str,
) -> Link {
    Link {
        id,
        from,
        to,
        readers,
        finding,
        warning: true,
    }
}

/// Every link `world verify` checks, in the order of its phases (docs/STORE-CHECKS.md).
pub const LINKS: &[Link] = &[
    link("schema.tables", "the store file", "the 10 v4 tables with their columns and the 5 reference indexes", "every command", "schema"),
    link("schema.objects", "each table `world` defines that the store holds", "its indexes and append-only triggers, as `world` creates them", "every writer, the ledger and missions", "schema"),
    link("entry.index", "the log", "indexes contiguous from 0", "log, replay, why, commit", "log_gap"),
    link("entry.transition_ref", "log entry", "its `transitionRef` object", "why, show, replay, receipt", "dangling_ref"),
    link("entry.hash", "coordinator entry", "its recomputed `entryHash`", "why, replay", "entry_hash_mismatch"),
    link("entry.prev", "coordinator entry N", "entry N−1's `entryHash`", "why, replay", "prev_mismatch"),
    link("entry.world", "log entry", "the world row whose `logHead` it is (ref, revision, `stateRoot`)", "log, show, head, commit", "world_mismatch"),
    link("entry.transition_fn", "coordinator entry", "its `transitionFn` source object", "replay, why, export-episode", "dangling_ref"),
    link("entry.interpreter", "coordinator entry", "its pinned interpreter: the embedded one, archived next to the store, or embedded in a bundle", "replay", "dangling_ref"),
    link("entry.commit_objects", "log entry", "`commit_objects` rows for the objects its commit wrote (a coordinator entry: record, input, output, plan)", "the idempotent resend of a commit, export-episode", "commit_objects"),
    link("record.objects", "invocation record", "its input, output, plan and effect-record objects", "why, replay, effects", "dangling_ref"),
    link("record.consistency", "invocation or effect record", "the header it names and the record law", "why, replay, broker", "record_inconsistent"),
    link("effect_record.objects", "effect record", "its request and result objects", "effects, why, replay", "dangling_ref"),
    link("world.log_head", "world row", "the log entry its `logHead` names", "log, head", "dangling_ref"),
    link("commit_objects.row", "`commit_objects` row", "its object and its log entry", "the idempotent resend of a commit", "dangling_ref"),
    link("registry.head", "registry head", "its object", "transitions, invoke, serve, publish", "dangling_ref"),
    link("approval_claim.links", "approval claim", "its decision, request and effect intent", "broker (Human.Approve)", "dangling_ref"),
    link("effect_record.claim", "approved `Human.Approve` record", "its approval claim", "broker (Human.Approve)", "record_inconsistent"),
    link("journal.object", "journal row", "its payload object", "receipt, invoke, replay, broker", "dangling_ref"),
    link("journal.payload_row", "journal payload object", "the journal row that names it", "receipt, invoke (resend), replay", "journal_gap"),
    link("journal.outcome_intent", "journal outcome", "its intent", "receipt, invoke (resend)", "orphan_outcome"),
    link("journal.outcome_strict", "journal outcome", "the spec's members only, a status from the spec's set, its row's id and (for a commit) its intent's `logicalTime`", "receipt, invoke (resend), effects", "journal_mismatch"),
    link("journal.outcome_world", "commit outcome", "a world the log produced", "receipt, why", "journal_mismatch"),
    link("entry.journal", "invocation-record entry", "its commit intent and outcome, naming this entry and world", "receipt, replay, invoke (resend)", "journal_gap"),
    link("entry.logical_time", "coordinator entry", "a logical time no earlier than the entry before it", "log, receipt", "logical_time"),
    link("effect_intent.ordinal", "effect intent", "contiguous ordinals per episode; an allowed record has its outcome", "broker (spend), effects", "effect_gap"),
    link("effect_intent.marker", "uncommitted effect intent", "its episode's started marker", "invoke (resend guard)", "marker_missing"),
    link("derived.spend_tally", "spend tally row", "the fold of the episode's intents", "broker", "spend_tally"),
    link("derived.episode_index", "episode index rows", "their recomputation", "effects --episode", "episode_index"),
    link("derived.log_view", "sealed `world_log_view` row", "its entry's objects", "log", "log_view"),
    warning("session.mint", "credential row", "its `world/session-mint/v1` record (a row without one is `unattested`: refused unless `--allow-unattested`)", "session list, broker, invoke, serve, mcp", "unattested"),
    link("session.row", "credential row", "the episode, grants and expiry of its mint record", "broker, invoke, serve, mcp", "session_mismatch"),
    link("registry.sources", "published transition", "its source object", "invoke, serve, mcp", "dangling_ref"),
    link("ledger.chain", "limits ledger", "its event chain and the tables folded from it", "limits, broker", "ledger_chain"),
    link("head.world", "selected head", "a world row at the highest log index", "head, invoke, commit", "head_mismatch"),
    link("mission.journal", "mission journal", "its chain and the state folded from it", "mission, broker", "mission_chain"),
];

/// The log entries `verify` treats as coordinator-written: `writtenBy` `coordinator:*`, or a
/// `transitionRef` that is an invocation record (a relabelled one is still recomputed).
const COORDINATOR_ENTRIES: &str = "SELECT l.entry_index, l.transition_fn_ref, l.interpreter_ref, l.transition_ref, o.semantic_id, o.payload
     FROM log_entries l LEFT JOIN objects o ON o.hash_ref = l.transition_ref
     WHERE l.written_by LIKE 'coordinator:%' OR o.semantic_id IN (?1, ?2)
     ORDER BY l.entry_index";

/// `entry.transition_fn` and `entry.commit_objects`: every coordinator entry's source object
/// is stored, and `commit_objects` holds a row at its index for its record, input, output and
/// plan (what the coordinator's commit writes); every other entry's `transitionRef` and
/// `stateRoot` objects, when stored, have a `commit_objects` row at or before its index (an
/// object comes into a store through a commit that lists it). Returns the distinct
/// interpreters coordinator entries pin, each with the first index pinning it.
///
/// # Errors
/// SQLite errors.
pub fn check_entries(conn: &Connection, rep: &mut Report) -> Result<Vec<(String, i64)>, Error> {
    let rows_at = commit_rows(conn)?;
    let has = |r: &str, idx: i64| rows_at.get(r).is_some_and(|s| s.contains(&idx));
    let first = |r: &str| rows_at.get(r).and_then(|s| s.iter().min().copied());
    let mut interpreters: Vec<(String, i64)> = Vec::new();
    let mut seen_interp = HashSet::new();
    let mut coordinator = HashSet::new();
    {
        let mut stmt = conn.prepare(COORDINATOR_ENTRIES)?;
        type Row = (i64, String, String, String, Option<String>, Option<Vec<u8>>);
        let rows: Vec<Row> = stmt
            .query_map([INVOCATION_RECORD_V1, INVOCATION_RECORD_V2], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            })?
            .collect::<Result<_, _>>()?;
        for (idx, source, interp, transition_ref, sid, payload) in rows {
            coordinator.insert(idx);
            if !object_exists(conn, &source)? {
                rep.fail(
                    "dangling_ref",
                    Some(idx),
                    Some(source.clone()),
                    "transitionFn names a missing source object (replay cannot re-run this entry)",
                );
            }
            if seen_interp.insert(interp.clone()) {
                interpreters.push((interp, idx));
            }
            // The record's own links are the log walk's findings; only its commit rows here.
            let (Some(sid), Some(payload)) = (sid, payload) else {
                continue;
            };
            let Ok(rec) = InvocationRecord::decode(&sid, &payload) else {
                continue;
            };
            let mut wrote = vec![transition_ref, rec.input, rec.output];
            wrote.extend(rec.plan);
            for r in wrote {
                if !has(&r, idx) {
                    rep.fail(
                        "commit_objects",
                        Some(idx),
                        Some(r),
                        format!("the commit of entry {idx} wrote this object but commit_objects has no row for it at index {idx}"),
                    );
                }
            }
        }
    }
    let mut stmt = conn.prepare(
        "SELECT l.entry_index, l.transition_ref, w.state_root FROM log_entries l
         LEFT JOIN worlds w ON w.log_head = l.entry_hash_ref ORDER BY l.entry_index",
    )?;
    let rows: Vec<(i64, String, Option<String>)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    for (idx, transition_ref, state_root) in rows {
        if coordinator.contains(&idx) {
            continue;
        }
        for r in std::iter::once(transition_ref).chain(state_root) {
            if first(&r).is_some_and(|f| f <= idx) || !object_exists(conn, &r)? {
                continue;
            }
            rep.fail(
                "commit_objects",
                Some(idx),
                Some(r),
                format!("entry {idx} names this stored object but no commit_objects row at or before index {idx} lists it (a resend of the commit would be refused)"),
            );
        }
    }
    Ok(interpreters)
}

/// `commit_objects` as object ref → the entry indexes listing it.
fn commit_rows(conn: &Connection) -> Result<HashMap<String, Vec<i64>>, Error> {
    let mut stmt = conn.prepare("SELECT object_ref, entry_index FROM commit_objects")?;
    let mut out: HashMap<String, Vec<i64>> = HashMap::new();
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        out.entry(r.get(0)?).or_default().push(r.get(1)?);
    }
    Ok(out)
}

fn object_exists(conn: &Connection, r: &str) -> Result<bool, Error> {
    Ok(conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM objects WHERE hash_ref = ?1)")?
        .query_row([r], |x| x.get(0))?)
}

/// A journal outcome payload decoded strictly: exactly the spec's members (store-format.md
/// §10), `status` from the spec's set, re-encoding to the stored bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// `invocationId`.
    pub invocation_id: String,
    /// `status`: `committed` (commit) or `succeeded` / `failed` (effect).
    pub status: String,
    /// `resultRef` (commit) or `recordRef` (effect).
    pub reference: String,
    /// `logicalTime`, Unix seconds.
    pub logical_time: i64,
}

/// Decode a `world/journal-outcome/v1` (`effect` false) or `world/effect-outcome/v1` payload
/// strictly. The reasons name what is wrong; used by `verify` and by `receipt`, which answers
/// only from an outcome that decodes (issue 26 §3).
///
/// # Errors
/// Why the payload is not an outcome of that kind.
pub fn decode_outcome(payload: &[u8], effect: bool) -> Result<Outcome, String> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct Commit {
        invocation_id: String,
        status: String,
        result_ref: String,
        logical_time: i64,
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct Effect {
        invocation_id: String,
        status: String,
        record_ref: String,
        logical_time: i64,
    }
    let (o, statuses): (Outcome, &[&str]) = if effect {
        let w: Effect = serde_json::from_slice(payload).map_err(|e| e.to_string())?;
        (
            Outcome {
                invocation_id: w.invocation_id,
                status: w.status,
                reference: w.record_ref,
                logical_time: w.logical_time,
            },
            &["succeeded", "failed"],
        )
    } else {
        let w: Commit = serde_json::from_slice(payload).map_err(|e| e.to_string())?;
        (
            Outcome {
                invocation_id: w.invocation_id,
                status: w.status,
                reference: w.result_ref,
                logical_time: w.logical_time,
            },
            &["committed"],
        )
    };
    if !statuses.contains(&o.status.as_str()) {
        return Err(format!(
            "status {:?} is not one of {}",
            o.status,
            statuses.join(", ")
        ));
    }
    let canonical = if effect {
        crate::store::journal::effect_outcome_payload(
            &o.invocation_id,
            o.status == "succeeded",
            &o.reference,
            o.logical_time,
        )
    } else {
        crate::store::journal::commit_outcome_payload(
            &o.invocation_id,
            &o.reference,
            o.logical_time,
        )
    };
    if canonical != payload {
        return Err("the payload is not in the canonical encoding (member order, spacing or the final LF differ)".into());
    }
    Ok(o)
}

/// `journal.payload_row` and `journal.outcome_strict`: every journal payload object `world`'s
/// journal wrote (provenance `store/journal`, not a client's committed object) is named by a
/// journal row, so deleting a row cannot turn a committed invocation back into `not-started`;
/// every outcome row's payload decodes strictly, names its row's id, and a commit outcome
/// carries its intent's `logicalTime`.
///
/// # Errors
/// SQLite errors.
pub fn check_journal(conn: &Connection, rep: &mut Report) -> Result<(), Error> {
    let mut named: HashSet<String> = HashSet::new();
    // (invocation id, kind, semantic id, payload) of each outcome row.
    type OutcomeRow = (String, String, Option<String>, Option<Vec<u8>>);
    let mut rows: Vec<OutcomeRow> = Vec::new();
    {
        let mut stmt = conn.prepare(
            "SELECT j.kind, j.invocation_id, j.object_ref, o.semantic_id, o.payload
             FROM journal j LEFT JOIN objects o ON o.hash_ref = j.object_ref",
        )?;
        let mut q = stmt.query([])?;
        while let Some(r) = q.next()? {
            let kind: String = r.get(0)?;
            let id: String = r.get(1)?;
            named.insert(r.get(2)?);
            if kind == "outcome" {
                rows.push((id, kind, r.get(3)?, r.get(4)?));
            }
        }
    }
    // Orphaned payload objects.
    let mut stmt = conn.prepare(
        "SELECT o.hash_ref, o.semantic_id, o.payload FROM objects o
         WHERE o.semantic_id IN (?1, ?2, ?3, ?4) AND o.provenance = 'store/journal'
           AND NOT EXISTS (SELECT 1 FROM commit_objects c WHERE c.object_ref = o.hash_ref)",
    )?;
    let payloads: Vec<(String, String, Vec<u8>)> = stmt
        .query_map(
            [COMMIT_INTENT, COMMIT_OUTCOME, EFFECT_INTENT, EFFECT_OUTCOME],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?
        .collect::<Result<_, _>>()?;
    for (hash, sid, payload) in payloads {
        if named.contains(&hash) {
            continue;
        }
        let id = serde_json::from_slice::<serde_json::Value>(&payload)
            .ok()
            .and_then(|v| v.get("invocationId")?.as_str().map(str::to_string))
            .unwrap_or_default();
        let kind = if sid.ends_with("intent/v1") {
            "intent"
        } else {
            "outcome"
        };
        rep.fail(
            "journal_gap",
            None,
            Some(hash),
            format!("the journal {kind} of {id:?} ({sid}) is stored but no journal row names it: its row was deleted, so a receipt would answer as if it never happened"),
        );
    }
    // Strict outcomes.
    let intents = intent_times(conn)?;
    for (id, _, sid, payload) in rows {
        let (Some(sid), Some(payload)) = (sid, payload) else {
            continue; // a missing object is the `journal.object` finding
        };
        let effect = id.starts_with("effect:");
        let want = if effect {
            EFFECT_OUTCOME
        } else {
            COMMIT_OUTCOME
        };
        let reason = if sid != want {
            Some(format!("the outcome row names a {sid}, not a {want}"))
        } else {
            match decode_outcome(&payload, effect) {
                Err(why) => Some(format!("the outcome does not decode as {want}: {why}")),
                Ok(o) if o.invocation_id != id => Some(format!(
                    "the outcome names invocation {:?}, not its row's",
                    o.invocation_id
                )),
                Ok(o) if !effect => intents.get(&id).filter(|t| **t != o.logical_time).map(|t| {
                    format!(
                        "the outcome's logicalTime {} is not its intent's {t}",
                        o.logical_time
                    )
                }),
                Ok(_) => None,
            }
        };
        if let Some(reason) = reason {
            rep.fail("journal_mismatch", None, Some(id), reason);
        }
    }
    Ok(())
}

/// Commit intents' `logicalTime` by invocation id.
fn intent_times(conn: &Connection) -> Result<HashMap<String, i64>, Error> {
    let mut stmt = conn.prepare(
        "SELECT j.invocation_id, o.payload FROM journal j JOIN objects o ON o.hash_ref = j.object_ref
         WHERE j.kind = 'intent' AND o.semantic_id = ?1",
    )?;
    let mut out = HashMap::new();
    let mut q = stmt.query([COMMIT_INTENT])?;
    while let Some(r) = q.next()? {
        let id: String = r.get(0)?;
        let payload: Vec<u8> = r.get(1)?;
        if let Ok(i) = crate::store::journal::CommitIntent::decode(&payload) {
            out.insert(id, i.logical_time);
        }
    }
    Ok(out)
}

/// `session.mint`: credential rows without a `world/session-mint/v1` record, as
/// `(credential_id, episode)`. Stores the reference daemon wrote hold such rows (it writes no
/// mint record), so they are a warning, `unattested`, not a failure; the broker refuses them
/// unless `--allow-unattested` (DEC-TRUST3-2).
///
/// # Errors
/// SQLite errors.
pub fn unattested_sessions(conn: &Connection) -> Result<Vec<(String, String)>, Error> {
    let records = super::evidence::mint_records(conn)?;
    let mut stmt = conn.prepare(
        "SELECT credential_id, episode_id FROM session_credentials ORDER BY credential_id",
    )?;
    let rows: Vec<(String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    Ok(rows
        .into_iter()
        .filter(|(id, _)| !records.contains_key(id))
        .collect())
}
