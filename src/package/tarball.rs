//! The package's three digests and its tarball, computed from the bytes on disk (the
//! reference's `host/pkgproj`, which re-implements AILANG's `pkg` hashes).
//!
//! | Digest | Formula |
//! |---|---|
//! | content hash | sha256 over every `*.ail` file under the directory (all of them, any depth), sorted by relative path (bytewise), each contributing `file:<rel>\n` then its bytes |
//! | interface hash | sha256 over `name:<name>\n`, `edition:<edition>\n`, `ailang:<ailang>\n` (only when non-empty), then `export:<m>\n` for the sorted exports and `effect:<e>\n` for the sorted effects |
//! | tarball | gzip(tar) of `ailang.toml`, `*.ail`, `AGENT.md` and everything under `assets/`, skipping directories named `.git`, `tests` or `test`; entries sorted by path, USTAR headers with mode 0644, uid/gid 0, mtime 0, no directory entries, two zero blocks at the end; gzip with mtime 0, no name, OS 255, level 6 |
//! | tarball hash | sha256 of the tarball bytes |
//!
//! Digests are rendered `sha256:<64 hex>`. The tar stream is byte-identical to Go's
//! `archive/tar` for paths USTAR can hold (a path that needs a PAX record, non-ASCII or too
//! long to split, is refused). The gzip stream is deflated by `flate2` (miniz_oxide), not Go's
//! `compress/flate`, so the tarball bytes and hash are `world`'s own and deterministic
//! (docs/DECISIONS.md DEC-PKG-3).
//!
//! Symlinks and other non-regular files that would be selected are refused (the reference
//! follows a symlinked file); names must be UTF-8.

use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::manifest::{Manifest, MANIFEST_FILE};

/// Largest single package file read, in bytes.
pub const MAX_FILE_BYTES: usize = 64 * 1024 * 1024;
/// Largest total of the files one digest reads, in bytes.
pub const MAX_TOTAL_BYTES: u64 = 256 * 1024 * 1024;
/// Largest tarball the registry accepts (the validator's 50 MiB form limit), in bytes.
pub const MAX_TARBALL_BYTES: usize = 50 * 1024 * 1024;

/// Why the package directory could not be hashed or packed.
#[derive(Debug, thiserror::Error)]
pub enum PackError {
    /// A directory or file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A selected file could not be read as a bounded regular file.
    #[error(transparent)]
    Read(#[from] crate::fileread::ReadError),
    /// A selected entry is a symlink or another non-regular file.
    #[error("package entry {0} is a symlink or special file; only regular files are packed")]
    NotRegular(String),
    /// A name is not UTF-8.
    #[error("package entry {0:?} has a name that is not UTF-8")]
    NotUtf8(PathBuf),
    /// A path USTAR cannot hold without a PAX record.
    #[error("package path {0:?} does not fit a USTAR header (non-ASCII, or too long to split)")]
    PathTooLong(String),
    /// Too many bytes.
    #[error("the package holds more than {MAX_TOTAL_BYTES} bytes of selected files")]
    TooLarge,
    /// The directory's own name makes the reference's walk skip everything.
    #[error("the package directory is named {0:?}, which the reference's tarball walk skips whole; rename it")]
    SkippedRoot(String),
}

/// `sha256:<hex>` of `bytes`.
pub fn sha256_ref(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// One walked entry: its `/`-separated path relative to the package directory and its path.
struct Entry {
    rel: String,
    path: PathBuf,
    regular: bool,
}

/// Walks `dir` like Go's `filepath.Walk` (lexical order, no symlink following), calling
/// `skip_dir` on each directory name below the root.
fn walk(dir: &Path, skip_dir: &dyn Fn(&str) -> bool) -> Result<Vec<Entry>, PackError> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), String::new())];
    while let Some((path, rel)) = stack.pop() {
        let io = |source| PackError::Io {
            path: path.display().to_string(),
            source,
        };
        let mut names = Vec::new();
        for e in std::fs::read_dir(&path).map_err(io)? {
            let e = e.map_err(io)?;
            let name = e
                .file_name()
                .into_string()
                .map_err(|_| PackError::NotUtf8(e.path()))?;
            names.push((name, e.path(), e.file_type().map_err(io)?));
        }
        names.sort_by(|a, b| a.0.cmp(&b.0));
        // Depth first in lexical order: push directories in reverse.
        let mut dirs = Vec::new();
        for (name, p, ft) in names {
            let child = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if ft.is_dir() {
                if !skip_dir(&name) {
                    dirs.push((p, child));
                }
            } else {
                out.push(Entry {
                    rel: child,
                    path: p,
                    regular: ft.is_file(),
                });
            }
        }
        stack.extend(dirs.into_iter().rev());
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(out)
}

