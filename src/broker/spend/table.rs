//! The persisted spend tally: the derived table `world_spend_tally` (spec README "Extra state";
//! DEC-PERF-1).
//!
//! One row per episode holds what the broker needs before an effect — the episode's exact spend
//! per `(effect, scope)` and its next effect ordinal — together with the journal seq it is valid
//! up to and the identity of the journal row at that seq (the anchor). A one-shot CLI process
//! reads the row and folds only the journal rows after that seq (including rows another writer,
//! such as the reference daemon, appended), then writes the row back in the same transaction as
//! the intent, so the cost of a call does not grow with the episode.
//!
//! The row is derived state and never trusted blindly: it is used only when its checksum (over
//! every column) holds and its anchor is still the journal row at its seq. A row that fails
//! either check is ignored and rebuilt from the journal. `world verify` recomputes the full fold
//! for every row ([`check`]). The reference ignores the table; dropping it loses nothing.
//!
//! Columns: `episode_id TEXT PRIMARY KEY`, `valid_to_seq INTEGER` (every committed journal row
//! with `seq ≤ valid_to_seq` is folded in), `next_ordinal INTEGER` (NULL when the ordinal space
//! is exhausted), `spend_json TEXT` (`[[effect, scope, "exact decimal sum"], …]`, sorted),
//! `state_json TEXT` (anchor row, largest ordinal, rows seen, pending seqs, corruption),
//! `checksum TEXT` (hex sha256 of the other columns, [`checksum`]).

use std::collections::HashMap;

use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{ordinal_after, Entry, Tally};
use crate::store::spend::{self as rows, TallyRow as Row};
use crate::store::Error as StoreError;

/// The table's name (its rows are read and written by [`crate::store::spend`]).
pub use crate::store::spend::TABLE;

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct State {
    anchor: Option<(String, String, String)>,
    max_ordinal: Option<i64>,
    rows_in_range: u64,
    pending: Vec<i64>,
    corrupt: Option<String>,
}

