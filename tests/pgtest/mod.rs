//! A throwaway PostgreSQL server for the ledger tests (issue 18): Debian's `postgresql`
//! binaries, `initdb` in a temporary directory (as the `postgres` user when the tests run as
//! root), listening on a Unix socket only (`listen_addresses=''`), stopped and removed when the
//! test binary exits — also after a failed test, through an `atexit` hook.
//!
//! One cluster per process: every module of tests/runner.rs shares it, each test in its own
//! database ([`Server::fresh_db`]). [`server`] hands out a shared guard; a test that stops and
//! restarts the server takes [`server_exclusive`], which waits until no other test holds the
//! server and keeps them out until it is done (only [`Exclusive`] can stop it).
//!
//! Without PostgreSQL, [`server`] prints why the test is skipped and returns `None`; under
//! `CI=true` a missing server is a failure (a panic), never a skip.

#![allow(dead_code)]

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// One running server.
pub struct Server {
    bin: PathBuf,
    dir: PathBuf,
    as_postgres: bool,
    next_db: AtomicUsize,
}

/// The password of role `pwuser` (the only role whose password is checked).
pub const PW_PASSWORD: &str = "right-horse-battery";

static SERVER: OnceLock<Option<Server>> = OnceLock::new();
static STOP_LOCK: Mutex<()> = Mutex::new(());
/// Held shared by every test using the server, exclusively by a test that stops it.
static USERS: RwLock<()> = RwLock::new(());

/// The server, held by one test among others sharing it (it stays up while this lives).
pub struct Shared {
    _users: RwLockReadGuard<'static, ()>,
    server: &'static Server,
}

impl Deref for Shared {
    type Target = Server;
    fn deref(&self) -> &Server {
        self.server
    }
}

/// The server, held by one test alone: the only holder that may stop and restart it.
pub struct Exclusive {
    _users: RwLockWriteGuard<'static, ()>,
    server: &'static Server,
}

impl Deref for Exclusive {
    type Target = Server;
    fn deref(&self) -> &Server {
        self.server
    }
}

impl Exclusive {
    /// Stop the server now (`-m immediate`); [`Exclusive::start_again`] brings it back.
    pub fn stop(&self) {
        self.server.stop();
    }

    /// Start the stopped server again.
    pub fn start_again(&self) {
        self.server.start_again();
    }
}

fn find_bin() -> Option<PathBuf> {
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if p.join("initdb").exists() && p.join("pg_ctl").exists() {
            return Some(p);
        }
    }
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|p| p.join("initdb").exists())
        .collect();
    versions.sort();
    versions.pop()
}

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// The server of this test process, started on first use and shared with the other tests
/// running now; `None` (after printing why) when PostgreSQL is not installed outside CI.
pub fn server(test: &str) -> Option<Shared> {
    let server = started(test)?;
    let users = USERS.read().unwrap_or_else(|e| e.into_inner());
    Some(Shared {
        _users: users,
        server,
    })
}

/// The server of this test process for `test` alone (it may stop and restart it): waits until
/// no other test holds it. `None` as for [`server`].
pub fn server_exclusive(test: &str) -> Option<Exclusive> {
    let server = started(test)?;
    let users = USERS.write().unwrap_or_else(|e| e.into_inner());
    Some(Exclusive {
        _users: users,
        server,
    })
}

fn started(test: &str) -> Option<&'static Server> {
    let s = SERVER.get_or_init(|| match find_bin() {
        None => {
            let why = "PostgreSQL is not installed (no initdb under /usr/lib/postgresql/*/bin; apt-get install postgresql)";
            if ci() {
                panic!("CI=true and {why}");
            }
            None
        }
        Some(bin) => Some(Server::start(bin)),
    });
    if s.is_none() {
        eprintln!("SKIPPED {test}: PostgreSQL is not installed (apt-get install postgresql); the PostgreSQL ledger tests need initdb");
    }
    s.as_ref()
}

extern "C" fn stop_at_exit() {
    if let Some(Some(s)) = SERVER.get() {
        s.stop();
        let _ = std::fs::remove_dir_all(&s.dir);
    }
}

