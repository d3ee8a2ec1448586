//! The coordinator: admit, bind, plan, execute, finish, commit (transitions.md §9, seed 003).
pub mod invoke;
pub mod plan;
