//! `world`: a library and command-line toolkit for AILANG World stores.
pub mod ailang;
pub mod encoding;
pub mod interp;
