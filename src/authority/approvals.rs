//! Approvals in the store (authority-and-broker.md §11, §12 row 5; store-format.md §3.1
//! `approval_claims`, §3.3 `world/approvals/v1`).
//!
//! The three reference semantic ids carry the reference's own payloads (its
//! `host/broker/approve.go`, decoded there strictly), provenance `host/broker`, Go-json in
//! struct order; what `world` adds lives in objects of its own semantic ids that link to them
//! (docs/DECISIONS.md H-13, H-20a):
//!
//! | Object (`semantic_id`) | Payload (keys in this order) |
//! |---|---|
//! | `world/approval-request/v1` | `{"effect","scope","cost","requester","now"}` |
//! | `world/approval-decision/v1` | `{"requestRef","decision":"approve"\|"deny","decidedBy","now"}` |
//! | `world/approvals/v1` (registry) | `{"previousHead","requestRef","decisionRef"}` (`""` for none) |
//! | `world/approval-request-detail/v1` | `{"requestRef","episodeId","summary","requestedBy","origin"}` |
//! | `world/approval-decision-detail/v1` | `{"decisionRef","attended"}` |
//!
//! The reference request's `requester` is the request's `origin`, which makes two requests
//! distinct objects: the effect intent id (`effect:<ep>:<n>`) for a request opened by
//! `Human.Approve` (effect `Human.Approve`, the intent's scope and cost), `cli:<32 hex>` for one
//! opened by `world approval request` (effect `Human.Approve`, scope `cli`, cost 0). The
//! person's `--requester` name is the detail's `requestedBy`. Times are Unix seconds. Every
//! request and decision appends one registry object whose `previousHead` is the former head,
//! compare-and-set in the same transaction, so the head is an append-only chain the reference
//! can walk.
//!
//! Stores written before this layout (request `{"episodeId","summary","requester","origin",
//! "createdAt"}`, decision `{"requestRef","approved","decidedBy","attended","decidedAt"}`,
//! registry `{"prev","event","ref"}`, provenance `world:approvals`) still read, verify and
//! replay: both layouts are decoded here.
//!
//! A claim row `approval_claims(approval_ref = decision ref, request_ref = request ref,
//! invocation_id = the consuming effect intent id)` makes an approval single use: the primary
//! key refuses a second claim of one decision, the `UNIQUE` intent id a second approval for
//! one effect. Every write here is one `BEGIN IMMEDIATE` transaction on a connection whose
//! process holds the writer lock.

use std::collections::HashMap;
use std::sync::Mutex;

use rusqlite::{Connection, TransactionBehavior};
use serde::Serialize;

use crate::encoding::gojson::Obj;
use crate::store::approvals::{self as claim_rows, ClaimRow};
use crate::store::{
    cas_registry_head, object_in, payloads_by_semantic_id, put_object, registry_head_in,
    Error as StoreError, Object, Store,
};

/// Longest summary of an approval request, in bytes.
pub const MAX_SUMMARY_BYTES: usize = 4096;

/// The error name of a second claim on one approval (authority-and-broker.md §11).
pub const ALREADY_CONSUMED: &str = "ErrApprovalAlreadyConsumed";

/// Where an approval request stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApprovalState {
    /// No decision yet.
    Pending,
    /// Approved by the decision object `decision_ref`.
    Approved {
        /// The decision object's ref (`sha256:…`).
        decision_ref: String,
    },
    /// Denied by the decision object `decision_ref`.
    Denied {
        /// The decision object's ref (`sha256:…`).
        decision_ref: String,
    },
}

impl ApprovalState {
    /// `pending`, `approved` or `denied`.
    pub fn name(&self) -> &'static str {
        match self {
            ApprovalState::Pending => "pending",
            ApprovalState::Approved { .. } => "approved",
            ApprovalState::Denied { .. } => "denied",
        }
    }

    /// The decision object's ref, once decided.
    pub fn decision_ref(&self) -> Option<&str> {
        match self {
            ApprovalState::Pending => None,
            ApprovalState::Approved { decision_ref } | ApprovalState::Denied { decision_ref } => {
                Some(decision_ref)
            }
        }
    }
}

/// Serialized as the members `"state"` (its [`ApprovalState::name`]) and, once decided,
/// `"decisionRef"`, so a containing struct can flatten it.
impl serde::Serialize for ApprovalState {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let decision = self.decision_ref();
        let mut map = ser.serialize_map(Some(1 + usize::from(decision.is_some())))?;
        map.serialize_entry("state", self.name())?;
        if let Some(d) = decision {
            map.serialize_entry("decisionRef", d)?;
        }
        map.end()
    }
}

/// One approval request as the handlers see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalView {
    /// The request object's ref (`sha256:…`).
    pub request_ref: String,
    /// The episode the request is bound to.
    pub episode: String,
    /// The text the approver is shown.
    pub summary: String,
    /// Pending, approved or denied.
    pub state: ApprovalState,
    /// The intent id that consumed the approval (`approval_claims.invocation_id`), if any.
    pub claimed_by: Option<String>,
}

