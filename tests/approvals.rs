//! `Human.Approve` / `Human.PollApproval` and `world approval …` end to end through the binary
//! (authority-and-broker.md §11–§12, issue 4; DECISIONS H-13): requests opened by a transition
//! or the CLI, decided at a (pseudo-)terminal or with `--yes`, claimed once by an effect
//! intent, episode binding, bad input that changes nothing.
//!
//! Transition: fixtures/transitions/approval.ail (published from fixtures/transitions/manifest.json).

use crate::terminal;
use terminal::pty;

use crate::invoke_support;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use invoke_support::{assert_exit, json_lines, stderr, stdout_json, Env};
use serde_json::Value;

const APPROVE: &str = "Human.Approve=approvals:5";
const POLL: &str = "Human.PollApproval=approvals:5";

fn env() -> Env {
    let env = Env::bare();
    env.ok(&["genesis"]);
    env.ok(&[
        "publish",
        "--manifest",
        "fixtures/transitions/manifest.json",
        "--yes",
    ]);
    env
}

/// `world ARGS` in a new session with no controlling terminal (a script, CI).
fn detached(env: &Env, args: &[&str]) -> Output {
    let mut c = env.std_cmd(args);
    c.stdin(Stdio::null());
    terminal::detach(&mut c);
    c.output().expect("run world")
}

fn invoke(env: &Env, tok: &Path, args: &str) -> Output {
    let tok = tok.to_string_lossy().into_owned();
    detached(
        env,
        &[
            "invoke",
            "approval",
            "--session",
            &tok,
            "--args",
            args,
            "--json",
        ],
    )
}

/// `world approval request --episode EP --summary S [EXTRA…]`; returns the request ref.
fn request(env: &Env, episode: &str, summary: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "approval",
        "request",
        "--episode",
        episode,
        "--summary",
        summary,
    ];
    args.extend(extra);
    env.ok(&args).trim().to_string()
}

fn output_of(out: &Output) -> Value {
    stdout_json(out)["output"].clone()
}

fn approvals(env: &Env) -> Vec<Value> {
    json_lines(&env.ok(&["approval", "list", "--json"]))
}

fn claims(env: &Env) -> Vec<(String, String, String)> {
    let conn = env.conn();
    let mut stmt = conn
        .prepare("SELECT approval_ref, request_ref, invocation_id FROM approval_claims ORDER BY invocation_id")
        .expect("prepare");
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows")
}

