//! `Registry.Publish`: the one irreversible public write — upload one package version to the
//! AILANG registry (authority-and-broker.md §11–§12; the reference's
//! `host/broker/registry_publish.go` and `approve.go`).
//!
//! Two steps, both under the broker:
//!
//! 1. **In the intent's transaction** ([`Handler::bind_intent`]): the payload
//!    (`world/registry-publish-request/v1`) names an approval decision; it is traversed
//!    decision → request → scope and checked against the payload and the effect (approve, minted
//!    by `Human.Approve` at cost 1, stamps `Registry.Publish` for exactly this grant scope,
//!    manifest and three digests, requested ≤ decided ≤ now ≤ expiry), then claimed:
//!    `approval_claims(decision, effect request, intent)`. A second use of one approval, or any
//!    refusal here, rolls the intent back: nothing is journaled, nothing is spent.
//! 2. **The handler** ([`Handler::execute_intent`]): cost, payload, origin, scope, approval and
//!    manifest identity; every digest recomputed from the bytes on disk now and compared with
//!    the payload and the approval; only then the credential file is read and the upload made —
//!    by `world` itself ([`Publisher::Native`]: `POST <validator>/publish`) or by the pinned
//!    `ailang publish` ([`Publisher::Ailang`], through `crate::process`, in an environment built
//!    from nothing). Both end in the same classes ([`crate::package::publish::classify`]):
//!    succeeded (a `world/registry-publish-result/v1` result), failed, failed before dispatch,
//!    or indeterminate (the intent stays open; never retried, only reconciled).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rusqlite::Connection;
use serde_json::Value;

use super::{Handler, HandlerContext, HandlerOutcome, Intent};
use crate::authority::approvals::{self, APPROVAL_DECISION, APPROVAL_REQUEST};
use crate::package::publish::{
    self, ApprovalScope, Hashes, PublishRequest, PublishResult, PublishStatus, RunEnd, COST, EFFECT,
};
use crate::package::registry::{self, CredentialFile, Origins, UploadEnd};
use crate::package::{tarball, Manifest};
use crate::store::object_in;

/// Largest publisher output kept per stream, bytes.
pub const MAX_PUBLISHER_OUTPUT: usize = 1024 * 1024;

/// Who performs the upload.
#[derive(Clone, Debug)]
pub enum Publisher {
    /// `world` builds the tarball and speaks `POST /publish` itself.
    Native,
    /// The pinned `ailang` binary runs `ailang publish` in the package directory.
    Ailang {
        /// The publisher archive root (`<db>.artifacts/publisher`).
        root: PathBuf,
        /// `sha256:<hex>` of the pinned binary; re-hashed before it runs.
        hash_ref: String,
    },
}

/// The attended approval the publish spends.
#[derive(Clone, Debug)]
pub struct Stamp {
    /// The decision's ref.
    pub approval_ref: String,
    /// The digests the approval stamps.
    pub hashes: Hashes,
}

/// Everything one publish may do.
#[derive(Clone, Debug)]
pub struct PublishConfig {
    /// The package directory (absolute).
    pub package_dir: PathBuf,
    /// Its manifest, as read when the plan was made.
    pub manifest: Manifest,
    /// The bucket and the validator.
    pub origins: Origins,
    /// Who uploads.
    pub publisher: Publisher,
    /// The key's file.
    pub credential: CredentialFile,
    /// The approval.
    pub stamp: Stamp,
}

/// The `Registry.Publish` handler for one attended publish.
pub struct RegistryPublishHandler {
    cfg: PublishConfig,
    dispatches: AtomicU64,
}

impl RegistryPublishHandler {
    /// A handler for `cfg`.
    pub fn new(cfg: PublishConfig) -> Self {
        RegistryPublishHandler {
            cfg,
            dispatches: AtomicU64::new(0),
        }
    }

    /// How many uploads (or publisher launches) this handler made.
    pub fn dispatches(&self) -> u64 {
        self.dispatches.load(Ordering::SeqCst)
    }

    fn refuse(why: impl std::fmt::Display) -> HandlerOutcome {
        HandlerOutcome::Failed(format!(
            "Registry.Publish {}: refused: {why}",
            PublishStatus::FailedBeforeDispatch.name()
        ))
    }

