//! Tests drive the library with `DirectiveCheckDouble`, a test double for an interpreter
//! whose `check` fails exactly when the source holds an `import world/…` line (with the
//! `LDR001` text the real loaders print) or a `FAIL_CHECK` marker.

use super::*;
use crate::encoding::trcjson::{Bounds, CValue};
use crate::interp::{CheckOutcome, RunOutcome};
use crate::store::WriteOptions;
use crate::transitions::manifest;
use std::cell::RefCell;

#[test]
fn diagnostics_never_carry_the_sources_own_words() {
    let d = "Error: LDR001: module not found: hunter2 (at /x/t.ail:1:1)\n  1 | import hunter2\n";
    assert_eq!(
        without_source_text(d),
        "Error: LDR001: module not found: … (at /x/t.ail:1:1)"
    );
    let d = "Error: PAR001: expected a declaration, found 'hunter2' (at /x/t.ail:1:1)";
    assert_eq!(
        without_source_text(d),
        "Error: PAR001: expected a declaration, found '…' (at /x/t.ail:1:1)"
    );
    assert!(!without_source_text("PAR002:\"hunter2").contains("hunter2"));
    assert_eq!(
        without_source_text("Error: LDR001: module not found: world/store (at t.ail:2:1)"),
        "Error: LDR001: module not found: world/store (at t.ail:2:1)"
    );
    assert!(
        !without_source_text("LDR001: module not found: world/hunter2X (at t:1:1)")
            .contains("hunter2")
    );
    assert!(!without_source_text("TC001: x: 'a: hunter2'").contains("hunter2"));
}

/// Test double: an interpreter whose `check` obeys directives in the source.
struct DirectiveCheckDouble {
    reference: String,
    version: String,
    checks: std::sync::atomic::AtomicUsize,
}

impl DirectiveCheckDouble {
    fn new(version: &str) -> Self {
        DirectiveCheckDouble {
            reference: HashRef::of(format!("double:{version}").as_bytes()).to_string(),
            version: format!("{version}\n"),
            checks: Default::default(),
        }
    }
}

impl Interpreter for DirectiveCheckDouble {
    fn interpreter_ref(&self) -> &str {
        &self.reference
    }
    fn version_text(&self) -> &str {
        &self.version
    }
    fn check(&self, source: &[u8], _limits: RunLimits) -> Result<CheckOutcome, RunError> {
        self.checks
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let text = String::from_utf8_lossy(source);
        if let Some(line) = text
            .lines()
            .find(|l| l.trim_start().starts_with("import world/"))
        {
            let module = line.trim_start().trim_start_matches("import ").trim();
            return Ok(CheckOutcome {
                passed: false,
                diagnostics: format!("Error: LDR001: module not found: {module}\n"),
            });
        }
        if text.contains("FAIL_CHECK") {
            return Ok(CheckOutcome {
                passed: false,
                diagnostics: "Error: TC_ARITY_001: wrong arity\n".into(),
            });
        }
        Ok(CheckOutcome {
            passed: true,
            diagnostics: String::new(),
        })
    }
    fn run(&self, _: &[u8], _: &[u8], _: RunLimits) -> Result<RunOutcome, RunError> {
        Err(RunError::Unavailable(
            "the check double does not run programs".into(),
        ))
    }
}

struct Fixture {
    dir: tempfile::TempDir,
    store: Store,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_write(
        &dir.path().join("w.db"),
        WriteOptions {
            create: true,
            wait_lock: None,
        },
    )
    .unwrap();
    Fixture { dir, store }
}

