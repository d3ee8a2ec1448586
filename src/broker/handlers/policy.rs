//! The per-episode AILANG policy and its run variants (authority-and-broker.md §12.2, §12.3,
//! §13 "Capabilities").
//!
//! Base policy keys: `security_mode = "restricted"`, `allowed_caps = ["IO", "FS"]`,
//! `fs_sandbox = <worktree>`, `timeout_ms = 8000`, `fs_deny_write` = [`deny_write_patterns`]
//! (198 patterns), `entry = "main"`, `[budgets] FS = 1000`. Variants per requested cap set:
//! ⊆ {IO, FS, Declassify} → restricted (FS always allowed, FS budget 0 when not requested);
//! with `Net` → restricted plus `net_allow` (and `net_allow_http`); with `Env` → `trusted_host`,
//! `.git/**` prepended to the deny list and the four byte limits explicit.

use std::net::{IpAddr, SocketAddr};

use super::RunCapsConfig;

/// The policy's `timeout_ms`: 8000 ms, 2 s under the handler's 10 s (§12.2).
pub const POLICY_TIMEOUT_MS: u64 = 8000;

/// Capability names a run may ask for, sorted (transitions.md §13.2).
pub const KNOWN_CAPS: [&str; 5] = ["Declassify", "Env", "FS", "IO", "Net"];

/// Capabilities beyond the base set, each needing the operator's `--run-allow-caps`.
pub const OPERATOR_CAPS: [&str; 3] = ["Declassify", "Env", "Net"];

/// The default run caps: `FS`, `IO` (sorted).
pub const BASE_CAPS: [&str; 2] = ["FS", "IO"];

/// The byte limits a `trusted_host` variant sets explicitly (§12.2).
pub const TRUSTED_HOST_LIMITS: [(&str, u64); 4] = [
    ("max_fs_transfer_bytes", 8_388_608),
    ("max_module_graph_bytes", 16_777_216),
    ("max_output_bytes", 8_388_608),
    ("max_source_bytes", 1_048_576),
];

/// Simple-fold orbit of a character, starting with itself (Go's `unicode.SimpleFold` order
/// from the lowercase letter: `s → ſ → S`, `k → K (Kelvin) → K`).
fn fold_orbit(c: char) -> Vec<char> {
    match c {
        's' => vec!['s', '\u{017F}', 'S'],
        'k' => vec!['k', '\u{212A}', 'K'],
        c if c.is_ascii_lowercase() => vec![c, c.to_ascii_uppercase()],
        c => vec![c],
    }
}

/// Every spelling of `name` under simple case folding, in orbit order per position.
fn fold_variants(name: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    for c in name.chars() {
        let orbit = fold_orbit(c);
        out = out
            .iter()
            .flat_map(|prefix| orbit.iter().map(move |o| format!("{prefix}{o}")))
            .collect();
    }
    out
}

/// A `path.Match` character-class pattern over each character's fold orbit
/// (`.gitmodules` → `.[gG][iI][tT][mM][oO][dD][uU][lL][eE][sſS]`).
fn fold_class(name: &str) -> String {
    name.chars()
        .map(|c| {
            let orbit = fold_orbit(c);
            if orbit.len() == 1 {
                c.to_string()
            } else {
                format!("[{}]", orbit.iter().collect::<String>())
            }
        })
        .collect()
}

/// The rendered `fs_deny_write` list (§12.2): each of `.github`, `.pi`, `.claude`, `.ailang` as
/// every simple-fold variant plus `/**`, then `.gitmodules` and `.gitattributes` as fold-orbit
/// classes; 198 patterns.
pub fn deny_write_patterns() -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for dir in [".github", ".pi", ".claude", ".ailang"] {
        out.extend(fold_variants(dir).into_iter().map(|v| format!("{v}/**")));
    }
    out.push(fold_class(".gitmodules"));
    out.push(fold_class(".gitattributes"));
    out
}

/// Why a policy cannot be rendered or a run allowlist is refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PolicyError {
    /// The sandbox root cannot be written into TOML unescaped, or is not clean and absolute.
    #[error("episode policy root {0:?} is not a clean absolute path without characters TOML would need escaped")]
    BadRoot(String),
    /// A cap set is not canonical (sorted, distinct, known, not Env with Net).
    #[error("caps {0}")]
    BadCaps(String),
    /// The operator's run allowlist is refused at startup.
    #[error("run capabilities: {0}")]
    BadConfig(String),
}

