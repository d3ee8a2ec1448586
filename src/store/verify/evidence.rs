//! `verify` checks for what the broker, receipts and replay act on (issue 13 §3): the journal
//! against the log, effect ordinals and effect journaling, session rows against their mint
//! records, started markers, and published transition sources. Each check is its own function
//! over a read-only connection, adding findings to the [`Report`].

use std::collections::{BTreeMap, HashMap, HashSet};

use rusqlite::Connection;

use super::{Report, SessionCheck};
use crate::store::journal::{self, CommitIntent};
use crate::store::records::{EffectRecord, InvocationRecord, EFFECT_RECORD};
use crate::store::Error;

/// `world/invocation-started/v1` (the coordinator's started marker; DEC-COORD-3).
const STARTED: &str = "world/invocation-started/v1";
/// `world/session-mint/v1`.
const SESSION_MINT: &str = "world/session-mint/v1";

fn json(payload: &[u8]) -> Option<serde_json::Value> {
    serde_json::from_slice(payload).ok()
}

fn text(v: &serde_json::Value, k: &str) -> String {
    v.get(k)
        .and_then(|x| x.as_str())
        .unwrap_or_default()
        .to_string()
}

/// Journal rows by `(invocation_id, kind)` → payload bytes (`None` when the object is gone;
/// that is reported as a dangling ref elsewhere).
/// Journal rows keyed by `(invocation_id, kind)`.
type JournalRows = HashMap<(String, String), Option<Vec<u8>>>;

fn journal_rows(conn: &Connection) -> Result<JournalRows, Error> {
    let mut stmt = conn.prepare(
        "SELECT j.invocation_id, j.kind, o.payload FROM journal j LEFT JOIN objects o ON o.hash_ref = j.object_ref",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            (r.get::<_, String>(0)?, r.get::<_, String>(1)?),
            r.get::<_, Option<Vec<u8>>>(2)?,
        ))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// One truth with `replay` and `receipt`: every log entry whose `transitionRef` is an
/// invocation record — whatever its `writtenBy` says — must be the commit its journal names:
/// the record's invocation id has a commit intent and outcome, the intent names this entry's
/// hash, the outcome this entry's world, and `writtenBy` is `coordinator:<surface>` of that id.
/// A resolved `rest:` commit's outcome must name a world whose entry is in the log.
///
/// Findings: `journal_mismatch` (a row disagrees with the log), `journal_gap` (a row the log
/// proves was written is missing).
pub fn check_journal_against_log(conn: &Connection, rep: &mut Report) -> Result<(), Error> {
    let rows = journal_rows(conn)?;
    let mut stmt = conn.prepare(
        "SELECT l.entry_index, l.entry_hash_ref, l.written_by, o.semantic_id, o.payload,
                (SELECT w.world_ref FROM worlds w WHERE w.log_head = l.entry_hash_ref AND w.revision = l.entry_index LIMIT 1)
         FROM log_entries l JOIN objects o ON o.hash_ref = l.transition_ref
         WHERE o.semantic_id IN ('world/invocation-record/v1', 'world/invocation-record/v2')
         ORDER BY l.entry_index",
    )?;
    type Row = (i64, String, String, String, Vec<u8>, Option<String>);
    let entries: Vec<Row> = stmt
        .query_map([], |r| {
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
    for (idx, entry_hash, written_by, sid, payload, world) in entries {
        let Ok(rec) = InvocationRecord::decode(&sid, &payload) else {
            continue; // reported as record_inconsistent by the log walk
        };
        let id = rec.invocation_id.clone();
        let surface = id.split(':').next().unwrap_or_default();
        let want_writer = format!("coordinator:{surface}");
        if written_by != want_writer {
            rep.fail(
                "journal_mismatch",
                Some(idx),
                Some(entry_hash.clone()),
                format!("entry {idx} holds invocation record {id} but writtenBy is {written_by:?}, not {want_writer:?}"),
            );
        }
        let intent = rows.get(&(id.clone(), "intent".to_string()));
        let outcome = rows.get(&(id.clone(), "outcome".to_string()));
        match (intent, outcome) {
            (Some(Some(i)), Some(Some(o))) => {
                match CommitIntent::decode(i) {
                    Ok(ci) if ci.entry_hash == entry_hash && Some(&ci.world_ref) == world.as_ref() => {}
                    Ok(_) => rep.fail(
                        "journal_mismatch",
                        Some(idx),
                        Some(id.clone()),
                        format!("the commit intent of {id} names another entry or world than entry {idx}"),
                    ),
                    Err(e) => rep.fail(
                        "journal_mismatch",
                        Some(idx),
                        Some(id.clone()),
                        format!("the commit intent of {id} does not decode: {e}"),
                    ),
                }
                let result = json(o).map(|v| text(&v, "resultRef"));
                if result.is_none() || result != world {
                    rep.fail(
                        "journal_mismatch",
                        Some(idx),
                        Some(id.clone()),
                        format!("the commit outcome of {id} does not name entry {idx}'s world"),
                    );
                }
            }
            (Some(None), _) | (_, Some(None)) => {} // dangling journal object: reported elsewhere
            (i, o) => rep.fail(
                "journal_gap",
                Some(idx),
                Some(id.clone()),
                format!(
                    "entry {idx} committed invocation {id} but the journal lacks its {}",
                    match (i.is_some(), o.is_some()) {
                        (false, false) => "intent and outcome",
                        (false, true) => "intent",
                        _ => "outcome",
                    }
                ),
            ),
        }
    }
    // Commit outcomes (any namespace): the world they name is in the log.
    for ((id, kind), payload) in &rows {
        if kind != "outcome" || id.starts_with("effect:") {
            continue;
        }
        let Some(v) = payload.as_deref().and_then(json) else {
            continue;
        };
        let world = text(&v, "resultRef");
        let landed: bool = conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM worlds w JOIN log_entries l ON l.entry_hash_ref = w.log_head WHERE w.world_ref = ?1)",
            [&world],
            |r| r.get(0),
        )?;
        if !landed {
            rep.fail(
                "journal_mismatch",
                None,
                Some(id.clone()),
                format!(
                    "the commit outcome of {id} names world {world}, which no log entry produced"
                ),
            );
        }
    }
    Ok(())
}

