//! `world package`: publish an AILANG package to the registry, attended (issue 31;
//! authority-and-broker.md §11; the reference's `cmd/world-publish` and `host/broker/publish_op.go`).
//!
//! Four steps, each a function here; the caller runs the fences (mode, CI, terminal, typed
//! phrase) and prints:
//!
//! - [`Plan::new`] recomputes the ready packet from the directory (and [`compare_golden`]
//!   checks it against a golden) — read only.
//! - [`approve`] mints the one-shot approval bound to the plan's exact bytes — one transaction.
//! - [`publish`] spends it through the broker, exactly once: a `Registry.Publish` grant of
//!   budget 1 for the plan's scope, the intent and the approval's claim in one transaction,
//!   the handler, the record and the outcome. No loop, no retry.
//! - [`reconcile`] resolves publish intents left without an outcome by reading the bucket
//!   (GET only) and records the resolution as the effect's record and outcome.
//!
//! [`status`] lists publish approvals and effects.

use std::path::{Path, PathBuf};
use std::time::Instant;

use rusqlite::Connection;
use serde::Serialize;

use crate::authority::approvals::{self, ApprovalError, ApprovalState, PublishMint};
use crate::authority::grants::Grant;
use crate::broker::handlers::registry::{
    validate_approval, PublishConfig, Publisher, RegistryPublishHandler, Stamp,
};
use crate::broker::handlers::{HandlerContext, HandlerRegistry};
use crate::broker::{self, Broker, BrokerError, Status};
use crate::package::packet::{PacketError, ReadyPacket, Recomputed};
use crate::package::publish::{
    self, ApprovalScope, Hashes, PublishRequest, PublishResult, COST, EFFECT,
};
use crate::package::registry::{
    self, CredentialFile, Origins, ProbeTarget, Receipt, ReconcileState,
};
use crate::store::journal::{self, Kind};
use crate::store::records::{EffectRecord, EFFECT_RECORD, EFFECT_RESULT};
use crate::store::{self, object_in, put_object, Object, Store};

/// The episode an attended publish is journaled in unless told otherwise (the reference's).
pub const DEFAULT_EPISODE: &str = "attended-publish";
/// `world/registry-reconcile/v1`: one reconciliation pass's receipt (new in world; the
/// reference keeps it in memory only): `{"intentId","state","detail","absentSamples",
/// "uninformativeSamples","samples","logicalTime"}`.
pub const RECONCILE_RECEIPT: &str = "world/registry-reconcile/v1";
/// Provenance of `world`'s package objects.
pub const PROVENANCE: &str = "world:package";

