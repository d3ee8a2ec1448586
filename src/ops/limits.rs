//! The nested limits ledger's write commands (limits.md §5, §7): `world limits init|reserve|
//! dispatch|settle|release|stop|reconcile|adjust`, and `reconcile --from-store`.
//!
//! Where the ledger lives is a [`Place`]: its tables inside the World store file (the caller
//! holds the writer lock), or a standalone ledger (a SQLite file or PostgreSQL). [`apply`] runs
//! one command as one actor in one `BEGIN IMMEDIATE` transaction, or rolls it back whatever the
//! result when asked for a dry run. Who the actor is and whether a human confirmed are the
//! caller's decisions, taken before (an attended act: dry run → confirmation → the real
//! command); this module asks nobody.

use rusqlite::{Connection, TransactionBehavior};

use crate::encoding::HashRef;
use crate::ledger::EvidenceKind;
use crate::limits::pairing;
use crate::limits::{self, ActorFacts, Code, EvidenceCheck, LedgerStore, Request, Verdict};
use crate::store::{self, Object, Store};

/// Where the ledger lives for one command ([`crate::ops::place::Place`]).
pub type Place = super::place::Place<dyn LedgerStore>;

impl Place {
    /// The current revision (0 when not initialised).
    pub fn revision(&self) -> u128 {
        match self {
            Place::Store(s) => limits::schema::current_revision(s.conn()),
            Place::Standalone(l) => l.revision(),
        }
    }

    /// What prompts and messages call it: the store path, or the ledger's description.
    pub fn describe(&self) -> String {
        self.name_with(|l| l.describe())
    }
}

/// Evidence resolution (limits.md §5): the file hashed on the spot, or an object of the World
/// store whose payload re-hashes to its ref.
pub struct StoreEvidence<'a> {
    /// The ref of the evidence file given with the command, if any.
    pub file: Option<HashRef>,
    /// The World store `--evidence REF` is resolved in, if any.
    pub store: Option<&'a Connection>,
}

impl EvidenceCheck for StoreEvidence<'_> {
    fn resolves(&self, evidence: &HashRef) -> bool {
        if self.file.as_ref() == Some(evidence) {
            return true;
        }
        match self.store {
            Some(conn) => matches!(
                store::object_in(conn, &evidence.to_string()),
                Ok(Some(o)) if o.verifies()
            ),
            None => false,
        }
    }
}

/// One command as one actor.
pub struct Options<'a> {
    /// The request (id, expected revision, command).
    pub request: &'a Request,
    /// Who acts, as established by the caller (HOST, AGENT, or a HUMAN who confirmed).
    pub actor: &'a ActorFacts,
    /// The command's instant, Unix milliseconds.
    pub now_ms: u128,
    /// The evidence file's bytes and ref (`--evidence-file`): it resolves as evidence, and in
    /// the store file it is stored as an object in the command's transaction.
    pub evidence_file: Option<&'a (HashRef, Vec<u8>)>,
    /// The World store an evidence ref is resolved in (the store file itself, or a read-only
    /// open of it beside a standalone ledger).
    pub evidence_store: Option<&'a Connection>,
    /// Roll back whatever the result (the caller's check before asking a human).
    pub dry_run: bool,
}

/// Run one command in one `BEGIN IMMEDIATE` transaction; with `dry_run` roll it back whatever
/// the result. A rejection is `Err(limits::Error::Rejected(verdict))`; for
/// `exposure_exceeded` its control-violation row is kept (limits.md §6), the evidence object
/// is not.
///
/// # Errors
/// [`limits::Error`]; nothing but that violation row is written on error.
pub fn apply(place: &Place, opts: &Options<'_>) -> Result<Verdict, limits::Error> {
    let check = StoreEvidence {
        file: opts.evidence_file.map(|(r, _)| *r),
        store: opts.evidence_store,
    };
    let (request, actor, now_ms) = (opts.request, opts.actor, opts.now_ms);
    let conn = match place {
        Place::Store(s) => s.conn(),
        Place::Standalone(l) if opts.dry_run => return l.dry_run(request, actor, now_ms, &check),
        Place::Standalone(l) => return l.execute(request, actor, now_ms, &check),
    };
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    if let Some((_, bytes)) = opts.evidence_file {
        let obj = Object::new(
            EvidenceKind::Limits.semantic_id(),
            EvidenceKind::Limits.provenance(),
            bytes.clone(),
        );
        store::put_object(&tx, &obj).map_err(|e| limits::Error::corrupt(e.to_string()))?;
    }
    let result = limits::apply(&tx, request, actor, now_ms, &check);
    if opts.dry_run {
        drop(tx);
        return result;
    }
    match result {
        Ok(v) => {
            tx.commit()?;
            Ok(v)
        }
        Err(limits::Error::Rejected(v)) if v.code == Code::ExposureExceeded => {
            tx.commit()?;
            Err(limits::Error::Rejected(v))
        }
        Err(e) => Err(e),
    }
}

pub use super::place::{FromStore, FromStoreError};

/// `world limits reconcile --from-store`: the HOST settles `store`'s outstanding attempts in
/// the standalone `ledger` from the store's journal evidence, through the pairing protocol
/// ([`super::place::reconcile_from_store`] on a [`crate::broker::LimitsPairing::reconciling`];
/// each attempt its own ledger transaction). The caller holds the store's writer lock.
///
/// # Errors
/// [`FromStoreError`].
pub fn reconcile_from_store(
    store: &Store,
    ledger: Box<dyn LedgerStore>,
    now_ms: u128,
) -> Result<FromStore, FromStoreError> {
    super::place::reconcile_from_store(store, now_ms, |link| {
        crate::broker::LimitsPairing::reconciling(pairing::Standalone {
            ledger,
            link,
            invocation_id: String::new(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_evidence_resolves_the_file_and_rehashes_store_objects() {
        let conn = Connection::open_in_memory().unwrap_or_else(|e| panic!("{e}"));
        conn.execute_batch(
            "CREATE TABLE objects (hash_ref TEXT PRIMARY KEY, interface_hash_ref TEXT NOT NULL, semantic_id TEXT NOT NULL, provenance TEXT NOT NULL, payload BLOB NOT NULL);",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let good = Object::new(
            EvidenceKind::Limits.semantic_id(),
            EvidenceKind::Limits.provenance(),
            b"approval".to_vec(),
        );
        store::put_object(&conn, &good).unwrap_or_else(|e| panic!("{e}"));
        // A tampered row: its payload no longer hashes to its ref.
        let forged = HashRef::of(b"forged");
        conn.execute(
            "INSERT INTO objects VALUES (?1, 'x', 'y', 'z', X'00')",
            [forged.to_string()],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let file = HashRef::of(b"file bytes");
        let check = StoreEvidence {
            file: Some(file),
            store: Some(&conn),
        };
        assert!(check.resolves(&file));
        assert!(check.resolves(&HashRef::of(b"approval")));
        assert!(!check.resolves(&forged), "payload must re-hash");
        assert!(!check.resolves(&HashRef::of(b"absent")));
        let none = StoreEvidence {
            file: None,
            store: None,
        };
        assert!(!none.resolves(&file));
    }
}
