//! `world export-episode EP --out FILE [--embed]`: write a self-contained bundle store that
//! `world replay --db FILE --all` can replay elsewhere (issue 6 part 4; library in
//! [`crate::replay::bundle`]).

use std::path::PathBuf;

use super::output::Output;
use super::{CliError, Context, Exit};
use crate::ops;
use crate::replay::bundle::ExportError;
use crate::replay::ReplayError;

/// Export what replaying one episode needs into a new store FILE (never overwritten).
///
/// The bundle holds the episode's coordinator entries, world rows, records, inputs, outputs,
/// plans, effect records with requests and results, transition sources and journal rows, and
/// is marked as a bundle so `world verify FILE` accepts its gaps. Archived interpreters are
/// copied to FILE.artifacts/ (or embedded with --embed). With --checkpoint the latest signed
/// checkpoint and every entry's inclusion proof go in too. Exit 0 written; 1 no such episode,
/// FILE exists, or no checkpoint covers the episode; 3 a pinned interpreter is altered, or the
/// log no longer matches the checkpoint.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The episode to export
    episode: String,
    /// The bundle store to create (refused when it exists)
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Store the pinned interpreter binaries inside the bundle instead of FILE.artifacts/
    #[arg(long)]
    embed: bool,
    /// Put the store's latest signed checkpoint and each entry's inclusion proof into the
    /// bundle, so `world verify --bundle FILE --key KEY` proves it offline
    #[arg(long)]
    checkpoint: bool,
}

/// Run `world export-episode`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    let src = ctx.open_read()?;
    let bar = super::progress::bar(out, 0, "exporting objects");
    let mut progress = |done: u64, total: u64| {
        bar.set_length(total);
        bar.set_position(done);
    };
    let opts = ops::export::Options {
        episode: args.episode,
        out: args.out,
        embed: args.embed,
        checkpoint: args.checkpoint,
    };
    let done = ops::export::export_episode(&src, &opts, &mut progress);
    bar.finish_and_clear();
    let done = done.map_err(|e| match e {
        ExportError::Store(s) | ExportError::Select(ReplayError::Store(s)) => {
            CliError::store("export-episode", s)
        }
        ExportError::Interpreter {
            integrity: true, ..
        }
        | ExportError::Proofs {
            integrity: true, ..
        } => CliError::integrity("export-episode", e),
        ExportError::Exists(ref p) => {
            let hint = format!(
                "a bundle is never overwritten: remove {} (and any .artifacts/ beside it) or choose another --out",
                p.display()
            );
            CliError::failed("export-episode", e).hint(hint)
        }
        other => CliError::failed("export-episode", other),
    })?;
    if out.json {
        out.json_line(&done)?;
    } else {
        out.summary(format!(
            "exported episode {} ({} entries: {}) to {}; {} objects, {} journal rows; marker {}",
            done.episode,
            done.entries.len(),
            done.entries
                .iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(" "),
            done.out.display(),
            done.objects,
            done.journal_rows,
            done.marker
        ))?;
        if done.proofs > 0 {
            out.summary(format!(
                "{} entries carry an inclusion proof in the latest signed checkpoint; check it with: world verify --bundle {} --key KEY",
                done.proofs,
                done.out.display()
            ))?;
        }
        for r in &done.interpreters {
            out.summary(match &done.artifacts {
                Some(a) => format!("interpreter {r} copied to {}", a.display()),
                None => format!("interpreter {r} embedded in the bundle"),
            })?;
        }
        out.status(format!(
            "replay it with: world replay --db {} --all",
            done.out.display()
        ));
    }
    Ok(Exit::Success)
}