/// Why a package step failed.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    /// The packet could not be recomputed, or the golden read.
    #[error(transparent)]
    Packet(#[from] PacketError),
    /// An origin, the credential file or the publisher was refused.
    #[error("{0}")]
    Refused(String),
    /// The approval store refused.
    #[error(transparent)]
    Approval(#[from] ApprovalError),
    /// The broker failed (not a denial or a handler failure: those are outcomes).
    #[error(transparent)]
    Broker(#[from] BrokerError),
    /// Store failure.
    #[error(transparent)]
    Store(#[from] store::Error),
}

/// One package version as it will be approved and published.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The package directory (absolute).
    pub dir: PathBuf,
    /// The recomputed packet, manifest and tarball.
    pub recomputed: Recomputed,
    /// Where it goes.
    pub origins: Origins,
}

impl Plan {
    /// Recomputes the packet of `dir` with `compiler_version` for `origins`.
    ///
    /// # Errors
    /// [`PackageError::Packet`]; [`PackageError::Refused`] when `dir` cannot be made absolute.
    pub fn new(dir: &Path, compiler_version: &str, origins: Origins) -> Result<Plan, PackageError> {
        let dir = std::path::absolute(dir).map_err(|e| {
            PackageError::Refused(format!("package directory {}: {e}", dir.display()))
        })?;
        let recomputed = ReadyPacket::recompute(&dir, compiler_version)?;
        Ok(Plan {
            dir,
            recomputed,
            origins,
        })
    }

    /// The packet.
    pub fn packet(&self) -> &ReadyPacket {
        &self.recomputed.packet
    }

    /// The three digests.
    pub fn hashes(&self) -> Hashes {
        let p = self.packet();
        Hashes {
            tarball_sha256: p.tarball_sha256.clone(),
            content_hash: p.content_hash.clone(),
            interface_hash: p.interface_hash.clone(),
        }
    }

    /// The grant scope.
    pub fn publish_scope(&self) -> String {
        let m = &self.recomputed.manifest;
        publish::publish_scope(
            &self.origins.registry.text,
            m.vendor(),
            m.short_name(),
            &m.version,
        )
    }

    /// The approval scope for an approval that expires at `expires_at`.
    pub fn approval_scope(&self, expires_at: i64) -> ApprovalScope {
        ApprovalScope {
            publish: self.publish_scope(),
            effect: EFFECT.to_string(),
            manifest_ref: self.recomputed.manifest_ref.clone(),
            hashes: self.hashes(),
            expires_at,
        }
    }

    /// The phrase an attended operator types: `publish <vendor>/<name>@<version> irreversibly`.
    pub fn phrase(&self) -> String {
        format!(
            "publish {}@{} irreversibly",
            self.packet().package,
            self.packet().version
        )
    }

    /// The request payload naming `approval_ref`, published by `compiler_sha256`.
    pub fn request(&self, approval_ref: &str, compiler_sha256: &str) -> PublishRequest {
        let m = &self.recomputed.manifest;
        PublishRequest {
            vendor: m.vendor().to_string(),
            name: m.short_name().to_string(),
            version: m.version.clone(),
            registry_origin: self.origins.registry.text.clone(),
            manifest_ref: self.recomputed.manifest_ref.clone(),
            approval_ref: approval_ref.to_string(),
            hashes: self.hashes(),
            exports: m.exports.clone(),
            effects: m.effects.clone(),
            compiler_version: self.packet().compiler_version.clone(),
            compiler_sha256: compiler_sha256.to_string(),
        }
    }
}

/// A packet that differs from its golden.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Drift {
    /// The first differing field (in wire order).
    pub field: &'static str,
    /// Its recomputed value.
    pub recomputed: String,
    /// Its golden value.
    pub golden: String,
}

/// The first field where `recomputed` differs from `golden`, or `None`.
pub fn compare_golden(recomputed: &ReadyPacket, golden: &ReadyPacket) -> Option<Drift> {
    recomputed.first_difference(golden).map(|field| Drift {
        field,
        recomputed: recomputed.field(field),
        golden: golden.field(field),
    })
}

/// What `approve` needs besides the plan.
#[derive(Clone, Debug)]
pub struct ApproveOptions<'a> {
    /// Who asks.
    pub requester: &'a str,
    /// Who decides.
    pub decided_by: &'a str,
    /// The episode the publish will be journaled in.
    pub episode: &'a str,
    /// Unix seconds.
    pub now: i64,
    /// The last second the approval may be spent at.
    pub expires_at: i64,
}

/// A minted approval.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Minted {
    /// The request object's ref.
    pub request_ref: String,
    /// The decision's ref: the approval to spend.
    pub approval_ref: String,
    /// The approval scope.
    pub scope: String,
    /// The expiry (Unix seconds).
    pub expires_at: i64,
}

/// Mints the one-shot approval of `plan` (one transaction).
///
/// # Errors
/// [`PackageError::Refused`] for an expiry before `now`; [`PackageError::Approval`]; store errors.
pub fn approve(
    store: &mut Store,
    plan: &Plan,
    o: &ApproveOptions<'_>,
) -> Result<Minted, PackageError> {
    if o.expires_at < o.now {
        return Err(PackageError::Refused(format!(
            "the approval would expire at {} before it is made at {}",
            o.expires_at, o.now
        )));
    }
    let scope = plan.approval_scope(o.expires_at).format();
    let summary = format!(
        "{} to {} (Registry.Publish, one unit)",
        plan.phrase(),
        plan.origins.registry.text
    );
    let tx = store.immediate()?;
    let (request_ref, approval_ref) = approvals::mint_publish(
        &tx,
        &PublishMint {
            scope: &scope,
            cost: COST,
            requester: o.requester,
            decided_by: o.decided_by,
            episode: o.episode,
            summary: &summary,
            now: o.now,
        },
    )?;
    tx.commit().map_err(store::Error::from)?;
    Ok(Minted {
        request_ref,
        approval_ref,
        scope,
        expires_at: o.expires_at,
    })
}

/// Why no approval can be spent for a plan: the `reason=` of `STOP fence=approval`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalRefusal {
    /// `absent`, `ambiguous`, `missing`, `denied`, `malformed`, `scope`, `expired` or `consumed`.
    pub reason: &'static str,
    /// The detail line.
    pub detail: String,
}

