//! The attended mint's confirmation: what the human is shown, and the question asked.

use super::mint::MintArgs;
use crate::authority::grants::Grant;
use crate::cli::{fence, CliError, Context};

/// Everything a mint confirmation shows.
struct MintPrompt<'a> {
    db: &'a std::path::Path,
    episode: &'a str,
    grants: &'a [Grant],
    expires_at: i64,
    ttl: i64,
    workspace_root: Option<&'a std::path::Path>,
    limits_scope: Option<&'a str>,
    mission: Option<&'a str>,
}

/// The mint confirmation: the store, episode, every grant with its budget, the expiry time
/// (RFC 3339 and the TTL), and the bindings, then `[y/N]`.
fn mint_prompt(p: &MintPrompt<'_>) -> String {
    let mut s = format!(
        "Mint a session credential for episode {} in {}:\n",
        p.episode,
        p.db.display()
    );
    for g in p.grants {
        s.push_str(&format!(
            "  grant  {} on scope {}, budget {}\n",
            g.effect, g.scope, g.budget
        ));
    }
    s.push_str(&format!(
        "  expires {} (in {} s; every grant expires with it)\n",
        crate::cli::output::rfc3339(p.expires_at),
        p.ttl
    ));
    if let Some(r) = p.workspace_root {
        s.push_str(&format!("  worktree {}/{}\n", r.display(), p.episode));
    }
    if let Some(l) = p.limits_scope {
        s.push_str(&format!("  limits scope {l}\n"));
    }
    if let Some(m) = p.mission {
        s.push_str(&format!("  mission {m}\n"));
    }
    s.push_str("Mint it? [y/N] ");
    s
}

/// Ask the human at the terminal to confirm the mint; refusing or no terminal is exit 6
/// (`aborted (not confirmed)` or the fence's message).
pub(super) fn confirm_mint(
    ctx: &Context,
    what: &str,
    a: &MintArgs,
    grants: &[Grant],
) -> Result<(), CliError> {
    let (mission, ledger) = (&a.mission, &a.ledger);
    // The prompt names the ledger a mission is held in (the binding records it).
    let mission_line = mission.as_ref().map(|m| match &ledger {
        Some(l) if !l.contains("://") => format!("{m} (ledger {l})"),
        Some(_) => format!("{m} (PostgreSQL ledger)"),
        None => m.clone(),
    });
    let mut tty = fence::attended(what, "minting a session credential")?;
    let answer = tty
        .ask(&mint_prompt(&MintPrompt {
            db: &ctx.db,
            episode: &a.episode,
            grants,
            expires_at: ctx.now().saturating_add(a.ttl),
            ttl: a.ttl,
            workspace_root: a.workspace_root.as_deref(),
            limits_scope: a.limits_scope.as_deref(),
            mission: mission_line.as_deref(),
        }))
        .map_err(|e| CliError::terminal(what, &e))?;
    if !fence::is_yes(answer.as_deref()) {
        return Err(CliError::aborted(what, "aborted (not confirmed)"));
    }
    Ok(())
}
