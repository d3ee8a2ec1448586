//! `POST /agui/`: the committed log as an AG-UI 1.0 event stream (exec-and-agui.md §2,
//! DEC-AGUI-1/2).
//!
//! Not protected (no credential is read; `Authorization` is ignored), behind the Host/Origin
//! guard like every route. The body (≤ 64 KiB, read completely within 2 s of handler entry)
//! is a `RunAgentInput` with `threadId`, `runId` and a `messages` array; the cursor is
//! `state.lastIndex` when `state.schema` is `world/agui-state/v1`, or `Last-Event-ID`
//! (both present and different → 400), else genesis −1. Errors before the stream use the REST
//! envelope (§2.1). Then, as `text/event-stream` frames `data: <Go-json>\n\n`:
//!
//! - `RUN_STARTED {threadId, runId, protocolVersion:"1.0"}`
//! - `STATE_SNAPSHOT {snapshot:{schema, lastIndex, logHead}}`
//! - per entry `i`: `CUSTOM {name:"world.entry.committed", value:<the entry's Go-json>}` (its
//!   three members, then `kind`, `transition`, `invocationId`, `episodeId`, `outcome`:
//!   [`Summary`], DEC-UX-5), then
//!   `id: i` and `STATE_DELTA` (two `replace` ops on `/lastIndex` and `/logHead`)
//! - `RUN_FINISHED {threadId, runId, result:{lastIndex}}`, or `RUN_ERROR {message, code}` when
//!   a read fails mid-run (`Timeout` on deadline, else `Internal`).
//!
//! The run reads `log_entries` in keyset pages of 100 after the cursor, each under a 10 s
//! read bound; a full page re-reads at once, a short one sleeps 250 ms; no read starts after
//! the 18 s budget counted from handler entry. At most 16 runs are live at once (503
//! `StreamLimit`, `Retry-After: 1`). Shutdown ends open runs with `RUN_FINISHED` within one
//! tick. Every delta op is `replace`, so replaying a cut stream is idempotent.

use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tokio::sync::mpsc;

use super::rest::{read_body, ApiError, ReadBodyError};
use super::{App, ReadError};
use crate::encoding::gojson::{self, Obj};
use crate::store::read::LogEntry;

/// Largest request body, bytes.
pub const BODY_LIMIT: usize = 64 * 1024;
/// The whole body must arrive within this long of handler entry.
pub const BODY_BOUND: Duration = Duration::from_secs(2);
/// A 408 is written only this soon after handler entry; later, nothing is written.
pub const SLOW_BODY_REPLY: Duration = Duration::from_secs(25);
/// Run budget from handler entry (30 s write timeout − 10 s read deadline − 2 s margin).
pub const RUN_BUDGET: Duration = Duration::from_secs(18);
/// Live runs allowed at once.
pub const MAX_LIVE: usize = 16;
/// The run budget to use: [`RUN_BUDGET`], or the shorter bound in milliseconds named by
/// `WORLD_TEST_AGUI_RUN_MS` (a test hook, [`crate::testhook`]: test builds only; it can only
/// shorten the bound; 0 and unparsable values are ignored).
pub fn run_budget() -> Duration {
    crate::testhook::var("WORLD_TEST_AGUI_RUN_MS")
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .map(Duration::from_millis)
        .map_or(RUN_BUDGET, |d| d.min(RUN_BUDGET))
}
/// Entries per keyset page.
pub const PAGE: i64 = 100;
/// Sleep after a short page.
pub const POLL: Duration = Duration::from_millis(250);
/// Bound of one page read.
pub const READ: Duration = Duration::from_secs(10);
/// The cursor state's schema.
pub const STATE_SCHEMA: &str = "world/agui-state/v1";

fn err(status: StatusCode, class: &'static str, message: &str) -> ApiError {
    ApiError::new(status, class, message)
}

fn bad(message: &str) -> ApiError {
    err(StatusCode::BAD_REQUEST, "BadRequest", message)
}

/// A member of `obj` matched case-insensitively, as Go's decoder does (the exact name wins).
fn member<'a>(obj: &'a serde_json::Map<String, Value>, name: &str) -> Option<&'a Value> {
    obj.get(name).or_else(|| {
        obj.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    })
}

