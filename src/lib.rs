//! `world`: a library and command-line toolkit for AILANG World stores.
//!
//! - [`encoding`]: `HashRef` and the three canonical encoders (Go-json, TR-CJSON-1,
//!   `canon.Source`); nothing else writes those bytes.
//! - [`store`]: the SQLite file at schema v4 — open rules, writer lock, reads,
//!   compare-and-append commits, journal, receipts, records, verify.
//! - [`authority`]: grants, the decision law, sessions and credentials.
//! - [`broker`]: the effect broker and its handlers (with host-side confinement).
//! - [`ailang`]: the embedded AILANG subset interpreter (lexer, parser, checker, evaluator, std).
//! - [`interp`]: the `Interpreter` trait the external `ailang` and the embedded subset implement.
//! - [`transitions`]: the epoch and transition registries, manifests and attended publish.
//! - [`coordinator`]: plan laws and the invocation pipeline.
//! - [`genesis`]: the deterministic genesis commit.
//! - [`serve`]: `world serve` (HTTP `/v1`, MCP, A2A) and the MCP stdio server.
//! - [`cli`]: the command line; one file per subcommand.
pub mod ailang;
pub mod authority;
pub mod broker;
pub mod cli;
pub mod clock;
pub mod coordinator;
pub mod encoding;
pub mod fileread;
pub mod genesis;
pub mod interp;
pub mod limits;
pub mod mission;
pub mod ops;
pub mod package;
pub mod plan;
/// The one bounded child-process runner.
pub mod process;
pub mod replay;
pub mod serve;
pub mod store;
pub mod termtext;
pub mod testhook;
pub mod tlog;
pub mod transitions;
