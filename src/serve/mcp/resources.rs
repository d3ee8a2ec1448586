//! MCP resources (DEC-MCP-6): what an agent needs to inspect its own episode, read-only.
//!
//! | URI | Contents |
//! |---|---|
//! | `world://episodes/{episode}` | the episode's entries: `{"episodeId", "entries": [log-view row…]}` |
//! | `world://entries/{index}` | exactly what `world show --json <index>` prints |
//! | `world://receipts/{invocationId}` | exactly what `world receipt --json <id>` prints |
//! | `world://records/{ref}` | an invocation or effect record's payload (`world object get --payload`) |
//!
//! A session sees only its own episode: an entry of another episode (or a client commit), a
//! receipt of another episode's id, a record no record of the episode names — all answer
//! `-32002` "resource not found", the same as a URI that names nothing.

use serde_json::{json, Value};

use super::state::State;
use crate::store::read::{
    Error, InvocationRecord, LogQuery as Query, LogRow as Row, Object, Store, EFFECT_RECORD,
};

/// The MIME type of every resource.
pub const MIME: &str = "application/json";
/// Entries per `resources/list` page.
pub const PAGE: u64 = 50;

/// The resource templates (`resources/templates/list`).
pub fn templates() -> Value {
    json!([
        {"uriTemplate": "world://episodes/{episode}", "name": "episode",
         "title": "Episode log", "description": "The entries of your session's episode (log-view rows).", "mimeType": MIME},
        {"uriTemplate": "world://entries/{index}", "name": "entry",
         "title": "Log entry", "description": "One entry of your episode as `world show --json` prints it: header, input, plan, effects with budget before→after, output, receipt.", "mimeType": MIME},
        {"uriTemplate": "world://receipts/{invocationId}", "name": "receipt",
         "title": "Receipt", "description": "What happened to an invocation or effect of your episode, as `world receipt --json` prints it.", "mimeType": MIME},
        {"uriTemplate": "world://records/{ref}", "name": "record",
         "title": "Record", "description": "An invocation record or effect record of your episode (the stored object's payload).", "mimeType": MIME},
    ])
}

/// The URI of the episode resource.
pub fn episode_uri(episode: &str) -> String {
    format!("world://episodes/{episode}")
}

/// The URI of a receipt resource.
pub fn receipt_uri(invocation_id: &str) -> String {
    format!("world://receipts/{invocation_id}")
}

fn resource(uri: String, name: String, description: String) -> Value {
    json!({"uri": uri, "name": name, "description": description, "mimeType": MIME})
}

/// One page of the episode's resources after entry `after` (exclusive), and the next cursor.
///
/// # Errors
/// Store reads.
pub fn list(
    s: &Store,
    episode: &str,
    after: Option<i64>,
) -> Result<(Vec<Value>, Option<i64>), Error> {
    let mut out = Vec::new();
    if after.is_none() {
        out.push(resource(
            episode_uri(episode),
            format!("episode {episode}"),
            "The entries of this episode".into(),
        ));
    }
    let mut rows: Vec<Row> = Vec::new();
    s.log_rows(
        &Query {
            from: Some(after.map_or(0, |a| a + 1)),
            limit: Some(PAGE + 1),
            episode: Some(episode.to_string()),
            ..Query::default()
        },
        |r| {
            rows.push(r);
            Ok(())
        },
    )?;
    let next = (rows.len() as u64 > PAGE).then(|| rows[PAGE as usize - 1].index);
    rows.truncate(PAGE as usize);
    for r in &rows {
        let outcome = crate::ops::outcome::of_row(s, r)?;
        let inv = r.invocation_id.clone().unwrap_or_default();
        let what = r.transition.clone().unwrap_or_default();
        out.push(resource(
            format!("world://entries/{}", r.index),
            format!("entry {} {what}", r.index),
            format!("Entry {} ({inv}, {outcome})", r.index),
        ));
        out.push(resource(
            receipt_uri(&inv),
            format!("receipt {inv}"),
            format!("The receipt of {inv}"),
        ));
        out.push(resource(
            format!("world://records/{}", r.transition_ref),
            format!("invocation record {inv}"),
            format!("The invocation record of {inv}"),
        ));
        if let Some(rec) = record_of(s, &r.transition_ref)? {
            for e in rec.effects.unwrap_or_default() {
                out.push(resource(
                    format!("world://records/{e}"),
                    format!("effect record {e}"),
                    format!("An effect record of {inv}"),
                ));
            }
        }
    }
    Ok((out, next))
}

fn record_of(s: &Store, reference: &str) -> Result<Option<InvocationRecord>, Error> {
    Ok(s.object(reference)?
        .filter(Object::verifies)
        .and_then(|o| InvocationRecord::decode(&o.meta.semantic_id, &o.payload).ok()))
}

