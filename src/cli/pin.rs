//! `world pin --interpreter PATH|REF|embedded`: archive (or resolve) an interpreter and
//! bootstrap the epoch registry from its release (transitions.md §4–§5).
//!
//! Also home of the interpreter plumbing `publish` shares: parsing `--interpreter`, the
//! [`provider`] integration point, and mapping provider and epoch errors to exit codes.

use super::output::Output;
use super::{CliError, Context, Exit};
use crate::store;
use crate::transitions::epoch::{self, Bootstrapped, EpochError};
use crate::transitions::publish::{
    resolve_interpreter, InterpreterChoice, InterpreterProvider, ProviderError,
};

/// Archive an interpreter next to the store and bootstrap the epoch registry from it.
///
/// The epoch registry is written only when the store has none; a registry naming another
/// release is a fatal divergence and is never rewritten (exit 2).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The interpreter: a path to an `ailang` binary (archived), a sha256: ref of an archived
    /// one, or `embedded`
    #[arg(long, value_name = "PATH|REF|embedded")]
    interpreter: String,
}

/// Parse `--interpreter` (exit 2 on a malformed ref).
pub(crate) fn parse_choice(text: &str) -> Result<InterpreterChoice, CliError> {
    InterpreterChoice::parse(text).map_err(|e| CliError::usage("--interpreter", e))
}

/// Where interpreters come from for this store: its archive (`<db>.artifacts`) and the
/// embedded interpreter.
pub fn provider(ctx: &Context) -> Box<dyn InterpreterProvider> {
    Box::new(crate::transitions::pins::StorePins::for_db(&ctx.db))
}

/// Map a provider error: integrity failures exit 3, others 1.
pub(crate) fn provider_err(what: &str, e: ProviderError) -> CliError {
    let exit = if e.integrity {
        Exit::Integrity
    } else {
        Exit::Failed
    };
    CliError::new(exit, what, e)
}

/// Map an epoch error: a divergence is fatal like a refused store (exit 2), a corrupt head is
/// an integrity failure (exit 3), the rest exit 1.
pub(crate) fn epoch_err(what: &str, e: EpochError) -> CliError {
    match e {
        EpochError::Store(s) => CliError::store(what, s),
        EpochError::Divergence { .. } => CliError::usage(what, e)
            .hint("the epoch registry is never rewritten; pin the interpreter it nominates, or use a fresh store"),
        EpochError::Corrupt { .. } => CliError::new(Exit::Integrity, what, e),
        other => CliError::failed(what, other),
    }
}

/// Warn before bootstrapping an epoch registry the reference daemon cannot serve
/// (ailang.md §6: a release that does not start with `AILANG v`).
pub(crate) fn warn_foreign_release(out: &mut Output, release: &str) {
    if !release.starts_with("AILANG v") {
        out.warn(format!(
            "the epoch registry will nominate {release:?}; the reference daemon cannot serve a store whose epoch registry names this release (fatal epoch divergence at its startup)"
        ));
    }
}

/// Run `world pin`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    let choice = parse_choice(&args.interpreter)?;
    let mut store = ctx.open_write(true)?;
    let provider = provider(ctx);
    let interp =
        resolve_interpreter(&choice, provider.as_ref()).map_err(|e| provider_err("pin", e))?;
    let release = interp.release();
    if store
        .registry_head(epoch::SEMANTIC_ID)
        .map_err(|e| CliError::store("pin", e))?
        .is_none()
    {
        warn_foreign_release(out, &release);
    }
    let tx = store.immediate().map_err(|e| CliError::store("pin", e))?;
    let done = epoch::bootstrap(&tx, &release).map_err(|e| epoch_err("pin", e))?;
    tx.commit()
        .map_err(|e| CliError::store("pin", store::Error::from(e)))?;
    let created = matches!(done, Bootstrapped::Created(_));
    if out.json {
        out.json_line(&serde_json::json!({
            "interpreter": interp.interpreter_ref(),
            "release": release,
            "epochRegistry": done.head().to_string(),
            "created": created,
        }))?;
    } else {
        out.line(interp.interpreter_ref())?;
        out.status(format!(
            "pinned interpreter {} (release {release:?}); epoch registry {} (head {})",
            interp.interpreter_ref(),
            if created {
                "bootstrapped with epoch 1"
            } else {
                "already nominates it; nothing written"
            },
            done.head()
        ));
    }
    Ok(Exit::Success)
}