/// The store access the approval handlers need. An error's text is the message recorded in
/// the effect's failed result.
pub trait ApprovalStore: Send + Sync {
    /// Registers a new pending request for `episode`, made by the effect intent `origin`
    /// (an effect of grant scope `scope` and cost `cost`) at logical time `now` (Unix
    /// seconds); returns the request's ref.
    fn open_request(
        &self,
        episode: &str,
        summary: &str,
        origin: &str,
        scope: &str,
        cost: i64,
        now: i64,
    ) -> Result<String, ApprovalError>;
    /// The request `request_ref` with its decision and claim, or `None` when no such request
    /// exists.
    fn view(&self, request_ref: &str) -> Result<Option<ApprovalView>, ApprovalError>;
    /// Records the (only) decision for a pending request and returns the decision's ref; with
    /// `claim_for` and `approved`, the approval is claimed by that intent in the same
    /// transaction. Fails when the request is unknown or already decided.
    fn decide(
        &self,
        request_ref: &str,
        approved: bool,
        decided_by: &str,
        claim_for: Option<&str>,
        now: i64,
    ) -> Result<String, ApprovalError>;
    /// Claims an approved request for the intent `intent_id` (single use). Fails with
    /// [`ALREADY_CONSUMED`] when another intent holds it, or when it is not approved.
    fn claim(&self, request_ref: &str, intent_id: &str) -> Result<(), ApprovalError>;
}

/// Checks a request summary: non-empty, at most [`MAX_SUMMARY_BYTES`] bytes, no NUL.
///
/// # Errors
/// [`ApprovalError::Invalid`] naming what is wrong.
pub fn check_summary(summary: &str) -> Result<(), ApprovalError> {
    let invalid = |why: String| Err(ApprovalError::Invalid(why));
    if summary.trim().is_empty() {
        return invalid("the approval summary is empty".to_owned());
    }
    if summary.len() > MAX_SUMMARY_BYTES {
        return invalid(format!(
            "the approval summary is {} bytes; at most {MAX_SUMMARY_BYTES}",
            summary.len()
        ));
    }
    if summary.contains('\0') {
        return invalid("the approval summary contains a NUL character".to_owned());
    }
    Ok(())
}

pub use crate::store::records::{APPROVAL_DECISION, APPROVAL_REQUEST};
/// The approvals registry head name and its objects' semantic id (store-format.md §3.3).
pub const APPROVALS_REGISTRY: &str = "world/approvals/v1";
/// Provenance of the reference-shaped approval objects (the reference's `brokerObject`).
pub const PROVENANCE: &str = "host/broker";
/// Provenance of `world`'s approval detail objects (and of every approval object of the old
/// layout).
pub const DETAIL_PROVENANCE: &str = "world:approvals";
/// `world`'s additions to a request: episode, summary, the person who asked, origin.
pub const REQUEST_DETAIL: &str = "world/approval-request-detail/v1";
/// `world`'s additions to a decision: whether a person confirmed it at a terminal.
pub const DECISION_DETAIL: &str = "world/approval-decision-detail/v1";
/// The reference request's `effect` for every request `world` opens.
pub const REQUEST_EFFECT: &str = "Human.Approve";
/// The reference request's `scope` for a request opened by `world approval request`.
pub const CLI_SCOPE: &str = "cli";
/// Longest `requester` / `decidedBy` name, in bytes.
pub const MAX_NAME_BYTES: usize = 128;

/// Why an approval operation was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    /// No object with this ref, or the object is not an approval request.
    #[error("no approval request {0}")]
    NotFound(String),
    /// The request already has its decision (a decision is written once).
    #[error("approval request {request} is already decided ({state}, decision {decision})")]
    AlreadyDecided {
        /// The request ref.
        request: String,
        /// `approved` or `denied`.
        state: &'static str,
        /// The decision ref.
        decision: String,
    },
    /// Only an approved request can be claimed.
    #[error("approval request {request} is {state}, not approved; nothing to claim")]
    NotApproved {
        /// The request ref.
        request: String,
        /// `pending` or `denied`.
        state: &'static str,
    },
    /// The approval was claimed already (single use).
    #[error("{ALREADY_CONSUMED}: approval request {request} was already consumed by {by}; an approval is single use")]
    AlreadyConsumed {
        /// The request ref.
        request: String,
        /// The intent id that holds the claim.
        by: String,
    },
    /// The effect intent already claimed another approval.
    #[error("effect intent {0} already claimed another approval")]
    IntentHasClaim(String),
    /// Bad text: summary, requester or decider name.
    #[error("{0}")]
    Invalid(String),
    /// A stored approval object does not decode.
    #[error("corrupt approval object {reference}: {detail}")]
    Corrupt {
        /// The object's ref.
        reference: String,
        /// Why.
        detail: String,
    },
    /// A previous call on the handlers' approval connection panicked (its lock is poisoned).
    #[error("approval store: a previous call panicked")]
    Poisoned,
    /// Beginning or committing the handlers' approval transaction failed.
    #[error("approval store: {0}")]
    Transaction(#[source] rusqlite::Error),
    /// Store failure.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<rusqlite::Error> for ApprovalError {
    fn from(e: rusqlite::Error) -> Self {
        ApprovalError::Store(StoreError::Sqlite(e))
    }
}

