//! Strict member-by-member reading of TR-CJSON-1 objects for contracts and commands.
//!
//! Input is parsed with [`crate::encoding::trcjson::parse`] (valid UTF-8, no duplicate members,
//! bounded numbers and depth); then every member is taken by name and type, and whatever is left
//! is an unknown member. Each error names the member path (`grant.limit`).

use std::collections::BTreeSet;

use crate::encoding::trcjson::{self, CValue};
use crate::encoding::HashRef;
use crate::ledger::{Amount, AmountError};

use super::codes::{Code, Rejection};

/// Largest contract or command accepted, bytes of raw JSON.
pub const MAX_JSON_BYTES: usize = 1024 * 1024;

/// Parse raw bytes as one TR-CJSON-1 object, or refuse with `code`.
pub(crate) fn object(raw: &[u8], code: Code, what: &str) -> Result<CValue, Rejection> {
    let bounds = trcjson::Bounds {
        raw: MAX_JSON_BYTES,
        canonical: MAX_JSON_BYTES,
        what: "mission JSON",
    };
    let v = trcjson::parse(raw, bounds)
        .map_err(|e| Rejection::new(code, format!("{what} is not acceptable JSON: {e}")))?;
    if v.as_object().is_none() {
        return Err(Rejection::new(
            code,
            format!("{what} must be a JSON object"),
        ));
    }
    Ok(v)
}

/// The members of one object, taken one at a time.
pub(crate) struct Fields<'v> {
    members: Vec<(&'v str, &'v CValue)>,
    prefix: String,
    code: Code,
}

impl<'v> Fields<'v> {
    /// Walk `v` (an object), naming members as `prefix.name`.
    pub(crate) fn new(v: &'v CValue, prefix: &str, code: Code) -> Result<Fields<'v>, Rejection> {
        let members = v
            .as_object()
            .ok_or_else(|| {
                Rejection::new(
                    code,
                    format!("{} must be an object", display_path(prefix, "")),
                )
            })?
            .iter()
            .map(|(k, v)| (k.as_str(), v))
            .collect();
        Ok(Fields {
            members,
            prefix: prefix.to_string(),
            code,
        })
    }

    /// The member path `prefix.name`.
    pub(crate) fn path(&self, name: &str) -> String {
        display_path(&self.prefix, name)
    }

    /// An error about member `name`.
    pub(crate) fn err(&self, name: &str, why: impl std::fmt::Display) -> Rejection {
        Rejection::new(self.code, format!("{}: {why}", self.path(name)))
            .with("member", self.path(name))
    }

    /// Take member `name` if present.
    pub(crate) fn opt(&mut self, name: &str) -> Option<&'v CValue> {
        let i = self.members.iter().position(|(k, _)| *k == name)?;
        Some(self.members.remove(i).1)
    }

