//! Finite-v1 mission commands (missions.md §6): `world mission create|apply|start-run|grant|…`.
//!
//! Where the missions live is a [`Place`]: the World store file (the caller holds the writer
//! lock), or a standalone ledger ([`crate::mission::ledger`]: a SQLite ledger file or
//! PostgreSQL). [`apply`] runs one command as one actor in one `BEGIN IMMEDIATE` transaction
//! (the journal row, the state rows and the outbox intent together), or rolls it back whatever
//! the result for a dry run; [`create`] opens a mission. Who acts and whether a human confirmed
//! are the caller's decisions, taken before; this module asks nobody.

use rusqlite::TransactionBehavior;

use crate::ledger::Amount;
use crate::mission::durable::{self as mstore, Applied, MissionStore, Request, SqliteMissions};
use crate::mission::{Actor, Code, Contract, State};
use crate::store::{self, Object, Store};

/// Where the missions live for one command ([`crate::ops::place::Place`]).
pub type Place = super::place::Place<dyn MissionStore>;

impl Place {
    /// Run `f` on the mission store of this place (reads; writes go through [`apply`] and
    /// [`create`]).
    pub fn with<T>(&self, f: impl FnOnce(&dyn MissionStore) -> T) -> T {
        match self {
            Place::Store(s) => f(&SqliteMissions::new(s.conn())),
            Place::Standalone(l) => f(l.as_ref()),
        }
    }

    /// What prompts and messages call it: the store path, or the ledger's description.
    pub fn describe(&self) -> String {
        self.name_with(|l| l.describe())
    }
}

/// One command as one actor.
pub struct Options<'a> {
    /// The mission.
    pub mission_id: &'a str,
    /// The command and its request id.
    pub request: &'a Request,
    /// Who acts, as established by the caller.
    pub actor: &'a Actor,
    /// The command's instant, Unix milliseconds.
    pub now: Amount,
    /// An evidence file to store as an object in the same transaction (store file only; a
    /// standalone ledger records only its ref).
    pub evidence: Option<&'a Object>,
    /// Roll back whatever the result (the caller's check before asking a human).
    pub dry_run: bool,
}

/// Apply (or dry-run) one command in one transaction. A rejection is
/// `Err(mstore::Error::Rejected(..))`; for `exposure_exceeded` the rows that record it are
/// kept (missions.md §4), the evidence object is not.
///
/// # Errors
/// [`mstore::Error`].
pub fn apply(place: &Place, opts: &Options<'_>) -> Result<Applied, mstore::Error> {
    let (mission_id, req, actor, now) = (opts.mission_id, opts.request, opts.actor, opts.now);
    let conn = match place {
        Place::Store(s) => s.conn(),
        Place::Standalone(l) if opts.dry_run => return l.dry_run(mission_id, req, actor, now),
        Place::Standalone(l) => return l.apply(mission_id, req, actor, now),
    };
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    if let Some(o) = opts.evidence {
        store::put_object(&tx, o).map_err(|e| mstore::Error::Corrupt(e.to_string()))?;
    }
    let r = mstore::apply_in(&tx, mission_id, req, actor, now);
    if opts.dry_run {
        return r; // dropping tx rolls back
    }
    match r {
        Ok(a) => {
            tx.commit()?;
            Ok(a)
        }
        Err(mstore::Error::Rejected(rej)) if rej.code == Code::ExposureExceeded => {
            tx.commit()?;
            Err(mstore::Error::Rejected(rej))
        }
        Err(e) => Err(e),
    }
}

/// Open the mission `contract` describes, as `actor` (`attended` when a human confirmed), in
/// one transaction.
///
/// # Errors
/// [`mstore::Error`] (`mission_exists` and the contract's rejections as `Rejected`).
pub fn create(
    place: &Place,
    contract: &Contract,
    actor: &Actor,
    attended: bool,
    now: Amount,
) -> Result<State, mstore::Error> {
    place.with(|m| m.create(contract, actor, attended, now))
}

pub use super::place::{FromStore, FromStoreError};

/// `world mission reconcile M --from-store`: the HOST settles mission `mission_id`'s
/// outstanding attempts of `store` in the standalone `missions` ledger from the store's
/// journal evidence, through the pairing protocol ([`super::place::reconcile_from_store`] on a
/// [`crate::broker::MissionPairing::reconciling`]). The caller holds the store's writer lock.
/// `implicit_now`: no `--now` (DEC-MIS-17).
///
/// # Errors
/// [`FromStoreError`].
pub fn reconcile_from_store(
    store: &Store,
    missions: Box<dyn MissionStore>,
    mission_id: &str,
    now: Amount,
    implicit_now: bool,
) -> Result<FromStore, FromStoreError> {
    super::place::reconcile_from_store(store, now.get(), |link| {
        crate::broker::MissionPairing::reconciling(crate::mission::pairing::Standalone {
            missions,
            mission_id: mission_id.to_string(),
            link,
            implicit_clock: implicit_now,
        })
    })
}
