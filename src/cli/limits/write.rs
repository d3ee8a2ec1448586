//! What every writing `world limits` verb shares: open the ledger, establish the actor (the
//! operator, or an attended human after the tty fence and the typed phrase), apply the
//! command through `ops::limits` and print the verdict.

use super::*;

/// A fresh request id (`cli-` + 32 hex): no two invocations share it, so no idempotency.
pub(super) fn random_request_id() -> Result<String, CliError> {
    let mut b = [0u8; 16];
    getrandom::getrandom(&mut b)
        .map_err(|e| CliError::failed("limits", format!("random request id: {e}")))?;
    Ok(format!("cli-{}", hex::encode(b)))
}

/// `invoke`, `serve` and `mcp --ledger`: refuse, before anything starts, a ledger file that is
/// missing or empty (exit 4, `ledger_not_initialized` naming the path; nothing created).
///
/// # Errors
/// The refusal as a [`CliError`] with [`Exit::LimitRejected`].
pub fn check_ledger_flag(what: &str, ledger: Option<&str>) -> Result<(), CliError> {
    match ledger.map(limits::check_ledger_location) {
        Some(Err(limits::Error::Rejected(v))) => Err(crate::cli::error::limits_rejection(what, &v)),
        Some(Err(e)) => Err(ledger_err(what, e)),
        _ => Ok(()),
    }
}

/// Open the ledger for a writing verb: the store file under its writer lock, or `--ledger`.
/// Only `init` (`create`) may create a ledger file; for the others a missing or empty file is
/// the inner `ledger_not_initialized` verdict naming the path (exit 4, nothing created).
pub(super) fn open_place_write(
    ctx: &Context,
    ledger: Option<&str>,
    what: &str,
    create: bool,
) -> Result<Result<Place, Box<Verdict>>, CliError> {
    match ledger {
        Some(p) => {
            let opened = if create {
                limits::create_standalone_ledger(p)
            } else {
                limits::open_standalone_ledger(p)
            };
            match opened {
                Ok(l) => Ok(Ok(Place::Standalone(l))),
                Err(limits::Error::Rejected(v)) => Ok(Err(v)),
                Err(e) => Err(ledger_err(what, e)),
            }
        }
        None => ctx.open_write(false).map(|s| Ok(Place::Store(s))),
    }
}

/// The verdict of `what`: `ok`/`exists` is the command's summary (`ok revision=N` on stdout,
/// nothing under `-q`; `--json`: the §5 object `{"code","revision",…}`, exit 0); any other
/// code is the rejection error of [`crate::cli::error::limits_rejection`] (exit 4, stderr, the one
/// `{"error":{…}}` envelope under `--json`; DEC-LEDGER-CLI-1).
pub(super) fn emit(out: &mut Output, what: &str, v: &Verdict) -> Result<Exit, CliError> {
    if !v.code.is_success() {
        return Err(crate::cli::error::limits_rejection(what, v));
    }
    if out.json {
        out.json_line(v)?;
    } else {
        out.summary(v.human())?;
    }
    Ok(Exit::Success)
}

/// Parse a user amount; the error is the ledger's `amount_invalid` / `overflows_amount`
/// verdict at the current revision.
pub(super) fn amount(place: &Place, text: &str) -> Result<Amount, Box<Verdict>> {
    Amount::parse(text).map_err(|e: AmountError| {
        Box::new(Verdict::from_amount_error(&e, place.revision()).because(format!("{text:?}: {e}")))
    })
}

/// The evidence of one command: a ref to check against the store, or a file hashed here.
pub(super) struct EvidenceInput {
    /// The `evidenceRef` text passed to the ledger.
    pub(super) reference: Option<String>,
    /// The file's bytes and ref, when `--evidence-file` was given.
    pub(super) file: Option<(HashRef, Vec<u8>)>,
}

