//! Failures before or instead of a commit: [`InvokeError`] (one variant per rule of
//! transitions.md §9), its wire class, and [`error_data`], the JSON MCP and A2A send.

use crate::authority::session;
use crate::interp::capsule::CapsuleError;
use crate::plan;
use crate::store::Error as StoreError;

/// Failures before or instead of a commit (transitions.md §9 rules).
#[derive(Debug, thiserror::Error)]
pub enum InvokeError {
    /// R1: bad task id, episode, missing or oversized input, or input failing the schema.
    #[error("invalid call: {0}")]
    InvalidCall(String),
    /// The session cannot be used.
    #[error("{0}")]
    Session(#[from] session::SessionError),
    /// R2–R4: unknown or invisible transition (indistinguishable).
    #[error("unknown transition {0:?}")]
    NotAuthorized(String),
    /// R6: the source object is missing or corrupt.
    #[error("transition invocation is not available in this daemon: source {0}")]
    Source(String),
    /// R7: no selected world.
    #[error("no world is selected; commit a genesis world first")]
    WorldAbsent,
    /// R8: a declared effect has no handler for this episode: the effect, and why the
    /// episode's registry lacks it when it knows (its warnings; not part of the wire text).
    #[error("transition declares an effect this daemon has no handler for ({0})")]
    EffectsUnsupported(String, Vec<String>),
    /// R9: the calling convention is not implemented.
    #[error("transition does not implement the invocation calling convention: {0}")]
    Incompatible(String),
    /// R10: other execution failure.
    #[error("transition execution failed: {0}")]
    Execution(String),
    /// R11: deadline before the commit boundary.
    #[error("invocation exceeded its deadline ({0})")]
    Deadline(String),
    /// R12: output too large or not an object.
    #[error("transition output is not a JSON object: {0}")]
    Output(String),
    /// A plan law was broken.
    #[error("{0}")]
    PlanLaw(#[from] plan::PlanLawError),
    /// R13 / an interpreter or object failed its integrity check.
    #[error("integrity: {0}")]
    Integrity(String),
    /// R14: the head moved at commit (pure calls).
    #[error("world head moved during invocation; not committed; send a new task id ({0})")]
    Conflict(String),
    /// R15: a resent id whose earlier run has no outcome.
    #[error("invocation was not committed; send a new task id ({0} is indeterminate)")]
    NotCommitted(String),
    /// R17: the id was used for a different call.
    #[error("task id already used in this session ({0} was used for a different call)")]
    InFlight(String),
    /// Effects ran but the invocation did not commit (§11).
    #[error("effects were requested but the invocation was not confirmed committed; effect records: {}{}", records.join(" "), if intents.is_empty() { String::new() } else { format!("; pending effect intents: {}", intents.join(" ")) })]
    EffectsUnrecorded {
        /// The invocation id.
        invocation_id: String,
        /// Effect record refs written.
        records: Vec<String>,
        /// Effect intents without outcome (indeterminate effects).
        intents: Vec<String>,
        /// The cause.
        cause: String,
    },
    /// The limits ledger refused the effect's reservation; nothing ran, nothing was committed.
    #[error("{}", .0.human())]
    LimitsRejected(Box<crate::limits::Verdict>),
    /// The paired mission refused the effect's admission; nothing ran, nothing was committed.
    #[error("{}", .0.human())]
    MissionRejected(Box<crate::mission::Rejection>),
    /// The standalone limits ledger could not be reached or failed before the effect's intent
    /// was journaled; nothing ran, nothing was committed (issue 18).
    #[error("{0}")]
    LimitsUnavailable(String),
    /// The standalone ledger holding the episode's mission is not named by `--ledger`, could
    /// not be reached, or failed before the effect's intent was journaled; nothing ran,
    /// nothing was committed (issue 18, DEC-MIS-14).
    #[error("{0}")]
    MissionUnavailable(String),
    /// A standalone ledger (limits or mission) stayed locked by another process for the whole
    /// lock wait before the effect's intent was journaled; nothing ran, nothing was committed
    /// (exit 6, docs/LEDGER.md).
    #[error("{0}")]
    LedgerBusy(String),
    /// Store failure before anything durable happened.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl InvokeError {
    /// The rule class name used on the wire (`error.data.class`).
    pub fn class(&self) -> &'static str {
        match self {
            InvokeError::InvalidCall(_) => "InvalidCallError",
            InvokeError::Session(_) => "SessionError",
            InvokeError::NotAuthorized(_) => "NotAuthorized",
            InvokeError::Source(_) => "SourceError",
            InvokeError::WorldAbsent => "WorldAbsentError",
            InvokeError::EffectsUnsupported(..) => "EffectsUnsupportedError",
            InvokeError::Incompatible(_) => "IncompatibleError",
            InvokeError::Execution(_) => "ExecutionError",
            InvokeError::Deadline(_) => "DeadlineError",
            InvokeError::Output(_) => "OutputError",
            InvokeError::PlanLaw(_) => "PlanLawError",
            InvokeError::Integrity(_) => "IntegrityError",
            InvokeError::Conflict(_) => "ConflictError",
            InvokeError::NotCommitted(_) => "NotCommittedError",
            InvokeError::InFlight(_) => "InFlightError",
            InvokeError::EffectsUnrecorded { .. } => "EffectsUnrecordedError",
            InvokeError::LimitsRejected(_) => "LimitsRejectedError",
            InvokeError::MissionRejected(_) => "MissionRejectedError",
            InvokeError::LimitsUnavailable(_) => "LimitsUnavailableError",
            InvokeError::MissionUnavailable(_) => "MissionUnavailableError",
            InvokeError::LedgerBusy(_) => "LedgerBusyError",
            InvokeError::Store(_) => "StoreError",
        }
    }
}

pub(super) fn capsule_err(e: CapsuleError, phase: &str) -> InvokeError {
    match e {
        CapsuleError::InvalidCall { .. } => InvokeError::InvalidCall(e.to_string()),
        CapsuleError::Incompatible { .. } => InvokeError::Incompatible(e.to_string()),
        CapsuleError::Timeout => InvokeError::Deadline(format!("{phase} phase")),
        CapsuleError::Output(_) => InvokeError::Output(e.to_string()),
        CapsuleError::Integrity { .. } => InvokeError::Integrity(e.to_string()),
        _ => InvokeError::Execution(e.to_string()),
    }
}

/// A JSON rendering of an invocation failure for machine clients:
/// `{class, message, invocationId?, effectRecords[]}`.
pub fn error_data(err: &InvokeError) -> serde_json::Value {
    let (id, records) = match err {
        InvokeError::EffectsUnrecorded {
            invocation_id,
            records,
            ..
        } => (Some(invocation_id.clone()), records.clone()),
        _ => (None, vec![]),
    };
    serde_json::json!({"class": err.class(), "message": err.to_string(), "invocationId": id, "effectRecords": records})
}
