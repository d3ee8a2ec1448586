//! The benchmarks' recorded episode (replay, candidate): genesis, publish of
//! fixtures/transitions/manifest.json, a session for `ep1`, and `n` invocations through the
//! real coordinator, alternating pure `echo` and effectful `readcount` (plan + finish, one
//! `Workspace.Read`) on the embedded interpreter.

#![allow(dead_code)]

use std::fs;
use std::path::Path;
use std::time::Instant;

use clap::Parser;
use world::authority::session;
use world::broker::handlers::{RunCapsConfig, Services};
use world::cli::Cli;
use world::ops::invoke::{invoke, Call, Host, Surface};
use world::store::{Store, WriteOptions};
use world::transitions::pins::StorePins;

/// Run one `world` command in-process (`-q`), panicking on failure.
pub fn cli(db: &Path, args: &[&str]) {
    let mut argv = vec!["world", "-q", "--db", db.to_str().expect("utf-8 path")];
    argv.extend_from_slice(args);
    let parsed = Cli::try_parse_from(argv).expect("parse");
    world::cli::run(parsed).expect("command");
}

/// Genesis, publish, mint and `n` invocations through the real coordinator into `db`.
pub fn build(db: &Path, dir: &Path, n: usize) {
    let db = db.to_path_buf();
    cli(&db, &["genesis"]);
    cli(
        &db,
        &[
            "publish",
            "--manifest",
            "fixtures/transitions/manifest.json",
            "--yes",
        ],
    );
    let ws = dir.join("ws");
    fs::create_dir_all(ws.join("ep1")).expect("ws");
    fs::write(ws.join("ep1/notes.txt"), "one two\nthree\n").expect("notes");
    let tok = dir.join("tok");
    cli(
        &db,
        &[
            "session",
            "mint",
            "--episode",
            "ep1",
            "--grant",
            "world.apply=world:10",
            "--grant",
            "Workspace.Read=worktree:100000000",
            "--workspace-root",
            ws.to_str().expect("utf-8"),
            "--yes",
            "--out",
            tok.to_str().expect("utf-8"),
        ],
    );
    let token = session::read_token(tok.to_str().expect("utf-8"), false)
        .expect("token")
        .token;

    // Build the episode through the real coordinator.
    let build = Instant::now();
    {
        let mut store = Store::open_write(&db, WriteOptions::default()).expect("open");
        let pins = StorePins::for_db(&db);
        let host = Host {
            interpreters: &pins,
            workspace_root: None,
            tool: None,
            run_caps: RunCapsConfig::default(),
            examples_dir: None,
            services: Services::default(),
            exec: None,
            observer: None,
            unattested: Default::default(),
        };
        for i in 0..n {
            let (transition, args) = if i % 2 == 0 {
                ("echo", serde_json::json!({"i": i, "text": "hello"}))
            } else {
                ("readcount", serde_json::json!({"path": "notes.txt"}))
            };
            let call = Call {
                surface: Surface::Cli,
                token: token.clone(),
                transition: transition.into(),
                args,
                task: Some(format!("t{i}")),
                clock: world::clock::Clock::System,
            };
            invoke(&mut store, &call, &host).expect("invoke");
        }
    }
    eprintln!(
        "built {n} entries through the coordinator in {:.1} s",
        build.elapsed().as_secs_f64()
    );
}
