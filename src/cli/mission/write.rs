//! What every writing `world mission` verb shares: build the command, resolve the actor and
//! the evidence, confirm an attended act, apply it through `ops::mission` and print the result.

use super::*;

/// Apply (or dry-run) one command through [`ops::mission::apply`].
pub(super) fn apply(
    target: &Target,
    mission_id: &str,
    request: &Request,
    actor: &Actor,
    now: Amount,
    evidence: Option<&Object>,
    dry_run: bool,
) -> Result<mstore::Applied, mstore::Error> {
    ops::mission::apply(
        target,
        &ops::mission::Options {
            mission_id,
            request,
            actor,
            now,
            evidence,
            dry_run,
        },
    )
}

/// Build a command from a JSON value exactly as `apply` would parse it.
pub(super) fn build(v: &Value) -> Result<Command, Rejection> {
    Command::parse(&serde_json::to_vec(v).unwrap_or_default())
}

/// The phrase a human types to confirm an attended act.
pub(super) fn phrase(mission_id: &str, c: &Command) -> String {
    match c {
        Command::Reconcile { attempt_id, .. } => format!("reconcile {mission_id} {attempt_id}"),
        Command::Approve { operation_id, .. } => format!("approve {mission_id} {operation_id}"),
        other => format!("{} {mission_id}", other.name()),
    }
}

/// The AGENT actor of `--session`: the session must be live and bound to `mission_id` in
/// this very place — the store file when the binding names no ledger, else the ledger and the
/// mission the binding names (DEC-MIS-15); its subject is the bound grant's subject.
pub(super) fn agent_actor(
    ctx: &Context,
    out: &mut Output,
    conn: &Connection,
    missions: &dyn MissionStore,
    value: &str,
    mission_id: &str,
    in_ledger: bool,
) -> Result<Actor, CliError> {
    let input = session::read_token(value, true).map_err(crate::cli::error::session_err)?;
    if let Some(w) = &input.warning {
        out.warn(w);
    }
    let s = session::agent(conn, &input.token, ctx.now(), session::Unattested::Refuse)
        .map_err(crate::cli::error::session_err)?;
    let b = session::binding(conn, &s.episode)
        .map_err(|e| CliError::store("session", e))?
        .unwrap_or_default();
    if b.mission_id != mission_id || b.mission_grant.is_empty() {
        return Err(CliError::failed(
            "session",
            format!("episode {} is not bound to mission {mission_id}", s.episode),
        )
        .hint("mint the session with --mission M --mission-run R --mission-grant G"));
    }
    let elsewhere = match (in_ledger, b.mission_ledger.is_empty()) {
        (false, true) => None,
        (false, false) => Some(format!(
            "episode {}'s mission {mission_id} is in the ledger {}, not in this store",
            s.episode, b.mission_ledger
        )),
        (true, true) => Some(format!(
            "episode {}'s mission {mission_id} is in the store file, not in --ledger {}",
            s.episode,
            missions.describe()
        )),
        (true, false) => crate::mission::ledger::check_bound(
            missions,
            mission_id,
            &b.mission_ledger,
            &b.mission_root,
        )
        .map_err(|e| match e {
            mstore::Error::Rejected(r) => CliError::failed("session", r),
            e => store_err("session", e),
        })?,
    };
    if let Some(why) = elsewhere {
        return Err(CliError::failed("session", why)
            .hint("name the ledger (or the store) the session was minted for, or mint a session for this one"));
    }
    let st = missions.state(mission_id).map_err(|e| match e {
        mstore::Error::Rejected(r) => CliError::failed("session", r),
        e => store_err("session", e),
    })?;
    let g = st.grants.get(&b.mission_grant).ok_or_else(|| {
        CliError::failed(
            "session",
            format!(
                "the bound grant {} is not in mission {mission_id}",
                b.mission_grant
            ),
        )
    })?;
    Ok(Actor::agent(&s.credential_id, &g.subject))
}

