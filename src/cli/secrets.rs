//! No command prints a session token, or a prefix of one (issue 26 §7, DEC-TRUST3-5).
//!
//! A token is 64 hex characters, and so is every ref and credential id a user may type, so a
//! token given where an id belongs (`session revoke TOKEN`, `object get TOKEN`) would be
//! echoed by the error that says it names nothing. Every bare 64-hex argument (and a 64-hex
//! `WORLD_SESSION`) is therefore a *candidate*; once the store is known, a candidate that
//! names something in it (an object, world, entry or credential id) is an ordinary ref, and
//! every other one is withheld: each occurrence in anything the command prints — stdout,
//! stderr, the error and its JSON envelope, clap's usage errors — of the candidate, as typed
//! or lowercased, or of its first [`PREFIX`] characters, is replaced by a name: the
//! credential id when it is a token of this store, else a note that it was withheld. Before
//! the store is known (a usage error) every candidate is withheld.

use std::borrow::Cow;
use std::ffi::OsString;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::RwLock;

use crate::ops::session::{credential_id, is_hex64};

/// The shortest prefix of a withheld value that is replaced too.
pub const PREFIX: usize = 8;

struct Secret {
    /// The forms to replace, longest first.
    forms: Vec<String>,
    /// What is printed instead.
    name: String,
}

static SECRETS: RwLock<Vec<Secret>> = RwLock::new(Vec::new());
static ANY: AtomicBool = AtomicBool::new(false);

/// The candidates of a command line (program name first): bare 64-hex arguments, the values
/// of `--flag=VALUE` arguments that are, and a 64-hex `WORLD_SESSION`.
pub fn candidates(args: &[OsString]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |v: &str| {
        if is_hex64(v) && !out.iter().any(|o| o == v) {
            out.push(v.to_string());
        }
    };
    for a in args.iter().skip(1) {
        let Some(a) = a.to_str() else { continue };
        push(a);
        if let Some((flag, value)) = a.split_once('=') {
            if flag.starts_with('-') {
                push(value);
            }
        }
    }
    if let Ok(v) = std::env::var("WORLD_SESSION") {
        push(v.trim());
    }
    out
}

fn install(list: Vec<Secret>) {
    ANY.store(!list.is_empty(), Ordering::Relaxed);
    if let Ok(mut s) = SECRETS.write() {
        *s = list;
    }
}

fn secret(value: &str, name: String) -> Secret {
    let lower = value.to_ascii_lowercase();
    let mut forms = vec![value.to_string()];
    if lower != value {
        forms.push(lower.clone());
    }
    forms.push(value[..PREFIX].to_string());
    if lower != value {
        forms.push(lower[..PREFIX].to_string());
    }
    Secret { forms, name }
}

fn withheld(value: &str) -> Secret {
    secret(
        value,
        "[64-hex value withheld: it may be a session token]".into(),
    )
}

/// Withhold every candidate of `args` (before the store is known).
pub fn withhold_all(args: &[OsString]) {
    install(candidates(args).iter().map(|v| withheld(v)).collect());
}

/// Withhold the candidates of `args` that name nothing in `store` (`None`: the store cannot
/// be read; all of them). A token of this store is named by its credential id.
pub fn withhold_unknown(args: &[OsString], store: Option<&crate::store::read::Store>) {
    let mut list = Vec::new();
    for v in candidates(args) {
        let Some(store) = store else {
            list.push(withheld(&v));
            continue;
        };
        let hex = v.to_ascii_lowercase();
        if store.names_anything(&hex).unwrap_or(false) {
            continue;
        }
        let id = credential_id(&v);
        let token_here = crate::ops::session::credential_known(store, &id).unwrap_or(false);
        list.push(if token_here {
            secret(&v, format!("[session token of credential {id}]"))
        } else {
            withheld(&v)
        });
    }
    install(list);
}

/// `text` with every withheld value replaced by its name (borrowed when there is none).
pub fn redact(text: &str) -> Cow<'_, str> {
    if !ANY.load(Ordering::Relaxed) {
        return Cow::Borrowed(text);
    }
    let Ok(list) = SECRETS.read() else {
        return Cow::Borrowed(text);
    };
    let mut out = Cow::Borrowed(text);
    for s in list.iter() {
        for f in &s.forms {
            if out.contains(f.as_str()) {
                out = Cow::Owned(out.replace(f.as_str(), &s.name));
            }
        }
    }
    out
}

/// Whether any value is withheld (output paths skip [`redact`] otherwise).
pub fn active() -> bool {
    ANY.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_and_their_prefixes_are_replaced() {
        let tok = "AB".repeat(32);
        let args: Vec<OsString> = ["world", "object", "get", &tok, "--session=x"]
            .iter()
            .map(OsString::from)
            .collect();
        assert_eq!(candidates(&args), vec![tok.clone()]);
        withhold_all(&args);
        let lower = tok.to_ascii_lowercase();
        let text = format!("no object {tok}; sha256:{lower}; short {}…", &lower[..12]);
        let got = redact(&text);
        assert!(!got.contains(&tok[..PREFIX]), "{got}");
        assert!(!got.contains(&lower[..PREFIX]), "{got}");
        assert!(got.contains("withheld"), "{got}");
        install(Vec::new());
        assert_eq!(redact(&text), text);
    }
}
