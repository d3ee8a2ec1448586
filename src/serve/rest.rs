//! HTTP `/v1` routes (surfaces.md §4): shapes, status codes and the error envelope
//! `{"error":{"class","code","message"}}` (`HeadConflict` adds `observedHead` and
//! `selectedHead`; `code` is `class` in the CLI's snake case, DEC-UX-14).

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Path, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use base64::Engine;
use serde_json::{json, Value};

use super::auth::{self, Bearer, Denial, STORE_UNAVAILABLE};
use super::{one_line, App, ReadError, COMMIT_BODY, COMMIT_BOUND};
use crate::encoding::HashRef;
use crate::store::commit::{parse_body, BodyError, ValidateError};
use crate::store::read::Error as StoreError;

/// Default page size.
pub const PAGE_DEFAULT: usize = 100;
/// Largest page size.
pub const PAGE_MAX: usize = 500;

/// A `/v1` error: status, class, message and (for `HeadConflict`) both heads.
#[derive(Debug)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// The class (`BadRequest`, `NotFound`, …).
    pub class: &'static str,
    /// The message.
    pub message: String,
    /// `(observedHead, selectedHead)` for `HeadConflict`.
    pub heads: Option<(String, String)>,
}

impl ApiError {
    /// A new error without heads.
    pub fn new(status: StatusCode, class: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            class,
            message: message.into(),
            heads: None,
        }
    }
    fn bad(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "BadRequest", message)
    }
    fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "NotFound", message)
    }
    /// 500 `internal store failure`; the cause goes to stderr with the route.
    pub fn internal(route: &str, cause: &str) -> Self {
        eprintln!("world: serve: {route}: {}", one_line(cause));
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Internal",
            "internal store failure",
        )
    }
    /// 413 `PayloadTooLarge`.
    pub fn too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "PayloadTooLarge",
            format!("request body is over {limit} bytes"),
        )
    }
    fn from_read(route: &str, e: ReadError) -> Self {
        match e {
            ReadError::Timeout => Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "Timeout",
                "store read exceeded its 10 s bound",
            ),
            ReadError::NotFound(m) => Self::not_found(m),
            ReadError::BadRequest(m) => Self::bad(m),
            ReadError::IndexUnavailable => Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "LookupIndexUnavailable",
                "the semantic-id index is absent or misshapen",
            ),
            ReadError::Store(c) => Self::internal(route, &c),
            ReadError::Unavailable(c) => Self::unavailable(route, &c),
        }
    }
    /// 503 `StoreUnavailable`: the store could not be opened for reading; the cause goes to
    /// stderr with the route.
    pub fn unavailable(route: &str, cause: &str) -> Self {
        eprintln!("world: serve: {route}: {}", one_line(cause));
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "StoreUnavailable",
            STORE_UNAVAILABLE,
        )
    }
    /// 408 `RequestTimeout`: the body did not arrive within the HTTP read bound.
    pub fn body_timeout(bound: Duration) -> Self {
        Self::new(
            StatusCode::REQUEST_TIMEOUT,
            "RequestTimeout",
            body_timeout_message(bound),
        )
    }
    /// The REST form of a failed body read: 413, 408 or 400.
    pub fn from_body(e: ReadBodyError, limit: usize, bound: Duration) -> Self {
        match e {
            ReadBodyError::TooLarge => Self::too_large(limit),
            ReadBodyError::TimedOut => Self::body_timeout(bound),
            ReadBodyError::Broken(c) => Self::bad(format!("request body could not be read: {c}")),
        }
    }
    /// The REST form of a session denial.
    pub fn from_denial(route: &str, d: &Denial) -> Self {
        match d {
            Denial::Store(c) => return Self::internal(route, c),
            Denial::Unavailable(c) => return Self::unavailable(route, c),
            _ => {}
        }
        let (status, class, message) = d.rest();
        Self::new(status, class, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        // `class` is the reference's wire (surfaces.md §3); `code` is the same name in the
        // CLI's spelling (`HeadConflict` → `head_conflict`), so one vocabulary serves both
        // (issue 29 §8, DEC-UX-14).
        let mut err =
            json!({"class": self.class, "code": code_of(self.class), "message": self.message});
        if let Some((o, s)) = self.heads {
            err["observedHead"] = Value::String(o);
            err["selectedHead"] = Value::String(s);
        }
        let mut r = (self.status, Json(json!({ "error": err }))).into_response();
        if self.status == StatusCode::REQUEST_TIMEOUT {
            close_connection(&mut r);
        }
        r
    }
}

