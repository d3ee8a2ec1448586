//! Sessions: minting, listing, revoking and resolving credentials (authority-and-broker.md
//! §1–§3, DEC-CLI-3).

use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde::Serialize;

use crate::encoding::gojson::{self, Obj};
use crate::encoding::HashRef;
use crate::store::sessions::{self, CredentialRow};
use crate::store::{payloads_by_semantic_id, put_object, Error as StoreError, Object};

use super::grants::{grants_json, Grant};

/// `world/session-mint/v1`: the mint record (attended or not).
pub const SESSION_MINT: &str = "world/session-mint/v1";
/// `world/episode-binding/v1`: an episode's workspace root and limits scope.
pub const EPISODE_BINDING: &str = "world/episode-binding/v1";
/// Provenance of mint records and bindings.
pub const PROVENANCE: &str = "world:session";

/// Why a session cannot be used or made.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The episode id breaks `^[a-z0-9][a-z0-9-]{0,63}$`.
    #[error("episode {0:?} must match [a-z0-9][a-z0-9-]{{0,63}}")]
    BadEpisode(String),
    /// A credential text is not 64 hex characters.
    #[error("session credential must be 64 hex characters")]
    Malformed,
    /// No such credential (revoked, never minted here, or undecodable grants: fail closed).
    #[error("unknown session credential")]
    Unknown,
    /// The credential's row is gone but this store minted it: `session revoke` removed it.
    #[error("session credential has been revoked")]
    Revoked,
    /// The credential row disagrees with the mint record this store wrote for it: refused
    /// (fail closed) until someone looks (`world verify` names it).
    #[error("session credential refused: {0}; the store was edited (run `world verify`)")]
    Tampered(String),
    /// `now > expires_at`.
    #[error("session credential has expired")]
    Expired,
    /// The credential row has no mint record in this store (the reference daemon writes
    /// none; an inserted row has none either): refused unless the caller accepts unattested
    /// credentials (`--allow-unattested`, DEC-TRUST3-2).
    #[error("session credential refused: this store holds no mint record for it (minted by another tool, or inserted into the file); pass --allow-unattested to accept credentials without one")]
    Unattested,
    /// The session input could not be read.
    #[error("{0}")]
    Input(String),
    /// Store failure.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Check the episode grammar `^[a-z0-9][a-z0-9-]{0,63}$` (authority-and-broker.md §3).
pub fn check_episode(ep: &str) -> Result<(), SessionError> {
    let b = ep.as_bytes();
    let ok = !b.is_empty()
        && b.len() <= 64
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-');
    if ok {
        Ok(())
    } else {
        Err(SessionError::BadEpisode(ep.to_string()))
    }
}

/// A fresh token: 32 random bytes as 64 lowercase hex.
pub fn new_token() -> Result<String, SessionError> {
    let mut bytes = [0u8; 32];
    getrandom::getrandom(&mut bytes)
        .map_err(|e| SessionError::Input(format!("random source: {e}")))?;
    Ok(hex::encode(bytes))
}

/// `credential_id`: lowercase hex sha256 of the token text, no prefix.
pub fn credential_id(token: &str) -> String {
    HashRef::of(token.as_bytes()).hex()
}

/// Is `s` exactly 64 hex characters (either case: uppercase passes syntax but resolves unknown)?
pub fn is_hex64(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// What a mint writes.
#[derive(Clone, Debug)]
pub struct MintRequest {
    /// Episode id.
    pub episode: String,
    /// Grants (their `expires_at` is overwritten with the session expiry).
    pub grants: Vec<Grant>,
    /// Time to live in seconds.
    pub ttl: i64,
    /// Now, Unix seconds.
    pub now: i64,
    /// Was a human confirmed at a terminal? (`false` with `--yes`, DEC-CLI-3.)
    pub attended: bool,
    /// Workspace root to bind to the episode.
    pub workspace_root: Option<PathBuf>,
    /// Limits scope to bind to the episode.
    pub limits_scope: Option<String>,
    /// Mission pairing to bind to the episode (missions.md §7).
    pub mission: Option<MissionBinding>,
}

/// An episode's mission pairing: every allowed effect is admitted in `mission_id` under
/// `grant_id` in run `run_id` (missions.md §7).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MissionBinding {
    /// The mission.
    pub mission_id: String,
    /// The run effects are admitted in.
    pub run_id: String,
    /// The grant effects are admitted under.
    pub grant_id: String,
    /// The standalone ledger holding the mission, by its identity (DEC-MIS-15: a canonical
    /// file path, or `postgres://host:port/db#schema`, never a user or password); `""`: the
    /// mission is in the store file (issue 18, DEC-MIS-14).
    pub ledger: String,
    /// The mission's chain root in that ledger (DEC-MIS-13/15), `""` with no ledger: tells
    /// the bound mission apart from one re-created under its id.
    pub root: String,
}

