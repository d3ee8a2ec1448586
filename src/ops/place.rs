//! Where a ledger client's books live for one command (issue 27 §2): the one `Place` of
//! `ops::limits` and `ops::mission`.

use crate::store::Store;

/// Where the ledger tables live for one command: inside the World store file (the caller holds
/// the writer lock for writers), or a standalone ledger `L` (a SQLite ledger file or
/// PostgreSQL): [`crate::ops::limits::Place`] is `Place<dyn LedgerStore>`,
/// [`crate::ops::mission::Place`] is `Place<dyn MissionStore>`.
pub enum Place<L: ?Sized> {
    /// Tables inside the World store file.
    Store(Store),
    /// A standalone ledger.
    Standalone(Box<L>),
}

impl<L: ?Sized> Place<L> {
    /// What prompts and messages call it: the store path, or `describe(ledger)` (the
    /// standalone ledger's printed name, which parses back to the same ledger).
    pub fn name_with(&self, describe: impl FnOnce(&L) -> String) -> String {
        match self {
            Place::Store(s) => s.path().display().to_string(),
            Place::Standalone(l) => describe(l),
        }
    }
}

/// What [`reconcile_from_store`] did.
#[derive(Debug)]
pub enum FromStore {
    /// The store was never paired with a standalone ledger: nothing to reconcile.
    NeverPaired,
    /// The store's outstanding attempts in the ledger, each settled, released, or kept for a
    /// person.
    Reconciled {
        /// The store's pairing id (`store::markers::store_id`).
        store_id: String,
        /// One result per outstanding attempt.
        done: Vec<crate::ledger::paired::Reconciled>,
    },
}

/// Why [`reconcile_from_store`] stopped.
#[derive(Debug, thiserror::Error)]
pub enum FromStoreError {
    /// Reading the store's pairing id failed.
    #[error(transparent)]
    Store(#[from] crate::store::Error),
    /// The ledger refused or failed (what was applied before stays applied: each step is
    /// idempotent).
    #[error(transparent)]
    Pairing(#[from] crate::broker::BrokerError),
}

/// `world limits|mission reconcile --from-store`: the HOST settles or releases `store`'s
/// outstanding attempts in a standalone ledger from the store's journal evidence, through the
/// one pairing protocol's [`crate::broker::pairing::Pairing::reconcile_from_store`] on the
/// pairing `pairing` builds for the store's link (DEC-PAIRING2-1). The caller holds the
/// store's writer lock, so no invocation of this store is in flight.
///
/// # Errors
/// [`FromStoreError`].
pub fn reconcile_from_store<P: crate::broker::pairing::Pairing>(
    store: &Store,
    now_ms: u128,
    pairing: impl FnOnce(crate::ledger::paired::StoreLink) -> P,
) -> Result<FromStore, FromStoreError> {
    let Some(id) =
        crate::store::markers::store_id(store.conn()).map_err(crate::store::Error::from)?
    else {
        return Ok(FromStore::NeverPaired);
    };
    let p = pairing(crate::ledger::paired::StoreLink::new(id.clone()));
    let done = p.reconcile_from_store(store.conn(), now_ms)?;
    Ok(FromStore::Reconciled { store_id: id, done })
}
