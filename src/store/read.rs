//! The store's typed reads for the front ends and the use cases (issue 28 item 1,
//! DEC-READS-1): what `show`, `log`, `effects`, `status`, `why`, `session`, `receipt` and the
//! servers print, read through the open [`Store`] and returned as the store's own row types.
//!
//! Front ends (`cli`, `serve`) and `ops` call these instead of holding the store's raw
//! connection; the functions they delegate to take a `&Connection` so that a writer can run
//! them inside its own transaction. Every read here writes nothing and opens no transaction
//! of its own (except [`Store::read_snapshot`], a read transaction).
//!
//! The types a caller names with these reads are re-exported here — the handle itself
//! ([`Store`]), its read error ([`Error`]) and the rows it returns — so a front end names
//! `store::read::…` only.

use std::collections::BTreeMap;

pub use super::a2a_tasks::{TaskKey, TaskRow};
pub use super::checkpoints::CheckpointRow;
pub use super::journal::{Kind as JournalKind, Receipt, ReceiptState};
pub use super::logview::{Query as LogQuery, Row as LogRow};
pub use super::merkle::Refused;
pub use super::records::InvocationRecord;
pub use super::records::{RecordError, EFFECT_RECORD};
pub use super::refs::{Candidate, RefError, Space};
pub use super::why::{Target as WhyTarget, WhyError};
pub use super::{Error, Header, LogEntry, Object, ReadSpan, Store};

impl Store {
    /// SQLite's change counter for this connection (`PRAGMA data_version`): two reads differ
    /// when another connection committed in between.
    ///
    /// # Errors
    /// [`Error::Sqlite`].
    pub fn data_version(&self) -> Result<i64, Error> {
        super::data_version(&self.conn)
    }

