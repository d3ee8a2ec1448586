//! Shared helpers for tests/invoke.rs and tests/invoke_reliability.rs: a temp store with the
//! test transitions published (fixtures/transitions/test/manifest.json, embedded interpreter),
//! sessions, `world` commands and a fingerprint of everything durable in the store.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

/// When the pairing tests' missions are created and their commands run (ms).
pub const MISSION_NOW: &str = "1700000000000";
/// The pairing tests' mission deadline and grant expiry (2100-01-01, ms).
pub const MISSION_FAR: &str = "4102444800000";

/// The repository root (transitionFnFile paths in the manifests are relative to it).
pub use crate::common::repo;

/// A temp directory holding a store (`w.db`) and a workspace root (`ws/`).
pub struct Env {
    _dir: tempfile::TempDir,
    /// Canonical temp root.
    pub root: PathBuf,
    /// The store file.
    pub db: PathBuf,
    /// The workspace root; episode `ep` works in `ws/<ep>`.
    pub ws: PathBuf,
}

impl Env {
    /// A store with no genesis and nothing published.
    pub fn bare() -> Env {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical");
        let ws = root.join("ws");
        std::fs::create_dir_all(ws.join("ep1")).expect("mkdir ws/ep1");
        Env {
            _dir: dir,
            db: root.join("w.db"),
            root,
            ws,
        }
    }

    /// Genesis, then the test manifest published on the embedded interpreter.
    pub fn new() -> Env {
        let env = Env::bare();
        env.ok(&["genesis"]);
        env.publish();
        env
    }

    /// Publish fixtures/transitions/test/manifest.json.
    pub fn publish(&self) {
        self.ok(&[
            "publish",
            "--manifest",
            "fixtures/transitions/test/manifest.json",
            "--yes",
        ]);
    }

