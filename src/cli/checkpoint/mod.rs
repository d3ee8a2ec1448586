//! `world checkpoint`: sign a C2SP tlog-checkpoint of the log and store it; `checkpoint list`;
//! `checkpoint cosign` (a witness's act) and `checkpoint merge` (witness cosignatures into the
//! stored checkpoint). Library: [`crate::ops::checkpoint`].

mod cosign;
mod files;
mod list;
mod merge;
mod show;
mod sign;

use std::path::PathBuf;

use clap::Subcommand;

use super::output::Output;
use super::{CliError, Context, Exit};

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

/// Run `world checkpoint`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    match args.cmd {
        None => sign::run(ctx, out, args.key, args.out),
        Some(Cmd::List) => list::run(ctx, out),
        Some(Cmd::Show { size }) => show::run(ctx, out, size),
        Some(Cmd::Cosign {
            file,
            key,
            log_key,
            last,
            proof,
            out: to,
        }) => cosign::run(ctx, out, &file, &key, &log_key, last.zip(proof), to),
        Some(Cmd::Merge { file, witness }) => merge::run(ctx, out, &file, &witness),
    }
}
