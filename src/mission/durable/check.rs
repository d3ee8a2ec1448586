//! `world verify` of the missions: every journal re-folded through `reduce` and compared with
//! the materialised rows, the outbox and the request keys (missions.md §6).

use super::*;

/// One problem `world verify` reports about a mission.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// `mission_chain` (journal hash chain / sequence), `mission_journal` (an entry that does not
    /// decode or replays differently), `mission_state` (materialised state ≠ the fold, or rows
    /// that cannot be read), or `mission_schema` (some mission tables are missing).
    pub category: &'static str,
    /// The mission.
    pub mission_id: String,
    /// The journal sequence number, when the problem is about an entry.
    pub seq: Option<u64>,
    /// Why.
    pub reason: String,
}

/// Fold every mission's journal through `reduce` and compare with the materialised state and
/// the hash chain (missions.md §6). Read-only.
///
/// # Errors
/// SQLite errors (a corrupt row is a [`Problem`], not an error).
pub fn check_all(conn: &Connection) -> rusqlite::Result<Vec<Problem>> {
    if conn.is_autocommit() {
        // One read transaction for the whole check (F12): every table is read from one
        // snapshot (WAL: the ledger file; rollback journal: writers wait until it ends), so
        // a concurrent command can never show up as a half-applied finding. Rolled back.
        let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Deferred)?;
        return check_all_in(&tx);
    }
    check_all_in(conn)
}

/// [`check_all`] inside the caller's transaction.
pub(super) fn check_all_in(conn: &Connection) -> rusqlite::Result<Vec<Problem>> {
    let mut out = Vec::new();
    let missing = missing_tables(conn)?;
    if !missing.is_empty() {
        out.push(Problem {
            category: "mission_schema",
            mission_id: String::new(),
            seq: None,
            reason: format!(
                "mission table(s) missing: {}; their rows cannot be re-derived",
                missing.join(", ")
            ),
        });
        return Ok(out);
    }
    if !tables_exist(conn)? {
        return Ok(out);
    }
    match check_db(conn) {
        Ok(p) => Ok(p),
        Err(Error::Sqlite(e)) => Err(e),
        Err(e) => Ok(vec![Problem {
            category: "mission_state",
            mission_id: String::new(),
            seq: None,
            reason: e.to_string(),
        }]),
    }
}

/// [`check_all`] on any backend, the tables' presence included (`world verify --ledger`):
/// some but not all mission tables is a `mission_schema` finding; none is a ledger without
/// missions (no finding).
///
/// # Errors
/// As [`check_db`].
pub(crate) fn check_any(db: &dyn Db) -> Result<Vec<Problem>, Error> {
    let mut missing = Vec::new();
    for t in TABLES {
        if !db.table_exists(t)? {
            missing.push(t);
        }
    }
    if missing.len() == TABLES.len() {
        return Ok(Vec::new());
    }
    if !missing.is_empty() {
        return Ok(vec![Problem {
            category: "mission_schema",
            mission_id: String::new(),
            seq: None,
            reason: format!(
                "mission table(s) missing: {}; their rows cannot be re-derived",
                missing.join(", ")
            ),
        }]);
    }
    check_db(db)
}

