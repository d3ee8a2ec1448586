//! `report` (limits.md §8): deterministic, from durable state only, always available.

use super::codes::{Code, Verdict};
use super::config::{Bounds, LimitKind, ScopeKind};
use super::ledger::{
    attempt_from_raw, live_accrual, load_meta, num, raw_attempt, raw_scope, scope_from_raw,
    ScopeRow, State, ATTEMPT_COLS, SCOPE_COLS,
};
use super::{Error, Purpose};
use crate::ledger::amount::Amount;
use crate::ledger::db::Db;
use serde::Serialize;
use std::collections::{HashMap, HashSet, VecDeque};

/// The `schema` value of a report.
pub const REPORT_SCHEMA: &str = "world/v1/limits-report";

/// The report (limits.md §8). Every number is a decimal string; time-based usage is at `nowMs`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Always [`REPORT_SCHEMA`].
    pub schema: &'static str,
    /// The config's `ledgerId`.
    pub ledger_id: String,
    /// The ledger revision.
    pub revision: Amount,
    /// The clock the report was computed at, Unix ms.
    pub now_ms: Amount,
    /// Scopes in config order.
    pub scopes: Vec<ScopeReport>,
    /// RESERVED, DISPATCHED and UNKNOWN attempts, in reservation order.
    pub outstanding: Vec<OutstandingAttempt>,
    /// UNKNOWN attempts and paired DISPATCHED attempts awaiting an outcome or reconciliation.
    pub unknown: Vec<UnknownAttempt>,
    /// Control violations not yet resolved by a human `reconcile`.
    pub violations: Vec<ViolationReport>,
}

/// One scope of the report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScopeReport {
    /// `scopeId`.
    pub scope_id: String,
    /// `kind`.
    pub kind: ScopeKind,
    /// `parentId` (null for the root).
    pub parent_id: Option<String>,
    /// Effective bounds (null = unbounded).
    pub bounds: Bounds,
    /// Usage over the scope's subtree at `nowMs`.
    pub usage: Usage,
    /// The scope itself is stopped.
    pub stopped: bool,
    /// No new work can be admitted here (`blockedBy` is not empty).
    pub blocked: bool,
    /// Why, kind by kind (stop, dependency, elapsed, attempts, cost, active), target to root.
    pub blocked_by: Vec<BlockEntry>,
    /// For a blocked scope: scopes outside its subtree whose admission it gates through
    /// `dependsOn` (directly or through their ancestors), in config order.
    pub dependents: Vec<String>,
}

/// Usage values (limits.md §4 formulas).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Cost units: settled cost plus unsettled exposure.
    pub cost: Amount,
    /// Cost units: the part of `cost` from HANDOFF attempts.
    pub handoff: Amount,
    /// Milliseconds of active time (reserved maxima, live accrual, settled durations).
    pub active_ms: Amount,
    /// Milliseconds since the scope start, frozen while stopped.
    pub elapsed_ms: Amount,
    /// Successful reservations.
    pub attempts: Amount,
}

/// One reason a scope is blocked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockEntry {
    /// The scope whose limit (or stop, or blocked dependency) blocks.
    pub scope_id: String,
    /// The exhausted limit; null for a stop or a blocked dependency.
    pub limit: Option<LimitKind>,
    /// `scope_stopped`, `dependency_blocked`, `elapsed_ms_exhausted`, `attempts_exhausted`,
    /// `cost_exhausted` or `active_ms_exhausted`.
    pub code: Code,
}

/// An attempt that still holds exposure.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutstandingAttempt {
    /// `attemptId`.
    pub attempt_id: String,
    /// `scopeId`.
    pub scope_id: String,
    /// RESERVED, DISPATCHED or UNKNOWN.
    pub state: &'static str,
    /// ORDINARY or HANDOFF.
    pub purpose: Purpose,
    /// Reserved cost units.
    pub amount: Amount,
    /// Reserved active milliseconds.
    pub max_active_ms: Amount,
    /// For an attempt paired with a standalone ledger: the World store it belongs to
    /// (`store-<16 hex of its genesis entry>`, limits::pairing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store: Option<String>,
    /// For an attempt paired with a standalone ledger: the invocation (`cli:<ep>:<task>`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invocation: Option<String>,
}

