//! C2SP `signed-note` (v1.0.0) with Ed25519 signatures (type `0x01`) and C2SP
//! `tlog-cosignature` Ed25519 cosignatures (type `0x04`), and the key formats of Go's
//! `golang.org/x/mod/sumdb/note`:
//!
//! - verifier key (public): `<name>+<key ID, 8 lowercase hex>+<base64(type || public key)>`;
//! - signer key (private): `PRIVATE+KEY+<name>+<key ID>+<base64(type || 32-byte seed)>`;
//! - key ID = the first 4 bytes, big-endian, of `SHA-256(name || 0x0A || type || public key)`;
//! - a note: UTF-8 text ending in a newline, no control characters but newline, a blank line,
//!   then signature lines `— <name> <base64(key ID || signature)>\n` (at most
//!   [`MAX_SIGNATURES`]);
//! - a cosignature signs `cosignature/v1\ntime <T>\n` followed by the note text, and its
//!   signature bytes are `T` (8 bytes, big-endian) then the 64-byte Ed25519 signature.
//!
//! Verification follows the note rules: a signature line whose (name, key ID) matches no
//! known key is kept but ignored; one that matches a known key must verify, or the whole note
//! is refused.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use ed25519_dalek::{Signer as _, SigningKey, VerifyingKey};
use sha2::{Digest, Sha256};

/// Ed25519 note signatures (signed-note `0x01`).
pub const ALG_ED25519: u8 = 0x01;
/// Timestamped Ed25519 witness cosignatures (tlog-cosignature `0x04`).
pub const ALG_COSIGNATURE: u8 = 0x04;
/// Signature lines accepted in one note (signed-note asks for at least 16; Go allows 100).
pub const MAX_SIGNATURES: usize = 100;
/// Largest note accepted, in bytes.
pub const MAX_NOTE: usize = 1 << 20;

/// Why a key, note or signature was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoteError {
    /// A key string is not in the format above (what is wrong).
    #[error("malformed key: {0}")]
    Key(String),
    /// A note does not follow the signed-note format (what is wrong).
    #[error("malformed note: {0}")]
    Malformed(String),
    /// A signature by a known key does not verify.
    #[error("invalid signature for key {0}")]
    BadSignature(String),
    /// No signature by any of the given keys.
    #[error("the note has no signature by {0}")]
    Unsigned(String),
}

/// Whether `name` may name a key: non-empty, no Unicode space, no `+`.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty() && !name.contains('+') && !name.chars().any(char::is_whitespace)
}

/// The key ID of `name` for a key of `alg` with public key bytes `public`.
pub fn key_id(name: &str, alg: u8, public: &[u8]) -> u32 {
    let mut h = Sha256::new();
    h.update(name.as_bytes());
    h.update(b"\n");
    h.update([alg]);
    h.update(public);
    let d = h.finalize();
    u32::from_be_bytes([d[0], d[1], d[2], d[3]])
}

/// A public key that checks signatures of one kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verifier {
    /// The key name.
    pub name: String,
    /// [`ALG_ED25519`] or [`ALG_COSIGNATURE`].
    pub alg: u8,
    /// The key ID.
    pub id: u32,
    key: VerifyingKey,
}

impl Verifier {
    /// Parse a verifier key (`name+id+base64`).
    ///
    /// # Errors
    /// [`NoteError::Key`] naming the part that is wrong; an ID that does not match the key.
    pub fn parse(text: &str) -> Result<Verifier, NoteError> {
        let bad = |why: &str| NoteError::Key(why.to_string());
        let mut parts = text.splitn(3, '+');
        let (Some(name), Some(id), Some(b64)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(bad("a verifier key is NAME+KEYID+BASE64"));
        };
        if !valid_name(name) {
            return Err(bad("the key name is empty or has a space or '+'"));
        }
        let id = parse_id(id)?;
        let raw = B64
            .decode(b64)
            .map_err(|_| bad("the key material is not standard base64"))?;
        let (alg, public) = raw
            .split_first()
            .ok_or_else(|| bad("the key material is empty"))?;
        if *alg != ALG_ED25519 && *alg != ALG_COSIGNATURE {
            return Err(NoteError::Key(format!(
                "unknown signature type 0x{alg:02x} (0x01 Ed25519 and 0x04 Ed25519 cosignatures are known)"
            )));
        }
        let bytes: [u8; 32] = public
            .try_into()
            .map_err(|_| bad("an Ed25519 public key is 32 bytes"))?;
        let key = VerifyingKey::from_bytes(&bytes)
            .map_err(|_| bad("the bytes are not an Ed25519 public key"))?;
        if key_id(name, *alg, &bytes) != id {
            return Err(bad("the key ID does not match the name and key"));
        }
        Ok(Verifier {
            name: name.to_string(),
            alg: *alg,
            id,
            key,
        })
    }