/// The result of a mint.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Minted {
    /// The credential id (sha256 hex of the token).
    pub credential_id: String,
    /// Expiry, Unix seconds.
    pub expires_at: i64,
    /// The mint record's ref.
    pub record: String,
}

/// Mint a session inside `tx`: the credential row, the `world/session-mint/v1` record and,
/// when asked, an `world/episode-binding/v1` object. `token` is never stored.
pub fn mint(tx: &Connection, token: &str, req: &MintRequest) -> Result<Minted, SessionError> {
    check_episode(&req.episode)?;
    let expires_at = req.now.saturating_add(req.ttl);
    let grants: Vec<Grant> = req
        .grants
        .iter()
        .map(|g| Grant {
            expires_at,
            ..g.clone()
        })
        .collect();
    let id = credential_id(token);
    let gj = grants_json(&grants);
    sessions::insert(
        tx,
        &CredentialRow {
            credential_id: id.clone(),
            episode: req.episode.clone(),
            grants_json: String::from_utf8_lossy(&gj).into_owned(),
            created_at: req.now,
            expires_at,
        },
    )?;
    let record = Obj::new()
        .str("credentialId", &id)
        .str("episodeId", &req.episode)
        .raw("grants", &gj)
        .int("expiresAt", expires_at)
        .bool("attended", req.attended)
        .int("mintedAt", req.now)
        .finish();
    let rec = Object::new(SESSION_MINT, PROVENANCE, record);
    put_object(tx, &rec)?;
    if req.workspace_root.is_some() || req.limits_scope.is_some() || req.mission.is_some() {
        let root = req
            .workspace_root
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        // `seq` orders bindings monotonically (issue 13 §7): two mints in the same second
        // are told apart by it, not by hash order. Bindings written before `seq` count as 0.
        let seq = binding_entry(tx, &req.episode)?.map_or(0, |(k, _)| k.0) + 1;
        let mut binding = Obj::new()
            .str("episodeId", &req.episode)
            .str("workspaceRoot", &root)
            .str("limitsScope", req.limits_scope.as_deref().unwrap_or(""));
        if let Some(m) = &req.mission {
            binding = binding
                .str("missionId", &m.mission_id)
                .str("missionRun", &m.run_id)
                .str("missionGrant", &m.grant_id);
            if !m.ledger.is_empty() {
                binding = binding.str("missionLedger", &m.ledger);
            }
            if !m.root.is_empty() {
                binding = binding.str("missionRoot", &m.root);
            }
        }
        let binding = binding
            .int("boundAt", req.now)
            .int("seq", seq)
            .str("credentialId", &id)
            .finish();
        put_object(tx, &Object::new(EPISODE_BINDING, PROVENANCE, binding))?;
    }
    Ok(Minted {
        credential_id: id,
        expires_at,
        record: rec.meta.hash,
    })
}

/// An episode's binding: the latest `world/episode-binding/v1` (greatest `boundAt`, then hash).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Binding {
    /// Workspace root (`""` when none).
    pub workspace_root: String,
    /// Limits scope (`""` when none).
    pub limits_scope: String,
    /// Paired mission (`""` when none).
    pub mission_id: String,
    /// Paired mission run (`""` when none).
    pub mission_run: String,
    /// Paired mission grant (`""` when none).
    pub mission_grant: String,
    /// The standalone ledger holding the paired mission (`""`: the store file).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub mission_ledger: String,
    /// The bound mission's chain root in that ledger (`""`: not recorded).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub mission_root: String,
    /// Unix seconds.
    pub bound_at: i64,
}

