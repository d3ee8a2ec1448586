//! Mission commands (missions.md §4): the seed's `{"type": …}` JSON, parsed strictly, and
//! their canonical TR-CJSON-1 bytes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::encoding::trcjson::{self, CValue};
use crate::encoding::HashRef;
use crate::ledger::Amount;

use super::codes::{Code, Rejection};
use super::contract::PROFILE;
use super::parse::{self, Fields};

/// A settlement outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Outcome {
    /// The effect happened; `actualCost` is its cost.
    Succeeded,
    /// The effect failed; `actualCost` is what it still cost.
    Failed,
    /// Nobody knows: the full reservation is kept until a HUMAN reconciles.
    Unknown,
}

impl Outcome {
    /// `SUCCEEDED`, `FAILED` or `UNKNOWN`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Succeeded => "SUCCEEDED",
            Outcome::Failed => "FAILED",
            Outcome::Unknown => "UNKNOWN",
        }
    }

    /// Parse `SUCCEEDED|FAILED|UNKNOWN` (exact case).
    pub fn parse(text: &str) -> Option<Outcome> {
        match text {
            "SUCCEEDED" => Some(Outcome::Succeeded),
            "FAILED" => Some(Outcome::Failed),
            "UNKNOWN" => Some(Outcome::Unknown),
            _ => None,
        }
    }
}

/// The grant object of a `grant` command (§4.1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrantSpec {
    /// Grant id.
    pub id: String,
    /// Who may act under it.
    pub subject: String,
    /// Always `finite-v1`.
    pub profile: String,
    /// Capabilities.
    pub actions: Vec<String>,
    /// Resources.
    pub resources: Vec<String>,
    /// Live from (ms, inclusive).
    pub not_before: Amount,
    /// Live until (ms, exclusive).
    pub expires_at: Amount,
    /// Ceiling on the chain's share of reserved + settled.
    pub limit: Amount,
    /// Whether the subject may delegate.
    pub can_delegate: bool,
    /// Remaining delegation depth.
    pub depth: Amount,
}

/// The action of an `admit`: what the adapter will do at the target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Action {
    /// The capability (an action of the grant chain and the contract).
    pub capability: String,
    /// The resource.
    pub resource: String,
    /// Opaque JSON for the adapter (kept canonical; only its hash enters the state).
    pub payload: CValue,
    /// Opaque JSON preconditions the adapter enforces at the target.
    pub preconditions: CValue,
}

/// An `admit` command (§4.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Admit {
    /// The run.
    pub run_id: String,
    /// The operation (retries share it).
    pub operation_id: String,
    /// This try (unique in the mission).
    pub attempt_id: String,
    /// The grant acted under.
    pub grant_id: String,
    /// Who acts.
    pub subject: String,
    /// What is done.
    pub action: Action,
    /// Maximum exposure to reserve.
    pub amount: Amount,
    /// When the host last checked authorization (ms).
    pub authorization_checked_at: Amount,
    /// The policy decision (`ALLOW` admits).
    pub policy: String,
    /// Whether the mandatory checks passed.
    pub mandatory_checks_ok: bool,
    /// Operations that must have a SUCCEEDED attempt first (feature `graphs`).
    pub depends_on: Option<Vec<String>>,
}

/// One mission command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// A new ACTIVE run.
    StartRun {
        /// Run id.
        run_id: String,
    },
    /// A root grant (no parent) or a delegation.
    Grant {
        /// The grant.
        grant: GrantSpec,
        /// The parent, for a delegation.
        parent_id: Option<String>,
    },
    /// Reserve exposure for an attempt.
    Admit(Box<Admit>),
    /// ADMITTED → DISPATCHED, before the external call.
    Dispatch {
        /// The attempt.
        attempt_id: String,
    },
    /// Settle a DISPATCHED attempt.
    Settle {
        /// The attempt.
        attempt_id: String,
        /// The outcome.
        outcome: Outcome,
        /// Actual cost; absent exactly for UNKNOWN.
        actual_cost: Option<Amount>,
    },
    /// ADMITTED → RELEASED (the reservation returns; the attempt still counts).
    Release {
        /// The attempt.
        attempt_id: String,
    },
    /// HUMAN resolution of an UNKNOWN attempt.
    Reconcile {
        /// The attempt.
        attempt_id: String,
        /// Actual cost attested by the evidence.
        actual_cost: Amount,
        /// SUCCEEDED or FAILED.
        outcome: Outcome,
        /// `sha256:` evidence.
        evidence_ref: String,
    },
    /// HUMAN approval of an operation.
    Approve {
        /// The operation.
        operation_id: String,
        /// `sha256:` evidence.
        evidence_ref: String,
    },
    /// Stop a grant and its delegations admitting.
    Revoke {
        /// The grant.
        grant_id: String,
    },
    /// Complete a run with evidence for every criterion.
    CompleteRun {
        /// The run.
        run_id: String,
        /// Criterion name → `sha256:` evidence.
        criteria: BTreeMap<String, String>,
    },
}

