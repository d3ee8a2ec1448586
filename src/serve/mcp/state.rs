//! MCP Streamable HTTP state of `world serve` (2025-11-25, DEC-MCP-5): sessions (issued at
//! `initialize`, bound to the bearer's credential), SSE streams with event ids kept for
//! resumption (`Last-Event-ID`), and the per-session notification stream (`GET /mcp/`).
//!
//! Everything here is in memory and bounded: at most [`MAX_SESSIONS`] sessions (the least
//! recently used goes first; an idle one ends after [`SESSION_IDLE`]), and at most
//! [`MAX_FINISHED`] finished streams kept for resumption (each for [`KEEP_FINISHED`]).
//! Requests without a session stay stateless and are served as before.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use serde_json::{json, Value};
use tokio::sync::mpsc;

/// Sessions kept at once.
pub const MAX_SESSIONS: usize = 1024;
/// A session unused this long has ended (its id then answers 404).
pub const SESSION_IDLE: Duration = Duration::from_secs(3600);
/// Finished streams kept for resumption.
pub const MAX_FINISHED: usize = 512;
/// How long a finished stream is kept for resumption.
pub const KEEP_FINISHED: Duration = Duration::from_secs(600);
/// The `retry` the priming event carries (ms): how long a client waits before reconnecting.
pub const RETRY_MS: u64 = 1000;
/// The first protocol version whose streams are primed and resumable.
pub const PRIMED_FROM: &str = "2025-11-25";

/// RFC 5424 severities, lowest first (MCP `logging/setLevel`).
pub const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// The rank of a level name in [`LEVELS`].
pub fn level_rank(name: &str) -> Option<usize> {
    LEVELS.iter().position(|l| *l == name)
}

/// One MCP session.
pub struct Session {
    /// The `Mcp-Session-Id` (32 hex).
    pub id: String,
    /// The credential id (sha256 of the bearer) that opened it; only it may use the session.
    pub owner: String,
    /// The bearer's episode.
    pub episode: String,
    /// The protocol version `initialize` agreed.
    pub version: String,
    /// `logging/setLevel`: the lowest level sent (`None`: no log messages).
    pub level: Mutex<Option<usize>>,
    /// Subscribed resource URIs.
    pub subscriptions: Mutex<BTreeSet<String>>,
    /// The stream of the session's `GET /mcp/` (notifications not tied to a request).
    pub notify_stream: Mutex<Option<String>>,
    last_used: Mutex<Instant>,
}

impl Session {
    /// Should a message at `level` be sent?
    pub fn wants(&self, level: &str) -> bool {
        let min = *self.level.lock().unwrap_or_else(|e| e.into_inner());
        matches!((min, level_rank(level)), (Some(m), Some(l)) if l >= m)
    }
}

/// One SSE stream: its events so far (for replay) and the live body, if connected.
struct Stream {
    owner: String,
    /// Primed (2025-11-25 and later): events carry ids and the stream can be resumed.
    primed: bool,
    events: Vec<(u64, Bytes)>,
    next: u64,
    live: Option<mpsc::UnboundedSender<Bytes>>,
    finished: Option<Instant>,
}

/// Sessions and streams.
#[derive(Default)]
pub struct State {
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    streams: Mutex<HashMap<String, Stream>>,
    finished: Mutex<VecDeque<String>>,
}

/// Why a `Last-Event-ID` does not resume.
#[derive(Debug, PartialEq, Eq)]
pub enum Resume {
    /// Not an id of a stream this daemon keeps for this credential.
    Unknown,
    /// The stream ended and every event after the id was already sent.
    Nothing,
}

fn random_hex(bytes: usize) -> String {
    let mut b = vec![0u8; bytes];
    let _ = getrandom::getrandom(&mut b);
    hex::encode(b)
}

/// One SSE event: `event: message`, `id`, `data` (one line: JSON has no raw newlines).
pub fn frame(id: &str, data: &Value) -> Bytes {
    Bytes::from(format!("event: message\nid: {id}\ndata: {data}\n\n"))
}

