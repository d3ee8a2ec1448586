//! JSON-RPC 2.0 envelopes for the MCP and A2A surfaces (surfaces.md §4–§5), with every error
//! code named once.
//!
//! Both surfaces answer `{"jsonrpc":"2.0","id":…,"result":…}` or
//! `{"jsonrpc":"2.0","id":…,"error":{"code","message","data"?}}`; the id is echoed as read
//! (`null` when it could not be read). The numbers in [`code`] are the JSON-RPC 2.0 standard
//! ones plus each surface's own; a surface names its error by constant, never by literal.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

/// The error codes `world` answers with.
pub mod code {
    /// Invalid JSON (JSON-RPC 2.0 §5.1).
    pub const PARSE_ERROR: i64 = -32700;
    /// Not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not served.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal error (a store failure, a refused tool surface).
    pub const INTERNAL_ERROR: i64 = -32603;
    /// MCP and legacy A2A: the session was denied (absent, unknown, expired, revoked token).
    pub const SESSION_DENIED: i64 = -32001;
    /// A2A v1.0 `TaskNotFoundError`.
    pub const TASK_NOT_FOUND: i64 = -32001;
    /// A2A v1.0 `TaskNotCancelableError` (calls are synchronous).
    pub const TASK_NOT_CANCELABLE: i64 = -32002;
    /// A2A v1.0 `PushNotificationNotSupportedError`.
    pub const PUSH_NOT_SUPPORTED: i64 = -32003;
    /// A2A v1.0 `UnsupportedOperationError`.
    pub const UNSUPPORTED_OPERATION: i64 = -32004;
    /// A2A v1.0 `ContentTypeNotSupportedError` (a file part).
    pub const CONTENT_TYPE_NOT_SUPPORTED: i64 = -32005;
    /// A2A v1.0 `VersionNotSupportedError` (`A2A-Version` not served).
    pub const VERSION_NOT_SUPPORTED: i64 = -32009;
    /// MCP: a resource that does not exist or is not the session's (`resources/read`).
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    /// MCP 2026-07-28: the `MCP-Protocol-Version` header and the body's `_meta` disagree.
    pub const HEADER_MISMATCH: i64 = -32020;
    /// MCP 2026-07-28: `UnsupportedProtocolVersion` (with `data.supported`).
    pub const UNSUPPORTED_VERSION: i64 = -32022;
}

/// A success envelope.
pub fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error envelope; `data` is added when present.
pub fn error(id: &Value, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut e = json!({"code": code, "message": message});
    if let Some(d) = data {
        e["data"] = d;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": e})
}

/// `body` as an `application/json` response with `status`.
pub fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// `text` as a `text/plain; charset=utf-8` response with `status`.
pub fn plain(status: StatusCode, text: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        text.to_string(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_echo_the_id_and_add_data_only_when_present() {
        let id = json!(7);
        assert_eq!(
            result(&id, json!({"ok": true})),
            json!({"jsonrpc":"2.0","id":7,"result":{"ok":true}})
        );
        assert_eq!(
            error(&Value::Null, code::INVALID_REQUEST, "bad", None),
            json!({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad"}})
        );
        assert_eq!(
            error(
                &json!("a"),
                code::UNSUPPORTED_VERSION,
                "v",
                Some(json!({"supported":["x"]}))
            )["error"]["data"]["supported"][0],
            "x"
        );
    }
}
