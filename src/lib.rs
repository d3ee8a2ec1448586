//! `world`: a library and command-line toolkit for AILANG World stores.
pub mod cli;
pub mod encoding;
pub mod genesis;
pub mod interp;
pub mod limits;
pub mod store;
