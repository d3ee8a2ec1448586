//! The test harness of tests/runner.rs (the one integration-test binary): the test environment
//! every module shares.
//!
//! [`TestEnv`] gives every test its own temporary directory with `WORLD_DB` inside it, a
//! cleared environment (only `WORLD_DB`, `HOME`, `NO_COLOR=1` and the test-only clock hook
//! `WORLD_TEST_NOW` are set), helpers to run the `world` binary, commit-body builders that
//! produce the `POST /v1/commit` JSON (payloads base64), and a logical snapshot of the store
//! (every table's rows in a stable order, read with rusqlite) so a refusal can be proven to
//! leave the store unchanged.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Output, Stdio};

use assert_cmd::Command;
use base64::Engine;
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// The fixed clock every test process sees (Unix seconds).
pub const TEST_NOW: i64 = 1_700_000_000;

/// `sha256:<hex>` of `bytes`, computed independently of the crate under test.
pub fn sha(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

#[path = "../../fixtures/fake-ailang/locate.rs"]
mod fake_ailang_locate;
pub use fake_ailang_locate::fake_ailang;

/// The path of the `world` binary cargo built for these tests.
pub fn world_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_world"))
}

/// The repository root (`CARGO_MANIFEST_DIR`): fixtures, manifests and docs are named relative
/// to it, and `cargo test` runs the test binary there.
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The hermetic environment of a `world` run on store `db`: everything cleared, then only
/// `WORLD_DB=db`, `NO_COLOR=1` and the fixed clock `WORLD_TEST_NOW=TEST_NOW`. The caller sets
/// the cwd (and `HOME` if the command needs one).
pub fn scrub<'c>(c: &'c mut StdCommand, db: &Path) -> &'c mut StdCommand {
    c.env_clear()
        .env("WORLD_DB", db)
        .env("NO_COLOR", "1")
        .env("WORLD_TEST_NOW", TEST_NOW.to_string())
}

/// `world` on store `db` with the hermetic environment ([`scrub`]), run from the repository
/// root (manifests name their transition files relative to it).
pub fn world_in_repo(db: &Path) -> Command {
    let mut c = StdCommand::new(world_bin());
    scrub(&mut c, db).current_dir(repo());
    Command::from_std(c)
}

/// The name `cargo test` lists for test `name` of the module whose `module_path!()` is
/// `module`: the module path without the crate (`runner::invoke_reliability` and
/// `child_invoke` give `invoke_reliability::child_invoke`).
pub fn test_name(module: &str, name: &str) -> String {
    match module.split_once("::") {
        Some((_crate, path)) => format!("{path}::{name}"),
        None => name.to_string(),
    }
}

/// This test binary re-run for exactly one `#[ignore]`d test (`test_name(module, name)`), one
/// thread, output not captured: the child process of the kill -9 tests. The caller adds its
/// environment, cwd and stdio.
pub fn child_test(module: &str, name: &str) -> StdCommand {
    let mut c = StdCommand::new(std::env::current_exe().expect("test binary"));
    c.args([
        "--exact",
        &test_name(module, name),
        "--ignored",
        "--nocapture",
        "--test-threads",
        "1",
    ]);
    c
}

/// One finished `world` run.
#[derive(Debug, Clone)]
pub struct Run {
    /// Exit code (-1 when killed by a signal).
    pub code: i32,
    /// Stdout as text (lossy).
    pub stdout: String,
    /// Stderr as text (lossy).
    pub stderr: String,
    /// Raw stdout bytes.
    pub raw_stdout: Vec<u8>,
}

