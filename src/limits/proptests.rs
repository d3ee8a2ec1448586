//! Property tests over random command sequences and clocks (issue 7 part 5):
//! - at admission, settled + outstanding exposure ≤ every effective bound on the chain;
//! - a scope's usage equals its own attempts' plus its children's (recomputed from the
//!   attempt rows, independently of the ledger's counters);
//! - attempts never decrease; handoff usage comes only from HANDOFF attempts;
//! - a rejected command leaves every ledger table byte-identical, except that
//!   `exposure_exceeded` appends exactly one violation row;
//! - each applied command raises the revision by exactly 1.

use super::testkit::*;
use super::*;
use proptest::prelude::*;
use std::collections::HashMap;

/// (scope, parent) of the fixed topology; b3 depends on b1.
const TOPOLOGY: [(&str, Option<&str>); 7] = [
    ("wo", None),
    ("wo2", Some("wo")),
    ("r1", Some("wo")),
    ("r2", Some("wo2")),
    ("b1", Some("r1")),
    ("b2", Some("b1")),
    ("b3", Some("r2")),
];

#[derive(Clone, Debug)]
enum Op {
    Reserve {
        scope: usize,
        handoff: bool,
        amount: u128,
        max_active: u128,
        actor: u8,
    },
    Dispatch {
        attempt: usize,
    },
    Settle {
        attempt: usize,
        actual: u128,
        failed: bool,
    },
    Unknown {
        attempt: usize,
    },
    Reconcile {
        attempt: usize,
        actual: u128,
    },
    Release {
        attempt: usize,
    },
    Stop {
        scope: usize,
    },
    Adjust {
        scope: usize,
        kind: usize,
        value: Option<u128>,
        resume: bool,
    },
    Tick {
        ms: u128,
    },
    Regress,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..7usize, any::<bool>(), 0..50u128, 0..30u128, 0..3u8).prop_map(|(scope, handoff, amount, max_active, actor)| Op::Reserve { scope, handoff, amount, max_active, actor }),
        3 => (0..24usize).prop_map(|attempt| Op::Dispatch { attempt }),
        3 => (0..24usize, 0..70u128, any::<bool>()).prop_map(|(attempt, actual, failed)| Op::Settle { attempt, actual, failed }),
        1 => (0..24usize).prop_map(|attempt| Op::Unknown { attempt }),
        1 => (0..24usize, 0..70u128).prop_map(|(attempt, actual)| Op::Reconcile { attempt, actual }),
        2 => (0..24usize).prop_map(|attempt| Op::Release { attempt }),
        1 => (0..7usize).prop_map(|scope| Op::Stop { scope }),
        1 => (0..7usize, 0..5usize, proptest::option::of(0..300u128), any::<bool>()).prop_map(|(scope, kind, value, resume)| Op::Adjust { scope, kind, value, resume }),
        3 => (0..25u128).prop_map(|ms| Op::Tick { ms }),
        1 => Just(Op::Regress),
    ]
}

fn bound(v: Option<u128>) -> String {
    v.map_or("null".into(), |v| format!("\"{v}\""))
}

fn config(root: [Option<u128>; 5], child_cost: Option<u128>) -> Vec<u8> {
    let [c, h, a, e, n] = root;
    let h = match (h, c) {
        (Some(h), Some(c)) => Some(h.min(c)),
        (h, _) => h,
    };
    let cc = match (child_cost, c) {
        (Some(x), Some(c)) => Some(x.min(c)),
        (x, _) => x,
    };
    let cc = match (cc, h) {
        (Some(x), Some(h)) => Some(x.max(h)),
        (x, _) => x,
    };
    config_with(&format!(
        r#"{{"scopeId":"wo","kind":"WORK_ORDER","limits":{{"cost":{},"handoff":{},"activeMs":{},"elapsedMs":{},"attempts":{}}}}},
           {{"scopeId":"wo2","kind":"WORK_ORDER","parentId":"wo","limits":{{"cost":{}}}}},
           {{"scopeId":"r1","kind":"RUN","parentId":"wo"}},
           {{"scopeId":"r2","kind":"RUN","parentId":"wo2"}},
           {{"scopeId":"b1","kind":"BRANCH","parentId":"r1"}},
           {{"scopeId":"b2","kind":"BRANCH","parentId":"b1"}},
           {{"scopeId":"b3","kind":"BRANCH","parentId":"r2","dependsOn":["b1"]}}"#,
        bound(c),
        bound(h),
        bound(a),
        bound(e),
        bound(n),
        bound(cc)
    ))
}

fn chain(scope: &str) -> Vec<&'static str> {
    let parents: HashMap<&str, Option<&str>> = TOPOLOGY.iter().copied().collect();
    let mut out = Vec::new();
    let mut cur = TOPOLOGY.iter().find(|(s, _)| *s == scope).map(|(s, _)| *s);
    while let Some(s) = cur {
        out.push(s);
        cur = parents.get(s).copied().flatten();
    }
    out
}