    /// The verifier key text (`name+id+base64`).
    pub fn encode(&self) -> String {
        let mut raw = vec![self.alg];
        raw.extend_from_slice(self.key.as_bytes());
        format!("{}+{:08x}+{}", self.name, self.id, B64.encode(raw))
    }

    /// `name+id`, how messages name the key.
    pub fn label(&self) -> String {
        format!("{}+{:08x}", self.name, self.id)
    }

    /// Whether a signature line's bytes (after the key ID) sign `text` under this key; for a
    /// cosignature key, also the cosignature's timestamp.
    fn check(&self, text: &[u8], sig: &[u8]) -> Option<Option<u64>> {
        match self.alg {
            ALG_ED25519 => {
                let s = ed25519_dalek::Signature::from_slice(sig).ok()?;
                self.key.verify_strict(text, &s).ok().map(|()| None)
            }
            _ => {
                if sig.len() != 72 {
                    return None;
                }
                let (ts, s) = sig.split_at(8);
                let t = u64::from_be_bytes(ts.try_into().ok()?);
                if t > i64::MAX as u64 {
                    return None;
                }
                let s = ed25519_dalek::Signature::from_slice(s).ok()?;
                self.key
                    .verify_strict(&cosigned_message(t, text), &s)
                    .ok()
                    .map(|()| Some(t))
            }
        }
    }
}

fn parse_id(text: &str) -> Result<u32, NoteError> {
    if text.len() != 8 || !text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return Err(NoteError::Key(
            "the key ID is not 8 lowercase hex digits".into(),
        ));
    }
    u32::from_str_radix(text, 16).map_err(|_| NoteError::Key("the key ID is not hex".into()))
}

/// What a cosignature signs: `cosignature/v1\ntime <t>\n` then the note text.
pub fn cosigned_message(time: u64, text: &[u8]) -> Vec<u8> {
    let mut m = format!("cosignature/v1\ntime {time}\n").into_bytes();
    m.extend_from_slice(text);
    m
}

/// A private key that signs notes ([`ALG_ED25519`]) or cosigns checkpoints
/// ([`ALG_COSIGNATURE`]).
pub struct Signer {
    /// The key name.
    pub name: String,
    /// [`ALG_ED25519`] or [`ALG_COSIGNATURE`].
    pub alg: u8,
    /// The key ID.
    pub id: u32,
    key: SigningKey,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Signer({})", self.verifier().label())
    }
}

impl Signer {
    /// A signer from a 32-byte Ed25519 seed.
    ///
    /// # Errors
    /// [`NoteError::Key`] for an invalid name or an unknown `alg`.
    pub fn from_seed(name: &str, alg: u8, seed: [u8; 32]) -> Result<Signer, NoteError> {
        if !valid_name(name) {
            return Err(NoteError::Key(format!(
                "key name {name:?} is empty or has a space or '+'"
            )));
        }
        if alg != ALG_ED25519 && alg != ALG_COSIGNATURE {
            return Err(NoteError::Key(format!(
                "unknown signature type 0x{alg:02x}"
            )));
        }
        let key = SigningKey::from_bytes(&seed);
        Ok(Signer {
            name: name.to_string(),
            alg,
            id: key_id(name, alg, key.verifying_key().as_bytes()),
            key,
        })
    }

