//! `world effects show REF`: one effect record resolved all the way down to its request and
//! result, with its budget law checked.

use super::list::empty_as_null;
use crate::broker;
use crate::broker::listing;
use crate::cli::output::Output;
use crate::cli::{read_err, CliError, Context, Exit};
use crate::ops::outcome::Outcome;
use crate::store::journal;
use crate::store::records::{EffectRecord, LawViolation};
use crate::store::Object;

/// `world effects show REF`: one record resolved down to its request and result; exit 3
/// (integrity) when its budget law does not hold.
pub(super) fn run(ctx: &Context, out: &mut Output, reference: &str) -> Result<Exit, CliError> {
    let store = ctx.open_read()?;
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
            return Err(CliError::integrity(
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
        view(
            out,
            &Shown {
                reference: &reference,
                rec: &rec,
                outcome,
                held: held.as_deref(),
                law: &law,
                request: &request,
                result: result.as_ref(),
                failure: failure.as_deref(),
            },
        )?;
    }
    Ok(Exit::found_break(law.is_err()))
}

/// One resolved effect record, as `effects show` prints it.
struct Shown<'a> {
    reference: &'a str,
    rec: &'a EffectRecord,
    outcome: Outcome,
    /// The invocation whose log entry holds the record, if one does.
    held: Option<&'a str>,
    law: &'a Result<(), LawViolation>,
    request: &'a Object,
    result: Option<&'a Object>,
    failure: Option<&'a str>,
}

/// The text view of `p`: the record, its budget law in words, request and result.
fn view(out: &mut Output, p: &Shown<'_>) -> Result<(), CliError> {
    // Stored values, and the request and result payloads a transition or a command
    // produced, are shown escaped (DEC-TRUST3-4).
    let esc = crate::termtext::escape_line;
    out.view(format!("record   {}", p.reference))?;
    out.view(format!(
        "effect   {} scope {} cost {}",
        esc(&p.rec.effect),
        esc(&p.rec.scope),
        p.rec.cost
    ))?;
    out.view(format!(
        "budget   {} → {}",
        p.rec.budget_before, p.rec.budget_after
    ))?;
    let status = if p.rec.allowed {
        p.outcome.to_string()
    } else {
        format!("{} ({})", p.outcome, p.rec.denial)
    };
    out.view(format!("outcome  {}", esc(&status)))?;
    if let Some(i) = p.held {
        out.view(format!("invocation {}", esc(i)))?;
    }
    // The budget law (authority-and-broker.md §7): before − cost = after when allowed,
    // before = after when denied. Said in words, with what was checked.
    out.view(format!(
        "law      budget law {}",
        match p.law {
            Ok(()) if p.rec.allowed => format!(
                "holds: {} − cost {} = {}",
                p.rec.budget_before, p.rec.cost, p.rec.budget_after
            ),
            Ok(()) => format!(
                "holds: denied, so nothing was spent ({} = {})",
                p.rec.budget_before, p.rec.budget_after
            ),
            Err(e) => format!("BROKEN: {e}"),
        }
    ))?;
    // The request as its parts, not the stored netstring form (issue 29 §7).
    out.view(format!("request  {}", p.rec.request_ref))?;
    let req = decode_request(&p.request.payload);
    match (req.get("payload"), req.get("nowText")) {
        (Some(payload), Some(at)) => {
            out.view(format!("         at   {}", esc(at.as_str().unwrap_or(""))))?;
            out.view(format!("         args {}", esc(&payload.to_string())))?;
        }
        _ => out.view(format!(
            "         {}",
            esc(&String::from_utf8_lossy(&p.request.payload))
        ))?,
    }
    match p.result {
        Some(r) => {
            out.view(format!("result   {}", p.rec.result_ref))?;
            out.view(format!(
                "         {}",
                esc(&String::from_utf8_lossy(&r.payload))
            ))?;
        }
        None => out.view("result   (none)")?,
    }
    if let Some(msg) = p.failure {
        out.view(format!("failure  {}", crate::termtext::escape_text(msg)))?;
    }
    Ok(())
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
            journal::ReceiptState::Indeterminate => Err(CliError::indeterminate(
                what,
                format!(
                    "{text} has an intent but no outcome: indeterminate, no record was written"
                ),
            )
            .hint(format!(
                "`world receipt {text}` answers it; it is never retried automatically"
            ))),
            journal::ReceiptState::Resolved => receipt.record_ref.ok_or_else(|| {
                CliError::integrity(what, format!("outcome of {text} names no record"))
            }),
        };
    }
    let space = crate::store::refs::Space::ObjectOf(crate::store::records::EFFECT_RECORD);
    crate::store::refs::resolve(conn, &[space], text)
        .map(|c| c.reference)
        .map_err(|e| crate::cli::refs::usage_ref_err(what, e))
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
            "nowText": crate::cli::output::rfc3339(now),
            "payload": payload,
        }))
    })();
    decoded.unwrap_or_else(|| json_or_text(bytes))
}
