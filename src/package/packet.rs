//! The ready packet: a package version's identity as nine fields (the reference's
//! `host/pkgproj/readypacket.go` and `scripts/world_package_ready_packet.golden.json`).
//!
//! Bytes: Go-json of the fields in the order of [`FIELDS`] (alphabetical, as the reference's
//! gate writes them), `exports`/`effects` never `null`, then one `\n`:
//!
//! ```text
//! {"compilerVersion":"AILANG v0.30.0","contentHash":"sha256:…","effects":[],"exports":["world/types"],"interfaceHash":"sha256:…","package":"world/core","tarballBytes":5773,"tarballSHA256":"sha256:…","version":"0.1.0"}
//! ```
//!
//! Decoding is strict: exactly these keys with these types, one JSON value, nothing after it.
//! `compilerVersion` is not a property of the bytes on disk: it is a parameter of the
//! recomputation (docs/DECISIONS.md DEC-PKG-2).

use std::path::Path;

use serde_json::Value;

use super::manifest::{Manifest, ManifestError};
use super::tarball::{self, PackError, MAX_TARBALL_BYTES};
use crate::encoding::gojson::Obj;

/// The packet's keys, in wire order; [`ReadyPacket::first_difference`] walks them.
pub const FIELDS: [&str; 9] = [
    "compilerVersion",
    "contentHash",
    "effects",
    "exports",
    "interfaceHash",
    "package",
    "tarballBytes",
    "tarballSHA256",
    "version",
];

/// Largest golden file read, in bytes.
pub const MAX_GOLDEN_BYTES: usize = 64 * 1024;

/// One ready packet.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadyPacket {
    /// The AILANG release the package was checked with (a parameter, not recomputed).
    pub compiler_version: String,
    /// The content hash (`sha256:…`).
    pub content_hash: String,
    /// `effects.max`, in manifest order.
    pub effects: Vec<String>,
    /// `exports.modules`, in manifest order.
    pub exports: Vec<String>,
    /// The interface hash (`sha256:…`).
    pub interface_hash: String,
    /// `<vendor>/<name>`.
    pub package: String,
    /// The tarball's length in bytes.
    pub tarball_bytes: u64,
    /// sha256 of the tarball (`sha256:…`).
    #[serde(rename = "tarballSHA256")]
    pub tarball_sha256: String,
    /// The package version.
    pub version: String,
}

