//! The package manifest, `ailang.toml` (the AILANG package format the registry validates): the
//! fields the ready packet, the interface hash and the registry paths are made of.
//!
//! | TOML key | Field | Rule |
//! |---|---|---|
//! | `package.name` | [`Manifest::name`] | `<vendor>/<name>`, each a single safe URL path segment |
//! | `package.version` | [`Manifest::version`] | a single safe URL path segment |
//! | `package.edition` | [`Manifest::edition`] | string; may be absent (empty) |
//! | `package.ailang` | [`Manifest::ailang`] | string; may be absent (empty) |
//! | `exports.modules` | [`Manifest::exports`] | array of strings, order kept |
//! | `effects.max` | [`Manifest::effects`] | array of strings, order kept |
//!
//! Other keys are ignored, as the AILANG loader ignores what it does not use. "Safe" is the
//! reference's rule for registry object keys (`registry_reconcile.go` `metadataObjectURL`):
//! non-empty, not `.` or `..`, and unchanged by Go's `url.PathEscape`.

use std::path::Path;

/// The manifest's file name inside a package directory.
pub const MANIFEST_FILE: &str = "ailang.toml";
/// Largest `ailang.toml` read, in bytes.
pub const MAX_MANIFEST_BYTES: usize = 1024 * 1024;

/// What the ready packet needs from `ailang.toml`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// `package.name`: `<vendor>/<name>`.
    pub name: String,
    /// `package.version`.
    pub version: String,
    /// `package.edition` (`""` when absent).
    pub edition: String,
    /// `package.ailang`, the compiler constraint (`""` when absent).
    pub ailang: String,
    /// `exports.modules`, in file order.
    pub exports: Vec<String>,
    /// `effects.max`, in file order.
    pub effects: Vec<String>,
}

/// Why a manifest was refused.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// The file could not be read (missing, not a regular file, over the bound).
    #[error("read {MANIFEST_FILE}: {0}")]
    Read(#[from] crate::fileread::ReadError),
    /// Not UTF-8 or not TOML.
    #[error("{MANIFEST_FILE} is not valid TOML: {0}")]
    Toml(String),
    /// A field is missing, of the wrong type, or breaks its rule.
    #[error("{MANIFEST_FILE}: {0}")]
    Field(String),
}

impl Manifest {
    /// Reads and checks `<dir>/ailang.toml`.
    ///
    /// # Errors
    /// [`ManifestError`] naming the file, the key and the rule.
    pub fn load(dir: &Path) -> Result<Manifest, ManifestError> {
        let bytes = crate::fileread::read_regular(&dir.join(MANIFEST_FILE), MAX_MANIFEST_BYTES)?;
        Manifest::parse(&bytes)
    }

    /// Parses manifest bytes (see the module docs).
    ///
    /// # Errors
    /// [`ManifestError::Toml`], [`ManifestError::Field`].
    pub fn parse(bytes: &[u8]) -> Result<Manifest, ManifestError> {
        let text = std::str::from_utf8(bytes)
            .map_err(|e| ManifestError::Toml(format!("not UTF-8: {e}")))?;
        let doc: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| ManifestError::Toml(e.message().to_string()))?;
        let field = |m: String| ManifestError::Field(m);
        let table = |key: &str| -> Result<Option<&toml::Table>, ManifestError> {
            match doc.get(key) {
                None => Ok(None),
                Some(toml::Value::Table(t)) => Ok(Some(t)),
                Some(_) => Err(field(format!("[{key}] is not a table"))),
            }
        };
        let package = table("package")?.ok_or_else(|| field("[package] is missing".into()))?;
        let string = |t: &toml::Table, sect: &str, key: &str, required: bool| match t.get(key) {
            None if !required => Ok(String::new()),
            None => Err(field(format!("{sect}.{key} is missing"))),
            Some(toml::Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(field(format!("{sect}.{key} is not a string"))),
        };
        let list = |sect: &str, key: &str| -> Result<Vec<String>, ManifestError> {
            let Some(t) = table(sect)? else {
                return Ok(Vec::new());
            };
            match t.get(key) {
                None => Ok(Vec::new()),
                Some(toml::Value::Array(items)) => items
                    .iter()
                    .map(|v| match v {
                        toml::Value::String(s) => Ok(s.clone()),
                        _ => Err(field(format!(
                            "{sect}.{key} holds a value that is not a string"
                        ))),
                    })
                    .collect(),
                Some(_) => Err(field(format!("{sect}.{key} is not an array of strings"))),
            }
        };
        let m = Manifest {
            name: string(package, "package", "name", true)?,
            version: string(package, "package", "version", true)?,
            edition: string(package, "package", "edition", false)?,
            ailang: string(package, "package", "ailang", false)?,
            exports: list("exports", "modules")?,
            effects: list("effects", "max")?,
        };
        let (vendor, name) = m
            .name
            .split_once('/')
            .ok_or_else(|| field(format!("package.name {:?} is not <vendor>/<name>", m.name)))?;
        for (what, value) in [
            ("vendor", vendor),
            ("name", name),
            ("version", m.version.as_str()),
        ] {
            check_segment(what, value).map_err(ManifestError::Field)?;
        }
        Ok(m)
    }

