//! Reading a mission back: its scalar row, the working set a command reads, the full state,
//! and the journal entries decoded (missions.md §6).

use super::*;

/// The scalar row of a mission.
pub(super) struct Head {
    pub(super) contract: Arc<Contract>,
    pub(super) contract_ref: String,
    pub(super) revision: u64,
    pub(super) reserved: Amount,
    pub(super) settled: Amount,
    pub(super) last_now: Amount,
    pub(super) seq: u64,
    pub(super) head_hash: String,
    pub(super) violations: u64,
}

/// The mission row (the tables exist).
pub(super) fn head(db: &dyn Db, mission_id: &str) -> Result<Head, Error> {
    let row = query_opt(
        db,
        "SELECT contract, contract_ref, revision, reserved, settled, last_now, journal_seq, head_hash, violations FROM mission_missions WHERE mission_id = ?1",
        &vals![mission_id],
    )?
    .ok_or_else(|| not_found(mission_id))?;
    let contract = Contract::parse(&row.blob(0)?)
        .map_err(|e| corrupt(format!("contract of {mission_id}: {e}")))?;
    let contract_ref = row.text(1)?;
    if contract.contract_ref().to_string() != contract_ref {
        return Err(corrupt(format!(
            "contract of {mission_id} does not hash to its contractRef"
        )));
    }
    Ok(Head {
        contract: Arc::new(contract),
        contract_ref,
        revision: row.int(2)? as u64,
        reserved: amount(&row.text(3)?)?,
        settled: amount(&row.text(4)?)?,
        last_now: amount(&row.text(5)?)?,
        seq: row.int(6)? as u64,
        head_hash: row.text(7)?,
        violations: row.int(8)? as u64,
    })
}

pub(super) fn empty_state(mission_id: &str, h: &Head) -> State {
    State {
        mission_id: mission_id.to_string(),
        contract_ref: h.contract_ref.clone(),
        revision: Amount(u128::from(h.revision)),
        budget: h.contract.budget,
        reserved: h.reserved,
        settled: h.settled,
        last_now: h.last_now,
        runs: BTreeMap::new(),
        grants: BTreeMap::new(),
        operations: BTreeMap::new(),
        attempts: BTreeMap::new(),
        approvals: BTreeMap::new(),
        violations: Vec::new(),
        contract: h.contract.clone(),
    }
}

pub(super) fn get_row<T: serde::de::DeserializeOwned>(
    db: &dyn Db,
    table: &str,
    key_col: &str,
    mission_id: &str,
    key: &str,
) -> Result<Option<T>, Error> {
    let sql = format!("SELECT body FROM {table} WHERE mission_id = ?1 AND {key_col} = ?2");
    let Some(row) = query_opt(db, &sql, &vals![mission_id, key])? else {
        return Ok(None);
    };
    let body = row.text(0)?;
    serde_json::from_str(&body)
        .map(Some)
        .map_err(|e| corrupt(format!("{table} {key}: {e}")))
}

pub(super) fn load_chain(
    db: &dyn Db,
    mission_id: &str,
    s: &mut State,
    grant_id: &str,
) -> Result<(), Error> {
    let mut next = Some(grant_id.to_string());
    let mut hops = 0;
    while let Some(id) = next.take() {
        if s.grants.contains_key(&id) || hops > 10_000 {
            break;
        }
        hops += 1;
        if let Some(g) = get_row::<Grant>(db, "mission_grants", "grant_id", mission_id, &id)? {
            next = g.parent_id.clone();
            s.grants.insert(id, g);
        }
    }
    Ok(())
}

pub(super) fn load_attempt(
    db: &dyn Db,
    mission_id: &str,
    s: &mut State,
    attempt_id: &str,
) -> Result<(), Error> {
    if let Some(a) =
        get_row::<Attempt>(db, "mission_attempts", "attempt_id", mission_id, attempt_id)?
    {
        load_chain(db, mission_id, s, &a.grant_id)?;
        load_op(db, mission_id, s, &a.operation_id)?;
        s.attempts.insert(attempt_id.to_string(), a);
    }
    Ok(())
}

