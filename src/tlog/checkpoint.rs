//! C2SP `tlog-checkpoint` note bodies and C2SP `tlog-proof` (`c2sp.org/tlog-proof@v1`)
//! inclusion proofs.
//!
//! A checkpoint body is at least three newline-terminated lines: the origin, the tree size in
//! decimal without leading zeros, the base64 root hash; then optional non-empty extension
//! lines. A tlog-proof is `c2sp.org/tlog-proof@v1`, an optional `extra <base64>` line, `index
//! <N>`, the audit path one base64 hash a line, a blank line, then the checkpoint note
//! verbatim.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;

use super::merkle::{self, Hash};
use super::note::{Note, NoteError, Verifier, ALG_ED25519};

/// The first line of a tlog-proof.
pub const PROOF_HEADER: &str = "c2sp.org/tlog-proof@v1";

/// A checkpoint's body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    /// The log's origin line.
    pub origin: String,
    /// The number of leaves.
    pub size: u64,
    /// The RFC 6962/9162 root hash of the first `size` leaves.
    pub root: Hash,
    /// Extension lines (none written by `world`).
    pub extensions: Vec<String>,
}

/// Why a checkpoint or proof text was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// Not a checkpoint body (what is wrong).
    #[error("malformed checkpoint: {0}")]
    Checkpoint(String),
    /// Not a tlog-proof (what is wrong).
    #[error("malformed tlog-proof: {0}")]
    Proof(String),
    /// The note itself.
    #[error(transparent)]
    Note(#[from] NoteError),
}

impl Checkpoint {
    /// The note text: origin, size, base64 root, extensions, each ending in a newline.
    pub fn body(&self) -> String {
        let mut s = format!(
            "{}\n{}\n{}\n",
            self.origin,
            self.size,
            B64.encode(self.root)
        );
        for e in &self.extensions {
            s.push_str(e);
            s.push('\n');
        }
        s
    }

    /// Parse a note text as a checkpoint body.
    ///
    /// # Errors
    /// [`FormatError::Checkpoint`] naming the line that is wrong.
    pub fn parse_body(text: &str) -> Result<Checkpoint, FormatError> {
        let bad = |why: &str| FormatError::Checkpoint(why.to_string());
        let body = text
            .strip_suffix('\n')
            .ok_or_else(|| bad("the text does not end in a newline"))?;
        let mut lines = body.split('\n');
        let origin = lines.next().unwrap_or_default();
        if origin.is_empty() {
            return Err(bad("the origin line is empty"));
        }
        let size = lines.next().ok_or_else(|| bad("no tree size line"))?;
        let canonical = size == "0" || (!size.starts_with('0') && !size.is_empty());
        if !canonical || !size.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad("the tree size is not a decimal without leading zeros"));
        }
        let size: u64 = size
            .parse()
            .map_err(|_| bad("the tree size does not fit 64 bits"))?;
        let root = lines.next().ok_or_else(|| bad("no root hash line"))?;
        let root: Hash = B64
            .decode(root)
            .ok()
            .and_then(|v| v.try_into().ok())
            .ok_or_else(|| bad("the root hash is not the base64 of 32 bytes"))?;
        let extensions: Vec<String> = lines.map(str::to_string).collect();
        if extensions.iter().any(String::is_empty) {
            return Err(bad("an extension line is empty"));
        }
        Ok(Checkpoint {
            origin: origin.to_string(),
            size,
            root,
            extensions,
        })
    }
}

/// A checkpoint note whose log signature has been checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signed {
    /// The body.
    pub checkpoint: Checkpoint,
    /// The whole note, every signature line kept.
    pub note: Note,
}

