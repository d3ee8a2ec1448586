//! The publish manifest (`world publish --manifest M`, transitions.md §2).
//!
//! A JSON array of descriptor drafts. Keys are exact: `id`, `title`, `description`,
//! `inputSchema`, `outputSchema`, `access`, `declaredEffects` (required), exactly one of
//! `transitionFnFile` / `transitionFn`, and optional `semanticsEpoch` (0 = omitted). There is
//! deliberately no interpreter field: the pin comes from the command line.
//!
//! The whole manifest is parsed strictly as TR-CJSON-1 input (valid UTF-8, no duplicate
//! members at any depth, no escaped surrogates); each schema is canonicalised from its own
//! raw text in the manifest under the schema bounds (raw 262 144 B, canonical 65 536 B).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::value::RawValue;

use crate::encoding::trcjson::{self, Bounds, CValue};
use crate::encoding::HashRef;

use super::registry::{self, Effect, IdError, RegistryError, MAX_ENTRIES};

/// Largest manifest accepted, in bytes (the raw revision bound, 16 MiB).
pub const MAX_MANIFEST_BYTES: usize = 16_777_216;

const KEYS: [&str; 10] = [
    "access",
    "declaredEffects",
    "description",
    "id",
    "inputSchema",
    "outputSchema",
    "semanticsEpoch",
    "title",
    "transitionFn",
    "transitionFnFile",
];
const REQUIRED: [&str; 7] = [
    "id",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "access",
    "declaredEffects",
];

/// Where a descriptor's source comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SourceSpec {
    /// `transitionFnFile`: a path, relative to the current directory unless absolute.
    File(PathBuf),
    /// `transitionFn`: the ref of an existing `world/transition-source/v1` object.
    Ref(HashRef),
}

/// One manifest entry, checked and with canonical schemas.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestEntry {
    /// Transition id (grammar checked).
    pub id: String,
    /// Title (A2A skill name).
    pub title: String,
    /// Description.
    pub description: String,
    /// The source file or ref.
    pub source: SourceSpec,
    /// Input schema, parsed from its raw text under the schema bounds; root an object.
    pub input_schema: CValue,
    /// Output schema, likewise.
    pub output_schema: CValue,
    /// `{effect, scope, cost}`; cost ≥ 0.
    pub access: Effect,
    /// Declared effects; no duplicates; costs ≥ 0.
    pub declared_effects: Vec<Effect>,
    /// A stated semantics epoch (`None` when omitted or 0).
    pub semantics_epoch: Option<i64>,
}

/// A parsed manifest: 1–1024 entries with distinct ids, in manifest order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// The entries.
    pub entries: Vec<ManifestEntry>,
}