impl EvidenceInput {
    /// The evidence `ev` names, the file read and hashed here.
    pub(super) fn read(ev: &Evidence, what: &str) -> Result<EvidenceInput, CliError> {
        if let Some(f) = &ev.evidence_file {
            let bytes = read_input(f, MAX_EVIDENCE_BYTES, what)?;
            let r = HashRef::of(&bytes);
            return Ok(EvidenceInput {
                reference: Some(r.to_string()),
                file: Some((r, bytes)),
            });
        }
        Ok(EvidenceInput {
            reference: ev.evidence.clone(),
            file: None,
        })
    }
}

/// How the actor of a writing verb is established.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Attendance {
    /// HOST, or AGENT with `--session`.
    Operator,
    /// `init --yes`: HOST, recorded unattended.
    Unattended,
    /// An attended HUMAN act: the tty fence and a typed phrase.
    Attended,
}

/// Everything one writing verb needs once its arguments are parsed.
pub(super) struct Job<'a> {
    pub(super) what: &'static str,
    pub(super) common: &'a Common,
    pub(super) command: Command,
    pub(super) attendance: Attendance,
    pub(super) evidence: Option<EvidenceInput>,
}

pub(super) fn operator(
    ctx: &Context,
    out: &mut Output,
    place: &Place,
    what: &'static str,
    common: &Common,
    command: Command,
    evidence: Option<EvidenceInput>,
) -> Result<Exit, CliError> {
    let job = Job {
        what,
        common,
        command,
        attendance: Attendance::Operator,
        evidence,
    };
    execute(ctx, out, place, job)
}

/// Parse `--set KIND=VALUE|null …`: an unknown kind, a missing `=` or a repeated kind is a
/// usage error (outer `Err`); a bad amount is the ledger's verdict (inner `Err`).
pub(super) fn parse_patch(
    place: &Place,
    set: &[String],
) -> Result<Result<BoundsPatch, Box<Verdict>>, CliError> {
    let mut patch = BoundsPatch::default();
    for item in set {
        let Some((k, v)) = item.split_once('=') else {
            return Err(CliError::usage(
                "--set",
                format!("{item:?} is not KIND=VALUE or KIND=null"),
            ));
        };
        let Some(kind) = LimitKind::parse(k) else {
            let kinds: Vec<&str> = LimitKind::ALL.iter().map(|k| k.as_str()).collect();
            return Err(CliError::usage(
                "--set",
                format!("unknown limit kind {k:?}; one of {}", kinds.join(", ")),
            ));
        };
        if patch.get(kind).is_some() {
            return Err(CliError::usage(
                "--set",
                format!("{} is set more than once", kind.as_str()),
            ));
        }
        let value = if v == "null" {
            None
        } else {
            match amount(place, v) {
                Ok(a) => Some(a),
                Err(verdict) => return Ok(Err(verdict)),
            }
        };
        patch.set(kind, value);
    }
    Ok(Ok(patch))
}

/// The World store connection for `--session` and `--evidence REF`: the open store, or (with a
/// standalone ledger) a read-only open of `--db` when something needs it.
pub(super) fn store_conn<'a>(
    ctx: &Context,
    place: &'a Place,
    read_only: &'a mut Option<Store>,
    needed: bool,
) -> Result<Option<&'a Connection>, CliError> {
    match place {
        Place::Store(s) => Ok(Some(s.conn())),
        Place::Standalone(_) if needed => {
            let s = ctx.open_read()?;
            Ok(Some(read_only.insert(s).conn()))
        }
        Place::Standalone(_) => Ok(None),
    }
}