impl Run {
    pub fn from_output(o: Output) -> Self {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
            raw_stdout: o.stdout,
        }
    }

    /// Assert exit 0 and return self.
    #[track_caller]
    pub fn ok(self) -> Self {
        assert_eq!(self.code, 0, "expected success, got {self:#?}");
        self
    }

    /// Assert the exit code and return self.
    #[track_caller]
    pub fn code(self, code: i32) -> Self {
        assert_eq!(self.code, code, "expected exit {code}, got {self:#?}");
        self
    }

    /// Assert the error shape of the CLI conventions: exactly one `world: …` line on stderr,
    /// optionally followed by `hint: …` lines, and nothing else. Returns the error line.
    #[track_caller]
    pub fn one_line_error(&self) -> String {
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert!(
            !lines.is_empty(),
            "expected an error line on stderr, got {self:#?}"
        );
        assert!(
            lines[0].starts_with("world: ") && lines[0].len() > "world: ".len(),
            "first stderr line must be `world: …`, got {self:#?}"
        );
        for l in &lines[1..] {
            assert!(
                l.starts_with("hint: "),
                "stderr holds more than one error line: {self:#?}"
            );
        }
        assert!(
            !self.stderr.contains("panicked") && !self.stderr.contains("RUST_BACKTRACE"),
            "panic on stderr: {self:#?}"
        );
        lines[0].to_string()
    }

    /// Parse stdout as one JSON value.
    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim_end())
            .unwrap_or_else(|e| panic!("stdout is not one JSON value ({e}): {self:#?}"))
    }

    /// Parse stdout as JSON lines.
    #[track_caller]
    pub fn json_lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| {
                serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("line {l:?} is not JSON ({e}): {self:#?}"))
            })
            .collect()
    }
}

/// A hermetic place to run `world`: a temp dir holding the store `world.db`.
pub struct TestEnv {
    /// Kept alive for the test's lifetime.
    pub dir: tempfile::TempDir,
    /// `WORLD_DB` for every command.
    pub db: PathBuf,
}

impl Default for TestEnv {
    fn default() -> Self {
        Self::new()
    }
}

impl TestEnv {
    /// A fresh, empty environment (no store file yet).
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("world.db");
        TestEnv { dir, db }
    }

    /// A path inside the temp dir.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Write `bytes` to `name` in the temp dir and return its path.
    pub fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, bytes).expect("write test file");
        p
    }

    fn apply_env(&self, c: &mut StdCommand) {
        scrub(c, &self.db)
            .env("HOME", self.dir.path())
            .current_dir(self.dir.path());
    }

    /// An assert_cmd command for `world` with the hermetic environment.
    pub fn cmd(&self) -> Command {
        let mut c = StdCommand::new(world_bin());
        self.apply_env(&mut c);
        Command::from_std(c)
    }

    /// A plain std command (for spawning, racing and killing).
    pub fn std_cmd(&self) -> StdCommand {
        let mut c = StdCommand::new(world_bin());
        self.apply_env(&mut c);
        c.stdin(Stdio::null());
        c
    }

    /// Run `world ARGS…` to completion.
    pub fn run(&self, args: &[&str]) -> Run {
        let out = self.cmd().args(args).output().expect("run world");
        Run::from_output(out)
    }

    /// Run `world ARGS…` with `stdin` bytes.
    pub fn run_stdin(&self, args: &[&str], stdin: &[u8]) -> Run {
        let out = self
            .cmd()
            .args(args)
            .write_stdin(stdin.to_vec())
            .output()
            .expect("run world");
        Run::from_output(out)
    }

    /// Run `world genesis` and return the tip it created.
    pub fn genesis(&self) -> Tip {
        self.run(&["genesis"]).ok();
        self.tip()
    }

    /// Commit `body` through a file with `world commit FILE`.
    pub fn commit(&self, body: &Body) -> Run {
        let p = self.write(&format!("body-{}.json", body.tag), &body.bytes());
        self.run(&["commit", p.to_str().expect("utf-8 path")])
    }

    /// Commit `body` and assert it landed; returns the advanced tip.
    #[track_caller]
    pub fn commit_ok(&self, body: &Body) -> Tip {
        let r = self.commit(body).ok();
        assert_eq!(
            r.stdout.trim(),
            body.world_ref,
            "commit prints the new head"
        );
        body.tip()
    }

    /// Read the current tip (head, next index, previous entry hash) straight from the file.
    pub fn tip(&self) -> Tip {
        tip_of(&self.db)
    }

    /// The store's logical contents.
    pub fn snapshot(&self) -> Snapshot {
        snapshot(&self.db)
    }

    /// Assert `world verify` passes (exit 0, `ok`).
    #[track_caller]
    pub fn verify_ok(&self) {
        let r = self.run(&["verify", "--json"]);
        assert_eq!(r.code, 0, "world verify failed: {r:#?}");
        assert_eq!(r.json()["ok"], json!(true), "verify: {r:#?}");
    }

    /// Number of log entries, read directly.
    pub fn log_len(&self) -> i64 {
        let c = ro(&self.db);
        c.query_row("SELECT count(*) FROM log_entries", [], |r| r.get(0))
            .expect("count log")
    }
}

