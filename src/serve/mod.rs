//! `world serve`: the synchronous core over HTTP (`/v1`), MCP (`/mcp/`) and A2A (`/a2a/`)
//! on loopback (surfaces.md). Startup stages, the shared application state and the router.
//!
//! Concurrency model (docs/DECISIONS.md): the single writer [`Store`] sits behind a
//! FIFO async mutex; every write (commit, invocation) takes it and then runs on tokio's
//! blocking pool. Reads use a small pool of read-only connections, so `GET /v1/*` keeps
//! answering while invocations queue. Holding the one writer for a whole invocation
//! serialises effectful calls per episode (and across episodes).

pub mod a2a;
pub mod agui;
pub mod auth;
pub mod jsonrpc;
pub mod mcp;
pub mod origin;
pub mod rest;

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex as StdMutex};
use std::time::{Duration, Instant};

use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::Router;
use tokio::sync::Mutex;

use crate::broker::handlers::ailang::PinnedTool;
use crate::broker::handlers::approval::{NoTerminal, TtyPrompter};
use crate::ops::invoke::{self, Call, Committed, HostConfig, InvokeError};
use crate::ops::session::Session;
use crate::store::{self, Store, WriteOptions};
use crate::transitions::pins::StorePins;
use crate::transitions::publish::InterpreterChoice;
use crate::transitions::registry::Descriptor;

/// Default bind address (surfaces.md §1).
pub const DEFAULT_BIND: &str = "127.0.0.1:7644";
/// Store read bound per GET (10 s → 503 `Timeout`).
pub const READ_BOUND: Duration = Duration::from_secs(10);
/// Commit store work bound (3 s) and credential lookup bound (3 s).
pub const COMMIT_BOUND: Duration = Duration::from_secs(3);
/// Credential lookup bound (3 s).
pub const CREDENTIAL_BOUND: Duration = Duration::from_secs(3);
/// Aggregate deadline of one MCP/A2A POST (20 s), waiting for the writer included.
pub const POST_DEADLINE: Duration = Duration::from_secs(20);
/// HTTP read bound (30 s, surfaces.md §1 "HTTP read / write"): a request body must arrive
/// in full within it, counted from the start of the body read; otherwise the request answers
/// 408 and the connection is closed (a trickled or stalled body holds nothing longer).
pub const HTTP_READ: Duration = Duration::from_secs(30);
/// The request-body read bound to use: [`HTTP_READ`], or the shorter bound in milliseconds
/// named by `WORLD_TEST_HTTP_READ_MS` (a test hook, [`crate::testhook`]: test builds only; it
/// can only shorten the bound, never lengthen or disable it; 0 and unparsable values are
/// ignored).
pub fn http_read_bound() -> Duration {
    bound_from(crate::testhook::var("WORLD_TEST_HTTP_READ_MS").as_deref())
}

fn bound_from(ms: Option<&str>) -> Duration {
    ms.and_then(|v| v.parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .map(Duration::from_millis)
        .map_or(HTTP_READ, |d| d.min(HTTP_READ))
}
/// Shutdown drain (10 s).
pub const DRAIN: Duration = Duration::from_secs(10);
/// `/v1/commit` body limit in bytes.
pub const COMMIT_BODY: usize = store::commit::MAX_BODY;
/// MCP body limit in bytes (4 MiB).
pub const MCP_BODY: usize = 4 * 1024 * 1024;
/// A2A body limit in bytes (1 MiB).
pub const A2A_BODY: usize = 1024 * 1024;
/// Invocations allowed to wait for the writer at once; beyond it a call answers
/// `host callback capacity exceeded` (docs/DECISIONS.md).
pub const MAX_QUEUED: usize = 1024;
pub use crate::store::scan::{integrity_scan, SCAN_ROWS, SCAN_TIME};

/// A startup stage (surfaces.md §1); the name appears in the failure line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Flags, workspace root, corpus, run caps.
    Config,
    /// Store open and writer lock.
    StoreOpen,
    /// Tool binary and interpreter archive.
    Archive,
    /// Epoch registry bootstrap.
    RegistryBootstrap,
    /// `--bind` host policy.
    BindPolicy,
    /// Binding the socket.
    Listen,
}

impl Stage {
    /// `config`, `store-open`, `archive`, `registry-bootstrap`, `bind-policy`, `listen`.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Config => "config",
            Stage::StoreOpen => "store-open",
            Stage::Archive => "archive",
            Stage::RegistryBootstrap => "registry-bootstrap",
            Stage::BindPolicy => "bind-policy",
            Stage::Listen => "listen",
        }
    }
}

