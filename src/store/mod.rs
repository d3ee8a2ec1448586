//! The store: one SQLite file at schema version 4, byte-compatible with the reference
//! (store-format.md). Opening, the writer lock, typed reads, compare-and-append commits, the
//! journal, receipts and integrity checks.
//!
//! Writers hold the [`lock::WriterLock`] (taken before SQLite opens) and write in one
//! `BEGIN IMMEDIATE` transaction each; readers open `mode=ro`, take no lock and write nothing.

pub mod a2a_tasks;
pub mod approvals;
pub mod bundle;
pub mod checkpoints;
pub mod client;
pub mod commit;
pub mod entry;
pub mod episodes;
pub mod journal;
pub mod labels;
pub mod lock;
pub mod logview;
pub mod markers;
pub mod merkle;
pub mod read;
pub mod records;
pub mod refs;
pub mod replay_read;
pub mod rows;
pub mod scan;
pub mod schema;
pub mod sessions;
pub mod spend;
pub mod verify;
pub mod verify_objects;
pub mod why;

use std::fs;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension};
use serde::Serialize;

use crate::encoding::HashRef;

/// Key of the selected world head in `store_heads` (store-format.md §3.3).
pub const SELECTED_HEAD: &str = "selected_world_head";

/// Errors from opening, reading and writing the store (store-format.md §2, §11, §12).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The store's parent directory does not exist; it is never created (store-format.md §1).
    #[error("resolve parent of {path:?}: no such file or directory")]
    NoParent {
        /// The path as given.
        path: String,
    },
    /// The store file does not exist and this command may not create it.
    #[error("world store {path} does not exist; refusing to create one (world genesis, a genesis world commit, world pin, world publish or world serve creates the store)")]
    Missing {
        /// The path as given.
        path: String,
    },
    /// An empty (0-byte) file given to a command that may not create a store: it is not a
    /// store, and only the store-creating commands initialise one (spec README).
    #[error("store {path} is an empty file, not a world store; refusing to initialise it (world genesis, a genesis world commit, world pin, world publish or world serve creates a store)")]
    EmptyFile {
        /// The path as given.
        path: String,
    },
    /// `--db` names a directory.
    #[error("store path {path} is a directory, not a store file")]
    IsDirectory {
        /// The path as given.
        path: String,
    },
    /// `--db` names something that is not a regular file (a FIFO, a device, a socket): never
    /// opened, so it cannot block or stream forever (issue 26 §5).
    #[error("store path {path} is a {kind}, not a store file; the store must be a regular file (or absent, for the commands that create one)")]
    NotRegular {
        /// The path as given.
        path: String,
        /// What it is.
        kind: &'static str,
    },
    /// The file is not an SQLite database, or is truncated or corrupt.
    #[error("store {path:?} is not a usable SQLite database: {detail}")]
    NotADatabase {
        /// The path as given.
        path: String,
        /// SQLite's reason.
        detail: String,
    },
    /// Read-only open of a file with no schema (store-format.md §2).
    #[error("store: schema uninitialized: read-only store {path:?} has no application schema; open writable once to initialize")]
    Uninitialized {
        /// The path.
        path: String,
    },
    /// `user_version` below 4, or 0 with tables present.
    #[error("store: schema version legacy: {path:?} has user_version {version} with application schema; binary requires 4; refusing to modify")]
    LegacySchema {
        /// The path.
        path: String,
        /// The stored `user_version`.
        version: i64,
    },
    /// `user_version` above 4.
    #[error("store: schema version future: {path:?} has user_version {version}; binary supports 4; use a compatible binary")]
    FutureSchema {
        /// The path.
        path: String,
        /// The stored `user_version`.
        version: i64,
    },
    /// Negative `user_version`.
    #[error("store: schema version invalid: {path:?} has negative user_version {version}; binary requires 4; refusing to modify")]
    InvalidSchemaVersion {
        /// The path.
        path: String,
        /// The stored `user_version`.
        version: i64,
    },
    /// A v4 store whose shape is wrong (`SchemaIntegrityError`). `reason` continues the
    /// sentence after the Go-quoted path; build it with [`Error::missing_table`] for a missing
    /// table so every refusal uses the reference's wording.
    #[error("store: schema integrity: {path:?} {reason}")]
    SchemaIntegrity {
        /// The path.
        path: String,
        /// What is wrong, e.g. `is missing table commit_objects; …`.
        reason: String,
    },
    /// Another process holds the writer lock (store-format.md §11; exit 6).
    #[error("another process already holds writer authority for this database (single-writer is enforced, not conventional): store {db}, lock {lock}{}", holder_text(.holder.as_ref()))]
    WriterAlreadyActive {
        /// Canonical store path.
        db: PathBuf,
        /// The lock file.
        lock: PathBuf,
        /// The holder's PID when the lock file names a live process (`world` writes its PID
        /// there while it holds the lock; the reference daemon writes nothing).
        holder: Option<lock::Holder>,
    },
    /// A ref field does not parse (`InvalidRefError{Op, Field, Text}`).
    #[error("{op}: field {field} is not a valid ref: {text:?} ({reason})")]
    InvalidRef {
        /// The operation (`Commit`).
        op: &'static str,
        /// The field path, e.g. `Entry.Header.TransitionFn`.
        field: String,
        /// The offending text.
        text: String,
        /// Why it does not parse.
        reason: String,
    },
    /// An object's payload does not hash to its `hash`.
    #[error("store: object hash {hash:?} does not match payload (computed {computed:?})")]
    PayloadMismatch {
        /// The claimed hash.
        hash: String,
        /// What the payload hashes to.
        computed: String,
    },
    /// The commit does not match its durable invocation intent (`InvocationMismatchError`).
    #[error("store: invocation mismatch on {field}: want {want:?}, got {got:?}")]
    InvocationMismatch {
        /// The first differing field.
        field: &'static str,
        /// The intent's value.
        want: String,
        /// The commit's value.
        got: String,
    },
    /// The observed head is stale (`ConflictError`).
    #[error("store: stale observed world head {observed:?} (selected head {selected:?})")]
    Conflict {
        /// The caller's observed head (`""` for genesis).
        observed: String,
        /// The selected head (`""` when none).
        selected: String,
    },
    /// A log entry with this index or entry hash already exists.
    #[error("store: log entry {index} (entry hash {entry_hash}) already exists or its entry hash is taken")]
    DuplicateEntry {
        /// The entry index.
        index: i64,
        /// The entry hash.
        entry_hash: String,
    },
    /// A client commit that does not extend the chain it observed, or that claims a
    /// `writtenBy` namespace `world` writes itself (store-format.md §8.4a, DEC-STORE-5).
    /// Nothing was written; exit 1, HTTP 400.
    #[error("store: commit refused: {field} {reason} (want {want}, got {got}); nothing written")]
    ClientCommitRefused {
        /// The body field, e.g. `Entry.Header.EntryIndex`.
        field: &'static str,
        /// What the rule is, e.g. `must be the observed world's revision + 1`.
        reason: &'static str,
        /// The value the chain requires (or a description of it).
        want: String,
        /// The value the body carried.
        got: String,
    },
    /// A resent invocation id whose body differs from the commit already recorded under it
    /// (store-format.md §8.4a). Exit 1, HTTP 400; nothing written.
    #[error("invocationId {id:?} was used for a different commit: {field} differs (recorded {recorded}, this body {got}); nothing written")]
    InvocationReused {
        /// The invocation id.
        id: String,
        /// The first differing body field.
        field: String,
        /// What the store recorded for it.
        recorded: String,
        /// What this body carries.
        got: String,
    },
    /// A registry head moved between read and write (`RegistryCASConflict`).
    #[error("store: registry {name} head is {actual:?}, expected {expected:?}")]
    RegistryCasConflict {
        /// Registry name.
        name: String,
        /// The head the writer read.
        expected: String,
        /// The head found now.
        actual: String,
    },
    /// Stored data that cannot be decoded (a corrupt or foreign row).
    #[error("store: corrupt {what}: {detail}")]
    Corrupt {
        /// What was being read.
        what: String,
        /// Why it is unusable.
        detail: String,
    },
    /// A write was asked of a handle opened read-only (a programming error in the caller).
    #[error("store: {what} needs the writer lock; this handle is read-only")]
    ReadOnly {
        /// What was asked.
        what: String,
    },
    /// File-system failure around the store.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// An SQLite failure.
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
}

