//! Commit = compare-and-append (store-format.md §12), and the REST/CLI commit body.

use base64::Engine;
use rusqlite::Connection;
use serde::{Deserialize, Serialize};

use crate::encoding::HashRef;

use super::journal::{self, CommitIntent, Kind};
use super::{
    head_in, put_object, rows, Error, Header, LogEntry, Object, ObjectMeta, Store, WorldRow,
};

/// Largest commit body accepted, in bytes (the `/v1/commit` bound; surfaces.md §4).
pub const MAX_BODY: usize = 8_388_608;

/// One object of a commit body: metadata plus base64 payload.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BodyObject {
    /// Claimed sha256 of the payload.
    pub hash: String,
    /// Any well-formed ref.
    pub interface_hash: String,
    /// Semantic id.
    pub semantic_id: String,
    /// Provenance text.
    pub provenance: String,
    /// Standard base64 with padding.
    pub payload: String,
}

/// The `POST /v1/commit` JSON body, as the reference defines it (store-format.md §12).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommitBody {
    /// Optional `rest:<id>` for receipts and idempotent resends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invocation_id: Option<String>,
    /// The head the caller observed; `""` only for genesis.
    pub observed_head: String,
    /// Objects to store with this entry.
    pub objects: Vec<BodyObject>,
    /// The next world row.
    pub next_world: WorldRow,
    /// The new log entry.
    pub entry: LogEntry,
}

/// Why a commit body could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// Over [`MAX_BODY`].
    #[error("commit body is over {MAX_BODY} bytes")]
    TooLarge,
    /// Empty input.
    #[error("commit body is empty")]
    Empty,
    /// Not UTF-8.
    #[error("commit body is not valid UTF-8")]
    NotUtf8,
    /// Not the commit JSON (syntax, unknown field, missing field, trailing value).
    #[error("commit body is not valid commit JSON: {0}")]
    Json(String),
    /// A payload is not base64.
    #[error("object {index} payload is not standard base64: {reason}")]
    Base64 {
        /// Object index in the body.
        index: usize,
        /// Decoder message.
        reason: String,
    },
    /// `invocationId` outside the `rest:` namespace.
    #[error("invocationId {0:?} must be rest:<id>")]
    Namespace(String),
}

/// A commit whose refs all parsed and whose payloads all verified (steps 1–3 done).
#[derive(Clone, Debug)]
pub struct Commit {
    /// `rest:<id>` or a coordinator id; `None` for none.
    pub invocation_id: Option<String>,
    /// The observed head text (`""` = none).
    pub observed_head: String,
    /// Objects with verified payloads.
    pub objects: Vec<Object>,
    /// Next world row.
    pub next_world: WorldRow,
    /// New log entry.
    pub entry: LogEntry,
}

/// What a commit did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Landed {
    /// The new selected head.
    pub selected_head: String,
    /// The entry index written (or found, for an idempotent resend).
    pub entry_index: i64,
    /// The entry hash.
    pub entry_hash: String,
    /// True when this was an idempotent resend that wrote nothing.
    pub replayed: bool,
}

/// Parse a commit body: size bound first (nothing is parsed twice), then UTF-8 and strict JSON.
pub fn parse_body(bytes: &[u8]) -> Result<CommitBody, BodyError> {
    if bytes.len() > MAX_BODY {
        return Err(BodyError::TooLarge);
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(BodyError::Empty);
    }
    let text = std::str::from_utf8(bytes).map_err(|_| BodyError::NotUtf8)?;
    let body: CommitBody =
        serde_json::from_str(text).map_err(|e| BodyError::Json(e.to_string()))?;
    if let Some(id) = &body.invocation_id {
        if !id.starts_with("rest:") || id.len() == 5 {
            return Err(BodyError::Namespace(id.clone()));
        }
    }
    Ok(body)
}

fn check_ref(field: &str, text: &str) -> Result<(), Error> {
    HashRef::parse(text)
        .map(|_| ())
        .map_err(|e| Error::InvalidRef {
            op: "Commit",
            field: field.to_string(),
            text: text.to_string(),
            reason: e.to_string(),
        })
}

impl CommitBody {
    /// Decode payloads, then run steps 1–3 of store-format.md §12 in order: ref parsing,
    /// per-object ref parsing, per-object payload re-hash. No transaction is open yet.
    pub fn validate(self) -> Result<Commit, ValidateError> {
        let mut objects = Vec::with_capacity(self.objects.len());
        for (index, o) in self.objects.into_iter().enumerate() {
            let payload = base64::engine::general_purpose::STANDARD
                .decode(o.payload.as_bytes())
                .map_err(|e| {
                    ValidateError::Body(BodyError::Base64 {
                        index,
                        reason: e.to_string(),
                    })
                })?;
            objects.push(Object {
                meta: ObjectMeta {
                    hash: o.hash,
                    interface_hash: o.interface_hash,
                    semantic_id: o.semantic_id,
                    provenance: o.provenance,
                },
                payload,
            });
        }
        let c = Commit {
            invocation_id: self.invocation_id,
            observed_head: self.observed_head,
            objects,
            next_world: self.next_world,
            entry: self.entry,
        };
        c.check().map_err(ValidateError::Store)?;
        Ok(c)
    }
}

