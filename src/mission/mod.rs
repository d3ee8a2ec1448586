//! finite-v1 missions (spec missions.md, seed 002): an immutable contract, runs, grant chains
//! that can only attenuate, and admission that reserves exposure before an effect is allowed.
//!
//! Layout:
//! - [`contract`]: [`Contract::parse`] (the seed's `parseContract`), `contractRef`;
//! - [`command`]: [`Command::parse`] (`parseCommand`) and canonical command bytes;
//! - [`state`]: [`State`] (`createMission` is [`Mission::create`]) and its parts;
//! - [`reduce`](mod@reduce): the pure `reduce(state, command, now) -> state | rejection`;
//! - [`codes`]: [`Code`] and [`Rejection`];
//! - [`durable`]: durable missions in the World store file (§6) behind [`durable::MissionStore`];
//! - [`ledger`]: the same missions in a standalone ledger, a SQLite file or PostgreSQL
//!   (`--ledger`, issue 18 §2);
//! - [`pairing`]: World effects paired with a mission in a standalone ledger (issue 18).
//!
//! Amounts and times are [`crate::ledger::Amount`] (canonical unsigned decimals, checked
//! arithmetic), shared with the limits ledger; canonical bytes are TR-CJSON-1
//! ([`crate::encoding::trcjson`]).

pub mod codes;
pub mod command;
pub mod contract;
pub mod durable;
pub mod ledger;
pub mod pairing;
mod parse;
pub mod reduce;
pub(crate) mod seal;
pub mod state;

pub use codes::{Code, Rejection};
pub use command::{Action, Admit, Command, GrantSpec, Outcome};
pub use contract::Contract;
pub use parse::{check_evidence, check_id, GrammarError, MAX_JSON_BYTES};
pub use reduce::{apply, intent_bytes, reduce, reduce_as};
pub use state::{Actor, Attempt, AttemptStatus, Grant, Run, RunStatus, State, Violation};

/// A mission's state: `Mission::create(&contract)` is the seed's `createMission(contract)`.
pub type Mission = State;

/// Parse a `now` text (canonical decimal milliseconds).
///
/// # Errors
/// `COMMAND_INVALID` naming `now`.
pub fn parse_now(text: &str) -> Result<crate::ledger::Amount, Rejection> {
    crate::ledger::Amount::parse(text).map_err(|e| {
        Rejection::new(Code::CommandInvalid, format!("now: {e}")).with("member", "now")
    })
}

#[cfg(test)]
mod durable_tests;
#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