pub(super) fn load_op(db: &dyn Db, mission_id: &str, s: &mut State, op: &str) -> Result<(), Error> {
    if let Some(o) = get_row::<Operation>(db, "mission_operations", "operation_id", mission_id, op)?
    {
        s.operations.insert(op.to_string(), o);
    }
    Ok(())
}

pub(super) fn load_run(
    db: &dyn Db,
    mission_id: &str,
    s: &mut State,
    run: &str,
) -> Result<(), Error> {
    if let Some(r) = get_row::<Run>(db, "mission_runs", "run_id", mission_id, run)? {
        s.runs.insert(run.to_string(), r);
    }
    Ok(())
}

pub(super) fn load_approval(
    db: &dyn Db,
    mission_id: &str,
    s: &mut State,
    op: &str,
) -> Result<(), Error> {
    if let Some(ap) = get_row::<Approval>(db, "mission_approvals", "operation_id", mission_id, op)?
    {
        s.approvals.insert(op.to_string(), ap);
    }
    Ok(())
}

/// The partial state holding exactly what `command` reads (its working set).
pub(super) fn load_working(
    db: &dyn Db,
    mission_id: &str,
    h: &Head,
    command: &Command,
) -> Result<State, Error> {
    let mut s = empty_state(mission_id, h);
    match command {
        Command::StartRun { run_id } => load_run(db, mission_id, &mut s, run_id)?,
        Command::Grant { grant, parent_id } => {
            if let Some(g) =
                get_row::<Grant>(db, "mission_grants", "grant_id", mission_id, &grant.id)?
            {
                s.grants.insert(grant.id.clone(), g);
            }
            if let Some(p) = parent_id {
                load_chain(db, mission_id, &mut s, p)?;
            }
        }
        Command::Admit(a) => {
            load_run(db, mission_id, &mut s, &a.run_id)?;
            load_attempt(db, mission_id, &mut s, &a.attempt_id)?;
            load_chain(db, mission_id, &mut s, &a.grant_id)?;
            load_op(db, mission_id, &mut s, &a.operation_id)?;
            load_approval(db, mission_id, &mut s, &a.operation_id)?;
            for d in a.depends_on.iter().flatten() {
                load_op(db, mission_id, &mut s, d)?;
            }
        }
        Command::Dispatch { attempt_id }
        | Command::Settle { attempt_id, .. }
        | Command::Release { attempt_id }
        | Command::Reconcile { attempt_id, .. } => {
            load_attempt(db, mission_id, &mut s, attempt_id)?
        }
        Command::Approve { operation_id, .. } => {
            load_approval(db, mission_id, &mut s, operation_id)?
        }
        Command::Revoke { grant_id } => {
            if let Some(g) =
                get_row::<Grant>(db, "mission_grants", "grant_id", mission_id, grant_id)?
            {
                if let Some(p) = &g.parent_id {
                    load_chain(db, mission_id, &mut s, p)?;
                }
                s.grants.insert(grant_id.clone(), g);
            }
        }
        Command::CompleteRun { run_id, .. } => {
            load_run(db, mission_id, &mut s, run_id)?;
            // Every attempt of the mission, judged by its body (what `verify` folds), never by
            // the `status`/`run_id` index columns alone: an edited column must not hide an
            // outstanding attempt (DEC-MIS-15). A column that disagrees with its body is
            // corruption. One scan per run completion.
            let rows = db.query(
                "SELECT attempt_id, run_id, status, body FROM mission_attempts WHERE mission_id = ?1",
                &vals![mission_id],
            )?;
            for row in rows {
                let id = row.text(0)?;
                let a: Attempt = serde_json::from_str(&row.text(3)?)
                    .map_err(|e| corrupt(format!("attempt {id}: {e}")))?;
                if let Some(why) = attempt_columns_differ(&a, &row.text(1)?, &row.text(2)?) {
                    return Err(corrupt(format!("mission_attempts row {id}: {why}")));
                }
                if &a.run_id == run_id && a.status.holds_reservation() {
                    s.attempts.insert(id, a);
                }
            }
        }
    }
    Ok(s)
}

