//! Scenario tests: the seed example, finite-v1 rules, bad input, time, pairing, storage.

use super::testkit::*;
use super::*;
use Purpose::{Handoff, Ordinary};

#[test]
fn seed_example_ordinary_90_and_handoff_10_fill_the_work_order() {
    let t = T::with_config(EXAMPLE);
    assert_eq!(
        t.code(reserve("work", "run", Ordinary, 90, 10), &agent("run"), 0),
        Code::Ok
    );
    assert_eq!(
        t.code(reserve("summary", "run", Handoff, 10, 10), &host(), 0),
        Code::Ok
    );
    let wo = t.usage("wo", 0);
    assert_eq!(wo.cost, Amount(100), "seed: wo usage.cost = 100");
    assert_eq!(wo.handoff, Amount(10), "seed: wo usage.handoff = 10");

    // The report of limits.md §8, field for field.
    let report = serde_json::to_value(t.report(0)).unwrap_or_default();
    let want_wo = serde_json::json!({
        "scopeId": "wo", "kind": "WORK_ORDER", "parentId": null,
        "bounds": { "cost": "100", "handoff": "10", "activeMs": null, "elapsedMs": null, "attempts": null },
        "usage": { "cost": "100", "handoff": "10", "activeMs": "20", "elapsedMs": "0", "attempts": "2" },
        "stopped": false, "blocked": true,
        "blockedBy": [ { "scopeId": "wo", "limit": "cost", "code": "cost_exhausted" } ],
        "dependents": [] });
    assert_eq!(report["schema"], "world/v1/limits-report");
    assert_eq!(report["ledgerId"], "guide");
    assert_eq!(report["revision"], "3");
    assert_eq!(report["nowMs"], "0");
    assert_eq!(report["scopes"][0], want_wo);
    assert_eq!(
        report["outstanding"],
        serde_json::json!([
            { "attemptId": "work", "scopeId": "run", "state": "RESERVED", "purpose": "ORDINARY", "amount": "90", "maxActiveMs": "10" },
            { "attemptId": "summary", "scopeId": "run", "state": "RESERVED", "purpose": "HANDOFF", "amount": "10", "maxActiveMs": "10" } ])
    );
    assert_eq!(report["unknown"], serde_json::json!([]));
    assert_eq!(report["violations"], serde_json::json!([]));
    let keys: Vec<&String> = report
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        [
            "schema",
            "ledgerId",
            "revision",
            "nowMs",
            "scopes",
            "outstanding",
            "unknown",
            "violations"
        ]
    );
}

#[test]
fn seed_example_ordinary_91_would_consume_the_protected_partition() {
    let t = T::with_config(EXAMPLE);
    let err = t.run(reserve("big", "run", Ordinary, 91, 10), &host(), 0);
    let v = err.as_ref().err().and_then(Error::verdict).cloned();
    let v = v.unwrap_or_else(|| panic!("expected a rejection, got {err:?}"));
    assert_eq!(v.code, Code::HandoffProtected);
    assert_eq!(v.code.seed_code(), Some("BUDGET_EXHAUSTED"));
    assert_eq!(
        v.scope_id.as_deref(),
        Some("run"),
        "the target scope fails first"
    );
    assert_eq!(
        (v.bound, v.used, v.requested),
        (Some(Amount(90)), Some(Amount(0)), Some(Amount(91)))
    );
    assert_eq!(v.revision, Amount(1));
    // 90 fits; the HANDOFF partition still admits 10, and nothing more.
    assert_eq!(
        t.code(reserve("w", "run", Ordinary, 90, 0), &host(), 0),
        Code::Ok
    );
    assert_eq!(
        t.code(reserve("o1", "run", Ordinary, 1, 0), &host(), 0),
        Code::HandoffProtected
    );
    assert_eq!(
        t.code(reserve("h11", "run", Handoff, 11, 0), &host(), 0),
        Code::HandoffExhausted
    );
    assert_eq!(
        t.code(reserve("h10", "run", Handoff, 10, 0), &host(), 0),
        Code::Ok
    );
    assert_eq!(
        t.code(reserve("h1", "run", Handoff, 1, 0), &host(), 0),
        Code::HandoffExhausted
    );
}

fn finite_v1() -> T {
    T::with_config(&config_with(
        r#"{"scopeId":"m","kind":"WORK_ORDER","limits":{"cost":"100"}}"#,
    ))
}

