//! `world limits report [--scope S] [--json] [--now MS] [--ledger FILE]` (limits.md §8):
//! read-only, never blocked by any limit. Text: a tree of scopes (each indented under its
//! parent) with usage/bound per limit, blocked state and dependents, then the outstanding and
//! unknown attempts and the open control violations. `--json`: the §8 report object.

use std::collections::HashMap;

use super::{emit, ledger_err, parse_now};
use crate::cli::output::{table, Output};
use crate::cli::{CliError, Context, Exit};
use crate::limits;
use crate::limits::config::LimitKind;
use crate::limits::report::{Report, ScopeReport};

/// Run the report.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    scope: Option<&str>,
    now: Option<&str>,
    ledger: Option<&str>,
) -> Result<Exit, CliError> {
    let now_ms = parse_now(now)?;
    let result = match ledger {
        // Never creates a ledger file: a missing one is `ledger_not_initialized`.
        Some(p) => limits::open_standalone_ledger(p).and_then(|l| l.report(now_ms, scope)),
        None => {
            let store = ctx.open_read()?;
            limits::Ledger::open_in(store.conn()).report(now_ms, scope)
        }
    };
    let report = match result {
        Ok(r) => r,
        Err(limits::Error::Rejected(v)) => return emit(out, "limits report", &v),
        Err(e) => return Err(ledger_err("limits report", e)),
    };
    if out.json {
        out.json_line(&with_times(&report))?;
    } else {
        out.bytes(render(&report, out.color).as_bytes())?;
    }
    Ok(Exit::Success)
}

/// The §8 report object with an RFC 3339 time beside each Unix-ms member (DEC-LEDGER-CLI-2):
/// `now` after `nowMs`, `dispatchedAt` after each unknown attempt's `dispatchedAtMs`, `at`
/// after each violation's `atMs`. Every §8 member keeps its name, value and place.
pub(super) fn with_times(r: &Report) -> serde_json::Value {
    use serde_json::Value;
    fn beside(v: &mut Value, ms_key: &str, key: &str) {
        let Value::Object(m) = v else { return };
        let Some(ms) = m
            .get(ms_key)
            .and_then(Value::as_str)
            .and_then(|t| t.parse::<u128>().ok())
        else {
            return;
        };
        let mut out = serde_json::Map::new();
        for (k, val) in std::mem::take(m) {
            let here = k == ms_key;
            out.insert(k, val);
            if here {
                out.insert(key.to_string(), crate::cli::output::rfc3339_ms(ms).into());
            }
        }
        *m = out;
    }
    let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
    beside(&mut v, "nowMs", "now");
    for (list, ms_key, key) in [
        ("unknown", "dispatchedAtMs", "dispatchedAt"),
        ("violations", "atMs", "at"),
    ] {
        if let Some(items) = v.get_mut(list).and_then(Value::as_array_mut) {
            for item in items {
                beside(item, ms_key, key);
            }
        }
    }
    v
}

/// `used/bound`, or `used/∞` when unbounded.
fn cell(used: crate::ledger::Amount, bound: Option<crate::ledger::Amount>) -> String {
    match bound {
        Some(b) => format!("{used}/{b}"),
        None => format!("{used}/∞"),
    }
}

/// Scopes depth-first in config order, each with its depth. A scope whose parent is not in
/// the report (the `--scope` root) is a root.
fn tree_order(scopes: &[ScopeReport]) -> Vec<(usize, &ScopeReport)> {
    let present: HashMap<&str, usize> = scopes
        .iter()
        .enumerate()
        .map(|(i, s)| (s.scope_id.as_str(), i))
        .collect();
    let mut children: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut roots = Vec::new();
    for (i, s) in scopes.iter().enumerate() {
        match s.parent_id.as_deref().and_then(|p| present.get(p)) {
            Some(&p) => children.entry(p).or_default().push(i),
            None => roots.push(i),
        }
    }
    let mut order = Vec::with_capacity(scopes.len());
    let mut stack: Vec<(usize, usize)> = roots.into_iter().rev().map(|i| (0, i)).collect();
    while let Some((depth, i)) = stack.pop() {
        if let Some(s) = scopes.get(i) {
            order.push((depth, s));
        }
        if let Some(kids) = children.get(&i) {
            stack.extend(kids.iter().rev().map(|&k| (depth + 1, k)));
        }
    }
    order
}

