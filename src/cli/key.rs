//! `world key generate` and `world key public`: Ed25519 keys in the formats of C2SP
//! `signed-note` / Go's `sumdb/note` (DEC-TRUST-3). Also the key readers the checkpoint
//! commands share.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use clap::Subcommand;
use serde::Serialize;

use super::output::Output;
use super::{CliError, Context, Exit};
use crate::ops::checkpoint::TrustError;
use crate::tlog::note::{Signer, Verifier, ALG_COSIGNATURE, ALG_ED25519};

/// Largest key file read, in bytes.
const MAX_KEY_FILE: usize = 4096;

/// `world key` subcommands.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Make an Ed25519 key: the private key goes to FILE (mode 0600, never overwritten), the
    /// public verifier key (NAME+KEYID+BASE64) to stdout
    Generate {
        /// Where to write the private key (PRIVATE+KEY+…); refused when it exists
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// The key name: a log's name is its checkpoints' origin line (default: the store's,
        /// ailang-world/<first 16 hex digits of its genesis entry hash>)
        #[arg(long, value_name = "NAME")]
        name: Option<String>,
        /// A witness key: signs C2SP tlog-cosignature lines (type 0x04) on other logs'
        /// checkpoints instead of checkpoints of its own
        #[arg(long)]
        witness: bool,
    },
    /// Print the public verifier key of a private key file
    Public {
        /// The private key file
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct KeyJson {
    name: String,
    key_id: String,
    kind: &'static str,
    verifier_key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<PathBuf>,
}

fn key_json(v: &Verifier, file: Option<PathBuf>) -> KeyJson {
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

/// Run `world key`.
pub fn run(ctx: &Context, out: &mut Output, cmd: Cmd) -> Result<Exit, CliError> {
    match cmd {
        Cmd::Generate {
            out: path,
            name,
            witness,
        } => {
            let name = match name {
                Some(n) => n,
                None if witness => {
                    return Err(CliError::usage(
                        "key generate",
                        "a witness key needs --name (a schema-less URL naming the witness, e.g. witness.example.com/ci)",
                    ))
                }
                None => default_name(ctx)?,
            };
            let alg = if witness {
                ALG_COSIGNATURE
            } else {
                ALG_ED25519
            };
            let signer =
                Signer::generate(&name, alg).map_err(|e| CliError::failed("key generate", e))?;
            write_private(&path, &signer)?;
            let v = signer.verifier();
            if out.json {
                out.json_line(&key_json(&v, Some(path.clone())))?;
            } else {
                out.line(v.encode())?;
                out.status(format!(
                    "wrote the private key to {} (mode 0600); keep it secret. The line above is the public key: give it to whoever verifies",
                    path.display()
                ));
            }
            Ok(Exit::Success)
        }
        Cmd::Public { file } => {
            let s = read_signer(out, &file, "key public")?;
            let v = s.verifier();
            if out.json {
                out.json_line(&key_json(&v, None))?;
            } else {
                out.line(v.encode())?;
            }
            Ok(Exit::Success)
        }
    }
}

/// The default name of a log key: the store's log identity (DEC-TRUST-3).
fn default_name(ctx: &Context) -> Result<String, CliError> {
    let hint = "pass --name NAME (a schema-less URL such as example.com/ci-log), or run it on a store with a genesis entry";
    let store = ctx.open_read().map_err(|e| e.hint(hint))?;
    let genesis = store
        .log_entry(0)
        .map_err(|e| CliError::store("key generate", e))?
        .ok_or_else(|| CliError::failed("key generate", "the store has no entry 0").hint(hint))?;
    let hex = genesis
        .entry_hash
        .strip_prefix("sha256:")
        .unwrap_or(&genesis.entry_hash);
    Ok(format!("ailang-world/{}", &hex[..hex.len().min(16)]))
}

fn write_private(path: &Path, signer: &Signer) -> Result<(), CliError> {
    let what = "key generate";
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                CliError::failed(
                    what,
                    format!("{} exists; a key file is never overwritten", path.display()),
                )
            } else {
                CliError::failed(what, format!("create {}: {e}", path.display()))
            }
        })?;
    // The umask cannot widen 0600, but an ACL-less file system could: set it explicitly.
    let written = f
        .set_permissions(std::fs::Permissions::from_mode(0o600))
        .and_then(|()| f.write_all(format!("{}\n", signer.encode()).as_bytes()))
        .and_then(|()| f.sync_all());
    if let Err(e) = written {
        drop(f);
        let _ = std::fs::remove_file(path);
        return Err(CliError::failed(
            what,
            format!("write {}: {e}", path.display()),
        ));
    }
    Ok(())
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

/// Map a checkpoint error to its exit code: bad input and keys 1, a log that does not match or
/// a signature that fails 3.
pub(crate) fn trust_err(what: &'static str) -> impl Fn(TrustError) -> CliError {
    move |e| match e {
        TrustError::Store(s) => CliError::store(what, s),
        TrustError::Key(_) | TrustError::Input(_) => CliError::failed(what, e),
        TrustError::Integrity(_) => CliError::new(Exit::Integrity, what, e),
    }
}

/// Read a checkpoint (or other note) file named on the command line (`-` = stdin).
pub(crate) fn read_note(path: &Path, what: &str) -> Result<Vec<u8>, CliError> {
    super::read_input(path, crate::tlog::note::MAX_NOTE, what)
}