#[test]
fn finite_v1_admission_80_then_30_is_budget_exhausted() {
    let t = finite_v1();
    assert_eq!(
        t.code(reserve("a", "m", Ordinary, 80, 0), &agent("m"), 10),
        Code::Ok
    );
    assert_eq!(t.usage("m", 10).cost, Amount(80));
    let before = t.dump();
    let code = t.code(reserve("a2", "m", Ordinary, 30, 0), &agent("m"), 10);
    assert_eq!(code, Code::CostExhausted);
    assert_eq!(code.seed_code(), Some("BUDGET_EXHAUSTED"));
    assert_eq!(
        t.dump(),
        before,
        "a rejected reserve leaves the ledger byte-identical"
    );
    assert_eq!(t.usage("m", 10).cost, Amount(80), "reserved stays 80");
}

#[test]
fn finite_v1_settlement_releases_the_reservation_and_adds_the_actual() {
    let t = finite_v1();
    t.run(reserve("a", "m", Ordinary, 80, 0), &agent("m"), 10)
        .ok();
    assert_eq!(t.code(dispatch("a"), &agent("m"), 10), Code::Ok);
    assert_eq!(t.code(settle("a", 50), &agent("m"), 10), Code::Ok);
    assert_eq!(t.usage("m", 10).cost, Amount(50), "spent 50, reserved 0");
    assert!(t.report(10).outstanding.is_empty());
}

#[test]
fn finite_v1_unknown_keeps_the_full_reservation() {
    let t = finite_v1();
    t.run(reserve("a", "m", Ordinary, 80, 0), &agent("m"), 10)
        .ok();
    t.run(dispatch("a"), &agent("m"), 10).ok();
    assert_eq!(t.code(settle_unknown("a"), &host(), 20), Code::Ok);
    assert_eq!(t.usage("m", 20).cost, Amount(80));
    let r = t.report(20);
    assert_eq!(r.unknown.len(), 1);
    assert_eq!(r.unknown[0].state, "UNKNOWN");
    assert_eq!(
        t.code(settle("a", 10), &host(), 20),
        Code::AttemptUnknownRequiresReconciliation
    );
    // Only a human with evidence resolves it.
    assert_eq!(
        t.code(reconcile("a", 70, Some(good_evidence())), &human(), 30),
        Code::Ok
    );
    assert_eq!(t.usage("m", 30).cost, Amount(70));
    assert!(t.report(30).unknown.is_empty());
}

#[test]
fn finite_v1_actual_above_admitted_is_exposure_exceeded_with_a_violation() {
    let t = finite_v1();
    t.run(reserve("a", "m", Ordinary, 80, 0), &agent("m"), 10)
        .ok();
    t.run(dispatch("a"), &agent("m"), 10).ok();
    let before = t.dump();
    let err = t.run(settle("a", 81), &agent("m"), 10);
    let v = err.as_ref().err().and_then(Error::verdict).cloned();
    let v = v.unwrap_or_else(|| panic!("expected exposure_exceeded, got {err:?}"));
    assert_eq!(v.code, Code::ExposureExceeded);
    assert_eq!(v.code.seed_code(), Some("EXPOSURE_EXCEEDED"));
    assert_eq!((v.bound, v.requested), (Some(Amount(80)), Some(Amount(81))));
    let after = t.dump();
    let added: Vec<&String> = after.iter().filter(|l| !before.contains(l)).collect();
    assert_eq!(added.len(), 1, "only the violation row is new: {added:?}");
    assert!(added[0].starts_with("limits_violations:"));
    assert_eq!(before.len() + 1, after.len());
    let r = t.report(10);
    assert_eq!(r.violations.len(), 1);
    assert_eq!(
        (r.violations[0].admitted, r.violations[0].claimed),
        (Amount(80), Amount(81))
    );
    assert_eq!(
        t.usage("m", 10).cost,
        Amount(80),
        "the full reservation stays held"
    );
    // A human reconciles with the real charge; the violation is resolved.
    assert_eq!(
        t.code(reconcile("a", 81, Some(good_evidence())), &human(), 11),
        Code::Ok
    );
    assert_eq!(
        t.usage("m", 11).cost,
        Amount(81),
        "the real external charge does not disappear"
    );
    assert!(t.report(11).violations.is_empty());
}

#[test]
fn bad_amounts_map_to_their_codes() {
    for (text, code) in [
        ("-1", Code::AmountInvalid),
        ("01", Code::AmountInvalid),
        ("1.5", Code::AmountInvalid),
        ("1e3", Code::AmountInvalid),
        (
            "340282366920938463463374607431768211456",
            Code::OverflowsAmount,
        ),
    ] {
        let err = Amount::parse(text)
            .err()
            .unwrap_or_else(|| panic!("{text} accepted"));
        assert_eq!(Verdict::from_amount_error(&err, 0).code, code, "{text}");
    }
}