/// scope, purpose, amount, maxActive, state, actual, dispatchedAt, settledActive.
type AttemptText = (
    String,
    String,
    String,
    String,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// Usage per scope recomputed from the attempt rows and the stop times (limits.md §4).
fn recompute(t: &T, now: u128) -> HashMap<&'static str, [u128; 4]> {
    let stops: HashMap<String, u128> = {
        let mut s = t
            .conn
            .prepare(
                "SELECT scope_id, stopped_at_ms FROM limits_scopes WHERE stopped_at_ms IS NOT NULL",
            )
            .unwrap_or_else(|e| panic!("{e}"));
        s.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .unwrap_or_else(|e| panic!("{e}"))
            .filter_map(Result::ok)
            .map(|(a, b)| (a, b.parse().unwrap_or(0)))
            .collect()
    };
    let mut stmt = t
        .conn
        .prepare("SELECT scope_id, purpose, amount, max_active_ms, state, actual_cost, dispatched_at_ms, settled_active_ms FROM limits_attempts")
        .unwrap_or_else(|e| panic!("{e}"));
    let rows: Vec<AttemptText> = stmt
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
            ))
        })
        .unwrap_or_else(|e| panic!("{e}"))
        .filter_map(Result::ok)
        .collect();
    let n = |s: &Option<String>| {
        s.as_deref()
            .and_then(|v| v.parse::<u128>().ok())
            .unwrap_or(0)
    };
    let mut usage: HashMap<&'static str, [u128; 4]> =
        TOPOLOGY.iter().map(|(s, _)| (*s, [0; 4])).collect();
    for (scope, purpose, amount, max_active, state, actual, dispatched, settled_active) in rows {
        let amount: u128 = amount.parse().unwrap_or(0);
        let max_active: u128 = max_active.parse().unwrap_or(0);
        let chain = chain(&scope);
        let freeze = chain.iter().filter_map(|s| stops.get(*s).copied()).min();
        let end = freeze.map_or(now, |f| f.min(now));
        let (cost, active) = match state.as_str() {
            "RESERVED" => (amount, max_active),
            "DISPATCHED" | "UNKNOWN" => {
                (amount, max_active.max(end.saturating_sub(n(&dispatched))))
            }
            "SETTLED" => (n(&actual), n(&settled_active)),
            _ => (0, 0),
        };
        for s in chain {
            if let Some(u) = usage.get_mut(s) {
                u[0] += cost;
                if purpose == "HANDOFF" {
                    u[1] += cost;
                }
                u[2] += active;
                if state != "UNUSED" {
                    u[3] += 1;
                }
            }
        }
    }
    usage
}

