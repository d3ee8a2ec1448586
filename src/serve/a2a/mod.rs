//! A2A (surfaces.md §6 with its A2A-conformance amendment): the agent cards ([`card`]), one
//! `POST /a2a/` JSON-RPC endpoint for the reference's legacy `tasks/send`, the A2A v0.3
//! methods (`message/send`, `tasks/get`, …) and A2A v1.0 (`SendMessage`, `GetTask`,
//! `ListTasks`, `CancelTask`, `GetExtendedAgentCard`); one send path for all three
//! ([`send`]) and one task model ([`task`]).
//!
//! Order of checks: the body (size, read bound) → JSON (`-32700`) → the session (v1.0: HTTP
//! 401; legacy: JSON-RPC, as the reference) → the request object (`-32600`, `id: null` when
//! the id is not a string, number or null) → `A2A-Version` (`-32009`) → the method.

pub mod card;
pub mod send;
pub mod task;

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{json, Map, Value};

use super::auth::{self, Bearer, Denial};
use super::jsonrpc::{self, code, plain};
use super::rest::{read_body, rpc_body_error};
use super::{one_line, App, A2A_BODY, POST_DEADLINE};
use crate::ops::session::Session;

pub use card::{legacy as card_legacy, v1 as card_v1};

/// The A2A protocol versions served (`A2A-Version`, `Major.Minor`); an absent header is 0.3
/// (A2A §3.6.2), except that a PascalCase method is always v1.0 (DEC-A2A-1).
pub const VERSIONS: [&str; 2] = ["0.3", "1.0"];

/// Which wire a request speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    /// The reference's `tasks/send`.
    Legacy,
    /// A2A v0.3 (`message/send`, lower-case states, `kind` tags).
    V03,
    /// A2A v1.0 (PascalCase methods, `TASK_STATE_*`).
    V1,
}

/// A JSON-RPC error answer of one method.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcError {
    /// The code.
    pub code: i64,
    /// The message.
    pub message: String,
    /// `error.data`, if any.
    pub data: Option<Value>,
    /// Close the connection after answering (the call passed its deadline).
    pub close: bool,
}

impl RpcError {
    /// An error with `code` and `message`.
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
            close: false,
        }
    }

    /// `-32602 invalid params: <why>`.
    pub fn params(why: impl std::fmt::Display) -> RpcError {
        RpcError::new(code::INVALID_PARAMS, format!("invalid params: {why}"))
    }

    /// `-32001` TaskNotFoundError.
    pub fn not_found(task_id: &str) -> RpcError {
        let mut e = RpcError::new(code::TASK_NOT_FOUND, "task not found");
        e.data = Some(json!({"taskId": task_id}));
        e
    }

    /// `-32004` UnsupportedOperationError.
    pub fn unsupported(why: impl std::fmt::Display) -> RpcError {
        RpcError::new(
            code::UNSUPPORTED_OPERATION,
            format!("operation not supported: {why}"),
        )
    }

    /// `-32603 internal store failure` (the cause goes to stderr).
    pub fn internal(what: &str, cause: impl std::fmt::Debug) -> RpcError {
        eprintln!(
            "world: serve: a2a {what}: {}",
            one_line(&format!("{cause:?}"))
        );
        RpcError::new(code::INTERNAL_ERROR, "internal store failure")
    }
}

fn answer(id: &Value, r: Result<Value, RpcError>) -> Response {
    match r {
        Ok(v) => jsonrpc::json_response(StatusCode::OK, &jsonrpc::result(id, v)),
        Err(e) => {
            let mut resp = jsonrpc::json_response(
                StatusCode::OK,
                &jsonrpc::error(id, e.code, &e.message, e.data),
            );
            if e.close {
                resp.headers_mut().insert(
                    header::CONNECTION,
                    header::HeaderValue::from_static("close"),
                );
            }
            resp
        }
    }
}

/// The `A2A-Version` header: `Ok(None)` absent or empty, `Ok(Some(v))` a served version
/// (`Major.Minor`, a patch ignored), `Err(text)` otherwise.
pub fn requested_version(headers: &HeaderMap) -> Result<Option<&'static str>, String> {
    let Some(v) = headers.get("a2a-version") else {
        return Ok(None);
    };
    let text = v.to_str().map_err(|_| "(not text)".to_string())?.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let mut it = text.split('.');
    let major = it.next().unwrap_or("");
    let minor = it.next().unwrap_or("0");
    let patch_ok = it
        .next()
        .is_none_or(|p| p.bytes().all(|b| b.is_ascii_digit()));
    let key = format!("{major}.{minor}");
    match VERSIONS.iter().find(|v| **v == key) {
        Some(v) if patch_ok && it.next().is_none() => Ok(Some(v)),
        _ => Err(text.to_string()),
    }
}

