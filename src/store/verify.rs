//! `world verify`: whole-store validity, chain and connectivity checks (store-format.md §13.1).

use std::collections::BTreeMap;

use rusqlite::OptionalExtension;
use serde::Serialize;

use crate::encoding::HashRef;

use super::entry::{entry_hash, is_coordinator, world_ref};
use super::records::{
    EffectRecord, InvocationRecord, APPROVAL_DECISION, EFFECT_RECORD, INVOCATION_RECORD_V1,
    INVOCATION_RECORD_V2,
};
use super::{journal, schema, Error, LogEntry, Store, WorldRow};

mod entry;
mod evidence;
pub mod links;

/// One failure or warning, with where it was found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// Category (`storage`, `schema`, `object_hash_mismatch`, `log_gap`, `bad_ref`,
    /// `entry_hash_mismatch`, `prev_mismatch`, `world_mismatch`, `dangling_ref`,
    /// `record_inconsistent`, `orphan_outcome`, `head_mismatch`, `indeterminate`, `not_recomputed`,
    /// `bundle_gap` — a warning in an episode bundle; `spend_tally` — a persisted spend tally the
    /// broker would use differs from the full fold; `spend_tally_stale` — a warning: one it
    /// would rebuild; `episode_index` — the derived episode index of effectful records
    /// (`world_records_by_episode`) readers would use differs from its recomputation;
    /// `episode_index_stale` — a warning: one the next commit rebuilds; `log_view` — a
    /// `world_log_view` row `world log` would print differs from its entry's objects;
    /// `log_view_stale` — a warning: a row whose seal fails, never used; `merkle` — a
    /// `world_merkle` node proofs would use differs from the log's tree; `merkle_stale` — a
    /// warning: a tree table not used; `checkpoint` — the log does not extend a checkpoint
    /// (stored, or given with `--checkpoint`); `checkpoint_signature` — a checkpoint that
    /// does not verify; `bundle_proof` — a bundle entry not proven in its signed log; issue 13: `journal_mismatch`, `journal_gap`, `effect_gap`,
    /// `session_mismatch`, `marker_missing`; `ledger_chain` — the limits
    /// ledger's event chain is broken; `ledger_state` — a `limits_*` table differs from the
    /// fold of that chain).
    pub category: &'static str,
    /// Log index, when the finding is about an entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<i64>,
    /// Ref or id involved.
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// Why.
    pub reason: String,
}

/// The result of a verification run.
#[derive(Clone, Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Number of log entries.
    pub entries: i64,
    /// Lowest and highest index covered.
    pub range: Option<(i64, i64)>,
    /// Selected head.
    pub head: Option<String>,
    /// Objects re-hashed.
    pub objects: u64,
    /// Payload bytes re-hashed.
    pub payload_bytes: u64,
    /// Coordinator entries whose hashes were recomputed.
    pub recomputed: u64,
    /// Client entries reported as "not recomputed".
    pub not_recomputed: u64,
    /// First failure per category.
    pub failures: Vec<Finding>,
    /// Failure counts per category.
    pub failure_counts: BTreeMap<&'static str, u64>,
    /// Warnings (first per category) — never change the exit code.
    pub warnings: Vec<Finding>,
    /// Warning counts per category.
    pub warning_counts: BTreeMap<&'static str, u64>,
    /// Whether `--full` ran `integrity_check` instead of `quick_check`.
    pub full: bool,
}

impl Report {
    /// The report for a store that cannot even be opened for checking because its v4 schema is
    /// damaged (`SchemaIntegrityError`, e.g. `commit_objects` missing): one `schema` failure
    /// naming it, so `verify` answers with a finding (exit 3) rather than an open error.
    pub fn unopenable(reason: impl Into<String>) -> Report {
        let mut r = Report::default();
        r.fail("schema", None, None, reason.into());
        r
    }

    /// True when no failure was found.
    pub fn ok(&self) -> bool {
        self.failures.is_empty()
    }

