//! Unit tests of the pure mission core: the seed's example byte for byte, every code of
//! missions.md §4.1, §4.2 and settlement from a minimal sequence, and strict parsing.

use serde_json::{json, Value};

use super::*;
use crate::ledger::Amount;

const SEED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/mission/seed");

fn seed_file(name: &str) -> Vec<u8> {
    std::fs::read(format!("{SEED}/{name}")).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn bytes(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap_or_default()
}

pub(crate) fn contract_json() -> Value {
    serde_json::from_slice(&seed_file("contract.json")).unwrap_or(Value::Null)
}

fn contract_with(patch: Value) -> Contract {
    let mut c = contract_json();
    if let (Some(m), Some(p)) = (c.as_object_mut(), patch.as_object()) {
        for (k, v) in p {
            m.insert(k.clone(), v.clone());
        }
    }
    Contract::parse(&bytes(&c)).unwrap_or_else(|e| panic!("{e}"))
}

fn cmd(v: Value) -> Command {
    Command::parse(&bytes(&v)).unwrap_or_else(|e| panic!("{e}: {v}"))
}

fn n(x: u128) -> Amount {
    Amount(x)
}

pub(crate) fn grant_json(id: &str, subject: &str, limit: &str, depth: &str) -> Value {
    json!({"id": id, "subject": subject, "profile": "finite-v1", "actions": ["write"],
        "resources": ["doc"], "notBefore": "0", "expiresAt": "10000", "limit": limit,
        "canDelegate": true, "depth": depth})
}

pub(crate) fn admit_json(op: &str, attempt: &str, grant: &str, amount: &str) -> Value {
    json!({"type": "admit", "runId": "r", "operationId": op, "attemptId": attempt,
        "grantId": grant, "subject": "agent",
        "action": {"capability": "write", "resource": "doc", "payload": {"value": 1},
            "preconditions": {"revision": 1}},
        "amount": amount, "authorizationCheckedAt": "10", "policy": "ALLOW",
        "mandatoryChecksOk": true})
}

/// run r + root grant g (limit 100, depth 2) on the seed's contract.
fn base(contract: &Contract) -> State {
    let s = Mission::create(contract);
    let s = reduce(&s, &cmd(json!({"type": "startRun", "runId": "r"})), n(10))
        .unwrap_or_else(|e| panic!("{e}"));
    reduce(
        &s,
        &cmd(json!({"type": "grant", "grant": grant_json("g", "agent", "100", "2")})),
        n(10),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

fn seed_contract() -> Contract {
    Contract::parse(&seed_file("contract.json")).unwrap_or_else(|e| panic!("{e}"))
}

fn ok(s: &State, c: Value) -> State {
    reduce(s, &cmd(c.clone()), n(10)).unwrap_or_else(|e| panic!("{e}: {c}"))
}

fn code(s: &State, c: Value, now: u128) -> Code {
    match reduce(s, &cmd(c.clone()), n(now)) {
        Ok(_) => panic!("accepted: {c}"),
        Err(e) => e.code,
    }
}

fn code_as(s: &State, c: Value, actor: &Actor) -> Code {
    match reduce_as(s, &cmd(c.clone()), n(10), actor) {
        Ok(_) => panic!("accepted: {c}"),
        Err(e) => e.code,
    }
}

pub(crate) const EV: &str =
    "sha256:0000000000000000000000000000000000000000000000000000000000000000";

#[test]
fn the_seeds_example_byte_for_byte() {
    let contract = Contract::parse(&seed_file("contract.json")).unwrap_or_else(|e| panic!("{e}"));
    let mut state = Mission::create(&contract);
    for step in ["step1.json", "step2.json", "step3.json"] {
        let c = Command::parse(&seed_file(step)).unwrap_or_else(|e| panic!("{step}: {e}"));
        state = reduce(&state, &c, n(10)).unwrap_or_else(|e| panic!("{step}: {e}"));
    }
    let before = state.clone();
    let step4 = Command::parse(&seed_file("step4.json")).unwrap_or_else(|e| panic!("{e}"));
    let err = reduce(&state, &step4, parse_now("10").unwrap_or_default())
        .err()
        .unwrap_or_else(|| panic!("step 4 must be refused"));
    assert_eq!(err.code, Code::BudgetExhausted);
    assert_eq!(err.code.as_str(), "BUDGET_EXHAUSTED");
    assert_eq!(err.detail("reserved"), Some("80"));
    assert_eq!(err.detail("requested"), Some("30"));
    assert_eq!(
        state, before,
        "a rejected command leaves the state unchanged"
    );
    let json: Value = serde_json::from_slice(&state.canonical()).unwrap_or_default();
    assert_eq!(json["reserved"], json!("80"));
    assert_eq!(json["revision"], json!("3"));
    assert_eq!(json["grants"]["g"]["used"], json!("80"));
    assert_eq!(json["operations"]["o"]["attempts"], json!("1"));
}

#[test]
fn commands_round_trip_through_their_canonical_bytes() {
    for step in ["step1.json", "step2.json", "step3.json", "step4.json"] {
        let c = Command::parse(&seed_file(step)).unwrap_or_else(|e| panic!("{e}"));
        let again = Command::parse(&c.canonical()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(c, again, "{step}");
        let raw = crate::encoding::trcjson::canonicalize(
            &seed_file(step),
            crate::encoding::trcjson::Bounds::UNBOUNDED,
        )
        .unwrap_or_default();
        assert_eq!(
            c.canonical(),
            raw,
            "{step}: canonical bytes are TR-CJSON-1 of the seed's JSON"
        );
    }
    let c = seed_contract();
    assert_eq!(
        c.contract_ref(),
        crate::encoding::HashRef::of(
            &crate::encoding::trcjson::canonicalize(
                &seed_file("contract.json"),
                crate::encoding::trcjson::Bounds::UNBOUNDED
            )
            .unwrap_or_default()
        )
    );
}

#[test]
fn contract_members_are_refused_when_missing_unknown_mistyped_or_out_of_grammar() {
    let good = contract_json();
    let keys: Vec<String> = good
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    for k in &keys {
        let mut c = good.clone();
        c.as_object_mut().map(|m| m.remove(k));
        let e = Contract::parse(&bytes(&c))
            .err()
            .map(|e| (e.code, e.detail("member").map(str::to_string)));
        assert_eq!(
            e,
            Some((Code::ContractInvalid, Some(k.clone()))),
            "missing {k}"
        );
        let mut c = good.clone();
        c[k] = json!(17);
        let e = Contract::parse(&bytes(&c)).err().map(|e| e.code);
        assert_eq!(e, Some(Code::ContractInvalid), "mistyped {k}");
    }
    let mut c = good.clone();
    c["extra"] = json!("x");
    assert_eq!(
        Contract::parse(&bytes(&c)).err().map(|e| e.code),
        Some(Code::ContractInvalid)
    );
    for member in ["budget", "deadline", "maxAttempts", "maxAuthorizationAgeMs"] {
        for bad in [
            "-1",
            "01",
            "1.5",
            "340282366920938463463374607431768211456",
            "",
        ] {
            let mut c = good.clone();
            c[member] = json!(bad);
            let e = Contract::parse(&bytes(&c)).err();
            assert_eq!(
                e.as_ref().map(|e| e.code),
                Some(Code::ContractInvalid),
                "{member}={bad}"
            );
            assert!(
                e.is_some_and(|e| e.reason.contains(member)),
                "names {member}"
            );
        }
    }
    let cases = [
        ("aiwsEdition", json!("0.3"), Code::UnsupportedEdition),
        ("profile", json!("infinite"), Code::UnsupportedProfile),
        ("features", json!(["teleport"]), Code::UnsupportedFeature),
        (
            "features",
            json!(["graphs", "graphs"]),
            Code::ContractInvalid,
        ),
        ("criteria", json!([]), Code::ContractInvalid),
        ("id", json!("has space"), Code::ContractInvalid),
        ("missionId", json!(""), Code::ContractInvalid),
        ("missionId", json!("x".repeat(129)), Code::ContractInvalid),
        ("requiresApproval", json!("false"), Code::ContractInvalid),
    ];
    for (k, v, want) in cases {
        let mut c = good.clone();
        c[k] = v.clone();
        assert_eq!(
            Contract::parse(&bytes(&c)).err().map(|e| e.code),
            Some(want),
            "{k}={v}"
        );
    }
    // Duplicate members and non-objects are refused by the TR-CJSON-1 parser.
    let dup = br#"{"id":"c","id":"d"}"#;
    assert_eq!(
        Contract::parse(dup).err().map(|e| e.code),
        Some(Code::ContractInvalid)
    );
    assert_eq!(
        Contract::parse(b"[]").err().map(|e| e.code),
        Some(Code::ContractInvalid)
    );
    assert_eq!(
        Contract::parse(b"{").err().map(|e| e.code),
        Some(Code::ContractInvalid)
    );
}

#[test]
fn command_members_are_refused_when_missing_unknown_mistyped_or_out_of_grammar() {
    let admit = admit_json("o", "a", "g", "5");
    for k in admit
        .as_object()
        .map(|m| m.keys().cloned().collect::<Vec<_>>())
        .unwrap_or_default()
    {
        if k == "type" {
            continue;
        }
        let mut c = admit.clone();
        c.as_object_mut().map(|m| m.remove(&k));
        let e = Command::parse(&bytes(&c)).err();
        assert_eq!(
            e.as_ref().map(|e| e.code),
            Some(Code::CommandInvalid),
            "missing {k}"
        );
        assert_eq!(
            e.as_ref().and_then(|e| e.detail("member")),
            Some(k.as_str())
        );
        let mut c = admit.clone();
        c[&k] = json!([1]);
        assert_eq!(
            Command::parse(&bytes(&c)).err().map(|e| e.code),
            Some(Code::CommandInvalid),
            "mistyped {k}"
        );
    }
    for bad in ["-1", "01", "1.5", "340282366920938463463374607431768211456"] {
        let mut c = admit.clone();
        c["amount"] = json!(bad);
        assert_eq!(
            Command::parse(&bytes(&c)).err().map(|e| e.code),
            Some(Code::CommandInvalid),
            "{bad}"
        );
    }
    let mut c = admit.clone();
    c["amount"] = json!(80);
    assert_eq!(
        Command::parse(&bytes(&c)).err().map(|e| e.code),
        Some(Code::CommandInvalid),
        "numbers are not amounts"
    );
    let mut c = admit.clone();
    c["action"]["extra"] = json!(1);
    assert_eq!(
        Command::parse(&bytes(&c))
            .err()
            .and_then(|e| e.detail("member").map(str::to_string)),
        Some("action.extra".into())
    );
    let mut c = admit.clone();
    c["dependsOn"] = json!(["x", "x"]);
    assert_eq!(
        Command::parse(&bytes(&c)).err().map(|e| e.code),
        Some(Code::CommandInvalid)
    );
    let refused = [
        json!({"type": "launch"}),
        json!({"runId": "r"}),
        json!({"type": "startRun", "runId": "r", "extra": 1}),
        json!({"type": "startRun", "runId": "bad id"}),
        json!({"type": "settle", "attemptId": "a", "outcome": "SUCCEEDED"}),
        json!({"type": "settle", "attemptId": "a", "outcome": "UNKNOWN", "actualCost": "1"}),
        json!({"type": "settle", "attemptId": "a", "outcome": "maybe", "actualCost": "1"}),
        json!({"type": "reconcile", "attemptId": "a", "outcome": "UNKNOWN", "actualCost": "1", "evidenceRef": EV}),
        json!({"type": "reconcile", "attemptId": "a", "outcome": "FAILED", "actualCost": "1", "evidenceRef": "sha256:xyz"}),
        json!({"type": "approve", "operationId": "o"}),
        json!({"type": "completeRun", "runId": "r", "criteria": {"review": "not-a-ref"}}),
        json!({"type": "grant", "grant": {"id": "g"}}),
        json!({"type": "grant", "parentId": 3, "grant": grant_json("g", "agent", "1", "0")}),
    ];
    for c in refused {
        assert_eq!(
            Command::parse(&bytes(&c)).err().map(|e| e.code),
            Some(Code::CommandInvalid),
            "{c}"
        );
    }
    let mut g = grant_json("g", "agent", "1", "0");
    g["profile"] = json!("other");
    assert_eq!(
        Command::parse(&bytes(&json!({"type": "grant", "grant": g})))
            .err()
            .map(|e| e.code),
        Some(Code::UnsupportedProfile)
    );
    let mut g = grant_json("g", "agent", "1", "0");
    g["notBefore"] = json!("20000");
    assert_eq!(
        Command::parse(&bytes(&json!({"type": "grant", "grant": g})))
            .err()
            .map(|e| e.code),
        Some(Code::CommandInvalid)
    );
}

#[test]
fn every_admission_code_from_a_minimal_sequence_in_precedence_order() {
    let c = seed_contract();
    let s = base(&c);
    let a = |f: &dyn Fn(&mut Value)| {
        let mut v = admit_json("o", "a", "g", "10");
        f(&mut v);
        v
    };
    assert_eq!(
        code(&s, a(&|v| v["runId"] = json!("nope")), 10),
        Code::RunNotFound
    );
    assert_eq!(code(&s, a(&|_| {}), 10000), Code::DeadlinePassed);
    let s1 = ok(&s, a(&|_| {}));
    assert_eq!(
        code(&s1, a(&|v| v["operationId"] = json!("o9")), 10),
        Code::AttemptExists
    );
    assert_eq!(
        code(&s, a(&|v| v["grantId"] = json!("zz")), 10),
        Code::GrantNotFound
    );
    let revoked = ok(&s, json!({"type": "revoke", "grantId": "g"}));
    assert_eq!(code(&revoked, a(&|_| {}), 10), Code::GrantRevoked);
    assert_eq!(
        code(&s, a(&|v| v["subject"] = json!("mallory")), 10),
        Code::SubjectMismatch
    );
    let mut late = grant_json("late", "agent", "100", "0");
    late["notBefore"] = json!("50");
    let s_late = ok(&s, json!({"type": "grant", "grant": late}));
    assert_eq!(
        code(&s_late, a(&|v| v["grantId"] = json!("late")), 10),
        Code::GrantNotLive
    );
    assert_eq!(
        code(&s, a(&|v| v["action"]["capability"] = json!("delete")), 10),
        Code::ActionNotGranted
    );
    assert_eq!(
        code(&s, a(&|v| v["action"]["resource"] = json!("db")), 10),
        Code::ResourceNotGranted
    );
    assert_eq!(
        code(&s, a(&|v| v["policy"] = json!("DENY")), 10),
        Code::PolicyDenied
    );
    assert_eq!(
        code(&s, a(&|v| v["mandatoryChecksOk"] = json!(false)), 10),
        Code::MandatoryChecksFailed
    );
    assert_eq!(
        code(&s, a(&|v| v["authorizationCheckedAt"] = json!("0")), 11),
        Code::AuthorizationStale
    );
    assert_eq!(
        code(&s, a(&|v| v["authorizationCheckedAt"] = json!("11")), 10),
        Code::AuthorizationStale
    );
    let cr = contract_with(json!({"requiresApproval": true}));
    assert_eq!(code(&base(&cr), a(&|_| {}), 10), Code::ApprovalRequired);
    let s2 = ok(&ok(&s, a(&|_| {})), a(&|v| v["attemptId"] = json!("a2")));
    assert_eq!(
        code(&s2, a(&|v| v["attemptId"] = json!("a3")), 10),
        Code::AttemptsExhausted
    );
    assert_eq!(
        code(&s, a(&|v| v["dependsOn"] = json!(["o0"])), 10),
        Code::DependencyNotMet
    );
    let nographs = contract_with(json!({"features": ["triggers"]}));
    assert_eq!(
        code(&base(&nographs), a(&|v| v["dependsOn"] = json!(["o0"])), 10),
        Code::FeatureNotEnabled
    );
    assert_eq!(
        code(&s, a(&|v| v["amount"] = json!("101")), 10),
        Code::BudgetExhausted
    );
    let small = ok(
        &s,
        json!({"type": "grant", "parentId": "g", "grant": grant_json("h", "agent", "5", "1")}),
    );
    assert_eq!(
        code(&small, a(&|v| v["grantId"] = json!("h")), 10),
        Code::GrantLimitExhausted
    );

    // Precedence: a command failing several checks returns the first.
    let everything_wrong = a(&|v| {
        v["subject"] = json!("mallory");
        v["policy"] = json!("DENY");
        v["amount"] = json!("1000");
    });
    assert_eq!(
        code(&s, everything_wrong.clone(), 10),
        Code::SubjectMismatch
    );
    assert_eq!(code(&s, everything_wrong, 10000), Code::DeadlinePassed);
    let policy_and_budget = a(&|v| {
        v["policy"] = json!("DENY");
        v["amount"] = json!("1000");
    });
    assert_eq!(code(&s, policy_and_budget, 10), Code::PolicyDenied);
    // Completed runs.
    let done = ok(
        &s,
        json!({"type": "completeRun", "runId": "r", "criteria": {"review": EV}}),
    );
    assert_eq!(code(&done, a(&|_| {}), 10), Code::RunNotActive);
}

#[test]
fn dependencies_are_met_by_a_succeeded_attempt() {
    let s = base(&seed_contract());
    let s = ok(&s, admit_json("o0", "a0", "g", "10"));
    let s = ok(&s, json!({"type": "dispatch", "attemptId": "a0"}));
    let mut dep = admit_json("o", "a", "g", "10");
    dep["dependsOn"] = json!(["o0"]);
    assert_eq!(code(&s, dep.clone(), 10), Code::DependencyNotMet);
    let failed = ok(
        &s,
        json!({"type": "settle", "attemptId": "a0", "outcome": "FAILED", "actualCost": "3"}),
    );
    assert_eq!(code(&failed, dep.clone(), 10), Code::DependencyNotMet);
    let done = ok(
        &s,
        json!({"type": "settle", "attemptId": "a0", "outcome": "SUCCEEDED", "actualCost": "3"}),
    );
    ok(&done, dep);
}

#[test]
fn grant_codes_and_attenuating_delegation() {
    let c = seed_contract();
    let s = base(&c);
    let d = |parent: &str, g: Value| json!({"type": "grant", "parentId": parent, "grant": g});
    assert_eq!(
        code(
            &s,
            json!({"type": "grant", "grant": grant_json("g", "agent", "1", "0")}),
            10
        ),
        Code::GrantExists
    );
    assert_eq!(
        code(&s, d("zz", grant_json("h", "agent", "1", "0")), 10),
        Code::GrantNotFound
    );
    let no = ok(
        &s,
        json!({"type": "grant", "grant": {"id": "nd", "subject": "agent", "profile": "finite-v1",
        "actions": ["write"], "resources": ["doc"], "notBefore": "0", "expiresAt": "10000", "limit": "10",
        "canDelegate": false, "depth": "3"}}),
    );
    assert_eq!(
        code(&no, d("nd", grant_json("h", "agent", "1", "0")), 10),
        Code::DelegationNotAllowed
    );
    assert_eq!(
        code(&s, d("g", grant_json("h", "agent", "1", "2")), 10),
        Code::DelegationDepthExceeded
    );
    let h = ok(&s, d("g", grant_json("h", "agent", "50", "1")));
    let i = ok(&h, d("h", grant_json("i", "agent", "50", "0")));
    assert_eq!(
        code(&i, d("i", grant_json("j", "agent", "1", "0")), 10),
        Code::DelegationDepthExceeded
    );
    let wider = |f: &dyn Fn(&mut Value)| {
        let mut g = grant_json("k", "agent", "10", "0");
        f(&mut g);
        d("h", g)
    };
    assert_eq!(
        code(&h, wider(&|g| g["limit"] = json!("51")), 10),
        Code::AttenuationViolated
    );
    assert_eq!(
        code(
            &h,
            wider(&|g| g["actions"] = json!(["write", "delete"])),
            10
        ),
        Code::AttenuationViolated
    );
    assert_eq!(
        code(&h, wider(&|g| g["resources"] = json!(["db"])), 10),
        Code::AttenuationViolated
    );
    assert_eq!(
        code(&h, wider(&|g| g["expiresAt"] = json!("10001")), 10),
        Code::AttenuationViolated
    );
    let mut narrow = grant_json("w", "agent", "10", "1");
    narrow["notBefore"] = json!("5");
    let w = ok(&s, d("g", narrow));
    let mut earlier = grant_json("x", "agent", "10", "0");
    earlier["notBefore"] = json!("4");
    assert_eq!(code(&w, d("w", earlier), 10), Code::AttenuationViolated);
    let root = |f: &dyn Fn(&mut Value)| {
        let mut g = grant_json("r2", "agent", "10", "0");
        f(&mut g);
        json!({"type": "grant", "grant": g})
    };
    assert_eq!(
        code(&s, root(&|g| g["limit"] = json!("101")), 10),
        Code::GrantExceedsContract
    );
    assert_eq!(
        code(&s, root(&|g| g["actions"] = json!(["delete"])), 10),
        Code::GrantExceedsContract
    );
    assert_eq!(
        code(&s, root(&|g| g["resources"] = json!(["db"])), 10),
        Code::GrantExceedsContract
    );
    assert_eq!(
        code(&s, root(&|g| g["expiresAt"] = json!("10001")), 10),
        Code::GrantExceedsContract
    );
    let rev = ok(&h, json!({"type": "revoke", "grantId": "g"}));
    assert_eq!(
        code(&rev, d("h", grant_json("k", "agent", "1", "0")), 10),
        Code::GrantRevoked
    );
    // Admission under a delegation charges every grant of the chain.
    let mut ad = admit_json("o", "a", "h", "30");
    let s2 = ok(&h, ad.clone());
    assert_eq!(s2.grants["g"].used, n(30));
    assert_eq!(s2.grants["h"].used, n(30));
    ad["attemptId"] = json!("a2");
    ad["operationId"] = json!("o2");
    ad["amount"] = json!("25");
    assert_eq!(
        code(&s2, ad, 10),
        Code::GrantLimitExhausted,
        "h: 30 + 25 > 50"
    );
    // A revoked ancestor stops its delegations admitting.
    let rev = ok(&s2, json!({"type": "revoke", "grantId": "g"}));
    assert_eq!(
        code(&rev, admit_json("o3", "a3", "h", "1"), 10),
        Code::GrantRevoked
    );
    assert_eq!(
        code(&rev, json!({"type": "revoke", "grantId": "g"}), 10),
        Code::GrantRevoked
    );
    assert_eq!(
        code(&rev, json!({"type": "revoke", "grantId": "zz"}), 10),
        Code::GrantNotFound
    );
}

#[test]
fn settlement_unknown_release_reconcile_and_exposure() {
    let c = seed_contract();
    let s = ok(&base(&c), admit_json("o", "a", "g", "40"));
    let settle = |outcome: &str, cost: Option<&str>| {
        let mut v = json!({"type": "settle", "attemptId": "a", "outcome": outcome});
        if let Some(x) = cost {
            v["actualCost"] = json!(x);
        }
        v
    };
    assert_eq!(
        code(&s, settle("SUCCEEDED", Some("1")), 10),
        Code::NotDispatched
    );
    assert_eq!(
        code(
            &s,
            json!({"type": "settle", "attemptId": "zz", "outcome": "UNKNOWN"}),
            10
        ),
        Code::AttemptNotFound
    );
    let d = ok(&s, json!({"type": "dispatch", "attemptId": "a"}));
    assert_eq!(
        code(&d, json!({"type": "dispatch", "attemptId": "a"}), 10),
        Code::NotAdmitted
    );
    assert_eq!(
        code(&d, json!({"type": "release", "attemptId": "a"}), 10),
        Code::AlreadyDispatched
    );
    // Exposure exceeded: rejected, reservation held, violation recorded.
    let err = reduce(&d, &cmd(settle("SUCCEEDED", Some("41"))), n(10))
        .err()
        .unwrap_or_else(|| panic!("accepted"));
    assert_eq!(err.code, Code::ExposureExceeded);
    assert_eq!(
        (err.detail("amount"), err.detail("actualCost")),
        (Some("40"), Some("41"))
    );
    let after = d.with_violation(&err);
    assert_eq!(after.reserved, n(40));
    assert_eq!(after.violations.len(), 1);
    assert_eq!(after.violations[0].claimed, n(41));
    assert_eq!(
        after.revision, d.revision,
        "a rejection does not count as a revision"
    );
    // Settle within the amount: reservation released, actual added.
    let done = ok(&d, settle("SUCCEEDED", Some("25")));
    assert_eq!(
        (done.reserved, done.settled, done.grants["g"].used),
        (n(0), n(25), n(25))
    );
    assert_eq!(
        code(&done, settle("FAILED", Some("1")), 10),
        Code::AlreadySettled
    );
    assert_eq!(
        code(&done, json!({"type": "release", "attemptId": "a"}), 10),
        Code::AlreadySettled
    );
    // UNKNOWN keeps the full reservation until a HUMAN reconciles.
    let unk = ok(&d, settle("UNKNOWN", None));
    assert_eq!((unk.reserved, unk.grants["g"].used), (n(40), n(40)));
    assert_eq!(
        code(&unk, settle("SUCCEEDED", Some("1")), 10),
        Code::ReconciliationRequired
    );
    let rec = json!({"type": "reconcile", "attemptId": "a", "actualCost": "45", "outcome": "SUCCEEDED", "evidenceRef": EV});
    assert_eq!(
        code(&unk, rec.clone(), 10),
        Code::ActorNotPermitted,
        "HOST may not reconcile"
    );
    let human = Actor::human("human:alice");
    let r = reduce_as(&unk, &cmd(rec.clone()), n(10), &human).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (r.reserved, r.settled, r.grants["g"].used),
        (n(0), n(45), n(45))
    );
    assert_eq!(
        r.violations.len(),
        1,
        "reconcile above the amount is accepted and recorded"
    );
    assert_eq!(r.violations[0].command, "reconcile");
    assert_eq!(
        reduce_as(&r, &cmd(rec), n(10), &human)
            .err()
            .map(|e| e.code),
        Some(Code::NotUnknown)
    );
    // Release of an ADMITTED attempt returns the reservation; the attempt still counts.
    let rel = ok(&s, json!({"type": "release", "attemptId": "a"}));
    assert_eq!(
        (
            rel.reserved,
            rel.grants["g"].used,
            rel.operations["o"].attempts
        ),
        (n(0), n(0), n(1))
    );
    assert_eq!(
        code(&rel, json!({"type": "dispatch", "attemptId": "a"}), 10),
        Code::NotAdmitted
    );
}

#[test]
fn dispatch_rechecks_current_authority() {
    let s = ok(&base(&seed_contract()), admit_json("o", "a", "g", "10"));
    let rev = ok(&s, json!({"type": "revoke", "grantId": "g"}));
    assert_eq!(
        code(&rev, json!({"type": "dispatch", "attemptId": "a"}), 10),
        Code::GrantRevoked
    );
    ok(&rev, json!({"type": "release", "attemptId": "a"}));
    assert_eq!(
        code(&s, json!({"type": "dispatch", "attemptId": "a"}), 10000),
        Code::DeadlinePassed
    );
}

#[test]
fn runs_approvals_actors_and_the_clock() {
    let c = contract_with(json!({"requiresApproval": true}));
    let s = base(&c);
    assert_eq!(
        code(&s, json!({"type": "startRun", "runId": "r"}), 10),
        Code::RunExists
    );
    assert_eq!(
        code(&s, json!({"type": "startRun", "runId": "r2"}), 10000),
        Code::DeadlinePassed
    );
    assert_eq!(
        code(&s, json!({"type": "startRun", "runId": "r2"}), 9),
        Code::TimeRegressed
    );
    let approve = json!({"type": "approve", "operationId": "o", "evidenceRef": EV});
    assert_eq!(code(&s, approve.clone(), 10), Code::ActorNotPermitted);
    let human = Actor::human("human:alice");
    let ap = reduce_as(&s, &cmd(approve.clone()), n(10), &human).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        reduce_as(&ap, &cmd(approve), n(10), &human)
            .err()
            .map(|e| e.code),
        Some(Code::AlreadyApproved)
    );
    let admitted = ok(&ap, admit_json("o", "a", "g", "10"));
    let complete = json!({"type": "completeRun", "runId": "r", "criteria": {"review": EV}});
    assert_eq!(
        code(&admitted, complete.clone(), 10),
        Code::RunHasOutstanding
    );
    assert_eq!(
        code(
            &ap,
            json!({"type": "completeRun", "runId": "r", "criteria": {}}),
            10
        ),
        Code::CriteriaNotMet
    );
    assert_eq!(
        code(
            &ap,
            json!({"type": "completeRun", "runId": "r", "criteria": {"review": EV, "extra": EV}}),
            10
        ),
        Code::CriteriaNotMet
    );
    assert_eq!(
        code(
            &ap,
            json!({"type": "completeRun", "runId": "zz", "criteria": {"review": EV}}),
            10
        ),
        Code::RunNotFound
    );
    let done = ok(&ap, complete.clone());
    assert_eq!(code(&done, complete, 10), Code::RunNotActive);
    // Agents: no root grants, no runs, only their own subject, delegate only what they hold.
    let agent = Actor::agent("cred-1", "agent");
    assert_eq!(
        code_as(&s, json!({"type": "startRun", "runId": "r2"}), &agent),
        Code::ActorNotPermitted
    );
    assert_eq!(
        code_as(
            &s,
            json!({"type": "grant", "grant": grant_json("x", "agent", "1", "0")}),
            &agent
        ),
        Code::ActorNotPermitted
    );
    let other = Actor::agent("cred-2", "other");
    let deleg =
        json!({"type": "grant", "parentId": "g", "grant": grant_json("x", "other", "1", "0")});
    assert_eq!(code_as(&s, deleg.clone(), &other), Code::ActorNotPermitted);
    let dg = reduce_as(&s, &cmd(deleg), n(10), &agent).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        code_as(&dg, admit_json("o", "a", "g", "1"), &other),
        Code::ActorNotPermitted
    );
    assert_eq!(
        code_as(&dg, json!({"type": "revoke", "grantId": "g"}), &agent),
        Code::ActorNotPermitted
    );
    reduce_as(
        &dg,
        &cmd(json!({"type": "revoke", "grantId": "x"})),
        n(10),
        &agent,
    )
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn overflow_is_a_rejection_not_a_wrap() {
    let max = u128::MAX.to_string();
    let c = contract_with(json!({"budget": max}));
    let s = Mission::create(&c);
    let s = ok(&s, json!({"type": "startRun", "runId": "r"}));
    let s = ok(
        &s,
        json!({"type": "grant", "grant": grant_json("g", "agent", &max, "0")}),
    );
    let s = ok(&s, admit_json("o", "a", "g", &max));
    assert_eq!(
        code(&s, admit_json("o2", "a2", "g", "1"), 10),
        Code::BudgetExhausted
    );
    let s = ok(&s, json!({"type": "dispatch", "attemptId": "a"}));
    let s = ok(
        &s,
        json!({"type": "settle", "attemptId": "a", "outcome": "SUCCEEDED", "actualCost": max}),
    );
    assert_eq!(s.settled, Amount(u128::MAX));
}

#[test]
fn rejections_render_code_and_numbers() {
    let s = ok(&base(&seed_contract()), admit_json("o", "a", "g", "80"));
    let e = reduce(&s, &cmd(admit_json("o2", "a2", "g", "30")), n(10))
        .err()
        .unwrap_or_else(|| panic!());
    assert!(
        e.human()
            .starts_with("BUDGET_EXHAUSTED budget=100 reserved=80 settled=0 requested=30"),
        "{}",
        e.human()
    );
    let j = e.to_json();
    assert_eq!(j["code"], json!("BUDGET_EXHAUSTED"));
    assert_eq!(j["budget"], json!("100"));
    for c in Code::ALL {
        assert_eq!(Code::parse(c.as_str()), Some(c));
    }
}