#[test]
fn init_refuses_bad_configs_and_agents_and_a_second_init() {
    let child_over = config_with(
        r#"{"scopeId":"wo","kind":"WORK_ORDER","limits":{"cost":"100"}},
           {"scopeId":"run","kind":"RUN","parentId":"wo","limits":{"cost":"200"}}"#,
    );
    let cycle = config_with(
        r#"{"scopeId":"wo","kind":"WORK_ORDER"},{"scopeId":"r","kind":"RUN","parentId":"wo"},
           {"scopeId":"a","kind":"BRANCH","parentId":"r","dependsOn":["b"]},
           {"scopeId":"b","kind":"BRANCH","parentId":"r","dependsOn":["a"]}"#,
    );
    for bad in [child_over, cycle, b"{".to_vec()] {
        let t = T::new();
        assert_eq!(
            t.code(Command::Init { config: bad }, &host(), 0),
            Code::ConfigInvalid
        );
        assert!(t.dump().is_empty(), "a refused init writes nothing");
    }
    let t = T::new();
    assert_eq!(
        t.code(
            Command::Init {
                config: EXAMPLE.to_vec()
            },
            &agent("wo"),
            0
        ),
        Code::ActorKindNotPermitted
    );
    assert_eq!(
        t.code(reserve("a", "run", Ordinary, 1, 1), &host(), 0),
        Code::LedgerNotInitialized
    );
    assert_eq!(
        t.code(
            Command::Init {
                config: EXAMPLE.to_vec()
            },
            &human(),
            0
        ),
        Code::Ok
    );
    assert_eq!(
        t.code(
            Command::Init {
                config: EXAMPLE.to_vec()
            },
            &human(),
            0
        ),
        Code::LedgerAlreadyInitialized
    );
}

#[test]
fn command_preconditions_are_enforced() {
    let t = T::with_config(EXAMPLE);
    assert_eq!(
        t.code(reserve("a", "nope", Ordinary, 1, 1), &host(), 0),
        Code::ScopeNotFound
    );
    assert_eq!(t.code(dispatch("ghost"), &host(), 0), Code::AttemptNotFound);
    // Settle twice.
    t.run(reserve("a", "run", Ordinary, 5, 1), &host(), 0).ok();
    assert_eq!(
        t.code(settle("a", 1), &host(), 0),
        Code::AttemptNotDispatched
    );
    t.run(dispatch("a"), &host(), 0).ok();
    assert_eq!(t.code(dispatch("a"), &host(), 0), Code::AttemptNotReserved);
    assert_eq!(t.code(release("a"), &host(), 0), Code::AttemptDispatched);
    assert_eq!(t.code(settle("a", 5), &host(), 0), Code::Ok);
    assert_eq!(
        t.code(settle("a", 5), &host(), 0),
        Code::AttemptAlreadySettled
    );
    assert_eq!(
        t.code(reserve("a", "run", Ordinary, 1, 1), &host(), 0),
        Code::AttemptIdExists
    );
    // Settle after release.
    t.run(reserve("b", "run", Ordinary, 5, 1), &host(), 0).ok();
    assert_eq!(t.code(release("b"), &host(), 0), Code::Ok);
    assert_eq!(
        t.code(settle("b", 1), &host(), 0),
        Code::AttemptAlreadyReleased
    );
    assert_eq!(
        t.code(dispatch("b"), &host(), 0),
        Code::AttemptAlreadyReleased
    );
    assert_eq!(
        t.code(release("b"), &host(), 0),
        Code::AttemptAlreadyReleased
    );
    assert_eq!(
        t.usage("wo", 0).attempts,
        Amount(2),
        "release does not reset attempts"
    );
    // Reconcile without evidence, with unresolvable evidence, by a non-human.
    t.run(reserve("c", "run", Ordinary, 5, 1), &host(), 0).ok();
    t.run(dispatch("c"), &host(), 0).ok();
    t.run(settle_unknown("c"), &host(), 0).ok();
    assert_eq!(
        t.code(reconcile("c", 1, None), &human(), 0),
        Code::EvidenceRequired
    );
    let bogus = HashRef::of(b"nothing").to_string();
    assert_eq!(
        t.code(reconcile("c", 1, Some(bogus)), &human(), 0),
        Code::EvidenceUnverified
    );
    assert_eq!(
        t.code(reconcile("c", 1, Some("sha256:xyz".into())), &human(), 0),
        Code::EvidenceUnverified
    );
    assert_eq!(
        t.code(reconcile("c", 1, Some(good_evidence())), &host(), 0),
        Code::ActorKindNotPermitted
    );
    assert_eq!(
        t.code(reconcile("a", 1, Some(good_evidence())), &human(), 0),
        Code::AttemptNotReconcilable
    );
    // Adjust by a non-human actor.
    for actor in [host(), agent("wo")] {
        assert_eq!(
            t.code(adjust("wo", LimitKind::Cost, Some(1000), false), &actor, 0),
            Code::ActorKindNotPermitted
        );
    }
    // Actors.
    assert_eq!(
        t.code(reserve("h", "run", Handoff, 1, 1), &agent("run"), 0),
        Code::ActorKindNotPermitted
    );
    let mut denied = host();
    denied.allowed = false;
    assert_eq!(
        t.code(reserve("d", "run", Ordinary, 1, 1), &denied, 0),
        Code::ActorUnauthenticated
    );
    assert_eq!(
        t.code(settle("c", 1), &human(), 0),
        Code::ActorKindNotPermitted
    );
    // Malformed.
    let bad_settle = Command::Settle {
        attempt_id: "c".into(),
        outcome: Outcome::Succeeded,
        actual_cost: None,
        effect_outcome: false,
    };
    assert_eq!(t.code(bad_settle, &host(), 0), Code::MalformedCommand);
    assert_eq!(
        t.code(reserve("has space", "run", Ordinary, 1, 1), &host(), 0),
        Code::MalformedCommand
    );
}