/// What is wrong with one manifest entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EntryProblem {
    /// The entry is not a JSON object.
    #[error("an entry must be a JSON object")]
    NotObject,
    /// A key the manifest format does not have (e.g. `interpreter`).
    #[error("unknown key {0:?}")]
    UnknownKey(String),
    /// A required key is absent.
    #[error("missing key {0:?}")]
    MissingKey(&'static str),
    /// A value of the wrong type.
    #[error("key {key:?} must be {want}")]
    WrongType {
        /// The key.
        key: &'static str,
        /// What it must be.
        want: &'static str,
    },
    /// The id breaks the grammar.
    #[error(transparent)]
    Id(#[from] IdError),
    /// Both or neither of `transitionFnFile` and `transitionFn`.
    #[error("exactly one of \"transitionFnFile\" and \"transitionFn\" is required (found {0})")]
    Source(&'static str),
    /// `transitionFn` is not a valid ref.
    #[error("key \"transitionFn\" is not a valid ref: {0}")]
    BadRef(String),
    /// A schema is refused by TR-CJSON-1 (raw or canonical bound, syntax, duplicates, …).
    #[error("{key}: {error}")]
    Schema {
        /// `inputSchema` or `outputSchema`.
        key: &'static str,
        /// The refusal.
        error: trcjson::Error,
    },
    /// A schema root that is not an object.
    #[error("{0}: the schema root must be a JSON object")]
    SchemaNotObject(&'static str),
    /// `access` or a declared effect is malformed or repeated.
    #[error(transparent)]
    Effect(#[from] RegistryError),
    /// A negative `access` cost.
    #[error("access cost {0} is negative; costs must be >= 0")]
    NegativeAccessCost(i64),
    /// A negative `semanticsEpoch`.
    #[error("semanticsEpoch {0} is negative (0 means omitted)")]
    NegativeEpoch(i64),
}

/// Why a manifest is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestError {
    /// The manifest is not acceptable JSON (or over 16 MiB).
    #[error("manifest is not valid JSON: {0}")]
    Json(trcjson::Error),
    /// The top level is not an array.
    #[error("manifest must be a JSON array of descriptors")]
    NotArray,
    /// `[]` (transitions.md §2).
    #[error("manifest holds no descriptors")]
    Empty,
    /// More entries than a revision can hold.
    #[error("manifest holds {0} descriptors; a revision holds at most 1024")]
    TooMany(usize),
    /// One entry is wrong.
    #[error("manifest[{index}]{}: {problem}", id_note(.id))]
    Entry {
        /// 0-based position in the array.
        index: usize,
        /// Its id, when it has a string one.
        id: Option<String>,
        /// What is wrong.
        problem: EntryProblem,
    },
    /// The same id twice.
    #[error("manifest lists id {id:?} twice (manifest[{first}] and manifest[{second}])")]
    DuplicateId {
        /// The id.
        id: String,
        /// First position.
        first: usize,
        /// Second position.
        second: usize,
    },
}

fn id_note(id: &Option<String>) -> String {
    id.as_ref()
        .map(|i| format!(" (id {i:?})"))
        .unwrap_or_default()
}

#[derive(serde::Deserialize)]
struct Spans<'a> {
    #[serde(borrow, rename = "inputSchema")]
    input: Option<&'a RawValue>,
    #[serde(borrow, rename = "outputSchema")]
    output: Option<&'a RawValue>,
}

/// Parse and check a manifest (transitions.md §2).
///
/// # Errors
/// [`ManifestError`]: not JSON, not an array, empty (`manifest holds no descriptors`), over
/// 1024 entries, a duplicate id, or the first problem in an entry (unknown or missing key,
/// id grammar, sources, schemas, effects).
pub fn parse(bytes: &[u8]) -> Result<Manifest, ManifestError> {
    let bounds = Bounds {
        raw: MAX_MANIFEST_BYTES,
        canonical: usize::MAX,
        what: "manifest",
    };
    let v = trcjson::parse(bytes, bounds).map_err(ManifestError::Json)?;
    let CValue::Array(items) = &v else {
        return Err(ManifestError::NotArray);
    };
    if items.is_empty() {
        return Err(ManifestError::Empty);
    }
    if items.len() > MAX_ENTRIES {
        return Err(ManifestError::TooMany(items.len()));
    }
    // The raw text of each schema, exactly as written (serde_json's own recursion limit of 128
    // applies here; deeper manifests are refused as invalid JSON).
    let spans: Vec<Spans<'_>> = match serde_json::from_slice(bytes) {
        Ok(s) => s,
        Err(e) => {
            return Err(ManifestError::Json(trcjson::Error::Syntax {
                offset: e.column(),
                reason: "the manifest could not be split into entries (nesting over 128 levels?)",
            }))
        }
    };
    let mut entries = Vec::with_capacity(items.len());
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (index, item) in items.iter().enumerate() {
        let id = item.get("id").and_then(CValue::as_str).map(str::to_string);
        let span = spans.get(index);
        let entry = parse_entry(item, span).map_err(|problem| ManifestError::Entry {
            index,
            id: id.clone(),
            problem,
        })?;
        if let Some(first) = seen.insert(entry.id.clone(), index) {
            return Err(ManifestError::DuplicateId {
                id: entry.id,
                first,
                second: index,
            });
        }
        entries.push(entry);
    }
    Ok(Manifest { entries })
}

fn parse_entry(item: &CValue, span: Option<&Spans<'_>>) -> Result<ManifestEntry, EntryProblem> {
    let Some(members) = item.as_object() else {
        return Err(EntryProblem::NotObject);
    };
    if let Some((k, _)) = members.iter().find(|(k, _)| !KEYS.contains(&k.as_str())) {
        return Err(EntryProblem::UnknownKey(k.clone()));
    }
    if let Some(k) = REQUIRED.iter().find(|k| item.get(k).is_none()) {
        return Err(EntryProblem::MissingKey(k));
    }
    let text = |key: &'static str| -> Result<String, EntryProblem> {
        item.get(key)
            .and_then(CValue::as_str)
            .map(str::to_string)
            .ok_or(EntryProblem::WrongType {
                key,
                want: "a string",
            })
    };
    let id = text("id")?;
    registry::validate_id(&id)?;
    let source = match (item.get("transitionFnFile"), item.get("transitionFn")) {
        (Some(_), Some(_)) => return Err(EntryProblem::Source("both")),
        (None, None) => return Err(EntryProblem::Source("neither")),
        (Some(_), None) => {
            let p = text("transitionFnFile")?;
            if p.is_empty() {
                return Err(EntryProblem::WrongType {
                    key: "transitionFnFile",
                    want: "a non-empty path",
                });
            }
            SourceSpec::File(PathBuf::from(p))
        }
        (None, Some(_)) => SourceSpec::Ref(
            HashRef::parse(&text("transitionFn")?)
                .map_err(|e| EntryProblem::BadRef(e.to_string()))?,
        ),
    };
    let input_schema = schema("inputSchema", span.and_then(|s| s.input))?;
    let output_schema = schema("outputSchema", span.and_then(|s| s.output))?;
    let access = Effect::from_cvalue(item.get("access").unwrap_or(&CValue::Null), "access")?;
    if access.cost < 0 {
        return Err(EntryProblem::NegativeAccessCost(access.cost));
    }
    let declared_effects = match item.get("declaredEffects") {
        Some(CValue::Array(list)) => list
            .iter()
            .enumerate()
            .map(|(i, e)| Effect::from_cvalue(e, &format!("declaredEffects[{i}]")))
            .collect::<Result<Vec<_>, _>>()?,
        _ => {
            return Err(EntryProblem::WrongType {
                key: "declaredEffects",
                want: "an array",
            })
        }
    };
    registry::check_effects(&id, &declared_effects)?;
    let semantics_epoch = match item.get("semanticsEpoch") {
        None => None,
        Some(v) => match v.as_i64() {
            Some(0) => None,
            Some(n) if n < 0 => return Err(EntryProblem::NegativeEpoch(n)),
            Some(n) => Some(n),
            None => {
                return Err(EntryProblem::WrongType {
                    key: "semanticsEpoch",
                    want: "an integer",
                })
            }
        },
    };
    Ok(ManifestEntry {
        id,
        title: text("title")?,
        description: text("description")?,
        source,
        input_schema,
        output_schema,
        access,
        declared_effects,
        semantics_epoch,
    })
}

