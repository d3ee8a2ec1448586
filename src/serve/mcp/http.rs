//! MCP over HTTP (surfaces.md §5): the streamable-HTTP transport of the modern era
//! (`POST`/`GET`/`DELETE /mcp`, JSON or SSE answers, `Mcp-Session-Id`) and the legacy SSE
//! transport, around the transport-free [`super::dispatch`].

use super::*;
use crate::serve::jsonrpc::plain;

pub(super) fn json_resp(status: StatusCode, v: &Value) -> Response {
    jsonrpc::json_response(status, v)
}

pub(super) fn sse(v: &Value) -> Response {
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        format!("event: message\ndata: {v}\n\n"),
    )
        .into_response()
}

pub(super) fn rpc_error(
    status: StatusCode,
    id: &Value,
    code: i64,
    message: &str,
    data: Option<Value>,
) -> Response {
    json_resp(
        status,
        &response(
            id,
            &Reply::Err {
                code,
                message: message.into(),
                data,
            },
        ),
    )
}

pub(super) fn header_str<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

pub(super) fn is_json_content(h: &HeaderMap) -> bool {
    header_str(h, "content-type")
        .and_then(|c| c.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
}

pub(super) fn accepts_both(h: &HeaderMap) -> bool {
    let mut json = false;
    let mut sse = false;
    for v in h
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
    {
        for part in v.split(',') {
            let m = part
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            json |= m == "application/json";
            sse |= m == "text/event-stream";
        }
    }
    json && sse
}

/// 404 for an `Mcp-Session-Id` that names no live session of the caller (MCP 2025-11-25:
/// the client then starts a new session with `initialize`).
pub(super) fn session_not_found() -> Response {
    json_resp(
        StatusCode::NOT_FOUND,
        &jsonrpc::error(
            &Value::Null,
            code::SESSION_DENIED,
            "session not found: send initialize to start a new one",
            None,
        ),
    )
}

pub(super) fn method_not_allowed() -> Response {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        [(header::ALLOW, "POST")],
        "",
    )
        .into_response()
}

/// The caller's credential id, or the 401 of §3.
pub(super) async fn owner_of(app: &Arc<App>, headers: &HeaderMap) -> Result<String, Response> {
    let token = match auth::parse_bearer(headers) {
        Bearer::Absent => return Err(plain(StatusCode::UNAUTHORIZED, Denial::Absent.message())),
        Bearer::Malformed => {
            return Err(plain(StatusCode::UNAUTHORIZED, Denial::Malformed.message()))
        }
        Bearer::Token(t) => t,
    };
    match app.session(token.clone(), crate::serve::now()).await {
        Ok(_) => Ok(crate::authority::session::credential_id(&token)),
        Err(d) => Err(plain(d.plain_status(), d.message())),
    }
}

/// `GET /mcp/`: with `Last-Event-ID`, resume that stream (its events after the id, then live
/// ones until it ends; 405 when it ended with nothing left to send); with an
/// `Mcp-Session-Id`, the session's notification stream (`notifications/resources/updated`);
/// otherwise 405 (no stream without a session).
pub async fn get(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    let owner = match owner_of(&app, &headers).await {
        Ok(o) => o,
        Err(r) => return r,
    };
    if let Some(last) = header_str(&headers, "last-event-id") {
        return match app.mcp.resume(last, &owner) {
            Ok(rx) => sse_body(axum::body::Body::new(SseBody(rx))),
            Err(state::Resume::Nothing) => (
                StatusCode::METHOD_NOT_ALLOWED,
                [(header::ALLOW, "POST")],
                "no stream to resume: that stream ended and every event after this id was sent",
            )
                .into_response(),
            Err(state::Resume::Unknown) => plain(
                StatusCode::NOT_FOUND,
                "unknown Last-Event-ID: no stream of this credential has that event",
            ),
        };
    }
    let Some(id) = header_str(&headers, "mcp-session-id") else {
        return method_not_allowed();
    };
    let Some(session) = app.mcp.session(id, &owner) else {
        return session_not_found();
    };
    let (sid, rx) = app.mcp.open_stream(&owner, true);
    if let Some(old) = session
        .notify_stream
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .replace(sid.clone())
    {
        app.mcp.finish(&old);
    }
    // Keep the stream open until the client leaves, the session ends or the daemon stops;
    // a comment every 15 s keeps idle connections alive.
    let app2 = app.clone();
    tokio::spawn(async move {
        let mut ticks = 0u32;
        loop {
            tokio::time::sleep(std::time::Duration::from_millis(250)).await;
            ticks += 1;
            let current = session
                .notify_stream
                .lock()
                .map(|s| s.as_deref() == Some(sid.as_str()))
                .unwrap_or(false);
            let stopping = app2.stopping.load(std::sync::atomic::Ordering::SeqCst);
            if !current || stopping || !app2.mcp.connected(&sid) {
                break;
            }
            if ticks % 60 == 0 {
                app2.mcp.ping(&sid);
            }
        }
        if let Ok(mut s) = session.notify_stream.lock() {
            if s.as_deref() == Some(sid.as_str()) {
                *s = None;
            }
        }
        app2.mcp.finish(&sid);
    });
    sse_body(axum::body::Body::new(SseBody(rx)))
}