/// One rendered policy's variable part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicySpec {
    /// `security_mode`: `restricted` or `trusted_host`.
    pub mode: &'static str,
    /// `allowed_caps`, in rendered order.
    pub caps: Vec<String>,
    /// Prepend `.git/**` to the deny list.
    pub git_deny: bool,
    /// `net_allow` (rendered only when non-empty).
    pub net_allow: Vec<String>,
    /// `net_allow_http = true` (only with `net_allow`).
    pub net_allow_http: bool,
    /// Render [`TRUSTED_HOST_LIMITS`].
    pub limits: bool,
    /// `[budgets] FS`.
    pub fs_budget: u64,
}

impl PolicySpec {
    /// The base episode policy (§12.2).
    pub fn base() -> PolicySpec {
        PolicySpec {
            mode: "restricted",
            caps: vec!["IO".into(), "FS".into()],
            git_deny: false,
            net_allow: Vec::new(),
            net_allow_http: false,
            limits: false,
            fs_budget: 1000,
        }
    }

    /// The variant for a canonical cap set (§12.2 "Run variants"); the base set gives
    /// [`PolicySpec::base`].
    ///
    /// Errors: [`PolicyError::BadCaps`] for a non-canonical set.
    pub fn for_caps(caps: &[String], operator: &RunCapsConfig) -> Result<PolicySpec, PolicyError> {
        check_caps(caps)?;
        if caps.iter().map(String::as_str).eq(BASE_CAPS) {
            return Ok(PolicySpec::base());
        }
        let has = |c: &str| caps.iter().any(|x| x == c);
        let mut effective: Vec<String> = caps.to_vec();
        let fs_budget = if has("FS") {
            1000
        } else {
            effective.push("FS".into());
            0
        };
        effective.sort();
        let mut spec = PolicySpec {
            caps: effective,
            fs_budget,
            ..PolicySpec::base()
        };
        spec.mode = "restricted";
        if has("Net") {
            spec.net_allow = operator.net_allow.clone();
            spec.net_allow_http = operator.net_allow_http;
        }
        if has("Env") {
            spec.mode = "trusted_host";
            spec.git_deny = true;
            spec.limits = true;
        }
        Ok(spec)
    }
}

/// Requires a canonical cap set: non-empty, sorted, distinct, known, not both Env and Net.
///
/// Errors: [`PolicyError::BadCaps`].
pub fn check_caps(caps: &[String]) -> Result<(), PolicyError> {
    if caps.is_empty() {
        return Err(PolicyError::BadCaps("names no capability".into()));
    }
    for (i, c) in caps.iter().enumerate() {
        if !KNOWN_CAPS.contains(&c.as_str()) {
            return Err(PolicyError::BadCaps(format!(
                "names the unknown capability {c:?}"
            )));
        }
        if i > 0 && caps.get(i - 1).is_some_and(|prev| prev >= c) {
            return Err(PolicyError::BadCaps(format!(
                "{caps:?} is not sorted and distinct"
            )));
        }
    }
    if caps.iter().any(|c| c == "Env") && caps.iter().any(|c| c == "Net") {
        return Err(PolicyError::BadCaps(
            "names both Env and Net; one run takes at most one of them".into(),
        ));
    }
    Ok(())
}

fn toml_strings(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("\"{s}\"")).collect();
    format!("[{}]", quoted.join(", "))
}

