//! `world checkpoint cosign`: a witness checks a checkpoint (and that it extends the one it
//! cosigned last) and adds a tlog-cosignature line.

use std::path::{Path, PathBuf};

use super::files::write_atomic;
use crate::cli::key::{read_note, read_signer, read_verifier, trust_err};
use crate::cli::output::Output;
use crate::cli::{CliError, Context, Exit};
use crate::ops::checkpoint as ops;

/// Cosign the checkpoint in `file` as the witness whose key is `key`.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    file: &Path,
    key: &Path,
    log_key: &str,
    last: Option<(PathBuf, PathBuf)>,
    to: Option<PathBuf>,
) -> Result<Exit, CliError> {
    let what = "checkpoint cosign";
    let note = read_note(file, what)?;
    let witness = read_signer(out, key, what)?;
    let log = read_verifier(log_key, what)?;
    let last = match last {
        Some((old, proof)) => {
            let old = read_note(&old, what)?;
            let proof = read_consistency(&proof, what)?;
            Some((old, proof))
        }
        None => None,
    };
    let cosigned = ops::cosign(
        &note,
        &log,
        &witness,
        last.as_ref().map(|(o, p)| (o.as_slice(), p.as_slice())),
        ctx.now(),
    )
    .map_err(trust_err(what))?;
    match &to {
        Some(p) => {
            write_atomic(p, &cosigned, what)?;
            out.status(format!(
                "cosigned as {}; written to {}",
                witness.verifier().label(),
                p.display()
            ));
        }
        None => out.bytes(cosigned.as_bytes())?,
    }
    Ok(Exit::Success)
}

/// Read a consistency proof as `world prove --from` prints it: `old N`, `new M`, then one
/// base64 hash a line (or its `--json` object's `proof`).
fn read_consistency(path: &Path, what: &str) -> Result<Vec<crate::tlog::merkle::Hash>, CliError> {
    use base64::Engine;
    let bytes = crate::cli::read_input(path, 1 << 20, what)?;
    let text = String::from_utf8_lossy(&bytes);
    let bad =
        |why: String| CliError::failed(what.to_string(), format!("{}: {why}", path.display()));
    let lines: Vec<String> = if text.trim_start().starts_with('{') {
        let v: ops::Consistency = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        v.proof
    } else {
        text.lines()
            .filter(|l| !l.is_empty() && !l.starts_with("old ") && !l.starts_with("new "))
            .map(str::to_string)
            .collect()
    };
    lines
        .iter()
        .map(|l| {
            base64::engine::general_purpose::STANDARD
                .decode(l)
                .ok()
                .and_then(|v| v.try_into().ok())
                .ok_or_else(|| bad(format!("{l:?} is not the base64 of a 32-byte hash")))
        })
        .collect()
}
