//! Use cases: one function per write workflow (issue 17 §1).
//!
//! Each workflow takes the open [`crate::store::Store`] (the caller holds the writer lock),
//! an options struct and the collaborators it needs, runs its one `BEGIN IMMEDIATE`
//! transaction, and returns a typed result or a typed error with its cause (`thiserror`,
//! `#[source]`). `cli/` and `serve/` parse input, call a workflow (or a read-only store API)
//! and print; they open no transaction themselves, and `cli/error.rs` alone turns these errors
//! into exit codes and hints.
//!
//! [`verify`] is the read-only whole-store check: the store's own format checks with the
//! other modules' cross-checks between them (DEC-ARCH-9).
//!
//! [`invoke`] is the invocation pipeline behind `world invoke`, REST, MCP and A2A, one file per
//! step (admit, precheck, handlers, pairings, execute, commit, error); [`actor`] is the door to
//! the one rule for acting as a session's agent (DEC-ARCH-11). The other workflows: [`genesis`], [`host`] (the invocation host from the host flags, once), [`commit`] (a body, or `--put` files on the head),
//! [`classify`] (errors answer is-busy, is-read-only, is-corrupt, is-foreign themselves), [`pin`], [`publish`] (plan, then commit), [`session`] mint/revoke, [`approval`]
//! request/decide, [`limits`] and [`mission`] commands (the caller decides the actor and whether
//! a human confirmed; a dry run is an option, not a prompt), [`export`] of an episode bundle and
//! the read-only [`replay`], [`status`] (what `world status` summarises) and the effect reads
//! [`effects`] (front ends read the store itself through `store::read`, never its connection). [`outcome`] is the one derivation of what happened (`ok`, `refused`,
//! `denied`, `failed`, `indeterminate`, `effects-unrecorded`) every reader and exit code uses. Attended confirmation, terminals and printing stay with the caller.

pub mod actor;
pub mod approval;
pub mod checkpoint;
pub mod classify;
pub mod commit;
pub mod effects;
pub mod export;
pub mod genesis;
pub mod host;
pub mod invoke;
pub mod limits;
pub mod mission;
pub mod outcome;
pub mod package;
pub mod pin;
pub mod place;
pub mod publish;
pub mod replay;
pub mod session;
pub mod show;
pub mod status;
pub mod verify;
