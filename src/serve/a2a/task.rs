//! A2A tasks as `world` keeps them (DEC-A2A-5): a task's id is its invocation id
//! `a2a:<episode>:<messageId>`; the receipt says whether that invocation completed (or is
//! indeterminate); the row of `world_a2a_tasks` adds the context id, the conversation and the
//! states of a task that did not run (input required, canceled, rejected, failed).
//! `GetTask`, `ListTasks` and `CancelTask` read and answer from here, in the v1.0 form; the
//! v0.3 form is [`to_v03`].

use std::collections::HashSet;

use serde_json::{json, Map, Value};

use super::super::ReadError;
use super::RpcError;
use crate::ops::invoke::valid_task;
use crate::store::read::{
    InvocationRecord, Object, ReceiptState, RecordError, Store, TaskKey, TaskRow,
};

/// A2A v1.0 task states.
pub mod state {
    /// Accepted, queued for the writer (a `returnImmediately` send), not yet running.
    pub const SUBMITTED: &str = "TASK_STATE_SUBMITTED";
    /// Running (or indeterminate: never retried automatically).
    pub const WORKING: &str = "TASK_STATE_WORKING";
    /// Committed.
    pub const COMPLETED: &str = "TASK_STATE_COMPLETED";
    /// Failed (terminal).
    pub const FAILED: &str = "TASK_STATE_FAILED";
    /// Canceled by the client (terminal).
    pub const CANCELED: &str = "TASK_STATE_CANCELED";
    /// Waiting for the client to name a skill or give its input (interrupted).
    pub const INPUT_REQUIRED: &str = "TASK_STATE_INPUT_REQUIRED";
    /// Nothing here can do it (terminal).
    pub const REJECTED: &str = "TASK_STATE_REJECTED";
    /// Waiting for authentication (not used by `world`, accepted as a filter).
    pub const AUTH_REQUIRED: &str = "TASK_STATE_AUTH_REQUIRED";
    /// Every state name a client may filter by.
    pub const ALL: [&str; 8] = [
        SUBMITTED,
        WORKING,
        COMPLETED,
        FAILED,
        CANCELED,
        INPUT_REQUIRED,
        REJECTED,
        AUTH_REQUIRED,
    ];

    /// Is `s` terminal (no further messages, not cancelable)?
    pub fn terminal(s: &str) -> bool {
        matches!(s, COMPLETED | FAILED | CANCELED | REJECTED)
    }
}

/// A task as read now.
#[derive(Clone, Debug)]
pub struct Task {
    /// `a2a:<episode>:<key>`.
    pub id: String,
    /// The context id.
    pub context_id: String,
    /// The state (a [`state`] name).
    pub state: &'static str,
    /// When the state last changed (Unix ms), when known.
    pub updated_ms: Option<i64>,
    /// The status message, if any.
    pub status_message: Option<Value>,
    /// The conversation, oldest first.
    pub history: Vec<Value>,
    /// The output artifact (a completed invocation), when read.
    pub artifacts: Option<Vec<Value>>,
    /// `{invocation_id, world_ref, entry_index}` (completed), `{invocation_id, world}`
    /// (indeterminate), or `{}`.
    pub metadata: Value,
    /// The row as stored, when there is one.
    pub row: Option<TaskRow>,
}

/// The [`state`] constant named `s` (an unknown name reads as `FAILED`).
pub fn state_of(s: &str) -> &'static str {
    state::ALL
        .iter()
        .find(|x| **x == s)
        .copied()
        .unwrap_or(state::FAILED)
}