/// Is this a v1.0 request (`A2A-Version: 1.0` or a PascalCase method)?
pub fn is_v1(headers: &HeaderMap, method: Option<&str>) -> bool {
    requested_version(headers) == Ok(Some("1.0"))
        || method
            .and_then(|m| m.chars().next())
            .is_some_and(|c| c.is_ascii_uppercase())
}

/// A v1.0 401: text/plain as MCP (DEC-A2A-1) with the bearer challenge.
fn unauthorized(d: &Denial) -> Response {
    let mut r = plain(d.plain_status(), d.message());
    if r.status() == StatusCode::UNAUTHORIZED {
        r.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static(card::CHALLENGE),
        );
    }
    r
}

/// `POST /a2a/` (also `/a2a` and `/`).
pub async fn post(State(app): State<Arc<App>>, req: Request) -> Response {
    let deadline = Instant::now() + POST_DEADLINE;
    let (parts, body) = req.into_parts();
    let headers = parts.headers;
    let bytes = match read_body(&headers, body, A2A_BODY, app.http_read).await {
        Ok(b) => b,
        Err(e) => return rpc_body_error(e, A2A_BODY, app.http_read),
    };
    let parsed: Result<Value, _> = serde_json::from_slice(&bytes);
    let method = parsed
        .as_ref()
        .ok()
        .and_then(|v| v.get("method"))
        .and_then(Value::as_str);
    // The id as echoed: a string, a number or null; any other type answers with `null`.
    let id = match parsed.as_ref().ok().and_then(|v| v.get("id")) {
        Some(v @ (Value::String(_) | Value::Number(_))) => v.clone(),
        _ => Value::Null,
    };
    let v1 = is_v1(&headers, method);
    // Authorization first: an unauthorized caller learns nothing about the request.
    let token = match auth::parse_bearer(&headers) {
        Bearer::Absent if v1 => return unauthorized(&Denial::Absent),
        Bearer::Malformed if v1 => return unauthorized(&Denial::Malformed),
        Bearer::Absent => {
            return answer(
                &id,
                Err(RpcError::new(
                    code::SESSION_DENIED,
                    Denial::Absent.message(),
                )),
            )
        }
        Bearer::Malformed => {
            return answer(
                &id,
                Err(RpcError::new(
                    code::INVALID_REQUEST,
                    Denial::Malformed.message(),
                )),
            )
        }
        Bearer::Token(t) => t,
    };
    let session = match app.session(token.clone(), super::now()).await {
        Ok(s) => s,
        Err(d) => {
            if let Some(c) = d.cause() {
                eprintln!("world: serve: POST /a2a/: {}", one_line(c));
            }
            return if v1 {
                unauthorized(&d)
            } else {
                answer(&id, Err(RpcError::new(code::SESSION_DENIED, d.message())))
            };
        }
    };
    let msg = match parsed {
        Ok(v) => v,
        Err(e) => {
            return answer(
                &Value::Null,
                Err(RpcError::new(
                    code::PARSE_ERROR,
                    format!("invalid JSON payload: {e}"),
                )),
            )
        }
    };
    let (method, params) = match request_parts(&msg) {
        Ok(x) => x,
        Err(why) => {
            return answer(
                &id,
                Err(RpcError::new(
                    code::INVALID_REQUEST,
                    format!("invalid JSON-RPC request: {why}"),
                )),
            )
        }
    };
    let params = match params {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => return answer(&id, Err(RpcError::params("params must be an object"))),
    };
    let version = match requested_version(&headers) {
        Ok(v) => v,
        Err(asked) => {
            let mut e = RpcError::new(
                code::VERSION_NOT_SUPPORTED,
                format!(
                    "A2A version {asked:?} is not supported (supported: {})",
                    VERSIONS.join(", ")
                ),
            );
            e.data = Some(json!({"requested": asked, "supported": VERSIONS}));
            return answer(&id, Err(e));
        }
    };
    let cx = Cx {
        app: &app,
        token: &token,
        session: &session,
        deadline,
        authority: super::origin::authority(&headers, app.port),
    };
    let r = dispatch(&cx, method, &params, version).await;
    answer(&id, r)
}