/// Why an attempt row's index columns (`run_id`, `status`) disagree with its body, if they do.
pub(super) fn attempt_columns_differ(
    a: &Attempt,
    run_col: &str,
    status_col: &str,
) -> Option<String> {
    if a.status.as_str() != status_col {
        return Some(format!(
            "the status column says {status_col}, its body says {}",
            a.status.as_str()
        ));
    }
    if a.run_id != run_col {
        return Some(format!(
            "the run_id column says {run_col}, its body says {}",
            a.run_id
        ));
    }
    None
}

/// The full materialised state of a mission (every row).
///
/// # Errors
/// `MISSION_NOT_FOUND`; storage and corruption errors.
pub fn load_full(conn: &Connection, mission_id: &str) -> Result<State, Error> {
    if !tables_exist(conn)? {
        return Err(not_found(mission_id));
    }
    load_full_db(conn, mission_id)
}

/// [`load_full`] on any backend (the tables exist).
pub(crate) fn load_full_db(db: &dyn Db, mission_id: &str) -> Result<State, Error> {
    let h = head(db, mission_id)?;
    let mut s = empty_state(mission_id, &h);
    fn all<T: serde::de::DeserializeOwned>(
        db: &dyn Db,
        table: &str,
        key_col: &str,
        mission_id: &str,
    ) -> Result<BTreeMap<String, T>, Error> {
        let rows = db.query(
            &format!("SELECT {key_col}, body FROM {table} WHERE mission_id = ?1"),
            &vals![mission_id],
        )?;
        let mut out = BTreeMap::new();
        for row in rows {
            let k = row.text(0)?;
            let v = serde_json::from_str(&row.text(1)?)
                .map_err(|e| corrupt(format!("{table} {k}: {e}")))?;
            out.insert(k, v);
        }
        Ok(out)
    }
    s.runs = all(db, "mission_runs", "run_id", mission_id)?;
    s.grants = all(db, "mission_grants", "grant_id", mission_id)?;
    s.operations = all(db, "mission_operations", "operation_id", mission_id)?;
    s.attempts = all(db, "mission_attempts", "attempt_id", mission_id)?;
    s.approvals = all(db, "mission_approvals", "operation_id", mission_id)?;
    let rows = db.query(
        "SELECT body FROM mission_violations WHERE mission_id = ?1 ORDER BY ord",
        &vals![mission_id],
    )?;
    for row in rows {
        let v: Violation =
            serde_json::from_str(&row.text(0)?).map_err(|e| corrupt(format!("violation: {e}")))?;
        s.violations.push(v);
    }
    if s.violations.len() as u64 != h.violations {
        return Err(corrupt(format!(
            "mission {mission_id}: {} violation rows, the mission row counts {}",
            s.violations.len(),
            h.violations
        )));
    }
    Ok(s)
}

/// The journal of a mission, in order.
///
/// # Errors
/// `MISSION_NOT_FOUND`; storage errors.
pub fn journal(conn: &Connection, mission_id: &str) -> Result<Vec<JournalEntry>, Error> {
    if !tables_exist(conn)? {
        return Err(not_found(mission_id));
    }
    journal_db(conn, mission_id)
}

/// [`journal`] on any backend (the tables exist).
pub(crate) fn journal_db(db: &dyn Db, mission_id: &str) -> Result<Vec<JournalEntry>, Error> {
    head(db, mission_id)?;
    let rows = db.query(
        "SELECT seq, prev_hash, entry_hash, entry FROM mission_journal WHERE mission_id = ?1 ORDER BY seq",
        &vals![mission_id],
    )?;
    rows.iter()
        .map(|r| {
            Ok(JournalEntry {
                seq: r.int(0)? as u64,
                prev_hash: r.text(1)?,
                entry_hash: r.text(2)?,
                entry: r.blob(3)?,
            })
        })
        .collect()
}

