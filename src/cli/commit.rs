//! `world commit`: compare-and-append one world (store-format.md §12, DEC-CLI-2, DEC-STORE-2).

use std::io::{BufRead, Read};
use std::path::PathBuf;

use super::output::Output;
use super::{read_input, CliError, Context, Exit};
use crate::store::commit::{parse_body, Commit, ValidateError, MAX_BODY};
use crate::store::Error as StoreError;

/// Append a world to the log if the head is still the one you observed.
///
/// The body is the `POST /v1/commit` JSON (payloads base64). No session is needed: holding
/// the writer lock on a local file is the authority (DEC-CLI-2). An `"invocationId":"rest:<id>"`
/// makes the commit idempotent and answerable by `world receipt`. A genesis body (empty
/// `observedHead`) may create the store.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Commit body as JSON; `-` reads stdin
    #[arg(
        value_name = "FILE",
        required_unless_present = "batch",
        conflicts_with = "batch"
    )]
    file: Option<PathBuf>,
    /// JSON Lines file, one commit body per line, each committed in its own transaction
    #[arg(long, value_name = "FILE.jsonl")]
    batch: Option<PathBuf>,
}

fn validate(body: &[u8], n: Option<usize>) -> Result<Commit, CliError> {
    let what = match n {
        Some(n) => format!("commit (line {n})"),
        None => "commit".to_string(),
    };
    let parsed = parse_body(body).map_err(|e| CliError::failed(&what, e))?;
    parsed.validate().map_err(|e| match e {
        ValidateError::Body(b) => CliError::failed(&what, b),
        ValidateError::Store(s) => CliError::store(&what, s),
    })
}

/// Run `world commit`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    let commits: Vec<Commit> = match (&args.file, &args.batch) {
        (Some(file), _) => vec![validate(&read_input(file, MAX_BODY, "commit")?, None)?],
        (None, Some(batch)) => {
            let f = crate::fileread::open_regular(batch)
                .map_err(|e| CliError::failed("commit --batch", e))?;
            let mut commits = Vec::new();
            let mut reader = std::io::BufReader::new(f);
            let mut line = Vec::new();
            let mut n = 0;
            loop {
                line.clear();
                let read = (&mut reader)
                    .take(MAX_BODY as u64 + 2)
                    .read_until(b'\n', &mut line)?;
                if read == 0 {
                    break;
                }
                n += 1;
                if line.len() > MAX_BODY + 1 && !line.ends_with(b"\n") {
                    return Err(CliError::failed(
                        format!("commit (line {n})"),
                        format!("line is over {MAX_BODY} bytes"),
                    ));
                }
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                commits.push(validate(&line, Some(n))?);
            }
            if commits.is_empty() {
                return Err(CliError::failed(
                    "commit --batch",
                    format!("{} holds no commit bodies", batch.display()),
                ));
            }
            commits
        }
        (None, None) => {
            return Err(CliError::usage(
                "commit",
                "give FILE, - or --batch FILE.jsonl",
            ))
        }
    };
    let create = commits.first().is_some_and(|c| c.observed_head.is_empty());
    let mut store = ctx.open_write(create)?;
    let now = ctx.now();
    let total = commits.len();
    let (landed, failure) = store.commit_many(commits, now);
    for l in &landed {
        if out.json {
            out.json_line(l)?;
        } else {
            out.line(&l.selected_head)?;
            if l.replayed {
                out.status(format!(
                    "entry {} was already committed under this invocation id; nothing written",
                    l.entry_index
                ));
            }
        }
    }
    match failure {
        None => Ok(Exit::Success),
        Some(e) => {
            let what = if total > 1 {
                format!(
                    "commit (body {} of {total}; {} landed before it)",
                    landed.len() + 1,
                    landed.len()
                )
            } else {
                "commit".into()
            };
            let mut details = None;
            if let StoreError::Conflict { observed, selected } = &e {
                details = Some((observed.clone(), selected.to_string()));
                if !out.json {
                    let q = |h: &str| {
                        if h.is_empty() {
                            "\"\"".to_string()
                        } else {
                            h.to_string()
                        }
                    };
                    out.line(format!("observed head: {}", q(observed)))?;
                    out.line(format!("selected head: {}", q(selected)))?;
                }
            }
            let err = CliError::store(what, e);
            if let Some((observed, selected)) = details {
                // The envelope keeps the REST error's `class` beside the CLI `code`.
                return Err(err
                    .detail("class", "HeadConflict")
                    .detail("observedHead", observed)
                    .detail("selectedHead", selected));
            }
            Err(err)
        }
    }
}
