//! `world prove ENTRY` (inclusion proof) and `world prove --from OLD` (consistency proof)
//! against a signed checkpoint. Library: [`crate::ops::checkpoint`].

use std::path::PathBuf;

use super::key::{read_note, read_verifier, trust_err};
use super::output::Output;
use super::{CliError, Context, Exit};
use crate::ops::checkpoint as ops;

/// Prove that an entry is in a signed checkpoint's tree (a C2SP tlog-proof, verifiable with
/// only the checkpoint's public key), or with --from that the log of one checkpoint extends
/// another (an RFC 9162 consistency proof).
///
/// The checkpoint is --checkpoint FILE, else the latest this store signed. Every proof is
/// checked against the checkpoint's root before it is printed: a store whose log no longer
/// matches the checkpoint is refused (exit 3).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The entry: an index, `head`, or an entry hash (full, bare hex, or a unique prefix)
    #[arg(
        value_name = "ENTRY",
        required_unless_present = "from",
        conflicts_with = "from"
    )]
    entry: Option<String>,
    /// The checkpoint to prove against (default: this store's latest)
    #[arg(long, value_name = "FILE")]
    checkpoint: Option<PathBuf>,
    /// Print the consistency proof from this older checkpoint to the checkpoint instead
    #[arg(long, value_name = "OLD_CHECKPOINT")]
    from: Option<PathBuf>,
    /// Check the checkpoints' signatures with this public key first (NAME+KEYID+BASE64 or a
    /// file)
    #[arg(long, value_name = "KEY")]
    key: Option<String>,
}

/// Run `world prove`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    let what = "prove";
    let key = args
        .key
        .as_deref()
        .map(|k| read_verifier(k, what))
        .transpose()?;
    let store = ctx.open_read()?;
    let given = match &args.checkpoint {
        Some(p) => Some(
            ops::read_checkpoint(&read_note(p, what)?, key.as_ref()).map_err(trust_err(what))?,
        ),
        None => None,
    };
    let (cp, note) = ops::checkpoint_or_latest(&store, given).map_err(trust_err(what))?;
    if let Some(from) = &args.from {
        let (old, _) =
            ops::read_checkpoint(&read_note(from, what)?, key.as_ref()).map_err(trust_err(what))?;
        let p = ops::prove_consistency(&store, &old, &cp).map_err(trust_err(what))?;
        if out.json {
            out.json_line(&p)?;
        } else {
            out.line(format!("old {}", p.old_size))?;
            out.line(format!("new {}", p.new_size))?;
            for h in &p.proof {
                out.line(h)?;
            }
            out.status(format!(
                "the log of {} entries extends the checkpoint of {} ({} hashes)",
                p.new_size,
                p.old_size,
                p.proof.len()
            ));
        }
        return Ok(Exit::Success);
    }
    let entry = args.entry.as_deref().unwrap_or("head");
    let index = super::log::entry_index(&store, entry, what)?;
    let index = u64::try_from(index).map_err(|_| CliError::failed(what, "a negative index"))?;
    let p = ops::prove_inclusion(&store, index, &cp, &note).map_err(trust_err(what))?;
    if out.json {
        out.json_line(&p)?;
    } else {
        out.bytes(p.tlog_proof.as_bytes())?;
        out.status(format!(
            "entry {index} is leaf {index} of the checkpoint's tree of {} entries (origin {})",
            cp.size, cp.origin
        ));
    }
    Ok(Exit::Success)
}
