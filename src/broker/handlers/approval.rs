//! `Human.Approve` / `Human.PollApproval`: approvals decided by a person at the controlling
//! terminal, over the store's approval objects and the `approval_claims` table
//! (authority-and-broker.md §11, §12 row 5; new in `world`; payloads are [U] and decided in
//! docs/DECISIONS.md).
//!
//! | Effect | Payload | Output |
//! |---|---|---|
//! | `Human.Approve` | `{"op":"approve","approval_ref":R,"summary":TEXT}` | `{"ok":true,"approval_ref":R,"state":"approved"\|"denied","decision_ref":D}` |
//! | `Human.PollApproval` | `{"op":"poll","approval_ref":R}` | `{"ok":true,"approval_ref":R,"state":"pending"\|"approved"\|"denied"[,"decision_ref":D][,"claimed_by":INV]}` |
//!
//! The store is reached through [`ApprovalStore`] so the store module can plug in its own
//! implementation (request/decision objects plus `approval_claims`); the terminal through
//! [`Prompter`] ([`TtyPrompter`] opens `/dev/tty`).

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Map, Value};

use super::{check_keys, payload_object, required_str, Handler, HandlerContext, HandlerOutcome};
use super::{HUMAN_APPROVE, HUMAN_POLL_APPROVAL};

/// Longest summary shown to the approver, in bytes.
pub const MAX_SUMMARY_BYTES: usize = 4096;

/// Where an approval request stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApprovalState {
    /// No decision yet.
    Pending,
    /// Approved by the decision object `decision_ref`.
    Approved {
        /// The decision object's ref (`sha256:…`).
        decision_ref: String,
    },
    /// Denied by the decision object `decision_ref`.
    Denied {
        /// The decision object's ref (`sha256:…`).
        decision_ref: String,
    },
}

/// The store access the approval handlers need.
pub trait ApprovalStore: Send + Sync {
    /// The state of the approval request `approval_ref`, or `None` when no such request exists.
    fn state(&self, approval_ref: &str) -> Result<Option<ApprovalState>, String>;
    /// Records a decision for a pending request and returns the decision object's ref. Must
    /// fail when the request is unknown or already decided (a decision is written once).
    fn decide(
        &self,
        approval_ref: &str,
        approved: bool,
        decided_by: &str,
    ) -> Result<String, String>;
    /// The invocation id that consumed the approval (`approval_claims.invocation_id`), if any.
    fn claimed_by(&self, approval_ref: &str) -> Result<Option<String>, String>;
}

/// A yes/no question to a person.
pub trait Prompter: Send + Sync {
    /// Asks `question` and answers `true` only for an explicit yes, before `deadline`.
    ///
    /// Errors: no terminal, an I/O error, or no answer before the deadline.
    fn confirm(&self, question: &str, deadline: Instant) -> Result<bool, String>;
}

