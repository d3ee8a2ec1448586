//! `world commit`: compare-and-append one world (store-format.md §12, DEC-CLI-2, DEC-STORE-2).

use std::io::{BufRead, Read};
use std::path::PathBuf;

use super::output::Output;
use super::{read_input, CliError, Context, Exit};
use crate::ops::{
    self,
    commit::{Committed, PutError},
};
use crate::store::commit::{parse_body, Commit, ValidateError, MAX_BODY};
use crate::store::Error as StoreError;

/// Append a world to the log if the head is still the one you observed.
///
/// The body is the `POST /v1/commit` JSON (payloads base64). No session is needed: holding
/// the writer lock on a local file is the authority (DEC-CLI-2). An `"invocationId":"rest:<id>"`
/// makes the commit idempotent and answerable by `world receipt`. A genesis body (empty
/// `observedHead`) may create the store. With `--put FILE --semantic-id ID` the body is built
/// from the current head (store-format.md §8.4a) instead of written by hand.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Commit body as JSON; `-` reads stdin
    #[arg(
        value_name = "FILE",
        required_unless_present_any = ["batch", "put"],
        conflicts_with_all = ["batch", "put"]
    )]
    file: Option<PathBuf>,
    /// JSON Lines file, one commit per line, each in its own transaction: a full commit
    /// body, or a put line (`{"put":"FILE","semanticId":"ID"}`, or `"text"`, `"json"` or
    /// base64 `"payload"` inline) that chains from the head like --put
    #[arg(long, value_name = "FILE.jsonl", conflicts_with = "put")]
    batch: Option<PathBuf>,
    /// With --batch: commit the remaining bodies after a refusal, and report every refusal
    #[arg(long, requires = "batch")]
    keep_going: bool,
    /// Store FILE's bytes as an object of the next world (repeatable; the first is the state
    /// root); the entry extends the current head
    #[arg(long, value_name = "FILE", requires = "semantic_id")]
    put: Vec<PathBuf>,
    /// Semantic id of the --put objects: once for all, or once per --put in order
    #[arg(long, value_name = "ID", requires = "put")]
    semantic_id: Vec<String>,
    /// Provenance text of the --put objects
    #[arg(long, value_name = "P", default_value = "client:cli", requires = "put")]
    provenance: String,
    /// `writtenBy` of the --put entry (not `coordinator:` or `world:`, which world writes)
    #[arg(long, value_name = "W", default_value = "client:cli", requires = "put")]
    writer: String,
    /// With --put: a `rest:<id>` invocation id, so `world receipt` can answer for it
    #[arg(long, value_name = "rest:ID", requires = "put")]
    invocation_id: Option<String>,
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

/// A refused `--put` as a CLI error.
fn put_err(e: PutError) -> CliError {
    let what = "commit --put";
    match e {
        PutError::Store(s) => CliError::store(what, s),
        e @ PutError::NoHead => CliError::failed(what, e).hint("create one with `world genesis`"),
        e @ PutError::NoWorldRow(_) => {
            CliError::failed(what, e).hint("`world verify` reports what is wrong")
        }
        e @ PutError::NoFiles => CliError::usage(what, e),
    }
}

/// Check the `--put` arguments and read the files (before the lock is taken).
fn read_puts(args: &Args) -> Result<ops::commit::Put, CliError> {
    let what = "commit --put";
    let mut total = 0usize;
    let mut files = Vec::new();
    for p in &args.put {
        let bytes = read_input(p, MAX_BODY, what)?;
        total += bytes.len();
        if total > MAX_BODY {
            return Err(CliError::failed(
                what,
                format!("the --put files add up to over {MAX_BODY} bytes (the commit body bound)"),
            ));
        }
        files.push(bytes);
    }
    let put = ops::commit::Put {
        files,
        semantic_ids: args.semantic_id.clone(),
        provenance: args.provenance.clone(),
        writer: args.writer.clone(),
        invocation_id: args.invocation_id.clone(),
    };
    check_put(&put, what)?;
    Ok(put)
}

/// One line of a `--batch` file: a full commit body, or a put line that is built on the head
/// when its turn comes (like `--put`).
enum Line {
    Body(Box<Commit>),
    Put(ops::commit::Put),
}

