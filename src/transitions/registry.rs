//! The transition registry `world/transition-registry/v1` (transitions.md §1,
//! store-format.md §7.2 and §14).
//!
//! A revision is the TR-CJSON-1 encoding (no trailing LF) of
//! `{entries, interfaceHash, parent, revision, semanticID}`; `entries` are descriptors sorted
//! strictly by id. Decoding is strict (unknown and missing keys are refused) and a decoded
//! revision must re-encode byte-identically.

use std::collections::BTreeSet;
use std::fmt;

use crate::encoding::trcjson::{self, Bounds, CValue};
use crate::encoding::HashRef;

/// Registry name and semantic id of revision objects.
pub const SEMANTIC_ID: &str = "world/transition-registry/v1";

/// Provenance of an attended revision object (transitions.md §1, store-format.md §6.3).
pub const PROVENANCE: &str = "host/transitionreg";

/// Provenance of a revision written by `world publish --yes` (DEC-CLI-3, transitions.md §3).
pub const PROVENANCE_UNATTENDED: &str = "cmd/world-publish:unattended";

/// The ASCII string whose sha256 is [`INTERFACE_HASH_V1`] (store-format.md §14).
pub const INTERFACE_HASH_V1_TEXT: &str = "world/transition-registry/v1|TR-CJSON-1|revision:{entries,interfaceHash,parent,revision,semanticID}|descriptor:{access,declaredEffects,description,id,inputSchema,interpreter,outputSchema,semanticsEpoch,title,transitionFn}|id:lower-ascii-1..128-segments-1..32|schema:raw262144-canonical65536|entries:1024|revision:raw16777216-canonical8388608";

/// `InterfaceHashV1`: the `interfaceHash` of every revision object (store-format.md §6.2).
pub const INTERFACE_HASH_V1: &str =
    "sha256:743f39f470bf354ebab0ab196598b5ba72db80463d833325cb7672249d4734ac";

/// At most this many descriptors per revision.
pub const MAX_ENTRIES: usize = 1024;
/// Longest id in bytes.
pub const MAX_ID_BYTES: usize = 128;
/// Longest id segment (between `.` and `/`) in bytes.
pub const MAX_SEGMENT_BYTES: usize = 32;
/// Longest MCP tool name in bytes (surfaces.md §5.4).
pub const MCP_NAME_MAX_BYTES: usize = 64;

/// The descriptor's keys, in TR-CJSON-1 (byte) order.
const DESCRIPTOR_KEYS: [&str; 10] = [
    "access",
    "declaredEffects",
    "description",
    "id",
    "inputSchema",
    "interpreter",
    "outputSchema",
    "semanticsEpoch",
    "title",
    "transitionFn",
];
const REVISION_KEYS: [&str; 5] = [
    "entries",
    "interfaceHash",
    "parent",
    "revision",
    "semanticID",
];
const EFFECT_KEYS: [&str; 3] = ["cost", "effect", "scope"];

/// Why a text is not a valid transition id (transitions.md §1 id grammar).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("transition id {id:?} is invalid: {reason}")]
pub struct IdError {
    /// The offending id.
    pub id: String,
    /// Which rule it breaks.
    pub reason: String,
}

