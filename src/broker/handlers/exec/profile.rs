//! The operator's exec profile, `world/exec-profile/v1` (exec-and-agui.md §1.3): read once,
//! digested (`sha256:` + hex of the file bytes), every field checked, each command's
//! `argv[0]` resolved once to an executable and hashed.
//!
//! Every refusal is `exec profile: <field>: <why>`; an unknown key is
//! `exec profile: <field>: unknown key "<k>"` and a wrong type
//! `exec profile: <field>: has the wrong type: <decoder error>` (Go's decoder wording).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::args::{self, go_quote, Grammar};

/// The only profile schema this host reads.
pub const PROFILE_VERSION: &str = "world/exec-profile/v1";

/// The largest `timeout_ms`: HandlerCap (10 s) − 1 000 ms (D-140-4).
pub const MAX_TIMEOUT_MS: u64 = 9000;

/// The plan's argument bound, which `max_args` cannot exceed.
pub const MAX_ARGS: usize = 16;

/// The child-environment names World always writes, in rendered order (§1.6).
pub const WORLD_ENV: [&str; 9] = [
    "HOME",
    "TMPDIR",
    "PATH",
    "LANG",
    "LC_ALL",
    "PYTHONPYCACHEPREFIX",
    "npm_config_cache",
    "CI",
    "NO_COLOR",
];

/// Registry and credential variables a profile may not set (they would point a package
/// manager at another registry or hand it a credential); the reference's list is [U], this
/// is `world`'s (docs/DECISIONS.md DEC-EXEC-7).
pub const REGISTRY_ENV: [&str; 12] = [
    "NPM_CONFIG_REGISTRY",
    "npm_config_registry",
    "NPM_TOKEN",
    "NODE_AUTH_TOKEN",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "UV_INDEX_URL",
    "GOPROXY",
    "GONOSUMDB",
    "GOPRIVATE",
    "CARGO_REGISTRIES_CRATES_IO_PROTOCOL",
    "CARGO_REGISTRY_TOKEN",
];

/// A profile load refusal naming the field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("exec profile: {field}: {why}")]
pub struct ProfileError {
    /// The field (`project`, `commands.test.argv`, …).
    pub field: String,
    /// Why.
    pub why: String,
}

fn perr(field: impl Into<String>, why: impl Into<String>) -> ProfileError {
    ProfileError {
        field: field.into(),
        why: why.into(),
    }
}

/// One command, its grammar and its resolved executable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    /// The id (`^[a-z][a-z0-9-]{0,31}$`).
    pub id: String,
    /// The operator's argv as written (`argv[0]` a bare name or an absolute path).
    pub argv: Vec<String>,
    /// The argument law for this command.
    pub grammar: Grammar,
    /// The absolute path `argv[0]` resolved to at load.
    pub argv0: PathBuf,
    /// Its sha256 at load (bare hex); re-verified before every call.
    pub argv0_sha256: String,
}

/// A loaded, validated profile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    /// `project` (`^[a-z0-9][a-z0-9-]{0,63}$`).
    pub project: String,
    /// `root`, the command's cwd inside the worktree (`.` by default).
    pub root: String,
    /// `path`, joined with `:` as the child `PATH`.
    pub path: Vec<String>,
    /// `env`, by name.
    pub env: BTreeMap<String, String>,
    /// `read_roots`.
    pub read_roots: Vec<String>,
    /// `caches`: name → optional seed directory.
    pub caches: BTreeMap<String, Option<String>>,
    /// `timeout_ms` (1–9000).
    pub timeout_ms: u64,
    /// `commands`, by id.
    pub commands: BTreeMap<String, Command>,
    /// `probe`: the toolchain argv of the startup probe (default: the first command's
    /// `argv[0]` with `--version`), resolved like a command.
    pub probe: Command,
    /// `sha256:<hex>` of the exact bytes read.
    pub digest: String,
}