/// [`check_all`] on any backend (the tables exist): every mission, one by one. Storage errors
/// reading the mission list are errors; a mission whose rows cannot be read is a [`Problem`].
pub(crate) fn check_db(db: &dyn Db) -> Result<Vec<Problem>, Error> {
    let mut out = Vec::new();
    let ids: Vec<String> = match db
        .query(
            "SELECT mission_id FROM mission_missions ORDER BY mission_id",
            &[],
        )
        .and_then(|rows| rows.iter().map(|r| r.text(0)).collect())
    {
        Ok(ids) => ids,
        Err(e @ (crate::ledger::Error::Sqlite(_) | crate::ledger::Error::Postgres { .. })) => {
            return Err(e.into())
        }
        Err(e) => {
            out.push(Problem {
                category: "mission_state",
                mission_id: String::new(),
                seq: None,
                reason: format!("mission_missions is unreadable: {e}"),
            });
            return Ok(out);
        }
    };
    if let Some(t) = super::super::seal::trigger_finding(db)? {
        out.push(Problem {
            category: "mission_schema",
            mission_id: String::new(),
            seq: None,
            reason: t,
        });
    }
    orphans(db, &mut out)?;
    for id in ids {
        // A row of the wrong type (an edited column) is a finding, not a failed verify.
        if let Err(e) = check_one(db, &id, &mut out) {
            if matches!(&e, Error::Ledger(_)) {
                return Err(e); // the connection failed: no finding can be trusted
            }
            out.push(Problem {
                category: "mission_state",
                mission_id: id.clone(),
                seq: None,
                reason: format!("the mission's rows are unreadable: {e}"),
            });
        }
    }
    Ok(out)
}

/// Rows of a mission id that has no `mission_missions` row (F9: a deleted mission row would
/// otherwise hide its journal and state from every check): one finding per such id,
/// `mission_chain` when journal entries are among them, else `mission_state`.
pub(super) fn orphans(db: &dyn Db, out: &mut Vec<Problem>) -> Result<(), Error> {
    let mut found: BTreeMap<String, Vec<&'static str>> = BTreeMap::new();
    for t in &TABLES[1..] {
        let sql = format!(
            "SELECT DISTINCT mission_id FROM {t} WHERE mission_id NOT IN (SELECT mission_id FROM mission_missions) ORDER BY mission_id"
        );
        for row in db.query(&sql, &[])? {
            found.entry(row.text(0)?).or_default().push(*t);
        }
    }
    for (id, tables) in found {
        out.push(Problem {
            category: if tables.contains(&"mission_journal") {
                "mission_chain"
            } else {
                "mission_state"
            },
            mission_id: id,
            seq: None,
            reason: format!(
                "{} hold(s) rows of this mission, which has no mission_missions row (deleted?)",
                tables.join(", ")
            ),
        });
    }
    Ok(())
}

/// Checks one mission: its journal re-folded against the chain, the materialised rows, the
/// request keys and the outbox; each finding is pushed onto `out`.
///
/// # Errors
/// SQLite and ledger errors (anything else is a [`Problem`]).
pub(crate) fn check_one(
    db: &dyn Db,
    mission_id: &str,
    out: &mut Vec<Problem>,
) -> Result<(), Error> {
    let mut f = Findings { mission_id, out };
    let h = match head(db, mission_id) {
        Ok(h) => h,
        Err(e @ (Error::Sqlite(_) | Error::Ledger(_))) => return Err(e),
        Err(e) => {
            f.problem("mission_state", None, e.to_string());
            return Ok(());
        }
    };
    let entries = match journal_db(db, mission_id) {
        Ok(e) => e,
        Err(e @ (Error::Sqlite(_) | Error::Ledger(_))) => return Err(e),
        Err(e) => {
            f.problem("mission_journal", None, e.to_string());
            return Ok(());
        }
    };
    let prev = match stored_root(db, mission_id, &h.contract_ref) {
        Ok(r) => r,
        Err(e @ (Error::Sqlite(_) | Error::Ledger(_))) => return Err(e),
        Err(e) => {
            f.problem("mission_state", None, e.to_string());
            return Ok(());
        }
    };
    let Some(Folded {
        state,
        prev,
        keys,
        admit_seq,
    }) = fold_journal(mission_id, &h, &entries, prev, &mut f)
    else {
        return Ok(());
    };
    if h.seq != entries.len() as u64 || h.head_hash != prev {
        f.problem(
            "mission_chain",
            None,
            format!(
                "the mission row names entry {} / {}, the journal ends at {} / {prev}",
                h.seq,
                h.head_hash,
                entries.len()
            ),
        );
    }
    check_rows(db, mission_id, &state, &mut f)?;
    check_requests(db, mission_id, keys, &mut f)?;
    check_outbox(db, mission_id, &state, &admit_seq, &mut f)
}

