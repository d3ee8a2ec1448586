//! Writing an episode bundle (`world export-episode`, DEC-REPLAY-5..8): rows and objects
//! copied verbatim from a source store into a new one, through the same row writers a commit
//! uses ([`super::rows`], [`super::journal::insert_verbatim`]). What goes into a bundle (the
//! episode's entries, records, journal rows, interpreters, the marker) is `replay::bundle`'s
//! choice; this module owns how it lands on disk.
//!
//! Objects are copied as stored, payload unverified: a tampered source stays tampered, so
//! replay of the bundle reports it.

use std::collections::BTreeSet;

use rusqlite::Connection;

use super::journal::{self, JournalRow};
use super::{object_in, rows, Error, LogEntry, Object};

/// What a bundle holds, by reference to rows of the source store.
#[derive(Clone, Copy, Debug)]
pub struct Contents<'a> {
    /// Refs of the source's objects to copy (a ref the source does not hold is skipped).
    pub objects: &'a BTreeSet<String>,
    /// Objects made for the bundle (the marker, embedded interpreters), written after them.
    pub new_objects: &'a [Object],
    /// The log entries, ascending; each is copied with every source world row it produced.
    pub entries: &'a [LogEntry],
    /// `commit_objects` rows `(object_ref, entry_index)`, kept only for objects copied.
    pub members: &'a [(String, i64)],
    /// Journal rows, copied with their `seq`.
    pub journal: &'a [JournalRow],
    /// Inclusion proofs `(entry_index, tlog-proof text)` (`export-episode --checkpoint`),
    /// written to `world_bundle_proofs`.
    pub proofs: &'a [(i64, String)],
}

/// What [`write`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// Objects inserted (copied and new; one already present counts 0).
    pub objects: u64,
    /// The selected head set: the last world row copied, `None` when no entry produced one.
    pub selected_head: Option<String>,
}

/// Insert an object `OR IGNORE` exactly as given, without re-hashing its payload (module docs);
/// returns whether a row was inserted.
fn copy_object(conn: &Connection, o: &Object) -> Result<bool, Error> {
    Ok(conn
        .prepare_cached(
            "INSERT OR IGNORE INTO objects (hash_ref, interface_hash_ref, semantic_id, provenance, payload) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute(rusqlite::params![
            o.meta.hash,
            o.meta.interface_hash,
            o.meta.semantic_id,
            o.meta.provenance,
            o.payload
        ])?
        > 0)
}

/// Write `contents`, read from `src`, into the bundle store's open transaction `tx`: objects
/// (calling `progress(copied_so_far, total)` before each source object), the new objects, each
/// entry and its world rows, the `commit_objects` rows, the journal rows, and the selected
/// head (the last world copied). The caller records the marker and commits.
///
/// # Errors
/// [`Error::Sqlite`] (reading `src` or writing `tx`), [`Error::DuplicateEntry`].
pub fn write(
    tx: &Connection,
    src: &Connection,
    contents: &Contents<'_>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Written, Error> {
    let mut copied = 0u64;
    let total = contents.objects.len() as u64;
    for (n, reference) in contents.objects.iter().enumerate() {
        progress(n as u64, total);
        if let Some(o) = object_in(src, reference)? {
            copied += u64::from(copy_object(tx, &o)?);
        }
    }
    for o in contents.new_objects {
        copied += u64::from(copy_object(tx, o)?);
    }
    let mut last_world = None;
    for e in contents.entries {
        rows::insert_log_entry(tx, e)?;
        for w in rows::worlds_with_log_head(src, &e.entry_hash)? {
            rows::insert_world(tx, &w)?;
            last_world = Some(w.reference);
        }
    }
    for (o, i) in contents.members {
        rows::add_commit_object_if_stored(tx, o, *i)?;
    }
    for row in contents.journal {
        journal::insert_verbatim(tx, row)?;
    }
    if let Some(w) = &last_world {
        rows::set_selected_head(tx, w)?;
    }
    for (i, p) in contents.proofs {
        super::checkpoints::put_proof(tx, *i, p)?;
    }
    // The derived episode index follows every write of records (DEC-PERF-8); a bundle file
    // without its tables is left alone.
    super::episodes::catch_up(tx)?;
    // `world log`'s view: the entries' commit intents are copied after the entries, so their
    // rows are written here, all of them (DEC-PERF-11).
    super::logview::table::catch_up(tx, None)?;
    Ok(Written {
        objects: copied,
        selected_head: last_world,
    })
}