/// The method and params of a JSON-RPC request object, or why it is not one: `jsonrpc` must be
/// `"2.0"`, `method` a string, the `id` present and a string, number or null (A2A methods
/// are requests; a message without an id would run unseen).
fn request_parts(msg: &Value) -> Result<(&str, Option<&Value>), &'static str> {
    let Some(obj) = msg.as_object() else {
        return Err("the request must be one JSON object (batches are not served)");
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err("jsonrpc must be \"2.0\"");
    }
    let method = obj
        .get("method")
        .and_then(Value::as_str)
        .ok_or("method must be a string")?;
    match obj.get("id") {
        None => return Err("id is missing (A2A methods are requests, not notifications)"),
        Some(Value::String(_) | Value::Number(_) | Value::Null) => {}
        Some(_) => return Err("id must be a string, a number or null"),
    }
    Ok((method, obj.get("params")))
}

/// What every method handler gets.
pub struct Cx<'a> {
    /// The daemon.
    pub app: &'a Arc<App>,
    /// The bearer (the invocation's session token).
    pub token: &'a str,
    /// The caller's session.
    pub session: &'a Session,
    /// The aggregate POST deadline.
    pub deadline: Instant,
    /// The loopback authority the client used (the card's URLs).
    pub authority: String,
}

async fn dispatch(
    cx: &Cx<'_>,
    method: &str,
    params: &Map<String, Value>,
    version: Option<&'static str>,
) -> Result<Value, RpcError> {
    // A PascalCase method is v1.0 whatever the header; a v0.3 method under `A2A-Version: 1.0`
    // keeps its v0.3 shapes (the method names the wire).
    let _ = version;
    match method {
        "tasks/send" => send::tasks_send(cx, params).await,
        "message/send" => send::message_send(cx, params, Wire::V03).await,
        "SendMessage" => send::message_send(cx, params, Wire::V1).await,
        "tasks/get" => get_task(cx, params, Wire::V03).await,
        "GetTask" => get_task(cx, params, Wire::V1).await,
        "tasks/cancel" => cancel_task(cx, params, Wire::V03).await,
        "CancelTask" => cancel_task(cx, params, Wire::V1).await,
        "tasks/list" | "ListTasks" => list_tasks(cx, params).await,
        "GetExtendedAgentCard" | "agent/getAuthenticatedExtendedCard" => {
            card::extended(cx.app, cx.session, &cx.authority)
                .await
                .map_err(|e| RpcError::internal("extended card", e))
        }
        "SendStreamingMessage" | "SubscribeToTask" | "message/stream" | "tasks/resubscribe" => {
            Err(RpcError::unsupported(
                "streaming is not offered (the card's capabilities.streaming is false); use SendMessage and GetTask",
            ))
        }
        m if m.contains("PushNotificationConfig") || m.starts_with("tasks/pushNotificationConfig/") => {
            Err(RpcError::new(
                code::PUSH_NOT_SUPPORTED,
                "push notifications are not supported (the card's capabilities.pushNotifications is false)",
            ))
        }
        m => {
            let mut e = RpcError::new(code::METHOD_NOT_FOUND, "method not found");
            e.data = Some(json!({"method": m}));
            Err(e)
        }
    }
}

/// The daemon's invocations in flight, as `task::load` needs them.
fn inflight(app: &App) -> std::collections::HashSet<String> {
    app.a2a_inflight
        .lock()
        .map(|s| s.clone())
        .unwrap_or_default()
}

/// The `id` param of `GetTask` / `CancelTask`.
fn task_id_param(params: &Map<String, Value>) -> Result<String, RpcError> {
    params
        .get("id")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| RpcError::params("params.id must be a task id string"))
}

/// Read one task of the session (re-verified when completed).
pub async fn read_task(cx: &Cx<'_>, task_id: &str) -> Result<Option<task::Task>, RpcError> {
    let ep = cx.session.episode.clone();
    let id = task_id.to_string();
    let live = inflight(cx.app);
    cx.app
        .read(move |s| task::load(s, &ep, &id, true, &live))
        .await
        .map_err(|e| RpcError::internal("GetTask", e))
}

/// Render a task in `wire`'s form.
pub fn render(t: &task::Task, history: Option<usize>, wire: Wire) -> Value {
    let v = task::to_v1(t, history, true);
    match wire {
        Wire::V03 => task::to_v03(v),
        _ => v,
    }
}

async fn get_task(cx: &Cx<'_>, params: &Map<String, Value>, wire: Wire) -> Result<Value, RpcError> {
    let id = task_id_param(params)?;
    let history = task::history_length(params.get("historyLength"), "historyLength")?;
    match read_task(cx, &id).await? {
        Some(t) => Ok(render(&t, history, wire)),
        None => Err(RpcError::not_found(&id)),
    }
}

