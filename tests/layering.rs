//! The module map is a rule, not a picture (issue 17 §6).
//!
//! `docs/ARCHITECTURE.md` lists, under "Layering", every top-level module of `src/` with the
//! modules it may use, and a ratchet table of the debt that is still there (edges the map does
//! not allow, SQL outside the store, transactions opened in `cli/` or `serve/`, library
//! functions whose error is a bare `String`). This test reads both tables and the sources and
//! fails on:
//! - a module missing from the map, or an edge `crate::B` in module `A` the map does not allow
//!   and the debt table does not list;
//! - SQL in a file outside `store/`, `ledger/`, `limits/` and `mission/` (the ledger layer's
//!   and its two clients' own modules), or a transaction opened in `cli/` or `serve/`, beyond the debt row;
//! - SQL naming one of the store's own tables (those `store/` creates) anywhere outside
//!   `store/`, with no debt allowed (issue 27 §2: the store-side markers of a pairing are
//!   the store module's);
//! - more `Result<_, String>` than the debt row;
//! - more `.conn()` calls outside `src/store/` (`conn-callers`), or more front-end references
//!   past `ops` (`front-end-past-ops`: `crate::X` in `cli/` or `serve/` with X not `ops`,
//!   `encoding`, `clock`, `cli`, `serve` or `store::read`), than their debt rows — the ratchet
//!   of issue 28 item 1, counted as `.ci/metrics` counts them;
//! - a debt row that no longer matches the sources (paid off or shrunk): lower the number or
//!   delete the row, so the table always tells the truth.
//!
//! The lower layers are workspace crates (`crates/world-*`, re-exported by `src/lib.rs` under
//! their module names): the compiler holds a crate to its Cargo.toml, so for them this test
//! checks only that the table's row says what the Cargo.toml allows, plus the SQL and test-hook
//! rules the compiler cannot see.
//!
//! Test code (`#[cfg(test)]` modules, `*tests.rs`, `testkit.rs`) and comments are not counted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Modules that may hold SQL: the store, the ledger layer, and its two clients' own modules.
const SQL_HOMES: [&str; 4] = ["store", "ledger", "limits", "mission"];
/// Modules that must not open a transaction themselves.
const NO_TX: [&str; 2] = ["cli", "serve"];
const SQL_WORDS: [&str; 11] = [
    "SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "PRAGMA", "BEGIN", "WITH", "REPLACE",
    "ALTER",
];
const TX_CALLS: [&str; 5] = [
    ".immediate(",
    ".transaction(",
    ".unchecked_transaction(",
    ".transaction_with_behavior(",
    "Transaction::new_unchecked(",
];

struct Source {
    /// Path relative to the repository (`src/cli/x.rs`, `crates/world-ailang/src/eval.rs`).
    rel: String,
    /// Top-level module (`cli` for `src/cli/x.rs`, `clock` for `src/clock.rs`, `ailang` for
    /// every file of the `world-ailang` crate, `process` for `crates/world-io/src/process.rs`).
    module: String,
    /// The workspace crate the file belongs to (`world`, `world-ailang`, …).
    krate: String,
    /// Non-test code with comment lines removed.
    code: String,
}

