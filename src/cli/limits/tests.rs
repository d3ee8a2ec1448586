//! Unit tests of the limits verbs' flag parsers and confirmation phrases.

use super::*;

#[test]
fn purpose_is_case_insensitive_and_refuses_others() {
    assert_eq!(parse_purpose("ordinary"), Ok(Purpose::Ordinary));
    assert_eq!(parse_purpose("HANDOFF"), Ok(Purpose::Handoff));
    assert_eq!(parse_purpose("Handoff"), Ok(Purpose::Handoff));
    assert!(parse_purpose("urgent").is_err());
}

#[test]
fn now_parses_milliseconds_or_rfc3339() {
    assert_eq!(parse_now(Some("0")).ok(), Some(0));
    assert_eq!(
        parse_now(Some("1700000000000")).ok(),
        Some(1_700_000_000_000)
    );
    assert_eq!(
        parse_now(Some("2023-11-14T22:13:20.250Z")).ok(),
        Some(1_700_000_000_250)
    );
    for bad in ["-1", "01", "1.5", "1e3", "", "2023-11-14"] {
        let e = parse_now(Some(bad)).err().map(|e| e.exit);
        assert_eq!(e, Some(Exit::Usage), "{bad}");
    }
    assert!(parse_now(None).is_ok_and(|n| n > 1_600_000_000_000));
}

#[test]
fn patch_parses_kinds_values_and_null() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let file = dir.path().join("ledger.db");
    let place = Place::Standalone(
        limits::create_standalone_ledger(&file.display().to_string())
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let set = vec!["cost=120".to_string(), "handoff=null".to_string()];
    let p = parse_patch(&place, &set)
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    assert_eq!(p.get(LimitKind::Cost), Some(Some(Amount(120))));
    assert_eq!(p.get(LimitKind::Handoff), Some(None));
    assert_eq!(p.get(LimitKind::Attempts), None);

    let usage = |items: &[&str]| {
        let v: Vec<String> = items.iter().map(|s| s.to_string()).collect();
        parse_patch(&place, &v).err().map(|e| e.exit)
    };
    assert_eq!(usage(&["cost"]), Some(Exit::Usage));
    assert_eq!(usage(&["speed=1"]), Some(Exit::Usage));
    assert_eq!(usage(&["cost=1", "cost=2"]), Some(Exit::Usage));

    let bad = vec!["cost=01".to_string()];
    let v = parse_patch(&place, &bad).ok().and_then(Result::err);
    assert_eq!(v.map(|v| v.code), Some(Code::AmountInvalid));
    let huge = vec![format!("cost={}", u128::MAX).replace("455", "456")];
    let v = parse_patch(&place, &huge).ok().and_then(Result::err);
    assert_eq!(v.map(|v| v.code), Some(Code::OverflowsAmount));
}

#[test]
fn phrases_name_the_exact_change() {
    let raw = include_bytes!("../../../fixtures/limits/example.json").to_vec();
    let r = config::config_ref(&raw).unwrap_or_else(|e| panic!("{e}"));
    let hex = r.to_string();
    let init = phrase(&Command::Init { config: raw }).unwrap_or_default();
    assert_eq!(init, format!("init guide {}", &hex[7..19]));

    let mut limits = BoundsPatch::default();
    limits.set(LimitKind::Cost, Some(Amount(150)));
    let adjust = Command::Adjust {
        scope_id: "wo".into(),
        limits,
        resume: false,
        evidence_ref: None,
    };
    let change = adjust
        .change_ref()
        .map(|r| r.to_string())
        .unwrap_or_default();
    assert_eq!(
        phrase(&adjust).unwrap_or_default(),
        format!("adjust wo {}", &change[7..19])
    );
    // A different change gives a different phrase.
    let mut other = BoundsPatch::default();
    other.set(LimitKind::Cost, Some(Amount(151)));
    let adjust2 = Command::Adjust {
        scope_id: "wo".into(),
        limits: other,
        resume: false,
        evidence_ref: None,
    };
    assert_ne!(phrase(&adjust).ok(), phrase(&adjust2).ok());
    let rec = Command::Reconcile {
        attempt_id: "a1".into(),
        actual_cost: Amount(5),
        evidence_ref: None,
    };
    assert_eq!(phrase(&rec).unwrap_or_default(), "reconcile a1");
}
