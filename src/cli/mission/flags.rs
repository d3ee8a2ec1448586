//! The flags the mission verbs share: the writing verbs' common flags, the evidence, the
//! clock and the points in time a command carries.

use super::*;

/// Largest `--evidence-file`, bytes.
pub const MAX_EVIDENCE_BYTES: usize = 16 * 1024 * 1024;
/// Largest `--commands` file, bytes.
pub const MAX_COMMANDS_BYTES: usize = 64 * 1024 * 1024;
/// How far ahead of the system clock `--now` may be, ms (missions.md §4.2 "Clock").
pub const MAX_NOW_AHEAD_MS: u128 = crate::cli::limits::MAX_NOW_AHEAD_MS;

/// Flags every writing verb takes.
#[derive(ClapArgs, Debug, Clone, Default)]
pub struct Common {
    /// The clock: Unix milliseconds or RFC 3339 (2026-12-05T21:30:00Z); default: the system
    /// clock; never more than 24 h ahead of it, never before the mission's last recorded time
    #[arg(long, value_name = "MS|RFC3339", allow_hyphen_values = true)]
    pub now: Option<String>,
    /// Idempotency key: the same command again answers the recorded result (admit: default
    /// admit:<attemptId>)
    #[arg(long, value_name = "R", value_parser = parse_request_id)]
    pub request_id: Option<String>,
    /// Act as the AGENT of this session (minted with --mission); default: the HOST
    #[arg(long, value_name = "FILE")]
    pub session: Option<String>,
}

/// `--request-id`: the id grammar of every other mission id (missions.md §2, 1–128 chars of
/// `[A-Za-z0-9._:-]`), so a key stays bounded and printable in the journal (usage error, exit
/// 2, otherwise).
fn parse_request_id(s: &str) -> Result<String, crate::mission::GrammarError> {
    crate::mission::check_id(s).map(|()| s.to_string())
}

/// `--evidence REF | --evidence-file F`.
#[derive(ClapArgs, Debug, Clone, Default)]
pub struct Evidence {
    /// A sha256: ref of an object in the store (re-hashed before use)
    #[arg(
        long,
        value_name = "REF",
        conflicts_with = "evidence_file",
        required_unless_present = "evidence_file"
    )]
    pub evidence: Option<String>,
    /// A file hashed on the spot and stored as a world/mission-evidence/v1 object
    #[arg(long, value_name = "F")]
    pub evidence_file: Option<PathBuf>,
}

/// Parse `--now` (Unix ms or RFC 3339; at most 24 h ahead of the system clock), or read the
/// clock: [`crate::cli::limits::parse_now`], the one `--now` of the ledger commands.
///
/// # Errors
/// A usage error (exit 2) naming the value.
pub fn parse_now(text: Option<&str>) -> Result<Amount, CliError> {
    crate::cli::limits::parse_now(text).map(Amount)
}

/// A point in time a mission command carries (`--not-before`, `--expires-at`,
/// `--authorization-checked-at`): Unix milliseconds or an RFC 3339 time, read by `--now`'s
/// parser ([`crate::cli::output::parse_time_ms`]), as the decimal milliseconds the mission's grammar
/// takes. A text of digits and signs only goes to the mission as given, so a non-canonical or
/// negative number is its `COMMAND_INVALID`, as before (DEC-LEDGER3-2).
///
/// # Errors
/// A usage error (exit 2) naming `flag` for a text that is neither.
pub(super) fn time_arg(flag: &str, text: &str) -> Result<String, CliError> {
    if text
        .bytes()
        .all(|b| b.is_ascii_digit() || b == b'-' || b == b'+')
    {
        return Ok(text.to_string());
    }
    crate::cli::output::parse_time_ms(text)
        .map(|ms| ms.to_string())
        .ok_or_else(|| {
            CliError::usage(
                flag,
                format!("{text:?} is neither Unix milliseconds (e.g. 1700000000000) nor an RFC 3339 time (e.g. 2023-11-14T22:13:20Z)"),
            )
        })
}