/// Why a revision (or one of its descriptors) is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The bytes are not acceptable TR-CJSON-1 (or over the revision bounds).
    #[error("{0}")]
    Json(#[from] trcjson::Error),
    /// An object holds a key the format does not have.
    #[error("{}unknown key {key:?}", prefix(.at))]
    UnknownKey {
        /// Where (`entries[3]`, `entries[3].access`, or empty for the top level).
        at: String,
        /// The key.
        key: String,
    },
    /// An object lacks a required key.
    #[error("{}missing key {key:?}", prefix(.at))]
    MissingKey {
        /// Where.
        at: String,
        /// The key.
        key: &'static str,
    },
    /// A value has the wrong JSON type.
    #[error("{}key {key:?} must be {want}", prefix(.at))]
    WrongType {
        /// Where.
        at: String,
        /// The key.
        key: &'static str,
        /// What it must be.
        want: &'static str,
    },
    /// A ref field does not parse.
    #[error("{}key {key:?} is not a valid ref: {reason}", prefix(.at))]
    BadRef {
        /// Where.
        at: String,
        /// The key.
        key: &'static str,
        /// Why.
        reason: String,
    },
    /// A descriptor id breaks the grammar.
    #[error(transparent)]
    Id(#[from] IdError),
    /// Entries out of order or repeated.
    #[error("entries must be sorted strictly by id: {prev:?} is followed by {next:?}")]
    NotSorted {
        /// The earlier id.
        prev: String,
        /// The id after it.
        next: String,
    },
    /// More than [`MAX_ENTRIES`] descriptors.
    #[error("a revision holds {0} descriptors; limit is 1024")]
    TooManyEntries(usize),
    /// A declared effect appears twice.
    #[error("transition {id:?} declares the effect {effect} twice")]
    DuplicateEffect {
        /// The descriptor id.
        id: String,
        /// The repeated triple, `{effect, scope, cost}`.
        effect: String,
    },
    /// A negative cost.
    #[error("transition {id:?} has {what} with cost {cost}; costs must be >= 0")]
    NegativeCost {
        /// The descriptor id.
        id: String,
        /// `access` or `a declared effect`.
        what: &'static str,
        /// The cost.
        cost: i64,
    },
    /// A semantics epoch below 1.
    #[error("transition {id:?} has semanticsEpoch {epoch}; epochs start at 1")]
    BadEpoch {
        /// The descriptor id.
        id: String,
        /// The epoch.
        epoch: i64,
    },
    /// A schema whose root is not an object.
    #[error("transition {id:?}: {which} root must be a JSON object")]
    SchemaNotObject {
        /// The descriptor id.
        id: String,
        /// `inputSchema` or `outputSchema`.
        which: &'static str,
    },
    /// A schema over the canonical schema bound.
    #[error("transition {id:?}: {which}: canonical schema is {size} bytes; limit is 65536")]
    SchemaTooLarge {
        /// The descriptor id.
        id: String,
        /// `inputSchema` or `outputSchema`.
        which: &'static str,
        /// Canonical size in bytes.
        size: usize,
    },
    /// `semanticID` is not the registry's.
    #[error("semanticID is {0:?}; expected \"world/transition-registry/v1\"")]
    BadSemanticId(String),
    /// `interfaceHash` is not `InterfaceHashV1`.
    #[error("interfaceHash is {0:?}; expected InterfaceHashV1 {INTERFACE_HASH_V1}")]
    BadInterfaceHash(String),
    /// `revision` below 1.
    #[error("revision number {0} is below 1")]
    BadRevision(i64),
    /// `parent` present on revision 1, or absent on a later one.
    #[error("revision {revision} has parent {parent:?}; revision 1 has parent \"\" and every later revision names its predecessor")]
    BadParent {
        /// The revision number.
        revision: i64,
        /// The parent text.
        parent: String,
    },
    /// The bytes decode but are not their own canonical encoding.
    #[error("revision bytes are not canonical TR-CJSON-1: decoding and re-encoding changes them")]
    NotCanonical,
}

fn prefix(at: &str) -> String {
    if at.is_empty() {
        String::new()
    } else {
        format!("{at}: ")
    }
}

/// One `{cost, effect, scope}` triple: a descriptor's `access` or one declared effect.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Effect {
    /// Budget units per call (an integer; ≥ 0 for declared effects).
    pub cost: i64,
    /// Effect name, e.g. `Workspace.Read`.
    pub effect: String,
    /// Scope, e.g. `worktree`.
    pub scope: String,
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.effect, self.scope, self.cost)
    }
}

impl Effect {
    fn to_cvalue(&self) -> CValue {
        CValue::Object(vec![
            ("cost".into(), CValue::Number(self.cost.to_string())),
            ("effect".into(), CValue::String(self.effect.clone())),
            ("scope".into(), CValue::String(self.scope.clone())),
        ])
    }

    /// Decode `{cost, effect, scope}` strictly (no other keys; `cost` an integer).
    ///
    /// # Errors
    /// [`RegistryError::UnknownKey`], [`RegistryError::MissingKey`], [`RegistryError::WrongType`].
    pub fn from_cvalue(v: &CValue, at: &str) -> Result<Effect, RegistryError> {
        let [cost, effect, scope] = fields(v, at, &EFFECT_KEYS)?;
        Ok(Effect {
            cost: int(cost, at, "cost")?,
            effect: string(effect, at, "effect")?,
            scope: string(scope, at, "scope")?,
        })
    }
}