/// Establish the actor facts of an operator (HOST or AGENT) at `now_ms`.
pub(super) fn operator_actor(
    ctx: &Context,
    out: &mut Output,
    conn: Option<&Connection>,
    session_arg: Option<&str>,
    now_ms: u128,
) -> Result<ActorFacts, CliError> {
    let Some(value) = session_arg else {
        return Ok(ActorFacts::new(
            ActorKind::Host,
            &format!("host:{}", login()),
            now_ms,
        ));
    };
    let conn = conn.ok_or_else(|| CliError::failed("session", "no World store to resolve it"))?;
    let input = session::read_token(value, true).map_err(crate::cli::error::session_err)?;
    if let Some(w) = &input.warning {
        out.warn(w);
    }
    // An unknown, revoked or expired credential is an authentication failure, refused here
    // like `invoke` and `mission` refuse it, not `allowed=false` facts (DEC-ARCH-11).
    let s = session::agent(conn, &input.token, ctx.now(), session::Unattested::Refuse)
        .map_err(crate::cli::error::session_err)?;
    Ok(ActorFacts::agent(&s.credential_id, &s.episode, now_ms))
}

pub(super) fn execute(
    ctx: &Context,
    out: &mut Output,
    place: &Place,
    job: Job<'_>,
) -> Result<Exit, CliError> {
    let what = job.what;
    let now_ms = parse_now(job.common.now.as_deref())?;
    let request = Request {
        request_id: match &job.common.request_id {
            Some(r) => r.clone(),
            None => random_request_id()?,
        },
        expected_revision: job.common.expected_revision,
        command: job.command,
        system_clock: job.common.now.is_none(),
    };
    let evidence_ref_given = job
        .evidence
        .as_ref()
        .is_some_and(|e| e.reference.is_some() && e.file.is_none());
    let mut read_only = None;
    let needs_store = job.common.session.is_some() || evidence_ref_given;
    let conn = store_conn(ctx, place, &mut read_only, needs_store)?;
    let file = job.evidence.as_ref().and_then(|e| e.file.as_ref());
    let ledger_name = place.describe();
    let run = |actor: &ActorFacts, dry_run: bool| {
        ops::limits::apply(
            place,
            &ops::limits::Options {
                request: &request,
                actor,
                now_ms,
                evidence_file: file,
                evidence_store: conn,
                dry_run,
            },
        )
    };

    let actor = if job.attendance == Attendance::Attended && job.common.session.is_none() {
        // The tty fence first: without a controlling terminal nothing else happens.
        let mut tty = fence::open_tty()
            .map_err(|_| CliError::fence("limits", "tty", Some("no-controlling-terminal"), ""))?;
        let mut human = ActorFacts::new(ActorKind::Human, &format!("human:{}", login()), now_ms);
        human.policy_ref = Some("attended:/dev/tty".into());
        // Dry run as the human: a command the ledger would refuse is reported unconfirmed.
        match run(&human, true) {
            Ok(v) if v.code == Code::Exists => return emit(out, what, &v),
            Ok(_) => {}
            Err(limits::Error::Rejected(v)) => return emit(out, what, &v),
            Err(e) => return Err(ledger_err(what, e)),
        }
        let words = phrase(&request.command)?;
        out.flush()?;
        let report = match place {
            Place::Store(s) => limits::Ledger::open_in(s.conn()).report(now_ms, None).ok(),
            Place::Standalone(l) => l.report(now_ms, None).ok(),
        };
        let prompt = format!(
            "About to {}.\nType exactly, to confirm as {}:\n  {words}\n> ",
            describe(&request.command, &ledger_name, report.as_ref()),
            human.actor_id
        );
        tty.confirm("limits", &prompt, &words)?;
        human
    } else if job.attendance == Attendance::Unattended && job.common.session.is_none() {
        let mut host = ActorFacts::new(ActorKind::Host, &format!("host:{}", login()), now_ms);
        host.policy_ref = Some("unattended:--yes".into());
        host
    } else {
        operator_actor(ctx, out, conn, job.common.session.as_deref(), now_ms)?
    };

    match run(&actor, false) {
        Ok(v) => emit(out, what, &v),
        Err(limits::Error::Rejected(v)) => emit(out, what, &v),
        Err(e) => Err(ledger_err(what, e)),
    }
}
