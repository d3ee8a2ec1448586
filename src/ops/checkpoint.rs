//! Signed checkpoints of the log, inclusion and consistency proofs, witness cosignatures, and
//! the checks `world verify --checkpoint` and `--bundle` add (issue 33; DEC-TRUST-1..6).
//!
//! - [`create`] signs a C2SP `tlog-checkpoint` of the whole log with the log's Ed25519 note
//!   key and stores it, after bringing the Merkle table up to the log, recomputing the root
//!   from the log itself, and checking that the log still extends every checkpoint the store
//!   signed before under that origin (a log must never sign a fork).
//! - [`prove_inclusion`] / [`prove_consistency`] build proofs against a checkpoint, each
//!   checked against the checkpoint's root before it is returned.
//! - [`cosign`] is a witness's act (`tlog-cosignature`); [`merge`] adds cosignatures to a
//!   stored checkpoint.
//! - [`check_checkpoint`] / [`check_bundle`] add their findings to a `verify` report.

use serde::Serialize;

use crate::store::checkpoints::{self, CheckpointRow};
use crate::store::merkle::{self, Refused};
use crate::store::verify::Report;
use crate::store::{Error as StoreError, LogEntry, Store};
use crate::tlog::checkpoint::{self as cpf, Checkpoint, InclusionProof};
use crate::tlog::merkle::{self as tree, Hash};
use crate::tlog::note::{Note, Signer, Verifier, ALG_COSIGNATURE, ALG_ED25519};

/// Why a checkpoint act or proof failed.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// Reading or writing the store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A key is malformed or of the wrong kind (exit 1).
    #[error("{0}")]
    Key(String),
    /// Bad input or nothing to act on: no checkpoint, an entry outside the tree, a note that
    /// is not a checkpoint (exit 1).
    #[error("{0}")]
    Input(String),
    /// The log does not match a checkpoint, or a signature fails (exit 3).
    #[error("{0}")]
    Integrity(String),
}

impl From<Refused> for TrustError {
    fn from(r: Refused) -> Self {
        match r {
            Refused::Outside(s) => TrustError::Input(s),
            Refused::Mismatch(s) => TrustError::Integrity(s),
        }
    }
}

/// What [`create`] did.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Created {
    /// The stored checkpoint.
    pub checkpoint: CheckpointRow,
    /// False when this exact checkpoint (origin, size, key) was already stored.
    pub new: bool,
    /// Earlier checkpoints of this origin the log was checked to extend.
    pub extends: Vec<u64>,
}

