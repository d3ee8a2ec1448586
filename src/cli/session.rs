//! `world session mint|list|revoke` (authority-and-broker.md §2, DEC-CLI-3).

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use clap::Subcommand;

use super::output::Output;
use super::table::{Col, Table};
use super::{fence, read_err, CliError, Context, Exit};
use crate::authority::grants::{parse_grant, Grant};
use crate::authority::session::{self, MintRequest};

/// Session commands.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Mint a session credential for an episode (attended: a human confirms at the terminal)
    ///
    /// The token (64 hex) is written to --out (mode 0600, never overwritten) or printed once on
    /// stdout; only its sha256 is stored. --yes skips the terminal for scripts and CI and is
    /// recorded as unattended.
    Mint(MintArgs),
    /// List live session credentials: attended, expiry, and each grant's remaining budget
    List {
        /// Only this episode
        #[arg(long)]
        episode: Option<String>,
        /// Also list expired and revoked credentials (state `expired`, `revoked`)
        #[arg(long)]
        all: bool,
    },
    /// Show one credential: state, expiry, and per grant the budget, what the episode spent
    /// and what remains (as the broker would seed it)
    Show {
        /// The credential_id: 64 hex, or a unique prefix (≥ 6 hex) as `session list` prints it;
        /// live, expired or revoked
        #[arg(value_name = "CREDENTIAL_ID")]
        id: String,
    },
    /// Revoke one credential by id, or every credential of an episode
    Revoke {
        /// The credential_id: 64 hex, or a unique prefix (≥ 6 hex) as `session list` prints it
        #[arg(
            value_name = "CREDENTIAL_ID",
            required_unless_present = "episode",
            conflicts_with = "episode"
        )]
        id: Option<String>,
        /// Revoke every credential of this episode
        #[arg(long)]
        episode: Option<String>,
    },
}

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