/// Why a persisted row cannot be trusted (the text `world verify` shows after "spend tally not
/// used (rebuilt on next use): ").
#[derive(Debug, thiserror::Error)]
pub enum RowError {
    /// The checksum does not cover the columns as stored.
    #[error("its checksum does not match its columns (edited)")]
    Checksum,
    /// `spend_json` does not decode.
    #[error("spend_json: {0}")]
    SpendJson(#[source] serde_json::Error),
    /// `state_json` does not decode.
    #[error("state_json: {0}")]
    StateJson(#[source] serde_json::Error),
    /// A sum in `spend_json` is not an integer.
    #[error("spend_json: sum {0:?} is not an integer")]
    Sum(String),
    /// `valid_to_seq` is negative, or an anchor row is present exactly when it is 0.
    #[error("valid_to_seq and the anchor row disagree")]
    Anchor,
    /// `next_ordinal` is not the one after the largest ordinal.
    #[error("next_ordinal disagrees with the largest ordinal")]
    Ordinal,
}

/// Hex sha256 over the row's columns, each length-prefixed, under a domain tag.
pub(super) fn checksum(
    episode: &str,
    seq: i64,
    next_ordinal: Option<i64>,
    spend_json: &str,
    state_json: &str,
) -> String {
    let mut h = Sha256::new();
    h.update(b"world/spend-tally/v1\n");
    let next = next_ordinal.map_or_else(|| "null".to_string(), |n| n.to_string());
    for part in [episode, &seq.to_string(), &next, spend_json, state_json] {
        h.update((part.len() as u64).to_be_bytes());
        h.update(part.as_bytes());
    }
    hex::encode(h.finalize())
}

fn encode(episode: &str, e: &Entry) -> Row {
    let mut spend: Vec<(&String, &String, String)> = e
        .tally
        .spend
        .iter()
        .map(|((effect, scope), v)| (effect, scope, v.to_string()))
        .collect();
    spend.sort();
    let spend_json = serde_json::to_string(&spend).unwrap_or_else(|_| "[]".into());
    let state = State {
        anchor: e.at_seq.clone(),
        max_ordinal: e.tally.max_ordinal,
        rows_in_range: e.tally.rows_in_range,
        pending: e.pending.clone(),
        corrupt: e.tally.corrupt.clone(),
    };
    let state_json = serde_json::to_string(&state).unwrap_or_else(|_| "{}".into());
    let next_ordinal = e.tally.next_ordinal();
    Row {
        valid_to_seq: e.seq,
        next_ordinal,
        checksum: checksum(episode, e.seq, next_ordinal, &spend_json, &state_json),
        spend_json,
        state_json,
    }
}

/// Decode a row; `Err` names why it cannot be trusted.
fn decode(episode: &str, row: &Row) -> Result<Entry, RowError> {
    let want = checksum(
        episode,
        row.valid_to_seq,
        row.next_ordinal,
        &row.spend_json,
        &row.state_json,
    );
    if want != row.checksum {
        return Err(RowError::Checksum);
    }
    let spend: Vec<(String, String, String)> =
        serde_json::from_str(&row.spend_json).map_err(RowError::SpendJson)?;
    let state: State = serde_json::from_str(&row.state_json).map_err(RowError::StateJson)?;
    let mut map = HashMap::new();
    for (effect, scope, sum) in spend {
        let v: i128 = match sum.parse() {
            Ok(v) => v,
            Err(_) => return Err(RowError::Sum(sum)),
        };
        map.insert((effect, scope), v);
    }
    if row.valid_to_seq < 0 || state.anchor.is_some() != (row.valid_to_seq > 0) {
        return Err(RowError::Anchor);
    }
    if ordinal_after(state.max_ordinal) != row.next_ordinal {
        return Err(RowError::Ordinal);
    }
    Ok(Entry {
        seq: row.valid_to_seq,
        at_seq: state.anchor,
        tally: Tally {
            spend: map,
            max_ordinal: state.max_ordinal,
            rows_in_range: state.rows_in_range,
            corrupt: state.corrupt,
        },
        pending: state.pending,
    })
}

/// The episode's persisted entry if the table has a row whose checksum holds (the anchor is
/// checked by the caller against the journal). A row that fails to decode is treated as
/// absent: it is rebuilt, never used.
///
/// # Errors
/// SQLite errors other than a missing table; a row of the wrong column types.
pub(super) fn load(conn: &Connection, episode: &str) -> Result<Option<Entry>, StoreError> {
    if !rows::table_exists(conn)? {
        return Ok(None);
    }
    let Some(row) = rows::read_row(conn, episode)? else {
        return Ok(None);
    };
    let Ok(entry) = decode(episode, &row) else {
        return Ok(None);
    };
    // A checksum that holds but that `world` never wrote: the row was edited and
    // re-checksummed. Never act on it (issue 27 §3, DEC-LEDGER-5); a row with no record at
    // all (an earlier `world`) is rebuilt from the journal instead.
    match rows::checksum_recorded(conn, episode, row.valid_to_seq, &row.checksum)? {
        Some(true) => Ok(Some(entry)),
        Some(false) => Err(StoreError::Corrupt {
            what: format!("the spend tally of episode {episode}"),
            detail: "its checksum holds but is not one world recorded when it wrote the row (edited and re-checksummed); nothing was done — run `world verify`".into(),
        }),
        None => Ok(None),
    }
}

/// Write the episode's entry (creating the table on first use). Call only inside the write
/// transaction that folded it, before it appends its own journal rows.
///
/// # Errors
/// SQLite errors.
pub(super) fn store(conn: &Connection, episode: &str, e: &Entry) -> Result<(), StoreError> {
    rows::write_row(conn, episode, &encode(episode, e))
}

/// What `world verify` found wrong with one persisted tally row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The row's episode.
    pub episode: String,
    /// True when the broker would have used the row (checksum and anchor hold) although it
    /// differs from the full fold: an integrity failure. False when the broker ignores and
    /// rebuilds it (stale or edited): a warning.
    pub trusted: bool,
    /// Why.
    pub reason: String,
}

/// Compare every persisted tally row with the full fold of the journal up to the row's
/// `valid_to_seq` (store-format.md §13.1, DEC-PERF-1). No table: no problems.
///
/// # Errors
/// SQLite errors.
pub fn check(conn: &Connection) -> Result<Vec<Problem>, StoreError> {
    if !rows::table_exists(conn)? {
        return Ok(Vec::new());
    }
    let episodes = rows::episodes(conn)?;
    let top = rows::journal_top(conn)?;
    let mut out = Vec::new();
    for episode in episodes {
        let Some(row) = rows::read_row(conn, &episode)? else {
            continue;
        };
        let problem = |trusted: bool, reason: String| Problem {
            episode: episode.clone(),
            trusted,
            reason,
        };
        let mut stored = match decode(&episode, &row) {
            Ok(e) => e,
            Err(why) => {
                out.push(problem(
                    false,
                    format!("spend tally not used (rebuilt on next use): {why}"),
                ));
                continue;
            }
        };
        match rows::checksum_recorded(conn, &episode, row.valid_to_seq, &row.checksum)? {
            Some(true) => {}
            Some(false) => {
                out.push(problem(
                    true,
                    "spend tally edited: its checksum holds but is not one world recorded when it wrote the row (the broker refuses it)".into(),
                ));
                continue;
            }
            None => {
                out.push(problem(
                    false,
                    "spend tally not used (rebuilt on next use): no checksum of it was recorded (written by an earlier world)".into(),
                ));
                continue;
            }
        }
        if !super::still_valid(conn, &stored, top)? {
            out.push(problem(
                false,
                format!(
                    "spend tally is stale (rebuilt on next use): the journal row at seq {} is not its anchor",
                    stored.seq
                ),
            ));
            continue;
        }
        // Bring both views up to the objects present now, then compare.
        super::recheck_pending(conn, &mut stored, &episode)?;
        let mut full = Entry::empty();
        super::scan(conn, &mut full, &episode, 0, stored.seq)?;
        super::recheck_pending(conn, &mut full, &episode)?;
        full.at_seq = super::row_at(conn, stored.seq)?;
        full.seq = stored.seq;
        full.pending.sort_unstable();
        stored.pending.sort_unstable();
        // What the broker reads: the ordinal, whether the spend is corrupt, and the spend
        // itself when it is not (once a corrupt payload is met the partial sums depend on the
        // order rows were visited and are never read).
        let observable = |e: &Entry| {
            (
                e.tally.next_ordinal(),
                e.pending.clone(),
                e.tally.corrupt.is_some(),
                if e.tally.corrupt.is_some() {
                    Vec::new()
                } else {
                    sorted(&e.tally)
                },
            )
        };
        if observable(&full) != observable(&stored) {
            out.push(problem(
                true,
                format!(
                    "spend tally valid to seq {} differs from the full fold of the journal (spend {:?}, next ordinal {:?}; full fold: spend {:?}, next ordinal {:?})",
                    stored.seq,
                    sorted(&stored.tally),
                    stored.tally.next_ordinal(),
                    sorted(&full.tally),
                    full.tally.next_ordinal()
                ),
            ));
        }
    }
    Ok(out)
}

fn sorted(t: &Tally) -> Vec<(String, String, i128)> {
    let mut v: Vec<_> = t
        .spend
        .iter()
        .map(|((a, b), n)| (a.clone(), b.clone(), *n))
        .collect();
    v.sort();
    v
}