#[test]
fn stop_blocks_reserve_and_dispatch_but_not_settlement_or_report() {
    let t = T::with_config(EXAMPLE);
    t.run(reserve("a", "run", Ordinary, 5, 10), &host(), 0).ok();
    t.run(reserve("b", "run", Ordinary, 5, 10), &host(), 0).ok();
    t.run(dispatch("a"), &host(), 0).ok();
    assert_eq!(t.code(stop("wo"), &host(), 30), Code::Ok);
    assert_eq!(
        t.code(reserve("c", "run", Ordinary, 1, 1), &host(), 40),
        Code::ScopeStopped
    );
    assert_eq!(t.code(dispatch("b"), &host(), 40), Code::ScopeStopped);
    assert_eq!(t.code(stop("run"), &host(), 40), Code::ScopeStopped);
    // Time froze at 30: elapsed and the live attempt's accrual.
    let wo = t.usage("wo", 100);
    assert_eq!(wo.elapsed_ms, Amount(30));
    assert_eq!(
        wo.active_ms,
        Amount(30 + 10),
        "a accrued 30 (frozen), b holds its 10 maximum"
    );
    assert_eq!(wo.cost, Amount(10), "financial exposure is kept");
    // Settlement and release stay available.
    assert_eq!(t.code(settle("a", 2), &host(), 100), Code::Ok);
    assert_eq!(t.code(release("b"), &host(), 100), Code::Ok);
    let wo = t.usage("wo", 100);
    assert_eq!((wo.cost, wo.active_ms), (Amount(2), Amount(30)));
    // A human lifts the stop; elapsed includes the pause (limits.md §4).
    assert_eq!(
        t.code(adjust("wo", LimitKind::Cost, None, true), &human(), 150),
        Code::Ok
    );
    assert_eq!(t.usage("wo", 150).elapsed_ms, Amount(150));
    assert_eq!(
        t.code(reserve("c", "run", Ordinary, 1, 1), &host(), 150),
        Code::Ok
    );
}

#[test]
fn agents_stop_only_their_own_scope_and_below() {
    let t = T::with_config(EXAMPLE);
    assert_eq!(
        t.code(stop("wo"), &agent("run"), 0),
        Code::ActorKindNotPermitted
    );
    assert_eq!(t.code(stop("run"), &agent("run"), 0), Code::Ok);
    assert_eq!(t.code(stop("nope"), &host(), 0), Code::ScopeNotFound);
}