    /// Count a failure of `category`; the first of each category is kept with where it was
    /// found (`index`, `reference`) and why. Any failure makes the exit code 3.
    pub fn fail(
        &mut self,
        category: &'static str,
        index: Option<i64>,
        reference: Option<String>,
        reason: impl Into<String>,
    ) {
        let n = self.failure_counts.entry(category).or_insert(0);
        *n += 1;
        if *n == 1 {
            self.failures.push(Finding {
                category,
                index,
                reference,
                reason: reason.into(),
            });
        }
    }

    /// [`Report::fail`] for a finding that belongs before every other (the storage check,
    /// which runs next to the others).
    fn fail_first(&mut self, category: &'static str, reason: impl Into<String>) {
        let n = self.failure_counts.entry(category).or_insert(0);
        *n += 1;
        if *n == 1 {
            self.failures.insert(
                0,
                Finding {
                    category,
                    index: None,
                    reference: None,
                    reason: reason.into(),
                },
            );
        }
    }

    /// Count a warning of `category` (the first of each kept, as [`Report::fail`]); warnings
    /// never change the exit code.
    pub fn warn(
        &mut self,
        category: &'static str,
        index: Option<i64>,
        reference: Option<String>,
        reason: impl Into<String>,
    ) {
        let n = self.warning_counts.entry(category).or_insert(0);
        *n += 1;
        if *n == 1 {
            self.warnings.push(Finding {
                category,
                index,
                reference,
                reason: reason.into(),
            });
        }
    }
}

/// Progress callback: `(bytes_done, bytes_total)` while objects are re-hashed.
pub type Progress<'a> = &'a mut dyn FnMut(u64, u64);

/// What the log walk ([`Checks::log`]) learnt that a later check needs.
#[derive(Clone, Copy, Debug, Default)]
pub struct LogWalk {
    /// The highest log index seen (`None` for an empty log).
    pub max: Option<i64>,
}

/// One `approval_claims` row with what `verify` needs to judge it (authority-and-broker.md
/// §11): the claimed decision's object (`None` when it is missing) and whether the request
/// object and the claimant's effect intent exist.
#[derive(Clone, Debug)]
pub struct ClaimCheck {
    /// `approval_ref`: the decision the claim consumes.
    pub decision: String,
    /// `request_ref`: the approval request.
    pub request: String,
    /// `invocation_id`: the effect that claimed it.
    pub intent: String,
    /// The decision object's semantic id, when the object exists.
    pub semantic: Option<String>,
    /// The decision object's payload, when the object exists.
    pub payload: Option<Vec<u8>>,
    has_request: bool,
    has_intent: bool,
}

impl ClaimCheck {
    /// Whether the decision is in `world`'s own format (`world/approval-decision/v1`); foreign
    /// decision formats (the reference's, marked \[U\] in the spec) are only checked for existence.
    pub fn is_world_decision(&self) -> bool {
        self.semantic.as_deref() == Some(APPROVAL_DECISION)
    }
}

/// One `session_credentials` row that has a `world/session-mint/v1` record, for the
/// authority's comparison (issue 13 §3).
#[derive(Clone, Debug)]
pub struct SessionCheck {
    /// `credential_id`.
    pub credential_id: String,
    /// The mint record's JSON.
    pub record: serde_json::Value,
    /// The row's `episode_id`.
    pub episode: String,
    /// The row's `grants_json`.
    pub grants_json: String,
    /// The row's `expires_at` (Unix seconds).
    pub expires_at: i64,
}

/// The store's own checks of store-format.md §13.1, one phase at a time, over a read-only
/// store. `ops::verify` runs them in the order of §13.1 with the other modules' cross-checks
/// (sessions, approvals, the spend tally, the limits ledger, missions, published sources)
/// between them, all adding to one [`Report`]. Obtained inside [`Store::verify_with`].
pub struct Checks<'s> {
    store: &'s Store,
}

