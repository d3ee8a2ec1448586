//! The derived table `world_a2a_tasks` (spec README "Extra state"; DEC-A2A-5): the A2A v1.0
//! and v0.3 tasks of `world serve` — their context id, conversation history and the state of a
//! task that is not (or not yet) an invocation (`TASK_STATE_INPUT_REQUIRED`, `…_CANCELED`,
//! `…_REJECTED`, `…_FAILED`).
//!
//! A task's id is its invocation id `a2a:<episode>:<messageId>`. Whether that invocation ran is
//! still read from the journal (the receipt is the truth for `COMPLETED` and `WORKING`); this
//! table only adds what the journal cannot hold. The reference ignores it; dropping it loses
//! the context ids, histories and not-invoked tasks, never a commit.
//!
//! Rows are ordered for `ListTasks` by `(updated_ms, seq)`, newest first: `seq` is one more
//! than the largest in the table at each write, so two writes in the same millisecond keep
//! their order.

use rusqlite::{Connection, OptionalExtension};

use super::{Error, Store};

/// The table's name.
pub const TABLE: &str = "world_a2a_tasks";

const DDL: &str = "CREATE TABLE IF NOT EXISTS world_a2a_tasks (
  task_id TEXT PRIMARY KEY,
  episode_id TEXT NOT NULL,
  context_id TEXT NOT NULL,
  state TEXT NOT NULL,
  invoked INTEGER NOT NULL,
  history_json TEXT NOT NULL,
  status_message_json TEXT,
  updated_ms INTEGER NOT NULL,
  seq INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS world_a2a_tasks_by_episode
  ON world_a2a_tasks(episode_id, updated_ms, seq)";

/// One task row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskRow {
    /// `a2a:<episode>:<messageId>` (also the invocation id when `invoked`).
    pub task_id: String,
    /// The session's episode (a session sees only its episode's tasks).
    pub episode_id: String,
    /// The A2A context id (the client's, or the episode when it gave none).
    pub context_id: String,
    /// The stored state, an A2A v1.0 `TaskState` name (`TASK_STATE_…`). For an invoked task
    /// the receipt decides `COMPLETED`/`WORKING`; this is what the row says otherwise.
    pub state: String,
    /// True once an invocation with id `task_id` was started for the task.
    pub invoked: bool,
    /// The conversation: a JSON array of A2A v1.0 `Message` objects, oldest first.
    pub history_json: String,
    /// The status message (a JSON `Message`), if any.
    pub status_message_json: Option<String>,
    /// When the state last changed, Unix milliseconds.
    pub updated_ms: i64,
    /// Write order (assigned by [`put`]).
    pub seq: i64,
}

/// The ordering key of a row in a listing: `(updated_ms, seq, task_id, state, invoked,
/// context_id)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskKey {
    /// When the state last changed, Unix milliseconds.
    pub updated_ms: i64,
    /// Write order.
    pub seq: i64,
    /// The task id.
    pub task_id: String,
    /// The stored state.
    pub state: String,
    /// Whether an invocation was started.
    pub invoked: bool,
    /// The context id.
    pub context_id: String,
}

fn table_exists(conn: &Connection) -> Result<bool, Error> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1")?
        .query_row([TABLE], |_| Ok(()))
        .optional()?
        .is_some())
}

/// The row of `task_id`, if any (none when the table does not exist yet).
///
/// # Errors
/// [`Error::Sqlite`].
pub fn get(conn: &Connection, task_id: &str) -> Result<Option<TaskRow>, Error> {
    if !table_exists(conn)? {
        return Ok(None);
    }
    Ok(conn
        .prepare_cached(
            "SELECT task_id, episode_id, context_id, state, invoked, history_json,
                    status_message_json, updated_ms, seq
               FROM world_a2a_tasks WHERE task_id = ?1",
        )?
        .query_row([task_id], |r| {
            Ok(TaskRow {
                task_id: r.get(0)?,
                episode_id: r.get(1)?,
                context_id: r.get(2)?,
                state: r.get(3)?,
                invoked: r.get::<_, i64>(4)? != 0,
                history_json: r.get(5)?,
                status_message_json: r.get(6)?,
                updated_ms: r.get(7)?,
                seq: r.get(8)?,
            })
        })
        .optional()?)
}