fn run_op(
    t: &T,
    op: &Op,
    now: &mut u128,
    ids: &mut Vec<String>,
) -> (Option<(String, bool)>, Result<Verdict, Error>) {
    let attempt = |i: usize| {
        ids.get(i % ids.len().max(1))
            .cloned()
            .unwrap_or_else(|| "none".into())
    };
    let scope = |i: usize| TOPOLOGY[i % TOPOLOGY.len()].0.to_string();
    let mut when = *now;
    let (target, result) = match op {
        Op::Reserve {
            scope: s,
            handoff,
            amount,
            max_active,
            actor,
        } => {
            let id = format!("a{}", ids.len());
            let actor = match actor {
                0 => host(),
                1 => human(),
                _ => agent("wo"),
            };
            let purpose = if *handoff {
                Purpose::Handoff
            } else {
                Purpose::Ordinary
            };
            let r = t.run(
                reserve(&id, &scope(*s), purpose, *amount, *max_active),
                &actor,
                when,
            );
            if r.is_ok() {
                ids.push(id);
            }
            (Some((scope(*s), *handoff)), r)
        }
        Op::Dispatch { attempt: a } => (None, t.run(dispatch(&attempt(*a)), &host(), when)),
        Op::Settle {
            attempt: a,
            actual,
            failed,
        } => {
            let cmd = Command::Settle {
                attempt_id: attempt(*a),
                outcome: if *failed {
                    Outcome::Failed
                } else {
                    Outcome::Succeeded
                },
                actual_cost: Some(Amount(*actual)),
                effect_outcome: false,
            };
            (None, t.run(cmd, &agent("wo"), when))
        }
        Op::Unknown { attempt: a } => (None, t.run(settle_unknown(&attempt(*a)), &host(), when)),
        Op::Reconcile { attempt: a, actual } => (
            None,
            t.run(
                reconcile(&attempt(*a), *actual, Some(good_evidence())),
                &human(),
                when,
            ),
        ),
        Op::Release { attempt: a } => (None, t.run(release(&attempt(*a)), &host(), when)),
        Op::Stop { scope: s } => (None, t.run(stop(&scope(*s)), &host(), when)),
        Op::Adjust {
            scope: s,
            kind,
            value,
            resume,
        } => {
            let kind = LimitKind::ALL[*kind % 5];
            (
                None,
                t.run(adjust(&scope(*s), kind, *value, *resume), &human(), when),
            )
        }
        Op::Tick { ms } => {
            *now += ms;
            return (None, Ok(Verdict::new(Code::Ok, 0)));
        }
        Op::Regress => {
            when = now.saturating_sub(3);
            (None, t.run(dispatch(&attempt(0)), &host(), when))
        }
    };
    (target, result)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn ledger_invariants_hold_over_random_sequences(
        root in [proptest::option::of(0..150u128), proptest::option::of(0..40u128), proptest::option::of(0..200u128), proptest::option::of(20..400u128), proptest::option::of(0..12u128)],
        child_cost in proptest::option::of(0..200u128),
        ops in proptest::collection::vec(op(), 1..60),
    ) {
        let t = T::with_config(&config(root, child_cost));
        let mut now: u128 = 0;
        let mut ids = Vec::new();
        let mut prev_attempts: HashMap<String, Amount> = HashMap::new();
        let mut revision = t.report(0).revision;
        for op in &ops {
            if matches!(op, Op::Tick { .. }) {
                let _ = run_op(&t, op, &mut now, &mut ids);
                continue;
            }
            let before = t.dump();
            let (target, result) = run_op(&t, op, &mut now, &mut ids);
            let after = t.dump();
            let report = t.report(now);
            match &result {
                Err(Error::Rejected(v)) if v.code == Code::ExposureExceeded => {
                    let added: Vec<&String> = after.iter().filter(|l| !before.contains(l)).collect();
                    prop_assert_eq!(after.len(), before.len() + 1);
                    prop_assert_eq!(added.len(), 1);
                    prop_assert!(added[0].starts_with("limits_violations:"));
                }
                Err(Error::Rejected(v)) => {
                    prop_assert!(before == after, "{:?} rejected with {} but changed the ledger", op, v.code);
                    prop_assert_eq!(v.revision, revision);
                }
                Err(e) => prop_assert!(false, "storage error {e} on {op:?}"),
                Ok(v) => {
                    prop_assert_eq!(v.code, Code::Ok);
                    prop_assert_eq!(v.revision.get(), revision.get() + 1, "one revision per applied command");
                    revision = v.revision;
                    // Admission: after a successful reserve every bound on the chain holds.
                    if let Some((scope, handoff)) = target {
                        for s in chain(&scope) {
                            let Some(sr) = report.scopes.iter().find(|r| r.scope_id == s) else { continue };
                            let b = sr.bounds;
                            let u = sr.usage;
                            if let (false, Some(c)) = (handoff, b.cost) {
                                // ORDINARY work never consumes the protected partition.
                                let p = b.handoff.map_or(0, Amount::get);
                                let ordinary = u.cost.get() - u.handoff.get();
                                prop_assert!(ordinary <= c.get().saturating_sub(p), "ordinary {} > cost {} - handoff {} at {} after {:?}", ordinary, c, p, s, op);
                            }
                            // A human reconcile may record a real charge above its admission,
                            // so the handoff partition binds HANDOFF admissions only.
                            let handoff_bound = if handoff { b.handoff } else { None };
                            for (bound, used, what) in [
                                (b.cost, u.cost, "cost"),
                                (handoff_bound, u.handoff, "handoff"),
                                (b.active_ms, u.active_ms, "activeMs"),
                                (b.attempts, u.attempts, "attempts"),
                            ] {
                                if let Some(bound) = bound {
                                    prop_assert!(used <= bound, "{} at {}: used {} > bound {} after {:?}", what, s, used, bound, op);
                                }
                            }
                            if let Some(e) = b.elapsed_ms {
                                prop_assert!(u.elapsed_ms < e);
                            }
                        }
                    }
                }
            }
            prop_assert_eq!(report.revision, revision);
            // Usage equals the recomputation from attempt rows; parents sum their children.
            let model = recompute(&t, now);
            for sr in &report.scopes {
                let m = model.get(sr.scope_id.as_str()).copied().unwrap_or([0; 4]);
                let u = sr.usage;
                prop_assert_eq!([u.cost.get(), u.handoff.get(), u.active_ms.get(), u.attempts.get()], m, "scope {} after {:?}", sr.scope_id, op);
                prop_assert!(u.handoff <= u.cost);
                let prev = prev_attempts.insert(sr.scope_id.clone(), u.attempts).unwrap_or(Amount::ZERO);
                prop_assert!(u.attempts >= prev, "attempts decreased at {}", sr.scope_id);
                let children: Vec<&report::ScopeReport> = report.scopes.iter().filter(|c| c.parent_id.as_deref() == Some(sr.scope_id.as_str())).collect();
                let own_attempts: u128 = {
                    let mut s = t.conn.prepare("SELECT count(*) FROM limits_attempts WHERE scope_id = ?1").unwrap_or_else(|e| panic!("{e}"));
                    s.query_row([&sr.scope_id], |r| r.get::<_, i64>(0)).unwrap_or(0) as u128
                };
                let child_sum: u128 = children.iter().map(|c| c.usage.attempts.get()).sum();
                prop_assert_eq!(u.attempts.get(), own_attempts + child_sum);
            }
        }
    }
}
