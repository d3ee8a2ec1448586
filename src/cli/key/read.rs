//! The key and note readers the key and checkpoint commands share (`checkpoint`, `prove`,
//! `verify`), and a key's JSON form.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::cli::output::Output;
use crate::cli::CliError;
use crate::tlog::note::{Signer, Verifier, ALG_COSIGNATURE};

/// Largest key file read, in bytes.
const MAX_KEY_FILE: usize = 4096;

/// A key as `--json` prints it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct KeyJson {
    name: String,
    key_id: String,
    kind: &'static str,
    verifier_key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<PathBuf>,
}

/// The JSON form of `v` (`file`: where its private key was written, if just now).
pub(super) fn key_json(v: &Verifier, file: Option<PathBuf>) -> KeyJson {
    KeyJson {
        name: v.name.clone(),
        key_id: format!("{:08x}", v.id),
        kind: if v.alg == ALG_COSIGNATURE {
            "witness"
        } else {
            "log"
        },
        verifier_key: v.encode(),
        file,
    }
}

/// Read a private key file (warning on stderr when group or others may read it).
pub(crate) fn read_signer(out: &mut Output, path: &Path, what: &str) -> Result<Signer, CliError> {
    let bytes = crate::fileread::read_regular(path, MAX_KEY_FILE)
        .map_err(|e| CliError::failed(what.to_string(), e))?;
    let text = std::str::from_utf8(&bytes).map_err(|_| {
        CliError::failed(what.to_string(), format!("{} is not text", path.display()))
    })?;
    let signer = Signer::parse(text.trim())
        .map_err(|e| CliError::failed(what.to_string(), format!("{}: {e}", path.display())))?;
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.permissions().mode() & 0o077 != 0 {
            out.warn(format!(
                "{} can be read by group or others (mode {:o}); chmod 600 it",
                path.display(),
                meta.permissions().mode() & 0o777
            ));
        }
    }
    Ok(signer)
}

/// A public key argument: a verifier key (`NAME+KEYID+BASE64`) or a file holding one.
pub(crate) fn read_verifier(arg: &str, what: &str) -> Result<Verifier, CliError> {
    if let Ok(v) = Verifier::parse(arg) {
        return Ok(v);
    }
    let path = Path::new(arg);
    let bytes = crate::fileread::read_regular(path, MAX_KEY_FILE).map_err(|e| {
        CliError::failed(
            what.to_string(),
            format!(
                "{arg:?} is neither a verifier key (NAME+KEYID+BASE64) nor a readable file: {e}"
            ),
        )
    })?;
    let text = String::from_utf8_lossy(&bytes);
    if text.trim_start().starts_with("PRIVATE+KEY+") {
        return Err(CliError::failed(
            what.to_string(),
            format!("{arg} is a private key; pass the public key (world key public {arg})"),
        ));
    }
    Verifier::parse(text.trim())
        .map_err(|e| CliError::failed(what.to_string(), format!("{arg}: {e}")))
}

/// Read a checkpoint (or other note) file named on the command line (`-` = stdin).
pub(crate) fn read_note(path: &Path, what: &str) -> Result<Vec<u8>, CliError> {
    crate::cli::read_input(path, crate::tlog::note::MAX_NOTE, what)
}
