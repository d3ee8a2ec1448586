//! Effect records as the front ends read them (authority-and-broker.md §7): a record resolved
//! to its request and result, and the message a failed effect stored. Reads on the open
//! store; nothing is written.

pub use crate::broker::{
    failure_message_stored as failure_message, resolve_record_stored as resolve_record,
};
