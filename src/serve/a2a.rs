//! A2A (surfaces.md §6): the session-scoped agent cards, the reference's legacy `tasks/send`
//! (idempotent per task id within the episode) and A2A v1.0 `SendMessage` / `GetTask` on the
//! same `POST /a2a/` endpoint (DEC-A2A-1).

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::auth::{self, Bearer, Denial};
use super::jsonrpc::{self, code, plain};
use super::rest::{read_body, rpc_body_error, ApiError};
use super::{one_line, App, HostFailure, ReadError, A2A_BODY, POST_DEADLINE};
use crate::authority::session::Session;
use crate::coordinator::invoke::{valid_task, visible, Call, Committed, InvokeError, Surface};
use crate::store::journal::{self, ReceiptState};
use crate::store::records::InvocationRecord;
use crate::store::Object;

async fn card_session(
    app: &Arc<App>,
    headers: &HeaderMap,
    route: &str,
) -> Result<Session, ApiError> {
    let token = match auth::parse_bearer(headers) {
        Bearer::Absent => return Err(ApiError::from_denial(route, &Denial::Absent)),
        Bearer::Malformed => return Err(ApiError::from_denial(route, &Denial::Malformed)),
        Bearer::Token(t) => t,
    };
    app.session(token, super::now())
        .await
        .map_err(|d| ApiError::from_denial(route, &d))
}

async fn skills(app: &Arc<App>, session: &Session) -> Result<Vec<Value>, ApiError> {
    let all = app.descriptors().await.map_err(|e| match e {
        ReadError::Timeout => ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            "ProjectionDeadlineExceeded",
            "the registry read passed its deadline",
        ),
        other => {
            eprintln!(
                "world: serve: agent card: {}",
                one_line(&format!("{other:?}"))
            );
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "ProjectionUnavailable",
                "the transition registry could not be read",
            )
        }
    })?;
    Ok(visible(&all, &session.grants, super::now())
        .iter()
        .map(|d| json!({"id": d.id, "name": d.title, "description": d.description, "tags": [], "examples": []}))
        .collect())
}

fn card_base(skills: Vec<Value>) -> Value {
    json!({
        "name": "world",
        "description": "The world store's published transitions, callable as A2A skills.",
        "version": env!("CARGO_PKG_VERSION"),
        "capabilities": {"streaming": false, "pushNotifications": false},
        "defaultInputModes": ["application/json"],
        "defaultOutputModes": ["application/json"],
        "skills": skills,
    })
}

/// `GET /.well-known/agent.json` (legacy card with a top-level `url`).
pub async fn card_legacy(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let s = card_session(&app, &headers, "GET /.well-known/agent.json").await?;
    let mut card = card_base(skills(&app, &s).await?);
    // The reference's legacy shape keeps `stateTransitionHistory`; its `url` answers JSON-RPC
    // (legacy and A2A v0.3 methods, DEC-A2A-3).
    card["capabilities"]["stateTransitionHistory"] = Value::Bool(false);
    card["url"] = Value::String(format!("http://127.0.0.1:{}", app.port));
    Ok(Json(card).into_response())
}

/// `GET /.well-known/agent-card.json` (v1.0 card with `supportedInterfaces`).
pub async fn card_v1(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let s = card_session(&app, &headers, "GET /.well-known/agent-card.json").await?;
    let mut card = card_base(skills(&app, &s).await?);
    card["supportedInterfaces"] = json!([{
        "url": format!("http://127.0.0.1:{}/a2a/", app.port),
        "protocolBinding": "JSONRPC",
        "protocolVersion": "1.0",
    }]);
    Ok(Json(card).into_response())
}

fn rpc(id: &Value, code: i64, message: &str) -> Value {
    jsonrpc::error(id, code, message, None)
}

fn ok(v: Value) -> Response {
    jsonrpc::json_response(StatusCode::OK, &v)
}

