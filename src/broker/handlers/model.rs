//! `Model.Infer`: a library handler over a pluggable [`ModelBackend`]
//! (authority-and-broker.md §12 row 6; new in `world`).
//!
//! `world` ships no backend and makes no network call by default: without one the handler
//! fails (the unit stays spent) with [`NO_BACKEND_MESSAGE`], which says how to configure one.
//! [`CommandModelBackend`] is the backend an operator can plug in without writing Rust: an
//! executable that reads `{"scope":S,"request":PAYLOAD}` on stdin and writes one JSON object on
//! stdout, run with the scrubbed handler environment and the handler deadline.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};

use super::process::{base_env, run_child, ChildError, ChildSpec};
use super::{payload_object, Handler, HandlerContext, HandlerOutcome, MODEL_INFER};

/// The failure of `Model.Infer` without a backend.
pub const NO_BACKEND_MESSAGE: &str = "Model.Infer has no model backend: world configures none by default (it makes no \
network call of its own); plug one in with Services::model (a ModelBackend), for example a CommandModelBackend \
naming an executable that reads {\"scope\",\"request\"} JSON on stdin and writes one JSON object on stdout";

/// How a backend call went wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// The backend answered with an error; nothing was produced.
    #[error("{0}")]
    Failed(String),
    /// The backend cannot tell whether the inference (and its cost) happened.
    #[error("{0}")]
    Indeterminate(String),
}

/// A model backend: turns one request payload into one JSON object.
pub trait ModelBackend: Send + Sync {
    /// Runs one inference for `scope` (the grant's scope string) on `request` (the payload
    /// object), finishing before `deadline`. The answer must be a JSON object.
    fn infer(&self, scope: &str, request: &Value, deadline: Instant) -> Result<Value, ModelError>;
}

/// The `Model.Infer` handler.
pub struct ModelInferHandler {
    backend: Option<Arc<dyn ModelBackend>>,
}

impl ModelInferHandler {
    /// A handler over `backend` (none: every call fails with [`NO_BACKEND_MESSAGE`]).
    pub fn new(backend: Option<Arc<dyn ModelBackend>>) -> Self {
        ModelInferHandler { backend }
    }
}

impl Handler for ModelInferHandler {
    fn effect(&self) -> &'static str {
        MODEL_INFER
    }

    fn execute(
        &self,
        _ctx: &HandlerContext,
        scope: &str,
        payload: &Value,
        deadline: Instant,
    ) -> HandlerOutcome {
        let Some(backend) = &self.backend else {
            return HandlerOutcome::Failed(NO_BACKEND_MESSAGE.to_owned());
        };
        if let Err(msg) = payload_object(payload) {
            return HandlerOutcome::Failed(format!("{MODEL_INFER} refused: {msg}"));
        }
        match backend.infer(scope, payload, deadline) {
            Ok(answer) if answer.is_object() => HandlerOutcome::json(&answer),
            Ok(_) => HandlerOutcome::Failed(format!(
                "{MODEL_INFER}: the backend answered something other than a JSON object"
            )),
            Err(ModelError::Failed(msg)) => HandlerOutcome::Failed(format!("{MODEL_INFER}: {msg}")),
            Err(ModelError::Indeterminate(msg)) => {
                HandlerOutcome::Indeterminate(format!("{MODEL_INFER}: {msg}"))
            }
        }
    }
}

/// A backend that runs an operator-chosen executable per call (no shell; environment
/// `HOME=<home>`, `PATH=/usr/bin:/bin`, `LANG=C`, `LC_ALL=C`; its own process group, killed at
/// the deadline). Exit 0 with one JSON object on stdout is an answer; another exit is
/// [`ModelError::Failed`]; a deadline kill is [`ModelError::Indeterminate`] (a remote call may
/// have been made and billed).
#[derive(Clone, Debug)]
pub struct CommandModelBackend {
    /// The executable, absolute.
    pub program: PathBuf,
    /// Its `HOME` and working directory.
    pub home: PathBuf,
}

impl ModelBackend for CommandModelBackend {
    fn infer(&self, scope: &str, request: &Value, deadline: Instant) -> Result<Value, ModelError> {
        let input = serde_json::to_vec(&json!({"scope": scope, "request": request}))
            .map_err(|e| ModelError::Failed(format!("cannot encode the request: {e}")))?;
        let spec = ChildSpec {
            program: self.program.clone(),
            args: Vec::new(),
            cwd: self.home.clone(),
            env: base_env(&self.home),
            stdin: input,
            output_cap: 8 * 1024 * 1024,
        };
        match run_child(&spec, deadline) {
            Ok(out) if out.exit_code == 0 => serde_json::from_slice::<Value>(&out.stdout)
                .ok()
                .filter(Value::is_object)
                .ok_or_else(|| {
                    ModelError::Failed("the backend's stdout is not one JSON object".to_owned())
                }),
            Ok(out) => Err(ModelError::Failed(format!(
                "the backend exited {}: {}",
                out.exit_code,
                String::from_utf8_lossy(&out.stderr).trim()
            ))),
            Err(err @ ChildError::Deadline { .. }) => {
                Err(ModelError::Indeterminate(err.to_string()))
            }
            Err(err) => Err(ModelError::Failed(err.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn no_backend_fails_and_says_how_to_configure_one() {
        let h = ModelInferHandler::new(None);
        let out = h.execute(
            &HandlerContext::default(),
            "any",
            &json!({"prompt":"hi"}),
            Instant::now(),
        );
        match out {
            HandlerOutcome::Failed(msg) => assert!(msg.contains("plug one in"), "{msg}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn command_backend_answers_and_times_out() {
        let dir = tempfile::tempdir().expect("tempdir");
        let script = dir.path().join("backend.sh");
        std::fs::write(&script, "#!/bin/sh\nread line\ncase \"$line\" in *slow*) sleep 30;; esac\nprintf '{\"text\":\"echo\",\"input\":%s}' \"$line\"\n")
            .expect("write");
        let mode = <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755);
        std::fs::set_permissions(&script, mode).expect("chmod");
        let backend = CommandModelBackend {
            program: script,
            home: dir.path().to_path_buf(),
        };
        let h = ModelInferHandler::new(Some(Arc::new(backend)));
        let ctx = HandlerContext::default();
        match h.execute(
            &ctx,
            "m1",
            &json!({"prompt":"hi"}),
            Instant::now() + Duration::from_secs(5),
        ) {
            HandlerOutcome::Succeeded(bytes) => {
                let v: Value = serde_json::from_slice(&bytes).expect("json");
                assert_eq!(v["input"], json!({"scope":"m1","request":{"prompt":"hi"}}));
            }
            other => panic!("{other:?}"),
        }
        let out = h.execute(
            &ctx,
            "m1",
            &json!({"prompt":"slow"}),
            Instant::now() + Duration::from_millis(300),
        );
        assert!(matches!(out, HandlerOutcome::Indeterminate(_)), "{out:?}");
        assert!(matches!(
            h.execute(&ctx, "m1", &json!([1]), Instant::now()),
            HandlerOutcome::Failed(_)
        ));
    }
}