    /// A new key from the operating system's random source.
    ///
    /// # Errors
    /// [`NoteError::Key`] for an invalid name; the random source failing.
    pub fn generate(name: &str, alg: u8) -> Result<Signer, NoteError> {
        let mut seed = [0u8; 32];
        getrandom::getrandom(&mut seed)
            .map_err(|e| NoteError::Key(format!("no random bytes for a key: {e}")))?;
        Signer::from_seed(name, alg, seed)
    }

    /// Parse a signer key (`PRIVATE+KEY+name+id+base64`).
    ///
    /// # Errors
    /// [`NoteError::Key`] naming the part that is wrong (never echoing the key).
    pub fn parse(text: &str) -> Result<Signer, NoteError> {
        let bad = |why: &str| NoteError::Key(why.to_string());
        let rest = text
            .strip_prefix("PRIVATE+KEY+")
            .ok_or_else(|| bad("a private key starts with PRIVATE+KEY+"))?;
        let mut parts = rest.splitn(3, '+');
        let (Some(name), Some(id), Some(b64)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(bad("a private key is PRIVATE+KEY+NAME+KEYID+BASE64"));
        };
        let id = parse_id(id)?;
        let raw = B64
            .decode(b64)
            .map_err(|_| bad("the key material is not standard base64"))?;
        let (alg, seed) = raw
            .split_first()
            .ok_or_else(|| bad("the key material is empty"))?;
        let seed: [u8; 32] = seed
            .try_into()
            .map_err(|_| bad("an Ed25519 private key is a 32-byte seed"))?;
        let s = Signer::from_seed(name, *alg, seed)?;
        if s.id != id {
            return Err(bad("the key ID does not match the name and key"));
        }
        Ok(s)
    }

    /// The signer key text (`PRIVATE+KEY+…`): secret.
    pub fn encode(&self) -> String {
        let mut raw = vec![self.alg];
        raw.extend_from_slice(&self.key.to_bytes());
        format!(
            "PRIVATE+KEY+{}+{:08x}+{}",
            self.name,
            self.id,
            B64.encode(raw)
        )
    }

    /// The matching public key.
    pub fn verifier(&self) -> Verifier {
        Verifier {
            name: self.name.clone(),
            alg: self.alg,
            id: self.id,
            key: self.key.verifying_key(),
        }
    }

    /// The signature line bytes (key ID first) over note `text`; `time` is the cosignature's
    /// timestamp (Unix seconds, ignored for [`ALG_ED25519`]).
    fn sign(&self, text: &[u8], time: u64) -> Vec<u8> {
        let mut out = self.id.to_be_bytes().to_vec();
        if self.alg == ALG_COSIGNATURE {
            out.extend_from_slice(&time.to_be_bytes());
            out.extend_from_slice(&self.key.sign(&cosigned_message(time, text)).to_bytes());
        } else {
            out.extend_from_slice(&self.key.sign(text).to_bytes());
        }
        out
    }
}

/// One signature line of a note.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignatureLine {
    /// The key name.
    pub name: String,
    /// The key ID (the first four bytes).
    pub id: u32,
    /// The base64 text as it appears in the note.
    pub base64: String,
}

impl SignatureLine {
    fn bytes(&self) -> Vec<u8> {
        B64.decode(&self.base64).unwrap_or_default()
    }

    /// For a cosignature line (72 signature bytes), its timestamp; `None` otherwise.
    pub fn cosignature_time(&self) -> Option<u64> {
        let b = self.bytes();
        (b.len() == 4 + 72).then(|| u64::from_be_bytes(b[4..12].try_into().unwrap_or([0; 8])))
    }
}

/// A parsed note: its text and signature lines, none verified yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// The text, ending in a newline.
    pub text: String,
    /// The signature lines in order.
    pub signatures: Vec<SignatureLine>,
}

fn check_text(text: &str) -> Result<(), NoteError> {
    if text.is_empty() || !text.ends_with('\n') {
        return Err(NoteError::Malformed(
            "the text must be non-empty and end in a newline".into(),
        ));
    }
    if text.chars().any(|c| c < ' ' && c != '\n') {
        return Err(NoteError::Malformed(
            "the text has a control character other than newline".into(),
        ));
    }
    Ok(())
}

