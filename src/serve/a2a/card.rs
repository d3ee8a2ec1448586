//! The agent cards (surfaces.md §6.1, DEC-A2A-4): the legacy `/.well-known/agent.json` (the
//! reference's shape, session required), the A2A v1.0 `/.well-known/agent-card.json` (public
//! without a credential, session-scoped with one) and `GetExtendedAgentCard` (the session's
//! card over JSON-RPC).

use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::super::auth::{self, Bearer, Denial};
use super::super::rest::ApiError;
use super::super::{one_line, App, ReadError};
use crate::authority::session::Session;
use crate::ops::invoke::visible;
use crate::transitions::registry::Descriptor;

/// The scheme name the cards declare for the session bearer.
pub const SCHEME: &str = "worldSession";

/// `WWW-Authenticate` on every A2A 401 (RFC 9110 §11.6.1; the card's scheme).
pub const CHALLENGE: &str = "Bearer realm=\"world\"";

/// A 401 REST envelope for a card, with the bearer challenge.
fn denied(route: &str, d: &Denial) -> Response {
    let mut r = ApiError::from_denial(route, d).into_response();
    if r.status() == StatusCode::UNAUTHORIZED {
        r.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static(CHALLENGE),
        );
    }
    r
}

async fn resolve(app: &Arc<App>, token: String, route: &str) -> Result<Session, Response> {
    app.session(token, super::super::now())
        .await
        .map_err(|d| denied(route, &d))
}

/// The registry descriptors, or the card's 503/504.
async fn descriptors(app: &Arc<App>) -> Result<Vec<Descriptor>, ApiError> {
    app.descriptors().await.map_err(|e| match e {
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
    })
}

/// One skill object of a card: the raw transition id, its title and description.
pub fn skill_json(d: &Descriptor) -> Value {
    json!({"id": d.id, "name": d.title, "description": d.description, "tags": [], "examples": []})
}

/// The skills `session` sees (registry id order); every published transition without one.
fn skills(all: &[Descriptor], session: Option<&Session>) -> Vec<Value> {
    match session {
        Some(s) => visible(all, &s.grants, super::super::now())
            .iter()
            .map(skill_json)
            .collect(),
        None => all.iter().map(skill_json).collect(),
    }
}

fn base(skills: Vec<Value>) -> Value {
    json!({
        "name": "world",
        "description": "The world store's published transitions, callable as A2A skills. Name one in metadata.skill_id with a JSON object as a data part (or as JSON text); a text message without a skill id is routed when it can be, else answered with the skills to choose from.",
        "version": env!("CARGO_PKG_VERSION"),
        "capabilities": {"streaming": false, "pushNotifications": false},
        "defaultInputModes": ["application/json", "text/plain"],
        "defaultOutputModes": ["application/json", "text/plain"],
        "skills": skills,
    })
}

/// The A2A v1.0 card: `supportedInterfaces`, the bearer scheme in the v1.0 ProtoJSON form
/// (`securitySchemes.<name>.httpAuthSecurityScheme`, `securityRequirements`), and
/// `capabilities.extendedAgentCard` (the session's card over `GetExtendedAgentCard`).
pub fn v1_card(authority: &str, skills: Vec<Value>) -> Value {
    let mut card = base(skills);
    card["capabilities"]["extendedAgentCard"] = Value::Bool(true);
    card["supportedInterfaces"] = json!([{
        "url": format!("http://{authority}/a2a/"),
        "protocolBinding": "JSONRPC",
        "protocolVersion": "1.0",
    }]);
    card["securitySchemes"] = json!({SCHEME: {"httpAuthSecurityScheme": {
        "scheme": "Bearer",
        "bearerFormat": "64 hex digits",
        "description": "A world session (`world session mint`); it scopes the skills and tasks to one episode.",
    }}});
    card["securityRequirements"] = json!([{"schemes": {SCHEME: {"list": []}}}]);
    card
}

/// `GET /.well-known/agent.json` (legacy card with a top-level `url`; a session is required,
/// as the reference's card).
pub async fn legacy(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    const ROUTE: &str = "GET /.well-known/agent.json";
    let token = match auth::parse_bearer(&headers) {
        Bearer::Absent => return denied(ROUTE, &Denial::Absent),
        Bearer::Malformed => return denied(ROUTE, &Denial::Malformed),
        Bearer::Token(t) => t,
    };
    let session = match resolve(&app, token, ROUTE).await {
        Ok(s) => s,
        Err(r) => return r,
    };
    let all = match descriptors(&app).await {
        Ok(a) => a,
        Err(e) => return e.into_response(),
    };
    let mut card = base(skills(&all, Some(&session)));
    // The reference's legacy shape keeps `stateTransitionHistory`; its `url` answers JSON-RPC
    // (legacy and A2A v0.3 methods, DEC-A2A-3). The bearer scheme in the v0.3 (OpenAPI) form.
    card["capabilities"]["stateTransitionHistory"] = Value::Bool(false);
    card["url"] = Value::String(format!(
        "http://{}",
        super::super::origin::authority(&headers, app.port)
    ));
    card["securitySchemes"] = json!({SCHEME: {"type": "http", "scheme": "bearer",
        "bearerFormat": "64 hex digits"}});
    card["security"] = json!([{SCHEME: []}]);
    Json(card).into_response()
}

/// `GET /.well-known/agent-card.json`: without a credential the public card (every published
/// transition as a skill, DEC-A2A-4); with one, the session's card (the skills it sees). A
/// credential that is present but malformed, unknown or expired is refused (401).
pub async fn v1(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    const ROUTE: &str = "GET /.well-known/agent-card.json";
    let session = match auth::parse_bearer(&headers) {
        Bearer::Absent => None,
        Bearer::Malformed => return denied(ROUTE, &Denial::Malformed),
        Bearer::Token(t) => match resolve(&app, t, ROUTE).await {
            Ok(s) => Some(s),
            Err(r) => return r,
        },
    };
    match descriptors(&app).await {
        Ok(all) => Json(v1_card(
            &super::super::origin::authority(&headers, app.port),
            skills(&all, session.as_ref()),
        ))
        .into_response(),
        Err(e) => e.into_response(),
    }
}

/// `GetExtendedAgentCard`: the session's v1.0 card.
///
/// # Errors
/// The registry read's failure, as a message for `-32603`.
pub async fn extended(app: &Arc<App>, session: &Session, authority: &str) -> Result<Value, String> {
    let all = app
        .descriptors()
        .await
        .map_err(|e| format!("the transition registry could not be read: {e:?}"))?;
    Ok(v1_card(authority, skills(&all, Some(session))))
}
