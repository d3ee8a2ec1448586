//! `world effects`: effect records, pending intents, and one record resolved all the way down.

use clap::{Args as ClapArgs, Subcommand};

use super::output::{short, Output};
use super::table::{Col, Table};
use super::{read_err, CliError, Context, Exit};
use crate::broker::{self, listing};
use crate::store::{journal, Store};

/// List effect records (table or JSON lines), or intents without outcome with --pending.
#[derive(ClapArgs, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    /// Show one record resolved down to its request and result
    #[command(subcommand)]
    cmd: Option<Cmd>,
    /// Only this episode
    #[arg(long)]
    episode: Option<String>,
    /// Only the records of this invocation (e.g. cli:ep1:t1)
    #[arg(long)]
    invocation: Option<String>,
    /// Only denials
    #[arg(long)]
    denied: bool,
    /// Only this effect name
    #[arg(long, value_name = "NAME")]
    effect: Option<String>,
    /// List effect intents without an outcome (indeterminate; never retried)
    #[arg(long)]
    pending: bool,
}

/// `world effects show`.
#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Resolve one effect record down to its request and result
    Show {
        /// The effect record: its ref (sha256:…), a unique prefix of its hex as tables show it
        /// (at least 8 hex digits), or its effect intent id (effect:<episode>:<n>)
        reference: String,
    },
}

/// `world effects show REFERENCE` on behalf of another verb (`world show effect:<ep>:<n>`,
/// an effect that no log entry holds, such as an attended `Registry.Publish`).
pub(crate) fn run_show(
    ctx: &Context,
    out: &mut Output,
    reference: String,
) -> Result<Exit, CliError> {
    run(
        ctx,
        out,
        Args {
            cmd: Some(Cmd::Show { reference }),
            episode: None,
            invocation: None,
            denied: false,
            effect: None,
            pending: false,
        },
    )
}

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

/// Run `world effects`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    let store = ctx.open_read()?;
    if let Some(Cmd::Show { reference }) = args.cmd {
        return show(&store, out, &reference);
    }
    if args.pending {
        return pending(&store, out, args.episode.as_deref());
    }
    let filter = listing::Filter {
        episode: args.episode,
        invocation: args.invocation,
        denied: args.denied,
        effect: args.effect,
    };
    list(&store, out, &filter)
}

/// `world effects show REF`: one record resolved down to its request and result; exit 3
/// (integrity) when its budget law does not hold.
fn show(store: &Store, out: &mut Output, reference: &str) -> Result<Exit, CliError> {
    let reference = record_ref(store.conn(), reference)?;
    let Some((rec, request, result)) =
        broker::resolve_record(store.conn(), &reference).map_err(read_err("effects show"))?
    else {
        return Err(CliError::failed(
            "effects show",
            format!("object not found: {reference}"),
        ));
    };
    let law = rec.check_law();
    let held = listing::list(store.conn(), &listing::Filter::default())
        .map_err(read_err("effects show"))?
        .into_iter()
        .filter(|l| l.reference == reference)
        .find_map(|l| l.invocation_id);
    let outcome = crate::ops::outcome::of_effect(&rec, held.as_deref());
    let failure = if rec.failed {
        broker::failure_message(store.conn(), &reference).map_err(read_err("effects show"))?
    } else {
        None
    };
    for o in std::iter::once(&request).chain(result.iter()) {
        if !o.verifies() {
            return Err(CliError::new(
                Exit::Integrity,
                "effects show",
                format!("object {} does not re-hash", o.meta.hash),
            ));
        }
    }
    if out.json {
        let mut record = serde_json::to_value(&rec).unwrap_or_default();
        empty_as_null(&mut record);
        out.json_line(&serde_json::json!({
            "ref": reference,
            "outcome": outcome,
            "record": record,
            "consistent": law.is_ok(),
            "request": decode_request(&request.payload),
            "result": result.as_ref().map(|r| json_or_text(&r.payload)),
            "failure": failure,
        }))?;
    } else {
        // Stored values, and the request and result payloads a transition or a command
        // produced, are shown escaped (DEC-TRUST3-4).
        let esc = crate::termtext::escape_line;
        out.view(format!("record   {reference}"))?;
        out.view(format!(
            "effect   {} scope {} cost {}",
            esc(&rec.effect),
            esc(&rec.scope),
            rec.cost
        ))?;
        out.view(format!(
            "budget   {} → {}",
            rec.budget_before, rec.budget_after
        ))?;
        let status = if rec.allowed {
            outcome.to_string()
        } else {
            format!("{outcome} ({})", rec.denial)
        };
        out.view(format!("outcome  {}", esc(&status)))?;
        if let Some(i) = &held {
            out.view(format!("invocation {}", esc(i)))?;
        }
        // The budget law (authority-and-broker.md §7): before − cost = after when allowed,
        // before = after when denied. Said in words, with what was checked.
        out.view(format!(
            "law      budget law {}",
            match &law {
                Ok(()) if rec.allowed => format!(
                    "holds: {} − cost {} = {}",
                    rec.budget_before, rec.cost, rec.budget_after
                ),
                Ok(()) => format!(
                    "holds: denied, so nothing was spent ({} = {})",
                    rec.budget_before, rec.budget_after
                ),
                Err(e) => format!("BROKEN: {e}"),
            }
        ))?;
        // The request as its parts, not the stored netstring form (issue 29 §7).
        out.view(format!("request  {}", rec.request_ref))?;
        let req = decode_request(&request.payload);
        match (req.get("payload"), req.get("nowText")) {
            (Some(payload), Some(at)) => {
                out.view(format!("         at   {}", esc(at.as_str().unwrap_or(""))))?;
                out.view(format!("         args {}", esc(&payload.to_string())))?;
            }
            _ => out.view(format!(
                "         {}",
                esc(&String::from_utf8_lossy(&request.payload))
            ))?,
        }
        match &result {
            Some(r) => {
                out.view(format!("result   {}", rec.result_ref))?;
                out.view(format!(
                    "         {}",
                    esc(&String::from_utf8_lossy(&r.payload))
                ))?;
            }
            None => out.view("result   (none)")?,
        }
        if let Some(msg) = &failure {
            out.view(format!("failure  {}", crate::termtext::escape_text(msg)))?;
        }
    }
    Ok(if law.is_ok() {
        Exit::Success
    } else {
        Exit::Integrity
    })
}