impl Note {
    /// An unsigned note over `text`.
    ///
    /// # Errors
    /// [`NoteError::Malformed`] when `text` is empty, does not end in a newline or has a
    /// control character other than newline.
    pub fn new(text: &str) -> Result<Note, NoteError> {
        check_text(text)?;
        Ok(Note {
            text: text.to_string(),
            signatures: Vec::new(),
        })
    }

    /// Parse a signed note (nothing verified).
    ///
    /// # Errors
    /// [`NoteError::Malformed`] naming what is wrong.
    pub fn parse(bytes: &[u8]) -> Result<Note, NoteError> {
        let bad = |why: &str| NoteError::Malformed(why.to_string());
        if bytes.len() > MAX_NOTE {
            return Err(bad("over 1 MiB"));
        }
        let msg = std::str::from_utf8(bytes).map_err(|_| bad("not valid UTF-8"))?;
        if msg.chars().any(|c| c < ' ' && c != '\n') {
            return Err(bad("a control character other than newline"));
        }
        let split = msg
            .rfind("\n\n")
            .ok_or_else(|| bad("no blank line between the text and the signatures"))?;
        let (text, sigs) = (&msg[..=split], &msg[split + 2..]);
        check_text(text)?;
        if !sigs.ends_with('\n') {
            return Err(bad("the last signature line does not end in a newline"));
        }
        let mut signatures = Vec::new();
        for line in sigs[..sigs.len() - 1].split('\n') {
            if signatures.len() == MAX_SIGNATURES {
                return Err(NoteError::Malformed(format!(
                    "more than {MAX_SIGNATURES} signatures"
                )));
            }
            let rest = line
                .strip_prefix("\u{2014} ")
                .ok_or_else(|| bad("a signature line must start with an em dash and a space"))?;
            let (name, b64) = rest
                .split_once(' ')
                .ok_or_else(|| bad("a signature line is '— NAME BASE64'"))?;
            if !valid_name(name) {
                return Err(bad("a signature's key name is empty or has a space or '+'"));
            }
            let raw = B64
                .decode(b64)
                .map_err(|_| bad("a signature is not standard base64"))?;
            if raw.len() < 5 {
                return Err(bad("a signature is shorter than a key ID and one byte"));
            }
            signatures.push(SignatureLine {
                name: name.to_string(),
                id: u32::from_be_bytes([raw[0], raw[1], raw[2], raw[3]]),
                base64: b64.to_string(),
            });
        }
        if signatures.is_empty() {
            return Err(bad("no signature lines"));
        }
        Ok(Note {
            text: text.to_string(),
            signatures,
        })
    }

    /// Add (or replace: the same name and key ID) this signer's signature; `time` is a
    /// cosignature's timestamp (Unix seconds).
    pub fn sign(&mut self, signer: &Signer, time: u64) {
        let line = SignatureLine {
            name: signer.name.clone(),
            id: signer.id,
            base64: B64.encode(signer.sign(self.text.as_bytes(), time)),
        };
        self.signatures
            .retain(|s| !(s.name == line.name && s.id == line.id));
        self.signatures.push(line);
    }

    /// Merge the signature lines of `other` (a note over the same text) into this one: lines
    /// already present are kept once.
    ///
    /// # Errors
    /// [`NoteError::Malformed`] when the texts differ.
    pub fn merge(&mut self, other: &Note) -> Result<usize, NoteError> {
        if other.text != self.text {
            return Err(NoteError::Malformed(
                "the notes sign different texts".into(),
            ));
        }
        let mut added = 0;
        for s in &other.signatures {
            if !self.signatures.contains(s) {
                self.signatures.push(s.clone());
                added += 1;
            }
        }
        Ok(added)
    }

    /// The note's bytes: the text, a blank line, the signature lines.
    pub fn encode(&self) -> String {
        let mut out = self.text.clone();
        out.push('\n');
        for s in &self.signatures {
            out.push_str(&format!("\u{2014} {} {}\n", s.name, s.base64));
        }
        out
    }

