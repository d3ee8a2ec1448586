//! Reading files the user names, bounded and without blocking (issue 13 §5, issue 26 §5).
//!
//! The one rule for every file the CLI opens: it is opened non-blocking (so a FIFO or a
//! device never hangs the open), must be a regular file (checked on the opened descriptor, not
//! the path), and is read with the bound of its [`Kind`] enforced while reading: a file that
//! grows past the bound, or lies about its size, stops at `max + 1` bytes and is refused. The
//! store file itself is not read whole — SQLite pages it — but `--db` must name a regular
//! file or nothing ([`check_regular`], used by the store's open).

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

/// What a user-named file is, and so its size bound in bytes ([`Kind::max`]). Every file the
/// CLI reads whole is one of these; the constants the commands name (`MAX_BODY`,
/// `MAX_MANIFEST_BYTES`, …) are these bounds (a unit test of the CLI keeps them equal).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A commit body (`world commit`, `genesis --body`, a `commit --batch` line): 8 MiB.
    CommitBody,
    /// A transition manifest (`publish --manifest`): 16 MiB.
    Manifest,
    /// A transition or AILANG source file: 8 MiB.
    Source,
    /// An exec profile (`--exec-profile`): 1 MiB.
    ExecProfile,
    /// An arguments file (`invoke --args-file`): 1 MiB, the invocation input bound.
    ArgsFile,
    /// A session token file (`--session FILE`, `WORLD_SESSION`): 256 bytes.
    SessionToken,
    /// A limits configuration (`limits init --config`): 16 MiB.
    LimitsConfig,
    /// Evidence attached to a ledger or mission command: 16 MiB.
    Evidence,
    /// A mission contract, command or command list: 1 MiB.
    MissionJson,
    /// A result file (`why --result`): 8 MiB.
    ResultFile,
    /// A PostgreSQL password file (`~/.pgpass`, `PGPASSFILE`): 1 MiB.
    PasswordFile,
}

impl Kind {
    /// Every kind, for the table in the docs and its test.
    pub const ALL: [Kind; 11] = [
        Kind::CommitBody,
        Kind::Manifest,
        Kind::Source,
        Kind::ExecProfile,
        Kind::ArgsFile,
        Kind::SessionToken,
        Kind::LimitsConfig,
        Kind::Evidence,
        Kind::MissionJson,
        Kind::ResultFile,
        Kind::PasswordFile,
    ];

    /// The size bound in bytes.
    pub const fn max(self) -> usize {
        const MIB: usize = 1024 * 1024;
        match self {
            Kind::CommitBody | Kind::Source | Kind::ResultFile => 8 * MIB,
            Kind::Manifest | Kind::LimitsConfig | Kind::Evidence => 16 * MIB,
            Kind::ExecProfile | Kind::ArgsFile | Kind::MissionJson | Kind::PasswordFile => MIB,
            Kind::SessionToken => 256,
        }
    }

    /// What the file is, for messages (`exec profile`).
    pub const fn noun(self) -> &'static str {
        match self {
            Kind::CommitBody => "commit body",
            Kind::Manifest => "manifest",
            Kind::Source => "source file",
            Kind::ExecProfile => "exec profile",
            Kind::ArgsFile => "arguments file",
            Kind::SessionToken => "session file",
            Kind::LimitsConfig => "limits configuration",
            Kind::Evidence => "evidence file",
            Kind::MissionJson => "mission file",
            Kind::ResultFile => "result file",
            Kind::PasswordFile => "password file",
        }
    }
}

/// Read the regular file `path` of kind `kind`, at most [`Kind::max`] bytes (the module's
/// rule).
///
/// # Errors
/// [`ReadError::Io`], [`ReadError::NotRegular`], [`ReadError::TooLarge`].
pub fn read(path: &Path, kind: Kind) -> Result<Vec<u8>, ReadError> {
    read_regular(path, kind.max())
}

/// `Ok(true)` when `path` names a regular file (symlinks followed), `Ok(false)` when it names
/// nothing; a directory, FIFO, device or socket is [`ReadError::NotRegular`]. Looks at the
/// path only, never opens it (opening a FIFO could block).
///
/// # Errors
/// [`ReadError::NotRegular`]; [`ReadError::Io`] for a `stat` failure other than "not found".
pub fn check_regular(path: &Path) -> Result<bool, ReadError> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(true),
        Ok(m) => Err(ReadError::NotRegular {
            path: path.display().to_string(),
            kind: file_kind(&m.file_type()),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(source) => Err(ReadError::Io {
            path: path.display().to_string(),
            source,
        }),
    }
}

fn file_kind(ft: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_file() {
        "regular file"
    } else if ft.is_dir() {
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
    }
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
        return Err(ReadError::NotRegular {
            path: label,
            kind: file_kind(&ft),
        });
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
