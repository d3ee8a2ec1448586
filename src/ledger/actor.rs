//! Who issues a ledger command: the actor kinds limits (limits.md §5) and missions
//! (missions.md §5) both record.

use serde::{Deserialize, Serialize};

/// Who issues a command (limits.md §5 "Actor facts in world").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum ActorKind {
    /// An attended human act (typed phrase at `/dev/tty`); `actorId = human:<login>`.
    Human,
    /// A session of an episode; `actorId` = credential id, `policyRef = episode:<ep>`.
    Agent,
    /// `world` itself when pairing, or the operator without `--session`.
    Host,
}

impl ActorKind {
    /// `HUMAN`, `AGENT` or `HOST`.
    pub fn as_str(self) -> &'static str {
        match self {
            ActorKind::Human => "HUMAN",
            ActorKind::Agent => "AGENT",
            ActorKind::Host => "HOST",
        }
    }
}
