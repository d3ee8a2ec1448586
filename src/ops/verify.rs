//! `world verify`: the whole-store check (store-format.md §13.1) as one use case.
//!
//! The store checks its own format ([`crate::store::verify::Checks`]: storage, schema,
//! objects, the log, effect records, the journal, the derived episode index, journal evidence,
//! the head). The cross-checks belong to the modules whose rules they are, asked here through
//! typed APIs, in the same order as always so the report (its first finding per category,
//! counts, texts, JSON and exit code) is unchanged:
//! - `authority`: an approval claim's decision approves its request; a session row agrees with
//!   its mint record;
//! - `broker`: the persisted spend tally equals the full fold (DEC-PERF-1);
//! - `transitions`: every published transition names a stored source;
//! - `limits`: the ledger's event chain folds to its materialised tables;
//! - `mission`: every mission journal replays to its state (missions.md §6).
//!
//! DEC-ARCH-9 records the split.

use crate::store::verify::{Checks, Progress, Report};
use crate::store::{Error, Store};

/// Run every check of store-format.md §13.1 on this (read-only) store.
///
/// A damaged SQLite image ends the checks early with a `storage` failure in the report (exit
/// 3), not an error; a store whose v4 tables are incomplete gets its `schema` finding and
/// nothing else.
///
/// # Errors
/// SQLite errors other than corruption, and undecodable rows ([`Error::Corrupt`]).
///
/// The checks read without holding the store: a writer may commit while they run (read-only
/// commands never block writers). When a run found something and the store changed under it,
/// the findings may come from reading two moments (a log entry seen, its journal rows read
/// before they were written), so the whole check runs again inside one read transaction — one
/// snapshot, writers waiting meanwhile — and that report is the answer (DEC-ARCH-10). A
/// quiet store, or a clean first run, is checked once.
pub fn verify(store: &Store, full: bool, progress: Progress<'_>) -> Result<Report, Error> {
    let before = store.data_version()?;
    let first = store.verify_with(full, |checks, rep| run(store, checks, rep, &mut *progress))?;
    let clean = first.failures.is_empty() && first.warnings.is_empty();
    if clean || store.data_version()? == before {
        return Ok(first);
    }
    let _snapshot = store.read_snapshot(std::time::Duration::MAX);
    store.verify_with(full, |checks, rep| run(store, checks, rep, progress))
}

fn run(
    store: &Store,
    checks: &Checks<'_>,
    rep: &mut Report,
    progress: Progress<'_>,
) -> Result<(), Error> {
    // The cross-checks of the modules whose own SQL keeps state in the store file (the spend
    // tally, the limits ledger, the mission journals) read through the store's connection;
    // everything else goes through the store's typed reads (DEC-READS-2).
    let conn = store.conn();
    if !checks.schema(rep)? {
        return Ok(());
    }
    checks.schema_objects(
        rep,
        &[
            crate::limits::schema::DDL,
            crate::mission::durable::DDL,
            crate::limits::seal::SQLITE_DDL,
            crate::mission::seal::SQLITE_DDL,
            crate::store::spend::FOLDS_DDL,
        ],
    )?;
    checks.objects(rep, progress)?;
    let walk = checks.log(rep)?;
    let pinned = checks.entry_links(rep)?;
    interpreters(store, &pinned, rep)?;
    checks.effect_records(rep)?;
    approval_claims(store, checks, rep)?;
    checks.journal(rep)?;
    checks.journal_links(rep)?;
    spend_tally(conn, rep)?;
    checks.episode_index(rep)?;
    checks.log_view(rep)?;
    checks.merkle(rep)?;
    checks.journal_against_log(rep)?;
    checks.effect_journal(rep)?;
    sessions(checks, rep)?;
    published_sources(store, checks, rep)?;
    limits_ledger(conn, rep);
    checks.head(rep, walk)?;
    missions(conn, rep)?;
    Ok(())
}

/// Approval claims (authority-and-broker.md §11): every claim names an existing decision,
/// request and effect intent (the store's check); a decision in `world`'s own format must be
/// an approval of that request (the authority's rule). Foreign decision formats (the
/// reference's, [U]) are only checked for existence.
///
/// A `Registry.Publish` claim names the effect's own request object, as the reference's
/// `AppendClaimedEffectIntent` writes it (issue 31): it holds when that is its intent's
/// `requestRef` and the decision approves.
fn approval_claims(store: &Store, checks: &Checks<'_>, rep: &mut Report) -> Result<(), Error> {
    for c in checks.approval_claims()? {
        if !checks.claim_links(rep, &c) || !c.is_world_decision() {
            continue;
        }
        let approves = c.payload.as_deref().is_some_and(|p| {
            crate::authority::approvals::decision_approves(p, &c.request)
                || (crate::authority::approvals::reference_decision("", p)
                    .is_ok_and(|d| d.decision == "approve")
                    && intent_request_ref(store, &c.intent).as_deref() == Some(c.request.as_str()))
        });
        if !approves {
            rep.fail(
                "record_inconsistent",
                None,
                Some(c.decision.clone()),
                format!(
                    "approval claim by {}: the decision is not an approval of request {}",
                    c.intent, c.request
                ),
            );
        }
    }
    Ok(())
}