/// A failed start: `daemon startup failed at <stage>: <detail>: <cause>`; exit 2, or 6 when
/// the stage is `store-open` because another process holds the writer lock.
#[derive(Debug, thiserror::Error)]
#[error("daemon startup failed at {}: {detail}: {cause}", stage.name())]
pub struct StartupError {
    /// Where it failed.
    pub stage: Stage,
    /// What was being done.
    pub detail: String,
    /// Why.
    pub cause: String,
    /// True when another process holds the writer lock (exit 6).
    pub lock_held: bool,
}

fn fail(stage: Stage, detail: impl Into<String>, cause: impl std::fmt::Display) -> StartupError {
    StartupError {
        stage,
        detail: detail.into(),
        cause: cause.to_string(),
        lock_held: false,
    }
}

/// `world serve` configuration (surfaces.md §1 flags).
#[derive(Clone, Debug)]
pub struct Config {
    /// The store file.
    pub db: PathBuf,
    /// `host:port`; the host must be loopback.
    pub bind: String,
    /// `--interpreter`.
    pub interpreter: InterpreterChoice,
    /// The host flags (`--workspace-root`, `--tool-ailang-bin`, `--examples-dir`, the run
    /// allowlist, `--ledger`, the exec profile flags, `--allow-unattested`), checked and pinned
    /// at startup by [`crate::ops::host`] as for `invoke` and `mcp`.
    pub host: crate::ops::host::HostFlags,
    /// Extra allowed `Origin` values.
    pub allow_origins: Vec<String>,
    /// `--approve-on-tty`: `Human.Approve` asks on the daemon's controlling terminal;
    /// otherwise requests stay pending for `world approval decide` (DECISIONS H-13).
    pub approve_on_tty: bool,
    /// The request-body read bound ([`HTTP_READ`] unless a test shortens it).
    pub http_read: Duration,
    /// The clock every request reads.
    pub clock: crate::clock::Clock,
}

/// A checked bind address: the socket address to bind and the host text as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BindAddr {
    /// Where to bind (`localhost` binds 127.0.0.1).
    pub addr: SocketAddr,
}

/// Why `--bind` was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BindError {
    /// Not `host:port` with a decimal port in range.
    #[error("{0:?} is not host:port")]
    NotHostPort(String),
    /// A host other than `127.0.0.1`, `::1` or `localhost` (there is no override).
    #[error("bind host {0:?} is not loopback")]
    NotLoopback(String),
}

/// Check `--bind`: `host:port` with host `127.0.0.1`, `::1` (`[::1]:port`) or `localhost`.
///
/// # Errors
/// [`BindError`]: `"<text>" is not host:port`, or `bind host "<host>" is not loopback`.
pub fn parse_bind(text: &str) -> Result<BindAddr, BindError> {
    let not_hostport = || BindError::NotHostPort(text.to_owned());
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (h, p) = rest.split_once("]:").ok_or_else(not_hostport)?;
        (h, p)
    } else {
        let (h, p) = text.rsplit_once(':').ok_or_else(not_hostport)?;
        if h.contains(':') {
            return Err(not_hostport());
        }
        (h, p)
    };
    if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
        return Err(not_hostport());
    }
    let port: u16 = port.parse().map_err(|_| not_hostport())?;
    let ip = match host {
        "127.0.0.1" | "localhost" => IpAddr::V4(Ipv4Addr::LOCALHOST),
        "::1" => IpAddr::V6(Ipv6Addr::LOCALHOST),
        "" => return Err(not_hostport()),
        other => return Err(BindError::NotLoopback(other.to_owned())),
    };
    Ok(BindAddr {
        addr: SocketAddr::new(ip, port),
    })
}

