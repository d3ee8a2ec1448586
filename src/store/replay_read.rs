//! Typed block reads for replay's read-ahead (issue 34 §2, DEC-REPLAYPERF-1): the objects and
//! the commit receipts of a block of log entries, each kind read with one statement per
//! [`IN_LIST`] keys instead of one statement per key.
//!
//! Both return the store's rows as they are, unverified: the caller hashes and decodes them
//! (replay does so once per object per block, `src/replay/ahead.rs`). A key the store does
//! not hold is simply absent from the answer, as [`super::object_in`] answers `None`.

use std::collections::HashMap;
use std::sync::OnceLock;

use rusqlite::types::Null;
use rusqlite::{Connection, ToSql};

use super::journal::{self, Receipt};
use super::{meta_row, world_in, Error, Object, WorldRow};

/// How many keys one statement carries: its `IN (…)` list has this many places, and the
/// places a shorter block leaves unused are bound to NULL, which matches no row. The statement
/// text is therefore the same for every block, prepared once and cached.
pub const IN_LIST: usize = 32;

/// `?1, ?2, … ?IN_LIST`.
fn places() -> String {
    (1..=IN_LIST)
        .map(|i| format!("?{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Run `sql` (with [`IN_LIST`] places) once per chunk of `keys`, calling `row` on each row.
fn for_each_in(
    conn: &Connection,
    sql: &str,
    keys: &[&str],
    mut row: impl FnMut(&rusqlite::Row<'_>) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut stmt = conn.prepare_cached(sql)?;
    for chunk in keys.chunks(IN_LIST) {
        let mut params: Vec<&dyn ToSql> = Vec::with_capacity(IN_LIST);
        for k in chunk {
            params.push(k);
        }
        while params.len() < IN_LIST {
            params.push(&Null);
        }
        let mut rows = stmt.query(params.as_slice())?;
        while let Some(r) = rows.next()? {
            row(r)?;
        }
    }
    Ok(())
}

/// The objects among `refs` that the store holds, as [`super::object_in`] reads each one,
/// with one statement per [`IN_LIST`] refs. Refs may repeat; each object is returned once.
/// Payloads are as stored, unverified.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn objects_by_ref(conn: &Connection, refs: &[&str]) -> Result<HashMap<String, Object>, Error> {
    static SQL: OnceLock<String> = OnceLock::new();
    let sql = SQL.get_or_init(|| {
        format!(
            "SELECT hash_ref, interface_hash_ref, semantic_id, provenance, payload FROM objects WHERE hash_ref IN ({})",
            places()
        )
    });
    let mut out = HashMap::with_capacity(refs.len());
    for_each_in(conn, sql, refs, |r| {
        let obj = Object {
            meta: meta_row(r)?,
            payload: r.get(4)?,
        };
        out.insert(obj.meta.hash.clone(), obj);
        Ok(())
    })?;
    Ok(out)
}

/// One invocation's receipt as [`journal::receipt`] derives it, read in a block: the receipt
/// (or the error `journal::receipt` would return), and the world row its outcome names when
/// the receipt looked it up (`Some(row)`: the world the store holds under the outcome's
/// `resultRef`, the same read as [`world_in`]).
pub type BlockReceipt = (Result<Receipt, Error>, Option<(String, WorldRow)>);

/// The receipts of `ids` ([`journal::receipt`], every check of it), with each commit
/// outcome's world row: the journal rows of up to [`IN_LIST`] ids and their outcome objects
/// in one statement, then one world read per resolved commit, which serves both the receipt's
/// "names a world the store holds" check and the caller's world row.
///
/// # Errors
/// [`Error::Sqlite`] for the block's statement; a failure of one receipt (including a world
/// read) is that receipt's `Err`.
pub fn receipts(conn: &Connection, ids: &[&str]) -> Result<HashMap<String, BlockReceipt>, Error> {
    static SQL: OnceLock<String> = OnceLock::new();
    let sql = SQL.get_or_init(|| {
        format!(
            "SELECT j.invocation_id, j.kind, j.object_ref, o.hash_ref, o.interface_hash_ref, o.semantic_id, o.provenance, o.payload
             FROM journal j LEFT JOIN objects o ON j.kind = 'outcome' AND o.hash_ref = j.object_ref
             WHERE j.invocation_id IN ({})",
            places()
        )
    });
    // id → (intent ref, outcome ref and its object as read).
    type Rows = (Option<String>, Option<(String, Option<Object>)>);
    let mut rows: HashMap<String, Rows> = HashMap::with_capacity(ids.len());
    for_each_in(conn, sql, ids, |r| {
        let id: String = r.get(0)?;
        let kind: String = r.get(1)?;
        let object_ref: String = r.get(2)?;
        let slot = rows.entry(id).or_default();
        if kind == "intent" {
            slot.0 = Some(object_ref);
        } else if kind == "outcome" {
            let obj = match r.get::<_, Option<String>>(3)? {
                Some(_) => Some(Object {
                    meta: super::ObjectMeta {
                        hash: r.get(3)?,
                        interface_hash: r.get(4)?,
                        semantic_id: r.get(5)?,
                        provenance: r.get(6)?,
                    },
                    payload: r.get(7)?,
                }),
                None => None,
            };
            slot.1 = Some((object_ref, obj));
        }
        Ok(())
    })?;
    let mut out = HashMap::with_capacity(ids.len());
    for id in ids {
        if out.contains_key(*id) {
            continue;
        }
        let (intent, outcome) = rows.remove(*id).unwrap_or_default();
        let (outcome_ref, mut outcome_obj) = match outcome {
            Some((r, o)) => (Some(r), Some(o)),
            None => (None, None),
        };
        let mut world: Option<(String, WorldRow)> = None;
        let receipt = journal::receipt_from(
            id,
            intent.is_some(),
            outcome_ref.as_deref(),
            &mut |_| Ok(outcome_obj.take().flatten()),
            &mut |w| {
                let row = world_in(conn, w)?;
                let exists = row.is_some();
                world = row.map(|row| (w.to_string(), row));
                Ok(exists)
            },
        );
        out.insert((*id).to_string(), (receipt, world));
    }
    Ok(out)
}

/// One commit intent of the journal (`world/journal-intent/v1`, decoded), with its row's
/// `seq` and whether its invocation has an outcome row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitIntentRow {
    /// The intent row's `seq` (journal order).
    pub seq: i64,
    /// The row's `invocation_id`.
    pub invocation_id: String,
    /// The intent, decoded.
    pub intent: journal::CommitIntent,
    /// Whether the journal holds an outcome row for the same invocation id (it committed).
    pub committed: bool,
}

/// Every commit intent of the journal that decodes, each decoded once, in the order
/// [`journal::commit_intents_by_entry`] reads them: one pass that answers both that index and
/// [`journal::committed_intents`] (the committed ones, sorted by `seq`), which replay needs at
/// its start (its selection and its gap check, DEC-REPLAYPERF-2).
///
/// # Errors
/// [`Error::Sqlite`].
pub fn commit_intents(conn: &Connection) -> Result<Vec<CommitIntentRow>, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT j.invocation_id, o.payload, j.seq,
                EXISTS (SELECT 1 FROM journal x WHERE x.invocation_id = j.invocation_id AND x.kind = 'outcome')
         FROM journal j JOIN objects o ON o.hash_ref = j.object_ref
         WHERE j.kind = 'intent' AND o.semantic_id = ?1",
    )?;
    let mut rows = stmt.query([journal::COMMIT_INTENT])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let payload = r.get_ref(1)?.as_blob().unwrap_or_default();
        if let Ok(intent) = journal::CommitIntent::decode(payload) {
            out.push(CommitIntentRow {
                seq: r.get(2)?,
                invocation_id: r.get(0)?,
                intent,
                committed: r.get(3)?,
            });
        }
    }
    Ok(out)
}