/// Is this a v1.0 request (`A2A-Version: 1.0` or a PascalCase method)?
pub fn is_v1(headers: &HeaderMap, method: Option<&str>) -> bool {
    headers.get("a2a-version").and_then(|v| v.to_str().ok()) == Some("1.0")
        || method
            .and_then(|m| m.chars().next())
            .is_some_and(|c| c.is_ascii_uppercase())
}

/// `POST /a2a/`.
pub async fn post(State(app): State<Arc<App>>, req: Request) -> Response {
    let deadline = Instant::now() + POST_DEADLINE;
    let (parts, body) = req.into_parts();
    let headers = parts.headers;
    let bytes = match read_body(&headers, body, A2A_BODY, app.http_read).await {
        Ok(b) => b,
        Err(e) => return rpc_body_error(e, A2A_BODY, app.http_read),
    };
    let parsed: Option<Value> = serde_json::from_slice(&bytes).ok();
    let method = parsed
        .as_ref()
        .and_then(|v| v.get("method"))
        .and_then(Value::as_str);
    let id = parsed
        .as_ref()
        .and_then(|v| v.get("id"))
        .cloned()
        .unwrap_or(Value::Null);
    let v1 = is_v1(&headers, method);
    // Authorization first: an unauthorized caller learns nothing about the request.
    let token = match auth::parse_bearer(&headers) {
        Bearer::Absent if v1 => return plain(StatusCode::UNAUTHORIZED, Denial::Absent.message()),
        Bearer::Malformed if v1 => {
            return plain(StatusCode::UNAUTHORIZED, Denial::Malformed.message())
        }
        Bearer::Absent => return ok(rpc(&id, code::SESSION_DENIED, Denial::Absent.message())),
        Bearer::Malformed => {
            return ok(rpc(&id, code::INVALID_REQUEST, Denial::Malformed.message()))
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
                plain(d.plain_status(), d.message())
            } else {
                ok(rpc(&id, code::SESSION_DENIED, d.message()))
            };
        }
    };
    let Some(msg) = parsed.filter(|v| v.get("jsonrpc").and_then(Value::as_str) == Some("2.0"))
    else {
        return ok(rpc(&id, code::INVALID_REQUEST, "invalid JSON-RPC request"));
    };
    let Some(method) = msg.get("method").and_then(Value::as_str) else {
        return ok(rpc(&id, code::INVALID_REQUEST, "invalid JSON-RPC request"));
    };
    let params = msg.get("params").cloned().unwrap_or(Value::Null);
    match method {
        "tasks/send" => tasks_send(&app, &token, &session, &id, &params, deadline).await,
        "message/send" => message_send_v03(&app, &token, &session, &id, &params, deadline).await,
        "tasks/get" => get_task_v03(&app, &session, &id, &params).await,
        "tasks/cancel" => ok(rpc(
            &id,
            code::TASK_NOT_CANCELABLE,
            "task cannot be canceled: calls are synchronous",
        )),
        "SendMessage" => send_message(&app, &token, &session, &id, &params, deadline).await,
        "GetTask" => get_task(&app, &session, &id, &params).await,
        "CancelTask" => ok(rpc(
            &id,
            code::TASK_NOT_CANCELABLE,
            "task cannot be canceled: calls are synchronous",
        )),
        "SendStreamingMessage" | "SubscribeToTask" | "ListTasks" | "GetExtendedAgentCard" => ok(
            rpc(&id, code::UNSUPPORTED_OPERATION, "unsupported operation"),
        ),
        m if m.contains("PushNotificationConfig") => ok(rpc(
            &id,
            code::PUSH_NOT_SUPPORTED,
            "push notifications are not supported",
        )),
        _ => ok(rpc(&id, code::METHOD_NOT_FOUND, "method not found")),
    }
}

/// Why a message's params do not make a call (JSON-RPC `-32602`, `invalid params: <why>`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct InvalidParams(&'static str);

impl From<&'static str> for InvalidParams {
    fn from(why: &'static str) -> Self {
        InvalidParams(why)
    }
}

struct Parsed {
    task: String,
    skill: String,
    transition_fn: Option<String>,
    args: Value,
}

