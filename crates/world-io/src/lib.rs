//! The bounded I/O leaves of `world` (docs/ARCHITECTURE.md): the two ways the program touches
//! the operating system on a user's behalf, each with its bounds enforced in one place.
//!
//! - [`process`]: the one bounded child-process runner (explicit program, exact environment,
//!   own process group killed whole, capped streams).
//! - [`fileread`]: bounded, non-blocking reads of regular files a user names.
//!
//! Depends on no other `world` crate.

pub mod fileread;
pub mod process;
