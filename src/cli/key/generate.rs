//! `world key generate`: a new Ed25519 log or witness key in the C2SP `signed-note` format
//! (DEC-TRUST-3).

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::read::key_json;
use crate::cli::output::Output;
use crate::cli::{CliError, Context, Exit};
use crate::tlog::note::{Signer, ALG_COSIGNATURE, ALG_ED25519};

/// `world key generate --out FILE [--name NAME] [--witness]`: the private key to `path`
/// (mode 0600, never overwritten), the public verifier key to stdout.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    path: PathBuf,
    name: Option<String>,
    witness: bool,
) -> Result<Exit, CliError> {
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
    let signer = Signer::generate(&name, alg).map_err(|e| CliError::failed("key generate", e))?;
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

/// Write `signer` to a new file at `path`, mode 0600; a file already there is refused, a
/// half-written one removed.
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
