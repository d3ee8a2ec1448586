//! One send path for the three wires (legacy `tasks/send`, v0.3 `message/send`, v1.0
//! `SendMessage`): parse the message, decide what to run, run it under the writer with the
//! task row written around the invocation, answer in the wire's form.
//!
//! **Structured call** — a new message naming `metadata.skill_id` with its input as a data part
//! (or JSON text): the reference's behaviour; a failure is a JSON-RPC error
//! (surfaces.md §6.2). **Conversation** — a message without a skill id, or a follow-up to a
//! task waiting for input: routed when the session sees exactly one skill, or when the input
//! (a data part or text that parses as a JSON object) fits exactly one skill's input schema;
//! otherwise the task waits in `TASK_STATE_INPUT_REQUIRED` with a message naming the skills
//! and how to name one (DEC-A2A-6). A failure in a conversation is a task state.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Map, Value};

use super::super::{one_line, App, HostFailure};
use super::task::{self, state, Task};
use super::{card, read_task, render, Cx, RpcError, Wire};
use crate::ops::invoke::{
    self, valid_task, validate_input, visible, Call, Committed, InvokeError, Surface,
};
use crate::serve::jsonrpc::code;
use crate::store::a2a_tasks::{self, TaskRow};
use crate::store::read::ReceiptState;
use crate::transitions::registry::Descriptor;

/// Now in Unix milliseconds (the daemon's clock).
pub fn now_ms() -> i64 {
    i64::try_from(super::super::clock().now_ms()).unwrap_or(i64::MAX)
}

/// The longest client `contextId` kept (bytes).
pub const MAX_CONTEXT_ID: usize = 256;

/// One part of an incoming message.
#[derive(Clone, Debug, PartialEq)]
enum PartIn {
    Text(String),
    Data(Value),
    /// A file, URL or raw-bytes part: `world` reads JSON and text only.
    File,
}

/// An incoming message, any wire.
#[derive(Clone, Debug)]
struct Incoming {
    message_id: String,
    task_id: Option<String>,
    context_id: Option<String>,
    parts: Vec<PartIn>,
    skill: Option<String>,
    transition_fn: Option<String>,
    /// `configuration.historyLength`.
    history: Option<usize>,
    /// `configuration.returnImmediately`.
    return_immediately: bool,
    /// The message in the v1.0 form, as the task's history keeps it.
    message: Value,
}

impl Incoming {
    /// The input a skill would get: the one data part holding an object, else the text parts
    /// (joined) when they parse as a JSON object.
    fn input(&self) -> Option<Value> {
        let data: Vec<&Value> = self
            .parts
            .iter()
            .filter_map(|p| match p {
                PartIn::Data(v) => Some(v),
                _ => None,
            })
            .collect();
        if let [one] = data.as_slice() {
            return one.is_object().then(|| (*one).clone());
        }
        if !data.is_empty() {
            return None;
        }
        let text: Vec<&str> = self
            .parts
            .iter()
            .filter_map(|p| match p {
                PartIn::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        serde_json::from_str::<Value>(text.join("\n").trim())
            .ok()
            .filter(Value::is_object)
    }

    /// A structured call: a new message naming its skill, its input a JSON object.
    fn structured(&self) -> bool {
        self.task_id.is_none() && self.skill.is_some() && self.input().is_some()
    }
}

fn str_of<'a>(m: &'a Map<String, Value>, k: &str) -> Result<Option<&'a str>, RpcError> {
    match m.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(RpcError::params(format!("{k} must be a string"))),
    }
}

/// `skill_id` / `transition_fn` from `params.metadata`, else `message.metadata`.
fn skill_meta(
    params: &Map<String, Value>,
    msg: &Map<String, Value>,
) -> Result<(Option<String>, Option<String>), RpcError> {
    for meta in [params.get("metadata"), msg.get("metadata")]
        .into_iter()
        .flatten()
    {
        let Some(m) = meta.as_object() else {
            if meta.is_null() {
                continue;
            }
            return Err(RpcError::params("metadata must be an object"));
        };
        if m.contains_key("skill_id") {
            let skill = str_of(m, "skill_id")?.map(str::to_string);
            let tf = str_of(m, "transition_fn")?.map(str::to_string);
            return Ok((skill, tf));
        }
    }
    Ok((None, None))
}