/// Where [`check_one`] records what it finds about one mission.
struct Findings<'a> {
    mission_id: &'a str,
    out: &'a mut Vec<Problem>,
}

impl Findings<'_> {
    fn problem(&mut self, category: &'static str, seq: Option<u64>, reason: String) {
        self.out.push(Problem {
            category,
            mission_id: self.mission_id.to_string(),
            seq,
            reason,
        });
    }
}

/// What re-folding a mission's journal gives: the state, the last entry's hash, and what each
/// idempotency key and each admit wrote (F5).
struct Folded {
    state: State,
    prev: String,
    keys: BTreeMap<String, (u64, String)>,
    admit_seq: BTreeMap<String, u64>,
}

/// Re-folds `entries` through `reduce` from the contract of `h`, checking the hash chain from
/// `prev` (the creation record's hash) and each entry's recorded result; `None` after the
/// first entry that fails (recorded in `f`).
fn fold_journal(
    mission_id: &str,
    h: &Head,
    entries: &[JournalEntry],
    mut prev: String,
    f: &mut Findings<'_>,
) -> Option<Folded> {
    let mut state = State::create(&h.contract);
    let mut keys: BTreeMap<String, (u64, String)> = BTreeMap::new();
    let mut admit_seq: BTreeMap<String, u64> = BTreeMap::new();
    for (expected, e) in (1u64..).zip(entries.iter()) {
        if e.seq != expected {
            f.problem(
                "mission_chain",
                Some(e.seq),
                format!("expected entry {expected}, found {}", e.seq),
            );
            return None;
        }
        let computed = HashRef::of(&e.entry).to_string();
        if computed != e.entry_hash {
            f.problem(
                "mission_chain",
                Some(e.seq),
                format!("entry hashes to {computed}, the row says {}", e.entry_hash),
            );
            return None;
        }
        if e.prev_hash != prev {
            let reason = if expected == 1 {
                format!(
                    "prevHash {} is not {prev}, the hash of the mission's creation record (createdBy, attended, createdAtMs, contractRef)",
                    e.prev_hash
                )
            } else {
                format!(
                    "prevHash {} does not name the previous entry {prev}",
                    e.prev_hash
                )
            };
            f.problem("mission_chain", Some(e.seq), reason);
            return None;
        }
        let d = match decode_entry(&e.entry) {
            Ok(d) => d,
            Err(why) => {
                f.problem(
                    "mission_journal",
                    Some(e.seq),
                    format!("entry does not decode: {why}"),
                );
                return None;
            }
        };
        if d.seq != e.seq || d.prev_hash != e.prev_hash || d.mission_id != mission_id {
            f.problem(
                "mission_journal",
                Some(e.seq),
                "entry's missionId/seq/prevHash differ from its row".into(),
            );
            return None;
        }
        if let Some(k) = &d.request_id {
            keys.insert(k.clone(), (e.seq, d.command.command_ref().to_string()));
        }
        if let Command::Admit(a) = &d.command {
            admit_seq.insert(a.attempt_id.clone(), e.seq);
        }
        let recorded = d.result.get("code").and_then(|c| c.as_str()).unwrap_or("");
        match super::super::reduce::apply(&mut state, &d.command, d.now, &d.actor) {
            Ok(()) if recorded == "OK" => {}
            Err(rej) if rej.code == Code::ExposureExceeded && recorded == rej.code.as_str() => {
                state = state.with_violation(&rej);
            }
            other => {
                let got = match other {
                    Ok(()) => "OK".to_string(),
                    Err(r) => r.code.as_str().to_string(),
                };
                f.problem(
                    "mission_journal",
                    Some(e.seq),
                    format!("replaying the entry gives {got}, the journal recorded {recorded}"),
                );
                return None;
            }
        }
        prev = e.entry_hash.clone();
    }
    Some(Folded {
        state,
        prev,
        keys,
        admit_seq,
    })
}