impl Error {
    /// The one `SchemaIntegrityError` for a table missing from a v4 store (store-format.md §2):
    /// the reference's wording, `store: schema integrity: "<path>" is missing table <t>;
    /// refusing to recreate it empty (its rows cannot be re-derived)`. Every missing-table
    /// refusal goes through here so the text stays the reference's.
    pub fn missing_table(path: &str, table: &str) -> Error {
        Error::SchemaIntegrity {
            path: path.to_string(),
            reason: format!(
                "is missing table {table}; refusing to recreate it empty (its rows cannot be re-derived)"
            ),
        }
    }
}

/// How a writable open treats a missing file.
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteOptions {
    /// May this command create the store file (genesis, genesis commit, pin, publish, serve)?
    pub create: bool,
    /// Poll the writer lock for up to this long instead of failing at once (`--wait-lock`).
    pub wait_lock: Option<Duration>,
}

/// An open store: one SQLite connection, plus the writer lock when writable.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
    lock: Option<lock::WriterLock>,
}

/// A log header (frozen, six fields; store-format.md §8.1). Refs are kept as stored text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Header {
    /// `entry_index`
    pub entry_index: i64,
    /// `semantics_epoch`
    pub semantics_epoch: i64,
    /// `transition_fn_ref`
    pub transition_fn: String,
    /// `interpreter_ref`
    pub interpreter: String,
    /// `prev_entry_hash_ref`
    pub prev_entry_hash: String,
    /// `written_by`
    pub written_by: String,
}

