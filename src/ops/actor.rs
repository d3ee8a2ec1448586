//! Acting as a session's agent (issue 28 §1 `ops::actor`): the use-case door to the one rule,
//! [`crate::authority::session::agent`] (DEC-ARCH-11). `world invoke` (and REST, MCP and A2A
//! through [`crate::ops::invoke`]) admits its caller here; a front end that acts for a session
//! calls this rather than writing its own check.

use crate::authority::session;
use crate::store::Store;

pub use crate::authority::session::{Session, SessionError, Unattested};

/// The session `token` (64 hex) names, if its holder may act as the session's agent at `now`
/// (Unix seconds): the credential resolves — not malformed, unknown, revoked, tampered,
/// expired, nor unattested unless `unattested` is [`Unattested::Allow`].
///
/// # Errors
/// The [`SessionError`] of the refusal, an authentication failure the front end reports as an
/// error (never a policy verdict; nothing is written); a store failure as
/// [`SessionError::Store`].
pub fn agent(
    store: &Store,
    token: &str,
    now: i64,
    unattested: Unattested,
) -> Result<Session, SessionError> {
    session::agent(store.conn(), token, now, unattested)
}