/// The workspace crates `src/lib.rs` re-exports, from its `pub use world_x as m;` (the whole
/// crate is module `m`) and `pub use world_x::m;` (the crate's module `m`) lines: (crate
/// directory name, module, whole crate?).
fn reexports() -> Vec<(String, String, bool)> {
    let lib = std::fs::read_to_string(Path::new(ROOT).join("src/lib.rs")).unwrap();
    let mut out = Vec::new();
    for l in lib.lines() {
        let Some(rest) = l.trim().strip_prefix("pub use world_") else {
            continue;
        };
        let rest = rest.trim_end_matches(';');
        if let Some((krate, module)) = rest.split_once(" as ") {
            out.push((
                format!("world-{}", krate.replace('_', "-")),
                module.to_string(),
                true,
            ));
        } else if let Some((krate, module)) = rest.split_once("::") {
            out.push((
                format!("world-{}", krate.replace('_', "-")),
                module.to_string(),
                false,
            ));
        }
    }
    out
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Non-test code of `p` with comment lines removed.
fn shipped_code(p: &Path) -> String {
    let text = std::fs::read_to_string(p).unwrap();
    let mut code = String::new();
    // As `.ci/metrics` reads a file: a `#[cfg(test)]` item is skipped (to its closing brace at
    // its own indent, or the one line of `mod tests;`), and the code after it still counts.
    let mut skip_indent: Option<usize> = None;
    let mut pending_test = false;
    for line in text.lines() {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        if let Some(i) = skip_indent {
            if t.starts_with('}') && indent == i {
                skip_indent = None;
            }
            continue;
        }
        if t.starts_with("#[cfg(test)]") {
            pending_test = true;
            continue;
        }
        if pending_test {
            if t.starts_with("#[") {
                continue;
            }
            pending_test = false;
            if !t.trim_end().ends_with(';') {
                skip_indent = Some(indent);
            }
            continue;
        }
        if t.starts_with("//") {
            continue;
        }
        code.push_str(line);
        code.push('\n');
    }
    code
}

/// Every shipped source file of the root crate (`src/`) and of the workspace crates
/// `src/lib.rs` re-exports (`crates/*/src/`).
fn sources() -> Vec<Source> {
    let mut out = Vec::new();
    let src = Path::new(ROOT).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    files.sort();
    for p in files {
        let rel = p
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if rel == "lib.rs" || rel == "main.rs" || name.ends_with("tests.rs") || name == "testkit.rs"
        {
            continue;
        }
        let module = rel
            .split('/')
            .next()
            .unwrap()
            .trim_end_matches(".rs")
            .to_string();
        let code = shipped_code(&p);
        out.push(Source {
            rel: format!("src/{rel}"),
            module,
            krate: "world".to_string(),
            code,
        });
    }
    for (krate, module, whole) in reexports() {
        let csrc = Path::new(ROOT).join("crates").join(&krate).join("src");
        let mut files = Vec::new();
        walk(&csrc, &mut files);
        files.sort();
        for p in files {
            let inner = p
                .strip_prefix(&csrc)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let top = inner.split('/').next().unwrap().trim_end_matches(".rs");
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if (!whole && top != module) || name.ends_with("tests.rs") || name == "testkit.rs" {
                continue;
            }
            out.push(Source {
                rel: format!("crates/{krate}/src/{inner}"),
                module: module.clone(),
                krate: krate.clone(),
                code: shipped_code(&p),
            });
        }
    }
    out
}

/// The workspace crates `crates/NAME/Cargo.toml` depends on (`world-*` entries of its
/// `[dependencies]` table).
fn crate_deps(krate: &str) -> BTreeSet<String> {
    let toml = std::fs::read_to_string(
        Path::new(ROOT)
            .join("crates")
            .join(krate)
            .join("Cargo.toml"),
    )
    .unwrap();
    let mut in_deps = false;
    let mut out = BTreeSet::new();
    for l in toml.lines() {
        let t = l.trim();
        if t.starts_with('[') {
            in_deps = t == "[dependencies]";
            continue;
        }
        if in_deps && t.starts_with("world-") {
            out.insert(t.split([' ', '=']).next().unwrap().to_string());
        }
    }
    out
}

/// Modules named after `crate::` in `code`.
fn crate_refs(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        if code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue; // `world_crate::`, not ours
        }
        let name: String = code[i + 7..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.insert(name);
        }
    }
    out
}

/// Calls of the store's raw connection (`.conn()`) in `code`.
fn conn_calls(code: &str) -> usize {
    code.matches(".conn()").count()
}

/// The doors a front end may name (issue 28 item 1): `ops`, `encoding`, `clock`, itself, and
/// the store's typed reads (`store::read`).
const FRONT_DOORS: [&str; 5] = ["ops", "encoding", "clock", "cli", "serve"];