/// A log entry as the REST API shapes it: `{header, entryHash, transitionRef}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LogEntry {
    /// The six-field header.
    pub header: Header,
    /// `entry_hash_ref`
    pub entry_hash: String,
    /// `transition_ref`
    pub transition_ref: String,
}

/// A world row `{ref, revision, stateRoot, logHead}` (store-format.md §8.3).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorldRow {
    /// `world_ref`
    #[serde(rename = "ref")]
    pub reference: String,
    /// `revision`
    pub revision: i64,
    /// `state_root`
    pub state_root: String,
    /// `log_head`
    pub log_head: String,
}

impl WorldRow {
    /// A row selected as `world_ref, revision, state_root, log_head`, in that order.
    pub(crate) fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<WorldRow> {
        Ok(WorldRow {
            reference: r.get(0)?,
            revision: r.get(1)?,
            state_root: r.get(2)?,
            log_head: r.get(3)?,
        })
    }
}

/// An object's metadata `{hash, interfaceHash, semanticId, provenance}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectMeta {
    /// `hash_ref`
    pub hash: String,
    /// `interface_hash_ref`
    pub interface_hash: String,
    /// `semantic_id`
    pub semantic_id: String,
    /// `provenance`
    pub provenance: String,
}

/// An object with its payload bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Object {
    /// Metadata.
    pub meta: ObjectMeta,
    /// Exact payload bytes (sha256 = `meta.hash`).
    pub payload: Vec<u8>,
}

impl Object {
    /// A new object whose hash is computed from `payload` and whose `interfaceHash` is
    /// sha256 of `semantic_id` (the coordinator, broker and journal rule, store-format.md §6.2).
    pub fn new(semantic_id: &str, provenance: &str, payload: Vec<u8>) -> Self {
        Object {
            meta: ObjectMeta {
                hash: HashRef::of(&payload).to_string(),
                interface_hash: crate::encoding::interface_hash(semantic_id).to_string(),
                semantic_id: semantic_id.to_string(),
                provenance: provenance.to_string(),
            },
            payload,
        }
    }

    /// Does the payload hash to the stored hash?
    pub fn verifies(&self) -> bool {
        HashRef::of(&self.payload).is_text(&self.meta.hash)
    }
}

fn sqlite_open_error(path: &Path, e: rusqlite::Error) -> Error {
    use rusqlite::ErrorCode;
    match &e {
        rusqlite::Error::SqliteFailure(f, msg)
            if matches!(
                f.code,
                ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt | ErrorCode::CannotOpen
            ) =>
        {
            Error::NotADatabase {
                path: path.display().to_string(),
                detail: msg.clone().unwrap_or_else(|| f.to_string()),
            }
        }
        _ => Error::Sqlite(e),
    }
}

fn map_open<T>(path: &Path, r: Result<T, Error>) -> Result<T, Error> {
    r.map_err(|e| match e {
        Error::Sqlite(inner) => sqlite_open_error(path, inner),
        other => other,
    })
}

fn check_path(path: &Path) -> Result<bool, Error> {
    match fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(Error::IsDirectory {
            path: path.display().to_string(),
        }),
        Ok(_) => match crate::fileread::check_regular(path) {
            Err(crate::fileread::ReadError::NotRegular { kind, .. }) => Err(Error::NotRegular {
                path: path.display().to_string(),
                kind,
            }),
            _ => Ok(true),
        },
        Err(_) => {
            let parent = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            if !parent.is_dir() {
                return Err(Error::NoParent {
                    path: path.display().to_string(),
                });
            }
            Ok(false)
        }
    }
}