/// Renders the policy TOML for sandbox `root` (the canonical worktree).
///
/// Errors: [`PolicyError::BadRoot`] when `root` is not absolute, or holds `"`, `\`, a control
/// character or U+FFFD (nothing is ever escaped).
pub fn render_policy(root: &str, spec: &PolicySpec) -> Result<Vec<u8>, PolicyError> {
    let clean = root.starts_with('/')
        && (root == "/" || !root.ends_with('/'))
        && !root.split('/').any(|s| s == "." || s == "..")
        && !root.contains("//");
    if !clean
        || root
            .chars()
            .any(|c| c == '"' || c == '\\' || c.is_control() || c == '\u{FFFD}')
    {
        return Err(PolicyError::BadRoot(root.to_owned()));
    }
    let mut deny = deny_write_patterns();
    if spec.git_deny {
        deny.insert(0, ".git/**".into());
    }
    let mut out = String::new();
    out.push_str(&format!("security_mode = \"{}\"\n", spec.mode));
    out.push_str(&format!("allowed_caps = {}\n", toml_strings(&spec.caps)));
    out.push_str(&format!("fs_sandbox = \"{root}\"\n"));
    out.push_str(&format!("timeout_ms = {POLICY_TIMEOUT_MS}\n"));
    out.push_str(&format!("fs_deny_write = {}\n", toml_strings(&deny)));
    out.push_str("entry = \"main\"\n");
    if !spec.net_allow.is_empty() {
        out.push_str(&format!("net_allow = {}\n", toml_strings(&spec.net_allow)));
        if spec.net_allow_http {
            out.push_str("net_allow_http = true\n");
        }
    }
    if spec.limits {
        for (key, value) in TRUSTED_HOST_LIMITS {
            out.push_str(&format!("{key} = {value}\n"));
        }
    }
    out.push_str(&format!("\n[budgets]\nFS = {}\n", spec.fs_budget));
    Ok(out.into_bytes())
}

