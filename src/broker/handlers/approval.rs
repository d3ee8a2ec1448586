//! `Human.Approve` / `Human.PollApproval`: approvals decided by a person, over the store's
//! approval request/decision objects and the `approval_claims` table (authority-and-broker.md
//! §11, §12 row 5; new in `world`; payloads and object formats are [U], decided in
//! docs/DECISIONS.md H-13).
//!
//! | Effect | Payload | Output |
//! |---|---|---|
//! | `Human.Approve` | `{"op":"approve","summary":TEXT}` (a new request) or `{"op":"approve","approval_ref":R}` (an existing one) | `{"ok":true,"approval_ref":R,"state":"pending"\|"approved"\|"denied"[,"decision_ref":D][,"claimed_by":I][,"note":WHY]}` |
//! | `Human.PollApproval` | `{"op":"poll","approval_ref":R}` | `{"ok":true,"approval_ref":R,"state":"pending"\|"approved"\|"denied"[,"decision_ref":D][,"claimed_by":I]}` |
//!
//! `R` is the approval **request**'s ref; `I` the effect intent id (`effect:<ep>:<n>`) that
//! consumed it. `Human.Approve` on a pending request asks the person at the terminal (the
//! request's own stored summary, control characters escaped); an answer writes the decision,
//! and an approval is claimed by this effect's intent in the same transaction. No terminal or
//! no answer before the handler deadline leaves the request pending (`state:"pending"` with a
//! `note`): a person decides it later with `world approval decide`, and a later
//! `Human.Approve` claims it. An approval is single use: one claimed by another intent fails
//! the effect (`ErrApprovalAlreadyConsumed`). A request is bound to its episode; another
//! episode's request is refused. `Human.PollApproval` only reads.
//!
//! The store is reached through [`ApprovalStore`] (`crate::authority::approvals::StoreApprovals`
//! over the store file); the terminal through [`Prompter`] ([`TtyPrompter`] opens `/dev/tty`,
//! [`NoTerminal`] never asks).

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Map, Value};

use super::{check_keys, payload_object, required_str, Handler, HandlerContext, HandlerOutcome};
use super::{Intent, PayloadError, HUMAN_APPROVE, HUMAN_POLL_APPROVAL};
use crate::termtext::{escape_line, escape_text};

pub use crate::authority::approvals::{
    check_summary, ApprovalError, ApprovalState, ApprovalStore, ApprovalView, ALREADY_CONSUMED,
    MAX_SUMMARY_BYTES,
};

/// Why a person was not asked, or gave no answer: the request stays pending, and the text is
/// the `note` of `Human.Approve`'s answer.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    /// The surface asks no terminal ([`NoTerminal`]).
    #[error("this surface asks no terminal; decide it with `world approval decide`")]
    NoTerminal,
    /// `/dev/tty` cannot be opened.
    #[error("no controlling terminal to ask ({0}); decide it with `world approval decide`")]
    NoTty(#[source] std::io::Error),
    /// Writing the question failed.
    #[error("writing to the terminal: {0}")]
    Write(#[source] std::io::Error),
    /// Reading the answer failed.
    #[error("reading the terminal: {0}")]
    Read(#[source] std::io::Error),
    /// No answer before the handler deadline.
    #[error(
        "no answer on the terminal before the deadline; decide it with `world approval decide`"
    )]
    Timeout,
}