/// Look up the latest binding for `episode`: greatest `seq` (a per-episode counter each mint
/// raises), then greatest `boundAt`, then hash (bindings written before `seq` existed).
pub fn binding(conn: &Connection, episode: &str) -> Result<Option<Binding>, StoreError> {
    Ok(binding_entry(conn, episode)?.map(|(_, b)| b))
}

type BindingKey = (i64, i64, String);

fn binding_entry(
    conn: &Connection,
    episode: &str,
) -> Result<Option<(BindingKey, Binding)>, StoreError> {
    let mut best: Option<(BindingKey, Binding)> = None;
    for (hash, payload) in payloads_by_semantic_id(conn, EPISODE_BINDING)? {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(&payload) else {
            continue;
        };
        if v.get("episodeId").and_then(|x| x.as_str()) != Some(episode) {
            continue;
        }
        let text = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
        let b = Binding {
            workspace_root: v
                .get("workspaceRoot")
                .and_then(|x| x.as_str())
                .unwrap_or("")
                .to_string(),
            limits_scope: v
                .get("limitsScope")
                .and_then(|x| x.as_str())
                .unwrap_or("")
                .to_string(),
            mission_id: text("missionId"),
            mission_run: text("missionRun"),
            mission_grant: text("missionGrant"),
            mission_ledger: text("missionLedger"),
            mission_root: text("missionRoot"),
            bound_at: v.get("boundAt").and_then(|x| x.as_i64()).unwrap_or(0),
        };
        let key = (
            v.get("seq").and_then(|x| x.as_i64()).unwrap_or(0),
            b.bound_at,
            hash,
        );
        if best.as_ref().is_none_or(|(k, _)| &key > k) {
            best = Some((key, b));
        }
    }
    Ok(best)
}

/// A stored session.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    /// Credential id.
    pub credential_id: String,
    /// Episode.
    pub episode: String,
    /// Grants with their expiries.
    pub grants: Vec<Grant>,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds.
    pub expires_at: i64,
}

/// Whether a credential row without a mint record may be used (`--allow-unattested`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Unattested {
    /// Refused ([`SessionError::Unattested`]): the default.
    #[default]
    Refuse,
    /// Accepted, as rows minted by the reference daemon are.
    Allow,
}

/// Resolve a token at `now`: unknown (including undecodable grants, fail closed), revoked
/// (no row, but this store's mint record names it), unattested (a row with no mint record,
/// refused), expired (`now > expires_at`), or the session.
pub fn resolve(conn: &Connection, token: &str, now: i64) -> Result<Session, SessionError> {
    resolve_with(conn, token, now, Unattested::Refuse)
}

/// The one rule for acting as a session's agent (issue 28, DEC-ARCH-11): the credential must
/// resolve at `now` (Unix seconds) — malformed, unknown, revoked, tampered, unattested (unless
/// `unattested` is [`Unattested::Allow`]) and expired credentials are all refused. Every
/// refusal is an authentication failure ([`SessionError`]) that the front end reports as an
/// error (`world` exits 1; HTTP 401 per surfaces.md §2), never a policy verdict such as a
/// limits `allowed=false` or a broker denial: no ledger or log row is written for it.
/// `world invoke` (and REST, MCP, A2A through `ops::invoke`), `world limits
/// --session` and `world mission --session` all go through here.
///
/// # Errors
/// The [`SessionError`] of the refusal; a store failure as [`SessionError::Store`].
pub fn agent(
    conn: &Connection,
    token: &str,
    now: i64,
    unattested: Unattested,
) -> Result<Session, SessionError> {
    resolve_with(conn, token, now, unattested)
}

/// [`agent`] on the open store (no transaction): what the servers check a bearer token with.
///
/// # Errors
/// As [`agent`].
pub fn resolve_stored(
    store: &crate::store::Store,
    token: &str,
    now: i64,
    unattested: Unattested,
) -> Result<Session, SessionError> {
    agent(store.conn(), token, now, unattested)
}

