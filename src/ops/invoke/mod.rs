//! One invocation: validate, admit, bind, receipt pre-check, load the source, plan, execute,
//! finish, commit (transitions.md §9–§11, seed 003). Surface-agnostic: `world invoke`, REST,
//! MCP and A2A all call [`invoke`].
//!
//! One file per concern: `call` (what a call is, the host it runs on, what it returns and what
//! an observer hears), `admit` (steps 1–3 and 5: the call, the session through
//! [`crate::ops::actor`], the transition, its source; the input schema), `precheck` (step 4 and
//! 4b: the receipt, the started marker, the recorded answer of a resent id), `handlers` (step
//! 7: the episode's handlers), `pairings` (the limits and mission pairings the broker's pairing
//! loop runs on), `execute` (the pure run, or plan, effects through the broker, finish),
//! `commit` (the log entry) and `error` ([`InvokeError`] and [`error_data`], its JSON for MCP
//! and A2A).

mod admit;
mod call;
mod commit;
mod error;
mod execute;
mod handlers;
mod pairings;
mod precheck;

use std::time::{Duration, Instant};

use crate::authority::session::Session;
use crate::store::records::{self, InvocationRecord};
use crate::store::{head_in, Object, Store};
use crate::transitions::registry::Descriptor;

pub use admit::{valid_task, validate_input, visible, SCHEMA_FAILURE};
pub use call::{Call, Committed, Host, HostConfig, Observer, Step, Surface};
pub use error::{error_data, InvokeError};
pub use handlers::episode_handlers;
pub use precheck::{receipt, started_marker};

use admit::{admit, load_source, validate_call};
use call::observe;
use execute::{run_effectful, run_pure};
use handlers::check_handlers;
use precheck::precheck;

/// Whole-invocation deadline (20 s); defined with the plan laws replay shares.
pub use crate::plan::INVOCATION;
/// The largest input and output, in bytes once Go-encoded (1 MiB, R1/R12); a plan law.
pub use crate::plan::MAX_IO;
/// Plan and finish phases (2 s each).
pub const PHASE: Duration = Duration::from_secs(2);
/// Post-effect tail, detached from the caller (4 s).
pub const TAIL: Duration = Duration::from_secs(4);
/// `world/invocation-started/v1`: written before an effectful call's first effect so a resent
/// id can never run a handler twice (DEC-COORD-3).
pub const STARTED: &str = "world/invocation-started/v1";

/// Run one invocation to a commit (or a typed failure) on a store opened for writing.
///
/// The steps of transitions.md §9–§11, each its own function: `admit::validate_call` (1),
/// `admit::admit` (2–3), `precheck::precheck` (4, 4b), `admit::load_source` (5), the
/// observed head (6), `handlers::check_handlers` and the schema (7), then
/// `execute::run_pure` (v1) or `execute::run_effectful` (v2: plan, the pairings, the
/// effects through the broker, the finish body, compose, `commit::commit_invocation`).
pub fn invoke(store: &mut Store, call: &Call, host: &Host<'_>) -> Result<Committed, InvokeError> {
    let deadline = Instant::now() + INVOCATION;
    // The call's one instant (Unix seconds): every step below reads this, never the clock.
    let now = call.clock.now_unix();
    let (task, input) = validate_call(call)?;
    let (sess, desc) = admit(store, call, now, host.unattested)?;
    let invocation_id = format!("{}:{}:{}", call.surface.name(), sess.episode, task);
    observe(host, || Step::Admitted {
        invocation_id: invocation_id.clone(),
        transition: desc.id.clone(),
    });
    let surface = format!("coordinator:{}", call.surface.name());
    let input_obj = Object::new(records::INVOCATION_INPUT, &surface, input.clone());
    if let Some(done) = precheck(store, &invocation_id, &desc, &input_obj, &sess.episode)? {
        return Ok(done);
    }
    let (source, label) = load_source(store, &desc)?;
    // 6. World: the selected world read here is the commit's observedHead (§10), so a head
    // moved by another writer before the commit is a conflict (R14), never silently absorbed.
    let observed = head_in(store.conn())?.ok_or(InvokeError::WorldAbsent)?;
    // 7. Handlers for every declared effect, the arguments, the pinned interpreter.
    let (hctx, handlers) = episode_handlers(store, &sess.episode, host)?;
    check_handlers(&desc, &hctx, &handlers)?;
    validate_input(&desc.input_schema, &call.args)?;
    let interp = host.interpreters.resolve(&desc.interpreter).map_err(|e| {
        if e.integrity {
            InvokeError::Integrity(e.message)
        } else {
            InvokeError::Execution(e.message)
        }
    })?;
    let run = Prepared {
        sess,
        desc,
        invocation_id,
        surface,
        input,
        input_obj,
        source: source.payload,
        label,
        observed,
        interp,
        now,
        deadline,
    };
    let done = if run.desc.declared_effects.is_empty() {
        run_pure(store, run)
    } else {
        run_effectful(store, run, call, host, &hctx, &handlers)
    }?;
    observe(host, || Step::Committed {
        entry_index: done.entry_index,
        world_ref: done.world_ref.clone(),
    });
    Ok(done)
}

/// Everything an admitted call has gathered before it runs.
struct Prepared {
    sess: Session,
    desc: Descriptor,
    /// `<surface>:<episode>:<task>`.
    invocation_id: String,
    /// `coordinator:<surface>`, the `writtenBy` of every object the call writes.
    surface: String,
    /// The Go-encoded arguments.
    input: Vec<u8>,
    input_obj: Object,
    /// The re-hashed transition source.
    source: Vec<u8>,
    /// The file the source was published from, where publish recorded it (for messages).
    label: Option<String>,
    /// The selected world ref read before running: the commit's `observedHead`.
    observed: String,
    interp: Box<dyn crate::interp::Interpreter>,
    /// The call's instant, Unix seconds.
    now: i64,
    /// The whole-invocation deadline.
    deadline: Instant,
}

impl Prepared {
    /// [`InvokeError::EffectsUnrecorded`] for a failure after `records` were written.
    fn unrecorded(&self, records: &[String], cause: String) -> InvokeError {
        InvokeError::EffectsUnrecorded {
            invocation_id: self.invocation_id.clone(),
            records: records.to_vec(),
            intents: vec![],
            cause,
        }
    }

    /// The invocation record of this call, given its output and (v2) plan and effect records.
    fn record(
        &self,
        output: &Object,
        plan: Option<String>,
        effects: Option<Vec<String>>,
    ) -> InvocationRecord {
        InvocationRecord {
            invocation_id: self.invocation_id.clone(),
            episode_id: self.sess.episode.clone(),
            skill_id: self.desc.id.clone(),
            transition_fn: self.desc.transition_fn.to_string(),
            interpreter: self.desc.interpreter.to_string(),
            semantics_epoch: self.desc.semantics_epoch,
            input: self.input_obj.meta.hash.clone(),
            output: output.meta.hash.clone(),
            plan,
            effects,
        }
    }
}