/// A new request's fields.
#[derive(Clone, Debug)]
pub struct NewRequest<'a> {
    /// The grant scope of the effect asking (`Human.Approve`'s scope; [`CLI_SCOPE`] for the CLI).
    pub scope: &'a str,
    /// The cost of the effect asking (0 for the CLI).
    pub cost: i64,
    /// The episode the request is bound to.
    pub episode: &'a str,
    /// What the approver is shown ([`check_summary`]).
    pub summary: &'a str,
    /// Who asks (`episode:<ep>` for `Human.Approve`, `--requester` for the CLI).
    pub requester: &'a str,
    /// What makes the request unique (module docs).
    pub origin: &'a str,
    /// Unix seconds.
    pub now: i64,
}

/// A decision's fields.
#[derive(Clone, Debug)]
pub struct NewDecision<'a> {
    /// Approve (`true`) or deny.
    pub approved: bool,
    /// Who decided (`terminal` for `Human.Approve`, `--decided-by` for the CLI).
    pub decided_by: &'a str,
    /// Confirmed by a person at a terminal (`false` for `world approval decide --yes`).
    pub attended: bool,
    /// Unix seconds.
    pub now: i64,
}

/// One approval: the request, its decision and its claim (`world approval list|show`).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    /// The request object's ref.
    pub request_ref: String,
    /// The episode the request is bound to.
    pub episode: String,
    /// What the approver is shown.
    pub summary: String,
    /// Who asked.
    pub requester: String,
    /// The request's origin (module docs).
    pub origin: String,
    /// Unix seconds.
    pub created_at: i64,
    /// Pending, or approved / denied by a decision object (JSON: `state` and, once decided,
    /// `decisionRef`).
    #[serde(flatten)]
    pub state: ApprovalState,
    /// Who decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// Whether the decision was confirmed at a terminal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attended: Option<bool>,
    /// Unix seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<i64>,
    /// The effect intent that consumed the approval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claimed_by: Option<String>,
}

impl Approval {
    /// The handler view of this approval.
    pub fn view(&self) -> ApprovalView {
        ApprovalView {
            request_ref: self.request_ref.clone(),
            episode: self.episode.clone(),
            summary: self.summary.clone(),
            state: self.state.clone(),
            claimed_by: self.claimed_by.clone(),
        }
    }
}

/// Checks a requester / decider name: 1..=128 bytes of `[A-Za-z0-9._@:-]`.
///
/// # Errors
/// [`ApprovalError::Invalid`] naming the field.
pub fn check_name(field: &str, name: &str) -> Result<(), ApprovalError> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME_BYTES
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'@' | b':' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(ApprovalError::Invalid(format!(
            "{field} {name:?} must be 1..={MAX_NAME_BYTES} characters of [A-Za-z0-9._@:-]"
        )))
    }
}

struct Request {
    episode: String,
    summary: String,
    requester: String,
    origin: String,
    created_at: i64,
}

struct Decision {
    reference: String,
    request_ref: String,
    approved: bool,
    decided_by: String,
    attended: Option<bool>,
    decided_at: i64,
}

fn corrupt(reference: &str, detail: impl Into<String>) -> ApprovalError {
    ApprovalError::Corrupt {
        reference: reference.to_owned(),
        detail: detail.into(),
    }
}

/// A JSON object whose key set is exactly `keys` (the reference decodes strictly).
fn exact_object(
    reference: &str,
    what: &str,
    payload: &[u8],
    keys: &[&str],
) -> Result<serde_json::Map<String, serde_json::Value>, ApprovalError> {
    let v: serde_json::Value =
        serde_json::from_slice(payload).map_err(|e| corrupt(reference, e.to_string()))?;
    let serde_json::Value::Object(m) = v else {
        return Err(corrupt(reference, format!("{what} is not a JSON object")));
    };
    for k in m.keys() {
        if !keys.contains(&k.as_str()) {
            return Err(corrupt(reference, format!("{what} has unknown field {k}")));
        }
    }
    for k in keys {
        if !m.contains_key(*k) {
            return Err(corrupt(reference, format!("{what} field {k} is missing")));
        }
    }
    Ok(m)
}

fn str_of(
    reference: &str,
    what: &str,
    m: &serde_json::Map<String, serde_json::Value>,
    k: &str,
) -> Result<String, ApprovalError> {
    m.get(k)
        .and_then(|x| x.as_str())
        .map(str::to_owned)
        .ok_or_else(|| corrupt(reference, format!("{what} field {k} is not a string")))
}

fn int_of(
    reference: &str,
    what: &str,
    m: &serde_json::Map<String, serde_json::Value>,
    k: &str,
) -> Result<i64, ApprovalError> {
    m.get(k)
        .and_then(|x| x.as_i64())
        .ok_or_else(|| corrupt(reference, format!("{what} field {k} is not an int64")))
}

fn bool_of(
    reference: &str,
    what: &str,
    m: &serde_json::Map<String, serde_json::Value>,
    k: &str,
) -> Result<bool, ApprovalError> {
    m.get(k)
        .and_then(|x| x.as_bool())
        .ok_or_else(|| corrupt(reference, format!("{what} field {k} is not a boolean")))
}