impl Store {
    /// Run SQLite's own storage check (`quick_check`, or `integrity_check` when `full`) beside
    /// `rest`, which runs every other check through [`Checks`] (store-format.md §13.1).
    ///
    /// A damaged SQLite image (pages SQLite itself cannot read) ends the checks early: the
    /// report then carries a `storage` failure naming SQLite's error instead of this
    /// returning an error, so `verify` still exits 3 with a report. The storage finding, when
    /// there is one, is always the first failure.
    ///
    /// # Errors
    /// SQLite errors other than corruption, and undecodable rows ([`Error::Corrupt`]), from the
    /// storage check or from `rest`.
    pub fn verify_with(
        &self,
        full: bool,
        rest: impl FnOnce(&Checks<'_>, &mut Report) -> Result<(), Error>,
    ) -> Result<Report, Error> {
        let mut rep = Report {
            full,
            ..Report::default()
        };
        match self.verify_into(&mut rep, rest) {
            Ok(()) => Ok(rep),
            Err(Error::Sqlite(rusqlite::Error::SqliteFailure(f, msg)))
                if matches!(
                    f.code,
                    rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase
                ) =>
            {
                rep.fail(
                    "storage",
                    None,
                    None,
                    format!(
                        "checks stopped: SQLite cannot read the file: {}",
                        msg.unwrap_or_else(|| f.to_string())
                    ),
                );
                Ok(rep)
            }
            Err(e) => Err(e),
        }
    }

    fn verify_into(
        &self,
        rep: &mut Report,
        rest: impl FnOnce(&Checks<'_>, &mut Report) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let conn = self.conn();
        let checks = Checks { store: self };
        // 1. storage: SQLite's own check visits every page, overflow pages included. On a
        // file it runs on its own read-only connection in a second thread, next to the checks
        // below and the object pass (which reads the payloads on every core), instead of
        // before them (issue 19 item 5). That connection reads through SQLite's memory map
        // (DEC-PERF-13), so the check's walk of the overflow chains copies no page. Its
        // finding is still reported first, and its error still ends the run.
        let pragma = if rep.full {
            "PRAGMA integrity_check"
        } else {
            "PRAGMA quick_check"
        };
        let storage = |c: &rusqlite::Connection| -> Result<Vec<String>, Error> {
            let mut stmt = c.prepare(pragma)?;
            let lines = stmt
                .query_map([], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            Ok(lines)
        };
        let path = conn
            .path()
            .filter(|p| !p.is_empty())
            .map(std::path::PathBuf::from);
        let Some(path) = path else {
            let lines = storage(conn)?;
            if lines != ["ok"] {
                rep.fail("storage", None, None, lines.join("; "));
            }
            return rest(&checks, rep);
        };
        std::thread::scope(|s| {
            let bg = s.spawn(|| storage(&super::verify_objects::open_reader(&path)?));
            let rest = rest(&checks, rep);
            let lines = bg.join().unwrap_or_else(|_| {
                Err(Error::Corrupt {
                    what: "verify".into(),
                    detail: "the storage check stopped without a result".into(),
                })
            })?;
            if lines != ["ok"] {
                rep.fail_first("storage", lines.join("; "));
            }
            rest
        })
    }
}

impl Checks<'_> {
    /// Check 2, schema: the v4 tables and their shapes (`schema`). Returns false when a table is
    /// missing: the remaining checks read every table, so they must not run (the report says
    /// so).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn schema(&self, rep: &mut Report) -> Result<bool, Error> {
        let conn = self.store.conn();
        for p in schema::problems(conn)? {
            rep.fail("schema", None, None, p);
        }
        if !schema::missing_tables(conn)?.is_empty() {
            // The remaining checks read every table; a missing one is the finding.
            rep.fail(
                "schema",
                None,
                None,
                "checks stopped: a v4 table is missing, so the log, journal and records were not read",
            );
            return Ok(false);
        }
        Ok(true)
    }

    /// Schema objects (`schema.objects`): `world`'s indexes and triggers on the tables the
    /// store holds, `extra_ddl` being the ledger's and the missions' DDL
    /// ([`schema::object_problems`]).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn schema_objects(&self, rep: &mut Report, extra_ddl: &[&str]) -> Result<(), Error> {
        for p in schema::object_problems(self.store.conn(), extra_ddl)? {
            rep.fail("schema", None, None, p);
        }
        Ok(())
    }

