//! `world mission reconcile --attempt A --actual X --evidence …`: a HUMAN resolves an UNKNOWN
//! attempt, always attended (the `--from-store` form is `reconcile.rs`).

use super::*;

/// What the human attests: the attempt, its actual cost and the evidence.
pub(super) struct Attested<'a> {
    /// The attempt.
    pub attempt: &'a Option<String>,
    /// The actual cost.
    pub actual: &'a Option<String>,
    /// The effect failed.
    pub failed: bool,
    /// `--evidence REF`.
    pub evidence: &'a Option<String>,
    /// `--evidence-file F`.
    pub evidence_file: &'a Option<PathBuf>,
}

/// `world mission reconcile` (attended): dry-run, confirm at the terminal, then apply the
/// `reconcile` command with the evidence stored and referenced.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    ledger: Option<&str>,
    mission: &str,
    a: Attested<'_>,
    common: &Common,
) -> Result<Exit, CliError> {
    let Attested {
        attempt,
        actual,
        failed,
        evidence,
        evidence_file,
    } = a;
    let evidence = &Evidence {
        evidence: evidence.clone(),
        evidence_file: evidence_file.clone(),
    };
    // The evidence ref is filled in once resolved; a placeholder keeps parsing strict.
    let v = json!({"type": "reconcile", "attemptId": attempt, "actualCost": actual,
        "outcome": if failed { "FAILED" } else { "SUCCEEDED" }, "evidenceRef": HashRef::of(b"").to_string()});
    write(
        ctx,
        out,
        attended(
            "mission reconcile",
            ledger,
            mission,
            common,
            build(&v),
            evidence,
        ),
    )
}
