//! The password of a PostgreSQL ledger URL that carries none, from where libpq looks
//! (docs/LEDGER.md "Credentials"): `PGPASSWORD`, else the password file — `PGPASSFILE`, or
//! `~/.pgpass` — whose first line matching the connection's `host:port:database:user` gives it.
//!
//! The file's rules are libpq's: one `hostname:port:database:username:password` per line, `*`
//! matches anything in the first four fields, `\` escapes `:` and `\`, lines starting with `#`
//! are comments. A Unix-socket connection matches its socket directory, and `localhost` when
//! that directory is the server's default (`/var/run/postgresql`, `/run/postgresql`, `/tmp`).
//! A file that its group or others may read or write is ignored with a warning on stderr, as
//! libpq does.

use std::path::{Path, PathBuf};

/// The socket directories libpq treats as the default host (`localhost` in a password file).
const DEFAULT_SOCKET_DIRS: [&str; 3] = ["/var/run/postgresql", "/run/postgresql", "/tmp"];

/// The default PostgreSQL port.
const DEFAULT_PORT: u16 = 5432;

/// The password for `config` when it names none: `PGPASSWORD` (when set and non-empty), else the
/// password file's first matching line; `None` when neither gives one.
pub fn lookup(config: &postgres::Config) -> Option<Vec<u8>> {
    if let Some(pw) = std::env::var_os("PGPASSWORD").filter(|p| !p.is_empty()) {
        return Some(std::os::unix::ffi::OsStrExt::as_bytes(pw.as_os_str()).to_vec());
    }
    let file = password_file()?;
    let text = readable(&file)?;
    let user = config
        .get_user()
        .map(str::to_string)
        .or_else(|| std::env::var("USER").ok())?;
    let host = config.get_hosts().first().map(|h| match h {
        postgres::config::Host::Tcp(t) => t.clone(),
        postgres::config::Host::Unix(p) => p.display().to_string(),
    });
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(DEFAULT_PORT)
        .to_string();
    let db = config.get_dbname().unwrap_or(&user).to_string();
    let hosts = host_names(host.as_deref());
    find(&text, &hosts, &port, &db, &user).map(String::into_bytes)
}

/// `PGPASSFILE`, else `$HOME/.pgpass`.
fn password_file() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PGPASSFILE").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("HOME").map(|h| Path::new(&h).join(".pgpass"))
}

/// The file's text when it is a regular file only its owner may read and write; a file with
/// group or other permissions is ignored with libpq's warning.
fn readable(file: &Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(file).ok()?;
    if !meta.is_file() {
        return None;
    }
    if meta.permissions().mode() & 0o077 != 0 {
        eprintln!(
            "world: warning: password file {} has group or world access; permissions should be u=rw (0600) or less; it is ignored",
            file.display()
        );
        return None;
    }
    crate::fileread::read(file, crate::fileread::Kind::PasswordFile)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
}

/// The names a connection's host matches in a password file: the host as given, and
/// `localhost` for no host or the default socket directory.
fn host_names(host: Option<&str>) -> Vec<String> {
    match host {
        None => vec!["localhost".to_string()],
        Some(h) if DEFAULT_SOCKET_DIRS.contains(&h.trim_end_matches('/')) => {
            vec![h.to_string(), "localhost".to_string()]
        }
        Some(h) => vec![h.to_string()],
    }
}

/// The password of the first line of `text` matching one of `hosts` and `port`, `db`, `user`.
fn find(text: &str, hosts: &[String], port: &str, db: &str, user: &str) -> Option<String> {
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split(line);
        let [h, p, d, u, pw] = fields.as_slice() else {
            continue;
        };
        let matches = |field: &str, value: &str| field == "*" || field == value;
        if hosts.iter().any(|x| matches(h, x))
            && matches(p, port)
            && matches(d, db)
            && matches(u, user)
        {
            return Some(pw.clone());
        }
    }
    None
}

/// A password-file line's fields: split at unescaped `:`, with `\:` and `\\` unescaped. The
/// password is everything after the fourth separator (it may hold unescaped `:`, as in libpq).
fn split(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut current = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    current.push(next);
                }
            }
            ':' if fields.len() < 4 => fields.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    fields.push(current);
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(h: &str) -> Vec<String> {
        host_names(Some(h))
    }

    #[test]
    fn the_first_matching_line_wins_and_stars_match_anything() {
        let text = "# comment\nother:5432:db:ann:no\n*:5432:db:ann:first\n*:*:*:*:second\n";
        assert_eq!(
            find(text, &hosts("h"), "5432", "db", "ann"),
            Some("first".into())
        );
        assert_eq!(
            find(text, &hosts("h"), "5433", "db", "ann"),
            Some("second".into())
        );
        assert_eq!(
            find("h:5432:db:ann:pw\n", &hosts("h"), "5432", "db", "bob"),
            None
        );
    }

    #[test]
    fn escapes_and_colons_in_the_password_follow_libpq() {
        assert_eq!(
            split(r"/tmp/x\:y:5432:d\\b:u:pa:ss"),
            ["/tmp/x:y", "5432", r"d\b", "u", "pa:ss"]
        );
        assert_eq!(
            find(r"/s\:k:*:*:*:p\:w", &hosts("/s:k"), "5432", "db", "ann"),
            Some("p:w".into())
        );
        // Too few fields: not a line of the file.
        assert_eq!(
            find("h:5432:db:ann\n", &hosts("h"), "5432", "db", "ann"),
            None
        );
    }

    #[test]
    fn a_default_socket_directory_also_matches_localhost() {
        let text = "localhost:5432:db:ann:local\n";
        assert_eq!(
            find(text, &hosts("/var/run/postgresql"), "5432", "db", "ann"),
            Some("local".into())
        );
        assert_eq!(find(text, &hosts("/srv/pg"), "5432", "db", "ann"), None);
        assert_eq!(
            find(text, &host_names(None), "5432", "db", "ann"),
            Some("local".into())
        );
    }

    #[test]
    fn a_file_others_may_read_is_ignored() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("pgpass");
        std::fs::write(&f, "*:*:*:*:pw\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(readable(&f), None);
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(readable(&f).as_deref(), Some("*:*:*:*:pw\n"));
        assert_eq!(
            readable(dir.path()),
            None,
            "a directory is not a password file"
        );
    }
}
