//! The entry argument every command that names one log entry takes (`log get`, `show`,
//! `prove`): an index, `head`, or an entry hash or its prefix.

use crate::cli::{read_err, CliError};

/// Resolve an entry argument (index, `head`, entry hash or prefix) to its index.
pub(crate) fn entry_index(
    store: &crate::store::Store,
    text: &str,
    what: &str,
) -> Result<i64, CliError> {
    if text == "head" {
        let (_, last) = store.log_bounds().map_err(read_err("log"))?;
        return last.ok_or_else(|| {
            CliError::failed(what, "the log is empty").hint("create a store with `world genesis`")
        });
    }
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        let index: Option<i64> = text.parse().ok();
        let exists = match index {
            Some(i) => store
                .log_entry(i)
                .map_err(|e| CliError::store(what, e))?
                .is_some(),
            None => false,
        };
        // A short entry hash the log table printed can be all decimal digits (about one in
        // 280 of them): when no entry has that index, the digits are read as an entry-hash
        // prefix if one matches.
        if !exists {
            if let Ok(c) =
                crate::store::refs::resolve(store.conn(), &[crate::store::refs::Space::Entry], text)
            {
                if let Some(i) = crate::store::refs::entry_index_of(store.conn(), &c.reference)
                    .map_err(|e| crate::cli::refs::ref_err(what, e))?
                {
                    return Ok(i);
                }
            }
        }
        return index
            .ok_or_else(|| CliError::failed(what, "log index must be a non-negative integer"));
    }
    if text.starts_with('-') {
        return Err(CliError::failed(
            what,
            "log index must be a non-negative integer",
        ));
    }
    let c = crate::cli::refs::resolve(store, &[crate::store::refs::Space::Entry], text, what)?;
    crate::store::refs::entry_index_of(store.conn(), &c.reference)
        .map_err(|e| crate::cli::refs::ref_err(what, e))?
        .ok_or_else(|| {
            CliError::failed(what, format!("no log entry has entry hash {}", c.reference))
                .with_code("not_found")
        })
}