    /// `world ARGS` on this store, from the repository root, without WORLD_SESSION.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(crate::common::world_bin());
        c.current_dir(repo())
            .env("WORLD_DB", &self.db)
            .env_remove("WORLD_SESSION")
            .env_remove("WORLD_TEST_NOW")
            .env("NO_COLOR", "1")
            .args(args);
        c
    }

    /// `world ARGS` as a std Command (for spawning and killing).
    pub fn std_cmd(&self, args: &[&str]) -> std::process::Command {
        let mut c = std::process::Command::new(crate::common::world_bin());
        c.current_dir(repo())
            .env("WORLD_DB", &self.db)
            .env_remove("WORLD_SESSION")
            .env_remove("WORLD_TEST_NOW")
            .env("NO_COLOR", "1")
            .args(args);
        c
    }

    /// Run `world ARGS` and return its output.
    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("run world")
    }

    /// Run `world ARGS`, asserting exit 0; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "world {args:?} failed ({:?}): {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Mint a session for `episode` with `grants` (`EFFECT=SCOPE:BUDGET`), bound to `ws`; the
    /// token is written to a new file whose path is returned.
    pub fn mint(&self, episode: &str, grants: &[&str]) -> PathBuf {
        self.mint_with(episode, grants, &[])
    }

    /// Like [`Env::mint`] with extra arguments (e.g. `--ttl`).
    pub fn mint_with(&self, episode: &str, grants: &[&str], extra: &[&str]) -> PathBuf {
        let n = std::fs::read_dir(&self.root)
            .map(|d| d.count())
            .unwrap_or(0);
        let tok = self.root.join(format!("tok-{episode}-{n}"));
        let ws = self.ws.to_string_lossy().into_owned();
        let tok_s = tok.to_string_lossy().into_owned();
        let mut args = vec!["session", "mint", "--episode", episode];
        for g in grants {
            args.push("--grant");
            args.push(g);
        }
        args.extend(["--workspace-root", &ws, "--yes", "--out", &tok_s]);
        args.extend(extra);
        self.ok(&args);
        std::fs::create_dir_all(self.ws.join(episode)).expect("mkdir worktree");
        tok
    }

    /// Mission `m` for the pairing tests (missions.md §7): `budget`, run `r`, grant `g`
    /// (subject `agent`, limit `budget`) for `effect` on `scope`, at most `max_attempts` per
    /// operation, deadline and grant expiry in 2100, created at [`MISSION_NOW`] (ms) — in the
    /// store file, or in the standalone ledger `ledger` (which `limits init` created).
    pub fn create_mission(
        &self,
        ledger: Option<&str>,
        effect: &str,
        scope: &str,
        budget: &str,
        max_attempts: &str,
    ) {
        let contract = serde_json::json!({"id": "c", "missionId": "m", "aiwsEdition": "0.4",
            "profile": "finite-v1", "budget": budget, "deadline": MISSION_FAR,
            "criteria": ["review"], "actions": [effect], "resources": [scope],
            "requiresApproval": false, "maxAttempts": max_attempts,
            "maxAuthorizationAgeMs": "60000", "features": []});
        let c = self.root.join("contract.json");
        std::fs::write(&c, contract.to_string()).expect("write the contract");
        let c = c.to_string_lossy().into_owned();
        let m = |args: &[&str]| {
            let mut a = vec!["mission"];
            if let Some(l) = ledger {
                a.extend(["--ledger", l]);
            }
            a.extend(args);
            self.ok(&a)
        };
        m(&["create", "--contract", &c, "--yes", "--now", MISSION_NOW]);
        m(&["start-run", "m", "--run", "r", "--now", MISSION_NOW]);
        m(&[
            "grant",
            "m",
            "--id",
            "g",
            "--subject",
            "agent",
            "--action",
            effect,
            "--resource",
            scope,
            "--expires-at",
            MISSION_FAR,
            "--limit",
            budget,
            "--now",
            MISSION_NOW,
        ]);
    }

    /// A session for `episode` with `grants`, bound to mission `m` run `r` grant `g` (of
    /// [`Env::create_mission`]), in the store file or in `ledger`; `extra` more mint arguments.
    pub fn mint_for_mission(
        &self,
        episode: &str,
        grants: &[&str],
        ledger: Option<&str>,
        extra: &[&str],
    ) -> PathBuf {
        let mut args = vec![
            "--mission",
            "m",
            "--mission-run",
            "r",
            "--mission-grant",
            "g",
        ];
        if let Some(l) = ledger {
            args.extend(["--ledger", l]);
        }
        args.extend(extra);
        self.mint_with(episode, grants, &args)
    }

    /// `world invoke ID --session TOK --args ARGS [EXTRA…]`.
    pub fn invoke(&self, tok: &Path, id: &str, args: &str, extra: &[&str]) -> Output {
        let tok = tok.to_string_lossy().into_owned();
        let mut a = vec!["invoke", id, "--session", &tok, "--args", args];
        a.extend(extra);
        self.run(&a)
    }

    /// Everything durable: `world log --json`, every object (ref, semantic id), every journal
    /// row, every world and the head.
    pub fn fingerprint(&self) -> Fingerprint {
        let log = self.ok(&["log", "--json"]);
        let conn = rusqlite::Connection::open_with_flags(
            &self.db,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .expect("open store read-only");
        let rows = |sql: &str| -> Vec<String> {
            let mut st = conn.prepare(sql).expect("prepare");
            let v: Vec<String> = st
                .query_map([], |r| r.get::<_, String>(0))
                .expect("query")
                .collect::<Result<_, _>>()
                .expect("rows");
            v
        };
        Fingerprint {
            log,
            objects: rows(
                "SELECT hash_ref || ' ' || semantic_id FROM objects ORDER BY hash_ref",
            ),
            journal: rows(
                "SELECT seq || ' ' || kind || ' ' || invocation_id || ' ' || object_ref FROM journal ORDER BY seq",
            ),
            worlds: rows("SELECT world_ref FROM worlds ORDER BY world_ref"),
            heads: rows("SELECT head_key || ' ' || world_ref FROM store_heads ORDER BY head_key"),
        }
    }

    /// The objects with `semantic_id`, in ref order.
    pub fn objects_of(&self, semantic_id: &str) -> Vec<String> {
        let conn = self.conn();
        let mut st = conn
            .prepare("SELECT hash_ref FROM objects WHERE semantic_id = ?1 ORDER BY hash_ref")
            .expect("prepare");
        let v: Vec<String> = st
            .query_map([semantic_id], |r| r.get(0))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        v
    }

    /// A read-write connection (for tampering tests and lock holding).
    pub fn conn(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(&self.db).expect("open store")
    }

    /// `world verify` passes.
    pub fn verify_ok(&self) -> String {
        self.ok(&["verify"])
    }

    /// `world effects --json [EXTRA…]` as parsed JSON lines.
    pub fn effects(&self, extra: &[&str]) -> Vec<Value> {
        let mut a = vec!["effects", "--json"];
        a.extend(extra);
        json_lines(&self.ok(&a))
    }

    /// `world receipt ID --json` and its exit code.
    pub fn receipt(&self, id: &str) -> (Value, Option<i32>) {
        let out = self.run(&["receipt", id, "--json"]);
        let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (v, out.status.code())
    }

    /// Journal intents whose id starts with `prefix`.
    pub fn intents(&self, prefix: &str) -> usize {
        let conn = self.conn();
        conn.query_row(
            "SELECT count(*) FROM journal WHERE kind = 'intent' AND substr(invocation_id, 1, length(?1)) = ?1",
            [prefix],
            |r| r.get::<_, i64>(0),
        )
        .expect("count") as usize
    }
}

