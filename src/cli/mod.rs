//! The command line: global options, the subcommand enum and dispatch. One file per
//! subcommand; each owns its arguments, turns input into library calls and prints.

pub mod ailang;
pub mod approval;
pub mod broker;
pub mod checkpoint;
pub mod commit;
pub mod common;
pub mod effects;
pub mod error;
pub mod examples;
pub mod export_episode;
pub mod fence;
pub mod genesis;
pub mod head;
pub mod invoke;
pub mod key;
pub mod limits;
pub mod log;
pub mod mcp;
pub mod mission;
pub mod object;
pub mod output;
pub mod package;
pub mod pin;
pub mod progress;
pub mod prove;
pub mod publish;
pub mod receipt;
pub mod refs;
pub mod registry;
pub mod replay;
pub mod secrets;
pub mod serve;
pub mod session;
pub mod show;
pub mod status;
pub mod table;
pub mod tools;
pub mod transitions;
pub mod util;
pub mod verify;
pub mod why;
pub mod world;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};

pub(crate) use common::{resolve_session, session_token};
pub use common::{ExecFlags, SessionArgs, UnattestedFlag};
pub use error::{argv_wants_json, print_clap_error, print_error, CliError, Exit};

use crate::store::{self, Store, WriteOptions};

/// World: a git-like toolkit for AILANG World stores (one SQLite file, schema v4).
#[derive(Parser, Debug)]
#[command(name = "world", version, about, long_about = None)]
pub struct Cli {
    /// The root options (`--db`, `--json`, `-q`, `--color`, `--wait-lock`).
    #[command(flatten)]
    pub root: RootArgs,
    /// The subcommand
    #[command(subcommand)]
    pub command: Command,
}

/// The options of `world` itself, before (or, being global, after) the subcommand. One struct
/// so that the single-command parse's root ([`root_command`], DEC-PERF-17) is derived from the
/// same definition as [`Cli`] (DEC-CLIDIRS-3).
#[derive(clap::Args, Debug)]
pub struct RootArgs {
    /// The store file (default ~/.ailang/world/world.db)
    #[arg(long, global = true, env = "WORLD_DB", value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Print JSON (one object, or JSON lines for lists) instead of text; `--json=FIELDS`
    /// (comma-separated, with `=`) keeps only those members of each line, on the list commands
    /// that name their fields (log, effects, session list; an unknown field lists the valid
    /// ones)
    #[arg(
        long = "json",
        global = true,
        value_name = "FIELDS",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = ""
    )]
    pub json_fields: Option<String>,
    /// Whether `--json` was given, with or without FIELDS (set by [`parse_from`]).
    #[arg(skip)]
    pub json: bool,
    /// Print only what was asked for: no status lines or warnings
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Colour output: auto (terminal and no NO_COLOR), always or never
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,
    /// Writers: poll the writer lock for up to SECONDS instead of failing at once (exit 6)
    #[arg(long, value_name = "SECONDS")]
    pub wait_lock: Option<f64>,
}

/// When to colour output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour when stderr is a terminal and NO_COLOR is unset
    Auto,
    /// Always colour
    Always,
    /// Never colour
    Never,
}

