//! `world mission report M`: one mission's budget, runs, grants, attempts and violations.

use super::*;

pub(super) fn read_state(
    ctx: &Context,
    ledger: Option<&str>,
    mission: &str,
) -> Result<State, CliError> {
    let target = open_read(ctx, ledger, "mission report")?;
    target.with(|m| m.state(mission)).map_err(|e| match e {
        mstore::Error::Rejected(r) => {
            CliError::failed("mission", r.human()).with_code(r.code.as_str())
        }
        e => store_err("mission", e),
    })
}

/// The report object (`world mission report --json`): the ms members (`now`, `deadline`,
/// `startedAt`, a violation's `at`) are decimal strings, each followed by its RFC 3339 UTC
/// form under the same name plus `Utc` (DEC-LEDGER-CLI-2).
pub fn report_value(s: &State, now: Amount) -> Value {
    let c = &s.contract;
    let mut grants = Vec::new();
    for (id, g) in &s.grants {
        let live = now >= g.not_before && now < g.expires_at && !g.revoked;
        grants.push(json!({
            "grantId": id, "parentId": g.parent_id, "subject": g.subject, "used": g.used.to_string(),
            "limit": g.limit.to_string(), "remaining": g.limit.saturating_sub(g.used).to_string(),
            "depth": g.depth.to_string(), "canDelegate": g.can_delegate, "revoked": g.revoked, "live": live,
        }));
    }
    let pick = |want: &[AttemptStatus]| -> Vec<Value> {
        s.attempts
            .iter()
            .filter(|(_, a)| want.contains(&a.status))
            .map(|(id, a)| {
                let mut v = json!({"attemptId": id, "operationId": a.operation_id, "runId": a.run_id, "grantId": a.grant_id,
                    "status": a.status.as_str(), "amount": a.amount.to_string(), "capability": a.capability, "resource": a.resource});
                // An attempt a World store paired through a standalone ledger: which store and
                // which effect intent (episode, ordinal) it belongs to (issue 18).
                if let Some((store, intent)) = mission::pairing::parse_attempt_id(id) {
                    v["store"] = store.into();
                    v["intentId"] = intent.into();
                }
                v
            })
            .collect()
    };
    let counts = |st: AttemptStatus| s.attempts.values().filter(|a| a.status == st).count();
    json!({
        "missionId": s.mission_id,
        "contractRef": s.contract_ref,
        "revision": s.revision.to_string(),
        "now": now.to_string(),
        "nowUtc": rfc3339_ms(now.0),
        "deadline": c.deadline.to_string(),
        "deadlineUtc": rfc3339_ms(c.deadline.0),
        "deadlinePassed": now >= c.deadline,
        "budget": s.budget.to_string(),
        "reserved": s.reserved.to_string(),
        "settled": s.settled.to_string(),
        "remaining": s.remaining().to_string(),
        "runs": s.runs.iter().map(|(id, r)| json!({"runId": id, "status": r.status, "startedAt": r.started_at.to_string(), "startedAtUtc": rfc3339_ms(r.started_at.0)})).collect::<Vec<_>>(),
        "grants": grants,
        "outstanding": pick(&[AttemptStatus::Admitted, AttemptStatus::Dispatched]),
        "unknown": pick(&[AttemptStatus::Unknown]),
        "attempts": {"settled": counts(AttemptStatus::Settled), "released": counts(AttemptStatus::Released)},
        "violations": s.violations.iter().map(|x| {
            let mut v = serde_json::to_value(x).unwrap_or(Value::Null);
            v["atUtc"] = rfc3339_ms(x.at.0).into();
            v
        }).collect::<Vec<_>>(),
    })
}

/// `world mission report M`: budget, reserved, settled, remaining; runs; the grant tree;
/// outstanding and UNKNOWN attempts; violations (`--json`: [`report_value`]).
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    ledger: Option<&str>,
    mission: &str,
    now: Option<&str>,
) -> Result<Exit, CliError> {
    let now = parse_now(now)?;
    let s = read_state(ctx, ledger, mission)?;
    let v = report_value(&s, now);
    if out.json {
        out.json_line(&v)?;
        return Ok(Exit::Success);
    }
    out.line(format!(
        "mission {}  contract {}  revision {}",
        s.mission_id,
        crate::cli::output::short(&s.contract_ref),
        s.revision
    ))?;
    out.line(format!(
        "budget {}  reserved {}  settled {}  remaining {}  deadline {}{}",
        s.budget,
        s.reserved,
        s.settled,
        s.remaining(),
        rfc3339_ms(s.contract.deadline.0),
        if now >= s.contract.deadline {
            " (passed)"
        } else {
            ""
        }
    ))?;
    for (id, r) in &s.runs {
        out.line(format!(
            "run {id}  {}  started {}",
            if r.status == mission::RunStatus::Active {
                "ACTIVE"
            } else {
                "COMPLETED"
            },
            rfc3339_ms(r.started_at.0)
        ))?;
    }
    out.line("grants:")?;
    tree(out, &s, None, 0)?;
    for key in ["outstanding", "unknown"] {
        let list = v[key].as_array().cloned().unwrap_or_default();
        out.line(format!("{key}: {}", list.len()))?;
        for a in list {
            let paired = match (a["store"].as_str(), a["intentId"].as_str()) {
                (Some(s), Some(i)) => format!(", store {s}, effect {i}"),
                _ => String::new(),
            };
            out.line(format!(
                "  {} {} amount {} (operation {}, grant {}{paired})",
                a["attemptId"].as_str().unwrap_or(""),
                a["status"].as_str().unwrap_or(""),
                a["amount"].as_str().unwrap_or(""),
                a["operationId"].as_str().unwrap_or(""),
                a["grantId"].as_str().unwrap_or("")
            ))?;
        }
    }
    out.line(format!("violations: {}", s.violations.len()))?;
    for x in &s.violations {
        out.line(format!(
            "  {} {}: admitted {}, claimed {} by {} at {}",
            x.attempt_id,
            x.command,
            x.admitted,
            x.claimed,
            x.actor_id,
            rfc3339_ms(x.at.0)
        ))?;
    }
    Ok(Exit::Success)
}

/// The grant tree below `parent`, roots first, children indented by `depth`.
fn tree(out: &mut Output, s: &State, parent: Option<&str>, depth: usize) -> std::io::Result<()> {
    for (id, g) in s
        .grants
        .iter()
        .filter(|(_, g)| g.parent_id.as_deref() == parent)
    {
        out.line(format!(
            "{}grant {id}  subject {}  used {}/{}{}",
            "  ".repeat(depth + 1),
            g.subject,
            g.used,
            g.limit,
            if g.revoked { "  REVOKED" } else { "" }
        ))?;
        tree(out, s, Some(id), depth + 1)?;
    }
    Ok(())
}