/// Why a resolved invocation does not re-verify (logged; the caller answers "internal store
/// failure").
#[derive(Debug, thiserror::Error)]
enum Reverify {
    /// A read failed.
    #[error(transparent)]
    Store(#[from] crate::store::read::Error),
    /// A row or object is absent, altered or does not match (`world row absent`, …).
    #[error("{0}")]
    Broken(&'static str),
    /// The invocation record does not decode.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// The output is not JSON.
    #[error(transparent)]
    Output(#[from] serde_json::Error),
}

/// Re-verify a resolved invocation: world row → entry → record → output (hashes re-checked).
fn reverify(s: &Store, invocation_id: &str, world_ref: &str) -> Result<(Value, i64), Reverify> {
    let w = s
        .world(world_ref)?
        .ok_or(Reverify::Broken("world row absent"))?;
    let e = s
        .log_entry(w.revision)?
        .filter(|e| e.entry_hash == w.log_head)
        .ok_or(Reverify::Broken("log entry absent"))?;
    let rec = s
        .object(&e.transition_ref)?
        .filter(Object::verifies)
        .ok_or(Reverify::Broken("record absent or altered"))?;
    let rec = InvocationRecord::decode(&rec.meta.semantic_id, &rec.payload)?;
    if rec.invocation_id != invocation_id || rec.output != w.state_root {
        return Err(Reverify::Broken("record does not match the receipt"));
    }
    let out = s
        .object(&rec.output)?
        .filter(Object::verifies)
        .ok_or(Reverify::Broken("output absent or altered"))?;
    let v: Value = serde_json::from_slice(&out.payload)?;
    Ok((v, e.header.entry_index))
}

fn store_err(e: impl std::fmt::Display) -> ReadError {
    ReadError::Store(e.to_string())
}

/// Does `task_id` name a task of `episode` (`a2a:<episode>:<valid task>`)?
pub fn of_episode(task_id: &str, episode: &str) -> bool {
    task_id
        .strip_prefix("a2a:")
        .and_then(|r| r.strip_prefix(episode))
        .and_then(|r| r.strip_prefix(':'))
        .is_some_and(valid_task)
}

/// The output artifact of a completed invocation.
pub fn output_artifact(output: Value) -> Value {
    json!({"artifactId": "output", "parts": [{"data": output}]})
}

/// Read `task_id` for a session of `episode` (`None`: no such task there). `artifacts`: also
/// re-verify and read the output of a completed invocation (a listing without
/// `includeArtifacts` skips it). `inflight`: the invocations this daemon is running now (a
/// `WORKING` row whose call is not among them never started: `FAILED`).
///
/// # Errors
/// [`ReadError::Store`] for a failed read or a committed invocation that does not re-verify.
pub fn load(
    s: &Store,
    episode: &str,
    task_id: &str,
    artifacts: bool,
    inflight: &HashSet<String>,
) -> Result<Option<Task>, ReadError> {
    if !of_episode(task_id, episode) {
        return Ok(None);
    }
    let row = s.a2a_task(task_id).map_err(store_err)?;
    if row.as_ref().is_some_and(|r| r.episode_id != episode) {
        return Ok(None);
    }
    let history: Vec<Value> = row
        .as_ref()
        .and_then(|r| serde_json::from_str(&r.history_json).ok())
        .unwrap_or_default();
    let mut t = Task {
        id: task_id.to_string(),
        context_id: row
            .as_ref()
            .map_or_else(|| episode.to_string(), |r| r.context_id.clone()),
        state: state::WORKING,
        updated_ms: row.as_ref().map(|r| r.updated_ms),
        status_message: row
            .as_ref()
            .and_then(|r| r.status_message_json.as_deref())
            .and_then(|m| serde_json::from_str(m).ok()),
        history,
        artifacts: None,
        metadata: json!({}),
        row: row.clone(),
    };
    if row.as_ref().is_some_and(|r| !r.invoked) {
        t.state = state_of(&row.as_ref().map(|r| r.state.clone()).unwrap_or_default());
        if t.state == state::SUBMITTED && !inflight.contains(task_id) {
            // Queued by a `returnImmediately` send, and no run of this daemon holds it: the
            // daemon stopped (or the writer queue refused it) before the call started.
            t.state = state::FAILED;
            t.status_message = Some(agent_message(
                &t.id,
                &t.context_id,
                "the call did not start: nothing of it was recorded; send the message again",
                None,
            ));
        }
        return Ok(Some(t));
    }
    let receipt = crate::ops::invoke::receipt(s, task_id).map_err(store_err)?;
    match (receipt.state, receipt.result_ref) {
        (ReceiptState::NotStarted, _) => {
            let Some(r) = &row else { return Ok(None) };
            t.state = state_of(&r.state);
            if t.state == state::WORKING && !inflight.contains(task_id) {
                // The row was written, the call never recorded anything: it did not start
                // (the daemon stopped, or the call was refused before its intent).
                t.state = state::FAILED;
                t.status_message = Some(agent_message(
                    &t.id,
                    &t.context_id,
                    "the call did not start: nothing of it was recorded; send the message again",
                    None,
                ));
            }
        }
        (ReceiptState::Indeterminate, _) => {
            t.state = state::WORKING;
            t.metadata = json!({"invocation_id": task_id, "world": {"outcome": "indeterminate"}});
        }
        (ReceiptState::Resolved, Some(wr)) => {
            t.state = state::COMPLETED;
            t.status_message = None;
            if artifacts {
                let (out, idx) = reverify(s, task_id, &wr).map_err(store_err)?;
                t.artifacts = Some(vec![output_artifact(out)]);
                t.metadata = json!({"invocation_id": task_id, "world_ref": wr, "entry_index": idx});
            } else {
                t.metadata = json!({"invocation_id": task_id, "world_ref": wr});
            }
        }
        (ReceiptState::Resolved, None) => {
            return Err(ReadError::Store(
                "resolved receipt without resultRef".into(),
            ))
        }
    }
    Ok(Some(t))
}

/// An agent message (`ROLE_AGENT`) about task `task_id`: a text part, plus a data part when
/// given.
pub fn agent_message(task_id: &str, context_id: &str, text: &str, data: Option<Value>) -> Value {
    let mut parts = vec![json!({"text": text})];
    if let Some(d) = data {
        parts.push(json!({"data": d}));
    }
    json!({
        "messageId": format!("world-{}", super::super::random_task()),
        "role": "ROLE_AGENT",
        "parts": parts,
        "contextId": context_id,
        "taskId": task_id,
    })
}

/// RFC 3339 UTC with milliseconds (`2026-01-02T03:04:05.678Z`, A2A §5.6.1).
pub fn iso_ms(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let text = crate::authority::session::rfc3339(secs);
    format!("{}.{:03}Z", text.trim_end_matches('Z'), ms.rem_euclid(1000))
}

/// Parse an ISO 8601 / RFC 3339 timestamp (`YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`, a date
/// alone is midnight UTC) to Unix milliseconds; `None` when it is not one.
pub fn parse_iso_ms(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let s = text.get(from..from + len)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, m, d) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let (mut ms_of_day, mut offset_min, mut i) = (0i64, 0i64, 10usize);
    if b.len() > 10 {
        if !matches!(b[10], b'T' | b't' | b' ') || b.len() < 19 || b[13] != b':' || b[16] != b':' {
            return None;
        }
        let (hh, mi, ss) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
        if hh > 23 || mi > 59 || ss > 60 {
            return None;
        }
        ms_of_day = (hh * 3600 + mi * 60 + ss) * 1000;
        i = 19;
        if b.get(i) == Some(&b'.') {
            let start = i + 1;
            let mut end = start;
            while b.get(end).is_some_and(u8::is_ascii_digit) {
                end += 1;
            }
            if end == start {
                return None;
            }
            let frac = &text[start..end.min(start + 3)];
            ms_of_day += frac.parse::<i64>().ok()? * 10i64.pow(3 - frac.len() as u32);
            i = end;
        }
        match b.get(i) {
            Some(b'Z' | b'z') => i += 1,
            Some(sign @ (b'+' | b'-')) => {
                if b.len() != i + 6 || b[i + 3] != b':' {
                    return None;
                }
                let (oh, om) = (num(i + 1, 2)?, num(i + 4, 2)?);
                if oh > 23 || om > 59 {
                    return None;
                }
                offset_min = (oh * 60 + om) * if *sign == b'+' { 1 } else { -1 };
                i += 6;
            }
            _ => return None,
        }
    }
    if i != b.len() {
        return None;
    }
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400_000 + ms_of_day - offset_min * 60_000)
}

/// A `historyLength` parameter: absent → no limit; an integer ≥ 0; anything else `-32602`.
///
/// # Errors
/// `-32602` naming the field.
pub fn history_length(v: Option<&Value>, field: &str) -> Result<Option<usize>, RpcError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(n) => n
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| RpcError::params(format!("{field} must be an integer ≥ 0"))),
    }
}

