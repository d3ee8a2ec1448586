//! The checkpoint files `sign` and `cosign` write.

use std::path::Path;

use crate::cli::CliError;

/// Write `text` to `path`, replacing it atomically (a temporary file in the same directory,
/// then a rename).
pub(super) fn write_atomic(path: &Path, text: &str, what: &str) -> Result<(), CliError> {
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