impl super::Store {
    /// [`commit_intents`] on this store.
    ///
    /// # Errors
    /// [`Error::Sqlite`].
    pub fn commit_intents(&self) -> Result<Vec<CommitIntentRow>, Error> {
        commit_intents(self.conn())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::journal::{commit_outcome_payload, insert_verbatim, JournalRow};
    use crate::store::{object_in, put_object, Store, WriteOptions};

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Store::open_write(
            &dir.path().join("w.db"),
            WriteOptions {
                create: true,
                wait_lock: None,
            },
        )
        .expect("store");
        (dir, store)
    }

    #[test]
    fn objects_by_ref_answers_as_object_in_over_several_statements() {
        let (_dir, store) = store();
        let conn = store.conn();
        let mut refs = Vec::new();
        for i in 0..(IN_LIST + 9) {
            let o = Object::new("test/blob/v1", "test", format!("payload {i}").into_bytes());
            put_object(conn, &o).expect("put");
            refs.push(o.meta.hash.clone());
        }
        let absent = Object::new("test/blob/v1", "test", b"never stored".to_vec());
        let mut asked: Vec<&str> = refs.iter().map(String::as_str).collect();
        asked.push(&absent.meta.hash);
        asked.push(&refs[3]); // a repeated ref
        let got = objects_by_ref(conn, &asked).expect("read");
        assert_eq!(got.len(), refs.len());
        for r in &refs {
            assert_eq!(Some(&got[r]), object_in(conn, r).expect("one").as_ref());
        }
        assert!(!got.contains_key(&absent.meta.hash));
        assert!(objects_by_ref(conn, &[]).expect("none").is_empty());
    }