fn is_project(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// `^[a-z][a-z0-9-]{0,31}$`: a command id (and the payload's `command`).
pub fn is_command_id(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 32
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

fn is_env_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// An absolute path in clean form (Go's `filepath.Clean(p) == p`).
pub fn clean_abs(p: &str) -> bool {
    p.starts_with('/') && clean(p) == p
}

/// Go's `filepath.Clean` for the paths a profile holds.
fn clean(p: &str) -> String {
    let abs = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !abs {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    let joined = parts.join("/");
    match (abs, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn wrong_type(field: &str, v: &Value, go_type: &str) -> ProfileError {
    let what = match v {
        Value::Number(n) => format!("number {n}"),
        other => json_kind(other).to_string(),
    };
    perr(
        field,
        format!(
            "has the wrong type: json: cannot unmarshal {what} into Go value of type {go_type}"
        ),
    )
}

fn want_str(field: &str, v: &Value) -> Result<String, ProfileError> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Null => Ok(String::new()),
        other => Err(wrong_type(field, other, "string")),
    }
}

fn want_strs(field: &str, v: &Value) -> Result<Vec<String>, ProfileError> {
    match v {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => Ok(s.clone()),
                Value::Null => Ok(String::new()),
                other => Err(wrong_type(field, other, "string")),
            })
            .collect(),
        other => Err(wrong_type(field, other, "[]string")),
    }
}

fn want_int(field: &str, v: &Value) -> Result<i64, ProfileError> {
    match v {
        Value::Number(n) => n.as_i64().ok_or_else(|| wrong_type(field, v, "int")),
        Value::Null => Ok(0),
        other => Err(wrong_type(field, other, "int")),
    }
}

fn want_obj<'a>(
    field: &str,
    v: &'a Value,
    go_type: &str,
) -> Result<Option<&'a Map<String, Value>>, ProfileError> {
    match v {
        Value::Object(m) => Ok(Some(m)),
        Value::Null => Ok(None),
        other => Err(wrong_type(field, other, go_type)),
    }
}

/// An object whose keys are exactly among `allowed` (case-sensitive).
fn strict<'a>(
    field: &str,
    v: &'a Value,
    allowed: &[&str],
) -> Result<&'a Map<String, Value>, ProfileError> {
    let Value::Object(m) = v else {
        return Err(perr(field, "is not a JSON object"));
    };
    if let Some(k) = m.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(perr(field, format!("unknown key {}", go_quote(k))));
    }
    Ok(m)
}

impl Profile {
    /// Parses and checks a profile's bytes, resolving each command's `argv[0]` on `path`
    /// (the filesystem is read for that only).
    ///
    /// # Errors
    /// [`ProfileError`] for the first field that fails, in the reference's order: keys,
    /// required keys, `profile`, `project`, `root`, `path`, `read_roots`, `caches`, `env`,
    /// `timeout_ms`, `commands` (by id, byte order), `probe`.
    pub fn parse(data: &[u8]) -> Result<Profile, ProfileError> {
        let top: Value =
            serde_json::from_slice(data).map_err(|_| perr("profile", "is not a JSON object"))?;
        let top = strict(
            "profile",
            &top,
            &[
                "profile",
                "project",
                "root",
                "path",
                "env",
                "read_roots",
                "caches",
                "timeout_ms",
                "commands",
                "probe",
            ],
        )?;
        for k in ["profile", "project", "path", "timeout_ms", "commands"] {
            if !top.contains_key(k) {
                return Err(perr(k, "is required"));
            }
        }
        let get = |k: &str| top.get(k).unwrap_or(&Value::Null);
        check_version(get("profile"))?;
        let digest = format!("sha256:{}", hex::encode(Sha256::digest(data)));
        let project = parse_project(get("project"))?;
        let root = parse_root(top.get("root"))?;
        let path = parse_path(get("path"))?;
        let read_roots = parse_read_roots(top.get("read_roots"))?;
        let caches = match top.get("caches") {
            Some(v) => parse_caches(v)?,
            None => BTreeMap::new(),
        };
        let env = parse_env(top.get("env"), &caches, &read_roots)?;
        let timeout = parse_timeout(get("timeout_ms"))?;
        let commands = parse_commands(get("commands"), &path)?;
        let probe = parse_probe(top.get("probe"), &commands, &path)?;
        Ok(Profile {
            project,
            root,
            path,
            env,
            read_roots,
            caches,
            timeout_ms: timeout,
            commands,
            probe,
            digest,
        })
    }