fn s(v: &str) -> CValue {
    CValue::String(v.to_string())
}

fn a(v: Amount) -> CValue {
    CValue::String(v.to_string())
}

fn list(items: &[String]) -> CValue {
    CValue::Array(items.iter().map(|x| s(x)).collect())
}

fn member(k: &str, v: CValue) -> (String, CValue) {
    (k.to_string(), v)
}

impl Command {
    /// Parse one command from raw JSON bytes (the seed's `parseCommand`).
    ///
    /// # Errors
    /// `COMMAND_INVALID` naming the member; `UNSUPPORTED_PROFILE` for a grant's `profile`.
    pub fn parse(raw: &[u8]) -> Result<Command, Rejection> {
        let v = parse::object(raw, Code::CommandInvalid, "the command")?;
        Command::from_value(&v)
    }

    /// Validate an already parsed value.
    ///
    /// # Errors
    /// As [`Command::parse`].
    pub fn from_value(v: &CValue) -> Result<Command, Rejection> {
        let mut f = Fields::new(v, "", Code::CommandInvalid)?;
        let ty = f.string("type")?;
        let cmd = match ty {
            "startRun" => Command::StartRun {
                run_id: f.id("runId")?,
            },
            "grant" => {
                let parent_id = match f.opt("parentId") {
                    None => None,
                    Some(CValue::String(p)) => {
                        parse::check_id(p).map_err(|why| f.err("parentId", why))?;
                        Some(p.clone())
                    }
                    Some(other) => {
                        return Err(f.err(
                            "parentId",
                            format!("must be a string, not {}", parse::kind(other)),
                        ))
                    }
                };
                let g = f.req("grant")?;
                let grant = grant_spec(g)?;
                Command::Grant { grant, parent_id }
            }
            "admit" => Command::Admit(Box::new(admit(&mut f)?)),
            "dispatch" => Command::Dispatch {
                attempt_id: f.id("attemptId")?,
            },
            "settle" => {
                let attempt_id = f.id("attemptId")?;
                let outcome = outcome(&mut f, "outcome", true)?;
                let actual = f.opt("actualCost");
                let actual_cost = match (outcome, actual) {
                    (Outcome::Unknown, None) => None,
                    (Outcome::Unknown, Some(_)) => {
                        return Err(f.err(
                            "actualCost",
                            "must be absent for outcome UNKNOWN (the full reservation is kept)",
                        ))
                    }
                    (_, None) => return Err(f.err("actualCost", "missing member")),
                    (_, Some(v)) => Some(f.amount_of("actualCost", v)?),
                };
                Command::Settle {
                    attempt_id,
                    outcome,
                    actual_cost,
                }
            }
            "release" => Command::Release {
                attempt_id: f.id("attemptId")?,
            },
            "reconcile" => Command::Reconcile {
                attempt_id: f.id("attemptId")?,
                actual_cost: f.amount("actualCost")?,
                outcome: outcome(&mut f, "outcome", false)?,
                evidence_ref: f.evidence("evidenceRef")?,
            },
            "approve" => Command::Approve {
                operation_id: f.id("operationId")?,
                evidence_ref: f.evidence("evidenceRef")?,
            },
            "revoke" => Command::Revoke {
                grant_id: f.id("grantId")?,
            },
            "completeRun" => {
                let run_id = f.id("runId")?;
                let c = f.req("criteria")?;
                let mut cf = Fields::new(c, "criteria", Code::CommandInvalid)?;
                let names: Vec<String> = c
                    .as_object()
                    .map(|m| m.iter().map(|(k, _)| k.clone()).collect())
                    .unwrap_or_default();
                let mut criteria = BTreeMap::new();
                for n in names {
                    parse::check_name(&n).map_err(|why| cf.err(&n, why))?;
                    let r = cf.evidence(&n)?;
                    criteria.insert(n, r);
                }
                cf.finish()?;
                Command::CompleteRun { run_id, criteria }
            }
            other => {
                return Err(f.err(
                    "type",
                    format!(
                        "unknown command type {other:?} (startRun, grant, admit, dispatch, settle, release, reconcile, approve, revoke, completeRun)"
                    ),
                ))
            }
        };
        f.finish()?;
        Ok(cmd)
    }

