//! The `Registry.Publish` effect's wire: its scope grammars, the request payload
//! (`world/registry-publish-request/v1`), the result object (`world/registry-publish-result/v1`)
//! and the outcome classification shared by both publishers (the reference's
//! `host/broker/registry_publish.go` and `approve.go`).
//!
//! Scopes:
//!
//! ```text
//! registry:<registry-origin>/package:<vendor>/<name>/version:<version>                  (the grant)
//! <grant scope>#effect=Registry.Publish&manifest=<ref>&tarball=<sha>&content=<sha>&interface=<sha>&expires=<t>   (the approval)
//! ```
//!
//! The request payload's keys, in this fixed order: `schema`, `vendor`, `name`, `version`,
//! `registryOrigin`, `manifestRef`, `approvalRef`, `tarballSHA256`, `contentHash`,
//! `interfaceHash`, `exports`, `effects`, `compilerVersion`, `compilerSHA256` (Go-json; lists
//! never `null`). The result's: `schema`, `status`, `vendor`, `name`, `version`,
//! `registryOrigin`, `validatorOrigin`, `tarballSHA256`, `contentHash`, `interfaceHash`,
//! `publisherOutput`.

use serde_json::Value;

use crate::encoding::gojson::Obj;
use crate::encoding::HashRef;

/// The effect name: the one irreversible public write.
pub const EFFECT: &str = "Registry.Publish";
/// The frozen cost of one publish attempt (and the attended grant's budget).
pub const COST: i64 = 1;
/// The request payload's schema tag.
pub const REQUEST_SCHEMA: &str = "world/registry-publish-request/v1";
/// The result object's schema tag (also its semantic id is the effect-result's).
pub const RESULT_SCHEMA: &str = "world/registry-publish-result/v1";
/// The effect that minted a publish approval's request (the reference's `Human.Approve`).
pub const APPROVAL_MINTED_BY: &str = "Human.Approve";
/// The request payload's keys in wire order.
pub const REQUEST_FIELDS: [&str; 14] = [
    "schema",
    "vendor",
    "name",
    "version",
    "registryOrigin",
    "manifestRef",
    "approvalRef",
    "tarballSHA256",
    "contentHash",
    "interfaceHash",
    "exports",
    "effects",
    "compilerVersion",
    "compilerSHA256",
];
/// The approval scope's terms after `#`, in their frozen order.
pub const APPROVAL_TERMS: [&str; 6] = [
    "effect",
    "manifest",
    "tarball",
    "content",
    "interface",
    "expires",
];

/// The grant scope of publishing `vendor/name@version` to `registry_origin`.
pub fn publish_scope(registry_origin: &str, vendor: &str, name: &str, version: &str) -> String {
    format!("registry:{registry_origin}/package:{vendor}/{name}/version:{version}")
}

/// The three package digests a publish binds.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hashes {
    /// sha256 of the tarball.
    #[serde(rename = "tarballSHA256")]
    pub tarball_sha256: String,
    /// The content hash.
    pub content_hash: String,
    /// The interface hash.
    pub interface_hash: String,
}

impl Hashes {
    /// Names the first arm (tarball, content, interface) where `recomputed` differs from
    /// `claimed`, naming both values: `recomputed <arm> hash <a> does not match the <what>'s <b>`.
    ///
    /// # Errors
    /// The mismatch text.
    pub fn compare(recomputed: &Hashes, claimed: &Hashes, what: &str) -> Result<(), String> {
        for (arm, got, want) in [
            (
                "tarball",
                &recomputed.tarball_sha256,
                &claimed.tarball_sha256,
            ),
            ("content", &recomputed.content_hash, &claimed.content_hash),
            (
                "interface",
                &recomputed.interface_hash,
                &claimed.interface_hash,
            ),
        ] {
            if got != want {
                return Err(format!(
                    "recomputed {arm} hash {got} does not match the {what}'s {want}"
                ));
            }
        }
        Ok(())
    }
}

/// A parsed approval scope (module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalScope {
    /// The grant scope, verbatim (before `#`).
    pub publish: String,
    /// The effect the stamp authorizes (only `Registry.Publish` is accepted).
    pub effect: String,
    /// sha256 of `ailang.toml` (`sha256:…`).
    pub manifest_ref: String,
    /// The stamped digests.
    pub hashes: Hashes,
    /// The last logical time (Unix seconds) the approval may be used at.
    pub expires_at: i64,
}

impl ApprovalScope {
    /// The canonical text.
    pub fn format(&self) -> String {
        let values = [
            self.effect.as_str(),
            self.manifest_ref.as_str(),
            self.hashes.tarball_sha256.as_str(),
            self.hashes.content_hash.as_str(),
            self.hashes.interface_hash.as_str(),
            &self.expires_at.to_string(),
        ];
        let terms: Vec<String> = APPROVAL_TERMS
            .iter()
            .zip(values)
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        format!("{}#{}", self.publish, terms.join("&"))
    }