fn configure(conn: &Connection, writer: bool) -> Result<(), Error> {
    conn.execute_batch("PRAGMA foreign_keys = ON")?;
    // The per-object and per-row lookups (`object_in`, `journal::row`, …) are prepared once
    // per connection; a replay or an invoke cycles through a few dozen of them (issue 19).
    conn.set_prepared_statement_cache_capacity(64);
    if writer {
        conn.busy_timeout(Duration::from_millis(2000))?;
        conn.execute_batch("PRAGMA synchronous = FULL")?;
    } else {
        conn.busy_handler(Some(reader_busy))?;
    }
    Ok(())
}

/// Attempts [`reader_busy`] makes before giving up: about the same 2 s bound as the writer's
/// `busy_timeout`.
const READER_BUSY_TRIES: i32 = 2000;

/// Busy handler for read-only connections: retry every millisecond, up to about 2 s.
///
/// With the rollback journal (DEC-STORE-1), a writer committing back to back (`commit
/// --batch`, `serve`) holds PENDING/EXCLUSIVE for most of each commit's fsyncs and frees the
/// file only for microseconds between transactions. SQLite's default busy handler sleeps
/// 1–100 ms between tries (about 15 tries in 2 s), so it almost never lands in a gap and a
/// reader failed with "database is locked". Polling every millisecond finds a gap.
fn reader_busy(attempt: i32) -> bool {
    if attempt >= READER_BUSY_TRIES {
        return false;
    }
    std::thread::sleep(Duration::from_millis(1));
    true
}

/// `SQLITE_READONLY_ROLLBACK`: a read-only connection met a hot journal it cannot roll back.
const READONLY_ROLLBACK: i32 = 776;

