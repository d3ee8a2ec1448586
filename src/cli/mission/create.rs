//! `world mission create`: open a mission from a contract (attended).

use super::*;

pub(super) fn create(
    ctx: &Context,
    out: &mut Output,
    ledger: Option<&str>,
    contract: &Path,
    yes: bool,
    now: Option<&str>,
) -> Result<Exit, CliError> {
    let what = "mission create";
    let now = parse_now(now)?;
    let raw = read_input(contract, MAX_JSON_BYTES, what)?;
    let c = match Contract::parse(&raw) {
        Ok(c) => c,
        Err(r) => return Err(rejection(what, &r)),
    };
    let target = open_write(ctx, ledger, what)?;
    let r = c.contract_ref().to_string();
    let hex12 = &r[7..19];
    let actor = if yes {
        host()
    } else {
        let mut tty = fence::open_tty()
            .map_err(|_| CliError::fence("mission", "tty", Some("no-controlling-terminal"), ""))?;
        // Refuse a duplicate before asking anybody.
        let exists = target
            .with(|m| crate::mission::ledger::exists(m, &c.mission_id))
            .map_err(|e| store_err(what, e))?;
        if exists {
            return Err(rejection(
                what,
                &Rejection::new(
                    Code::MissionExists,
                    "a mission with that id is already in the store",
                )
                .with("missionId", &c.mission_id),
            ));
        }
        let words = format!("create {} {hex12}", c.mission_id);
        out.flush()?;
        let list = |v: &[String]| {
            if v.is_empty() {
                "(none)".to_string()
            } else {
                v.join(", ")
            }
        };
        let prompt = format!(
            "About to create mission {} in {}:\n  contract {r}\n  budget {}\n  deadline {} ({} ms)\n  actions {}\n  resources {}\n  maxAttempts {} per operation\n  maxAuthorizationAgeMs {}\n  requiresApproval {}\n  criteria {}\n  features {}\nType exactly, to confirm as human:{}:\n  {words}\n> ",
            c.mission_id,
            target.describe(),
            c.budget,
            rfc3339_ms(c.deadline.0),
            c.deadline,
            list(&c.actions),
            list(&c.resources),
            c.max_attempts,
            c.max_authorization_age_ms,
            c.requires_approval,
            list(&c.criteria),
            list(&c.features),
            super::super::limits::login()
        );
        tty.confirm("mission", &prompt, &words)?;
        Actor::human(&format!("human:{}", super::super::limits::login()))
    };
    match ops::mission::create(&target, &c, &actor, !yes, now) {
        Ok(s) => {
            if out.json {
                out.json_line(&json!({"code": "OK", "missionId": s.mission_id, "contractRef": s.contract_ref, "attended": !yes}))?;
            } else {
                out.summary(format!(
                    "OK mission={} contractRef={}",
                    s.mission_id, s.contract_ref
                ))?;
                if yes {
                    out.status("recorded as unattended (--yes)");
                }
            }
            Ok(Exit::Success)
        }
        Err(mstore::Error::Rejected(r)) => Err(rejection(what, &r)),
        Err(e) => Err(store_err(what, e)),
    }
}