/// Sign and store a checkpoint of the whole log (module docs) in one write transaction;
/// `now` (Unix seconds) is recorded with it.
///
/// # Errors
/// [`TrustError::Key`] for a cosignature key; [`TrustError::Input`] for an empty log;
/// [`TrustError::Integrity`] when the log has a gap, the table's root differs from the log's,
/// or the log no longer extends a checkpoint this store signed; store errors.
pub fn create(store: &mut Store, signer: &Signer, now: i64) -> Result<Created, TrustError> {
    if signer.alg != ALG_ED25519 {
        return Err(TrustError::Key(format!(
            "{} is a witness (cosignature) key; a log signs its checkpoints with a note key (world key generate without --witness)",
            signer.verifier().label()
        )));
    }
    let tx = store.immediate()?;
    let size = merkle::catch_up(&tx, None)?.ok_or_else(|| StoreError::Corrupt {
        what: merkle::TABLE.into(),
        detail: "the table is missing on a writable store".into(),
    })?;
    let entries = merkle::entry_count(&tx)?;
    if size == 0 {
        return Err(TrustError::Input(if entries == 0 {
            "the log is empty: nothing to checkpoint".into()
        } else {
            "the log does not start at index 0 (an episode bundle?): nothing to checkpoint".into()
        }));
    }
    if entries != size {
        return Err(TrustError::Integrity(format!(
            "the log has a gap after index {}: a checkpoint covers a contiguous log (run world verify)",
            size - 1
        )));
    }
    let origin = signer.name.clone();
    let earlier: Vec<CheckpointRow> = checkpoints::list(&tx)?
        .into_iter()
        .filter(|c| c.origin == origin)
        .collect();
    let mut sizes: Vec<u64> = earlier.iter().map(|c| c.tree_size).collect();
    sizes.push(size);
    let (_, roots) = merkle::roots_from_log(&tx, &sizes)?;
    let root = *roots
        .get(&size)
        .ok_or_else(|| TrustError::Integrity("the log changed while it was read".into()))?;
    let mut src = merkle::source(&tx, size)?;
    let table_root = tree::root(&mut src, size)?;
    if table_root != root {
        return Err(TrustError::Integrity(format!(
            "the derived tree ({}) holds root {} for {size} entries, but the log's entries hash to {}: the log or the table was changed under it; run world verify",
            merkle::TABLE,
            hex::encode(table_root),
            hex::encode(root)
        )));
    }
    for c in &earlier {
        match roots.get(&c.tree_size) {
            Some(r) if *r == c.root_hash => {}
            Some(r) => {
                return Err(TrustError::Integrity(format!(
                    "refusing to sign a fork: this store signed checkpoint {} ({} entries, root {}), and the log's first {} entries now hash to {}",
                    c.id,
                    c.tree_size,
                    hex::encode(c.root_hash),
                    c.tree_size,
                    hex::encode(r)
                )))
            }
            None => {
                return Err(TrustError::Integrity(format!(
                    "refusing to sign a fork: this store signed checkpoint {} of {} entries, and its log now has {size}",
                    c.id, c.tree_size
                )))
            }
        }
    }
    let body = Checkpoint {
        origin: origin.clone(),
        size,
        root,
        extensions: Vec::new(),
    };
    let mut note = Note::new(&body.body()).map_err(|e| TrustError::Input(e.to_string()))?;
    note.sign(signer, 0);
    let (row, new) = checkpoints::insert(
        &tx,
        &origin,
        size,
        &root,
        &signer.verifier().encode(),
        &note.encode(),
        now,
    )?;
    tx.commit().map_err(StoreError::from)?;
    Ok(Created {
        checkpoint: row,
        new,
        extends: earlier.iter().map(|c| c.tree_size).collect(),
    })
}

/// A checkpoint note given by the user: parsed, and checked when `key` is given.
///
/// # Errors
/// [`TrustError::Input`] when it is not a checkpoint note; [`TrustError::Integrity`] when
/// `key` is given and its signature is missing or fails.
pub fn read_checkpoint(
    bytes: &[u8],
    key: Option<&Verifier>,
) -> Result<(Checkpoint, String), TrustError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| TrustError::Input("the checkpoint is not UTF-8".into()))?;
    match key {
        Some(k) => match cpf::open(bytes, k, &[]) {
            Ok((s, _)) => Ok((s.checkpoint, text.to_string())),
            Err(cpf::FormatError::Note(e))
                if !matches!(e, crate::tlog::note::NoteError::Malformed(_)) =>
            {
                Err(TrustError::Integrity(format!("the checkpoint: {e}")))
            }
            Err(e) => Err(TrustError::Input(format!("the checkpoint: {e}"))),
        },
        None => {
            let note = Note::parse(bytes)
                .map_err(|e| TrustError::Input(format!("the checkpoint: {e}")))?;
            let cp = Checkpoint::parse_body(&note.text)
                .map_err(|e| TrustError::Input(format!("the checkpoint: {e}")))?;
            Ok((cp, text.to_string()))
        }
    }
}

/// The checkpoint a proof is made against: the given note, else the store's latest.
///
/// # Errors
/// [`TrustError::Input`] when neither exists.
pub fn checkpoint_or_latest(
    store: &Store,
    given: Option<(Checkpoint, String)>,
) -> Result<(Checkpoint, String), TrustError> {
    if let Some(g) = given {
        return Ok(g);
    }
    let row = store.latest_checkpoint(None)?.ok_or_else(|| {
        TrustError::Input(
            "this store has no checkpoint yet: sign one with `world checkpoint --key KEYFILE` (`world key generate` makes a key)".into(),
        )
    })?;
    let (cp, text) = read_checkpoint(row.note.as_bytes(), None)?;
    Ok((cp, text))
}

/// An inclusion proof with what it proves.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Inclusion {
    /// The entry.
    pub entry: LogEntry,
    /// The leaf index (= entry index).
    pub index: u64,
    /// The checkpoint's tree size.
    pub tree_size: u64,
    /// The checkpoint's root (base64).
    pub root_hash: String,
    /// The leaf hash (base64).
    pub leaf_hash: String,
    /// The audit path (base64, leaf's sibling first).
    pub proof: Vec<String>,
    /// The `c2sp.org/tlog-proof@v1` text (extra = the leaf bytes).
    pub tlog_proof: String,
}

