//! The store's signed checkpoints (`world_checkpoints`, DEC-TRUST-2) and, in an episode
//! bundle, its entries' inclusion proofs (`world_bundle_proofs`, DEC-TRUST-4). Both are
//! `world_*` tables the reference ignores.
//!
//! A checkpoint row is a copy of a C2SP `tlog-checkpoint` note `world checkpoint` signed (with
//! any witness cosignatures merged in later), its parsed origin, tree size and root, and the
//! log's verifier key. The authoritative copies are the ones published outside the store;
//! this table is what `checkpoint list`, `prove`, `export-episode --checkpoint` and `GET
//! /v1/checkpoint` read, and what `verify` re-checks against the log.

use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;

use super::Error;

/// The checkpoints table's name.
pub const TABLE: &str = "world_checkpoints";
/// The bundle proofs table's name.
pub const PROOFS_TABLE: &str = "world_bundle_proofs";

/// DDL of both tables, run on every writable open (`schema::apply_ddl`). `root_hash` is the
/// 32 raw bytes; `created_at` Unix seconds; `proof` a `c2sp.org/tlog-proof@v1` text.
pub const DDL: &str = "CREATE TABLE IF NOT EXISTS world_checkpoints (
  id INTEGER PRIMARY KEY,
  origin TEXT NOT NULL,
  tree_size INTEGER NOT NULL,
  root_hash BLOB NOT NULL,
  log_key TEXT NOT NULL,
  note TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (origin, tree_size, log_key)
);
CREATE TABLE IF NOT EXISTS world_bundle_proofs (
  entry_index INTEGER PRIMARY KEY,
  proof TEXT NOT NULL
)";

/// One stored checkpoint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointRow {
    /// Row id (ascending in the order they were stored).
    pub id: i64,
    /// The origin line.
    pub origin: String,
    /// The tree size.
    pub tree_size: u64,
    /// The root hash.
    #[serde(serialize_with = "b64")]
    pub root_hash: [u8; 32],
    /// The log's verifier key (`name+id+base64`).
    pub log_key: String,
    /// The signed note, verbatim.
    pub note: String,
    /// When it was stored (Unix seconds).
    pub created_at: i64,
}

fn b64<S: serde::Serializer>(h: &[u8; 32], s: S) -> Result<S::Ok, S::Error> {
    use base64::Engine;
    s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(h))
}

/// Whether the store has the table (a store no writable `world` of this version opened, or a
/// reference-written one, has not).
///
/// # Errors
/// SQLite errors.
pub fn present(conn: &Connection, table: &str) -> Result<bool, Error> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1")?
        .query_row([table], |_| Ok(()))
        .optional()?
        .is_some())
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<CheckpointRow> {
    let size: i64 = r.get(2)?;
    let root: Vec<u8> = r.get(3)?;
    Ok(CheckpointRow {
        id: r.get(0)?,
        origin: r.get(1)?,
        tree_size: u64::try_from(size).unwrap_or(0),
        root_hash: root.try_into().unwrap_or([0; 32]),
        log_key: r.get(4)?,
        note: r.get(5)?,
        created_at: r.get(6)?,
    })
}

const COLUMNS: &str = "id, origin, tree_size, root_hash, log_key, note, created_at";

/// Every stored checkpoint, oldest first (none without the table).
///
/// # Errors
/// SQLite errors.
pub fn list(conn: &Connection) -> Result<Vec<CheckpointRow>, Error> {
    if !present(conn, TABLE)? {
        return Ok(Vec::new());
    }
    let mut stmt = conn.prepare(&format!("SELECT {COLUMNS} FROM {TABLE} ORDER BY id"))?;
    let rows = stmt.query_map([], row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The checkpoint stored last (of `origin`, when given).
///
/// # Errors
/// SQLite errors.
pub fn latest(conn: &Connection, origin: Option<&str>) -> Result<Option<CheckpointRow>, Error> {
    if !present(conn, TABLE)? {
        return Ok(None);
    }
    let sql = format!(
        "SELECT {COLUMNS} FROM {TABLE} WHERE ?1 IS NULL OR origin = ?1 ORDER BY id DESC LIMIT 1"
    );
    Ok(conn.query_row(&sql, [origin], row).optional()?)
}

/// Store a checkpoint, or, when one of the same origin, size and key is stored, return that
/// row unchanged (`false`: nothing written). Runs in the caller's transaction.
///
/// # Errors
/// SQLite errors (e.g. no table: a read-only or foreign store).
pub fn insert(
    tx: &Connection,
    origin: &str,
    tree_size: u64,
    root: &[u8; 32],
    log_key: &str,
    note: &str,
    now: i64,
) -> Result<(CheckpointRow, bool), Error> {
    let n = tx
        .prepare_cached(&format!(
            "INSERT OR IGNORE INTO {TABLE} (origin, tree_size, root_hash, log_key, note, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
        ))?
        .execute(rusqlite::params![origin, tree_size as i64, &root[..], log_key, note, now])?;
    let stored = tx.query_row(
        &format!(
            "SELECT {COLUMNS} FROM {TABLE} WHERE origin = ?1 AND tree_size = ?2 AND log_key = ?3"
        ),
        rusqlite::params![origin, tree_size as i64, log_key],
        row,
    )?;
    Ok((stored, n > 0))
}

/// Replace the note of row `id` (witness cosignatures merged in).
///
/// # Errors
/// SQLite errors.
pub fn set_note(tx: &Connection, id: i64, note: &str) -> Result<(), Error> {
    tx.prepare_cached(&format!("UPDATE {TABLE} SET note = ?1 WHERE id = ?2"))?
        .execute(rusqlite::params![note, id])?;
    Ok(())
}

/// Store entry `index`'s inclusion proof in a bundle.
///
/// # Errors
/// SQLite errors.
pub fn put_proof(tx: &Connection, index: i64, proof: &str) -> Result<(), Error> {
    tx.prepare_cached(&format!(
        "INSERT OR REPLACE INTO {PROOFS_TABLE} (entry_index, proof) VALUES (?1, ?2)"
    ))?
    .execute(rusqlite::params![index, proof])?;
    Ok(())
}

/// A bundle's inclusion proofs by entry index (none without the table).
///
/// # Errors
/// SQLite errors.
pub fn proofs(conn: &Connection) -> Result<Vec<(i64, String)>, Error> {
    if !present(conn, PROOFS_TABLE)? {
        return Ok(Vec::new());
    }
    let mut stmt = conn.prepare(&format!(
        "SELECT entry_index, proof FROM {PROOFS_TABLE} ORDER BY entry_index"
    ))?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}