impl Server {
    fn start(bin: PathBuf) -> Server {
        let as_postgres = unsafe { libc::geteuid() } == 0;
        let dir = tempfile::Builder::new()
            .prefix("world-pg-")
            .tempdir()
            .expect("tempdir")
            .keep();
        if as_postgres {
            let st = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&dir)
                .status()
                .expect("chown");
            assert!(st.success(), "chown the PostgreSQL temp dir to postgres");
        }
        let s = Server {
            bin,
            dir,
            as_postgres,
            next_db: AtomicUsize::new(0),
        };
        unsafe {
            libc::atexit(stop_at_exit);
        }
        let data = s.data();
        let out = s
            .tool("initdb")
            .arg("-D")
            .arg(&data)
            .args([
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C",
            ])
            .output()
            .expect("initdb");
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // One password-checked role for the wrong-password test; everyone else: trust.
        std::fs::write(
            data.join("pg_hba.conf"),
            "local all pwuser scram-sha-256\nlocal all all trust\n",
        )
        .expect("pg_hba.conf");
        s.start_again();
        s.sql(
            "postgres",
            &format!("CREATE ROLE pwuser LOGIN PASSWORD '{PW_PASSWORD}'"),
        );
        s
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// The Unix socket directory.
    pub fn socket_dir(&self) -> &Path {
        &self.dir
    }

    fn tool(&self, name: &str) -> Command {
        let path = self.bin.join(name);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        }
    }

    /// (Re)start the server: Unix socket only, no fsync (a test server).
    fn start_again(&self) {
        let _g = STOP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let opts = format!(
            "-c listen_addresses='' -c unix_socket_directories='{}' -c fsync=off -c full_page_writes=off -c max_connections=200",
            self.dir.display()
        );
        let out = self
            .tool("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .arg("-l")
            .arg(self.dir.join("server.log"))
            .args(["-o", &opts, "-w", "-t", "60", "start"])
            .output()
            .expect("pg_ctl start");
        assert!(
            out.status.success(),
            "pg_ctl start failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
        );
    }

    /// Stop the server now (`-m immediate`); [`Server::start_again`] brings it back.
    fn stop(&self) {
        let _g = STOP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let _ = self
            .tool("pg_ctl")
            .arg("-D")
            .arg(self.data())
            .args(["-m", "immediate", "-w", "stop"])
            .output();
    }

    /// The URL of database `db` as user `user` (no password: trust auth on the socket).
    pub fn url_for(&self, user: &str, db: &str) -> String {
        let host = self.dir.display().to_string().replace('/', "%2F");
        format!("postgres://{user}@{host}/{db}")
    }

    /// A fresh, empty database for one test; its URL.
    pub fn fresh_db(&self) -> String {
        let n = self.next_db.fetch_add(1, Ordering::SeqCst);
        let name = format!("t{}_{n}", std::process::id());
        self.sql("postgres", &format!("CREATE DATABASE {name}"));
        self.url_for("postgres", &name)
    }

    /// Run SQL in database `db` as the superuser.
    pub fn sql(&self, db: &str, sql: &str) {
        let mut c = postgres::Client::connect(&self.url_for("postgres", db), postgres::NoTls)
            .expect("connect as postgres");
        c.batch_execute(sql).expect("test SQL");
    }

    /// A superuser client on `url`.
    pub fn client(url: &str) -> postgres::Client {
        postgres::Client::connect(url, postgres::NoTls).expect("connect")
    }
}

/// `world` against a standalone ledger, as the ledger tests run it: an empty environment but
/// `PATH`, `USER=ann`, `WORLD_DB=store` (which need not exist: a ledger needs no World store),
/// `WORLD_LEDGER=ledger`, `NO_COLOR=1`, stdin closed, in `dir`. The caller adds the arguments.
pub fn ledger_world(dir: &Path, store: &Path, ledger: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_world"));
    c.current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("USER", "ann")
        .env("WORLD_DB", store)
        .env("WORLD_LEDGER", ledger)
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null());
    c
}