/// Parse a checkpoint note and check it: signed by `log` (an Ed25519 note key), and cosigned
/// by every key of `witnesses` (`tlog-cosignature` keys, or note keys). Returns each witness's
/// cosignature time alongside.
///
/// # Errors
/// [`FormatError`]: not a note or not a checkpoint; [`NoteError::BadSignature`] /
/// [`NoteError::Unsigned`] for a signature that fails or is missing.
pub fn open(
    bytes: &[u8],
    log: &Verifier,
    witnesses: &[Verifier],
) -> Result<(Signed, Vec<Option<u64>>), FormatError> {
    let note = Note::parse(bytes)?;
    let checkpoint = Checkpoint::parse_body(&note.text)?;
    if log.alg != ALG_ED25519 {
        return Err(FormatError::Note(NoteError::Key(format!(
            "{} is a cosignature (witness) key; a log signs with an Ed25519 note key",
            log.label()
        ))));
    }
    note.verify(log)?;
    let mut times = Vec::new();
    for w in witnesses {
        times.push(note.verify(w)?);
    }
    Ok((Signed { checkpoint, note }, times))
}

/// A parsed tlog-proof (nothing verified).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InclusionProof {
    /// The `extra` bytes (in `world`: the leaf's bytes), when present.
    pub extra: Option<Vec<u8>>,
    /// The leaf index.
    pub index: u64,
    /// The audit path, leaf's sibling first.
    pub path: Vec<Hash>,
    /// The checkpoint note, verbatim.
    pub checkpoint: String,
}

impl InclusionProof {
    /// The tlog-proof text.
    pub fn encode(&self) -> String {
        let mut s = format!("{PROOF_HEADER}\n");
        if let Some(e) = &self.extra {
            s.push_str(&format!("extra {}\n", B64.encode(e)));
        }
        s.push_str(&format!("index {}\n", self.index));
        for h in &self.path {
            s.push_str(&B64.encode(h));
            s.push('\n');
        }
        s.push('\n');
        s.push_str(&self.checkpoint);
        s
    }