fn refusal_reason(msg: &str) -> &'static str {
    if msg.contains("is missing") || msg.contains("not found") {
        "missing"
    } else if msg.contains("not an approval") {
        "denied"
    } else if msg.contains("has expired") {
        "expired"
    } else if msg.contains("does not stamp") {
        "scope"
    } else {
        "malformed"
    }
}

/// The approval a publish of `plan` at `now` would spend: `explicit` (checked), or the one
/// unclaimed approval in the store that stamps exactly this plan. Returns `(decision ref,
/// expiry)`. Read only; the broker checks again inside the intent's transaction.
///
/// # Errors
/// [`ApprovalRefusal`]; store errors are reported as `malformed` with their text.
pub fn resolve_approval(
    store: &Store,
    plan: &Plan,
    explicit: Option<&str>,
    now: i64,
) -> Result<(String, i64), ApprovalRefusal> {
    let conn = store.conn();
    let check = |dref: &str| -> Result<(String, i64), ApprovalRefusal> {
        let req = plan.request(dref, "");
        let (d, expires) =
            validate_approval(conn, &req, &plan.publish_scope(), now).map_err(|m| {
                ApprovalRefusal {
                    reason: refusal_reason(&m),
                    detail: m,
                }
            })?;
        match store::approvals::claimant_of_decision(conn, &d) {
            Ok(Some(by)) => Err(ApprovalRefusal {
                reason: "consumed",
                detail: format!(
                    "{}: approval {d} was already consumed by {by}; an approval is single use",
                    approvals::ALREADY_CONSUMED
                ),
            }),
            Ok(None) => Ok((d, expires)),
            Err(e) => Err(ApprovalRefusal {
                reason: "malformed",
                detail: e.to_string(),
            }),
        }
    };
    if let Some(r) = explicit {
        if crate::encoding::HashRef::parse(r).is_err() {
            return Err(ApprovalRefusal {
                reason: "malformed",
                detail: format!("--approval-ref {r:?} is not a sha256:<64 hex> ref"),
            });
        }
        return check(r);
    }
    let all = approvals::list(conn, None).map_err(|e| ApprovalRefusal {
        reason: "malformed",
        detail: e.to_string(),
    })?;
    let mut found = Vec::new();
    for a in all {
        if let (ApprovalState::Approved { decision_ref }, None) = (&a.state, &a.claimed_by) {
            if let Ok(ok) = check(decision_ref) {
                found.push(ok);
            }
        }
    }
    match found.len() {
        0 => Err(ApprovalRefusal {
            reason: "absent",
            detail: format!(
                "no unspent, unexpired approval stamps {}@{} with these bytes; mint one with `world package approve` (minting and spending are two separate invocations)",
                plan.packet().package,
                plan.packet().version
            ),
        }),
        1 => Ok(found.remove(0)),
        _ => Err(ApprovalRefusal {
            reason: "ambiguous",
            detail: format!(
                "{} approvals stamp these bytes ({}); name one with --approval-ref",
                found.len(),
                found.iter().map(|(d, _)| d.as_str()).collect::<Vec<_>>().join(", ")
            ),
        }),
    }
}

/// One `Registry.Publish` intent without an outcome.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingPublish {
    /// `effect:<ep>:<n>`.
    pub intent_id: String,
    /// The episode.
    pub episode: String,
    /// The grant scope.
    pub scope: String,
    /// The cost.
    pub cost: i64,
    /// The effect request object's ref.
    pub request_ref: String,
    /// Unix seconds.
    pub logical_time: i64,
    /// The decoded request payload, when it decodes.
    #[serde(skip)]
    pub request: Option<PublishRequest>,
}

/// Every `Registry.Publish` intent without an outcome, in journal order.
///
/// # Errors
/// Store errors; an undecodable intent is [`store::Error::Corrupt`].
pub fn pending(store: &Store) -> Result<Vec<PendingPublish>, store::Error> {
    let mut out = Vec::new();
    for (_, id, object_ref) in store.pending_intents()? {
        if !id.starts_with("effect:") {
            continue;
        }
        let Some(obj) = store.object(&object_ref)? else {
            continue;
        };
        let v: serde_json::Value =
            serde_json::from_slice(&obj.payload).map_err(|e| store::Error::Corrupt {
                what: "effect intent".into(),
                detail: format!("{id}: {e}"),
            })?;
        let s = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
        let i = |k: &str| v.get(k).and_then(serde_json::Value::as_i64).unwrap_or(0);
        if s("effect") != EFFECT {
            continue;
        }
        let request_ref = s("requestRef");
        let request = store
            .object(&request_ref)?
            .and_then(|r| request_payload(&r.payload))
            .and_then(|p| PublishRequest::decode(&p).ok());
        out.push(PendingPublish {
            intent_id: id,
            episode: s("episodeId"),
            scope: s("scope"),
            cost: i("cost"),
            request_ref,
            logical_time: i("logicalTime"),
            request,
        });
    }
    Ok(out)
}

