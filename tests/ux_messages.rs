//! Issue 29 §7–8: messages that used to mislead, and setup that needed a workaround.

use crate::invoke_support::Env;

fn text(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `broker check` on an access-only grant says calls never spend it, instead of `2 → 1`;
/// a declared effect still shows what a call would leave.
#[test]
fn broker_check_says_an_access_grant_is_never_spent() {
    let env = Env::new();
    let tok = env.mint(
        "ep1",
        &["world.apply=world:2", "Workspace.Write=worktree:3"],
    );
    let t = tok.to_str().unwrap();
    let out = env.ok(&[
        "broker",
        "check",
        "world.apply",
        "world",
        "1",
        "--session",
        t,
    ]);
    assert!(out.contains("calls never spend it"), "{out}");
    assert!(out.contains("2 remain"), "{out}");
    assert!(!out.contains("2 → 1"), "{out}");
    let v: serde_json::Value = serde_json::from_str(&env.ok(&[
        "broker",
        "check",
        "world.apply",
        "world",
        "1",
        "--session",
        t,
        "--json",
    ]))
    .unwrap();
    assert_eq!(v["spentByCalls"], false);
    let out = env.ok(&[
        "broker",
        "check",
        "Workspace.Write",
        "worktree",
        "1",
        "--session",
        t,
    ]);
    assert!(out.contains("(budget 3 → 2)"), "{out}");
    // Pure calls indeed leave the access grant untouched.
    let o = env.invoke(&tok, "pure", "{}", &[]);
    assert!(o.status.success() || o.status.code() == Some(7), "{o:?}");
    let out = env.ok(&[
        "broker",
        "check",
        "world.apply",
        "world",
        "1",
        "--session",
        t,
    ]);
    assert!(out.contains("2 remain"), "{out}");
}

/// `effects show` prints the request as its parts (time, arguments) and states the budget law
/// with the numbers it checked, instead of the netstring and a bare `law consistent`.
#[test]
fn effects_show_decodes_the_request_and_explains_the_law() {
    let env = Env::new();
    let tok = env.mint("ep1", &["Workspace.Write=worktree:3"]);
    let o = env.invoke(
        &tok,
        "ailang-write",
        r#"{"path":"n.txt","content":"hi"}"#,
        &[],
    );
    assert!(o.status.success(), "{o:?}");
    let v: serde_json::Value =
        serde_json::from_str(env.ok(&["effects", "--json"]).lines().next().unwrap()).unwrap();
    let rec = v["ref"].as_str().unwrap().to_string();
    let show = text(&env.run(&["effects", "show", &rec]));
    assert!(
        show.contains("law      budget law holds: 3 − cost 1 = 2"),
        "{show}"
    );
    assert!(!show.contains("consistent"), "{show}");
    assert!(show.contains("         args {"), "{show}");
    assert!(show.contains(r#""path":"n.txt""#), "{show}");
    assert!(!show.contains("15:Workspace.Write8:worktree"), "{show}");
}

/// `--wait-lock` is listed and accepted only by commands that may take the writer lock.
#[test]
fn wait_lock_is_an_option_of_writers_only() {
    let env = crate::common::TestEnv::new();
    env.genesis();
    for reader in [
        vec!["log"],
        vec!["log", "get"],
        vec!["head"],
        vec!["show"],
        vec!["session", "list"],
        vec!["effects"],
        vec!["verify"],
    ] {
        let mut args = reader.clone();
        args.push("--help");
        let r = env.run(&args).ok();
        assert!(
            !r.stdout.contains("--wait-lock"),
            "{reader:?}: {}",
            r.stdout
        );
    }
    for writer in [
        vec!["commit"],
        vec!["genesis"],
        vec!["publish"],
        vec!["invoke"],
        vec!["session", "mint"],
        vec!["approval", "decide"],
        vec!["pin"],
    ] {
        let mut args = writer.clone();
        args.push("--help");
        let r = env.run(&args).ok();
        assert!(r.stdout.contains("--wait-lock"), "{writer:?}: {}", r.stdout);
    }
    // A reader refuses it in either position; nothing is read or written.
    let r = env.run(&["log", "--wait-lock", "1"]).code(2);
    assert!(r.stderr.contains("--wait-lock"), "{r:#?}");
    let r = env.run(&["--wait-lock", "1", "log"]).code(2);
    assert!(
        r.stderr.contains("`world log` never takes the writer lock"),
        "{r:#?}"
    );
    // A writer takes it after its name as before its name.
    let _holder = world::store::Store::open_write(
        &env.db,
        world::store::WriteOptions {
            create: false,
            wait_lock: None,
        },
    )
    .unwrap();
    let a = env.write("a.json", b"a");
    let r = env
        .run(&[
            "commit",
            "--put",
            a.to_str().unwrap(),
            "--semantic-id",
            "x",
            "--wait-lock",
            "0.3",
        ])
        .code(6);
    assert!(r.stderr.contains("waited 0.3 s (--wait-lock)"), "{r:#?}");
}

/// `publish --manifest dir/m.json` reads a relative `transitionFnFile` beside the manifest,
/// still reads a path written relative to the current directory (the reference's rule), and
/// when neither exists names both places with a hint; nothing is written then.
#[test]
fn manifest_sources_resolve_against_the_manifest_directory_then_the_cwd() {
    let env = crate::common::TestEnv::new();
    env.genesis();
    let src = std::fs::read(crate::common::repo().join("fixtures/transitions/echo.ail")).unwrap();
    let dir = env.path("pkg");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/echo.ail"), &src).unwrap();
    let manifest = |file: &str, id: &str| {
        serde_json::json!([{
            "id": id, "title": "E", "description": "d", "transitionFnFile": file,
            "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"},
            "access": {"effect": "world.apply", "scope": "world", "cost": 0},
            "declaredEffects": []
        }])
        .to_string()
    };
    // Beside the manifest (the test runs in the temp dir, not in pkg/).
    std::fs::write(dir.join("m.json"), manifest("src/echo.ail", "beside")).unwrap();
    env.run(&["publish", "--manifest", "pkg/m.json", "--yes"])
        .ok();
    // Relative to the current directory, as a manifest written for the reference says.
    std::fs::write(dir.join("ref.json"), manifest("pkg/src/echo.ail", "cwd")).unwrap();
    env.run(&["publish", "--manifest", "pkg/ref.json", "--yes"])
        .ok();
    let list = env.run(&["transitions", "list", "--json"]).ok().stdout;
    assert!(list.contains("\"cwd\""), "{list}");
    // Neither: both places named, a hint, nothing written.
    std::fs::write(dir.join("bad.json"), manifest("nowhere/echo.ail", "bad")).unwrap();
    let before = env.snapshot();
    let r = env
        .run(&["publish", "--manifest", "pkg/bad.json", "--yes"])
        .code(1);
    let canon = env.dir.path().canonicalize().unwrap();
    assert!(
        r.stderr.contains("source nowhere/echo.ail not found"),
        "{r:#?}"
    );
    assert!(r.stderr.contains("pkg/nowhere/echo.ail"), "{r:#?}");
    assert!(
        r.stderr
            .contains(&canon.join("nowhere/echo.ail").display().to_string())
            || r.stderr.contains(
                &env.dir
                    .path()
                    .join("nowhere/echo.ail")
                    .display()
                    .to_string()
            ),
        "{r:#?}"
    );
    assert!(
        r.stderr
            .contains("hint: a transitionFnFile path is read relative to the manifest's directory"),
        "{r:#?}"
    );
    assert_eq!(env.snapshot(), before);
}

/// `session mint --workspace-root ws` resolves a relative root against the current directory
/// (it used to be refused): a call made later from another directory acts in that worktree.
#[test]
fn a_relative_workspace_root_is_resolved() {
    let env = Env::new();
    std::fs::create_dir_all(env.ws.join("ep2")).unwrap();
    std::fs::write(env.ws.join("ep2/notes.txt"), "a\nb\nc\n").unwrap();
    let tok = env.root.join("tok-rel");
    let out = env
        .cmd(&[
            "session",
            "mint",
            "--episode",
            "ep2",
            "--grant",
            "Workspace.Read=worktree:1",
            "--workspace-root",
            "ws",
            "--yes",
            "--out",
            tok.to_str().unwrap(),
        ])
        .current_dir(&env.root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // invoke runs from the repository root (Env::cmd), not from env.root.
    let o = env.invoke(&tok, "readcount", r#"{"path":"notes.txt"}"#, &[]);
    assert!(o.status.success(), "{o:?}");
    assert!(text(&o).contains('3'), "{}", text(&o));
}