/// `world effects --pending`: the effect intents without an outcome (of one episode).
fn pending(store: &Store, out: &mut Output, episode: Option<&str>) -> Result<Exit, CliError> {
    let pending = journal::pending(store.conn()).map_err(read_err("effects --pending"))?;
    let mut n = 0;
    for (seq, id, obj_ref) in pending {
        if !id.starts_with("effect:") {
            continue;
        }
        if let Some(ep) = episode {
            if !id.starts_with(&format!("effect:{ep}:")) {
                continue;
            }
        }
        let payload = store
            .object(&obj_ref)
            .map_err(read_err("effects --pending"))?
            .map(|o| o.payload)
            .unwrap_or_default();
        let v: serde_json::Value =
            serde_json::from_slice(&payload).unwrap_or(serde_json::Value::Null);
        n += 1;
        if out.json {
            out.json_line(&serde_json::json!({"seq": seq, "invocationId": id, "state": "indeterminate", "outcome": crate::ops::outcome::of_pending_effect(), "intent": v}))?;
        } else {
            let esc = crate::termtext::escape_line;
            out.line(format!(
                "{} {}: {} {} cost {} request {} (never retried automatically)",
                esc(&id),
                crate::ops::outcome::of_pending_effect(),
                esc(v["effect"].as_str().unwrap_or("?")),
                esc(v["scope"].as_str().unwrap_or("?")),
                v["cost"],
                esc(v["requestRef"].as_str().unwrap_or("?"))
            ))?;
        }
    }
    if !out.json && n == 0 {
        out.status("no pending effect intents");
    }
    Ok(Exit::Success)
}