/// Why a packet could not be recomputed or read.
#[derive(Debug, thiserror::Error)]
pub enum PacketError {
    /// The manifest was refused.
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    /// The package could not be hashed or packed.
    #[error(transparent)]
    Pack(#[from] PackError),
    /// The tarball is over the registry's limit.
    #[error("the tarball is {0} bytes; the registry accepts at most {MAX_TARBALL_BYTES}")]
    TooLarge(usize),
    /// A golden file could not be read.
    #[error("read golden: {0}")]
    GoldenRead(#[from] crate::fileread::ReadError),
    /// A golden file does not decode strictly.
    #[error("decode ready packet: {0}")]
    Decode(String),
}

/// The recomputed packet with what it was computed from.
#[derive(Clone, Debug)]
pub struct Recomputed {
    /// The packet.
    pub packet: ReadyPacket,
    /// The manifest it was computed from.
    pub manifest: Manifest,
    /// The tarball bytes.
    pub tarball: Vec<u8>,
    /// sha256 of `ailang.toml`'s bytes (the approval's `manifest=` term).
    pub manifest_ref: String,
}

impl ReadyPacket {
    /// Recomputes the packet of the package directory `dir` from the bytes on disk now.
    ///
    /// # Errors
    /// [`PacketError`].
    pub fn recompute(dir: &Path, compiler_version: &str) -> Result<Recomputed, PacketError> {
        let manifest_bytes = crate::fileread::read_regular(
            &dir.join(super::manifest::MANIFEST_FILE),
            super::manifest::MAX_MANIFEST_BYTES,
        )
        .map_err(ManifestError::Read)?;
        let manifest = Manifest::parse(&manifest_bytes)?;
        let content_hash = tarball::content_hash(dir)?;
        let tar = tarball::tarball(dir)?;
        if tar.len() > MAX_TARBALL_BYTES {
            return Err(PacketError::TooLarge(tar.len()));
        }
        let packet = ReadyPacket {
            compiler_version: compiler_version.to_string(),
            content_hash,
            effects: manifest.effects.clone(),
            exports: manifest.exports.clone(),
            interface_hash: tarball::interface_hash(&manifest),
            package: manifest.name.clone(),
            tarball_bytes: tar.len() as u64,
            tarball_sha256: tarball::sha256_ref(&tar),
            version: manifest.version.clone(),
        };
        Ok(Recomputed {
            packet,
            manifest,
            tarball: tar,
            manifest_ref: tarball::sha256_ref(&manifest_bytes),
        })
    }

    /// The canonical bytes (module docs), trailing newline included.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Obj::new()
            .str("compilerVersion", &self.compiler_version)
            .str("contentHash", &self.content_hash)
            .strs("effects", Some(&self.effects))
            .strs("exports", Some(&self.exports))
            .str("interfaceHash", &self.interface_hash)
            .str("package", &self.package)
            .int("tarballBytes", self.tarball_bytes as i64)
            .str("tarballSHA256", &self.tarball_sha256)
            .str("version", &self.version)
            .finish();
        b.push(b'\n');
        b
    }

    /// Decodes packet bytes strictly (module docs).
    ///
    /// # Errors
    /// [`PacketError::Decode`] naming what is wrong.
    pub fn decode(bytes: &[u8]) -> Result<ReadyPacket, PacketError> {
        let bad = |m: String| PacketError::Decode(m);
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let v: Value = serde::Deserialize::deserialize(&mut de).map_err(|e| bad(e.to_string()))?;
        de.end().map_err(|_| {
            bad("ready packet carries trailing content after the first JSON value".into())
        })?;
        let Value::Object(m) = v else {
            return Err(bad("ready packet is not a JSON object".into()));
        };
        for k in m.keys() {
            if !FIELDS.contains(&k.as_str()) {
                return Err(bad(format!("unknown field {k:?}")));
            }
        }
        let s = |k: &str| -> Result<String, PacketError> {
            match m.get(k) {
                Some(Value::String(s)) => Ok(s.clone()),
                None | Some(Value::Null) => Ok(String::new()),
                Some(_) => Err(bad(format!("field {k:?} is not a string"))),
            }
        };
        let list = |k: &str| -> Result<Vec<String>, PacketError> {
            match m.get(k) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|x| {
                        x.as_str()
                            .map(str::to_owned)
                            .ok_or_else(|| bad(format!("field {k:?} holds a non-string")))
                    })
                    .collect(),
                Some(_) => Err(bad(format!("field {k:?} is not an array of strings"))),
            }
        };
        let tarball_bytes = match m.get("tarballBytes") {
            None | Some(Value::Null) => 0,
            Some(Value::Number(n)) => n
                .as_u64()
                .filter(|n| i64::try_from(*n).is_ok())
                .ok_or_else(
                    || bad("field \"tarballBytes\" is not a non-negative integer".into()),
                )?,
            Some(_) => return Err(bad("field \"tarballBytes\" is not a number".into())),
        };
        Ok(ReadyPacket {
            compiler_version: s("compilerVersion")?,
            content_hash: s("contentHash")?,
            effects: list("effects")?,
            exports: list("exports")?,
            interface_hash: s("interfaceHash")?,
            package: s("package")?,
            tarball_bytes,
            tarball_sha256: s("tarballSHA256")?,
            version: s("version")?,
        })
    }

    /// Reads and strictly decodes a golden file.
    ///
    /// # Errors
    /// [`PacketError::GoldenRead`], [`PacketError::Decode`].
    pub fn load(path: &Path) -> Result<ReadyPacket, PacketError> {
        ReadyPacket::decode(&crate::fileread::read_regular(path, MAX_GOLDEN_BYTES)?)
    }

    /// One field as canonical text (lists as their JSON), for comparison and display.
    pub fn field(&self, name: &str) -> String {
        let list = |l: &[String]| {
            let mut b = vec![b'['];
            for (i, s) in l.iter().enumerate() {
                if i > 0 {
                    b.push(b',');
                }
                crate::encoding::gojson::write_str(&mut b, s);
            }
            b.push(b']');
            String::from_utf8_lossy(&b).into_owned()
        };
        match name {
            "compilerVersion" => self.compiler_version.clone(),
            "contentHash" => self.content_hash.clone(),
            "effects" => list(&self.effects),
            "exports" => list(&self.exports),
            "interfaceHash" => self.interface_hash.clone(),
            "package" => self.package.clone(),
            "tarballBytes" => self.tarball_bytes.to_string(),
            "tarballSHA256" => self.tarball_sha256.clone(),
            "version" => self.version.clone(),
            _ => String::new(),
        }
    }

    /// The first field (in [`FIELDS`] order) where `self` and `other` differ.
    pub fn first_difference(&self, other: &ReadyPacket) -> Option<&'static str> {
        FIELDS
            .iter()
            .copied()
            .find(|f| self.field(f) != other.field(f))
    }

    /// `(vendor, name)` of the packet's package.
    pub fn vendor_name(&self) -> (&str, &str) {
        self.package.split_once('/').unwrap_or((&self.package, ""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOLDEN: &str = "{\"compilerVersion\":\"AILANG v0.30.0\",\"contentHash\":\"sha256:5ea15858fddc8f8ebd77d0b84a76215fa5bbe2a207d0c3320813743c5c0e3acb\",\"effects\":[],\"exports\":[\"world/types\",\"world/contracts\",\"world/transitions\",\"world/logepoch\"],\"interfaceHash\":\"sha256:d16cc88270ff4c4eaaa583e644d3ea30e2e4b2e36f95fd7108d920046cdb4083\",\"package\":\"world/core\",\"tarballBytes\":5773,\"tarballSHA256\":\"sha256:a32806a069bbe2e7918a2c8bb866ae170436a8155dbef6a3055b6f9b989115bf\",\"version\":\"0.1.0\"}\n";

    #[test]
    fn the_reference_golden_round_trips_byte_for_byte() {
        let p = ReadyPacket::decode(GOLDEN.as_bytes()).unwrap();
        assert_eq!(p.encode(), GOLDEN.as_bytes());
        assert_eq!(p.field("effects"), "[]");
        assert_eq!(
            p.field("exports"),
            "[\"world/types\",\"world/contracts\",\"world/transitions\",\"world/logepoch\"]"
        );
    }

    #[test]
    fn the_reference_interface_hash_is_reproduced() {
        let m = Manifest::parse(
            b"[package]\nname = \"world/core\"\nversion = \"0.1.0\"\nedition = \"1\"\nailang = \">=0.30.0\"\n[exports]\nmodules = [\"world/types\", \"world/contracts\", \"world/transitions\", \"world/logepoch\"]\n[effects]\nmax = []\n",
        )
        .unwrap();
        assert_eq!(
            tarball::interface_hash(&m),
            "sha256:d16cc88270ff4c4eaaa583e644d3ea30e2e4b2e36f95fd7108d920046cdb4083"
        );
    }

    #[test]
    fn decoding_is_strict_and_names_the_first_difference() {
        let smuggled = format!("{}{{}}", GOLDEN.trim_end());
        assert!(ReadyPacket::decode(smuggled.as_bytes()).is_err());
        let unknown = GOLDEN.replace("\"version\"", "\"versions\"");
        assert!(ReadyPacket::decode(unknown.as_bytes()).is_err());
        let a = ReadyPacket::decode(GOLDEN.as_bytes()).unwrap();
        let mut b = a.clone();
        b.exports.swap(0, 1);
        b.version = "0.1.1".into();
        assert_eq!(a.first_difference(&b), Some("exports"));
        assert_eq!(a.first_difference(&a), None);
    }
}