/// A put line of `--batch` (README "Scripted commits"): exactly one of `put` (a file path or
/// several; a relative path is resolved against the batch file's directory, then the current
/// directory), `text` (UTF-8 stored as is), `json` (any JSON value, stored as its compact
/// text, keys in the order given) or `payload` (standard base64); `semanticId` once or once
/// per file; `provenance`, `writtenBy` and `invocationId` (`rest:<id>`) as with `--put`.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PutLine {
    #[serde(default)]
    put: Option<OneOrMany>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    json: Option<Box<serde_json::value::RawValue>>,
    #[serde(default)]
    payload: Option<String>,
    semantic_id: OneOrMany,
    #[serde(default)]
    provenance: Option<String>,
    #[serde(default)]
    written_by: Option<String>,
    #[serde(default)]
    invocation_id: Option<String>,
}

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn into_vec(self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v,
        }
    }
}

/// The keys that make a `--batch` line a put line rather than a commit body.
const PUT_KEYS: [&str; 4] = ["put", "text", "json", "payload"];

/// Whether a `--batch` line is a put line: a JSON object with one of [`PUT_KEYS`] at the top.
fn is_put_line(line: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Keys(std::collections::BTreeMap<String, serde::de::IgnoredAny>);
    serde_json::from_slice::<Keys>(line)
        .map(|k| PUT_KEYS.iter().any(|p| k.0.contains_key(*p)))
        .unwrap_or(false)
}

/// Parse put line `n` of batch file `batch` and read its files (before the lock is taken).
fn put_line(line: &[u8], n: usize, batch: &std::path::Path) -> Result<ops::commit::Put, CliError> {
    use base64::Engine;
    let what = format!("commit (line {n})");
    let p: PutLine = serde_json::from_slice(line).map_err(|e| {
        CliError::failed(&what, format!("put line: {e}")).hint(
            "a put line is {\"put\":\"FILE\"|\"text\":…|\"json\":…|\"payload\":BASE64, \"semanticId\":ID} \
             with optional provenance, writtenBy, invocationId",
        )
    })?;
    let given = [
        p.put.is_some(),
        p.text.is_some(),
        p.json.is_some(),
        p.payload.is_some(),
    ];
    if given.iter().filter(|g| **g).count() != 1 {
        return Err(CliError::failed(
            &what,
            "a put line carries exactly one of put, text, json, payload",
        ));
    }
    let files: Vec<Vec<u8>> = if let Some(paths) = p.put {
        let paths = paths.into_vec();
        if paths.is_empty() {
            return Err(CliError::failed(&what, "\"put\" names no file"));
        }
        let dir = batch.parent().unwrap_or(std::path::Path::new(""));
        let mut out = Vec::new();
        for path in paths {
            let given = std::path::PathBuf::from(&path);
            let beside = dir.join(&given);
            let chosen = if given.is_absolute() || beside.exists() || !given.exists() {
                beside
            } else {
                given
            };
            if !chosen.exists() {
                return Err(CliError::failed(&what, format!("{path}: no such file")).hint(
                    format!(
                        "a relative \"put\" path is read from the batch file's directory ({}), then the current directory",
                        if dir.as_os_str().is_empty() { ".".into() } else { dir.display().to_string() }
                    ),
                ));
            }
            out.push(read_input(&chosen, MAX_BODY, &what)?);
        }
        out
    } else if let Some(t) = p.text {
        vec![t.into_bytes()]
    } else if let Some(j) = p.json {
        vec![j.get().as_bytes().to_vec()]
    } else {
        let b64 = p.payload.unwrap_or_default();
        vec![base64::engine::general_purpose::STANDARD
            .decode(b64.as_bytes())
            .map_err(|e| CliError::failed(&what, format!("\"payload\" is not base64: {e}")))?]
    };
    if files.iter().map(Vec::len).sum::<usize>() > MAX_BODY {
        return Err(CliError::failed(
            &what,
            format!("the line's objects add up to over {MAX_BODY} bytes (the commit body bound)"),
        ));
    }
    let put = ops::commit::Put {
        semantic_ids: p.semantic_id.into_vec(),
        provenance: p.provenance.unwrap_or_else(|| "client:cli".into()),
        writer: p.written_by.unwrap_or_else(|| "client:cli".into()),
        invocation_id: p.invocation_id,
        files,
    };
    check_put(&put, &what)?;
    Ok(put)
}