/// An attempt awaiting a human reconciliation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UnknownAttempt {
    /// `attemptId`.
    pub attempt_id: String,
    /// `scopeId`.
    pub scope_id: String,
    /// Reserved cost units (all kept).
    pub amount: Amount,
    /// When it was dispatched, Unix ms.
    pub dispatched_at_ms: Amount,
    /// Milliseconds accrued since dispatch (frozen by a stop).
    pub accrued_active_ms: Amount,
    /// UNKNOWN, or DISPATCHED for a paired attempt whose effect has no outcome.
    pub state: &'static str,
}

/// An unresolved `exposure_exceeded` control violation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ViolationReport {
    /// `attemptId`.
    pub attempt_id: String,
    /// `scopeId`.
    pub scope_id: String,
    /// The admitted amount.
    pub admitted: Amount,
    /// The claimed actual cost.
    pub claimed: Amount,
    /// Who claimed it.
    pub actor_id: String,
    /// Their kind.
    pub actor_kind: String,
    /// When, Unix ms.
    pub at_ms: Amount,
}

pub(crate) fn load_scopes(conn: &dyn Db) -> Result<Vec<ScopeRow>, Error> {
    let raws = conn
        .query(
            &format!("SELECT {SCOPE_COLS} FROM limits_scopes s ORDER BY s.ordinal"),
            &[],
        )?
        .iter()
        .map(raw_scope)
        .collect::<Result<Vec<_>, _>>()?;
    raws.into_iter().map(scope_from_raw).collect()
}

/// Every scope in memory with effective bounds, live accrual and blocked state at `now`.
pub(crate) struct View {
    scopes: Vec<ScopeRow>,
    index: HashMap<String, usize>,
    parent: Vec<Option<usize>>,
    deps: Vec<Vec<usize>>,
    eff: Vec<Bounds>,
    frozen: Vec<Option<u128>>,
    live: Vec<u128>,
    blocked_by: Vec<Vec<BlockEntry>>,
    now: u128,
}