/// Every subcommand.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Create the store if needed and commit a genesis world
    Genesis(genesis::Args),
    /// Compare-and-append a world from a commit body (the POST /v1/commit JSON)
    Commit(commit::Args),
    /// Print the selected world head
    Head(head::Args),
    /// Read world rows
    #[command(subcommand)]
    World(world::Cmd),
    /// Read objects
    #[command(subcommand)]
    Object(object::Cmd),
    /// List log entries, or read one with `log get INDEX`
    Log(log::Args),
    /// Show one entry: header, input, plan, effects with budgets, output, receipt, outcome
    Show(show::Args),
    /// Summarise the store: head, entries, registry, sessions, approvals, intents, limits
    Status(status::Args),
    /// Read named registry heads
    #[command(subcommand)]
    Registry(registry::Cmd),
    /// Publish transitions from a manifest (attended; --yes for scripts, recorded as unattended)
    Publish(publish::Args),
    /// Archive an interpreter and bootstrap the epoch registry from its release
    Pin(pin::Args),
    /// Publish an AILANG package to the registry: packet, approve, publish, reconcile, status
    #[command(subcommand)]
    Package(package::Cmd),
    /// Read the transition registry: list, or show one descriptor
    #[command(subcommand)]
    Transitions(transitions::Cmd),
    /// Call a published transition as a session and commit the result
    Invoke(invoke::Args),
    /// What a session can see and call
    #[command(subcommand)]
    Tools(tools::Cmd),
    /// The embedded AILANG interpreter behind the `ailang` CLI contract
    Ailang(ailang::Args),
    /// Answer a receipt: not-started, indeterminate or resolved
    Receipt(receipt::Args),
    /// Mint, list and revoke session credentials
    #[command(subcommand)]
    Session(session::Cmd),
    /// Effect records and pending effect intents
    Effects(effects::Args),
    /// Approval requests for Human.Approve: open, list, show, decide
    #[command(subcommand)]
    Approval(approval::Cmd),
    /// Ask the broker what it would decide (dry run)
    #[command(subcommand)]
    Broker(broker::Cmd),
    /// Check the whole store: hashes, chain, links, journal
    #[command(alias = "fsck")]
    Verify(verify::Args),
    /// Walk the provenance of an entry, object, invocation or result and verify each link
    Why(why::Args),
    /// Make Ed25519 keys for signing checkpoints (log keys) or cosigning them (witness keys)
    #[command(subcommand)]
    Key(key::Cmd),
    /// Sign a C2SP tlog-checkpoint of the log; list, show, cosign and merge checkpoints
    Checkpoint(checkpoint::Args),
    /// Print an inclusion proof of an entry, or a consistency proof between checkpoints
    Prove(prove::Args),
    /// The nested limits ledger: init, reserve, dispatch, settle, reconcile, release, stop, adjust, report
    #[command(subcommand)]
    Limits(limits::Cmd),
    /// finite-v1 missions: contracts, runs, grant chains, admission and settlement
    Mission(mission::Args),
    /// Serve the store over HTTP /v1, MCP and A2A on loopback (holds the writer lock)
    Serve(serve::Args),
    /// Serve MCP on stdin/stdout for a local agent client
    Mcp(mcp::Args),
    /// Re-run coordinator entries with their pinned interpreters and compare every byte (read-only)
    Replay(replay::Args),
    /// Write a self-contained bundle store holding what replaying one episode needs
    ExportEpisode(export_episode::Args),
    /// Generate shell completions and man pages
    #[command(subcommand)]
    Util(util::Cmd),
}

/// The full command definition: the derived [`Cli`] plus every command's EXAMPLES and the
/// exit codes on `world --help` ([`examples::attach`]). Help, completions and man pages all
/// come from this.
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    with_wait_lock(examples::attach(Cli::command(), "world"))
}

/// `cmd` with `--wait-lock` on exactly the writers (see [`command`]).
fn with_wait_lock(cmd: clap::Command) -> clap::Command {
    // `--wait-lock` is a root option and an option of every command that may take the writer
    // lock, and of no other (issue 29 §8, DEC-UX-12): a reader neither lists nor accepts it.
    let Some(arg) = cmd
        .get_arguments()
        .find(|a| a.get_id() == "wait_lock")
        .cloned()
    else {
        return cmd;
    };
    add_wait_lock(cmd, "world", &arg)
}

/// Add `arg` to every subcommand of `cmd` (whose path is `path`) that is not [`READ_ONLY`].
fn add_wait_lock(cmd: clap::Command, path: &str, arg: &clap::Arg) -> clap::Command {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    let mut cmd = cmd;
    for n in names {
        let sub_path = format!("{path} {n}");
        if is_read_only(&sub_path) {
            // Touched anyway: `mut_subcommand` moves a subcommand to the end, so visiting
            // every one in order keeps the order (completions and man pages stay stable).
            cmd = cmd.mut_subcommand(&n, |c| c);
            continue;
        }
        let arg = arg.clone();
        cmd = cmd.mut_subcommand(&n, move |c| {
            let c = c.arg(arg.clone());
            add_wait_lock(c, &sub_path, &arg)
        });
    }
    cmd
}

