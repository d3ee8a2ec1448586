//! Properties of `reduce` over random command sequences and clocks (missions.md §3, §4).

use proptest::prelude::*;
use serde_json::{json, Value};

use super::tests::{admit_json, contract_json, grant_json};
use super::*;
use crate::ledger::Amount;

const EV: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";

fn arb_step() -> impl Strategy<Value = (Value, u8, u64)> {
    let id = |p: &'static str, k: u8| format!("{p}{}", k % 4);
    let s0 = {
        (0u8..2).prop_map(
            move |k| json!({"type": "startRun", "runId": if k == 0 { "r" } else { "r2" }}),
        )
    };
    let s1 = {
        (0u8..3, 0u128..120, 0u128..4, any::<bool>()).prop_map(move |(k, limit, depth, parent)| {
            let gid = ["h", "i", "k"][k as usize];
            let mut g = grant_json(gid, "agent", &limit.to_string(), &depth.to_string());
            g["canDelegate"] = json!(depth > 0);
            if parent {
                let pid = ["g", "h", "i"][k as usize];
                json!({"type": "grant", "parentId": pid, "grant": g})
            } else {
                json!({"type": "grant", "grant": g})
            }
        })
    };
    let s2 = {
        (0u8..4, 0u8..8, 0u8..4, 0u128..70).prop_map(move |(o, a, g, amt)| {
            admit_json(
                &id("o", o),
                &format!("a{a}"),
                ["g", "h", "i", "k"][g as usize],
                &amt.to_string(),
            )
        })
    };
    let s3 = { (0u8..8).prop_map(|a| json!({"type": "dispatch", "attemptId": format!("a{a}")})) };
    let s4 = {
        (0u8..8, 0u8..3, 0u128..80).prop_map(|(a, o, c)| {
            let outcome = ["SUCCEEDED", "FAILED", "UNKNOWN"][o as usize];
            let mut v = json!({"type": "settle", "attemptId": format!("a{a}"), "outcome": outcome});
            if o < 2 {
                v["actualCost"] = json!(c.to_string());
            }
            v
        })
    };
    let s5 = { (0u8..8).prop_map(|a| json!({"type": "release", "attemptId": format!("a{a}")})) };
    let s6 = {
        (0u8..8, 0u128..80).prop_map(|(a, c)| {
            json!({"type": "reconcile", "attemptId": format!("a{a}"),
            "actualCost": c.to_string(), "outcome": "SUCCEEDED", "evidenceRef": EV})
        })
    };
    let s7 = {
        (0u8..4).prop_map(
            move |o| json!({"type": "approve", "operationId": id("o", o), "evidenceRef": EV}),
        )
    };
    let s8 = {
        (0u8..4).prop_map(|g| {
            let gid = ["g", "h", "i", "k"][g as usize];
            json!({"type": "revoke", "grantId": gid})
        })
    };
    let s9 = { Just(json!({"type": "completeRun", "runId": "r", "criteria": {"review": EV}})) };
    let cmd = prop_oneof![s0, s1, s2, s3, s4, s5, s6, s7, s8, s9];
    // actor: 0 host, 1 human, 2 agent; clock step: mostly forward, sometimes back.
    (cmd, 0u8..3, 0u64..40)
}