/// The payload of a `world/effect-request/v1` object: after `<len>:<effect><len>:<scope><cost>:<now>:`.
pub fn request_payload(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut rest = bytes;
    for _ in 0..2 {
        let colon = rest.iter().position(|b| *b == b':')?;
        let n: usize = std::str::from_utf8(&rest[..colon]).ok()?.parse().ok()?;
        rest = rest.get(colon + 1 + n..)?;
    }
    for _ in 0..2 {
        let colon = rest.iter().position(|b| *b == b':')?;
        rest = &rest[colon + 1..];
    }
    Some(rest.to_vec())
}

/// What `publish` needs besides the plan.
#[derive(Clone, Debug)]
pub struct PublishOptions {
    /// The episode.
    pub episode: String,
    /// Unix seconds.
    pub now: i64,
    /// The approval decision to spend.
    pub approval_ref: String,
    /// Its expiry (the grant expires with it).
    pub expires_at: i64,
    /// Who uploads.
    pub publisher: Publisher,
    /// sha256 of the publisher binary (`""` for `world` itself).
    pub compiler_sha256: String,
    /// The key's file.
    pub credential: CredentialFile,
    /// The handler's deadline.
    pub deadline: Instant,
}

/// How the one attempt ended.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Published {
    /// `succeeded`, `failed`, `denied` or `indeterminate`.
    pub status: &'static str,
    /// The effect record (none for indeterminate).
    pub record_ref: Option<String>,
    /// The effect intent (none for a denial).
    pub intent_id: Option<String>,
    /// The grant scope.
    pub scope: String,
    /// The denial label, the failure, or the indeterminate diagnostic.
    pub message: Option<String>,
    /// How many uploads were made (0 or 1).
    pub dispatches: u64,
}

/// Spends the approval: `Registry.Publish` through the broker, exactly once (module docs).
///
/// # Errors
/// [`PackageError::Broker`] (a refused approval: [`BrokerError::Refused`]; nothing was
/// journaled), store errors.
pub fn publish(
    store: &mut Store,
    plan: &Plan,
    o: PublishOptions,
) -> Result<Published, PackageError> {
    let req = plan.request(&o.approval_ref, &o.compiler_sha256);
    let scope = req.scope();
    let handler = RegistryPublishHandler::new(PublishConfig {
        package_dir: plan.dir.clone(),
        manifest: plan.recomputed.manifest.clone(),
        origins: plan.origins.clone(),
        publisher: o.publisher,
        credential: o.credential,
        stamp: Stamp {
            approval_ref: o.approval_ref.clone(),
            hashes: plan.hashes(),
        },
    });
    let handler = std::sync::Arc::new(handler);
    let handlers = HandlerRegistry::with_handlers(vec![Box::new(Shared(handler.clone()))]);
    let grants = [Grant {
        effect: EFFECT.to_string(),
        scope: scope.clone(),
        expires_at: o.expires_at,
        budget: COST,
    }];
    let ctx = HandlerContext {
        episode: o.episode.clone(),
        db_path: store.path().to_path_buf(),
        ..HandlerContext::default()
    };
    let b = Broker {
        episode: &o.episode,
        grants: &grants,
        now: o.now,
        handlers: &handlers,
        ctx: &ctx,
        limits: None,
        mission: None,
        with_intent: None,
        new_store_id: None,
        intent_committed: std::cell::Cell::new(false),
    };
    let request = broker::Request {
        effect: EFFECT.to_string(),
        scope: scope.clone(),
        cost: COST,
        payload: req.encode(),
    };
    // THE one attempt: there is no second execute below, whatever it answers.
    let ex = b.execute(store, &request, o.deadline)?;
    Ok(Published {
        status: match ex.status {
            Status::Ok => "succeeded",
            Status::Failed => "failed",
            Status::Denied => "denied",
            Status::Indeterminate => "indeterminate",
        },
        record_ref: ex.record,
        intent_id: ex.intent_id,
        scope,
        message: ex.message,
        dispatches: handler.dispatches(),
    })
}