/// Commands (and groups, with every subcommand) that never take the writer lock, so
/// `--wait-lock` is neither listed in their help nor accepted (DEC-UX-12).
pub const READ_ONLY: &[&[&str]] = &[
    &["head"],
    &["world"],
    &["object"],
    &["log"],
    &["show"],
    &["status"],
    &["registry"],
    &["transitions"],
    &["tools"],
    &["ailang"],
    &["receipt"],
    &["effects"],
    &["broker"],
    &["verify"],
    &["why"],
    &["key"],
    &["prove"],
    &["replay"],
    &["export-episode"],
    &["util"],
    &["session", "list"],
    &["session", "show"],
    &["approval", "list"],
    &["approval", "show"],
    &["checkpoint", "list"],
    &["checkpoint", "show"],
    &["package", "packet"],
    &["package", "status"],
    &["limits", "report"],
    &["mission", "list"],
    &["mission", "log"],
    &["mission", "verify"],
    &["mission", "report"],
];

/// The list commands that take `--json=FIELDS` (issue 29 item 3, as `gh --json` does), with
/// the members of their lines (docs/json/log-line, effect, session schemas).
pub const JSON_FIELDS: &[(&str, &[&str])] = &[
    ("world log", log::JSON_FIELDS),
    ("world effects", effects::JSON_FIELDS),
    ("world session list", session::JSON_FIELDS),
];

/// The members `--json=FIELDS` keeps for the command `path` (`world log`), in the order
/// given, each checked against [`JSON_FIELDS`]. DEC-UX-19.
///
/// # Errors
/// Exit 2 ([`Exit::Usage`]): a command that does not select fields; an unknown or repeated
/// field (the message lists the valid ones).
pub fn select_fields(path: &str, fields: &str) -> Result<Vec<String>, CliError> {
    let Some((_, valid)) = JSON_FIELDS.iter().find(|(p, _)| *p == path) else {
        let names: Vec<&str> = JSON_FIELDS.iter().map(|(p, _)| *p).collect();
        return Err(CliError::usage(
            "--json",
            format!("`{path}` prints whole objects: FIELDS selection is for list commands"),
        )
        .with_code("usage")
        .hint(format!(
            "use `--json` without `=FIELDS` (and jq to pick members); `--json=FIELDS` works on {}",
            names.join(", ")
        )));
    };
    let mut out: Vec<String> = Vec::new();
    for f in fields.split(',').map(str::trim) {
        if f.is_empty() {
            return Err(
                CliError::usage("--json", format!("{fields:?} has an empty field name"))
                    .with_code("usage")
                    .hint(format!("valid fields: {}", valid.join(", "))),
            );
        }
        if !valid.contains(&f) {
            return Err(CliError::usage(
                "--json",
                format!(
                    "unknown field {:?} for `{path}`",
                    crate::termtext::escape_line(f)
                ),
            )
            .with_code("usage")
            .hint(format!("valid fields: {}", valid.join(", "))));
        }
        if out.iter().any(|x| x == f) {
            return Err(
                CliError::usage("--json", format!("field {f:?} is given twice")).with_code("usage"),
            );
        }
        out.push(f.to_string());
    }
    Ok(out)
}

/// Whether the command path (`world log get`) is one of [`READ_ONLY`].
pub fn is_read_only(path: &str) -> bool {
    let words: Vec<&str> = path.split(' ').skip(1).collect();
    READ_ONLY
        .iter()
        .any(|p| words.len() >= p.len() && words[..p.len()] == **p)
}

/// Parse `args` (the program name first) with [`command`].
///
/// # Errors
/// clap's error (usage, help, version), printed by [`print_clap_error`].
pub fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    use clap::FromArgMatches;
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    // Until the store is known, every 64-hex argument is withheld from what is printed.
    secrets::withhold_all(&args);
    // Only the invoked command's tree when that parse succeeds (DEC-PERF-17); anything else —
    // help, version, an error — is parsed again with the whole tree, which prints it.
    let fast = invoked_tree(&args).and_then(|cmd| cmd.try_get_matches_from(&args).ok());
    let matches = match fast {
        Some(m) => m,
        None => {
            // EXAMPLES only on the commands the arguments name: the rest are never printed
            // (issue 34).
            use clap::CommandFactory;
            let cmd = with_wait_lock(examples::attach_for(
                Cli::command(),
                "world",
                &args[1.min(args.len())..],
            ));
            cmd.try_get_matches_from(args)?
        }
    };
    let mut cli = Cli::from_arg_matches(&matches)?;
    cli.root.json = cli.root.json_fields.is_some();
    // A writer's own `--wait-lock` (added by [`command`]) wins over the root one.
    let mut m = &matches;
    while let Some((_, sub)) = m.subcommand() {
        if let Ok(Some(v)) = sub.try_get_one::<f64>("wait_lock") {
            cli.root.wait_lock = Some(*v);
        }
        m = sub;
    }
    Ok(cli)
}