    /// Parse a tlog-proof.
    ///
    /// # Errors
    /// [`FormatError::Proof`] naming what is wrong.
    pub fn parse(text: &str) -> Result<InclusionProof, FormatError> {
        let bad = |why: &str| FormatError::Proof(why.to_string());
        let mut rest = text
            .strip_prefix(PROOF_HEADER)
            .and_then(|r| r.strip_prefix('\n'))
            .ok_or_else(|| bad("the first line is not c2sp.org/tlog-proof@v1"))?;
        let take = |rest: &mut &str| -> Result<String, FormatError> {
            let (line, after) = rest
                .split_once('\n')
                .ok_or_else(|| bad("the proof ends before the checkpoint"))?;
            *rest = after;
            Ok(line.to_string())
        };
        let mut line = take(&mut rest)?;
        let mut extra = None;
        if let Some(e) = line.strip_prefix("extra ") {
            extra = Some(
                B64.decode(e)
                    .map_err(|_| bad("the extra line is not base64"))?,
            );
            line = take(&mut rest)?;
        }
        let index = line
            .strip_prefix("index ")
            .ok_or_else(|| bad("no index line"))?;
        if index.is_empty()
            || (index.len() > 1 && index.starts_with('0'))
            || !index.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(bad("the index is not a decimal without leading zeros"));
        }
        let index: u64 = index
            .parse()
            .map_err(|_| bad("the index does not fit 64 bits"))?;
        let mut path = Vec::new();
        loop {
            let line = take(&mut rest)?;
            if line.is_empty() {
                break;
            }
            let h: Hash = B64
                .decode(&line)
                .ok()
                .and_then(|v| v.try_into().ok())
                .ok_or_else(|| bad("a proof line is not the base64 of 32 bytes"))?;
            path.push(h);
        }
        if rest.is_empty() {
            return Err(bad("no checkpoint after the proof"));
        }
        Ok(InclusionProof {
            extra,
            index,
            path,
            checkpoint: rest.to_string(),
        })
    }

    /// Check that `leaf` (the leaf's bytes, hashed here) is leaf [`Self::index`] of the tree
    /// the checkpoint names.
    ///
    /// # Errors
    /// [`merkle::ProofError`].
    pub fn verify_leaf(&self, leaf: &[u8], cp: &Checkpoint) -> Result<(), merkle::ProofError> {
        merkle::verify_inclusion(
            self.index,
            cp.size,
            &merkle::leaf_hash(leaf),
            &self.path,
            &cp.root,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tlog::note::Signer;

    /// The C2SP tlog-checkpoint example body.
    #[test]
    fn c2sp_checkpoint_body() {
        let text =
            "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n";
        let cp = Checkpoint::parse_body(text).expect("parse");
        assert_eq!(cp.origin, "example.com/behind-the-sofa");
        assert_eq!(cp.size, 20852163);
        assert_eq!(cp.body(), text);
        for bad in [
            "o\n01\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n",
            "o\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I\n",
            "\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n",
            "o\n1\n",
            "o\n-1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n",
            "o\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\nx\n",
            "o\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=",
        ] {
            assert!(Checkpoint::parse_body(bad).is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn open_checks_the_log_and_every_witness() {
        let log = Signer::generate("example.com/log", ALG_ED25519).expect("log");
        let w = Signer::generate("w.example/1", super::super::note::ALG_COSIGNATURE).expect("w");
        let other = Signer::generate("example.com/log", ALG_ED25519).expect("other");
        let cp = Checkpoint {
            origin: "example.com/log".into(),
            size: 5,
            root: merkle::EMPTY_ROOT,
            extensions: vec![],
        };
        let mut n = Note::new(&cp.body()).expect("note");
        n.sign(&log, 0);
        let bytes = n.encode();
        let (s, _) = open(bytes.as_bytes(), &log.verifier(), &[]).expect("open");
        assert_eq!(s.checkpoint, cp);
        assert!(open(bytes.as_bytes(), &other.verifier(), &[]).is_err());
        assert!(open(bytes.as_bytes(), &log.verifier(), &[w.verifier()]).is_err());
        n.sign(&w, 42);
        let (_, times) =
            open(n.encode().as_bytes(), &log.verifier(), &[w.verifier()]).expect("cosigned");
        assert_eq!(times, vec![Some(42)]);
        let edited = n.encode().replace("\n5\n", "\n6\n");
        assert!(open(edited.as_bytes(), &log.verifier(), &[]).is_err());
    }

    /// The C2SP tlog-proof example parses into its parts and encodes back byte for byte.
    #[test]
    fn c2sp_proof_example_round_trips() {
        let text = "c2sp.org/tlog-proof@v1\nextra YWdlLXYxLjIuMS1kYXJ3aW4tYXJtNjQudGFyLmd6kYXJ3aW4tYXJ\nindex 73894\ngSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=\nB95lDa8R83lS8n0eG+o0buTxRKQTYFi//1U8anccXmA=\nEKNzoDWG8LGC0Yp9o+sv3qllpMP9uHQ9B20KNL+Q1zs=\nRoopEkOdqkYqMB4MJXrbt/hMjOxsVn0IrWjpz1ZMMes=\nAHCioX9nLjsrse6YhjRRmk1WUEirVOLLRoOQ6vfO5vk=\n\nexample.com/fancylog\n109482\nsFodV/vSp5O8n9a8QpW6PRY97tfOSW5bsc2Xl/EQi08=\n\n\u{2014} example.com/fancylog hI2DJw==\n";
        let p = InclusionProof::parse(text).expect("parse");
        assert_eq!(p.index, 73894);
        assert_eq!(p.path.len(), 5);
        assert!(p.extra.is_some());
        assert!(p.checkpoint.starts_with("example.com/fancylog\n109482\n"));
        assert_eq!(p.encode(), text);
        for bad in [
            text.replace("index 73894", "index 073894"),
            text.replace("c2sp.org/tlog-proof@v1", "c2sp.org/tlog-proof@v2"),
            text.replace("gSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=", "gSKy"),
            text.split("\n\nexample")
                .next()
                .unwrap_or_default()
                .to_string()
                + "\n\n",
        ] {
            assert!(InclusionProof::parse(&bad).is_err(), "{bad:?} parsed");
        }
    }
}
