//! One SQL surface for the ledger's two storage backends (limits.md §7, issue 18, DEC-LEDGER-6).
//!
//! The limits and mission commands, reports and checks are written once, against [`Db`]: a transaction that runs
//! parameterised statements and returns rows of [`Val`]. Two implementations exist:
//! `rusqlite::Connection` (the embedded default: tables in the World store file or a standalone
//! ledger file) and [`super::pg`]'s PostgreSQL transaction (`--ledger postgres://…`). Statements
//! use SQLite's `?N` placeholders; the PostgreSQL side rewrites them to `$N`. Only the portable
//! subset of SQL both engines read alike is used (no `INSERT OR …`, no `rowid`, text compared
//! byte-wise: the PostgreSQL schema declares every text column `COLLATE "C"`).

use super::error::Error;

/// A parameter or column value. Amounts and times are canonical decimal TEXT, never REAL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Val {
    /// SQL NULL.
    Null,
    /// INTEGER / BIGINT (and booleans as 0/1).
    Int(i64),
    /// TEXT.
    Text(String),
    /// BLOB / BYTEA.
    Blob(Vec<u8>),
}

/// A value that can be bound as a statement parameter.
pub(crate) trait IntoVal {
    /// The parameter value.
    fn val(&self) -> Val;
}

impl IntoVal for str {
    fn val(&self) -> Val {
        Val::Text(self.to_string())
    }
}
impl IntoVal for String {
    fn val(&self) -> Val {
        Val::Text(self.clone())
    }
}
impl IntoVal for i64 {
    fn val(&self) -> Val {
        Val::Int(*self)
    }
}
impl IntoVal for [u8] {
    fn val(&self) -> Val {
        Val::Blob(self.to_vec())
    }
}
impl IntoVal for bool {
    fn val(&self) -> Val {
        Val::Int(i64::from(*self))
    }
}
impl IntoVal for Vec<u8> {
    fn val(&self) -> Val {
        Val::Blob(self.clone())
    }
}
impl<T: IntoVal + ?Sized> IntoVal for &T {
    fn val(&self) -> Val {
        (**self).val()
    }
}
impl<T: IntoVal> IntoVal for Option<T> {
    fn val(&self) -> Val {
        self.as_ref().map_or(Val::Null, IntoVal::val)
    }
}

/// `vals![a, b]`: statement parameters (each taken by reference).
macro_rules! vals {
    ($($e:expr),* $(,)?) => {
        [$($crate::ledger::db::IntoVal::val(&$e)),*]
    };
}
pub(crate) use vals;

/// One result row.
#[derive(Clone, Debug)]
pub(crate) struct Row(pub(crate) Vec<Val>);

impl Row {
    fn at(&self, i: usize) -> Result<&Val, Error> {
        self.0
            .get(i)
            .ok_or_else(|| Error::Corrupt(format!("result row has no column {i}")))
    }

    /// A TEXT column that must not be NULL.
    pub(crate) fn text(&self, i: usize) -> Result<String, Error> {
        match self.at(i)? {
            Val::Text(s) => Ok(s.clone()),
            other => Err(Error::Corrupt(format!(
                "column {i}: expected text, got {other:?}"
            ))),
        }
    }

    /// A nullable TEXT column.
    pub(crate) fn opt_text(&self, i: usize) -> Result<Option<String>, Error> {
        match self.at(i)? {
            Val::Null => Ok(None),
            _ => self.text(i).map(Some),
        }
    }

    /// An INTEGER column.
    pub(crate) fn int(&self, i: usize) -> Result<i64, Error> {
        match self.at(i)? {
            Val::Int(v) => Ok(*v),
            other => Err(Error::Corrupt(format!(
                "column {i}: expected integer, got {other:?}"
            ))),
        }
    }

    /// A BLOB / BYTEA column that must not be NULL.
    pub(crate) fn blob(&self, i: usize) -> Result<Vec<u8>, Error> {
        match self.at(i)? {
            Val::Blob(b) => Ok(b.clone()),
            other => Err(Error::Corrupt(format!(
                "column {i}: expected a blob, got {other:?}"
            ))),
        }
    }