/// The CLI-style `code` of an error class: snake case (`HeadConflict` → `head_conflict`,
/// `NotFound` → `not_found`), the spelling `world --json` errors use.
pub fn code_of(class: &str) -> String {
    let mut out = String::with_capacity(class.len() + 4);
    for (i, c) in class.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Mark `r` as the connection's last response (the rest of an unread body is never read).
pub fn close_connection(r: &mut Response) {
    r.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
}

/// `request body was not received within N s`.
pub fn body_timeout_message(bound: Duration) -> String {
    let ms = bound.as_millis();
    if ms % 1000 == 0 {
        format!("request body was not received within {} s", ms / 1000)
    } else {
        format!("request body was not received within {ms} ms")
    }
}

type ApiResult = Result<Response, ApiError>;

fn store_err(e: StoreError) -> ReadError {
    ReadError::Store(e.to_string())
}

/// Why a request body could not be read.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadBodyError {
    /// Declared (`Content-Length`) or actual size over the route's limit → 413.
    TooLarge,
    /// The whole body did not arrive within the HTTP read bound → 408, connection closed.
    TimedOut,
    /// The body stream failed (bad chunk framing, the client went away) → 400.
    Broken(String),
}

/// Read a request body of at most `limit` bytes, all of it within `bound` (the HTTP read
/// bound, surfaces.md §1: a total deadline, so a body trickled byte by byte ends too).
///
/// Nothing is locked while the body arrives: every route reads its body before it queues
/// for the writer, so a stalled client holds only its own connection.
///
/// # Errors
/// [`ReadBodyError::TooLarge`], [`ReadBodyError::TimedOut`], [`ReadBodyError::Broken`].
pub async fn read_body(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
    bound: Duration,
) -> Result<Bytes, ReadBodyError> {
    if let Some(len) = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
    {
        if len > limit as u64 {
            return Err(ReadBodyError::TooLarge);
        }
    }
    tokio::time::timeout(bound, collect_body(body, limit))
        .await
        .map_err(|_| ReadBodyError::TimedOut)?
}

/// The JSON-RPC form of a failed body read on `/mcp/` and `/a2a/` (surfaces.md §1): HTTP
/// 413, 408 (connection closed) or 400, body
/// `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":…}}`.
pub fn rpc_body_error(e: ReadBodyError, limit: usize, bound: Duration) -> Response {
    let (status, message) = match e {
        ReadBodyError::TooLarge => (
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("request body is over {limit} bytes"),
        ),
        ReadBodyError::TimedOut => (StatusCode::REQUEST_TIMEOUT, body_timeout_message(bound)),
        ReadBodyError::Broken(c) => (
            StatusCode::BAD_REQUEST,
            format!("request body could not be read: {c}"),
        ),
    };
    let v = super::jsonrpc::error(
        &serde_json::Value::Null,
        super::jsonrpc::code::INVALID_REQUEST,
        &message,
        None,
    );
    let mut r = (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        v.to_string(),
    )
        .into_response();
    if status == StatusCode::REQUEST_TIMEOUT {
        close_connection(&mut r);
    }
    r
}

async fn collect_body(mut body: Body, limit: usize) -> Result<Bytes, ReadBodyError> {
    let mut buf: Vec<u8> = Vec::new();
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.map_err(|e| ReadBodyError::Broken(e.to_string()))?;
        if let Ok(data) = frame.into_data() {
            if buf.len().saturating_add(data.len()) > limit {
                return Err(ReadBodyError::TooLarge);
            }
            buf.extend_from_slice(&data);
        }
    }
    Ok(Bytes::from(buf))
}

