//! The EXAMPLES of every command's `--help` and man page, and the ENVIRONMENT and EXIT
//! STATUS sections of world(1) (issue 16 §12). A test parses every example line with the
//! real clap definition (tests/generated.rs), so they cannot drift from the binary.

/// The environment variables `world` reads: (name, meaning).
pub const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "WORLD_DB",
        "the store file, as --db (default ~/.ailang/world/world.db)",
    ),
    (
        "WORLD_SESSION",
        "a session token file path or the token, as --session",
    ),
    (
        "WORLD_LEDGER",
        "the limits ledger (a file, or postgres://…), as --ledger",
    ),
    (
        "NO_COLOR",
        "set and non-empty: no colour under --color auto",
    ),
    (
        "COLUMNS",
        "the table width (else the terminal's; a pipe gets natural widths)",
    ),
    ("HOME", "where the default store lives"),
    (
        "USER, LOGNAME",
        "the human named in attended limits acts (else the password database)",
    ),
    (
        "CI, GITHUB_ACTIONS",
        "set: an attended publish refuses (fence ci); pass --yes",
    ),
];

/// Every command path with examples (aliases share a row) and its example lines, in the
/// order `--help` prints them.
const EXAMPLES: &[(&[&str], &[&str])] = &[
    (
        &["world"],
        &["world genesis", "world status", "world log --episode ep1", "world show head --json"],
    ),
    (
        &["world genesis"],
        &["world genesis", "world genesis --goal-file goal.json --interpreter embedded"],
    ),
    (
        &["world commit"],
        &[
            "world commit --put notes.json --semantic-id demo/note/v1   # extend the head",
            "world commit --put a.json --put b.json --semantic-id demo/doc/v1 --writer client:ci",
            "world commit body.json   # a hand-built POST /v1/commit body",
            "world commit --batch bodies.jsonl --keep-going",
        ],
    ),
    (&["world head"], &["world head", "world head --json"]),
    (
        &["world world", "world world get"],
        &["world world get 33831a602c51", "world world get head --json"],
    ),
    (
        &["world object"],
        &["world object find demo/note/v1", "world object get 00773cb5caab --payload"],
    ),
    (
        &["world object get"],
        &[
            "world object get 00773cb5caab",
            "world object get sha256:00773cb5caab… --payload > note.json",
        ],
    ),
    (
        &["world object find"],
        &[
            "world object find demo/note/v1 --limit 20",
            "world object find demo/note/v1 --after 00773cb5caab",
        ],
    ),
    (
        &["world log"],
        &[
            "world log",
            "world log --episode ep1 --writer coordinator",
            "world log --since 2026-12-01 --transition counter",
            "world log --follow --until-index 40",
            "world log --json --reverse --limit 1",
        ],
    ),
    (&["world log get"], &["world log get 3", "world log get head --json"]),
    (
        &["world show"],
        &[
            "world show head",
            "world show 3",
            "world show cli:ep1:task-3 --json",
            "world show 33831a602c51",
        ],
    ),
    (&["world status"], &["world status", "world status --json"]),
    (
        &["world registry", "world registry get"],
        &["world registry get world/transition-registry/v1"],
    ),
    (
        &["world publish"],
        &[
            "world publish --manifest manifest.json   # asks for the typed phrase",
            "world publish --manifest manifest.json --yes   # scripts: recorded as unattended",
        ],
    ),
    (
        &["world package"],
        &[
            "world package packet packages/kit --golden kit.golden.json",
            "world package approve packages/kit --golden kit.golden.json",
            "world package publish packages/kit --live --credential-file ~/.config/ailang/registry.key",
            "world package reconcile packages/kit --probe",
            "world package status",
        ],
    ),
    (
        &["world package packet"],
        &[
            "world package packet packages/kit --golden kit.golden.json",
            "world package packet packages/kit --compiler-version 'AILANG v0.30.0' --json > kit.golden.json",
        ],
    ),
    (
        &["world package approve"],
        &[
            "world package approve packages/kit --golden kit.golden.json --requester alice --decided-by alice",
            "world package approve packages/kit --loopback-registry http://127.0.0.1:8080 --ttl 600",
        ],
    ),
    (
        &["world package publish"],
        &[
            "world package publish packages/kit --dry-run",
            "world package publish packages/kit --live --credential-file ~/.config/ailang/registry.key",
            "world package publish packages/kit --live --credential-file /secure/key --publisher ailang --ailang-bin /usr/local/bin/ailang",
        ],
    ),
    (
        &["world package reconcile"],
        &[
            "world package reconcile   # list what is still indeterminate",
            "world package reconcile packages/kit --probe",
            "world package reconcile --probe --loopback-registry",
        ],
    ),
    (&["world package status"], &["world package status", "world package status --json"]),
    (
        &["world pin"],
        &["world pin --interpreter /usr/local/bin/ailang", "world pin --interpreter embedded"],
    ),
    (&["world transitions"], &["world transitions list", "world transitions show counter"]),
    (&["world transitions list"], &["world transitions list", "world transitions list --json"]),
    (&["world transitions show"], &["world transitions show counter --json"]),
    (
        &["world invoke"],
        &[
            "world invoke counter --session tok --args '{\"items\":[1,2]}'",
            "world invoke ailang-read --args-file args.json --invocation-id read-1",
        ],
    ),
    (&["world tools", "world tools list"], &["world tools list --session tok"]),
    (&["world ailang"], &["world ailang check prog.ail", "world ailang run --entry main prog.ail"]),
    (
        &["world ailang check"],
        &["world ailang check prog.ail", "world ailang check --json prog.ail"],
    ),
    (&["world ailang run"], &["world ailang run --entry main --args-json '[1,2]' prog.ail"]),
    (&["world ailang test"], &["world ailang test prog.ail", "world ailang test --json prog.ail"]),
    (&["world ailang version"], &["world ailang version", "world ailang version --json"]),
    (
        &["world receipt"],
        &[
            "world receipt rest:deploy-7   # exit 1 when never recorded",
            "world receipt cli:ep1:count-1 --json",
        ],
    ),
    (
        &["world session"],
        &[
            "world session mint --episode ep1 --grant Workspace.Read=worktree:5 --out tok",
            "world session list --all",
            "world session show 3c070cc7845a",
        ],
    ),
    (
        &["world session mint"],
        &[
            "world session mint --episode ep1 --grant world.apply=world:10 --out tok",
            "world session mint --episode ep1 --grant Workspace.Write=worktree:1 --workspace-root /srv/ws --ttl 600 --yes --out tok",
            "world session mint --episode ep1 --grant Workspace.Read=worktree:5 --mission m1 --mission-run r1 --mission-grant g1 --ledger /srv/ledger.db --out tok",
        ],
    ),
    (&["world session list"], &["world session list", "world session list --all --json"]),
    (
        &["world session show"],
        &["world session show 3c070cc7845a", "world session show 3c070cc7845a --json"],
    ),
    (
        &["world session revoke"],
        &["world session revoke 3c070cc7845a", "world session revoke --episode ep1"],
    ),
    (
        &["world effects"],
        &[
            "world effects --episode ep1",
            "world effects --denied --effect Workspace.Read",
            "world effects --pending",
            "world effects show 24e29cafca46 --json",
        ],
    ),
    (
        &["world effects show"],
        &["world effects show 24e29cafca46", "world effects show effect:ep1:0 --json"],
    ),
    (
        &["world approval"],
        &[
            "world approval request --episode ep1 --summary 'deploy v2'",
            "world approval list --state pending",
            "world approval decide 4adc19e0aa31 --approve",
        ],
    ),
    (&["world approval request"], &["world approval request --episode ep1 --summary 'deploy v2'"]),
    (&["world approval list"], &["world approval list --episode ep1 --state pending"]),
    (&["world approval show"], &["world approval show 4adc19e0aa31 --json"]),
    (
        &["world approval decide"],
        &[
            "world approval decide 4adc19e0aa31 --approve   # asks on the terminal",
            "world approval decide 4adc19e0aa31 --deny --decided-by ops --yes",
        ],
    ),
    (
        &["world broker", "world broker check"],
        &["world broker check --session tok Workspace.Read worktree 1"],
    ),
    (
        &["world verify"],
        &[
            "world verify",
            "world verify --full --json",
            "world verify -q   # prints only failures",
            "world verify --ledger \"$WORLD_LEDGER\"   # a ledger file or postgres:// URL",
        ],
    ),
    (
        &["world key", "world key generate"],
        &[
            "world key generate --out log.key --name example.org/world   # the log's signing key",
            "world key generate --witness --out witness.key --name witness.example",
        ],
    ),
    (&["world key public"], &["world key public log.key   # the signed-note verifier key"]),
    (
        &["world checkpoint"],
        &["world checkpoint --key log.key --out checkpoint.txt", "world checkpoint list"],
    ),
    (&["world checkpoint list"], &["world checkpoint list", "world checkpoint list --json"]),
    (&["world checkpoint show"], &["world checkpoint show", "world checkpoint show 42 > cp42.txt"]),
    (
        &["world checkpoint cosign"],
        &[
            "world checkpoint cosign checkpoint.txt --key witness.key --log-key log.pub --out cosigned.txt",
        ],
    ),
    (&["world checkpoint merge"], &["world checkpoint merge cosigned.txt --witness witness.pub"]),
    (
        &["world prove"],
        &[
            "world prove 17 --checkpoint checkpoint.txt --key log.pub   # inclusion proof",
            "world prove --from old-checkpoint.txt --json   # consistency proof to the head",
        ],
    ),
    (
        &["world why"],
        &["world why head", "world why 9a8da2ba8089", "world invoke counter --json | world why -"],
    ),
    (&["world limits"], &["world limits init --config limits.json", "world limits report"]),
    (
        &["world limits init"],
        &[
            "world limits init --config limits.json   # asks for the typed phrase",
            "world limits init --config limits.json --yes",
        ],
    ),
    (
        &["world limits reserve"],
        &[
            "world limits reserve --scope run --attempt a1 --purpose ordinary --amount 30 --max-active-ms 60000",
        ],
    ),
    (&["world limits dispatch"], &["world limits dispatch --attempt a1"]),
    (&["world limits release"], &["world limits release --attempt a1"]),
    (
        &["world limits settle"],
        &[
            "world limits settle --attempt a1 --actual 25",
            "world limits settle --attempt a1 --unknown",
        ],
    ),
    (
        &["world limits reconcile"],
        &["world limits reconcile --attempt a1 --actual 25 --evidence-file receipt.pdf"],
    ),
    (&["world limits stop"], &["world limits stop --scope run --reason 'runaway spend'"]),
    (
        &["world limits adjust"],
        &["world limits adjust --scope run --set cost=200 --evidence-file approval.txt"],
    ),
    (&["world limits report"], &["world limits report", "world limits report --scope run --json"]),
    (
        &["world mission"],
        &[
            "world mission create --contract contract.json",
            "world mission list",
            "world mission report m1",
            "world mission report m1 --ledger postgres://world@db.example/ledgers",
        ],
    ),
    (&["world mission create"], &["world mission create --contract contract.json --yes"]),
    (
        &["world mission apply"],
        &[
            "world mission apply m1 --command cmd.json",
            "world mission apply m1 --commands cmds.jsonl",
        ],
    ),
    (
        &["world mission approve"],
        &["world mission approve m1 --operation op1 --evidence 9a8da2ba8089"],
    ),
    (
        &["world mission admit"],
        &[
            "world mission admit m1 --run r1 --operation op1 --attempt a1 --grant g1 --subject agent --capability write --resource repo --amount 5",
        ],
    ),
    (&["world mission complete-run"], &["world mission complete-run m1 --run r1"]),
    (&["world mission dispatch"], &["world mission dispatch m1 --attempt a1"]),
    (
        &["world mission grant"],
        &[
            "world mission grant m1 --id g1 --subject agent --action write --resource repo --expires-at 4102444800000 --limit 100",
        ],
    ),
    (&["world mission list"], &["world mission list --json"]),
    (&["world mission log"], &["world mission log m1"]),
    (
        &["world mission reconcile"],
        &[
            "world mission reconcile m1 --attempt a1 --actual 4 --evidence 9a8da2ba8089",
            "world mission reconcile m1 --from-store --ledger /srv/ledger.db",
        ],
    ),
    (&["world mission release"], &["world mission release m1 --attempt a1"]),
    (&["world mission report"], &["world mission report m1 --json"]),
    (&["world mission revoke"], &["world mission revoke m1 --grant g1"]),
    (
        &["world mission settle"],
        &[
            "world mission settle m1 --attempt a1 --actual 4",
            "world mission settle m1 --attempt a1 --unknown",
        ],
    ),
    (&["world mission start-run"], &["world mission start-run m1 --run r1"]),
    (
        &["world mission verify"],
        &["world mission verify", "world mission verify --ledger ledger.db --json"],
    ),
    (
        &["world serve"],
        &[
            "world serve",
            "world serve --bind 127.0.0.1:7700 --workspace-root /srv/ws --approve-on-tty",
        ],
    ),
    (&["world mcp"], &["world mcp --session tok --workspace-root /srv/ws"]),
    (
        &["world replay"],
        &[
            "world replay --episode ep1",
            "world replay --all --keep-going --junit replay.xml",
            "world replay --all --allow-empty -q   # CI: prints only divergences",
        ],
    ),
    (
        &["world export-episode"],
        &["world export-episode ep1 --out ep1.bundle.db", "world replay --db ep1.bundle.db --all"],
    ),
    (
        &["world util"],
        &["world util completions", "world util man --out /usr/local/share/man/man1"],
    ),
    (
        &["world util completions"],
        &["world util completions --out ~/.local/share/world/completions"],
    ),
    (&["world util man"], &["world util man --out man"]),
];