fn need_explicit_db(ctx: &Context, verb: &str) -> Result<(), CliError> {
    if ctx.db_explicit {
        Ok(())
    } else {
        Err(CliError::usage(
            format!("session {verb}"),
            "name the store explicitly with --db PATH or WORLD_DB",
        ))
    }
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

/// Why the token could not be staged next to `--out` (nothing was committed yet).
#[derive(Debug, thiserror::Error)]
enum StageError {
    /// The temp file could not be created.
    #[error("create a temp file next to {}: {source}", .out.display())]
    Create {
        /// The `--out` path.
        out: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Writing or syncing it failed (it was removed).
    #[error("write {}: {source}", .tmp.display())]
    Write {
        /// The temp file.
        tmp: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// Write `token` + LF to a new hidden temp file (mode 0600) in `out`'s directory and fsync
/// it, after sweeping temps of dead mints there; returns the temp path.
fn stage_token(out: &std::path::Path, token: &str) -> Result<PathBuf, StageError> {
    let dir = match out.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let base = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name
                .rsplit_once(".world-mint-")
                .and_then(|(_, r)| r.strip_suffix(".tmp"))
                .and_then(|p| p.parse::<i32>().ok())
            else {
                continue;
            };
            // SAFETY: signal 0 only checks for existence.
            let alive = unsafe { libc::kill(pid, 0) } == 0
                || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
            if name.starts_with('.') && !alive {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    let tmp = dir.join(format!(".{base}.world-mint-{}.tmp", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(|source| StageError::Create {
            out: out.to_path_buf(),
            source,
        })?;
    if let Err(source) = f
        .write_all(format!("{token}\n").as_bytes())
        .and_then(|_| f.sync_all())
    {
        let _ = std::fs::remove_file(&tmp);
        return Err(StageError::Write { tmp, source });
    }
    Ok(tmp)
}

/// One grant's budget as the broker would seed it now (authority-and-broker.md §8): the
/// minted `budget`, what the episode `spent` on `(effect, scope)`, and `remaining` =
/// `max(budget − spent, 0)`. Units: the effect's cost units; `expiresAt` Unix seconds.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GrantBudget {
    /// Effect name.
    pub effect: String,
    /// Scope.
    pub scope: String,
    /// The minted budget.
    pub budget: i64,
    /// Σ cost of the episode's intents on this effect and scope (clamped to int64).
    pub spent: i64,
    /// What the broker would seed: `max(budget − spent, 0)`.
    pub remaining: i64,
    /// The grant's expiry (Unix seconds).
    pub expires_at: i64,
}

/// Spend per episode, read once per episode.
#[derive(Default)]
struct SpendCache(
    std::collections::HashMap<String, std::collections::HashMap<(String, String), i64>>,
);

impl SpendCache {
    fn budgets(
        &mut self,
        conn: &rusqlite::Connection,
        r: &session::Listed,
    ) -> Result<Vec<GrantBudget>, CliError> {
        if !self.0.contains_key(&r.episode) {
            let spend =
                crate::broker::spend(conn, &r.episode).map_err(read_err("session budgets"))?;
            self.0.insert(r.episode.clone(), spend);
        }
        let spend = &self.0[&r.episode];
        let seeded = crate::broker::seed(&r.minted, spend);
        Ok(r.minted
            .iter()
            .zip(seeded)
            .map(|(g, s)| GrantBudget {
                effect: g.effect.clone(),
                scope: g.scope.clone(),
                budget: g.budget,
                spent: spend
                    .get(&(g.effect.clone(), g.scope.clone()))
                    .copied()
                    .unwrap_or(0),
                remaining: s.budget,
                expires_at: g.expires_at,
            })
            .collect())
    }
}

/// A `session list`/`show` row as JSON: the listed fields plus `budgets`.
fn listed_json(r: &session::Listed, budgets: &[GrantBudget]) -> serde_json::Value {
    let mut v = serde_json::to_value(r).unwrap_or_default();
    v["budgets"] = serde_json::to_value(budgets).unwrap_or_default();
    v
}

fn attended_text(a: Option<bool>) -> &'static str {
    match a {
        Some(true) => "attended",
        Some(false) => "unattended",
        None => "unknown",
    }
}

/// A credential id as tables print it: 12 hex, a prefix every id argument takes.
fn short_id(id: &str) -> String {
    id.get(..12).unwrap_or(id).to_string()
}

/// The one row `text` (a full id or a unique prefix of ≥ 6 hex, as tables print it) names.
/// The credential id an argument names: the argument itself, or — when it is a session token
/// of this store rather than an id — the token's credential id, with a warning that names the
/// credential, never the token (issue 26 §7).
fn credential_arg(store: &crate::store::Store, out: &mut Output, text: &str) -> String {
    let t = text.trim();
    if !session::is_hex64(t) {
        return text.to_string();
    }
    let hex = t.to_ascii_lowercase();
    if crate::store::refs::names_anything(store.conn(), &hex).unwrap_or(true) {
        return text.to_string();
    }
    let id = session::credential_id(t);
    if session::credential_known(store.conn(), &id).unwrap_or(false) {
        out.warn(format!(
            "the argument is a session token, not a credential id: it names credential {id} (give credential ids; a token on the command line ends up in shell history)"
        ));
        return id;
    }
    text.to_string()
}

fn pick<'a>(
    rows: &'a [session::Listed],
    text: &str,
    what: &str,
) -> Result<&'a session::Listed, CliError> {
    let t = text.trim().trim_end_matches('…').to_ascii_lowercase();
    if t.len() < 6 || t.len() > 64 || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(CliError::failed(
            what,
            format!("{text:?} is not a credential_id: give 64 hex or a unique prefix of at least 6 hex digits"),
        )
        .with_code("bad_ref"));
    }
    let hits: Vec<&session::Listed> = rows
        .iter()
        .filter(|r| r.credential_id.starts_with(&t))
        .collect();
    match hits.as_slice() {
        [one] => Ok(one),
        [] => Err(CliError::failed(
            what,
            format!(
                "no session credential matches {text} in this store (live, expired or revoked)"
            ),
        )
        .with_code("not_found")
        .hint("`world session list --all` lists them")),
        many => {
            let mut err = CliError::failed(
                what,
                format!(
                    "{text} is ambiguous: {} session credentials match",
                    many.len()
                ),
            )
            .with_code("ambiguous_ref");
            for r in many.iter().take(10) {
                err = err.hint(format!(
                    "{} (episode {}, {})",
                    r.credential_id, r.episode, r.state
                ));
            }
            Err(err.hint("give more hex digits"))
        }
    }
}

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
        super::output::rfc3339(p.expires_at),
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

/// The members of a `world session list --json` line (docs/json/session.schema.json), the
/// fields `--json=FIELDS` may select.
pub const JSON_FIELDS: &[&str] = &[
    "credentialId",
    "episode",
    "state",
    "live",
    "attended",
    "createdAt",
    "expiresAt",
    "grants",
    "budgets",
];

/// Run `world session …`.
pub fn run(ctx: &Context, out: &mut Output, cmd: Cmd) -> Result<Exit, CliError> {
    match cmd {
        Cmd::Mint(a) => mint(ctx, out, a),
        Cmd::List { episode, all } => list(ctx, out, episode.as_deref(), all),
        Cmd::Show { id } => show(ctx, out, &id),
        Cmd::Revoke { id, episode } => revoke(ctx, out, id, episode),
    }
}

/// `world session mint`: check, confirm at the terminal (unless `--yes`), mint in one
/// transaction, then place or print the token.
fn mint(ctx: &Context, out: &mut Output, mut a: MintArgs) -> Result<Exit, CliError> {
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
    let n = req.grants.len();
    match &out_file {
        Some(p) => {
            if out.json {
                out.json_line(&serde_json::json!({"credentialId": minted.credential_id, "episode": episode, "expiresAt": minted.expires_at, "attended": !yes, "out": p}))?;
            } else {
                out.summary(format!("minted session credential for episode {episode}: {n} grant(s), expires {}, written to {}", super::output::rfc3339(minted.expires_at), p.display()))?;
            }
        }
        // Without --out the token is printed once; under --json inside the object.
        None if out.json => out.json_line(&serde_json::json!({"credentialId": minted.credential_id, "episode": episode, "expiresAt": minted.expires_at, "attended": !yes, "token": token}))?,
        None => out.line(&token)?,
    }
    out.status(format!(
        "world session mint: credential_id={} (episode {episode}, {n} grant(s), expires {}){}",
        minted.credential_id,
        super::output::rfc3339(minted.expires_at),
        if yes { " [unattended]" } else { "" }
    ));
    Ok(Exit::Success)
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

/// Ask the human at the terminal to confirm the mint; refusing or no terminal is exit 6
/// (`aborted (not confirmed)` or the fence's message).
fn confirm_mint(ctx: &Context, what: &str, a: &MintArgs, grants: &[Grant]) -> Result<(), CliError> {
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
                .map_err(|e| super::mission::store_err(what, e))?;
            super::mission::check_binding_in(what, missions.as_ref(), m)?;
            m.ledger = missions
                .identity()
                .map_err(|e| super::mission::store_err(what, e))?;
            m.root = missions
                .root(&m.mission_id)
                .map_err(|e| super::mission::store_err(what, e))?;
        }
        None => super::mission::check_binding(what, store.conn(), m)?,
    }
    Ok(())
}

/// `world session list`.
fn list(
    ctx: &Context,
    out: &mut Output,
    episode: Option<&str>,
    all: bool,
) -> Result<Exit, CliError> {
    let store = ctx.open_read()?;
    let rows =
        session::list(store.conn(), episode, ctx.now(), all).map_err(read_err("session list"))?;
    let mut spends = SpendCache::default();
    if out.json {
        for r in &rows {
            let budgets = spends.budgets(store.conn(), r)?;
            out.json_line(&listed_json(r, &budgets))?;
        }
    } else {
        // docs/TABLES.md: CREDENTIAL_ID (the id `session show`/`revoke` take) always;
        // REMAINING BUDGET is cut between grants first; then ATTENDED, EXPIRES, EPISODE,
        // REMAINING BUDGET and STATE are hidden in that order.
        let mut t = Table::new(vec![
            Col::id("credential_id"),
            Col::id("episode").drop(3),
            Col::id("state").drop(5),
            Col::id("attended").drop(1),
            Col::id("expires").drop(2),
            Col::list("remaining budget").drop(4),
        ]);
        for r in &rows {
            let budgets = spends.budgets(store.conn(), r)?;
            t.add_row(vec![
                short_id(&r.credential_id),
                r.episode.clone(),
                r.state.to_string(),
                attended_text(r.attended).to_string(),
                super::output::rfc3339(r.expires_at),
                budgets
                    .iter()
                    .map(|b| format!("{}={}:{}/{}", b.effect, b.scope, b.remaining, b.budget))
                    .collect::<Vec<_>>()
                    .join(" "),
            ]);
        }
        if !rows.is_empty() {
            out.table(&t)?;
        }
        out.status(format!(
            "{} session credential(s){}",
            rows.len(),
            if all {
                ""
            } else {
                " live (--all adds expired and revoked)"
            }
        ));
    }
    Ok(Exit::Success)
}

/// `world session show ID`.
fn show(ctx: &Context, out: &mut Output, id: &str) -> Result<Exit, CliError> {
    let what = "session show";
    let store = ctx.open_read()?;
    let rows = session::list(store.conn(), None, ctx.now(), true).map_err(read_err(what))?;
    let id = credential_arg(&store, out, id);
    let r = pick(&rows, &id, what)?;
    let budgets = SpendCache::default().budgets(store.conn(), r)?;
    if out.json {
        out.json_line(&listed_json(r, &budgets))?;
        return Ok(Exit::Success);
    }
    out.view(format!("credential  {}", r.credential_id))?;
    out.view(format!(
        "episode     {}",
        crate::termtext::escape_line(&r.episode)
    ))?;
    out.view(format!("state       {}", r.state))?;
    out.view(format!("attended    {}", attended_text(r.attended)))?;
    out.view(format!(
        "created     {}",
        super::output::rfc3339(r.created_at)
    ))?;
    out.view(format!(
        "expires     {}",
        super::output::rfc3339(r.expires_at)
    ))?;
    out.view("")?;
    // docs/TABLES.md: EFFECT, SCOPE and REMAINING always; EXPIRES, SPENT and BUDGET are
    // hidden in that order.
    let mut t = Table::new(vec![
        Col::id("effect"),
        Col::id("scope"),
        Col::id("budget").drop(3).right(),
        Col::id("spent").drop(2).right(),
        Col::id("remaining").right(),
        Col::id("expires").drop(1),
    ]);
    for b in &budgets {
        t.add_row(vec![
            b.effect.clone(),
            b.scope.clone(),
            b.budget.to_string(),
            b.spent.to_string(),
            b.remaining.to_string(),
            super::output::rfc3339(b.expires_at),
        ]);
    }
    out.table(&t)?;
    out.status("remaining = budget − what the episode spent on that effect and scope (every intent counts, whatever its outcome); a new session for the same episode does not refill it");
    Ok(Exit::Success)
}

/// `world session revoke [ID] [--episode EP]`.
fn revoke(
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
            Some(super::refs::resolve(&store, &space, &id, what)?.reference)
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
