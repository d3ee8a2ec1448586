//! `world`: a library and command-line toolkit for AILANG World stores. The module map and
//! its layering rules are in docs/ARCHITECTURE.md (checked by tests/layering.rs).
//!
//! The lowest layers are workspace crates under `crates/`, re-exported here under their module
//! names so every path (`world::encoding::HashRef`, `crate::ailang::…`) reads as before, and a
//! crate can only use the crates below it (the compiler checks it): `world-encoding`
//! ([`encoding`]), `world-io` ([`process`], [`fileread`]), `world-interp` ([`interp`]) and
//! `world-ailang` ([`ailang`]). Everything else is a module of this crate.
//!
//! Leaves:
//! - [`encoding`]: `HashRef` and the three canonical encoders (Go-json, TR-CJSON-1,
//!   `canon.Source`); nothing else writes those bytes.
//! - [`clock`]: the one clock (system time, or a fixed instant in test builds).
//! - [`fileread`]: bounded, non-blocking reads of regular files a user names.
//! - [`process`]: the one bounded child-process runner.
//! - [`termtext`]: the one escaping rule for human output of client- or file-supplied text.
//! - [`testhook`]: the `WORLD_TEST_*` hooks, compiled only with the `test-hooks` feature.
//! - [`tlog`]: RFC 9162 Merkle proofs and the C2SP signed-note, checkpoint and cosignature
//!   formats.
//!
//! The store and the domain:
//! - [`store`]: the SQLite file at schema v4 — open rules, writer lock, reads,
//!   compare-and-append commits, journal, receipts, records, the log's Merkle tree, verify.
//! - [`genesis`]: the deterministic genesis commit.
//! - [`authority`]: grants, the decision law, sessions and credentials, approvals.
//! - [`ledger`]: the ledger layer under limits and missions: amounts, `--ledger` locations, actor kinds.
//! - [`limits`]: the nested limits ledger (`aiws-limits/1`) on SQLite or PostgreSQL.
//! - [`mission`]: finite-v1 missions.
//! - [`package`]: AILANG packages, the ready packet and the registry protocol.
//! - [`ailang`]: the embedded AILANG subset interpreter (lexer, parser, checker, evaluator, std).
//! - [`interp`]: the `Interpreter` trait the external `ailang` and the embedded subset implement.
//! - [`transitions`]: the epoch and transition registries, manifests and attended publish.
//! - [`broker`]: the effect broker and its handlers (with host-side confinement).
//! - [`plan`]: calling conventions, plan laws and output composition.
//!
//! Use cases and front ends:
//! - [`replay`]: read-only re-derivation of episodes, candidate replay, bundles.
//! - [`ops`]: the use cases, one function each: the invocation pipeline behind `world invoke`,
//!   REST, MCP and A2A (`ops::invoke`), the agent rule's door (`ops::actor`), genesis, commit,
//!   publish, verify, …
//! - [`serve`]: `world serve` (HTTP `/v1`, MCP, A2A, AG-UI) and the MCP stdio server.
//! - [`cli`]: the command line; one file per subcommand.
pub use world_ailang as ailang;
pub use world_encoding as encoding;
pub use world_interp as interp;
pub use world_io::fileread;
pub use world_io::process;

pub mod authority;
pub mod broker;
pub mod cli;
pub mod clock;
pub mod genesis;
pub mod ledger;
pub mod limits;
pub mod mission;
pub mod ops;
pub mod package;
pub mod plan;
pub mod replay;
pub mod serve;
pub mod store;
pub mod termtext;
pub mod testhook;
pub mod tlog;
pub mod transitions;
