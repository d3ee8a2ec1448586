//! The durable journal of intents and outcomes, and receipts (store-format.md §10,
//! authority-and-broker.md §7.4 and §10).

use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;

use crate::encoding::{canon, gojson::Obj};

use super::{object_in, put_object, Error, Object, Store};

/// `world/journal-intent/v1`
pub const COMMIT_INTENT: &str = "world/journal-intent/v1";
/// `world/journal-outcome/v1`
pub const COMMIT_OUTCOME: &str = "world/journal-outcome/v1";
/// `world/effect-intent/v1`
pub const EFFECT_INTENT: &str = "world/effect-intent/v1";
/// `world/effect-outcome/v1`
pub const EFFECT_OUTCOME: &str = "world/effect-outcome/v1";
/// Provenance of every journal payload object.
pub const PROVENANCE: &str = "store/journal";

/// A journal row kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `intent`
    Intent,
    /// `outcome`
    Outcome,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Intent => "intent",
            Kind::Outcome => "outcome",
        }
    }
}

/// The eight binding fields plus `logicalTime` of a commit intent (store-format.md §10).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitIntent {
    /// `invocationId`
    pub invocation_id: String,
    /// `worldRef` (= `nextWorld.ref`)
    pub world_ref: String,
    /// `entryHash`
    pub entry_hash: String,
    /// `observedHead` (`""` at genesis)
    pub observed_head: String,
    /// `prevEntryHash`
    pub prev_entry_hash: String,
    /// `transitionFn`
    pub transition_fn: String,
    /// `transitionRef`
    pub transition_ref: String,
    /// `interpreter`
    pub interpreter: String,
    /// `logicalTime`, Unix seconds.
    pub logical_time: i64,
}

/// Finish a Go-json payload with `canon.Source` (it ends in exactly one LF).
fn journal_bytes(json: Vec<u8>) -> Vec<u8> {
    // Go-json escapes every control character, so the text is valid UTF-8 without NUL.
    canon::source(&json).unwrap_or_else(|_| {
        let mut j = json;
        j.push(b'\n');
        j
    })
}

impl CommitIntent {
    /// The `world/journal-intent/v1` payload bytes.
    pub fn payload(&self) -> Vec<u8> {
        journal_bytes(
            Obj::new()
                .str("invocationId", &self.invocation_id)
                .str("worldRef", &self.world_ref)
                .str("entryHash", &self.entry_hash)
                .str("observedHead", &self.observed_head)
                .str("prevEntryHash", &self.prev_entry_hash)
                .str("transitionFn", &self.transition_fn)
                .str("transitionRef", &self.transition_ref)
                .str("interpreter", &self.interpreter)
                .int("logicalTime", self.logical_time)
                .finish(),
        )
    }

    /// Decode a stored intent payload.
    pub fn decode(bytes: &[u8]) -> Result<Self, Error> {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        struct Wire {
            invocation_id: String,
            world_ref: String,
            entry_hash: String,
            observed_head: String,
            prev_entry_hash: String,
            transition_fn: String,
            transition_ref: String,
            interpreter: String,
            logical_time: i64,
        }
        let w: Wire = serde_json::from_slice(bytes).map_err(|e| Error::Corrupt {
            what: "journal intent".into(),
            detail: e.to_string(),
        })?;
        Ok(CommitIntent {
            invocation_id: w.invocation_id,
            world_ref: w.world_ref,
            entry_hash: w.entry_hash,
            observed_head: w.observed_head,
            prev_entry_hash: w.prev_entry_hash,
            transition_fn: w.transition_fn,
            transition_ref: w.transition_ref,
            interpreter: w.interpreter,
            logical_time: w.logical_time,
        })
    }

    /// The `world/journal-outcome/v1` payload for a landed commit.
    pub fn outcome_payload(&self) -> Vec<u8> {
        commit_outcome_payload(&self.invocation_id, &self.world_ref, self.logical_time)
    }
}

