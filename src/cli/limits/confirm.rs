//! What an attended limits act shows and asks: the change in numbers, and the phrase the
//! human types (limits.md §5 "Actor facts in world").

use super::*;

/// The phrase a human types to confirm `command` (limits.md §5 "Actor facts in world").
pub(super) fn phrase(command: &Command) -> Result<String, CliError> {
    let hex12 = |r: &HashRef| -> String {
        let s = r.to_string();
        s.strip_prefix("sha256:")
            .unwrap_or(&s)
            .chars()
            .take(12)
            .collect()
    };
    match command {
        Command::Init { config: raw } => {
            let cfg = Config::parse(raw).map_err(|e| CliError::failed("limits init", e))?;
            let r = config::config_ref(raw).map_err(|e| CliError::failed("limits init", e))?;
            Ok(format!("init {} {}", cfg.ledger_id, hex12(&r)))
        }
        Command::Adjust { scope_id, .. } => {
            let r = command
                .change_ref()
                .ok_or_else(|| CliError::failed("limits adjust", "no change ref"))?;
            Ok(format!("adjust {scope_id} {}", hex12(&r)))
        }
        Command::Reconcile { attempt_id, .. } => Ok(format!("reconcile {attempt_id}")),
        Command::Reserve { attempt_id, .. }
        | Command::Dispatch { attempt_id }
        | Command::Settle { attempt_id, .. }
        | Command::Release { attempt_id, .. } => Ok(format!("{} {attempt_id}", command.name())),
        Command::Stop { scope_id, .. } => Ok(format!("stop {scope_id}")),
    }
}

/// The effective bound of `kind` for scope `id` in a config: its own, or the nearest
/// ancestor's (null bounds inherit, limits.md §3), with the ancestor's id when inherited.
fn config_bound<'a>(
    c: &'a Config,
    id: &'a str,
    kind: LimitKind,
) -> (Option<Amount>, Option<&'a str>) {
    let mut at = Some(id);
    let mut inherited = None;
    let mut hops = 0;
    while let (Some(sid), true) = (at, hops <= c.scopes.len()) {
        let Some(sc) = c.scopes.iter().find(|s| s.scope_id == sid) else {
            break;
        };
        if let Some(a) = sc.limits.get(kind) {
            return (Some(a), inherited);
        }
        at = sc.parent_id.as_deref();
        inherited = at;
        hops += 1;
    }
    (None, None)
}

/// A bound for people: `cost≤100`, `cost≤100 (inherited from wo)`, `cost unbounded`.
fn bound_text(kind: LimitKind, bound: Option<Amount>, from: Option<&str>) -> String {
    match (bound, from) {
        (Some(a), Some(p)) => format!("{}≤{a} (inherited from {p})", kind.as_str()),
        (Some(a), None) => format!("{}≤{a}", kind.as_str()),
        (None, _) => format!("{} unbounded", kind.as_str()),
    }
}

/// What the human is asked to confirm, shown above the phrase: every number being approved.
/// `init` lists each scope's bounds (an inherited bound named as inherited, with its value);
/// `adjust` each changed bound as `before → after` (effective bounds at `report`'s time);
/// `reconcile` the attempt's reserved amount, the actual cost and the evidence hash. `report`
/// is the ledger's report just before asking (`None` when it could not be read).
pub(super) fn describe(
    command: &Command,
    ledger: &str,
    report: Option<&limits::report::Report>,
) -> String {
    match command {
        Command::Init { config } => describe_init(config, ledger),
        Command::Adjust {
            scope_id,
            limits,
            resume,
            evidence_ref,
        } => describe_adjust(
            scope_id,
            limits,
            *resume,
            evidence_ref.as_deref(),
            ledger,
            report,
        ),
        Command::Reconcile {
            attempt_id,
            actual_cost,
            evidence_ref,
        } => describe_reconcile(
            attempt_id,
            *actual_cost,
            evidence_ref.as_deref(),
            ledger,
            report,
        ),
        other => format!("{} in the limits ledger in {ledger}", other.name()),
    }
}