/// The registry lends the handler by `Arc` so the caller can read its dispatch count.
struct Shared(std::sync::Arc<RegistryPublishHandler>);

impl crate::broker::handlers::Handler for Shared {
    fn effect(&self) -> &'static str {
        self.0.effect()
    }
    fn execute(
        &self,
        ctx: &HandlerContext,
        scope: &str,
        payload: &serde_json::Value,
        deadline: Instant,
    ) -> crate::broker::handlers::HandlerOutcome {
        self.0.execute(ctx, scope, payload, deadline)
    }
    fn execute_intent(
        &self,
        ctx: &HandlerContext,
        intent: &crate::broker::handlers::Intent<'_>,
        scope: &str,
        payload: &serde_json::Value,
        deadline: Instant,
    ) -> crate::broker::handlers::HandlerOutcome {
        self.0.execute_intent(ctx, intent, scope, payload, deadline)
    }
    fn bind_intent(
        &self,
        conn: &Connection,
        intent: &crate::broker::handlers::Intent<'_>,
        request_ref: &str,
        scope: &str,
        payload: &serde_json::Value,
    ) -> Result<(), String> {
        self.0
            .bind_intent(conn, intent, request_ref, scope, payload)
    }
}

/// How to probe.
#[derive(Clone, Debug)]
pub struct ReconcileOptions {
    /// Issue the GETs (without it every pending publish stays `probe-unavailable`).
    pub probe: bool,
    /// The intents' registry may be a loopback origin (`--loopback-registry`).
    pub allow_loopback: bool,
    /// Only this package (`<vendor>/<name>`), when given.
    pub package: Option<String>,
    /// The known-positive control `(vendor, name, version)`.
    pub control: (String, String, String),
    /// Pause between probe passes.
    pub interval: std::time::Duration,
    /// Unix seconds: the outcome's logical time.
    pub now: i64,
}

/// One reconciled intent.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Reconciled {
    /// The intent.
    #[serde(flatten)]
    pub pending: PendingPublish,
    /// `succeeded-reconciled`, `conflict`, `not-published` or `probe-unavailable`.
    pub state: &'static str,
    /// Why.
    pub detail: String,
    /// The record written (resolved states only).
    pub record_ref: Option<String>,
    /// The probe's receipt.
    pub receipt: Option<Receipt>,
}

/// Resolves every pending `Registry.Publish` intent (of `o.package`, when given): probe the
/// bucket, then record `succeeded-reconciled` as a succeeded effect (result object status
/// `succeeded-reconciled`), `not-published` and `conflict` as failed effects, each with its
/// record and outcome in one transaction; `probe-unavailable` writes the receipt object only
/// and leaves the intent open. Never uploads.
///
/// # Errors
/// Store errors.
pub fn reconcile(store: &mut Store, o: &ReconcileOptions) -> Result<Vec<Reconciled>, PackageError> {
    let mut out = Vec::new();
    for p in pending(store)? {
        let package = p.request.as_ref().map(PublishRequest::package);
        if o.package.is_some() && package != o.package {
            continue;
        }
        let (state, detail, receipt) = probe_one(&p, o);
        let record_ref = record_resolution(store, &p, state, &detail, receipt.as_ref(), o.now)?;
        out.push(Reconciled {
            pending: p,
            state: state.name(),
            detail,
            record_ref,
            receipt,
        });
    }
    Ok(out)
}

fn probe_one(
    p: &PendingPublish,
    o: &ReconcileOptions,
) -> (ReconcileState, String, Option<Receipt>) {
    let unavailable = |d: String| (ReconcileState::ProbeUnavailable, d, None);
    let Some(req) = &p.request else {
        return unavailable(
            "the intent's request payload does not decode as a publish request".into(),
        );
    };
    if !o.probe {
        return unavailable(
            "no probe issued (--probe requests the read-only metadata GETs)".into(),
        );
    }
    let origins = match Origins::for_recorded(&req.registry_origin, o.allow_loopback) {
        Ok(x) => x,
        Err(e) => return unavailable(format!("refused: {e}")),
    };
    let target = ProbeTarget {
        registry: &origins.registry,
        vendor: &req.vendor,
        name: &req.name,
        version: &req.version,
        expected: &req.hashes,
        control: (&o.control.0, &o.control.1, &o.control.2),
        interval: o.interval,
    };
    match registry::reconcile(&target) {
        Ok(r) => (r.state, r.detail.clone(), Some(r)),
        Err(e) => unavailable(format!("refused: {e}")),
    }
}

