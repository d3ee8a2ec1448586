//! `world pin --interpreter PATH|REF|embedded`: archive (or resolve) an interpreter and
//! bootstrap the epoch registry from its release (transitions.md §4–§5).
//!
//! Also home of the interpreter plumbing `publish` shares: parsing `--interpreter`, the
//! [`provider`] integration point, and mapping provider and epoch errors to exit codes.

use super::output::Output;
use super::{CliError, Context, Exit};
use crate::ops;
use crate::transitions::epoch::EpochError;
use crate::transitions::publish::{InterpreterChoice, InterpreterProvider, ProviderError};

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
    if e.integrity {
        CliError::integrity(what, e)
    } else {
        CliError::failed(what, e)
    }
}

/// Map an epoch error: a divergence is fatal like a refused store (exit 2), a corrupt head is
/// an integrity failure (exit 3), the rest exit 1.
pub(crate) fn epoch_err(what: &str, e: EpochError) -> CliError {
    match e {
        EpochError::Store(s) => CliError::store(what, s),
        EpochError::Divergence { .. } => CliError::usage(what, e)
            .hint("the epoch registry is never rewritten; pin the interpreter it nominates, or use a fresh store"),
        EpochError::Corrupt { .. } => CliError::integrity(what, e),
        other => CliError::failed(what, other),
    }
}

/// Warn when a bootstrapped epoch registry names a release the reference daemon cannot serve
/// (ailang.md §6: a release that does not start with `AILANG v`).
pub(crate) fn warn_foreign_release(out: &mut Output, release: &str) {
    if !release.starts_with("AILANG v") {
        out.warn(format!(
            "the epoch registry nominates {release:?}; the reference daemon cannot serve a store whose epoch registry names this release (fatal epoch divergence at its startup)"
        ));
    }
}

/// Run `world pin`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    let choice = parse_choice(&args.interpreter)?;
    let mut store = ctx.open_write(true)?;
    let provider = provider(ctx);
    let pinned =
        ops::pin::pin(&mut store, provider.as_ref(), &choice).map_err(|e| pin_err("pin", e))?;
    let release = &pinned.release;
    if pinned.created() {
        warn_foreign_release(out, release);
    }
    if out.json {
        out.json_line(&serde_json::json!({
            "interpreter": pinned.interpreter_ref,
            "release": release,
            "epochRegistry": pinned.epoch.head().to_string(),
            "created": pinned.created(),
        }))?;
    } else {
        out.line(&pinned.interpreter_ref)?;
        out.status(format!(
            "pinned interpreter {} (release {release:?}); epoch registry {} (head {})",
            pinned.interpreter_ref,
            if pinned.created() {
                "bootstrapped with epoch 1"
            } else {
                "already nominates it; nothing written"
            },
            pinned.epoch.head()
        ));
    }
    Ok(Exit::Success)
}

/// Map an [`ops::pin::PinError`] by its cause.
pub(crate) fn pin_err(what: &str, e: ops::pin::PinError) -> CliError {
    match e {
        ops::pin::PinError::Provider(p) => provider_err(what, p),
        ops::pin::PinError::Epoch(x) => epoch_err(what, x),
        ops::pin::PinError::Store(s) => CliError::store(what, s),
    }
}