fn check_invariants(s: &State) -> Result<(), TestCaseError> {
    let mut reserved = 0u128;
    let mut settled = 0u128;
    let mut used = std::collections::BTreeMap::<String, u128>::new();
    for a in s.attempts.values() {
        let share = if a.status.holds_reservation() {
            reserved += a.amount.0;
            a.amount.0
        } else {
            let c = a.actual_cost.map_or(0, |c| c.0);
            settled += c;
            c
        };
        for (gid, _) in s
            .chain(&a.grant_id)
            .map_err(|e| TestCaseError::fail(e.to_string()))?
        {
            *used.entry(gid.to_string()).or_default() += share;
        }
    }
    prop_assert_eq!(
        s.reserved.0,
        reserved,
        "reserved is the sum of held amounts"
    );
    prop_assert_eq!(s.settled.0, settled, "settled is the sum of actual costs");
    for (gid, g) in &s.grants {
        prop_assert_eq!(
            g.used.0,
            used.get(gid).copied().unwrap_or(0),
            "used of {}",
            gid
        );
        if s.violations.iter().all(|v| v.command != "reconcile") {
            prop_assert!(
                g.used <= g.limit,
                "{} used {} > limit {}",
                gid,
                g.used,
                g.limit
            );
        }
    }
    if s.violations.iter().all(|v| v.command != "reconcile") {
        prop_assert!(s.reserved.0 + s.settled.0 <= s.budget.0);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn random_sequences_keep_the_books(steps in proptest::collection::vec(arb_step(), 1..60)) {
        let contract = Contract::parse(&serde_json::to_vec(&contract_json()).unwrap_or_default())
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut s = Mission::create(&contract);
        // A root grant g so delegations have something to hang from.
        s = reduce(&s, &Command::parse(br#"{"type":"startRun","runId":"r"}"#).map_err(|e| TestCaseError::fail(e.to_string()))?, Amount(10))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let g = json!({"type": "grant", "grant": grant_json("g", "agent", "90", "3")});
        s = reduce(&s, &Command::from_value(&crate::encoding::trcjson::parse(&serde_json::to_vec(&g).unwrap_or_default(), crate::encoding::trcjson::Bounds::UNBOUNDED).map_err(|e| TestCaseError::fail(e.to_string()))?).map_err(|e| TestCaseError::fail(e.to_string()))?, Amount(10))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut now: u64 = 10;
        let mut in_place = s.clone();
        for (v, who, dt) in steps {
            // Mostly forward; one step in eight goes back to exercise TIME_REGRESSED.
            let t = if dt % 8 == 7 { now.saturating_sub(dt) } else { now + dt / 4 };
            let cmd = Command::parse(&serde_json::to_vec(&v).unwrap_or_default())
                .map_err(|e| TestCaseError::fail(format!("{e}: {v}")))?;
            let actor = match who {
                0 => Actor::host(),
                1 => Actor::human("human:p"),
                _ => Actor::agent("cred", "agent"),
            };
            let before = s.clone();
            let attempts_before: Vec<(String, Amount)> =
                s.operations.iter().map(|(k, o)| (k.clone(), o.attempts)).collect();
            let mut scratch = in_place.clone();
            let r_in_place = apply(&mut scratch, &cmd, Amount(u128::from(t)), &actor);
            match reduce_as(&s, &cmd, Amount(u128::from(t)), &actor) {
                Ok(next) => {
                    prop_assert!(r_in_place.is_ok());
                    prop_assert_eq!(next.revision.0, before.revision.0 + 1);
                    if let Command::Admit(a) = &cmd {
                        prop_assert!(next.reserved.0 + next.settled.0 <= next.budget.0 || next.violations.iter().any(|v| v.command == "reconcile"),
                            "admission past the budget");
                        for (gid, g) in next.chain(&a.grant_id).map_err(|e| TestCaseError::fail(e.to_string()))? {
                            let _ = gid;
                            prop_assert!(g.used <= g.limit || !next.violations.is_empty());
                        }
                    }
                    s = next;
                    now = t;
                }
                Err(rej) => {
                    prop_assert_eq!(&s, &before, "the input state is untouched");
                    prop_assert_eq!(r_in_place.as_ref().err().map(|e| e.code), Some(rej.code));
                    prop_assert_eq!(&scratch, &in_place, "apply leaves the state as it was on a rejection");
                    let after = s.with_violation(&rej);
                    if rej.code == Code::ExposureExceeded {
                        prop_assert_eq!(after.violations.len(), s.violations.len() + 1);
                        let mut stripped = after.clone();
                        stripped.violations.pop();
                        prop_assert_eq!(&stripped, &s, "only the violation record changes");
                        scratch = scratch.with_violation(&rej);
                        s = after;
                    } else {
                        prop_assert_eq!(&after, &s);
                    }
                }
            }
            in_place = scratch;
            prop_assert_eq!(&in_place, &s, "in-place fold equals the functional fold");
            for (k, a) in attempts_before {
                prop_assert!(s.operations.get(&k).is_some_and(|o| o.attempts >= a), "attempts never decrease");
            }
            check_invariants(&s)?;
        }
    }
}