/// One registry entry (transitions.md §1 descriptor table). Schemas are held parsed and are
/// encoded canonically; refs are parsed `HashRef`s.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Descriptor {
    /// Stable id (grammar: [`validate_id`]); the A2A skill id and, escaped, the MCP tool name.
    pub id: String,
    /// A2A skill `name`.
    pub title: String,
    /// Card and `tools/list` text.
    pub description: String,
    /// Ref of the `world/transition-source/v1` object.
    pub transition_fn: HashRef,
    /// Ref of the pinned interpreter (archived binary, or the embedded identity).
    pub interpreter: HashRef,
    /// The epoch that nominates the interpreter's release (≥ 1).
    pub semantics_epoch: i64,
    /// Canonical JSON Schema of the input (root an object).
    pub input_schema: CValue,
    /// Canonical JSON Schema of the output (root an object).
    pub output_schema: CValue,
    /// What a session must hold to see and call it.
    pub access: Effect,
    /// The exact triples its plans may request; no duplicates; costs ≥ 0.
    pub declared_effects: Vec<Effect>,
}

impl Descriptor {
    /// The descriptor as a TR-CJSON-1 value (keys sorted).
    pub fn to_cvalue(&self) -> CValue {
        CValue::Object(vec![
            ("access".into(), self.access.to_cvalue()),
            (
                "declaredEffects".into(),
                CValue::Array(
                    self.declared_effects
                        .iter()
                        .map(Effect::to_cvalue)
                        .collect(),
                ),
            ),
            (
                "description".into(),
                CValue::String(self.description.clone()),
            ),
            ("id".into(), CValue::String(self.id.clone())),
            ("inputSchema".into(), self.input_schema.clone()),
            (
                "interpreter".into(),
                CValue::String(self.interpreter.to_string()),
            ),
            ("outputSchema".into(), self.output_schema.clone()),
            (
                "semanticsEpoch".into(),
                CValue::Number(self.semantics_epoch.to_string()),
            ),
            ("title".into(), CValue::String(self.title.clone())),
            (
                "transitionFn".into(),
                CValue::String(self.transition_fn.to_string()),
            ),
        ])
    }

    /// Decode one descriptor strictly; `at` names it in errors (`entries[2]`).
    ///
    /// # Errors
    /// Unknown or missing keys, wrong types, bad refs, and every [`Descriptor::validate`] rule.
    pub fn from_cvalue(v: &CValue, at: &str) -> Result<Descriptor, RegistryError> {
        let [access, declared, description, id, input, interp, output, epoch, title, tfn] =
            fields(v, at, &DESCRIPTOR_KEYS)?;
        let declared_effects = match declared {
            CValue::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, e)| Effect::from_cvalue(e, &format!("{at}.declaredEffects[{i}]")))
                .collect::<Result<Vec<_>, _>>()?,
            _ => {
                return Err(RegistryError::WrongType {
                    at: at.to_string(),
                    key: "declaredEffects",
                    want: "an array",
                })
            }
        };
        let d = Descriptor {
            id: string(id, at, "id")?,
            title: string(title, at, "title")?,
            description: string(description, at, "description")?,
            transition_fn: reference(tfn, at, "transitionFn")?,
            interpreter: reference(interp, at, "interpreter")?,
            semantics_epoch: int(epoch, at, "semanticsEpoch")?,
            input_schema: input.clone(),
            output_schema: output.clone(),
            access: Effect::from_cvalue(access, &format!("{at}.access"))?,
            declared_effects,
        };
        d.validate()?;
        Ok(d)
    }

    /// Check the descriptor rules: id grammar, epoch ≥ 1, schema roots are objects within the
    /// canonical schema bound (65 536 B), declared effects without duplicates and costs ≥ 0.
    ///
    /// # Errors
    /// The first rule broken, as a [`RegistryError`].
    pub fn validate(&self) -> Result<(), RegistryError> {
        validate_id(&self.id)?;
        if self.semantics_epoch < 1 {
            return Err(RegistryError::BadEpoch {
                id: self.id.clone(),
                epoch: self.semantics_epoch,
            });
        }
        for (which, schema) in [
            ("inputSchema", &self.input_schema),
            ("outputSchema", &self.output_schema),
        ] {
            if !matches!(schema, CValue::Object(_)) {
                return Err(RegistryError::SchemaNotObject {
                    id: self.id.clone(),
                    which,
                });
            }
            let size = trcjson::encode(schema).len();
            if size > Bounds::SCHEMA.canonical {
                return Err(RegistryError::SchemaTooLarge {
                    id: self.id.clone(),
                    which,
                    size,
                });
            }
        }
        check_effects(&self.id, &self.declared_effects)
    }

    /// The MCP tool name of this descriptor ([`mcp_name`]).
    pub fn mcp_name(&self) -> String {
        mcp_name(&self.id)
    }
}