    /// The checks before any request (module docs, step 2), returning the payload and the
    /// recomputed tarball and digests.
    fn preflight(
        &self,
        scope: &str,
        cost: i64,
        payload: &Value,
    ) -> Result<(PublishRequest, Vec<u8>, Hashes), String> {
        if cost != COST {
            return Err(format!("cost is {cost}, want exactly {COST}"));
        }
        let req = PublishRequest::decode_value(payload)?;
        let cfg = &self.cfg;
        if req.registry_origin != cfg.origins.registry.text {
            return Err(format!(
                "payload registry origin {:?} does not match the configured {:?}",
                req.registry_origin, cfg.origins.registry.text
            ));
        }
        if scope != req.scope() {
            return Err(format!(
                "scope {scope:?} does not describe the payload package: want {:?}",
                req.scope()
            ));
        }
        if req.approval_ref != cfg.stamp.approval_ref {
            return Err(format!(
                "payload approval ref {} is not the attended approval {}",
                req.approval_ref, cfg.stamp.approval_ref
            ));
        }
        let m = &cfg.manifest;
        if m.name != req.package() || m.version != req.version {
            return Err(format!(
                "manifest package {}@{} does not match payload package {}@{}",
                m.name,
                m.version,
                req.package(),
                req.version
            ));
        }
        if m.exports != req.exports {
            return Err(format!(
                "manifest exports {:?} do not match payload exports {:?}",
                m.exports, req.exports
            ));
        }
        if m.effects != req.effects {
            return Err(format!(
                "manifest effects {:?} do not match payload effects {:?}",
                m.effects, req.effects
            ));
        }
        // Every digest from the bytes on disk now; nothing carried is trusted as a hash.
        let dir = &cfg.package_dir;
        let on_disk = Manifest::load(dir).map_err(|e| format!("recompute: {e}"))?;
        let tar = tarball::tarball(dir).map_err(|e| format!("recompute: {e}"))?;
        if tar.len() > registry::MAX_FORM_BYTES {
            return Err(format!(
                "the tarball is {} bytes; the registry accepts at most {}",
                tar.len(),
                registry::MAX_FORM_BYTES
            ));
        }
        let recomputed = Hashes {
            tarball_sha256: tarball::sha256_ref(&tar),
            content_hash: tarball::content_hash(dir).map_err(|e| format!("recompute: {e}"))?,
            interface_hash: tarball::interface_hash(&on_disk),
        };
        Hashes::compare(&recomputed, &req.hashes, "payload")?;
        Hashes::compare(&recomputed, &cfg.stamp.hashes, "approval stamp")?;
        Ok((req, tar, recomputed))
    }

