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
//! The invocation pipeline is the coordinator's ([`crate::coordinator::invoke`]); the workflows
//! here are the others, moved out of `cli/` one at a time (docs/ARCHITECTURE.md lists what is
//! still to move in its debt table).

pub mod approval;
pub mod genesis;
pub mod pin;
pub mod session;
pub mod verify;
