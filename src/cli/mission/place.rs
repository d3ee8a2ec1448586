//! Where a mission verb's missions are: the standalone `--ledger`, or the store file; and the
//! World store connection `--session` and `--evidence REF` read.

use super::*;

/// Open for writing: the ledger, or the store under its writer lock.
pub(super) fn open_write(
    ctx: &Context,
    ledger: Option<&str>,
    what: &str,
) -> Result<Target, CliError> {
    match ledger {
        Some(l) => open_ledger(l, what),
        None => Ok(Target::Store(ctx.open_write(false)?)),
    }
}

/// Open for reading: the ledger, or the store read-only.
pub(super) fn open_read(
    ctx: &Context,
    ledger: Option<&str>,
    what: &str,
) -> Result<Target, CliError> {
    match ledger {
        Some(l) => open_ledger(l, what),
        None => Ok(Target::Store(ctx.open_read()?)),
    }
}

pub(super) fn open_ledger(location: &str, what: &str) -> Result<Target, CliError> {
    crate::mission::ledger::open(location)
        .map(Target::Standalone)
        .map_err(|e| store_err(what, e))
}

/// The World store connection for `--session` and `--evidence REF`: the open store, or (with
/// a ledger) a read-only open of `--db` kept in `aux`.
pub(super) fn store_conn<'a>(
    target: &'a Target,
    ctx: &Context,
    aux: &'a mut Option<Store>,
) -> Result<&'a Connection, CliError> {
    match target {
        Target::Store(s) => Ok(s.conn()),
        Target::Standalone(_) => {
            if aux.is_none() {
                *aux = Some(ctx.open_read()?);
            }
            Ok(aux
                .as_ref()
                .map(Store::conn)
                .ok_or_else(|| CliError::failed("mission", "the World store did not open"))?)
        }
    }
}