#[test]
fn two_concurrent_10ms_attempts_consume_20_active_ms_at_the_parent() {
    let t = T::with_config(&config_with(
        r#"{"scopeId":"wo","kind":"WORK_ORDER","limits":{"activeMs":"25"}},
           {"scopeId":"r","kind":"RUN","parentId":"wo"},
           {"scopeId":"b1","kind":"BRANCH","parentId":"r"},
           {"scopeId":"b2","kind":"BRANCH","parentId":"r"}"#,
    ));
    assert_eq!(
        t.code(reserve("x", "b1", Ordinary, 0, 10), &host(), 0),
        Code::Ok
    );
    assert_eq!(
        t.code(reserve("y", "b2", Ordinary, 0, 10), &host(), 0),
        Code::Ok
    );
    assert_eq!(t.usage("wo", 0).active_ms, Amount(20));
    assert_eq!(t.usage("b1", 0).active_ms, Amount(10));
    assert_eq!(
        t.code(reserve("z", "b1", Ordinary, 0, 6), &host(), 0),
        Code::ActiveMsExhausted
    );
    // Dispatched accrual grows past the maximum; UNKNOWN keeps accruing.
    t.run(dispatch("x"), &host(), 0).ok();
    assert_eq!(t.usage("wo", 15).active_ms, Amount(25));
    t.run(settle_unknown("x"), &host(), 15).ok();
    assert_eq!(t.usage("b1", 40).active_ms, Amount(40));
    let r = t.report(40);
    assert_eq!(r.unknown[0].accrued_active_ms, Amount(40));
    assert!(r.scopes[0]
        .blocked_by
        .iter()
        .any(|b| b.code == Code::ActiveMsExhausted));
}

#[test]
fn elapsed_and_attempt_bounds() {
    let t = T::with_config(&config_with(
        r#"{"scopeId":"wo","kind":"WORK_ORDER","limits":{"elapsedMs":"100","attempts":"2"}}"#,
    ));
    assert_eq!(
        t.code(reserve("a", "wo", Ordinary, 0, 0), &host(), 10),
        Code::Ok
    );
    assert_eq!(t.code(release("a"), &host(), 10), Code::Ok);
    assert_eq!(
        t.code(reserve("b", "wo", Ordinary, 0, 0), &host(), 20),
        Code::Ok
    );
    assert_eq!(
        t.code(reserve("c", "wo", Ordinary, 0, 0), &host(), 30),
        Code::AttemptsExhausted
    );
    assert_eq!(
        t.code(dispatch("b"), &host(), 100),
        Code::ElapsedMsExhausted
    );
    assert_eq!(
        t.code(reserve("c", "wo", Ordinary, 0, 0), &host(), 100),
        Code::ElapsedMsExhausted,
        "elapsed precedes attempts"
    );
}

#[test]
fn dependencies_gate_admission_without_charging_twice() {
    let t = T::with_config(&config_with(
        r#"{"scopeId":"wo","kind":"WORK_ORDER","limits":{"cost":"1000"}},
           {"scopeId":"r","kind":"RUN","parentId":"wo"},
           {"scopeId":"b1","kind":"BRANCH","parentId":"r","limits":{"attempts":"1"}},
           {"scopeId":"b2","kind":"BRANCH","parentId":"r","dependsOn":["b1"]},
           {"scopeId":"b3","kind":"BRANCH","parentId":"r"}"#,
    ));
    assert_eq!(
        t.code(reserve("x", "b2", Ordinary, 7, 0), &host(), 0),
        Code::Ok
    );
    assert_eq!(
        t.usage("b1", 0).cost,
        Amount(0),
        "dependencies are never charged"
    );
    assert_eq!(t.usage("wo", 0).cost, Amount(7));
    assert_eq!(
        t.code(reserve("y", "b1", Ordinary, 1, 0), &host(), 0),
        Code::Ok
    );
    let err = t.run(reserve("z", "b2", Ordinary, 1, 0), &host(), 0);
    let v = err.err().and_then(|e| e.verdict().cloned());
    assert_eq!(v.as_ref().map(|v| v.code), Some(Code::DependencyBlocked));
    assert_eq!(v.and_then(|v| v.scope_id).as_deref(), Some("b1"));
    assert_eq!(
        t.code(reserve("w", "b3", Ordinary, 1, 0), &host(), 0),
        Code::Ok,
        "independent branches continue"
    );
    let r = t.report(0);
    let b1 = r.scopes.iter().find(|s| s.scope_id == "b1");
    assert_eq!(
        b1.map(|s| s.dependents.clone()),
        Some(vec!["b2".to_string()])
    );
    let b2 = r.scopes.iter().find(|s| s.scope_id == "b2");
    assert_eq!(
        b2.map(|s| s.blocked_by[0].code),
        Some(Code::DependencyBlocked)
    );
}