    /// The vendor (before the `/`).
    pub fn vendor(&self) -> &str {
        self.name.split_once('/').map_or("", |(v, _)| v)
    }

    /// The short name (after the `/`).
    pub fn short_name(&self) -> &str {
        self.name.split_once('/').map_or("", |(_, n)| n)
    }
}

/// Whether Go's `url.PathEscape` leaves `s` unchanged: unreserved characters and the
/// sub-delimiters a path segment keeps (`$ & + : = @`).
fn path_escape_identity(s: &str) -> bool {
    s.bytes().all(|b| {
        b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'-' | b'_' | b'.' | b'~' | b'$' | b'&' | b'+' | b':' | b'=' | b'@'
            )
    })
}

/// Checks one registry key segment (vendor, name or version): non-empty, not `.`/`..`, and
/// one path segment that needs no escaping.
///
/// # Errors
/// The rule that `value` breaks, naming `what`.
pub fn check_segment(what: &str, value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err(format!("package {what} is empty"));
    }
    if value == "." || value == ".." {
        return Err(format!(
            "package {what} {value:?} is a path traversal segment"
        ));
    }
    if !path_escape_identity(value) {
        return Err(format!(
            "package {what} {value:?} is not a single safe path segment (allowed: A-Z a-z 0-9 - _ . ~ $ & + : = @)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_fields_and_keeps_list_order() {
        let m = Manifest::parse(
            br#"[package]
name = "world/core"
version = "0.1.0"
edition = "1"
ailang = ">=0.30.0"
module_prefix = "world"

[exports]
modules = ["world/types", "world/contracts"]

[effects]
max = []
"#,
        )
        .unwrap();
        assert_eq!(m.vendor(), "world");
        assert_eq!(m.short_name(), "core");
        assert_eq!(m.exports, ["world/types", "world/contracts"]);
        assert!(m.effects.is_empty());
        assert_eq!(m.ailang, ">=0.30.0");
    }

    #[test]
    fn refuses_bad_names_versions_and_types() {
        for (text, want) in [
            (
                "[package]\nname = \"core\"\nversion = \"1\"\n",
                "not <vendor>/<name>",
            ),
            (
                "[package]\nname = \"a/b\"\nversion = \"..\"\n",
                "path traversal",
            ),
            (
                "[package]\nname = \"a/b c\"\nversion = \"1\"\n",
                "single safe path segment",
            ),
            ("[package]\nname = \"a/b\"\n", "package.version is missing"),
            ("[package]\nname = \"a/b\"\nversion = 1\n", "not a string"),
            (
                "[package]\nname = \"a/b\"\nversion = \"1\"\n[exports]\nmodules = [1]\n",
                "not a string",
            ),
            ("name = ", "not valid TOML"),
        ] {
            let err = Manifest::parse(text.as_bytes()).unwrap_err().to_string();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }
}