/// A `world/journal-outcome/v1` payload: status `committed`, `resultRef` the committed world,
/// `logicalTime` copied from the intent.
pub fn commit_outcome_payload(invocation_id: &str, result_ref: &str, logical_time: i64) -> Vec<u8> {
    journal_bytes(
        Obj::new()
            .str("invocationId", invocation_id)
            .str("status", "committed")
            .str("resultRef", result_ref)
            .int("logicalTime", logical_time)
            .finish(),
    )
}

/// A `world/effect-intent/v1` payload (authority-and-broker.md §7.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EffectIntent {
    /// `effect:<ep>:<ordinal>`
    pub invocation_id: String,
    /// The episode.
    pub episode_id: String,
    /// The ordinal in the episode.
    pub ordinal: i64,
    /// Effect name.
    pub effect: String,
    /// Scope.
    pub scope: String,
    /// Cost (int64 units).
    pub cost: i64,
    /// Ref of the `world/effect-request/v1` object.
    pub request_ref: String,
    /// Unix seconds.
    pub logical_time: i64,
}

impl EffectIntent {
    /// The payload bytes (Go-json + LF).
    pub fn payload(&self) -> Vec<u8> {
        journal_bytes(
            Obj::new()
                .str("invocationId", &self.invocation_id)
                .str("episodeId", &self.episode_id)
                .int("ordinal", self.ordinal)
                .str("effect", &self.effect)
                .str("scope", &self.scope)
                .int("cost", self.cost)
                .str("requestRef", &self.request_ref)
                .int("logicalTime", self.logical_time)
                .finish(),
        )
    }
}

/// A `world/effect-outcome/v1` payload bytes: status `succeeded` or `failed`.
pub fn effect_outcome_payload(
    invocation_id: &str,
    succeeded: bool,
    record_ref: &str,
    logical_time: i64,
) -> Vec<u8> {
    journal_bytes(
        Obj::new()
            .str("invocationId", invocation_id)
            .str("status", if succeeded { "succeeded" } else { "failed" })
            .str("recordRef", record_ref)
            .int("logicalTime", logical_time)
            .finish(),
    )
}

/// Append one journal row pointing at a new payload object (`interfaceHash` =
/// sha256(semanticId), provenance `store/journal`), `seq = COALESCE(MAX(seq),0)+1`.
/// Returns the payload object's ref.
pub fn append(
    conn: &Connection,
    kind: Kind,
    invocation_id: &str,
    semantic_id: &str,
    payload: Vec<u8>,
) -> Result<String, Error> {
    let obj = Object::new(semantic_id, PROVENANCE, payload);
    put_object(conn, &obj)?;
    conn.execute(
        "INSERT INTO journal (seq, kind, invocation_id, object_ref)
         VALUES ((SELECT COALESCE(MAX(seq), 0) + 1 FROM journal), ?1, ?2, ?3)",
        rusqlite::params![kind.as_str(), invocation_id, obj.meta.hash],
    )?;
    Ok(obj.meta.hash)
}

/// Store `objects` in order (each `OR IGNORE`, as [`put_object`]), then [`append`] one
/// journal row: the store's writes of one broker step (an effect's request and intent, or its
/// result, record and outcome) in one call, in the caller's transaction `conn`.
///
/// # Errors
/// As [`put_object`] and [`append`]; the caller's transaction must then not commit.
pub fn append_after(
    conn: &Connection,
    objects: &[&Object],
    kind: Kind,
    invocation_id: &str,
    semantic_id: &str,
    payload: Vec<u8>,
) -> Result<String, Error> {
    for o in objects {
        put_object(conn, o)?;
    }
    append(conn, kind, invocation_id, semantic_id, payload)
}