    /// Take member `name`, refusing its absence.
    pub(crate) fn req(&mut self, name: &str) -> Result<&'v CValue, Rejection> {
        self.opt(name)
            .ok_or_else(|| self.err(name, "missing member"))
    }

    /// A required string.
    pub(crate) fn string(&mut self, name: &str) -> Result<&'v str, Rejection> {
        let v = self.req(name)?;
        v.as_str()
            .ok_or_else(|| self.err(name, format!("must be a string, not {}", kind(v))))
    }

    /// A required id: 1–128 chars of `[A-Za-z0-9._:-]`.
    pub(crate) fn id(&mut self, name: &str) -> Result<String, Rejection> {
        let s = self.string(name)?;
        check_id(s).map_err(|why| self.err(name, why))?;
        Ok(s.to_string())
    }

    /// A required name (capability, resource, criterion, subject, policy): 1–256 bytes, no
    /// whitespace or control characters.
    pub(crate) fn name(&mut self, name: &str) -> Result<String, Rejection> {
        let s = self.string(name)?;
        check_name(s).map_err(|why| self.err(name, why))?;
        Ok(s.to_string())
    }

    /// A required canonical amount string.
    pub(crate) fn amount(&mut self, name: &str) -> Result<Amount, Rejection> {
        let v = self.req(name)?;
        self.amount_of(name, v)
    }

    /// An amount from a value already taken.
    pub(crate) fn amount_of(&self, name: &str, v: &CValue) -> Result<Amount, Rejection> {
        let s = v.as_str().ok_or_else(|| {
            self.err(
                name,
                format!("must be a canonical decimal string, not {}", kind(v)),
            )
        })?;
        Amount::parse(s).map_err(|e| match e {
            AmountError::Invalid(_) => self.err(name, format!("{e}")),
            AmountError::Overflow(_) => self.err(name, format!("{e}")),
        })
    }

    /// A required boolean.
    pub(crate) fn boolean(&mut self, name: &str) -> Result<bool, Rejection> {
        let v = self.req(name)?;
        match v {
            CValue::Bool(b) => Ok(*b),
            other => Err(self.err(name, format!("must be true or false, not {}", kind(other)))),
        }
    }

    /// A required array of unique names (`nonempty`: refuse `[]`).
    pub(crate) fn names(&mut self, name: &str, nonempty: bool) -> Result<Vec<String>, Rejection> {
        let v = self.req(name)?;
        self.names_of(name, v, nonempty, check_name)
    }

    /// A required array of unique ids.
    pub(crate) fn ids_of(&self, name: &str, v: &CValue) -> Result<Vec<String>, Rejection> {
        self.names_of(name, v, false, check_id)
    }

    fn names_of(
        &self,
        name: &str,
        v: &CValue,
        nonempty: bool,
        check: fn(&str) -> Result<(), GrammarError>,
    ) -> Result<Vec<String>, Rejection> {
        let CValue::Array(items) = v else {
            return Err(self.err(
                name,
                format!("must be an array of strings, not {}", kind(v)),
            ));
        };
        if nonempty && items.is_empty() {
            return Err(self.err(name, "must not be empty"));
        }
        let mut seen = BTreeSet::new();
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let s = item.as_str().ok_or_else(|| {
                self.err(
                    name,
                    format!("item {i} must be a string, not {}", kind(item)),
                )
            })?;
            check(s).map_err(|why| self.err(name, format!("item {i}: {why}")))?;
            if !seen.insert(s) {
                return Err(self.err(name, format!("item {s:?} appears twice")));
            }
            out.push(s.to_string());
        }
        Ok(out)
    }

    /// A required `sha256:<64 hex>` evidence ref.
    pub(crate) fn evidence(&mut self, name: &str) -> Result<String, Rejection> {
        let s = self.string(name)?;
        check_evidence(s).map_err(|why| self.err(name, why))?;
        Ok(s.to_string())
    }

    /// Refuse any member not taken.
    pub(crate) fn finish(self) -> Result<(), Rejection> {
        match self.members.first() {
            None => Ok(()),
            Some((k, _)) => Err(self.err(k, "unknown member")),
        }
    }
}

fn display_path(prefix: &str, name: &str) -> String {
    match (prefix.is_empty(), name.is_empty()) {
        (true, _) => name.to_string(),
        (false, true) => prefix.to_string(),
        (false, false) => format!("{prefix}.{name}"),
    }
}

/// The JSON type of a value, for messages.
pub(crate) fn kind(v: &CValue) -> &'static str {
    match v {
        CValue::Null => "null",
        CValue::Bool(_) => "a boolean",
        CValue::Number(_) => "a number",
        CValue::String(_) => "a string",
        CValue::Array(_) => "an array",
        CValue::Object(_) => "an object",
    }
}

/// A text that breaks one of the mission grammars (missions.md); the text is quoted in the
/// message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrammarError {
    /// Not an id: 1–128 chars of `[A-Za-z0-9._:-]`.
    #[error("{0:?} must be 1-128 characters of [A-Za-z0-9._:-]")]
    Id(String),
    /// Not a name: 1–256 bytes, no whitespace or control characters.
    #[error("{0:?} must be 1-256 bytes without whitespace or control characters")]
    Name(String),
    /// Not an evidence ref: `sha256:` and 64 lowercase hex digits.
    #[error("{0:?} is not a sha256:<64 lowercase hex> ref")]
    Evidence(String),
}

/// Check the id grammar: 1–128 chars of `[A-Za-z0-9._:-]`.
///
/// # Errors
/// [`GrammarError::Id`].
pub fn check_id(s: &str) -> Result<(), GrammarError> {
    let ok = !s.is_empty()
        && s.len() <= 128
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(GrammarError::Id(s.to_string()))
    }
}

/// Check the name grammar: 1–256 bytes, no whitespace or control characters.
///
/// # Errors
/// [`GrammarError::Name`].
pub fn check_name(s: &str) -> Result<(), GrammarError> {
    if s.is_empty() || s.len() > 256 || s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(GrammarError::Name(s.to_string()));
    }
    Ok(())
}

/// Check an evidence ref: `sha256:` and 64 lowercase hex digits.
///
/// # Errors
/// [`GrammarError::Evidence`].
pub fn check_evidence(s: &str) -> Result<(), GrammarError> {
    match HashRef::parse(s) {
        Ok(r) if r.to_string() == s => Ok(()),
        _ => Err(GrammarError::Evidence(s.to_string())),
    }
}
