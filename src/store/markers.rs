//! The store side of pairing with a standalone ledger (limits.md §9, missions.md §7, issue 27
//! §2: store-side markers are written and read by the store module only, and no SQL names a
//! store table outside it).
//!
//! Two kinds of marker object live in the store's `objects` table:
//! - the **store-id object** ([`STORE_ID_SEMANTIC_ID`]: random bytes, written once), whose
//!   hash names the store in shared ledgers ([`store_id`]; DEC-LIM-20: two stores created
//!   alike have the same genesis entry, so the genesis hash cannot name one);
//! - an **attempt marker** ([`AttemptMarker`]) per standalone attempt, written in its effect
//!   intent's transaction: its presence proves the attempt's intent reached the store
//!   (DEC-LIM-22, DEC-MIS-18).
//!
//! What the markers mean to a ledger (when to release, settle or keep an attempt) is the
//! pairing modules' business (`limits::pairing`, `mission::pairing`); this module builds the
//! objects and answers typed questions about them.

use rusqlite::{Connection, OptionalExtension};

use super::{put_object, Error, Object, Store};

/// Semantic id of the object that names a store in shared ledgers.
pub const STORE_ID_SEMANTIC_ID: &str = "world/limits-store-id/v1";

/// Semantic id of a limits attempt's marker (payload `{"attemptId":…,"intentId":…}` + newline).
pub const LIMITS_ATTEMPT_SEMANTIC_ID: &str = "world/limits-attempt/v1";

/// Semantic id of a mission attempt's marker (payload
/// `{"attemptId":…,"intentId":…,"missionId":…}` + newline).
pub const MISSION_ATTEMPT_SEMANTIC_ID: &str = "world/mission-attempt/v1";

/// The store's id in shared ledgers, `store-` + the first 16 hex digits of its store-id
/// object's hash ([`STORE_ID_SEMANTIC_ID`]); `None` when the store was never paired with a
/// standalone ledger.
///
/// # Errors
/// SQLite errors.
pub fn store_id(conn: &Connection) -> rusqlite::Result<Option<String>> {
    let hash: Option<String> = conn.query_row(
        "SELECT min(hash_ref) FROM objects WHERE semantic_id = ?1",
        [STORE_ID_SEMANTIC_ID],
        |r| r.get(0),
    )?;
    Ok(hash.map(|h| id_of_hash(&h)))
}

fn id_of_hash(h: &str) -> String {
    let hex = h.strip_prefix("sha256:").unwrap_or(h);
    format!("store-{}", hex.chars().take(16).collect::<String>())
}

fn new_store_id_object() -> Result<Object, Error> {
    let mut b = [0u8; 16];
    getrandom::getrandom(&mut b).map_err(|e| Error::Corrupt {
        what: "store id".into(),
        detail: e.to_string(),
    })?;
    let payload = format!("{{\"storeNonce\":\"{}\"}}\n", hex::encode(b)).into_bytes();
    Ok(Object::new(STORE_ID_SEMANTIC_ID, "world:limits", payload))
}

/// [`ensure_store_id`], also returning the store-id object when this call wrote it (the store
/// was never paired): written before any ledger step, so an attempt a crash strands in a
/// ledger always names an id the store holds; an invocation whose first effect the ledger
/// then refuses removes it again with [`forget_store_id`] (DEC-MIS-19). One transaction; the
/// caller holds the store's writer lock.
///
/// # Errors
/// Store errors.
pub fn ensure_store_id_new(store: &mut Store) -> Result<(String, Option<Object>), Error> {
    if let Some(id) = store_id(store.conn())? {
        return Ok((id, None));
    }
    let obj = new_store_id_object()?;
    let tx = store.immediate()?;
    put_object(&tx, &obj)?;
    tx.commit()?;
    let id = store_id(store.conn())?.ok_or_else(|| Error::Corrupt {
        what: "store id".into(),
        detail: "the store-id object was not stored".into(),
    })?;
    Ok((id, Some(obj)))
}

/// The store's id, writing its store-id object first if it has none (needs the writer lock).
///
/// # Errors
/// Store errors.
pub fn ensure_store_id(store: &mut Store) -> Result<String, Error> {
    ensure_store_id_new(store).map(|(id, _)| id)
}

/// Remove the store-id object `obj` that [`ensure_store_id_new`] wrote for this invocation,
/// after the ledger cleanly refused its first effect (no ledger and no intent of the store
/// names the id): the refused call leaves the store as it found it. Objects are otherwise
/// never deleted. One transaction; the caller holds the store's writer lock.
///
/// # Errors
/// Store errors; [`Error::Corrupt`] when `obj` is not a store-id object.
pub fn forget_store_id(store: &mut Store, obj: &Object) -> Result<(), Error> {
    if obj.meta.semantic_id != STORE_ID_SEMANTIC_ID {
        return Err(Error::Corrupt {
            what: "store id".into(),
            detail: format!("{} is not a store-id object", obj.meta.hash),
        });
    }
    let tx = store.immediate()?;
    tx.execute(
        "DELETE FROM objects WHERE hash_ref = ?1 AND semantic_id = ?2",
        [obj.meta.hash.as_str(), STORE_ID_SEMANTIC_ID],
    )?;
    tx.commit()?;
    Ok(())
}