/// [`resolve`], with a credential row that has no mint record accepted when `unattested` is
/// [`Unattested::Allow`] (stores the reference daemon wrote hold only such rows).
pub fn resolve_with(
    conn: &Connection,
    token: &str,
    now: i64,
    unattested: Unattested,
) -> Result<Session, SessionError> {
    if !is_hex64(token) {
        return Err(SessionError::Malformed);
    }
    let id = credential_id(token);
    let Some(row) = sessions::get(conn, &id)? else {
        return Err(if mint_record(conn, &id)?.is_some() {
            SessionError::Revoked
        } else {
            SessionError::Unknown
        });
    };
    let grants: Vec<Grant> =
        serde_json::from_str(&row.grants_json).map_err(|_| SessionError::Unknown)?;
    // Fail closed: a row edited after minting (a raised budget, a later expiry) is refused,
    // and so is a row no mint record vouches for, unless the caller accepts those.
    match mint_record(conn, &id)? {
        Some(record) => {
            if let Some(reason) =
                row_differs(&record, &row.episode, &row.grants_json, row.expires_at)
            {
                return Err(SessionError::Tampered(reason));
            }
        }
        None if unattested == Unattested::Refuse => return Err(SessionError::Unattested),
        None => {}
    }
    if now > row.expires_at {
        return Err(SessionError::Expired);
    }
    Ok(Session {
        credential_id: row.credential_id,
        episode: row.episode,
        grants,
        created_at: row.created_at,
        expires_at: row.expires_at,
    })
}

/// One row of `session list`, with the mint record's attended flag when known.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Listed {
    /// Credential id.
    pub credential_id: String,
    /// Episode.
    pub episode: String,
    /// `now < expires_at` and not revoked.
    pub live: bool,
    /// `live`, `expired`, `revoked` (a mint record whose row `session revoke` removed) or
    /// `unattested` (a live row with no mint record: refused unless `--allow-unattested`).
    pub state: &'static str,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds.
    pub expires_at: i64,
    /// `E=S:B` each.
    pub grants: Vec<String>,
    /// `Some(false)` for `--yes` mints; `None` when minted elsewhere (no record).
    pub attended: Option<bool>,
    /// The grants as minted (for budget seeding; not serialised).
    #[serde(skip)]
    pub minted: Vec<Grant>,
}

/// List up to 500 sessions (optionally one episode), newest first: live rows, and with
/// `all` also expired rows and revoked credentials (mint records whose row is gone;
/// DEC-CLI-21).
pub fn list(
    conn: &Connection,
    episode: Option<&str>,
    now: i64,
    all: bool,
) -> Result<Vec<Listed>, StoreError> {
    let mut attended = std::collections::HashMap::new();
    let mut records = Vec::new();
    {
        for (_, p) in payloads_by_semantic_id(conn, SESSION_MINT)? {
            if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&p) {
                if let (Some(id), Some(a)) = (
                    v.get("credentialId").and_then(|x| x.as_str()),
                    v.get("attended").and_then(|x| x.as_bool()),
                ) {
                    attended.insert(id.to_string(), a);
                }
                records.push(v);
            }
        }
    }
    let mut out = Vec::new();
    for row in sessions::list(conn, episode, now, all, 500)? {
        let CredentialRow {
            credential_id: id,
            episode: ep,
            grants_json: gj,
            created_at: created,
            expires_at: expires,
        } = row;
        let (grants, minted) = match serde_json::from_str::<Vec<Grant>>(&gj) {
            Ok(gs) => (gs.iter().map(Grant::spec).collect(), gs),
            Err(_) => (
                vec!["(undecodable grants_json: fails closed)".to_string()],
                Vec::new(),
            ),
        };
        let attended = attended.get(&id).copied();
        out.push(Listed {
            // A live row no mint record vouches for is `unattested`: the broker refuses it
            // unless --allow-unattested (DEC-TRUST3-2).
            state: match (now < expires, attended) {
                (false, _) => "expired",
                (true, None) => "unattested",
                (true, Some(_)) => "live",
            },
            attended,
            credential_id: id,
            episode: ep,
            live: now < expires,
            created_at: created,
            expires_at: expires,
            grants,
            minted,
        });
    }
    if all {
        let present: std::collections::HashSet<String> =
            out.iter().map(|l| l.credential_id.clone()).collect();
        for v in records {
            let s = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
            let (id, ep) = (s("credentialId"), s("episodeId"));
            if id.is_empty()
                || present.contains(&id)
                || episode.is_some_and(|e| e != ep)
                || sessions::exists(conn, &id)?
            {
                continue;
            }
            let minted = v
                .get("grants")
                .and_then(|g| serde_json::from_value::<Vec<Grant>>(g.clone()).ok())
                .unwrap_or_default();
            let grants = minted.iter().map(Grant::spec).collect();
            out.push(Listed {
                attended: v.get("attended").and_then(|x| x.as_bool()),
                credential_id: id,
                episode: ep,
                live: false,
                state: "revoked",
                created_at: v.get("mintedAt").and_then(|x| x.as_i64()).unwrap_or(0),
                expires_at: v.get("expiresAt").and_then(|x| x.as_i64()).unwrap_or(0),
                grants,
                minted,
            });
        }
        out.sort_by(|a, b| {
            b.created_at
                .cmp(&a.created_at)
                .then_with(|| a.credential_id.cmp(&b.credential_id))
        });
        out.truncate(500);
    }
    Ok(out)
}