    /// Parses strictly: one `#`, exactly the six terms in order, each one `key=value` with a
    /// non-empty value, a decimal expiry, a non-empty grant scope.
    ///
    /// # Errors
    /// What is malformed.
    pub fn parse(raw: &str) -> Result<ApprovalScope, String> {
        let (head, tail) = raw
            .split_once('#')
            .ok_or_else(|| format!("scope {raw:?} carries no \"#\" mark"))?;
        if tail.contains('#') {
            return Err(format!("scope {raw:?} carries more than one \"#\" mark"));
        }
        let terms: Vec<&str> = tail.split('&').collect();
        if terms.len() != APPROVAL_TERMS.len() {
            return Err(format!(
                "scope {raw:?} carries {} terms, want exactly {} ({})",
                terms.len(),
                APPROVAL_TERMS.len(),
                APPROVAL_TERMS.join(", ")
            ));
        }
        let mut values = Vec::with_capacity(terms.len());
        for (i, term) in terms.iter().enumerate() {
            let (k, v) = term
                .split_once('=')
                .filter(|(_, v)| !v.contains('='))
                .ok_or_else(|| {
                    format!("scope term {term:?} is not exactly one \"=\" assignment")
                })?;
            if k != APPROVAL_TERMS[i] {
                return Err(format!(
                    "scope term {i} is {k:?}, want {:?} (the term order is frozen)",
                    APPROVAL_TERMS[i]
                ));
            }
            if v.is_empty() {
                return Err(format!("scope term {k:?} is empty"));
            }
            values.push(v);
        }
        let expires_at = values[5]
            .parse::<i64>()
            .map_err(|_| format!("scope expiry {:?} is not a decimal logical time", values[5]))?;
        if head.is_empty() {
            return Err(format!("scope {raw:?} has an empty publish grammar"));
        }
        Ok(ApprovalScope {
            publish: head.to_string(),
            effect: values[0].to_string(),
            manifest_ref: values[1].to_string(),
            hashes: Hashes {
                tarball_sha256: values[2].to_string(),
                content_hash: values[3].to_string(),
                interface_hash: values[4].to_string(),
            },
            expires_at,
        })
    }
}

/// The publication identity a request payload carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublishRequest {
    /// The vendor.
    pub vendor: String,
    /// The short name.
    pub name: String,
    /// The version.
    pub version: String,
    /// The registry (bucket) origin.
    pub registry_origin: String,
    /// sha256 of `ailang.toml` (`sha256:…`).
    pub manifest_ref: String,
    /// The approval decision's ref (`sha256:…`).
    pub approval_ref: String,
    /// The three digests.
    pub hashes: Hashes,
    /// `exports.modules`.
    pub exports: Vec<String>,
    /// `effects.max`.
    pub effects: Vec<String>,
    /// The packet's compiler version.
    pub compiler_version: String,
    /// sha256 of the publisher binary that ran (`""` for `world`'s own publisher).
    pub compiler_sha256: String,
}

impl PublishRequest {
    /// The grant scope this request must be made under.
    pub fn scope(&self) -> String {
        publish_scope(
            &self.registry_origin,
            &self.vendor,
            &self.name,
            &self.version,
        )
    }

    /// `<vendor>/<name>`.
    pub fn package(&self) -> String {
        format!("{}/{}", self.vendor, self.name)
    }

    /// The canonical payload bytes (module docs).
    pub fn encode(&self) -> Vec<u8> {
        Obj::new()
            .str("schema", REQUEST_SCHEMA)
            .str("vendor", &self.vendor)
            .str("name", &self.name)
            .str("version", &self.version)
            .str("registryOrigin", &self.registry_origin)
            .str("manifestRef", &self.manifest_ref)
            .str("approvalRef", &self.approval_ref)
            .str("tarballSHA256", &self.hashes.tarball_sha256)
            .str("contentHash", &self.hashes.content_hash)
            .str("interfaceHash", &self.hashes.interface_hash)
            .strs("exports", Some(&self.exports))
            .strs("effects", Some(&self.effects))
            .str("compilerVersion", &self.compiler_version)
            .str("compilerSHA256", &self.compiler_sha256)
            .finish()
    }