/// Shared state of a running daemon.
pub struct App {
    /// The store path.
    pub db: PathBuf,
    /// The bound port (Host/Origin allowlist).
    pub port: u16,
    /// The one writer.
    pub writer: Arc<Mutex<Store>>,
    readers: StdMutex<Vec<Store>>,
    /// Extra allowed origins.
    pub allow_origins: Vec<String>,
    /// The pinned interpreter ref (`""` without one).
    pub interpreter_ref: String,
    /// The pinned interpreter's whole `--version` text.
    pub interpreter_version: String,
    /// Host configuration every invocation borrows (`--workspace-root`, the pinned
    /// `--tool-ailang-bin`, `--examples-dir`, run caps, `--ledger`, `Workspace.Exec`).
    pub host: HostConfig,
    /// `--approve-on-tty`.
    pub approve_on_tty: bool,
    /// The request-body read bound (see [`HTTP_READ`]).
    pub http_read: Duration,
    queued: AtomicUsize,
    /// A2A task ids whose invocation this daemon is running now (a `WORKING` task row not
    /// among them never started).
    pub a2a_inflight: StdMutex<std::collections::HashSet<String>>,
    /// Live `POST /agui/` runs (at most [`agui::MAX_LIVE`]).
    agui_live: AtomicUsize,
    /// MCP sessions and resumable SSE streams (DEC-MCP-5).
    pub mcp: mcp::state::State,
    /// Set when shutdown starts: open AG-UI runs and MCP notification streams finish within
    /// one tick.
    pub stopping: std::sync::atomic::AtomicBool,
}

/// A failure of the host around an invocation (nothing of this call committed, or the
/// outcome is unknown): the message is the wire text of surfaces.md §5.5.
#[derive(Debug)]
pub enum HostFailure {
    /// The invocation failed with a rule error.
    Invoke(InvokeError),
    /// The aggregate deadline passed before or during the call.
    TimedOut,
    /// Too many invocations are waiting for the writer.
    Capacity,
    /// The blocking task panicked or was cancelled.
    Canceled,
    /// The pinned tool binary no longer re-hashes to its startup ref (or its archived copy
    /// is gone); nothing ran. The text names the ref and the resolve kind.
    ToolChanged(String),
}

impl HostFailure {
    /// `host callback failed` / `timed out` / `capacity exceeded` / `canceled`.
    pub fn legacy_message(&self) -> &'static str {
        match self {
            HostFailure::Invoke(_) | HostFailure::ToolChanged(_) => "host callback failed",
            HostFailure::TimedOut => "host callback timed out",
            HostFailure::Capacity => "host callback capacity exceeded",
            HostFailure::Canceled => "host callback canceled",
        }
    }

    /// The rule message (transitions.md §9) or the host message.
    pub fn message(&self) -> String {
        match self {
            HostFailure::Invoke(e) => e.to_string(),
            HostFailure::TimedOut => "invocation exceeded its deadline".into(),
            HostFailure::ToolChanged(why) => why.clone(),
            other => other.legacy_message().into(),
        }
    }

    /// `{class, message, invocationId, effectRecords}` for `error.data`.
    pub fn data(&self, invocation_id: &str) -> serde_json::Value {
        match self {
            HostFailure::Invoke(e) => {
                let mut d = invoke::error_data(e);
                if d.get("invocationId").is_some_and(|v| v.is_null()) {
                    d["invocationId"] = serde_json::Value::String(invocation_id.to_string());
                }
                d
            }
            other => serde_json::json!({
                "class": match other {
                    HostFailure::TimedOut => "DeadlineError",
                    HostFailure::Capacity => "CapacityError",
                    HostFailure::ToolChanged(_) => "ToolBinaryChanged",
                    _ => "CanceledError",
                },
                "message": other.message(),
                "invocationId": invocation_id,
                "effectRecords": [],
            }),
        }
    }
}

/// A fresh random task id (16 hex characters).
pub fn random_task() -> String {
    let mut b = [0u8; 8];
    let _ = getrandom::getrandom(&mut b);
    hex::encode(b)
}

/// Escape newlines for one-line stderr logs.
pub fn one_line(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('\n', "\\n")
        .replace('\r', "\\r")
}

impl App {
    /// Run `f` on a read-only connection, on the blocking pool, bounded by [`READ_BOUND`]
    /// (surfaces.md §1 "Store read per GET").
    ///
    /// Store-open failures are mapped here, once, for every GET route: a pooled connection
    /// whose read fails with [`ReadError::Store`] is dropped and `f` runs again on a fresh
    /// open; when that open fails (the file was replaced, truncated, made unreadable) the
    /// answer is [`ReadError::Unavailable`] (503 `StoreUnavailable`), not a 500.
    ///
    /// # Errors
    /// [`ReadError::Timeout`] after 10 s, [`ReadError::Unavailable`], or `f`'s own error.
    pub async fn read<T, F>(self: &Arc<Self>, f: F) -> Result<T, ReadError>
    where
        T: Send + 'static,
        F: Fn(&Store) -> Result<T, ReadError> + Send + 'static,
    {
        self.read_within(READ_BOUND, f).await
    }