/// The root options that take a value (`--db PATH`, `--color WHEN`, `--wait-lock SECONDS`):
/// the word after them is theirs, not a command name.
const ROOT_VALUED: &[&str] = &["--db", "--color", "--wait-lock"];

/// The command tree [`parse_from`] tries first (issue 34, DEC-PERF-17): the root options and
/// only the subcommand `args` invoke, with `--wait-lock` as [`command`] gives it. `None` —
/// parse with the whole tree — when no subcommand is named, the name is not one of
/// [`invoked_subcommand`]'s, or any argument could ask for help or the version (those print
/// from the whole tree).
fn invoked_tree(args: &[std::ffi::OsString]) -> Option<clap::Command> {
    let mut words = args.iter().skip(1).map(|a| a.to_str());
    let mut name = None;
    while let Some(word) = words.next() {
        let word = word?;
        if word == "--" {
            return None;
        }
        if ROOT_VALUED.contains(&word) {
            words.next();
        } else if !word.starts_with('-') {
            name = Some(word);
            break;
        }
    }
    let help = |a: &std::ffi::OsString| {
        a.to_str().is_none_or(|a| {
            a == "help"
                || a == "--help"
                || a == "--version"
                || (a.starts_with('-')
                    && !a.starts_with("--")
                    && (a.contains('h') || a.contains('V')))
        })
    };
    if args.iter().skip(1).any(help) {
        return None;
    }
    let sub = invoked_subcommand(name?)?;
    let root = root_command().subcommand(sub);
    Some(with_wait_lock(examples::attach_for(
        root,
        "world",
        &args[1.min(args.len())..],
    )))
}

/// The root command with its options and no subcommand: the derived [`RootArgs`] on a
/// command with [`Cli`]'s name, version and about (a test holds its options equal to the
/// whole tree's).
fn root_command() -> clap::Command {
    use clap::Args as _;
    RootArgs::augment_args(
        clap::Command::new("world")
            .version(env!("CARGO_PKG_VERSION"))
            .about(env!("CARGO_PKG_DESCRIPTION"))
            .long_about(None::<&str>),
    )
    .subcommand_required(true)
    .arg_required_else_help(true)
}

/// The clap tree of the one [`Command`] named `name` (or the `fsck` alias), as the derive
/// builds it inside the whole tree; `None` for a name that is not a command.
fn invoked_subcommand(name: &str) -> Option<clap::Command> {
    use clap::{Args as _, Subcommand as _};
    let c = clap::Command::new(name.to_string());
    // A `#[command(subcommand)]` variant: the group's commands, one of them required.
    fn group(c: clap::Command) -> clap::Command {
        c.subcommand_required(true).arg_required_else_help(true)
    }
    Some(match name {
        "genesis" => genesis::Args::augment_args(c),
        "commit" => commit::Args::augment_args(c),
        "head" => head::Args::augment_args(c),
        "world" => group(world::Cmd::augment_subcommands(c)),
        "object" => group(object::Cmd::augment_subcommands(c)),
        "log" => log::Args::augment_args(c),
        "show" => show::Args::augment_args(c),
        "status" => status::Args::augment_args(c),
        "registry" => group(registry::Cmd::augment_subcommands(c)),
        "publish" => publish::Args::augment_args(c),
        "pin" => pin::Args::augment_args(c),
        "package" => group(package::Cmd::augment_subcommands(c)),
        "transitions" => group(transitions::Cmd::augment_subcommands(c)),
        "invoke" => invoke::Args::augment_args(c),
        "tools" => group(tools::Cmd::augment_subcommands(c)),
        "ailang" => ailang::Args::augment_args(c),
        "receipt" => receipt::Args::augment_args(c),
        "session" => group(session::Cmd::augment_subcommands(c)),
        "effects" => effects::Args::augment_args(c),
        "approval" => group(approval::Cmd::augment_subcommands(c)),
        "broker" => group(broker::Cmd::augment_subcommands(c)),
        "verify" | "fsck" => verify::Args::augment_args(clap::Command::new("verify")).alias("fsck"),
        "why" => why::Args::augment_args(c),
        "key" => group(key::Cmd::augment_subcommands(c)),
        "checkpoint" => checkpoint::Args::augment_args(c),
        "prove" => prove::Args::augment_args(c),
        "limits" => group(limits::Cmd::augment_subcommands(c)),
        "mission" => mission::Args::augment_args(c),
        "serve" => serve::Args::augment_args(c),
        "mcp" => mcp::Args::augment_args(c),
        "replay" => replay::Args::augment_args(c),
        "export-episode" => export_episode::Args::augment_args(c),
        "util" => group(util::Cmd::augment_subcommands(c)),
        _ => return None,
    })
}