/// Parse `params` of `message/send` (v0.3) or `SendMessage` (v1.0).
fn parse_message(params: &Map<String, Value>, wire: Wire) -> Result<Incoming, RpcError> {
    let msg = params
        .get("message")
        .and_then(Value::as_object)
        .ok_or_else(|| RpcError::params("params.message must be a Message object"))?;
    let message_id = str_of(msg, "messageId")?
        .ok_or_else(|| RpcError::params("message.messageId is required"))?;
    if !valid_task(message_id) {
        return Err(RpcError::params(
            "message.messageId must match [A-Za-z0-9._-]{1,128}",
        ));
    }
    let role_ok = matches!(
        (wire, msg.get("role").and_then(Value::as_str)),
        (Wire::V03, Some("user")) | (_, Some("ROLE_USER"))
    );
    if !role_ok {
        return Err(RpcError::params(match wire {
            Wire::V03 => "message.role must be \"user\"",
            _ => "message.role must be ROLE_USER",
        }));
    }
    let raw_parts = msg
        .get("parts")
        .and_then(Value::as_array)
        .filter(|p| !p.is_empty())
        .ok_or_else(|| RpcError::params("message.parts must be a non-empty array"))?;
    let mut parts = Vec::new();
    let mut v1_parts = Vec::new();
    for (i, p) in raw_parts.iter().enumerate() {
        let bad = || {
            RpcError::params(format!(
                "message.parts[{i}] is not a text, data or file part"
            ))
        };
        let o = p.as_object().ok_or_else(bad)?;
        let kind = match wire {
            Wire::V03 => o.get("kind").and_then(Value::as_str).unwrap_or(""),
            _ if o.contains_key("text") => "text",
            _ if o.contains_key("data") => "data",
            _ if ["url", "raw", "file"].iter().any(|k| o.contains_key(*k)) => "file",
            _ => "",
        };
        let part = match kind {
            "text" => PartIn::Text(
                o.get("text")
                    .and_then(Value::as_str)
                    .ok_or_else(|| {
                        RpcError::params(format!("message.parts[{i}].text must be a string"))
                    })?
                    .to_string(),
            ),
            "data" => PartIn::Data(o.get("data").cloned().ok_or_else(bad)?),
            "file" => PartIn::File,
            _ => return Err(bad()),
        };
        let mut v1 = p.clone();
        if let Some(m) = v1.as_object_mut() {
            m.remove("kind");
        }
        v1_parts.push(v1);
        parts.push(part);
    }
    let task_id = str_of(msg, "taskId")?.map(str::to_string);
    let context_id = match str_of(msg, "contextId")? {
        None => None,
        Some(c) if c.is_empty() || c.len() > MAX_CONTEXT_ID || c.chars().any(char::is_control) => {
            return Err(RpcError::params(format!(
                "message.contextId must be 1–{MAX_CONTEXT_ID} bytes without control characters"
            )))
        }
        Some(c) => Some(c.to_string()),
    };
    let (skill, transition_fn) = skill_meta(params, msg)?;
    let config = match params.get("configuration") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(c)) => c.clone(),
        Some(_) => return Err(RpcError::params("configuration must be an object")),
    };
    let history = task::history_length(config.get("historyLength"), "configuration.historyLength")?;
    let return_immediately = match config.get("returnImmediately") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(RpcError::params(
                "configuration.returnImmediately must be a boolean",
            ))
        }
    };
    let mut message = json!({"messageId": message_id, "role": "ROLE_USER", "parts": v1_parts});
    if let Some(m) = msg.get("metadata").filter(|m| m.is_object()) {
        message["metadata"] = m.clone();
    }
    Ok(Incoming {
        message_id: message_id.to_string(),
        task_id,
        context_id,
        parts,
        skill,
        transition_fn,
        history,
        return_immediately,
        message,
    })
}