impl View {
    /// Load every scope and live attempt and evaluate blocked state at `now`.
    pub(crate) fn load(conn: &dyn Db, now: u128) -> Result<View, Error> {
        let scopes = load_scopes(conn)?;
        let n = scopes.len();
        let index: HashMap<String, usize> = scopes
            .iter()
            .enumerate()
            .map(|(i, s)| (s.id.clone(), i))
            .collect();
        let lookup = |id: &str| -> Result<usize, Error> {
            index
                .get(id)
                .copied()
                .ok_or_else(|| Error::corrupt(format!("unknown scope {id:?} referenced")))
        };
        let parent = scopes
            .iter()
            .map(|s| s.parent.as_deref().map(lookup).transpose())
            .collect::<Result<Vec<_>, _>>()?;
        let deps = scopes
            .iter()
            .map(|s| {
                s.depends_on
                    .iter()
                    .map(|d| lookup(d))
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, _>>()?;
        // Topological order over parent + dependsOn edges (config validation made it acyclic).
        let mut indegree = vec![0usize; n];
        let mut rev: Vec<Vec<usize>> = vec![Vec::new(); n];
        for i in 0..n {
            let prereqs = parent
                .get(i)
                .copied()
                .flatten()
                .into_iter()
                .chain(deps.get(i).into_iter().flatten().copied());
            for p in prereqs {
                if let (Some(d), Some(r)) = (indegree.get_mut(i), rev.get_mut(p)) {
                    *d += 1;
                    r.push(i);
                }
            }
        }
        let mut queue: VecDeque<usize> = (0..n).filter(|i| indegree.get(*i) == Some(&0)).collect();
        let mut topo = Vec::with_capacity(n);
        while let Some(i) = queue.pop_front() {
            topo.push(i);
            for &j in rev.get(i).into_iter().flatten() {
                if let Some(d) = indegree.get_mut(j) {
                    *d -= 1;
                    if *d == 0 {
                        queue.push_back(j);
                    }
                }
            }
        }
        if topo.len() != n {
            return Err(Error::corrupt("scope graph has a cycle"));
        }
        let mut eff = vec![Bounds::default(); n];
        let mut frozen: Vec<Option<u128>> = vec![None; n];
        for &i in &topo {
            let (pe, pf) = match parent.get(i).copied().flatten() {
                Some(p) => (
                    eff.get(p).copied().unwrap_or_default(),
                    frozen.get(p).copied().flatten(),
                ),
                None => (Bounds::default(), None),
            };
            let s = scopes.get(i).ok_or_else(|| Error::corrupt("index"))?;
            if let Some(slot) = eff.get_mut(i) {
                *slot = s.own.tighten(&pe);
            }
            let f = match (s.stopped_at, pf) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            if let Some(slot) = frozen.get_mut(i) {
                *slot = f;
            }
        }
        // Live accrual per subtree.
        let mut live = vec![0u128; n];
        let rows = conn
            .query(
                "SELECT scope_id, max_active_ms, dispatched_at_ms FROM limits_attempts WHERE state IN ('DISPATCHED', 'UNKNOWN')",
                &[],
            )?
            .iter()
            .map(|r| Ok((r.text(0)?, r.text(1)?, r.opt_text(2)?)))
            .collect::<Result<Vec<_>, Error>>()?;
        for (scope, max_active, dispatched) in rows {
            let i = lookup(&scope)?;
            let d = num(
                dispatched
                    .as_deref()
                    .ok_or_else(|| Error::corrupt("live attempt without dispatch"))?,
                "dispatched_at_ms",
            )?;
            let v = live_accrual(
                num(&max_active, "max_active_ms")?,
                d,
                now,
                frozen.get(i).copied().flatten(),
            );
            let mut cur = Some(i);
            while let Some(c) = cur {
                if let Some(slot) = live.get_mut(c) {
                    *slot = slot.saturating_add(v);
                }
                cur = parent.get(c).copied().flatten();
            }
        }
        let mut view = View {
            scopes,
            index,
            parent,
            deps,
            eff,
            frozen,
            live,
            blocked_by: vec![Vec::new(); n],
            now,
        };
        for &i in &topo {
            let entries = view.entries_for(i);
            if let Some(slot) = view.blocked_by.get_mut(i) {
                *slot = entries;
            }
        }
        Ok(view)
    }

    fn chain(&self, i: usize) -> Vec<usize> {
        let mut out = vec![i];
        let mut cur = self.parent.get(i).copied().flatten();
        while let Some(p) = cur {
            out.push(p);
            cur = self.parent.get(p).copied().flatten();
        }
        out
    }

    fn usage(&self, i: usize) -> Usage {
        let Some(s) = self.scopes.get(i) else {
            return Usage {
                cost: Amount::ZERO,
                handoff: Amount::ZERO,
                active_ms: Amount::ZERO,
                elapsed_ms: Amount::ZERO,
                attempts: Amount::ZERO,
            };
        };
        let end = self
            .frozen
            .get(i)
            .copied()
            .flatten()
            .map_or(self.now, |f| f.min(self.now));
        Usage {
            cost: Amount(s.usage_ordinary.saturating_add(s.usage_handoff)),
            handoff: Amount(s.usage_handoff),
            active_ms: Amount(
                s.active_static
                    .saturating_add(self.live.get(i).copied().unwrap_or(0)),
            ),
            elapsed_ms: Amount(end.saturating_sub(s.started_at)),
            attempts: Amount(s.attempts),
        }
    }

    /// blockedBy of `i`; every prerequisite (parent, dependencies) must already be evaluated.
    fn entries_for(&self, i: usize) -> Vec<BlockEntry> {
        let chain = self.chain(i);
        let mut out = Vec::new();
        let entry = |a: usize, limit: Option<LimitKind>, code: Code| BlockEntry {
            scope_id: self.scopes.get(a).map_or(String::new(), |s| s.id.clone()),
            limit,
            code,
        };
        for &a in &chain {
            if self.scopes.get(a).is_some_and(|s| s.stopped_at.is_some()) {
                out.push(entry(a, None, Code::ScopeStopped));
            }
        }
        for &a in &chain {
            for &d in self.deps.get(a).into_iter().flatten() {
                if self.blocked_by.get(d).is_some_and(|b| !b.is_empty()) {
                    out.push(entry(d, None, Code::DependencyBlocked));
                }
            }
        }
        let checks: [(LimitKind, Code); 4] = [
            (LimitKind::ElapsedMs, Code::ElapsedMsExhausted),
            (LimitKind::Attempts, Code::AttemptsExhausted),
            (LimitKind::Cost, Code::CostExhausted),
            (LimitKind::ActiveMs, Code::ActiveMsExhausted),
        ];
        for (kind, code) in checks {
            for &a in &chain {
                let Some(bound) = self.eff.get(a).and_then(|e| e.get(kind)) else {
                    continue;
                };
                let u = self.usage(a);
                let used = match kind {
                    LimitKind::ElapsedMs => u.elapsed_ms,
                    LimitKind::Attempts => u.attempts,
                    LimitKind::Cost => u.cost,
                    LimitKind::ActiveMs => u.active_ms,
                    LimitKind::Handoff => u.handoff,
                };
                if used >= bound {
                    out.push(entry(a, Some(kind), code));
                }
            }
        }
        out
    }

    /// `true` when `scope_id` exists and no new work can be admitted there.
    pub(crate) fn is_blocked(&self, scope_id: &str) -> bool {
        self.index
            .get(scope_id)
            .and_then(|&i| self.blocked_by.get(i))
            .is_some_and(|b| !b.is_empty())
    }

    fn in_subtree(&self, i: usize, root: usize) -> bool {
        let mut cur = Some(i);
        while let Some(c) = cur {
            if c == root {
                return true;
            }
            cur = self.parent.get(c).copied().flatten();
        }
        false
    }

    fn dependents(&self, s: usize, reverse: &[Vec<usize>]) -> Vec<String> {
        let mut seen = HashSet::from([s]);
        let mut queue = VecDeque::from([s]);
        let mut found = Vec::new();
        while let Some(x) = queue.pop_front() {
            for &y in reverse.get(x).into_iter().flatten() {
                if seen.insert(y) {
                    if !self.in_subtree(y, s) {
                        found.push(y);
                    }
                    queue.push_back(y);
                }
            }
        }
        found.sort_unstable();
        found
            .into_iter()
            .filter_map(|i| self.scopes.get(i).map(|r| r.id.clone()))
            .collect()
    }
}

/// Build the report at `now_ms` (Unix ms), optionally limited to `scope` and its subtree.
///
/// Read-only; never refused for limits, stops or `now` earlier than the last recorded time.
///
/// # Errors
/// [`Error::Rejected`] with `ledger_not_initialized` (no config) or `scope_not_found`;
/// SQLite and corruption errors.
pub(crate) fn report(conn: &dyn Db, now_ms: u128, scope: Option<&str>) -> Result<Report, Error> {
    let Some(meta) = load_meta(conn)? else {
        return Err(Verdict::new(Code::LedgerNotInitialized, 0).into());
    };
    // Never print a total the ledger did not write (issue 27 §3): the rows are checked
    // against the fold digests, as a deciding command checks them.
    super::seal::check_read(conn, &meta)?;
    let view = View::load(conn, now_ms)?;
    let root = match scope {
        None => None,
        Some(id) => Some(*view.index.get(id).ok_or_else(|| {
            Error::from(Verdict::new(Code::ScopeNotFound, u128::from(meta.revision)).scope(id))
        })?),
    };
    let included = |i: usize| root.is_none_or(|r| view.in_subtree(i, r));
    let n = view.scopes.len();
    let mut reverse: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in 0..n {
        let prereqs = view
            .parent
            .get(i)
            .copied()
            .flatten()
            .into_iter()
            .chain(view.deps.get(i).into_iter().flatten().copied());
        for p in prereqs {
            if let Some(r) = reverse.get_mut(p) {
                r.push(i);
            }
        }
    }
    let mut scopes = Vec::new();
    for (i, s) in view.scopes.iter().enumerate() {
        if !included(i) {
            continue;
        }
        let blocked_by = view.blocked_by.get(i).cloned().unwrap_or_default();
        let blocked = !blocked_by.is_empty();
        scopes.push(ScopeReport {
            scope_id: s.id.clone(),
            kind: s.kind,
            parent_id: s.parent.clone(),
            bounds: view.eff.get(i).copied().unwrap_or_default(),
            usage: view.usage(i),
            stopped: s.stopped_at.is_some(),
            blocked,
            blocked_by,
            dependents: if blocked {
                view.dependents(i, &reverse)
            } else {
                Vec::new()
            },
        });
    }
    let mut outstanding = Vec::new();
    let mut unknown = Vec::new();
    let raws = conn
        .query(
            &format!(
                "SELECT {ATTEMPT_COLS} FROM limits_attempts WHERE state IN ('RESERVED', 'DISPATCHED', 'UNKNOWN') \
                 ORDER BY revision, attempt_id"
            ),
            &[],
        )?
        .iter()
        .map(raw_attempt)
        .collect::<Result<Vec<_>, _>>()?;
    for raw in raws {
        let a = attempt_from_raw(raw)?;
        let Some(&si) = view.index.get(&a.scope_id) else {
            return Err(Error::corrupt(format!("attempt {} in unknown scope", a.id)));
        };
        if !included(si) {
            continue;
        }
        outstanding.push(OutstandingAttempt {
            attempt_id: a.id.clone(),
            scope_id: a.scope_id.clone(),
            state: a.state.as_str(),
            purpose: a.purpose,
            amount: Amount(a.amount),
            max_active_ms: Amount(a.max_active_ms),
            store: a.run_id.clone().filter(|_| a.paired),
            invocation: a
                .run_id
                .as_ref()
                .filter(|_| a.paired)
                .map(|_| a.operation_id.clone()),
        });
        let awaiting = a.state == State::Unknown || (a.state == State::Dispatched && a.paired);
        if awaiting {
            let d = a.dispatched_at.unwrap_or(0);
            let end = view
                .frozen
                .get(si)
                .copied()
                .flatten()
                .map_or(now_ms, |f| f.min(now_ms));
            unknown.push(UnknownAttempt {
                attempt_id: a.id,
                scope_id: a.scope_id,
                amount: Amount(a.amount),
                dispatched_at_ms: Amount(d),
                accrued_active_ms: Amount(end.saturating_sub(d)),
                state: a.state.as_str(),
            });
        }
    }
    let mut violations = Vec::new();
    let rows = conn
        .query(
            "SELECT attempt_id, scope_id, admitted, claimed, actor_id, actor_kind, at_ms FROM limits_violations \
             WHERE resolved_revision IS NULL ORDER BY id",
            &[],
        )?
        .iter()
        .map(|r| {
            Ok((
                r.text(0)?,
                r.text(1)?,
                r.text(2)?,
                r.text(3)?,
                r.text(4)?,
                r.text(5)?,
                r.text(6)?,
            ))
        })
        .collect::<Result<Vec<_>, Error>>()?;
    for (attempt_id, scope_id, admitted, claimed, actor_id, actor_kind, at) in rows {
        if view.index.get(&scope_id).is_some_and(|&i| !included(i)) {
            continue;
        }
        violations.push(ViolationReport {
            attempt_id,
            scope_id,
            admitted: Amount(num(&admitted, "admitted")?),
            claimed: Amount(num(&claimed, "claimed")?),
            actor_id,
            actor_kind,
            at_ms: Amount(num(&at, "at_ms")?),
        });
    }
    Ok(Report {
        schema: REPORT_SCHEMA,
        ledger_id: meta.ledger_id,
        revision: Amount(u128::from(meta.revision)),
        now_ms: Amount(now_ms),
        scopes,
        outstanding,
        unknown,
        violations,
    })
}