    async fn read_within<T, F>(self: &Arc<Self>, bound: Duration, f: F) -> Result<T, ReadError>
    where
        T: Send + 'static,
        F: Fn(&Store) -> Result<T, ReadError> + Send + 'static,
    {
        let app = self.clone();
        let job = tokio::task::spawn_blocking(move || app.on_reader(&f));
        match tokio::time::timeout(bound, job).await {
            Err(_) => Err(ReadError::Timeout),
            Ok(Err(e)) => Err(ReadError::Store(format!("read task failed: {e}"))),
            Ok(Ok(r)) => r,
        }
    }

    /// `f` on a pooled reader, else (or after a store failure on the pooled one) on a fresh
    /// open. A reader that saw a store failure is not returned to the pool.
    fn on_reader<T>(&self, f: &dyn Fn(&Store) -> Result<T, ReadError>) -> Result<T, ReadError> {
        let pooled = self.readers.lock().ok().and_then(|mut v| v.pop());
        if let Some(store) = pooled {
            match f(&store) {
                Err(ReadError::Store(_)) => drop(store),
                out => {
                    self.give_back(store);
                    return out;
                }
            }
        }
        let store =
            Store::open_read(&self.db).map_err(|e| ReadError::Unavailable(e.to_string()))?;
        let out = f(&store);
        if !matches!(out, Err(ReadError::Store(_))) {
            self.give_back(store);
        }
        out
    }

    fn give_back(&self, store: Store) {
        if let Ok(mut pool) = self.readers.lock() {
            if pool.len() < 16 {
                pool.push(store);
            }
        }
    }

    /// Resolve a bearer token to a live session within [`CREDENTIAL_BOUND`], on the same
    /// readers as [`Self::read`] (a store that cannot be opened is
    /// [`auth::Denial::Unavailable`]).
    pub async fn session(
        self: &Arc<Self>,
        token: String,
        now: i64,
    ) -> Result<Session, auth::Denial> {
        let unattested = self.host.unattested;
        let looked = self
            .read_within(CREDENTIAL_BOUND, move |s| {
                match auth::lookup(s, &token, now, unattested) {
                    Err(auth::Denial::Store(c)) => Err(ReadError::Store(c)),
                    other => Ok(other),
                }
            })
            .await;
        match looked {
            Ok(r) => r,
            Err(ReadError::Timeout) => Err(auth::Denial::Timeout),
            Err(ReadError::Unavailable(c)) => Err(auth::Denial::Unavailable(c)),
            Err(ReadError::Store(c)) => Err(auth::Denial::Store(c)),
            Err(other) => Err(auth::Denial::Store(format!("{other:?}"))),
        }
    }

    /// The registry descriptors (all of them, registry id order) read now.
    pub async fn descriptors(self: &Arc<Self>) -> Result<Vec<Descriptor>, ReadError> {
        self.read(|s| {
            crate::ops::publish::registry_head(s)
                .map(|h| h.map(|h| h.revision.entries).unwrap_or_default())
                .map_err(|e| ReadError::Store(e.to_string()))
        })
        .await
    }

    /// Run one invocation on the writer: queue FIFO for it (bounded by `deadline` and
    /// [`MAX_QUEUED`]), then run [`invoke::invoke`] on the blocking pool.
    pub async fn invoke(
        self: &Arc<Self>,
        call: Call,
        deadline: Instant,
    ) -> Result<Committed, HostFailure> {
        self.invoke_observed(call, deadline, None).await
    }

    /// [`App::invoke`] with an observer told what the call does (admitted, planned, each
    /// effect dispatched, committed): MCP's progress and log notifications.
    pub async fn invoke_observed(
        self: &Arc<Self>,
        call: Call,
        deadline: Instant,
        observer: Option<Arc<dyn invoke::Observer>>,
    ) -> Result<Committed, HostFailure> {
        self.with_writer(deadline, move |app, store| {
            app.run_invocation(store, &call, observer)
        })
        .await?
    }

