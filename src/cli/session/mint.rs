//! `world session mint`: check, confirm at the terminal (unless `--yes`), mint in one
//! transaction, then place or print the token (authority-and-broker.md §2).

use std::path::{Path, PathBuf};

use super::need_explicit_db;
use super::prompt::confirm_mint;
use super::token_file::stage_token;
use crate::authority::grants::{parse_grant, Grant};
use crate::authority::session::{self, MintRequest};
use crate::cli::output::Output;
use crate::cli::{CliError, Context, Exit};

/// `world session mint`'s arguments (see [`Cmd::Mint`]).
#[derive(clap::Args, Debug)]
pub struct MintArgs {
    /// The episode: [a-z0-9][a-z0-9-]{0,63}
    #[arg(long)]
    pub episode: String,
    /// EFFECT=SCOPE:BUDGET, repeatable (e.g. Workspace.Read=worktree:50)
    #[arg(long = "grant", value_name = "GRANT", required = true)]
    pub grants: Vec<String>,
    /// Lifetime in seconds for the session and every grant
    #[arg(long, default_value_t = 3600, allow_negative_numbers = true)]
    pub ttl: i64,
    /// Directory holding the episode worktrees (<DIR>/<episode>), recorded for the episode
    #[arg(long, value_name = "DIR")]
    pub workspace_root: Option<PathBuf>,
    /// Limits-ledger scope this episode's effects are charged to
    #[arg(long, value_name = "SCOPE")]
    pub limits_scope: Option<String>,
    /// Mission every allowed effect is admitted in (missions.md §7; needs --mission-run and --mission-grant)
    #[arg(long, value_name = "M", requires_all = ["mission_run", "mission_grant"])]
    pub mission: Option<String>,
    /// The mission run effects are admitted in
    #[arg(long, value_name = "R", requires = "mission")]
    pub mission_run: Option<String>,
    /// The mission grant effects are admitted under
    #[arg(long, value_name = "G", requires = "mission")]
    pub mission_grant: Option<String>,
    /// The standalone ledger holding --mission (a file made by `world limits init`, or
    /// postgres://user@host/db); recorded in the binding, and `invoke`/`serve`/`mcp` must
    /// name the same ledger with --ledger. Without it the mission is in the store file
    #[arg(
        long,
        value_name = "FILE|URL",
        env = "WORLD_LEDGER",
        hide_env_values = true
    )]
    pub ledger: Option<String>,
    /// Write the token to this new file (mode 0600) instead of stdout
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// No terminal confirmation (scripts, CI): recorded as unattended
    #[arg(long)]
    pub yes: bool,
}

/// `world session mint`: check, confirm at the terminal (unless `--yes`), mint in one
/// transaction, then place or print the token.
pub(super) fn run(ctx: &Context, out: &mut Output, mut a: MintArgs) -> Result<Exit, CliError> {
    let what = "session mint";
    // A relative --workspace-root is resolved against the current directory (symlinks too,
    // when it exists), so the credential records where the worktrees really are.
    if let Some(root) = a.workspace_root.as_ref().filter(|r| r.is_relative()) {
        let abs = root
            .canonicalize()
            .or_else(|_| std::path::absolute(root))
            .map_err(|e| {
                CliError::usage(what, format!("--workspace-root {}: {e}", root.display()))
            })?;
        a.workspace_root = Some(abs);
    }
    let grants = check_mint(ctx, what, &a)?;
    warn_unmatched_grants(ctx, out, &grants);
    if !a.yes {
        confirm_mint(ctx, what, &a, &grants)?;
    }
    let MintArgs {
        episode,
        ttl,
        workspace_root,
        limits_scope,
        mission,
        mission_run,
        mission_grant,
        ledger,
        out: out_file,
        yes,
        ..
    } = a;
    let token = session::new_token().map_err(|e| CliError::failed(what, e))?;
    // A held lock's hint names the holder (`world serve` included, DEC-UX-11).
    let mut store = ctx.open_write(false)?;
    let mut req = MintRequest {
        episode: episode.clone(),
        grants,
        ttl,
        now: ctx.now(),
        attended: !yes,
        workspace_root,
        limits_scope,
        mission: mission.map(|m| session::MissionBinding {
            mission_id: m,
            run_id: mission_run.unwrap_or_default(),
            grant_id: mission_grant.unwrap_or_default(),
            ledger: String::new(),
            root: String::new(),
        }),
    };
    if let Some(m) = &mut req.mission {
        bind_mission(what, &store, ledger.as_deref(), m)?;
    }
    // The token goes to a hidden temp file next to --out first; after the commit it is
    // hard-linked into place (never overwriting) and the temp removed. A kill leaves no
    // empty or orphan --out: only a temp the next mint into that directory sweeps.
    let tmp = match &out_file {
        Some(p) => Some(stage_token(p, &token).map_err(|e| CliError::failed(what, e))?),
        None => None,
    };
    let minted = match crate::ops::session::mint(&mut store, &token, &req) {
        Ok(m) => m,
        Err(e) => {
            if let Some(t) = &tmp {
                let _ = std::fs::remove_file(t);
            }
            return Err(match e {
                session::SessionError::Store(s) => CliError::store(what, s),
                other => CliError::failed(what, other),
            });
        }
    };
    if let (Some(t), Some(p)) = (&tmp, &out_file) {
        let placed = std::fs::hard_link(t, p);
        let _ = std::fs::remove_file(t);
        if let Err(e) = placed {
            return Err(CliError::failed(
                what,
                format!(
                    "the credential {} was minted but its token could not be written to {}: {e}; revoke it with `world session revoke {}`",
                    session::credential_id(&token),
                    p.display(),
                    session::credential_id(&token)
                ),
            ));
        }
    }
    report(
        out,
        &episode,
        &token,
        &minted,
        req.grants.len(),
        out_file.as_deref(),
        yes,
    )?;
    Ok(Exit::Success)
}

