//! What happened at each log entry, for `world log`'s table: the coordinator's invocation
//! record decoded in SQL (`json_extract`), joined with the output's `ok` and the commit
//! intent's `logicalTime`, streamed in constant memory (issue 16 item 6).

use rusqlite::Connection;

use super::records::{INVOCATION_RECORD_V1, INVOCATION_RECORD_V2};
use super::Error;

/// Filters and range for [`for_each`]; `None` means "any".
#[derive(Clone, Debug, Default)]
pub struct Query {
    /// First index (inclusive; the last entry with `reverse` when `None`).
    pub from: Option<i64>,
    /// At most this many rows.
    pub limit: Option<u64>,
    /// Newest first.
    pub reverse: bool,
    /// Only entries of this episode.
    pub episode: Option<String>,
    /// Only entries whose invocation called this transition (descriptor id).
    pub transition: Option<String>,
    /// Only entries written by this writer (exact, or the part before `:`, e.g. `coordinator`).
    pub writer: Option<String>,
    /// Only entries of this invocation id.
    pub invocation: Option<String>,
    /// Only entries whose commit intent's `logicalTime` is at or after these Unix seconds
    /// (entries without a recorded time are left out).
    pub since: Option<i64>,
}

/// One row of the log view.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    /// `entryIndex`.
    pub index: i64,
    /// The entry hash.
    pub entry_hash: String,
    /// `writtenBy`.
    pub written_by: String,
    /// The entry's transition ref.
    pub transition_ref: String,
    /// The invocation id of a coordinator entry.
    pub invocation_id: Option<String>,
    /// Its episode.
    pub episode_id: Option<String>,
    /// The transition (descriptor id) it called.
    pub transition: Option<String>,
    /// `ok` of the transition's output: `Some(true)` ok, `Some(false)` refused.
    pub ok: Option<bool>,
    /// The commit intent's `logicalTime`, Unix seconds.
    pub logical_time: Option<i64>,
}

impl Row {
    /// `ok`, `refused`, or `commit` for a client commit.
    pub fn outcome(&self) -> &'static str {
        match (self.invocation_id.is_some(), self.ok) {
            (false, _) => "commit",
            (true, Some(true)) => "ok",
            (true, Some(false)) => "refused",
            (true, None) => "-",
        }
    }
}

const SQL: &str = "
SELECT * FROM (
  SELECT l.entry_index AS idx, l.entry_hash_ref, l.written_by, l.transition_ref,
         json_extract(CAST(r.payload AS TEXT), '$.invocationId') AS inv,
         json_extract(CAST(r.payload AS TEXT), '$.episodeId') AS ep,
         json_extract(CAST(r.payload AS TEXT), '$.skillId') AS skill,
         (SELECT json_extract(CAST(o.payload AS TEXT), '$.ok') FROM objects o
           WHERE o.hash_ref = json_extract(CAST(r.payload AS TEXT), '$.output')) AS ok,
         (SELECT json_extract(CAST(i.payload AS TEXT), '$.logicalTime')
            FROM journal j JOIN objects i ON i.hash_ref = j.object_ref
           WHERE j.kind = 'intent'
             AND j.invocation_id = json_extract(CAST(r.payload AS TEXT), '$.invocationId')) AS t
    FROM log_entries l
    LEFT JOIN objects r ON r.hash_ref = l.transition_ref AND r.semantic_id IN (?1, ?2)
   WHERE l.entry_index {CMP} ?4 AND ?3 = ?3
     AND (?5 IS NULL OR l.written_by = ?5 OR substr(l.written_by, 1, length(?5) + 1) = ?5 || ':')
)
WHERE (?6 IS NULL OR ep = ?6)
  AND (?7 IS NULL OR skill = ?7)
  AND (?8 IS NULL OR inv = ?8)
  AND (?9 IS NULL OR t >= ?9)
ORDER BY idx {DIR}
LIMIT ?10";

/// Stream the rows of `q` in index order (descending with `reverse`), calling `f` per row.
/// Memory is constant in the log length; each row costs a few primary-key probes.
///
/// # Errors
/// [`Error::Sqlite`] on a failed read; whatever `f` returns.
pub fn for_each(
    conn: &Connection,
    q: &Query,
    mut f: impl FnMut(Row) -> Result<(), Error>,
) -> Result<(), Error> {
    let start = q.from.unwrap_or(if q.reverse { i64::MAX } else { 0 });
    let lim = q.limit.map(|l| l.min(i64::MAX as u64) as i64).unwrap_or(-1);
    // Two statements rather than a CASE, so SQLite walks the primary key in order and
    // streams (a computed ORDER BY would sort the whole log first).
    let sql = if q.reverse {
        SQL.replace("{CMP}", "<=").replace("{DIR}", "DESC")
    } else {
        SQL.replace("{CMP}", ">=").replace("{DIR}", "ASC")
    };
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query(rusqlite::params![
        INVOCATION_RECORD_V1,
        INVOCATION_RECORD_V2,
        q.reverse,
        start,
        q.writer,
        q.episode,
        q.transition,
        q.invocation,
        q.since,
        lim
    ])?;
    while let Some(r) = rows.next()? {
        let ok: Option<i64> = r.get(7).ok().flatten();
        f(Row {
            index: r.get(0)?,
            entry_hash: r.get(1)?,
            written_by: r.get(2)?,
            transition_ref: r.get(3)?,
            invocation_id: r.get(4).ok().flatten(),
            episode_id: r.get(5).ok().flatten(),
            transition: r.get(6).ok().flatten(),
            ok: ok.map(|v| v != 0),
            logical_time: r.get(8).ok().flatten(),
        })?;
    }
    Ok(())
}