    /// Run `f` with the one writer: queue FIFO for it (bounded by `deadline` and
    /// [`MAX_QUEUED`]), then run `f` on the blocking pool.
    ///
    /// # Errors
    /// [`HostFailure::Capacity`] when too many calls wait, [`HostFailure::TimedOut`] when the
    /// deadline passes before the writer is free, [`HostFailure::Canceled`] when `f` panics.
    pub async fn with_writer<T, F>(
        self: &Arc<Self>,
        deadline: Instant,
        f: F,
    ) -> Result<T, HostFailure>
    where
        T: Send + 'static,
        F: FnOnce(&App, &mut Store) -> T + Send + 'static,
    {
        if self.queued.fetch_add(1, Ordering::SeqCst) >= MAX_QUEUED {
            self.queued.fetch_sub(1, Ordering::SeqCst);
            return Err(HostFailure::Capacity);
        }
        let wait = deadline.saturating_duration_since(Instant::now());
        let guard = tokio::time::timeout(wait, self.writer.clone().lock_owned()).await;
        self.queued.fetch_sub(1, Ordering::SeqCst);
        let mut guard = guard.map_err(|_| HostFailure::TimedOut)?;
        let app = self.clone();
        let job = tokio::task::spawn_blocking(move || {
            let before = guard.log_bounds().ok().and_then(|(_, last)| last);
            let out = f(&app, &mut guard);
            // Tell MCP subscribers about the entries this write landed (DEC-MCP-6).
            let after = guard.log_bounds().ok().and_then(|(_, last)| last);
            if after != before {
                match mcp::resources::rows_after(&guard, before) {
                    Ok(rows) => mcp::resources::landed(&app.mcp, &rows),
                    Err(e) => eprintln!(
                        "world: serve: mcp notifications: {}",
                        one_line(&e.to_string())
                    ),
                }
            }
            out
        });
        job.await.map_err(|_| HostFailure::Canceled)
    }

    /// One invocation on the writer `store` (the caller holds it): re-hash the pinned tool
    /// binary, build the host, run [`invoke::invoke`].
    ///
    /// # Errors
    /// [`HostFailure::ToolChanged`] or the invocation's [`InvokeError`].
    pub fn run_invocation(
        &self,
        store: &mut Store,
        call: &Call,
        observer: Option<Arc<dyn invoke::Observer>>,
    ) -> Result<Committed, HostFailure> {
        // Re-hash the pinned tool binary before anything of this call runs
        // (transitions.md §5: re-hash before every run; R-SE-8: only the measured binary).
        // The lane re-hashes it again before each exec; this refuses the whole call early.
        if let Some(Err(why)) = self.host.tool.as_ref().map(PinnedTool::verify) {
            let why = why.to_string();
            eprintln!("world: serve: tool binary: {}", one_line(&why));
            return Err(HostFailure::ToolChanged(why));
        }
        let pins = StorePins::for_db(&self.db);
        let prompter: Arc<dyn crate::broker::handlers::approval::Prompter> = if self.approve_on_tty
        {
            Arc::new(TtyPrompter)
        } else {
            Arc::new(NoTerminal)
        };
        let mut host = self.host.host(&pins, Some(prompter));
        host.observer = observer;
        invoke::invoke(store, call, &host).map_err(HostFailure::Invoke)
    }
}

/// A bounded read that did not answer.
#[derive(Debug)]
pub enum ReadError {
    /// The 10 s bound passed.
    Timeout,
    /// Absent (the message is the 404 text).
    NotFound(String),
    /// Malformed input (the message is the 400 text).
    BadRequest(String),
    /// Store failure (the cause goes to stderr only; 500 `Internal`).
    Store(String),
    /// The store could not be opened for reading (cause for stderr only; 503
    /// `StoreUnavailable`).
    Unavailable(String),
    /// The semantic-id index is absent or misshapen.
    IndexUnavailable,
}