fn record_resolution(
    store: &mut Store,
    p: &PendingPublish,
    state: ReconcileState,
    detail: &str,
    receipt: Option<&Receipt>,
    now: i64,
) -> Result<Option<String>, PackageError> {
    let tx = store.immediate()?;
    // Still open? (The writer lock makes this certain; the check keeps the write idempotent.)
    if journal::row(&tx, &p.intent_id, Kind::Outcome)?.is_some() {
        return Ok(None);
    }
    let samples = receipt.map_or(serde_json::Value::Array(Vec::new()), |r| {
        serde_json::to_value(&r.samples).unwrap_or(serde_json::Value::Null)
    });
    let receipt_obj = crate::encoding::gojson::Obj::new()
        .str("intentId", &p.intent_id)
        .str("state", state.name())
        .str("detail", detail)
        .int(
            "absentSamples",
            receipt.map_or(0, |r| i64::from(r.absent_samples)),
        )
        .int(
            "uninformativeSamples",
            receipt.map_or(0, |r| i64::from(r.uninformative_samples)),
        )
        .raw("samples", &crate::encoding::gojson::any_to_vec(&samples))
        .int("logicalTime", now)
        .finish();
    put_object(
        &tx,
        &Object::new(RECONCILE_RECEIPT, PROVENANCE, receipt_obj),
    )?;
    let succeeded = match state {
        ReconcileState::ProbeUnavailable => {
            tx.commit().map_err(store::Error::from)?;
            return Ok(None);
        }
        ReconcileState::SucceededReconciled => true,
        ReconcileState::Conflict | ReconcileState::NotPublished => false,
    };
    let result = match (&p.request, succeeded) {
        (Some(req), true) => {
            let served = receipt
                .and_then(|r| r.served.clone())
                .unwrap_or_else(|| req.hashes.clone());
            let validator = Origins::for_recorded(&req.registry_origin, false)
                .map(|_| registry::PRODUCTION_VALIDATOR.to_string())
                .unwrap_or_else(|_| req.registry_origin.clone());
            Some(Object::new(
                EFFECT_RESULT,
                broker::PROVENANCE,
                PublishResult {
                    status: ReconcileState::SucceededReconciled.name(),
                    request: req,
                    validator_origin: &validator,
                    hashes: &served,
                    publisher_output: detail,
                }
                .encode(),
            ))
        }
        _ => None,
    };
    let record = EffectRecord {
        effect: EFFECT.to_string(),
        scope: p.scope.clone(),
        cost: p.cost,
        budget_before: p.cost,
        budget_after: 0,
        allowed: true,
        failed: !succeeded,
        denial: String::new(),
        request_ref: p.request_ref.clone(),
        result_ref: result
            .as_ref()
            .map(|r| r.meta.hash.clone())
            .unwrap_or_default(),
    };
    let rec = Object::new(EFFECT_RECORD, broker::PROVENANCE, record.encode());
    if let Some(r) = &result {
        put_object(&tx, r)?;
    }
    put_object(&tx, &rec)?;
    if !succeeded {
        let why = crate::encoding::gojson::Obj::new()
            .str("recordRef", &rec.meta.hash)
            .str("intentId", &p.intent_id)
            .str(
                "message",
                &format!("Registry.Publish reconciled {}: {detail}", state.name()),
            )
            .finish();
        put_object(
            &tx,
            &Object::new(broker::EFFECT_FAILURE, broker::PROVENANCE, why),
        )?;
    }
    journal::append(
        &tx,
        Kind::Outcome,
        &p.intent_id,
        journal::EFFECT_OUTCOME,
        journal::effect_outcome_payload(&p.intent_id, succeeded, &rec.meta.hash, now),
    )?;
    tx.commit().map_err(store::Error::from)?;
    Ok(Some(rec.meta.hash))
}

/// One publish approval as `status` shows it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRow {
    /// The decision ref (the approval), or the request ref while pending.
    pub approval_ref: String,
    /// The grant scope it stamps.
    pub scope: String,
    /// Its expiry.
    pub expires_at: i64,
    /// `approved`, `denied`, `pending`.
    pub state: &'static str,
    /// The intent that spent it.
    pub claimed_by: Option<String>,
}

