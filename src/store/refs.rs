//! Short refs the way git takes them: a full `sha256:<64 hex>` ref, the bare 64-hex digest,
//! or a unique prefix of at least [`MIN_PREFIX`] hex digits, with or without `sha256:` and
//! with or without the `…` tables print after a shortened ref (DEC-CLI-19).
//!
//! Resolution is one indexed range scan per table (`col >= 'sha256:P' AND col < 'sha256:Pg'`,
//! `g` sorting after every hex digit), so it costs a few B-tree probes on any store size.

use rusqlite::Connection;

/// The shortest hex prefix accepted (git's default abbreviation is 7; tables print 12).
pub const MIN_PREFIX: usize = 6;

/// How many candidates an ambiguity error lists at most.
pub const MAX_CANDIDATES: usize = 10;

/// The kind of thing a ref argument names; each kind searches one or more tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// Any object (`objects.hash_ref`).
    Object,
    /// Objects with this semantic id only (`world/effect-record/v1`, an approval request…).
    ObjectOf(&'static str),
    /// A world row (`worlds.world_ref`).
    World,
    /// A log entry hash (`log_entries.entry_hash_ref`).
    Entry,
    /// A session credential id (bare 64 hex, `session_credentials.credential_id`).
    Session,
}

impl Space {
    /// The noun used in messages and candidate lists.
    pub fn noun(self) -> &'static str {
        match self {
            Space::Object | Space::ObjectOf(_) => "object",
            Space::World => "world",
            Space::Entry => "entry",
            Space::Session => "session credential",
        }
    }
}

/// One match of a prefix: the full ref and where it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The full ref (`sha256:<64 hex>`; a bare 64-hex id for [`Space::Session`]).
    pub reference: String,
    /// The space it was found in.
    pub space: Space,
    /// For objects, their semantic id; for entries, the entry index.
    pub detail: String,
}

/// Why a ref argument could not be resolved.
#[derive(Debug, thiserror::Error)]
pub enum RefError {
    /// Neither a ref nor hex.
    #[error("{0:?} is not a sha256: ref: give sha256:<hex>, the bare hex, or a unique prefix of at least 6 hex digits")]
    NotARef(String),
    /// Hex, but shorter than [`MIN_PREFIX`].
    #[error("ref prefix {0:?} is too short: give at least 6 hex digits")]
    TooShort(String),
    /// No row in the searched spaces starts with the prefix.
    #[error("no {noun} matches {text:?}")]
    NotFound {
        /// The text given.
        text: String,
        /// What was searched for.
        noun: String,
    },
    /// More than one row starts with the prefix; `candidates` is in ascending ref order.
    #[error("ref prefix {text:?} is ambiguous: {} candidates", candidates.len())]
    Ambiguous {
        /// The text given.
        text: String,
        /// Up to [`MAX_CANDIDATES`] matches.
        candidates: Vec<Candidate>,
    },
    /// A read failed.
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
}

/// Normalise `text` to lowercase hex without `sha256:` or a trailing `…`/`...`, or say why
/// it is not a ref.
pub fn hex_of(text: &str) -> Result<String, RefError> {
    let t = text.trim();
    let t = t
        .strip_suffix('…')
        .or_else(|| t.strip_suffix("..."))
        .unwrap_or(t);
    let hex = t
        .strip_prefix("sha256:")
        .or_else(|| t.strip_prefix("SHA256:"))
        .unwrap_or(t)
        .to_ascii_lowercase();
    if hex.is_empty() || hex.len() > 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(RefError::NotARef(text.to_string()));
    }
    if hex.len() < MIN_PREFIX {
        return Err(RefError::TooShort(text.to_string()));
    }
    Ok(hex)
}

/// Whether the 64-hex digest `hex` (lowercase, no `sha256:`) names anything in the store: an
/// object, a world, a log entry or a session credential id. The CLI prints a 64-hex argument
/// that names nothing only withheld, since it may be a session token (issue 26 §7).
///
/// # Errors
/// SQLite errors.
pub fn names_anything(conn: &Connection, hex: &str) -> Result<bool, RefError> {
    let r = format!("sha256:{hex}");
    Ok(conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM objects WHERE hash_ref = ?1)
             OR EXISTS (SELECT 1 FROM worlds WHERE world_ref = ?1)
             OR EXISTS (SELECT 1 FROM log_entries WHERE entry_hash_ref = ?1)
             OR EXISTS (SELECT 1 FROM session_credentials WHERE credential_id = ?2)",
        [&r, hex],
        |x| x.get(0),
    )?)
}

/// Resolve `text` in `spaces` (searched in order, candidates pooled) to one full ref.
///
/// A full 64-hex digest is returned as `sha256:<hex>` (bare hex for [`Space::Session`])
/// without a lookup, so the caller's own "not found" message stays specific. A prefix must
/// match exactly one row across all `spaces`; the same ref found in two spaces (a world ref
/// that is also an object) counts once.
///
/// # Errors
/// [`RefError::NotARef`], [`RefError::TooShort`], [`RefError::NotFound`],
/// [`RefError::Ambiguous`] (with the candidates), [`RefError::Sqlite`].
pub fn resolve(conn: &Connection, spaces: &[Space], text: &str) -> Result<Candidate, RefError> {
    let hex = hex_of(text)?;
    if hex.len() == 64 {
        let space = spaces.first().copied().unwrap_or(Space::Object);
        let reference = if space == Space::Session {
            hex
        } else {
            format!("sha256:{hex}")
        };
        return Ok(Candidate {
            reference,
            space,
            detail: String::new(),
        });
    }
    let mut found: Vec<Candidate> = Vec::new();
    for &space in spaces {
        for c in prefix_matches(conn, space, &hex)? {
            if !found.iter().any(|f| f.reference == c.reference) {
                found.push(c);
            }
        }
    }
    match found.len() {
        0 => Err(RefError::NotFound {
            text: text.to_string(),
            noun: spaces
                .iter()
                .map(|s| s.noun())
                .collect::<Vec<_>>()
                .join(" or "),
        }),
        1 => Ok(found.remove(0)),
        _ => {
            found.sort_by(|a, b| a.reference.cmp(&b.reference));
            found.truncate(MAX_CANDIDATES);
            Err(RefError::Ambiguous {
                text: text.to_string(),
                candidates: found,
            })
        }
    }
}

