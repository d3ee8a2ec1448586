//! `world checkpoint`: sign a C2SP tlog-checkpoint of the log and store it; `checkpoint list`;
//! `checkpoint cosign` (a witness's act) and `checkpoint merge` (witness cosignatures into the
//! stored checkpoint). Library: [`crate::ops::checkpoint`].

use std::path::{Path, PathBuf};

use clap::Subcommand;

use super::key::{read_note, read_signer, read_verifier, trust_err};
use super::output::{rfc3339, Output};
use super::{CliError, Context, Exit};
use crate::ops::checkpoint as ops;

/// Sign the log's current Merkle root as a C2SP tlog-checkpoint with the log's key, store it,
/// and print it (or write it to --out FILE).
///
/// The origin line is the key's name. The root is recomputed from the log itself, and the log
/// must still extend every checkpoint this store signed before under that origin: a rewritten
/// history is refused (exit 3) instead of signed. Publish the checkpoint somewhere the store's
/// owner cannot rewrite (a git repository, a CI artefact, a witness): `world verify
/// --checkpoint FILE --key KEY` later proves the log still extends it.
#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    /// List or cosign instead of signing
    #[command(subcommand)]
    cmd: Option<Cmd>,
    /// The log's private key file (world key generate)
    #[arg(long, value_name = "FILE")]
    key: Option<PathBuf>,
    /// Also write the checkpoint to FILE (replaced atomically)
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

/// `world checkpoint` subcommands.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// List the checkpoints this store signed, oldest first
    List,
    /// Print a stored checkpoint's note (the latest, or the one of tree size N)
    Show {
        /// The tree size (default: the latest checkpoint)
        #[arg(value_name = "SIZE")]
        size: Option<u64>,
    },
    /// As a witness: check a checkpoint's log signature (and, with --last and --proof, that it
    /// extends the checkpoint this witness cosigned before), then add a tlog-cosignature line
    Cosign {
        /// The checkpoint to cosign (`-` for stdin)
        #[arg(value_name = "CHECKPOINT")]
        file: PathBuf,
        /// The witness's private key file (world key generate --witness)
        #[arg(long, value_name = "FILE")]
        key: PathBuf,
        /// The log's public key (NAME+KEYID+BASE64, or a file holding it)
        #[arg(long, value_name = "KEY")]
        log_key: String,
        /// The checkpoint this witness cosigned last (requires --proof)
        #[arg(long, value_name = "FILE", requires = "proof")]
        last: Option<PathBuf>,
        /// The consistency proof from --last to CHECKPOINT (world prove --from LAST
        /// --checkpoint CHECKPOINT)
        #[arg(long, value_name = "FILE", requires = "last")]
        proof: Option<PathBuf>,
        /// Write the cosigned checkpoint to FILE instead of stdout
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Merge the cosignature lines of a cosigned copy of a stored checkpoint into it
    Merge {
        /// The cosigned checkpoint (`-` for stdin)
        #[arg(value_name = "CHECKPOINT")]
        file: PathBuf,
        /// A witness whose cosignature must verify before anything is merged (repeatable)
        #[arg(long, value_name = "KEY")]
        witness: Vec<String>,
    },
}

/// Write `text` to `path`, replacing it atomically (a temporary file in the same directory,
/// then a rename).
pub(crate) fn write_atomic(path: &Path, text: &str, what: &str) -> Result<(), CliError> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let io = |e: std::io::Error| {
        CliError::failed(what.to_string(), format!("write {}: {e}", path.display()))
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    tmp.write_all(text.as_bytes()).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

/// Run `world checkpoint`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    match args.cmd {
        None => sign(ctx, out, args.key, args.out),
        Some(Cmd::List) => list(ctx, out),
        Some(Cmd::Show { size }) => show(ctx, out, size),
        Some(Cmd::Cosign {
            file,
            key,
            log_key,
            last,
            proof,
            out: to,
        }) => cosign(ctx, out, &file, &key, &log_key, last.zip(proof), to),
        Some(Cmd::Merge { file, witness }) => merge(ctx, out, &file, &witness),
    }
}

fn sign(
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

fn list(ctx: &Context, out: &mut Output) -> Result<Exit, CliError> {
    let store = ctx.open_read()?;
    let rows = crate::store::checkpoints::list(store.conn())
        .map_err(|e| CliError::store("checkpoint list", e))?;
    if out.json {
        for r in &rows {
            out.json_line(r)?;
        }
        return Ok(Exit::Success);
    }
    if rows.is_empty() {
        out.status("no checkpoints: sign one with world checkpoint --key FILE");
        return Ok(Exit::Success);
    }
    // docs/TABLES.md: ID always; ORIGIN, SIGNATURES, CREATED, ROOT and SIZE are hidden in
    // that order.
    let mut t = super::table::Table::new(vec![
        super::table::Col::id("id").right(),
        super::table::Col::id("size").drop(5).right(),
        super::table::Col::id("root").drop(4),
        super::table::Col::id("origin").drop(1),
        super::table::Col::id("signatures").drop(2).right(),
        super::table::Col::id("created").drop(3),
    ]);
    for r in &rows {
        let sigs = crate::tlog::note::Note::parse(r.note.as_bytes())
            .map(|n| n.signatures.len())
            .unwrap_or(0);
        t.add_row(vec![
            r.id.to_string(),
            r.tree_size.to_string(),
            hex::encode(&r.root_hash[..6]),
            r.origin.clone(),
            sigs.to_string(),
            rfc3339(r.created_at),
        ]);
    }
    out.table(&t)?;
    Ok(Exit::Success)
}

fn show(ctx: &Context, out: &mut Output, size: Option<u64>) -> Result<Exit, CliError> {
    let what = "checkpoint show";
    let store = ctx.open_read()?;
    let rows =
        crate::store::checkpoints::list(store.conn()).map_err(|e| CliError::store(what, e))?;
    let row = match size {
        None => rows.last(),
        Some(n) => rows.iter().rev().find(|r| r.tree_size == n),
    }
    .ok_or_else(|| {
        CliError::failed(
            what,
            match size {
                None => "this store has no checkpoint".to_string(),
                Some(n) => format!("no checkpoint of tree size {n}"),
            },
        )
    })?;
    if out.json {
        out.json_line(row)?;
    } else {
        out.bytes(row.note.as_bytes())?;
    }
    Ok(Exit::Success)
}

fn cosign(
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
    let bytes = super::read_input(path, 1 << 20, what)?;
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

fn merge(
    ctx: &Context,
    out: &mut Output,
    file: &Path,
    witnesses: &[String],
) -> Result<Exit, CliError> {
    let what = "checkpoint merge";
    let note = read_note(file, what)?;
    let ws = witnesses
        .iter()
        .map(|w| read_verifier(w, what))
        .collect::<Result<Vec<_>, _>>()?;
    let mut store = ctx.open_write(false)?;
    let (row, added) = ops::merge(&mut store, &note, &ws).map_err(trust_err(what))?;
    if out.json {
        out.json_line(&row)?;
    } else {
        out.status(format!(
            "checkpoint {} ({} entries): {added} signature line(s) added",
            row.id, row.tree_size
        ));
    }
    Ok(Exit::Success)
}