/// Delete one credential; returns whether a row existed.
pub fn revoke(tx: &Connection, credential_id: &str) -> Result<bool, StoreError> {
    sessions::delete(tx, credential_id)
}

/// Delete every credential of an episode; returns the revoked ids.
pub fn revoke_episode(tx: &Connection, episode: &str) -> Result<Vec<String>, StoreError> {
    sessions::delete_episode(tx, episode)
}

/// Where a token came from, and any warning to print (never the token itself).
#[derive(Clone, Debug)]
pub struct TokenInput {
    /// The token text.
    pub token: String,
    /// A warning, e.g. a token on argv or a group-readable file.
    pub warning: Option<String>,
}

/// Resolve `--session VALUE` or `WORLD_SESSION`: a 64-hex value is the token itself (warned:
/// argv is visible to other users); anything else names a file of at most 256 bytes holding it
/// (warned when group or others can read it).
pub fn read_token(value: &str, from_argv: bool) -> Result<TokenInput, SessionError> {
    if is_hex64(value) {
        let warning = from_argv.then(|| "a session token on the command line is visible to other users (ps); prefer --session FILE or WORLD_SESSION".to_string());
        return Ok(TokenInput {
            token: value.to_string(),
            warning,
        });
    }
    if looks_like_token(value) {
        return Err(SessionError::Input(
            "the session value looks like a token with extra characters (whitespace, a newline or a `Bearer ` prefix); give exactly the 64 hex characters, or a file holding them (the value is not printed)".into(),
        ));
    }
    let path = Path::new(value);
    // The one bounded-read rule (issue 26 §5): a regular file of at most 256 bytes, opened
    // non-blocking.
    let bytes = crate::fileread::read(path, crate::fileread::Kind::SessionToken).map_err(|e| {
        SessionError::Input(match e {
            crate::fileread::ReadError::TooLarge { .. } => {
                format!("session file {value} is over 256 bytes; a token file holds at most 256")
            }
            other => format!("session file {other}"),
        })
    })?;
    let meta = std::fs::metadata(path)
        .map_err(|e| SessionError::Input(format!("session file {value}: {e}")))?;
    let text = String::from_utf8_lossy(&bytes);
    let token = text.trim().to_string();
    if !is_hex64(&token) {
        return Err(SessionError::Malformed);
    }
    use std::os::unix::fs::PermissionsExt;
    let warning = (meta.permissions().mode() & 0o077 != 0)
        .then(|| format!("session file {value} is readable by group or others; chmod 600 it"));
    Ok(TokenInput { token, warning })
}

/// Why a credential row (`episode`, `grants_json`, `expires_at`) disagrees with its
/// `world/session-mint/v1` record, if it does (issue 13 §3: the record holds the real grants).
pub fn row_differs(
    record: &serde_json::Value,
    episode: &str,
    grants_json: &str,
    expires_at: i64,
) -> Option<String> {
    if record.get("episodeId").and_then(|x| x.as_str()) != Some(episode) {
        return Some("the credential row's episode differs from its mint record".into());
    }
    if record.get("expiresAt").and_then(|x| x.as_i64()) != Some(expires_at) {
        return Some("the credential row's expiry differs from its mint record".into());
    }
    let row: Option<serde_json::Value> = serde_json::from_str(grants_json).ok();
    if row.as_ref() != record.get("grants") {
        return Some("the credential row's grants differ from its mint record".into());
    }
    None
}