/// The legacy `tasks/send` params (surfaces.md §6.2): `params.id` the task id,
/// `metadata.skill_id`, exactly one `{type:"data", data:{…}}` part.
fn parse_legacy(params: &Map<String, Value>) -> Result<Incoming, RpcError> {
    let task = str_of(params, "id")
        .ok()
        .flatten()
        .ok_or_else(|| RpcError::params("params.id must be a task id string"))?;
    if !valid_task(task) {
        return Err(RpcError::params(
            "params.id must match [A-Za-z0-9._-]{1,128}",
        ));
    }
    let meta = params
        .get("metadata")
        .and_then(Value::as_object)
        .ok_or_else(|| RpcError::params("params.metadata is required"))?;
    let skill = str_of(meta, "skill_id")
        .ok()
        .flatten()
        .ok_or_else(|| RpcError::params("metadata.skill_id must be a string"))?;
    let tf = str_of(meta, "transition_fn")
        .map_err(|_| RpcError::params("metadata.transition_fn must be a string"))?;
    let parts = params
        .get("message")
        .and_then(|m| m.get("parts"))
        .and_then(Value::as_array)
        .ok_or_else(|| RpcError::params("message.parts must be an array"))?;
    let [part] = parts.as_slice() else {
        return Err(RpcError::params("message.parts must hold exactly one part"));
    };
    if part.get("type").and_then(Value::as_str) != Some("data") {
        return Err(RpcError::params("the part must have type \"data\""));
    }
    let args = part
        .get("data")
        .filter(|d| d.is_object())
        .ok_or_else(|| RpcError::params("the data part must hold a JSON object"))?;
    Ok(Incoming {
        message_id: task.to_string(),
        task_id: None,
        context_id: None,
        parts: vec![PartIn::Data(args.clone())],
        skill: Some(skill.to_string()),
        transition_fn: tf.map(str::to_string),
        history: None,
        return_immediately: false,
        message: json!({"messageId": task, "role": "ROLE_USER", "parts": [{"data": args}]}),
    })
}

/// What to do with a message.
enum Decision {
    /// Run this skill with this input.
    Run(Box<Descriptor>, Value),
    /// Wait for the client: the text and data of the agent's message.
    Ask(String, Value),
    /// Nothing here can do it.
    Reject(String),
}

fn skill_info(d: &Descriptor) -> Value {
    let mut v = card::skill_json(d);
    v["inputSchema"] = d.input_schema.to_json();
    v
}

fn how_to_name() -> &'static str {
    "name a skill in the message's metadata.skill_id (or the request's params.metadata.skill_id) and give its input as a JSON object, in a data part or as JSON text"
}