/// Shows untrusted text on a terminal: control characters (escape sequences, carriage
/// returns) are rendered escaped so they cannot rewrite the prompt.
pub fn terminal_safe(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            if c.is_control() && c != '\n' {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// `true` for `y` or `yes` in any case (after trimming); everything else is no.
pub fn is_yes(answer: &str) -> bool {
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

/// Prompts on the controlling terminal (`/dev/tty`), never on stdin/stdout.
#[derive(Clone, Copy, Debug, Default)]
pub struct TtyPrompter;

impl Prompter for TtyPrompter {
    fn confirm(&self, question: &str, deadline: Instant) -> Result<bool, String> {
        let mut tty = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .map_err(|e| {
                format!("Human.Approve needs a controlling terminal (attended): /dev/tty: {e}")
            })?;
        write!(tty, "{question} [y/N] ")
            .and_then(|_| tty.flush())
            .map_err(|e| format!("writing to the terminal: {e}"))?;
        let mut answer = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                let _ = writeln!(tty);
                return Err("no answer on the terminal before the deadline".to_owned());
            }
            let mut fds = libc::pollfd {
                fd: tty.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = libc::c_int::try_from(left.as_millis()).unwrap_or(libc::c_int::MAX);
            // SAFETY: one valid pollfd for the duration of the call.
            let rc = unsafe { libc::poll(&mut fds, 1, ms) };
            if rc < 0 {
                let err = std::io::Error::last_os_error();
                if err.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(format!("reading the terminal: {err}"));
            }
            if rc == 0 {
                continue;
            }
            let mut byte = [0u8; 1];
            match tty.read(&mut byte) {
                Ok(0) => break,
                Ok(_) if byte[0] == b'\n' => break,
                Ok(_) => {
                    if answer.len() < 64 {
                        answer.push(byte[0]);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("reading the terminal: {e}")),
            }
        }
        Ok(is_yes(&String::from_utf8_lossy(&answer)))
    }
}

fn approval_ref<'a>(
    payload: &'a Value,
    effect: &str,
    op: &str,
    keys: &[&str],
) -> Result<(&'a Map<String, Value>, &'a str), String> {
    let obj = payload_object(payload)?;
    check_keys(obj, keys, effect)?;
    let got = required_str(obj, "op", effect)?;
    if got != op {
        return Err(format!("{effect} refuses op {got:?}: it admits only {op}"));
    }
    let r = required_str(obj, "approval_ref", effect)?;
    if r.is_empty() || r.len() > 256 || r.chars().any(char::is_control) {
        return Err(format!("{effect} refused: approval_ref {r:?} is not a ref"));
    }
    Ok((obj, r))
}

fn state_output(r: &str, state: &ApprovalState, claimed_by: Option<String>) -> Value {
    let mut out = json!({"ok": true, "approval_ref": r});
    if let Some(map) = out.as_object_mut() {
        let (name, decision) = match state {
            ApprovalState::Pending => ("pending", None),
            ApprovalState::Approved { decision_ref } => ("approved", Some(decision_ref)),
            ApprovalState::Denied { decision_ref } => ("denied", Some(decision_ref)),
        };
        map.insert("state".into(), json!(name));
        if let Some(d) = decision {
            map.insert("decision_ref".into(), json!(d));
        }
        if let Some(inv) = claimed_by {
            map.insert("claimed_by".into(), json!(inv));
        }
    }
    out
}

/// `Human.Approve`: asks the person at the terminal to approve a pending request and records
/// the decision. An already-decided request answers its decision without asking again.
pub struct ApproveHandler {
    store: Arc<dyn ApprovalStore>,
    prompter: Arc<dyn Prompter>,
}

impl ApproveHandler {
    /// A handler deciding in `store`, asking through `prompter`.
    pub fn new(store: Arc<dyn ApprovalStore>, prompter: Arc<dyn Prompter>) -> Self {
        ApproveHandler { store, prompter }
    }

    fn run(
        &self,
        ctx: &HandlerContext,
        payload: &Value,
        deadline: Instant,
    ) -> Result<Value, String> {
        let (obj, r) = approval_ref(
            payload,
            HUMAN_APPROVE,
            "approve",
            &["op", "approval_ref", "summary"],
        )?;
        let summary = required_str(obj, "summary", HUMAN_APPROVE)?;
        if summary.len() > MAX_SUMMARY_BYTES {
            return Err(format!(
                "{HUMAN_APPROVE} refused: the summary is over {MAX_SUMMARY_BYTES} bytes"
            ));
        }
        match self.store.state(r)? {
            None => Err(format!("{HUMAN_APPROVE} refused: no approval request {r}")),
            Some(ApprovalState::Pending) => {
                let question = format!(
                    "world: episode {} asks for approval {}:\n  {}\nApprove?",
                    terminal_safe(&ctx.episode),
                    terminal_safe(r),
                    terminal_safe(summary)
                );
                let approved = self.prompter.confirm(&question, deadline)?;
                let decision_ref = self.store.decide(r, approved, "terminal")?;
                let state = if approved {
                    ApprovalState::Approved { decision_ref }
                } else {
                    ApprovalState::Denied { decision_ref }
                };
                Ok(state_output(r, &state, None))
            }
            Some(state) => Ok(state_output(r, &state, self.store.claimed_by(r)?)),
        }
    }
}

impl Handler for ApproveHandler {
    fn effect(&self) -> &'static str {
        HUMAN_APPROVE
    }

    fn execute(
        &self,
        ctx: &HandlerContext,
        _scope: &str,
        payload: &Value,
        deadline: Instant,
    ) -> HandlerOutcome {
        match self.run(ctx, payload, deadline) {
            Ok(out) => HandlerOutcome::json(&out),
            Err(msg) => HandlerOutcome::Failed(msg),
        }
    }
}

/// `Human.PollApproval`: answers pending / approved / denied (and who consumed it).
pub struct PollApprovalHandler {
    store: Arc<dyn ApprovalStore>,
}

impl PollApprovalHandler {
    /// A handler reading `store`.
    pub fn new(store: Arc<dyn ApprovalStore>) -> Self {
        PollApprovalHandler { store }
    }
}

impl Handler for PollApprovalHandler {
    fn effect(&self) -> &'static str {
        HUMAN_POLL_APPROVAL
    }

    fn execute(
        &self,
        _ctx: &HandlerContext,
        _scope: &str,
        payload: &Value,
        _deadline: Instant,
    ) -> HandlerOutcome {
        let run = || -> Result<Value, String> {
            let (_, r) = approval_ref(
                payload,
                HUMAN_POLL_APPROVAL,
                "poll",
                &["op", "approval_ref"],
            )?;
            match self.store.state(r)? {
                None => Err(format!(
                    "{HUMAN_POLL_APPROVAL} refused: no approval request {r}"
                )),
                Some(state) => Ok(state_output(r, &state, self.store.claimed_by(r)?)),
            }
        };
        match run() {
            Ok(out) => HandlerOutcome::json(&out),
            Err(msg) => HandlerOutcome::Failed(msg),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::sync::Mutex;
    use std::time::Duration;

    /// An in-memory store with the trait's semantics (decide once; claims recorded apart).
    #[derive(Default)]
    struct MemoryStore {
        states: Mutex<HashMap<String, ApprovalState>>,
        claims: Mutex<HashMap<String, String>>,
    }

    impl ApprovalStore for MemoryStore {
        fn state(&self, r: &str) -> Result<Option<ApprovalState>, String> {
            Ok(self
                .states
                .lock()
                .map_err(|e| e.to_string())?
                .get(r)
                .cloned())
        }
        fn decide(&self, r: &str, approved: bool, by: &str) -> Result<String, String> {
            let mut states = self.states.lock().map_err(|e| e.to_string())?;
            match states.get(r) {
                Some(ApprovalState::Pending) => {
                    let d = format!("decision-of-{r}-by-{by}");
                    let s = if approved {
                        ApprovalState::Approved {
                            decision_ref: d.clone(),
                        }
                    } else {
                        ApprovalState::Denied {
                            decision_ref: d.clone(),
                        }
                    };
                    states.insert(r.to_owned(), s);
                    Ok(d)
                }
                _ => Err(format!("approval {r} is not pending")),
            }
        }
        fn claimed_by(&self, r: &str) -> Result<Option<String>, String> {
            Ok(self
                .claims
                .lock()
                .map_err(|e| e.to_string())?
                .get(r)
                .cloned())
        }
    }

    struct Scripted(Result<bool, String>, Mutex<Vec<String>>);
    impl Prompter for Scripted {
        fn confirm(&self, q: &str, _d: Instant) -> Result<bool, String> {
            if let Ok(mut asked) = self.1.lock() {
                asked.push(q.to_owned());
            }
            self.0.clone()
        }
    }

    fn out(o: HandlerOutcome) -> Value {
        match o {
            HandlerOutcome::Succeeded(b) => serde_json::from_slice(&b).expect("json"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn approve_then_poll() {
        let store = Arc::new(MemoryStore::default());
        store
            .states
            .lock()
            .expect("lock")
            .insert("sha256:aa".into(), ApprovalState::Pending);
        let prompter = Arc::new(Scripted(Ok(true), Mutex::new(Vec::new())));
        let approve = ApproveHandler::new(store.clone(), prompter.clone());
        let poll = PollApprovalHandler::new(store.clone());
        let ctx = HandlerContext {
            episode: "ep1".into(),
            ..Default::default()
        };
        let d = Instant::now() + Duration::from_secs(1);
        let p = out(poll.execute(
            &ctx,
            "s",
            &json!({"op":"poll","approval_ref":"sha256:aa"}),
            d,
        ));
        assert_eq!(p["state"], json!("pending"));
        let a = out(approve.execute(
            &ctx,
            "s",
            &json!({"op":"approve","approval_ref":"sha256:aa","summary":"publish \u{1b}[2Jx"}),
            d,
        ));
        assert_eq!(a["state"], json!("approved"));
        let asked = prompter.1.lock().expect("lock").clone();
        assert_eq!(asked.len(), 1);
        assert!(
            !asked[0].contains('\u{1b}'),
            "escape reached the terminal: {asked:?}"
        );
        store
            .claims
            .lock()
            .expect("lock")
            .insert("sha256:aa".into(), "cli:ep1:t1".into());
        let p = out(poll.execute(
            &ctx,
            "s",
            &json!({"op":"poll","approval_ref":"sha256:aa"}),
            d,
        ));
        assert_eq!(
            p,
            json!({"ok":true,"approval_ref":"sha256:aa","state":"approved","decision_ref":"decision-of-sha256:aa-by-terminal","claimed_by":"cli:ep1:t1"})
        );
        // Deciding again does not ask again.
        out(approve.execute(
            &ctx,
            "s",
            &json!({"op":"approve","approval_ref":"sha256:aa","summary":"x"}),
            d,
        ));
        assert_eq!(prompter.1.lock().expect("lock").len(), 1);
    }

    #[test]
    fn denial_no_terminal_and_unknown_refs() {
        let store = Arc::new(MemoryStore::default());
        store
            .states
            .lock()
            .expect("lock")
            .insert("r1".into(), ApprovalState::Pending);
        store
            .states
            .lock()
            .expect("lock")
            .insert("r2".into(), ApprovalState::Pending);
        let ctx = HandlerContext::default();
        let d = Instant::now();
        let no = ApproveHandler::new(
            store.clone(),
            Arc::new(Scripted(Ok(false), Mutex::new(Vec::new()))),
        );
        assert_eq!(
            out(no.execute(
                &ctx,
                "s",
                &json!({"op":"approve","approval_ref":"r1","summary":"x"}),
                d
            ))["state"],
            json!("denied")
        );
        let headless = ApproveHandler::new(
            store.clone(),
            Arc::new(Scripted(Err("no tty".into()), Mutex::new(Vec::new()))),
        );
        assert!(matches!(
            headless.execute(
                &ctx,
                "s",
                &json!({"op":"approve","approval_ref":"r2","summary":"x"}),
                d
            ),
            HandlerOutcome::Failed(_)
        ));
        assert_eq!(
            store.state("r2").expect("state"),
            Some(ApprovalState::Pending)
        );
        let poll = PollApprovalHandler::new(store);
        assert!(matches!(
            poll.execute(&ctx, "s", &json!({"op":"poll","approval_ref":"nope"}), d),
            HandlerOutcome::Failed(_)
        ));
        assert!(matches!(
            poll.execute(&ctx, "s", &json!({"op":"approve","approval_ref":"r1"}), d),
            HandlerOutcome::Failed(_)
        ));
    }

    #[test]
    fn yes_parsing() {
        assert!(is_yes(" Yes\r"));
        assert!(is_yes("y"));
        assert!(!is_yes(""));
        assert!(!is_yes("yess"));
        assert_eq!(terminal_safe("a\u{1b}[1mb\rc"), "a\\u{1b}[1mb\\rc");
    }
}
