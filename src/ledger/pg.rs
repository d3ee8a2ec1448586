//! The ledger's PostgreSQL backend (`--ledger postgres://…`, issue 18, limits.md §7,
//! DEC-LEDGER-6): the connection, its transactions and retries, and the [`Db`] of one open
//! transaction. Limits (`crate::limits::pg`) and missions run their commands on it.
//!
//! Concurrency (DEC-LIM-16): every writing command is one transaction at READ COMMITTED that
//! first takes a transaction-scoped advisory lock ([`Lock`]): the ledger's one lock, or one
//! mission's. A transaction that still fails with `serialization_failure` (40001) or
//! `deadlock_detected` (40P01) is retried, at most [`MAX_RETRIES`] times. A read is one
//! REPEATABLE READ, READ ONLY snapshot and takes no lock.
//!
//! Schema (DEC-LIM-17): a ledger's tables live in the connection's current schema (the
//! `search_path`; one ledger per schema). `world limits init` creates them, with the version
//! row `limits_schema.version` = [`SCHEMA_VERSION`] that every client checks first
//! ([`PgTx::base_version`]).

use super::db::{Backend, Db, Row, Val};
use super::error::Error;
use postgres::error::SqlState;
use postgres::types::{to_sql_checked, IsNull, ToSql, Type};
use postgres::{Client, IsolationLevel, NoTls, Statement};
use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Duration;

/// The ledger schema version this build reads and writes (`limits_schema.version`, the row
/// `world limits init` writes).
pub const SCHEMA_VERSION: i64 = 1;
/// Retries of a transaction that failed with a serialization failure or a deadlock.
pub const MAX_RETRIES: u32 = 8;
/// How long a command waits for the ledger lock before failing `busy` (exit 6).
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(30);
/// Connection timeout when the URL sets none.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

use crate::ledger::location::redacted;

/// A connection to a ledger on PostgreSQL. Not `Sync`: one command at a time.
pub struct PgConn {
    client: RefCell<Client>,
    name: String,
    statements: RefCell<HashMap<String, Statement>>,
}

/// A client error as one line: the server's `SEVERITY: message (detail)`, or the client's
/// error with its causes (`error connecting to server: Connection refused`).
pub fn message(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        let mut m = format!("{}: {} [{}]", db.severity(), db.message(), db.code().code());
        if let Some(d) = db.detail() {
            m.push_str(&format!(" ({d})"));
        }
        return m;
    }
    let mut m = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        let t = c.to_string();
        if !m.contains(&t) {
            m.push_str(&format!(": {t}"));
        }
        cause = c.source();
    }
    m
}

/// `true` for a serialization failure (40001) or a deadlock (40P01).
pub(crate) fn retryable(e: &postgres::Error) -> bool {
    matches!(
        e.code(),
        Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED
    )
}

/// Parse a `postgres://` URL as [`PgConn::connect`] does, refusing one that names no host
/// (the client could not connect anywhere; a URL error, exit 2, not a connection failure).
///
/// # Errors
/// [`Error::BadLedgerUrl`] (never quoting the URL: it may hold a password).
pub fn parse_url(url: &str) -> Result<postgres::Config, Error> {
    let config: postgres::Config = url
        .parse()
        .map_err(|e: postgres::Error| Error::BadLedgerUrl { why: e.to_string() })?;
    if config.get_hosts().is_empty() && config.get_hostaddrs().is_empty() {
        return Err(Error::BadLedgerUrl {
            why: "it names no host (postgres://USER@HOST[:PORT]/DB, or ?host=/socket/dir)".into(),
        });
    }
    Ok(config)
}