/// Decide what a message asks for, given the skills the session sees (registry order).
fn decide(inc: &Incoming, vis: &[Descriptor]) -> Result<Decision, RpcError> {
    let input = inc.input();
    if inc.parts.contains(&PartIn::File) {
        let all: Vec<&Descriptor> = vis.iter().collect();
        return Ok(Decision::Ask(
            format!(
                "The message holds a file, URL or raw part, which this agent does not read: it reads text (text/plain) and JSON data (application/json). The skills here: {}. To run one, {}.",
                all.iter().map(|d| format!("{} ({})", d.id, d.title)).collect::<Vec<_>>().join(", "),
                how_to_name()
            ),
            json!({"skills": all.iter().map(|d| skill_info(d)).collect::<Vec<_>>(),
                   "supportedInputModes": ["text/plain", "application/json"]}),
        ));
    }
    let listing = |ds: &[&Descriptor]| -> Value {
        json!({"skills": ds.iter().map(|d| skill_info(d)).collect::<Vec<_>>()})
    };
    let names = |ds: &[&Descriptor]| -> String {
        ds.iter()
            .map(|d| format!("{} ({})", d.id, d.title))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(skill) = &inc.skill {
        let d = vis
            .iter()
            .find(|d| &d.id == skill)
            .ok_or_else(|| RpcError::new(code::INVALID_PARAMS, "not authorized"))?;
        return Ok(match input {
            Some(args) => Decision::Run(Box::new(d.clone()), args),
            None => Decision::Ask(
                format!(
                    "Skill {} takes a JSON object as its input (see its inputSchema); send it as a data part or as JSON text.",
                    d.id
                ),
                listing(&[d]),
            ),
        });
    }
    let all: Vec<&Descriptor> = vis.iter().collect();
    match (all.as_slice(), input) {
        ([], _) => Ok(Decision::Reject(
            "This session sees no skills: its grants allow none of the published transitions.".into(),
        )),
        ([one], Some(args)) => Ok(Decision::Run(Box::new((*one).clone()), args)),
        ([one], None) => Ok(Decision::Ask(
            format!(
                "The one skill here is {}: it takes a JSON object as its input (see its inputSchema); send it as a data part or as JSON text.",
                names(&[one])
            ),
            listing(&[one]),
        )),
        (_, Some(args)) => {
            let fits: Vec<&Descriptor> = all
                .iter()
                .copied()
                .filter(|d| validate_input(&d.input_schema, &args).is_ok())
                .collect();
            Ok(match fits.as_slice() {
                [one] => Decision::Run(Box::new((*one).clone()), args),
                [] => Decision::Ask(
                    format!(
                        "The input fits none of the skills here: {}. To run one, {}.",
                        names(&all),
                        how_to_name()
                    ),
                    listing(&all),
                ),
                several => Decision::Ask(
                    format!(
                        "The input fits several skills: {}. To run one, {}.",
                        names(several),
                        how_to_name()
                    ),
                    listing(several),
                ),
            })
        }
        (_, None) => Ok(Decision::Ask(
            format!(
                "Which skill should run? The skills here: {}. To run one, {}.",
                names(&all),
                how_to_name()
            ),
            listing(&all),
        )),
    }
}

/// The skills the session sees now.
async fn visible_skills(cx: &Cx<'_>) -> Result<Vec<Descriptor>, RpcError> {
    let all = cx
        .app
        .descriptors()
        .await
        .map_err(|e| RpcError::internal("skills", e))?;
    Ok(visible(&all, &cx.session.grants, super::super::now()))
}

fn task_of_row(row: &TaskRow, st: &'static str) -> Task {
    Task {
        id: row.task_id.clone(),
        context_id: row.context_id.clone(),
        state: st,
        updated_ms: Some(row.updated_ms),
        status_message: row
            .status_message_json
            .as_deref()
            .and_then(|m| serde_json::from_str(m).ok()),
        history: serde_json::from_str(&row.history_json).unwrap_or_default(),
        artifacts: None,
        metadata: json!({}),
        row: Some(row.clone()),
    }
}

fn push_history(row: &mut TaskRow, m: &Value) {
    let mut h: Vec<Value> = serde_json::from_str(&row.history_json).unwrap_or_default();
    h.push(m.clone());
    row.history_json = Value::Array(h).to_string();
}

/// The user's message as the task keeps it: with the task's id and context.
fn stamped(inc: &Incoming, task_id: &str, context_id: &str) -> Value {
    let mut m = inc.message.clone();
    m["taskId"] = Value::String(task_id.into());
    m["contextId"] = Value::String(context_id.into());
    m
}

/// Write `row` (the writer, FIFO).
async fn write_row(cx: &Cx<'_>, row: TaskRow) -> Result<TaskRow, RpcError> {
    cx.app
        .with_writer(cx.deadline, move |_, store| a2a_tasks::put(store, &row))
        .await
        .map_err(|f| RpcError::new(code::INTERNAL_ERROR, f.message()))?
        .map_err(|e| RpcError::internal("task row", e))
}

/// How a run ended.
enum Ran {
    /// Committed.
    Done(Committed, TaskRow),
    /// Failed; the row as left (its state says what the task is now), the receipt state.
    Failed(HostFailure, Option<TaskRow>, ReceiptState),
}

/// Run `skill` for the task of `row` under the writer: the row (`WORKING`, invoked) before the
/// invocation, `COMPLETED` after it; on a failure with nothing durable the row is deleted
/// (`keep_on_failure` false: a new structured call, which answers a JSON-RPC error) or set to
/// the state the failure leaves the conversation in. An indeterminate call keeps `WORKING`.
async fn run(
    cx: &Cx<'_>,
    row: TaskRow,
    skill: &Descriptor,
    args: Value,
    keep_on_failure: bool,
) -> Result<Ran, HostFailure> {
    run_as(
        cx.app,
        cx.token,
        cx.deadline,
        row,
        skill,
        args,
        keep_on_failure,
    )
    .await
}

/// [`run`] with owned pieces of the request (a background run outlives it): the daemon, the
/// session's bearer, and the deadline for the writer queue.
async fn run_as(
    app: &Arc<App>,
    token: &str,
    deadline: Instant,
    row: TaskRow,
    skill: &Descriptor,
    args: Value,
    keep_on_failure: bool,
) -> Result<Ran, HostFailure> {
    let key = row
        .task_id
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .to_string();
    let call = Call {
        surface: Surface::A2a,
        token: token.to_string(),
        transition: skill.id.clone(),
        args,
        task: Some(key),
        clock: super::super::clock(),
    };
    let task_id = row.task_id.clone();
    if let Ok(mut s) = app.a2a_inflight.lock() {
        s.insert(task_id.clone());
    }
    let r = app
        .with_writer(deadline, move |app, store| {
            let mut row = row;
            row.state = state::WORKING.into();
            row.invoked = true;
            row.status_message_json = None;
            row.updated_ms = now_ms();
            if let Err(e) = a2a_tasks::put(store, &row) {
                return Ran::Failed(
                    HostFailure::Invoke(InvokeError::Store(e)),
                    None,
                    ReceiptState::NotStarted,
                );
            }
            match app.run_invocation(store, &call, None) {
                Ok(c) => {
                    row.state = state::COMPLETED.into();
                    row.updated_ms = now_ms();
                    match a2a_tasks::put(store, &row) {
                        Ok(r) => row = r,
                        Err(e) => eprintln!(
                            "world: serve: a2a task row {}: {}",
                            row.task_id,
                            one_line(&e.to_string())
                        ),
                    }
                    Ran::Done(c, row)
                }
                Err(f) => {
                    let rs = invoke::receipt(store, &row.task_id)
                        .map(|r| r.state)
                        .unwrap_or(ReceiptState::Indeterminate);
                    if rs != ReceiptState::NotStarted {
                        return Ran::Failed(f, Some(row), rs);
                    }
                    if !keep_on_failure {
                        let _ = a2a_tasks::delete(store, &row.task_id);
                        return Ran::Failed(f, None, rs);
                    }
                    let (st, text) = failure_state(&f);
                    row.state = st.into();
                    row.invoked = false;
                    row.updated_ms = now_ms();
                    let m = task::agent_message(
                        &row.task_id,
                        &row.context_id,
                        &text,
                        Some(f.data(&row.task_id)),
                    );
                    push_history(&mut row, &m);
                    row.status_message_json = Some(m.to_string());
                    let row = a2a_tasks::put(store, &row).ok();
                    Ran::Failed(f, row, rs)
                }
            }
        })
        .await;
    if let Ok(mut s) = app.a2a_inflight.lock() {
        s.remove(&task_id);
    }
    r
}

/// `configuration.returnImmediately` (A2A §3.2.2): the task is written `SUBMITTED` (queued for
/// the writer) and answered at once; the invocation runs in the background, where [`run`]
/// writes it `WORKING` while it runs and `COMPLETED` (or the state a failure leaves) after.
/// The id is in the daemon's in-flight set before the row shows, so no reader takes the queued
/// row for a call that never started; a daemon that stops first leaves it `FAILED` (see
/// [`task::load`]). A failure is a task state here: there is no response left to carry an error.
///
/// # Errors
/// `-32603` when the row cannot be written (nothing runs then).
async fn run_in_background(
    cx: &Cx<'_>,
    mut row: TaskRow,
    skill: Descriptor,
    args: Value,
) -> Result<Task, RpcError> {
    let task_id = row.task_id.clone();
    if let Ok(mut s) = cx.app.a2a_inflight.lock() {
        s.insert(task_id.clone());
    }
    row.state = state::SUBMITTED.into();
    row.invoked = false;
    row.status_message_json = None;
    row.updated_ms = now_ms();
    let row = match write_row(cx, row).await {
        Ok(r) => r,
        Err(e) => {
            if let Ok(mut s) = cx.app.a2a_inflight.lock() {
                s.remove(&task_id);
            }
            return Err(e);
        }
    };
    let queued = task_of_row(&row, state::SUBMITTED);
    let app = cx.app.clone();
    let token = cx.token.to_string();
    tokio::spawn(async move {
        let deadline = Instant::now() + super::super::POST_DEADLINE;
        match run_as(&app, &token, deadline, row, &skill, args, true).await {
            Ok(Ran::Done(..)) => {}
            Ok(Ran::Failed(f, _, _)) | Err(f) => {
                let data = f.data(&task_id);
                log_refusal("SendMessage (returnImmediately)", &task_id, &f, &data);
            }
        }
        // `run_as` cleared the in-flight mark; a failure before it ran (the writer queue)
        // leaves the row SUBMITTED and unmarked, which reads as a call that did not start.
        if let Ok(mut s) = app.a2a_inflight.lock() {
            s.remove(&task_id);
        }
    });
    Ok(queued)
}

/// The state a failed call leaves a conversation in, and the agent's message: arguments that
/// fail the input schema can be corrected (`INPUT_REQUIRED`); anything else `FAILED`.
fn failure_state(f: &HostFailure) -> (&'static str, String) {
    match f {
        HostFailure::Invoke(InvokeError::InvalidCall(m))
            if m.starts_with(invoke::SCHEMA_FAILURE) =>
        {
            (
                state::INPUT_REQUIRED,
                format!("The input was refused: {m}. Send it again corrected."),
            )
        }
        HostFailure::Invoke(InvokeError::NotAuthorized(_)) => {
            (state::REJECTED, "not authorized".to_string())
        }
        other => (state::FAILED, other.message()),
    }
}

/// The refusal line on stderr and the JSON-RPC error of a failed structured call (surfaces.md
/// §6.2).
fn structured_error(f: HostFailure, invocation_id: &str, what: &str) -> RpcError {
    match f {
        HostFailure::Invoke(InvokeError::NotAuthorized(_)) => {
            RpcError::new(code::INVALID_PARAMS, "not authorized")
        }
        HostFailure::Invoke(InvokeError::InFlight(_)) => {
            RpcError::new(code::INVALID_PARAMS, "task id already used in this session")
        }
        HostFailure::Invoke(InvokeError::InvalidCall(m)) => RpcError::params(m),
        HostFailure::Invoke(InvokeError::Session(e)) => {
            RpcError::new(code::SESSION_DENIED, e.to_string())
        }
        f => {
            let data = f.data(invocation_id);
            log_refusal(what, invocation_id, &f, &data);
            let mut e = RpcError::new(code::INTERNAL_ERROR, f.message());
            e.close = matches!(f, HostFailure::TimedOut);
            e.data = Some(data);
            e
        }
    }
}

fn log_refusal(what: &str, invocation_id: &str, f: &HostFailure, data: &Value) {
    let recs: Vec<&str> = data["effectRecords"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    eprintln!(
        "world: a2a refusal: {what} {invocation_id}: {:?}",
        one_line(&format!("{} records [{}]", f.message(), recs.join(" ")))
    );
}

fn completed(row: &TaskRow, c: &Committed) -> Task {
    let mut t = task_of_row(row, state::COMPLETED);
    t.status_message = None;
    let out: Value = serde_json::from_slice(&c.output).unwrap_or(Value::Null);
    t.artifacts = Some(vec![task::output_artifact(out)]);
    t.metadata = json!({"invocation_id": c.invocation_id, "world_ref": c.world_ref, "entry_index": c.entry_index});
    t
}

/// A new task row for `inc`.
fn new_row(cx: &Cx<'_>, inc: &Incoming, task_id: &str) -> TaskRow {
    let context = inc
        .context_id
        .clone()
        .unwrap_or_else(|| cx.session.episode.clone());
    let mut row = TaskRow {
        task_id: task_id.to_string(),
        episode_id: cx.session.episode.clone(),
        context_id: context.clone(),
        state: state::SUBMITTED.into(),
        invoked: false,
        history_json: "[]".into(),
        status_message_json: None,
        updated_ms: now_ms(),
        seq: 0,
    };
    push_history(&mut row, &stamped(inc, task_id, &context));
    row
}

/// The structured path: run the named skill; failures are JSON-RPC errors.
async fn structured(cx: &Cx<'_>, inc: &Incoming, what: &str) -> Result<Task, RpcError> {
    let vis = visible_skills(cx).await?;
    let Decision::Run(desc, args) = decide(inc, &vis)? else {
        return Err(RpcError::params("the message holds no JSON object input"));
    };
    if let Some(tf) = &inc.transition_fn {
        if *tf != desc.transition_fn.to_string() {
            return Err(RpcError::new(
                code::INVALID_PARAMS,
                "proposal does not match the registered transition",
            ));
        }
    }
    let task_id = format!("a2a:{}:{}", cx.session.episode, inc.message_id);
    // A resend keeps the task's row (its context and history); the coordinator answers it
    // from the receipt without running again.
    let existing = cx
        .app
        .read({
            let id = task_id.clone();
            move |s| {
                s.a2a_task(&id)
                    .map_err(|e| super::super::ReadError::Store(e.to_string()))
            }
        })
        .await
        .map_err(|e| RpcError::internal(what, e))?
        .filter(|r| r.episode_id == cx.session.episode);
    if inc.return_immediately {
        if existing.is_some() {
            // The same messageId again is the same task: answer it as it stands.
            return read_task(cx, &task_id)
                .await?
                .ok_or_else(|| RpcError::not_found(&task_id));
        }
        return run_in_background(cx, new_row(cx, inc, &task_id), *desc, args).await;
    }
    let row = existing.unwrap_or_else(|| new_row(cx, inc, &task_id));
    match run(cx, row, &desc, args, false).await {
        Ok(Ran::Done(c, row)) => Ok(completed(&row, &c)),
        Ok(Ran::Failed(f, _, _)) | Err(f) => Err(structured_error(f, &task_id, what)),
    }
}

/// The conversation path for a new task or a follow-up (`row` already holds the message).
async fn converse(cx: &Cx<'_>, inc: &Incoming, mut row: TaskRow) -> Result<Task, RpcError> {
    let vis = visible_skills(cx).await?;
    let decision = decide(inc, &vis)?;
    let (st, text, data) = match decision {
        Decision::Run(desc, args) => {
            if let Some(tf) = &inc.transition_fn {
                if *tf != desc.transition_fn.to_string() {
                    return Err(RpcError::new(
                        code::INVALID_PARAMS,
                        "proposal does not match the registered transition",
                    ));
                }
            }
            if inc.return_immediately {
                return run_in_background(cx, row, *desc, args).await;
            }
            let id = row.task_id.clone();
            return match run(cx, row, &desc, args, true).await {
                Ok(Ran::Done(c, row)) => Ok(completed(&row, &c)),
                Ok(Ran::Failed(f, row, rs)) => {
                    let data = f.data(&id);
                    log_refusal("SendMessage", &id, &f, &data);
                    match row {
                        Some(row) if rs == ReceiptState::NotStarted => {
                            Ok(task_of_row(&row, task::state_of(&row.state)))
                        }
                        _ => read_task(cx, &id)
                            .await?
                            .ok_or_else(|| RpcError::new(code::INTERNAL_ERROR, f.message())),
                    }
                }
                Err(f) => Err(structured_error(f, &id, "SendMessage")),
            };
        }
        Decision::Ask(text, data) => (state::INPUT_REQUIRED, text, Some(data)),
        Decision::Reject(text) => (state::REJECTED, text, None),
    };
    let m = task::agent_message(&row.task_id, &row.context_id, &text, data);
    push_history(&mut row, &m);
    row.status_message_json = Some(m.to_string());
    row.state = st.into();
    row.updated_ms = now_ms();
    let row = write_row(cx, row).await?;
    Ok(task_of_row(&row, st))
}

/// `message/send` (v0.3) and `SendMessage` (v1.0).
///
/// # Errors
/// `-32602` malformed params or an invisible skill, `-32005` a file part, `-32001` an unknown
/// `taskId`, `-32004` a `taskId` of a finished or running task, the structured call's
/// failures.
pub async fn message_send(
    cx: &Cx<'_>,
    params: &Map<String, Value>,
    wire: Wire,
) -> Result<Value, RpcError> {
    let inc = parse_message(params, wire)?;
    // A named skill with a file part is a call world cannot read (-32005); a conversation
    // answers it with the skills and what it reads (`decide`).
    if inc.skill.is_some() && inc.parts.contains(&PartIn::File) {
        let mut e = RpcError::new(
            code::CONTENT_TYPE_NOT_SUPPORTED,
            "content type not supported: this agent reads text (text/plain) and JSON data (application/json) parts, not files or URLs",
        );
        e.data = Some(json!({"supported": ["text/plain", "application/json"]}));
        return Err(e);
    }
    let task = match &inc.task_id {
        Some(tid) => follow_up(cx, &inc, tid).await?,
        None if inc.structured() => structured(cx, &inc, "SendMessage").await?,
        None => {
            let task_id = format!("a2a:{}:{}", cx.session.episode, inc.message_id);
            // The same messageId again is the same task: answer it as it stands.
            match read_task(cx, &task_id).await? {
                Some(t) => t,
                None => converse(cx, &inc, new_row(cx, &inc, &task_id)).await?,
            }
        }
    };
    let v = render(&task, inc.history, wire);
    Ok(match wire {
        // DEC-A2A-2: a SendMessageResponse, the one-of member `task`.
        Wire::V1 => json!({"task": v}),
        _ => v,
    })
}

/// A follow-up message to an existing task (`message.taskId`).
async fn follow_up(cx: &Cx<'_>, inc: &Incoming, tid: &str) -> Result<Task, RpcError> {
    let Some(t) = read_task(cx, tid).await? else {
        return Err(RpcError::not_found(tid));
    };
    if let Some(c) = &inc.context_id {
        if *c != t.context_id {
            return Err(RpcError::params(format!(
                "message.contextId {c:?} does not match the task's contextId {:?}",
                t.context_id
            )));
        }
    }
    if state::terminal(t.state) {
        let mut e = RpcError::unsupported(format!(
            "task {tid} is in the terminal state {} and takes no more messages; send a new message without taskId",
            t.state
        ));
        e.data = Some(json!({"taskId": tid, "state": t.state}));
        return Err(e);
    }
    let row = match (&t.row, t.state) {
        (Some(r), state::INPUT_REQUIRED) if !r.invoked => r.clone(),
        _ => {
            let mut e = RpcError::unsupported(format!(
                "task {tid} is {} (its call is queued or running); read it with GetTask",
                t.state
            ));
            e.data = Some(json!({"taskId": tid, "state": t.state}));
            return Err(e);
        }
    };
    let mut row = row;
    let already = serde_json::from_str::<Vec<Value>>(&row.history_json)
        .unwrap_or_default()
        .iter()
        .any(|m| {
            m["messageId"] == Value::String(inc.message_id.clone()) && m["role"] == "ROLE_USER"
        });
    if already {
        return Ok(t);
    }
    push_history(&mut row, &stamped(inc, tid, &t.context_id));
    converse(cx, inc, row).await
}

/// Legacy `tasks/send` (surfaces.md §6.2): the structured path, the reference's result shape.
///
/// # Errors
/// As [`message_send`]'s structured call.
pub async fn tasks_send(cx: &Cx<'_>, params: &Map<String, Value>) -> Result<Value, RpcError> {
    let inc = parse_legacy(params)?;
    let t = structured(cx, &inc, "tasks/send").await?;
    let output = t
        .artifacts
        .as_ref()
        .and_then(|a| a.first())
        .map(|a| a["parts"][0]["data"].clone())
        .unwrap_or(Value::Null);
    Ok(json!({
        "id": inc.message_id,
        "status": {"state": "completed"},
        "artifacts": [{"parts": [{"type": "data", "data": output}]}],
        "metadata": t.metadata,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v1(msg: Value) -> Result<Incoming, RpcError> {
        parse_message(json!({"message": msg}).as_object().unwrap(), Wire::V1)
    }

    #[test]
    fn messages_parse_on_each_wire() {
        let m = v1(json!({"messageId":"m1","role":"ROLE_USER","parts":[{"text":"{\"a\":1}"}],"contextId":"c"})).unwrap();
        assert_eq!(m.input(), Some(json!({"a":1})));
        assert_eq!(m.context_id.as_deref(), Some("c"));
        assert!(!m.structured());
        let d = parse_message(
            json!({"message":{"kind":"message","messageId":"m2","role":"user","parts":[{"kind":"data","data":{"x":2}}]},"metadata":{"skill_id":"echo"}}).as_object().unwrap(),
            Wire::V03,
        )
        .unwrap();
        assert!(d.structured());
        assert_eq!(d.message["parts"][0], json!({"data":{"x":2}}));
        let f = v1(json!({"messageId":"m3","role":"ROLE_USER","parts":[{"url":"https://x","mediaType":"text/plain"}]})).unwrap();
        assert!(f.parts.contains(&PartIn::File));
        for bad in [
            json!({"kind":"message"}),
            json!({"messageId":"m","role":"ROLE_USER","parts":"invalid"}),
            json!({"messageId":"m","role":"ROLE_USER","parts":[]}),
            json!({"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"x"}]}),
            json!({"messageId":"bad id","role":"ROLE_USER","parts":[{"text":"x"}]}),
            json!({"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"contextId":""}),
            json!({"messageId":"m","role":"ROLE_USER","parts":[{"nothing":1}]}),
        ] {
            assert_eq!(v1(bad.clone()).unwrap_err().code, -32602, "{bad}");
        }
    }

    #[test]
    fn legacy_params() {
        let p = json!({"id":"t1","metadata":{"skill_id":"echo"},"message":{"role":"user","parts":[{"type":"data","data":{"a":1}}]}});
        let x = parse_legacy(p.as_object().unwrap()).unwrap();
        assert_eq!(
            (x.message_id.as_str(), x.skill.as_deref()),
            ("t1", Some("echo"))
        );
        for bad in [
            json!({"id":"t1","metadata":{"skill_id":"echo"},"message":{"parts":[{"type":"data","data":{}},{"type":"data","data":{}}]}}),
            json!({"id":"t 1","metadata":{"skill_id":"echo"},"message":{"parts":[{"type":"data","data":{}}]}}),
            json!({"id":"t1","metadata":{"skill_id":"echo"},"message":{"parts":[{"type":"text","text":"x"}]}}),
        ] {
            assert!(parse_legacy(bad.as_object().unwrap()).is_err(), "{bad}");
        }
    }
}