    /// Decodes a payload strictly: a JSON object of only the known keys, strings and string
    /// lists of the right types, the schema tag, and `manifestRef`/`approvalRef` refs.
    ///
    /// # Errors
    /// What is wrong.
    pub fn decode_value(v: &Value) -> Result<PublishRequest, String> {
        let Value::Object(m) = v else {
            return Err("publish payload is not a JSON object".into());
        };
        if let Some(k) = m.keys().find(|k| !REQUEST_FIELDS.contains(&k.as_str())) {
            return Err(format!("publish payload has unknown field {k:?}"));
        }
        let s = |k: &str| -> Result<String, String> {
            match m.get(k) {
                None => Ok(String::new()),
                Some(Value::String(s)) => Ok(s.clone()),
                Some(_) => Err(format!("publish payload field {k:?} is not a string")),
            }
        };
        let list = |k: &str| -> Result<Vec<String>, String> {
            match m.get(k) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|x| {
                        x.as_str().map(str::to_owned).ok_or_else(|| {
                            format!("publish payload field {k:?} holds a non-string")
                        })
                    })
                    .collect(),
                Some(_) => Err(format!(
                    "publish payload field {k:?} is not an array of strings"
                )),
            }
        };
        let schema = s("schema")?;
        if schema != REQUEST_SCHEMA {
            return Err(format!(
                "publish payload schema {schema:?}, want {REQUEST_SCHEMA:?}"
            ));
        }
        let reference = |k: &str| -> Result<String, String> {
            let text = s(k)?;
            HashRef::parse(&text)
                .map_err(|e| format!("publish payload {k} {text:?} is not a ref: {e}"))?;
            Ok(text)
        };
        Ok(PublishRequest {
            vendor: s("vendor")?,
            name: s("name")?,
            version: s("version")?,
            registry_origin: s("registryOrigin")?,
            manifest_ref: reference("manifestRef")?,
            approval_ref: reference("approvalRef")?,
            hashes: Hashes {
                tarball_sha256: s("tarballSHA256")?,
                content_hash: s("contentHash")?,
                interface_hash: s("interfaceHash")?,
            },
            exports: list("exports")?,
            effects: list("effects")?,
            compiler_version: s("compilerVersion")?,
            compiler_sha256: s("compilerSHA256")?,
        })
    }

    /// [`Self::decode_value`] of payload bytes.
    ///
    /// # Errors
    /// Not JSON, or what [`Self::decode_value`] refuses.
    pub fn decode(bytes: &[u8]) -> Result<PublishRequest, String> {
        let v: Value =
            serde_json::from_slice(bytes).map_err(|e| format!("decode publish payload: {e}"))?;
        PublishRequest::decode_value(&v)
    }
}

/// How one publish attempt ended (the reference's Decision 3 table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PublishStatus {
    /// The registry accepted the upload.
    Succeeded,
    /// Refused before any request left (the publisher said so, or `world` did).
    FailedBeforeDispatch,
    /// The registry answered and refused (or the publisher is not the one measured).
    Failed,
    /// The request may have reached the registry: never retried, only reconciled.
    Indeterminate,
}

impl PublishStatus {
    /// `succeeded`, `failed-before-dispatch`, `failed` or `indeterminate`.
    pub fn name(self) -> &'static str {
        match self {
            PublishStatus::Succeeded => "succeeded",
            PublishStatus::FailedBeforeDispatch => "failed-before-dispatch",
            PublishStatus::Failed => "failed",
            PublishStatus::Indeterminate => "indeterminate",
        }
    }
}

/// How the publisher process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunEnd {
    /// Exit status 0.
    Success,
    /// A non-zero exit or a signal.
    Failure,
    /// Killed at the deadline.
    TimedOut,
}

/// Markers `ailang publish` prints only when it stopped before its POST.
pub const BEFORE_DISPATCH_MARKERS: [&str; 5] = [
    "publish blocked: ",
    "asset validation failed: ",
    "no ailang.toml found",
    "failed to create package tarball",
    "smoke runner failed",
];

/// Classifies a publisher's run (the reference's `classifyPublisherResult`): a timeout or
/// `upload failed: ` (a transport error after the body may have left) is indeterminate; a
/// before-POST marker is failed-before-dispatch; any other failure is failed; a clean exit
/// counts only with the line `Published <vendor>/<name>@<version>`.
pub fn classify(output: &str, end: RunEnd, package: &str, version: &str) -> PublishStatus {
    if end == RunEnd::TimedOut || output.contains("upload failed: ") {
        return PublishStatus::Indeterminate;
    }
    if BEFORE_DISPATCH_MARKERS.iter().any(|m| output.contains(m)) {
        return PublishStatus::FailedBeforeDispatch;
    }
    if end != RunEnd::Success {
        return PublishStatus::Failed;
    }
    if output.contains(&format!("Published {package}@{version}")) {
        PublishStatus::Succeeded
    } else {
        PublishStatus::Failed
    }
}

/// The result object's fields.
#[derive(Clone, Debug)]
pub struct PublishResult<'a> {
    /// The classified status (`succeeded`, or `succeeded-reconciled` after a probe).
    pub status: &'a str,
    /// The request it answers.
    pub request: &'a PublishRequest,
    /// The validator (publish service) origin.
    pub validator_origin: &'a str,
    /// The digests recomputed before dispatch (or served, after a probe).
    pub hashes: &'a Hashes,
    /// What the publisher said, with the credential redacted.
    pub publisher_output: &'a str,
}