fn b64(h: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(h)
}

/// Entry `index`'s inclusion proof in `cp` (note text `note`), checked against its root.
///
/// # Errors
/// [`TrustError::Input`] for an entry outside the tree; [`TrustError::Integrity`] when the log
/// does not match the checkpoint; store errors.
pub fn prove_inclusion(
    store: &Store,
    index: u64,
    cp: &Checkpoint,
    note: &str,
) -> Result<Inclusion, TrustError> {
    let (entry, path) = store.inclusion_proof(index, cp)??;
    Ok(inclusion_of(entry, index, cp, note, path))
}

fn inclusion_of(
    entry: LogEntry,
    index: u64,
    cp: &Checkpoint,
    note: &str,
    path: Vec<Hash>,
) -> Inclusion {
    let leaf = merkle::leaf_bytes(&entry);
    let p = InclusionProof {
        extra: Some(leaf.clone()),
        index,
        path: path.clone(),
        checkpoint: note.to_string(),
    };
    Inclusion {
        index,
        tree_size: cp.size,
        root_hash: b64(&cp.root),
        leaf_hash: b64(&tree::leaf_hash(&leaf)),
        proof: path.iter().map(|h| b64(h)).collect(),
        tlog_proof: p.encode(),
        entry,
    }
}

/// A consistency proof between two checkpoints.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Consistency {
    /// The old tree size.
    pub old_size: u64,
    /// The old root (base64).
    pub old_root: String,
    /// The new tree size.
    pub new_size: u64,
    /// The new root (base64).
    pub new_root: String,
    /// The RFC 9162 consistency proof (base64).
    pub proof: Vec<String>,
}

/// The consistency proof from `old` to `new`, checked against both roots.
///
/// # Errors
/// [`TrustError::Input`] for different origins or sizes outside the log;
/// [`TrustError::Integrity`] when the log does not extend `old` into `new`; store errors.
pub fn prove_consistency(
    store: &Store,
    old: &Checkpoint,
    new: &Checkpoint,
) -> Result<Consistency, TrustError> {
    if old.origin != new.origin {
        return Err(TrustError::Input(format!(
            "the checkpoints name different logs ({:?} and {:?})",
            old.origin, new.origin
        )));
    }
    let proof = store.consistency_proof(old, new)??;
    Ok(Consistency {
        old_size: old.size,
        old_root: b64(&old.root),
        new_size: new.size,
        new_root: b64(&new.root),
        proof: proof.iter().map(|h| b64(h)).collect(),
    })
}

/// The inclusion proofs of `indexes` against the store's latest checkpoint, for an episode
/// bundle: `(index, tlog-proof text)`.
///
/// # Errors
/// [`TrustError::Input`] when there is no checkpoint or it does not cover every entry
/// ("run world checkpoint first"); [`TrustError::Integrity`] when the log does not match it.
pub fn bundle_proofs(store: &Store, indexes: &[i64]) -> Result<Vec<(i64, String)>, TrustError> {
    let (cp, note) = checkpoint_or_latest(store, None)?;
    let mut out = Vec::new();
    for &i in indexes {
        let Ok(index) = u64::try_from(i) else {
            continue;
        };
        if index >= cp.size {
            return Err(TrustError::Input(format!(
                "the latest checkpoint covers {} entries and the episode has entry {index}: run world checkpoint --key FILE first",
                cp.size
            )));
        }
        out.push((i, prove_inclusion(store, index, &cp, &note)?.tlog_proof));
    }
    Ok(out)
}