fn parse_legacy(params: &Value) -> Result<Parsed, InvalidParams> {
    let task = params
        .get("id")
        .and_then(Value::as_str)
        .ok_or("params.id must be a task id string")?;
    if !valid_task(task) {
        return Err("params.id must match [A-Za-z0-9._-]{1,128}".into());
    }
    let meta = params
        .get("metadata")
        .ok_or("params.metadata is required")?;
    let skill = meta
        .get("skill_id")
        .and_then(Value::as_str)
        .ok_or("metadata.skill_id must be a string")?;
    let tf = match meta.get("transition_fn") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err("metadata.transition_fn must be a string".into()),
    };
    let parts = params
        .get("message")
        .and_then(|m| m.get("parts"))
        .and_then(Value::as_array)
        .ok_or("message.parts must be an array")?;
    let [part] = parts.as_slice() else {
        return Err("message.parts must hold exactly one part".into());
    };
    if part.get("type").and_then(Value::as_str) != Some("data") {
        return Err("the part must have type \"data\"".into());
    }
    let args = part
        .get("data")
        .filter(|d| d.is_object())
        .ok_or("the data part must hold a JSON object")?;
    Ok(Parsed {
        task: task.into(),
        skill: skill.into(),
        transition_fn: tf,
        args: args.clone(),
    })
}

fn parse_v1(params: &Value) -> Result<Parsed, InvalidParams> {
    let m = params.get("message").ok_or("params.message is required")?;
    let task = m
        .get("messageId")
        .and_then(Value::as_str)
        .ok_or("message.messageId must be a string")?;
    if !valid_task(task) {
        return Err("message.messageId must match [A-Za-z0-9._-]{1,128}".into());
    }
    if m.get("role").and_then(Value::as_str) != Some("ROLE_USER") {
        return Err("message.role must be ROLE_USER".into());
    }
    let parts = m
        .get("parts")
        .and_then(Value::as_array)
        .ok_or("message.parts must be an array")?;
    let [part] = parts.as_slice() else {
        return Err("message.parts must hold exactly one part".into());
    };
    let args = part
        .get("data")
        .filter(|d| d.is_object())
        .ok_or("the part must be a data part holding a JSON object")?;
    let meta = params
        .get("metadata")
        .ok_or("params.metadata is required")?;
    let skill = meta
        .get("skill_id")
        .and_then(Value::as_str)
        .ok_or("metadata.skill_id must be a string")?;
    let tf = meta
        .get("transition_fn")
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok(Parsed {
        task: task.into(),
        skill: skill.into(),
        transition_fn: tf,
        args: args.clone(),
    })
}