/// The marker of one standalone attempt, tying it to the effect intent it was made for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttemptMarker<'a> {
    /// A limits-ledger attempt ([`LIMITS_ATTEMPT_SEMANTIC_ID`]).
    Limits {
        /// The attempt id (`<storeId>/<intentId>/<16 hex>`).
        attempt_id: &'a str,
        /// The effect intent id (`effect:<episode>:<ordinal>`).
        intent_id: &'a str,
    },
    /// A mission attempt ([`MISSION_ATTEMPT_SEMANTIC_ID`]).
    Mission {
        /// The mission.
        mission_id: &'a str,
        /// The attempt id (`<storeId>:<intentId>:<8 hex>`).
        attempt_id: &'a str,
        /// The effect intent id.
        intent_id: &'a str,
    },
}

impl AttemptMarker<'_> {
    /// The marker object, to be stored in the intent's transaction (`put_object`).
    pub fn object(&self) -> Object {
        let obj = crate::encoding::gojson::Obj::new();
        match *self {
            AttemptMarker::Limits {
                attempt_id,
                intent_id,
            } => Object::new(
                LIMITS_ATTEMPT_SEMANTIC_ID,
                "world:limits",
                obj.str("attemptId", attempt_id)
                    .str("intentId", intent_id)
                    .finish(),
            ),
            AttemptMarker::Mission {
                mission_id,
                attempt_id,
                intent_id,
            } => Object::new(
                MISSION_ATTEMPT_SEMANTIC_ID,
                "world:mission",
                obj.str("attemptId", attempt_id)
                    .str("intentId", intent_id)
                    .str("missionId", mission_id)
                    .finish(),
            ),
        }
    }

    /// Whether the store holds this marker (the attempt's intent committed).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn is_stored(&self, conn: &Connection) -> rusqlite::Result<bool> {
        let obj = self.object();
        Ok(conn
            .prepare_cached("SELECT 1 FROM objects WHERE hash_ref = ?1 AND semantic_id = ?2")?
            .query_row(
                [obj.meta.hash.as_str(), obj.meta.semantic_id.as_str()],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }
}

/// Whether any limits attempt marker names effect intent `intent_id` (then that intent belongs
/// to a per-attempt id, never to an attempt id of the form stores paired before DEC-LIM-22
/// wrote). A marker whose payload does not decode names no intent.
///
/// # Errors
/// SQLite errors.
pub fn limits_intent_has_marker(conn: &Connection, intent_id: &str) -> rusqlite::Result<bool> {
    let mut stmt = conn.prepare("SELECT payload FROM objects WHERE semantic_id = ?1")?;
    let mut rows = stmt.query([LIMITS_ATTEMPT_SEMANTIC_ID])?;
    while let Some(row) = rows.next()? {
        let p: Vec<u8> = row.get(0)?;
        let v: serde_json::Value = serde_json::from_slice(&p).unwrap_or_default();
        if v.get("intentId").and_then(|x| x.as_str()) == Some(intent_id) {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_found_by_kind_and_content() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE objects (hash_ref TEXT PRIMARY KEY, interface_hash_ref TEXT NOT NULL, semantic_id TEXT NOT NULL, provenance TEXT NOT NULL, payload BLOB NOT NULL);",
        )
        .unwrap();
        assert_eq!(store_id(&conn).unwrap(), None);
        let l = AttemptMarker::Limits {
            attempt_id: "store-0123456789abcdef/effect:ep:0/00",
            intent_id: "effect:ep:0",
        };
        let m = AttemptMarker::Mission {
            mission_id: "m",
            attempt_id: "store-0123456789abcdef:effect:ep:0:00000000",
            intent_id: "effect:ep:0",
        };
        assert!(!l.is_stored(&conn).unwrap());
        assert!(!limits_intent_has_marker(&conn, "effect:ep:0").unwrap());
        put_object(&conn, &m.object()).unwrap();
        assert!(m.is_stored(&conn).unwrap());
        assert!(
            !l.is_stored(&conn).unwrap(),
            "a mission marker is not a limits one"
        );
        assert!(!limits_intent_has_marker(&conn, "effect:ep:0").unwrap());
        put_object(&conn, &l.object()).unwrap();
        assert!(l.is_stored(&conn).unwrap());
        assert!(limits_intent_has_marker(&conn, "effect:ep:0").unwrap());
        assert!(!limits_intent_has_marker(&conn, "effect:ep:1").unwrap());
        let id = new_store_id_object().unwrap();
        put_object(&conn, &id).unwrap();
        let sid = store_id(&conn).unwrap().unwrap();
        assert_eq!(sid.len(), "store-".len() + 16);
        assert!(id.meta.hash.as_str().contains(&sid["store-".len()..]));
    }
}