/// Cosign a checkpoint as a witness (`tlog-cosignature`, type `0x04`) at `now` (Unix
/// seconds): the log's signature by `log` must verify; with `last` (the checkpoint this
/// witness cosigned before) a consistency `proof` from it must verify too. Returns the note
/// with the cosignature added.
///
/// # Errors
/// [`TrustError::Key`] for a witness key that is not a cosignature key;
/// [`TrustError::Input`] / [`TrustError::Integrity`] as the checks fail.
pub fn cosign(
    note: &[u8],
    log: &Verifier,
    witness: &Signer,
    last: Option<(&[u8], &[Hash])>,
    now: i64,
) -> Result<String, TrustError> {
    if witness.alg != ALG_COSIGNATURE {
        return Err(TrustError::Key(format!(
            "{} is a note key; a witness cosigns with a cosignature key (world key generate --witness)",
            witness.verifier().label()
        )));
    }
    let (cp, _) = read_checkpoint(note, Some(log))?;
    if let Some((old, proof)) = last {
        let (old, _) = read_checkpoint(old, Some(log))?;
        if old.origin != cp.origin {
            return Err(TrustError::Input(format!(
                "the last cosigned checkpoint is of {:?}, this one of {:?}",
                old.origin, cp.origin
            )));
        }
        tree::verify_consistency(old.size, cp.size, &old.root, &cp.root, proof).map_err(|e| {
            TrustError::Integrity(format!(
                "not cosigning: the log does not extend the checkpoint this witness cosigned last: {e}"
            ))
        })?;
    }
    let mut n = Note::parse(note).map_err(|e| TrustError::Input(e.to_string()))?;
    n.sign(witness, u64::try_from(now).unwrap_or(0));
    Ok(n.encode())
}

/// Merge the signature lines of `note` (a stored checkpoint, cosigned by witnesses) into the
/// stored checkpoint with the same text; each key of `witnesses` must have cosigned it.
/// Returns the row and how many lines were added.
///
/// # Errors
/// [`TrustError::Input`] when no stored checkpoint has this text;
/// [`TrustError::Integrity`] when a witness's cosignature is missing or fails.
pub fn merge(
    store: &mut Store,
    note: &[u8],
    witnesses: &[Verifier],
) -> Result<(CheckpointRow, usize), TrustError> {
    let given = Note::parse(note).map_err(|e| TrustError::Input(format!("the checkpoint: {e}")))?;
    Checkpoint::parse_body(&given.text).map_err(|e| TrustError::Input(e.to_string()))?;
    for w in witnesses {
        given
            .verify(w)
            .map_err(|e| TrustError::Integrity(format!("the checkpoint: {e}")))?;
    }
    let tx = store.immediate()?;
    let row = checkpoints::list(&tx)?
        .into_iter()
        .rev()
        .find(|c| Note::parse(c.note.as_bytes()).is_ok_and(|n| n.text == given.text))
        .ok_or_else(|| {
            TrustError::Input("no checkpoint stored in this store signs this text".into())
        })?;
    let mut stored =
        Note::parse(row.note.as_bytes()).map_err(|e| TrustError::Input(e.to_string()))?;
    let added = stored
        .merge(&given)
        .map_err(|e| TrustError::Input(e.to_string()))?;
    let encoded = stored.encode();
    if added > 0 {
        checkpoints::set_note(&tx, row.id, &encoded)?;
    }
    tx.commit().map_err(StoreError::from)?;
    Ok((
        CheckpointRow {
            note: encoded,
            ..row
        },
        added,
    ))
}

/// What a checkpoint check established (printed next to the report).
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Established {
    /// The checkpoint's origin.
    pub origin: String,
    /// Its tree size.
    pub tree_size: u64,
    /// The witnesses whose cosignatures verified, with their times.
    pub witnesses: Vec<(String, Option<u64>)>,
    /// Entries proven (bundles).
    pub proven: u64,
}