impl PublishResult<'_> {
    /// The canonical result bytes (module docs).
    pub fn encode(&self) -> Vec<u8> {
        let r = self.request;
        Obj::new()
            .str("schema", RESULT_SCHEMA)
            .str("status", self.status)
            .str("vendor", &r.vendor)
            .str("name", &r.name)
            .str("version", &r.version)
            .str("registryOrigin", &r.registry_origin)
            .str("validatorOrigin", self.validator_origin)
            .str("tarballSHA256", &self.hashes.tarball_sha256)
            .str("contentHash", &self.hashes.content_hash)
            .str("interfaceHash", &self.hashes.interface_hash)
            .str("publisherOutput", self.publisher_output)
            .finish()
    }
}

/// The marker a credential is replaced with wherever output is kept or shown.
pub const REDACTED: &str = "[REDACTED:AILANG_REGISTRY_API_KEY]";

/// `text` with every occurrence of `secret` replaced by [`REDACTED`] (an empty secret changes
/// nothing).
pub fn redact(text: &str, secret: &[u8]) -> String {
    match std::str::from_utf8(secret) {
        Ok(s) if !s.is_empty() => text.replace(s, REDACTED),
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> PublishRequest {
        PublishRequest {
            vendor: "acme".into(),
            name: "kit".into(),
            version: "1.0.0".into(),
            registry_origin: "https://storage.example/bucket".into(),
            manifest_ref: format!("sha256:{}", "a".repeat(64)),
            approval_ref: format!("sha256:{}", "b".repeat(64)),
            hashes: Hashes {
                tarball_sha256: "sha256:t".into(),
                content_hash: "sha256:c".into(),
                interface_hash: "sha256:i".into(),
            },
            exports: vec![],
            effects: vec!["IO".into()],
            compiler_version: "AILANG v0.30.0".into(),
            compiler_sha256: String::new(),
        }
    }

    #[test]
    fn payload_keys_are_in_the_frozen_order_and_round_trip() {
        let r = sample();
        let bytes = r.encode();
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, REQUEST_FIELDS);
        assert!(String::from_utf8_lossy(&bytes).contains("\"exports\":[]"));
        assert_eq!(PublishRequest::decode(&bytes).unwrap(), r);
        let extra = String::from_utf8_lossy(&bytes).replace("\"schema\"", "\"extra\":1,\"schema\"");
        assert!(PublishRequest::decode(extra.as_bytes())
            .unwrap_err()
            .contains("unknown field"));
    }

    #[test]
    fn approval_scope_round_trips_and_parses_strictly() {
        let s = ApprovalScope {
            publish: publish_scope("https://r.example", "acme", "kit", "1.0.0"),
            effect: EFFECT.into(),
            manifest_ref: "sha256:m".into(),
            hashes: sample().hashes,
            expires_at: 100,
        };
        let text = s.format();
        assert_eq!(
            text,
            "registry:https://r.example/package:acme/kit/version:1.0.0#effect=Registry.Publish&manifest=sha256:m&tarball=sha256:t&content=sha256:c&interface=sha256:i&expires=100"
        );
        assert_eq!(ApprovalScope::parse(&text).unwrap(), s);
        for bad in [
            text.replace('#', "%"),
            format!("{text}#x"),
            text.replace("&expires=100", ""),
            text.replace("manifest=", "manifest=="),
            text.replace("effect=", "effects="),
            text.replace("expires=100", "expires=soon"),
            text.replace("tarball=sha256:t", "tarball="),
        ] {
            assert!(ApprovalScope::parse(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn classification_follows_the_reference_table() {
        let c = |o: &str, e| classify(o, e, "acme/kit", "1.0.0");
        assert_eq!(c("", RunEnd::TimedOut), PublishStatus::Indeterminate);
        assert_eq!(
            c("Error: upload failed: reset", RunEnd::Failure),
            PublishStatus::Indeterminate
        );
        assert_eq!(
            c("Error: publish blocked: x", RunEnd::Failure),
            PublishStatus::FailedBeforeDispatch
        );
        assert_eq!(
            c("Error: version already published", RunEnd::Failure),
            PublishStatus::Failed
        );
        assert_eq!(
            c("✓ Published acme/kit@1.0.0", RunEnd::Failure),
            PublishStatus::Failed
        );
        assert_eq!(c("all good", RunEnd::Success), PublishStatus::Failed);
        assert_eq!(
            c("✓ Published acme/kit@1.0.0\n", RunEnd::Success),
            PublishStatus::Succeeded
        );
        assert_eq!(redact("key=s3cret!", b"s3cret"), format!("key={REDACTED}!"));
        assert_eq!(redact("abc", b""), "abc");
    }
}