/// Reads the selected entries, bounded, in path order.
fn read_selected(entries: Vec<Entry>) -> Result<Vec<(String, Vec<u8>)>, PackError> {
    let mut total = 0u64;
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        if !e.regular {
            return Err(PackError::NotRegular(e.rel));
        }
        let bytes = crate::fileread::read_regular(&e.path, MAX_FILE_BYTES)?;
        total += bytes.len() as u64;
        if total > MAX_TOTAL_BYTES {
            return Err(PackError::TooLarge);
        }
        out.push((e.rel, bytes));
    }
    Ok(out)
}

/// The content hash of the package directory `dir` (module docs).
///
/// # Errors
/// [`PackError`].
pub fn content_hash(dir: &Path) -> Result<String, PackError> {
    let entries = walk(dir, &|_| false)?
        .into_iter()
        .filter(|e| e.rel.ends_with(".ail"))
        .collect();
    let mut h = Sha256::new();
    for (rel, bytes) in read_selected(entries)? {
        h.update(format!("file:{rel}\n").as_bytes());
        h.update(&bytes);
    }
    Ok(format!("sha256:{}", hex::encode(h.finalize())))
}

/// The interface hash of `m` (module docs).
pub fn interface_hash(m: &Manifest) -> String {
    let mut h = Sha256::new();
    h.update(format!("name:{}\n", m.name).as_bytes());
    h.update(format!("edition:{}\n", m.edition).as_bytes());
    if !m.ailang.is_empty() {
        h.update(format!("ailang:{}\n", m.ailang).as_bytes());
    }
    let mut exports = m.exports.clone();
    exports.sort();
    for e in exports {
        h.update(format!("export:{e}\n").as_bytes());
    }
    let mut effects = m.effects.clone();
    effects.sort();
    for e in effects {
        h.update(format!("effect:{e}\n").as_bytes());
    }
    format!("sha256:{}", hex::encode(h.finalize()))
}

/// Whether the tarball carries the file at `rel`.
fn tarball_selects(rel: &str) -> bool {
    rel == MANIFEST_FILE || rel.ends_with(".ail") || rel == "AGENT.md" || rel.starts_with("assets/")
}

/// The directory names the tarball walk skips.
fn tarball_skips(name: &str) -> bool {
    matches!(name, ".git" | "tests" | "test")
}

/// The files the tarball holds, in order: `(path, bytes)`.
///
/// # Errors
/// [`PackError`].
pub fn tarball_files(dir: &Path) -> Result<Vec<(String, Vec<u8>)>, PackError> {
    if let Some(base) = dir
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
    {
        if tarball_skips(&base) {
            return Err(PackError::SkippedRoot(base));
        }
    }
    let entries = walk(dir, &tarball_skips)?
        .into_iter()
        .filter(|e| tarball_selects(&e.rel))
        .collect();
    read_selected(entries)
}

/// Go's `splitUSTARPath`: `(prefix, name)` for a path longer than 100 bytes, or `None`.
fn split_ustar(name: &str) -> Option<(&str, &str)> {
    let mut length = name.len();
    if length <= 100 || !name.is_ascii() {
        return None;
    } else if length > 156 {
        length = 156;
    } else if name.as_bytes()[length - 1] == b'/' {
        length -= 1;
    }
    let i = name[..length].rfind('/')?;
    let (plen, nlen) = (i, name.len() - i - 1);
    if i == 0 || nlen > 100 || nlen == 0 || plen > 155 {
        return None;
    }
    Some((&name[..i], &name[i + 1..]))
}

/// One USTAR header as Go's `archive/tar` writes it for a regular file.
fn ustar_header(name: &str, size: u64) -> Result<tar::Header, PackError> {
    let mut h = tar::Header::new_ustar();
    let (prefix, short) = if name.len() <= 100 && name.is_ascii() {
        ("", name)
    } else {
        split_ustar(name).ok_or_else(|| PackError::PathTooLong(name.to_string()))?
    };
    {
        let u = h.as_ustar_mut().expect("a ustar header");
        u.name[..short.len()].copy_from_slice(short.as_bytes());
        u.prefix[..prefix.len()].copy_from_slice(prefix.as_bytes());
    }
    h.set_mode(0o644);
    h.set_uid(0);
    h.set_gid(0);
    h.set_size(size);
    h.set_mtime(0);
    h.set_entry_type(tar::EntryType::Regular);
    h.set_device_major(0)
        .and_then(|()| h.set_device_minor(0))
        .map_err(|e| PackError::Io {
            path: name.to_string(),
            source: e,
        })?;
    h.set_cksum();
    // Go writes the checksum as six octal digits, NUL, space.
    let sum = h.cksum().map_err(|e| PackError::Io {
        path: name.to_string(),
        source: e,
    })?;
    let field = format!("{sum:06o}");
    let ck = &mut h.as_old_mut().cksum;
    ck[..6].copy_from_slice(&field.as_bytes()[field.len() - 6..]);
    ck[6] = 0;
    ck[7] = b' ';
    Ok(h)
}