/// The router: `/v1`, `/mcp`, `/a2a`, `/agui/`, the agent cards, all behind the Host/Origin guard.
pub fn router(app: Arc<App>) -> Router {
    let v1 = Router::new()
        .route("/v1/", get(rest::index))
        .route("/v1", get(rest::index))
        .route("/v1/health", get(rest::health))
        .route("/v1/head", get(rest::head))
        .route("/v1/checkpoint", get(rest::checkpoint))
        .route("/v1/worlds/{reference}", get(rest::world))
        .route(
            "/v1/objects/by-semantic-id/",
            get(rest::by_semantic_id_empty),
        )
        .route(
            "/v1/objects/by-semantic-id/{*name}",
            get(rest::by_semantic_id),
        )
        .route("/v1/objects/{reference}", get(rest::object))
        .route("/v1/log", get(rest::log_range))
        .route("/v1/log/{index}", get(rest::log_entry))
        .route("/v1/registry/{*name}", get(rest::registry))
        .route("/v1/commit", post(rest::commit))
        .route("/v1/receipts/{*id}", get(rest::receipt));
    let mcp = Router::new()
        .route("/mcp", post(mcp::post).get(mcp::get).delete(mcp::delete))
        .route("/mcp/", post(mcp::post).get(mcp::get).delete(mcp::delete));
    let a2a = Router::new()
        // The legacy card's `url` is the origin; it answers JSON-RPC too (DEC-A2A-3).
        .route("/", post(a2a::post))
        .route("/a2a", post(a2a::post))
        .route("/a2a/", post(a2a::post))
        .route("/.well-known/agent.json", get(a2a::card_legacy))
        .route("/.well-known/agent-card.json", get(a2a::card_v1))
        // Clients that resolve the card relative to the JSON-RPC endpoint (the A2A TCK with
        // `--sut-url …/a2a`) find the same cards under it (DEC-A2A-8).
        .route("/a2a/.well-known/agent.json", get(a2a::card_legacy))
        .route("/a2a/.well-known/agent-card.json", get(a2a::card_v1));
    let agui = Router::new()
        .route("/agui", post(agui::post))
        .route("/agui/", post(agui::post))
        .route("/agui/{*rest}", post(agui::post));
    Router::new()
        .merge(v1)
        .merge(mcp)
        .merge(a2a)
        .merge(agui)
        .fallback(rest::not_found)
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            origin::guard,
        ))
        .layer(DefaultBodyLimit::disable())
        .with_state(app)
}

/// Everything startup produced before the socket is bound.
pub struct Prepared {
    /// The writer store.
    pub store: Store,
    /// The interpreter ref.
    pub interpreter_ref: String,
    /// The interpreter's version text.
    pub interpreter_version: String,
    /// The checked bind address.
    pub bind: BindAddr,
    /// The host every call borrows: the tool pinned, the `Workspace.Exec` configuration with
    /// a usable sandbox (DEC-EXEC-4).
    pub host: HostConfig,
}

/// Startup stages up to (not including) the bind: bind policy → workspace root and corpus →
/// store open + writer lock → tool binary → interpreter archive → epoch bootstrap →
/// integrity scan (warnings printed to `scan_out`).
///
/// # Errors
/// [`StartupError`] naming the stage.
pub fn prepare(cfg: &mut Config, scan_out: &mut dyn Write) -> Result<Prepared, StartupError> {
    let bind = parse_bind(&cfg.bind)
        .map_err(|e| fail(Stage::BindPolicy, format!("--bind {}", cfg.bind), e))?;
    // The host flags, checked as for `invoke` and `mcp` (crate::ops::host): the workspace
    // root, the corpus, the run allowlist, the exec profiles and the startup probe.
    let checked = cfg.host.clone().check(&cfg.db).map_err(|e| match e {
        crate::ops::host::HostError::Exec(e) => {
            fail(Stage::Config, "the exec configuration is refused", e)
        }
        other => fail(Stage::Config, other.flag(), other),
    })?;
    // DEC-EXEC-4: a profile with no usable sandbox stops the daemon here.
    if let Some(why) = checked.sandbox_error() {
        let why = match why {
            crate::broker::handlers::exec::ExecError::Probe(_) => why.to_string(),
            other => format!("no usable sandbox: {other}"),
        };
        return Err(fail(
            Stage::Config,
            "the exec configuration is refused",
            why,
        ));
    }
    let mut store = Store::open_write(
        &cfg.db,
        WriteOptions {
            create: true,
            wait_lock: None,
        },
    )
    .map_err(|e| {
        let lock_held = matches!(e, store::Error::WriterAlreadyActive { .. });
        let mut f = fail(Stage::StoreOpen, format!("open {}", cfg.db.display()), e);
        f.lock_held = lock_held;
        f
    })?;
    let host = checked
        .pin(&cfg.db)
        .map_err(|e| fail(Stage::Archive, e.flag(), e))?;
    let pins = StorePins::for_db(&cfg.db);
    let pinned =
        crate::ops::pin::pin(&mut store, &pins, &cfg.interpreter).map_err(|e| match e {
            crate::ops::pin::PinError::Provider(p) => fail(Stage::Archive, "interpreter", p),
            other => fail(Stage::RegistryBootstrap, "epoch registry", other),
        })?;
    integrity_scan(&store, scan_out);
    Ok(Prepared {
        store,
        interpreter_ref: pinned.interpreter_ref,
        interpreter_version: pinned.version_text,
        bind,
        host,
    })
}