/// One publish effect as `status` shows it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EffectRow {
    /// The intent.
    pub intent_id: String,
    /// The grant scope.
    pub scope: String,
    /// `succeeded`, `failed` or `indeterminate`.
    pub state: String,
    /// The record, once resolved.
    pub record_ref: Option<String>,
}

/// The store's publish approvals and `Registry.Publish` effects.
#[derive(Clone, Debug, Serialize)]
pub struct StatusReport {
    /// Publish approvals, oldest first.
    pub approvals: Vec<ApprovalRow>,
    /// Publish effects, in journal order.
    pub effects: Vec<EffectRow>,
}

/// Reads [`StatusReport`].
///
/// # Errors
/// Store and approval errors.
pub fn status(store: &Store) -> Result<StatusReport, PackageError> {
    let conn = store.conn();
    let mut approvals_out = Vec::new();
    for a in approvals::list(conn, None)? {
        let Some(obj) = object_in(conn, &a.request_ref)? else {
            continue;
        };
        let Ok(r) = approvals::reference_request(&a.request_ref, &obj.payload) else {
            continue;
        };
        let Ok(scope) = ApprovalScope::parse(&r.scope) else {
            continue;
        };
        if scope.effect != EFFECT {
            continue;
        }
        approvals_out.push(ApprovalRow {
            approval_ref: a
                .state
                .decision_ref()
                .map_or_else(|| a.request_ref.clone(), str::to_owned),
            scope: scope.publish,
            expires_at: scope.expires_at,
            state: a.state.name(),
            claimed_by: a.claimed_by.clone(),
        });
    }
    let mut effects = Vec::new();
    let rows = journal::effect_intents(conn)?;
    for (id, payload) in rows {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(&payload) else {
            continue;
        };
        if v.get("effect").and_then(|x| x.as_str()) != Some(EFFECT) {
            continue;
        }
        let scope = v
            .get("scope")
            .and_then(|x| x.as_str())
            .unwrap_or("")
            .to_string();
        let (state, record_ref) = match journal::row(conn, &id, Kind::Outcome)? {
            None => ("indeterminate".to_string(), None),
            Some(o) => {
                let ov = object_in(conn, &o)?
                    .and_then(|x| serde_json::from_slice::<serde_json::Value>(&x.payload).ok())
                    .unwrap_or_default();
                (
                    ov.get("status")
                        .and_then(|x| x.as_str())
                        .unwrap_or("")
                        .to_string(),
                    ov.get("recordRef")
                        .and_then(|x| x.as_str())
                        .map(str::to_owned),
                )
            }
        };
        effects.push(EffectRow {
            intent_id: id,
            scope,
            state,
            record_ref,
        });
    }
    Ok(StatusReport {
        approvals: approvals_out,
        effects,
    })
}

/// One `Registry.Publish` effect re-derived from the store by `world replay --episode EP`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PublishReplay {
    /// The intent.
    pub intent_id: String,
    /// `identical`, `diverged` or `indeterminate` (an open intent: nothing to compare yet).
    pub outcome: &'static str,
    /// What differs, when diverged.
    pub detail: Option<String>,
}

/// Re-derives every `Registry.Publish` effect of `episode` from its records, never calling a
/// handler (replay mode): the decision law with the attended grant (budget 1, seeded from the
/// episode's earlier spend of the scope), the record's identity and budgets, the request
/// payload's scope, and the result object of a succeeded outcome. Empty when the episode
/// holds no publish.
///
/// # Errors
/// SQLite failures; every problem with the stored data is a `diverged` row.
pub fn replay(store: &Store, episode: &str) -> Result<Vec<PublishReplay>, store::Error> {
    let mut out = Vec::new();
    let mut spent: std::collections::HashMap<String, i64> = std::collections::HashMap::new();
    for (id, payload) in store.effect_intents()? {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(&payload) else {
            continue;
        };
        let s = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
        if s("episodeId") != episode {
            continue;
        }
        let scope = s("scope");
        let cost = v
            .get("cost")
            .and_then(serde_json::Value::as_i64)
            .unwrap_or(0);
        let before = (COST - spent.get(&scope).copied().unwrap_or(0)).max(0);
        *spent.entry(scope.clone()).or_default() += cost;
        if s("effect") != EFFECT {
            continue;
        }
        let check = replay_one(store, &id, &scope, cost, before, &s("requestRef"))?;
        out.push(match check {
            None => PublishReplay {
                intent_id: id,
                outcome: "indeterminate",
                detail: None,
            },
            Some(Ok(())) => PublishReplay {
                intent_id: id,
                outcome: "identical",
                detail: None,
            },
            Some(Err(why)) => PublishReplay {
                intent_id: id,
                outcome: "diverged",
                detail: Some(why),
            },
        });
    }
    Ok(out)
}