    /// Reads `file` once and parses it ([`Profile::parse`]).
    ///
    /// # Errors
    /// `exec profile <file>: <io error>` or the [`ProfileError`] text.
    pub fn load(file: &Path) -> Result<Profile, super::ExecError> {
        // A regular file of at most 1 MiB, opened non-blocking (a FIFO or /dev/zero is
        // refused at once; issue 26 §5).
        let data = crate::fileread::read(file, crate::fileread::Kind::ExecProfile)
            .map_err(|e| super::ExecError::Config(format!("exec profile {e}")))?;
        Ok(Profile::parse(&data)?)
    }
}

/// `profile`: the one version this host reads.
fn check_version(v: &Value) -> Result<(), ProfileError> {
    let version = want_str("profile", v)?;
    if version != PROFILE_VERSION {
        return Err(perr(
            "profile",
            format!(
                "is {}; this host reads {}",
                go_quote(&version),
                go_quote(PROFILE_VERSION)
            ),
        ));
    }
    Ok(())
}

/// `project`: a project name (`^[a-z0-9][a-z0-9-]{0,63}$`).
fn parse_project(v: &Value) -> Result<String, ProfileError> {
    let project = want_str("project", v)?;
    if !is_project(&project) {
        return Err(perr(
            "project",
            format!(
                "{} does not match ^[a-z0-9][a-z0-9-]{{0,63}}$",
                go_quote(&project)
            ),
        ));
    }
    Ok(project)
}

/// `root`: a clean relative path inside the worktree, `.` when absent.
fn parse_root(v: Option<&Value>) -> Result<String, ProfileError> {
    let root = match v {
        Some(v) => want_str("root", v)?,
        None => ".".into(),
    };
    if !args::relpath_ok(&root) || clean(&root) != root {
        return Err(perr(
            "root",
            format!(
                "{} is not a clean relative path inside the worktree",
                go_quote(&root)
            ),
        ));
    }
    Ok(root)
}

/// `path`: a non-empty list of clean absolute directories without `:`.
fn parse_path(v: &Value) -> Result<Vec<String>, ProfileError> {
    let path = want_strs("path", v)?;
    if path.is_empty() {
        return Err(perr("path", "is empty"));
    }
    if let Some(d) = path.iter().find(|d| !clean_abs(d) || d.contains(':')) {
        return Err(perr(
            "path",
            format!(
                "{} is not a clean absolute directory without ':'",
                go_quote(d)
            ),
        ));
    }
    Ok(path)
}

/// `read_roots`: clean absolute paths, none when absent.
fn parse_read_roots(v: Option<&Value>) -> Result<Vec<String>, ProfileError> {
    let read_roots = match v {
        Some(v) => want_strs("read_roots", v)?,
        None => Vec::new(),
    };
    if let Some(r) = read_roots.iter().find(|r| !clean_abs(r)) {
        return Err(perr(
            "read_roots",
            format!("{} is not a clean absolute path", go_quote(r)),
        ));
    }
    Ok(read_roots)
}

/// `env`: names that are valid and not a `caches` variable, values without NUL, and a
/// `GOMODCACHE` inside a `read_roots` entry.
fn parse_env(
    v: Option<&Value>,
    caches: &BTreeMap<String, Option<String>>,
    read_roots: &[String],
) -> Result<BTreeMap<String, String>, ProfileError> {
    let mut env = BTreeMap::new();
    if let Some(v) = v {
        if let Some(m) = want_obj("env", v, "map[string]string")? {
            for (name, value) in m {
                env.insert(name.clone(), want_str("env", value)?);
            }
        }
    }
    for (name, value) in &env {
        env_name_ok("env", name)?;
        if caches.contains_key(name) {
            return Err(perr(
                "env",
                format!("{} is a caches variable; World sets it", go_quote(name)),
            ));
        }
        if value.contains('\0') {
            return Err(perr("env", format!("{} has a NUL byte", go_quote(name))));
        }
    }
    if let Some(m) = env.get("GOMODCACHE") {
        if !under_any(m, read_roots) {
            return Err(perr(
                "env",
                format!(
                    "GOMODCACHE {} is not inside a read_roots entry",
                    go_quote(m)
                ),
            ));
        }
    }
    Ok(env)
}