/// Open the store read-only with rusqlite (no `world` code involved).
pub fn ro(db: &Path) -> Connection {
    let c =
        Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).expect("open store ro");
    c.busy_timeout(std::time::Duration::from_secs(10))
        .expect("busy timeout");
    c
}

/// Where the log ends: the next commit's observed head, index and `prevEntryHash`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tip {
    /// Selected head (`""` when none).
    pub head: String,
    /// The next entry index (= revision).
    pub next_index: i64,
    /// The last entry's hash (`sha256("genesis-prev")` before genesis).
    pub prev_entry_hash: String,
}

impl Tip {
    /// The tip of an empty store.
    pub fn empty() -> Self {
        Tip {
            head: String::new(),
            next_index: 0,
            prev_entry_hash: sha(b"genesis-prev"),
        }
    }

    /// A client commit body on top of this tip with one object per payload (the first
    /// payload is the state root). `tag` makes entry hashes distinct between bodies.
    pub fn body(&self, tag: &str, payloads: &[&[u8]]) -> Body {
        build_body(self, tag, payloads)
    }

    /// A body with one small payload derived from `tag`.
    pub fn next(&self, tag: &str) -> Body {
        let payload = format!("{{\"tag\":\"{tag}\"}}");
        build_body(self, tag, &[payload.as_bytes()])
    }
}

/// Read the tip from a store file.
pub fn tip_of(db: &Path) -> Tip {
    let c = ro(db);
    let head: Option<String> = c
        .query_row(
            "SELECT world_ref FROM store_heads WHERE head_key = 'selected_world_head'",
            [],
            |r| r.get(0),
        )
        .optional()
        .expect("read head");
    let last: Option<(i64, String)> = c
        .query_row(
            "SELECT entry_index, entry_hash_ref FROM log_entries ORDER BY entry_index DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .expect("read last entry");
    match (head, last) {
        (Some(head), Some((i, h))) => Tip {
            head,
            next_index: i + 1,
            prev_entry_hash: h,
        },
        (None, None) => Tip::empty(),
        other => panic!("store has a head without a log or the reverse: {other:?}"),
    }
}

/// A commit body (the `POST /v1/commit` JSON) and the values it will produce.
#[derive(Debug, Clone)]
pub struct Body {
    /// The JSON document.
    pub json: Value,
    /// A tag unique to this body.
    pub tag: String,
    /// `nextWorld.ref`.
    pub world_ref: String,
    /// `entry.entryHash`.
    pub entry_hash: String,
    /// `entry.header.entryIndex`.
    pub index: i64,
    /// Object hashes in body order.
    pub objects: Vec<String>,
}

impl Body {
    /// The body as compact JSON bytes.
    pub fn bytes(&self) -> Vec<u8> {
        serde_json::to_vec(&self.json).expect("encode body")
    }

    /// The same body with `"invocationId": id`.
    pub fn with_invocation(mut self, id: &str) -> Self {
        self.json["invocationId"] = json!(id);
        self
    }

    /// The tip after this body lands.
    pub fn tip(&self) -> Tip {
        Tip {
            head: self.world_ref.clone(),
            next_index: self.index + 1,
            prev_entry_hash: self.entry_hash.clone(),
        }
    }
}

/// A genesis body (observed head `""`, index 0) committed by a client.
pub fn genesis_body(tag: &str) -> Body {
    Tip::empty().next(tag)
}

fn build_body(tip: &Tip, tag: &str, payloads: &[&[u8]]) -> Body {
    let iface = sha(b"iface-v1");
    let objects: Vec<Value> = payloads
        .iter()
        .map(|p| {
            json!({
                "hash": sha(p),
                "interfaceHash": iface,
                "semanticId": "test/object/v1",
                "provenance": "test",
                "payload": base64::engine::general_purpose::STANDARD.encode(p),
            })
        })
        .collect();
    let hashes: Vec<String> = payloads.iter().map(|p| sha(p)).collect();
    let state_root = hashes.first().cloned().unwrap_or_else(|| sha(b"empty"));
    let entry_hash = sha(format!("entry:{tag}:{}", tip.next_index).as_bytes());
    let rev = tip.next_index;
    let world_ref = sha(format!(
        r#"{{"revision":{rev},"stateRoot":"{state_root}","logHead":"{entry_hash}"}}"#
    )
    .as_bytes());
    let json = json!({
        "observedHead": tip.head,
        "objects": objects,
        "nextWorld": {"ref": world_ref, "revision": rev, "stateRoot": state_root, "logHead": entry_hash},
        "entry": {
            "header": {
                "entryIndex": rev,
                "semanticsEpoch": 1,
                "transitionFn": sha(b"fn"),
                "interpreter": sha(b"interp"),
                "prevEntryHash": tip.prev_entry_hash,
                "writtenBy": "client:test",
            },
            "entryHash": entry_hash,
            "transitionRef": state_root,
        },
    });
    Body {
        json,
        tag: tag.to_string(),
        world_ref,
        entry_hash,
        index: rev,
        objects: hashes,
    }
}

/// A store's logical contents: `user_version`, the schema rows of `sqlite_master`, and every
/// table's rows sorted by all columns, each value rendered with its SQLite type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// `PRAGMA user_version`.
    pub user_version: i64,
    /// `type|name|tbl_name|sql` of every schema object, sorted.
    pub schema: Vec<String>,
    /// Table name → rows.
    pub tables: BTreeMap<String, Vec<Vec<String>>>,
}