/// What a mint prints: the token once (or where it was written), then the status line.
fn report(
    out: &mut Output,
    episode: &str,
    token: &str,
    minted: &session::Minted,
    n: usize,
    out_file: Option<&Path>,
    yes: bool,
) -> Result<(), CliError> {
    match out_file {
        Some(p) => {
            if out.json {
                out.json_line(&serde_json::json!({"credentialId": minted.credential_id, "episode": episode, "expiresAt": minted.expires_at, "attended": !yes, "out": p}))?;
            } else {
                out.summary(format!("minted session credential for episode {episode}: {n} grant(s), expires {}, written to {}", crate::cli::output::rfc3339(minted.expires_at), p.display()))?;
            }
        }
        // Without --out the token is printed once; under --json inside the object.
        None if out.json => out.json_line(&serde_json::json!({"credentialId": minted.credential_id, "episode": episode, "expiresAt": minted.expires_at, "attended": !yes, "token": token}))?,
        None => out.line(token)?,
    }
    out.status(format!(
        "world session mint: credential_id={} (episode {episode}, {n} grant(s), expires {}){}",
        minted.credential_id,
        crate::cli::output::rfc3339(minted.expires_at),
        if yes { " [unattended]" } else { "" }
    ));
    Ok(())
}

/// `session mint`'s argument checks, before anything is opened for writing; returns the
/// parsed grants. Usage errors exit 1, an existing `--out` or a missing store 4/5 (exit table).
fn check_mint(ctx: &Context, what: &str, a: &MintArgs) -> Result<Vec<Grant>, CliError> {
    let MintArgs {
        episode,
        grants,
        ttl,
        workspace_root,
        out: out_file,
        ..
    } = a;
    let ttl = *ttl;
    need_explicit_db(ctx, "mint")?;
    session::check_episode(episode).map_err(|e| CliError::usage(what, e))?;
    if ttl < 0 {
        return Err(CliError::usage(
            what,
            format!("--ttl must be non-negative, got {ttl}"),
        ));
    }
    if ttl == 0 {
        return Err(CliError::usage(
            what,
            "--ttl 0 would mint an already-expired credential; give at least 1 second",
        ));
    }
    let grants: Vec<Grant> = grants
        .iter()
        .map(|g| parse_grant(g))
        .collect::<Result<_, _>>()
        .map_err(|e| CliError::usage(what, e))?;
    if let Some(root) = &workspace_root {
        if !root.is_absolute() {
            return Err(CliError::usage(
                what,
                format!(
                    "--workspace-root {} must be an absolute path",
                    root.display()
                ),
            ));
        }
    }
    if let Some(p) = &out_file {
        if p.exists() {
            return Err(CliError::failed(
                what,
                format!(
                    "--out {} already exists; a token file is never overwritten",
                    p.display()
                ),
            ));
        }
    }
    if !ctx.db.exists() {
        return Err(CliError::store(
            what,
            crate::store::Error::Missing {
                path: ctx.db.display().to_string(),
            },
        ));
    }
    Ok(grants)
}

/// Check a mission binding where the mission is held: in the standalone `ledger` (the binding
/// then names the ledger and the mission's root) or in the store file.
fn bind_mission(
    what: &str,
    store: &crate::store::Store,
    ledger: Option<&str>,
    m: &mut session::MissionBinding,
) -> Result<(), CliError> {
    match ledger {
        // A mission in a standalone ledger (issue 18): checked there, and the
        // binding names the ledger (canonical path, or URL without password).
        Some(location) => {
            let missions = crate::mission::ledger::open_canonical(location)
                .map_err(|e| crate::cli::mission::store_err(what, e))?;
            crate::cli::mission::check_binding_in(what, missions.as_ref(), m)?;
            m.ledger = missions
                .identity()
                .map_err(|e| crate::cli::mission::store_err(what, e))?;
            m.root = missions
                .root(&m.mission_id)
                .map_err(|e| crate::cli::mission::store_err(what, e))?;
        }
        None => crate::cli::mission::check_binding(what, store.conn(), m)?,
    }
    Ok(())
}

/// Warn (never refuse: access effects are free-form) about grants whose `(effect, scope)` no
/// published transition uses as its access or a declared effect: effect and scope match by
/// exact string, so a typo mints a session that sees and can do nothing.
fn warn_unmatched_grants(ctx: &Context, out: &mut Output, grants: &[Grant]) {
    let Ok(store) = ctx.open_read() else {
        return;
    };
    let Ok(Some(head)) = crate::transitions::publish::read_head(store.conn()) else {
        return;
    };
    let used: std::collections::BTreeSet<(String, String)> = head
        .revision
        .entries
        .iter()
        .flat_map(|d| std::iter::once(&d.access).chain(d.declared_effects.iter()))
        .map(|e| (e.effect.clone(), e.scope.clone()))
        .collect();
    for g in grants {
        if !used.contains(&(g.effect.clone(), g.scope.clone())) {
            out.warn(format!(
                "grant {}={} matches no published transition's access or declared effect (exact strings); `world transitions list` shows them",
                g.effect, g.scope
            ));
        }
    }
}