    /// A read transaction on this connection renewed every `span` (a snapshot for as long as
    /// it lives with [`std::time::Duration::MAX`]); see [`ReadSpan`]. Ended on drop.
    pub fn read_snapshot(&self, span: std::time::Duration) -> ReadSpan<'_> {
        ReadSpan::begin(&self.conn, span)
    }

    /// The latest signed checkpoint of `origin` (any origin: `None`), or `None` when the store
    /// signed none (DEC-TRUST-6).
    ///
    /// # Errors
    /// SQLite errors; [`Error::Corrupt`] for an undecodable row.
    pub fn latest_checkpoint(&self, origin: Option<&str>) -> Result<Option<CheckpointRow>, Error> {
        super::checkpoints::latest(&self.conn, origin)
    }

    /// The inclusion proofs an episode bundle carries: `(entry index, proof text)`, index
    /// order; empty when the store holds none.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn checkpoint_proofs(&self) -> Result<Vec<(i64, String)>, Error> {
        super::checkpoints::proofs(&self.conn)
    }

    /// The receipt of invocation id `id` in any namespace (`rest:`, `a2a:`, `mcp:`, `cli:`,
    /// `effect:`), derived from its journal rows (store-format.md §8).
    ///
    /// # Errors
    /// As [`super::journal::receipt`].
    pub fn receipt(&self, id: &str) -> Result<Receipt, Error> {
        super::journal::receipt(&self.conn, id)
    }

    /// The object ref of invocation `id`'s journal row of `kind`, if written.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn journal_row(&self, id: &str, kind: JournalKind) -> Result<Option<String>, Error> {
        super::journal::row(&self.conn, id, kind)
    }

    /// Journal intents without an outcome, oldest first: `(seq, invocation id, intent ref)`.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn pending_intents(&self) -> Result<Vec<(i64, String, String)>, Error> {
        super::journal::pending(&self.conn)
    }

    /// Every effect intent (`effect:` ids), journal order: `(invocation id, intent payload)`.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn effect_intents(&self) -> Result<Vec<(String, Vec<u8>)>, Error> {
        super::journal::effect_intents(&self.conn)
    }

    /// The A2A task `task_id`, if stored (surfaces.md §4).
    ///
    /// # Errors
    /// SQLite errors; [`Error::Corrupt`] for an undecodable row.
    pub fn a2a_task(&self, task_id: &str) -> Result<Option<TaskRow>, Error> {
        super::a2a_tasks::get(&self.conn, task_id)
    }

    /// The keys of `episode`'s A2A tasks (only those of `context` when given), newest first.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn a2a_task_keys(
        &self,
        episode: &str,
        context: Option<&str>,
    ) -> Result<Vec<TaskKey>, Error> {
        super::a2a_tasks::keys(&self.conn, episode, context)
    }

    /// The log view's rows matching `q`, in its order, each passed to `f` (`world log`, the
    /// servers' pages); `f`'s error stops the walk.
    ///
    /// # Errors
    /// SQLite errors, undecodable rows, and `f`'s error.
    pub fn log_rows(
        &self,
        q: &LogQuery,
        f: impl FnMut(LogRow) -> Result<(), Error>,
    ) -> Result<(), Error> {
        super::logview::for_each(&self.conn, q, f)
    }

    /// The index of the log entry written for invocation id `id` (through its commit intent),
    /// if any.
    ///
    /// # Errors
    /// SQLite errors; [`Error::Corrupt`] for an undecodable intent.
    pub fn entry_of_invocation(&self, id: &str) -> Result<Option<i64>, Error> {
        super::logview::entry_of_invocation(&self.conn, id)
    }

    /// The first log entry whose transition ref is `reference`, if any.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn entry_of_transition(&self, reference: &str) -> Result<Option<i64>, Error> {
        super::logview::entry_of_transition(&self.conn, reference)
    }

    /// The `rest:` invocation id and intent sequence of the client commit that wrote the entry
    /// `entry_hash`, if one did.
    ///
    /// # Errors
    /// SQLite errors; [`Error::Corrupt`] for an undecodable intent.
    pub fn rest_invocation_of(&self, entry_hash: &str) -> Result<Option<(String, i64)>, Error> {
        super::logview::rest_invocation_of(&self.conn, entry_hash)
    }

    /// The index of the log entry whose hash is `entry_hash`, if any.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn entry_index_of(&self, entry_hash: &str) -> Result<Option<i64>, RefError> {
        super::refs::entry_index_of(&self.conn, entry_hash)
    }

    /// Resolve a ref argument `text` (full ref, bare hex or unique prefix) among `spaces`
    /// (DEC-CLI-19).
    ///
    /// # Errors
    /// [`RefError`]: malformed, too short, unknown or ambiguous; SQLite errors.
    pub fn resolve_ref(&self, spaces: &[Space], text: &str) -> Result<Candidate, RefError> {
        super::refs::resolve(&self.conn, spaces, text)
    }

    /// Whether the 64-hex digest `hex` names an object, world, log entry or session
    /// credential in this store (issue 26 §7).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn names_anything(&self, hex: &str) -> Result<bool, RefError> {
        super::refs::names_anything(&self.conn, hex)
    }

    /// The invocation records of `episode` that name effect records, by record ref.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn records_of(&self, episode: &str) -> Result<BTreeMap<String, InvocationRecord>, Error> {
        super::episodes::records_of(&self.conn, episode)
    }

    /// Entry `index`'s inclusion proof in the tree `cp` names, checked against its root:
    /// `(entry, audit path)` (tlog-checkpoint; DEC-TRUST-6).
    ///
    /// # Errors
    /// SQLite errors; [`Refused`] (inner) for an entry outside the tree or a log that does not
    /// match it.
    pub fn inclusion_proof(
        &self,
        index: u64,
        cp: &crate::tlog::checkpoint::Checkpoint,
    ) -> Result<Result<(LogEntry, Vec<crate::tlog::merkle::Hash>), Refused>, Error> {
        super::merkle::inclusion(&self.conn, index, cp)
    }

    /// The consistency proof from tree `old` to tree `new`, checked against both roots.
    ///
    /// # Errors
    /// SQLite errors; [`Refused`] (inner) for sizes out of order or outside the log, or a log
    /// that does not match.
    pub fn consistency_proof(
        &self,
        old: &crate::tlog::checkpoint::Checkpoint,
        new: &crate::tlog::checkpoint::Checkpoint,
    ) -> Result<Result<Vec<crate::tlog::merkle::Hash>, Refused>, Error> {
        super::merkle::consistency(&self.conn, old, new)
    }

    /// The roots of the log's tree at each size of `sizes`, recomputed from the log in one
    /// pass: `(leaves in the log, root by size)`; a size past the log's end has no root.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn roots_from_log(
        &self,
        sizes: &[u64],
    ) -> Result<(u64, BTreeMap<u64, crate::tlog::merkle::Hash>), Error> {
        super::merkle::roots_from_log(&self.conn, sizes)
    }
}