/// Validates the operator's run allowlist at startup (§13 "Capabilities"): names from
/// `Declassify`, `Env`, `Net`, each once; `Net` needs at least one `--run-net-allow`;
/// `--run-net-allow`/`--run-net-allow-http` need `Net`; each entry is a canonical loopback
/// `IP:PORT` literal with a port 1–65535, named once.
///
/// Errors: [`PolicyError::BadConfig`] naming the bad part.
pub fn validate_run_caps_config(config: &RunCapsConfig) -> Result<(), PolicyError> {
    let bad = |s: String| Err(PolicyError::BadConfig(s));
    for (i, name) in config.allow.iter().enumerate() {
        if !OPERATOR_CAPS.contains(&name.as_str()) {
            return bad(format!("--run-allow-caps names {name:?}; it admits only Declassify, Env, Net (IO and FS are always available)"));
        }
        if config.allow.iter().take(i).any(|n| n == name) {
            return bad(format!("--run-allow-caps names {name:?} twice"));
        }
    }
    let net = config.allow.iter().any(|n| n == "Net");
    if net && config.net_allow.is_empty() {
        return bad("--run-allow-caps Net needs at least one --run-net-allow IP:PORT".into());
    }
    if !net && !config.net_allow.is_empty() {
        return bad("--run-net-allow is set but --run-allow-caps does not name Net".into());
    }
    if !net && config.net_allow_http {
        return bad("--run-net-allow-http is set but --run-allow-caps does not name Net".into());
    }
    for (i, entry) in config.net_allow.iter().enumerate() {
        let Ok(addr) = entry.parse::<SocketAddr>() else {
            return bad(format!("--run-net-allow {entry:?} is not a loopback IP:PORT literal (e.g. 127.0.0.1:7655 or [::1]:7655)"));
        };
        let loopback = match addr.ip() {
            IpAddr::V4(v4) => v4.is_loopback(),
            IpAddr::V6(v6) => v6.is_loopback(),
        };
        if !loopback {
            return bad(format!("--run-net-allow {entry:?} is not a loopback address; a run's Net reaches loopback only"));
        }
        if addr.port() == 0 {
            return bad(format!(
                "--run-net-allow {entry:?} has an invalid port (want 1-65535)"
            ));
        }
        if addr.to_string() != *entry {
            return bad(format!(
                "--run-net-allow {entry:?} is not in canonical form; write {:?}",
                addr.to_string()
            ));
        }
        if config.net_allow.iter().take(i).any(|e| e == entry) {
            return bad(format!("--run-net-allow names {entry:?} twice"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deny_list_has_198_folded_patterns() {
        let deny = deny_write_patterns();
        assert_eq!(deny.len(), 198);
        assert_eq!(deny.first().map(String::as_str), Some(".github/**"));
        assert!(deny.contains(&".GiThUb/**".to_owned()));
        assert!(deny.contains(&".Pi/**".to_owned()));
        assert!(deny.contains(&".[gG][iI][tT][mM][oO][dD][uU][lL][eE][sſS]".to_owned()));
        assert!(deny.contains(&".[gG][iI][tT][aA][tT][tT][rR][iI][bB][uU][tT][eE][sſS]".to_owned()));
        let unique: std::collections::BTreeSet<_> = deny.iter().collect();
        assert_eq!(unique.len(), 198);
    }

    #[test]
    fn base_policy_renders_every_key() {
        let text =
            String::from_utf8(render_policy("/ws/ep1", &PolicySpec::base()).expect("render"))
                .expect("utf8");
        assert!(text.starts_with("security_mode = \"restricted\"\nallowed_caps = [\"IO\", \"FS\"]\nfs_sandbox = \"/ws/ep1\"\ntimeout_ms = 8000\nfs_deny_write = [\".github/**\", "));
        assert!(
            text.ends_with("entry = \"main\"\n\n[budgets]\nFS = 1000\n"),
            "{text}"
        );
        for bad in [
            "ws", "/ws/\"x", "/ws/a\\b", "/ws/../x", "/ws/ep1/", "/ws/a\nb",
        ] {
            assert!(render_policy(bad, &PolicySpec::base()).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn variants_follow_the_cap_set() {
        let op = RunCapsConfig {
            allow: vec!["Net".into()],
            net_allow: vec!["127.0.0.1:7655".into()],
            net_allow_http: true,
        };
        let caps = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            PolicySpec::for_caps(&caps(&["FS", "IO"]), &op).expect("base"),
            PolicySpec::base()
        );
        let io_only = PolicySpec::for_caps(&caps(&["IO"]), &op).expect("io");
        assert_eq!(
            (io_only.caps.clone(), io_only.fs_budget),
            (caps(&["FS", "IO"]), 0)
        );
        let net = PolicySpec::for_caps(&caps(&["FS", "IO", "Net"]), &op).expect("net");
        assert_eq!(
            (net.mode, net.net_allow.clone(), net.net_allow_http),
            ("restricted", op.net_allow.clone(), true)
        );
        let env = PolicySpec::for_caps(&caps(&["Env", "IO"]), &op).expect("env");
        let text =
            String::from_utf8(render_policy("/ws/ep1", &env).expect("render")).expect("utf8");
        assert!(text.contains("security_mode = \"trusted_host\""));
        assert!(text.contains("fs_deny_write = [\".git/**\", \".github/**\""));
        assert!(text.contains("max_source_bytes = 1048576\n"));
        assert!(PolicySpec::for_caps(&caps(&["Env", "Net"]), &op).is_err());
        assert!(PolicySpec::for_caps(&caps(&["IO", "FS"]), &op).is_err());
        assert!(PolicySpec::for_caps(&caps(&["Process"]), &op).is_err());
    }

    #[test]
    fn run_allowlist_validation() {
        let cfg = |allow: &[&str], net: &[&str], http: bool| RunCapsConfig {
            allow: allow.iter().map(|s| s.to_string()).collect(),
            net_allow: net.iter().map(|s| s.to_string()).collect(),
            net_allow_http: http,
        };
        assert!(validate_run_caps_config(&cfg(&[], &[], false)).is_ok());
        assert!(validate_run_caps_config(&cfg(
            &["Env", "Net"],
            &["127.0.0.1:80", "[::1]:8080"],
            true
        ))
        .is_ok());
        for bad in [
            cfg(&["IO"], &[], false),
            cfg(&["Env", "Env"], &[], false),
            cfg(&["Net"], &[], false),
            cfg(&[], &["127.0.0.1:80"], false),
            cfg(&[], &[], true),
            cfg(&["Net"], &["10.0.0.1:80"], false),
            cfg(&["Net"], &["localhost:80"], false),
            cfg(&["Net"], &["127.0.0.1"], false),
            cfg(&["Net"], &["127.0.0.1:0"], false),
            cfg(&["Net"], &["127.0.0.1:80", "127.0.0.1:80"], false),
        ] {
            assert!(validate_run_caps_config(&bad).is_err(), "{bad:?}");
        }
    }
}