/// Declared effects: no duplicate triple, every cost ≥ 0.
///
/// # Errors
/// [`RegistryError::NegativeCost`] or [`RegistryError::DuplicateEffect`].
pub fn check_effects(id: &str, effects: &[Effect]) -> Result<(), RegistryError> {
    let mut seen = BTreeSet::new();
    for e in effects {
        if e.cost < 0 {
            return Err(RegistryError::NegativeCost {
                id: id.to_string(),
                what: "a declared effect",
                cost: e.cost,
            });
        }
        if !seen.insert(e) {
            return Err(RegistryError::DuplicateEffect {
                id: id.to_string(),
                effect: format!(
                    "{{effect:{:?}, scope:{:?}, cost:{}}}",
                    e.effect, e.scope, e.cost
                ),
            });
        }
    }
    Ok(())
}

/// One registry revision: `entries` sorted strictly by id, `revision` ≥ 1, `parent` = `None`
/// (`""`) exactly for revision 1. `interfaceHash` and `semanticID` are fixed
/// ([`INTERFACE_HASH_V1`], [`SEMANTIC_ID`]) and written by [`Revision::encode`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Revision {
    /// The revision number (1, 2, …).
    pub revision: i64,
    /// The previous revision's object ref; `None` for revision 1.
    pub parent: Option<HashRef>,
    /// The descriptors, sorted strictly by id (byte order).
    pub entries: Vec<Descriptor>,
}

impl Revision {
    /// The empty revision 1.
    pub fn empty() -> Self {
        Revision {
            revision: 1,
            parent: None,
            entries: Vec::new(),
        }
    }

    /// The revision as a TR-CJSON-1 value.
    pub fn to_cvalue(&self) -> CValue {
        CValue::Object(vec![
            (
                "entries".into(),
                CValue::Array(self.entries.iter().map(Descriptor::to_cvalue).collect()),
            ),
            (
                "interfaceHash".into(),
                CValue::String(INTERFACE_HASH_V1.into()),
            ),
            (
                "parent".into(),
                CValue::String(self.parent.map(|p| p.to_string()).unwrap_or_default()),
            ),
            ("revision".into(), CValue::Number(self.revision.to_string())),
            ("semanticID".into(), CValue::String(SEMANTIC_ID.into())),
        ])
    }

    /// Check every rule ([`Revision::validate`]) and encode as TR-CJSON-1 without a trailing
    /// LF, within the revision bound (canonical ≤ 8 388 608 B).
    ///
    /// # Errors
    /// Any validation error, or [`trcjson::Error::CanonicalTooLarge`].
    pub fn encode(&self) -> Result<Vec<u8>, RegistryError> {
        self.validate()?;
        Ok(trcjson::encode_bounded(
            &self.to_cvalue(),
            Bounds::REVISION,
        )?)
    }

    /// Check the revision rules: number ≥ 1, parent iff number > 1, at most 1024 entries,
    /// sorted strictly by id, each descriptor valid.
    ///
    /// # Errors
    /// The first rule broken.
    pub fn validate(&self) -> Result<(), RegistryError> {
        if self.revision < 1 {
            return Err(RegistryError::BadRevision(self.revision));
        }
        if (self.revision == 1) != self.parent.is_none() {
            return Err(RegistryError::BadParent {
                revision: self.revision,
                parent: self.parent.map(|p| p.to_string()).unwrap_or_default(),
            });
        }
        if self.entries.len() > MAX_ENTRIES {
            return Err(RegistryError::TooManyEntries(self.entries.len()));
        }
        for pair in self.entries.windows(2) {
            if let [a, b] = pair {
                if a.id.as_bytes() >= b.id.as_bytes() {
                    return Err(RegistryError::NotSorted {
                        prev: a.id.clone(),
                        next: b.id.clone(),
                    });
                }
            }
        }
        self.entries.iter().try_for_each(Descriptor::validate)
    }