/// Parsed global options every command uses.
#[derive(Debug, Clone)]
pub struct Context {
    /// The store path as given.
    pub db: PathBuf,
    /// Whether `--db` or `WORLD_DB` named the store (not the default path).
    pub db_explicit: bool,
    /// `--json`
    pub json: bool,
    /// `-q`
    pub quiet: bool,
    /// Colour on stderr.
    pub color: bool,
    /// `--wait-lock`
    pub wait_lock: Option<Duration>,
    /// The clock every subcommand reads (`WORLD_TEST_NOW` fixes it; spec README "Clock").
    pub clock: crate::clock::Clock,
}

impl Context {
    /// Build from the parsed command line.
    pub fn new(cli: &Cli) -> Result<Self, CliError> {
        let db = match &cli.root.db {
            Some(p) => p.clone(),
            None => {
                let home = std::env::var_os("HOME")
                    .ok_or_else(|| CliError::usage("store", "no --db given and HOME is unset"))?;
                PathBuf::from(home).join(".ailang/world/world.db")
            }
        };
        let wait_lock = match cli.root.wait_lock {
            None => None,
            Some(s) if (0.0..=86_400.0).contains(&s) => Some(Duration::from_secs_f64(s)),
            Some(s) => {
                return Err(CliError::usage(
                    "--wait-lock",
                    format!("{s} is not a number of seconds between 0 and 86400"),
                ))
            }
        };
        // Every attended prompt's wait (issue 29 §5): `WORLD_PROMPT_TIMEOUT` seconds, else the
        // default; `publish --prompt-timeout` overrides both for its prompt.
        if let Some(v) = std::env::var_os("WORLD_PROMPT_TIMEOUT") {
            let v = v.to_string_lossy();
            match v.trim().parse::<u64>() {
                Ok(n) if (1..=86_400).contains(&n) => fence::set_prompt_timeout(n),
                _ => {
                    return Err(CliError::usage(
                        "WORLD_PROMPT_TIMEOUT",
                        format!(
                            "{:?} is not a whole number of seconds between 1 and 86400",
                            v.as_ref()
                        ),
                    ))
                }
            }
        }
        let color = match cli.root.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::IsTerminal::is_terminal(&std::io::stderr())
            }
        };
        Ok(Context {
            db,
            db_explicit: cli.root.db.is_some(),
            json: cli.root.json,
            quiet: cli.root.quiet,
            color,
            wait_lock,
            clock: crate::clock::Clock::from_env(),
        })
    }

    /// Open the store read-only (no lock, nothing written).
    pub fn open_read(&self) -> Result<Store, CliError> {
        Store::open_read(&self.db).map_err(|e| CliError::store("open store", e))
    }

    /// Take the writer lock and open the store; `create` only for the verbs that may create it.
    pub fn open_write(&self, create: bool) -> Result<Store, CliError> {
        Store::open_write(
            &self.db,
            WriteOptions {
                create,
                wait_lock: self.wait_lock,
            },
        )
        .map_err(|e| {
            let mut err = CliError::store("open store", e);
            if let (Exit::LockHeld, Some(w)) = (err.exit, self.wait_lock) {
                err.hints = vec![format!(
                    "waited {:.1} s (--wait-lock) and the other writer still holds it; retry later or wait longer",
                    w.as_secs_f64()
                )];
            }
            err
        })
    }

    /// Now, in Unix seconds, from [`Context::clock`].
    pub fn now(&self) -> i64 {
        self.clock.now_unix()
    }
}