/// Why a scope is blocked, one reason per line: `cost_exhausted at wo`, `stopped`.
fn blocked_text(s: &ScopeReport) -> String {
    if !s.blocked {
        return if s.stopped {
            "stopped".into()
        } else {
            "no".into()
        };
    }
    s.blocked_by
        .iter()
        .map(|b| format!("{} at {}", b.code, b.scope_id))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text report.
pub(super) fn render(r: &Report, color: bool) -> String {
    let mut text = format!(
        "ledger {}  revision {}  now {}\n",
        r.ledger_id,
        r.revision,
        crate::cli::output::rfc3339_ms(r.now_ms.get())
    );
    let mut t = table(
        &[
            "SCOPE",
            "KIND",
            "COST",
            "HANDOFF",
            "ACTIVE MS",
            "ELAPSED MS",
            "ATTEMPTS",
            "BLOCKED",
            "DEPENDENTS",
        ],
        color,
    );
    for (depth, s) in tree_order(&r.scopes) {
        let u = &s.usage;
        let b = &s.bounds;
        t.add_row(vec![
            format!("{}{}", "  ".repeat(depth), s.scope_id),
            s.kind.as_str().to_string(),
            cell(u.cost, b.get(LimitKind::Cost)),
            cell(u.handoff, b.get(LimitKind::Handoff)),
            cell(u.active_ms, b.get(LimitKind::ActiveMs)),
            cell(u.elapsed_ms, b.get(LimitKind::ElapsedMs)),
            cell(u.attempts, b.get(LimitKind::Attempts)),
            blocked_text(s),
            s.dependents.join(", "),
        ]);
    }
    text.push_str(&crate::cli::output::render_table(&t));
    text.push('\n');

    text.push_str(&outstanding_section(r, color));
    text.push_str(&unknown_section(r, color));
    text.push_str(&violations_section(r, color));
    text
}

/// The report's outstanding attempts (with their store and invocation when paired).
fn outstanding_section(r: &Report, color: bool) -> String {
    let mut text = String::new();
    if r.outstanding.is_empty() {
        text.push_str("outstanding: none\n");
    } else {
        text.push_str("outstanding:\n");
        // Attempts paired with a standalone ledger also name their store and invocation.
        let paired = r.outstanding.iter().any(|a| a.store.is_some());
        let mut head = vec![
            "ATTEMPT",
            "SCOPE",
            "STATE",
            "PURPOSE",
            "AMOUNT",
            "MAX ACTIVE MS",
        ];
        if paired {
            head.extend(["STORE", "INVOCATION"]);
        }
        let mut t = table(&head, color);
        for a in &r.outstanding {
            let mut row = vec![
                a.attempt_id.clone(),
                a.scope_id.clone(),
                a.state.to_string(),
                a.purpose.as_str().to_string(),
                a.amount.to_string(),
                a.max_active_ms.to_string(),
            ];
            if paired {
                row.push(a.store.clone().unwrap_or_default());
                row.push(a.invocation.clone().unwrap_or_default());
            }
            t.add_row(row);
        }
        text.push_str(&crate::cli::output::render_table(&t));
        text.push('\n');
    }
    text
}

/// The report's UNKNOWN attempts, awaiting a human reconcile.
fn unknown_section(r: &Report, color: bool) -> String {
    let mut text = String::new();
    if r.unknown.is_empty() {
        text.push_str("unknown (awaiting reconcile): none\n");
    } else {
        text.push_str("unknown (awaiting reconcile):\n");
        let mut t = table(
            &[
                "ATTEMPT",
                "SCOPE",
                "STATE",
                "AMOUNT",
                "DISPATCHED AT",
                "ACCRUED MS",
            ],
            color,
        );
        for a in &r.unknown {
            t.add_row(vec![
                a.attempt_id.clone(),
                a.scope_id.clone(),
                a.state.to_string(),
                a.amount.to_string(),
                crate::cli::output::rfc3339_ms(a.dispatched_at_ms.get()),
                a.accrued_active_ms.to_string(),
            ]);
        }
        text.push_str(&crate::cli::output::render_table(&t));
        text.push('\n');
    }
    text
}

/// The report's exposure violations.
fn violations_section(r: &Report, color: bool) -> String {
    let mut text = String::new();
    if r.violations.is_empty() {
        text.push_str("violations: none\n");
    } else {
        text.push_str("violations (exposure_exceeded, until a human reconciles):\n");
        let mut t = table(
            &["ATTEMPT", "SCOPE", "ADMITTED", "CLAIMED", "ACTOR", "AT"],
            color,
        );
        for v in &r.violations {
            t.add_row(vec![
                v.attempt_id.clone(),
                v.scope_id.clone(),
                v.admitted.to_string(),
                v.claimed.to_string(),
                format!("{} {}", v.actor_kind, v.actor_id),
                crate::cli::output::rfc3339_ms(v.at_ms.get()),
            ]);
        }
        text.push_str(&crate::cli::output::render_table(&t));
        text.push('\n');
    }
    text
}
