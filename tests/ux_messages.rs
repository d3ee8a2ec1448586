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