/// Insert or replace `row` in one transaction, assigning the next `seq`; returns the row as
/// written.
///
/// # Errors
/// [`Error::Sqlite`]; the store must be the writer.
pub fn put(store: &mut Store, row: &TaskRow) -> Result<TaskRow, Error> {
    let tx = store.immediate()?;
    tx.execute_batch(DDL)?;
    let seq: i64 = tx.query_row(
        "SELECT coalesce(max(seq), 0) + 1 FROM world_a2a_tasks",
        [],
        |r| r.get(0),
    )?;
    tx.execute(
        "INSERT INTO world_a2a_tasks (task_id, episode_id, context_id, state, invoked,
            history_json, status_message_json, updated_ms, seq)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
         ON CONFLICT (task_id) DO UPDATE SET episode_id = excluded.episode_id,
           context_id = excluded.context_id, state = excluded.state, invoked = excluded.invoked,
           history_json = excluded.history_json,
           status_message_json = excluded.status_message_json,
           updated_ms = excluded.updated_ms, seq = excluded.seq",
        rusqlite::params![
            row.task_id,
            row.episode_id,
            row.context_id,
            row.state,
            i64::from(row.invoked),
            row.history_json,
            row.status_message_json,
            row.updated_ms,
            seq
        ],
    )?;
    tx.commit()?;
    Ok(TaskRow { seq, ..row.clone() })
}

/// Delete the row of `task_id` (a call that failed before anything durable: no task exists).
///
/// # Errors
/// [`Error::Sqlite`]; the store must be the writer.
pub fn delete(store: &mut Store, task_id: &str) -> Result<(), Error> {
    let tx = store.immediate()?;
    if table_exists(&tx)? {
        tx.execute("DELETE FROM world_a2a_tasks WHERE task_id = ?1", [task_id])?;
    }
    tx.commit()?;
    Ok(())
}

/// The keys of `episode`'s tasks (only those of `context` when given), newest first by
/// `(updated_ms, seq)`.
///
/// # Errors
/// [`Error::Sqlite`].
pub fn keys(
    conn: &Connection,
    episode: &str,
    context: Option<&str>,
) -> Result<Vec<TaskKey>, Error> {
    if !table_exists(conn)? {
        return Ok(Vec::new());
    }
    let mut stmt = conn.prepare_cached(
        "SELECT updated_ms, seq, task_id, state, invoked, context_id FROM world_a2a_tasks
          WHERE episode_id = ?1 AND (?2 IS NULL OR context_id = ?2)
          ORDER BY updated_ms DESC, seq DESC",
    )?;
    let rows = stmt.query_map(rusqlite::params![episode, context], |r| {
        Ok(TaskKey {
            updated_ms: r.get(0)?,
            seq: r.get(1)?,
            task_id: r.get(2)?,
            state: r.get(3)?,
            invoked: r.get::<_, i64>(4)? != 0,
            context_id: r.get(5)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, ctx: &str, ms: i64) -> TaskRow {
        TaskRow {
            task_id: id.into(),
            episode_id: "ep1".into(),
            context_id: ctx.into(),
            state: "TASK_STATE_INPUT_REQUIRED".into(),
            invoked: false,
            history_json: "[]".into(),
            status_message_json: None,
            updated_ms: ms,
            seq: 0,
        }
    }

    #[test]
    fn rows_round_trip_and_list_newest_first_within_an_episode() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open_write(
            &dir.path().join("w.db"),
            super::super::WriteOptions {
                create: true,
                wait_lock: None,
            },
        )
        .unwrap();
        assert!(get(s.conn(), "a2a:ep1:a").unwrap().is_none());
        assert!(keys(s.conn(), "ep1", None).unwrap().is_empty());
        let a = put(&mut s, &row("a2a:ep1:a", "c1", 10)).unwrap();
        let b = put(&mut s, &row("a2a:ep1:b", "c2", 10)).unwrap();
        assert!(b.seq > a.seq);
        let mut other = row("a2a:ep2:c", "c1", 20);
        other.episode_id = "ep2".into();
        put(&mut s, &other).unwrap();
        let ids: Vec<String> = keys(s.conn(), "ep1", None)
            .unwrap()
            .into_iter()
            .map(|k| k.task_id)
            .collect();
        assert_eq!(ids, ["a2a:ep1:b", "a2a:ep1:a"]);
        assert_eq!(keys(s.conn(), "ep1", Some("c1")).unwrap().len(), 1);
        let mut done = a.clone();
        done.state = "TASK_STATE_CANCELED".into();
        done.updated_ms = 30;
        put(&mut s, &done).unwrap();
        assert_eq!(keys(s.conn(), "ep1", None).unwrap()[0].task_id, "a2a:ep1:a");
        assert_eq!(
            get(s.conn(), "a2a:ep1:a").unwrap().unwrap().state,
            "TASK_STATE_CANCELED"
        );
        delete(&mut s, "a2a:ep1:a").unwrap();
        assert!(get(s.conn(), "a2a:ep1:a").unwrap().is_none());
    }
}
