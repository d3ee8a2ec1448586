//! One `world log` line: the table's columns and cells and the `--json` members, from one
//! place (docs/TABLES.md, docs/json/log-line.schema.json).

use crate::cli::output::rfc3339;
use crate::cli::table::{cell_text, Col};
use crate::ops::outcome::Outcome;
use crate::store::logview::Row;

/// The columns of `world log` (docs/TABLES.md): INDEX, OUTCOME and ENTRY (the short entry
/// hash `show`/`why` take) always show; as the terminal narrows EPISODE (the invocation id
/// names it too), WRITTEN BY, TIME, INVOCATION and TRANSITION are hidden in that order. Every
/// cell is an identifier, printed whole or not at all.
pub(crate) fn columns(last_index: i64) -> Vec<Col> {
    vec![
        Col::id("index")
            .right()
            .min(last_index.max(0).to_string().len()),
        Col::id("time").drop(3),
        Col::id("written by").drop(2),
        Col::id("transition").drop(5),
        Col::id("outcome"),
        Col::id("episode").drop(1),
        Col::id("entry"),
        Col::id("invocation").drop(4),
    ]
}

/// The members of a `log --json` line (docs/json/log-line.schema.json), the fields
/// `--json=FIELDS` may select.
pub const JSON_FIELDS: &[&str] = &[
    "index",
    "time",
    "logicalTime",
    "writtenBy",
    "kind",
    "transition",
    "outcome",
    "episode",
    "invocation",
    "entry",
    "entryHash",
    "transitionRef",
    "header",
];

/// Hex digits of the ENTRY column (a prefix `show`, `why` and `log get` take).
const ENTRY_W: usize = 12;

/// Rows read before the streamed table is fitted to the terminal (later rows reuse the
/// layout; an identifier wider than its column still prints whole).
pub(super) const FIT_ROWS: usize = 256;

/// What `world log` prints of one entry: the table's cells and the `--json` line's members
/// (docs/json/log-line.schema.json), from one place.
pub(crate) struct Line {
    row: Row,
    outcome: Outcome,
}

impl Line {
    /// The entry's line: its view row and [`crate::ops::outcome::of_row`]'s outcome.
    pub(crate) fn of(store: &crate::store::Store, row: Row) -> Result<Line, crate::store::Error> {
        let outcome = crate::ops::outcome::of_row(store, &row)?;
        Ok(Line { row, outcome })
    }

    fn entry(&self) -> &str {
        let hex = self
            .row
            .entry_hash
            .strip_prefix("sha256:")
            .unwrap_or(&self.row.entry_hash);
        &hex[..hex.len().min(ENTRY_W)]
    }

    fn kind(&self) -> &'static str {
        if self.row.coordinator {
            "invocation"
        } else {
            "commit"
        }
    }

    /// The table's cells, in [`columns`]' order (through `table::cell_text`).
    pub(super) fn cells(&self) -> Vec<String> {
        let r = &self.row;
        let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        [
            r.index.to_string(),
            r.logical_time.map(rfc3339).unwrap_or_else(|| "-".into()),
            r.written_by.clone(),
            match (&r.transition, self.kind()) {
                (Some(t), _) => t.clone(),
                (None, "commit") => "(commit)".into(),
                (None, _) => "-".into(),
            },
            self.outcome.to_string(),
            dash(&r.episode_id),
            self.entry().to_string(),
            dash(&r.invocation_id),
        ]
        .iter()
        // Client-written values (writtenBy, ids) are shown escaped on one line (DEC-TRUST3-4).
        .map(|c| cell_text(&crate::termtext::escape_line(c)))
        .collect()
    }

    /// The `--json` line: every member the table shows, then the entry itself (`header`,
    /// `entryHash`, `transitionRef`, as `log get` prints it).
    pub(super) fn json(&self, entry: &crate::store::LogEntry) -> serde_json::Value {
        let r = &self.row;
        serde_json::json!({
            "index": r.index,
            "time": r.logical_time.map(rfc3339),
            "logicalTime": r.logical_time,
            "writtenBy": r.written_by,
            "kind": self.kind(),
            "transition": r.transition,
            "outcome": self.outcome,
            "episode": r.episode_id,
            "invocation": r.invocation_id,
            "entry": self.entry(),
            "entryHash": entry.entry_hash,
            "transitionRef": entry.transition_ref,
            "header": entry.header,
        })
    }
}