/// `world effects`: the records `filter` selects, as a table or JSON lines.
fn list(store: &Store, out: &mut Output, filter: &listing::Filter) -> Result<Exit, CliError> {
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
pub(crate) fn list_columns() -> Vec<Col> {
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

/// The effect record `text` names: a full ref, a unique hex prefix (≥ 6 digits, with or
/// without `sha256:`, a trailing `…` ignored), or an effect intent id whose outcome names it.
fn record_ref(conn: &rusqlite::Connection, text: &str) -> Result<String, CliError> {
    let what = "effects show";
    if let Some(rest) = text.strip_prefix("effect:") {
        if rest.is_empty() {
            return Err(CliError::usage(
                what,
                format!("{text:?} is not an effect intent id"),
            ));
        }
        // The effect receipt already resolves an intent id to its outcome's record.
        let receipt = journal::receipt(conn, text).map_err(read_err(what))?;
        return match receipt.state {
            journal::ReceiptState::NotStarted => {
                Err(CliError::failed(what, format!("no effect intent {text}"))
                    .with_code("not_found")
                    .hint(no_intent_hint(conn, rest)?))
            }
            journal::ReceiptState::Indeterminate => Err(CliError::new(
                Exit::Indeterminate,
                what,
                format!(
                    "{text} has an intent but no outcome: indeterminate, no record was written"
                ),
            )
            .hint(format!(
                "`world receipt {text}` answers it; it is never retried automatically"
            ))),
            journal::ReceiptState::Resolved => receipt.record_ref.ok_or_else(|| {
                CliError::new(
                    Exit::Integrity,
                    what,
                    format!("outcome of {text} names no record"),
                )
            }),
        };
    }
    let space = crate::store::refs::Space::ObjectOf(crate::store::records::EFFECT_RECORD);
    crate::store::refs::resolve(conn, &[space], text)
        .map(|c| c.reference)
        .map_err(|e| super::refs::usage_ref_err(what, e))
}

/// What to try when `effect:<rest>` names no intent: the episode's intent ids when it has
/// some (the first and last few, and how many), else that it has none and where the records
/// are; an id without `:<n>` is told the shape (issue 29).
fn no_intent_hint(conn: &rusqlite::Connection, rest: &str) -> Result<String, CliError> {
    let Some((episode, n)) = rest
        .rsplit_once(':')
        .filter(|(e, n)| !e.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    else {
        return Ok(format!(
            "an effect intent id is effect:<episode>:<n> (n counts from 0); `world effects --episode {}` lists an episode's records with their ids",
            crate::termtext::escape_line(rest.split(':').next().unwrap_or(rest))
        ));
    };
    let ids: Vec<String> = journal::episode_effect_rows(conn, episode, journal::Kind::Intent)
        .map_err(read_err("effects show"))?
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    let ep = crate::termtext::escape_line(episode);
    Ok(match ids.len() {
        0 => format!(
            "episode {ep} has no effect intents (n = {n}); `world effects` lists every effect record and `world log --episode {ep}` its entries"
        ),
        k => {
            let shown = if k <= 6 {
                ids.join(", ")
            } else {
                format!("{}, … {}", ids[..3].join(", "), ids[k - 2..].join(", "))
            };
            format!(
                "episode {ep} has {k} effect intent(s): {}; `world effects --episode {ep}` lists their records",
                crate::termtext::escape_line(&shown)
            )
        }
    })
}

/// The JSON contract's "absent is null" (DEC-CLI-25): a record's empty `denial` (allowed) and
/// empty `resultRef` (no result) print as `null`, like `intentId`.
fn empty_as_null(v: &mut serde_json::Value) {
    for k in ["denial", "resultRef"] {
        if v.get(k).and_then(|x| x.as_str()) == Some("") {
            v[k] = serde_json::Value::Null;
        }
    }
}

/// A payload as JSON when it is JSON, else as text (nested JSON stays JSON, DEC-CLI-25).
fn json_or_text(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|_| serde_json::Value::String(String::from_utf8_lossy(bytes).into_owned()))
}

/// A `world/effect-request/v1` payload (`<len>:<effect><len>:<scope><cost>:<now>:<payload>`,
/// [`crate::broker::request_bytes`]) as `{effect, scope, cost, now, nowText, payload}`, the
/// payload as JSON; the raw text when it does not decode.
fn decode_request(bytes: &[u8]) -> serde_json::Value {
    fn field<'a>(rest: &mut &'a [u8]) -> Option<&'a [u8]> {
        let colon = rest.iter().position(|b| *b == b':')?;
        let n: usize = std::str::from_utf8(&rest[..colon]).ok()?.parse().ok()?;
        let body = rest.get(colon + 1..colon + 1 + n)?;
        *rest = &rest[colon + 1 + n..];
        Some(body)
    }
    fn number(rest: &mut &[u8]) -> Option<i64> {
        let colon = rest.iter().position(|b| *b == b':')?;
        let n = std::str::from_utf8(&rest[..colon]).ok()?.parse().ok()?;
        *rest = &rest[colon + 1..];
        Some(n)
    }
    let decoded = (|| {
        let mut rest = bytes;
        let effect = std::str::from_utf8(field(&mut rest)?).ok()?;
        let scope = std::str::from_utf8(field(&mut rest)?).ok()?;
        let cost = number(&mut rest)?;
        let now = number(&mut rest)?;
        let payload: serde_json::Value = serde_json::from_slice(rest).ok()?;
        Some(serde_json::json!({
            "effect": effect,
            "scope": scope,
            "cost": cost,
            "now": now,
            "nowText": super::output::rfc3339(now),
            "payload": payload,
        }))
    })();
    decoded.unwrap_or_else(|| json_or_text(bytes))
}