/// Open a `BEGIN IMMEDIATE` transaction on `store` and write [`append_after`] in it; the
/// transaction is returned open, for the caller's further writes in it (an effect's
/// settlements with ledgers in the store file) and its commit. One call for a broker step's
/// store writes (DEC-PAIRING2-2).
///
/// # Errors
/// As [`Store::immediate`] and [`append_after`] (the transaction is then rolled back).
pub fn begin_with<'s>(
    store: &'s mut Store,
    objects: &[&Object],
    kind: Kind,
    invocation_id: &str,
    semantic_id: &str,
    payload: Vec<u8>,
) -> Result<rusqlite::Transaction<'s>, Error> {
    let tx = store.immediate()?;
    append_after(&tx, objects, kind, invocation_id, semantic_id, payload)?;
    Ok(tx)
}

/// The object ref of the journal row (`invocation_id`, `kind`), if present.
pub fn row(conn: &Connection, invocation_id: &str, kind: Kind) -> Result<Option<String>, Error> {
    Ok(conn
        .prepare_cached("SELECT object_ref FROM journal WHERE invocation_id = ?1 AND kind = ?2")?
        .query_row([invocation_id, kind.as_str()], |r| r.get(0))
        .optional()?)
}

/// One `journal` row, verbatim (`kind` as stored: `intent` or `outcome`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct JournalRow {
    /// `seq`: the row's position in the journal.
    pub seq: i64,
    /// `kind`.
    pub kind: String,
    /// `invocation_id`.
    pub invocation_id: String,
    /// `object_ref`: the payload object.
    pub object_ref: String,
}

fn journal_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<JournalRow> {
    Ok(JournalRow {
        seq: r.get(0)?,
        kind: r.get(1)?,
        invocation_id: r.get(2)?,
        object_ref: r.get(3)?,
    })
}

/// Every journal row of `invocation_id` (its intent and outcome), in index order.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn rows_of(conn: &Connection, invocation_id: &str) -> Result<Vec<JournalRow>, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq, kind, invocation_id, object_ref FROM journal WHERE invocation_id = ?1",
    )?;
    let rows = stmt.query_map([invocation_id], journal_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Every journal row of the episode's effects (`effect:<episode>:*`): one range of the
/// `(invocation_id, kind)` index, in index order.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn effect_rows_of_episode(conn: &Connection, episode: &str) -> Result<Vec<JournalRow>, Error> {
    // `;` is the character after `:`, so the range holds exactly the ids with the prefix.
    let mut stmt = conn.prepare_cached(
        "SELECT seq, kind, invocation_id, object_ref FROM journal WHERE invocation_id >= ?1 AND invocation_id < ?2",
    )?;
    let rows = stmt.query_map(
        [format!("effect:{episode}:"), format!("effect:{episode};")],
        journal_row,
    )?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Insert one journal row verbatim, its `seq` included (an episode bundle copies its source's
/// rows; new rows go through [`append`]).
///
/// # Errors
/// [`Error::Sqlite`], e.g. a constraint failure for a `seq` or `(invocation_id, kind)` taken.
pub fn insert_verbatim(conn: &Connection, row: &JournalRow) -> Result<(), Error> {
    conn.prepare_cached(
        "INSERT INTO journal (seq, kind, invocation_id, object_ref) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(rusqlite::params![
        row.seq,
        row.kind,
        row.invocation_id,
        row.object_ref
    ])?;
    Ok(())
}

/// Receipt states (authority-and-broker.md §10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReceiptState {
    /// No intent, no outcome.
    NotStarted,
    /// Intent without outcome: it is unknown whether it happened. Never retry automatically.
    Indeterminate,
    /// Intent and outcome.
    Resolved,
}

/// A receipt answer: `{invocationId, state, resultRef?, recordRef?}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Receipt {
    /// The id asked about.
    pub invocation_id: String,
    /// The derived state.
    pub state: ReceiptState,
    /// For a resolved commit: the committed `nextWorld.ref`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_ref: Option<String>,
    /// For a resolved effect: the effect record ref.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record_ref: Option<String>,
    /// For a resolved effect: `succeeded` or `failed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