/// The key set of a reference `world/approval-request/v1` payload.
pub const REQUEST_KEYS: [&str; 5] = ["effect", "scope", "cost", "requester", "now"];
/// The key set of a reference `world/approval-decision/v1` payload.
pub const DECISION_KEYS: [&str; 4] = ["requestRef", "decision", "decidedBy", "now"];
/// The key set of a reference `world/approvals/v1` payload.
pub const REGISTRY_KEYS: [&str; 3] = ["previousHead", "requestRef", "decisionRef"];
const OLD_REQUEST_KEYS: [&str; 5] = ["episodeId", "summary", "requester", "origin", "createdAt"];
const OLD_DECISION_KEYS: [&str; 5] = [
    "requestRef",
    "approved",
    "decidedBy",
    "attended",
    "decidedAt",
];
const REQUEST_DETAIL_KEYS: [&str; 5] = [
    "requestRef",
    "episodeId",
    "summary",
    "requestedBy",
    "origin",
];
const DECISION_DETAIL_KEYS: [&str; 2] = ["decisionRef", "attended"];

/// `world`'s detail of one request.
struct RequestDetail {
    episode: String,
    summary: String,
    requested_by: String,
    origin: String,
}

fn decode_request_detail(
    reference: &str,
    payload: &[u8],
) -> Result<(String, RequestDetail), ApprovalError> {
    let w = "request detail";
    let m = exact_object(reference, w, payload, &REQUEST_DETAIL_KEYS)?;
    Ok((
        str_of(reference, w, &m, "requestRef")?,
        RequestDetail {
            episode: str_of(reference, w, &m, "episodeId")?,
            summary: str_of(reference, w, &m, "summary")?,
            requested_by: str_of(reference, w, &m, "requestedBy")?,
            origin: str_of(reference, w, &m, "origin")?,
        },
    ))
}

/// Every request detail, by request ref (approvals are person-paced: one scan is the index).
fn request_details(conn: &Connection) -> Result<HashMap<String, RequestDetail>, ApprovalError> {
    let mut out = HashMap::new();
    for (reference, payload) in by_semantic_id(conn, REQUEST_DETAIL)? {
        let (request_ref, d) = decode_request_detail(&reference, &payload)?;
        if out.insert(request_ref.clone(), d).is_some() {
            return Err(corrupt(
                &reference,
                format!("request {request_ref} has a second detail object"),
            ));
        }
    }
    Ok(out)
}

/// Every decision detail: decision ref → attended.
fn decision_details(conn: &Connection) -> Result<HashMap<String, bool>, ApprovalError> {
    let w = "decision detail";
    let mut out = HashMap::new();
    for (reference, payload) in by_semantic_id(conn, DECISION_DETAIL)? {
        let m = exact_object(&reference, w, &payload, &DECISION_DETAIL_KEYS)?;
        out.insert(
            str_of(&reference, w, &m, "decisionRef")?,
            bool_of(&reference, w, &m, "attended")?,
        );
    }
    Ok(out)
}

fn by_semantic_id(
    conn: &Connection,
    semantic: &str,
) -> Result<Vec<(String, Vec<u8>)>, ApprovalError> {
    Ok(payloads_by_semantic_id(conn, semantic)?)
}

/// Decodes a request of either layout. A reference-shaped request without a `world` detail
/// (one the reference wrote) has an empty episode and summary, so no episode can use it.
fn decode_request(
    reference: &str,
    payload: &[u8],
    details: &HashMap<String, RequestDetail>,
) -> Result<Request, ApprovalError> {
    let w = "request";
    let v: serde_json::Value =
        serde_json::from_slice(payload).map_err(|e| corrupt(reference, e.to_string()))?;
    if v.get("episodeId").is_some() {
        let m = exact_object(reference, w, payload, &OLD_REQUEST_KEYS)?;
        return Ok(Request {
            episode: str_of(reference, w, &m, "episodeId")?,
            summary: str_of(reference, w, &m, "summary")?,
            requester: str_of(reference, w, &m, "requester")?,
            origin: str_of(reference, w, &m, "origin")?,
            created_at: int_of(reference, w, &m, "createdAt")?,
        });
    }
    let m = exact_object(reference, w, payload, &REQUEST_KEYS)?;
    let requester = str_of(reference, w, &m, "requester")?;
    let created_at = int_of(reference, w, &m, "now")?;
    Ok(match details.get(reference) {
        Some(d) => Request {
            episode: d.episode.clone(),
            summary: d.summary.clone(),
            requester: d.requested_by.clone(),
            origin: d.origin.clone(),
            created_at,
        },
        None => Request {
            episode: String::new(),
            summary: String::new(),
            origin: requester.clone(),
            requester,
            created_at,
        },
    })
}

/// Decodes a decision of either layout.
fn decode_decision(
    reference: &str,
    payload: &[u8],
    details: &HashMap<String, bool>,
) -> Result<Decision, ApprovalError> {
    let w = "decision";
    let v: serde_json::Value =
        serde_json::from_slice(payload).map_err(|e| corrupt(reference, e.to_string()))?;
    if v.get("approved").is_some() {
        let m = exact_object(reference, w, payload, &OLD_DECISION_KEYS)?;
        return Ok(Decision {
            reference: reference.to_owned(),
            request_ref: str_of(reference, w, &m, "requestRef")?,
            approved: bool_of(reference, w, &m, "approved")?,
            decided_by: str_of(reference, w, &m, "decidedBy")?,
            attended: Some(bool_of(reference, w, &m, "attended")?),
            decided_at: int_of(reference, w, &m, "decidedAt")?,
        });
    }
    let m = exact_object(reference, w, payload, &DECISION_KEYS)?;
    let approved = match str_of(reference, w, &m, "decision")?.as_str() {
        "approve" => true,
        "deny" => false,
        other => {
            return Err(corrupt(
                reference,
                format!("decision {other:?} is neither \"approve\" nor \"deny\""),
            ))
        }
    };
    Ok(Decision {
        reference: reference.to_owned(),
        request_ref: str_of(reference, w, &m, "requestRef")?,
        approved,
        decided_by: str_of(reference, w, &m, "decidedBy")?,
        attended: details.get(reference).copied(),
        decided_at: int_of(reference, w, &m, "now")?,
    })
}

