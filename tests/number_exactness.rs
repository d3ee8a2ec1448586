//! Issue 13 §4: no JSON number changes silently on its way through an interpreter. Every
//! number `world invoke --args` accepts round-trips exactly through the `echo` fixture on the
//! embedded interpreter (the coordinator's own path: Go-json input, capsule args, run, output);
//! every number it would not round-trip is refused before anything is written.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use world::ailang::embedded::Embedded;
use world::encoding::trcjson::{self, Bounds, CValue};
use world::interp::numbers::crossing_problem;

fn exact(text: &str) -> String {
    match trcjson::parse(text.as_bytes(), Bounds::UNBOUNDED) {
        Ok(CValue::Number(n)) => n,
        other => panic!("{text} is not a number: {other:?}"),
    }
}

/// Run echo on `{"a": <n>}` the way the coordinator does; returns the output's `a` exactly.
fn echo(n: &str) -> String {
    let source = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/transitions/echo.ail"
    ))
    .unwrap();
    let args: serde_json::Value = serde_json::from_str(&format!("{{\"a\":{n}}}")).unwrap();
    let input = world::encoding::gojson::any_to_vec(&args);
    let out = world::interp::capsule::run_phase(
        &Embedded::new(),
        &source,
        &input,
        Instant::now() + Duration::from_secs(10),
    )
    .unwrap();
    let v = trcjson::parse(&out, Bounds::UNBOUNDED).unwrap();
    match v.get("a") {
        Some(CValue::Number(x)) => x.clone(),
        other => panic!("echo gave {other:?} for {n}"),
    }
}

fn number_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|i| i.to_string()),
        any::<u64>().prop_map(|u| u.to_string()),
        (-(1i64 << 53)..(1i64 << 53)).prop_map(|i| i.to_string()),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| format!("{f:e}")),
        (any::<i32>(), -30i32..30).prop_map(|(m, e)| format!("{m}e{e}")),
        (any::<u32>(), 0u32..20).prop_map(|(m, d)| format!("{m}.{}", "0".repeat(d as usize) + "1")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Accepted ⇒ echo gives back exactly the number sent.
    #[test]
    fn every_accepted_number_round_trips_through_echo(text in number_text()) {
        let n = exact(&text);
        if crossing_problem(&n).is_none() {
            prop_assert_eq!(echo(&text), n, "{} changed on its way through echo", text);
        }
    }
}

/// The issue's cases are refused; their neighbours that do cross are exact.
#[test]
fn the_reported_numbers_are_refused_and_exact_ones_cross() {
    for t in ["9223372036854775807", "1e19", "1e20", "-9.3e18"] {
        assert!(crossing_problem(&exact(t)).is_some(), "{t}");
    }
    for t in [
        "9007199254740992",
        "-9007199254740992",
        "1e21",
        "0.1",
        "1e-7",
        "123456789",
    ] {
        assert!(crossing_problem(&exact(t)).is_none(), "{t}");
        assert_eq!(echo(t), exact(t), "{t}");
    }
}

use crate::invoke_support;

/// Through the binary: the issue's `--args` are refused with exit 1 naming the number, the
/// store unchanged; duplicate keys are refused; an exact big number commits unchanged.
#[test]
fn invoke_refuses_inexact_numbers_and_duplicate_keys_before_writing() {
    let env = invoke_support::Env::new();
    let tok = env.mint("ep1", &["world.apply=world:9"]);
    let before = env.fingerprint();
    for args in [
        r#"{"a":9223372036854775807}"#,
        r#"{"a":1e19}"#,
        r#"{"a":1e20}"#,
        r#"{"a":-9.3e18}"#,
        r#"{"a":1,"a":2}"#,
    ] {
        let out = env.invoke(&tok, "echo", args, &[]);
        invoke_support::assert_exit(&out, 1);
        let err = invoke_support::stderr(&out);
        assert!(
            err.contains("would not reach the transition exactly")
                || err.contains("repeats the member"),
            "{args}: {err}"
        );
        assert_eq!(env.fingerprint(), before, "{args} changed the store");
    }
    let out = env.invoke(
        &tok,
        "echo",
        r#"{"a":9007199254740992,"b":1e21}"#,
        &["--json"],
    );
    invoke_support::assert_exit(&out, 0);
    let v = invoke_support::stdout_json(&out);
    assert_eq!(v["output"]["a"].as_f64(), Some(9007199254740992.0), "{v}");
    env.verify_ok();
}