/// Refuse to read `-` (stdin) when stdin is a terminal: the command would wait silently for
/// input the user most likely meant to pipe (issue 29; jq refuses the same way). Exit 2
/// ([`Exit::Usage`]) with a hint naming `input` (what the command reads there) and the two
/// ways to give it. DEC-UX-16.
///
/// # Errors
/// The refusal, when stdin is a terminal.
pub fn stdin_not_terminal(what: &str, input: &str) -> Result<(), CliError> {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() {
        return Err(CliError::usage(
            what,
            format!("`-` reads {input} from stdin, which is a terminal; nothing was read"),
        )
        .hint(
            "pipe it in (`cat FILE | world …`) or redirect it (`world … < FILE`), or name FILE instead of `-`",
        ));
    }
    Ok(())
}

/// Read a whole input file (`-` = stdin), refusing more than `max` bytes without reading
/// further, a directory, a 0-byte input, and `-` when stdin is a terminal
/// ([`stdin_not_terminal`]).
pub fn read_input(path: &Path, max: usize, what: &str) -> Result<Vec<u8>, CliError> {
    let label = path.display().to_string();
    let mut buf = Vec::new();
    let limit = max as u64 + 1;
    if path == Path::new("-") {
        stdin_not_terminal(what, "its input")?;
        std::io::stdin()
            .lock()
            .take(limit)
            .read_to_end(&mut buf)
            .map_err(|e| CliError::failed(what, format!("read stdin: {e}")))?;
    } else {
        // The one bounded-read rule: a regular file only (a FIFO or device is refused
        // without blocking), bounded while reading (issue 13 §5, issue 26 §5).
        buf = crate::fileread::read_regular(path, max).map_err(|e| CliError::failed(what, e))?;
    }
    if buf.len() > max {
        return Err(CliError::failed(
            what,
            format!("{label} is over the {max}-byte limit; nothing was read further"),
        ));
    }
    if buf.is_empty() {
        return Err(CliError::failed(what, format!("{label} is empty")));
    }
    Ok(buf)
}

/// The subcommand path of the command line (`world mission apply`), never its arguments:
/// the words of `args` that name subcommands, in order, skipping flags.
pub fn command_path<I: IntoIterator<Item = std::ffi::OsString>>(args: I) -> String {
    // The command's own tree, not the whole one: this runs before every command (DEC-PERF-17).
    let mut cmd: Option<clap::Command> = None;
    let mut path = vec!["world".to_string()];
    for a in args.into_iter().skip(1) {
        let Some(a) = a.to_str() else { continue };
        if a == "--" {
            break;
        }
        if a.starts_with('-') {
            continue;
        }
        let sub = match &cmd {
            None => invoked_subcommand(a),
            Some(c) => c.find_subcommand(a).cloned(),
        };
        match sub {
            Some(sub) => {
                path.push(sub.get_name().to_string());
                cmd = Some(sub);
            }
            None if path.len() > 1 => break,
            None => continue,
        }
    }
    path.join(" ")
}