/// Whether `payload` (a `world/approval-decision/v1` of either layout) approves `request_ref`
/// (`world verify`'s claim check).
pub fn decision_approves(payload: &[u8], request_ref: &str) -> bool {
    decode_decision("", payload, &HashMap::new())
        .is_ok_and(|d| d.approved && d.request_ref == request_ref)
}

/// Every decision in the store, by request ref. Approvals are person-paced, so one scan of
/// the decision objects (through `objects_by_semantic_id`) is the whole index.
fn decisions(conn: &Connection) -> Result<HashMap<String, Decision>, ApprovalError> {
    let details = decision_details(conn)?;
    let mut out = HashMap::new();
    for (reference, payload) in by_semantic_id(conn, APPROVAL_DECISION)? {
        let d = decode_decision(&reference, &payload, &details)?;
        if let Some(first) = out.get(&d.request_ref) {
            let first: &Decision = first;
            return Err(corrupt(
                &d.reference,
                format!(
                    "request {} has a second decision (first {})",
                    d.request_ref, first.reference
                ),
            ));
        }
        out.insert(d.request_ref.clone(), d);
    }
    Ok(out)
}

/// Request ref → the intent id that claimed it.
type ClaimIndex = HashMap<String, String>;

fn claims(conn: &Connection) -> Result<ClaimIndex, ApprovalError> {
    Ok(claim_rows::claimants(conn)?.into_iter().collect())
}

/// The intent that claimed `decision` by its own ref: a `Registry.Publish` claim names the
/// effect's request, not the approval request (the reference's `AppendClaimedEffectIntent`).
fn decision_claimant(
    conn: &Connection,
    decision: Option<&Decision>,
) -> Result<Option<String>, ApprovalError> {
    match decision {
        Some(d) if d.approved => Ok(claim_rows::claimant_of_decision(conn, &d.reference)?),
        _ => Ok(None),
    }
}

fn assemble(
    request_ref: &str,
    req: Request,
    decision: Option<&Decision>,
    claimed_by: Option<String>,
) -> Approval {
    Approval {
        request_ref: request_ref.to_owned(),
        episode: req.episode,
        summary: req.summary,
        requester: req.requester,
        origin: req.origin,
        created_at: req.created_at,
        state: match decision {
            None => ApprovalState::Pending,
            Some(d) if d.approved => ApprovalState::Approved {
                decision_ref: d.reference.clone(),
            },
            Some(d) => ApprovalState::Denied {
                decision_ref: d.reference.clone(),
            },
        },
        decided_by: decision.map(|d| d.decided_by.clone()),
        attended: decision.and_then(|d| d.attended),
        decided_at: decision.map(|d| d.decided_at),
        claimed_by,
    }
}

/// The approval whose request is `request_ref`, or `None` when no such request exists.
///
/// # Errors
/// [`ApprovalError::Corrupt`] for an undecodable approval object; store errors.
pub fn get(conn: &Connection, request_ref: &str) -> Result<Option<Approval>, ApprovalError> {
    let Some(obj) = object_in(conn, request_ref)? else {
        return Ok(None);
    };
    if obj.meta.semantic_id != APPROVAL_REQUEST {
        return Ok(None);
    }
    let req = decode_request(request_ref, &obj.payload, &request_details(conn)?)?;
    let decisions = decisions(conn)?;
    let decision = decisions.get(request_ref);
    let claimed_by = match claim_rows::claimant_of(conn, request_ref)? {
        Some(by) => Some(by),
        None => decision_claimant(conn, decision)?,
    };
    Ok(Some(assemble(request_ref, req, decision, claimed_by)))
}

/// Every approval, oldest first (by `createdAt`, then ref), optionally only one episode's.
///
/// # Errors
/// As [`get`].
pub fn list(conn: &Connection, episode: Option<&str>) -> Result<Vec<Approval>, ApprovalError> {
    let decisions = decisions(conn)?;
    let claims = claims(conn)?;
    let details = request_details(conn)?;
    let mut out = Vec::new();
    for (reference, payload) in by_semantic_id(conn, APPROVAL_REQUEST)? {
        let req = decode_request(&reference, &payload, &details)?;
        if episode.is_some_and(|ep| ep != req.episode) {
            continue;
        }
        let claimed = match claims.get(&reference) {
            Some(by) => Some(by.clone()),
            None => decision_claimant(conn, decisions.get(&reference))?,
        };
        out.push(assemble(
            &reference,
            req,
            decisions.get(&reference),
            claimed,
        ));
    }
    out.sort_by(|a, b| {
        a.created_at
            .cmp(&b.created_at)
            .then_with(|| a.request_ref.cmp(&b.request_ref))
    });
    Ok(out)
}