/// Why `Human.Approve` or `Human.PollApproval` failed; the text is the message recorded in the
/// effect's failed result.
#[derive(Debug, thiserror::Error)]
pub enum ApprovalEffectError {
    /// The payload's shape (not an object, unknown or missing keys).
    #[error(transparent)]
    Payload(#[from] PayloadError),
    /// An `op` the effect does not serve.
    #[error("{effect} refuses op {got:?}: it admits only {op}")]
    WrongOp {
        /// The effect.
        effect: &'static str,
        /// The op given.
        got: String,
        /// The op the effect serves.
        op: &'static str,
    },
    /// `approval_ref` is empty, over 256 bytes or holds control characters.
    #[error("{effect} refused: approval_ref {reference:?} is not a ref")]
    BadRef {
        /// The effect.
        effect: &'static str,
        /// The text given.
        reference: String,
    },
    /// No such approval request.
    #[error("{effect} refused: no approval request {reference}")]
    NoRequest {
        /// The effect.
        effect: &'static str,
        /// The request ref.
        reference: String,
    },
    /// The request is bound to another episode.
    #[error("{effect} refused: approval request {reference} belongs to another episode")]
    OtherEpisode {
        /// The effect.
        effect: &'static str,
        /// The request ref.
        reference: String,
    },
    /// Neither or both of `approval_ref` and `summary`.
    #[error("{HUMAN_APPROVE} refused: give exactly one of approval_ref (an existing request) or summary (a new one)")]
    RefOrSummary,
    /// The summary of a new request is refused ([`check_summary`]).
    #[error("{HUMAN_APPROVE} refused: {0}")]
    BadSummary(#[source] ApprovalError),
    /// The approval store refused or failed (already consumed, already decided, …).
    #[error(transparent)]
    Store(#[from] ApprovalError),
}

/// A yes/no question to a person.
pub trait Prompter: Send + Sync {
    /// Asks `question` and answers `true` only for an explicit yes, before `deadline`.
    ///
    /// # Errors
    /// [`PromptError`] (the request stays pending): no terminal, an I/O error, or no answer
    /// before the deadline.
    fn confirm(&self, question: &str, deadline: Instant) -> Result<bool, PromptError>;
}

/// Most summary lines an approval prompt shows; the rest is counted, not shown.
pub const PROMPT_LINES: usize = 40;

/// The text of an approval prompt: an authentic header, the untrusted summary with every line
/// prefixed `  | ` (at most [`PROMPT_LINES`] lines), then the question, which names the request
/// and episode again so the last lines before the answer are never the summary's.
pub fn prompt_text(episode: &str, request_ref: &str, summary: &str, question: &str) -> String {
    let safe = escape_text(summary);
    let lines: Vec<&str> = safe.lines().collect();
    let mut out = format!(
        "world: approval request {} of episode {} says:\n",
        escape_line(request_ref),
        escape_line(episode)
    );
    for l in lines.iter().take(PROMPT_LINES) {
        out.push_str("  | ");
        out.push_str(l);
        out.push('\n');
    }
    if lines.len() > PROMPT_LINES {
        out.push_str(&format!(
            "  | … {} more line(s) not shown (world approval show {})\n",
            lines.len() - PROMPT_LINES,
            escape_line(request_ref)
        ));
    }
    out.push_str(&format!(
        "world: {question} request {} of episode {} ({} summary line(s) above)?",
        escape_line(request_ref),
        escape_line(episode),
        lines.len()
    ));
    out
}

/// `true` for `y` or `yes` in any case (after trimming); everything else is no.
pub fn is_yes(answer: &str) -> bool {
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

/// Never asks: every pending approval stays pending (`world serve` without
/// `--approve-on-tty`, `world mcp`), to be decided with `world approval decide`.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTerminal;

impl Prompter for NoTerminal {
    fn confirm(&self, _question: &str, _deadline: Instant) -> Result<bool, PromptError> {
        Err(PromptError::NoTerminal)
    }
}

/// Prompts on the controlling terminal (`/dev/tty`), never on stdin/stdout.
#[derive(Clone, Copy, Debug, Default)]
pub struct TtyPrompter;

impl Prompter for TtyPrompter {
    fn confirm(&self, question: &str, deadline: Instant) -> Result<bool, PromptError> {
        let mut tty = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .map_err(PromptError::NoTty)?;
        let secs = deadline
            .saturating_duration_since(Instant::now())
            .as_secs_f64()
            .ceil();
        write!(
            tty,
            "{question}\n(times out in {secs:.0} s: no answer leaves the request pending; Ctrl-D answers no) [y/N] "
        )
            .and_then(|_| tty.flush())
            .map_err(PromptError::Write)?;
        let mut answer = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                let _ = writeln!(tty);
                return Err(PromptError::Timeout);
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
                return Err(PromptError::Read(err));
            }
            if rc == 0 {
                continue;
            }
            // Canonical mode: a read returns a whole line, or what was typed when Ctrl-D was
            // pressed (no newline) — which answers no, as does end of input.
            let mut buf = [0u8; 256];
            match tty.read(&mut buf) {
                Ok(0) => return Ok(false),
                Ok(n) if buf[n - 1] == b'\n' => {
                    answer.extend_from_slice(&buf[..n - 1]);
                    break;
                }
                Ok(n) if n < buf.len() => {
                    let _ = writeln!(tty);
                    return Ok(false);
                }
                Ok(n) => {
                    if answer.len() < 64 {
                        answer.extend_from_slice(&buf[..n]);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(PromptError::Read(e)),
            }
        }
        Ok(is_yes(&String::from_utf8_lossy(&answer)))
    }
}

fn check_ref(effect: &'static str, r: &str) -> Result<(), ApprovalEffectError> {
    if r.is_empty() || r.len() > 256 || r.chars().any(char::is_control) {
        return Err(ApprovalEffectError::BadRef {
            effect,
            reference: r.to_owned(),
        });
    }
    Ok(())
}

fn op_object<'a>(
    payload: &'a Value,
    effect: &'static str,
    op: &'static str,
    keys: &[&str],
) -> Result<&'a Map<String, Value>, ApprovalEffectError> {
    let obj = payload_object(payload)?;
    check_keys(obj, keys, effect)?;
    let got = required_str(obj, "op", effect)?;
    if got != op {
        return Err(ApprovalEffectError::WrongOp {
            effect,
            got: got.to_owned(),
            op,
        });
    }
    Ok(obj)
}

/// The request `r`, which must exist and belong to `episode`.
fn bound_view(
    store: &dyn ApprovalStore,
    effect: &'static str,
    r: &str,
    episode: &str,
) -> Result<ApprovalView, ApprovalEffectError> {
    let view = store
        .view(r)?
        .ok_or_else(|| ApprovalEffectError::NoRequest {
            effect,
            reference: r.to_owned(),
        })?;
    if view.episode != episode {
        return Err(ApprovalEffectError::OtherEpisode {
            effect,
            reference: r.to_owned(),
        });
    }
    Ok(view)
}

fn state_output(r: &str, state: &ApprovalState, claimed_by: Option<&str>) -> Value {
    let mut out = json!({"ok": true, "approval_ref": r, "state": state.name()});
    if let Some(map) = out.as_object_mut() {
        if let Some(d) = state.decision_ref() {
            map.insert("decision_ref".into(), json!(d));
        }
        if let Some(inv) = claimed_by {
            map.insert("claimed_by".into(), json!(inv));
        }
    }
    out
}

/// `Human.Approve` (module docs): asks the person at the terminal to decide a pending
/// request, records the decision, and claims an approval for the effect's intent.
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
        intent: &Intent<'_>,
        scope: &str,
        payload: &Value,
        deadline: Instant,
    ) -> Result<Value, ApprovalEffectError> {
        let obj = op_object(
            payload,
            HUMAN_APPROVE,
            "approve",
            &["op", "approval_ref", "summary"],
        )?;
        let r = match (obj.get("approval_ref"), obj.get("summary")) {
            (Some(_), None) => {
                let r = required_str(obj, "approval_ref", HUMAN_APPROVE)?;
                check_ref(HUMAN_APPROVE, r)?;
                r.to_owned()
            }
            (None, Some(_)) => {
                let summary = required_str(obj, "summary", HUMAN_APPROVE)?;
                check_summary(summary).map_err(ApprovalEffectError::BadSummary)?;
                self.store.open_request(
                    &ctx.episode,
                    summary,
                    intent.id,
                    scope,
                    intent.cost,
                    intent.now,
                )?
            }
            _ => return Err(ApprovalEffectError::RefOrSummary),
        };
        let view = bound_view(self.store.as_ref(), HUMAN_APPROVE, &r, &ctx.episode)?;
        match &view.state {
            ApprovalState::Pending => {
                let question = prompt_text(&ctx.episode, &r, &view.summary, "approve");
                match self.prompter.confirm(&question, deadline) {
                    Ok(approved) => {
                        let decision_ref = self.store.decide(
                            &r,
                            approved,
                            "terminal",
                            Some(intent.id),
                            intent.now,
                        )?;
                        let state = if approved {
                            ApprovalState::Approved { decision_ref }
                        } else {
                            ApprovalState::Denied { decision_ref }
                        };
                        Ok(state_output(&r, &state, approved.then_some(intent.id)))
                    }
                    Err(why) => {
                        let mut out = state_output(&r, &view.state, None);
                        if let Some(map) = out.as_object_mut() {
                            map.insert("note".into(), json!(why.to_string()));
                        }
                        Ok(out)
                    }
                }
            }
            ApprovalState::Approved { .. } => match view.claimed_by.as_deref() {
                Some(by) if by != intent.id => Err(ApprovalError::AlreadyConsumed {
                    request: r.clone(),
                    by: by.to_owned(),
                }
                .into()),
                Some(_) => Ok(state_output(&r, &view.state, Some(intent.id))),
                None => {
                    self.store.claim(&r, intent.id)?;
                    Ok(state_output(&r, &view.state, Some(intent.id)))
                }
            },
            ApprovalState::Denied { .. } => Ok(state_output(&r, &view.state, None)),
        }
    }
}