/// `DELETE /mcp/` with an `Mcp-Session-Id`: end that session (200; 404 when it names none).
/// Without one: 405.
pub async fn delete(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    let owner = match owner_of(&app, &headers).await {
        Ok(o) => o,
        Err(r) => return r,
    };
    match header_str(&headers, "mcp-session-id") {
        None => method_not_allowed(),
        Some(id) if app.mcp.end_session(id, &owner) => StatusCode::OK.into_response(),
        Some(_) => session_not_found(),
    }
}

/// `POST /mcp/` and `/mcp`.
pub async fn post(State(app): State<Arc<App>>, req: Request) -> Response {
    let deadline = Instant::now() + POST_DEADLINE;
    let (parts, body) = req.into_parts();
    let headers = parts.headers;
    let token = match auth::parse_bearer(&headers) {
        Bearer::Absent => return plain(StatusCode::UNAUTHORIZED, Denial::Absent.message()),
        Bearer::Malformed => return plain(StatusCode::UNAUTHORIZED, Denial::Malformed.message()),
        Bearer::Token(t) => t,
    };
    let session = match app.session(token.clone(), crate::serve::now()).await {
        Ok(s) => s,
        Err(d) => {
            if let Some(c) = d.cause() {
                eprintln!("world: serve: POST /mcp/: {}", one_line(c));
            }
            return plain(d.plain_status(), d.message());
        }
    };
    let caller = Caller { token, session };
    let bytes = match read_body(&headers, body, MCP_BODY, app.http_read).await {
        Ok(b) => b,
        Err(e) => return rpc_body_error(e, MCP_BODY, app.http_read),
    };
    let header_version = header_str(&headers, "mcp-protocol-version");
    let parsed: Result<Value, _> = serde_json::from_slice(&bytes);
    let era = match &parsed {
        Ok(v) => select_era(header_version, v),
        Err(_) => select_era(header_version, &Value::Null),
    };
    if !is_json_content(&headers) {
        return plain(
            StatusCode::BAD_REQUEST,
            "Content-Type must be application/json",
        );
    }
    // DEC-MCP-4: error replies carry the request's id whenever it could be read.
    let read_id = parsed
        .as_ref()
        .ok()
        .and_then(|v| v.get("id"))
        .cloned()
        .unwrap_or(Value::Null);
    match era {
        Era::Mismatch(m) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                &read_id,
                code::HEADER_MISMATCH,
                &m,
                None,
            )
        }
        Era::Unsupported(v) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                &read_id,
                code::UNSUPPORTED_VERSION,
                &format!("unsupported protocol version {v:?}"),
                Some(json!({"supported": [MODERN, LEGACY[0], LEGACY[1], LEGACY[2]]})),
            )
        }
        Era::Legacy(_) if !accepts_both(&headers) => {
            return plain(
                StatusCode::BAD_REQUEST,
                "Accept must list both application/json and text/event-stream",
            )
        }
        _ => {}
    }
    let body = match parsed {
        Ok(v) => v,
        Err(e) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                &Value::Null,
                -32700,
                &format!("parse error: {e}"),
                None,
            )
        }
    };
    let backend = Backend::Http(app.clone());
    match era {
        Era::Modern => modern_post(&backend, &caller, &headers, &body, deadline).await,
        Era::Legacy(v) => {
            let owner = crate::authority::session::credential_id(&caller.token);
            // A session id names a session of this credential, or answers 404 (ended, idle
            // too long, never issued, or another credential's: indistinguishable).
            let session = match header_str(&headers, "mcp-session-id") {
                None => None,
                Some(id) => match app.mcp.session(id, &owner) {
                    Some(s) => Some(s),
                    None => return session_not_found(),
                },
            };
            let lc = LegacyCx {
                app: &app,
                version: &v,
                session,
                owner,
                episode: caller.session.episode.clone(),
            };
            legacy_post(&backend, &caller, &lc, &body, deadline).await
        }
        _ => rpc_error(
            StatusCode::BAD_REQUEST,
            &Value::Null,
            code::INVALID_REQUEST,
            "invalid JSON-RPC request",
            None,
        ),
    }
}