/// Effect journaling: per episode, effect-intent ordinals are contiguous from where the
/// episode started (0 for stores that start there, 1 for older ones); every allowed effect
/// record has an effect outcome naming it, and that outcome its intent. An effect intent
/// whose invocation never committed must be covered by a started marker of its episode.
///
/// Findings: `effect_gap` (a missing ordinal or unjournaled record); `marker_missing` (an
/// uncommitted effect no started marker covers).
pub fn check_effect_journal(conn: &Connection, rep: &mut Report) -> Result<(), Error> {
    let rows = journal_rows(conn)?;
    let mut ordinals: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    let mut intent_eps: HashMap<String, String> = HashMap::new();
    for ((id, kind), payload) in &rows {
        if kind != "intent" || !id.starts_with("effect:") {
            continue;
        }
        let Some(v) = payload.as_deref().and_then(json) else {
            continue;
        };
        let ep = text(&v, "episodeId");
        let Some(ord) = v.get("ordinal").and_then(|x| x.as_i64()) else {
            rep.fail(
                "effect_gap",
                None,
                Some(id.clone()),
                "effect intent has no ordinal",
            );
            continue;
        };
        if *id != format!("effect:{ep}:{ord}") {
            rep.fail(
                "journal_mismatch",
                None,
                Some(id.clone()),
                format!("effect intent payload names episode {ep} ordinal {ord}, not its row's id"),
            );
        }
        ordinals.entry(ep.clone()).or_default().push(ord);
        intent_eps.insert(id.clone(), ep);
    }
    for (ep, mut ords) in ordinals {
        ords.sort_unstable();
        let start = ords[0];
        if start != 0 && start != 1 {
            rep.fail(
                "effect_gap",
                None,
                Some(format!("effect:{ep}:{start}")),
                format!("episode {ep}'s effect ordinals start at {start}, not 0 or 1"),
            );
        }
        for (i, o) in ords.iter().enumerate() {
            let want = start + i as i64;
            if *o != want {
                rep.fail(
                    "effect_gap",
                    None,
                    Some(format!("effect:{ep}:{want}")),
                    format!("episode {ep} has no effect intent with ordinal {want} (ordinals must be contiguous; a deleted intent would refund its budget)"),
                );
                break;
            }
        }
    }
    // Allowed effect records ↔ outcomes. Records are content-addressed and carry no episode,
    // so the same effect with the same budget in two episodes is one record named by several
    // outcomes.
    let by_record = outcomes_by_record(&rows);
    let mut stmt = conn.prepare("SELECT hash_ref, payload FROM objects WHERE semantic_id = ?1")?;
    let recs: Vec<(String, Vec<u8>)> = stmt
        .query_map([EFFECT_RECORD], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    for (hash, payload) in recs {
        let Ok(r) = EffectRecord::decode(&payload) else {
            continue;
        };
        if !r.allowed {
            continue;
        }
        // (An outcome without its intent is reported by orphan_outcome.)
        if !by_record.contains_key(&hash) {
            rep.fail(
                "effect_gap",
                None,
                Some(hash.clone()),
                "an allowed effect record has no effect outcome naming it (its intent and outcome were removed)",
            );
        }
    }
    // Effect intents whose invocation never committed need their episode's started marker.
    let committed: HashSet<String> = by_record.values().flatten().cloned().collect();
    let owned = owned_effects(conn)?;
    let markers = started_episodes(conn)?;
    // An intent that claimed an approval (an attended `Registry.Publish`) is guarded by its
    // claim: the approval is single use, so it cannot run again (issue 31).
    let claimed: HashSet<String> = conn
        .prepare("SELECT invocation_id FROM approval_claims")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for (id, ep) in &intent_eps {
        let done = committed.contains(id) && owned.contains(id);
        if !done && !markers.contains(ep) && !claimed.contains(id) {
            // A failure: `world` writes the marker in the same transaction as every intent, so
            // an uncovered intent was edited in (or its marker deleted), and the resend guard
            // (DEC-COORD-3) would not hold for it (INT-7 in docs/DECISIONS.md).
            rep.fail(
                "marker_missing",
                None,
                Some(id.clone()),
                format!("effect {id} belongs to no committed invocation and episode {ep} has no started marker (a resend could run the write again)"),
            );
        }
    }
    Ok(())
}

/// Effect intent ids whose record a committed invocation record lists.
fn owned_effects(conn: &Connection) -> Result<HashSet<String>, Error> {
    let mut owned = HashSet::new();
    let rows = journal_rows(conn)?;
    let by_record = outcomes_by_record(&rows);
    let mut stmt = conn.prepare(
        "SELECT o.payload FROM log_entries l JOIN objects o ON o.hash_ref = l.transition_ref WHERE o.semantic_id = 'world/invocation-record/v2'",
    )?;
    let recs: Vec<Vec<u8>> = stmt
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for p in recs {
        if let Ok(r) = InvocationRecord::decode("world/invocation-record/v2", &p) {
            // A record shared by several episodes belongs to this invocation only through the
            // effect ids of its own episode.
            let prefix = format!("effect:{}:", r.episode_id);
            for e in r.effects.unwrap_or_default() {
                for id in by_record.get(&e).into_iter().flatten() {
                    if id.starts_with(&prefix) {
                        owned.insert(id.clone());
                    }
                }
            }
        }
    }
    Ok(owned)
}

/// Effect outcome ids by the effect record they name (several when identical effects in
/// different episodes produced one content-addressed record).
fn outcomes_by_record(rows: &JournalRows) -> HashMap<String, Vec<String>> {
    let mut by_record: HashMap<String, Vec<String>> = HashMap::new();
    for ((id, kind), payload) in rows {
        if kind == "outcome" && id.starts_with("effect:") {
            if let Some(v) = payload.as_deref().and_then(json) {
                by_record
                    .entry(text(&v, "recordRef"))
                    .or_default()
                    .push(id.clone());
            }
        }
    }
    by_record
}

/// Episodes with at least one started marker of an invocation that did not commit.
pub fn started_episodes(conn: &Connection) -> Result<HashSet<String>, Error> {
    let mut stmt = conn.prepare("SELECT payload FROM objects WHERE semantic_id = ?1")?;
    let markers: Vec<Vec<u8>> = stmt
        .query_map([STARTED], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut out = HashSet::new();
    for p in markers {
        let Some(v) = json(&p) else { continue };
        let id = text(&v, "invocationId");
        if journal::row(conn, &id, journal::Kind::Outcome)?.is_some() {
            continue;
        }
        if let Some(ep) = journal::episode_of(&id) {
            out.insert(ep.to_string());
        }
    }
    Ok(out)
}

/// Session rows against their mint records: every `session_credentials` row whose
/// `world/session-mint/v1` record exists, with that record, in the table's order. The
/// authority compares them (`authority::session::row_differs`): the row must carry the
/// record's episode, grants and expiry (a raised budget in `grants_json` is honoured by
/// nothing: the broker fails closed). Rows without a record (minted by another tool) are not
/// returned.
pub fn sessions(conn: &Connection) -> Result<Vec<SessionCheck>, Error> {
    let records = mint_records(conn)?;
    let mut stmt = conn.prepare(
        "SELECT credential_id, episode_id, grants_json, expires_at FROM session_credentials",
    )?;
    let rows: Vec<(String, String, String, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<Result<_, _>>()?;
    let mut out = Vec::new();
    for (id, episode, grants_json, expires_at) in rows {
        let Some(rec) = records.get(&id) else {
            continue;
        };
        out.push(SessionCheck {
            record: rec.clone(),
            credential_id: id,
            episode,
            grants_json,
            expires_at,
        });
    }
    Ok(out)
}

/// Every mint record by credential id.
pub fn mint_records(conn: &Connection) -> Result<HashMap<String, serde_json::Value>, Error> {
    let mut stmt = conn.prepare("SELECT payload FROM objects WHERE semantic_id = ?1")?;
    let ps: Vec<Vec<u8>> = stmt
        .query_map([SESSION_MINT], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    Ok(ps
        .iter()
        .filter_map(|p| json(p))
        .map(|v| (text(&v, "credentialId"), v))
        .collect())
}

/// Published transitions: every `(id, source ref)` of the transition registry head (read by
/// `transitions`) names a source object that is stored. Finding: `dangling_ref`.
pub fn check_sources(
    conn: &Connection,
    rep: &mut Report,
    sources: &[(String, String)],
) -> Result<(), Error> {
    for (id, r) in sources {
        let present: bool = conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM objects WHERE hash_ref = ?1)",
            [r],
            |x| x.get(0),
        )?;
        if !present {
            rep.fail(
                "dangling_ref",
                None,
                Some(r.clone()),
                format!("published transition {id} names a missing source object"),
            );
        }
    }
    Ok(())
}