    /// The command type (`admit`).
    pub fn name(&self) -> &'static str {
        match self {
            Command::StartRun { .. } => "startRun",
            Command::Grant { .. } => "grant",
            Command::Admit(_) => "admit",
            Command::Dispatch { .. } => "dispatch",
            Command::Settle { .. } => "settle",
            Command::Release { .. } => "release",
            Command::Reconcile { .. } => "reconcile",
            Command::Approve { .. } => "approve",
            Command::Revoke { .. } => "revoke",
            Command::CompleteRun { .. } => "completeRun",
        }
    }

    /// The attempt the command is about, if any.
    pub fn attempt_id(&self) -> Option<&str> {
        match self {
            Command::Admit(a) => Some(&a.attempt_id),
            Command::Dispatch { attempt_id }
            | Command::Settle { attempt_id, .. }
            | Command::Release { attempt_id }
            | Command::Reconcile { attempt_id, .. } => Some(attempt_id),
            _ => None,
        }
    }

    /// The command as a TR-CJSON-1 value, in the seed's JSON shape (`Command::from_value` of it
    /// gives the command back).
    pub fn to_value(&self) -> CValue {
        let mut m = vec![member("type", s(self.name()))];
        match self {
            Command::StartRun { run_id } => m.push(member("runId", s(run_id))),
            Command::Grant { grant, parent_id } => {
                if let Some(p) = parent_id {
                    m.push(member("parentId", s(p)));
                }
                m.push(member(
                    "grant",
                    CValue::object(vec![
                        member("id", s(&grant.id)),
                        member("subject", s(&grant.subject)),
                        member("profile", s(&grant.profile)),
                        member("actions", list(&grant.actions)),
                        member("resources", list(&grant.resources)),
                        member("notBefore", a(grant.not_before)),
                        member("expiresAt", a(grant.expires_at)),
                        member("limit", a(grant.limit)),
                        member("canDelegate", CValue::Bool(grant.can_delegate)),
                        member("depth", a(grant.depth)),
                    ]),
                ));
            }
            Command::Admit(x) => {
                m.extend([
                    member("runId", s(&x.run_id)),
                    member("operationId", s(&x.operation_id)),
                    member("attemptId", s(&x.attempt_id)),
                    member("grantId", s(&x.grant_id)),
                    member("subject", s(&x.subject)),
                    member(
                        "action",
                        CValue::object(vec![
                            member("capability", s(&x.action.capability)),
                            member("resource", s(&x.action.resource)),
                            member("payload", x.action.payload.clone()),
                            member("preconditions", x.action.preconditions.clone()),
                        ]),
                    ),
                    member("amount", a(x.amount)),
                    member("authorizationCheckedAt", a(x.authorization_checked_at)),
                    member("policy", s(&x.policy)),
                    member("mandatoryChecksOk", CValue::Bool(x.mandatory_checks_ok)),
                ]);
                if let Some(d) = &x.depends_on {
                    m.push(member("dependsOn", list(d)));
                }
            }
            Command::Dispatch { attempt_id } | Command::Release { attempt_id } => {
                m.push(member("attemptId", s(attempt_id)));
            }
            Command::Settle {
                attempt_id,
                outcome,
                actual_cost,
            } => {
                m.push(member("attemptId", s(attempt_id)));
                m.push(member("outcome", s(outcome.as_str())));
                if let Some(c) = actual_cost {
                    m.push(member("actualCost", a(*c)));
                }
            }
            Command::Reconcile {
                attempt_id,
                actual_cost,
                outcome,
                evidence_ref,
            } => m.extend([
                member("attemptId", s(attempt_id)),
                member("actualCost", a(*actual_cost)),
                member("outcome", s(outcome.as_str())),
                member("evidenceRef", s(evidence_ref)),
            ]),
            Command::Approve {
                operation_id,
                evidence_ref,
            } => m.extend([
                member("operationId", s(operation_id)),
                member("evidenceRef", s(evidence_ref)),
            ]),
            Command::Revoke { grant_id } => m.push(member("grantId", s(grant_id))),
            Command::CompleteRun { run_id, criteria } => {
                m.push(member("runId", s(run_id)));
                m.push(member(
                    "criteria",
                    CValue::object(criteria.iter().map(|(k, v)| member(k, s(v))).collect()),
                ));
            }
        }
        CValue::object(m)
    }

    /// The canonical TR-CJSON-1 bytes (journalled, hashed for idempotency).
    pub fn canonical(&self) -> Vec<u8> {
        trcjson::encode(&self.to_value())
    }

    /// sha256 of [`Command::canonical`].
    pub fn command_ref(&self) -> HashRef {
        HashRef::of(&self.canonical())
    }
}