/// The index of the log entry whose entry hash is `entry_hash`, if any.
///
/// # Errors
/// [`RefError::Sqlite`] when the read fails.
pub fn entry_index_of(conn: &Connection, entry_hash: &str) -> Result<Option<i64>, RefError> {
    use rusqlite::OptionalExtension;
    Ok(conn
        .query_row(
            "SELECT entry_index FROM log_entries WHERE entry_hash_ref = ?1",
            [entry_hash],
            |r| r.get(0),
        )
        .optional()?)
}

/// Rows of `space` whose ref starts with `hex` (at most [`MAX_CANDIDATES`] + 1).
fn prefix_matches(conn: &Connection, space: Space, hex: &str) -> Result<Vec<Candidate>, RefError> {
    let (sql, lo) = match space {
        Space::Object => (
            "SELECT hash_ref, semantic_id FROM objects WHERE hash_ref >= ?1 AND hash_ref < ?1 || 'g' ORDER BY hash_ref LIMIT 11",
            format!("sha256:{hex}"),
        ),
        Space::ObjectOf(_) => (
            "SELECT hash_ref, semantic_id FROM objects WHERE hash_ref >= ?1 AND hash_ref < ?1 || 'g' AND semantic_id = ?2 ORDER BY hash_ref LIMIT 11",
            format!("sha256:{hex}"),
        ),
        Space::World => (
            "SELECT world_ref, 'revision ' || revision FROM worlds WHERE world_ref >= ?1 AND world_ref < ?1 || 'g' ORDER BY world_ref LIMIT 11",
            format!("sha256:{hex}"),
        ),
        Space::Entry => (
            "SELECT entry_hash_ref, 'index ' || entry_index FROM log_entries WHERE entry_hash_ref >= ?1 AND entry_hash_ref < ?1 || 'g' ORDER BY entry_hash_ref LIMIT 11",
            format!("sha256:{hex}"),
        ),
        Space::Session => (
            "SELECT credential_id, 'episode ' || episode_id FROM session_credentials WHERE credential_id >= ?1 AND credential_id < ?1 || 'g' ORDER BY credential_id LIMIT 11",
            hex.to_string(),
        ),
    };
    let mut stmt = conn.prepare_cached(sql)?;
    let map = |r: &rusqlite::Row<'_>| -> rusqlite::Result<Candidate> {
        Ok(Candidate {
            reference: r.get(0)?,
            space,
            detail: r.get(1)?,
        })
    };
    let rows = match space {
        Space::ObjectOf(sid) => stmt
            .query_map(rusqlite::params![lo, sid], map)?
            .collect::<Result<Vec<_>, _>>()?,
        _ => stmt
            .query_map(rusqlite::params![lo], map)?
            .collect::<Result<Vec<_>, _>>()?,
    };
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_of_accepts_what_tables_print() {
        let full = "ab".repeat(32);
        assert_eq!(hex_of(&format!("sha256:{full}")).unwrap(), full);
        assert_eq!(hex_of("sha256:00773cb5caab…").unwrap(), "00773cb5caab");
        assert_eq!(hex_of("00773CB5").unwrap(), "00773cb5");
        assert!(matches!(hex_of("00773"), Err(RefError::TooShort(_))));
        assert!(matches!(hex_of("head"), Err(RefError::NotARef(_))));
        assert!(matches!(hex_of(&"a".repeat(65)), Err(RefError::NotARef(_))));
    }

    #[test]
    fn prefixes_resolve_uniquely_or_list_candidates() {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(
            "CREATE TABLE objects (hash_ref TEXT PRIMARY KEY, semantic_id TEXT);
             CREATE TABLE worlds (world_ref TEXT PRIMARY KEY, revision INTEGER);",
        )
        .unwrap();
        let a = format!("sha256:abcdef{}", "0".repeat(58));
        let b = format!("sha256:abcdef{}", "1".repeat(58));
        let w = format!("sha256:123456{}", "2".repeat(58));
        c.execute(
            "INSERT INTO objects VALUES (?1, 'x/a/v1'), (?2, 'x/b/v1')",
            [&a, &b],
        )
        .unwrap();
        c.execute("INSERT INTO worlds VALUES (?1, 3)", [&w])
            .unwrap();
        let got = resolve(&c, &[Space::Object], "abcdef0").unwrap();
        assert_eq!(got.reference, a);
        assert_eq!(got.detail, "x/a/v1");
        match resolve(&c, &[Space::Object], "sha256:abcdef") {
            Err(RefError::Ambiguous { candidates, .. }) => {
                assert_eq!(candidates.len(), 2);
                assert_eq!(candidates[0].reference, a);
            }
            other => panic!("expected ambiguity, got {other:?}"),
        }
        let only_b = resolve(&c, &[Space::ObjectOf("x/b/v1")], "abcdef").unwrap();
        assert_eq!(only_b.reference, b);
        assert_eq!(
            resolve(&c, &[Space::Object, Space::World], "123456")
                .unwrap()
                .space,
            Space::World
        );
        assert!(matches!(
            resolve(&c, &[Space::World], "abcdef"),
            Err(RefError::NotFound { .. })
        ));
    }
}