/// The `requestRef` of the effect intent `intent`, when it has one that decodes.
fn intent_request_ref(store: &Store, intent: &str) -> Option<String> {
    let r = store
        .journal_row(intent, crate::store::read::JournalKind::Intent)
        .ok()??;
    let o = store.object(&r).ok()??;
    let v: serde_json::Value = serde_json::from_slice(&o.payload).ok()?;
    v.get("requestRef")?.as_str().map(str::to_owned)
}

/// Derived state: the persisted spend tally must equal the full fold (DEC-PERF-1). A row the
/// broker would use is a failure (`spend_tally`); one it would rebuild a warning
/// (`spend_tally_stale`).
fn spend_tally(conn: &rusqlite::Connection, rep: &mut Report) -> Result<(), Error> {
    for p in crate::broker::spend::check_table(conn)? {
        if p.trusted {
            rep.fail("spend_tally", None, Some(p.episode), p.reason);
        } else {
            rep.warn("spend_tally_stale", None, Some(p.episode), p.reason);
        }
    }
    Ok(())
}

/// `entry.interpreter`: every interpreter a coordinator entry pins resolves the way replay
/// resolves it — the embedded interpreter of this build, a `world/interpreter-binary/v1`
/// object of an episode bundle (`--embed`), or the archive next to the store (whose bytes
/// must still hash to the ref). Absent or altered: a `dangling_ref` failure; archived for
/// another platform or unreadable here: a warning.
fn interpreters(store: &Store, pinned: &[(String, i64)], rep: &mut Report) -> Result<(), Error> {
    use crate::interp::archive::{Archive, ResolveError};
    let archive = Archive::for_db(store.path());
    for (r, idx) in pinned {
        if *r == crate::interp::embedded_ref().to_string() {
            continue;
        }
        let bundled = store
            .object(r)?
            .is_some_and(|o| o.meta.semantic_id == crate::replay::bundle::INTERPRETER_BINARY);
        if bundled {
            continue;
        }
        match archive.resolve(r) {
            Ok(_) => {}
            Err(e @ (ResolveError::UnsupportedPlatform { .. } | ResolveError::Io { .. })) => {
                rep.warn(
                    "dangling_ref",
                    Some(*idx),
                    Some(r.clone()),
                    format!("the pinned interpreter cannot be run here: {e}"),
                )
            }
            Err(e) => rep.fail(
                "dangling_ref",
                Some(*idx),
                Some(r.clone()),
                format!("the pinned interpreter resolves to nothing replay can run: it is not the embedded interpreter of this build, not bundled, and {e}"),
            ),
        }
    }
    Ok(())
}

/// Session rows against their mint records (issue 13 §3; `session_mismatch`), and rows with
/// none (`unattested`, a warning: the reference daemon writes no mint record; DEC-TRUST3-2).
fn sessions(checks: &Checks<'_>, rep: &mut Report) -> Result<(), Error> {
    for (id, episode) in checks.unattested_sessions()? {
        rep.warn(
            "unattested",
            None,
            Some(id),
            format!("the credential row of episode {episode} has no world/session-mint/v1 record (minted by another tool, or inserted): the broker refuses it unless --allow-unattested"),
        );
    }
    for s in checks.sessions()? {
        if let Some(reason) = crate::authority::session::row_differs(
            &s.record,
            &s.episode,
            &s.grants_json,
            s.expires_at,
        ) {
            rep.fail("session_mismatch", None, Some(s.credential_id), reason);
        }
    }
    Ok(())
}

/// Published transitions: each descriptor of the transition registry head names a stored
/// source. A head that cannot be read is not this check's finding (the registry head's own
/// checks report it).
fn published_sources(store: &Store, checks: &Checks<'_>, rep: &mut Report) -> Result<(), Error> {
    let Ok(Some(head)) = crate::transitions::publish::registry_head(store) else {
        return Ok(());
    };
    let sources: Vec<(String, String)> = head
        .revision
        .entries
        .iter()
        .map(|d| (d.id.to_string(), d.transition_fn.to_string()))
        .collect();
    checks.published_sources(rep, &sources)
}