/// Run a parsed call; `Err(response)` for the JSON-RPC errors of §6.2.
async fn run(
    app: &Arc<App>,
    token: &str,
    session: &Session,
    id: &Value,
    p: Parsed,
    deadline: Instant,
    what: &str,
) -> Result<Committed, Response> {
    let all = app.descriptors().await.map_err(|e| {
        eprintln!("world: serve: a2a: {}", one_line(&format!("{e:?}")));
        ok(rpc(id, code::INTERNAL_ERROR, "internal store failure"))
    })?;
    let Some(desc) = visible(&all, &session.grants, super::now())
        .into_iter()
        .find(|d| d.id == p.skill)
    else {
        return Err(ok(rpc(id, code::INVALID_PARAMS, "not authorized")));
    };
    if let Some(tf) = &p.transition_fn {
        if *tf != desc.transition_fn.to_string() {
            return Err(ok(rpc(
                id,
                code::INVALID_PARAMS,
                "proposal does not match the registered transition",
            )));
        }
    }
    let invocation_id = format!("a2a:{}:{}", session.episode, p.task);
    let call = Call {
        surface: Surface::A2a,
        token: token.to_string(),
        transition: p.skill,
        args: p.args,
        task: Some(p.task),
        clock: super::clock(),
    };
    match app.invoke(call, deadline).await {
        Ok(c) => Ok(c),
        Err(HostFailure::Invoke(InvokeError::NotAuthorized(_))) => {
            Err(ok(rpc(id, code::INVALID_PARAMS, "not authorized")))
        }
        Err(HostFailure::Invoke(InvokeError::InFlight(_))) => Err(ok(rpc(
            id,
            code::INVALID_PARAMS,
            "task id already used in this session",
        ))),
        Err(HostFailure::Invoke(InvokeError::InvalidCall(m))) => Err(ok(rpc(
            id,
            code::INVALID_PARAMS,
            &format!("invalid params: {m}"),
        ))),
        Err(HostFailure::Invoke(InvokeError::Session(e))) => {
            Err(ok(rpc(id, code::SESSION_DENIED, &e.to_string())))
        }
        Err(f) => {
            let data = f.data(&invocation_id);
            let recs: Vec<String> = data["effectRecords"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            eprintln!(
                "world: a2a refusal: {what} {invocation_id}: {:?}",
                one_line(&format!("{} records [{}]", f.message(), recs.join(" ")))
            );
            let mut e = rpc(id, code::INTERNAL_ERROR, &f.message());
            e["error"]["data"] = data;
            let mut resp = ok(e);
            if matches!(f, HostFailure::TimedOut) {
                resp.headers_mut().insert(
                    header::CONNECTION,
                    header::HeaderValue::from_static("close"),
                );
            }
            Err(resp)
        }
    }
}

fn output_value(c: &Committed) -> Value {
    serde_json::from_slice(&c.output).unwrap_or(Value::Null)
}

async fn tasks_send(
    app: &Arc<App>,
    token: &str,
    session: &Session,
    id: &Value,
    params: &Value,
    deadline: Instant,
) -> Response {
    let p = match parse_legacy(params) {
        Ok(p) => p,
        Err(m) => {
            return ok(rpc(
                id,
                code::INVALID_PARAMS,
                &format!("invalid params: {m}"),
            ))
        }
    };
    let task = p.task.clone();
    match run(app, token, session, id, p, deadline, "tasks/send").await {
        Err(r) => r,
        Ok(c) => ok(json!({"jsonrpc": "2.0", "id": id, "result": {
            "id": task,
            "status": {"state": "completed"},
            "artifacts": [{"parts": [{"type": "data", "data": output_value(&c)}]}],
            "metadata": {"invocation_id": c.invocation_id, "world_ref": c.world_ref, "entry_index": c.entry_index},
        }})),
    }
}

fn v1_task(
    episode: &str,
    invocation_id: &str,
    output: Value,
    world_ref: &str,
    entry_index: i64,
) -> Value {
    json!({
        "id": invocation_id,
        "contextId": episode,
        "status": {"state": "TASK_STATE_COMPLETED"},
        "artifacts": [{"artifactId": "output", "parts": [{"data": output}]}],
        "metadata": {"invocation_id": invocation_id, "world_ref": world_ref, "entry_index": entry_index},
    })
}

async fn send_message(
    app: &Arc<App>,
    token: &str,
    session: &Session,
    id: &Value,
    params: &Value,
    deadline: Instant,
) -> Response {
    let p = match parse_v1(params) {
        Ok(p) => p,
        Err(m) => {
            return ok(rpc(
                id,
                code::INVALID_PARAMS,
                &format!("invalid params: {m}"),
            ))
        }
    };
    match run(app, token, session, id, p, deadline, "SendMessage").await {
        Err(r) => r,
        // DEC-A2A-2: a SendMessageResponse, the one-of member `task`.
        Ok(c) => ok(json!({"jsonrpc": "2.0", "id": id, "result": {"task":
            v1_task(&session.episode, &c.invocation_id, output_value(&c), &c.world_ref, c.entry_index)}})),
    }
}

/// An A2A v0.3 message: `{kind:"message", messageId, role:"user", parts:[{kind:"data",
/// data:{…}}]}`, skill in `params.metadata.skill_id` or `message.metadata.skill_id`.
fn parse_v03(params: &Value) -> Result<Parsed, InvalidParams> {
    let m = params.get("message").ok_or("params.message is required")?;
    let task = m
        .get("messageId")
        .and_then(Value::as_str)
        .ok_or("message.messageId must be a string")?;
    if !valid_task(task) {
        return Err("message.messageId must match [A-Za-z0-9._-]{1,128}".into());
    }
    if m.get("role").and_then(Value::as_str) != Some("user") {
        return Err("message.role must be user".into());
    }
    let parts = m
        .get("parts")
        .and_then(Value::as_array)
        .ok_or("message.parts must be an array")?;
    let [part] = parts.as_slice() else {
        return Err("message.parts must hold exactly one part".into());
    };
    if part.get("kind").and_then(Value::as_str) != Some("data") {
        return Err("the part must have kind \"data\"".into());
    }
    let args = part
        .get("data")
        .filter(|d| d.is_object())
        .ok_or("the data part must hold a JSON object")?;
    let meta = params
        .get("metadata")
        .filter(|v| v.get("skill_id").is_some())
        .or_else(|| m.get("metadata"))
        .ok_or("params.metadata.skill_id is required")?;
    let skill = meta
        .get("skill_id")
        .and_then(Value::as_str)
        .ok_or("metadata.skill_id must be a string")?;
    let tf = meta
        .get("transition_fn")
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok(Parsed {
        task: task.into(),
        skill: skill.into(),
        transition_fn: tf,
        args: args.clone(),
    })
}

/// The v0.3 form of a v1.0 Task: `kind:"task"`, lower-case states, `kind:"data"` parts.
fn task_v03(v1: Value) -> Value {
    let mut t = v1;
    t["kind"] = Value::String("task".into());
    let state = match t["status"]["state"].as_str() {
        Some("TASK_STATE_COMPLETED") => "completed",
        Some("TASK_STATE_WORKING") => "working",
        _ => "unknown",
    };
    t["status"]["state"] = Value::String(state.into());
    if let Some(arts) = t.get_mut("artifacts").and_then(Value::as_array_mut) {
        for a in arts {
            if let Some(parts) = a.get_mut("parts").and_then(Value::as_array_mut) {
                for p in parts {
                    p["kind"] = Value::String("data".into());
                }
            }
        }
    }
    t
}

/// A2A v0.3 `message/send` (DEC-A2A-3): what the official SDK sends to a card without
/// `supportedInterfaces`. Same invocation as `SendMessage`; the result is the Task.
async fn message_send_v03(
    app: &Arc<App>,
    token: &str,
    session: &Session,
    id: &Value,
    params: &Value,
    deadline: Instant,
) -> Response {
    let p = match parse_v03(params) {
        Ok(p) => p,
        Err(m) => {
            return ok(rpc(
                id,
                code::INVALID_PARAMS,
                &format!("invalid params: {m}"),
            ))
        }
    };
    match run(app, token, session, id, p, deadline, "message/send").await {
        Err(r) => r,
        Ok(c) => ok(json!({"jsonrpc": "2.0", "id": id, "result": task_v03(
            v1_task(&session.episode, &c.invocation_id, output_value(&c), &c.world_ref, c.entry_index))})),
    }
}

/// A2A v0.3 `tasks/get`: [`get_task`] with the v0.3 Task form.
async fn get_task_v03(app: &Arc<App>, session: &Session, id: &Value, params: &Value) -> Response {
    let r = get_task(app, session, id, params).await;
    let (parts, body) = r.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return ok(rpc(id, code::INTERNAL_ERROR, "internal store failure"));
    };
    let mut v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    if let Some(t) = v.get_mut("result") {
        *t = task_v03(t.take());
    }
    let mut out = ok(v);
    *out.status_mut() = parts.status;
    out
}