    /// Decode revision bytes strictly: TR-CJSON-1 within the revision bounds (raw
    /// 16 777 216 B, canonical 8 388 608 B), exact key sets, the fixed `semanticID` and
    /// `interfaceHash`, every rule of [`Revision::validate`], and byte-identical re-encoding.
    ///
    /// # Errors
    /// A [`RegistryError`] naming the first problem (`unknown key "extra"`,
    /// `missing key "id"`, …).
    pub fn decode(bytes: &[u8]) -> Result<Revision, RegistryError> {
        let v = trcjson::parse(bytes, Bounds::REVISION)?;
        let [entries, iface, parent, revision, semantic] = fields(&v, "", &REVISION_KEYS)?;
        let semantic = string(semantic, "", "semanticID")?;
        if semantic != SEMANTIC_ID {
            return Err(RegistryError::BadSemanticId(semantic));
        }
        let iface = string(iface, "", "interfaceHash")?;
        if iface != INTERFACE_HASH_V1 {
            return Err(RegistryError::BadInterfaceHash(iface));
        }
        let parent_text = string(parent, "", "parent")?;
        let parent = if parent_text.is_empty() {
            None
        } else {
            Some(
                HashRef::parse(&parent_text).map_err(|e| RegistryError::BadRef {
                    at: String::new(),
                    key: "parent",
                    reason: e.to_string(),
                })?,
            )
        };
        let CValue::Array(items) = entries else {
            return Err(RegistryError::WrongType {
                at: String::new(),
                key: "entries",
                want: "an array",
            });
        };
        if items.len() > MAX_ENTRIES {
            return Err(RegistryError::TooManyEntries(items.len()));
        }
        let entries = items
            .iter()
            .enumerate()
            .map(|(i, e)| Descriptor::from_cvalue(e, &format!("entries[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        let rev = Revision {
            revision: int(revision, "", "revision")?,
            parent,
            entries,
        };
        if rev.encode()? != bytes {
            return Err(RegistryError::NotCanonical);
        }
        Ok(rev)
    }

    /// The descriptor with this id, if present (binary search: entries are sorted).
    pub fn get(&self, id: &str) -> Option<&Descriptor> {
        self.entries
            .binary_search_by(|d| d.id.as_bytes().cmp(id.as_bytes()))
            .ok()
            .and_then(|i| self.entries.get(i))
    }
}

/// The exact members `keys` (sorted) of the object `v`, in `keys` order; refuses unknown keys
/// first, then missing ones.
fn fields<'a, const N: usize>(
    v: &'a CValue,
    at: &str,
    keys: &[&'static str; N],
) -> Result<[&'a CValue; N], RegistryError> {
    let CValue::Object(members) = v else {
        return Err(RegistryError::WrongType {
            at: at.to_string(),
            key: "(value)",
            want: "an object",
        });
    };
    if let Some((k, _)) = members.iter().find(|(k, _)| !keys.contains(&k.as_str())) {
        return Err(RegistryError::UnknownKey {
            at: at.to_string(),
            key: k.clone(),
        });
    }
    let mut out = [&CValue::Null; N];
    for (slot, key) in out.iter_mut().zip(keys.iter()) {
        *slot = v.get(key).ok_or(RegistryError::MissingKey {
            at: at.to_string(),
            key,
        })?;
    }
    Ok(out)
}

fn string(v: &CValue, at: &str, key: &'static str) -> Result<String, RegistryError> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| RegistryError::WrongType {
            at: at.to_string(),
            key,
            want: "a string",
        })
}

fn int(v: &CValue, at: &str, key: &'static str) -> Result<i64, RegistryError> {
    v.as_i64().ok_or_else(|| RegistryError::WrongType {
        at: at.to_string(),
        key,
        want: "an integer",
    })
}

fn reference(v: &CValue, at: &str, key: &'static str) -> Result<HashRef, RegistryError> {
    let text = string(v, at, key)?;
    HashRef::parse(&text).map_err(|e| RegistryError::BadRef {
        at: at.to_string(),
        key,
        reason: e.to_string(),
    })
}

