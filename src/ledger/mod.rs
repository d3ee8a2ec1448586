//! The ledger layer under limits and missions (issue 27 §1): what both keep their books with.
//!
//! - [`amount`]: canonical unsigned decimal [`Amount`]s (limits.md §1, missions.md §1);
//! - [`location`]: `--ledger` locations, parsed and printed so a printed name parses back;
//! - [`actor`]: [`ActorKind`], who issues a command;
//! - [`error`]: storage failures that classify themselves ([`Error::is_busy`], …);
//! - [`db`]: the one SQL surface ([`db::Db`]) both backends implement: SQLite (the store
//!   file's ledger tables, a ledger [`file`]) and PostgreSQL ([`pg`], credentials from
//!   [`pgpass`]);
//! - [`evidence`]: how an `--evidence-file` is kept in the store ([`EvidenceKind`]);
//! - [`paired`]: what both pairings with a standalone ledger share (the store link, what a
//!   reconcile from the store's journal did).
//!
//! [`crate::limits`] and [`crate::mission`] are two clients of this module; it depends on
//! neither.

pub mod actor;
pub mod amount;
pub(crate) mod db;
pub mod error;
pub mod evidence;
pub mod file;
pub mod location;
pub mod paired;
pub mod pg;
pub mod pgpass;
pub(crate) mod seal;

pub use actor::ActorKind;
pub use amount::{Amount, AmountError};
pub use error::Error;
pub use evidence::EvidenceKind;
