//! MCP at `POST /mcp/` (surfaces.md §5) and on stdio (`world mcp`): the legacy era
//! (2025-11-25, 2025-06-18, 2025-03-26: `initialize`, `ping`, `tools/list`, `tools/call`,
//! one-event SSE framing, batches only under 2025-03-26) and the stateless 2026-07-28 era
//! (`server/discover`, `Mcp-Method`/`Mcp-Name` checks, `resultType`, `ttlMs: 0`).
//!
//! The JSON-RPC layer is written here over axum rather than with rmcp, because one endpoint
//! must speak both eras side by side with the reference's exact framing (DEC in
//! docs/DECISIONS.md).
//!
//! Beyond tools (issue 30): read-only resources of the session's own episode ([`resources`]),
//! `logging/setLevel` with `notifications/message` for each step of a call, and
//! `notifications/progress` when the caller sent a `progressToken`. Under 2025-11-25 a legacy
//! `initialize` opens a session (`Mcp-Session-Id`), SSE streams are primed (an event id and a
//! `retry`) and resumable with `Last-Event-ID` on `GET /mcp/` ([`state`], DEC-MCP-5); a
//! session's `GET /mcp/` stream carries `notifications/resources/updated`. Requests without a
//! session stay stateless.

pub mod resources;
pub mod state;

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};

use super::auth::{self, Bearer, Denial};
use super::jsonrpc::{self, code};
use super::rest::{read_body, rpc_body_error};
use super::{one_line, random_task, App, HostFailure, ReadError, MCP_BODY, POST_DEADLINE};
use crate::authority::session::Session;
use crate::broker::handlers::approval::NoTerminal;
use crate::coordinator::invoke::{
    self, visible, Call, Committed, HostConfig, InvokeError, Observer, Step, Surface,
};
use crate::store::{Store, WriteOptions};
use crate::transitions::pins::StorePins;
use crate::transitions::publish::read_head;
use crate::transitions::registry::{mcp_decode, Descriptor, MCP_NAME_MAX_BYTES};