/// The legacy era's HTTP context of one POST.
pub(super) struct LegacyCx<'a> {
    app: &'a Arc<App>,
    /// The protocol version of the request (header, or `2025-03-26` when absent).
    version: &'a str,
    /// The request's session, if it named one.
    session: Option<Arc<state::Session>>,
    /// The caller's credential id.
    owner: String,
    /// The caller's episode.
    episode: String,
}

impl LegacyCx<'_> {
    /// Are this request's SSE streams primed (2025-11-25 and later, by its session's version
    /// or else its header)?
    fn primed(&self) -> bool {
        let v = self
            .session
            .as_ref()
            .map_or(self.version, |s| s.version.as_str());
        v >= state::PRIMED_FROM
    }
}

/// The SSE body of a finished stream, or one live from its receiver.
pub(super) fn sse_body(body: axum::body::Body) -> Response {
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/event-stream"),
    );
    h.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-cache"),
    );
    r
}

/// One JSON-RPC answer as a finished stream: primed (an id per event, resumable) or, before
/// 2025-11-25, the reference's one event.
pub(super) fn sse_answer(lc: &LegacyCx<'_>, v: &Value) -> Response {
    if !lc.primed() {
        return sse(v);
    }
    let (sid, _rx) = lc.app.mcp.open_stream(&lc.owner, true);
    lc.app.mcp.push(&sid, v);
    lc.app.mcp.finish(&sid);
    sse_body(axum::body::Body::from(lc.app.mcp.body_of(&sid)))
}

pub(super) async fn legacy_post(
    backend: &Backend,
    caller: &Caller,
    lc: &LegacyCx<'_>,
    body: &Value,
    deadline: Instant,
) -> Response {
    let version = lc.version;
    let extras = Extras {
        session: lc.session.clone(),
        observer: None,
    };
    if let Value::Array(items) = body {
        if version != "2025-03-26" {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                &Value::Null,
                code::INVALID_REQUEST,
                &format!("JSON-RPC batches are not supported under {version}"),
                None,
            );
        }
        if items.is_empty() {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                &Value::Null,
                code::INVALID_REQUEST,
                "invalid JSON-RPC request: empty batch",
                None,
            );
        }
        let mut out = Vec::new();
        for item in items {
            if Instant::now() > deadline {
                return json_resp(
                    StatusCode::OK,
                    &response(
                        &Value::Null,
                        &Reply::Host(HostFailure::TimedOut, String::new()),
                    ),
                );
            }
            match classify(item) {
                Msg::Notification => {}
                Msg::Invalid(id) => out.push(response(
                    &id,
                    &err(code::INVALID_REQUEST, "invalid JSON-RPC request"),
                )),
                Msg::Request { id, method, params } => {
                    match dispatch(backend, caller, false, method, params, deadline, &extras).await
                    {
                        r @ Reply::Host(..) => {
                            return json_resp(StatusCode::OK, &response(&Value::Null, &r))
                        }
                        Reply::Denied(d) => return plain(d.plain_status(), d.message()),
                        r => out.push(response(id, &r)),
                    }
                }
            }
        }
        if out.is_empty() {
            return StatusCode::ACCEPTED.into_response();
        }
        return sse(&Value::Array(out));
    }
    match classify(body) {
        Msg::Notification => StatusCode::ACCEPTED.into_response(),
        Msg::Invalid(id) => sse_answer(
            lc,
            &response(&id, &err(code::INVALID_REQUEST, "invalid JSON-RPC request")),
        ),
        Msg::Request {
            id,
            method: "tools/call",
            params,
        } if live(lc, params) => live_call(caller, lc, id, params, deadline),
        Msg::Request { id, method, params } => {
            let r = dispatch(backend, caller, false, method, params, deadline, &extras).await;
            match r {
                r @ Reply::Host(..) => json_resp(StatusCode::OK, &response(id, &r)),
                Reply::Denied(d) => plain(d.plain_status(), d.message()),
                Reply::Ok(v) if method == "initialize" => initialized(lc, id, v),
                r => sse_answer(lc, &response(id, &r)),
            }
        }
    }
}

/// The `progressToken` of a request's `_meta`, if any.
pub(super) fn progress_token(params: Option<&Value>) -> Option<Value> {
    params?
        .get("_meta")?
        .get("progressToken")
        .filter(|t| t.is_string() || t.is_number())
        .cloned()
}