/// An SSE event without an id (streams of protocol versions before [`PRIMED_FROM`]).
pub fn frame_plain(data: &Value) -> Bytes {
    Bytes::from(format!("event: message\ndata: {data}\n\n"))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl State {
    /// Open a session for `owner` (credential id) in `episode` at `version`.
    pub fn open_session(&self, owner: &str, episode: &str, version: &str) -> Arc<Session> {
        let s = Arc::new(Session {
            id: random_hex(16),
            owner: owner.to_string(),
            episode: episode.to_string(),
            version: version.to_string(),
            level: Mutex::new(None),
            subscriptions: Mutex::new(BTreeSet::new()),
            notify_stream: Mutex::new(None),
            last_used: Mutex::new(Instant::now()),
        });
        let mut all = lock(&self.sessions);
        all.retain(|_, v| lock(&v.last_used).elapsed() < SESSION_IDLE);
        while all.len() >= MAX_SESSIONS {
            let oldest = all
                .iter()
                .min_by_key(|(_, v)| *lock(&v.last_used))
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => {
                    if let Some(old) = all.remove(&k) {
                        self.end_notify_stream(&old);
                    }
                }
                None => break,
            }
        }
        all.insert(s.id.clone(), s.clone());
        s
    }

    /// The live session `id` of `owner` (`None`: unknown, ended, idle too long, or another
    /// credential's — indistinguishable).
    pub fn session(&self, id: &str, owner: &str) -> Option<Arc<Session>> {
        let mut all = lock(&self.sessions);
        let s = all.get(id)?.clone();
        if lock(&s.last_used).elapsed() >= SESSION_IDLE {
            all.remove(id);
            return None;
        }
        if s.owner != owner {
            return None;
        }
        *lock(&s.last_used) = Instant::now();
        Some(s)
    }

    /// End session `id` of `owner` (`DELETE /mcp/`); `false` when there is none.
    pub fn end_session(&self, id: &str, owner: &str) -> bool {
        let Some(s) = self.session(id, owner) else {
            return false;
        };
        lock(&self.sessions).remove(id);
        self.end_notify_stream(&s);
        true
    }

    fn end_notify_stream(&self, s: &Session) {
        if let Some(sid) = lock(&s.notify_stream).take() {
            self.finish(&sid);
        }
    }

    /// Every live session (for notifications).
    pub fn sessions(&self) -> Vec<Arc<Session>> {
        lock(&self.sessions).values().cloned().collect()
    }

    /// Open a stream for `owner`: its id and the live body's receiver. A `primed` stream
    /// starts with the priming event (id `<stream>-0`, `retry`, empty data) and numbers its
    /// events; an unprimed one (protocol versions before [`PRIMED_FROM`]) frames events as
    /// before, without ids, and cannot be resumed.
    pub fn open_stream(
        &self,
        owner: &str,
        primed: bool,
    ) -> (String, mpsc::UnboundedReceiver<Bytes>) {
        let id = random_hex(16);
        let (tx, rx) = mpsc::unbounded_channel();
        let mut events = Vec::new();
        if primed {
            let priming = Bytes::from(format!("id: {id}-0\nretry: {RETRY_MS}\ndata: \n\n"));
            let _ = tx.send(priming.clone());
            events.push((0, priming));
        }
        lock(&self.streams).insert(
            id.clone(),
            Stream {
                owner: owner.to_string(),
                primed,
                events,
                next: 1,
                live: Some(tx),
                finished: None,
            },
        );
        (id, rx)
    }

    /// Append `data` to stream `sid` as the next event and send it to the live body, if any.
    /// `false` when the stream is gone or finished.
    pub fn push(&self, sid: &str, data: &Value) -> bool {
        let mut all = lock(&self.streams);
        let Some(s) = all.get_mut(sid) else {
            return false;
        };
        if s.finished.is_some() {
            return false;
        }
        let n = s.next;
        s.next += 1;
        let bytes = if s.primed {
            frame(&format!("{sid}-{n}"), data)
        } else {
            frame_plain(data)
        };
        s.events.push((n, bytes.clone()));
        if let Some(live) = &s.live {
            if live.send(bytes).is_err() {
                s.live = None;
            }
        }
        true
    }

    /// Send bytes (an SSE comment: a keep-alive) to the live body only; `false` when no body
    /// is connected or the stream is gone.
    pub fn ping(&self, sid: &str) -> bool {
        let mut all = lock(&self.streams);
        let Some(s) = all.get_mut(sid) else {
            return false;
        };
        match &s.live {
            Some(live) if live.send(Bytes::from_static(b": keep-alive\n\n")).is_ok() => true,
            _ => {
                s.live = None;
                false
            }
        }
    }

    /// Is a body connected to stream `sid`?
    pub fn connected(&self, sid: &str) -> bool {
        lock(&self.streams)
            .get(sid)
            .is_some_and(|s| s.live.as_ref().is_some_and(|l| !l.is_closed()))
    }

    /// The stream ended: close its live body; keep its events for resumption a while.
    pub fn finish(&self, sid: &str) {
        let mut all = lock(&self.streams);
        if let Some(s) = all.get_mut(sid) {
            s.live = None;
            s.finished = Some(Instant::now());
        }
        let mut done = lock(&self.finished);
        done.push_back(sid.to_string());
        while done.len() > MAX_FINISHED
            || done.front().is_some_and(|f| {
                all.get(f)
                    .and_then(|s| s.finished)
                    .is_none_or(|t| t.elapsed() > KEEP_FINISHED)
            })
        {
            if let Some(old) = done.pop_front() {
                all.remove(&old);
            }
        }
    }

    /// All events of a finished stream, concatenated (a response written at once).
    pub fn body_of(&self, sid: &str) -> Bytes {
        let all = lock(&self.streams);
        let mut out = Vec::new();
        if let Some(s) = all.get(sid) {
            for (_, b) in &s.events {
                out.extend_from_slice(b);
            }
        }
        Bytes::from(out)
    }

    /// Resume from `last_event_id` (`<stream>-<n>`) for `owner`: a receiver that first yields
    /// every event after `n`, then the live ones until the stream finishes.
    ///
    /// # Errors
    /// [`Resume::Unknown`] or [`Resume::Nothing`].
    pub fn resume(
        &self,
        last_event_id: &str,
        owner: &str,
    ) -> Result<mpsc::UnboundedReceiver<Bytes>, Resume> {
        let (sid, n) = last_event_id.rsplit_once('-').ok_or(Resume::Unknown)?;
        let n: u64 = n.parse().map_err(|_| Resume::Unknown)?;
        let mut all = lock(&self.streams);
        let s = all.get_mut(sid).ok_or(Resume::Unknown)?;
        if s.owner != owner || !s.primed || n >= s.next {
            return Err(Resume::Unknown);
        }
        let after: Vec<Bytes> = s
            .events
            .iter()
            .filter(|(i, _)| *i > n)
            .map(|(_, b)| b.clone())
            .collect();
        if after.is_empty() && s.finished.is_some() {
            return Err(Resume::Nothing);
        }
        let (tx, rx) = mpsc::unbounded_channel();
        for b in after {
            let _ = tx.send(b);
        }
        if s.finished.is_none() {
            s.live = Some(tx);
        }
        Ok(rx)
    }
}