impl Store {
    /// Open read-only (`mode=ro`): no lock, no DDL, nothing written.
    ///
    /// A hot rollback journal left by a writer that was killed mid-transaction cannot be
    /// replayed by a read-only connection; in that one case the journal is rolled back by a
    /// short read-write connection that writes nothing of its own (DEC-STORE-4), then the
    /// read-only open is retried.
    ///
    /// # Errors
    /// [`Error::Missing`], [`Error::IsDirectory`], [`Error::NotADatabase`], the schema-version
    /// errors, or SQLite errors.
    pub fn open_read(path: &Path) -> Result<Store, Error> {
        if !check_path(path)? {
            return Err(Error::Missing {
                path: path.display().to_string(),
            });
        }
        match Self::open_read_once(path) {
            Err(Error::Sqlite(rusqlite::Error::SqliteFailure(f, _)))
                if f.extended_code == READONLY_ROLLBACK =>
            {
                let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE)
                    .map_err(|e| sqlite_open_error(path, e))?;
                conn.busy_timeout(Duration::from_millis(2000))?;
                conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
                    r.get::<_, i64>(0)
                })
                .map_err(|e| sqlite_open_error(path, e))?;
                drop(conn);
                Self::open_read_once(path)
            }
            other => other,
        }
    }

    fn open_read_once(path: &Path) -> Result<Store, Error> {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| sqlite_open_error(path, e))?;
        map_open(path, configure(&conn, false))?;
        map_open(
            path,
            schema::open(&conn, &path.display().to_string(), schema::Mode::ReadOnly),
        )?;
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            lock: None,
        })
    }

    /// Open for writing: take the writer lock first, create the file (mode 0600) only when
    /// `opts.create`, then open SQLite and run the open algorithm (fresh init or v4 checks).
    ///
    /// # Errors
    /// [`Error::WriterAlreadyActive`], [`Error::NoParent`], [`Error::Missing`],
    /// [`Error::IsDirectory`], [`Error::NotADatabase`], the schema-version errors.
    pub fn open_write(path: &Path, opts: WriteOptions) -> Result<Store, Error> {
        let exists = check_path(path)?;
        if !exists && !opts.create {
            return Err(Error::Missing {
                path: path.display().to_string(),
            });
        }
        if exists && !opts.create && fs::metadata(path).is_ok_and(|m| m.len() == 0) {
            return Err(Error::EmptyFile {
                path: path.display().to_string(),
            });
        }
        let lock = lock::acquire_writer(path, opts.wait_lock)?;
        let mut created = false;
        if !path.exists() {
            match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
            {
                Ok(_) => created = true,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(Error::Io {
                        what: format!("create store {}", path.display()),
                        source: e,
                    })
                }
            }
        }
        let result = (|| {
            let conn = Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .map_err(|e| sqlite_open_error(path, e))?;
            map_open(path, configure(&conn, true))?;
            map_open(
                path,
                schema::open(&conn, &path.display().to_string(), schema::Mode::Writable),
            )?;
            Ok(conn)
        })();
        match result {
            Ok(conn) => Ok(Store {
                conn,
                path: path.to_path_buf(),
                lock: Some(lock),
            }),
            Err(e) => {
                if created {
                    let _ = fs::remove_file(path);
                }
                Err(e)
            }
        }
    }

    /// A second read-write connection to this store for code that writes while the broker's
    /// connection is idle (the approval handlers write their decision and claim during an
    /// effect, between the broker's intent and outcome transactions). Runs no DDL; the writer
    /// lock this handle holds covers it (same process).
    ///
    /// # Errors
    /// [`Error::ReadOnly`] when this handle is read-only (a companion of a reader could write
    /// without the writer lock); SQLite errors opening the file.
    pub fn companion(&self) -> Result<Connection, Error> {
        if self.lock.is_none() || lock::is_memory(&self.path.display().to_string()) {
            return Err(Error::ReadOnly {
                what: "a companion writing connection (a store file held by this process)".into(),
            });
        }
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| sqlite_open_error(&self.path, e))?;
        configure(&conn, true)?;
        Ok(conn)
    }

    /// The underlying connection, for the library's own modules whose SQL runs on the store
    /// file (the ledger layer, the broker's spend tally, the coordinator; writers use
    /// [`Store::immediate`]). Front ends and `ops` read through the typed reads of
    /// [`read`] instead (issue 28, DEC-READS-3). Private to the crate in every shipped build.
    #[cfg(not(feature = "test-hooks"))]
    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// The underlying connection. Public only in test builds (the `test-hooks` feature), where
    /// the integration tests and benches tamper with and inspect the file through it
    /// (DEC-READS-3); private to the crate in every shipped build.
    #[cfg(feature = "test-hooks")]
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// The store path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether this handle holds the writer lock.
    pub fn is_writer(&self) -> bool {
        self.lock.is_some()
    }

    /// Say in the writer lock file what this holder is doing now (e.g. `world publish
    /// (waiting at its confirmation prompt)`), so a refused writer's hint names it; a no-op
    /// for a reader. See [`lock::Holder`].
    pub fn describe_writer(&self, what: &str) {
        if let Some(l) = &self.lock {
            l.describe(what);
        }
    }

    /// Begin a `BEGIN IMMEDIATE` transaction (writers only).
    pub fn immediate(&mut self) -> Result<rusqlite::Transaction<'_>, Error> {
        Ok(self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?)
    }

    /// The selected world head, if any.
    pub fn head(&self) -> Result<Option<String>, Error> {
        head_in(&self.conn)
    }

    /// One world row by ref.
    pub fn world(&self, reference: &str) -> Result<Option<WorldRow>, Error> {
        world_in(&self.conn, reference)
    }

    /// The ref of the world whose `logHead` is `entry_hash` (the world an entry produced),
    /// through the `world_worlds_by_log_head` index.
    pub fn world_for_entry(&self, entry_hash: &str) -> Result<Option<String>, Error> {
        Ok(self
            .conn
            .prepare_cached("SELECT world_ref FROM worlds WHERE log_head = ?1 LIMIT 1")?
            .query_row([entry_hash], |r| r.get(0))
            .optional()?)
    }

    /// Is `objects_by_semantic_id` present with its two columns `(semantic_id, hash_ref)`,
    /// as the semantic-id lookup needs (store-format.md §3)?
    pub fn semantic_index_ok(&self) -> Result<bool, Error> {
        let cols: Vec<String> = self
            .conn
            .prepare("SELECT name FROM pragma_index_info('objects_by_semantic_id') ORDER BY seqno")?
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<Result<_, _>>()?;
        Ok(matches!(cols.as_slice(), [a, b] if a == "semantic_id" && b == "hash_ref"))
    }

    /// One object (with payload) by ref.
    pub fn object(&self, reference: &str) -> Result<Option<Object>, Error> {
        object_in(&self.conn, reference)
    }

    /// Object metadata by semantic id, ascending hash, strictly after `after`, at most `limit`.
    pub fn objects_by_semantic_id(
        &self,
        semantic_id: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ObjectMeta>, Error> {
        let mut stmt = self.conn.prepare(
            "SELECT hash_ref, interface_hash_ref, semantic_id, provenance FROM objects
             WHERE semantic_id = ?1 AND hash_ref > ?2 ORDER BY hash_ref LIMIT ?3",
        )?;
        let rows = stmt.query_map(
            rusqlite::params![semantic_id, after.unwrap_or(""), limit as i64],
            meta_row,
        )?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One log entry by index.
    pub fn log_entry(&self, index: i64) -> Result<Option<LogEntry>, Error> {
        log_entry_in(&self.conn, index)
    }

    /// The lowest and the highest log index (both `None` for an empty log).
    ///
    /// Two lookups at the ends of the `entry_index` primary key (the table's rowid): the cost
    /// does not grow with the log, unlike `count(*)`, which walks every row (issue 19).
    pub fn log_bounds(&self) -> Result<(Option<i64>, Option<i64>), Error> {
        Ok(self.conn.query_row(
            "SELECT (SELECT min(entry_index) FROM log_entries),
                    (SELECT max(entry_index) FROM log_entries)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?)
    }

    /// Stream log entries from index `from` (inclusive) upward, or downward with `reverse`
    /// (then `from` defaults to the last entry), at most `limit`, calling `f` per entry.
    /// Memory use is constant in the log length.
    pub fn for_each_log(
        &self,
        from: Option<i64>,
        limit: Option<u64>,
        reverse: bool,
        mut f: impl FnMut(LogEntry) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let sql = if reverse {
            "SELECT entry_index, semantics_epoch, transition_fn_ref, interpreter_ref, prev_entry_hash_ref, written_by, entry_hash_ref, transition_ref
             FROM log_entries WHERE entry_index <= ?1 ORDER BY entry_index DESC LIMIT ?2"
        } else {
            "SELECT entry_index, semantics_epoch, transition_fn_ref, interpreter_ref, prev_entry_hash_ref, written_by, entry_hash_ref, transition_ref
             FROM log_entries WHERE entry_index >= ?1 ORDER BY entry_index ASC LIMIT ?2"
        };
        let start = from.unwrap_or(if reverse { i64::MAX } else { 0 });
        let lim = limit.map(|l| l.min(i64::MAX as u64) as i64).unwrap_or(-1);
        let mut stmt = self.conn.prepare(sql)?;
        let mut rows = stmt.query(rusqlite::params![start, lim])?;
        while let Some(row) = rows.next()? {
            f(entry_row(row)?)?;
        }
        Ok(())
    }

    /// Every log entry's `(entry_index, entry_hash_ref)`, ascending (replay's gap check).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn entry_hashes(&self) -> Result<Vec<(i64, String)>, Error> {
        let mut stmt = self
            .conn
            .prepare("SELECT entry_index, entry_hash_ref FROM log_entries ORDER BY entry_index")?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        Ok(rows)
    }

    /// Stream every log entry in ascending order with the world row whose `logHead` is its
    /// entry hash (the first such row if several). One query: `worlds.log_head` has no
    /// provisioned index, so SQLite builds a transient automatic index for the join instead of
    /// scanning `worlds` once per entry.
    pub fn for_each_log_with_world(
        &self,
        mut f: impl FnMut(LogEntry, Option<WorldRow>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut stmt = self.conn.prepare(
            "SELECT l.entry_index, l.semantics_epoch, l.transition_fn_ref, l.interpreter_ref, l.prev_entry_hash_ref, l.written_by, l.entry_hash_ref, l.transition_ref,
                    w.world_ref, w.revision, w.state_root, w.log_head
             FROM log_entries l LEFT JOIN worlds w ON w.log_head = l.entry_hash_ref
             ORDER BY l.entry_index ASC",
        )?;
        let mut rows = stmt.query([])?;
        let mut last = None;
        while let Some(row) = rows.next()? {
            let e = entry_row(row)?;
            if last == Some(e.header.entry_index) {
                continue;
            }
            last = Some(e.header.entry_index);
            let world = match row.get::<_, Option<String>>(8)? {
                Some(reference) => Some(WorldRow {
                    reference,
                    revision: row.get(9)?,
                    state_root: row.get(10)?,
                    log_head: row.get(11)?,
                }),
                None => None,
            };
            f(e, world)?;
        }
        Ok(())
    }

    /// A named registry head (`epoch_registry_heads`).
    pub fn registry_head(&self, name: &str) -> Result<Option<String>, Error> {
        registry_head_in(&self.conn, name)
    }
}

fn meta_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ObjectMeta> {
    Ok(ObjectMeta {
        hash: r.get(0)?,
        interface_hash: r.get(1)?,
        semantic_id: r.get(2)?,
        provenance: r.get(3)?,
    })
}

fn entry_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<LogEntry> {
    Ok(LogEntry {
        header: Header {
            entry_index: r.get(0)?,
            semantics_epoch: r.get(1)?,
            transition_fn: r.get(2)?,
            interpreter: r.get(3)?,
            prev_entry_hash: r.get(4)?,
            written_by: r.get(5)?,
        },
        entry_hash: r.get(6)?,
        transition_ref: r.get(7)?,
    })
}

/// One world row by ref, on any connection or transaction.
pub fn world_in(conn: &Connection, reference: &str) -> Result<Option<WorldRow>, Error> {
    Ok(conn
        .prepare_cached(
            "SELECT world_ref, revision, state_root, log_head FROM worlds WHERE world_ref = ?1",
        )?
        .query_row([reference], WorldRow::from_row)
        .optional()?)
}

/// The world row whose `logHead` is `entry_hash` (the world an entry produced; the first such
/// row if several), on any connection, through the `world_worlds_by_log_head` index when the
/// store has it (cached statement).
///
/// # Errors
/// [`Error::Sqlite`].
pub fn world_by_log_head_in(
    conn: &Connection,
    entry_hash: &str,
) -> Result<Option<WorldRow>, Error> {
    Ok(conn
        .prepare_cached(
            "SELECT world_ref, revision, state_root, log_head FROM worlds WHERE log_head = ?1",
        )?
        .query_row([entry_hash], WorldRow::from_row)
        .optional()?)
}

/// Give this connection a page cache of `kib` KiB (for this connection only: not persistent,
/// nothing written). A long read such as replay touches every object of every entry once, and
/// the default 2 MiB cache thrashes on long logs. Best effort: a failure leaves the default.
pub fn widen_page_cache(conn: &Connection, kib: u32) {
    let _ = conn.execute_batch(&format!("PRAGMA cache_size = -{kib}"));
}

/// SQLite's change counter for `conn` (`PRAGMA data_version`): two reads differ when another
/// connection committed in between. `world verify` uses it to tell whether a writer moved the
/// store under its checks.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn data_version(conn: &Connection) -> Result<i64, Error> {
    Ok(conn.query_row("PRAGMA data_version", [], |r| r.get(0))?)
}

/// A deferred read transaction renewed every `span` (DEC-PERF-3). Without it every SQLite
/// statement outside a transaction takes and drops the shared lock and re-checks for a hot
/// journal (`fcntl`, `newfstatat` per statement); renewing it keeps a writer waiting to commit
/// (busy timeout 2 s, store-format.md §4) from ever waiting on a long reader. Nothing is
/// written through it; ended on drop. When `conn` is already inside a transaction, it does
/// nothing.
pub struct ReadSpan<'c> {
    conn: &'c Connection,
    span: Duration,
    since: std::time::Instant,
    open: bool,
    /// Whether the transaction is this span's own (false: the caller's, left alone).
    ours: bool,
}