/// The canonical journal entry object.
#[allow(clippy::too_many_arguments)]
pub(super) fn entry_value(
    mission_id: &str,
    seq: u64,
    prev: &str,
    command: &Command,
    now: Amount,
    actor: &Actor,
    request_id: Option<&str>,
    result: &serde_json::Value,
) -> Vec<u8> {
    let s = |v: &str| CValue::String(v.to_string());
    let json_c = |v: &serde_json::Value| {
        let b = serde_json::to_vec(v).unwrap_or_default();
        trcjson::parse(&b, trcjson::Bounds::UNBOUNDED).unwrap_or(CValue::Null)
    };
    trcjson::encode(&CValue::object(vec![
        ("missionId".into(), s(mission_id)),
        ("seq".into(), CValue::Number(seq.to_string())),
        ("prevHash".into(), s(prev)),
        ("command".into(), command.to_value()),
        ("now".into(), s(&now.to_string())),
        (
            "actor".into(),
            json_c(&serde_json::to_value(actor).unwrap_or_default()),
        ),
        ("requestId".into(), request_id.map_or(CValue::Null, s)),
        ("result".into(), json_c(result)),
    ]))
}

/// A decoded journal entry (what `world verify` and `world mission log` read).
#[derive(Clone, Debug)]
pub struct Decoded {
    /// The command.
    pub command: Command,
    /// `now`.
    pub now: Amount,
    /// The actor.
    pub actor: Actor,
    /// The idempotency key.
    pub request_id: Option<String>,
    /// The recorded result.
    pub result: serde_json::Value,
    /// The recorded `seq` and `prevHash` and `missionId`.
    pub seq: u64,
    /// The previous hash the entry names.
    pub prev_hash: String,
    /// The mission the entry names.
    pub mission_id: String,
}

/// Why a journal entry does not decode (the text `world mission log` and verify print).
#[derive(Debug, thiserror::Error)]
pub enum EntryError {
    /// Not canonical JSON.
    #[error(transparent)]
    Json(#[from] trcjson::Error),
    /// A member is missing.
    #[error("entry has no {0}")]
    Missing(&'static str),
    /// A member has the wrong shape (`problem`: "is not a string", …).
    #[error("entry {field} {problem}")]
    BadField {
        /// The member.
        field: &'static str,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// The command does not parse.
    #[error(transparent)]
    Command(#[from] Rejection),
    /// The actor does not parse.
    #[error("entry actor: {0}")]
    Actor(#[source] serde_json::Error),
}

/// Decode a canonical journal entry.
///
/// # Errors
/// [`EntryError`]: what does not decode.
pub fn decode_entry(bytes: &[u8]) -> Result<Decoded, EntryError> {
    let bad = |field, problem| EntryError::BadField { field, problem };
    let v = trcjson::parse(bytes, trcjson::Bounds::UNBOUNDED)?;
    let get = |k: &'static str| v.get(k).ok_or(EntryError::Missing(k));
    let command = Command::from_value(get("command")?)?;
    let now = get("now")?
        .as_str()
        .and_then(|t| Amount::parse(t).ok())
        .ok_or_else(|| bad("now", "is not an amount"))?;
    let actor: Actor =
        serde_json::from_value(get("actor")?.to_json()).map_err(EntryError::Actor)?;
    let request_id = match get("requestId")? {
        CValue::Null => None,
        CValue::String(s) => Some(s.clone()),
        _ => return Err(bad("requestId", "is neither null nor a string")),
    };
    let seq = get("seq")?
        .as_i64()
        .filter(|n| *n > 0)
        .ok_or_else(|| bad("seq", "is not a positive integer"))? as u64;
    Ok(Decoded {
        command,
        now,
        actor,
        request_id,
        result: get("result")?.to_json(),
        seq,
        prev_hash: get("prevHash")?
            .as_str()
            .ok_or_else(|| bad("prevHash", "is not a string"))?
            .to_string(),
        mission_id: get("missionId")?
            .as_str()
            .ok_or_else(|| bad("missionId", "is not a string"))?
            .to_string(),
    })
}