/// The run's input: thread and run ids, and the cursor from `state` (`None` when `state`
/// carries no cursor).
#[derive(Debug, PartialEq, Eq)]
pub struct RunInput {
    /// `threadId`.
    pub thread_id: String,
    /// `runId`.
    pub run_id: String,
    /// `state.lastIndex` when `state.schema` is [`STATE_SCHEMA`].
    pub state_cursor: Option<i64>,
}

/// Parses a `RunAgentInput` body (§2.1).
///
/// # Errors
/// The 400 texts: `invalid request body`, `threadId, runId and messages array are required`,
/// `invalid state.lastIndex`.
pub fn parse_input(body: &[u8]) -> Result<RunInput, &'static str> {
    let v: Value = serde_json::from_slice(body).map_err(|_| "invalid request body")?;
    let Value::Object(obj) = v else {
        return Err("invalid request body");
    };
    let required = "threadId, runId and messages array are required";
    let thread_id = match member(&obj, "threadId") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => return Err(required),
        Some(_) => return Err("invalid request body"),
    };
    let run_id = match member(&obj, "runId") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => return Err(required),
        Some(_) => return Err("invalid request body"),
    };
    if !matches!(member(&obj, "messages"), Some(Value::Array(_))) {
        return Err(required);
    }
    let mut state_cursor = None;
    if let Some(Value::Object(state)) = member(&obj, "state") {
        if member(state, "schema").and_then(Value::as_str) == Some(STATE_SCHEMA) {
            let i = member(state, "lastIndex")
                .and_then(Value::as_i64)
                .filter(|i| *i >= -1)
                .ok_or("invalid state.lastIndex")?;
            state_cursor = Some(i);
        }
    }
    Ok(RunInput {
        thread_id,
        run_id,
        state_cursor,
    })
}

/// The cursor from `state` and `Last-Event-ID` (§2.1).
///
/// # Errors
/// `invalid Last-Event-ID`, `conflicting resume cursors`.
pub fn cursor(state: Option<i64>, last_event_id: Option<&str>) -> Result<i64, &'static str> {
    let header = match last_event_id {
        None => None,
        Some(t) => Some(
            t.trim()
                .parse::<i64>()
                .ok()
                .filter(|i| *i >= -1 && !t.trim().starts_with('+'))
                .ok_or("invalid Last-Event-ID")?,
        ),
    };
    match (state, header) {
        (Some(a), Some(b)) if a != b => Err("conflicting resume cursors"),
        (Some(a), _) | (None, Some(a)) => Ok(a),
        (None, None) => Ok(-1),
    }
}

/// `data: <json>\n\n`.
fn frame(json: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(json.len() + 8);
    out.extend_from_slice(b"data: ");
    out.extend_from_slice(json);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// The `RUN_STARTED` event.
pub fn run_started(thread: &str, run: &str) -> Vec<u8> {
    Obj::new()
        .str("type", "RUN_STARTED")
        .str("threadId", thread)
        .str("runId", run)
        .str("protocolVersion", "1.0")
        .finish()
}

/// The `STATE_SNAPSHOT` event at cursor `after` (`logHead` null at −1).
pub fn snapshot(after: i64, head: Option<&str>) -> Vec<u8> {
    let mut snap = Obj::new()
        .str("schema", STATE_SCHEMA)
        .int("lastIndex", after);
    snap = match head {
        Some(h) => snap.str("logHead", h),
        None => snap.raw("logHead", b"null"),
    };
    Obj::new()
        .str("type", "STATE_SNAPSHOT")
        .raw("snapshot", &snap.finish())
        .finish()
}

/// What `world.entry.committed` adds to the entry (issue 29, DEC-UX-5), as `world log --json`
/// names it: `kind` (`invocation` or `commit`), `transition`, `invocationId`, `episodeId`
/// (null for a client commit) and `outcome` (README "Outcomes").
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// The invocation id of a coordinator entry.
    pub invocation: Option<String>,
    /// Its episode.
    pub episode: Option<String>,
    /// The descriptor id it called.
    pub transition: Option<String>,
    /// `ops::outcome::of_row`'s outcome.
    pub outcome: Option<crate::ops::outcome::Outcome>,
}

