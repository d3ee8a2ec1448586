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