    /// Check the signatures of `key`: every line matching its name and key ID must verify,
    /// and at least one must. Returns the cosignature's timestamp for a cosignature key.
    ///
    /// # Errors
    /// [`NoteError::BadSignature`] when a matching line does not verify;
    /// [`NoteError::Unsigned`] when no line matches.
    pub fn verify(&self, key: &Verifier) -> Result<Option<u64>, NoteError> {
        let mut ok = None;
        for s in self
            .signatures
            .iter()
            .filter(|s| s.name == key.name && s.id == key.id)
        {
            let raw = s.bytes();
            match key.check(self.text.as_bytes(), raw.get(4..).unwrap_or_default()) {
                Some(t) => ok = Some(t),
                None => return Err(NoteError::BadSignature(key.label())),
            }
        }
        ok.ok_or_else(|| NoteError::Unsigned(key.label()))
    }
}

#[cfg(test)]
mod tests {
    //! Vectors from Go's `golang.org/x/mod/sumdb/note` tests (`note_test.go`, BSD-3-Clause,
    //! The Go Authors) and the C2SP `tlog-cosignature` example, reproduced as data.

    use super::*;

    const PETER_VKEY: &str = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
    const PETER_SKEY: &str =
        "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
    const ENOCH_VKEY: &str = "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop";
    const TEXT: &str = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
    const PETER_SIG: &str = "\u{2014} PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";
    const ENOCH_SIG: &str = "\u{2014} EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n";

    #[test]
    fn go_keys_parse_and_round_trip() {
        let v = Verifier::parse(PETER_VKEY).expect("vkey");
        assert_eq!((v.name.as_str(), v.id), ("PeterNeumann", 0xc74f20a3));
        assert_eq!(v.encode(), PETER_VKEY);
        let s = Signer::parse(PETER_SKEY).expect("skey");
        assert_eq!(s.encode(), PETER_SKEY);
        assert_eq!(s.verifier(), v);
        // Go's wrong-length and unknown-algorithm keys (key IDs adjusted by Go's test).
        assert!(Verifier::parse(
            "PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY=="
        )
        .is_err());
        assert!(Verifier::parse(
            "PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
        )
        .is_err());
    }

    /// Go's `TestNewVerifier`/`TestNewSigner` manglings: every proper substring and every
    /// single-byte increment is refused.
    #[test]
    fn mangled_keys_are_refused() {
        for key in [PETER_VKEY, PETER_SKEY] {
            let parse = |k: &str| {
                if key.starts_with("PRIVATE") {
                    Signer::parse(k).is_ok()
                } else {
                    Verifier::parse(k).is_ok()
                }
            };
            let b = key.as_bytes();
            for i in 0..=b.len() {
                for j in i + 1..=b.len() {
                    if i == 0 && j == b.len() {
                        continue;
                    }
                    if let Ok(s) = std::str::from_utf8(&b[i..j]) {
                        assert!(!parse(s), "{s:?} parsed");
                    }
                }
            }
            for i in 0..b.len() {
                let mut m = b.to_vec();
                m[i] = m[i].wrapping_add(1);
                if let Ok(s) = std::str::from_utf8(&m) {
                    assert!(!parse(s), "{s:?} parsed");
                }
            }
        }
    }

    #[test]
    fn go_sign_vector() {
        let s = Signer::parse(PETER_SKEY).expect("skey");
        let mut n = Note::new(TEXT).expect("text");
        n.sign(&s, 0);
        assert_eq!(n.encode(), format!("{TEXT}\n{PETER_SIG}"));
        // An existing signature by the same key is replaced.
        n.signatures[0].base64 = "BADSIGN=".into();
        n.sign(&s, 0);
        assert_eq!(n.encode(), format!("{TEXT}\n{PETER_SIG}"));
        assert!(Note::new("abc").is_err());
    }