fn schema(key: &'static str, raw: Option<&RawValue>) -> Result<CValue, EntryProblem> {
    let raw = raw.ok_or(EntryProblem::MissingKey(key))?;
    let v = trcjson::parse(raw.get().as_bytes(), Bounds::SCHEMA)
        .map_err(|error| EntryProblem::Schema { key, error })?;
    trcjson::encode_bounded(&v, Bounds::SCHEMA)
        .map_err(|error| EntryProblem::Schema { key, error })?;
    if !matches!(v, CValue::Object(_)) {
        return Err(EntryProblem::SchemaNotObject(key));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str) -> String {
        format!(
            r#"{{"id":"{id}","title":"T","description":"d","transitionFnFile":"src/{id}.ail","inputSchema":{{"type":"object"}},"outputSchema":{{"type":"object"}},"access":{{"effect":"Workspace.Read","scope":"worktree","cost":0}},"declaredEffects":[]}}"#
        )
    }

    fn err(text: &str) -> String {
        parse(text.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn parses_a_good_manifest() {
        let m = parse(format!("[{},{}]", entry("a.one"), entry("b")).as_bytes()).unwrap();
        assert_eq!(m.entries.len(), 2);
        assert_eq!(m.entries[0].id, "a.one");
        assert_eq!(
            m.entries[0].source,
            SourceSpec::File("src/a.one.ail".into())
        );
        assert_eq!(m.entries[0].semantics_epoch, None);
        assert_eq!(m.entries[0].access.effect, "Workspace.Read");
    }

    #[test]
    fn empty_and_non_array() {
        assert_eq!(err("[]"), "manifest holds no descriptors");
        assert_eq!(err("{}"), "manifest must be a JSON array of descriptors");
        assert!(err("[").starts_with("manifest is not valid JSON"));
    }

    #[test]
    fn duplicate_id() {
        assert_eq!(
            err(&format!("[{},{}]", entry("a"), entry("a"))),
            r#"manifest lists id "a" twice (manifest[0] and manifest[1])"#
        );
    }

    #[test]
    fn bad_id() {
        assert_eq!(
            err(&format!("[{}]", entry("Bad"))),
            r#"manifest[0] (id "Bad"): transition id "Bad" is invalid: it contains 'B'; only a-z 0-9 _ - . / are allowed"#
        );
        assert!(err(&format!("[{}]", entry("a..b"))).contains("empty segment"));
    }

    #[test]
    fn unknown_and_missing_keys() {
        let extra = entry("a").replacen('{', r#"{"extra":1,"#, 1);
        assert_eq!(
            err(&format!("[{extra}]")),
            r#"manifest[0] (id "a"): unknown key "extra""#
        );
        let interp = entry("a").replacen('{', r#"{"interpreter":"x","#, 1);
        assert!(err(&format!("[{interp}]")).ends_with(r#"unknown key "interpreter""#));
        let no_title = entry("a").replace(r#""title":"T","#, "");
        assert_eq!(
            err(&format!("[{no_title}]")),
            r#"manifest[0] (id "a"): missing key "title""#
        );
        let bad_access = entry("a").replace(r#""cost":0}"#, r#""cost":0,"extra":1}"#);
        assert_eq!(
            err(&format!("[{bad_access}]")),
            r#"manifest[0] (id "a"): access: unknown key "extra""#
        );
    }

    #[test]
    fn exactly_one_source() {
        let both = entry("a").replacen(
            '{',
            &format!(r#"{{"transitionFn":"sha256:{}","#, "a".repeat(64)),
            1,
        );
        assert!(err(&format!("[{both}]")).contains("(found both)"));
        let neither = entry("a").replace(r#""transitionFnFile":"src/a.ail","#, "");
        assert!(err(&format!("[{neither}]")).contains("(found neither)"));
        let by_ref = entry("a").replace(
            r#""transitionFnFile":"src/a.ail""#,
            &format!(r#""transitionFn":"sha256:{}""#, "c".repeat(64)),
        );
        let m = parse(format!("[{by_ref}]").as_bytes()).unwrap();
        assert!(matches!(m.entries[0].source, SourceSpec::Ref(_)));
        let bad_ref = entry("a").replace(
            r#""transitionFnFile":"src/a.ail""#,
            r#""transitionFn":"sha256:abc""#,
        );
        assert!(err(&format!("[{bad_ref}]")).contains("not a valid ref"));
    }

    #[test]
    fn schema_bounds_and_canonical_form() {
        let pad = "x".repeat(262_146 - 8);
        let huge = entry("a").replace(
            r#""inputSchema":{"type":"object"}"#,
            &format!(r#""inputSchema":{{"s":"{pad}"}}"#),
        );
        assert_eq!(
            err(&format!("[{huge}]")),
            r#"manifest[0] (id "a"): inputSchema: raw JSON is 262146 bytes; limit is 262144"#
        );
        let pad = "x".repeat(65_544 - 8);
        let canon_big = entry("a").replace(
            r#""outputSchema":{"type":"object"}"#,
            &format!(r#""outputSchema":{{"s":"{pad}"}}"#),
        );
        assert_eq!(
            err(&format!("[{canon_big}]")),
            r#"manifest[0] (id "a"): outputSchema: canonical schema is 65544 bytes; limit is 65536"#
        );
        let arr = entry("a").replace(r#""inputSchema":{"type":"object"}"#, r#""inputSchema":[1]"#);
        assert!(err(&format!("[{arr}]"))
            .ends_with("inputSchema: the schema root must be a JSON object"));
        let spaced = entry("a").replace(
            r#""inputSchema":{"type":"object"}"#,
            r#""inputSchema": { "z" : 1.0, "a" : -0 }"#,
        );
        let m = parse(format!("[{spaced}]").as_bytes()).unwrap();
        assert_eq!(
            trcjson::encode(&m.entries[0].input_schema),
            br#"{"a":0,"z":1}"#
        );
        let dup = entry("a").replace(
            r#""inputSchema":{"type":"object"}"#,
            r#""inputSchema":{"a":1,"a":2}"#,
        );
        assert!(err(&format!("[{dup}]")).contains(r#"duplicate object member "a""#));
    }

    #[test]
    fn effects_and_epoch() {
        let dup = entry("a").replace(
            r#""declaredEffects":[]"#,
            r#""declaredEffects":[{"effect":"E","scope":"s","cost":1},{"effect":"E","scope":"s","cost":1}]"#,
        );
        assert!(err(&format!("[{dup}]")).contains("declares the effect"));
        let neg = entry("a").replace(
            r#""declaredEffects":[]"#,
            r#""declaredEffects":[{"effect":"E","scope":"s","cost":-1}]"#,
        );
        assert!(err(&format!("[{neg}]")).contains("costs must be >= 0"));
        let neg_access = entry("a").replace(r#""cost":0}"#, r#""cost":-2}"#);
        assert!(err(&format!("[{neg_access}]")).contains("access cost -2 is negative"));
        let zero = entry("a").replacen('{', r#"{"semanticsEpoch":0,"#, 1);
        assert_eq!(
            parse(format!("[{zero}]").as_bytes()).unwrap().entries[0].semantics_epoch,
            None
        );
        let two = entry("a").replacen('{', r#"{"semanticsEpoch":2,"#, 1);
        assert_eq!(
            parse(format!("[{two}]").as_bytes()).unwrap().entries[0].semantics_epoch,
            Some(2)
        );
        let frac = entry("a").replacen('{', r#"{"semanticsEpoch":1.5,"#, 1);
        assert!(err(&format!("[{frac}]")).contains("must be an integer"));
    }
}
