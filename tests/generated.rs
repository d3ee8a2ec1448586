//! The checked-in completions/ and man/ must match what the CLI renders now.
//! Regenerate with: cargo run -- util completions && cargo run -- util man

use std::path::Path;

fn check(dir: &str, files: Vec<(String, Vec<u8>)>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut stale = Vec::new();
    for (name, bytes) in &files {
        match std::fs::read(root.join(name)) {
            Ok(have) if &have == bytes => {}
            _ => stale.push(name.clone()),
        }
    }
    let mut on_disk: Vec<String> = std::fs::read_dir(&root)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    on_disk.retain(|n| !files.iter().any(|(f, _)| f == n));
    assert!(
        stale.is_empty() && on_disk.is_empty(),
        "{dir}/ is stale (changed: {stale:?}, no longer generated: {on_disk:?}); regenerate with `cargo run -- util completions && cargo run -- util man`"
    );
}

#[test]
fn completions_are_current() {
    check("completions", world::cli::util::completions());
}

#[test]
fn man_pages_are_current() {
    check(
        "man",
        world::cli::util::man_pages().expect("render man pages"),
    );
}

#[test]
fn clap_definition_is_consistent() {
    use clap::CommandFactory;
    world::cli::Cli::command().debug_assert();
}

/// Split one shell line into words: single and double quotes, a `#` comment after
/// whitespace. Enough for the README's examples (no variables or escapes in them).
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '#') if !in_word => break,
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            (None, c) => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

/// Every `world …` command line in README.md's `sh` blocks parses with the real clap
/// definition (issue 16: docs agree with the binary).
#[test]
fn every_command_line_in_the_readme_parses() {
    use clap::Parser;
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("read README.md");
    let mut in_sh = false;
    let mut checked = 0;
    let mut bad = Vec::new();
    let mut pending = String::new();
    for raw in readme.lines() {
        if raw.starts_with("```") {
            in_sh = raw.trim() == "```sh" || raw.trim() == "```bash";
            pending.clear();
            continue;
        }
        if !in_sh {
            continue;
        }
        // A line ending in `\` continues on the next one, as the shell reads it.
        if let Some(head) = raw.trim_end().strip_suffix('\\') {
            pending.push_str(head);
            pending.push(' ');
            continue;
        }
        let joined = std::mem::take(&mut pending) + raw;
        let line = joined.as_str();
        let mut words = shell_words(line.trim());
        // The command ends at the first shell operator (a pipe, a redirection, a list).
        if let Some(end) = words.iter().position(|w| {
            ["|", "||", "&&", ";", "&"].contains(&w.as_str())
                || w.starts_with('>')
                || w.starts_with('<')
                || w.starts_with("2>")
        }) {
            words.truncate(end);
        }
        if words.first().map(String::as_str) != Some("world") {
            continue;
        }
        checked += 1;
        if let Err(e) = world::cli::Cli::try_parse_from(&words) {
            if !matches!(
                e.kind(),
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
            ) {
                bad.push(format!(
                    "{line}\n    {}",
                    e.to_string().lines().next().unwrap_or("")
                ));
            }
        }
    }
    assert!(
        checked >= 5,
        "found only {checked} command lines in README.md"
    );
    assert!(
        bad.is_empty(),
        "README command lines that do not parse:\n{}",
        bad.join("\n")
    );
}

/// Every visible command path (`world`, `world session show`, …), depth first; hidden
/// internal commands (`world util exec-probe`) have no help page to check.
fn command_paths() -> Vec<Vec<String>> {
    fn walk(cmd: &clap::Command, path: Vec<String>, out: &mut Vec<Vec<String>>) {
        out.push(path.clone());
        for sub in cmd.get_subcommands() {
            if sub.get_name() == "help" || sub.is_hide_set() {
                continue;
            }
            let mut p = path.clone();
            p.push(sub.get_name().to_string());
            walk(sub, p, out);
        }
    }
    let mut out = Vec::new();
    walk(&world::cli::command(), vec!["world".into()], &mut out);
    out
}

/// Every command has an EXAMPLES section (help and man page), and every example parses with
/// the real clap definition: each `world …` segment of a pipeline, without redirections.
#[test]
fn every_command_has_examples_that_parse() {
    let mut missing = Vec::new();
    let mut bad = Vec::new();
    let mut checked = 0;
    for path in command_paths() {
        let key = path.join(" ");
        let Some(examples) = world::cli::examples::for_path(&key) else {
            missing.push(key);
            continue;
        };
        for line in examples {
            let words = shell_words(line);
            for segment in words.split(|w| w == "|") {
                let mut argv = Vec::new();
                let mut skip = false;
                for w in segment {
                    if skip {
                        skip = false;
                    } else if w == ">" {
                        skip = true;
                    } else {
                        argv.push(w.clone());
                    }
                }
                if argv.first().map(String::as_str) != Some("world") {
                    continue;
                }
                checked += 1;
                if let Err(e) = world::cli::parse_from(&argv) {
                    bad.push(format!(
                        "{line}\n    {}",
                        e.to_string().lines().next().unwrap_or("")
                    ));
                }
            }
        }
        let help = help_of(&path);
        assert!(
            help.contains("Examples:"),
            "{key} --help lacks Examples:\n{help}"
        );
    }
    assert!(missing.is_empty(), "commands without examples: {missing:?}");
    assert!(
        bad.is_empty(),
        "examples that do not parse:\n{}",
        bad.join("\n")
    );
    assert!(checked > 80, "only {checked} examples checked");
    // The man pages carry them, and world(1) ENVIRONMENT and EXIT STATUS.
    let pages = world::cli::util::man_pages().expect("render man pages");
    let page = |name: &str| {
        String::from_utf8(pages.iter().find(|(n, _)| n == name).expect(name).1.clone()).unwrap()
    };
    let top = page("world.1");
    for section in [
        ".SH EXAMPLES",
        ".SH ENVIRONMENT",
        ".SH \"EXIT STATUS\"",
        "WORLD_DB",
        "NO_COLOR",
    ] {
        assert!(top.contains(section), "world.1 lacks {section}");
    }
    assert!(
        !top.contains("world\\-help"),
        "world.1 lists a help page that does not exist"
    );
    let show = page("world-session-show.1");
    assert!(
        show.contains(".SH EXAMPLES") && show.contains("\\fI<PATH>\\fR"),
        "{show}"
    );
}

/// `world … --help` as the binary prints it, at a fixed width of 100 columns.
fn help_of(path: &[String]) -> String {
    let mut argv: Vec<String> = path.to_vec();
    argv.push("--help".into());
    let cmd = world::cli::command().term_width(100);
    match cmd.try_get_matches_from(&argv) {
        Ok(_) => panic!("{argv:?} did not print help"),
        // The value of an env var the developer has set would make the snapshot personal.
        Err(e) => e
            .render()
            .to_string()
            .lines()
            .map(|l| match (l.find("[env: "), l.rfind(']')) {
                (Some(a), Some(b)) if b > a => match l[a..b].find('=') {
                    Some(eq) => format!("{}]{}", &l[..a + eq], &l[b + 1..]),
                    None => l.to_string(),
                },
                _ => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// insta snapshots of every `--help` (tests/snapshots/generated__help__*.snap, named without
/// the runner's module path); review changes with `cargo insta review` or regenerate with
/// `INSTA_UPDATE=always cargo test --test runner generated::`.
#[test]
fn every_help_matches_its_snapshot() {
    for path in command_paths() {
        let name = format!("generated__help__{}", path.join("-"));
        insta::with_settings!({ prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!(name, help_of(&path));
        });
    }
}