/// Every route `world serve` answers, as `(method, path, what)`: the body of `GET /v1/`
/// and the README's routes table (a test keeps the two equal). Paths use `{name}` for one
/// segment and `{*name}` for the rest of the path.
pub const ROUTES: &[(&str, &str, &str)] = &[
    ("GET", "/v1/", "this list of routes"),
    (
        "GET",
        "/v1/health",
        "daemon version, store path, pinned interpreter",
    ),
    ("GET", "/v1/head", "the selected world head"),
    (
        "GET",
        "/v1/checkpoint",
        "the latest signed checkpoint of the log",
    ),
    ("GET", "/v1/worlds/{reference}", "one world row"),
    (
        "GET",
        "/v1/objects/{reference}",
        "one object (payload base64)",
    ),
    (
        "GET",
        "/v1/objects/by-semantic-id/{*name}",
        "objects with a semantic id, paged (?after=&limit=)",
    ),
    ("GET", "/v1/log", "log entries, paged (?from=&limit=)"),
    ("GET", "/v1/log/{index}", "one log entry"),
    ("GET", "/v1/registry/{*name}", "a named registry head"),
    (
        "POST",
        "/v1/commit",
        "compare-and-append a commit body (`world commit`)",
    ),
    (
        "GET",
        "/v1/receipts/{*id}",
        "what an invocation id recorded (`world receipt`)",
    ),
    (
        "POST",
        "/mcp",
        "MCP streamable HTTP (JSON-RPC; GET opens the stream, DELETE ends a session)",
    ),
    ("POST", "/a2a", "A2A JSON-RPC (message/send, tasks/get, …)"),
    ("GET", "/.well-known/agent-card.json", "the A2A agent card"),
    (
        "GET",
        "/.well-known/agent.json",
        "the legacy A2A agent card",
    ),
    (
        "POST",
        "/agui/",
        "AG-UI 1.0 run: server-sent events of the store",
    ),
];

/// `GET /v1/` (and `GET /v1`): the routes, `{"routes":[{"method","path","description"}…]}`
/// (docs/json/routes.schema.json).
pub async fn index() -> Response {
    let routes: Vec<Value> = ROUTES
        .iter()
        .map(|(m, p, d)| json!({"method": m, "path": p, "description": d}))
        .collect();
    Json(json!({ "routes": routes })).into_response()
}

/// `GET /v1/health`.
pub async fn health(State(app): State<Arc<App>>) -> Response {
    Json(json!({
        "status": "ok",
        "daemon_version": env!("CARGO_PKG_VERSION"),
        "db_path": app.db.display().to_string(),
        "interpreter_ref": app.interpreter_ref,
        "interpreter_version": app.interpreter_version,
    }))
    .into_response()
}

/// `GET /v1/head`: `text/plain` ref, or 404.
pub async fn head(State(app): State<Arc<App>>) -> ApiResult {
    let head = app
        .read(|s| s.head().map_err(store_err))
        .await
        .map_err(|e| ApiError::from_read("GET /v1/head", e))?;
    match head {
        Some(h) => Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], h).into_response()),
        None => Err(ApiError::not_found("no world head has been selected yet")),
    }
}

/// `GET /v1/checkpoint`: the latest C2SP tlog-checkpoint this store signed (with any witness
/// cosignatures merged in), verbatim as `text/plain`; 404 when none (DEC-TRUST-6).
pub async fn checkpoint(State(app): State<Arc<App>>) -> ApiResult {
    let latest = app
        .read(|s| s.latest_checkpoint(None).map_err(store_err))
        .await
        .map_err(|e| ApiError::from_read("GET /v1/checkpoint", e))?;
    match latest {
        Some(c) => Ok((
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            c.note,
        )
            .into_response()),
        None => Err(ApiError::not_found(
            "this store has no signed checkpoint (world checkpoint --key FILE signs one)",
        )),
    }
}

fn parse_ref(what: &str, text: &str) -> Result<String, ApiError> {
    HashRef::parse(text)
        .map(|r| r.to_string())
        .map_err(|e| ApiError::bad(format!("{what} {text:?} is not a valid ref: {e}")))
}

/// `GET /v1/worlds/{ref}`.
pub async fn world(State(app): State<Arc<App>>, Path(reference): Path<String>) -> ApiResult {
    let r = parse_ref("world ref", &reference)?;
    let row = app
        .read(move |s| s.world(&r).map_err(store_err))
        .await
        .map_err(|e| ApiError::from_read("GET /v1/worlds", e))?;
    row.map(|w| Json(w).into_response())
        .ok_or_else(|| ApiError::not_found("world not found"))
}

