//! The limits and mission pairings of an effectful call (DEC-LIM-20, DEC-MIS-14, DEC-MIS-19):
//! what the broker's pairing loop (`broker::pairing`) runs each effect against — the episode
//! binding's limits scope (on the store's ledger or the `--ledger` one) and its mission (in
//! the store or a standalone ledger), with the store's id for standalone ledgers.

use crate::authority::session;
use crate::broker;
use crate::store::{Error as StoreError, Object, Store};

use super::{Call, Host, InvokeError, Prepared};

/// An invocation's limits pairing, mission pairing, and the store-id object it wrote.
pub(super) type Pairings = (
    Option<broker::LimitsPairing>,
    Option<broker::MissionPairing>,
    Option<Object>,
);

/// The episode's limits pairing (its binding's scope, on the store's ledger or the
/// `--ledger` one) and mission pairing (DEC-LIM-20, DEC-MIS-14), both `None` when unbound,
/// and the store-id object this call wrote for a store never paired (DEC-MIS-19).
pub(super) fn pairings(
    store: &mut Store,
    run: &Prepared,
    call: &Call,
    host: &Host<'_>,
) -> Result<Pairings, InvokeError> {
    let binding = session::binding(store.conn(), &run.sess.episode)?;
    let mut store_id = StoreId::default();
    let mission = mission_pairing(
        store,
        binding.as_ref(),
        host.services.limits_ledger.as_deref(),
        call.clock,
        run.now,
        &mut store_id,
    )?;
    let limits = binding
        .map(|b| b.limits_scope)
        .filter(|s| !s.is_empty())
        .map(|scope| broker::LimitsPairing {
            scope,
            now_ms: ledger_now_ms(call.clock, run.now),
            clock: call.clock,
            standalone: None,
        });
    let limits = match (limits, &host.services.limits_ledger) {
        (Some(mut p), Some(location)) => {
            let id = store_id.get(store)?;
            p.standalone = Some(std::rc::Rc::new(
                crate::limits::pairing::Standalone::open_for(location, id, &run.invocation_id)
                    .map_err(|e| match e {
                        crate::limits::Error::Rejected(v) => InvokeError::LimitsRejected(v),
                        e => InvokeError::LimitsUnavailable(e.to_string()),
                    })?,
            ));
            Some(p)
        }
        (p, _) => p,
    };
    Ok((limits, mission, store_id.created))
}

/// The mission pairing of an episode's binding (missions.md §7), with the bound grant's subject.
/// A binding that names a standalone ledger (`session mint --ledger`) needs the invocation's
/// `--ledger` to name the same ledger (DEC-MIS-14); the mission is then read there.
fn mission_pairing(
    store: &mut Store,
    binding: Option<&session::Binding>,
    ledger: Option<&str>,
    clock: crate::clock::Clock,
    now: i64,
    store_id: &mut StoreId,
) -> Result<Option<broker::MissionPairing>, InvokeError> {
    let Some(b) = binding.filter(|b| !b.mission_id.is_empty()) else {
        return Ok(None);
    };
    let mut pairing = broker::MissionPairing {
        mission_id: b.mission_id.clone(),
        run_id: b.mission_run.clone(),
        grant_id: b.mission_grant.clone(),
        subject: String::new(),
        now_ms: ledger_now_ms(clock, now),
        clock,
        standalone: None,
    };
    if b.mission_ledger.is_empty() {
        pairing.subject =
            crate::mission::durable::grant_subject(store.conn(), &b.mission_id, &b.mission_grant)
                .map_err(|e| {
                    InvokeError::Store(StoreError::Corrupt {
                        what: "mission binding".into(),
                        detail: e.to_string(),
                    })
                })?
                .unwrap_or_default();
        return Ok(Some(pairing));
    }
    let unavailable = |why: String| InvokeError::MissionUnavailable(why);
    let Some(location) = ledger else {
        return Err(unavailable(format!(
            "the episode's mission {} is in the ledger {}: pass --ledger naming it (or WORLD_LEDGER)",
            b.mission_id, b.mission_ledger
        )));
    };
    let missions =
        crate::mission::ledger::open_canonical(location).map_err(|e| unavailable(e.to_string()))?;
    // The same ledger and the same mission the binding names (DEC-MIS-15).
    let mismatch = crate::mission::ledger::check_bound(
        missions.as_ref(),
        &b.mission_id,
        &b.mission_ledger,
        &b.mission_root,
    )
    .map_err(|e| match e {
        crate::mission::durable::Error::Rejected(r) => InvokeError::MissionRejected(r),
        e => unavailable(e.to_string()),
    })?;
    if let Some(why) = mismatch {
        return Err(unavailable(why));
    }
    let state = missions.state(&b.mission_id).map_err(|e| match e {
        crate::mission::durable::Error::Rejected(r) => InvokeError::MissionRejected(r),
        e => unavailable(e.to_string()),
    })?;
    pairing.subject = state
        .grants
        .get(&b.mission_grant)
        .map(|g| g.subject.clone())
        .unwrap_or_default();
    pairing.standalone = Some(std::rc::Rc::new(crate::mission::pairing::Standalone {
        missions,
        mission_id: b.mission_id.clone(),
        link: crate::ledger::paired::StoreLink::new(store_id.get(store)?),
        implicit_clock: !clock.is_fixed(),
    }));
    Ok(Some(pairing))
}

/// The store's id for standalone pairings, read (or written, for a store never paired) once
/// per call: the limits and the mission pairing of one invocation name the store alike, and an
/// id this call wrote is removed again when the ledger cleanly refuses its first effect
/// (DEC-MIS-19).
#[derive(Default)]
struct StoreId {
    id: Option<String>,
    created: Option<Object>,
}

impl StoreId {
    fn get(&mut self, store: &mut Store) -> Result<String, InvokeError> {
        if let Some(id) = &self.id {
            return Ok(id.clone());
        }
        let (id, created) = crate::store::markers::ensure_store_id_new(store)?;
        self.id = Some(id.clone());
        self.created = created;
        Ok(id)
    }
}

/// The ledger clock for pairing: the wall clock in ms, or `now * 1000` (the call's own
/// instant) when the clock is fixed.
fn ledger_now_ms(clock: crate::clock::Clock, now: i64) -> u128 {
    if clock.is_fixed() {
        (now.max(0) as u128) * 1000
    } else {
        clock.now_ms()
    }
}
