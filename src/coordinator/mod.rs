//! The coordinator: admit, bind, plan, execute, finish, commit (transitions.md §9, seed 003).
pub mod invoke;
/// The plan laws live in [`crate::plan`] (replay re-runs them too); re-exported here for the
/// paths that name them through the coordinator.
pub use crate::plan;
