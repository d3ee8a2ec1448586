//! The ledger layer under limits and missions (issue 27 §1): what both keep their books with.
//!
//! - [`amount`]: canonical unsigned decimal [`Amount`]s (limits.md §1, missions.md §1);
//! - [`location`]: `--ledger` locations, parsed and printed so a printed name parses back;
//! - [`actor`]: [`ActorKind`], who issues a command;
//! - [`error`]: storage failures that classify themselves ([`error::sqlite_busy`]);
//! - [`evidence`]: how an `--evidence-file` is kept in the store ([`EvidenceKind`]).
//!
//! [`crate::limits`] and [`crate::mission`] are two clients of this module; it depends on
//! neither.

pub mod actor;
pub mod amount;
pub mod error;
pub mod evidence;
pub mod location;

pub use actor::ActorKind;
pub use amount::{Amount, AmountError};
pub use evidence::EvidenceKind;
