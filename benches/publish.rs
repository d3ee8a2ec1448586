//! Publish of 200 transitions: time of `plan_publish` + `commit_publish` on a fresh store,
//! and the revision object's size against the TR-CJSON-1 revision bounds
//! (store-format.md §7.2). Run with `cargo bench --bench publish`.
//!
//! The interpreter is `AcceptingCheckDouble`, a test double whose `check` accepts every
//! source at once, so the numbers measure `world`'s own publish work (manifest, canon.Source,
//! hashing, TR-CJSON-1, SQLite), not an interpreter's type checker.

use std::time::{Duration, Instant};

use world::encoding::trcjson::Bounds;
use world::encoding::HashRef;
use world::interp::{CheckOutcome, Interpreter, RunError, RunLimits, RunOutcome};
use world::store::{Store, WriteOptions};
use world::transitions::publish::{commit_publish, plan_publish, Outcome, PlanOptions};
use world::transitions::{manifest, registry};

const N: usize = 200;
const ROUNDS: usize = 5;

/// Test double: accepts every source.
struct AcceptingCheckDouble {
    reference: String,
}

impl Interpreter for AcceptingCheckDouble {
    fn interpreter_ref(&self) -> &str {
        &self.reference
    }
    fn version_text(&self) -> &str {
        "AILANG v0.41.0\n"
    }
    fn check(&self, _: &[u8], _: RunLimits) -> Result<CheckOutcome, RunError> {
        Ok(CheckOutcome {
            passed: true,
            diagnostics: String::new(),
        })
    }
    fn run(&self, _: &[u8], _: &[u8], _: RunLimits) -> Result<RunOutcome, RunError> {
        Err(RunError::Unavailable("accepting check double".into()))
    }
}

fn manifest_text(dir: &std::path::Path) -> String {
    let mut entries = Vec::with_capacity(N);
    for i in 0..N {
        let file = format!("t{i:03}.ail");
        let body: String = (0..40)
            .map(|l| format!("  let v{l} = \"line {l} of transition {i}\"  \n"))
            .collect();
        std::fs::write(
            dir.join(&file),
            format!("module t{i:03}\nimport std/json\nexport func main(input: string) -> string {{\n{body}  input\n}}\n"),
        )
        .expect("write source");
        let props: String = (0..24)
            .map(|p| format!(r#""field{p}":{{"type":"string","maxLength":{}}}"#, 100 + p))
            .collect::<Vec<_>>()
            .join(",");
        entries.push(format!(
            r#"{{"id":"se/tools.t{i:03}","title":"Tool {i}","description":"Benchmark transition number {i}, with a description of ordinary length for a tool list.","transitionFnFile":"{file}","inputSchema":{{"type":"object","additionalProperties":false,"properties":{{{props}}}}},"outputSchema":{{"type":"object","required":["world"]}},"access":{{"effect":"Workspace.Read","scope":"worktree","cost":0}},"declaredEffects":[{{"effect":"Workspace.Read","scope":"worktree","cost":1}}]}}"#
        ));
    }
    format!("[{}]", entries.join(","))
}

fn main() {
    let interp = AcceptingCheckDouble {
        reference: HashRef::of(b"accepting check double").to_string(),
    };
    let mut plan_times = Vec::new();
    let mut commit_times = Vec::new();
    let mut size = 0;
    for _ in 0..ROUNDS {
        let dir = tempfile::tempdir().expect("tempdir");
        let text = manifest_text(dir.path());
        let mut store = Store::open_write(
            &dir.path().join("bench.db"),
            WriteOptions {
                create: true,
                wait_lock: None,
            },
        )
        .expect("open store");
        let opts = PlanOptions {
            base_dir: dir.path().to_path_buf(),
            bootstrap_epoch: true,
        };
        let t0 = Instant::now();
        let m = manifest::parse(text.as_bytes()).expect("manifest");
        let plan = plan_publish(store.conn(), &m, &interp, &opts, &mut |_| {}).expect("plan");
        let t1 = Instant::now();
        let outcome = commit_publish(&mut store, &plan, true).expect("commit");
        let t2 = Instant::now();
        let Outcome::Published { head, .. } = outcome else {
            panic!("expected a published revision")
        };
        let obj = store
            .object(&head.to_string())
            .expect("read")
            .expect("revision object");
        size = obj.payload.len();
        assert!(
            size <= Bounds::REVISION.canonical,
            "revision of {N} transitions is {size} bytes; the canonical bound is {}",
            Bounds::REVISION.canonical
        );
        let rev = registry::Revision::decode(&obj.payload).expect("decode");
        assert_eq!(rev.entries.len(), N);
        plan_times.push(t1 - t0);
        commit_times.push(t2 - t1);
    }
    plan_times.sort();
    commit_times.sort();
    let median = |v: &[Duration]| v[v.len() / 2];
    println!(
        "publish {N} transitions: plan median {:?} (min {:?}), commit median {:?} (min {:?}); revision object {size} bytes ({:.2}% of the {}-byte canonical bound; {N}/{} entries)",
        median(&plan_times),
        plan_times[0],
        median(&commit_times),
        commit_times[0],
        size as f64 * 100.0 / Bounds::REVISION.canonical as f64,
        Bounds::REVISION.canonical,
        registry::MAX_ENTRIES,
    );
}