/// [`describe`] of `init`: the config and each scope's bounds and dependencies.
pub(super) fn describe_init(config: &[u8], ledger: &str) -> String {
    match config::Config::parse(config) {
        Ok(c) => {
            let mut text = format!(
            "load config {} (ledger {}, unit {}) into the limits ledger in {ledger}, with {} scope(s):",
            c.config_ref,
            c.ledger_id,
            c.unit,
            c.scopes.len()
        );
            for sc in &c.scopes {
                let bounds: Vec<String> = LimitKind::ALL
                    .iter()
                    .map(|k| {
                        let (b, from) = config_bound(&c, &sc.scope_id, *k);
                        bound_text(*k, b, from)
                    })
                    .collect();
                text.push_str(&format!(
                    "\n  {} {}{}: {}{}",
                    sc.kind.as_str(),
                    sc.scope_id,
                    sc.parent_id
                        .as_deref()
                        .map(|p| format!(" (under {p})"))
                        .unwrap_or_default(),
                    bounds.join(", "),
                    if sc.depends_on.is_empty() {
                        String::new()
                    } else {
                        format!("; waits for {}", sc.depends_on.join(", "))
                    }
                ));
            }
            text
        }
        Err(_) => format!("load this config into the limits ledger in {ledger}"),
    }
}

/// [`describe`] of `adjust`: each changed bound as `before → after`, a lifted stop, the
/// evidence.
pub(super) fn describe_adjust(
    scope_id: &str,
    limits: &BoundsPatch,
    resume: bool,
    evidence_ref: Option<&str>,
    ledger: &str,
    report: Option<&limits::report::Report>,
) -> String {
    let before = report.and_then(|r| r.scopes.iter().find(|s| s.scope_id == scope_id));
    let show = |a: Option<Amount>| a.map_or("unbounded".to_string(), |a| a.to_string());
    let mut parts: Vec<String> = LimitKind::ALL
        .iter()
        .filter_map(|k| {
            limits.get(*k).map(|v| {
                let was = match before {
                    Some(s) => show(s.bounds.get(*k)),
                    None => "?".to_string(),
                };
                let now = match v {
                    Some(a) => a.to_string(),
                    None => "null (inherit)".to_string(),
                };
                format!("{} {was} → {now}", k.as_str())
            })
        })
        .collect();
    if resume {
        parts.push(match before {
            Some(s) if s.stopped => "resume (lift the stop)".into(),
            _ => "resume".into(),
        });
    }
    format!(
        "change scope {scope_id} in the limits ledger in {ledger}:\n  {}\n  evidence {}",
        parts.join("\n  "),
        evidence_ref.unwrap_or("(none)")
    )
}

/// [`describe`] of `reconcile`: the attempt's scope, state and reserved amount against the
/// actual cost, and the evidence.
pub(super) fn describe_reconcile(
    attempt_id: &str,
    actual_cost: Amount,
    evidence_ref: Option<&str>,
    ledger: &str,
    report: Option<&limits::report::Report>,
) -> String {
    let held = report.and_then(|r| {
        r.unknown
            .iter()
            .find(|a| a.attempt_id == attempt_id)
            .map(|a| (a.scope_id.clone(), a.state, a.amount))
            .or_else(|| {
                r.outstanding
                    .iter()
                    .find(|a| a.attempt_id == attempt_id)
                    .map(|a| (a.scope_id.clone(), a.state, a.amount))
            })
    });
    let reserved = match &held {
        Some((scope, state, amount)) => {
            let freed = amount.get().saturating_sub(actual_cost.get());
            format!(
                "\n  scope {scope}, state {state}\n  reserved {amount} → actual {actual_cost} (frees {freed})"
            )
        }
        None => format!("\n  actual {actual_cost}"),
    };
    format!(
        "settle attempt {attempt_id} in the limits ledger in {ledger}:{reserved}\n  evidence {}",
        evidence_ref.unwrap_or("(none)")
    )
}