/// Why a resolved invocation does not re-verify (logged; the caller answers "internal store
/// failure").
#[derive(Debug, thiserror::Error)]
enum Reverify {
    /// A read failed.
    #[error(transparent)]
    Store(#[from] crate::store::Error),
    /// A row or object is absent, altered or does not match (`world row absent`, …).
    #[error("{0}")]
    Broken(&'static str),
    /// The invocation record does not decode.
    #[error(transparent)]
    Record(#[from] crate::store::records::RecordError),
    /// The output is not JSON.
    #[error(transparent)]
    Output(#[from] serde_json::Error),
}

/// Re-verify a resolved invocation: world row → entry → record → output (hashes re-checked).
fn reverify(
    s: &crate::store::Store,
    invocation_id: &str,
    world_ref: &str,
) -> Result<(Value, i64), Reverify> {
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

async fn get_task(app: &Arc<App>, session: &Session, id: &Value, params: &Value) -> Response {
    let Some(task_id) = params.get("id").and_then(Value::as_str) else {
        return ok(rpc(
            id,
            code::INVALID_PARAMS,
            "invalid params: params.id must be a task id string",
        ));
    };
    let prefix = format!("a2a:{}:", session.episode);
    let not_found = || ok(rpc(id, code::TASK_NOT_FOUND, "task not found"));
    match task_id.strip_prefix(&prefix) {
        Some(t) if valid_task(t) => {}
        _ => return not_found(),
    }
    let inv = task_id.to_string();
    let ep = session.episode.clone();
    let r = app
        .read(move |s| {
            let r =
                journal::receipt(s.conn(), &inv).map_err(|e| ReadError::Store(e.to_string()))?;
            match (r.state, r.result_ref) {
                (ReceiptState::NotStarted, _) => Ok(None),
                (ReceiptState::Indeterminate, _) => Ok(Some(json!({
                    "id": inv, "contextId": ep, "status": {"state": "TASK_STATE_WORKING"},
                    "metadata": {"invocation_id": inv, "world": {"outcome": "indeterminate"}},
                }))),
                (ReceiptState::Resolved, Some(wr)) => {
                    let (out, idx) =
                        reverify(s, &inv, &wr).map_err(|e| ReadError::Store(e.to_string()))?;
                    Ok(Some(v1_task(&ep, &inv, out, &wr, idx)))
                }
                (ReceiptState::Resolved, None) => Err(ReadError::Store(
                    "resolved receipt without resultRef".into(),
                )),
            }
        })
        .await;
    match r {
        Ok(None) => not_found(),
        Ok(Some(task)) => ok(json!({"jsonrpc": "2.0", "id": id, "result": task})),
        Err(e) => {
            eprintln!("world: serve: a2a GetTask: {}", one_line(&format!("{e:?}")));
            ok(rpc(id, code::INTERNAL_ERROR, "internal store failure"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_params() {
        let p = json!({"id":"t1","metadata":{"skill_id":"echo"},"message":{"role":"user","parts":[{"type":"data","data":{"a":1}}]}});
        let x = parse_legacy(&p).unwrap();
        assert_eq!((x.task.as_str(), x.skill.as_str()), ("t1", "echo"));
        let two = json!({"id":"t1","metadata":{"skill_id":"echo"},"message":{"parts":[{"type":"data","data":{}},{"type":"data","data":{}}]}});
        assert!(parse_legacy(&two).is_err());
        let bad_id = json!({"id":"t 1","metadata":{"skill_id":"echo"},"message":{"parts":[{"type":"data","data":{}}]}});
        assert!(parse_legacy(&bad_id).is_err());
        let text = json!({"id":"t1","metadata":{"skill_id":"echo"},"message":{"parts":[{"type":"text","text":"x"}]}});
        assert!(parse_legacy(&text).is_err());
    }

    #[test]
    fn v1_detection() {
        let mut h = HeaderMap::new();
        assert!(!is_v1(&h, Some("tasks/send")));
        assert!(is_v1(&h, Some("SendMessage")));
        h.insert("a2a-version", "1.0".parse().unwrap());
        assert!(is_v1(&h, Some("tasks/send")));
    }
}