/// A body that decoded but failed validation.
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    /// Body-level problem (base64).
    #[error(transparent)]
    Body(#[from] BodyError),
    /// Ref or hash problem.
    #[error(transparent)]
    Store(#[from] Error),
}

impl Commit {
    /// Steps 1–3: refs parse in the spec's order, object refs parse, payloads re-hash.
    pub fn check(&self) -> Result<(), Error> {
        let h = &self.entry.header;
        check_ref("Entry.Header.TransitionFn", &h.transition_fn)?;
        check_ref("Entry.Header.Interpreter", &h.interpreter)?;
        check_ref("Entry.Header.PrevEntryHash", &h.prev_entry_hash)?;
        check_ref("Entry.EntryHash", &self.entry.entry_hash)?;
        check_ref("Entry.TransitionRef", &self.entry.transition_ref)?;
        check_ref("NextWorld.StateRoot", &self.next_world.state_root)?;
        check_ref("NextWorld.LogHead", &self.next_world.log_head)?;
        check_ref("NextWorld.Ref", &self.next_world.reference)?;
        for o in &self.objects {
            check_ref("Objects.Hash", &o.meta.hash)?;
            check_ref("Objects.InterfaceHash", &o.meta.interface_hash)?;
        }
        for o in &self.objects {
            let computed = HashRef::of(&o.payload).to_string();
            if computed != o.meta.hash {
                return Err(Error::PayloadMismatch {
                    hash: o.meta.hash.clone(),
                    computed,
                });
            }
        }
        Ok(())
    }

    /// The commit intent this commit binds to, at `logical_time`.
    pub fn intent(&self, invocation_id: &str, logical_time: i64) -> CommitIntent {
        CommitIntent {
            invocation_id: invocation_id.to_string(),
            world_ref: self.next_world.reference.clone(),
            entry_hash: self.entry.entry_hash.clone(),
            observed_head: self.observed_head.clone(),
            prev_entry_hash: self.entry.header.prev_entry_hash.clone(),
            transition_fn: self.entry.header.transition_fn.clone(),
            transition_ref: self.entry.transition_ref.clone(),
            interpreter: self.entry.header.interpreter.clone(),
            logical_time,
        }
    }
}

fn compare_intent(want: &CommitIntent, got: &CommitIntent) -> Result<(), Error> {
    let pairs: [(&'static str, &str, &str); 8] = [
        ("InvocationID", &want.invocation_id, &got.invocation_id),
        ("WorldRef", &want.world_ref, &got.world_ref),
        ("EntryHash", &want.entry_hash, &got.entry_hash),
        ("ObservedHead", &want.observed_head, &got.observed_head),
        ("PrevEntryHash", &want.prev_entry_hash, &got.prev_entry_hash),
        ("TransitionFn", &want.transition_fn, &got.transition_fn),
        ("TransitionRef", &want.transition_ref, &got.transition_ref),
        ("Interpreter", &want.interpreter, &got.interpreter),
    ];
    for (field, w, g) in pairs {
        if w != g {
            return Err(Error::InvocationMismatch {
                field,
                want: w.to_string(),
                got: g.to_string(),
            });
        }
    }
    Ok(())
}

/// Steps 5–12 inside an open `BEGIN IMMEDIATE` transaction `tx`. With an invocation id, an
/// absent intent is written first (DEC-STORE-2: intent and commit share this transaction, so a
/// refusal rolls both back); an existing intent must match on the eight binding fields, and an
/// existing outcome makes this an idempotent resend that writes nothing.
///
/// `create_intent`: whether a missing intent may be created here (local `rest:` commits);
/// coordinator commits append their intent beforehand and pass `false`.
pub fn apply(
    tx: &Connection,
    c: &Commit,
    logical_time: i64,
    create_intent: bool,
) -> Result<Landed, Error> {
    apply_with(tx, c, logical_time, create_intent, Rules::Trusted)
}

/// Which write rules [`apply_with`] enforces on top of store-format.md §12.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rules {
    /// `world`'s own writers (coordinator, `world genesis`): the values are derived, not given.
    Trusted,
    /// A client body (`world commit`, `POST /v1/commit`): §8.4a applies (DEC-STORE-5).
    Client,
}

/// [`apply`] with the client-commit rules of store-format.md §8.4a when `rules` is
/// [`Rules::Client`]: the commit must extend the observed chain, may not claim a reserved
/// `writtenBy` namespace, and a resent invocation id must carry the commit already recorded.
///
/// # Errors
/// Everything [`apply`] returns, plus [`Error::ClientCommitRefused`] and
/// [`Error::InvocationReused`]. The caller rolls the transaction back on any error.
pub fn apply_with(
    tx: &Connection,
    c: &Commit,
    logical_time: i64,
    create_intent: bool,
    rules: Rules,
) -> Result<Landed, Error> {
    let mut intent_for_outcome = None;
    if let Some(id) = &c.invocation_id {
        let mine = c.intent(id, logical_time);
        match journal::row(tx, id, Kind::Intent)? {
            None if create_intent => {
                // A commit's time never goes backwards in the log (DEC-TRUST3-1): a clock
                // stepped back records the last commit's time again.
                let floor = journal::latest_commit_time(tx)?.unwrap_or(i64::MIN);
                let mine = c.intent(id, logical_time.max(floor));
                journal::append(tx, Kind::Intent, id, journal::COMMIT_INTENT, mine.payload())?;
                intent_for_outcome = Some(mine);
            }
            None => {
                return Err(Error::InvocationMismatch {
                    field: "InvocationID",
                    want: "durable intent".into(),
                    got: id.clone(),
                })
            }
            Some(obj_ref) => {
                let obj = super::object_in(tx, &obj_ref)?.ok_or_else(|| Error::Corrupt {
                    what: "journal intent".into(),
                    detail: format!("object {obj_ref} missing"),
                })?;
                let stored = CommitIntent::decode(&obj.payload)?;
                compare_intent(&stored, &mine)?;
                if journal::row(tx, id, Kind::Outcome)?.is_some() {
                    if rules == Rules::Client {
                        super::client::same_as_recorded(tx, id, c)?;
                    }
                    return Ok(Landed {
                        selected_head: c.next_world.reference.clone(),
                        entry_index: c.entry.header.entry_index,
                        entry_hash: c.entry.entry_hash.clone(),
                        replayed: true,
                    });
                }
                intent_for_outcome = Some(stored);
            }
        }
    }
    let selected = head_in(tx)?;
    let stale = match &selected {
        Some(sel) => sel != &c.observed_head,
        None => !c.observed_head.is_empty(),
    };
    if stale {
        return Err(Error::Conflict {
            observed: c.observed_head.clone(),
            selected: selected.unwrap_or_default(),
        });
    }
    if rules == Rules::Client {
        super::client::extends_chain(tx, c)?;
    }
    for o in &c.objects {
        put_object(tx, o)?;
    }
    let w = &c.next_world;
    rows::insert_world(tx, w)?;
    let h: &Header = &c.entry.header;
    rows::insert_log_entry(tx, &c.entry)?;
    for o in &c.objects {
        rows::add_commit_object(tx, &o.meta.hash, h.entry_index)?;
    }
    rows::set_selected_head(tx, &w.reference)?;
    if let (Some(id), Some(intent)) = (&c.invocation_id, intent_for_outcome) {
        journal::append(
            tx,
            Kind::Outcome,
            id,
            journal::COMMIT_OUTCOME,
            intent.outcome_payload(),
        )?;
    }
    // The episode index follows every commit, in its transaction (DEC-PERF-8).
    super::episodes::catch_up(tx)?;
    // So does `world log`'s view: entries other writers appended, a bounded stretch per
    // commit (DEC-PERF-11).
    super::logview::table::catch_up(tx, Some(super::logview::table::CATCH_UP))?;
    Ok(Landed {
        selected_head: w.reference.clone(),
        entry_index: h.entry_index,
        entry_hash: c.entry.entry_hash.clone(),
        replayed: false,
    })
}

impl Store {
    /// Compare-and-append one validated *client* commit (`world commit`, `POST /v1/commit`) in
    /// one `BEGIN IMMEDIATE` transaction under the §8.4a rules ([`Rules::Client`]); the head
    /// is read inside it. `logical_time` is Unix seconds (used for a new `rest:` intent).
    ///
    /// # Errors
    /// [`Error::Conflict`], [`Error::InvocationMismatch`], [`Error::DuplicateEntry`],
    /// [`Error::PayloadMismatch`], [`Error::ClientCommitRefused`], [`Error::InvocationReused`],
    /// SQLite errors. Any error rolls the whole transaction back.
    pub fn commit(&mut self, c: &Commit, logical_time: i64) -> Result<Landed, Error> {
        c.check()?;
        let tx = self.immediate()?;
        let landed = apply_with(&tx, c, logical_time, true, Rules::Client)?;
        tx.commit()?;
        Ok(landed)
    }

    /// Apply many commits, each in its own transaction, stopping at the first failure.
    /// Returns what landed before it and the failure, if any.
    pub fn commit_many(
        &mut self,
        commits: impl IntoIterator<Item = Commit>,
        logical_time: i64,
    ) -> (Vec<Landed>, Option<Error>) {
        let mut landed = Vec::new();
        for c in commits {
            match self.commit(&c, logical_time) {
                Ok(l) => landed.push(l),
                Err(e) => return (landed, Some(e)),
            }
        }
        (landed, None)
    }
}
