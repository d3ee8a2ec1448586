//! Authority: grants and the decision law, sessions and their credentials
//! (authority-and-broker.md §1–§6).
pub mod approvals;
pub mod grants;
pub mod session;