/// Appends one head to the approvals registry chain (compare-and-set on the head), in the
/// reference's shape: `{"previousHead","requestRef","decisionRef"}` with `""` for none.
fn append_registry(
    conn: &Connection,
    request_ref: &str,
    decision_ref: Option<&str>,
) -> Result<(), ApprovalError> {
    let prev = registry_head_in(conn, APPROVALS_REGISTRY)?;
    let payload = Obj::new()
        .str("previousHead", prev.as_deref().unwrap_or(""))
        .str("requestRef", request_ref)
        .str("decisionRef", decision_ref.unwrap_or(""))
        .finish();
    let obj = Object::new(APPROVALS_REGISTRY, PROVENANCE, payload);
    put_object(conn, &obj)?;
    cas_registry_head(conn, APPROVALS_REGISTRY, prev.as_deref(), &obj.meta.hash)?;
    Ok(())
}

/// Writes a new pending request (the reference-shaped request, `world`'s detail and the
/// registry head) inside the caller's transaction; returns the request's ref. Opening the same
/// request again (same fields and origin) is a no-op returning the same ref.
///
/// # Errors
/// [`ApprovalError::Invalid`] for a bad summary, requester, scope or episode, or when another
/// request already has the same reference fields; store errors.
pub fn open_request(conn: &Connection, req: &NewRequest<'_>) -> Result<String, ApprovalError> {
    crate::authority::session::check_episode(req.episode)
        .map_err(|e| ApprovalError::Invalid(e.to_string()))?;
    check_summary(req.summary)?;
    check_name("requester", req.requester)?;
    if req.origin.is_empty() || req.origin.len() > 256 {
        return Err(ApprovalError::Invalid(format!(
            "request origin {:?} must be 1..=256 bytes",
            req.origin
        )));
    }
    if req.scope.is_empty() || req.scope.len() > 256 {
        return Err(ApprovalError::Invalid(format!(
            "request scope {:?} must be 1..=256 bytes",
            req.scope
        )));
    }
    let payload = Obj::new()
        .str("effect", REQUEST_EFFECT)
        .str("scope", req.scope)
        .int("cost", req.cost)
        .str("requester", req.origin)
        .int("now", req.now)
        .finish();
    let obj = Object::new(APPROVAL_REQUEST, PROVENANCE, payload);
    let detail = Obj::new()
        .str("requestRef", &obj.meta.hash)
        .str("episodeId", req.episode)
        .str("summary", req.summary)
        .str("requestedBy", req.requester)
        .str("origin", req.origin)
        .finish();
    let detail = Object::new(REQUEST_DETAIL, DETAIL_PROVENANCE, detail);
    if object_in(conn, &obj.meta.hash)?.is_some() {
        if object_in(conn, &detail.meta.hash)?.is_some() {
            return Ok(obj.meta.hash);
        }
        return Err(ApprovalError::Invalid(format!(
            "approval request {} already exists with the same effect, scope, cost, requester and time but other details",
            obj.meta.hash
        )));
    }
    put_object(conn, &obj)?;
    put_object(conn, &detail)?;
    append_registry(conn, &obj.meta.hash, None)?;
    Ok(obj.meta.hash)
}

/// Writes the decision for a pending request inside the caller's transaction (and, when
/// approved and `claim_for` is given, the claim for that intent); returns the decision ref.
///
/// # Errors
/// [`ApprovalError::NotFound`], [`ApprovalError::AlreadyDecided`], [`ApprovalError::Invalid`]
/// for a bad decider name, the claim errors of [`claim`]; store errors.
pub fn decide(
    conn: &Connection,
    request_ref: &str,
    decision: &NewDecision<'_>,
    claim_for: Option<&str>,
) -> Result<String, ApprovalError> {
    check_name("decided-by", decision.decided_by)?;
    let current =
        get(conn, request_ref)?.ok_or_else(|| ApprovalError::NotFound(request_ref.to_owned()))?;
    if let Some(d) = current.state.decision_ref() {
        return Err(ApprovalError::AlreadyDecided {
            request: request_ref.to_owned(),
            state: current.state.name(),
            decision: d.to_owned(),
        });
    }
    let payload = Obj::new()
        .str("requestRef", request_ref)
        .str(
            "decision",
            if decision.approved { "approve" } else { "deny" },
        )
        .str("decidedBy", decision.decided_by)
        .int("now", decision.now)
        .finish();
    let obj = Object::new(APPROVAL_DECISION, PROVENANCE, payload);
    let detail = Obj::new()
        .str("decisionRef", &obj.meta.hash)
        .bool("attended", decision.attended)
        .finish();
    put_object(conn, &obj)?;
    put_object(
        conn,
        &Object::new(DECISION_DETAIL, DETAIL_PROVENANCE, detail),
    )?;
    append_registry(conn, request_ref, Some(&obj.meta.hash))?;
    if let (true, Some(intent)) = (decision.approved, claim_for) {
        insert_claim(conn, &obj.meta.hash, request_ref, intent)?;
    }
    Ok(obj.meta.hash)
}