async fn list_tasks(cx: &Cx<'_>, params: &Map<String, Value>) -> Result<Value, RpcError> {
    let q = task::ListQuery::parse(params)?;
    let ep = cx.session.episode.clone();
    let live = inflight(cx.app);
    cx.app
        .read(move |s| task::list(s, &ep, &q, &live))
        .await
        .map_err(|e| RpcError::internal("ListTasks", e))
}

/// `CancelTask`: a task waiting for input is canceled; a queued, running or finished one is
/// `-32002` (calls cannot be interrupted once accepted); an unknown one `-32001`. Whether the
/// task still waits is checked again under the writer, so a follow-up that started it
/// meanwhile wins and the cancel answers `-32002`.
async fn cancel_task(
    cx: &Cx<'_>,
    params: &Map<String, Value>,
    wire: Wire,
) -> Result<Value, RpcError> {
    let id = task_id_param(params)?;
    let Some(t) = read_task(cx, &id).await? else {
        return Err(RpcError::not_found(&id));
    };
    let not_cancelable = |why: &str, state: &str| {
        let mut e = RpcError::new(
            code::TASK_NOT_CANCELABLE,
            format!("task cannot be canceled: {why}"),
        );
        e.data = Some(json!({"taskId": id, "state": state}));
        e
    };
    let row = match (&t.row, t.state) {
        (Some(row), task::state::INPUT_REQUIRED) if !row.invoked => row.clone(),
        (_, s) if task::state::terminal(s) => {
            return Err(not_cancelable(
                &format!("it is already in state {s}"),
                t.state,
            ))
        }
        (_, task::state::SUBMITTED) => {
            return Err(not_cancelable(
                "its call is queued to run, and accepted calls cannot be interrupted",
                t.state,
            ))
        }
        _ => {
            return Err(not_cancelable(
                "it is running, and calls cannot be interrupted",
                t.state,
            ))
        }
    };
    let mut row = row;
    row.state = task::state::CANCELED.into();
    row.updated_ms = send::now_ms();
    row.status_message_json = None;
    let written = cx
        .app
        .with_writer(cx.deadline, move |_, store| {
            // Still waiting for input, as read? (A follow-up may have run it meanwhile.)
            let now = store.a2a_task(&row.task_id)?;
            match now {
                Some(n) if !n.invoked && n.state == task::state::INPUT_REQUIRED => {
                    crate::store::a2a_tasks::put(store, &row).map(Ok)
                }
                other => Ok(Err(other.map(|n| n.state).unwrap_or_default())),
            }
        })
        .await
        .map_err(|f| RpcError::new(code::INTERNAL_ERROR, f.message()))?
        .map_err(|e| RpcError::internal("CancelTask", e))?
        .map_err(|now| not_cancelable("it left input-required meanwhile", task::state_of(&now)))?;
    let mut t = t;
    t.state = task::state::CANCELED;
    t.status_message = None;
    t.updated_ms = Some(written.updated_ms);
    Ok(render(&t, None, wire))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_detection_and_versions() {
        let mut h = HeaderMap::new();
        assert!(!is_v1(&h, Some("tasks/send")));
        assert!(is_v1(&h, Some("SendMessage")));
        assert_eq!(requested_version(&h), Ok(None));
        h.insert("a2a-version", "1.0".parse().unwrap());
        assert!(is_v1(&h, Some("tasks/send")));
        for (text, want) in [
            ("1.0", Ok(Some("1.0"))),
            ("1", Ok(Some("1.0"))),
            ("1.0.2", Ok(Some("1.0"))),
            ("0.3", Ok(Some("0.3"))),
            ("", Ok(None)),
            ("9.9", Err("9.9".to_string())),
            ("0.2", Err("0.2".to_string())),
            ("1.0.x", Err("1.0.x".to_string())),
        ] {
            h.insert("a2a-version", text.parse().unwrap());
            assert_eq!(requested_version(&h), want, "{text:?}");
        }
    }

    #[test]
    fn request_objects_are_checked() {
        let ok = json!({"jsonrpc":"2.0","id":"1","method":"GetTask","params":{"id":"x"}});
        assert_eq!(request_parts(&ok).unwrap().0, "GetTask");
        for bad in [
            json!({"jsonrpc":"aaa","method":"SendMessage","params":{}}),
            json!({"jsonrpc":"2.0","params":{}}),
            json!({"jsonrpc":"2.0","method":"SendMessage","params":{},"id":{"bad":"type"}}),
            json!({"jsonrpc":"2.0","method":"SendMessage","params":{}}),
            json!([{"jsonrpc":"2.0","method":"GetTask","id":1}]),
        ] {
            assert!(request_parts(&bad).is_err(), "{bad}");
        }
    }
}