/// The `--put` rules shared by the flags and put lines: semantic ids once or once per file,
/// none empty; a non-empty writer outside the reserved namespaces is checked by the store;
/// an invocation id is `rest:<id>`.
fn check_put(put: &ops::commit::Put, what: &str) -> Result<(), CliError> {
    let n = put.semantic_ids.len();
    if n != 1 && n != put.files.len() {
        return Err(CliError::usage(
            what,
            format!(
                "give the semantic id once for all {} objects, or once per object (got {n})",
                put.files.len()
            ),
        ));
    }
    if let Some(s) = put.semantic_ids.iter().find(|s| s.is_empty()) {
        return Err(CliError::usage(
            what,
            format!("semantic id {s:?} must not be empty"),
        ));
    }
    if put.writer.is_empty() {
        return Err(CliError::usage(what, "the writer must not be empty"));
    }
    if let Some(id) = &put.invocation_id {
        if !id.starts_with("rest:") || id.len() == 5 {
            return Err(CliError::usage(
                what,
                format!("invocation id {id:?} must be rest:<id>"),
            ));
        }
    }
    Ok(())
}

/// One refused body of a `--keep-going` batch.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Refusal {
    line: usize,
    code: &'static str,
    message: String,
}

/// Run `world commit`.
pub fn run(ctx: &Context, out: &mut Output, args: Args) -> Result<Exit, CliError> {
    if !args.put.is_empty() {
        let put = read_puts(&args)?;
        let mut store = ctx.open_write(false)?;
        let Committed { commit: c, landed } =
            ops::commit::put(&mut store, &put, ctx.now()).map_err(put_err)?;
        if out.json {
            out.json_line(&serde_json::json!({
                "selectedHead": landed.selected_head,
                "entryIndex": landed.entry_index,
                "entryHash": landed.entry_hash,
                "replayed": landed.replayed,
                "objects": c.objects.iter().map(|o| &o.meta.hash).collect::<Vec<_>>(),
            }))?;
        } else if landed.replayed {
            print_landed(out, &landed)?;
        } else {
            out.line(&landed.selected_head)?;
            out.status(format!(
                "committed entry {} ({} object(s), state root {})",
                landed.entry_index,
                c.objects.len(),
                c.next_world.state_root
            ));
        }
        return Ok(Exit::Success);
    }
    if let Some(batch) = &args.batch {
        return run_batch(ctx, out, batch, args.keep_going);
    }
    let Some(file) = &args.file else {
        return Err(CliError::usage(
            "commit",
            "give FILE, -, --put FILE or --batch FILE.jsonl",
        ));
    };
    let c = validate(&read_input(file, MAX_BODY, "commit")?, None)?;
    let create = c.observed_head.is_empty();
    let mut store = ctx.open_write(create)?;
    match ops::commit::commit(&mut store, &c, ctx.now()) {
        Ok(l) => {
            print_landed(out, &l)?;
            Ok(Exit::Success)
        }
        Err(e) => Err(conflict_error(out, "commit".into(), e)?),
    }
}

fn print_landed(out: &mut Output, l: &crate::store::commit::Landed) -> Result<(), CliError> {
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
    Ok(())
}

/// Why one `--batch` line was not committed.
enum BatchErr {
    Store(StoreError),
    Cli(CliError),
}

impl BatchErr {
    fn into_cli(self, what: String) -> CliError {
        match self {
            BatchErr::Store(e) => CliError::store(what, e),
            BatchErr::Cli(e) => e.context(what),
        }
    }
}

/// The CLI error for a refused commit; a head conflict prints both heads on stdout (text) or
/// keeps them in the envelope (JSON).
fn conflict_error(out: &mut Output, what: String, e: StoreError) -> Result<CliError, CliError> {
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
        return Ok(err
            .detail("class", "HeadConflict")
            .detail("observedHead", observed)
            .detail("selectedHead", selected));
    }
    Ok(err)
}