impl PgConn {
    /// Connect to the ledger at `url` (a libpq-style `postgres://` URL). Nothing is read or
    /// written yet. A URL without a password takes one from `PGPASSWORD` or the password file
    /// ([`super::pgpass`]).
    ///
    /// # Errors
    /// [`Error::BadLedgerUrl`] when the URL does not parse; [`Error::Postgres`] when the server
    /// refuses the connection or the credentials (the message names the ledger, never the
    /// password).
    pub fn connect(url: &str) -> Result<PgConn, Error> {
        let mut config = parse_url(url)?;
        // A URL without a password takes one where libpq looks: PGPASSWORD, the password file.
        if config.get_password().is_none() {
            if let Some(pw) = super::pgpass::lookup(&config) {
                config.password(pw);
            }
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("world-limits");
        }
        let name = redacted(&config);
        let mut client = config.connect(NoTls).map_err(|source| Error::Postgres {
            ledger: name.clone(),
            source,
        })?;
        client
            .batch_execute(&format!(
                "SET lock_timeout = '{}ms'; SET idle_in_transaction_session_timeout = '120s'; SET client_min_messages = warning",
                LOCK_TIMEOUT.as_millis()
            ))
            .map_err(|source| Error::Postgres {
                ledger: name.clone(),
                source,
            })?;
        Ok(PgConn {
            client: RefCell::new(client),
            name,
            statements: RefCell::new(HashMap::new()),
        })
    }

    /// `postgres://user@host:port/db` (no password).
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn pg(&self, source: postgres::Error) -> Error {
        Error::Postgres {
            ledger: self.name.clone(),
            source,
        }
    }

    /// Run `body` in one transaction and commit it when `keep` says so (roll it back
    /// otherwise), retrying the whole transaction on a serialization failure or a deadlock at
    /// most [`MAX_RETRIES`] times. A writing transaction ([`Access::Write`]) is READ COMMITTED
    /// and first takes its advisory lock (DEC-LIM-16); a reading one is one REPEATABLE READ,
    /// READ ONLY snapshot without a lock. Limits and missions share this machinery.
    ///
    /// # Errors
    /// `body`'s errors; [`Error::Postgres`] from the connection (converted into `E`).
    pub(crate) fn transaction<T, E: From<Error>>(
        &self,
        access: Access<'_>,
        mut body: impl FnMut(&PgTx<'_, '_>) -> Result<T, E>,
        keep: impl Fn(&Result<T, E>) -> bool,
        retryable: impl Fn(&E) -> bool,
    ) -> Result<T, E> {
        let mut attempt = 0u32;
        loop {
            match self.transaction_once(&access, &mut body, &keep) {
                Err(e) if retryable(&e) && attempt < MAX_RETRIES => {
                    attempt += 1;
                    let jitter = u64::from(std::process::id() % 7);
                    std::thread::sleep(Duration::from_millis((5u64 << attempt.min(6)) + jitter));
                }
                other => return other,
            }
        }
    }

    fn transaction_once<T, E: From<Error>>(
        &self,
        access: &Access<'_>,
        body: &mut impl FnMut(&PgTx<'_, '_>) -> Result<T, E>,
        keep: &impl Fn(&Result<T, E>) -> bool,
    ) -> Result<T, E> {
        let mut client = self.client.borrow_mut();
        let builder = client.build_transaction();
        let builder = match access {
            Access::Write(_) => builder.isolation_level(IsolationLevel::ReadCommitted),
            Access::Read => builder
                .isolation_level(IsolationLevel::RepeatableRead)
                .read_only(true),
        };
        let mut tx = builder.start().map_err(|e| self.pg(e))?;
        match access {
            Access::Write(Lock::Ledger) => {
                tx.batch_execute(LEDGER_LOCK).map_err(|e| self.pg(e))?;
            }
            Access::Write(Lock::Mission(id)) => {
                tx.execute(
                    "SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.world-mission'), hashtext($1))",
                    &[id],
                )
                .map_err(|e| self.pg(e))?;
            }
            Access::Read => {}
        }
        let result = {
            let db = PgTx {
                tx: RefCell::new(&mut tx),
                ledger: self,
            };
            body(&db)
        };
        if matches!(access, Access::Write(_)) && keep(&result) {
            tx.commit().map_err(|e| self.pg(e))?;
        } else {
            tx.rollback().map_err(|e| self.pg(e))?;
        }
        result
    }
}

/// What a [`PgConn::transaction`] locks and reads.
pub(crate) enum Access<'k> {
    /// READ COMMITTED, after the advisory lock.
    Write(Lock<'k>),
    /// One REPEATABLE READ, READ ONLY snapshot; no lock; always rolled back.
    Read,
}