#[test]
fn request_ids_are_idempotent_and_revisions_are_checked() {
    let t = T::with_config(EXAMPLE);
    let req = Request::new("r1", reserve("a", "run", Ordinary, 5, 1));
    let first = t.req(req.clone(), &host(), 0).ok();
    assert_eq!(
        first.as_ref().map(|v| (v.code, v.revision)),
        Some((Code::Ok, Amount(2)))
    );
    let before = t.dump();
    let again = t.req(req.clone().expecting(1), &host(), 0).ok();
    assert_eq!(
        again.map(|v| (v.code, v.revision)),
        Some((Code::Exists, Amount(2)))
    );
    assert_eq!(t.dump(), before, "exists changes nothing");
    let other = Request::new("r1", reserve("b", "run", Ordinary, 5, 1));
    assert_eq!(
        t.req(other, &host(), 0).err().and_then(|e| e.code()),
        Some(Code::ExistsWithDifferentCommand)
    );
    let stale = Request::new("r2", reserve("b", "run", Ordinary, 5, 1)).expecting(1);
    assert_eq!(
        t.req(stale, &host(), 0).err().and_then(|e| e.code()),
        Some(Code::RevisionMismatch)
    );
    let fresh = Request::new("r3", reserve("b", "run", Ordinary, 5, 1)).expecting(2);
    assert_eq!(
        t.req(fresh, &host(), 0).ok().map(|v| v.revision),
        Some(Amount(3))
    );
}

#[test]
fn time_never_runs_backwards_but_report_may_look_back() {
    let t = T::with_config(EXAMPLE);
    assert_eq!(
        t.code(reserve("a", "run", Ordinary, 5, 1), &host(), 100),
        Code::Ok
    );
    assert_eq!(
        t.code(reserve("b", "run", Ordinary, 5, 1), &host(), 99),
        Code::TimeRegressed
    );
    assert_eq!(
        t.code(reserve("b", "run", Ordinary, 5, 1), &host(), 100),
        Code::Ok
    );
    assert_eq!(t.report(50).now_ms, Amount(50));
}

#[test]
fn paired_attempts_settle_only_through_the_broker_or_a_human() {
    let t = T::with_config(EXAMPLE);
    let paired = Command::Reserve {
        attempt_id: "fx".into(),
        operation_id: "inv-1".into(),
        scope_id: "run".into(),
        run_id: Some("run".into()),
        purpose: Ordinary,
        amount: Amount(3),
        max_active_ms: Amount(1000),
        paired: true,
    };
    assert_eq!(
        t.code(paired.clone(), &agent("run"), 0),
        Code::ActorKindNotPermitted
    );
    // The broker: reserve + dispatch inside its own transaction; a rollback leaves nothing.
    let before = t.dump();
    {
        let tx = t
            .conn
            .unchecked_transaction()
            .unwrap_or_else(|e| panic!("{e}"));
        let v = apply(
            &tx,
            &Request::new("p1", paired.clone()),
            &host(),
            0,
            &NoEvidence,
        );
        assert!(v.is_ok(), "{v:?}");
        let v = apply(
            &tx,
            &Request::new("p2", dispatch("fx")),
            &host(),
            0,
            &NoEvidence,
        );
        assert!(v.is_ok(), "{v:?}");
        tx.rollback().unwrap_or_else(|e| panic!("{e}"));
    }
    assert_eq!(
        t.dump(),
        before,
        "the caller's rollback undoes the ledger writes too"
    );
    {
        let tx = t
            .conn
            .unchecked_transaction()
            .unwrap_or_else(|e| panic!("{e}"));
        apply(&tx, &Request::new("p1", paired), &host(), 0, &NoEvidence).ok();
        apply(
            &tx,
            &Request::new("p2", dispatch("fx")),
            &host(),
            0,
            &NoEvidence,
        )
        .ok();
        tx.commit().unwrap_or_else(|e| panic!("{e}"));
    }
    assert_eq!(
        t.code(settle("fx", 3), &host(), 1),
        Code::AttemptPairedToEffect
    );
    assert_eq!(
        t.code(settle("fx", 3), &agent("run"), 1),
        Code::AttemptPairedToEffect
    );
    let r = t.report(5);
    assert_eq!(
        r.unknown.len(),
        1,
        "an unresolved paired attempt is listed for reconciliation"
    );
    assert_eq!(r.unknown[0].state, "DISPATCHED");
    let broker_settle = Command::Settle {
        attempt_id: "fx".into(),
        outcome: Outcome::Succeeded,
        actual_cost: Some(Amount(3)),
        effect_outcome: true,
    };
    assert_eq!(
        t.code(broker_settle.clone(), &agent("run"), 5),
        Code::ActorKindNotPermitted
    );
    assert_eq!(t.code(broker_settle, &host(), 5), Code::Ok);
    assert_eq!(t.usage("wo", 5).cost, Amount(3));
}