/// The task in the A2A v1.0 form, its history cut to the last `history` messages (`Some(0)`:
/// none; `None`: all) and its artifacts left out unless `artifacts`.
pub fn to_v1(t: &Task, history: Option<usize>, artifacts: bool) -> Value {
    let mut status = Map::new();
    status.insert("state".into(), Value::String(t.state.into()));
    if let Some(m) = &t.status_message {
        status.insert("message".into(), m.clone());
    }
    if let Some(ms) = t.updated_ms {
        status.insert("timestamp".into(), Value::String(iso_ms(ms)));
    }
    let mut v = json!({"id": t.id, "contextId": t.context_id, "status": status});
    if artifacts {
        if let Some(a) = &t.artifacts {
            v["artifacts"] = Value::Array(a.clone());
        }
    }
    let keep = history.unwrap_or(usize::MAX);
    if keep > 0 && !t.history.is_empty() {
        let from = t.history.len().saturating_sub(keep);
        v["history"] = Value::Array(t.history[from..].to_vec());
    }
    v["metadata"] = t.metadata.clone();
    v
}

/// The v0.3 form of a v1.0 object (Task or Message): `kind`, lower-case states, `kind`-tagged
/// parts, roles `user`/`agent`, recursively for status messages and history.
pub fn to_v03(v1: Value) -> Value {
    let mut t = v1;
    let is_task = t.get("status").is_some();
    if is_task {
        t["kind"] = Value::String("task".into());
        let state = t["status"]["state"]
            .as_str()
            .and_then(|s| s.strip_prefix("TASK_STATE_"))
            .map(|s| s.to_ascii_lowercase().replace('_', "-"))
            .unwrap_or_else(|| "unknown".into());
        t["status"]["state"] = Value::String(state);
        if let Some(m) = t["status"].get_mut("message") {
            *m = to_v03(m.take());
        }
        if let Some(h) = t.get_mut("history").and_then(Value::as_array_mut) {
            for m in h {
                *m = to_v03(m.take());
            }
        }
        if let Some(arts) = t.get_mut("artifacts").and_then(Value::as_array_mut) {
            for a in arts {
                if let Some(parts) = a.get_mut("parts").and_then(Value::as_array_mut) {
                    tag_parts(parts);
                }
            }
        }
    } else {
        t["kind"] = Value::String("message".into());
        let role = match t["role"].as_str() {
            Some("ROLE_AGENT") => "agent",
            _ => "user",
        };
        t["role"] = Value::String(role.into());
        if let Some(parts) = t.get_mut("parts").and_then(Value::as_array_mut) {
            tag_parts(parts);
        }
    }
    t
}