fn insert_claim(
    conn: &Connection,
    decision_ref: &str,
    request_ref: &str,
    intent: &str,
) -> Result<(), ApprovalError> {
    let held = claim_rows::claimed_by_intent(conn, intent)?;
    if held.is_some_and(|r| r != request_ref) {
        return Err(ApprovalError::IntentHasClaim(intent.to_owned()));
    }
    claim_rows::insert_claim(
        conn,
        &ClaimRow {
            approval_ref: decision_ref.to_owned(),
            request_ref: request_ref.to_owned(),
            invocation_id: intent.to_owned(),
        },
    )?;
    Ok(())
}

/// Claims an approved request for the effect intent `intent` inside the caller's transaction.
/// Claiming again for the same intent is a no-op.
///
/// # Errors
/// [`ApprovalError::NotFound`], [`ApprovalError::NotApproved`],
/// [`ApprovalError::AlreadyConsumed`], [`ApprovalError::IntentHasClaim`]; store errors.
pub fn claim(conn: &Connection, request_ref: &str, intent: &str) -> Result<(), ApprovalError> {
    let current =
        get(conn, request_ref)?.ok_or_else(|| ApprovalError::NotFound(request_ref.to_owned()))?;
    match &current.state {
        ApprovalState::Approved { decision_ref } => match current.claimed_by {
            Some(by) if by == intent => Ok(()),
            Some(by) => Err(ApprovalError::AlreadyConsumed {
                request: request_ref.to_owned(),
                by,
            }),
            None => insert_claim(conn, decision_ref, request_ref, intent),
        },
        other => Err(ApprovalError::NotApproved {
            request: request_ref.to_owned(),
            state: other.name(),
        }),
    }
}

/// [`ApprovalStore`] over a store file, for the handlers of a process that holds the writer
/// lock: each call is one `BEGIN IMMEDIATE` transaction on a companion connection
/// ([`Store::companion`]), so a decision or claim is durable before the handler returns and
/// the broker writes the effect's outcome.
pub struct StoreApprovals {
    conn: Mutex<Connection>,
}

impl StoreApprovals {
    /// Approvals over the store `store` holds the writer lock for.
    ///
    /// # Errors
    /// [`StoreError::ReadOnly`] when `store` is a read-only or in-memory handle; SQLite errors
    /// opening the companion connection.
    pub fn for_writer(store: &Store) -> Result<StoreApprovals, StoreError> {
        Ok(StoreApprovals {
            conn: Mutex::new(store.companion()?),
        })
    }

    fn with_tx<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, ApprovalError>,
    ) -> Result<T, ApprovalError> {
        let mut conn = self.conn.lock().map_err(|_| ApprovalError::Poisoned)?;
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(ApprovalError::Transaction)?;
        let value = f(&tx)?;
        tx.commit().map_err(ApprovalError::Transaction)?;
        Ok(value)
    }
}

impl ApprovalStore for StoreApprovals {
    fn open_request(
        &self,
        episode: &str,
        summary: &str,
        origin: &str,
        scope: &str,
        cost: i64,
        now: i64,
    ) -> Result<String, ApprovalError> {
        let requester = format!("episode:{episode}");
        self.with_tx(|tx| {
            open_request(
                tx,
                &NewRequest {
                    scope,
                    cost,
                    episode,
                    summary,
                    requester: &requester,
                    origin,
                    now,
                },
            )
        })
    }

    fn view(&self, request_ref: &str) -> Result<Option<ApprovalView>, ApprovalError> {
        self.with_tx(|tx| Ok(get(tx, request_ref)?.map(|a| a.view())))
    }

    fn decide(
        &self,
        request_ref: &str,
        approved: bool,
        decided_by: &str,
        claim_for: Option<&str>,
        now: i64,
    ) -> Result<String, ApprovalError> {
        self.with_tx(|tx| {
            decide(
                tx,
                request_ref,
                &NewDecision {
                    approved,
                    decided_by,
                    attended: true,
                    now,
                },
                claim_for,
            )
        })
    }

    fn claim(&self, request_ref: &str, intent_id: &str) -> Result<(), ApprovalError> {
        self.with_tx(|tx| claim(tx, request_ref, intent_id))
    }
}

/// A publish approval to mint (`world package approve`): the reference's request and decision
/// pair, with `world`'s details, in the caller's transaction.
#[derive(Clone, Debug)]
pub struct PublishMint<'a> {
    /// The approval scope (`registry:…#effect=Registry.Publish&…`): the request's `scope`.
    pub scope: &'a str,
    /// The request's cost: one publish unit.
    pub cost: i64,
    /// Who asks (the request's `requester`).
    pub requester: &'a str,
    /// Who decides (the decision's `decidedBy`).
    pub decided_by: &'a str,
    /// The episode the publish will be journaled in (the detail's `episodeId`).
    pub episode: &'a str,
    /// What the approver was shown (the detail's `summary`).
    pub summary: &'a str,
    /// Unix seconds: the request's and the decision's `now`.
    pub now: i64,
}