#[test]
fn adjust_preserves_spending_attempts_and_start_times() {
    let t = T::with_config(EXAMPLE);
    t.run(reserve("a", "run", Ordinary, 90, 5), &host(), 10)
        .ok();
    assert_eq!(
        t.code(reserve("b", "run", Ordinary, 50, 5), &host(), 10),
        Code::HandoffProtected
    );
    let before = t.usage("wo", 20);
    assert_eq!(
        t.code(
            adjust("wo", LimitKind::Cost, Some(200), false),
            &human(),
            20
        ),
        Code::Ok
    );
    let after = t.usage("wo", 20);
    assert_eq!(
        before, after,
        "usage, attempts, active time and elapsed are preserved"
    );
    assert_eq!(
        t.code(reserve("b", "run", Ordinary, 50, 5), &host(), 20),
        Code::Ok
    );
    // A bound below a child's own bound, or a handoff above cost, is refused.
    assert_eq!(
        t.code(adjust("wo", LimitKind::Cost, Some(5), false), &human(), 20),
        Code::ConfigInvalid
    );
    assert_eq!(
        t.code(
            adjust("nope", LimitKind::Cost, Some(5), false),
            &human(),
            20
        ),
        Code::ScopeNotFound
    );
    let mut no_evidence = adjust("wo", LimitKind::Cost, Some(300), false);
    if let Command::Adjust { evidence_ref, .. } = &mut no_evidence {
        *evidence_ref = None;
    }
    assert_eq!(t.code(no_evidence, &human(), 20), Code::EvidenceRequired);
    assert!(adjust("wo", LimitKind::Cost, Some(1), false)
        .change_ref()
        .is_some());
}