/// `timeout_ms`: milliseconds in 1–[`MAX_TIMEOUT_MS`].
fn parse_timeout(v: &Value) -> Result<u64, ProfileError> {
    let timeout = want_int("timeout_ms", v)?;
    if !(1..=MAX_TIMEOUT_MS as i64).contains(&timeout) {
        return Err(perr(
            "timeout_ms",
            format!("{timeout} is outside 1–{MAX_TIMEOUT_MS} (HandlerCap − 1 000 ms, D-140-4)"),
        ));
    }
    Ok(timeout as u64)
}

/// `commands`: a non-empty map, each command checked in byte order of its id.
fn parse_commands(v: &Value, path: &[String]) -> Result<BTreeMap<String, Command>, ProfileError> {
    let mut commands = BTreeMap::new();
    if let Some(m) = want_obj("commands", v, "map[string]json.RawMessage")? {
        let mut ids: Vec<&String> = m.keys().collect();
        ids.sort();
        for id in ids {
            let c = parse_command(id, &m[id.as_str()], path)?;
            commands.insert(id.clone(), c);
        }
    }
    if commands.is_empty() {
        return Err(perr("commands", "is empty"));
    }
    Ok(commands)
}

/// `probe`: its argv, or the first command's `argv[0] --version` when absent; `argv[0]` is
/// resolved on `path`.
fn parse_probe(
    v: Option<&Value>,
    commands: &BTreeMap<String, Command>,
    path: &[String],
) -> Result<Command, ProfileError> {
    let probe_argv = match v {
        None => {
            let first = commands
                .values()
                .next()
                .ok_or_else(|| perr("commands", "is empty"))?;
            vec![first.argv[0].clone(), "--version".into()]
        }
        Some(v) => {
            let argv = want_strs("probe", v)?;
            if argv.is_empty() {
                return Err(perr("probe", "is empty"));
            }
            if argv.iter().any(|a| a.is_empty() || a.contains('\0')) {
                return Err(perr("probe", "has an empty or NUL-bearing item"));
            }
            argv
        }
    };
    let (argv0, sum) = resolve_argv0("probe", &probe_argv[0], path)?;
    Ok(Command {
        id: String::new(),
        argv: probe_argv,
        grammar: Grammar::default(),
        argv0,
        argv0_sha256: sum,
    })
}

fn parse_caches(v: &Value) -> Result<BTreeMap<String, Option<String>>, ProfileError> {
    let mut out = BTreeMap::new();
    let Some(m) = want_obj("caches", v, "map[string]json.RawMessage")? else {
        return Ok(out);
    };
    for (name, obj) in m {
        env_name_ok("caches", name)?;
        let field = format!("caches.{name}");
        let fields = strict(&field, obj, &["seed"])?;
        let seed = match fields.get("seed") {
            Some(s) => {
                let seed = want_str(&format!("{field}.seed"), s)?;
                if !clean_abs(&seed) {
                    return Err(perr(
                        format!("{field}.seed"),
                        format!("{} is not a clean absolute path", go_quote(&seed)),
                    ));
                }
                Some(seed)
            }
            None => None,
        };
        out.insert(name.clone(), seed);
    }
    Ok(out)
}