/// Run one parsed command.
pub fn run(cli: Cli) -> Result<Exit, CliError> {
    // Name this command in the writer lock files it takes (the exit-6 hint of another writer
    // quotes it, DEC-UX-11).
    let path = command_path(std::env::args_os());
    crate::store::lock::set_label(&path);
    if cli.root.wait_lock.is_some() && is_read_only(&path) {
        return Err(CliError::usage(
            "--wait-lock",
            format!("`{path}` never takes the writer lock, so there is nothing to wait for"),
        )
        .hint(
            "--wait-lock applies to commands that write (commit, publish, invoke, session mint, …)",
        ));
    }
    let ctx = Context::new(&cli)?;
    if secrets::active() {
        let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
        secrets::withhold_unknown(&args, Store::open_read(&ctx.db).ok().as_ref());
    }
    let mut out = output::Output::new(&ctx);
    if let Some(fields) = cli.root.json_fields.as_deref().filter(|f| !f.is_empty()) {
        out.select(select_fields(&path, fields)?);
    }
    let exit = match cli.command {
        Command::Genesis(a) => genesis::run(&ctx, &mut out, a),
        Command::Commit(a) => commit::run(&ctx, &mut out, a),
        Command::Head(a) => head::run(&ctx, &mut out, a),
        Command::World(c) => world::run(&ctx, &mut out, c),
        Command::Object(c) => object::run(&ctx, &mut out, c),
        Command::Log(a) => log::run(&ctx, &mut out, a),
        Command::Show(a) => show::run(&ctx, &mut out, a),
        Command::Status(a) => status::run(&ctx, &mut out, a),
        Command::Registry(c) => registry::run(&ctx, &mut out, c),
        Command::Publish(a) => publish::run(&ctx, &mut out, a),
        Command::Pin(a) => pin::run(&ctx, &mut out, a),
        Command::Package(c) => package::run(&ctx, &mut out, c),
        Command::Transitions(c) => transitions::run(&ctx, &mut out, c),
        Command::Invoke(a) => invoke::run(&ctx, &mut out, a),
        Command::Tools(c) => tools::run(&ctx, &mut out, c),
        Command::Ailang(c) => ailang::run(&ctx, &mut out, c),
        Command::Receipt(a) => receipt::run(&ctx, &mut out, a),
        Command::Session(c) => session::run(&ctx, &mut out, c),
        Command::Effects(a) => effects::run(&ctx, &mut out, a),
        Command::Approval(c) => approval::run(&ctx, &mut out, c),
        Command::Broker(c) => broker::run(&ctx, &mut out, c),
        Command::Verify(a) => verify::run(&ctx, &mut out, a),
        Command::Why(a) => why::run(&ctx, &mut out, a),
        Command::Key(c) => key::run(&ctx, &mut out, c),
        Command::Checkpoint(a) => checkpoint::run(&ctx, &mut out, a),
        Command::Prove(a) => prove::run(&ctx, &mut out, a),
        Command::Limits(c) => limits::run(&ctx, &mut out, c),
        Command::Mission(a) => mission::run(&ctx, &mut out, a),
        Command::Serve(a) => serve::run(&ctx, &mut out, a),
        Command::Mcp(a) => mcp::run(&ctx, &mut out, a),
        Command::Replay(a) => replay::run(&ctx, &mut out, a),
        Command::ExportEpisode(a) => export_episode::run(&ctx, &mut out, a),
        Command::Util(c) => util::run(&ctx, &mut out, c),
    }?;
    out.flush()?;
    Ok(exit)
}