/// A snapshot of everything durable in a store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    /// `world log --json`
    pub log: String,
    /// `ref semanticId`
    pub objects: Vec<String>,
    /// `seq kind id object`
    pub journal: Vec<String>,
    /// World refs.
    pub worlds: Vec<String>,
    /// Heads.
    pub heads: Vec<String>,
}

impl Fingerprint {
    /// Objects present here and not in `before`.
    pub fn new_objects(&self, before: &Fingerprint) -> Vec<String> {
        self.objects
            .iter()
            .filter(|o| !before.objects.contains(o))
            .cloned()
            .collect()
    }
}

/// Parse JSON lines.
pub fn json_lines(s: &str) -> Vec<Value> {
    s.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// stdout as JSON.
pub fn stdout_json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            stderr(o)
        )
    })
}

/// Assert the exit code, printing both streams on failure.
#[track_caller]
pub fn assert_exit(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&o.stdout),
        stderr(o)
    );
}

/// What [`AfterRunPins`] calls after every interpreter run, with the run's args file.
pub type AfterRunHook = std::sync::Arc<dyn Fn(&[u8]) + Send + Sync>;

/// TEST DOUBLE of an interpreter: the embedded interpreter, with a hook called after each
/// run, so a test can act as another writer in the middle of an invocation.
struct AfterRun {
    inner: world::ailang::embedded::Embedded,
    hook: AfterRunHook,
}

impl world::interp::Interpreter for AfterRun {
    fn interpreter_ref(&self) -> &str {
        world::interp::Interpreter::interpreter_ref(&self.inner)
    }
    fn version_text(&self) -> &str {
        world::interp::Interpreter::version_text(&self.inner)
    }
    fn check(
        &self,
        source: &[u8],
        limits: world::interp::RunLimits,
    ) -> Result<world::interp::CheckOutcome, world::interp::RunError> {
        self.inner.check(source, limits)
    }
    fn run(
        &self,
        source: &[u8],
        args: &[u8],
        limits: world::interp::RunLimits,
    ) -> Result<world::interp::RunOutcome, world::interp::RunError> {
        let out = self.inner.run(source, args, limits);
        (self.hook)(args);
        out
    }
}

/// An interpreter provider handing out the embedded interpreter wrapped with one hook
/// ([`AfterRun`]) for every pin it is asked for.
pub struct AfterRunPins(pub AfterRunHook);

impl world::transitions::publish::InterpreterProvider for AfterRunPins {
    fn embedded(
        &self,
    ) -> Result<Box<dyn world::interp::Interpreter>, world::transitions::publish::ProviderError>
    {
        Ok(Box::new(AfterRun {
            inner: world::ailang::embedded::Embedded::new(),
            hook: self.0.clone(),
        }))
    }
    fn archive(
        &self,
        _path: &Path,
    ) -> Result<Box<dyn world::interp::Interpreter>, world::transitions::publish::ProviderError>
    {
        self.embedded()
    }
    fn resolve(
        &self,
        _reference: &world::encoding::HashRef,
    ) -> Result<Box<dyn world::interp::Interpreter>, world::transitions::publish::ProviderError>
    {
        self.embedded()
    }
    fn archived(
        &self,
    ) -> Result<Vec<world::encoding::HashRef>, world::transitions::publish::ProviderError> {
        Ok(vec![])
    }
}