/// Refuses a variable name outside the grammar or one World owns (§1.3).
fn env_name_ok(field: &str, name: &str) -> Result<(), ProfileError> {
    let upper = name.to_ascii_uppercase();
    if !is_env_name(name) {
        return Err(perr(
            field,
            format!(
                "{} is not a variable name (^[A-Za-z_][A-Za-z0-9_]*$)",
                go_quote(name)
            ),
        ));
    }
    if WORLD_ENV.contains(&name)
        || name == "SANDBOX_RUNTIME"
        || upper == "NO_PROXY"
        || upper.ends_with("_PROXY")
        || upper.starts_with("GIT_")
        || REGISTRY_ENV.contains(&name)
    {
        return Err(perr(
            field,
            format!("{} is World-owned; a profile cannot set it", go_quote(name)),
        ));
    }
    Ok(())
}

fn under_any(p: &str, roots: &[String]) -> bool {
    roots
        .iter()
        .any(|r| p == r || p.starts_with(&format!("{}/", r.trim_end_matches('/'))))
}

fn parse_command(id: &str, raw: &Value, path: &[String]) -> Result<Command, ProfileError> {
    let field = format!("commands.{id}");
    if !is_command_id(id) {
        return Err(perr(
            "commands",
            format!(
                "command id {} does not match ^[a-z][a-z0-9-]{{0,31}}$",
                go_quote(id)
            ),
        ));
    }
    let m = strict(
        &field,
        raw,
        &[
            "argv",
            "flags",
            "positional",
            "suffixes",
            "max_args",
            "passthrough",
        ],
    )?;
    let null = Value::Null;
    let argv = want_strs(&format!("{field}.argv"), m.get("argv").unwrap_or(&null))?;
    if argv.is_empty() {
        return Err(perr(format!("{field}.argv"), "is empty"));
    }
    if argv.iter().any(|a| a.is_empty() || a.contains('\0')) {
        return Err(perr(
            format!("{field}.argv"),
            "has an empty or NUL-bearing item",
        ));
    }
    let mut g = Grammar::default();
    if let Some(raw) = m.get("flags") {
        parse_flags(&format!("{field}.flags"), raw, &mut g)?;
    }
    if let Some(v) = m.get("positional") {
        let p = want_str(&format!("{field}.positional"), v)?;
        match p.as_str() {
            "" => {}
            args::POS_RELPATH | args::POS_PKGPATTERN | args::POS_TESTFILE => g.positional = Some(p),
            _ => {
                return Err(perr(
                    format!("{field}.positional"),
                    format!("{} is not relpath, pkgpattern or testfile", go_quote(&p)),
                ))
            }
        }
    }
    if let Some(v) = m.get("suffixes") {
        g.suffixes = want_strs(&format!("{field}.suffixes"), v)?;
    }
    let max_args = match m.get("max_args") {
        Some(v) => want_int(&format!("{field}.max_args"), v)?,
        None => 0,
    };
    let passthrough = match m.get("passthrough") {
        Some(v) => want_str(&format!("{field}.passthrough"), v)?,
        None => String::new(),
    };
    if (g.positional.as_deref() == Some(args::POS_TESTFILE)) == g.suffixes.is_empty() {
        return Err(perr(
            format!("{field}.suffixes"),
            "are required with, and only with, positional testfile",
        ));
    }
    if g.suffixes.iter().any(String::is_empty) {
        return Err(perr(format!("{field}.suffixes"), "has an empty suffix"));
    }
    if !(0..=MAX_ARGS as i64).contains(&max_args) {
        return Err(perr(
            format!("{field}.max_args"),
            format!("{max_args} is outside 0–{MAX_ARGS}"),
        ));
    }
    g.max_args = max_args as usize;
    if !passthrough.is_empty() && passthrough != args::PASSTHROUGH {
        return Err(perr(
            format!("{field}.passthrough"),
            format!("{} is not \"--\"", go_quote(&passthrough)),
        ));
    }
    g.passthrough = passthrough == args::PASSTHROUGH;
    let (argv0, argv0_sha256) = resolve_argv0(&format!("{field}.argv"), &argv[0], path)?;
    Ok(Command {
        id: id.to_string(),
        argv,
        grammar: g,
        argv0,
        argv0_sha256,
    })
}