    #[test]
    fn go_open_vectors() {
        let peter = Verifier::parse(PETER_VKEY).expect("peter");
        let enoch = Verifier::parse(ENOCH_VKEY).expect("enoch");
        let msg = format!("{TEXT}\n{PETER_SIG}{ENOCH_SIG}");
        let n = Note::parse(msg.as_bytes()).expect("parse");
        assert_eq!(n.text, TEXT);
        assert_eq!(n.signatures.len(), 2);
        assert_eq!(n.verify(&peter), Ok(None));
        assert_eq!(n.verify(&enoch), Ok(None));
        assert_eq!(n.encode(), msg);

        // A signature by a known key that does not verify refuses the note.
        let bad = format!("{TEXT}\n{}ABCD{}", &PETER_SIG[..60], &PETER_SIG[60..]);
        let n = Note::parse(bad.as_bytes()).expect("parse");
        assert_eq!(
            n.verify(&peter),
            Err(NoteError::BadSignature("PeterNeumann+c74f20a3".into()))
        );
        // No signature by the key.
        let n = Note::parse(format!("{TEXT}\n{ENOCH_SIG}").as_bytes()).expect("parse");
        assert!(matches!(n.verify(&peter), Err(NoteError::Unsigned(_))));

        for m in [
            TEXT.to_string(),
            format!("{TEXT}\n"),
            format!("{TEXT}\n{}", &PETER_SIG[..PETER_SIG.len() - 1]),
            format!("\u{1}{TEXT}\n{PETER_SIG}"),
            format!("{TEXT}\n\u{2014} Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM="),
            format!("{TEXT}\n{PETER_SIG}Unexpected line.\n"),
            format!("{TEXT}\n{}", PETER_SIG.repeat(101)),
        ] {
            assert!(Note::parse(m.as_bytes()).is_err(), "{m:?} parsed");
        }
        let mut raw = format!("{TEXT}\n{PETER_SIG}").into_bytes();
        raw.insert(0, 0xff);
        assert!(Note::parse(&raw).is_err());
    }

    /// The cosignature line of the C2SP `tlog-cosignature` example carries the key ID
    /// `0x8d66cf3f` and the timestamp its signed message shows (1679315147).
    #[test]
    fn c2sp_cosignature_example_layout() {
        let example = "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n\u{2014} example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n\u{2014} witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==\n";
        let n = Note::parse(example.as_bytes()).expect("parse");
        assert_eq!(n.signatures[1].id, 0x8d66cf3f);
        assert_eq!(n.signatures[1].cosignature_time(), Some(1679315147));
        assert_eq!(n.signatures[0].cosignature_time(), None);
        assert_eq!(
            cosigned_message(1679315147, n.text.as_bytes()),
            b"cosignature/v1\ntime 1679315147\nexample.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
        );
    }

    #[test]
    fn cosignatures_round_trip_and_bind_the_time() {
        let log = Signer::generate("example.com/log", ALG_ED25519).expect("log");
        let w = Signer::generate("witness.example/w1", ALG_COSIGNATURE).expect("witness");
        let mut n = Note::new("example.com/log\n3\nAAAA\n").expect("text");
        n.sign(&log, 0);
        n.sign(&w, 1_700_000_000);
        let wv = Verifier::parse(&w.verifier().encode()).expect("vkey");
        assert_eq!(wv.alg, ALG_COSIGNATURE);
        let parsed = Note::parse(n.encode().as_bytes()).expect("parse");
        assert_eq!(parsed.verify(&wv), Ok(Some(1_700_000_000)));
        assert_eq!(parsed.verify(&log.verifier()), Ok(None));
        // The same key material under type 0x01 has another key ID: not its signature.
        assert!(parsed
            .verify(
                &Signer::from_seed("witness.example/w1", ALG_ED25519, w.key.to_bytes())
                    .expect("signer")
                    .verifier()
            )
            .is_err());
        // Changing the timestamp breaks the cosignature.
        let mut raw = B64.decode(&parsed.signatures[1].base64).expect("b64");
        raw[11] ^= 1;
        let mut tampered = parsed.clone();
        tampered.signatures[1].base64 = B64.encode(raw);
        assert!(matches!(
            tampered.verify(&wv),
            Err(NoteError::BadSignature(_))
        ));
    }
}