    /// A 0/1 (or boolean) column.
    pub(crate) fn flag(&self, i: usize) -> Result<bool, Error> {
        self.int(i).map(|v| v != 0)
    }
}

/// Which engine a [`Db`] runs on (catalog queries and DDL differ).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Backend {
    /// SQLite: the World store file or a standalone ledger file.
    Sqlite,
    /// PostgreSQL (`--ledger postgres://…`).
    Postgres,
}

/// The statements one ledger transaction runs. Implementations run inside a transaction the
/// caller opened and will commit or roll back.
pub(crate) trait Db {
    /// The engine.
    fn backend(&self) -> Backend {
        Backend::Sqlite
    }
    /// Take the ledger's one write lock in this transaction, before DDL a client adds to an
    /// existing ledger. SQLite: nothing (a writing transaction is `BEGIN IMMEDIATE`, which
    /// already holds the file's lock); PostgreSQL: the ledger's advisory lock.
    ///
    /// # Errors
    /// Storage errors.
    fn lock_ledger(&self) -> Result<(), Error> {
        Ok(())
    }
    /// Run several statements (DDL), unprepared, in this transaction.
    fn exec_batch(&self, sql: &str) -> Result<(), Error>;
    /// Run a statement; the number of rows changed.
    fn exec(&self, sql: &str, params: &[Val]) -> Result<u64, Error>;
    /// Run a query; every row.
    fn query(&self, sql: &str, params: &[Val]) -> Result<Vec<Row>, Error>;
    /// `true` when table `name` exists (in the ledger's schema).
    fn table_exists(&self, name: &str) -> Result<bool, Error>;
}

/// At most one row.
pub(crate) fn query_opt(db: &dyn Db, sql: &str, params: &[Val]) -> Result<Option<Row>, Error> {
    Ok(db.query(sql, params)?.into_iter().next())
}

/// Exactly one row.
pub(crate) fn query_one(db: &dyn Db, sql: &str, params: &[Val]) -> Result<Row, Error> {
    query_opt(db, sql, params)?.ok_or_else(|| Error::Corrupt(format!("no row from {sql}")))
}

impl rusqlite::ToSql for Val {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(match self {
            Val::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Val::Int(v) => ToSqlOutput::Borrowed(ValueRef::Integer(*v)),
            Val::Text(s) => ToSqlOutput::Borrowed(ValueRef::Text(s.as_bytes())),
            Val::Blob(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
        })
    }
}

impl Db for rusqlite::Connection {
    fn exec(&self, sql: &str, params: &[Val]) -> Result<u64, Error> {
        let n = self
            .prepare_cached(sql)?
            .execute(rusqlite::params_from_iter(params.iter()))?;
        Ok(n as u64)
    }

    fn query(&self, sql: &str, params: &[Val]) -> Result<Vec<Row>, Error> {
        use rusqlite::types::ValueRef;
        let mut stmt = self.prepare_cached(sql)?;
        let cols = stmt.column_count();
        let mut rows = stmt.query(rusqlite::params_from_iter(params.iter()))?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let mut vals = Vec::with_capacity(cols);
            for i in 0..cols {
                vals.push(match r.get_ref(i)? {
                    ValueRef::Null => Val::Null,
                    ValueRef::Integer(v) => Val::Int(v),
                    ValueRef::Text(t) => Val::Text(String::from_utf8_lossy(t).into_owned()),
                    ValueRef::Blob(b) => Val::Blob(b.to_vec()),
                    ValueRef::Real(f) => {
                        return Err(Error::Corrupt(format!(
                            "column {i}: REAL {f} where the ledger stores text"
                        )))
                    }
                });
            }
            out.push(Row(vals));
        }
        Ok(out)
    }

    fn table_exists(&self, name: &str) -> Result<bool, Error> {
        let n: i64 = self
            .prepare_cached(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
            )?
            .query_row([name], |r| r.get(0))?;
        Ok(n > 0)
    }

    fn exec_batch(&self, sql: &str) -> Result<(), Error> {
        Ok(self.execute_batch(sql)?)
    }
}
