//! The flags the limits verbs share: the writing verbs' common flags, the evidence, and
//! `--purpose`.

use super::*;

/// Largest `--evidence-file` accepted, bytes.
pub const MAX_EVIDENCE_BYTES: usize = 16 * 1024 * 1024;

/// Flags every writing verb takes (limits.md §5 "Common flags").
#[derive(ClapArgs, Debug, Clone, Default)]
pub struct Common {
    /// Idempotency key (default: random, so no idempotency); a retry with the same id and
    /// command answers `exists`
    #[arg(long, value_name = "R")]
    pub request_id: Option<String>,
    /// Refuse (revision_mismatch) unless the ledger is at revision N
    #[arg(long, value_name = "N")]
    pub expected_revision: Option<u64>,
    /// Act as the AGENT holding this session (a token file, or the token); default: the HOST
    #[arg(long, value_name = "FILE")]
    pub session: Option<String>,
    /// The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system
    /// clock; never earlier than the ledger's last recorded time
    #[arg(long, value_name = "MS|RFC3339", allow_hyphen_values = true)]
    pub now: Option<String>,
    /// A standalone ledger (a file, or postgres://user@host/db) instead of the tables in the
    /// store file
    #[arg(
        long,
        value_name = "FILE|URL",
        env = "WORLD_LEDGER",
        hide_env_values = true
    )]
    pub ledger: Option<String>,
}

/// `--evidence REF | --evidence-file F` (required by adjust and reconcile: evidence_required).
#[derive(ClapArgs, Debug, Clone, Default)]
pub struct Evidence {
    /// A sha256: ref of an object in the World store (re-hashed before use)
    #[arg(long, value_name = "REF", conflicts_with = "evidence_file")]
    pub evidence: Option<String>,
    /// A file hashed on the spot (stored as a world/limits-evidence/v1 object when the ledger
    /// is in the store file)
    #[arg(long, value_name = "F")]
    pub evidence_file: Option<PathBuf>,
}

/// A `--purpose` that is neither `ordinary` nor `handoff` (any case).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not ordinary or handoff")]
pub(super) struct BadPurpose(String);

/// `--purpose ordinary|handoff`, any case.
pub(super) fn parse_purpose(text: &str) -> Result<Purpose, BadPurpose> {
    Purpose::parse(text).ok_or_else(|| BadPurpose(text.to_owned()))
}