/// Example command lines (each `world …`, optionally followed by `  # comment`) for the
/// command at `path` (`"world"`, `"world session show"`, …); `None` for none.
pub fn for_path(path: &str) -> Option<&'static [&'static str]> {
    EXAMPLES
        .iter()
        .find(|(paths, _)| paths.contains(&path))
        .map(|(_, ex)| *ex)
}

/// The EXAMPLES block for `--help` (after the options).
pub fn help_text(examples: &[&str]) -> String {
    let mut s = String::from("Examples:\n");
    for e in examples {
        s.push_str("  ");
        s.push_str(e);
        s.push('\n');
    }
    s.trim_end().to_string()
}

/// Attach the EXAMPLES of every command (and the exit codes on `world` itself) as
/// `after_help`, recursively. `path` is the command's path (`world`, `world log`, …).
pub fn attach(cmd: clap::Command, path: &str) -> clap::Command {
    attach_where(cmd, path, &|_| true)
}

/// [`attach`], but only on the commands `argv` can reach: a subcommand is visited only when
/// its name or one of its aliases is one of the arguments (help is printed only for a command
/// named on the command line). Parsing uses this: attaching every command's EXAMPLES costs
/// more than the rest of a read-only command's start-up (issue 34); the help printed is the
/// same as with [`attach`].
pub fn attach_for(cmd: clap::Command, path: &str, argv: &[std::ffi::OsString]) -> clap::Command {
    let named = |s: &clap::Command| {
        argv.iter().any(|a| {
            a.to_str()
                .is_some_and(|a| a == s.get_name() || s.get_all_aliases().any(|x| x == a))
        })
    };
    attach_where(cmd, path, &named)
}