/// Derive the receipt for any namespace (`rest:`, `a2a:`, `mcp:`, `cli:`, `effect:`).
///
/// # Errors
/// [`Error::InvocationMismatch`] with field `Intent` for an outcome without intent;
/// [`Error::Corrupt`] when a payload object is missing or undecodable.
pub fn receipt(conn: &Connection, invocation_id: &str) -> Result<Receipt, Error> {
    // Both rows in one statement (the `(invocation_id, kind)` key serves it).
    let (mut intent, mut outcome) = (None, None);
    {
        let mut stmt =
            conn.prepare_cached("SELECT kind, object_ref FROM journal WHERE invocation_id = ?1")?;
        let mut rows = stmt.query([invocation_id])?;
        while let Some(r) = rows.next()? {
            let kind: String = r.get(0)?;
            let object_ref: String = r.get(1)?;
            if kind == Kind::Intent.as_str() {
                intent = Some(object_ref);
            } else if kind == Kind::Outcome.as_str() {
                outcome = Some(object_ref);
            }
        }
    }
    receipt_from(
        invocation_id,
        intent.is_some(),
        outcome.as_deref(),
        &mut |out| object_in(conn, out),
        &mut |world| {
            Ok(conn
                .prepare_cached("SELECT EXISTS (SELECT 1 FROM worlds WHERE world_ref = ?1)")?
                .query_row([world], |x| x.get(0))?)
        },
    )
}

/// [`receipt`] from the journal rows of `invocation_id` already read: whether it has an intent
/// row, the object ref of its outcome row, the outcome object through `object` (asked once,
/// with that ref) and whether the store holds a world through `world_exists` (asked once for a
/// resolved commit). Every check of [`receipt`] is made here; replay's block reads
/// (`super::replay_read::receipts`) answer the two lookups from one statement per block.
///
/// # Errors
/// As [`receipt`], and whatever `object` or `world_exists` return.
pub fn receipt_from(
    invocation_id: &str,
    intent: bool,
    outcome: Option<&str>,
    object: &mut dyn FnMut(&str) -> Result<Option<Object>, Error>,
    world_exists: &mut dyn FnMut(&str) -> Result<bool, Error>,
) -> Result<Receipt, Error> {
    let mut r = Receipt {
        invocation_id: invocation_id.to_string(),
        state: ReceiptState::NotStarted,
        result_ref: None,
        record_ref: None,
        status: None,
    };
    match (intent, outcome) {
        (false, None) => {}
        (false, Some(_)) => {
            return Err(Error::InvocationMismatch {
                field: "Intent",
                want: "durable intent".into(),
                got: "outcome without intent".into(),
            })
        }
        (true, None) => r.state = ReceiptState::Indeterminate,
        (true, Some(out)) => {
            r.state = ReceiptState::Resolved;
            let obj = object(out)?.ok_or_else(|| Error::Corrupt {
                what: "journal outcome".into(),
                detail: format!("object {out} is missing"),
            })?;
            // Answer only from an outcome that still hashes to its ref (issue 13 §3).
            if !obj.verifies() {
                return Err(Error::Corrupt {
                    what: "journal outcome".into(),
                    detail: format!("object {out} does not hash to its ref; the store was edited"),
                });
            }
            // …and that decodes strictly, names this id and, for a commit, a world the store
            // holds: `verify` fails anything else, so no reader answers from it (issue 26 §3).
            let effect = invocation_id.starts_with("effect:");
            let corrupt = |detail: String| Error::Corrupt {
                what: format!("journal outcome of {invocation_id}"),
                detail,
            };
            let o = super::verify::links::decode_outcome(&obj.payload, effect)
                .map_err(|why| corrupt(format!("object {out} is not a valid outcome: {why}")))?;
            if o.invocation_id != invocation_id {
                return Err(corrupt(format!(
                    "object {out} names invocation {:?}",
                    o.invocation_id
                )));
            }
            if effect {
                r.record_ref = Some(o.reference);
                r.status = Some(o.status);
            } else {
                if !world_exists(&o.reference)? {
                    return Err(corrupt(format!(
                        "its resultRef {} names no world in this store; the store was edited (run `world verify`)",
                        o.reference
                    )));
                }
                r.result_ref = Some(o.reference);
            }
        }
    }
    Ok(r)
}