    /// `entry.transition_fn` and `entry.commit_objects` ([`links::check_entries`]). Returns
    /// the distinct interpreters coordinator entries pin, each with the first index pinning
    /// it, for the caller to resolve (`entry.interpreter`).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn entry_links(&self, rep: &mut Report) -> Result<Vec<(String, i64)>, Error> {
        links::check_entries(self.store.conn(), rep)
    }

    /// `journal.payload_row` and `journal.outcome_strict` ([`links::check_journal`]).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn journal_links(&self, rep: &mut Report) -> Result<(), Error> {
        links::check_journal(self.store.conn(), rep)
    }

    /// `session.mint`: credential rows without a mint record, `(credential_id, episode)`.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn unattested_sessions(&self) -> Result<Vec<(String, String)>, Error> {
        links::unattested_sessions(self.store.conn())
    }

    /// The store's file path (`None` in memory): where its interpreter archive is.
    pub fn path(&self) -> &std::path::Path {
        self.store.path()
    }

    /// Check 3, objects, re-hashed on every core (`object_hash_mismatch`, `bad_ref`).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn objects(&self, rep: &mut Report, progress: Progress<'_>) -> Result<(), Error> {
        let conn = self.store.conn();
        let pass =
            super::verify_objects::hash_objects(conn, super::verify_objects::workers(), progress)?;
        rep.objects = pass.objects;
        rep.payload_bytes = pass.payload_bytes;
        for (hash, computed) in pass.mismatches {
            rep.fail(
                "object_hash_mismatch",
                None,
                Some(hash),
                format!("payload hashes to {computed}"),
            );
        }
        for (hash, iface) in pass.bad_interfaces {
            rep.fail(
                "bad_ref",
                None,
                Some(hash),
                format!("interfaceHash {iface:?} does not parse"),
            );
        }
        Ok(())
    }

    /// 4–8. the log: indexes, entry hashes, links and world rows of every entry (a bundle's
    /// gaps are warnings), then the world rows' log heads, `commit_objects` membership and
    /// registry heads (`log_gap`, `bundle_gap`, `entry_hash_mismatch`, `prev_mismatch`,
    /// `world_mismatch`, `dangling_ref`, `record_inconsistent`, `not_recomputed`).
    ///
    /// # Errors
    /// SQLite errors, undecodable rows.
    pub fn log(&self, rep: &mut Report) -> Result<LogWalk, Error> {
        let (s, conn) = (self.store, self.store.conn());
        // 4–8. the log. An episode bundle (`world export-episode`) holds a subset of a log:
        // its index gaps and links to absent entries are warnings (`bundle_gap`).
        let marker = super::registry_head_in(conn, "world/episode-bundle/v1")?;
        let bundle = marker.is_some();
        // The marker lists the entries the export wrote; gaps outside that list are the
        // bundle's design, not findings (a fresh bundle verifies clean, issue 16 §11).
        let mut declared: Option<std::collections::BTreeSet<i64>> = match &marker {
            Some(m) => super::object_in(conn, m)?
                .and_then(|o| serde_json::from_slice::<serde_json::Value>(&o.payload).ok())
                .and_then(|v| {
                    v.get("entries")?
                        .as_array()?
                        .iter()
                        .map(|x| x.as_i64())
                        .collect::<Option<_>>()
                }),
            None => None,
        };
        rep.head = s.head()?;
        // Counted during the walk below (which reads every entry anyway), not by `count(*)`.
        rep.entries = 0;
        let mut max: Option<i64> = None;
        let mut prev: Option<LogEntry> = None;
        let mut expected = 0i64;
        let mut first = None;
        s.for_each_log_with_world(|e, world| {
            let idx = e.header.entry_index;
            first.get_or_insert(idx);
            rep.entries += 1;
            max = max.max(Some(idx));
            let by_design = declared
                .as_ref()
                .is_some_and(|d| d.contains(&idx) && (expected..idx).all(|i| !d.contains(&i)));
            if idx != expected && bundle && by_design {
                // The export left these entries out on purpose.
            } else if idx != expected && bundle {
                rep.warn(
                    "bundle_gap",
                    Some(idx),
                    None,
                    format!("episode bundle: expected index {expected}, found {idx} (the entries in between are not part of the bundle)"),
                );
            } else if idx != expected {
                rep.fail(
                    "log_gap",
                    Some(idx),
                    None,
                    format!("expected index {expected}, found {idx}"),
                );
            }
            expected = idx + 1;
            let pred_omitted = declared
                .as_ref()
                .is_some_and(|d| d.contains(&idx) && !d.contains(&(idx - 1)));
            if let Some(d) = declared.as_mut() {
                d.remove(&idx);
            }
            s.check_entry(rep, &e, world.as_ref(), prev.as_ref(), bundle, pred_omitted)?;
            prev = Some(e);
            Ok(())
        })?;
        // Entries the marker lists but the bundle lacks.
        for i in declared.iter().flatten() {
            rep.warn(
                "bundle_gap",
                Some(*i),
                None,
                "the bundle marker lists this entry but the bundle does not hold it",
            );
        }
        if let (Some(f), Some(m)) = (first, max) {
            rep.range = Some((f, m));
        }

        // world rows' log heads
        let mut stmt = conn.prepare(
            "SELECT w.world_ref, w.log_head FROM worlds w WHERE NOT EXISTS (SELECT 1 FROM log_entries l WHERE l.entry_hash_ref = w.log_head)",
        )?;
        let orphans: Vec<(String, String)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        for (w, head) in orphans {
            rep.warn(
                "dangling_ref",
                None,
                Some(w),
                format!("world logHead {head} names no log entry"),
            );
        }

        // commit_objects membership
        let mut stmt = conn.prepare(
            "SELECT c.object_ref, c.entry_index FROM commit_objects c
             WHERE NOT EXISTS (SELECT 1 FROM objects o WHERE o.hash_ref = c.object_ref)
                OR NOT EXISTS (SELECT 1 FROM log_entries l WHERE l.entry_index = c.entry_index)",
        )?;
        let bad: Vec<(String, i64)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        for (o, i) in bad {
            rep.fail(
                "dangling_ref",
                Some(i),
                Some(o),
                "commit_objects row names a missing object or entry",
            );
        }

        // registry heads
        let mut stmt = conn.prepare(
            "SELECT registry_name, object_ref FROM epoch_registry_heads h WHERE NOT EXISTS (SELECT 1 FROM objects o WHERE o.hash_ref = h.object_ref)",
        )?;
        let bad: Vec<(String, String)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        for (name, o) in bad {
            rep.fail(
                "dangling_ref",
                None,
                Some(o),
                format!("registry head {name} names a missing object"),
            );
        }
        Ok(LogWalk { max })
    }

    /// Check 9, effect records: decode, the record law, lost approval claims, links
    /// (`record_inconsistent`, `dangling_ref`).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn effect_records(&self, rep: &mut Report) -> Result<(), Error> {
        let (s, conn) = (self.store, self.store.conn());
        // 9. effect records
        let mut stmt =
            conn.prepare("SELECT hash_ref, payload FROM objects WHERE semantic_id = ?1")?;
        let recs: Vec<(String, Vec<u8>)> = stmt
            .query_map([EFFECT_RECORD], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        for (hash, payload) in recs {
            match EffectRecord::decode(&payload) {
                Err(e) => rep.fail("record_inconsistent", None, Some(hash), e),
                Ok(r) => {
                    if let Err(e) = r.check_law() {
                        rep.fail("record_inconsistent", None, Some(hash.clone()), e);
                    }
                    if let Some(reason) = s.lost_claim(&r)? {
                        rep.fail("record_inconsistent", None, Some(hash.clone()), reason);
                    }
                    for link in [
                        Some(&r.request_ref),
                        (!r.result_ref.is_empty()).then_some(&r.result_ref),
                    ]
                    .into_iter()
                    .flatten()
                    {
                        if !s.has_object(link)? {
                            rep.fail(
                                "dangling_ref",
                                None,
                                Some(hash.clone()),
                                format!("effect record names missing object {link}"),
                            );
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Every `approval_claims` row with its decision object and whether its request and
    /// intent exist, in the table's order (authority-and-broker.md §11).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn approval_claims(&self) -> Result<Vec<ClaimCheck>, Error> {
        let conn = self.store.conn();
        let mut stmt = conn.prepare(
            "SELECT c.approval_ref, c.request_ref, c.invocation_id, d.semantic_id, d.payload,
                    EXISTS (SELECT 1 FROM objects r WHERE r.hash_ref = c.request_ref),
                    EXISTS (SELECT 1 FROM journal j WHERE j.kind = 'intent' AND j.invocation_id = c.invocation_id)
             FROM approval_claims c LEFT JOIN objects d ON d.hash_ref = c.approval_ref",
        )?;
        type ClaimRow = (
            String,
            String,
            String,
            Option<String>,
            Option<Vec<u8>>,
            bool,
            bool,
        );
        let claims: Vec<ClaimRow> = stmt
            .query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                ))
            })?
            .collect::<Result<_, _>>()?;
        Ok(claims
            .into_iter()
            .map(
                |(decision, request, intent, semantic, payload, has_request, has_intent)| {
                    ClaimCheck {
                        decision,
                        request,
                        intent,
                        semantic,
                        payload,
                        has_request,
                        has_intent,
                    }
                },
            )
            .collect())
    }

    /// A claim must name an existing decision, request and effect intent: records a
    /// `dangling_ref` failure and returns false when it does not.
    pub fn claim_links(&self, rep: &mut Report, c: &ClaimCheck) -> bool {
        let missing = match (&c.payload, c.has_request, c.has_intent) {
            (None, _, _) => Some(format!(
                "approval claim names missing decision {}",
                c.decision
            )),
            (_, false, _) => Some(format!(
                "approval claim names missing request {}",
                c.request
            )),
            (_, _, false) => Some(format!(
                "approval claim names {}, which has no effect intent",
                c.intent
            )),
            _ => None,
        };
        match missing {
            Some(reason) => {
                rep.fail("dangling_ref", None, Some(c.decision.clone()), reason);
                false
            }
            None => true,
        }
    }

    /// Check 10, journal: outcomes without intents, indeterminate intents (warnings), rows naming
    /// missing objects (`orphan_outcome`, `indeterminate`, `dangling_ref`).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn journal(&self, rep: &mut Report) -> Result<(), Error> {
        let conn = self.store.conn();
        // 10. journal
        let mut stmt = conn.prepare(
            "SELECT o.invocation_id FROM journal o WHERE o.kind = 'outcome' AND NOT EXISTS
               (SELECT 1 FROM journal i WHERE i.kind = 'intent' AND i.invocation_id = o.invocation_id)",
        )?;
        let orphans: Vec<String> = stmt
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        for id in orphans {
            rep.fail("orphan_outcome", None, Some(id), "outcome without intent");
        }
        for (_, id, _) in journal::pending(conn)? {
            rep.warn(
                "indeterminate",
                None,
                Some(id),
                "intent without outcome (indeterminate; never retried automatically)",
            );
        }
        let mut stmt = conn.prepare("SELECT invocation_id, object_ref FROM journal j WHERE NOT EXISTS (SELECT 1 FROM objects o WHERE o.hash_ref = j.object_ref)")?;
        let bad: Vec<(String, String)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        for (id, o) in bad {
            rep.fail(
                "dangling_ref",
                None,
                Some(o),
                format!("journal row for {id} names a missing object"),
            );
        }
        Ok(())
    }

    /// Derived state: the episode index of effectful records must equal its recomputation up
    /// to its rowid (DEC-PERF-8; `episode_index`, `episode_index_stale`).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn episode_index(&self, rep: &mut Report) -> Result<(), Error> {
        let conn = self.store.conn();
        // derived state: the episode index of effectful records must equal its recomputation
        // up to its rowid (DEC-PERF-8).
        for p in super::episodes::check(conn)? {
            if p.trusted {
                rep.fail(
                    "episode_index",
                    None,
                    Some(super::episodes::TABLE.into()),
                    p.reason,
                );
            } else {
                rep.warn(
                    "episode_index_stale",
                    None,
                    Some(super::episodes::TABLE.into()),
                    p.reason,
                );
            }
        }
        Ok(())
    }

    /// Derived state: `world log`'s view must equal what each entry's objects decode to
    /// (DEC-PERF-11; `log_view` when a sealed row that readers use differs, `log_view_stale`
    /// for rows readers ignore).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn log_view(&self, rep: &mut Report) -> Result<(), Error> {
        let checked = super::logview::table::check_counted(self.store.conn())?;
        let (mut listed_trusted, mut listed_unused) = (0u64, 0u64);
        for p in checked.problems {
            let at = Some(super::logview::table::TABLE.into());
            if p.trusted {
                listed_trusted += 1;
                rep.fail("log_view", Some(p.index), at, p.reason);
            } else {
                listed_unused += 1;
                rep.warn("log_view_stale", Some(p.index), at, p.reason);
            }
        }
        // The check lists at most 10 of each kind; the counts are of every row.
        if let Some(more) = checked
            .trusted
            .checked_sub(listed_trusted)
            .filter(|m| *m > 0)
        {
            *rep.failure_counts.entry("log_view").or_insert(0) += more;
        }
        if let Some(more) = checked.unused.checked_sub(listed_unused).filter(|m| *m > 0) {
            *rep.warning_counts.entry("log_view_stale").or_insert(0) += more;
        }
        Ok(())
    }

    /// Derived state and signed history (DEC-TRUST-1, DEC-TRUST-2): the log's Merkle tree is
    /// recomputed from the log and compared with `world_merkle` (`merkle` when a trusted table
    /// differs, `merkle_stale` when the table is not used); every checkpoint the store signed
    /// must still verify under its stored key and name the root of the log's first entries
    /// at its size (`checkpoint_signature`, `checkpoint`). An episode bundle's log is a subset,
    /// so it has no tree and no stored checkpoints to check (its proofs are checked by
    /// `verify --bundle`).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn merkle(&self, rep: &mut Report) -> Result<(), Error> {
        let conn = self.store.conn();
        if super::registry_head_in(conn, "world/episode-bundle/v1")?.is_some() {
            return Ok(());
        }
        let checked = super::merkle::check(conn)?;
        let at = Some(super::merkle::TABLE.to_string());
        if let Some(why) = &checked.untrusted {
            rep.warn(
                "merkle_stale",
                None,
                at.clone(),
                format!("{why}; never used: the next commit rebuilds it from the log"),
            );
        }
        let listed = checked.differing.len() as u64;
        for (_, why) in checked.differing {
            rep.fail(
                "merkle",
                None,
                at.clone(),
                format!(
                    "{why}; proofs would use it. Drop {} and {} to have commits rebuild them",
                    super::merkle::TABLE,
                    super::merkle::STATE_TABLE
                ),
            );
        }
        if checked.differing_count > listed {
            *rep.failure_counts.entry("merkle").or_insert(0) += checked.differing_count - listed;
        }
        let stored = super::checkpoints::list(conn)?;
        if stored.is_empty() {
            return Ok(());
        }
        let sizes: Vec<u64> = stored.iter().map(|c| c.tree_size).collect();
        let (have, roots) = super::merkle::roots_from_log(conn, &sizes)?;
        for c in &stored {
            let label = Some(format!("checkpoint {} ({} entries)", c.id, c.tree_size));
            let signed = crate::tlog::note::Verifier::parse(&c.log_key)
                .map_err(|e| e.to_string())
                .and_then(|k| {
                    crate::tlog::checkpoint::open(c.note.as_bytes(), &k, &[])
                        .map_err(|e| e.to_string())
                });
            match signed {
                Err(e) => rep.fail(
                    "checkpoint_signature",
                    None,
                    label.clone(),
                    format!("the stored checkpoint does not verify under its stored key: {e}"),
                ),
                Ok((s, _))
                    if s.checkpoint.size != c.tree_size
                        || s.checkpoint.root != c.root_hash
                        || s.checkpoint.origin != c.origin =>
                {
                    rep.fail(
                        "checkpoint_signature",
                        None,
                        label.clone(),
                        "the stored checkpoint's columns differ from its signed note",
                    )
                }
                Ok(_) => {}
            }
            match roots.get(&c.tree_size) {
                None => rep.fail(
                    "checkpoint",
                    Some(have as i64),
                    label,
                    format!(
                        "this store signed a checkpoint of {} entries; its log now has {have} from index 0: the log was truncated",
                        c.tree_size
                    ),
                ),
                Some(r) if *r != c.root_hash => rep.fail(
                    "checkpoint",
                    None,
                    label,
                    format!(
                        "the log's first {} entries hash to root {}; this store signed {}: the history was rewritten",
                        c.tree_size,
                        hex::encode(r),
                        hex::encode(c.root_hash)
                    ),
                ),
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// Issue 13 §3: every invocation-record entry is the commit its journal names
    /// (`journal_mismatch`, `journal_gap`; src/store/verify/evidence.rs).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn journal_against_log(&self, rep: &mut Report) -> Result<(), Error> {
        evidence::check_journal_against_log(self.store.conn(), rep)
    }

    /// Issue 13 §3: effect ordinals, effect journaling and started markers
    /// (src/store/verify/evidence.rs).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn effect_journal(&self, rep: &mut Report) -> Result<(), Error> {
        evidence::check_effect_journal(self.store.conn(), rep)
    }

    /// Every `session_credentials` row that has a mint record, with the record, in the
    /// table's order (the authority compares them: `session_mismatch`).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn sessions(&self) -> Result<Vec<SessionCheck>, Error> {
        evidence::sessions(self.store.conn())
    }

    /// Published transitions: each `(id, source ref)` of the transition registry head must
    /// name a stored source object (`dangling_ref`).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn published_sources(
        &self,
        rep: &mut Report,
        sources: &[(String, String)],
    ) -> Result<(), Error> {
        evidence::check_sources(self.store.conn(), rep, sources)
    }

    /// Check 11, head: the selected head names a world row whose revision is the highest log index
    /// (`head_mismatch`; a warning when that entry is a client's).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn head(&self, rep: &mut Report, walk: LogWalk) -> Result<(), Error> {
        let (s, conn, max) = (self.store, self.store.conn(), walk.max);
        // 11. head
        match (&rep.head, max) {
            (None, None) => {}
            (None, Some(_)) => rep.fail(
                "head_mismatch",
                None,
                None,
                "log has entries but no head is selected",
            ),
            (Some(h), _) => match s.world(h)? {
                None => rep.fail(
                    "head_mismatch",
                    None,
                    Some(h.clone()),
                    "selected head names no world row",
                ),
                Some(w) => {
                    if Some(w.revision) != max {
                        let writer = conn
                            .query_row(
                                "SELECT written_by FROM log_entries WHERE entry_hash_ref = ?1",
                                [&w.log_head],
                                |r| r.get::<_, String>(0),
                            )
                            .optional()?;
                        let reason = format!(
                            "head world revision {} but highest log index {:?}",
                            w.revision, max
                        );
                        if writer.as_deref().is_some_and(is_coordinator) {
                            rep.fail("head_mismatch", max, Some(h.clone()), reason);
                        } else {
                            rep.warn("head_mismatch", max, Some(h.clone()), reason);
                        }
                    }
                }
            },
        }
        Ok(())
    }
}