fn tag_parts(parts: &mut [Value]) {
    for p in parts {
        let kind = if p.get("text").is_some() {
            "text"
        } else if p.get("data").is_some() {
            "data"
        } else {
            "file"
        };
        p["kind"] = Value::String(kind.into());
    }
}

/// What `ListTasks` was asked (A2A §3.1.4), checked.
#[derive(Clone, Debug, Default)]
pub struct ListQuery {
    /// Only this context.
    pub context_id: Option<String>,
    /// Only this state.
    pub status: Option<&'static str>,
    /// 1–100 (default 50).
    pub page_size: usize,
    /// After this position (`(updated_ms, seq)`), from the page token.
    pub after: Option<(i64, i64)>,
    /// History per task (`None`: all).
    pub history: Option<usize>,
    /// Only tasks whose status changed at or after this instant (Unix ms).
    pub since_ms: Option<i64>,
    /// Include artifacts.
    pub artifacts: bool,
}

/// The largest `pageSize`.
pub const MAX_PAGE: usize = 100;
/// The default `pageSize`.
pub const DEFAULT_PAGE: usize = 50;

fn page_token(k: &TaskKey) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{}.{}", k.updated_ms, k.seq))
}

fn parse_page_token(t: &str) -> Option<(i64, i64)> {
    use base64::Engine;
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(t)
        .ok()?;
    let text = String::from_utf8(raw).ok()?;
    let (a, b) = text.split_once('.')?;
    let ok = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    (ok(a) && ok(b)).then(|| Some((a.parse().ok()?, b.parse().ok()?)))?
}