/// Run the daemon: [`prepare`], bind, print `world listening on http://HOST:PORT` on
/// `stdout`, serve until SIGINT/SIGTERM, drain in-flight requests for up to [`DRAIN`], then
/// release the writer lock and return.
///
/// # Errors
/// [`StartupError`] (stage `listen` for a bind or runtime failure).
pub fn run(mut cfg: Config) -> Result<(), StartupError> {
    set_clock(cfg.clock);
    let mut stdout = std::io::stdout();
    let prepared = prepare(&mut cfg, &mut stdout)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(64)
        .build()
        .map_err(|e| fail(Stage::Listen, "runtime", e))?;
    let result = runtime.block_on(serve(cfg, prepared));
    runtime.shutdown_timeout(Duration::from_secs(1));
    result
}

async fn serve(cfg: Config, prepared: Prepared) -> Result<(), StartupError> {
    let listener = tokio::net::TcpListener::bind(prepared.bind.addr)
        .await
        .map_err(|e| fail(Stage::Listen, format!("bind {}", prepared.bind.addr), e))?;
    let local = listener
        .local_addr()
        .map_err(|e| fail(Stage::Listen, "local address", e))?;
    // A writer refused meanwhile is told where the daemon answers (DEC-UX-11).
    prepared.store.describe_writer(&format!(
        "world serve at http://{local}: REST /v1/, MCP /mcp, A2A /a2a"
    ));
    let app = Arc::new(App {
        db: cfg.db.clone(),
        port: local.port(),
        writer: Arc::new(Mutex::new(prepared.store)),
        readers: StdMutex::new(Vec::new()),
        allow_origins: cfg.allow_origins.clone(),
        interpreter_ref: prepared.interpreter_ref,
        interpreter_version: prepared.interpreter_version,
        host: prepared.host,
        approve_on_tty: cfg.approve_on_tty,
        http_read: cfg.http_read,
        queued: AtomicUsize::new(0),
        a2a_inflight: StdMutex::new(std::collections::HashSet::new()),
        agui_live: AtomicUsize::new(0),
        mcp: mcp::state::State::default(),
        stopping: std::sync::atomic::AtomicBool::new(false),
    });
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "world listening on http://{local}");
        let _ = out.flush();
    }
    accept_loop(listener, router(app.clone()), app.http_read, &app.stopping).await;
    // A2A calls accepted with `returnImmediately` run on after their request: let them
    // finish (bounded by DRAIN), so a stop leaves them completed rather than indeterminate.
    let drain_until = Instant::now() + DRAIN;
    while Instant::now() < drain_until
        && app
            .a2a_inflight
            .lock()
            .map(|s| !s.is_empty())
            .unwrap_or(false)
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Release the writer lock now (the store handle is dropped with the last reference;
    // wait briefly for a running invocation to hand it back).
    if let Ok(guard) =
        tokio::time::timeout(Duration::from_secs(1), app.writer.clone().lock_owned()).await
    {
        drop(guard);
    }
    Ok(())
}

/// Accept connections until SIGINT/SIGTERM, serving each with hyper's HTTP/1 server and a
/// header-read timeout of `header_bound` (the 30 s HTTP read bound, surfaces.md §1): a client
/// that does not send its whole request head in time has its connection closed, so stalled
/// headers hold nothing. On the signal the listener closes and in-flight connections get up
/// to [`DRAIN`] to finish.
async fn accept_loop(
    listener: tokio::net::TcpListener,
    router: Router,
    header_bound: Duration,
    stopping: &std::sync::atomic::AtomicBool,
) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use hyper_util::server::graceful::GracefulShutdown;
    use hyper_util::service::TowerToHyperService;

    let graceful = GracefulShutdown::new();
    let shutdown = shutdown_signal();
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = &mut shutdown => break,
        };
        let stream = match accepted {
            Ok((stream, _peer)) => stream,
            Err(e) => {
                // EMFILE and friends: say so, back off, keep serving.
                eprintln!("world: serve: accept: {}", one_line(&e.to_string()));
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(header_bound)
            .serve_connection(
                TokioIo::new(stream),
                TowerToHyperService::new(router.clone()),
            );
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            // A client that goes away or stalls its headers ends only its own connection.
            let _ = conn.await;
        });
    }
    drop(listener);
    // Open AG-UI runs see this within one poll tick and end with RUN_FINISHED.
    stopping.store(true, Ordering::SeqCst);
    tokio::select! {
        _ = graceful.shutdown() => {}
        _ = tokio::time::sleep(DRAIN) => {
            eprintln!(
                "world: serve: in-flight requests did not drain within {} s; stopping",
                DRAIN.as_secs()
            );
        }
    }
}