/// `GET /v1/objects/{ref}[?payload=true]`.
pub async fn object(
    State(app): State<Arc<App>>,
    Path(reference): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> ApiResult {
    let r = parse_ref("object ref", &reference)?;
    let with_payload = match q.get("payload").map(String::as_str) {
        None | Some("false") => false,
        Some("true") => true,
        Some(other) => {
            return Err(ApiError::bad(format!(
                "payload must be true or false, not {other:?}"
            )))
        }
    };
    let obj = app
        .read(move |s| s.object(&r).map_err(store_err))
        .await
        .map_err(|e| ApiError::from_read("GET /v1/objects", e))?
        .ok_or_else(|| ApiError::not_found("object not found"))?;
    let mut v = serde_json::to_value(&obj.meta)
        .map_err(|e| ApiError::internal("GET /v1/objects", &e.to_string()))?;
    if with_payload {
        v["payload"] =
            Value::String(base64::engine::general_purpose::STANDARD.encode(&obj.payload));
    }
    Ok(Json(v).into_response())
}

fn page_limit(q: &HashMap<String, String>) -> Result<usize, ApiError> {
    match q.get("limit") {
        None => Ok(PAGE_DEFAULT),
        Some(t) => {
            let n: i64 = t
                .parse()
                .map_err(|_| ApiError::bad(format!("limit {t:?} is not an integer")))?;
            Ok(if n < 1 {
                PAGE_DEFAULT
            } else {
                (n as usize).min(PAGE_MAX)
            })
        }
    }
}

/// `GET /v1/objects/by-semantic-id/` (empty name): 400.
pub async fn by_semantic_id_empty() -> ApiResult {
    Err(ApiError::bad("semantic id is empty"))
}

/// `GET /v1/objects/by-semantic-id/{name...}?after=<ref>&limit=N`.
pub async fn by_semantic_id(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> ApiResult {
    if name.is_empty() {
        return Err(ApiError::bad("semantic id is empty"));
    }
    let after = match q.get("after") {
        None => None,
        Some(a) => Some(parse_ref("after", a)?),
    };
    let limit = page_limit(&q)?;
    let items = app
        .read(move |s| {
            if !s.semantic_index_ok().map_err(store_err)? {
                return Err(ReadError::IndexUnavailable);
            }
            s.objects_by_semantic_id(&name, after.as_deref(), limit)
                .map_err(store_err)
        })
        .await
        .map_err(|e| ApiError::from_read("GET /v1/objects/by-semantic-id", e))?;
    Ok(Json(json!({ "items": items })).into_response())
}

fn parse_index(text: &str) -> Option<i64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// `GET /v1/log/{index}`.
pub async fn log_entry(State(app): State<Arc<App>>, Path(index): Path<String>) -> ApiResult {
    let i = parse_index(&index)
        .ok_or_else(|| ApiError::bad("log index must be a non-negative integer"))?;
    let e = app
        .read(move |s| s.log_entry(i).map_err(store_err))
        .await
        .map_err(|e| ApiError::from_read("GET /v1/log", e))?;
    e.map(|e| Json(e).into_response())
        .ok_or_else(|| ApiError::not_found("log entry not found"))
}

/// `GET /v1/log?from=N&limit=M`: ascending, stopping at the first absent index.
pub async fn log_range(
    State(app): State<Arc<App>>,
    Query(q): Query<HashMap<String, String>>,
) -> ApiResult {
    let from = match q.get("from") {
        None => 0,
        Some(t) => {
            parse_index(t).ok_or_else(|| ApiError::bad("from must be a non-negative integer"))?
        }
    };
    let limit = page_limit(&q)?;
    let items = app
        .read(move |s| {
            let mut items = Vec::new();
            let mut expect = from;
            s.for_each_log(Some(from), Some(limit as u64), false, |e| {
                if e.header.entry_index == expect && items.len() < limit {
                    items.push(e);
                    expect += 1;
                } else {
                    expect = -1;
                }
                Ok(())
            })
            .map_err(store_err)?;
            Ok(items)
        })
        .await
        .map_err(|e| ApiError::from_read("GET /v1/log", e))?;
    Ok(Json(json!({ "items": items })).into_response())
}

/// `GET /v1/registry/{name...}`.
pub async fn registry(State(app): State<Arc<App>>, Path(name): Path<String>) -> ApiResult {
    let n = name.clone();
    let head = app
        .read(move |s| s.registry_head(&n).map_err(store_err))
        .await
        .map_err(|e| ApiError::from_read("GET /v1/registry", e))?;
    head.map(|h| Json(json!({"name": name, "head": h})).into_response())
        .ok_or_else(|| ApiError::not_found("registry head not found"))
}

/// `GET /v1/receipts/{id}`: `rest:` ids only.
pub async fn receipt(State(app): State<Arc<App>>, Path(id): Path<String>) -> ApiResult {
    if !id.starts_with("rest:") || id.len() == 5 {
        return Err(ApiError::bad("receipt id must be rest:<id>"));
    }
    let r = app
        .read(move |s| s.receipt(&id).map_err(store_err))
        .await
        .map_err(|e| ApiError::from_read("GET /v1/receipts", e))?;
    Ok(Json(r).into_response())
}

/// Unknown path: 404 `NotFound`.
pub async fn not_found() -> ApiError {
    ApiError::not_found("no such route")
}

/// `POST /v1/commit`: a live session (checked first), a body ≤ 8 388 608 B, compare-and-append.
pub async fn commit(State(app): State<Arc<App>>, req: Request) -> ApiResult {
    let route = "POST /v1/commit";
    let (parts, body) = req.into_parts();
    let token = match auth::parse_bearer(&parts.headers) {
        Bearer::Absent => return Err(ApiError::from_denial(route, &Denial::Absent)),
        Bearer::Malformed => return Err(ApiError::from_denial(route, &Denial::Malformed)),
        Bearer::Token(t) => t,
    };
    app.session(token, super::now())
        .await
        .map_err(|d| ApiError::from_denial(route, &d))?;
    let bytes = read_body(&parts.headers, body, COMMIT_BODY, app.http_read)
        .await
        .map_err(|e| ApiError::from_body(e, COMMIT_BODY, app.http_read))?;
    let parsed = parse_body(&bytes).map_err(|e| match e {
        BodyError::TooLarge => ApiError::too_large(COMMIT_BODY),
        other => ApiError::bad(other.to_string()),
    })?;
    let commit = parsed.validate().map_err(|e| match e {
        ValidateError::Body(b) => ApiError::bad(b.to_string()),
        ValidateError::Store(s @ StoreError::InvalidRef { .. }) => ApiError::bad(s.to_string()),
        ValidateError::Store(s) => ApiError::internal(route, &s.to_string()),
    })?;
    let start = Instant::now();
    let guard = tokio::time::timeout(COMMIT_BOUND, app.writer.clone().lock_owned())
        .await
        .map_err(|_| {
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "Timeout",
                "the store was busy for 3 s; nothing was written; safe to resend",
            )
        })?;
    let now = super::now();
    let job = tokio::task::spawn_blocking(move || {
        let mut guard = guard;
        crate::ops::commit::commit(&mut guard, &commit, now)
    });
    let remaining = COMMIT_BOUND.saturating_sub(start.elapsed());
    let landed = match tokio::time::timeout(remaining, job).await {
        Err(_) => {
            return Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "CommitUncertain",
                "the commit outcome is unknown; read the receipt or GET /v1/log/{entryIndex} before resending",
            ))
        }
        Ok(Err(e)) => return Err(ApiError::internal(route, &format!("commit task failed: {e}"))),
        Ok(Ok(r)) => r,
    };
    match landed {
        Ok(l) => Ok(Json(json!({"selectedHead": l.selected_head})).into_response()),
        Err(StoreError::Conflict { observed, selected }) => {
            let mut e = ApiError::new(
                StatusCode::CONFLICT,
                "HeadConflict",
                format!("stale observed world head {observed:?} (selected head {selected:?})"),
            );
            e.heads = Some((observed, selected));
            Err(e)
        }
        Err(e @ StoreError::InvocationMismatch { .. }) => Err(ApiError::bad(format!(
            "invocationId was used for a different commit: {e}"
        ))),
        Err(
            e @ (StoreError::InvalidRef { .. }
            | StoreError::ClientCommitRefused { .. }
            | StoreError::InvocationReused { .. }),
        ) => Err(ApiError::bad(e.to_string())),
        Err(e) => Err(ApiError::internal(route, &e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_parsing() {
        assert_eq!(parse_index("0"), Some(0));
        assert_eq!(parse_index("42"), Some(42));
        assert_eq!(parse_index("-1"), None);
        assert_eq!(parse_index("+1"), None);
        assert_eq!(parse_index("1x"), None);
        assert_eq!(parse_index(""), None);
        assert_eq!(parse_index("99999999999999999999"), None);
    }

    #[test]
    fn paging() {
        let q = |v: &str| HashMap::from([("limit".to_string(), v.to_string())]);
        assert_eq!(page_limit(&HashMap::new()).unwrap(), 100);
        assert_eq!(page_limit(&q("0")).unwrap(), 100);
        assert_eq!(page_limit(&q("-5")).unwrap(), 100);
        assert_eq!(page_limit(&q("7")).unwrap(), 7);
        assert_eq!(page_limit(&q("10000")).unwrap(), 500);
        assert!(page_limit(&q("x")).is_err());
    }

    #[test]
    fn body_timeout_answers_408_and_closes() {
        assert_eq!(
            body_timeout_message(Duration::from_secs(30)),
            "request body was not received within 30 s"
        );
        assert_eq!(
            body_timeout_message(Duration::from_millis(1500)),
            "request body was not received within 1500 ms"
        );
        let r = ApiError::from_body(ReadBodyError::TimedOut, 10, Duration::from_secs(30))
            .into_response();
        assert_eq!(r.status(), StatusCode::REQUEST_TIMEOUT);
        assert_eq!(r.headers().get(header::CONNECTION).unwrap(), "close");
        let r = rpc_body_error(ReadBodyError::TimedOut, 10, Duration::from_secs(30));
        assert_eq!(r.status(), StatusCode::REQUEST_TIMEOUT);
        assert_eq!(r.headers().get(header::CONNECTION).unwrap(), "close");
        let r = rpc_body_error(ReadBodyError::TooLarge, 10, Duration::from_secs(30));
        assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
        assert!(r.headers().get(header::CONNECTION).is_none());
        let r = rpc_body_error(
            ReadBodyError::Broken("eof".into()),
            10,
            Duration::from_secs(30),
        );
        assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    }

    #[tokio::test]
    async fn body_reads_keep_the_limit_and_the_deadline() {
        let h = HeaderMap::new();
        let d = Duration::from_secs(5);
        assert_eq!(
            read_body(&h, Body::from("abc"), 3, d).await,
            Ok(Bytes::from("abc"))
        );
        assert_eq!(
            read_body(&h, Body::from("abcd"), 3, d).await,
            Err(ReadBodyError::TooLarge)
        );
        let mut declared = HeaderMap::new();
        declared.insert(header::CONTENT_LENGTH, HeaderValue::from_static("99"));
        assert_eq!(
            read_body(&declared, Body::from("a"), 3, d).await,
            Err(ReadBodyError::TooLarge)
        );
    }

    #[test]
    fn unavailable_store_is_503() {
        let e = ApiError::from_read("GET /v1/head", ReadError::Unavailable("gone".into()));
        assert_eq!(
            (e.status, e.class, e.message.as_str()),
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "StoreUnavailable",
                STORE_UNAVAILABLE
            )
        );
        let e = ApiError::from_denial(
            "GET /.well-known/agent.json",
            &Denial::Unavailable("x".into()),
        );
        assert_eq!(e.status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(e.class, "StoreUnavailable");
    }

    #[test]
    fn envelope_shape() {
        let mut e = ApiError::new(StatusCode::CONFLICT, "HeadConflict", "m");
        e.heads = Some(("a".into(), "b".into()));
        let r = e.into_response();
        assert_eq!(r.status(), StatusCode::CONFLICT);
    }
}

#[cfg(test)]
mod code_tests {
    #[test]
    fn a_class_becomes_the_cli_code() {
        assert_eq!(super::code_of("HeadConflict"), "head_conflict");
        assert_eq!(super::code_of("NotFound"), "not_found");
        assert_eq!(super::code_of("PayloadTooLarge"), "payload_too_large");
        assert_eq!(super::code_of("Forbidden"), "forbidden");
    }
}