/// The materialised rows agree with the fold `state`: the whole state, each attempt row's
/// index columns with its body (F4), and the violation rows' numbering.
fn check_rows(
    db: &dyn Db,
    mission_id: &str,
    state: &State,
    f: &mut Findings<'_>,
) -> Result<(), Error> {
    match load_full_db(db, mission_id) {
        Ok(stored) => {
            if stored != *state {
                f.problem("mission_state", None, describe_diff(&stored, state));
            }
        }
        Err(e @ (Error::Sqlite(_) | Error::Ledger(_))) => return Err(e),
        Err(e) => f.problem("mission_state", None, e.to_string()),
    }
    // The attempt rows' index columns agree with their bodies (F4: commands and reports
    // must be able to trust neither alone, so a disagreement is a finding).
    for row in db.query(
        "SELECT attempt_id, run_id, status, body FROM mission_attempts WHERE mission_id = ?1 ORDER BY attempt_id",
        &vals![mission_id],
    )? {
        let id = row.text(0)?;
        // An unreadable body is already a finding of the comparison above.
        if let Ok(a) = serde_json::from_str::<Attempt>(&row.text(3)?) {
            if let Some(why) = attempt_columns_differ(&a, &row.text(1)?, &row.text(2)?) {
                f.problem("mission_state", None, format!("attempt {id}: {why}"));
            }
        }
    }
    // Violation rows are numbered 0..n-1 (`ord` is where the next one goes: a gap would
    // make a later EXPOSURE_EXCEEDED collide with a row instead of recording its violation).
    let ords: Vec<i64> = db
        .query(
            "SELECT ord FROM mission_violations WHERE mission_id = ?1 ORDER BY ord",
            &vals![mission_id],
        )?
        .iter()
        .map(|r| r.int(0))
        .collect::<Result<_, _>>()?;
    if ords.iter().zip(0i64..).any(|(o, i)| *o != i) {
        f.problem(
            "mission_state",
            None,
            format!(
                "violation rows are numbered {ords:?}, not 0..{}",
                ords.len()
            ),
        );
    }
    Ok(())
}

/// The idempotency rows and the journal's request keys (`keys`) name each other (F5).
fn check_requests(
    db: &dyn Db,
    mission_id: &str,
    mut keys: BTreeMap<String, (u64, String)>,
    f: &mut Findings<'_>,
) -> Result<(), Error> {
    // Each idempotency row names the journal entry that used its key, with that entry's
    // command; each key in the journal has its row (F5: else a resend answers another
    // command's result, or applies the command again).
    for row in db.query(
        "SELECT request_id, command_ref, seq FROM mission_requests WHERE mission_id = ?1 ORDER BY request_id",
        &vals![mission_id],
    )? {
        let (k, c, seq) = (row.text(0)?, row.text(1)?, row.int(2)?);
        match keys.remove(&k) {
            Some((s, r)) if i64::try_from(s).ok() == Some(seq) && r == c => {}
            Some((s, r)) => f.problem(
                "mission_state",
                Some(s),
                format!("request {k} names entry {seq} with command {c}; the journal's entry {s} carries that requestId with command {r}"),
            ),
            None => f.problem(
                "mission_state",
                None,
                format!("request {k} names entry {seq}, but no journal entry carries that requestId"),
            ),
        }
    }
    for (k, (s, _)) in keys {
        f.problem(
            "mission_state",
            Some(s),
            format!("journal entry {s} carries requestId {k}, but mission_requests has no row for it (a resend would apply it again)"),
        );
    }
    Ok(())
}