/// Check the id grammar (transitions.md §1): 1–128 bytes of `a–z 0–9 _ - . /`; segments
/// split on `.` and `/`, each 1–32 bytes; no empty segment; the first and last byte, and any
/// byte right after `.` or `/`, may not be `_ - . /`; `_` or `-` may not precede `.` or `/`.
///
/// # Errors
/// [`IdError`] naming the rule broken.
pub fn validate_id(id: &str) -> Result<(), IdError> {
    let fail = |reason: String| {
        Err(IdError {
            id: id.to_string(),
            reason,
        })
    };
    let bytes = id.as_bytes();
    if bytes.is_empty() {
        return fail("it is empty".into());
    }
    if bytes.len() > MAX_ID_BYTES {
        return fail(format!("it is {} bytes; limit is 128", bytes.len()));
    }
    if let Some(c) = id
        .chars()
        .find(|c| !matches!(c, 'a'..='z' | '0'..='9' | '_' | '-' | '.' | '/'))
    {
        return fail(format!(
            "it contains {c:?}; only a-z 0-9 _ - . / are allowed"
        ));
    }
    let segments = id.split(['.', '/']).count();
    for (i, seg) in id.split(['.', '/']).enumerate() {
        let s = seg.as_bytes();
        let (Some(&first), Some(&last)) = (s.first(), s.last()) else {
            return fail("it has an empty segment (a leading, trailing or doubled . or /)".into());
        };
        if s.len() > MAX_SEGMENT_BYTES {
            return fail(format!("segment {seg:?} is {} bytes; limit is 32", s.len()));
        }
        if matches!(first, b'_' | b'-') {
            return fail(format!(
                "segment {seg:?} starts with {:?}; a segment starts with a-z or 0-9",
                first as char
            ));
        }
        if matches!(last, b'_' | b'-') {
            let what = if i + 1 == segments {
                "the id may not end with it"
            } else {
                "_ or - may not precede . or /"
            };
            return fail(format!(
                "segment {seg:?} ends with {:?}; {what}",
                last as char
            ));
        }
    }
    Ok(())
}

/// The MCP tool name of a transition id (surfaces.md §5.4): `_` → `_u`, `.` → `_d`, `/` → `_s`
/// (in that order; `-` unchanged). `tools.echo` → `tools_decho`.
pub fn mcp_name(id: &str) -> String {
    let mut out = String::with_capacity(id.len() + 8);
    for c in id.chars() {
        match c {
            '_' => out.push_str("_u"),
            '.' => out.push_str("_d"),
            '/' => out.push_str("_s"),
            c => out.push(c),
        }
    }
    out
}

/// Why a text is not an escaped MCP tool name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name:?} is not an escaped tool name: {reason}")]
pub struct McpNameError {
    /// The name.
    pub name: String,
    /// What is wrong.
    pub reason: &'static str,
}

