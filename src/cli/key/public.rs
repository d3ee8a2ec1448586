//! `world key public FILE`: the public verifier key of a private key file.

use std::path::Path;

use super::read::{key_json, read_signer};
use crate::cli::output::Output;
use crate::cli::{CliError, Exit};

/// Print the verifier key (NAME+KEYID+BASE64) of the private key in `file`.
pub(super) fn run(out: &mut Output, file: &Path) -> Result<Exit, CliError> {
    let s = read_signer(out, file, "key public")?;
    let v = s.verifier();
    if out.json {
        out.json_line(&key_json(&v, None))?;
    } else {
        out.line(v.encode())?;
    }
    Ok(Exit::Success)
}