/// The outbox holds exactly the admitted attempts' intents, written by their admit entries
/// (`admit_seq`).
fn check_outbox(
    db: &dyn Db,
    mission_id: &str,
    state: &State,
    admit_seq: &BTreeMap<String, u64>,
    f: &mut Findings<'_>,
) -> Result<(), Error> {
    // The outbox holds exactly the admitted attempts' intents, with the payload and
    // preconditions their refs name, written by their admit's entry.
    let rows: Vec<OutboxRow> = db
        .query(
            "SELECT attempt_id, intent_ref, intent, seq, payload, preconditions FROM mission_outbox WHERE mission_id = ?1",
            &vals![mission_id],
        )?
        .iter()
        .map(|r| {
            Ok(OutboxRow {
                id: r.text(0)?,
                intent_ref: r.text(1)?,
                intent: r.blob(2)?,
                seq: r.int(3)?,
                payload: r.blob(4)?,
                preconditions: r.blob(5)?,
            })
        })
        .collect::<Result<_, Error>>()?;
    if rows.len() != state.attempts.len() {
        f.problem(
            "mission_state",
            None,
            format!(
                "{} outbox intents for {} admitted attempts",
                rows.len(),
                state.attempts.len()
            ),
        );
    }
    for o in rows {
        let id = &o.id;
        let Some(a) = state.attempts.get(id) else {
            f.problem(
                "mission_state",
                None,
                format!("outbox intent of attempt {id} does not match the fold"),
            );
            continue;
        };
        let why = if a.intent_ref != o.intent_ref
            || HashRef::of(&o.intent).to_string() != o.intent_ref
            || super::super::reduce::intent_bytes(mission_id, id, a) != o.intent
        {
            Some("its intent does not match the fold")
        } else if HashRef::of(&o.payload).to_string() != a.payload_ref {
            Some("its payload does not hash to the attempt's payloadRef")
        } else if HashRef::of(&o.preconditions).to_string() != a.preconditions_ref {
            Some("its preconditions do not hash to the attempt's preconditionsRef")
        } else if admit_seq.get(id).and_then(|s| i64::try_from(*s).ok()) != Some(o.seq) {
            Some("its seq does not name the attempt's admit entry")
        } else {
            None
        };
        if let Some(why) = why {
            f.problem(
                "mission_state",
                None,
                format!("outbox row of attempt {id}: {why}"),
            );
        }
    }
    Ok(())
}

/// One `mission_outbox` row as verify reads it.
pub(super) struct OutboxRow {
    pub(super) id: String,
    pub(super) intent_ref: String,
    pub(super) intent: Vec<u8>,
    pub(super) seq: i64,
    pub(super) payload: Vec<u8>,
    pub(super) preconditions: Vec<u8>,
}

pub(super) fn describe_diff(stored: &State, folded: &State) -> String {
    let scalars = [
        ("revision", stored.revision, folded.revision),
        ("reserved", stored.reserved, folded.reserved),
        ("settled", stored.settled, folded.settled),
        ("lastNow", stored.last_now, folded.last_now),
    ];
    for (k, a, b) in scalars {
        if a != b {
            return format!("materialised {k} is {a}, the journal folds to {b}");
        }
    }
    macro_rules! map {
        ($f:ident, $what:expr) => {
            for (k, v) in &folded.$f {
                if stored.$f.get(k) != Some(v) {
                    return format!("materialised {} {k} differs from the journal's fold", $what);
                }
            }
            for k in stored.$f.keys() {
                if !folded.$f.contains_key(k) {
                    return format!("materialised {} {k} is not in the journal", $what);
                }
            }
        };
    }
    map!(runs, "run");
    map!(grants, "grant");
    map!(operations, "operation");
    map!(attempts, "attempt");
    map!(approvals, "approval");
    if stored.violations != folded.violations {
        return "materialised violations differ from the journal's fold".into();
    }
    "materialised state differs from the journal's fold".into()
}
