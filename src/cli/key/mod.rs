//! `world key generate` and `world key public`: Ed25519 keys in the formats of C2SP
//! `signed-note` / Go's `sumdb/note` (DEC-TRUST-3). `read` holds the key readers the
//! checkpoint commands share.

mod generate;
mod public;
mod read;

pub(crate) use self::read::{read_note, read_signer, read_verifier};
pub(crate) use super::error::trust_err;

use std::path::PathBuf;

use clap::Subcommand;

use super::output::Output;
use super::{CliError, Context, Exit};

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

/// Run `world key`.
pub fn run(ctx: &Context, out: &mut Output, cmd: Cmd) -> Result<Exit, CliError> {
    match cmd {
        Cmd::Generate {
            out: path,
            name,
            witness,
        } => generate::run(ctx, out, path, name, witness),
        Cmd::Public { file } => public::run(out, &file),
    }
}