/// Evidence of an attended act: a ref resolved in the store, or a file stored now (with a
/// ledger: hashed, its ref recorded; the file itself stays with the operator, as for
/// `world limits --ledger`).
pub(super) fn evidence(
    ctx: &Context,
    target: &Target,
    aux: &mut Option<Store>,
    ev: &Evidence,
    what: &str,
) -> Result<(String, Option<Object>), CliError> {
    if let Some(f) = &ev.evidence_file {
        let bytes = read_input(f, MAX_EVIDENCE_BYTES, what)?;
        let r = HashRef::of(&bytes).to_string();
        return Ok((
            r,
            Some(Object::new(
                EvidenceKind::Mission.semantic_id(),
                EvidenceKind::Mission.provenance(),
                bytes,
            )),
        ));
    }
    let r = ev.evidence.clone().unwrap_or_default();
    mission::check_evidence(&r).map_err(|e| CliError::failed(what, format!("--evidence: {e}")))?;
    let conn = store_conn(target, ctx, aux)?;
    match store::object_in(conn, &r) {
        Ok(Some(o)) if o.verifies() => Ok((r, None)),
        Ok(_) => Err(CliError::failed(
            what,
            format!("--evidence {r} names no object in the store that re-hashes to it"),
        )
        .hint("pass --evidence-file FILE to store and use a file")),
        Err(e) => Err(CliError::store(what, e)),
    }
}

/// A writing verb once its command is built.
pub(super) struct Job<'a> {
    pub(super) what: &'static str,
    pub(super) ledger: Option<&'a str>,
    pub(super) mission: &'a str,
    pub(super) common: &'a Common,
    pub(super) command: Result<Command, Rejection>,
    pub(super) attended: bool,
    pub(super) evidence: Option<&'a Evidence>,
    /// `now` already read for the command (an admit's default `authorizationCheckedAt` is the
    /// same reading, so an implicit clock moves both, DEC-MIS-17); `None`: read it here.
    pub(super) now: Option<Amount>,
}

/// A writing job that is not attended and carries no evidence, its clock read when it runs.
pub(super) fn plain<'a>(
    what: &'static str,
    ledger: Option<&'a str>,
    mission: &'a str,
    common: &'a Common,
    command: Result<Command, Rejection>,
) -> Job<'a> {
    Job {
        what,
        ledger,
        mission,
        common,
        command,
        attended: false,
        evidence: None,
        now: None,
    }
}

/// An attended writing job carrying `evidence`, its clock read when it runs.
pub(super) fn attended<'a>(
    what: &'static str,
    ledger: Option<&'a str>,
    mission: &'a str,
    common: &'a Common,
    command: Result<Command, Rejection>,
    evidence: &'a Evidence,
) -> Job<'a> {
    Job {
        attended: true,
        evidence: Some(evidence),
        ..plain(what, ledger, mission, common, command)
    }
}

/// [`write`] of the [`plain`] job that applies the command `v` builds.
pub(super) fn write_plain(
    ctx: &Context,
    out: &mut Output,
    ledger: Option<&str>,
    what: &'static str,
    mission: &str,
    common: &Common,
    v: &Value,
) -> Result<Exit, CliError> {
    write(ctx, out, plain(what, ledger, mission, common, build(v)))
}

pub(super) fn write(ctx: &Context, out: &mut Output, job: Job<'_>) -> Result<Exit, CliError> {
    let now = match job.now {
        Some(n) => n,
        None => parse_now(job.common.now.as_deref())?,
    };
    let mut command = match job.command {
        Ok(c) => c,
        Err(r) => return Err(rejection(job.what, &r)),
    };
    let target = open_write(ctx, job.ledger, job.what)?;
    let mut aux = None;
    let mut obj = None;
    if let Some(ev) = job.evidence {
        let (r, o) = evidence(ctx, &target, &mut aux, ev, job.what)?;
        if matches!(target, Target::Store(_)) {
            obj = o;
        }
        match &mut command {
            Command::Reconcile { evidence_ref, .. } | Command::Approve { evidence_ref, .. } => {
                *evidence_ref = r
            }
            _ => {}
        }
    }
    let req = Request {
        command,
        request_id: job.common.request_id.clone(),
        implicit_now: job.common.now.is_none(),
    };
    let actor = if job.attended {
        let mut tty = fence::open_tty()
            .map_err(|_| CliError::fence("mission", "tty", Some("no-controlling-terminal"), ""))?;
        let human = Actor::human(&format!("human:{}", super::super::limits::login()));
        match apply(&target, job.mission, &req, &human, now, obj.as_ref(), true) {
            Ok(a) if a.replayed => return emit_applied(out, job.what, job.mission, &a),
            Ok(_) => {}
            Err(mstore::Error::Rejected(r)) => return Err(rejection(job.what, &r)),
            Err(e) => return Err(store_err(job.what, e)),
        }
        let words = phrase(job.mission, &req.command);
        out.flush()?;
        let state = target.with(|m| m.state(job.mission)).ok();
        let prompt = format!(
            "About to {} in mission {} in {}{}.\nType exactly, to confirm as {}:\n  {words}\n> ",
            req.command.name(),
            job.mission,
            target.describe(),
            attended_detail(&req.command, state.as_ref()),
            human.id
        );
        tty.confirm("mission", &prompt, &words)?;
        human
    } else if let Some(s) = &job.common.session {
        let conn = store_conn(&target, ctx, &mut aux)?;
        target.with(|m| {
            agent_actor(
                ctx,
                out,
                conn,
                m,
                s,
                job.mission,
                matches!(target, Target::Standalone(_)),
            )
        })?
    } else {
        host()
    };
    match apply(&target, job.mission, &req, &actor, now, obj.as_ref(), false) {
        Ok(a) => emit_applied(out, job.what, job.mission, &a),
        Err(mstore::Error::Rejected(r)) => Err(rejection(job.what, &r)),
        Err(e) => Err(store_err(job.what, e)),
    }
}