fn attach_where(
    cmd: clap::Command,
    path: &str,
    visit: &dyn Fn(&clap::Command) -> bool,
) -> clap::Command {
    let mut cmd = cmd;
    let subs: Vec<String> = cmd
        .get_subcommands()
        .filter(|s| visit(s))
        .map(|s| s.get_name().to_string())
        .collect();
    for name in subs {
        let sub_path = format!("{path} {name}");
        cmd = cmd.mut_subcommand(&name, |s| attach_where(s, &sub_path, visit));
    }
    let mut after = for_path(path).map(help_text).unwrap_or_default();
    if path == "world" {
        after = format!("{after}\n\n{}", super::error::EXIT_CODES);
    }
    if after.is_empty() {
        cmd
    } else {
        cmd.after_help(after.clone()).after_long_help(after)
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    fn help(cmd: &mut clap::Command, path: &[&str]) -> String {
        let mut c = cmd.clone();
        for p in path {
            c = c.find_subcommand(p).expect("subcommand").clone();
        }
        c.render_long_help().to_string()
    }

    /// Parsing attaches EXAMPLES only along the named path, and a named command's help is the
    /// same as with every command's EXAMPLES attached (issue 34, DEC-PERF-15).
    #[test]
    fn attaching_for_the_arguments_gives_the_same_help_for_the_named_commands() {
        let mut full = super::attach(crate::cli::Cli::command(), "world");
        for path in [&["log"][..], &["verify"], &["limits", "reserve"], &[]] {
            let argv: Vec<std::ffi::OsString> = path.iter().map(Into::into).collect();
            let mut some = super::attach_for(crate::cli::Cli::command(), "world", &argv);
            assert_eq!(help(&mut some, path), help(&mut full, path), "{path:?}");
        }
        // An alias names its command (`fsck` is `verify`).
        let mut some = super::attach_for(crate::cli::Cli::command(), "world", &["fsck".into()]);
        assert_eq!(help(&mut some, &["verify"]), help(&mut full, &["verify"]));
        // A command not named is left without its EXAMPLES.
        let mut some = super::attach_for(crate::cli::Cli::command(), "world", &["head".into()]);
        assert_ne!(help(&mut some, &["log"]), help(&mut full, &["log"]));
    }
}