async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

/// The daemon's clock, set once at startup by [`run`] (from [`Config::clock`]) or by the
/// stdio MCP entry point ([`set_clock`]); the system clock until then.
static CLOCK: std::sync::OnceLock<crate::clock::Clock> = std::sync::OnceLock::new();

/// Set the daemon's clock (first call wins; later calls are ignored).
pub fn set_clock(clock: crate::clock::Clock) {
    let _ = CLOCK.set(clock);
}

/// The daemon's clock.
pub fn clock() -> crate::clock::Clock {
    CLOCK.get().copied().unwrap_or_default()
}

/// Now in Unix seconds, from [`clock`].
pub fn now() -> i64 {
    clock().now_unix()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_accepts_loopback_forms() {
        assert_eq!(
            parse_bind("127.0.0.1:7644").map(|b| b.addr.port()),
            Ok(7644)
        );
        assert!(parse_bind("localhost:0").is_ok());
        assert!(parse_bind("[::1]:8080").unwrap().addr.is_ipv6());
    }

    #[test]
    fn bind_refuses_other_hosts_and_shapes() {
        // Compared as the text `world serve` prints.
        let parse_bind = |t: &str| super::parse_bind(t).map_err(|e| e.to_string());
        assert_eq!(
            parse_bind("0.0.0.0:7644"),
            Err("bind host \"0.0.0.0\" is not loopback".to_string())
        );
        assert_eq!(
            parse_bind("192.168.1.2:80"),
            Err("bind host \"192.168.1.2\" is not loopback".to_string())
        );
        assert!(parse_bind("7644").unwrap_err().contains("is not host:port"));
        assert!(parse_bind("127.0.0.1:")
            .unwrap_err()
            .contains("is not host:port"));
        assert!(parse_bind("127.0.0.1:99999")
            .unwrap_err()
            .contains("is not host:port"));
        assert!(parse_bind("::1:80")
            .unwrap_err()
            .contains("is not host:port"));
    }

    #[test]
    fn startup_error_line() {
        let e = fail(Stage::StoreOpen, "open /x", "locked");
        assert_eq!(
            e.to_string(),
            "daemon startup failed at store-open: open /x: locked"
        );
    }

    #[test]
    fn http_read_bound_is_30_s_and_the_hook_only_shortens_it() {
        assert_eq!(HTTP_READ, Duration::from_secs(30));
        assert_eq!(bound_from(None), HTTP_READ);
        assert_eq!(bound_from(Some("1000")), Duration::from_secs(1));
        assert_eq!(bound_from(Some("600000")), HTTP_READ);
        assert_eq!(bound_from(Some("0")), HTTP_READ);
        assert_eq!(bound_from(Some("-5")), HTTP_READ);
        assert_eq!(bound_from(Some("soon")), HTTP_READ);
    }

    #[test]
    fn tool_changed_is_a_host_failure_with_its_own_class() {
        let f = HostFailure::ToolChanged("the pinned tool binary sha256:ab cannot be run".into());
        assert_eq!(f.legacy_message(), "host callback failed");
        let d = f.data("mcp:ep1:x");
        assert_eq!(d["class"], "ToolBinaryChanged");
        assert_eq!(
            d["message"],
            "the pinned tool binary sha256:ab cannot be run"
        );
        assert_eq!(
            PinnedTool::root_for(std::path::Path::new("/s/w.db")),
            PathBuf::from("/s/w.db.artifacts/tool")
        );
    }

    #[test]
    fn host_failure_data_names_invocation() {
        let d = HostFailure::TimedOut.data("mcp:ep1:abc");
        assert_eq!(d["invocationId"], "mcp:ep1:abc");
        assert_eq!(
            HostFailure::Capacity.legacy_message(),
            "host callback capacity exceeded"
        );
    }
}