/// Does `value` hold a run of 32 or more hex characters (a token, or most of one)? Such a
/// value is never echoed in an error (issue 13 §6).
pub fn looks_like_token(value: &str) -> bool {
    let mut run = 0;
    for b in value.bytes() {
        if b.is_ascii_hexdigit() {
            run += 1;
            if run >= 32 {
                return true;
            }
        } else {
            run = 0;
        }
    }
    false
}

/// Whether this store knows credential `credential_id`: a row, or a mint record (a revoked
/// credential keeps its record).
///
/// # Errors
/// SQLite errors.
pub fn credential_known(conn: &Connection, credential_id: &str) -> Result<bool, StoreError> {
    Ok(sessions::exists(conn, credential_id)? || mint_record(conn, credential_id)?.is_some())
}

/// [`credential_known`] on the open store (no transaction).
///
/// # Errors
/// SQLite errors.
pub fn credential_known_stored(
    store: &crate::store::Store,
    credential_id: &str,
) -> Result<bool, StoreError> {
    credential_known(store.conn(), credential_id)
}

/// Load the mint record of a credential, if this store wrote one.
pub fn mint_record(
    conn: &Connection,
    credential_id: &str,
) -> Result<Option<serde_json::Value>, StoreError> {
    for (_, payload) in payloads_by_semantic_id(conn, SESSION_MINT)? {
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&payload) {
            if v.get("credentialId").and_then(|x| x.as_str()) == Some(credential_id) {
                return Ok(Some(v));
            }
        }
    }
    Ok(None)
}

/// RFC 3339 UTC text for Unix seconds (`1970-01-01T00:00:00Z`).
pub fn rfc3339(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Encode text for a Go-json message (used by callers building JSON by hand).
pub fn go_str(s: &str) -> String {
    let mut v = Vec::new();
    gojson::write_str(&mut v, s);
    String::from_utf8_lossy(&v).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_id_vector() {
        assert_eq!(
            credential_id(&"0".repeat(64)),
            "60e05bd1b195af2f94112fa7197a5c88289058840ce7c6df9693756bc6250f55"
        );
    }

    #[test]
    fn episode_grammar() {
        for ok in ["ep1", "a", "0-x", &"a".repeat(64)] {
            assert!(check_episode(ok).is_ok(), "{ok}");
        }
        for bad in ["", "-a", "A", "a_b", "a:b", "a/b", &"a".repeat(65)] {
            assert!(check_episode(bad).is_err(), "{bad}");
        }
    }

    /// Issue 13 §7: of two mints for one episode in the same second, the later one's
    /// workspace root and limits scope win, every time (not hash order).
    #[test]
    fn the_latest_binding_wins_within_one_second() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("w.db");
        let mut store = crate::store::Store::open_write(
            &db,
            crate::store::WriteOptions {
                create: true,
                wait_lock: None,
            },
        )
        .unwrap();
        for trial in 0..10 {
            for k in 0..2 {
                let tx = store.immediate().unwrap();
                let req = MintRequest {
                    episode: "ep".into(),
                    grants: vec![],
                    ttl: 60,
                    now: 1_700_000_000,
                    attended: false,
                    workspace_root: Some(PathBuf::from(format!("/root-{trial}-{k}"))),
                    limits_scope: Some(format!("scope-{trial}-{k}")),
                    mission: None,
                };
                mint(&tx, &new_token().unwrap(), &req).unwrap();
                tx.commit().unwrap();
            }
            let b = binding(store.conn(), "ep").unwrap().unwrap();
            assert_eq!(
                b.workspace_root,
                format!("/root-{trial}-1"),
                "trial {trial}"
            );
            assert_eq!(b.limits_scope, format!("scope-{trial}-1"), "trial {trial}");
        }
    }

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_700_003_600), "2023-11-14T23:13:20Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }
}
