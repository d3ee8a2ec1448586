//! Reading files the user names, bounded and without blocking (issue 13 §5).
//!
//! Every such file is opened non-blocking (so a FIFO or a device never hangs the open), must be
//! a regular file (checked on the opened descriptor, not the path), and is read with the bound
//! enforced while reading: a file that grows past the bound, or lies about its size, stops at
//! `max + 1` bytes and is refused.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Why a user-named file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Open or read failed.
    #[error("{path}: {source}")]
    Io {
        /// The path as given.
        path: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Not a regular file (a FIFO, device, socket or directory).
    #[error("{path} is not a regular file (a {kind}); only regular files or - (stdin) are read")]
    NotRegular {
        /// The path as given.
        path: String,
        /// What it is.
        kind: &'static str,
    },
    /// Over the bound.
    #[error("{path} is over the {max}-byte limit; nothing was read further")]
    TooLarge {
        /// The path as given.
        path: String,
        /// The bound in bytes.
        max: usize,
    },
}

/// Open the regular file `path` for reading without blocking on the open (see the module
/// docs); the caller bounds its reads.
///
/// # Errors
/// [`ReadError::Io`], [`ReadError::NotRegular`].
pub fn open_regular(path: &Path) -> Result<File, ReadError> {
    let label = path.display().to_string();
    let io = |source| ReadError::Io {
        path: label.clone(),
        source,
    };
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(io)?;
    let ft = f.metadata().map_err(io)?.file_type();
    if !ft.is_file() {
        use std::os::unix::fs::FileTypeExt;
        let kind = if ft.is_dir() {
            "directory"
        } else if ft.is_fifo() {
            "FIFO"
        } else if ft.is_char_device() {
            "character device"
        } else if ft.is_block_device() {
            "block device"
        } else if ft.is_socket() {
            "socket"
        } else {
            "special file"
        };
        return Err(ReadError::NotRegular { path: label, kind });
    }
    Ok(f)
}

/// Read at most `max` bytes of the regular file `path` (see the module docs).
///
/// # Errors
/// [`ReadError::Io`], [`ReadError::NotRegular`], [`ReadError::TooLarge`].
pub fn read_regular(path: &Path, max: usize) -> Result<Vec<u8>, ReadError> {
    let label = path.display().to_string();
    let f = open_regular(path)?;
    read_bounded(f, max).map_err(|e| match e {
        Bounded::Io(source) => ReadError::Io {
            path: label.clone(),
            source,
        },
        Bounded::TooLarge => ReadError::TooLarge {
            path: label.clone(),
            max,
        },
    })
}

enum Bounded {
    Io(std::io::Error),
    TooLarge,
}

fn read_bounded(f: File, max: usize) -> Result<Vec<u8>, Bounded> {
    let mut buf = Vec::new();
    f.take(max as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(Bounded::Io)?;
    if buf.len() > max {
        return Err(Bounded::TooLarge);
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifos_and_devices_are_refused_without_blocking_and_the_bound_holds_while_reading() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(
            read_regular(&fifo, 10),
            Err(ReadError::NotRegular { kind: "FIFO", .. })
        ));
        assert!(matches!(
            read_regular(Path::new("/dev/zero"), 10),
            Err(ReadError::NotRegular { .. })
        ));
        let f = dir.path().join("f");
        std::fs::write(&f, b"0123456789a").unwrap();
        assert!(matches!(
            read_regular(&f, 10),
            Err(ReadError::TooLarge { .. })
        ));
        assert_eq!(read_regular(&f, 11).unwrap(), b"0123456789a");
    }
}
