//! The epoch registry `world/epoch-registry/v1` (transitions.md §4, store-format.md §6.3).
//!
//! `world` writes only the single-epoch form the reference daemon rebuilds on every start
//! (DEC-EPOCH-1): Go's encoder with HTML escaping off, plus one LF:
//! `{"semantic_id":"world/epoch-registry/v1","epochs":[{"epoch":1,"candidates":["<release>"]}]}`.
//! The head is set by a plain upsert, and only when there is none: an existing head with other
//! bytes is a fatal divergence and is never rewritten.

use rusqlite::Connection;

use crate::encoding::HashRef;
use crate::store::{self, Object};

/// Registry name and semantic id.
pub const SEMANTIC_ID: &str = "world/epoch-registry/v1";

/// Provenance of the bootstrap object.
pub const PROVENANCE: &str = "epoch-registry-bootstrap";

/// The startup stage named by a divergence (transitions.md §4).
pub const STAGE: &str = "registry-bootstrap";

/// Largest epoch-registry payload `world` will decode (bytes); the single-epoch form is tiny.
pub const MAX_PAYLOAD: usize = 1024 * 1024;

/// Epoch-registry failures.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EpochError {
    /// The head holds different bytes than this release's bootstrap would write (fatal; the
    /// registry is never rewritten).
    #[error("{STAGE}: fatal epoch registry divergence: {SEMANTIC_ID} head {head} nominates {found}, but the bootstrap for interpreter release {release:?} would write {expected}; the registry is never rewritten — use the interpreter it nominates, or a fresh store for this one")]
    Divergence {
        /// The current head.
        head: String,
        /// What the head nominates (`epoch 1: "AILANG v0.41.0"`), or why it could not be read.
        found: String,
        /// The release being bootstrapped.
        release: String,
        /// The ref the bootstrap would write.
        expected: HashRef,
    },
    /// No epoch nominates the release (transitions.md §3 step 1).
    #[error("interpreter release {release:?} is nominated by NO epoch in {SEMANTIC_ID}; {detail}")]
    NotNominated {
        /// The release string.
        release: String,
        /// What the registry nominates instead, and what to do.
        detail: String,
    },
    /// Several epochs nominate the release and none was stated.
    #[error("interpreter release {release:?} is nominated by several epochs ({}) in {SEMANTIC_ID}; state semanticsEpoch in the manifest", join(.epochs))]
    Ambiguous {
        /// The release string.
        release: String,
        /// The nominating epochs.
        epochs: Vec<i64>,
    },
    /// A stated epoch does not nominate the release.
    #[error("semanticsEpoch {epoch} does not nominate interpreter release {release:?} in {SEMANTIC_ID} (epoch {epoch} nominates: {candidates})")]
    StatedMismatch {
        /// The stated epoch.
        epoch: i64,
        /// The release string.
        release: String,
        /// What that epoch nominates (`none` when it does not exist).
        candidates: String,
    },
    /// The head object is missing, does not re-hash, or does not decode.
    #[error("{SEMANTIC_ID} head {head} is unusable: {detail}")]
    Corrupt {
        /// The head ref text.
        head: String,
        /// Why.
        detail: String,
    },
    /// A store failure.
    #[error(transparent)]
    Store(#[from] store::Error),
}

fn join(epochs: &[i64]) -> String {
    epochs
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// One epoch: its number and the interpreter releases it nominates.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Epoch {
    /// Epoch number (1, 2, …).
    pub epoch: i64,
    /// Release strings (`AILANG v0.41.0`, `world-ailang-subset dialect 1`, `unpinned`).
    pub candidates: Vec<String>,
}

/// Why a stored epoch-registry payload does not decode.
#[derive(Debug, thiserror::Error)]
pub enum RegistryDecodeError {
    /// Over [`MAX_PAYLOAD`] bytes (the size is given).
    #[error("payload is {0} bytes; limit is {MAX_PAYLOAD}")]
    TooLarge(usize),
    /// Not the registry's JSON shape.
    #[error("{0}")]
    Json(#[source] serde_json::Error),
    /// Another `semantic_id` (the one found is given).
    #[error("semantic_id is {0:?}; expected {SEMANTIC_ID:?}")]
    SemanticId(String),
}

/// A decoded epoch registry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EpochRegistry {
    /// The epochs in stored order.
    pub epochs: Vec<Epoch>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Wire {
    semantic_id: String,
    epochs: Vec<Epoch>,
}

impl EpochRegistry {
    /// The single-epoch registry `world` writes: epoch 1 = `[release]`.
    pub fn single(release: &str) -> Self {
        EpochRegistry {
            epochs: vec![Epoch {
                epoch: 1,
                candidates: vec![release.to_string()],
            }],
        }
    }