impl<'c> ReadSpan<'c> {
    /// Begin a deferred read transaction on `conn` (unless one is already open there).
    pub fn begin(conn: &'c Connection, span: Duration) -> ReadSpan<'c> {
        let open = conn.is_autocommit() && conn.execute_batch("BEGIN DEFERRED").is_ok();
        ReadSpan {
            conn,
            span,
            since: std::time::Instant::now(),
            open,
            ours: open,
        }
    }

    /// End the transaction now, before something slow that reads nothing (an interpreter
    /// run), so that a writer waiting to commit is not held up by it; the next [`Self::renew`]
    /// begins a new one.
    pub fn pause(&mut self) {
        if self.open {
            let _ = self.conn.execute_batch("COMMIT");
            self.open = false;
        }
    }

    /// End the transaction and begin the next one once `span` has passed since it began (or
    /// at once after [`Self::pause`]).
    pub fn renew(&mut self) {
        if self.ours && !self.open {
            self.open = self.conn.execute_batch("BEGIN DEFERRED").is_ok();
            self.since = std::time::Instant::now();
        } else if self.open && self.since.elapsed() >= self.span {
            let _ = self.conn.execute_batch("COMMIT");
            self.open = self.conn.execute_batch("BEGIN DEFERRED").is_ok();
            self.since = std::time::Instant::now();
        }
    }
}

impl Drop for ReadSpan<'_> {
    fn drop(&mut self) {
        if self.open {
            let _ = self.conn.execute_batch("COMMIT");
        }
    }
}