/// Decode an MCP tool name back to the transition id by reading `_u`/`_d`/`_s` pairs.
///
/// # Errors
/// [`McpNameError`] for a lone or unknown `_` escape, or a raw `.` or `/`.
pub fn mcp_decode(name: &str) -> Result<String, McpNameError> {
    let err = |reason| McpNameError {
        name: name.to_string(),
        reason,
    };
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars();
    while let Some(c) = chars.next() {
        match c {
            '_' => match chars.next() {
                Some('u') => out.push('_'),
                Some('d') => out.push('.'),
                Some('s') => out.push('/'),
                Some(_) => return Err(err("an _ is followed by something other than u, d or s")),
                None => return Err(err("it ends with a lone _")),
            },
            '.' | '/' => return Err(err("it holds a raw . or /")),
            c => out.push(c),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(raw: &str) -> CValue {
        trcjson::parse(raw.as_bytes(), Bounds::SCHEMA).expect("test schema parses")
    }

    fn echo() -> Descriptor {
        let read = Effect {
            cost: 1,
            effect: "read".into(),
            scope: "world".into(),
        };
        Descriptor {
            id: "tools.echo".into(),
            title: "Echo".into(),
            description: "test".into(),
            transition_fn: HashRef::parse(&format!("sha256:{}", "a".repeat(64))).unwrap(),
            interpreter: HashRef::parse(&format!("sha256:{}", "b".repeat(64))).unwrap(),
            semantics_epoch: 1,
            input_schema: schema(r#"{"z":1.0,"a":"<&é"}"#),
            output_schema: schema(r#"{"n":-0,"array":[3,2,1]}"#),
            access: read.clone(),
            declared_effects: vec![read],
        }
    }

    #[test]
    fn interface_hash_v1_is_the_hash_of_its_string() {
        assert_eq!(
            HashRef::of(INTERFACE_HASH_V1_TEXT.as_bytes()).to_string(),
            INTERFACE_HASH_V1
        );
    }

    #[test]
    fn empty_revision_one_bytes() {
        let bytes = Revision::empty().encode().unwrap();
        assert_eq!(
            String::from_utf8(bytes.clone()).unwrap(),
            r#"{"entries":[],"interfaceHash":"sha256:743f39f470bf354ebab0ab196598b5ba72db80463d833325cb7672249d4734ac","parent":"","revision":1,"semanticID":"world/transition-registry/v1"}"#
        );
        assert_eq!(Revision::decode(&bytes).unwrap(), Revision::empty());
    }

    #[test]
    fn descriptor_round_trip() {
        let rev = Revision {
            revision: 1,
            parent: None,
            entries: vec![echo()],
        };
        let bytes = rev.encode().unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        let a = "a".repeat(64);
        let b = "b".repeat(64);
        let want = format!(
            r#"{{"entries":[{{"access":{{"cost":1,"effect":"read","scope":"world"}},"declaredEffects":[{{"cost":1,"effect":"read","scope":"world"}}],"description":"test","id":"tools.echo","inputSchema":{{"a":"<&é","z":1}},"interpreter":"sha256:{b}","outputSchema":{{"array":[3,2,1],"n":0}},"semanticsEpoch":1,"title":"Echo","transitionFn":"sha256:{a}"}}],"interfaceHash":"{INTERFACE_HASH_V1}","parent":"","revision":1,"semanticID":"world/transition-registry/v1"}}"#
        );
        assert_eq!(text, want);
        assert!(!text.ends_with('\n'));
        let back = Revision::decode(&bytes).unwrap();
        assert_eq!(back, rev);
        assert_eq!(back.encode().unwrap(), bytes);
    }

    fn with_entry_edit(edit: impl Fn(&mut Vec<(String, CValue)>)) -> Vec<u8> {
        let rev = Revision {
            revision: 1,
            parent: None,
            entries: vec![echo()],
        };
        let mut v = rev.to_cvalue();
        if let CValue::Object(m) = &mut v {
            if let Some((_, CValue::Array(items))) = m.iter_mut().find(|(k, _)| k == "entries") {
                if let Some(CValue::Object(d)) = items.first_mut() {
                    edit(d);
                    d.sort_by(|a, b| a.0.cmp(&b.0));
                }
            }
        }
        trcjson::encode(&v)
    }

    #[test]
    fn unknown_and_missing_keys_are_refused() {
        let extra = with_entry_edit(|d| d.push(("extra".into(), CValue::Null)));
        let e = Revision::decode(&extra).unwrap_err();
        assert_eq!(e.to_string(), r#"entries[0]: unknown key "extra""#);
        let missing = with_entry_edit(|d| d.retain(|(k, _)| k != "id"));
        let e = Revision::decode(&missing).unwrap_err();
        assert_eq!(e.to_string(), r#"entries[0]: missing key "id""#);
        let top = br#"{"entries":[],"extra":1,"interfaceHash":"sha256:743f39f470bf354ebab0ab196598b5ba72db80463d833325cb7672249d4734ac","parent":"","revision":1,"semanticID":"world/transition-registry/v1"}"#;
        assert_eq!(
            Revision::decode(top).unwrap_err().to_string(),
            r#"unknown key "extra""#
        );
    }

    #[test]
    fn non_canonical_bytes_are_refused() {
        let bytes = Revision::empty().encode().unwrap();
        let mut spaced = b" ".to_vec();
        spaced.extend_from_slice(&bytes);
        assert_eq!(
            Revision::decode(&spaced).unwrap_err(),
            RegistryError::NotCanonical
        );
        let mut lf = bytes.clone();
        lf.push(b'\n');
        assert_eq!(
            Revision::decode(&lf).unwrap_err(),
            RegistryError::NotCanonical
        );
    }

    #[test]
    fn fixed_fields_and_parent_rules() {
        let bad_iface = String::from_utf8(Revision::empty().encode().unwrap())
            .unwrap()
            .replace("743f", "843f");
        assert!(matches!(
            Revision::decode(bad_iface.as_bytes()),
            Err(RegistryError::BadInterfaceHash(_))
        ));
        let rev2_no_parent = Revision {
            revision: 2,
            parent: None,
            entries: vec![],
        };
        assert!(matches!(
            rev2_no_parent.encode(),
            Err(RegistryError::BadParent { .. })
        ));
        let rev1_parent = Revision {
            revision: 1,
            parent: Some(HashRef::of(b"x")),
            entries: vec![],
        };
        assert!(matches!(
            rev1_parent.encode(),
            Err(RegistryError::BadParent { .. })
        ));
    }

    #[test]
    fn entries_sorted_strictly_and_bounded() {
        let mut b = echo();
        b.id = "b".into();
        let mut a = echo();
        a.id = "a".into();
        let unsorted = Revision {
            revision: 1,
            parent: None,
            entries: vec![b.clone(), a.clone()],
        };
        assert!(matches!(
            unsorted.encode(),
            Err(RegistryError::NotSorted { .. })
        ));
        let dup = Revision {
            revision: 1,
            parent: None,
            entries: vec![a.clone(), a.clone()],
        };
        assert!(matches!(dup.encode(), Err(RegistryError::NotSorted { .. })));
        let many = Revision {
            revision: 1,
            parent: None,
            entries: (0..1025)
                .map(|i| {
                    let mut d = echo();
                    d.id = format!("t{i:05}");
                    d
                })
                .collect(),
        };
        assert_eq!(
            many.encode().unwrap_err(),
            RegistryError::TooManyEntries(1025)
        );
        let mut ok = many;
        ok.entries.truncate(1024);
        assert!(ok.encode().is_ok());
    }

    #[test]
    fn declared_effect_rules() {
        let mut d = echo();
        d.declared_effects.push(d.declared_effects[0].clone());
        assert!(matches!(
            d.validate(),
            Err(RegistryError::DuplicateEffect { .. })
        ));
        let mut d = echo();
        d.declared_effects[0].cost = -1;
        assert!(matches!(
            d.validate(),
            Err(RegistryError::NegativeCost { cost: -1, .. })
        ));
        let mut d = echo();
        d.declared_effects.clear();
        assert!(d.validate().is_ok(), "an empty declaredEffects is allowed");
        let mut d = echo();
        d.input_schema = CValue::Array(vec![]);
        assert!(matches!(
            d.validate(),
            Err(RegistryError::SchemaNotObject { .. })
        ));
        let mut d = echo();
        d.semantics_epoch = 0;
        assert!(matches!(d.validate(), Err(RegistryError::BadEpoch { .. })));
    }

    #[test]
    fn id_grammar() {
        for ok in [
            "a",
            "tools.echo",
            "ailang-read",
            "se/tools.read_file",
            "a1.b2/c3",
            &"x".repeat(32),
            &format!(
                "{}.{}.{}.{}",
                "a".repeat(32),
                "b".repeat(32),
                "c".repeat(31),
                "d"
            ),
        ] {
            assert!(validate_id(ok).is_ok(), "{ok:?} should be valid");
        }
        for bad in [
            "",
            "Tools",
            "a b",
            "é",
            ".a",
            "a.",
            "/a",
            "a/",
            "a..b",
            "a./b",
            "_a",
            "-a",
            "a_",
            "a-",
            "a_.b",
            "a-/b",
            "a._b",
            "a/-b",
            &"x".repeat(33),
            &format!("a.{}", "x".repeat(33)),
            &["abcdefgh"; 15].join("."),
        ] {
            assert!(validate_id(bad).is_err(), "{bad:?} should be invalid");
        }
        let long = ["abcdefgh"; 15].join(".");
        assert_eq!(long.len(), 134);
        assert!(validate_id(&long)
            .unwrap_err()
            .to_string()
            .contains("134 bytes; limit is 128"));
    }

    #[test]
    fn mcp_escape_and_decode() {
        assert_eq!(mcp_name("tools.echo"), "tools_decho");
        assert_eq!(mcp_name("ailang-read"), "ailang-read");
        assert_eq!(mcp_name("a_b.c/d"), "a_ub_dc_sd");
        for id in ["tools.echo", "ailang-read", "a_b.c/d", "x_u.y"] {
            assert_eq!(mcp_decode(&mcp_name(id)).unwrap(), id);
        }
        assert!(mcp_decode("a_x").is_err());
        assert!(mcp_decode("a_").is_err());
        assert!(mcp_decode("a.b").is_err());
    }

    #[test]
    fn trcjson_vectors_through_the_schema_path() {
        assert_eq!(
            trcjson::encode(&schema(r#"{"a":1,"b":1.0,"c":1e0,"d":-0}"#)),
            br#"{"a":1,"b":1,"c":1,"d":0}"#
        );
        assert_ne!(
            trcjson::encode(&schema(r#"{"s":"é"}"#)),
            trcjson::encode(&schema(r#"{"s":"e\u0301"}"#))
        );
        let big = format!(r#"{{"s":"{}"}}"#, "x".repeat(262_146 - 8));
        assert_eq!(big.len(), 262_146);
        assert_eq!(
            trcjson::canonicalize(big.as_bytes(), Bounds::SCHEMA)
                .unwrap_err()
                .to_string(),
            "raw JSON is 262146 bytes; limit is 262144"
        );
        let over = format!(r#"{{"s":"{}"}}"#, "x".repeat(65_544 - 8));
        assert_eq!(
            trcjson::canonicalize(over.as_bytes(), Bounds::SCHEMA)
                .unwrap_err()
                .to_string(),
            "canonical schema is 65544 bytes; limit is 65536"
        );
    }
}