#[test]
fn events_form_an_append_only_hash_chain() {
    let t = T::with_config(EXAMPLE);
    t.run(reserve("a", "run", Ordinary, 5, 1), &host(), 1).ok();
    t.run(dispatch("a"), &host(), 2).ok();
    t.run(settle("a", 4), &host(), 3).ok();
    let mut stmt = t
        .conn
        .prepare(
            "SELECT revision, prev_hash, event_hash, event FROM limits_events ORDER BY revision",
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let rows: Vec<(i64, String, String, Vec<u8>)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap_or_else(|e| panic!("{e}"))
        .filter_map(Result::ok)
        .collect();
    assert_eq!(rows.len(), 4, "one event per applied command");
    let mut prev = String::new();
    for (i, (rev, p, h, event)) in rows.iter().enumerate() {
        assert_eq!(*rev, i as i64 + 1);
        assert_eq!(p, &prev);
        assert_eq!(&ledger::event_hash(p, event).to_string(), h);
        prev = h.clone();
    }
    let head: String = t
        .conn
        .query_row("SELECT head_event_hash FROM limits_meta", [], |r| r.get(0))
        .unwrap_or_default();
    assert_eq!(head, prev);
    assert!(t
        .conn
        .execute("UPDATE limits_events SET event = x'00'", [])
        .is_err());
    assert!(t.conn.execute("DELETE FROM limits_events", []).is_err());
}

#[test]
fn open_in_leaves_the_host_database_untouched() {
    let conn = Connection::open_in_memory().unwrap_or_else(|e| panic!("{e}"));
    conn.execute_batch(
        "PRAGMA user_version = 4;
         CREATE TABLE worlds (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
         CREATE INDEX worlds_body ON worlds(body);
         CREATE TABLE objects (ref TEXT PRIMARY KEY, bytes BLOB) WITHOUT ROWID;
         INSERT INTO worlds (body) VALUES ('genesis');
         INSERT INTO objects VALUES ('sha256:00', x'0102');",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let snapshot = |c: &Connection| -> (i64, Vec<String>, Vec<String>) {
        let v: i64 = c
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap_or(-1);
        let mut s = c
            .prepare("SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_master WHERE tbl_name NOT LIKE 'limits_%' ORDER BY name")
            .unwrap_or_else(|e| panic!("{e}"));
        let schema: Vec<String> = s
            .query_map([], |r| r.get(0))
            .unwrap_or_else(|e| panic!("{e}"))
            .filter_map(Result::ok)
            .collect();
        let mut s = c
            .prepare("SELECT (SELECT group_concat(id || body) FROM worlds) || '|' || (SELECT group_concat(ref || hex(bytes)) FROM objects)")
            .unwrap_or_else(|e| panic!("{e}"));
        let rows: Vec<String> = s
            .query_map([], |r| r.get(0))
            .unwrap_or_else(|e| panic!("{e}"))
            .filter_map(Result::ok)
            .collect();
        (v, schema, rows)
    };
    let before = snapshot(&conn);
    let ledger = Ledger::open_in(&conn);
    let run =
        |cmd: Command, id: &str| ledger.execute(&Request::new(id, cmd), &host(), 0, &NoEvidence);
    assert!(run(
        Command::Init {
            config: EXAMPLE.to_vec()
        },
        "i"
    )
    .is_ok());
    assert!(run(reserve("a", "run", Ordinary, 5, 1), "r").is_ok());
    assert!(ledger.report(0, Some("run")).is_ok());
    assert_eq!(
        snapshot(&conn),
        before,
        "user_version, v4 tables, indexes and rows are untouched"
    );
    assert_eq!(before.0, 4);
}

#[test]
fn standalone_ledger_files_get_their_settings_and_refuse_strangers() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("ledger.db");
    {
        let l = Ledger::create_standalone(&path).unwrap_or_else(|e| panic!("{e}"));
        let c = l.connection();
        let q = |sql: &str| -> String {
            c.query_row(sql, [], |r| r.get::<_, rusqlite::types::Value>(0))
                .map(|v| format!("{v:?}"))
                .unwrap_or_default()
        };
        assert_eq!(q("PRAGMA journal_mode"), "Text(\"wal\")");
        assert_eq!(q("PRAGMA synchronous"), "Integer(2)");
        assert_eq!(q("PRAGMA foreign_keys"), "Integer(1)");
        assert_eq!(q("PRAGMA busy_timeout"), "Integer(5000)");
        assert_eq!(
            q("PRAGMA application_id"),
            format!("Integer({})", crate::ledger::file::APPLICATION_ID)
        );
        assert_eq!(q("PRAGMA user_version"), "Integer(1)");
        let v = l.execute(
            &Request::new(
                "i",
                Command::Init {
                    config: EXAMPLE.to_vec(),
                },
            ),
            &host(),
            0,
            &NoEvidence,
        );
        assert!(v.is_ok(), "{v:?}");
    }
    let again = Ledger::open_standalone(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        again.report(0, None).map(|r| r.revision).ok(),
        Some(Amount(1))
    );
    let store = dir.path().join("store.db");
    {
        let c = Connection::open(&store).unwrap_or_else(|e| panic!("{e}"));
        c.execute_batch("PRAGMA user_version = 4; CREATE TABLE worlds (id INTEGER);")
            .unwrap_or_else(|e| panic!("{e}"));
    }
    assert!(matches!(
        Ledger::open_standalone(&store),
        Err(Error::Storage(crate::ledger::Error::NotALedger { .. }))
    ));
}

#[test]
fn only_create_makes_a_ledger_file() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let code = |r: Result<Ledger<'static>, Error>| match r {
        Err(Error::Rejected(v)) => Some((v.code, v.reason.unwrap_or_default())),
        _ => None,
    };
    // A missing file: refused, naming the path and `world limits init`; nothing created.
    let typo = dir.path().join("typo.db");
    let (c, why) = code(Ledger::open_standalone(&typo)).unwrap_or_else(|| panic!("opened"));
    assert_eq!(c, Code::LedgerNotInitialized);
    assert!(why.contains(&typo.display().to_string()), "{why}");
    assert!(why.contains("world limits init"), "{why}");
    assert!(!typo.exists(), "a ledger file was created");
    // A 0-byte file: refused and left empty.
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap_or_else(|e| panic!("{e}"));
    let (c, why) = code(Ledger::open_standalone(&empty)).unwrap_or_else(|| panic!("opened"));
    assert_eq!(c, Code::LedgerNotInitialized);
    assert!(why.contains("empty"), "{why}");
    assert_eq!(std::fs::metadata(&empty).map(|m| m.len()).ok(), Some(0));
    assert!(
        !dir.path().join("empty.db-wal").exists(),
        "no WAL was started beside it"
    );
    // A SQLite file without tables: refused, not given the schema.
    let bare = dir.path().join("bare.db");
    Connection::open(&bare)
        .and_then(|c| c.execute_batch("VACUUM"))
        .unwrap_or_else(|e| panic!("{e}"));
    let (c, _) = code(Ledger::open_standalone(&bare)).unwrap_or_else(|| panic!("opened"));
    assert_eq!(c, Code::LedgerNotInitialized);
    // create_standalone initialises the empty file; then open_standalone accepts it.
    assert!(Ledger::create_standalone(&empty).is_ok());
    assert!(Ledger::open_standalone(&empty).is_ok());
    assert!(crate::limits::check_ledger_location(&typo.display().to_string()).is_err());
    assert!(crate::limits::check_ledger_location(&empty.display().to_string()).is_ok());
}