    /// Runs the upload; returns `(status, redacted output)`.
    fn dispatch(
        &self,
        req: &PublishRequest,
        tar: &[u8],
        secret: &[u8],
        deadline: Instant,
    ) -> (PublishStatus, String) {
        let cfg = &self.cfg;
        let package = req.package();
        match &cfg.publisher {
            Publisher::Native => {
                self.dispatches.fetch_add(1, Ordering::SeqCst);
                // The output `ailang publish` would print, so one classifier decides both.
                let mut out = format!(
                    "Publishing {package}@{}...\n  Uploading to {}...\n",
                    req.version, cfg.origins.validator.text
                );
                let end = match registry::upload(&cfg.origins, tar, secret, deadline) {
                    UploadEnd::Answered { status, body } => {
                        match registry::upload_message(status, &body) {
                            None => {
                                out.push_str(&format!("✓ Published {package}@{}\n", req.version));
                                RunEnd::Success
                            }
                            Some(msg) => {
                                out.push_str(&format!("Error: {msg}\n"));
                                RunEnd::Failure
                            }
                        }
                    }
                    UploadEnd::Transport(e) => {
                        out.push_str(&format!("Error: upload failed: {e}\n"));
                        RunEnd::Failure
                    }
                    UploadEnd::TimedOut(e) => {
                        out.push_str(&format!("Error: upload failed: {e}\n"));
                        RunEnd::TimedOut
                    }
                };
                let out = publish::redact(&out, secret);
                (publish::classify(&out, end, &package, &req.version), out)
            }
            Publisher::Ailang { root, hash_ref } => {
                let bin = match crate::interp::archive::Archive::at_root(root.clone())
                    .resolve(hash_ref)
                {
                    Ok(a) => a.binary,
                    Err(e) => {
                        return (
                            PublishStatus::FailedBeforeDispatch,
                            format!("the pinned publisher {hash_ref} cannot be run: {e}"),
                        )
                    }
                };
                let home = match tempfile::Builder::new()
                    .prefix("world-publish-home-")
                    .tempdir()
                {
                    Ok(h) => h,
                    Err(e) => {
                        return (
                            PublishStatus::FailedBeforeDispatch,
                            format!("create an empty publisher HOME: {e}"),
                        )
                    }
                };
                let spec = crate::process::Spec::new(bin, MAX_PUBLISHER_OUTPUT, deadline)
                    .arg("publish")
                    .cwd(&cfg.package_dir)
                    .env("PATH", "/usr/bin:/bin")
                    .env("HOME", home.path())
                    .env("LANG", "C")
                    .env("LC_ALL", "C")
                    .env("AILANG_REGISTRY", &cfg.origins.registry.text)
                    .env("AILANG_REGISTRY_VALIDATOR", &cfg.origins.validator.text)
                    .env(
                        registry::CREDENTIAL_VARIABLE,
                        String::from_utf8_lossy(secret).as_ref(),
                    );
                self.dispatches.fetch_add(1, Ordering::SeqCst);
                let (text, end) = match crate::process::run(&spec) {
                    Ok(o) => (
                        format!(
                            "{}{}",
                            String::from_utf8_lossy(&o.stdout),
                            String::from_utf8_lossy(&o.stderr)
                        ),
                        if o.exit_code == 0 {
                            RunEnd::Success
                        } else {
                            RunEnd::Failure
                        },
                    ),
                    Err(crate::process::RunError::Deadline { partial, .. }) => (
                        format!(
                            "{}{}",
                            String::from_utf8_lossy(&partial.stdout),
                            String::from_utf8_lossy(&partial.stderr)
                        ),
                        RunEnd::TimedOut,
                    ),
                    // Launched, then lost (output flood, wait failure): it may have posted.
                    Err(
                        e @ (crate::process::RunError::OutputLimit { .. }
                        | crate::process::RunError::Io { .. }),
                    ) => (e.to_string(), RunEnd::TimedOut),
                    Err(e) => {
                        return (
                            PublishStatus::FailedBeforeDispatch,
                            publish::redact(&e.to_string(), secret),
                        )
                    }
                };
                let text = publish::redact(&text, secret);
                (publish::classify(&text, end, &package, &req.version), text)
            }
        }
    }
}

/// Checks the approval `req` names against the payload and the effect, as the reference's
/// `validatePublishApproval` does; returns the decision ref to claim and the approval's
/// expiry (Unix seconds).
///
/// # Errors
/// Why the approval does not authorize this publish.
pub fn validate_approval(
    conn: &Connection,
    req: &PublishRequest,
    effect_scope: &str,
    now: i64,
) -> Result<(String, i64), String> {
    let dref = &req.approval_ref;
    let store_err = |e: crate::store::Error| format!("read the publish approval: {e}");
    let decision_obj = object_in(conn, dref)
        .map_err(store_err)?
        .ok_or_else(|| format!("publish approval decision is missing: {dref} names no object"))?;
    if decision_obj.meta.semantic_id != APPROVAL_DECISION {
        return Err(format!(
            "publish approval is malformed: {dref} is a {:?} object, want {APPROVAL_DECISION:?}",
            decision_obj.meta.semantic_id
        ));
    }
    let decision = approvals::reference_decision(dref, &decision_obj.payload)
        .map_err(|e| format!("publish approval is malformed: decision: {e}"))?;
    if decision.decision != "approve" {
        return Err(format!(
            "publish approval decision is not an approval: decision {dref} says {:?}",
            decision.decision
        ));
    }
    let rref = &decision.request_ref;
    let request_obj = object_in(conn, rref).map_err(store_err)?.ok_or_else(|| {
        format!("approval request not found: decision {dref} references request {rref}")
    })?;
    if request_obj.meta.semantic_id != APPROVAL_REQUEST {
        return Err(format!(
            "publish approval is malformed: request {rref} is a {:?} object, want {APPROVAL_REQUEST:?}",
            request_obj.meta.semantic_id
        ));
    }
    let request = approvals::reference_request(rref, &request_obj.payload)
        .map_err(|e| format!("publish approval is malformed: request: {e}"))?;
    let stamp = |m: String| format!("publish approval does not stamp this packet: {m}");
    if request.effect != publish::APPROVAL_MINTED_BY {
        return Err(stamp(format!(
            "request {rref} was minted by effect {:?}, want {:?}",
            request.effect,
            publish::APPROVAL_MINTED_BY
        )));
    }
    if request.cost != COST {
        return Err(stamp(format!(
            "request {rref} approves cost {}, want exactly {COST}",
            request.cost
        )));
    }
    let scope = ApprovalScope::parse(&request.scope)
        .map_err(|e| format!("publish approval is malformed: {e}"))?;
    if scope.effect != EFFECT {
        return Err(stamp(format!(
            "approval stamps effect {:?}, want {EFFECT:?}",
            scope.effect
        )));
    }
    let want = req.scope();
    if scope.publish != want {
        return Err(stamp(format!(
            "approval stamps {:?} but the payload publishes {want:?}",
            scope.publish
        )));
    }
    if effect_scope != want {
        return Err(stamp(format!(
            "effect scope {effect_scope:?} does not describe the payload package {want:?}"
        )));
    }
    for (arm, stamped, carried) in [
        ("manifest ref", &scope.manifest_ref, &req.manifest_ref),
        (
            "tarball hash",
            &scope.hashes.tarball_sha256,
            &req.hashes.tarball_sha256,
        ),
        (
            "content hash",
            &scope.hashes.content_hash,
            &req.hashes.content_hash,
        ),
        (
            "interface hash",
            &scope.hashes.interface_hash,
            &req.hashes.interface_hash,
        ),
    ] {
        if stamped != carried {
            return Err(stamp(format!(
                "approval stamps {arm} {stamped} but the payload carries {carried}"
            )));
        }
    }
    let malformed = |m: String| format!("publish approval is malformed: {m}");
    if request.now > now {
        return Err(malformed(format!(
            "request {rref} was made at logical time {}, after the publish at {now}",
            request.now
        )));
    }
    if decision.now < request.now || decision.now > now {
        return Err(malformed(format!(
            "decision {dref} was made at logical time {}, outside [request {}, publish {now}]",
            decision.now, request.now
        )));
    }
    if scope.expires_at < request.now {
        return Err(malformed(format!(
            "approval expiry {} precedes its own request time {}",
            scope.expires_at, request.now
        )));
    }
    if now > scope.expires_at {
        return Err(format!(
            "publish approval has expired: approval {dref} expired at logical time {}; the publish is at {now}",
            scope.expires_at
        ));
    }
    Ok((dref.clone(), scope.expires_at))
}

