//! `world effects [filters]`: effect records as a table or JSON lines.

use crate::broker::listing;
use crate::cli::output::{short, Output};
use crate::cli::table::{Col, Table};
use crate::cli::{read_err, CliError, Context, Exit};

/// The members of a `world effects --json` line (docs/json/effect.schema.json), the fields
/// `--json=FIELDS` may select.
pub const JSON_FIELDS: &[&str] = &[
    "ref",
    "intentId",
    "invocationId",
    "episodeId",
    "effect",
    "scope",
    "cost",
    "allowed",
    "denial",
    "failed",
    "outcome",
    "budgetBefore",
    "budgetAfter",
    "requestRef",
    "resultRef",
];

/// `world effects`: the records `filter` selects, as a table or JSON lines.
pub(super) fn run(
    ctx: &Context,
    out: &mut Output,
    filter: &listing::Filter,
) -> Result<Exit, CliError> {
    let store = ctx.open_read()?;
    let rows = listing::list(store.conn(), filter).map_err(read_err("effects"))?;
    if out.json {
        for r in &rows {
            let mut v = serde_json::to_value(r).unwrap_or_default();
            empty_as_null(&mut v);
            v["outcome"] = crate::ops::outcome::of_effect(&r.record, r.invocation_id.as_deref())
                .as_str()
                .into();
            out.json_line(&v)?;
        }
        return Ok(Exit::Success);
    }
    let mut t = Table::new(list_columns());
    for r in &rows {
        let rec = &r.record;
        let outcome = crate::ops::outcome::of_effect(rec, r.invocation_id.as_deref());
        // Stored values are escaped onto one line (DEC-TRUST3-4).
        let esc = |s: &str| crate::termtext::escape_line(s).into_owned();
        t.add_row(vec![
            short(&r.reference),
            esc(&rec.effect),
            esc(&rec.scope),
            outcome.to_string(),
            if rec.denial.is_empty() {
                "-".into()
            } else {
                esc(&rec.denial)
            },
            rec.cost.to_string(),
            format!("{}→{}", rec.budget_before, rec.budget_after),
            esc(r
                .invocation_id
                .as_deref()
                .or(r.intent_id.as_deref())
                .unwrap_or("-")),
            short(&rec.request_ref),
            if rec.result_ref.is_empty() {
                "-".into()
            } else {
                short(&rec.result_ref)
            },
        ]);
    }
    if rows.is_empty() {
        out.status("no effect records match");
    } else {
        out.table(&t)?;
    }
    Ok(Exit::Success)
}

/// The columns of `world effects` (docs/TABLES.md): the short record hash `effects show`
/// takes always shows; then, as the terminal narrows, RESULT, REQUEST, BUDGET, COST, DENIAL
/// and INVOCATION are hidden in that order.
fn list_columns() -> Vec<Col> {
    vec![
        Col::id("record"),
        Col::id("effect"),
        Col::id("scope"),
        Col::id("outcome"),
        Col::id("denial").drop(5),
        Col::id("cost").drop(3).right(),
        Col::id("budget").drop(4),
        Col::id("invocation").drop(6),
        Col::id("request").drop(2),
        Col::id("result").drop(1),
    ]
}

/// The JSON contract's "absent is null" (DEC-CLI-25): a record's empty `denial` (allowed) and
/// empty `resultRef` (no result) print as `null`, like `intentId`.
pub(super) fn empty_as_null(v: &mut serde_json::Value) {
    for k in ["denial", "resultRef"] {
        if v.get(k).and_then(|x| x.as_str()) == Some("") {
            v[k] = serde_json::Value::Null;
        }
    }
}