fn outcome(f: &mut Fields<'_>, name: &str, unknown_ok: bool) -> Result<Outcome, Rejection> {
    let text = f.string(name)?;
    match Outcome::parse(text) {
        Some(Outcome::Unknown) if !unknown_ok => Err(f.err(
            name,
            "must be SUCCEEDED or FAILED (reconcile resolves what UNKNOWN left open)",
        )),
        Some(o) => Ok(o),
        None => Err(f.err(
            name,
            format!(
                "{text:?} is not {}",
                if unknown_ok {
                    "SUCCEEDED, FAILED or UNKNOWN"
                } else {
                    "SUCCEEDED or FAILED"
                }
            ),
        )),
    }
}

fn grant_spec(v: &CValue) -> Result<GrantSpec, Rejection> {
    let mut g = Fields::new(v, "grant", Code::CommandInvalid)?;
    let spec = GrantSpec {
        id: g.id("id")?,
        subject: g.name("subject")?,
        profile: g.string("profile")?.to_string(),
        actions: g.names("actions", true)?,
        resources: g.names("resources", true)?,
        not_before: g.amount("notBefore")?,
        expires_at: g.amount("expiresAt")?,
        limit: g.amount("limit")?,
        can_delegate: g.boolean("canDelegate")?,
        depth: g.amount("depth")?,
    };
    g.finish()?;
    if spec.profile != PROFILE {
        return Err(Rejection::new(
            Code::UnsupportedProfile,
            format!(
                "grant.profile {:?} is not supported; this world reads {PROFILE:?}",
                spec.profile
            ),
        )
        .with("member", "grant.profile"));
    }
    if spec.not_before > spec.expires_at {
        return Err(g_err(
            "grant.notBefore",
            format!(
                "notBefore {} is after expiresAt {}",
                spec.not_before, spec.expires_at
            ),
        ));
    }
    Ok(spec)
}

fn g_err(member: &'static str, why: String) -> Rejection {
    Rejection::new(Code::CommandInvalid, format!("{member}: {why}")).with("member", member)
}

fn admit(f: &mut Fields<'_>) -> Result<Admit, Rejection> {
    let run_id = f.id("runId")?;
    let operation_id = f.id("operationId")?;
    let attempt_id = f.id("attemptId")?;
    let grant_id = f.id("grantId")?;
    let subject = f.name("subject")?;
    let av = f.req("action")?;
    let mut af = Fields::new(av, "action", Code::CommandInvalid)?;
    let action = Action {
        capability: af.name("capability")?,
        resource: af.name("resource")?,
        payload: af.req("payload")?.clone(),
        preconditions: af.req("preconditions")?.clone(),
    };
    af.finish()?;
    let amount = f.amount("amount")?;
    let authorization_checked_at = f.amount("authorizationCheckedAt")?;
    let policy = f.name("policy")?;
    let mandatory_checks_ok = f.boolean("mandatoryChecksOk")?;
    let depends_on = match f.opt("dependsOn") {
        None => None,
        Some(v) => Some(f.ids_of("dependsOn", v)?),
    };
    Ok(Admit {
        run_id,
        operation_id,
        attempt_id,
        grant_id,
        subject,
        action,
        amount,
        authorization_checked_at,
        policy,
        mandatory_checks_ok,
        depends_on,
    })
}