/// Writes a decided publish approval: the request `{"effect":"Human.Approve","scope","cost",
/// "requester","now"}` and its head, the decision `{"requestRef","decision":"approve",
/// "decidedBy","now"}` and its head (each head `{"previousHead","requestRef","decisionRef"}`),
/// plus `world`'s request and decision details (attended). Returns `(request_ref,
/// decision_ref)`; the decision ref is the approval a publish names.
///
/// # Errors
/// [`ApprovalError::Invalid`] for a bad name, episode, summary or scope, or a request that
/// already exists; store errors.
pub fn mint_publish(
    conn: &Connection,
    m: &PublishMint<'_>,
) -> Result<(String, String), ApprovalError> {
    crate::authority::session::check_episode(m.episode)
        .map_err(|e| ApprovalError::Invalid(e.to_string()))?;
    check_summary(m.summary)?;
    check_name("requester", m.requester)?;
    check_name("decided-by", m.decided_by)?;
    if m.scope.is_empty() || m.scope.len() > 4096 {
        return Err(ApprovalError::Invalid(format!(
            "approval scope must be 1..=4096 bytes, got {}",
            m.scope.len()
        )));
    }
    let payload = Obj::new()
        .str("effect", REQUEST_EFFECT)
        .str("scope", m.scope)
        .int("cost", m.cost)
        .str("requester", m.requester)
        .int("now", m.now)
        .finish();
    let request = Object::new(APPROVAL_REQUEST, PROVENANCE, payload);
    if object_in(conn, &request.meta.hash)?.is_some() {
        return Err(ApprovalError::Invalid(format!(
            "approval request {} already exists (the same scope, requester and time); mint at a later time",
            request.meta.hash
        )));
    }
    let detail = Obj::new()
        .str("requestRef", &request.meta.hash)
        .str("episodeId", m.episode)
        .str("summary", m.summary)
        .str("requestedBy", m.requester)
        .str("origin", "world package approve")
        .finish();
    put_object(conn, &request)?;
    put_object(
        conn,
        &Object::new(REQUEST_DETAIL, DETAIL_PROVENANCE, detail),
    )?;
    append_registry(conn, &request.meta.hash, None)?;
    let decision = decide(
        conn,
        &request.meta.hash,
        &NewDecision {
            approved: true,
            decided_by: m.decided_by,
            attended: true,
            now: m.now,
        },
        None,
    )?;
    Ok((request.meta.hash, decision))
}

/// A reference-shaped approval request, decoded strictly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReferenceRequest {
    /// The effect that minted the request (`Human.Approve`).
    pub effect: String,
    /// The scope it stamps.
    pub scope: String,
    /// The cost it approves.
    pub cost: i64,
    /// Who asked.
    pub requester: String,
    /// Unix seconds.
    pub now: i64,
}

/// A reference-shaped approval decision, decoded strictly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReferenceDecision {
    /// The request it decides.
    pub request_ref: String,
    /// `approve` or `deny`.
    pub decision: String,
    /// Who decided.
    pub decided_by: String,
    /// Unix seconds.
    pub now: i64,
}

/// Decodes a `world/approval-request/v1` payload in the reference's layout (exactly its five
/// keys).
///
/// # Errors
/// [`ApprovalError::Corrupt`].
pub fn reference_request(
    reference: &str,
    payload: &[u8],
) -> Result<ReferenceRequest, ApprovalError> {
    let w = "request";
    let m = exact_object(reference, w, payload, &REQUEST_KEYS)?;
    Ok(ReferenceRequest {
        effect: str_of(reference, w, &m, "effect")?,
        scope: str_of(reference, w, &m, "scope")?,
        cost: int_of(reference, w, &m, "cost")?,
        requester: str_of(reference, w, &m, "requester")?,
        now: int_of(reference, w, &m, "now")?,
    })
}

/// Decodes a `world/approval-decision/v1` payload in the reference's layout (exactly its four
/// keys).
///
/// # Errors
/// [`ApprovalError::Corrupt`].
pub fn reference_decision(
    reference: &str,
    payload: &[u8],
) -> Result<ReferenceDecision, ApprovalError> {
    let w = "decision";
    let m = exact_object(reference, w, payload, &DECISION_KEYS)?;
    Ok(ReferenceDecision {
        request_ref: str_of(reference, w, &m, "requestRef")?,
        decision: str_of(reference, w, &m, "decision")?,
        decided_by: str_of(reference, w, &m, "decidedBy")?,
        now: int_of(reference, w, &m, "now")?,
    })
}

/// Inserts the claim row of a `Registry.Publish` intent in the caller's transaction, as the
/// reference's `AppendClaimedEffectIntent` does: `(approval_ref = the decision, request_ref =
/// the effect's request object, invocation_id = the intent)`.
///
/// # Errors
/// [`ApprovalError::AlreadyConsumed`] when the decision is claimed already;
/// [`ApprovalError::IntentHasClaim`]; store errors.
pub fn claim_for_effect(
    conn: &Connection,
    decision_ref: &str,
    effect_request_ref: &str,
    intent: &str,
) -> Result<(), ApprovalError> {
    if let Some(by) = claim_rows::claimant_of_decision(conn, decision_ref)? {
        return Err(ApprovalError::AlreadyConsumed {
            request: decision_ref.to_owned(),
            by,
        });
    }
    if claim_rows::claimed_by_intent(conn, intent)?.is_some() {
        return Err(ApprovalError::IntentHasClaim(intent.to_owned()));
    }
    claim_rows::insert_claim(
        conn,
        &ClaimRow {
            approval_ref: decision_ref.to_owned(),
            request_ref: effect_request_ref.to_owned(),
            invocation_id: intent.to_owned(),
        },
    )?;
    Ok(())
}