fn parse_flags(field: &str, raw: &Value, g: &mut Grammar) -> Result<(), ProfileError> {
    let Some(flags) = want_obj(field, raw, "map[string]json.RawMessage")? else {
        return Ok(());
    };
    for (name, v) in flags {
        if !name.starts_with('-') || name == "--" || name.contains('=') || name.len() < 2 {
            return Err(perr(
                field,
                format!("{} is not a flag name", go_quote(name)),
            ));
        }
        let (class, sep) = match v {
            Value::String(c) => (c.clone(), false),
            other => {
                let f = format!("{field}.{name}");
                let obj = strict(&f, other, &["class", "form"])?;
                let class = want_str(
                    &format!("{f}.class"),
                    obj.get("class").unwrap_or(&Value::Null),
                )?;
                let mut sep = false;
                if let Some(fv) = obj.get("form") {
                    let form = want_str(&format!("{f}.form"), fv)?;
                    if form != "eq" && form != "sep" {
                        return Err(perr(
                            format!("{f}.form"),
                            format!("{} is not \"eq\" or \"sep\"", go_quote(&form)),
                        ));
                    }
                    if class == args::CLASS_BOOL {
                        return Err(perr(
                            format!("{f}.form"),
                            "a bool flag takes no value, so it has no form",
                        ));
                    }
                    sep = form == "sep";
                }
                (class, sep)
            }
        };
        if !args::class_ok(&class) {
            return Err(perr(
                format!("{field}.{name}.class"),
                format!(
                    "{} is not bool, regex, int, relpath or enum:[…]",
                    go_quote(&class)
                ),
            ));
        }
        if sep {
            g.sep_flags.push(name.clone());
        }
        g.flags.insert(name.clone(), class);
    }
    Ok(())
}

/// The sha256 of a file's bytes, bare hex.
///
/// # Errors
/// The I/O error.
pub fn sha256_file(p: &Path) -> std::io::Result<String> {
    use std::io::Read;
    // Regular files only, opened non-blocking: a binary swapped for a FIFO cannot hang this.
    let mut f = crate::fileread::open_regular(p).map_err(std::io::Error::other)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(buf.get(..n).unwrap_or_default());
    }
    Ok(hex::encode(h.finalize()))
}