/// The limits ledger in the store file: its event chain folded and compared with the
/// materialised tables the broker reserves against (`ledger_chain`, `ledger_state`). A ledger
/// that cannot be read is a `ledger_chain` failure.
fn limits_ledger(conn: &rusqlite::Connection, rep: &mut Report) {
    match crate::limits::fold::check(conn) {
        Ok(problems) => {
            for p in problems {
                let at = p.revision.map(|r| format!("limits revision {r}"));
                rep.fail(p.category, None, at, p.detail);
            }
            match crate::limits::seal::verify_findings(conn) {
                Ok((fails, warns)) => {
                    for f in fails {
                        rep.fail("ledger_integrity", None, None, f);
                    }
                    for w in warns {
                        rep.warn("ledger_upgrade", None, None, w);
                    }
                }
                Err(e) => rep.fail(
                    "ledger_integrity",
                    None,
                    None,
                    format!("the limits ledger could not be read: {e}"),
                ),
            }
        }
        Err(e) => rep.fail(
            "ledger_chain",
            None,
            None,
            format!("the limits ledger could not be read: {e}"),
        ),
    }
}

/// `world verify --ledger L` (limits.md §7, issue 27 §3): a standalone ledger — a ledger file
/// or a PostgreSQL schema — checked in one read snapshot: the schema (the limits tables, a
/// PostgreSQL schema version), the event chain re-folded into every materialised row
/// (`ledger_chain`, `ledger_state`), the append-only triggers, the chain head and the fold
/// digests the deciding commands check (`ledger_integrity`), and every mission journal it
/// holds (`mission_*`). Returns the ledger's printable name and the report (exit 3 on any
/// failure).
///
/// # Errors
/// The ledger cannot be opened or read (missing file, not a ledger, unreachable server, bad
/// URL): the limits error, for the CLI to classify.
pub fn verify_ledger(location: &str) -> Result<(String, Report), crate::limits::Error> {
    use crate::ledger::pg::Access;
    use crate::limits::pg::PgLedger;
    crate::ledger::location::check_syntax(location)?;
    if crate::ledger::location::is_url(location) {
        let ledger = PgLedger::connect(location)?;
        let name = ledger.name().to_string();
        let rep = ledger.conn().transaction(
            Access::Read,
            |db| {
                let mut rep = Report::default();
                if let Err(e) = crate::limits::pg::check_version(db) {
                    rep.fail("ledger_schema", None, None, e.to_string());
                    return Ok(rep);
                }
                ledger_checks(db, &mut rep)?;
                Ok(rep)
            },
            |_| false,
            |e: &crate::limits::Error| e.storage().is_some_and(crate::ledger::Error::is_retryable),
        )?;
        return Ok((name, rep));
    }
    let ledger = crate::limits::Ledger::open_standalone(std::path::Path::new(location))?;
    let conn = ledger.connection();
    let tx = rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Deferred)?;
    let mut rep = Report::default();
    ledger_checks(&*tx, &mut rep)?;
    drop(tx); // read only: rolled back
    Ok((location.to_string(), rep))
}

/// The checks of [`verify_ledger`] inside its snapshot.
fn ledger_checks(
    db: &dyn crate::ledger::db::Db,
    rep: &mut Report,
) -> Result<(), crate::limits::Error> {
    if !db.table_exists("limits_meta")? {
        rep.fail(
            "ledger_schema",
            None,
            None,
            "no limits_meta table: not an initialised ledger (`world limits init` creates one)",
        );
        return Ok(());
    }
    for p in crate::limits::fold::check(db)? {
        let at = p.revision.map(|r| format!("limits revision {r}"));
        rep.fail(p.category, None, at, p.detail);
    }
    let (fails, warns) = crate::limits::seal::verify_findings(db)?;
    for f in fails {
        rep.fail("ledger_integrity", None, None, f);
    }
    for w in warns {
        rep.warn("ledger_upgrade", None, None, w);
    }
    let problems = match crate::mission::durable::check_any(db) {
        Ok(p) => p,
        Err(crate::mission::durable::Error::Ledger(e)) => return Err((*e).into()),
        Err(crate::mission::durable::Error::Sqlite(e)) => return Err(e.into()),
        Err(e) => vec![crate::mission::durable::Problem {
            category: "mission_state",
            mission_id: String::new(),
            seq: None,
            reason: e.to_string(),
        }],
    };
    for p in problems {
        rep.fail(
            p.category,
            None,
            Some(format!("mission:{}", p.mission_id)),
            match p.seq {
                Some(seq) => format!("journal entry {seq}: {}", p.reason),
                None => p.reason,
            },
        );
    }
    Ok(())
}

/// missions.md §6: fold every mission journal through `reduce`; a broken chain, an entry that
/// replays differently or a materialised state that differs from the fold is a failure
/// (`mission_chain`, `mission_journal`, `mission_state`, `mission_schema`).
fn missions(conn: &rusqlite::Connection, rep: &mut Report) -> Result<(), Error> {
    for p in crate::mission::durable::check_all(conn)? {
        rep.fail(
            p.category,
            None,
            Some(format!("mission:{}", p.mission_id)),
            match p.seq {
                Some(seq) => format!("journal entry {seq}: {}", p.reason),
                None => p.reason,
            },
        );
    }
    Ok(())
}