/// `crate::X` paths in `code` past the front ends' doors ([`FRONT_DOORS`], `crate::store::read`),
/// every occurrence counted.
fn past_ops_refs(code: &str) -> usize {
    code.match_indices("crate::")
        .filter(|(i, _)| {
            if code[..*i].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                return false; // `world_crate::`, not ours
            }
            let rest = &code[i + 7..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let read = rest
                .strip_prefix("store::read")
                .is_some_and(|r| !r.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'));
            !name.is_empty() && !FRONT_DOORS.contains(&name.as_str()) && !read
        })
        .count()
}

/// String literals that start with an SQL keyword.
fn sql_count(code: &str) -> usize {
    sql_literals(code).len()
}

/// The tables (and views) the store module creates: every `CREATE TABLE|VIEW [IF NOT EXISTS]
/// name` in the shipped code of `store/`.
fn store_tables(srcs: &[Source]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for s in srcs.iter().filter(|s| s.module == "store") {
        for kind in ["CREATE TABLE ", "CREATE VIEW "] {
            for (i, _) in s.code.match_indices(kind) {
                let rest = s.code[i + kind.len()..].trim_start();
                let rest = rest
                    .strip_prefix("IF NOT EXISTS ")
                    .unwrap_or(rest)
                    .trim_start();
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        }
    }
    out
}

/// The SQL string literals of `code` (those [`sql_count`] counts), each up to its closing
/// quote (`"#` for a raw string).
fn sql_literals(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices('"') {
        let body = &code[i + 1..];
        let rest = body.trim_start();
        let is_sql = SQL_WORDS
            .iter()
            .any(|w| rest.starts_with(w) && rest[w.len()..].starts_with([' ', '\n', '(']));
        if !is_sql {
            continue;
        }
        let raw = code[..i].ends_with("r#");
        let end = if raw {
            body.find("\"#")
        } else {
            let mut esc = false;
            body.char_indices()
                .find(|&(_, c)| {
                    let stop = c == '"' && !esc;
                    esc = c == '\\' && !esc;
                    stop
                })
                .map(|(j, _)| j)
        };
        out.push(&body[..end.unwrap_or(body.len())]);
    }
    out
}

/// The store tables an SQL literal of `code` names (issue 27 §2: no SQL on a store table
/// outside the store module), as `table` words of the statement.
fn store_tables_named(code: &str, tables: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for lit in sql_literals(code) {
        for word in lit.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            if tables.contains(word) {
                out.insert(word.to_string());
            }
        }
    }
    out
}

fn tx_count(code: &str) -> usize {
    TX_CALLS.iter().map(|c| code.matches(c).count()).sum()
}

/// `Result<T, String>` types in `code`: each `Result<` is matched to its closing `>` and its
/// second top-level argument compared with `String` (so `Result<HashMap<String, String>, E>`
/// is not one).
fn string_errors(code: &str) -> usize {
    code.match_indices("Result<")
        .filter(|(i, _)| {
            let mut depth = 0usize;
            let mut args = vec![String::new()];
            for c in code[i + 7..].chars() {
                match c {
                    '<' | '(' | '[' => depth += 1,
                    '>' | ')' | ']' if depth == 0 => break,
                    '>' | ')' | ']' => depth -= 1,
                    ',' if depth == 0 => {
                        args.push(String::new());
                        continue;
                    }
                    _ => {}
                }
                args.last_mut().expect("one argument").push(c);
            }
            args.len() == 2 && args[1].trim() == "String"
        })
        .count()
}

/// The rows of the first Markdown table after `heading` in ARCHITECTURE.md: cells per row,
/// header and rule rows dropped (a table may be a header alone: the debt table once paid).
fn table_after(doc: &str, heading: &str) -> Vec<Vec<String>> {
    let start = doc
        .find(heading)
        .unwrap_or_else(|| panic!("docs/ARCHITECTURE.md has no {heading:?}"));
    let mut rows = Vec::new();
    let mut in_table = false;
    for line in doc[start..].lines().skip(1) {
        let t = line.trim();
        if t.starts_with('|') {
            in_table = true;
            let cells: Vec<String> = t
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().trim_matches('`').to_string())
                .collect();
            if cells
                .iter()
                .all(|c| c.chars().all(|ch| ch == '-' || ch == ':'))
            {
                continue;
            }
            rows.push(cells);
        } else if in_table {
            break;
        }
    }
    assert!(!rows.is_empty(), "no table after {heading:?}");
    rows.remove(0); // header
    rows
}

