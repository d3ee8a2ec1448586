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

mod http;
pub mod resources;
pub mod state;

pub use http::{delete, get, post};

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
use crate::broker::handlers::approval::NoTerminal;
use crate::ops::invoke::{
    self, visible, Call, Committed, HostConfig, InvokeError, Observer, Step, Surface,
};
use crate::ops::session::Session;
use crate::store::read::Store;
use crate::store::WriteOptions;
use crate::transitions::pins::StorePins;
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
    Open(#[from] crate::store::read::Error),
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
                Ok(crate::ops::publish::registry_head(&store)?
                    .map(|h| h.revision.entries)
                    .unwrap_or_default())
            }
        }
    }

    /// Run `f` on a read-only store: the daemon's pool, or a fresh open (stdio).
    async fn read<T, F>(&self, f: F) -> Result<T, String>
    where
        T: Send + 'static,
        F: Fn(&Store) -> Result<T, crate::store::read::Error> + Send + 'static,
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
        ("tools/list", _) => list_tools(backend, caller, modern, now).await,
        ("tools/call", _) => {
            call_tool(backend, caller, modern, params, deadline, now, extras).await
        }
        ("logging/setLevel", false) => set_level(method, params, extras),
        ("resources/templates/list", _) => {
            let mut r = json!({"resourceTemplates": resources::templates()});
            if modern {
                r["resultType"] = Value::String("complete".into());
            }
            Reply::Ok(r)
        }
        ("resources/list", _) => list_resources(backend, caller, modern, params).await,
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
            subscribe(backend, caller, method, params, extras).await
        }
        _ => err(
            code::METHOD_NOT_FOUND,
            format!("method not found: {method:?}"),
        ),
    }
}

/// `tools/list`: the tools this caller's grants make visible (both eras).
async fn list_tools(backend: &Backend, caller: &Caller, modern: bool, now: i64) -> Reply {
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

/// `logging/setLevel` (legacy era): the session's notification threshold.
fn set_level(method: &str, params: Option<&Value>, extras: &Extras) -> Reply {
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

/// `resources/list`: the episode's resources after the `cursor` (`e<N>`) one page at a time.
async fn list_resources(
    backend: &Backend,
    caller: &Caller,
    modern: bool,
    params: Option<&Value>,
) -> Reply {
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

/// `resources/subscribe` and `resources/unsubscribe` (legacy era): a resource must exist to be
/// subscribed to; unsubscribing always succeeds.
async fn subscribe(
    backend: &Backend,
    caller: &Caller,
    method: &str,
    params: Option<&Value>,
    extras: &Extras,
) -> Reply {
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
                if m.starts_with(crate::ops::invoke::SCHEMA_FAILURE));
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
        Ok(store) => auth::lookup(&store, token, super::now(), s.host.unattested),
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
    use super::http::{accepts_both, is_json_content};
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