    /// The payload bytes: Go encoder, HTML escaping off, plus LF (transitions.md §4).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(96);
        out.extend_from_slice(b"{\"semantic_id\":");
        crate::encoding::gojson::write_str_no_html(&mut out, SEMANTIC_ID);
        out.extend_from_slice(b",\"epochs\":[");
        for (i, e) in self.epochs.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(format!("{{\"epoch\":{},\"candidates\":[", e.epoch).as_bytes());
            for (j, c) in e.candidates.iter().enumerate() {
                if j > 0 {
                    out.push(b',');
                }
                crate::encoding::gojson::write_str_no_html(&mut out, c);
            }
            out.extend_from_slice(b"]}");
        }
        out.extend_from_slice(b"]}\n");
        out
    }

    /// Decode a stored payload: exactly the keys `semantic_id` and `epochs` (each epoch exactly
    /// `epoch` and `candidates`), `semantic_id` = `world/epoch-registry/v1`, at most
    /// [`MAX_PAYLOAD`] bytes.
    ///
    /// # Errors
    /// [`RegistryDecodeError`] naming what is wrong.
    pub fn decode(bytes: &[u8]) -> Result<Self, RegistryDecodeError> {
        if bytes.len() > MAX_PAYLOAD {
            return Err(RegistryDecodeError::TooLarge(bytes.len()));
        }
        let wire: Wire = serde_json::from_slice(bytes).map_err(RegistryDecodeError::Json)?;
        if wire.semantic_id != SEMANTIC_ID {
            return Err(RegistryDecodeError::SemanticId(wire.semantic_id));
        }
        Ok(EpochRegistry {
            epochs: wire.epochs,
        })
    }

    /// The epochs nominating `release`, in stored order.
    pub fn nominating(&self, release: &str) -> Vec<i64> {
        self.epochs
            .iter()
            .filter(|e| e.candidates.iter().any(|c| c == release))
            .map(|e| e.epoch)
            .collect()
    }

    /// Derive the semantics epoch for `release` (transitions.md §3 step 1): a stated epoch
    /// (`Some`, non-zero) must nominate it; an omitted one is derived when exactly one epoch
    /// nominates it. Never defaulted.
    ///
    /// # Errors
    /// [`EpochError::StatedMismatch`], [`EpochError::NotNominated`], [`EpochError::Ambiguous`].
    pub fn derive(&self, release: &str, stated: Option<i64>) -> Result<i64, EpochError> {
        if let Some(epoch) = stated {
            let found = self.epochs.iter().find(|e| e.epoch == epoch);
            return match found {
                Some(e) if e.candidates.iter().any(|c| c == release) => Ok(epoch),
                other => Err(EpochError::StatedMismatch {
                    epoch,
                    release: release.to_string(),
                    candidates: other
                        .map(|e| quoted(&e.candidates))
                        .unwrap_or_else(|| "none; no such epoch".into()),
                }),
            };
        }
        match self.nominating(release).as_slice() {
            [one] => Ok(*one),
            [] => Err(EpochError::NotNominated {
                release: release.to_string(),
                detail: format!(
                    "it nominates {} — publish with an interpreter it nominates (--interpreter), or use a fresh store for this one",
                    self.summary()
                ),
            }),
            many => Err(EpochError::Ambiguous {
                release: release.to_string(),
                epochs: many.to_vec(),
            }),
        }
    }

    /// A one-line summary: `epoch 1: "AILANG v0.41.0"; epoch 2: …`.
    pub fn summary(&self) -> String {
        if self.epochs.is_empty() {
            return "no epochs".into();
        }
        self.epochs
            .iter()
            .map(|e| format!("epoch {}: {}", e.epoch, quoted(&e.candidates)))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

fn quoted(items: &[String]) -> String {
    if items.is_empty() {
        return "nothing".into();
    }
    items
        .iter()
        .map(|c| format!("{c:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The bootstrap object for `release`: the single-epoch payload, `interfaceHash` =
/// sha256(`world/epoch-registry/v1`), provenance `epoch-registry-bootstrap`.
pub fn object(release: &str) -> Object {
    Object::new(
        SEMANTIC_ID,
        PROVENANCE,
        EpochRegistry::single(release).encode(),
    )
}

/// Read the current head and its decoded registry on `conn` (re-hashing the payload).
///
/// # Errors
/// [`EpochError::Corrupt`] when the head object is missing, altered or undecodable.
pub fn read(conn: &Connection) -> Result<Option<(HashRef, EpochRegistry)>, EpochError> {
    let Some(head) = store::registry_head_in(conn, SEMANTIC_ID)? else {
        return Ok(None);
    };
    let corrupt = |detail: String| EpochError::Corrupt {
        head: head.clone(),
        detail,
    };
    let head_ref = HashRef::parse(&head).map_err(|e| corrupt(e.to_string()))?;
    let obj = store::object_in(conn, &head)?
        .ok_or_else(|| corrupt("the object is not in the store".into()))?;
    if HashRef::of(&obj.payload) != head_ref {
        return Err(corrupt(format!(
            "the payload hashes to {}",
            HashRef::of(&obj.payload)
        )));
    }
    let reg = EpochRegistry::decode(&obj.payload).map_err(|e| corrupt(e.to_string()))?;
    Ok(Some((head_ref, reg)))
}

/// What [`check_bootstrap`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BootstrapPlan {
    /// No head: this object must be stored and the head set.
    Create(Object),
    /// The head already holds exactly these bytes: nothing to write.
    Unchanged(HashRef),
}

/// Decide the bootstrap for `release` without writing: no head → [`BootstrapPlan::Create`];
/// identical bytes → [`BootstrapPlan::Unchanged`]; different bytes → divergence.
///
/// # Errors
/// [`EpochError::Divergence`] or a store error.
pub fn check_bootstrap(conn: &Connection, release: &str) -> Result<BootstrapPlan, EpochError> {
    let obj = object(release);
    let expected = HashRef::of(&obj.payload);
    let Some(head) = store::registry_head_in(conn, SEMANTIC_ID)? else {
        return Ok(BootstrapPlan::Create(obj));
    };
    if head == expected.to_string() {
        return Ok(BootstrapPlan::Unchanged(expected));
    }
    let found = match read(conn) {
        Ok(Some((_, reg))) => reg.summary(),
        Ok(None) => "nothing".into(),
        Err(e) => format!("unreadable bytes ({e})"),
    };
    Err(EpochError::Divergence {
        head,
        found,
        release: release.to_string(),
        expected,
    })
}

/// The outcome of [`bootstrap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bootstrapped {
    /// The object was stored and the head set to it.
    Created(HashRef),
    /// The head already held these bytes; nothing was written.
    Unchanged(HashRef),
}

impl Bootstrapped {
    /// The head after the bootstrap.
    pub fn head(self) -> HashRef {
        match self {
            Bootstrapped::Created(h) | Bootstrapped::Unchanged(h) => h,
        }
    }
}

/// Bootstrap the epoch registry for `release` on `conn` (call inside the writer's
/// `BEGIN IMMEDIATE` transaction): no head → put the object and set the head; the same bytes →
/// no-op; different bytes → fatal divergence, never rewritten (transitions.md §4).
///
/// # Errors
/// [`EpochError::Divergence`] or a store error.
pub fn bootstrap(conn: &Connection, release: &str) -> Result<Bootstrapped, EpochError> {
    match check_bootstrap(conn, release)? {
        BootstrapPlan::Unchanged(h) => Ok(Bootstrapped::Unchanged(h)),
        BootstrapPlan::Create(obj) => {
            apply(conn, &obj)?;
            Ok(Bootstrapped::Created(HashRef::of(&obj.payload)))
        }
    }
}

/// Write a planned [`BootstrapPlan::Create`] object, re-checking inside the transaction that
/// no head appeared meanwhile (then the ordinary divergence rule applies).
///
/// # Errors
/// [`EpochError::Divergence`] when a different head appeared, or a store error.
pub fn apply(conn: &Connection, obj: &Object) -> Result<(), EpochError> {
    let want = obj.meta.hash.clone();
    match store::registry_head_in(conn, SEMANTIC_ID)? {
        Some(h) if h == want => Ok(()),
        Some(h) => Err(EpochError::Divergence {
            found: match read(conn) {
                Ok(Some((_, reg))) => reg.summary(),
                _ => "unreadable bytes".into(),
            },
            head: h,
            release: EpochRegistry::decode(&obj.payload)
                .ok()
                .and_then(|r| r.epochs.into_iter().next())
                .and_then(|e| e.candidates.into_iter().next())
                .unwrap_or_default(),
            expected: HashRef::of(&obj.payload),
        }),
        None => {
            store::put_object(conn, obj)?;
            store::set_registry_head(conn, SEMANTIC_ID, &want)?;
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Store, WriteOptions};

    #[test]
    fn vectors() {
        assert_eq!(
            HashRef::of(&EpochRegistry::single("AILANG v0.41.0").encode()).to_string(),
            "sha256:c56048c5da6cdbd7b725e0db8be2b3ea0e6fea18b6298ea94b233e617580d591"
        );
        assert_eq!(
            HashRef::of(&EpochRegistry::single("unpinned").encode()).to_string(),
            "sha256:7486f32d33d7af6efdec6db7426bb4e947cec1bdacafa08d31b259f78e629d30"
        );
        assert_eq!(
            EpochRegistry::single("AILANG v0.41.0").encode(),
            b"{\"semantic_id\":\"world/epoch-registry/v1\",\"epochs\":[{\"epoch\":1,\"candidates\":[\"AILANG v0.41.0\"]}]}\n"
        );
        let o = object("unpinned");
        assert_eq!(
            o.meta.interface_hash,
            "sha256:57246aa60a8fad11930679fa671f484a9f2e6bffb37c3e2d4e6154e53a06edee"
        );
        assert_eq!(o.meta.provenance, "epoch-registry-bootstrap");
    }

    #[test]
    fn html_is_not_escaped_but_line_separators_are() {
        let bytes = EpochRegistry::single("a<b>&c\u{2028}\"").encode();
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.contains(r#""a<b>&c\u2028\"""#), "{text}");
    }

    #[test]
    fn decode_round_trip_and_strictness() {
        let reg = EpochRegistry::single("AILANG v0.41.0");
        assert_eq!(EpochRegistry::decode(&reg.encode()).unwrap(), reg);
        assert!(EpochRegistry::decode(br#"{"semantic_id":"x","epochs":[]}"#).is_err());
        assert!(EpochRegistry::decode(
            br#"{"semantic_id":"world/epoch-registry/v1","epochs":[],"extra":1}"#
        )
        .is_err());
    }

    #[test]
    fn derivation() {
        let reg = EpochRegistry {
            epochs: vec![
                Epoch {
                    epoch: 1,
                    candidates: vec!["A".into(), "B".into()],
                },
                Epoch {
                    epoch: 2,
                    candidates: vec!["B".into()],
                },
            ],
        };
        assert_eq!(reg.derive("A", None).unwrap(), 1);
        assert_eq!(reg.derive("B", Some(2)).unwrap(), 2);
        assert!(matches!(
            reg.derive("B", None),
            Err(EpochError::Ambiguous { .. })
        ));
        let e = reg.derive("C", None).unwrap_err();
        assert!(e.to_string().starts_with(
            "interpreter release \"C\" is nominated by NO epoch in world/epoch-registry/v1; "
        ));
        assert!(matches!(
            reg.derive("A", Some(2)),
            Err(EpochError::StatedMismatch { .. })
        ));
        assert!(matches!(
            reg.derive("A", Some(9)),
            Err(EpochError::StatedMismatch { .. })
        ));
    }

    #[test]
    fn bootstrap_creates_then_noops_then_refuses_divergence() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("w.db");
        let mut s = Store::open_write(
            &db,
            WriteOptions {
                create: true,
                wait_lock: None,
            },
        )
        .unwrap();
        let tx = s.immediate().unwrap();
        let first = bootstrap(&tx, "AILANG v0.41.0").unwrap();
        tx.commit().unwrap();
        assert_eq!(
            first,
            Bootstrapped::Created(
                HashRef::parse(
                    "sha256:c56048c5da6cdbd7b725e0db8be2b3ea0e6fea18b6298ea94b233e617580d591"
                )
                .unwrap()
            )
        );
        let tx = s.immediate().unwrap();
        assert_eq!(
            bootstrap(&tx, "AILANG v0.41.0").unwrap(),
            Bootstrapped::Unchanged(first.head())
        );
        let err = bootstrap(&tx, "AILANG v0.52.1").unwrap_err();
        assert!(matches!(err, EpochError::Divergence { .. }));
        assert!(err.to_string().contains("\"AILANG v0.41.0\""), "{err}");
        drop(tx);
        assert_eq!(
            s.registry_head(SEMANTIC_ID).unwrap().unwrap(),
            first.head().to_string(),
            "a divergence never rewrites the head"
        );
        let (_, reg) = read(s.conn()).unwrap().unwrap();
        assert_eq!(reg.derive("AILANG v0.41.0", None).unwrap(), 1);
    }
}
