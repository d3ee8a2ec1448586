//! `world checkpoint [--key FILE] [--out FILE]`: sign the log's current Merkle root as a C2SP
//! tlog-checkpoint, store it and print it.

use std::path::PathBuf;

use super::files::write_atomic;
use crate::cli::key::{read_signer, trust_err};
use crate::cli::output::Output;
use crate::cli::{CliError, Context, Exit};
use crate::ops::checkpoint as ops;

/// Sign, store and print the checkpoint of the log as it is now (also to `to`, when given).
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    key: Option<PathBuf>,
    to: Option<PathBuf>,
) -> Result<Exit, CliError> {
    let what = "checkpoint";
    let key = key.ok_or_else(|| {
        CliError::usage(
            what,
            "--key FILE is required: the log's private key (world key generate)",
        )
    })?;
    let signer = read_signer(out, &key, what)?;
    let mut store = ctx.open_write(false)?;
    let done = ops::create(&mut store, &signer, ctx.now()).map_err(trust_err(what))?;
    let cp = &done.checkpoint;
    if let Some(path) = &to {
        write_atomic(path, &cp.note, what)?;
    }
    if out.json {
        out.json_line(&done)?;
    } else {
        if to.is_none() {
            out.bytes(cp.note.as_bytes())?;
        }
        out.status(format!(
            "{} checkpoint {} of {} entries (origin {}){}{}",
            if done.new {
                "signed"
            } else {
                "already signed:"
            },
            cp.id,
            cp.tree_size,
            cp.origin,
            if done.extends.is_empty() {
                String::new()
            } else {
                format!(
                    "; the log extends the {} earlier checkpoint(s) of this origin",
                    done.extends.len()
                )
            },
            to.as_ref()
                .map(|p| format!("; written to {}", p.display()))
                .unwrap_or_default()
        ));
    }
    Ok(Exit::Success)
}