/// Does this `tools/call` stream its steps (a progress token, or a session with a log level)?
pub(super) fn live(lc: &LegacyCx<'_>, params: Option<&Value>) -> bool {
    progress_token(params).is_some()
        || lc
            .session
            .as_ref()
            .is_some_and(|s| s.level.lock().is_ok_and(|l| l.is_some()))
}

/// A `tools/call` answered on a live stream: the call's progress and log notifications as they
/// happen, then its answer (a host failure too, as an event: the headers are sent). The call
/// runs to its end even if the client leaves; a primed stream can then be resumed.
pub(super) fn live_call(
    caller: &Caller,
    lc: &LegacyCx<'_>,
    id: &Value,
    params: Option<&Value>,
    deadline: Instant,
) -> Response {
    let app = lc.app.clone();
    let (sid, rx) = app.mcp.open_stream(&lc.owner, lc.primed());
    let notifier = Arc::new(Notifier {
        app: app.clone(),
        stream: sid.clone(),
        session: lc.session.clone(),
        token: progress_token(params),
        total: std::sync::Mutex::new(None),
    });
    let extras = Extras {
        session: lc.session.clone(),
        observer: Some(notifier),
    };
    let (caller, id, params) = (caller.clone(), id.clone(), params.cloned());
    tokio::spawn(async move {
        let backend = Backend::Http(app.clone());
        let r = dispatch(
            &backend,
            &caller,
            false,
            "tools/call",
            params.as_ref(),
            deadline,
            &extras,
        )
        .await;
        app.mcp.push(&sid, &response(&id, &r));
        app.mcp.finish(&sid);
    });
    sse_body(axum::body::Body::new(SseBody(rx)))
}

/// The answer to `initialize` over HTTP: a session for the caller (`Mcp-Session-Id`).
pub(super) fn initialized(lc: &LegacyCx<'_>, id: &Value, v: Value) -> Response {
    let version = v["protocolVersion"]
        .as_str()
        .unwrap_or(LEGACY[0])
        .to_string();
    let session = lc.app.mcp.open_session(&lc.owner, &lc.episode, &version);
    let lc2 = LegacyCx {
        app: lc.app,
        version: &version,
        session: Some(session.clone()),
        owner: lc.owner.clone(),
        episode: lc.episode.clone(),
    };
    let mut r = sse_answer(&lc2, &jsonrpc::result(id, v));
    if let Ok(h) = header::HeaderValue::from_str(&session.id) {
        r.headers_mut().insert("mcp-session-id", h);
    }
    r
}

/// A live SSE body: events from a stream's receiver; ends when the stream finishes.
pub(super) struct SseBody(tokio::sync::mpsc::UnboundedReceiver<axum::body::Bytes>);

impl axum::body::HttpBody for SseBody {
    type Data = axum::body::Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<axum::body::Bytes>, Self::Error>>> {
        self.0
            .poll_recv(cx)
            .map(|o| o.map(|b| Ok(http_body::Frame::data(b))))
    }
}

pub(super) async fn modern_post(
    backend: &Backend,
    caller: &Caller,
    headers: &HeaderMap,
    body: &Value,
    deadline: Instant,
) -> Response {
    if body.is_array() {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            &Value::Null,
            code::INVALID_REQUEST,
            "JSON-RPC batches are not supported under 2026-07-28",
            None,
        );
    }
    let msg = classify(body);
    if let Some(method) = body.get("method").and_then(Value::as_str) {
        let id = body.get("id").cloned().unwrap_or(Value::Null);
        if header_str(headers, "mcp-method") != Some(method) {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                &id,
                code::HEADER_MISMATCH,
                "Mcp-Method header does not match the body's method",
                None,
            );
        }
        if method == "tools/call" {
            let name = body
                .get("params")
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str);
            if name.is_none() || header_str(headers, "mcp-name") != name {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    &id,
                    code::HEADER_MISMATCH,
                    "Mcp-Name header does not match the tool name",
                    None,
                );
            }
        }
    }
    match msg {
        Msg::Notification => StatusCode::ACCEPTED.into_response(),
        Msg::Invalid(id) => rpc_error(
            StatusCode::BAD_REQUEST,
            &id,
            code::INVALID_REQUEST,
            "invalid JSON-RPC request",
            None,
        ),
        Msg::Request { id, method, params } => {
            match dispatch(
                backend,
                caller,
                true,
                method,
                params,
                deadline,
                &Extras::default(),
            )
            .await
            {
                Reply::Denied(d) => plain(d.plain_status(), d.message()),
                r @ Reply::Err {
                    code: code::METHOD_NOT_FOUND,
                    ..
                } => json_resp(StatusCode::NOT_FOUND, &response(id, &r)),
                r => json_resp(StatusCode::OK, &response(id, &r)),
            }
        }
    }
}