impl Handler for RegistryPublishHandler {
    fn effect(&self) -> &'static str {
        EFFECT
    }

    fn bind_intent(
        &self,
        conn: &Connection,
        intent: &Intent<'_>,
        request_ref: &str,
        scope: &str,
        payload: &Value,
    ) -> Result<(), String> {
        let req = PublishRequest::decode_value(payload)
            .map_err(|e| format!("publish approval is malformed: {e}"))?;
        let (decision, _) = validate_approval(conn, &req, scope, intent.now)?;
        approvals::claim_for_effect(conn, &decision, request_ref, intent.id)
            .map_err(|e| e.to_string())
    }

    fn execute(
        &self,
        _ctx: &HandlerContext,
        _scope: &str,
        _payload: &Value,
        _deadline: Instant,
    ) -> HandlerOutcome {
        HandlerOutcome::Failed(
            "Registry.Publish runs only under a journaled, claimed intent".to_string(),
        )
    }

    fn execute_intent(
        &self,
        _ctx: &HandlerContext,
        intent: &Intent<'_>,
        scope: &str,
        payload: &Value,
        deadline: Instant,
    ) -> HandlerOutcome {
        let (req, tar, recomputed) = match self.preflight(scope, intent.cost, payload) {
            Ok(p) => p,
            Err(why) => return Self::refuse(why),
        };
        let secret = match self.cfg.credential.read() {
            Ok(s) => s,
            Err(e) => return Self::refuse(format!("load registry credential: {e}")),
        };
        let (status, output) = self.dispatch(&req, &tar, &secret, deadline);
        match status {
            PublishStatus::Succeeded => HandlerOutcome::Succeeded(
                PublishResult {
                    status: status.name(),
                    request: &req,
                    validator_origin: &self.cfg.origins.validator.text,
                    hashes: &recomputed,
                    publisher_output: &output,
                }
                .encode(),
            ),
            PublishStatus::Indeterminate => HandlerOutcome::Indeterminate(format!(
                "Registry.Publish indeterminate: the upload may have reached the registry; never retried — run `world package reconcile --probe`: {}",
                output.trim()
            )),
            other => HandlerOutcome::Failed(format!("Registry.Publish {}: {}", other.name(), output.trim())),
        }
    }
}