    #[test]
    fn block_receipts_are_journal_receipts() {
        let (_dir, store) = store();
        let conn = store.conn();
        let world = "sha256:".to_string() + &"a".repeat(64);
        conn.execute(
            "INSERT INTO worlds (world_ref, revision, state_root, log_head) VALUES (?1, 1, 's', 'h')",
            [&world],
        )
        .expect("world");
        let intent = Object::new("test/intent/v1", "test", b"intent".to_vec());
        put_object(conn, &intent).expect("intent");
        let mut seq = 0;
        let mut row = |kind: &str, id: &str, object_ref: &str| {
            seq += 1;
            insert_verbatim(
                conn,
                &JournalRow {
                    seq,
                    kind: kind.to_string(),
                    invocation_id: id.to_string(),
                    object_ref: object_ref.to_string(),
                },
            )
            .expect("row");
        };
        let outcome = |id: &str, w: &str| {
            let o = Object::new("test/outcome/v1", "test", commit_outcome_payload(id, w, 7));
            put_object(conn, &o).expect("outcome");
            o.meta.hash
        };
        let nowhere = "sha256:".to_string() + &"b".repeat(64);
        // Resolved; indeterminate; an outcome naming no world; an outcome object missing;
        // an outcome without intent; nothing at all.
        row("intent", "cli:e:ok", &intent.meta.hash);
        row("outcome", "cli:e:ok", &outcome("cli:e:ok", &world));
        row("intent", "cli:e:open", &intent.meta.hash);
        row("intent", "cli:e:lost", &intent.meta.hash);
        row("outcome", "cli:e:lost", &outcome("cli:e:lost", &nowhere));
        row("intent", "cli:e:gone", &intent.meta.hash);
        row("outcome", "cli:e:gone", &nowhere);
        row("outcome", "cli:e:orphan", &outcome("cli:e:orphan", &world));
        let ids = [
            "cli:e:ok",
            "cli:e:open",
            "cli:e:lost",
            "cli:e:gone",
            "cli:e:orphan",
            "cli:e:none",
        ];
        let mut got = receipts(conn, &ids).expect("block");
        assert_eq!(got.len(), ids.len());
        for id in ids {
            let (block, world_row) = got.remove(id).expect("every id answered");
            match (block, journal::receipt(conn, id)) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{id}"),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{id}"),
                (a, b) => panic!("{id}: block {a:?}, journal {b:?}"),
            }
            let want = (id == "cli:e:ok")
                .then(|| {
                    world_in(conn, &world)
                        .expect("world")
                        .map(|r| (world.clone(), r))
                })
                .flatten();
            assert_eq!(world_row, want, "{id}");
        }
        // Only the intents that decode as commit intents are read (these are test blobs).
        assert!(commit_intents(conn).expect("intents").is_empty());
        let ok = journal::receipt(conn, "cli:e:ok").expect("ok");
        assert_eq!(ok.state, journal::ReceiptState::Resolved);
        assert!(journal::receipt(conn, "cli:e:lost").is_err());
        assert!(journal::receipt(conn, "cli:e:gone").is_err());
        assert!(journal::receipt(conn, "cli:e:orphan").is_err());
    }

    #[test]
    fn commit_intents_answer_both_journal_reads() {
        let (_dir, store) = store();
        let conn = store.conn();
        let mut seq = 100;
        let mut put = |kind: &str, id: &str, obj: &Object| {
            put_object(conn, obj).expect("object");
            seq -= 1; // seq order differs from insertion (and so, likely, from scan) order
            insert_verbatim(
                conn,
                &JournalRow {
                    seq,
                    kind: kind.to_string(),
                    invocation_id: id.to_string(),
                    object_ref: obj.meta.hash.clone(),
                },
            )
            .expect("row");
        };
        let intent = |id: &str, named: &str, entry: &str| journal::CommitIntent {
            invocation_id: named.to_string(),
            world_ref: format!("w-{id}"),
            entry_hash: entry.to_string(),
            observed_head: String::new(),
            prev_entry_hash: String::new(),
            transition_fn: "f".into(),
            transition_ref: "t".into(),
            interpreter: "i".into(),
            logical_time: 5,
        };
        let obj =
            |i: &journal::CommitIntent| Object::new(journal::COMMIT_INTENT, "test", i.payload());
        // Committed; open; committed but naming another id; an undecodable intent.
        for (id, named, entry, committed) in [
            ("cli:e:1", "cli:e:1", "h1", true),
            ("cli:e:2", "cli:e:2", "h2", false),
            ("cli:e:3", "cli:e:x", "h3", true),
            ("cli:e:4", "cli:e:4", "h4", true),
        ] {
            let i = intent(id, named, entry);
            put("intent", id, &obj(&i));
            if committed {
                let o = Object::new("test/outcome/v1", "test", i.outcome_payload());
                put("outcome", id, &o);
            }
        }
        put(
            "intent",
            "cli:e:5",
            &Object::new(journal::COMMIT_INTENT, "test", b"{}".to_vec()),
        );
        let rows = commit_intents(conn).expect("rows");
        let mut committed: Vec<_> = rows.iter().filter(|r| r.committed).collect();
        committed.sort_by_key(|r| r.seq);
        let committed: Vec<(String, journal::CommitIntent)> = committed
            .into_iter()
            .map(|r| (r.invocation_id.clone(), r.intent.clone()))
            .collect();
        assert_eq!(
            committed,
            journal::committed_intents(conn).expect("committed")
        );
        let index = journal::commit_intents_by_entry(conn).expect("index");
        for r in &rows {
            let want =
                (r.intent.invocation_id == r.invocation_id).then_some(r.invocation_id.as_str());
            assert_eq!(index.get(&r.intent.entry_hash), want, "{}", r.invocation_id);
        }
        assert_eq!(rows.len(), 4);
    }
}