impl ListQuery {
    /// Check `ListTasks` params.
    ///
    /// # Errors
    /// `-32602` naming the first bad field.
    pub fn parse(params: &Map<String, Value>) -> Result<ListQuery, RpcError> {
        let str_field = |k: &str| -> Result<Option<&str>, RpcError> {
            match params.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.as_str())),
                Some(_) => Err(RpcError::params(format!("{k} must be a string"))),
            }
        };
        let context_id = str_field("contextId")?
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        let status =
            match str_field("status")? {
                None | Some("" | "TASK_STATE_UNSPECIFIED") => None,
                Some(s) => Some(state::ALL.iter().find(|x| **x == s).copied().ok_or_else(
                    || {
                        RpcError::params(format!(
                            "status {s:?} is not a task state (one of {})",
                            state::ALL.join(", ")
                        ))
                    },
                )?),
            };
        let page_size = match params.get("pageSize") {
            None | Some(Value::Null) => DEFAULT_PAGE,
            Some(v) => v
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .filter(|n| (1..=MAX_PAGE).contains(n))
                .ok_or_else(|| {
                    RpcError::params(format!("pageSize must be an integer from 1 to {MAX_PAGE}"))
                })?,
        };
        let after = match str_field("pageToken")? {
            None | Some("") => None,
            Some(t) => Some(parse_page_token(t).ok_or_else(|| {
                RpcError::params("pageToken is not a token this server returned")
            })?),
        };
        let history = history_length(params.get("historyLength"), "historyLength")?;
        let since_ms = match str_field("statusTimestampAfter")? {
            None => None,
            Some(t) => Some(parse_iso_ms(t).ok_or_else(|| {
                RpcError::params(format!(
                    "statusTimestampAfter {t:?} is not an ISO 8601 timestamp"
                ))
            })?),
        };
        let artifacts = match params.get("includeArtifacts") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(RpcError::params("includeArtifacts must be a boolean")),
        };
        Ok(ListQuery {
            context_id,
            status,
            page_size,
            after,
            history,
            since_ms,
            artifacts,
        })
    }
}