/// The numbers a person approves in an attended act, one per line under the prompt's first
/// line: `reconcile` the attempt's reserved amount, the actual cost (and what it frees) and
/// the evidence hash; `approve` the operation and the evidence hash. `state` is the mission
/// just before asking (`None` when it could not be read).
pub(super) fn attended_detail(c: &Command, state: Option<&State>) -> String {
    match c {
        Command::Reconcile {
            attempt_id,
            actual_cost,
            outcome,
            evidence_ref,
        } => {
            let held = state.and_then(|s| s.attempts.get(attempt_id));
            let reserved = match held {
                Some(a) => format!(
                    "\n  attempt {attempt_id} (operation {}, grant {}, {} {}), status {}\n  reserved {} → actual {actual_cost} {} (frees {})",
                    a.operation_id,
                    a.grant_id,
                    a.capability,
                    a.resource,
                    a.status.as_str(),
                    a.amount,
                    outcome.as_str(),
                    a.amount.get().saturating_sub(actual_cost.get())
                ),
                None => format!(
                    "\n  attempt {attempt_id}\n  actual {actual_cost} {}",
                    outcome.as_str()
                ),
            };
            format!("{reserved}\n  evidence {evidence_ref}")
        }
        Command::Approve {
            operation_id,
            evidence_ref,
        } => format!("\n  operation {operation_id}\n  evidence {evidence_ref}"),
        _ => String::new(),
    }
}

/// The HOST actor (the operator).
pub(super) fn host() -> Actor {
    Actor {
        kind: ActorKind::Host,
        id: format!("host:{}", super::super::limits::login()),
        subject: None,
    }
}

/// Print the result of `what`: `OK` is the command's summary (`OK revision=N seq=S
/// [intentRef=…]` on stdout, nothing under `-q`; `--json`: the result object with
/// `missionId`, `seq` and `replayed`), exit 0. The resend of a journalled rejection
/// (`EXPOSURE_EXCEEDED`) is that rejection again, as an error with `"replayed":true`.
pub(super) fn emit_applied(
    out: &mut Output,
    what: &str,
    mission_id: &str,
    a: &mstore::Applied,
) -> Result<Exit, CliError> {
    if a.code != Code::Ok {
        let mut e = CliError::rejected(
            what,
            format!("{} (resend: the recorded result)", a.code.as_str()),
        )
        .with_code(a.code.as_str());
        e.verbatim = Some(format!(
            "{} (resend: the recorded result) {}",
            a.code.as_str(),
            a.result
        ));
        if let Value::Object(m) = &a.result {
            for (k, v) in m {
                if k != "code" {
                    e = e.detail(k, v.clone());
                }
            }
        }
        return Err(e
            .detail("missionId", mission_id)
            .detail("seq", a.seq)
            .detail("replayed", true));
    }
    if out.json {
        let mut v = a.result.clone();
        v["missionId"] = mission_id.into();
        v["seq"] = a.seq.into();
        v["replayed"] = a.replayed.into();
        out.json_line(&v)?;
    } else {
        let mut line = format!("OK revision={} seq={}", a.revision, a.seq);
        if let Some(r) = a.result.get("intentRef").and_then(Value::as_str) {
            line.push_str(&format!(" intentRef={r}"));
        }
        if a.replayed {
            line.push_str(" (resend: the recorded result)");
        }
        out.summary(line)?;
    }
    Ok(Exit::Success)
}

/// A rejection of `what`: exit 4, on stderr, the one envelope under `--json`
/// ([`crate::cli::error::mission_rejection`]).
pub(super) fn rejection(what: &str, r: &Rejection) -> CliError {
    crate::cli::error::mission_rejection(what, r)
}