/// `verify --checkpoint`: the note must be signed by `log` and cosigned by every witness, and
/// the store's log must extend it — its first `size` entries must hash to its root
/// (`checkpoint_signature`, `checkpoint` failures). Nothing is read from the derived tables.
///
/// # Errors
/// Store errors.
pub fn check_checkpoint(
    store: &Store,
    note: &[u8],
    log: &Verifier,
    witnesses: &[Verifier],
    rep: &mut Report,
) -> Result<Option<Established>, StoreError> {
    let (signed, times) = match cpf::open(note, log, witnesses) {
        Ok(s) => s,
        Err(e) => {
            rep.fail(
                "checkpoint_signature",
                None,
                None,
                format!("the checkpoint: {e}"),
            );
            return Ok(None);
        }
    };
    let cp = &signed.checkpoint;
    let (have, roots) = store.roots_from_log(&[cp.size])?;
    match roots.get(&cp.size) {
        None => rep.fail(
            "checkpoint",
            Some(have as i64),
            Some(cp.origin.clone()),
            format!(
                "the checkpoint covers {} entries; this store's log has {have} from index 0: truncated, or not the log the checkpoint signed",
                cp.size
            ),
        ),
        Some(r) if *r != cp.root => rep.fail(
            "checkpoint",
            None,
            Some(cp.origin.clone()),
            format!(
                "the log's first {} entries hash to root {}; the checkpoint signed {}: the history was rewritten or forked",
                cp.size,
                hex::encode(r),
                hex::encode(cp.root)
            ),
        ),
        Some(_) => {}
    }
    Ok(Some(Established {
        origin: cp.origin.clone(),
        tree_size: cp.size,
        witnesses: witnesses.iter().map(|w| w.label()).zip(times).collect(),
        proven: 0,
    }))
}

/// `verify --bundle`: every entry of an episode bundle must carry a `tlog-proof` whose
/// checkpoint is signed by `log` (and cosigned by every witness) and which proves the leaf
/// recomputed from the entry's row; a proof whose entry the bundle lacks is a failure too
/// (`bundle_proof`, `checkpoint_signature`).
///
/// # Errors
/// Store errors.
pub fn check_bundle(
    store: &Store,
    log: &Verifier,
    witnesses: &[Verifier],
    rep: &mut Report,
) -> Result<Established, StoreError> {
    let mut est = Established::default();
    if store.registry_head("world/episode-bundle/v1")?.is_none() {
        rep.fail(
            "bundle_proof",
            None,
            None,
            "this store is not an episode bundle (world export-episode --checkpoint writes one)",
        );
        return Ok(est);
    }
    let proofs: std::collections::BTreeMap<i64, String> =
        store.checkpoint_proofs()?.into_iter().collect();
    if proofs.is_empty() {
        rep.fail(
            "bundle_proof",
            None,
            None,
            "the bundle carries no checkpoint or inclusion proofs (export it with --checkpoint)",
        );
        return Ok(est);
    }
    let mut opened: std::collections::HashMap<String, Option<Checkpoint>> = Default::default();
    let mut seen = std::collections::BTreeSet::new();
    store.for_each_log(None, None, false, |e| {
        let i = e.header.entry_index;
        seen.insert(i);
        let Some(text) = proofs.get(&i) else {
            rep.fail(
                "bundle_proof",
                Some(i),
                None,
                "the entry has no inclusion proof",
            );
            return Ok(());
        };
        let p = match InclusionProof::parse(text) {
            Ok(p) => p,
            Err(err) => {
                rep.fail("bundle_proof", Some(i), None, err.to_string());
                return Ok(());
            }
        };
        let cp = opened.entry(p.checkpoint.clone()).or_insert_with(|| {
            match cpf::open(p.checkpoint.as_bytes(), log, witnesses) {
                Ok((s, times)) => {
                    est.origin = s.checkpoint.origin.clone();
                    est.tree_size = est.tree_size.max(s.checkpoint.size);
                    est.witnesses = witnesses.iter().map(|w| w.label()).zip(times).collect();
                    Some(s.checkpoint)
                }
                Err(err) => {
                    rep.fail(
                        "checkpoint_signature",
                        Some(i),
                        None,
                        format!("the checkpoint in the entry's proof: {err}"),
                    );
                    None
                }
            }
        });
        let Some(cp) = cp.as_ref() else {
            return Ok(());
        };
        if p.index != i as u64 {
            rep.fail(
                "bundle_proof",
                Some(i),
                None,
                format!("the proof is for index {}", p.index),
            );
            return Ok(());
        }
        match p.verify_leaf(&merkle::leaf_bytes(&e), cp) {
            Ok(()) => est.proven += 1,
            Err(err) => rep.fail(
                "bundle_proof",
                Some(i),
                Some(e.entry_hash.clone()),
                format!("the entry as stored is not the leaf the signed log holds: {err}"),
            ),
        }
        Ok(())
    })?;
    for i in proofs.keys().filter(|i| !seen.contains(i)) {
        rep.fail(
            "bundle_proof",
            Some(*i),
            None,
            "the bundle has a proof for this entry but not the entry (removed after export)",
        );
    }
    Ok(est)
}