/// `ListTasks` for a session of `episode`: its tasks, newest status first, filtered, one page.
///
/// # Errors
/// [`ReadError::Store`].
pub fn list(
    s: &Store,
    episode: &str,
    q: &ListQuery,
    inflight: &HashSet<String>,
) -> Result<Value, ReadError> {
    let keys = s
        .a2a_task_keys(episode, q.context_id.as_deref())
        .map_err(store_err)?;
    let mut matching: Vec<(TaskKey, Task)> = Vec::new();
    for k in keys {
        if q.since_ms.is_some_and(|since| k.updated_ms < since) {
            continue;
        }
        // Cheap for rows that never ran: their stored state is the state.
        if let (Some(want), false) = (q.status, k.invoked) {
            if k.state != want {
                continue;
            }
        }
        let Some(t) = load(s, episode, &k.task_id, false, inflight)? else {
            continue;
        };
        if q.status.is_some_and(|want| t.state != want) {
            continue;
        }
        matching.push((k, t));
    }
    let total = matching.len();
    let start = match q.after {
        None => 0,
        Some(pos) => matching
            .iter()
            .position(|(k, _)| (k.updated_ms, k.seq) < pos)
            .unwrap_or(total),
    };
    let page: Vec<&(TaskKey, Task)> = matching[start..].iter().take(q.page_size).collect();
    let next = if start + page.len() < total {
        page.last().map(|(k, _)| page_token(k)).unwrap_or_default()
    } else {
        String::new()
    };
    let mut tasks = Vec::new();
    for (_, t) in &page {
        let t = if q.artifacts && t.state == state::COMPLETED {
            load(s, episode, &t.id, true, inflight)?.unwrap_or_else(|| t.clone())
        } else {
            t.clone()
        };
        tasks.push(to_v1(&t, q.history, q.artifacts));
    }
    Ok(json!({
        "tasks": tasks,
        "nextPageToken": next,
        "pageSize": page.len(),
        "totalSize": total,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::a2a_tasks;

    #[test]
    fn timestamps_round_trip_with_milliseconds_and_offsets() {
        assert_eq!(iso_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_ms(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
        assert_eq!(
            parse_iso_ms("2023-11-14T22:13:20.123Z"),
            Some(1_700_000_000_123)
        );
        assert_eq!(
            parse_iso_ms("2023-11-14T22:13:20.123456+00:00"),
            Some(1_700_000_000_123)
        );
        assert_eq!(
            parse_iso_ms("2023-11-14T23:13:20+01:00"),
            Some(1_700_000_000_000)
        );
        assert_eq!(parse_iso_ms("1970-01-02"), Some(86_400_000));
        for bad in [
            "-1",
            "",
            "2023-13-01",
            "2023-11-14T22:13",
            "2023-11-14T22:13:20",
            "x",
        ] {
            assert_eq!(parse_iso_ms(bad), None, "{bad}");
        }
    }

    #[test]
    fn list_params_are_checked() {
        let p = |v: Value| ListQuery::parse(v.as_object().unwrap());
        let d = p(json!({})).unwrap();
        assert_eq!((d.page_size, d.status, d.history), (50, None, None));
        for bad in [
            json!({"pageSize": 0}),
            json!({"pageSize": 101}),
            json!({"pageSize": -1}),
            json!({"status": "INVALID_STATUS"}),
            json!({"pageToken": "invalid-token-xyz"}),
            json!({"historyLength": -1}),
            json!({"statusTimestampAfter": "-1"}),
            json!({"includeArtifacts": "yes"}),
        ] {
            assert_eq!(p(bad.clone()).unwrap_err().code, -32602, "{bad}");
        }
        let k = TaskKey {
            updated_ms: 5,
            seq: 7,
            task_id: String::new(),
            state: String::new(),
            invoked: false,
            context_id: String::new(),
        };
        let q = p(json!({"pageToken": page_token(&k), "pageSize": 2})).unwrap();
        assert_eq!(q.after, Some((5, 7)));
    }

    #[test]
    fn v03_form_lowercases_states_and_tags_parts_and_roles() {
        let t = json!({"id":"a2a:ep:x","contextId":"c","status":{"state":"TASK_STATE_INPUT_REQUIRED",
            "message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"hi"}]}},
            "history":[{"messageId":"u","role":"ROLE_USER","parts":[{"data":{}}]}]});
        let v = to_v03(t);
        assert_eq!(v["kind"], "task");
        assert_eq!(v["status"]["state"], "input-required");
        assert_eq!(v["status"]["message"]["role"], "agent");
        assert_eq!(v["status"]["message"]["parts"][0]["kind"], "text");
        assert_eq!(v["history"][0]["role"], "user");
        assert_eq!(v["history"][0]["parts"][0]["kind"], "data");
    }

    /// A `returnImmediately` task's queued row (DEC-A2A-9): `SUBMITTED` while a run of this
    /// daemon holds it, `FAILED` ("did not start") once none does.
    #[test]
    fn a_queued_row_reads_submitted_only_while_a_run_holds_it() {
        use crate::store::WriteOptions;
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open_write(
            &dir.path().join("w.db"),
            WriteOptions {
                create: true,
                wait_lock: None,
            },
        )
        .unwrap();
        let id = "a2a:ep1:q-1";
        a2a_tasks::put(
            &mut store,
            &TaskRow {
                task_id: id.into(),
                episode_id: "ep1".into(),
                context_id: "ctx".into(),
                state: state::SUBMITTED.into(),
                invoked: false,
                history_json: "[]".into(),
                status_message_json: None,
                updated_ms: 1,
                seq: 0,
            },
        )
        .unwrap();
        let held: HashSet<String> = [id.to_string()].into();
        let t = load(&store, "ep1", id, true, &held).unwrap().unwrap();
        assert_eq!(
            (t.state, t.status_message.is_none()),
            (state::SUBMITTED, true)
        );
        let t = load(&store, "ep1", id, true, &HashSet::new())
            .unwrap()
            .unwrap();
        assert_eq!(t.state, state::FAILED);
        assert!(t
            .status_message
            .unwrap()
            .to_string()
            .contains("did not start"));
        assert!(load(&store, "ep2", id, true, &held).unwrap().is_none());
    }

    #[test]
    fn task_ids_belong_to_one_episode() {
        assert!(of_episode("a2a:ep1:m-1", "ep1"));
        assert!(!of_episode("a2a:ep1:m-1", "ep"));
        assert!(!of_episode("a2a:ep12:m", "ep1"));
        assert!(!of_episode("mcp:ep1:m", "ep1"));
        assert!(!of_episode("a2a:ep1:bad id", "ep1"));
    }
}