impl Summary {
    /// The summary of a log view row.
    ///
    /// # Errors
    /// A failed read of the entry's records.
    pub fn of(
        s: &crate::store::read::Store,
        r: &crate::store::read::LogRow,
    ) -> Result<Summary, crate::store::read::Error> {
        Ok(Summary {
            invocation: r.invocation_id.clone(),
            episode: r.episode_id.clone(),
            transition: r.transition.clone(),
            outcome: Some(crate::ops::outcome::of_row(s, r)?),
        })
    }
}

/// The frames of one entry: `CUSTOM` (its `value` the entry's Go-json as `GET /v1/log/{i}`
/// answers it, then the [`Summary`] members), then `id: i` and `STATE_DELTA`.
///
/// # Errors
/// The entry does not encode (never for a stored entry).
pub fn entry_frames(e: &LogEntry, sum: &Summary) -> Result<Bytes, serde_json::Error> {
    let mut value = gojson::to_vec(e)?;
    // Additive members after the reference's three (DEC-UX-5).
    let text = |v: &Option<String>| -> Vec<u8> {
        match v {
            Some(t) => {
                let mut b = Vec::new();
                gojson::write_str(&mut b, t);
                b
            }
            None => b"null".to_vec(),
        }
    };
    let extra = Obj::new()
        .str(
            "kind",
            if sum.invocation.is_some() {
                "invocation"
            } else {
                "commit"
            },
        )
        .raw("transition", &text(&sum.transition))
        .raw("invocationId", &text(&sum.invocation))
        .raw("episodeId", &text(&sum.episode))
        .raw(
            "outcome",
            &text(&sum.outcome.map(|o| o.as_str().to_string())),
        )
        .finish();
    if value.last() == Some(&b'}') && extra.len() > 2 {
        value.pop();
        value.push(b',');
        value.extend_from_slice(&extra[1..]);
    }
    let custom = Obj::new()
        .str("type", "CUSTOM")
        .str("name", "world.entry.committed")
        .raw("value", &value)
        .finish();
    let i = e.header.entry_index;
    let op = |path: &str, v: &[u8]| {
        Obj::new()
            .str("op", "replace")
            .str("path", path)
            .raw("value", v)
            .finish()
    };
    let mut hash = Vec::new();
    gojson::write_str(&mut hash, &e.entry_hash);
    let mut delta = b"[".to_vec();
    delta.extend(op("/lastIndex", i.to_string().as_bytes()));
    delta.push(b',');
    delta.extend(op("/logHead", &hash));
    delta.push(b']');
    let delta = Obj::new()
        .str("type", "STATE_DELTA")
        .raw("delta", &delta)
        .finish();
    let mut out = frame(&custom).to_vec();
    out.extend_from_slice(format!("id: {i}\n").as_bytes());
    out.extend_from_slice(&frame(&delta));
    Ok(Bytes::from(out))
}

/// The `RUN_FINISHED` event.
pub fn run_finished(thread: &str, run: &str, last: i64) -> Vec<u8> {
    Obj::new()
        .str("type", "RUN_FINISHED")
        .str("threadId", thread)
        .str("runId", run)
        .raw("result", &Obj::new().int("lastIndex", last).finish())
        .finish()
}

/// The `RUN_ERROR` event (`code` `Timeout` or `Internal`).
pub fn run_error(code: &str) -> Vec<u8> {
    Obj::new()
        .str("type", "RUN_ERROR")
        .str("message", "internal store failure")
        .str("code", code)
        .finish()
}

/// One live run's slot; dropping it frees the slot.
struct Slot(Arc<App>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.agui_live.fetch_sub(1, Ordering::SeqCst);
    }
}

fn take_slot(app: &Arc<App>) -> Option<Slot> {
    let mut n = app.agui_live.load(Ordering::SeqCst);
    loop {
        if n >= MAX_LIVE {
            return None;
        }
        match app
            .agui_live
            .compare_exchange(n, n + 1, Ordering::SeqCst, Ordering::SeqCst)
        {
            Ok(_) => return Some(Slot(app.clone())),
            Err(now) => n = now,
        }
    }
}