/// The transaction-scoped advisory lock a writer takes first.
pub(crate) enum Lock<'k> {
    /// The ledger's one lock (every limits command, and DDL).
    Ledger,
    /// One mission's lock (its commands serialise; other missions proceed).
    Mission(&'k str),
}

/// One open PostgreSQL transaction seen as a [`Db`].
pub(crate) struct PgTx<'a, 't> {
    tx: RefCell<&'a mut postgres::Transaction<'t>>,
    ledger: &'a PgConn,
}

/// `?N` placeholders (SQLite) to `$N` (PostgreSQL). The ledger's SQL has no `?` elsewhere.
fn translate(sql: &str) -> String {
    sql.replace('?', "$")
}

impl PgTx<'_, '_> {
    fn statement(&self, sql: &str) -> Result<Statement, Error> {
        if let Some(s) = self.ledger.statements.borrow().get(sql) {
            return Ok(s.clone());
        }
        let stmt = self
            .tx
            .borrow_mut()
            .prepare(&translate(sql))
            .map_err(|e| self.ledger.pg(e))?;
        self.ledger
            .statements
            .borrow_mut()
            .insert(sql.to_string(), stmt.clone());
        Ok(stmt)
    }

    /// The ledger's name (`postgres://user@host:port/db`, no password).
    pub(crate) fn ledger_name(&self) -> &str {
        &self.ledger.name
    }

    /// Run several statements (DDL) in this transaction, unprepared.
    ///
    /// # Errors
    /// [`Error::Postgres`].
    pub(crate) fn batch(&self, sql: &str) -> Result<(), Error> {
        self.tx
            .borrow_mut()
            .batch_execute(sql)
            .map_err(|e| self.ledger.pg(e))
    }

    /// The ledger's version row, checked, with the version of a client's own tables
    /// (`client_table`, a `…_schema` table with one `version` row): `None` when that table
    /// does not exist yet, `Some(None)` when it holds no version row. Two reads.
    ///
    /// # Errors
    /// [`Error::NotInitialized`] when the ledger has no version row table (`world limits init`
    /// never ran here); [`Error::SchemaVersion`] for another ledger version; [`Error::Postgres`].
    pub(crate) fn base_version(&self, client_table: &str) -> Result<Option<Option<i64>>, Error> {
        let present = self.query(
            "SELECT to_regclass(quote_ident(current_schema()) || '.limits_schema') IS NOT NULL, \
                    to_regclass(quote_ident(current_schema()) || '.' || quote_ident(?1)) IS NOT NULL",
            &[Val::Text(client_table.to_string())],
        )?;
        let present = present
            .first()
            .ok_or_else(|| Error::Corrupt("no row from the catalog".into()))?;
        if !present.flag(0)? {
            return Err(Error::NotInitialized {
                ledger: self.ledger.name.clone(),
                why: "is not initialised (no limits schema)".into(),
            });
        }
        let client = present.flag(1)?;
        let versions = if client {
            format!("SELECT (SELECT version FROM limits_schema WHERE id = 1), (SELECT version FROM {client_table} WHERE id = 1)")
        } else {
            "SELECT (SELECT version FROM limits_schema WHERE id = 1), NULL::BIGINT".to_string()
        };
        let v = self.query(&versions, &[])?;
        let v = v.first().map(|r| r.0.clone()).unwrap_or_default();
        let base = v.first().and_then(as_int);
        if base != Some(SCHEMA_VERSION) {
            return Err(Error::SchemaVersion {
                ledger: self.ledger.name.clone(),
                found: base.map_or("none".into(), |v| v.to_string()),
                want: SCHEMA_VERSION,
            });
        }
        Ok(if client {
            Some(v.get(1).and_then(as_int))
        } else {
            None
        })
    }