/// The selected head read on `conn` (inside a transaction, never from a cache).
pub fn head_in(conn: &Connection) -> Result<Option<String>, Error> {
    Ok(conn
        .prepare_cached("SELECT world_ref FROM store_heads WHERE head_key = ?1")?
        .query_row([SELECTED_HEAD], |r| r.get(0))
        .optional()?)
}

/// One object with payload on `conn`.
pub fn object_in(conn: &Connection, reference: &str) -> Result<Option<Object>, Error> {
    Ok(conn
        .prepare_cached(
            "SELECT hash_ref, interface_hash_ref, semantic_id, provenance, payload FROM objects WHERE hash_ref = ?1",
        )?
        .query_row([reference], |r| {
            Ok(Object {
                meta: meta_row(r)?,
                payload: r.get(4)?,
            })
        })
        .optional()?)
}

/// Every object of `semantic_id` on `conn` as `(hash_ref, payload)`, ascending hash (through
/// `objects_by_semantic_id`; cached statement). Payloads are returned as stored, unverified.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn payloads_by_semantic_id(
    conn: &Connection,
    semantic_id: &str,
) -> Result<Vec<(String, Vec<u8>)>, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT hash_ref, payload FROM objects WHERE semantic_id = ?1 ORDER BY hash_ref",
    )?;
    let rows = stmt.query_map([semantic_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// One log entry on `conn`.
pub fn log_entry_in(conn: &Connection, index: i64) -> Result<Option<LogEntry>, Error> {
    Ok(conn
        .prepare_cached(
            "SELECT entry_index, semantics_epoch, transition_fn_ref, interpreter_ref, prev_entry_hash_ref, written_by, entry_hash_ref, transition_ref
             FROM log_entries WHERE entry_index = ?1",
        )?
        .query_row(
            [index],
            entry_row,
        )
        .optional()?)
}

/// A registry head on `conn`.
pub fn registry_head_in(conn: &Connection, name: &str) -> Result<Option<String>, Error> {
    Ok(conn
        .prepare_cached("SELECT object_ref FROM epoch_registry_heads WHERE registry_name = ?1")?
        .query_row([name], |r| r.get(0))
        .optional()?)
}

/// Insert an object `OR IGNORE` (first writer's metadata wins) after re-hashing its payload.
///
/// # Errors
/// [`Error::PayloadMismatch`] when the payload does not hash to `meta.hash`.
pub fn put_object(conn: &Connection, obj: &Object) -> Result<(), Error> {
    let computed = HashRef::of(&obj.payload).to_string();
    if computed != obj.meta.hash {
        return Err(Error::PayloadMismatch {
            hash: obj.meta.hash.clone(),
            computed,
        });
    }
    conn.execute(
        "INSERT OR IGNORE INTO objects (hash_ref, interface_hash_ref, semantic_id, provenance, payload) VALUES (?1, ?2, ?3, ?4, ?5)",
        rusqlite::params![obj.meta.hash, obj.meta.interface_hash, obj.meta.semantic_id, obj.meta.provenance, obj.payload],
    )?;
    Ok(())
}

/// Upsert a registry head unconditionally (epoch bootstrap only; store-format.md §8.6).
pub fn set_registry_head(conn: &Connection, name: &str, object_ref: &str) -> Result<(), Error> {
    conn.execute(
        "INSERT INTO epoch_registry_heads (registry_name, object_ref) VALUES (?1, ?2)
         ON CONFLICT(registry_name) DO UPDATE SET object_ref = excluded.object_ref",
        [name, object_ref],
    )?;
    Ok(())
}

/// Compare-and-set a registry head: `next` must be an existing object; `expected = None`
/// requires no head. Any mismatch is [`Error::RegistryCasConflict`] (store-format.md §8.6).
pub fn cas_registry_head(
    conn: &Connection,
    name: &str,
    expected: Option<&str>,
    next: &str,
) -> Result<(), Error> {
    let exists: bool = conn
        .query_row("SELECT 1 FROM objects WHERE hash_ref = ?1", [next], |_| {
            Ok(true)
        })
        .optional()?
        .unwrap_or(false);
    if !exists {
        return Err(Error::Corrupt {
            what: format!("registry {name}"),
            detail: format!("next head {next} is not a stored object"),
        });
    }
    let actual = registry_head_in(conn, name)?;
    if actual.as_deref() != expected {
        return Err(Error::RegistryCasConflict {
            name: name.to_string(),
            expected: expected.unwrap_or("").to_string(),
            actual: actual.unwrap_or_default(),
        });
    }
    set_registry_head(conn, name, next)
}

fn holder_text(holder: Option<&lock::Holder>) -> String {
    match holder {
        Some(h) => format!(", held by {h}"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_bounds_are_the_lowest_and_highest_index() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open_write(
            &dir.path().join("w.db"),
            WriteOptions {
                create: true,
                wait_lock: None,
            },
        )
        .expect("store");
        assert_eq!(store.log_bounds().expect("empty"), (None, None));
        for i in [7i64, 3, 5] {
            store
                .conn()
                .execute(
                    "INSERT INTO log_entries VALUES (?1, ?2, 1, 'f', 'i', 'p', 'client:x', 't')",
                    rusqlite::params![i, format!("e{i}")],
                )
                .expect("entry");
        }
        assert_eq!(store.log_bounds().expect("bounds"), (Some(3), Some(7)));
    }
}