/// The event-stream body: frames from the run task, one per write; ends when the task does.
struct EventBody(mpsc::Receiver<Bytes>);

impl axum::body::HttpBody for EventBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        self.0
            .poll_recv(cx)
            .map(|o| o.map(|b| Ok(http_body::Frame::data(b))))
    }
}

/// `POST /agui/` (and `/agui`, and paths below it).
pub async fn post(State(app): State<Arc<App>>, req: Request) -> Response {
    let entered = Instant::now();
    let (parts, body) = req.into_parts();
    let headers: HeaderMap = parts.headers;
    let bytes = match read_body(&headers, body, BODY_LIMIT, BODY_BOUND).await {
        Ok(b) => b,
        Err(ReadBodyError::TooLarge) => {
            return err(
                StatusCode::PAYLOAD_TOO_LARGE,
                "PayloadTooLarge",
                "request body exceeds 64 KiB",
            )
            .into_response()
        }
        Err(ReadBodyError::TimedOut) => {
            if entered.elapsed() <= SLOW_BODY_REPLY {
                let mut r = err(
                    StatusCode::REQUEST_TIMEOUT,
                    "SlowBody",
                    "request body was too slow",
                )
                .into_response();
                super::rest::close_connection(&mut r);
                return r;
            }
            let mut r = StatusCode::REQUEST_TIMEOUT.into_response();
            super::rest::close_connection(&mut r);
            return r;
        }
        Err(ReadBodyError::Broken(_)) => return bad("invalid request body").into_response(),
    };
    let input = match parse_input(&bytes) {
        Ok(i) => i,
        Err(m) => return bad(m).into_response(),
    };
    let last_event_id = match headers.get("last-event-id").map(|v| v.to_str()) {
        None => None,
        Some(Ok(t)) => Some(t.to_owned()),
        Some(Err(_)) => return bad("invalid Last-Event-ID").into_response(),
    };
    let after = match cursor(input.state_cursor, last_event_id.as_deref()) {
        Ok(a) => a,
        Err(m) => return bad(m).into_response(),
    };
    let Some(slot) = take_slot(&app) else {
        let mut r = err(
            StatusCode::SERVICE_UNAVAILABLE,
            "StreamLimit",
            "too many live streams",
        )
        .into_response();
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return r;
    };
    // The cursor must name an existing entry (one point read).
    let head = if after >= 0 {
        match app
            .read(move |s| {
                s.log_entry(after)
                    .map_err(|e| ReadError::Store(e.to_string()))
            })
            .await
        {
            Ok(Some(e)) => Some(e.entry_hash),
            Ok(None) => {
                return err(StatusCode::NOT_FOUND, "NotFound", "unknown cursor").into_response()
            }
            Err(e) => return ApiError::internal("POST /agui/", &format!("{e:?}")).into_response(),
        }
    } else {
        None
    };
    let (tx, rx) = mpsc::channel::<Bytes>(8);
    let deadline = entered + run_budget();
    tokio::spawn(run(app.clone(), slot, tx, input, after, head, deadline));
    let mut r = Response::new(Body::new(EventBody(rx)));
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// The run loop; ends when the budget is spent, the server stops, a read fails or the
/// client leaves (a send fails).
async fn run(
    app: Arc<App>,
    _slot: Slot,
    tx: mpsc::Sender<Bytes>,
    input: RunInput,
    after: i64,
    head: Option<String>,
    deadline: Instant,
) {
    let send = |b: Bytes| {
        let tx = tx.clone();
        async move { tx.send(b).await.is_ok() }
    };
    if !send(frame(&run_started(&input.thread_id, &input.run_id))).await {
        return;
    }
    if !send(frame(&snapshot(after, head.as_deref()))).await {
        return;
    }
    let mut last = after;
    loop {
        let now = Instant::now();
        if now >= deadline || app.stopping.load(Ordering::SeqCst) {
            break;
        }
        let bound = READ.min(deadline - now);
        let from = last.saturating_add(1);
        let page = app
            .read_within(bound, move |s| {
                let mut items = Vec::new();
                s.for_each_log(Some(from), Some(PAGE as u64), false, |e| {
                    items.push((e, Summary::default()));
                    Ok(())
                })
                .map_err(|e| ReadError::Store(e.to_string()))?;
                // The page's summaries from the log view (one scan of the same range).
                let mut rows = std::collections::HashMap::new();
                s.log_rows(
                    &crate::store::read::LogQuery {
                        from: Some(from),
                        limit: Some(PAGE as u64),
                        ..Default::default()
                    },
                    |r| {
                        rows.insert(r.index, Summary::of(s, &r)?);
                        Ok(())
                    },
                )
                .map_err(|e| ReadError::Store(e.to_string()))?;
                for (e, sum) in &mut items {
                    if let Some(found) = rows.remove(&e.header.entry_index) {
                        *sum = found;
                    }
                }
                Ok(items)
            })
            .await;
        let items = match page {
            Ok(items) => items,
            Err(e) => {
                let code = if matches!(e, ReadError::Timeout) {
                    "Timeout"
                } else {
                    "Internal"
                };
                eprintln!("world: serve: POST /agui/: page after {last}: {e:?}");
                let _ = send(frame(&run_error(code))).await;
                return;
            }
        };
        let full = items.len() as i64 >= PAGE;
        for (e, sum) in &items {
            let Ok(bytes) = entry_frames(e, sum) else {
                eprintln!(
                    "world: serve: POST /agui/: entry {} does not encode",
                    e.header.entry_index
                );
                let _ = send(frame(&run_error("Internal"))).await;
                return;
            };
            if !send(bytes).await {
                return;
            }
            last = e.header.entry_index;
        }
        if !full {
            let rest = deadline.saturating_duration_since(Instant::now());
            tokio::time::sleep(POLL.min(rest)).await;
        }
    }
    let _ = send(frame(&run_finished(&input.thread_id, &input.run_id, last))).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_needs_thread_run_and_a_messages_array() {
        let ok = parse_input(br#"{"threadId":"t","runId":"r","messages":[]}"#).expect("ok");
        assert_eq!(
            ok,
            RunInput {
                thread_id: "t".into(),
                run_id: "r".into(),
                state_cursor: None
            }
        );
        let req = "threadId, runId and messages array are required";
        assert_eq!(parse_input(br#"{"threadId":"t","runId":"r"}"#), Err(req));
        assert_eq!(
            parse_input(br#"{"threadId":"t","runId":"r","messages":{}}"#),
            Err(req)
        );
        assert_eq!(parse_input(br#"{"runId":"r","messages":[]}"#), Err(req));
        assert_eq!(parse_input(b"[1]"), Err("invalid request body"));
        assert_eq!(parse_input(b"{"), Err("invalid request body"));
        // Go decoding matches member names case-insensitively.
        let ci = parse_input(
            br#"{"THREADID":"t","runid":"r","Messages":[],"State":{"Schema":"world/agui-state/v1","LASTINDEX":4}}"#,
        )
        .expect("case-insensitive");
        assert_eq!(ci.state_cursor, Some(4));
    }

    #[test]
    fn the_state_cursor_is_read_only_under_the_world_schema() {
        let p = |s: &str| {
            parse_input(
                format!(r#"{{"threadId":"t","runId":"r","messages":[],"state":{s}}}"#).as_bytes(),
            )
        };
        assert_eq!(
            p(r#"{"schema":"world/agui-state/v1","lastIndex":7}"#).map(|i| i.state_cursor),
            Ok(Some(7))
        );
        assert_eq!(
            p(r#"{"schema":"other","lastIndex":7}"#).map(|i| i.state_cursor),
            Ok(None)
        );
        assert_eq!(p(r#"[1]"#).map(|i| i.state_cursor), Ok(None));
        for bad in [r#""x""#, "-2", "1.5", "null"] {
            assert_eq!(
                p(&format!(
                    r#"{{"schema":"world/agui-state/v1","lastIndex":{bad}}}"#
                )),
                Err("invalid state.lastIndex"),
                "{bad}"
            );
        }
    }

    #[test]
    fn cursors_from_state_and_last_event_id() {
        assert_eq!(cursor(None, None), Ok(-1));
        assert_eq!(cursor(Some(3), None), Ok(3));
        assert_eq!(cursor(None, Some("5")), Ok(5));
        assert_eq!(cursor(Some(5), Some("5")), Ok(5));
        assert_eq!(
            cursor(Some(4), Some("5")),
            Err("conflicting resume cursors")
        );
        for bad in ["x", "-2", "", "1.0", "+3"] {
            assert_eq!(
                cursor(None, Some(bad)),
                Err("invalid Last-Event-ID"),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn events_match_the_reference_fixture_bytes() {
        assert_eq!(
            String::from_utf8(run_started("t", "r")).unwrap(),
            r#"{"type":"RUN_STARTED","threadId":"t","runId":"r","protocolVersion":"1.0"}"#
        );
        assert_eq!(
            String::from_utf8(snapshot(-1, None)).unwrap(),
            r#"{"type":"STATE_SNAPSHOT","snapshot":{"schema":"world/agui-state/v1","lastIndex":-1,"logHead":null}}"#
        );
        let h = |n: u8| format!("sha256:{}{:02x}", "0".repeat(62), n);
        let e = LogEntry {
            header: crate::store::read::Header {
                entry_index: 0,
                semantics_epoch: 1,
                transition_fn: h(0x64),
                interpreter: h(0x65),
                prev_entry_hash: h(0x64),
                written_by: "fixture <>&".into(),
            },
            entry_hash: h(1),
            transition_ref: h(0xc8),
        };
        let want = format!(
            "data: {{\"type\":\"CUSTOM\",\"name\":\"world.entry.committed\",\"value\":{{\"header\":{{\"entryIndex\":0,\"semanticsEpoch\":1,\"transitionFn\":\"{}\",\"interpreter\":\"{}\",\"prevEntryHash\":\"{}\",\"writtenBy\":\"fixture \\u003c\\u003e\\u0026\"}},\"entryHash\":\"{}\",\"transitionRef\":\"{}\",\"kind\":\"invocation\",\"transition\":\"ailang-write\",\"invocationId\":\"cli:sc1:w-4\",\"episodeId\":\"sc1\",\"outcome\":\"denied\"}}}}\n\nid: 0\ndata: {{\"type\":\"STATE_DELTA\",\"delta\":[{{\"op\":\"replace\",\"path\":\"/lastIndex\",\"value\":0}},{{\"op\":\"replace\",\"path\":\"/logHead\",\"value\":\"{}\"}}]}}\n\n",
            h(0x64),
            h(0x65),
            h(0x64),
            h(1),
            h(0xc8),
            h(1)
        );
        assert_eq!(
            String::from_utf8(
                entry_frames(
                    &e,
                    &Summary {
                        invocation: Some("cli:sc1:w-4".into()),
                        episode: Some("sc1".into()),
                        transition: Some("ailang-write".into()),
                        outcome: Some(crate::ops::outcome::Outcome::Denied),
                    }
                )
                .unwrap()
                .to_vec()
            )
            .unwrap(),
            want
        );
        // A client commit: the three members, then kind `commit`, nulls and `ok`.
        let commit = String::from_utf8(
            entry_frames(
                &e,
                &Summary {
                    outcome: Some(crate::ops::outcome::Outcome::Ok),
                    ..Summary::default()
                },
            )
            .unwrap()
            .to_vec(),
        )
        .unwrap();
        assert!(
            commit.contains(r#","kind":"commit","transition":null,"invocationId":null,"episodeId":null,"outcome":"ok"}}"#),
            "{commit}"
        );
        assert_eq!(
            String::from_utf8(run_finished("t", "r", 6)).unwrap(),
            r#"{"type":"RUN_FINISHED","threadId":"t","runId":"r","result":{"lastIndex":6}}"#
        );
        assert_eq!(
            String::from_utf8(run_error("Timeout")).unwrap(),
            r#"{"type":"RUN_ERROR","message":"internal store failure","code":"Timeout"}"#
        );
    }
}