/// Which invocation committed each log entry: entry hash → invocation id, from every commit
/// intent of the journal whose payload decodes and names its own journal row's id (an
/// undecodable or mismatched intent names no entry). Built by [`commit_intents_by_entry`].
#[derive(Clone, Debug, Default)]
pub struct CommitIntentIndex {
    by_entry: std::collections::HashMap<String, String>,
}

impl CommitIntentIndex {
    /// The invocation id whose commit intent names `entry_hash`, if any.
    pub fn get(&self, entry_hash: &str) -> Option<&str> {
        self.by_entry.get(entry_hash).map(String::as_str)
    }
}

/// Read every commit intent (`world/journal-intent/v1`) once and index it by the entry hash it
/// names (replay's selection, transitions.md §12). One pass over the journal's intents.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn commit_intents_by_entry(conn: &Connection) -> Result<CommitIntentIndex, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT j.invocation_id, o.payload FROM journal j JOIN objects o ON o.hash_ref = j.object_ref
         WHERE j.kind = 'intent' AND o.semantic_id = ?1",
    )?;
    let mut rows = stmt.query([COMMIT_INTENT])?;
    let mut out = CommitIntentIndex::default();
    while let Some(r) = rows.next()? {
        let id: String = r.get(0)?;
        let payload = r.get_ref(1)?.as_blob().unwrap_or_default();
        if let Ok(i) = CommitIntent::decode(payload) {
            if i.invocation_id == id {
                out.by_entry.insert(i.entry_hash, id);
            }
        }
    }
    Ok(out)
}

/// Every commit intent (`world/journal-intent/v1`, any namespace but `effect:`) that has an
/// outcome, i.e. every invocation the journal records as committed, as `(invocation_id,
/// intent)` in journal order. An intent that does not decode is left out (`verify` reports
/// it).
///
/// # Errors
/// [`Error::Sqlite`].
pub fn committed_intents(conn: &Connection) -> Result<Vec<(String, CommitIntent)>, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT j.invocation_id, o.payload FROM journal j JOIN objects o ON o.hash_ref = j.object_ref
         WHERE j.kind = 'intent' AND o.semantic_id = ?1
           AND EXISTS (SELECT 1 FROM journal x WHERE x.invocation_id = j.invocation_id AND x.kind = 'outcome')
         ORDER BY j.seq",
    )?;
    let mut rows = stmt.query([COMMIT_INTENT])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let id: String = r.get(0)?;
        let payload = r.get_ref(1)?.as_blob().unwrap_or_default();
        if let Ok(i) = CommitIntent::decode(payload) {
            out.push((id, i));
        }
    }
    Ok(out)
}