#[test]
fn the_sources_keep_the_documented_layering() {
    let doc = std::fs::read_to_string(Path::new(ROOT).join("docs/ARCHITECTURE.md")).unwrap();
    let mut allowed: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for row in table_after(&doc, "### Allowed edges") {
        let uses = row[1]
            .split(',')
            .map(|s| s.trim().trim_matches('`').to_string())
            .filter(|s| !s.is_empty() && s != "—")
            .collect();
        allowed.insert(row[0].clone(), uses);
    }
    let mut debt: BTreeMap<String, usize> = BTreeMap::new();
    for row in table_after(&doc, "### Debt") {
        let n: usize = row[1]
            .parse()
            .unwrap_or_else(|_| panic!("debt row {row:?}: the count is not a number"));
        debt.insert(row[0].clone(), n);
    }

    let srcs = sources();
    let mut found: BTreeMap<String, usize> = BTreeMap::new();
    let mut problems = Vec::new();
    let modules: BTreeSet<&str> = srcs.iter().map(|s| s.module.as_str()).collect();
    for m in &modules {
        if !allowed.contains_key(*m) {
            problems.push(format!(
                "module {m} is not in the allowed-edges table of docs/ARCHITECTURE.md"
            ));
        }
    }
    let mut strings = 0;
    let tables = store_tables(&srcs);
    for t in ["objects", "journal", "log_entries", "store_heads"] {
        assert!(
            tables.contains(t),
            "the store's tables as read from src/store/ lack {t}: {tables:?}"
        );
    }
    let mut conns = 0;
    let mut past_ops = 0;
    for s in &srcs {
        if !s.rel.starts_with("src/store/") {
            conns += conn_calls(&s.code);
        }
        if NO_TX.contains(&s.module.as_str()) {
            past_ops += past_ops_refs(&s.code);
        }
        // A workspace crate's `crate::` names its own modules; what it may use is its
        // Cargo.toml, which the compiler holds it to (checked against the table below).
        let refs = if s.krate == "world" {
            crate_refs(&s.code)
        } else {
            BTreeSet::new()
        };
        for target in refs {
            if target == s.module || !modules.contains(target.as_str()) {
                continue;
            }
            if !allowed.get(&s.module).is_some_and(|a| a.contains(&target)) {
                *found
                    .entry(format!("edge {} -> {}", s.module, target))
                    .or_default() += 1;
            }
        }
        if s.module != "store" {
            let named = store_tables_named(&s.code, &tables);
            if !named.is_empty() {
                problems.push(format!(
                    "{}: SQL names the store's own table(s) {named:?}; only src/store/ may (issue 27 §2: ask a typed function of the store module, e.g. store::markers)",
                    s.rel
                ));
            }
        }
        if !SQL_HOMES.contains(&s.module.as_str()) {
            let n = sql_count(&s.code);
            if n > 0 {
                found.insert(format!("sql {}", s.rel), n);
            }
        }
        if NO_TX.contains(&s.module.as_str()) {
            let n = tx_count(&s.code);
            if n > 0 {
                found.insert(format!("tx {}", s.rel), n);
            }
        }
        strings += string_errors(&s.code);
    }
    // A workspace crate's row is what its Cargo.toml lets the compiler allow: the modules of
    // the `world-*` crates it depends on, exactly.
    let exports = reexports();
    for (krate, module, _) in &exports {
        let mut may: BTreeSet<String> = BTreeSet::new();
        for dep in crate_deps(krate) {
            let provided: Vec<&String> = exports
                .iter()
                .filter(|(k, _, _)| *k == dep)
                .map(|(_, m, _)| m)
                .collect();
            if provided.is_empty() {
                problems.push(format!(
                    "crates/{krate} depends on {dep}, which src/lib.rs does not re-export"
                ));
            }
            may.extend(provided.into_iter().cloned());
        }
        let row = allowed.get(module).cloned().unwrap_or_default();
        if may != row {
            problems.push(format!(
                "module {module} (crates/{krate}): its Cargo.toml allows {may:?}, the allowed-edges table says {row:?}"
            ));
        }
    }
    // Edges count once per file; the table lists each edge with the number of files.
    for (key, n) in &found {
        match debt.get(key) {
            None if key.starts_with("edge") => problems.push(format!(
                "{key} ({n} file(s)): not allowed by docs/ARCHITECTURE.md"
            )),
            None => problems.push(format!("{key}: {n} new (none allowed)")),
            Some(d) if n > d => problems.push(format!("{key}: {n}, the debt table allows {d}")),
            Some(d) if n < d => problems.push(format!(
                "{key}: down to {n} from {d}: lower the debt row in docs/ARCHITECTURE.md"
            )),
            Some(_) => {}
        }
    }
    // The counted rows: a rise fails, a fall asks for the row to be lowered (a ratchet).
    let counted = [
        ("string-errors", strings, "Result<_, String> in the library"),
        ("conn-callers", conns, ".conn() calls outside src/store"),
        (
            "front-end-past-ops",
            past_ops,
            "references past ops in cli/ and serve/",
        ),
    ];
    for (key, n, what) in counted {
        if key != "string-errors" && !debt.contains_key(key) && n > 0 {
            problems.push(format!("{what}: {n}, and the debt table has no {key} row"));
        }
    }
    for (key, d) in &debt {
        if let Some((_, n, what)) = counted.iter().find(|(k, _, _)| k == key) {
            if n > d {
                problems.push(format!("{what}: {n}, the debt table allows {d}"));
            } else if n < d {
                problems.push(format!(
                    "{what}: down to {n} from {d}: lower the {key} row in docs/ARCHITECTURE.md"
                ));
            }
        } else if !found.contains_key(key) {
            problems.push(format!(
                "{key}: paid off — delete its row from the debt table"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "layering (docs/ARCHITECTURE.md \"Layering\"):\n  {}",
        problems.join("\n  ")
    );
}

/// The checks themselves: each would catch what it is meant to catch.
#[test]
fn the_scanners_see_edges_sql_and_transactions() {
    let code = "use crate::store::Store;\nlet x = my_crate::foo;\nconn.execute(\"INSERT INTO t VALUES (1)\", [])?;\nlet s = \"Delete me\";\nlet tx = store.immediate()?;\nfn f() -> Result<(), String> {}\n";
    assert_eq!(
        crate_refs(code).into_iter().collect::<Vec<_>>(),
        vec!["store"]
    );
    assert_eq!(sql_count(code), 1);
    let tables: BTreeSet<String> = ["objects".to_string(), "journal".to_string()].into();
    let named = |c: &str| {
        store_tables_named(c, &tables)
            .into_iter()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        named("x(\"SELECT payload FROM objects WHERE semantic_id = ?1\");"),
        ["objects"]
    );
    assert_eq!(
        named("x(r#\"DELETE FROM mission_journal WHERE \"seq\" > 1\"#); y(\"UPDATE journal SET a = \\\"b\\\"\");"),
        ["journal"]
    );
    assert!(
        named("let s = \"objects of the journal\"; x(\"SELECT 1 FROM limits_events\");").is_empty()
    );
    assert_eq!(tx_count(code), 1);
    assert_eq!(string_errors(code), 1);
    assert_eq!(conn_calls("let c = store.conn();\nf(s.conn(), x.conn)"), 2);
    assert_eq!(
        past_ops_refs(
            "use crate::store::read::Space;\nuse crate::store::Store;\ncrate::ops::x(crate::broker::y);\nworld_crate::z; crate::store::reads;"
        ),
        3
    );
    assert_eq!(
        string_errors(
            "fn g(q: &HashMap<String, String>) -> Result<usize, E> {}\nfn h() -> Result<HashMap<String, String>, String> {}\n"
        ),
        1
    );
    assert_eq!(
        tx_count(
            "let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;"
        ),
        1
    );
}

/// Environment reads of a `WORLD_TEST_*` hook in `code` that do not go through
/// `testhook::var` (issue 26 §1: every hook is read in one place, compiled out of release
/// builds).
fn hook_reads(code: &str) -> usize {
    code.match_indices("env::var")
        .filter(|(i, _)| {
            let rest = &code[*i..];
            let call = &rest[..rest.find(')').unwrap_or(rest.len())];
            call.contains("\"WORLD_TEST_")
        })
        .count()
}

/// Test hooks (DEC-TRUST3-1): no module but `testhook` reads a `WORLD_TEST_*` variable, so a
/// release build, where `testhook::var` answers nothing, honours none of them.
#[test]
fn only_testhook_reads_test_hooks() {
    assert_eq!(hook_reads("std::env::var(\"WORLD_TEST_NOW\")"), 1);
    assert_eq!(hook_reads("std::env::var_os(\"WORLD_TEST_X\")"), 1);
    assert_eq!(hook_reads("crate::testhook::var(\"WORLD_TEST_NOW\")"), 0);
    let bad: Vec<String> = sources()
        .into_iter()
        .filter(|s| s.rel != "src/testhook.rs" && hook_reads(&s.code) > 0)
        .map(|s| s.rel)
        .collect();
    assert!(
        bad.is_empty(),
        "read a WORLD_TEST_ hook outside src/testhook.rs: {bad:?}"
    );
    let hooks = std::fs::read_to_string(Path::new(ROOT).join("src/testhook.rs")).unwrap();
    assert!(
        hooks.contains("#[cfg(not(feature = \"test-hooks\"))]"),
        "testhook::var must answer nothing without the test-hooks feature"
    );
}

/// `src/lib.rs`'s module list names every top-level module and nothing else (issue 28 §5:
/// docs true), and every module it declares has a row in ARCHITECTURE.md's "One job" table.
#[test]
fn the_library_docs_name_every_module() {
    let lib = std::fs::read_to_string(Path::new(ROOT).join("src/lib.rs")).unwrap();
    let arch = std::fs::read_to_string(Path::new(ROOT).join("docs/ARCHITECTURE.md")).unwrap();
    let mut declared: BTreeSet<String> = lib
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';').to_string())
        .collect();
    declared.extend(reexports().into_iter().map(|(_, m, _)| m));
    let documented: BTreeSet<String> = lib
        .lines()
        .filter(|l| l.starts_with("//! - [`"))
        .filter_map(|l| l.split('`').nth(1))
        .map(str::to_string)
        .collect();
    let exported: BTreeSet<String> = reexports().into_iter().map(|(k, _, _)| k).collect();
    let on_disk: BTreeSet<String> = std::fs::read_dir(Path::new(ROOT).join("crates"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        exported, on_disk,
        "crates/: every workspace crate is re-exported by src/lib.rs, and only those"
    );
    assert_eq!(
        declared, documented,
        "src/lib.rs: the `//! - [`module`]` list and the `pub mod` / `pub use world_…` lines disagree"
    );
    let start = arch
        .find("| Module | One job |")
        .expect("docs/ARCHITECTURE.md has the \"One job\" table");
    let job_rows: BTreeSet<String> = arch[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .filter_map(|l| l.split('|').nth(1))
        .map(|c| c.trim().trim_matches('`').to_string())
        .collect();
    let missing: Vec<&String> = declared.iter().filter(|m| !job_rows.contains(*m)).collect();
    assert!(
        missing.is_empty(),
        "modules with no row in docs/ARCHITECTURE.md's \"One job\" table: {missing:?}"
    );
}