    /// Add the statement-level `BEFORE TRUNCATE` refusal of the ledger's event log and of a
    /// client's append-only `table` (whose row trigger function is `function`) to a ledger
    /// made by an older build (the upgrade path, DEC-MIS-15), under the ledger's lock.
    /// Creating a trigger needs the tables' owner: for another role this is skipped (inside a
    /// savepoint, so the command goes on) and the next such command by the owner adds them.
    ///
    /// # Errors
    /// [`Error::Postgres`].
    pub(crate) fn guard_truncate(&self, table: &str, function: &str) -> Result<(), Error> {
        let have = self.query(
            "SELECT count(*) FROM pg_trigger WHERE (tgname = ?1 AND tgrelid = to_regclass(quote_ident(current_schema()) || '.' || quote_ident(?2))) OR (tgname = 'limits_events_no_truncate' AND tgrelid = to_regclass(quote_ident(current_schema()) || '.limits_events'))",
            &[
                Val::Text(format!("{table}_no_truncate")),
                Val::Text(table.to_string()),
            ],
        )?;
        if have.first().map(|r| r.int(0)).transpose()?.unwrap_or(0) >= 2 {
            return Ok(());
        }
        self.batch(&format!("{LEDGER_LOCK}; SAVEPOINT world_truncate_guard"))?;
        let guards = format!(
            "DROP TRIGGER IF EXISTS {table}_no_truncate ON {table};
CREATE TRIGGER {table}_no_truncate BEFORE TRUNCATE ON {table}
  FOR EACH STATEMENT EXECUTE FUNCTION {function}();
DROP TRIGGER IF EXISTS limits_events_no_truncate ON limits_events;
CREATE TRIGGER limits_events_no_truncate BEFORE TRUNCATE ON limits_events
  FOR EACH STATEMENT EXECUTE FUNCTION limits_events_append_only();
"
        );
        match self.batch(&guards) {
            Ok(()) => self.batch("RELEASE SAVEPOINT world_truncate_guard")?,
            Err(_) => self.batch("ROLLBACK TO SAVEPOINT world_truncate_guard")?,
        }
        Ok(())
    }
}

/// The ledger's one advisory lock ([`Lock::Ledger`]).
const LEDGER_LOCK: &str =
    "SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.world-limits-ledger'))";

fn as_int(v: &Val) -> Option<i64> {
    match v {
        Val::Int(i) => Some(*i),
        _ => None,
    }
}

impl Db for PgTx<'_, '_> {
    fn backend(&self) -> Backend {
        Backend::Postgres
    }

    fn lock_ledger(&self) -> Result<(), Error> {
        self.batch(LEDGER_LOCK)
    }

    fn exec_batch(&self, sql: &str) -> Result<(), Error> {
        self.batch(sql)
    }

    fn exec(&self, sql: &str, params: &[Val]) -> Result<u64, Error> {
        let stmt = self.statement(sql)?;
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|v| v as _).collect();
        self.tx
            .borrow_mut()
            .execute(&stmt, &refs)
            .map_err(|e| self.ledger.pg(e))
    }

    fn query(&self, sql: &str, params: &[Val]) -> Result<Vec<Row>, Error> {
        let stmt = self.statement(sql)?;
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|v| v as _).collect();
        let rows = self
            .tx
            .borrow_mut()
            .query(&stmt, &refs)
            .map_err(|e| self.ledger.pg(e))?;
        rows.iter().map(|r| self.row(r)).collect()
    }

    fn table_exists(&self, name: &str) -> Result<bool, Error> {
        // A catalog lookup, not `information_schema.tables` (a view with privilege checks that
        // cost more than the rest of a command; benches/ledger_pg.rs).
        let rows = self.query(
            "SELECT to_regclass(quote_ident(current_schema()) || '.' || quote_ident(?1)) IS NOT NULL",
            &[Val::Text(name.to_string())],
        )?;
        Ok(rows
            .first()
            .map(|r| r.flag(0))
            .transpose()?
            .unwrap_or(false))
    }
}

impl PgTx<'_, '_> {
    fn row(&self, r: &postgres::Row) -> Result<Row, Error> {
        let mut out = Vec::with_capacity(r.len());
        for (i, col) in r.columns().iter().enumerate() {
            let ty = col.type_();
            let pg = |e: postgres::Error| self.ledger.pg(e);
            let v = if *ty == Type::INT8 {
                r.try_get::<_, Option<i64>>(i).map_err(pg)?.map(Val::Int)
            } else if *ty == Type::INT4 {
                r.try_get::<_, Option<i32>>(i)
                    .map_err(pg)?
                    .map(|v| Val::Int(i64::from(v)))
            } else if *ty == Type::INT2 {
                r.try_get::<_, Option<i16>>(i)
                    .map_err(pg)?
                    .map(|v| Val::Int(i64::from(v)))
            } else if *ty == Type::BOOL {
                r.try_get::<_, Option<bool>>(i)
                    .map_err(pg)?
                    .map(|v| Val::Int(i64::from(v)))
            } else if *ty == Type::BYTEA {
                r.try_get::<_, Option<Vec<u8>>>(i)
                    .map_err(pg)?
                    .map(Val::Blob)
            } else {
                r.try_get::<_, Option<String>>(i)
                    .map_err(pg)?
                    .map(Val::Text)
            };
            out.push(v.unwrap_or(Val::Null));
        }
        Ok(Row(out))
    }
}