impl Fixture {
    fn write(&self, name: &str, bytes: &[u8]) {
        let p = self.dir.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    fn opts(&self, bootstrap: bool) -> PlanOptions {
        PlanOptions {
            base_dir: self.dir.path().to_path_buf(),
            bootstrap_epoch: bootstrap,
        }
    }
    fn plan(&self, m: &Manifest, i: &dyn Interpreter) -> Result<Plan, PublishError> {
        plan_publish(self.store.conn(), m, i, &self.opts(true), &mut |_| {})
    }
    fn count(&self, semantic_id: &str) -> i64 {
        self.store
            .conn()
            .query_row(
                "SELECT count(*) FROM objects WHERE semantic_id = ?1",
                [semantic_id],
                |r| r.get(0),
            )
            .unwrap()
    }
}

fn entry_json(id: &str, file: &str, title: &str) -> String {
    format!(
        r#"{{"id":"{id}","title":"{title}","description":"d","transitionFnFile":"{file}","inputSchema":{{"type":"object"}},"outputSchema":{{"type":"object"}},"access":{{"effect":"Workspace.Read","scope":"worktree","cost":0}},"declaredEffects":[{{"effect":"Workspace.Read","scope":"worktree","cost":1}}]}}"#
    )
}

fn manifest_of(entries: &[String]) -> Manifest {
    manifest::parse(format!("[{}]", entries.join(",")).as_bytes()).unwrap()
}

const ECHO: &[u8] =
    b"module echo\nimport std/json\nexport func main(input: string) -> string { input }  \r\n\n";

#[test]
fn first_publish_then_unchanged_then_changed() {
    let mut f = fixture();
    f.write("echo.ail", ECHO);
    f.write(
        "count.ail",
        b"module count\nexport func main(i: string) -> string { i }\n",
    );
    let interp = DirectiveCheckDouble::new("AILANG v0.41.0");
    let m = manifest_of(&[
        entry_json("tools.echo", "echo.ail", "Echo"),
        entry_json("count", "count.ail", "Count"),
    ]);
    let mut events = Vec::new();
    let plan = plan_publish(f.store.conn(), &m, &interp, &f.opts(true), &mut |p| {
        if let Progress::Checking { index, .. } = p {
            events.push(index)
        }
    })
    .unwrap();
    assert_eq!(events, vec![0, 1]);
    assert_eq!(plan.diff.added, vec!["count", "tools.echo"]);
    assert!(!plan.unchanged());
    assert_eq!(plan.derived_epoch, Some((1, "AILANG v0.41.0".into())));
    assert!(plan.epoch_bootstrap.is_some());
    assert_eq!(plan.revision.revision, 1);
    assert_eq!(f.count(SOURCE_SEMANTIC_ID), 0, "planning writes nothing");
    let out = commit_publish(&mut f.store, &plan, false).unwrap();
    let Outcome::Published { revision: 1, head } = out else {
        panic!("{out:?}")
    };
    assert!(out.line().starts_with(&format!(
        "published transition registry revision 1 (head {head}); the daemon's A2A card"
    )));
    // The stored objects.
    let rev_obj = f.store.object(&head.to_string()).unwrap().unwrap();
    assert_eq!(rev_obj.meta.provenance, "host/transitionreg");
    assert_eq!(rev_obj.meta.interface_hash, INTERFACE_HASH_V1);
    assert_eq!(rev_obj.meta.semantic_id, "world/transition-registry/v1");
    let rev = Revision::decode(&rev_obj.payload).unwrap();
    let echo = rev.get("tools.echo").unwrap();
    let src = f
        .store
        .object(&echo.transition_fn.to_string())
        .unwrap()
        .unwrap();
    assert_eq!(src.payload, canon::source(ECHO).unwrap());
    assert_eq!(src.meta.provenance, "cmd/world-publish");
    assert_eq!(src.meta.interface_hash, source_interface_hash().to_string());
    assert_eq!(
        src.meta.interface_hash,
        "sha256:b0e3037101d64d4565d0184530af86138ba23874e32d71e64d8d7c060136834c"
    );
    assert_eq!(echo.interpreter.to_string(), interp.reference);
    assert_eq!(
        f.store.registry_head(epoch::SEMANTIC_ID).unwrap().unwrap(),
        "sha256:c56048c5da6cdbd7b725e0db8be2b3ea0e6fea18b6298ea94b233e617580d591"
    );

    // Identical republish: UNCHANGED, nothing written.
    let objects_before = f.count("world/transition-registry/v1");
    let again = f.plan(&m, &interp).unwrap();
    assert!(again.unchanged());
    let out = commit_publish(&mut f.store, &again, false).unwrap();
    assert_eq!(out, Outcome::Unchanged { revision: 1, head });
    assert_eq!(
        out.line(),
        format!("transition registry UNCHANGED at revision 1 (head {head}); nothing written")
    );
    assert_eq!(f.count("world/transition-registry/v1"), objects_before);

    // A changed title, unattended: revision 2, parent = revision 1, one changed id.
    let m2 = manifest_of(&[entry_json("count", "count.ail", "Counter")]);
    let plan2 = f.plan(&m2, &interp).unwrap();
    assert_eq!(
        plan2.diff.changed,
        vec![Changed {
            id: "count".into(),
            fields: vec!["title"]
        }]
    );
    assert!(plan2.diff.added.is_empty() && plan2.diff.removed.is_empty());
    assert!(plan2.epoch_bootstrap.is_none());
    let Outcome::Published {
        revision: 2,
        head: head2,
    } = commit_publish(&mut f.store, &plan2, true).unwrap()
    else {
        panic!("expected revision 2")
    };
    let obj2 = f.store.object(&head2.to_string()).unwrap().unwrap();
    assert_eq!(obj2.meta.provenance, "cmd/world-publish:unattended");
    let rev2 = Revision::decode(&obj2.payload).unwrap();
    assert_eq!(rev2.parent, Some(head));
    assert_eq!(rev2.entries.len(), 2, "kept tools.echo, replaced count");
    assert_eq!(rev2.get("count").unwrap().title, "Counter");
}

#[test]
fn world_import_fails_with_ldr001_and_is_never_stored() {
    let f = fixture();
    f.write(
        "bad.ail",
        b"module bad\nimport world/store\nexport func main(i: string) -> string { i }\n",
    );
    let interp = DirectiveCheckDouble::new("AILANG v0.41.0");
    let m = manifest_of(&[entry_json("bad", "bad.ail", "Bad")]);
    let e = f.plan(&m, &interp).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("is not loadable under its pinned interpreter"),
        "{text}"
    );
    // A world/… module path is the reference's own, kept (DEC-TRUST3-6).
    assert!(
        text.contains("Error: LDR001: module not found: world/store"),
        "{text}"
    );
    assert!(
        text.contains("world/* imports are not publishable"),
        "{text}"
    );
    assert_eq!(f.count(SOURCE_SEMANTIC_ID), 0);
    // A failure that is not a world import does not get the note.
    f.write("arity.ail", b"FAIL_CHECK\n");
    let m = manifest_of(&[entry_json("arity", "arity.ail", "A")]);
    let text = f.plan(&m, &interp).unwrap_err().to_string();
    assert!(
        text.contains("TC_ARITY_001") && !text.contains("world/*"),
        "{text}"
    );
}