impl Handler for ApproveHandler {
    fn effect(&self) -> &'static str {
        HUMAN_APPROVE
    }

    /// Without an intent there is nothing to claim an approval for: always Failed.
    fn execute(
        &self,
        _ctx: &HandlerContext,
        _scope: &str,
        _payload: &Value,
        _deadline: Instant,
    ) -> HandlerOutcome {
        HandlerOutcome::Failed(format!(
            "{HUMAN_APPROVE} runs only under a journaled effect intent (it claims the approval for it)"
        ))
    }

    fn execute_intent(
        &self,
        ctx: &HandlerContext,
        intent: &Intent<'_>,
        scope: &str,
        payload: &Value,
        deadline: Instant,
    ) -> HandlerOutcome {
        match self.run(ctx, intent, scope, payload, deadline) {
            Ok(out) => HandlerOutcome::json(&out),
            Err(e) => HandlerOutcome::Failed(e.to_string()),
        }
    }
}

/// `Human.PollApproval`: answers pending / approved / denied (and who consumed it); reads only.
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
        ctx: &HandlerContext,
        _scope: &str,
        payload: &Value,
        _deadline: Instant,
    ) -> HandlerOutcome {
        let run = || -> Result<Value, ApprovalEffectError> {
            let obj = op_object(
                payload,
                HUMAN_POLL_APPROVAL,
                "poll",
                &["op", "approval_ref"],
            )?;
            let r = required_str(obj, "approval_ref", HUMAN_POLL_APPROVAL)?;
            check_ref(HUMAN_POLL_APPROVAL, r)?;
            let view = bound_view(self.store.as_ref(), HUMAN_POLL_APPROVAL, r, &ctx.episode)?;
            Ok(state_output(r, &view.state, view.claimed_by.as_deref()))
        };
        match run() {
            Ok(out) => HandlerOutcome::json(&out),
            Err(e) => HandlerOutcome::Failed(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::sync::Mutex;
    use std::time::Duration;

    /// An in-memory store with the trait's semantics (decide once; claim once).
    #[derive(Default)]
    struct MemoryStore {
        views: Mutex<HashMap<String, ApprovalView>>,
        next: Mutex<u32>,
    }

    impl MemoryStore {
        fn add(&self, r: &str, episode: &str) {
            self.views.lock().expect("lock").insert(
                r.into(),
                ApprovalView {
                    request_ref: r.into(),
                    episode: episode.into(),
                    summary: "stored summary \u{1b}[2J".into(),
                    state: ApprovalState::Pending,
                    claimed_by: None,
                },
            );
        }
    }

    impl ApprovalStore for MemoryStore {
        fn open_request(
            &self,
            ep: &str,
            summary: &str,
            _o: &str,
            _scope: &str,
            _cost: i64,
            _n: i64,
        ) -> Result<String, ApprovalError> {
            let mut n = self.next.lock().map_err(|_| ApprovalError::Poisoned)?;
            *n += 1;
            let r = format!("req-{n}");
            self.add(&r, ep);
            if let Some(v) = self
                .views
                .lock()
                .map_err(|_| ApprovalError::Poisoned)?
                .get_mut(&r)
            {
                v.summary = summary.into();
            }
            Ok(r)
        }
        fn view(&self, r: &str) -> Result<Option<ApprovalView>, ApprovalError> {
            Ok(self
                .views
                .lock()
                .map_err(|_| ApprovalError::Poisoned)?
                .get(r)
                .cloned())
        }
        fn decide(
            &self,
            r: &str,
            approved: bool,
            by: &str,
            claim_for: Option<&str>,
            _now: i64,
        ) -> Result<String, ApprovalError> {
            let mut views = self.views.lock().map_err(|_| ApprovalError::Poisoned)?;
            let v = views
                .get_mut(r)
                .ok_or_else(|| ApprovalError::NotFound(r.into()))?;
            if let Some(d) = v.state.decision_ref() {
                return Err(ApprovalError::AlreadyDecided {
                    request: r.into(),
                    state: v.state.name(),
                    decision: d.into(),
                });
            }
            let decision_ref = format!("decision-of-{r}-by-{by}");
            v.state = if approved {
                v.claimed_by = claim_for.map(str::to_owned);
                ApprovalState::Approved {
                    decision_ref: decision_ref.clone(),
                }
            } else {
                ApprovalState::Denied {
                    decision_ref: decision_ref.clone(),
                }
            };
            Ok(decision_ref)
        }
        fn claim(&self, r: &str, intent: &str) -> Result<(), ApprovalError> {
            let mut views = self.views.lock().map_err(|_| ApprovalError::Poisoned)?;
            let v = views
                .get_mut(r)
                .ok_or_else(|| ApprovalError::NotFound(r.into()))?;
            match (&v.state, &v.claimed_by) {
                (ApprovalState::Approved { .. }, None) => {
                    v.claimed_by = Some(intent.into());
                    Ok(())
                }
                (ApprovalState::Approved { .. }, Some(by)) => Err(ApprovalError::AlreadyConsumed {
                    request: r.into(),
                    by: by.clone(),
                }),
                (other, _) => Err(ApprovalError::NotApproved {
                    request: r.into(),
                    state: other.name(),
                }),
            }
        }
    }

    struct Scripted(bool, Mutex<Vec<String>>);
    impl Prompter for Scripted {
        fn confirm(&self, q: &str, _d: Instant) -> Result<bool, PromptError> {
            if let Ok(mut asked) = self.1.lock() {
                asked.push(q.to_owned());
            }
            Ok(self.0)
        }
    }

    fn out(o: HandlerOutcome) -> Value {
        match o {
            HandlerOutcome::Succeeded(b) => serde_json::from_slice(&b).expect("json"),
            other => panic!("{other:?}"),
        }
    }

    fn failed(o: HandlerOutcome) -> String {
        match o {
            HandlerOutcome::Failed(m) => m,
            other => panic!("expected Failed, got {other:?}"),
        }
    }

    fn ctx(ep: &str) -> HandlerContext {
        HandlerContext {
            episode: ep.into(),
            ..Default::default()
        }
    }

    fn intent(id: &str) -> Intent<'_> {
        Intent {
            id,
            now: 100,
            cost: 1,
        }
    }

    #[test]
    fn approve_claims_for_the_intent_then_poll_reads_it() {
        let store = Arc::new(MemoryStore::default());
        store.add("sha256:aa", "ep1");
        let prompter = Arc::new(Scripted(true, Mutex::new(Vec::new())));
        let approve = ApproveHandler::new(store.clone(), prompter.clone());
        let poll = PollApprovalHandler::new(store.clone());
        let d = Instant::now() + Duration::from_secs(1);
        let p = out(poll.execute(
            &ctx("ep1"),
            "s",
            &json!({"op":"poll","approval_ref":"sha256:aa"}),
            d,
        ));
        assert_eq!(p["state"], json!("pending"));
        let a = out(approve.execute_intent(
            &ctx("ep1"),
            &intent("effect:ep1:1"),
            "s",
            &json!({"op":"approve","approval_ref":"sha256:aa"}),
            d,
        ));
        assert_eq!(
            a,
            json!({"ok":true,"approval_ref":"sha256:aa","state":"approved","decision_ref":"decision-of-sha256:aa-by-terminal","claimed_by":"effect:ep1:1"})
        );
        let asked = prompter.1.lock().expect("lock").clone();
        assert_eq!(asked.len(), 1);
        assert!(asked[0].contains("stored summary"), "{asked:?}");
        assert!(
            !asked[0].contains('\u{1b}'),
            "escape reached the terminal: {asked:?}"
        );
        let p = out(poll.execute(
            &ctx("ep1"),
            "s",
            &json!({"op":"poll","approval_ref":"sha256:aa"}),
            d,
        ));
        assert_eq!(p["claimed_by"], json!("effect:ep1:1"));
        // Single use: another intent cannot consume it, and nobody is asked again.
        let msg = failed(approve.execute_intent(
            &ctx("ep1"),
            &intent("effect:ep1:2"),
            "s",
            &json!({"op":"approve","approval_ref":"sha256:aa"}),
            d,
        ));
        assert!(msg.starts_with(ALREADY_CONSUMED), "{msg}");
        assert_eq!(prompter.1.lock().expect("lock").len(), 1);
    }

    #[test]
    fn a_summary_opens_a_request_and_no_terminal_leaves_it_pending() {
        let store = Arc::new(MemoryStore::default());
        let approve = ApproveHandler::new(store.clone(), Arc::new(NoTerminal));
        let d = Instant::now();
        let a = out(approve.execute_intent(
            &ctx("ep1"),
            &intent("effect:ep1:1"),
            "s",
            &json!({"op":"approve","summary":"deploy v2"}),
            d,
        ));
        assert_eq!(a["state"], json!("pending"));
        assert_eq!(a["approval_ref"], json!("req-1"));
        assert!(a["note"]
            .as_str()
            .expect("note")
            .contains("world approval decide"));
        // Decided out of band (as `world approval decide` does), a later approve claims it.
        store
            .decide("req-1", true, "alice", None, 5)
            .expect("decide");
        let a = out(approve.execute_intent(
            &ctx("ep1"),
            &intent("effect:ep1:2"),
            "s",
            &json!({"op":"approve","approval_ref":"req-1"}),
            d,
        ));
        assert_eq!(a["claimed_by"], json!("effect:ep1:2"));
    }

    #[test]
    fn denial_other_episode_and_bad_payloads() {
        let store = Arc::new(MemoryStore::default());
        store.add("r1", "ep1");
        let d = Instant::now();
        let no = ApproveHandler::new(
            store.clone(),
            Arc::new(Scripted(false, Mutex::new(Vec::new()))),
        );
        let a = out(no.execute_intent(
            &ctx("ep1"),
            &intent("effect:ep1:1"),
            "s",
            &json!({"op":"approve","approval_ref":"r1"}),
            d,
        ));
        assert_eq!(a["state"], json!("denied"));
        assert!(a.get("claimed_by").is_none());
        let poll = PollApprovalHandler::new(store.clone());
        let msg = failed(poll.execute(
            &ctx("ep2"),
            "s",
            &json!({"op":"poll","approval_ref":"r1"}),
            d,
        ));
        assert!(msg.contains("another episode"), "{msg}");
        for bad in [
            json!({"op":"poll","approval_ref":"nope"}),
            json!({"op":"approve","approval_ref":"r1"}),
            json!({"op":"poll","approval_ref":"r1","x":1}),
            json!({"op":"poll","approval_ref":"a\u{0}b"}),
            json!([1]),
        ] {
            failed(poll.execute(&ctx("ep1"), "s", &bad, d));
        }
        for bad in [
            json!({"op":"approve"}),
            json!({"op":"approve","approval_ref":"r1","summary":"x"}),
            json!({"op":"approve","summary":""}),
            json!({"op":"approve","summary":"x".repeat(MAX_SUMMARY_BYTES + 1)}),
        ] {
            failed(no.execute_intent(&ctx("ep1"), &intent("effect:ep1:3"), "s", &bad, d));
        }
        // No intent: nothing to claim for.
        failed(no.execute(
            &ctx("ep1"),
            "s",
            &json!({"op":"approve","approval_ref":"r1"}),
            d,
        ));
    }

    /// The typed errors print the texts recorded in failed results before they were typed.
    #[test]
    fn failure_texts_are_the_recorded_messages() {
        let store = Arc::new(MemoryStore::default());
        store.add("r1", "ep1");
        let no = ApproveHandler::new(store.clone(), Arc::new(NoTerminal));
        let d = Instant::now();
        let fail = |payload: Value| {
            failed(no.execute_intent(&ctx("ep2"), &intent("effect:ep2:1"), "s", &payload, d))
        };
        assert_eq!(fail(json!(1)), "payload is not a JSON object");
        assert_eq!(
            fail(json!({"op":"approve","x":1})),
            "Human.Approve refused: unknown payload key \"x\"; it admits only: op, approval_ref, summary"
        );
        assert_eq!(
            fail(json!({"op":1})),
            "Human.Approve refused: payload key \"op\" must be a string"
        );
        assert_eq!(
            fail(json!({"op":"poll"})),
            "Human.Approve refuses op \"poll\": it admits only approve"
        );
        assert_eq!(
            fail(json!({"op":"approve","summary":" "})),
            "Human.Approve refused: the approval summary is empty"
        );
        assert_eq!(
            fail(json!({"op":"approve"})),
            "Human.Approve refused: give exactly one of approval_ref (an existing request) or summary (a new one)"
        );
        assert_eq!(
            fail(json!({"op":"approve","approval_ref":""})),
            "Human.Approve refused: approval_ref \"\" is not a ref"
        );
        assert_eq!(
            fail(json!({"op":"approve","approval_ref":"r9"})),
            "Human.Approve refused: no approval request r9"
        );
        assert_eq!(
            fail(json!({"op":"approve","approval_ref":"r1"})),
            "Human.Approve refused: approval request r1 belongs to another episode"
        );
        assert_eq!(
            PromptError::Timeout.to_string(),
            "no answer on the terminal before the deadline; decide it with `world approval decide`"
        );
    }

    #[test]
    fn yes_parsing() {
        assert!(is_yes(" Yes\r"));
        assert!(is_yes("y"));
        assert!(!is_yes(""));
        assert!(!is_yes("yess"));
        assert_eq!(escape_text("a\u{1b}[1mb\rc"), "a\\u{1b}[1mb\\rc");
        assert_eq!(escape_text("x\u{202e}y\u{2066}"), "x\\u{202e}y\\u{2066}");
        // A summary cannot end the prompt: the question is always the last line.
        let fake = format!(
            "bad{}world: approve request sha256:1 of episode ep1?",
            "\n".repeat(60)
        );
        let p = prompt_text("ep1", "sha256:real", &fake, "approve");
        let last = p.lines().last().unwrap_or_default();
        assert!(
            last.starts_with(
                "world: approve request sha256:real of episode ep1 (61 summary line(s) above)"
            ),
            "{last}"
        );
        assert!(p.contains("more line(s) not shown"));
        assert!(p.lines().skip(1).take(40).all(|l| l.starts_with("  | ")));
    }
}
