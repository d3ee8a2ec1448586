//! Ledger locations (issue 27 §1–§2): what `--ledger` names and how a message prints it.
//!
//! A location is a ledger file path or a `postgres://` (`postgresql://`) URL. Every name a
//! message or hint prints ([`describe_location`], [`redacted`]) parses back to the same ledger,
//! schema included, and never holds the password; [`location_arg`] quotes it for pasting.

use super::error::Error;

/// `true` when `text` names a PostgreSQL ledger (`postgres://` or `postgresql://`).
pub fn is_url(text: &str) -> bool {
    text.starts_with("postgres://") || text.starts_with("postgresql://")
}

/// The ledger's name for messages and hints: a `postgres://` URL that parses back to the same
/// ledger (issue 27 §2) — `postgres://USER@HOST:PORT/DB[?options=…]` — never the password.
/// A socket directory is the percent-encoded path in the host part
/// (`postgres://w@%2Frun%2Fpg:5432/wl`), every host gets its port (5432 when none was given,
/// as the client connects), and the `options` parameter (where `-csearch_path=SCHEMA` picks
/// the ledger's schema) is kept, so a pasted hint names the same ledger. Printing the parse
/// of a printed name gives the same name.
pub fn redacted(config: &postgres::Config) -> String {
    let user = config.get_user().unwrap_or("");
    let ports = config.get_ports();
    let port_of = |i: usize| {
        ports
            .get(i)
            .or_else(|| ports.first())
            .copied()
            .unwrap_or(5432)
    };
    let mut hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let host = match h {
                postgres::config::Host::Tcp(t) if t.contains(':') => format!("[{t}]"),
                postgres::config::Host::Tcp(t) => url_encode(t),
                postgres::config::Host::Unix(p) => url_encode(&p.display().to_string()),
            };
            format!("{host}:{}", port_of(i))
        })
        .collect();
    if hosts.is_empty() {
        hosts = config
            .get_hostaddrs()
            .iter()
            .enumerate()
            .map(|(i, a)| match a {
                std::net::IpAddr::V6(v6) => format!("[{v6}]:{}", port_of(i)),
                std::net::IpAddr::V4(v4) => format!("{v4}:{}", port_of(i)),
            })
            .collect();
    }
    let db = config.get_dbname().unwrap_or(user);
    let at = if user.is_empty() {
        String::new()
    } else {
        format!("{}@", url_encode(user))
    };
    let options = config
        .get_options()
        .map_or(String::new(), |o| format!("?options={}", url_encode(o)));
    format!(
        "postgres://{at}{}/{}{options}",
        hosts.join(","),
        url_encode(db)
    )
}

/// Percent-encode every byte of `text` but the URL-unreserved ones (`A-Z a-z 0-9 - . _ ~`), so
/// the client's URL parser decodes it back to `text` in any part of the URL.
fn url_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A URL's redacted name, or `postgres://…` when it does not parse.
pub fn redact_url(url: &str) -> String {
    url.parse::<postgres::Config>()
        .map(|c| redacted(&c))
        .unwrap_or_else(|_| "postgres://…".into())
}

/// A standalone ledger's name for messages: the file path, or the URL without its password
/// ([`redacted`]: it parses back to the same ledger, schema included).
pub fn describe_location(location: &str) -> String {
    if is_url(location) {
        redact_url(location)
    } else {
        location.to_string()
    }
}

/// A ledger name as a hint prints it for pasting after `--ledger`: [`describe_location`]'s
/// text, single-quoted when a POSIX shell would otherwise split, glob or expand it (a
/// PostgreSQL name holds `?` and `%`; a printed name never holds a `'`, which is
/// percent-encoded, so the quoting is exact; a path holding one is escaped as `'\''`).
pub fn location_arg(name: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-._/:@,+=".contains(c);
    if !name.is_empty() && name.chars().all(plain) {
        name.to_string()
    } else {
        format!("'{}'", name.replace('\'', "'\\''"))
    }
}

/// Refuse a `--ledger` value before anything is opened (docs/LEDGER.md's exit 2 rows): an
/// empty value or one of another scheme ([`Error::BadLedgerLocation`]), a `postgres://` URL
/// that does not parse or names no host ([`Error::BadLedgerUrl`]). Every command that takes
/// `--ledger` calls it (limits' open, `check_ledger_location`, the mission ledger's open,
/// `world verify --ledger`), so they all answer alike.
///
/// # Errors
/// As above.
pub fn check_syntax(location: &str) -> Result<(), Error> {
    if location.trim().is_empty() {
        return Err(Error::BadLedgerLocation {
            why: "is empty: name a ledger file or a postgres:// URL".into(),
        });
    }
    if is_url(location) {
        return super::pg::parse_url(location).map(|_| ());
    }
    if let Some((scheme, _)) = location.split_once("://") {
        let looks_like_scheme = !scheme.is_empty()
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if looks_like_scheme {
            return Err(Error::BadLedgerLocation {
                why: format!(
                    "names a {scheme}:// URL: a ledger is a file path or a postgres:// (postgresql://) URL"
                ),
            });
        }
    }
    Ok(())
}