impl ToSql for Val {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Val::Null => Ok(IsNull::Yes),
            Val::Int(v) if *ty == Type::INT4 => i32::try_from(*v)?.to_sql(ty, out),
            Val::Int(v) if *ty == Type::BOOL => (*v != 0).to_sql(ty, out),
            Val::Int(v) => v.to_sql(ty, out),
            Val::Text(s) => s.to_sql(ty, out),
            Val::Blob(b) => b.to_sql(ty, out),
        }
    }

    fn accepts(_ty: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::location::redact_url;

    /// What names a ledger: user, hosts, ports, database and options (the schema).
    type LedgerParts = (
        Option<String>,
        Vec<String>,
        Vec<u16>,
        Option<String>,
        Option<String>,
    );

    fn ledger_of(url: &str) -> LedgerParts {
        let c: postgres::Config = url.parse().unwrap_or_else(|e| panic!("{url}: {e}"));
        let hosts = c
            .get_hosts()
            .iter()
            .map(|h| format!("{h:?}"))
            .collect::<Vec<_>>();
        let mut ports = c.get_ports().to_vec();
        if ports.is_empty() {
            ports.push(5432);
        }
        (
            c.get_user().map(str::to_string),
            hosts,
            ports,
            c.get_dbname().map(str::to_string),
            c.get_options().map(str::to_string),
        )
    }

    #[test]
    fn a_printed_ledger_name_parses_back_to_the_same_ledger() {
        let cases = [
            // Socket directories, with and without a schema, in both spellings.
            ("postgres://w@%2Ftmp%2Fpg%20dir%2Fsock/wl", "postgres://w@%2Ftmp%2Fpg%20dir%2Fsock:5432/wl"),
            ("postgres://w@/wl?host=/tmp/sock&port=5433", "postgres://w@%2Ftmp%2Fsock:5433/wl"),
            (
                "postgres://w:secret@%2Ftmp%2Fsock:5432/wl?options=-csearch_path%3Dwo42",
                "postgres://w@%2Ftmp%2Fsock:5432/wl?options=-csearch_path%3Dwo42",
            ),
            // TCP, with and without a schema; IPv6; two hosts.
            ("postgres://world@db.example/ledgers", "postgres://world@db.example:5432/ledgers"),
            (
                "postgresql://world:pw@db.example:6432/ledgers?options=-c%20search_path%3D%22Work%20Order%22&application_name=x",
                "postgres://world@db.example:6432/ledgers?options=-c%20search_path%3D%22Work%20Order%22",
            ),
            ("postgres://u@[::1]:5433/d", "postgres://u@[::1]:5433/d"),
            ("postgres://u@a:1,b:2/d", "postgres://u@a:1,b:2/d"),
            ("postgres://u%40corp@h/d%2Fx", "postgres://u%40corp@h:5432/d%2Fx"),
        ];
        for (given, printed) in cases {
            let p = redact_url(given);
            assert_eq!(p, printed, "{given}");
            assert!(!p.contains("secret") && !p.contains(":pw@"), "{p}");
            // print → parse → print is the identity, and the parse names the same ledger.
            assert_eq!(redact_url(&p), p, "{given}");
            assert_eq!(ledger_of(&p), ledger_of(&redact_url(given)), "{given}");
            let (u, h, po, d, o) = ledger_of(given);
            let (u2, h2, po2, d2, o2) = ledger_of(&p);
            assert_eq!((u, h, d, o), (u2, h2, d2, o2), "{given}");
            assert_eq!(po.first(), po2.first(), "{given}");
            assert!(parse_url(&p).is_ok(), "{p}");
        }
    }
}