/// The uncompressed tar stream of `files` (module docs).
///
/// # Errors
/// [`PackError::PathTooLong`]; I/O errors of the in-memory writer.
pub fn tar_stream(files: &[(String, Vec<u8>)]) -> Result<Vec<u8>, PackError> {
    let io = |source| PackError::Io {
        path: "<tar>".into(),
        source,
    };
    let mut b = tar::Builder::new(Vec::new());
    for (name, bytes) in files {
        let h = ustar_header(name, bytes.len() as u64)?;
        b.append(&h, bytes.as_slice()).map_err(io)?;
    }
    b.into_inner().map_err(io)
}

/// gzip of `data` with mtime 0, no name, OS 255 and level 6 (module docs).
///
/// # Errors
/// I/O errors of the in-memory encoder.
pub fn gzip(data: &[u8]) -> Result<Vec<u8>, PackError> {
    let io = |source| PackError::Io {
        path: "<gzip>".into(),
        source,
    };
    let mut enc = flate2::GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(Vec::new(), flate2::Compression::new(6));
    enc.write_all(data).map_err(io)?;
    enc.finish().map_err(io)
}

/// The package tarball of `dir`: gzip(tar) of the selected files (module docs).
///
/// # Errors
/// [`PackError`].
pub fn tarball(dir: &Path) -> Result<Vec<u8>, PackError> {
    gzip(&tar_stream(&tarball_files(dir)?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str, body: &str) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }

    #[test]
    fn content_hash_is_the_formula_over_sorted_ail_files_at_any_depth() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "b.ail", "B");
        write(d.path(), "a/z.ail", "Z");
        write(d.path(), "tests/t.ail", "T");
        write(d.path(), "notes.md", "ignored");
        let want = sha256_ref(b"file:a/z.ail\nZfile:b.ail\nBfile:tests/t.ail\nT");
        assert_eq!(content_hash(d.path()).unwrap(), want);
    }

    #[test]
    fn interface_hash_sorts_and_omits_an_empty_ailang_line() {
        let m = Manifest {
            name: "v/n".into(),
            version: "1".into(),
            edition: "1".into(),
            ailang: String::new(),
            exports: vec!["b".into(), "a".into()],
            effects: vec!["IO".into()],
        };
        assert_eq!(
            interface_hash(&m),
            sha256_ref(b"name:v/n\nedition:1\nexport:a\nexport:b\neffect:IO\n")
        );
    }

    #[test]
    fn tarball_selects_skips_and_writes_go_headers() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "ailang.toml", "t");
        write(d.path(), "x.ail", "x");
        write(d.path(), "AGENT.md", "a");
        write(d.path(), "assets/logo.txt", "l");
        write(d.path(), "README.md", "no");
        write(d.path(), "tests/t.ail", "no");
        write(d.path(), "sub/test/u.ail", "no");
        write(d.path(), ".git/y.ail", "no");
        let names: Vec<String> = tarball_files(d.path())
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(
            names,
            ["AGENT.md", "ailang.toml", "assets/logo.txt", "x.ail"]
        );
        let tar = tar_stream(&[("x.ail".into(), b"x".to_vec())]).unwrap();
        assert_eq!(tar.len(), 512 + 512 + 1024);
        let h = &tar[..512];
        assert_eq!(&h[100..108], b"0000644\0");
        assert_eq!(&h[108..116], b"0000000\0");
        assert_eq!(&h[124..136], b"00000000001\0");
        assert_eq!(&h[136..148], b"00000000000\0");
        assert_eq!(&h[154..156], b"\0 ");
        assert_eq!(h[156], b'0');
        assert_eq!(&h[257..265], b"ustar\x0000");
        assert_eq!(&h[329..337], b"0000000\0");
        let sum: u32 = h
            .iter()
            .enumerate()
            .map(|(i, b)| {
                if (148..156).contains(&i) {
                    32
                } else {
                    u32::from(*b)
                }
            })
            .sum();
        assert_eq!(&h[148..154], format!("{sum:06o}").as_bytes());
        let gz = gzip(b"abc").unwrap();
        assert_eq!(&gz[..10], &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]);
    }

    #[test]
    fn long_paths_split_like_go_and_unsplittable_ones_are_refused() {
        let long = format!("{}/{}", "d".repeat(60), "f".repeat(60));
        assert_eq!(split_ustar(&long), Some((&long[..60], &long[61..])));
        assert!(tar_stream(&[(long, Vec::new())]).is_ok());
        assert!(matches!(
            tar_stream(&[("x".repeat(101), Vec::new())]),
            Err(PackError::PathTooLong(_))
        ));
    }

    #[test]
    fn symlinks_that_would_be_packed_are_refused() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "ailang.toml", "t");
        std::os::unix::fs::symlink("/etc/hostname", d.path().join("x.ail")).unwrap();
        assert!(matches!(
            content_hash(d.path()),
            Err(PackError::NotRegular(_))
        ));
        assert!(matches!(tarball(d.path()), Err(PackError::NotRegular(_))));
    }
}