fn render(v: ValueRef<'_>) -> String {
    match v {
        ValueRef::Null => "NULL".into(),
        ValueRef::Integer(i) => format!("i:{i}"),
        ValueRef::Real(f) => format!("r:{f}"),
        ValueRef::Text(t) => format!("t:{}", String::from_utf8_lossy(t)),
        ValueRef::Blob(b) => format!("b:{}", hex::encode(b)),
    }
}

/// Snapshot the store at `db` (read-only; nothing is written).
pub fn snapshot(db: &Path) -> Snapshot {
    let c = ro(db);
    let user_version = c
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .expect("user_version");
    let mut stmt = c
        .prepare(
            "SELECT type, name, tbl_name, COALESCE(sql, '') FROM sqlite_master ORDER BY type, name",
        )
        .expect("sqlite_master");
    let schema: Vec<String> = stmt
        .query_map([], |r| {
            Ok(format!(
                "{}|{}|{}|{}",
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?
            ))
        })
        .expect("query schema")
        .collect::<Result<_, _>>()
        .expect("schema rows");
    let names: Vec<String> = c
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .expect("tables")
        .query_map([], |r| r.get(0))
        .expect("query tables")
        .collect::<Result<_, _>>()
        .expect("table names");
    let mut tables = BTreeMap::new();
    for name in names {
        let ncols: usize = c
            .prepare(&format!("SELECT * FROM \"{name}\" LIMIT 0"))
            .expect("columns")
            .column_count();
        let order: Vec<String> = (1..=ncols).map(|i| i.to_string()).collect();
        let sql = format!("SELECT * FROM \"{name}\" ORDER BY {}", order.join(", "));
        let mut stmt = c.prepare(&sql).expect("select table");
        let mut rows = stmt.query([]).expect("query table");
        let mut out = Vec::new();
        while let Some(row) = rows.next().expect("row") {
            out.push(
                (0..ncols)
                    .map(|i| render(row.get_ref(i).expect("value")))
                    .collect(),
            );
        }
        tables.insert(name, out);
    }
    Snapshot {
        user_version,
        schema,
        tables,
    }
}

/// A small deterministic PRNG (xorshift64*) so random delays are reproducible from a seed.
pub struct Rng(u64);

