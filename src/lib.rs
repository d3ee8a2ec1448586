//! `world`: a library and command-line toolkit for AILANG World stores.
pub mod encoding;
pub mod interp;
pub mod ailang;
