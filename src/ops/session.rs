//! Session credentials (authority-and-broker.md §2): mint and revoke, each one transaction.
//! Writing the token file is the caller's (`world session mint --out` stages it before and
//! links it after the commit); these functions only touch the store.

use crate::authority::session::{self, MintRequest, Minted};
use crate::store::{self, Store};

/// The session reads on the open store (no transaction): whether a credential id is known
/// here, and a bearer token resolved at a time (the servers' check); the resolved
/// [`Session`], why one is refused ([`SessionError`]), and the token's credential id and shape
/// checks the front ends use on their own.
pub use crate::authority::session::{
    credential_id, credential_known_stored as credential_known, is_hex64,
    resolve_stored as resolve, Session, SessionError, Unattested,
};

/// Mint a credential for `token` as `req` describes, in one transaction.
///
/// # Errors
/// [`SessionError`] (a bad episode or grant, a store failure); nothing is written on error.
pub fn mint(store: &mut Store, token: &str, req: &MintRequest) -> Result<Minted, SessionError> {
    let tx = store.immediate()?;
    let minted = session::mint(&tx, token, req)?;
    tx.commit().map_err(store::Error::from)?;
    Ok(minted)
}

/// What to revoke.
#[derive(Clone, Debug)]
pub enum Revoke {
    /// One credential by its full id.
    Credential(String),
    /// Every live credential of an episode.
    Episode(String),
}

/// Why [`revoke`] revoked nothing.
#[derive(Debug, thiserror::Error)]
pub enum RevokeError {
    /// No live credential with this id (already revoked, or minted in another store).
    #[error("no session credential {0} (already revoked, or minted in another store); nothing was revoked")]
    NoCredential(String),
    /// The episode has no live credential.
    #[error("episode {0} has no session credential")]
    NoEpisodeCredential(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// Revoke `what` in one transaction; the ids revoked.
///
/// # Errors
/// [`RevokeError`]; nothing is written on error.
pub fn revoke(store: &mut Store, what: &Revoke) -> Result<Vec<String>, RevokeError> {
    let tx = store.immediate()?;
    let revoked = match what {
        Revoke::Credential(id) => {
            if !session::revoke(&tx, id)? {
                return Err(RevokeError::NoCredential(id.clone()));
            }
            vec![id.clone()]
        }
        Revoke::Episode(ep) => {
            let ids = session::revoke_episode(&tx, ep)?;
            if ids.is_empty() {
                return Err(RevokeError::NoEpisodeCredential(ep.clone()));
            }
            ids
        }
    };
    tx.commit().map_err(store::Error::from)?;
    Ok(revoked)
}