/// The journal rows of `kind` of one episode's effects (`effect:<episode>:<n>` ids), each as
/// `(invocation_id, payload)` of the object it names (intents in journal order, outcomes in
/// key order). Payloads are returned as stored, unverified. Intents are filtered to
/// `world/effect-intent/v1` objects.
///
/// Cost: one range scan of the journal's `(invocation_id, kind)` key over the episode, not a
/// scan of every effect intent of the store.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn episode_effect_rows(
    conn: &Connection,
    episode: &str,
    kind: Kind,
) -> Result<Vec<(String, Vec<u8>)>, Error> {
    let lo = format!("effect:{episode}:");
    let hi = format!("effect:{episode};");
    let rows = match kind {
        // `+o.semantic_id`: keep SQLite from driving the join from every effect-intent
        // object of the store (objects_by_semantic_id) into the episode's journal range,
        // which is quadratic in the episode length; the journal range drives it instead.
        Kind::Intent => conn
            .prepare_cached(
                "SELECT j.invocation_id, o.payload FROM journal j JOIN objects o ON o.hash_ref = j.object_ref
                 WHERE j.kind = 'intent' AND j.invocation_id >= ?1 AND j.invocation_id < ?2 AND +o.semantic_id = ?3
                 ORDER BY j.seq",
            )?
            .query_map(rusqlite::params![lo, hi, EFFECT_INTENT], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?
            .collect::<Result<Vec<_>, _>>()?,
        Kind::Outcome => conn
            .prepare_cached(
                "SELECT j.invocation_id, o.payload FROM journal j JOIN objects o ON o.hash_ref = j.object_ref
                 WHERE j.kind = 'outcome' AND j.invocation_id >= ?1 AND j.invocation_id < ?2",
            )?
            .query_map(rusqlite::params![lo, hi], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<Vec<_>, _>>()?,
    };
    Ok(rows)
}

/// The `logicalTime` of the latest commit outcome in journal order (any namespace but
/// `effect:`), `None` before the first. A new commit intent takes at least this time
/// ([`super::commit::apply_with`]), so commit times never go backwards in the log even when the
/// system clock is stepped back (DEC-TRUST3-1; `verify` reports an entry whose time does).
///
/// Cost: a backwards walk of the journal's `seq` key from its end, skipping the effect
/// outcomes after the last commit.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn latest_commit_time(conn: &Connection) -> Result<Option<i64>, Error> {
    Ok(conn
        .prepare_cached(
            "SELECT json_extract(CAST(o.payload AS TEXT), '$.logicalTime')
             FROM journal j JOIN objects o ON o.hash_ref = j.object_ref
             WHERE j.kind = 'outcome' AND substr(j.invocation_id, 1, 7) <> 'effect:'
             ORDER BY j.seq DESC LIMIT 1",
        )?
        .query_row([], |r| r.get::<_, Option<i64>>(0))
        .optional()?
        .flatten())
}

/// Every intent without an outcome, in journal order: `(seq, invocation_id, object_ref)`.
pub fn pending(conn: &Connection) -> Result<Vec<(i64, String, String)>, Error> {
    let mut stmt = conn.prepare(
        "SELECT i.seq, i.invocation_id, i.object_ref FROM journal i
         WHERE i.kind = 'intent' AND NOT EXISTS
           (SELECT 1 FROM journal o WHERE o.kind = 'outcome' AND o.invocation_id = i.invocation_id)
         ORDER BY i.seq",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}
/// Every effect intent in journal order: `(invocation_id, payload)` (`world package status`).
///
/// # Errors
/// SQLite errors.
pub fn effect_intents(conn: &Connection) -> Result<Vec<(String, Vec<u8>)>, Error> {
    let mut stmt = conn.prepare(
        "SELECT j.invocation_id, o.payload FROM journal j JOIN objects o ON o.hash_ref = j.object_ref
         WHERE j.kind = 'intent' AND j.invocation_id LIKE 'effect:%' ORDER BY j.seq",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The episode part of an invocation id `<surface>:<episode>:<task>` (the task has no `:`).
pub fn episode_of(invocation_id: &str) -> Option<&str> {
    let (_, rest) = invocation_id.split_once(':')?;
    let (ep, _) = rest.rsplit_once(':')?;
    Some(ep)
}
/// The episode's latest effect intent, `effect:<episode>:<max_ordinal>`, when no committed
/// invocation can own it and no started marker of an uncommitted invocation of the episode
/// covers it (issue 13 §3, INT-7): the marker of the call that made it was removed, so a resend
/// of that call cannot be recognised. `None` when the intent is followed by a commit outcome of
/// the episode, is covered by a marker, or does not exist.
///
/// Cost: one index lookup and a read of the journal rows after the intent; the markers are
/// read only when nothing committed after it (the rare, suspicious case).
///
/// # Errors
/// SQLite errors.
pub fn uncovered_tail_intent(
    conn: &Connection,
    episode: &str,
    max_ordinal: i64,
) -> Result<Option<String>, Error> {
    let id = format!("effect:{episode}:{max_ordinal}");
    let seq: Option<i64> = conn
        .prepare_cached("SELECT seq FROM journal WHERE invocation_id = ?1 AND kind = 'intent'")?
        .query_row([&id], |r| r.get(0))
        .optional()?;
    let Some(seq) = seq else {
        return Ok(None);
    };
    let mut later = conn
        .prepare_cached("SELECT invocation_id FROM journal WHERE seq > ?1 AND kind = 'outcome'")?;
    let committed_after = later
        .query_map([seq], |r| r.get::<_, String>(0))?
        .filter_map(Result::ok)
        .any(|inv| !inv.starts_with("effect:") && episode_of(&inv) == Some(episode));
    if committed_after {
        return Ok(None);
    }
    let mut markers = conn.prepare_cached("SELECT payload FROM objects WHERE semantic_id = ?1")?;
    let payloads: Vec<Vec<u8>> = markers
        .query_map([STARTED_MARKER], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for p in payloads {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(&p) else {
            continue;
        };
        let Some(inv) = v.get("invocationId").and_then(|x| x.as_str()) else {
            continue;
        };
        if episode_of(inv) == Some(episode) && row(conn, inv, Kind::Outcome)?.is_none() {
            return Ok(None);
        }
    }
    Ok(Some(id))
}

/// `world/invocation-started/v1`: the coordinator's started marker (DEC-COORD-3).
pub const STARTED_MARKER: &str = "world/invocation-started/v1";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Store, WriteOptions};

    /// A bundle copies exactly one episode's effect rows, verbatim, `seq` included.
    #[test]
    fn effect_rows_of_an_episode_and_verbatim_copy() {
        let dir = tempfile::tempdir().unwrap();
        let open = |name: &str| {
            Store::open_write(
                &dir.path().join(name),
                WriteOptions {
                    create: true,
                    wait_lock: None,
                },
            )
            .unwrap()
        };
        let src = open("a.db");
        let c = src.conn();
        for id in [
            "effect:ep:1",
            "effect:ep-2:1",
            "effect:e:1",
            "cli:ep:t",
            "effect:ep:2",
        ] {
            append(c, Kind::Intent, id, EFFECT_INTENT, id.as_bytes().to_vec()).unwrap();
        }
        append(
            c,
            Kind::Outcome,
            "effect:ep:1",
            EFFECT_OUTCOME,
            b"o".to_vec(),
        )
        .unwrap();
        let rows = effect_rows_of_episode(c, "ep").unwrap();
        let ids: Vec<(&str, &str)> = rows
            .iter()
            .map(|r| (r.invocation_id.as_str(), r.kind.as_str()))
            .collect();
        assert_eq!(
            ids,
            [
                ("effect:ep:1", "intent"),
                ("effect:ep:1", "outcome"),
                ("effect:ep:2", "intent")
            ]
        );
        assert_eq!(rows_of(c, "cli:ep:t").unwrap()[0].seq, 4);
        let dst = open("b.db");
        for r in &rows {
            let o = crate::store::object_in(c, &r.object_ref).unwrap().unwrap();
            put_object(dst.conn(), &o).unwrap();
            insert_verbatim(dst.conn(), r).unwrap();
        }
        assert_eq!(effect_rows_of_episode(dst.conn(), "ep").unwrap(), rows);
        assert!(
            insert_verbatim(dst.conn(), &rows[0]).is_err(),
            "a seq is written once"
        );
    }
}