/// `None` for an open intent; `Some(Err(why))` for a divergence.
fn replay_one(
    store: &Store,
    id: &str,
    scope: &str,
    cost: i64,
    before: i64,
    request_ref: &str,
) -> Result<Option<Result<(), String>>, store::Error> {
    let Some(outcome_ref) = store.journal_row(id, Kind::Outcome)? else {
        return Ok(None);
    };
    let verified = |r: &str, want: &str| -> Result<Result<Object, String>, store::Error> {
        Ok(match store.object(r)? {
            None => Err(format!("{want} {r} is missing")),
            Some(o) if !o.verifies() => Err(format!("{want} {r} does not re-hash")),
            Some(o) => Ok(o),
        })
    };
    let outcome = match verified(&outcome_ref, "outcome")? {
        Ok(o) => o,
        Err(e) => return Ok(Some(Err(e))),
    };
    let ov: serde_json::Value = serde_json::from_slice(&outcome.payload).unwrap_or_default();
    let status = ov.get("status").and_then(|x| x.as_str()).unwrap_or("");
    let record_ref = ov.get("recordRef").and_then(|x| x.as_str()).unwrap_or("");
    let record = match verified(record_ref, "record")? {
        Ok(o) => o,
        Err(e) => return Ok(Some(Err(e))),
    };
    let Ok(rec) = EffectRecord::decode(&record.payload) else {
        return Ok(Some(Err(format!("record {record_ref} does not decode"))));
    };
    // The decision law with the attended grant: allowed only with budget for the cost.
    if before < cost {
        return Ok(Some(Err(format!(
            "the grant had {before} unit(s) left for {cost}: the broker would have denied it"
        ))));
    }
    if rec.effect != EFFECT
        || rec.scope != scope
        || rec.cost != cost
        || rec.request_ref != request_ref
    {
        return Ok(Some(Err(format!(
            "record {record_ref} does not describe the intent's effect, scope, cost and request"
        ))));
    }
    if !rec.allowed || rec.budget_before != before || rec.budget_after != before - cost {
        return Ok(Some(Err(format!(
            "record {record_ref} says budget {}→{}, the decision gives {before}→{}",
            rec.budget_before,
            rec.budget_after,
            before - cost
        ))));
    }
    if (status == "succeeded") == rec.failed {
        return Ok(Some(Err(format!(
            "outcome {status} disagrees with record failed={}",
            rec.failed
        ))));
    }
    let request = match verified(request_ref, "request")? {
        Ok(o) => o,
        Err(e) => return Ok(Some(Err(e))),
    };
    let Some(req) = request_payload(&request.payload).and_then(|p| PublishRequest::decode(&p).ok())
    else {
        return Ok(Some(Err(format!(
            "request {request_ref} is not a publish request"
        ))));
    };
    if req.scope() != scope {
        return Ok(Some(Err(format!(
            "request {request_ref} publishes {:?}, the intent's scope is {scope:?}",
            req.scope()
        ))));
    }
    if rec.failed {
        return Ok(Some(if rec.result_ref.is_empty() {
            Ok(())
        } else {
            Err("a failed record names a result".into())
        }));
    }
    let result = match verified(&rec.result_ref, "result")? {
        Ok(o) => o,
        Err(e) => return Ok(Some(Err(e))),
    };
    let rv: serde_json::Value = serde_json::from_slice(&result.payload).unwrap_or_default();
    let g = |k: &str| rv.get(k).and_then(|x| x.as_str()).unwrap_or("");
    let ok = g("schema") == publish::RESULT_SCHEMA
        && matches!(g("status"), "succeeded" | "succeeded-reconciled")
        && g("vendor") == req.vendor
        && g("name") == req.name
        && g("version") == req.version;
    Ok(Some(if ok {
        Ok(())
    } else {
        Err(format!(
            "result {} is not this publish's result",
            rec.result_ref
        ))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_payload_is_what_follows_the_length_prefixed_header() {
        let b = crate::store::records::request_bytes(
            "Registry.Publish",
            "registry:x",
            1,
            7,
            b"{\"a\":1}",
        );
        assert_eq!(request_payload(&b).unwrap(), b"{\"a\":1}");
        assert!(request_payload(b"3:ab").is_none());
    }
}