/// Is `invocation_id` an id of `episode` (`<surface>:<episode>:…` or `effect:<episode>:<n>`)?
fn of_episode(invocation_id: &str, episode: &str) -> bool {
    invocation_id
        .split_once(':')
        .and_then(|(ns, rest)| matches!(ns, "cli" | "a2a" | "mcp" | "effect").then_some(rest))
        .and_then(|rest| rest.strip_prefix(episode))
        .and_then(|rest| rest.strip_prefix(':'))
        .is_some_and(|rest| !rest.is_empty())
}

fn line(v: &impl serde::Serialize) -> String {
    let mut t = serde_json::to_string(v).unwrap_or_default();
    t.push('\n');
    t
}

/// Read `uri` for a session of `episode`: the text, or `None` when it names nothing this
/// session may see.
///
/// # Errors
/// Store reads.
pub fn read(s: &Store, episode: &str, uri: &str) -> Result<Option<String>, Error> {
    let Some(rest) = uri.strip_prefix("world://") else {
        return Ok(None);
    };
    let Some((kind, key)) = rest.split_once('/') else {
        return Ok(None);
    };
    match kind {
        "episodes" if key == episode => {
            let mut rows = Vec::new();
            s.log_rows(
                &Query {
                    episode: Some(episode.to_string()),
                    ..Query::default()
                },
                |r| {
                    rows.push(r);
                    Ok(())
                },
            )?;
            Ok(Some(line(&json!({"episodeId": episode, "entries": rows}))))
        }
        "entries" => {
            let Some(index) = key
                .parse::<i64>()
                .ok()
                .filter(|_| key.bytes().all(|b| b.is_ascii_digit()))
            else {
                return Ok(None);
            };
            let Some(v) = crate::ops::show::entry_view(s, index)? else {
                return Ok(None);
            };
            let mine = v["invocation"]["episodeId"].as_str() == Some(episode);
            Ok(mine.then(|| line(&v)))
        }
        "receipts" if of_episode(key, episode) => {
            let r = crate::ops::invoke::receipt(s, key)?;
            Ok(Some(line(&r)))
        }
        "records" => {
            let Some(obj) = s.object(key)?.filter(Object::verifies) else {
                return Ok(None);
            };
            if let Ok(rec) = InvocationRecord::decode(&obj.meta.semantic_id, &obj.payload) {
                return Ok((rec.episode_id == episode)
                    .then(|| String::from_utf8_lossy(&obj.payload).into_owned()));
            }
            if obj.meta.semantic_id != EFFECT_RECORD {
                return Ok(None);
            }
            let named = s.records_of(episode)?.values().any(|r| {
                r.effects
                    .as_ref()
                    .is_some_and(|e| e.iter().any(|x| x == key))
            });
            Ok(named.then(|| String::from_utf8_lossy(&obj.payload).into_owned()))
        }
        _ => Ok(None),
    }
}

/// New entries landed (`rows`, in index order): send `notifications/resources/updated` to each
/// session subscribed to the episode resource or to a receipt they resolve.
pub fn landed(state: &State, rows: &[Row]) {
    if rows.is_empty() {
        return;
    }
    for session in state.sessions() {
        let subs = session
            .subscriptions
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default();
        if subs.is_empty() {
            continue;
        }
        let Some(sid) = session.notify_stream.lock().ok().and_then(|s| s.clone()) else {
            continue;
        };
        let mut uris = Vec::new();
        for r in rows
            .iter()
            .filter(|r| r.episode_id.as_deref() == Some(&session.episode))
        {
            uris.push(episode_uri(&session.episode));
            if let Some(inv) = &r.invocation_id {
                uris.push(receipt_uri(inv));
            }
            uris.push(format!("world://entries/{}", r.index));
        }
        uris.dedup();
        for uri in uris.into_iter().filter(|u| subs.contains(u)) {
            state.push(
                &sid,
                &json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}}),
            );
        }
    }
}

/// The rows of entries after `before` (exclusive; `None`: all), for [`landed`].
///
/// # Errors
/// Store reads.
pub fn rows_after(s: &Store, before: Option<i64>) -> Result<Vec<Row>, Error> {
    let mut rows = Vec::new();
    s.log_rows(
        &Query {
            from: Some(before.map_or(0, |b| b + 1)),
            limit: Some(1000),
            ..Query::default()
        },
        |r| {
            rows.push(r);
            Ok(())
        },
    )?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_belong_to_one_episode() {
        assert!(of_episode("a2a:ep1:t", "ep1"));
        assert!(of_episode("effect:ep1:3", "ep1"));
        assert!(!of_episode("effect:ep10:3", "ep1"));
        assert!(!of_episode("rest:ep1:x", "ep1"));
        assert!(!of_episode("mcp:ep1:", "ep1"));
    }
}