/// The modern protocol version.
pub const MODERN: &str = "2026-07-28";
/// Legacy protocol versions, newest first.
pub const LEGACY: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];
/// The `_meta` key carrying the modern protocol version.
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` keys every modern request carries.
pub const META_REQUIRED: [&str; 3] = [
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/clientInfo",
];
/// The per-caller cache scope token of modern `tools/list` (the view is per session).
pub const CACHE_SCOPE: &str = "private";

/// The protocol era of one POST (DEC-MCP-1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Era {
    /// A legacy version (the header value, or `2025-03-26` when absent).
    Legacy(String),
    /// 2026-07-28.
    Modern,
    /// Header and `_meta` disagree (`-32020`).
    Mismatch(String),
    /// An unknown version (`-32022`).
    Unsupported(String),
}

fn meta_version(msg: &Value) -> Option<&str> {
    msg.get("params")?.get("_meta")?.get(META_VERSION)?.as_str()
}

/// Select the era from the `MCP-Protocol-Version` header and the body (surfaces.md §5.1).
pub fn select_era(header_version: Option<&str>, body: &Value) -> Era {
    if body.get("method").and_then(Value::as_str) == Some("initialize") {
        return Era::Legacy(
            header_version
                .filter(|h| LEGACY.contains(h))
                .unwrap_or("2025-03-26")
                .to_string(),
        );
    }
    let meta = if body.is_object() {
        meta_version(body)
    } else {
        None
    };
    match (header_version, meta) {
        (Some(h), Some(m)) if h != m => Era::Mismatch(format!(
            "MCP-Protocol-Version header {h:?} does not match _meta protocolVersion {m:?}"
        )),
        (_, Some(m)) if m == MODERN => Era::Modern,
        (_, Some(m)) => Era::Unsupported(m.to_string()),
        (Some(h), None) if h == MODERN => Era::Modern,
        (Some(h), None) if LEGACY.contains(&h) => Era::Legacy(h.to_string()),
        (None, None) => Era::Legacy("2025-03-26".into()),
        (Some(h), None) => Era::Unsupported(h.to_string()),
    }
}

/// What served the tools: the daemon (shared writer) or a stdio process (store per request).
pub enum Backend {
    /// `world serve`.
    Http(Arc<App>),
    /// `world mcp`.
    Stdio(Box<StdioBackend>),
}

/// The store and host configuration of `world mcp`.
pub struct StdioBackend {
    /// The store.
    pub db: PathBuf,
    /// `--wait-lock` for each request's writer open.
    pub wait_lock: Option<std::time::Duration>,
    /// The host configuration every request's invocation borrows.
    pub host: HostConfig,
}

/// Why the tool list could not be read (logged to stderr; the client sees "internal store
/// failure").
#[derive(Debug, thiserror::Error)]
enum DescriptorsError {
    /// The daemon's read failed.
    #[error("{0:?}")]
    Http(ReadError),
    /// The store did not open for reading.
    #[error(transparent)]
    Open(#[from] crate::store::Error),
    /// The transition registry's head does not read.
    #[error(transparent)]
    Registry(#[from] crate::transitions::publish::PublishError),
}

impl Backend {
    async fn descriptors(&self) -> Result<Vec<Descriptor>, DescriptorsError> {
        match self {
            Backend::Http(app) => app.descriptors().await.map_err(DescriptorsError::Http),
            Backend::Stdio(s) => {
                let store = Store::open_read(&s.db)?;
                Ok(read_head(store.conn())?
                    .map(|h| h.revision.entries)
                    .unwrap_or_default())
            }
        }
    }

    /// Run `f` on a read-only store: the daemon's pool, or a fresh open (stdio).
    async fn read<T, F>(&self, f: F) -> Result<T, String>
    where
        T: Send + 'static,
        F: Fn(&Store) -> Result<T, crate::store::Error> + Send + 'static,
    {
        match self {
            Backend::Http(app) => app
                .read(move |s| f(s).map_err(|e| ReadError::Store(e.to_string())))
                .await
                .map_err(|e| format!("{e:?}")),
            Backend::Stdio(s) => Store::open_read(&s.db)
                .and_then(|st| f(&st))
                .map_err(|e| e.to_string()),
        }
    }

    async fn invoke(
        &self,
        call: Call,
        deadline: Instant,
        observer: Option<Arc<dyn Observer>>,
    ) -> Result<Committed, HostFailure> {
        match self {
            Backend::Http(app) => app.invoke_observed(call, deadline, observer).await,
            Backend::Stdio(s) => {
                let mut store = Store::open_write(
                    &s.db,
                    WriteOptions {
                        create: false,
                        wait_lock: s.wait_lock,
                    },
                )
                .map_err(|e| HostFailure::Invoke(InvokeError::Store(e)))?;
                let pins = StorePins::for_db(&s.db);
                // The MCP client owns the terminal: approvals stay pending for
                // `world approval decide` (between calls the lock is free).
                let mut host = s.host.host(&pins, Some(Arc::new(NoTerminal)));
                host.observer = observer;
                invoke::invoke(&mut store, &call, &host).map_err(HostFailure::Invoke)
            }
        }
    }
}

/// The answer to one JSON-RPC request, before framing.
#[derive(Debug)]
pub enum Reply {
    /// A result.
    Ok(Value),
    /// A protocol error.
    Err {
        /// JSON-RPC code.
        code: i64,
        /// Message.
        message: String,
        /// Optional data.
        data: Option<Value>,
    },
    /// A legacy-era host failure (whole-POST `-32603`).
    Host(HostFailure, String),
    /// A session denial.
    Denied(Denial),
}

fn err(code: i64, message: impl Into<String>) -> Reply {
    Reply::Err {
        code,
        message: message.into(),
        data: None,
    }
}

/// A JSON-RPC response object.
pub fn response(id: &Value, reply: &Reply) -> Value {
    match reply {
        Reply::Ok(v) => jsonrpc::result(id, v.clone()),
        Reply::Err {
            code,
            message,
            data,
        } => jsonrpc::error(id, *code, message, data.clone()),
        Reply::Host(f, inv) => jsonrpc::error(
            id,
            code::INTERNAL_ERROR,
            f.legacy_message(),
            Some(f.data(inv)),
        ),
        Reply::Denied(d) => jsonrpc::error(id, code::SESSION_DENIED, d.message(), None),
    }
}

/// A caller: the token and its session resolved for this request.
#[derive(Clone)]
pub struct Caller {
    /// The 64-hex token.
    pub token: String,
    /// The live session.
    pub session: Session,
}

/// One tool object: `name`, `title`, `description`, `inputSchema` (a schema without a
/// top-level `type` gains `"type":"object"`).
pub fn tool_json(d: &Descriptor) -> Value {
    let mut schema = d.input_schema.to_json();
    if let Value::Object(m) = &mut schema {
        if !m.contains_key("type") {
            m.insert("type".into(), Value::String("object".into()));
        }
    }
    json!({"name": d.mcp_name(), "title": d.title, "description": d.description, "inputSchema": schema})
}

fn surface_refused(all: &[Descriptor]) -> Option<Reply> {
    if all.iter().any(|d| d.mcp_name().len() > MCP_NAME_MAX_BYTES) {
        Some(err(
            code::INTERNAL_ERROR,
            "tool surface refused: a tool name exceeds 64 bytes",
        ))
    } else {
        None
    }
}

/// A request message split into its parts, or the reason it is not one.
enum Msg<'a> {
    Request {
        id: &'a Value,
        method: &'a str,
        params: Option<&'a Value>,
    },
    Notification,
    Invalid(Value),
}

fn classify(msg: &Value) -> Msg<'_> {
    let Some(obj) = msg.as_object() else {
        return Msg::Invalid(Value::Null);
    };
    let id = obj.get("id");
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Msg::Invalid(id.cloned().unwrap_or(Value::Null));
    }
    let Some(method) = obj.get("method") else {
        if obj.contains_key("result") || obj.contains_key("error") {
            return Msg::Notification;
        }
        return Msg::Invalid(id.cloned().unwrap_or(Value::Null));
    };
    let Some(method) = method.as_str() else {
        return Msg::Invalid(id.cloned().unwrap_or(Value::Null));
    };
    match id {
        None => Msg::Notification,
        Some(id @ (Value::String(_) | Value::Number(_))) => Msg::Request {
            id,
            method,
            params: obj.get("params"),
        },
        Some(other) => Msg::Invalid(other.clone()),
    }
}

/// What one request carries besides its params: its MCP session (HTTP, legacy era) and the
/// observer of a `tools/call` whose steps go out as notifications on the request's stream.
#[derive(Clone, Default)]
pub struct Extras {
    /// The request's session (`Mcp-Session-Id`), if it named one.
    pub session: Option<Arc<state::Session>>,
    /// Told each step of a `tools/call` ([`Notifier`]).
    pub observer: Option<Arc<dyn Observer>>,
}

/// Sends a call's steps as `notifications/progress` (when the caller gave a `progressToken`)
/// and `notifications/message` (when the session's `logging/setLevel` lets them through) on
/// the request's SSE stream.
pub struct Notifier {
    app: Arc<App>,
    stream: String,
    session: Option<Arc<state::Session>>,
    token: Option<Value>,
    total: std::sync::Mutex<Option<u64>>,
}

impl Observer for Notifier {
    fn step(&self, step: &Step) {
        let mut total = self.total.lock().unwrap_or_else(|e| e.into_inner());
        let (progress, message, level, data) = match step {
            Step::Admitted {
                invocation_id,
                transition,
            } => (
                1,
                format!("admitted: {transition} as {invocation_id}"),
                "info",
                json!({"step": "admitted", "invocationId": invocation_id, "transition": transition}),
            ),
            Step::Planned { effects } => {
                *total = Some(*effects as u64 + 3);
                (
                    2,
                    format!("planned {effects} effect(s)"),
                    "info",
                    json!({"step": "planned", "effects": effects}),
                )
            }
            Step::EffectDispatched {
                index,
                total: n,
                effect,
                scope,
            } => (
                2 + *index as u64,
                format!("effect {index}/{n} dispatched: {effect} ({scope})"),
                "info",
                json!({"step": "effect dispatched", "index": index, "of": n, "effect": effect, "scope": scope}),
            ),
            Step::Committed {
                entry_index,
                world_ref,
            } => {
                let t = total.unwrap_or(2);
                *total = Some(t);
                (
                    t,
                    format!("committed at entry {entry_index}"),
                    "notice",
                    json!({"step": "committed", "entryIndex": entry_index, "worldRef": world_ref}),
                )
            }
        };
        if let Some(tok) = &self.token {
            let mut p = json!({"progressToken": tok, "progress": progress, "message": message});
            if let Some(t) = *total {
                p["total"] = json!(t);
            }
            self.app.mcp.push(
                &self.stream,
                &json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": p}),
            );
        }
        if self.session.as_ref().is_some_and(|s| s.wants(level)) {
            self.app
                .mcp
                .push(&self.stream, &state::log_message(level, data));
        }
    }
}

/// The capabilities a server advertises: resources everywhere; over HTTP in the legacy era
/// also logging and resource subscriptions (they need a session and its `GET` stream).
fn capabilities(backend: &Backend, modern: bool) -> Value {
    let http_legacy = matches!(backend, Backend::Http(_)) && !modern;
    let mut c = json!({
        "tools": {"listChanged": false},
        "resources": {"subscribe": http_legacy, "listChanged": false},
    });
    if http_legacy {
        c["logging"] = json!({});
    }
    c
}

fn resource_not_found(uri: &str) -> Reply {
    Reply::Err {
        code: code::RESOURCE_NOT_FOUND,
        message: format!("resource not found: {uri:?}"),
        data: Some(json!({"uri": uri})),
    }
}

fn uri_param(params: Option<&Value>) -> Option<String> {
    params
        .and_then(|p| p.get("uri"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn bad_uri() -> Reply {
    err(code::INVALID_PARAMS, "invalid params: uri must be a string")
}

fn store_failure() -> Reply {
    err(code::INTERNAL_ERROR, "internal store failure")
}

fn needs_session(method: &str) -> Reply {
    err(
        code::INVALID_PARAMS,
        format!("invalid params: {method} needs an MCP session: send initialize and pass its Mcp-Session-Id header"),
    )
}

/// The resource's text (`Ok(None)`: not this session's); `Err(())` a failed read (logged).
async fn read_resource(backend: &Backend, episode: &str, uri: &str) -> Result<Option<String>, ()> {
    let (ep, u) = (episode.to_string(), uri.to_string());
    backend
        .read(move |s| resources::read(s, &ep, &u))
        .await
        .map_err(|e| eprintln!("world: serve: mcp resources/read: {}", one_line(&e)))
}

/// Dispatch one request in an era. `modern` selects the 2026-07-28 method set and result
/// shapes.
pub async fn dispatch(
    backend: &Backend,
    caller: &Caller,
    modern: bool,
    method: &str,
    params: Option<&Value>,
    deadline: Instant,
    extras: &Extras,
) -> Reply {
    let now = super::now();
    if modern {
        let meta = params
            .and_then(|p| p.get("_meta"))
            .and_then(Value::as_object);
        for k in META_REQUIRED {
            if meta.is_none_or(|m| !m.contains_key(k)) {
                return err(
                    code::INVALID_PARAMS,
                    format!("invalid params: _meta must carry {k:?}"),
                );
            }
        }
    }
    match (method, modern) {
        ("initialize", false) => {
            let asked = params
                .and_then(|p| p.get("protocolVersion"))
                .and_then(Value::as_str);
            let version = asked.filter(|v| LEGACY.contains(v)).unwrap_or(LEGACY[0]);
            Reply::Ok(json!({
                "protocolVersion": version,
                "capabilities": capabilities(backend, false),
                "serverInfo": {"name": "world", "title": "world", "version": env!("CARGO_PKG_VERSION")},
            }))
        }
        ("ping", false) => Reply::Ok(json!({})),
        // DEC-MCP-4: the fields the 2026-07-28 revision requires, the identity under `_meta`.
        ("server/discover", true) => Reply::Ok(json!({
            "resultType": "complete",
            "supportedVersions": [MODERN, LEGACY[0], LEGACY[1], LEGACY[2]],
            "capabilities": capabilities(backend, true),
            "ttlMs": 0,
            "cacheScope": CACHE_SCOPE,
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "world", "title": "world", "version": env!("CARGO_PKG_VERSION")}},
        })),
        ("tools/list", _) => {
            let all = match backend.descriptors().await {
                Ok(a) => a,
                Err(e) => {
                    eprintln!("world: serve: mcp tools/list: {}", one_line(&e.to_string()));
                    return err(code::INTERNAL_ERROR, "internal store failure");
                }
            };
            if let Some(r) = surface_refused(&all) {
                return r;
            }
            let tools: Vec<Value> = visible(&all, &caller.session.grants, now)
                .iter()
                .map(tool_json)
                .collect();
            if modern {
                Reply::Ok(
                    json!({"resultType": "complete", "tools": tools, "ttlMs": 0, "cacheScope": CACHE_SCOPE}),
                )
            } else {
                Reply::Ok(json!({ "tools": tools }))
            }
        }
        ("tools/call", _) => {
            call_tool(backend, caller, modern, params, deadline, now, extras).await
        }
        ("logging/setLevel", false) => {
            let Some(session) = &extras.session else {
                return needs_session(method);
            };
            let level = params
                .and_then(|p| p.get("level"))
                .and_then(Value::as_str)
                .and_then(state::level_rank);
            match level {
                Some(l) => {
                    *session.level.lock().unwrap_or_else(|e| e.into_inner()) = Some(l);
                    Reply::Ok(json!({}))
                }
                None => err(
                    code::INVALID_PARAMS,
                    format!(
                        "invalid params: level must be one of {}",
                        state::LEVELS.join(", ")
                    ),
                ),
            }
        }
        ("resources/templates/list", _) => {
            let mut r = json!({"resourceTemplates": resources::templates()});
            if modern {
                r["resultType"] = Value::String("complete".into());
            }
            Reply::Ok(r)
        }
        ("resources/list", _) => {
            let after = match params.and_then(|p| p.get("cursor")) {
                None | Some(Value::Null) => None,
                Some(c) => match c
                    .as_str()
                    .and_then(|c| c.strip_prefix('e'))
                    .and_then(|n| n.parse::<i64>().ok())
                {
                    Some(n) => Some(n),
                    None => {
                        return err(
                            code::INVALID_PARAMS,
                            "invalid params: cursor is not one this server returned",
                        )
                    }
                },
            };
            let ep = caller.session.episode.clone();
            match backend.read(move |s| resources::list(s, &ep, after)).await {
                Ok((list, next)) => {
                    let mut r = json!({"resources": list});
                    if let Some(n) = next {
                        r["nextCursor"] = Value::String(format!("e{n}"));
                    }
                    if modern {
                        r["resultType"] = Value::String("complete".into());
                    }
                    Reply::Ok(r)
                }
                Err(e) => {
                    eprintln!("world: serve: mcp resources/list: {}", one_line(&e));
                    err(code::INTERNAL_ERROR, "internal store failure")
                }
            }
        }
        ("resources/read", _) => {
            let Some(uri) = uri_param(params) else {
                return bad_uri();
            };
            match read_resource(backend, &caller.session.episode, &uri).await {
                Ok(Some(text)) => {
                    let mut r = json!({"contents": [{"uri": uri, "mimeType": resources::MIME, "text": text}]});
                    if modern {
                        r["resultType"] = Value::String("complete".into());
                    }
                    Reply::Ok(r)
                }
                Ok(None) => resource_not_found(&uri),
                Err(()) => store_failure(),
            }
        }
        ("resources/subscribe" | "resources/unsubscribe", false) => {
            let Some(session) = &extras.session else {
                return needs_session(method);
            };
            let Some(uri) = uri_param(params) else {
                return bad_uri();
            };
            let mut subs = session
                .subscriptions
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if method == "resources/unsubscribe" {
                subs.remove(&uri);
                return Reply::Ok(json!({}));
            }
            drop(subs);
            match read_resource(backend, &caller.session.episode, &uri).await {
                Ok(Some(_)) => {
                    session
                        .subscriptions
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(uri);
                    Reply::Ok(json!({}))
                }
                Ok(None) => resource_not_found(&uri),
                Err(()) => store_failure(),
            }
        }
        _ => err(
            code::METHOD_NOT_FOUND,
            format!("method not found: {method:?}"),
        ),
    }
}

async fn call_tool(
    backend: &Backend,
    caller: &Caller,
    modern: bool,
    params: Option<&Value>,
    deadline: Instant,
    now: i64,
    extras: &Extras,
) -> Reply {
    let Some(p) = params.and_then(Value::as_object) else {
        return err(
            code::INVALID_PARAMS,
            "invalid params: params must be an object",
        );
    };
    let Some(name) = p.get("name").and_then(Value::as_str) else {
        return err(
            code::INVALID_PARAMS,
            "invalid params: name must be a string",
        );
    };
    let args = match p.get("arguments") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v @ Value::Object(_)) => v.clone(),
        Some(_) => {
            return err(
                code::INVALID_PARAMS,
                "invalid params: arguments must be a JSON object",
            )
        }
    };
    let unknown = || err(code::INVALID_PARAMS, format!("unknown tool {name:?}"));
    let all = match backend.descriptors().await {
        Ok(a) => a,
        Err(e) => {
            eprintln!("world: serve: mcp tools/call: {}", one_line(&e.to_string()));
            return err(code::INTERNAL_ERROR, "internal store failure");
        }
    };
    if let Some(r) = surface_refused(&all) {
        return r;
    }
    let Ok(id) = mcp_decode(name) else {
        return unknown();
    };
    if !visible(&all, &caller.session.grants, now)
        .iter()
        .any(|d| d.id == id)
    {
        return unknown();
    }
    let task = random_task();
    let invocation_id = format!("mcp:{}:{}", caller.session.episode, task);
    let call = Call {
        surface: Surface::Mcp,
        token: caller.token.clone(),
        transition: id,
        args,
        task: Some(task),
        clock: super::clock(),
    };
    match backend
        .invoke(call, deadline, extras.observer.clone())
        .await
    {
        Ok(c) => {
            let structured: Value = serde_json::from_slice(&c.output).unwrap_or(Value::Null);
            let text = String::from_utf8_lossy(&c.output).into_owned();
            let mut r = json!({"content": [{"type": "text", "text": text}], "structuredContent": structured});
            if modern {
                r["resultType"] = Value::String("complete".into());
            }
            Reply::Ok(r)
        }
        Err(HostFailure::Invoke(InvokeError::NotAuthorized(_))) => unknown(),
        Err(f) => {
            let data = f.data(&invocation_id);
            let records = data["effectRecords"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let recs: Vec<&str> = records.iter().filter_map(Value::as_str).collect();
            eprintln!(
                "world: mcp refusal: tools/call {invocation_id}: {:?}",
                one_line(&format!("{} records [{}]", f.message(), recs.join(" ")))
            );
            // DEC-MCP-3: arguments failing the inputSchema are a tool error in both eras, so
            // the model sees which field was wrong (the SDKs raise on -32603 and hide it).
            let schema = matches!(&f, HostFailure::Invoke(InvokeError::InvalidCall(m))
                if m.starts_with(crate::coordinator::invoke::SCHEMA_FAILURE));
            if modern || schema {
                let mut r = json!({
                    "isError": true,
                    "content": [{"type": "text", "text": f.message()}],
                    "_meta": {"world/invocation": {"class": data["class"], "invocationId": data["invocationId"], "effectRecords": data["effectRecords"]}},
                });
                if modern {
                    r["resultType"] = Value::String("complete".into());
                }
                Reply::Ok(r)
            } else {
                Reply::Host(f, invocation_id)
            }
        }
    }
}

use super::jsonrpc::plain;

fn json_resp(status: StatusCode, v: &Value) -> Response {
    jsonrpc::json_response(status, v)
}

fn sse(v: &Value) -> Response {
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

fn rpc_error(
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

fn header_str<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

fn is_json_content(h: &HeaderMap) -> bool {
    header_str(h, "content-type")
        .and_then(|c| c.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
}

fn accepts_both(h: &HeaderMap) -> bool {
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
fn session_not_found() -> Response {
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

fn method_not_allowed() -> Response {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        [(header::ALLOW, "POST")],
        "",
    )
        .into_response()
}

/// The caller's credential id, or the 401 of §3.
async fn owner_of(app: &Arc<App>, headers: &HeaderMap) -> Result<String, Response> {
    let token = match auth::parse_bearer(headers) {
        Bearer::Absent => return Err(plain(StatusCode::UNAUTHORIZED, Denial::Absent.message())),
        Bearer::Malformed => {
            return Err(plain(StatusCode::UNAUTHORIZED, Denial::Malformed.message()))
        }
        Bearer::Token(t) => t,
    };
    match app.session(token.clone(), super::now()).await {
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
    let session = match app.session(token.clone(), super::now()).await {
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
struct LegacyCx<'a> {
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
fn sse_body(body: axum::body::Body) -> Response {
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
fn sse_answer(lc: &LegacyCx<'_>, v: &Value) -> Response {
    if !lc.primed() {
        return sse(v);
    }
    let (sid, _rx) = lc.app.mcp.open_stream(&lc.owner, true);
    lc.app.mcp.push(&sid, v);
    lc.app.mcp.finish(&sid);
    sse_body(axum::body::Body::from(lc.app.mcp.body_of(&sid)))
}

async fn legacy_post(
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
fn progress_token(params: Option<&Value>) -> Option<Value> {
    params?
        .get("_meta")?
        .get("progressToken")
        .filter(|t| t.is_string() || t.is_number())
        .cloned()
}

/// Does this `tools/call` stream its steps (a progress token, or a session with a log level)?
fn live(lc: &LegacyCx<'_>, params: Option<&Value>) -> bool {
    progress_token(params).is_some()
        || lc
            .session
            .as_ref()
            .is_some_and(|s| s.level.lock().is_ok_and(|l| l.is_some()))
}

/// A `tools/call` answered on a live stream: the call's progress and log notifications as they
/// happen, then its answer (a host failure too, as an event: the headers are sent). The call
/// runs to its end even if the client leaves; a primed stream can then be resumed.
fn live_call(
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
fn initialized(lc: &LegacyCx<'_>, id: &Value, v: Value) -> Response {
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
struct SseBody(tokio::sync::mpsc::UnboundedReceiver<axum::body::Bytes>);

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

async fn modern_post(
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

/// Largest stdio line in bytes (4 MiB, the MCP body limit).
pub const STDIO_LINE: usize = MCP_BODY;

/// Serve MCP on `input`/`output`: one JSON-RPC message per line, one response line per
/// request (none for notifications). The session is resolved again for every request (a
/// revoked token stops working at once); the store is opened per request, so other CLI
/// writers can run between requests. A line over [`STDIO_LINE`] answers a `-32600` error
/// and the server keeps reading. Returns at end of input.
///
/// # Errors
/// I/O errors on `input` or `output`.
pub fn serve_stdio(
    backend: StdioBackend,
    token: &str,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> std::io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let backend = Backend::Stdio(Box::new(backend));
    loop {
        let mut line = Vec::new();
        let n =
            std::io::Read::take(&mut *input, STDIO_LINE as u64 + 1).read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(());
        }
        if line.len() > STDIO_LINE && !line.ends_with(b"\n") {
            // Discard the rest of the oversized line.
            let mut sink = Vec::new();
            loop {
                sink.clear();
                let m = std::io::Read::take(&mut *input, 65536).read_until(b'\n', &mut sink)?;
                if m == 0 || sink.ends_with(b"\n") {
                    break;
                }
            }
            let v = response(
                &Value::Null,
                &err(
                    code::INVALID_REQUEST,
                    format!("message is over {STDIO_LINE} bytes"),
                ),
            );
            writeln!(output, "{v}")?;
            output.flush()?;
            continue;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let reply = rt.block_on(stdio_message(&backend, token, &line));
        if let Some(v) = reply {
            writeln!(output, "{v}")?;
            output.flush()?;
        }
    }
}

async fn stdio_message(backend: &Backend, token: &str, line: &[u8]) -> Option<Value> {
    let deadline = Instant::now() + POST_DEADLINE;
    let body: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            return Some(response(
                &Value::Null,
                &err(-32700, format!("parse error: {e}")),
            ))
        }
    };
    let read_id = body.get("id").cloned().unwrap_or(Value::Null);
    let modern = match select_era(None, &body) {
        Era::Modern => true,
        Era::Legacy(_) => false,
        Era::Mismatch(m) => return Some(response(&read_id, &err(code::HEADER_MISMATCH, m))),
        Era::Unsupported(v) => {
            return Some(response(
                &read_id,
                &Reply::Err {
                    code: code::UNSUPPORTED_VERSION,
                    message: format!("unsupported protocol version {v:?}"),
                    data: Some(json!({"supported": [MODERN, LEGACY[0], LEGACY[1], LEGACY[2]]})),
                },
            ))
        }
    };
    let (id, method, params) = match classify(&body) {
        Msg::Notification => return None,
        Msg::Invalid(id) => {
            return Some(response(
                &id,
                &err(code::INVALID_REQUEST, "invalid JSON-RPC request"),
            ))
        }
        Msg::Request { id, method, params } => (id, method, params),
    };
    let Backend::Stdio(s) = backend else {
        return None;
    };
    let session = match Store::open_read(&s.db) {
        Ok(store) => auth::lookup(store.conn(), token, super::now(), s.host.unattested),
        Err(e) => Err(Denial::Unavailable(e.to_string())),
    };
    let session = match session {
        Ok(s) => s,
        Err(d) => {
            if let Some(c) = d.cause() {
                eprintln!("world: mcp: {}", one_line(c));
            }
            return Some(response(id, &Reply::Denied(d)));
        }
    };
    let caller = Caller {
        token: token.to_string(),
        session,
    };
    let r = dispatch(
        backend,
        &caller,
        modern,
        method,
        params,
        deadline,
        &Extras::default(),
    )
    .await;
    Some(response(id, &r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn era_selection() {
        let plain = json!({"jsonrpc":"2.0","id":1,"method":"tools/list"});
        let meta = json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{META_VERSION: MODERN}}});
        let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize"});
        assert_eq!(select_era(None, &plain), Era::Legacy("2025-03-26".into()));
        assert_eq!(
            select_era(Some("2025-06-18"), &plain),
            Era::Legacy("2025-06-18".into())
        );
        assert_eq!(select_era(Some(MODERN), &plain), Era::Modern);
        assert_eq!(select_era(None, &meta), Era::Modern);
        assert_eq!(select_era(Some(MODERN), &meta), Era::Modern);
        assert!(matches!(
            select_era(Some("2025-06-18"), &meta),
            Era::Mismatch(_)
        ));
        assert!(matches!(
            select_era(Some("1999-01-01"), &plain),
            Era::Unsupported(_)
        ));
        assert_eq!(
            select_era(Some(MODERN), &init),
            Era::Legacy("2025-03-26".into())
        );
    }

    #[test]
    fn classify_messages() {
        assert!(matches!(
            classify(&json!({"jsonrpc":"2.0","id":1,"method":"ping"})),
            Msg::Request { .. }
        ));
        assert!(matches!(
            classify(&json!({"jsonrpc":"2.0","method":"notifications/initialized"})),
            Msg::Notification
        ));
        assert!(matches!(
            classify(&json!({"jsonrpc":"2.0","id":1,"result":{}})),
            Msg::Notification
        ));
        assert!(matches!(
            classify(&json!({"jsonrpc":"1.0","id":1,"method":"ping"})),
            Msg::Invalid(_)
        ));
        assert!(matches!(
            classify(&json!({"jsonrpc":"2.0","id":{},"method":"ping"})),
            Msg::Invalid(_)
        ));
        assert!(matches!(classify(&json!(5)), Msg::Invalid(_)));
    }

    #[test]
    fn accept_and_content_type() {
        let mut h = HeaderMap::new();
        h.insert(
            header::ACCEPT,
            "application/json, text/event-stream".parse().unwrap(),
        );
        h.insert(
            header::CONTENT_TYPE,
            "application/json; charset=utf-8".parse().unwrap(),
        );
        assert!(accepts_both(&h));
        assert!(is_json_content(&h));
        h.insert(header::ACCEPT, "application/json".parse().unwrap());
        assert!(!accepts_both(&h));
    }
}