/// Map a store error from a read to a CLI error, keeping the verb as context.
pub(crate) fn read_err(what: &'static str) -> impl Fn(store::Error) -> CliError {
    move |e| CliError::store(what, e)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    /// The whole tree's parse, as [`parse_from`] falls back to it.
    fn parse_whole(args: &[&str]) -> Result<Cli, String> {
        use clap::FromArgMatches;
        let args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
        let cmd = with_wait_lock(examples::attach_for(Cli::command(), "world", &args[1..]));
        let m = cmd.try_get_matches_from(&args).map_err(|e| e.to_string())?;
        let mut cli = Cli::from_arg_matches(&m).map_err(|e| e.to_string())?;
        cli.root.json = cli.root.json_fields.is_some();
        let mut m = &m;
        while let Some((_, sub)) = m.subcommand() {
            if let Ok(Some(v)) = sub.try_get_one::<f64>("wait_lock") {
                cli.root.wait_lock = Some(*v);
            }
            m = sub;
        }
        Ok(cli)
    }

    fn args_of(c: &clap::Command) -> String {
        format!("{:?}", c.get_arguments().collect::<Vec<_>>())
    }

    #[test]
    fn the_root_options_are_the_derived_ones() {
        assert_eq!(args_of(&root_command()), args_of(&Cli::command()));
    }

    #[test]
    fn every_command_has_its_derived_tree_alone() {
        let whole = Cli::command();
        for sub in whole.get_subcommands() {
            let name = sub.get_name();
            let alone = invoked_subcommand(name).unwrap_or_else(|| panic!("{name} has no tree"));
            assert_eq!(alone.get_name(), name);
            assert_eq!(args_of(&alone), args_of(sub), "{name}'s options");
            assert_eq!(
                format!("{:?}", alone.get_subcommands().collect::<Vec<_>>()),
                format!("{:?}", sub.get_subcommands().collect::<Vec<_>>()),
                "{name}'s subcommands"
            );
            assert_eq!(
                alone.is_subcommand_required_set(),
                sub.is_subcommand_required_set(),
                "{name}"
            );
            assert_eq!(
                alone.get_all_aliases().collect::<Vec<_>>(),
                sub.get_all_aliases().collect::<Vec<_>>(),
                "{name}'s aliases"
            );
            for alias in sub.get_all_aliases() {
                assert!(invoked_subcommand(alias).is_some(), "{alias}");
            }
        }
        assert!(invoked_subcommand("no-such-command").is_none());
    }

    #[test]
    fn the_invoked_tree_parses_as_the_whole_tree() {
        for argv in [
            &["world", "head"][..],
            &["world", "--db", "x.db", "--json", "head"],
            &["world", "-q", "log", "--limit", "3"],
            &["world", "fsck", "--json"],
            &["world", "--wait-lock", "2", "commit", "b.json"],
            &["world", "commit", "--wait-lock", "3", "b.json"],
            &["world", "--color", "never", "limits", "report", "--json"],
            &["world", "session", "list"],
            &["world", "replay", "--all", "--keep-going"],
            &["world", "show", "5", "--db=y.db"],
            &["world", "log", "--json=index,outcome"],
            &["world", "--json", "effects"],
        ] {
            let args: Vec<std::ffi::OsString> = argv.iter().map(Into::into).collect();
            assert!(invoked_tree(&args).is_some(), "{argv:?}");
            let fast = parse_from(argv.iter()).map_err(|e| e.to_string());
            assert_eq!(
                format!("{fast:?}"),
                format!("{:?}", parse_whole(argv)),
                "{argv:?}"
            );
        }
    }

    #[test]
    fn the_command_path_is_the_whole_trees() {
        fn whole(args: &[&str]) -> String {
            let mut cmd = Cli::command();
            let mut path = vec!["world".to_string()];
            for a in &args[1..] {
                if *a == "--" {
                    break;
                }
                if a.starts_with('-') {
                    continue;
                }
                match cmd.find_subcommand(a) {
                    Some(sub) => {
                        path.push(sub.get_name().to_string());
                        let sub = sub.clone();
                        cmd = sub;
                    }
                    None if path.len() > 1 => break,
                    None => continue,
                }
            }
            path.join(" ")
        }
        for argv in [
            &["world", "head"][..],
            &[
                "world",
                "--db",
                "x.db",
                "mission",
                "apply",
                "--commands",
                "f",
            ],
            &["world", "fsck"],
            &["world", "limits", "report", "extra"],
            &["world", "session", "mint", "--", "list"],
            &["world", "nosuch", "log", "get", "5"],
            &["world"],
        ] {
            let args: Vec<std::ffi::OsString> = argv.iter().map(Into::into).collect();
            assert_eq!(command_path(args), whole(argv), "{argv:?}");
        }
    }

    #[test]
    fn help_version_and_errors_go_to_the_whole_tree() {
        for argv in [
            &["world"][..],
            &["world", "--help"],
            &["world", "head", "-h"],
            &["world", "-qh", "head"],
            &["world", "-V"],
            &["world", "help", "head"],
            &["world", "limits", "help"],
            &["world", "--", "head"],
            &["world", "nosuch"],
        ] {
            let args: Vec<std::ffi::OsString> = argv.iter().map(Into::into).collect();
            assert!(invoked_tree(&args).is_none(), "{argv:?}");
        }
        // An error the invoked tree gives is the whole tree's, printed from it.
        for argv in [
            &["world", "head", "--nope"][..],
            &["world", "log", "--limit", "x"],
            &["world", "limits"],
            &["world", "--color", "pink", "head"],
        ] {
            let fast = parse_from(argv.iter())
                .map(|_| ())
                .map_err(|e| e.to_string());
            let whole = parse_whole(argv).map(|_| ());
            assert!(fast.is_err(), "{argv:?}");
            assert_eq!(fast, whole, "{argv:?}");
        }
    }
}