/// `commit --batch`: validate every line before the lock, then commit each body in its own
/// transaction with a progress bar on a terminal; stop at the first refusal, or with
/// `keep_going` report each and go on. Ends with a summary (stderr; `--json`: a last line
/// `{"summary":{…}}`, docs/json/commit-batch-summary.schema.json).
fn run_batch(
    ctx: &Context,
    out: &mut Output,
    batch: &std::path::Path,
    keep_going: bool,
) -> Result<Exit, CliError> {
    let commits = read_batch(batch)?;
    let create = commits
        .first()
        .is_some_and(|(_, c)| matches!(c, Line::Body(c) if c.observed_head.is_empty()));
    let mut store = ctx.open_write(create)?;
    let now = ctx.now();
    let total = commits.len();
    let started = std::time::Instant::now();
    let pb = super::progress::bar(out, total as u64, "committing");
    let (mut committed, mut replayed) = (0usize, 0usize);
    let mut refusals: Vec<Refusal> = Vec::new();
    let mut stopped: Option<(usize, usize, BatchErr)> = None;
    for (pos, (line_no, c)) in commits.into_iter().enumerate() {
        let result = match &c {
            Line::Body(c) => ops::commit::commit(&mut store, c, now).map_err(BatchErr::Store),
            Line::Put(p) => ops::commit::put(&mut store, p, now)
                .map(|done| done.landed)
                .map_err(|e| match e {
                    PutError::Store(s) => BatchErr::Store(s),
                    other => BatchErr::Cli(put_err(other)),
                }),
        };
        match result {
            Ok(l) => {
                if l.replayed {
                    replayed += 1;
                } else {
                    committed += 1;
                }
                pb.suspend(|| print_landed(out, &l))?;
            }
            Err(e) if keep_going => {
                let err = e.into_cli(format!("commit (line {line_no})"));
                pb.suspend(|| {
                    let _ = out.flush();
                    eprintln!("refused: line {line_no}: {}", err.message_line());
                });
                refusals.push(Refusal {
                    line: line_no,
                    code: err.code(),
                    message: err.message_line(),
                });
            }
            Err(e) => {
                stopped = Some((pos, line_no, e));
                break;
            }
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    let failed = refusals.len() + usize::from(stopped.is_some());
    let summary = serde_json::json!({"summary": {
        "bodies": total,
        "committed": committed,
        "alreadyCommitted": replayed,
        "failed": failed,
        "notAttempted": stopped.as_ref().map_or(0, |(pos, _, _)| total - pos - 1),
        "refusals": refusals,
        "seconds": (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
        "ok": failed == 0,
    }});
    if out.json {
        out.json_line(&summary)?;
    }
    if let Some((pos, line_no, e)) = stopped {
        return Err(stopped_error(out, total, pos, line_no, e)?);
    }
    let text = format!(
        "{committed} of {total} bodies committed, {replayed} already committed, {} refused in {:.1} s",
        refusals.len(),
        started.elapsed().as_secs_f64()
    );
    if refusals.is_empty() {
        out.status(text);
        Ok(Exit::Success)
    } else {
        let lines: Vec<String> = refusals.iter().map(|r| r.line.to_string()).collect();
        Err(CliError::failed(
            "commit --batch",
            format!("{text} (lines {})", lines.join(", ")),
        ))
    }
}

/// The error of a batch stopped at body `pos` (0-based, of `total`; file line `line_no`):
/// which body, how many landed before it, and the hint to keep going.
fn stopped_error(
    out: &mut Output,
    total: usize,
    pos: usize,
    line_no: usize,
    e: BatchErr,
) -> Result<CliError, CliError> {
    let what = if total > 1 {
        format!(
            "commit (body {} of {total}; {pos} landed before it; line {line_no})",
            pos + 1
        )
    } else {
        "commit".into()
    };
    let err = match e {
        BatchErr::Store(e) => conflict_error(out, what, e)?,
        BatchErr::Cli(e) => e.context(what),
    };
    Ok(err.hint("--keep-going commits the remaining bodies and reports every refusal"))
}

/// Every line of the `--batch` file `batch`, validated before anything is locked: a commit
/// body or a `put` line, with its 1-based line number; blank lines skipped.
///
/// # Errors
/// Exit 1: the file is not a readable regular file, a line is over [`MAX_BODY`] bytes or
/// does not validate, or the file holds no bodies.
fn read_batch(batch: &std::path::Path) -> Result<Vec<(usize, Line)>, CliError> {
    let f =
        crate::fileread::open_regular(batch).map_err(|e| CliError::failed("commit --batch", e))?;
    let mut commits: Vec<(usize, Line)> = Vec::new();
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
        let parsed = if is_put_line(&line) {
            Line::Put(put_line(&line, n, batch)?)
        } else {
            Line::Body(Box::new(validate(&line, Some(n))?))
        };
        commits.push((n, parsed));
    }
    if commits.is_empty() {
        return Err(CliError::failed(
            "commit --batch",
            format!("{} holds no commit bodies", batch.display()),
        ));
    }
    Ok(commits)
}
