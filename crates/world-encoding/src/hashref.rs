//! `HashRef`: the text form `sha256:<64 lowercase hex>` of every stored ref (store-format.md §5).

use sha2::{Digest, Sha256};
use std::fmt;

/// A parsed, non-zero content ref: a sha256 digest, rendered `sha256:<64 lowercase hex>`.
///
/// The zero ref (rendered `""`) is not a `HashRef`; fields that may hold it (`observedHead`,
/// `resultRef`) use `Option<HashRef>` or keep the text. Spec: store-format.md §5.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HashRef([u8; 32]);

/// Why a text is not a valid `HashRef` (store-format.md §5: every rejection rule).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HashRefError {
    /// The text is empty (the zero ref is not accepted where a ref is required).
    #[error("ref is empty")]
    Empty,
    /// The text has leading or trailing whitespace.
    #[error("ref {0:?} has surrounding whitespace")]
    Whitespace(String),
    /// No `:` separator, or more than one.
    #[error("ref {0:?} must be algo:digest with exactly one colon")]
    Shape(String),
    /// The algorithm part is empty or not `sha256`.
    #[error("ref {0:?} names an unsupported algorithm (only sha256)")]
    Algorithm(String),
    /// The digest is not exactly 64 lowercase hex characters.
    #[error("ref {0:?} digest must be exactly 64 lowercase hex characters")]
    Digest(String),
}

impl HashRef {
    /// The sha256 of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        HashRef(Sha256::digest(bytes).into())
    }

    /// Parse `sha256:<64 lowercase hex>`, refusing empty text, surrounding whitespace, a
    /// missing or extra colon, an empty or unknown algorithm, uppercase hex and wrong lengths.
    pub fn parse(text: &str) -> Result<Self, HashRefError> {
        if text.is_empty() {
            return Err(HashRefError::Empty);
        }
        if text.trim() != text {
            return Err(HashRefError::Whitespace(text.to_string()));
        }
        let mut parts = text.split(':');
        let (Some(algo), Some(digest), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(HashRefError::Shape(text.to_string()));
        };
        if algo != "sha256" {
            return Err(HashRefError::Algorithm(text.to_string()));
        }
        Self::from_hex(digest).ok_or_else(|| HashRefError::Digest(text.to_string()))
    }

    /// Parse a bare digest of exactly 64 lowercase hex characters.
    pub fn from_hex(digest: &str) -> Option<Self> {
        if digest.len() != 64
            || !digest
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        {
            return None;
        }
        let mut out = [0u8; 32];
        hex::decode_to_slice(digest, &mut out).ok()?;
        Some(HashRef(out))
    }

    /// Parse text that may be the zero ref `""` (only `observedHead`-like fields).
    pub fn parse_optional(text: &str) -> Result<Option<Self>, HashRefError> {
        if text.is_empty() {
            Ok(None)
        } else {
            Self::parse(text).map(Some)
        }
    }

    /// The 64 lowercase hex digits, without the `sha256:` prefix.
    pub fn hex(&self) -> String {
        hex::encode(self.0)
    }

    /// The raw 32 digest bytes.
    pub fn digest(&self) -> &[u8; 32] {
        &self.0
    }

    /// The text form `sha256:<64 lowercase hex>` as ASCII bytes, without allocating.
    pub fn text_bytes(&self) -> [u8; 71] {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut out = [0u8; 71];
        out[..7].copy_from_slice(b"sha256:");
        for (i, b) in self.0.iter().enumerate() {
            out[7 + 2 * i] = HEX[usize::from(b >> 4)];
            out[8 + 2 * i] = HEX[usize::from(b & 0x0f)];
        }
        out
    }

    /// Is `text` exactly this ref's text form? (A text that is not a valid ref never is.)
    pub fn is_text(&self, text: &str) -> bool {
        text.as_bytes() == self.text_bytes()
    }
}

/// Render an optional ref: `None` is the zero ref `""`.
pub fn opt_text(r: Option<&HashRef>) -> String {
    r.map(ToString::to_string).unwrap_or_default()
}

impl fmt::Display for HashRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.text_bytes();
        // `text_bytes` writes ASCII only.
        f.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for HashRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::str::FromStr for HashRef {
    type Err = HashRefError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl serde::Serialize for HashRef {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for HashRef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        HashRef::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EMPTY: &str = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

    #[test]
    fn is_text_accepts_only_the_exact_text_form() {
        let h = HashRef::of(b"");
        assert_eq!(h.to_string(), EMPTY);
        assert!(h.is_text(EMPTY));
        assert!(!h.is_text(&EMPTY.to_uppercase()));
        assert!(!h.is_text(&EMPTY[..70]));
        assert!(!h.is_text(&format!("{EMPTY} ")));
        assert!(!h.is_text(&EMPTY.replace("sha256", "sha512")));
        let other = HashRef::of(b"x");
        assert!(!other.is_text(EMPTY));
        for b in 0..=255u8 {
            let h = HashRef::of(&[b]);
            assert_eq!(h.to_string(), format!("sha256:{}", hex::encode(h.digest())));
            assert!(h.is_text(&h.to_string()));
        }
    }

    #[test]
    fn golden_digests() {
        assert_eq!(HashRef::of(b"").to_string(), EMPTY);
        assert_eq!(
            HashRef::of(b"abc").to_string(),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(HashRef::parse(EMPTY).unwrap(), HashRef::of(b""));
    }

    #[test]
    fn every_rejection_rule_of_the_spec() {
        let digest = &EMPTY[7..];
        let bad = [
            String::new(),
            digest.to_string(),
            format!("sha256:{}", digest.to_uppercase()),
            "md5:d41d8cd98f00b204e9800998ecf8427e".to_string(),
            format!(":{digest}"),
            "sha256:".to_string(),
            format!("sha256:{digest}:extra"),
            "sha256:abc123".to_string(),
            format!("sha256:{digest}00"),
            format!("sha256:{}g", &digest[..63]),
            format!(" {EMPTY}"),
            format!("{EMPTY} "),
        ];
        for text in bad {
            assert!(HashRef::parse(&text).is_err(), "{text:?} must be refused");
        }
    }

    #[test]
    fn optional_accepts_only_the_empty_zero_ref() {
        assert_eq!(HashRef::parse_optional("").unwrap(), None);
        assert!(HashRef::parse_optional(" ").is_err());
        assert_eq!(opt_text(None), "");
    }
}