impl Rng {
    /// Seed from `WORLD_TEST_SEED` if set, else from the clock; the seed is printed so a
    /// failing run can be replayed.
    pub fn from_env(name: &str) -> Self {
        let seed = std::env::var("WORLD_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(1)
            });
        eprintln!("{name}: WORLD_TEST_SEED={seed}");
        Rng(seed.max(1))
    }

    /// Next value.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// Append `n` client log entries (with their world rows and the head) straight through
/// rusqlite in one transaction, chained on the current tip. For tests and benchmarks that
/// need long logs quickly; every row is what `world commit` would have written for a body
/// with no objects.
pub fn append_client_entries(db: &Path, n: i64) -> Tip {
    let mut tip = tip_of(db);
    let mut c = Connection::open(db).expect("open store rw");
    let tx = c.transaction().expect("begin");
    {
        let mut log = tx
            .prepare(
                "INSERT INTO log_entries (entry_index, entry_hash_ref, semantics_epoch, transition_fn_ref, interpreter_ref, prev_entry_hash_ref, written_by, transition_ref)
                 VALUES (?1, ?2, 1, ?3, ?4, ?5, 'client:bulk', ?6)",
            )
            .expect("prepare log");
        let mut world = tx
            .prepare("INSERT INTO worlds (world_ref, revision, state_root, log_head) VALUES (?1, ?2, ?3, ?4)")
            .expect("prepare world");
        let (fnr, interp, root) = (sha(b"fn"), sha(b"interp"), sha(b"{}"));
        for _ in 0..n {
            let i = tip.next_index;
            let eh = sha(format!("bulk-entry:{i}").as_bytes());
            let wr = sha(
                format!(r#"{{"revision":{i},"stateRoot":"{root}","logHead":"{eh}"}}"#).as_bytes(),
            );
            log.execute(rusqlite::params![
                i,
                eh,
                fnr,
                interp,
                tip.prev_entry_hash,
                root
            ])
            .expect("insert log");
            world
                .execute(rusqlite::params![wr, i, root, eh])
                .expect("insert world");
            tip = Tip {
                head: wr,
                next_index: i + 1,
                prev_entry_hash: eh,
            };
        }
        tx.execute(
            "INSERT INTO store_heads (head_key, world_ref) VALUES ('selected_world_head', ?1)
             ON CONFLICT(head_key) DO UPDATE SET world_ref = excluded.world_ref",
            [&tip.head],
        )
        .expect("set head");
    }
    tx.commit().expect("commit");
    tip
}

/// `n` chained bodies on top of `tip`, written as JSON lines to `name`; returns the file and
/// the bodies in order.
pub fn write_batch(
    env: &TestEnv,
    tip: &Tip,
    n: usize,
    tag: &str,
    name: &str,
) -> (PathBuf, Vec<Body>) {
    let mut tip = tip.clone();
    let mut bodies = Vec::with_capacity(n);
    let mut jsonl = Vec::new();
    for i in 0..n {
        let b = tip.next(&format!("{tag}-{i}"));
        jsonl.extend_from_slice(&b.bytes());
        jsonl.push(b'\n');
        tip = b.tip();
        bodies.push(b);
    }
    (env.write(name, &jsonl), bodies)
}

/// The tip as `world` itself reports it (`world head` and `world log --reverse --limit 1`),
/// for use after a writer was killed, when only `world` may recover a hot journal.
pub fn tip_via_cli(env: &TestEnv) -> Tip {
    let head = env.run(&["head"]).ok().stdout.trim().to_string();
    let last = env
        .run(&["log", "--json", "--reverse", "--limit", "1"])
        .ok()
        .json();
    Tip {
        head,
        next_index: last["header"]["entryIndex"].as_i64().expect("entryIndex") + 1,
        prev_entry_hash: last["entryHash"].as_str().expect("entryHash").to_string(),
    }
}

/// Wait until the log holds more than `n` entries (a writer is mid-batch), up to `timeout`.
pub fn wait_for_log_len_above(db: &Path, n: i64, timeout: std::time::Duration) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < timeout {
        let len: Option<i64> = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .ok()
            .and_then(|c| {
                c.query_row("SELECT count(*) FROM log_entries", [], |r| r.get(0))
                    .ok()
            });
        if len.is_some_and(|l| l > n) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    false
}
