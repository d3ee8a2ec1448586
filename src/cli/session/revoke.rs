//! `world session revoke [ID] [--episode EP]`: revoke one credential or an episode's.

use super::credentials::credential_arg;
use super::need_explicit_db;
use crate::cli::output::Output;
use crate::cli::{CliError, Context, Exit};

/// `world session revoke [ID] [--episode EP]`.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    id: Option<String>,
    episode: Option<String>,
) -> Result<Exit, CliError> {
    let what = "session revoke";
    need_explicit_db(ctx, "revoke")?;
    // A full credential_id, or a unique prefix (≥ 6 hex) as `session list` prints it.
    let id = match id {
        Some(id) => {
            let store = ctx.open_read()?;
            let id = credential_arg(&store, out, &id);
            let space = [crate::store::refs::Space::Session];
            Some(crate::cli::refs::resolve(&store, &space, &id, what)?.reference)
        }
        None => None,
    };
    let mut store = ctx.open_write(false)?;
    let db = ctx.db.display().to_string();
    let target = match (&id, &episode) {
        (Some(id), _) => crate::ops::session::Revoke::Credential(id.clone()),
        (None, Some(ep)) => crate::ops::session::Revoke::Episode(ep.clone()),
        (None, None) => {
            return Err(CliError::usage(
                what,
                "give a credential_id or --episode EP",
            ))
        }
    };
    let revoked =
        crate::ops::session::revoke(&mut store, &target).map_err(|e| match e {
            crate::ops::session::RevokeError::Store(s) => CliError::store(what, s),
            crate::ops::session::RevokeError::NoCredential(id) => CliError::failed(what, format!("refusing: no session credential {id} in {db} (already revoked, or minted in another store); nothing was revoked")),
            crate::ops::session::RevokeError::NoEpisodeCredential(ep) => CliError::failed(
                what,
                format!("refusing: episode {ep} has no session credential in {db}"),
            ),
        })?;
    for id in revoked {
        if out.json {
            out.json_line(&serde_json::json!({"revoked": id}))?;
        } else {
            out.summary(format!("revoked session credential {id}"))?;
        }
    }
    Ok(Exit::Success)
}
