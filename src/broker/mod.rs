//! The effect broker (authority-and-broker.md §7–§13). For now only its handlers.
pub mod handlers;