/// Resolves `argv[0]` once: an absolute path as given (cleaned), a bare name on `path`, to a
/// regular file with an exec bit and no `=` in its path; returns it with its sha256.
fn resolve_argv0(
    field: &str,
    name: &str,
    path: &[String],
) -> Result<(PathBuf, String), ProfileError> {
    use std::os::unix::fs::PermissionsExt;
    let candidates: Vec<PathBuf> = if name.starts_with('/') {
        vec![PathBuf::from(clean(name))]
    } else if name.contains('/') {
        return Err(perr(
            field,
            format!(
                "argv[0] {} is neither a bare name nor an absolute path",
                go_quote(name)
            ),
        ));
    } else {
        path.iter().map(|d| Path::new(d).join(name)).collect()
    };
    for c in candidates {
        let Ok(meta) = std::fs::metadata(&c) else {
            continue;
        };
        if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
            continue;
        }
        let shown = c.to_string_lossy().into_owned();
        if shown.contains('=') {
            return Err(perr(
                field,
                format!("argv[0] resolves to {}, which holds '='", go_quote(&shown)),
            ));
        }
        let sum = sha256_file(&c).map_err(|e| perr(field, format!("{shown}: {e}")))?;
        return Ok((c, sum));
    }
    Err(perr(
        field,
        format!(
            "argv[0] {} does not resolve on path [{}] to an executable",
            go_quote(name),
            path.join(" ")
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> serde_json::Value {
        serde_json::json!({
            "profile": "world/exec-profile/v1",
            "project": "demo",
            "path": ["/usr/bin", "/bin"],
            "timeout_ms": 5000,
            "commands": {"sh": {"argv": ["sh", "-c"], "positional": "relpath", "max_args": 2}}
        })
    }

    fn err_of(v: &serde_json::Value) -> String {
        Profile::parse(&serde_json::to_vec(v).unwrap())
            .expect_err("refused")
            .to_string()
    }

    #[test]
    fn a_good_profile_loads_with_digest_and_resolved_argv0() {
        let bytes = serde_json::to_vec(&base()).unwrap();
        let p = Profile::parse(&bytes).expect("loads");
        assert_eq!(p.project, "demo");
        assert_eq!(p.root, ".");
        assert_eq!(
            p.digest,
            format!("sha256:{}", hex::encode(Sha256::digest(&bytes)))
        );
        let sh = &p.commands["sh"];
        assert!(sh.argv0.is_absolute());
        assert_eq!(sh.argv0_sha256, sha256_file(&sh.argv0).unwrap());
        assert_eq!(p.probe.argv, vec!["sh", "--version"]);
    }

    #[test]
    fn refusals_name_the_field() {
        let mut v = base();
        v["Project"] = "x".into();
        assert_eq!(err_of(&v), "exec profile: profile: unknown key \"Project\"");
        let mut v = base();
        v.as_object_mut().unwrap().remove("timeout_ms");
        assert_eq!(err_of(&v), "exec profile: timeout_ms: is required");
        let mut v = base();
        v["profile"] = "world/exec-profile/v2".into();
        assert_eq!(
            err_of(&v),
            "exec profile: profile: is \"world/exec-profile/v2\"; this host reads \"world/exec-profile/v1\""
        );
        let mut v = base();
        v["timeout_ms"] = 9001.into();
        assert_eq!(
            err_of(&v),
            "exec profile: timeout_ms: 9001 is outside 1–9000 (HandlerCap − 1 000 ms, D-140-4)"
        );
        let mut v = base();
        v["timeout_ms"] = "5".into();
        assert_eq!(
            err_of(&v),
            "exec profile: timeout_ms: has the wrong type: json: cannot unmarshal string into Go value of type int"
        );
        let mut v = base();
        v["env"] = serde_json::json!({"HTTPS_PROXY": "x"});
        assert_eq!(
            err_of(&v),
            "exec profile: env: \"HTTPS_PROXY\" is World-owned; a profile cannot set it"
        );
        let mut v = base();
        v["env"] = serde_json::json!({"git_dir": "x"});
        assert!(err_of(&v).contains("World-owned"));
        let mut v = base();
        v["path"] = serde_json::json!(["/usr/bin/"]);
        assert!(err_of(&v).starts_with("exec profile: path: \"/usr/bin/\" is not a clean"));
        let mut v = base();
        v["commands"] = serde_json::json!({});
        assert_eq!(err_of(&v), "exec profile: commands: is empty");
        let mut v = base();
        v["commands"]["sh"]["argv"] = serde_json::json!(["no-such-tool-xyz"]);
        assert!(err_of(&v).starts_with(
            "exec profile: commands.sh.argv: argv[0] \"no-such-tool-xyz\" does not resolve"
        ));
        let mut v = base();
        v["commands"]["sh"]["flags"] = serde_json::json!({"-v": {"class": "bool", "form": "sep"}});
        assert_eq!(
            err_of(&v),
            "exec profile: commands.sh.flags.-v.form: a bool flag takes no value, so it has no form"
        );
        let mut v = base();
        v["commands"]["sh"]["positional"] = "testfile".into();
        assert_eq!(
            err_of(&v),
            "exec profile: commands.sh.suffixes: are required with, and only with, positional testfile"
        );
        let mut v = base();
        v["root"] = "../up".into();
        assert!(err_of(&v).starts_with("exec profile: root: \"../up\""));
        assert_eq!(
            Profile::parse(b"[1]").expect_err("x").to_string(),
            "exec profile: profile: is not a JSON object"
        );
    }

    #[test]
    fn clean_matches_go() {
        assert_eq!(clean("/a/./b/../c/"), "/a/c");
        assert_eq!(clean("a/../.."), "..");
        assert_eq!(clean("."), ".");
        assert!(clean_abs("/usr/bin") && !clean_abs("/usr//bin") && !clean_abs("usr"));
    }
}
