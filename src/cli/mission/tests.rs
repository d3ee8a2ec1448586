//! Unit tests of `world mission`'s flag parsing and helpers.

use super::*;

#[test]
fn now_is_canonical_and_not_far_ahead() {
    assert_eq!(parse_now(Some("10")).ok(), Some(Amount(10)));
    assert_eq!(
        parse_now(Some("1970-01-01T00:00:00.010Z")).ok(),
        Some(Amount(10))
    );
    for bad in ["-1", "01", "1.5", ""] {
        assert_eq!(
            parse_now(Some(bad)).err().map(|e| e.exit),
            Some(Exit::Usage),
            "{bad}"
        );
    }
    let far = (crate::clock::Clock::System.now_ms() + MAX_NOW_AHEAD_MS + 60_000).to_string();
    assert_eq!(
        parse_now(Some(&far)).err().map(|e| e.exit),
        Some(Exit::Usage)
    );
    let near = (crate::clock::Clock::System.now_ms() + 60_000).to_string();
    assert!(parse_now(Some(&near)).is_ok());
}

#[test]
fn phrases_name_the_mission_and_the_target() {
    let c = Command::Approve {
        operation_id: "o".into(),
        evidence_ref: String::new(),
    };
    assert_eq!(phrase("m", &c), "approve m o");
    let c = Command::Reconcile {
        attempt_id: "a".into(),
        actual_cost: Amount(1),
        outcome: mission::Outcome::Succeeded,
        evidence_ref: String::new(),
    };
    assert_eq!(phrase("m", &c), "reconcile m a");
}