#[test]
fn bad_source_bytes_are_refused() {
    let f = fixture();
    let interp = DirectiveCheckDouble::new("AILANG v0.41.0");
    for (name, bytes, want) in [
        ("bom.ail", &b"\xEF\xBB\xBFmodule m\n"[..], "byte-order mark"),
        ("nul.ail", &b"module m\x00\n"[..], "NUL byte"),
        ("utf8.ail", &b"module \x80m\n"[..], "not valid UTF-8"),
        ("blank.ail", &b"  \n\t\n"[..], "empty"),
    ] {
        f.write(name, bytes);
        let m = manifest_of(&[entry_json("t", name, "T")]);
        let text = f.plan(&m, &interp).unwrap_err().to_string();
        assert!(text.contains(want), "{name}: {text}");
    }
    assert_eq!(interp.checks.load(std::sync::atomic::Ordering::SeqCst), 0);
    // A missing file is named with every place it was looked for (DEC-UX-13).
    let m = manifest_of(&[entry_json("t", "absent.ail", "T")]);
    assert!(matches!(
        f.plan(&m, &interp),
        Err(PublishError::SourceNotFound { ref tried, .. }) if tried.len() == 2
    ));
}

#[test]
fn source_by_ref_must_exist() {
    let mut f = fixture();
    let interp = DirectiveCheckDouble::new("AILANG v0.41.0");
    let missing = HashRef::of(b"nothing");
    let by_ref = entry_json("t", "x", "T").replace(
        r#""transitionFnFile":"x""#,
        &format!(r#""transitionFn":"{missing}""#),
    );
    let m = manifest_of(std::slice::from_ref(&by_ref));
    let text = f.plan(&m, &interp).unwrap_err().to_string();
    assert!(
        text.ends_with(
            "— publish the transition source object first, or name it via transitionFnFile"
        ),
        "{text}"
    );
    // Store it, then the ref publishes (and is still checked).
    let src = canon::source(ECHO).unwrap();
    let obj = Object::new(SOURCE_SEMANTIC_ID, SOURCE_PROVENANCE, src);
    let tx = f.store.immediate().unwrap();
    store::put_object(&tx, &obj).unwrap();
    tx.commit().unwrap();
    let m = manifest_of(&[by_ref.replace(&missing.to_string(), &obj.meta.hash)]);
    let plan = f.plan(&m, &interp).unwrap();
    assert!(plan.sources.is_empty());
    assert_eq!(interp.checks.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[test]
fn head_moved_between_plan_and_commit_writes_nothing() {
    let mut f = fixture();
    f.write(
        "a.ail",
        b"module a\nexport func main(input: string) -> string = input\n",
    );
    f.write(
        "b.ail",
        b"module b\nexport func main(input: string) -> string = input\n",
    );
    let interp = DirectiveCheckDouble::new("AILANG v0.41.0");
    let plan_a = f
        .plan(&manifest_of(&[entry_json("a", "a.ail", "A")]), &interp)
        .unwrap();
    let plan_b = f
        .plan(&manifest_of(&[entry_json("b", "b.ail", "B")]), &interp)
        .unwrap();
    // Another writer lands revision 1 first (here: plan A).
    commit_publish(&mut f.store, &plan_a, false).unwrap();
    let head = f.store.registry_head(registry::SEMANTIC_ID).unwrap();
    let sources = f.count(SOURCE_SEMANTIC_ID);
    let e = commit_publish(&mut f.store, &plan_b, false).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the registry head kept moving during publish; re-run the command"
    );
    assert_eq!(f.store.registry_head(registry::SEMANTIC_ID).unwrap(), head);
    assert_eq!(f.count(SOURCE_SEMANTIC_ID), sources, "nothing written");

    // Same id, different bytes: the spec's conflict message.
    let plan_a2 = f
        .plan(&manifest_of(&[entry_json("a", "a.ail", "A2")]), &interp)
        .unwrap();
    let plan_a3 = f
        .plan(&manifest_of(&[entry_json("a", "a.ail", "A3")]), &interp)
        .unwrap();
    commit_publish(&mut f.store, &plan_a2, false).unwrap();
    let e = commit_publish(&mut f.store, &plan_a3, false).unwrap_err();
    assert!(e.to_string().starts_with(
            "both this publish and the registry's revision 2 set \"a\" with different bytes; nothing was written — "
        ), "{e}");
}

#[test]
fn epoch_rules_in_publish() {
    let mut f = fixture();
    f.write(
        "a.ail",
        b"module a\nexport func main(input: string) -> string = input\n",
    );
    let m = manifest_of(&[entry_json("a", "a.ail", "A")]);
    let v41 = DirectiveCheckDouble::new("AILANG v0.41.0");
    // No epoch registry and no bootstrap requested.
    let e = plan_publish(f.store.conn(), &m, &v41, &f.opts(false), &mut |_| {}).unwrap_err();
    assert!(e.to_string().starts_with(
            "interpreter release \"AILANG v0.41.0\" is nominated by NO epoch in world/epoch-registry/v1; "
        ), "{e}");
    let tx = f.store.immediate().unwrap();
    epoch::bootstrap(&tx, "AILANG v0.41.0").unwrap();
    tx.commit().unwrap();
    // Another release: not nominated (no bootstrap) / divergence (bootstrap).
    let v52 = DirectiveCheckDouble::new("AILANG v0.52.1");
    let e = plan_publish(f.store.conn(), &m, &v52, &f.opts(false), &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("is nominated by NO epoch"), "{e}");
    let e = f.plan(&m, &v52).unwrap_err();
    assert!(matches!(
        e,
        PublishError::Epoch(EpochError::Divergence { .. })
    ));
    assert!(e.is_integrity());
    // A stated epoch that does not nominate the release.
    let stated = entry_json("a", "a.ail", "A").replacen('{', r#"{"semanticsEpoch":2,"#, 1);
    let e = f.plan(&manifest_of(&[stated]), &v41).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("semanticsEpoch 2 does not nominate"),
        "{e}"
    );
    // A stated epoch that does: no "derived" line.
    let stated = entry_json("a", "a.ail", "A").replacen('{', r#"{"semanticsEpoch":1,"#, 1);
    let plan = f.plan(&manifest_of(&[stated]), &v41).unwrap();
    assert_eq!(plan.derived_epoch, None);
    assert!(plan.epoch_bootstrap.is_none());
}

#[test]
fn interpreter_resolution() {
    struct Double {
        archived: Vec<HashRef>,
        log: RefCell<Vec<String>>,
    }
    impl InterpreterProvider for Double {
        fn embedded(&self) -> Result<Box<dyn Interpreter>, ProviderError> {
            self.log.borrow_mut().push("embedded".into());
            Ok(Box::new(DirectiveCheckDouble::new(
                "world-ailang-subset dialect 1",
            )))
        }
        fn archive(&self, p: &Path) -> Result<Box<dyn Interpreter>, ProviderError> {
            self.log
                .borrow_mut()
                .push(format!("archive {}", p.display()));
            Ok(Box::new(DirectiveCheckDouble::new("AILANG v0.41.0")))
        }
        fn resolve(&self, r: &HashRef) -> Result<Box<dyn Interpreter>, ProviderError> {
            self.log.borrow_mut().push(format!("resolve {r}"));
            Ok(Box::new(DirectiveCheckDouble::new("AILANG v0.41.0")))
        }
        fn archived(&self) -> Result<Vec<HashRef>, ProviderError> {
            Ok(self.archived.clone())
        }
    }
    let one = HashRef::of(b"1");
    let two = HashRef::of(b"2");
    let p = Double {
        archived: vec![],
        log: RefCell::new(vec![]),
    };
    resolve_interpreter(&InterpreterChoice::Default, &p).unwrap();
    resolve_interpreter(&InterpreterChoice::parse("embedded").unwrap(), &p).unwrap();
    resolve_interpreter(&InterpreterChoice::parse("./bin/ailang").unwrap(), &p).unwrap();
    resolve_interpreter(&InterpreterChoice::parse(&one.to_string()).unwrap(), &p).unwrap();
    assert_eq!(
        *p.log.borrow(),
        vec![
            "embedded".to_string(),
            "embedded".into(),
            "archive ./bin/ailang".into(),
            format!("resolve {one}")
        ]
    );
    let p1 = Double {
        archived: vec![one],
        log: RefCell::new(vec![]),
    };
    resolve_interpreter(&InterpreterChoice::Default, &p1).unwrap();
    assert_eq!(*p1.log.borrow(), vec![format!("resolve {one}")]);
    let p2 = Double {
        archived: vec![one, two],
        log: RefCell::new(vec![]),
    };
    let e = resolve_interpreter(&InterpreterChoice::Default, &p2)
        .err()
        .unwrap();
    assert!(e.to_string().contains("name one with --interpreter"));
    assert!(InterpreterChoice::parse("sha256:abc").is_err());
    assert!(InterpreterChoice::parse("").is_err());
    assert!(!InterpreterChoice::Default.is_explicit());
}

#[test]
fn registry_bounds_hold_for_many_entries() {
    let f = fixture();
    f.write(
        "s.ail",
        b"module s\nexport func main(input: string) -> string = input\n",
    );
    let interp = DirectiveCheckDouble::new("AILANG v0.41.0");
    let entries: Vec<String> = (0..1025)
        .map(|i| entry_json(&format!("t{i:04}"), "s.ail", "T"))
        .collect();
    let text = format!("[{}]", entries.join(","));
    assert_eq!(
        manifest::parse(text.as_bytes()).unwrap_err().to_string(),
        "manifest holds 1025 descriptors; a revision holds at most 1024"
    );
    let m = manifest_of(&entries[..1024]);
    let plan = f.plan(&m, &interp).unwrap();
    assert_eq!(plan.revision.entries.len(), 1024);
    assert!(plan.revision_bytes.len() <= Bounds::REVISION.canonical);
    assert_eq!(plan.sources.len(), 1, "one distinct source, checked once");
    assert_eq!(interp.checks.load(std::sync::atomic::Ordering::SeqCst), 1);
    let _ = CValue::Null;
}

#[test]
fn corrupt_head_is_an_integrity_error() {
    let f = fixture();
    let junk = Object::new(registry::SEMANTIC_ID, PROVENANCE, b"{}".to_vec());
    store::put_object(f.store.conn(), &junk).unwrap();
    store::set_registry_head(f.store.conn(), registry::SEMANTIC_ID, &junk.meta.hash).unwrap();
    let e = read_head(f.store.conn()).unwrap_err();
    assert!(e.is_integrity());
    assert!(e.to_string().contains("missing key \"entries\""), "{e}");
}