/// A `notifications/message` (MCP logging) from `world`.
pub fn log_message(level: &str, data: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/message",
           "params": {"level": level, "logger": "world", "data": data}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(rx: &mut mpsc::UnboundedReceiver<Bytes>) -> String {
        let mut out = String::new();
        while let Ok(b) = rx.try_recv() {
            out.push_str(&String::from_utf8_lossy(&b));
        }
        out
    }

    #[test]
    fn streams_prime_number_and_resume_after_the_last_event_seen() {
        let st = State::default();
        let (sid, mut rx) = st.open_stream("me", true);
        assert!(st.push(&sid, &json!({"a": 1})));
        let first = drain(&mut rx);
        assert!(first.starts_with(&format!("id: {sid}-0\nretry: {RETRY_MS}\ndata: \n\n")));
        assert!(first.contains(&format!("id: {sid}-1\ndata: {{\"a\":1}}")));
        drop(rx);
        st.push(&sid, &json!({"b": 2}));
        assert_eq!(
            st.resume(&format!("{sid}-1"), "other").unwrap_err(),
            Resume::Unknown
        );
        let mut again = st.resume(&format!("{sid}-1"), "me").unwrap();
        st.push(&sid, &json!({"c": 3}));
        st.finish(&sid);
        let replay = drain(&mut again);
        assert!(
            replay.contains("\"b\":2") && replay.contains("\"c\":3") && !replay.contains("\"a\":1")
        );
        assert_eq!(
            st.resume(&format!("{sid}-3"), "me").unwrap_err(),
            Resume::Nothing
        );
        assert_eq!(st.resume("nope-1", "me").unwrap_err(), Resume::Unknown);
        assert!(
            !st.push(&sid, &json!({})),
            "a finished stream takes no more events"
        );
        let (plain, mut rx) = st.open_stream("me", false);
        st.push(&plain, &json!({"d": 4}));
        assert_eq!(drain(&mut rx), "event: message\ndata: {\"d\":4}\n\n");
        assert_eq!(
            st.resume(&format!("{plain}-0"), "me").unwrap_err(),
            Resume::Unknown
        );
    }

    #[test]
    fn sessions_belong_to_their_credential_and_end() {
        let st = State::default();
        let s = st.open_session("me", "ep1", "2025-11-25");
        assert!(st.session(&s.id, "me").is_some());
        assert!(st.session(&s.id, "other").is_none());
        assert!(!s.wants("info"));
        *s.level.lock().unwrap() = level_rank("notice");
        assert!(s.wants("error") && !s.wants("info"));
        assert!(!st.end_session(&s.id, "other"));
        assert!(st.end_session(&s.id, "me"));
        assert!(st.session(&s.id, "me").is_none());
    }
}