#[test]
fn a_cli_request_decided_with_yes_is_claimed_once_by_an_effect() {
    let env = env();
    let tok = env.mint("ep1", &[APPROVE, POLL]);
    let r = request(&env, "ep1", "deploy v2 to prod", &["--requester", "alice"]);
    assert!(r.starts_with("sha256:"), "{r}");

    let poll = invoke(
        &env,
        &tok,
        &format!(r#"{{"approval_ref":"{r}","poll":true}}"#),
    );
    assert_exit(&poll, 0);
    assert_eq!(output_of(&poll)["approval"]["state"], "pending");

    let decided = env.ok(&[
        "approval",
        "decide",
        &r,
        "--approve",
        "--yes",
        "--decided-by",
        "bob",
    ]);
    let decision = decided.trim().to_string();
    let shown = json_lines(&env.ok(&["approval", "show", &r, "--json"]));
    assert_eq!(shown[0]["state"], "approved");
    assert_eq!(shown[0]["decidedBy"], "bob");
    assert_eq!(
        shown[0]["attended"], false,
        "--yes is recorded as unattended"
    );
    assert_eq!(shown[0]["decisionRef"], decision.as_str());

    let first = invoke(&env, &tok, &format!(r#"{{"approval_ref":"{r}"}}"#));
    assert_exit(&first, 0);
    let o = output_of(&first);
    assert_eq!(o["approved"], true, "{o}");
    let by = o["approval"]["claimed_by"]
        .as_str()
        .expect("claimed_by")
        .to_string();
    assert!(by.starts_with("effect:ep1:"), "{by}");
    assert_eq!(
        claims(&env),
        vec![(decision.clone(), r.clone(), by.clone())]
    );

    // Single use: the second claim fails the effect (unit spent), the claim is unchanged.
    let second = invoke(&env, &tok, &format!(r#"{{"approval_ref":"{r}"}}"#));
    assert_exit(&second, 9);
    assert!(
        stderr(&second).contains("ErrApprovalAlreadyConsumed"),
        "{}",
        stderr(&second)
    );
    assert_eq!(claims(&env).len(), 1);
    let failed: Vec<Value> = env
        .effects(&[])
        .into_iter()
        .filter(|e| e["failed"] == true)
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    let rec = failed[0]["ref"].as_str().expect("record ref").to_string();
    let show = env.ok(&["effects", "show", &rec]);
    assert!(
        show.contains("failure  ErrApprovalAlreadyConsumed"),
        "{show}"
    );
    // The same record by the short form tables print, and by its effect intent id.
    let short = format!("{}…", &rec[7..19]);
    assert_eq!(env.ok(&["effects", "show", &short]), show);
    let intent = failed[0]["intentId"].as_str().expect("intent id");
    assert_eq!(env.ok(&["effects", "show", intent]), show);
    assert_exit(&env.run(&["effects", "show", "abc"]), 2);
    assert_exit(&env.run(&["effects", "show", "effect:ep1:999"]), 1);

    // A decision is written once.
    let again = env.run(&["approval", "decide", &r, "--deny", "--yes"]);
    assert_exit(&again, 1);
    assert!(
        stderr(&again).contains("already decided"),
        "{}",
        stderr(&again)
    );
    let list = approvals(&env);
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["claimedBy"], by.as_str());
    env.verify_ok();
}

#[test]
fn a_transition_opens_a_request_that_stays_pending_without_a_terminal() {
    let env = env();
    let tok = env.mint("ep1", &[APPROVE, POLL]);
    let out = invoke(&env, &tok, r#"{"summary":"rotate the signing key"}"#);
    assert_exit(&out, 0);
    let o = output_of(&out);
    assert_eq!(o["approved"], false);
    assert_eq!(o["approval"]["state"], "pending");
    assert!(
        o["approval"]["note"]
            .as_str()
            .unwrap_or_default()
            .contains("world approval decide"),
        "{o}"
    );
    let r = o["approval"]["approval_ref"]
        .as_str()
        .expect("ref")
        .to_string();
    let list = approvals(&env);
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["requestRef"], r.as_str());
    assert_eq!(list[0]["episode"], "ep1");
    assert_eq!(list[0]["summary"], "rotate the signing key");
    assert!(list[0]["origin"]
        .as_str()
        .unwrap_or_default()
        .starts_with("effect:ep1:"));

    env.ok(&["approval", "decide", &r, "--deny", "--yes"]);
    let poll = invoke(
        &env,
        &tok,
        &format!(r#"{{"approval_ref":"{r}","poll":true}}"#),
    );
    assert_eq!(output_of(&poll)["approval"]["state"], "denied");
    // Approve on a denied request answers denied; nothing is claimed.
    let denied = invoke(&env, &tok, &format!(r#"{{"approval_ref":"{r}"}}"#));
    assert_exit(&denied, 0);
    assert_eq!(output_of(&denied)["approved"], false);
    assert!(claims(&env).is_empty());
    let pending = json_lines(&env.ok(&["approval", "list", "--state", "pending", "--json"]));
    assert!(pending.is_empty());
    env.verify_ok();
}

#[test]
fn another_episodes_request_is_refused_and_not_claimed() {
    let env = env();
    let tok2 = env.mint("ep2", &[APPROVE, POLL]);
    let r = request(&env, "ep1", "ep1 only", &[]);
    env.ok(&["approval", "decide", &r, "--approve", "--yes"]);
    for args in [
        format!(r#"{{"approval_ref":"{r}"}}"#),
        format!(r#"{{"approval_ref":"{r}","poll":true}}"#),
    ] {
        let out = invoke(&env, &tok2, &args);
        assert_exit(&out, 9);
        assert!(
            stderr(&out).contains("belongs to another episode"),
            "{}",
            stderr(&out)
        );
    }
    assert!(claims(&env).is_empty());
    // An unknown ref fails the effect the same way, naming it.
    let unknown = format!("sha256:{}", "ab".repeat(32));
    let out = invoke(&env, &tok2, &format!(r#"{{"approval_ref":"{unknown}"}}"#));
    assert_exit(&out, 9);
    assert!(
        stderr(&out).contains("no approval request"),
        "{}",
        stderr(&out)
    );
    // A malformed ref is refused by the transition before any effect: no unit is spent.
    let spent = env.effects(&[]).len();
    let out = invoke(&env, &tok2, r#"{"approval_ref":"SHA256:AB"}"#);
    assert_exit(&out, 7);
    assert_eq!(env.effects(&[]).len(), spent);
}

#[test]
fn an_exhausted_budget_denies_before_any_request_is_opened() {
    let env = env();
    let tok = env.mint("ep1", &["Human.Approve=approvals:1"]);
    assert_exit(&invoke(&env, &tok, r#"{"summary":"one"}"#), 0);
    let out = invoke(&env, &tok, r#"{"summary":"two"}"#);
    assert_exit(&out, 8);
    assert_eq!(approvals(&env).len(), 1, "a denial opens no request");
}

#[test]
fn bad_approval_input_is_refused_and_changes_nothing() {
    let env = env();
    let r = request(&env, "ep1", "x", &[]);
    let before = env.fingerprint();
    let long = "y".repeat(4097);
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (
            vec!["approval", "request", "--episode", "EP!", "--summary", "x"],
            2,
            "episode",
        ),
        (
            vec!["approval", "request", "--episode", "ep1", "--summary", "  "],
            2,
            "summary is empty",
        ),
        (
            vec![
                "approval",
                "request",
                "--episode",
                "ep1",
                "--summary",
                &long,
            ],
            2,
            "4097 bytes",
        ),
        (
            vec![
                "approval",
                "request",
                "--episode",
                "ep1",
                "--summary",
                "x",
                "--requester",
                "a b",
            ],
            2,
            "--requester",
        ),
        (
            vec!["approval", "decide", "sha256:zz", "--approve", "--yes"],
            2,
            "not a sha256: ref",
        ),
        (
            vec![
                "approval",
                "decide",
                &r,
                "--approve",
                "--yes",
                "--decided-by",
                "",
            ],
            2,
            "--decided-by",
        ),
        (
            vec!["approval", "decide", &r, "--approve", "--deny", "--yes"],
            2,
            "cannot be used",
        ),
        (vec!["approval", "decide", &r, "--yes"], 2, "--approve"),
        (vec!["approval", "show", "nope"], 2, "not a sha256: ref"),
    ];
    for (args, code, want) in &cases {
        let out = detached(&env, args);
        assert_exit(&out, *code);
        assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
    }
    let unknown = format!("sha256:{}", "cd".repeat(32));
    for args in [
        vec!["approval", "decide", unknown.as_str(), "--approve", "--yes"],
        vec!["approval", "show", unknown.as_str()],
    ] {
        let out = detached(&env, &args);
        assert_exit(&out, 1);
        assert!(
            stderr(&out).contains("no approval request"),
            "{}",
            stderr(&out)
        );
    }
    // Deciding is attended: no terminal and no --yes is a refusal (exit 3).
    let out = detached(&env, &["approval", "decide", &r, "--approve"]);
    assert_exit(&out, 3);
    assert!(
        stderr(&out).contains("no controlling terminal"),
        "{}",
        stderr(&out)
    );
    assert_eq!(env.fingerprint(), before, "bad input changed the store");
}

// ------------------------------------------------------------ attended, on a pseudo-terminal

/// `world ARGS` in a new session whose controlling terminal is a fresh pty on which `answer`
/// is typed; returns the output and what the terminal showed.
fn on_terminal(env: &Env, args: &[&str], answer: &str) -> (Output, String) {
    use std::io::{Read, Write};
    let (mut master, slave) = pty();
    let mut c = env.std_cmd(args);
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    terminal::with_terminal(&mut c, &slave);
    // Typed ahead: the line discipline holds it until the prompt reads.
    master
        .write_all(format!("{answer}\r").as_bytes())
        .expect("type");
    let child = c.spawn().expect("spawn");
    drop(slave);
    let mut reader = master.try_clone().expect("clone");
    let shown = std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            all.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&all).into_owned()
    });
    let out = child.wait_with_output().expect("wait");
    drop(master);
    (out, shown.join().unwrap_or_default())
}

#[test]
fn attended_approve_asks_on_the_terminal_and_claims() {
    let env = env();
    let tok: PathBuf = env.mint("ep1", &[APPROVE]);
    let tok = tok.to_string_lossy().into_owned();
    let args = [
        "invoke",
        "approval",
        "--session",
        tok.as_str(),
        "--args",
        r#"{"summary":"ship it \u001b[2J now"}"#,
        "--json",
    ];
    let (yes, shown) = on_terminal(&env, &args, "y");
    assert_exit(&yes, 0);
    assert!(
        shown.contains("of episode ep1 says:"),
        "terminal showed {shown:?}"
    );
    assert!(
        shown.contains("ship it \\u{1b}[2J now"),
        "the escape is shown escaped: {shown:?}"
    );
    // The prompt says it times out (issue 16 §10).
    assert!(
        shown.contains("times out in") && shown.contains("leaves the request pending"),
        "terminal showed {shown:?}"
    );
    let o = output_of(&yes);
    assert_eq!(o["approved"], true, "{o}");
    assert_eq!(claims(&env).len(), 1);
    let list = approvals(&env);
    assert_eq!(list[0]["decidedBy"], "terminal");
    assert_eq!(list[0]["attended"], true);

    let (no, _) = on_terminal(&env, &args, "n");
    assert_exit(&no, 0);
    assert_eq!(output_of(&no)["approval"]["state"], "denied");
    assert_eq!(claims(&env).len(), 1);
}

#[test]
fn attended_decide_on_the_terminal() {
    let env = env();
    let r = request(&env, "ep1", "merge the branch", &[]);
    let (no, shown) = on_terminal(&env, &["approval", "decide", &r, "--approve"], "no");
    assert_exit(&no, 3);
    assert!(shown.contains("merge the branch"), "{shown:?}");
    assert_eq!(
        approvals(&env)[0]["state"],
        "pending",
        "not confirmed: nothing written"
    );
    let (yes, _) = on_terminal(&env, &["approval", "decide", &r, "--approve"], "yes");
    assert_exit(&yes, 0);
    let a = &approvals(&env)[0];
    assert_eq!(a["state"], "approved");
    assert_eq!(a["attended"], true);
}

#[test]
fn verify_checks_every_approval_claim() {
    let env = env();
    let tok = env.mint("ep1", &[APPROVE]);
    let (yes, no) = (
        request(&env, "ep1", "yes", &[]),
        request(&env, "ep1", "no", &[]),
    );
    env.ok(&["approval", "decide", &yes, "--approve", "--yes"]);
    let denial = env
        .ok(&["approval", "decide", &no, "--deny", "--yes"])
        .trim()
        .to_string();
    assert_exit(
        &invoke(&env, &tok, &format!(r#"{{"approval_ref":"{yes}"}}"#)),
        0,
    );
    env.verify_ok();
    let verify = |sql: &str, want: &str| {
        let copy = env.root.join("tampered.db");
        std::fs::copy(&env.db, &copy).expect("copy store");
        rusqlite::Connection::open(&copy)
            .and_then(|c| c.execute_batch(sql))
            .expect("tamper");
        let out = env.run(&["--db", copy.to_str().unwrap_or_default(), "verify"]);
        std::fs::remove_file(&copy).expect("remove copy");
        assert_exit(&out, 3);
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &stderr(&out);
        assert!(text.contains(want), "{want:?} not in {text}");
    };
    // A claim naming an effect intent that was never journaled.
    verify(
        &format!("INSERT INTO approval_claims VALUES ('{denial}', '{no}', 'effect:ep1:1x')"),
        "has no effect intent",
    );
    // A denial claimed as if it were an approval.
    verify(
        &format!("UPDATE approval_claims SET approval_ref = '{denial}'"),
        "not an approval of request",
    );
    verify(
        "UPDATE approval_claims SET request_ref = 'sha256:0000000000000000000000000000000000000000000000000000000000000000'",
        "missing request",
    );
    // A deleted claim would make a consumed approval reusable.
    verify(
        "DELETE FROM approval_claims",
        "approval_claims has no such row",
    );
}

#[test]
fn refusals_and_denials_say_why_on_stderr() {
    let env = env();
    let tok = env.mint(
        "ep7",
        &["Workspace.Write=worktree:1", "Human.Approve=approvals:0"],
    );
    std::fs::remove_dir(env.ws.join("ep7")).expect("remove the worktree");
    let t = tok.to_string_lossy().into_owned();
    let out = detached(
        &env,
        &[
            "invoke",
            "ailang-write",
            "--session",
            &t,
            "--args",
            r#"{"path":"a","content":"x"}"#,
        ],
    );
    assert_exit(&out, 1);
    let err = stderr(&out);
    assert!(err.contains("no handler for (Workspace.Write)"), "{err}");
    assert!(err.contains("hint:") && err.contains("ws/ep7"), "{err}");
    std::fs::create_dir(env.ws.join("ep7")).expect("recreate the worktree");
    let out = invoke(&env, &tok, r#"{"summary":"x"}"#);
    assert_exit(&out, 8);
    assert!(
        stderr(&out).contains("denied Human.Approve approvals: denied:budget"),
        "{}",
        stderr(&out)
    );
    let out = detached(
        &env,
        &["invoke", "counter", "--session", &t, "--args", "{}"],
    );
    assert_exit(&out, 1);
    assert!(
        stderr(&out).contains("world tools list"),
        "{}",
        stderr(&out)
    );
    // A grant typo is minted (access effects are free-form) but warned about.
    let ws = env.ws.to_string_lossy().into_owned();
    let out = env.run(&[
        "session",
        "mint",
        "--episode",
        "ep8",
        "--grant",
        "Human.Aprove=approvals:1",
        "--grant",
        "Human.Approve=approvals:1",
        "--workspace-root",
        &ws,
        "--yes",
    ]);
    assert_exit(&out, 0);
    let err = stderr(&out);
    assert!(
        err.contains("grant Human.Aprove=approvals matches no published transition"),
        "{err}"
    );
    assert!(
        !err.contains("grant Human.Approve=approvals matches"),
        "{err}"
    );
}

/// Every object of semantic id `sid`: (ref, provenance, payload bytes).
fn objects_of(env: &Env, sid: &str) -> Vec<(String, String, Vec<u8>)> {
    let c = env.conn();
    let mut stmt = c
        .prepare("SELECT hash_ref, provenance, payload FROM objects WHERE semantic_id = ?1")
        .expect("prepare");
    let rows = stmt
        .query_map([sid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("query");
    rows.collect::<Result<_, _>>().expect("rows")
}

/// The member names of a JSON object payload, in their byte order.
fn keys_in_order(payload: &[u8]) -> Vec<String> {
    // serde_json's default map is sorted; read the names off the bytes instead.
    let text = std::str::from_utf8(payload).expect("utf-8");
    let v: Value = serde_json::from_str(text).expect("json");
    let mut names: Vec<(usize, String)> = v
        .as_object()
        .expect("object")
        .keys()
        .map(|k| {
            let at = text.find(&format!("\"{k}\":")).expect("key in bytes");
            (at, k.clone())
        })
        .collect();
    names.sort();
    names.into_iter().map(|(_, k)| k).collect()
}

#[test]
fn approval_objects_have_the_reference_shape_and_the_reference_can_walk_the_head() {
    let env = env();
    let r = request(&env, "ep1", "ship it", &["--requester", "alice"]);
    let d = env
        .ok(&[
            "approval",
            "decide",
            &r,
            "--approve",
            "--yes",
            "--decided-by",
            "bob",
        ])
        .trim()
        .to_string();
    // The request: {effect, scope, cost, requester, now}, provenance host/broker.
    let reqs = objects_of(&env, "world/approval-request/v1");
    assert_eq!(reqs.len(), 1);
    let (rref, prov, payload) = &reqs[0];
    assert_eq!((rref.as_str(), prov.as_str()), (r.as_str(), "host/broker"));
    assert_eq!(
        keys_in_order(payload),
        ["effect", "scope", "cost", "requester", "now"]
    );
    let v: Value = serde_json::from_slice(payload).expect("json");
    assert_eq!(v["effect"], "Human.Approve");
    assert_eq!(v["scope"], "cli");
    assert_eq!(v["cost"], 0);
    assert!(v["requester"]
        .as_str()
        .expect("requester")
        .starts_with("cli:"));
    // The decision: {requestRef, decision, decidedBy, now}.
    let decs = objects_of(&env, "world/approval-decision/v1");
    assert_eq!(decs.len(), 1);
    assert_eq!(
        (decs[0].0.as_str(), decs[0].1.as_str()),
        (d.as_str(), "host/broker")
    );
    assert_eq!(
        keys_in_order(&decs[0].2),
        ["requestRef", "decision", "decidedBy", "now"]
    );
    let dv: Value = serde_json::from_slice(&decs[0].2).expect("json");
    assert_eq!(
        (
            dv["requestRef"].as_str(),
            dv["decision"].as_str(),
            dv["decidedBy"].as_str()
        ),
        (Some(r.as_str()), Some("approve"), Some("bob"))
    );
    // world's additions sit in objects of their own ids that link to the reference ones.
    let detail = objects_of(&env, "world/approval-request-detail/v1");
    assert_eq!(detail.len(), 1);
    let dv: Value = serde_json::from_slice(&detail[0].2).expect("json");
    assert_eq!(dv["requestRef"], r.as_str());
    assert_eq!(dv["episodeId"], "ep1");
    assert_eq!(dv["requestedBy"], "alice");
    let ddetail = objects_of(&env, "world/approval-decision-detail/v1");
    assert_eq!(ddetail.len(), 1);
    let dv: Value = serde_json::from_slice(&ddetail[0].2).expect("json");
    assert_eq!(
        (dv["decisionRef"].as_str(), dv["attended"].as_bool()),
        (Some(d.as_str()), Some(false))
    );
    // Walk the head as the reference's walkApprovalHead does: newest first via previousHead.
    let c = env.conn();
    let mut head: String = c
        .query_row(
            "SELECT object_ref FROM epoch_registry_heads WHERE registry_name = 'world/approvals/v1'",
            [],
            |row| row.get(0),
        )
        .expect("approvals head");
    let mut seen = Vec::new();
    while !head.is_empty() {
        let (sid, prov, payload): (String, String, Vec<u8>) = c
            .query_row(
                "SELECT semantic_id, provenance, payload FROM objects WHERE hash_ref = ?1",
                [&head],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .expect("head object");
        assert_eq!(
            (sid.as_str(), prov.as_str()),
            ("world/approvals/v1", "host/broker")
        );
        assert_eq!(
            keys_in_order(&payload),
            ["previousHead", "requestRef", "decisionRef"]
        );
        let v: Value = serde_json::from_slice(&payload).expect("json");
        seen.push((
            v["requestRef"].as_str().unwrap_or("?").to_string(),
            v["decisionRef"].as_str().unwrap_or("?").to_string(),
        ));
        head = v["previousHead"]
            .as_str()
            .expect("previousHead")
            .to_string();
    }
    assert_eq!(
        seen,
        vec![(r.clone(), d.clone()), (r.clone(), String::new())]
    );
    env.verify_ok();
}

#[test]
fn approvals_of_the_old_layout_still_read_verify_and_claim() {
    use world::store::{put_object, Object};
    let env = env();
    let tok = env.mint("ep1", &[APPROVE, POLL]);
    // A request and decision as world wrote them before the reference layout.
    let old_req = Object::new(
        "world/approval-request/v1",
        "world:approvals",
        br#"{"episodeId":"ep1","summary":"old deploy","requester":"carol","origin":"cli:0123456789abcdef0123456789abcdef","createdAt":1700000000}"#.to_vec(),
    );
    let r = old_req.meta.hash.clone();
    let old_dec = Object::new(
        "world/approval-decision/v1",
        "world:approvals",
        format!(r#"{{"requestRef":"{r}","approved":true,"decidedBy":"dave","attended":true,"decidedAt":1700000001}}"#).into_bytes(),
    );
    let reg = Object::new(
        "world/approvals/v1",
        "world:approvals",
        format!(r#"{{"prev":"","event":"request","ref":"{r}"}}"#).into_bytes(),
    );
    {
        let c = env.conn();
        for o in [&old_req, &old_dec, &reg] {
            put_object(&c, o).expect("put");
        }
        c.execute(
            "INSERT INTO epoch_registry_heads (registry_name, object_ref) VALUES ('world/approvals/v1', ?1)",
            [&reg.meta.hash],
        )
        .expect("head");
    }
    let shown = json_lines(&env.ok(&["approval", "show", &r, "--json"]));
    assert_eq!(shown[0]["state"], "approved");
    assert_eq!(shown[0]["episode"], "ep1");
    assert_eq!(shown[0]["requester"], "carol");
    assert_eq!(shown[0]["decidedBy"], "dave");
    assert_eq!(shown[0]["attended"], true);
    assert_eq!(shown[0]["createdAt"], 1700000000);
    env.verify_ok();
    // An old-layout approval is claimed by an effect as before, and verify still passes.
    let first = invoke(&env, &tok, &format!(r#"{{"approval_ref":"{r}"}}"#));
    assert_exit(&first, 0);
    assert_eq!(output_of(&first)["approved"], true);
    assert_eq!(claims(&env).len(), 1);
    // A new request appends to the same chain in the reference shape.
    let r2 = request(&env, "ep1", "new deploy", &[]);
    assert_eq!(approvals(&env).len(), 2);
    let heads = objects_of(&env, "world/approvals/v1");
    assert!(heads.iter().any(|(_, _, p)| {
        let v: Value = serde_json::from_slice(p).expect("json");
        v["requestRef"] == r2.as_str() && v["previousHead"] == reg.meta.hash.as_str()
    }));
    env.verify_ok();
}

/// The reference's field set (in its encoder's member order) of every JSON object `world`
/// writes under a reference semantic id; the reference decodes these strictly.
const REFERENCE_FIELDS: &[(&str, &[&str])] = &[
    (
        "world/approval-request/v1",
        &["effect", "scope", "cost", "requester", "now"],
    ),
    (
        "world/approval-decision/v1",
        &["requestRef", "decision", "decidedBy", "now"],
    ),
    (
        "world/approvals/v1",
        &["previousHead", "requestRef", "decisionRef"],
    ),
    (
        "world/effect-intent/v1",
        &[
            "invocationId",
            "episodeId",
            "ordinal",
            "effect",
            "scope",
            "cost",
            "requestRef",
            "logicalTime",
        ],
    ),
    (
        "world/effect-outcome/v1",
        &["invocationId", "status", "recordRef", "logicalTime"],
    ),
    (
        "world/effect-record/v1",
        &[
            "effect",
            "scope",
            "cost",
            "budgetBefore",
            "budgetAfter",
            "allowed",
            "failed",
            "denial",
            "requestRef",
            "resultRef",
        ],
    ),
    (
        "world/journal-intent/v1",
        &[
            "invocationId",
            "worldRef",
            "entryHash",
            "observedHead",
            "prevEntryHash",
            "transitionFn",
            "transitionRef",
            "interpreter",
            "logicalTime",
        ],
    ),
    (
        "world/journal-outcome/v1",
        &["invocationId", "status", "resultRef", "logicalTime"],
    ),
    (
        "world/invocation-record/v1",
        &[
            "invocationId",
            "episodeId",
            "skillId",
            "transitionFn",
            "interpreter",
            "semanticsEpoch",
            "input",
            "output",
        ],
    ),
    (
        "world/invocation-record/v2",
        &[
            "invocationId",
            "episodeId",
            "skillId",
            "transitionFn",
            "interpreter",
            "semanticsEpoch",
            "input",
            "output",
            "plan",
            "effects",
        ],
    ),
    (
        "world/transition-registry/v1",
        &[
            "entries",
            "interfaceHash",
            "parent",
            "revision",
            "semanticID",
        ],
    ),
];

/// Reference semantic ids whose payload is not a JSON object with a fixed member set
/// (netstring requests, raw handler output, arguments, canonical source text, plans).
const REFERENCE_OPAQUE: &[&str] = &[
    "world/effect-request/v1",
    "world/effect-result/v1",
    "world/invocation-input/v1",
    "world/invocation-output/v1",
    "world/effect-plan/v1",
    "world/transition-source/v1",
    "world/epoch-registry/v1",
];

/// Semantic ids that are `world`'s own (no reference decoder reads them).
const WORLD_OWN: &[&str] = &[
    "world/approval-request-detail/v1",
    "world/approval-decision-detail/v1",
    "world/invocation-started/v1",
    "world/effect-failure/v1",
    "world/effect-indeterminate/v1",
    "world/session-mint/v1",
    "world/genesis-goal/v1",
    "world/interpreter-binary/v1",
    "world/interpreter-manifest/v1",
    "world/episode-binding/v1",
];

#[test]
fn every_object_under_a_reference_semantic_id_decodes_with_the_reference_field_set() {
    let env = env();
    let tok = env.mint("ep1", &[APPROVE, POLL]);
    // A CLI request and decision, a claim by an effect, a transition-opened request and a
    // failed effect: every approval, effect and journal object kind.
    let r = request(&env, "ep1", "deploy", &[]);
    env.ok(&["approval", "decide", &r, "--approve", "--yes"]);
    assert_exit(
        &invoke(&env, &tok, &format!(r#"{{"approval_ref":"{r}"}}"#)),
        0,
    );
    assert_exit(
        &invoke(&env, &tok, &format!(r#"{{"approval_ref":"{r}"}}"#)),
        9,
    );
    assert_exit(&invoke(&env, &tok, r#"{"summary":"open one"}"#), 0);
    let c = env.conn();
    let mut stmt = c
        .prepare("SELECT hash_ref, semantic_id, payload FROM objects ORDER BY semantic_id")
        .expect("prepare");
    let rows: Vec<(String, String, Vec<u8>)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let mut checked = std::collections::BTreeMap::<String, usize>::new();
    for (reference, sid, payload) in &rows {
        if let Some((_, fields)) = REFERENCE_FIELDS.iter().find(|(s, _)| s == sid) {
            let v: Value = serde_json::from_slice(payload)
                .unwrap_or_else(|e| panic!("{sid} {reference}: not JSON: {e}"));
            let obj = v
                .as_object()
                .unwrap_or_else(|| panic!("{sid} {reference}: not an object"));
            let mut have: Vec<&str> = obj.keys().map(String::as_str).collect();
            let mut want: Vec<&str> = fields.to_vec();
            have.sort_unstable();
            want.sort_unstable();
            assert_eq!(have, want, "{sid} {reference}: unknown or missing fields");
            if sid != "world/transition-registry/v1" {
                assert_eq!(
                    keys_in_order(payload),
                    fields.to_vec(),
                    "{sid} {reference}: member order"
                );
            }
            *checked.entry(sid.clone()).or_default() += 1;
        } else {
            assert!(
                REFERENCE_OPAQUE.contains(&sid.as_str()) || WORLD_OWN.contains(&sid.as_str()),
                "object {reference} has semantic id {sid}, which this test does not classify"
            );
        }
    }
    for sid in [
        "world/approval-request/v1",
        "world/approval-decision/v1",
        "world/approvals/v1",
        "world/effect-intent/v1",
        "world/effect-outcome/v1",
        "world/effect-record/v1",
        "world/journal-intent/v1",
        "world/journal-outcome/v1",
        "world/invocation-record/v2",
    ] {
        assert!(
            checked.get(sid).copied().unwrap_or(0) > 0,
            "no {sid} was written: {checked:?}"
        );
    }
}
