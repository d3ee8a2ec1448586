//! How an `--evidence-file` is kept in the World store (limits.md §5, missions.md §5): the one
//! definition of the evidence object's semantic id and provenance for each ledger client.

/// Which ledger client stored the evidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvidenceKind {
    /// `world limits … --evidence-file` (`world/limits-evidence/v1`, provenance `world:limits`).
    Limits,
    /// `world mission … --evidence-file` (`world/mission-evidence/v1`, provenance
    /// `world:mission`).
    Mission,
}

impl EvidenceKind {
    /// The stored object's semantic id.
    pub fn semantic_id(self) -> &'static str {
        match self {
            EvidenceKind::Limits => "world/limits-evidence/v1",
            EvidenceKind::Mission => "world/mission-evidence/v1",
        }
    }

    /// The stored object's provenance.
    pub fn provenance(self) -> &'static str {
        match self {
            EvidenceKind::Limits => "world:limits",
            EvidenceKind::Mission => "world:mission",
        }
    }
}
