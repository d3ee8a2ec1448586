//! The `check` and `run` pipelines with the external CLI contract (ailang.md §2–§3):
//! parse → load → type/effect check → entry selection → argument decoding → evaluation.
//! Everything runs on one thread with a large stack ([`super::on_big_stack`]).

use super::ast::{Module, TypeExpr};
use super::diag::{Diag, Severity, Span};
use super::eval::{Fail, Limits, Machine};
use super::loader::{load, MAX_SOURCE_BYTES};
use super::parser::parse_module;
use super::stdlib::json::{decode_prefix, to_value, DecodeError, J};
use super::types::check as typecheck;
use super::value::{display, List, Value};
use std::collections::HashSet;
use std::rc::Rc;
use std::time::Instant;
use world_interp::{RunError, RunOutcome};

/// Options shared by `check` and `run`.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// No progress banners on stdout (`--quiet`).
    pub quiet: bool,
    /// Enforce `MOD010` (module header = file path); relaxed by default like the capsule.
    pub strict_modules: bool,
    /// Capabilities granted to `run` (`--caps`); transitions get none.
    pub caps: Vec<String>,
    /// Maximum call depth (`--max-recursion-depth`); 0 means the default 10 000.
    pub max_recursion_depth: usize,
    /// Memory cap in bytes; 0 means [`super::value::DEFAULT_MEMORY_CAP`].
    pub memory_cap: usize,
    /// `run` only: leave `tests [...]` clauses and `test` blocks unparsed and unchecked
    /// ([`super::parser::parse_module_for_run`]). The capsule sets it: its sources were fully
    /// checked when published. `world ailang run` leaves it off, like the external `ailang`.
    pub skip_tests: bool,
}

/// The front end's result: a loaded module, or the diagnostics that stopped it.
pub struct Front {
    /// The parsed module.
    pub module: Module,
    /// The loaded program.
    pub program: super::eval::Program,
    /// Warnings to print.
    pub warnings: Vec<Diag>,
}

/// Parse, load and check `source`. Errors are labelled with `label`.
pub fn front(label: &str, source: &[u8], strict_modules: bool) -> Result<Front, Vec<Diag>> {
    front_with(label, source, strict_modules, false)
}

/// [`front`], skipping tests clauses and `test` blocks when `skip_tests` (see
/// [`Options::skip_tests`]).
pub fn front_with(
    label: &str,
    source: &[u8],
    strict_modules: bool,
    skip_tests: bool,
) -> Result<Front, Vec<Diag>> {
    if source.len() > MAX_SOURCE_BYTES {
        return Err(vec![Diag::error(
            "PAR_SIZE_001",
            format!(
                "source is {} bytes; the limit is {MAX_SOURCE_BYTES}",
                source.len()
            ),
            None,
        )
        .in_file(label)]);
    }
    let text = match std::str::from_utf8(source) {
        Ok(t) => t,
        Err(e) => {
            return Err(vec![Diag::error(
                "PAR_UTF8_001",
                format!(
                    "source is not valid UTF-8 (invalid byte at offset {})",
                    e.valid_up_to()
                ),
                None,
            )
            .in_file(label)])
        }
    };
    let parsed = if skip_tests {
        super::parser::parse_module_for_run(text)
    } else {
        parse_module(text)
    };
    let module = parsed.map_err(|d| vec![d.in_file(label)])?;
    let loaded = load(&module, label, strict_modules)
        .map_err(|ds| ds.into_iter().map(|d| d.in_file(label)).collect::<Vec<_>>())?;
    let mut warnings: Vec<Diag> = loaded
        .warnings
        .into_iter()
        .map(|d| d.in_file(label))
        .collect();
    let diags = typecheck(&module, &loaded.program);
    let (errs, warns): (Vec<Diag>, Vec<Diag>) = diags
        .into_iter()
        .partition(|d| d.severity == Severity::Error);
    warnings.extend(warns.into_iter().map(|d| d.in_file(label)));
    if !errs.is_empty() {
        let mut all: Vec<Diag> = errs.into_iter().map(|d| d.in_file(label)).collect();
        all.extend(warnings);
        return Err(all);
    }
    Ok(Front {
        module,
        program: loaded.program,
        warnings,
    })
}

/// A front-end result kept for reuse by later runs on the same thread (the persistent worker,
/// [`super::on_stack`]): keyed by the exact source bytes, label and front-end options.
pub struct CachedFront {
    label: String,
    strict: bool,
    skip_tests: bool,
    source: Vec<u8>,
    /// The parsed module.
    pub module: Module,
    /// The loaded program, shared by every run.
    pub program: Rc<super::eval::Program>,
    /// Warnings to print on every run.
    pub warnings: Vec<Diag>,
}

/// Entries kept by the front-end cache, most recent last.
pub const FRONT_CACHE_ENTRIES: usize = 8;
/// Sources larger than this (bytes) are not cached.
pub const FRONT_CACHE_MAX_SOURCE: usize = 1 << 20;

thread_local! {
    static FRONT_CACHE: std::cell::RefCell<Vec<Rc<CachedFront>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// [`front_with`], reusing this thread's earlier result for identical input: parsing and
/// checking are pure functions of (label, source bytes, options), so a warm run (the finish
/// phase after the plan, every call in `serve`/`mcp`) skips them. Failures are not cached.
pub fn cached_front(
    label: &str,
    source: &[u8],
    strict: bool,
    skip_tests: bool,
) -> Result<Rc<CachedFront>, Vec<Diag>> {
    let hit = FRONT_CACHE.with(|c| {
        c.borrow()
            .iter()
            .find(|e| {
                e.strict == strict
                    && e.skip_tests == skip_tests
                    && e.label == label
                    && e.source == source
            })
            .cloned()
    });
    if let Some(e) = hit {
        return Ok(e);
    }
    let f = front_with(label, source, strict, skip_tests)?;
    let entry = Rc::new(CachedFront {
        label: label.to_string(),
        strict,
        skip_tests,
        source: source.to_vec(),
        module: f.module,
        program: Rc::new(f.program),
        warnings: f.warnings,
    });
    if source.len() <= FRONT_CACHE_MAX_SOURCE {
        FRONT_CACHE.with(|c| {
            let mut c = c.borrow_mut();
            if c.len() >= FRONT_CACHE_ENTRIES {
                c.remove(0);
            }
            c.push(Rc::clone(&entry));
        });
    }
    Ok(entry)
}

fn render_all(ds: &[Diag]) -> String {
    let mut s = String::new();
    for d in ds {
        if d.code.is_empty() {
            s.push_str("Error: ");
            s.push_str(&d.message);
        } else {
            s.push_str(&d.render());
        }
        s.push('\n');
    }
    s
}

/// `ailang check FILE` (human mode): progress on stdout unless quiet, diagnostics on stderr,
/// `✓ No errors found!` on success; exit 0 pass, 1 any error.
pub fn check_outcome(label: &str, source: &[u8], opts: &Options) -> RunOutcome {
    let label_s = label.to_string();
    let src = source.to_vec();
    let opts = opts.clone();
    super::on_big_stack(move || {
        let mut out = RunOutcome::default();
        if !opts.quiet {
            out.stdout.extend_from_slice(
                format!("→ Type checking {label_s}...\n→ Effect checking...\n").as_bytes(),
            );
        }
        match front(&label_s, &src, opts.strict_modules) {
            Ok(f) => {
                out.stderr
                    .extend_from_slice(render_all(&f.warnings).as_bytes());
                if !opts.quiet {
                    out.stdout
                        .extend_from_slice("✓ No errors found!\n".as_bytes());
                }
            }
            Err(ds) => {
                out.stderr.extend_from_slice(render_all(&ds).as_bytes());
                out.exit_code = 1;
            }
        }
        out
    })
    .unwrap_or_else(internal_failure)
}

fn internal_failure() -> RunOutcome {
    RunOutcome {
        exit_code: 1,
        stdout: Vec::new(),
        stderr: b"Error: RUNTIME: the embedded interpreter thread failed\n".to_vec(),
    }
}

/// Why the program argument was refused (exit 2, `Error: <message>` on stderr).
#[derive(Debug, thiserror::Error)]
enum ArgsError {
    /// Nothing but a BOM and whitespace.
    #[error("the program argument is empty")]
    Empty,
    /// Not JSON.
    #[error("the program argument is not valid JSON: {0}")]
    NotJson(#[source] DecodeError),
    /// Text after the value.
    #[error("the program argument holds text after its JSON value")]
    TrailingText,
}

/// What an args-file or `--args-json` text holds, after BOM stripping and trimming.
fn resolve_args(raw: &[u8]) -> Result<J, ArgsError> {
    let raw = raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(raw);
    let text = raw.trim_ascii();
    if text.is_empty() {
        return Err(ArgsError::Empty);
    }
    let (d, end) = decode_prefix(text).map_err(ArgsError::NotJson)?;
    // A streaming decoder would ignore text after the value; the CLI argument must be one value.
    if !text[end..].trim_ascii().is_empty() {
        return Err(ArgsError::TrailingText);
    }
    Ok(d)
}

/// Why an argument does not decode against the entry's parameter type (exit 1).
#[derive(Debug, thiserror::Error)]
enum ArgDecodeError {
    /// The JSON kind does not fit the type.
    #[error("ARG_DECODE_MISMATCH: expected {expected}, got {got}")]
    Mismatch {
        /// The declared type's name.
        expected: String,
        /// The JSON kind given.
        got: &'static str,
    },
    /// Building the value failed (a runtime limit).
    #[error("{}", .0.message)]
    Value(Diag),
}

fn json_kind(j: &J) -> &'static str {
    match j {
        J::Null => "null",
        J::Bool(_) => "bool",
        J::Num(_) => "number",
        J::Str(_) => "string",
        J::Arr(_) => "array",
        J::Obj(_) => "object",
    }
}

fn type_name(t: &TypeExpr) -> String {
    match t {
        TypeExpr::Named(n, _, _) => n.to_string(),
        TypeExpr::List(_) => "list".to_string(),
        TypeExpr::Tuple(ts) if ts.is_empty() => "()".to_string(),
        TypeExpr::Tuple(_) => "tuple".to_string(),
        TypeExpr::Record(..) => "record".to_string(),
        TypeExpr::Func(..) => "function".to_string(),
    }
}

/// Decode a JSON argument against the entry's declared parameter type (ailang.md §3).
fn decode_arg(t: &TypeExpr, j: &J) -> Result<Value, ArgDecodeError> {
    let mismatch = || ArgDecodeError::Mismatch {
        expected: type_name(t),
        got: json_kind(j),
    };
    let v = match (t, j) {
        (TypeExpr::Named(n, _, _), J::Str(s)) if &**n == "string" => {
            Value::str(s.clone()).map_err(ArgDecodeError::Value)?
        }
        (TypeExpr::Named(n, _, _), J::Num(f)) if &**n == "float" => Value::Float(*f),
        (TypeExpr::Named(n, _, _), J::Num(f)) if &**n == "int" && f.fract() == 0.0 => {
            Value::Int(*f as i64)
        }
        (TypeExpr::Named(n, _, _), J::Bool(b)) if &**n == "bool" => Value::Bool(*b),
        (TypeExpr::Named(n, _, _), _) if &**n == "Json" => to_value(j).map_err(|_| mismatch())?,
        (TypeExpr::Tuple(ts), J::Null) if ts.is_empty() => Value::Unit,
        (TypeExpr::List(el), J::Arr(items)) => {
            let mut vs = Vec::new();
            for x in items {
                vs.push(decode_arg(el, x)?);
            }
            Value::List(List::from_vec(vs).map_err(ArgDecodeError::Value)?)
        }
        (TypeExpr::Record(fs, _), J::Obj(ms)) => {
            let mut out = Vec::new();
            for (k, ft) in fs {
                let Some((_, x)) = ms.iter().find(|(mk, _)| mk.as_str() == &**k) else {
                    return Err(mismatch());
                };
                out.push((Rc::clone(k), decode_arg(ft, x)?));
            }
            Value::record(out)
        }
        _ => return Err(mismatch()),
    };
    Ok(v)
}

/// One `run` request.
#[derive(Clone, Debug)]
pub struct RunRequest {
    /// The file label used in messages (`host/capsule/main.ail`).
    pub label: String,
    /// Source bytes.
    pub source: Vec<u8>,
    /// Entry function (`main`).
    pub entry: String,
    /// The argument text (`--args-json` or the args-file content); `None` = `null`.
    pub args: Option<Vec<u8>>,
    /// Wall-clock deadline.
    pub deadline: Option<Instant>,
    /// Cap on stdout and on stderr, bytes.
    pub output_cap: usize,
    /// Check/run options.
    pub options: Options,
}

/// `ailang run` with the CLI contract: returns stdout/stderr/exit, or [`RunError::Timeout`] /
/// [`RunError::OutputLimit`] when a bound ended the run.
pub fn run(req: RunRequest) -> Result<RunOutcome, RunError> {
    let cap = req.output_cap;
    let depth = match req.options.max_recursion_depth {
        0 => super::eval::MAX_RECURSION_DEPTH,
        d => d,
    };
    let r = super::on_stack(super::stack_for_depth(depth), move || run_on_thread(req))
        .unwrap_or_else(|| Ok(internal_failure()))?;
    if r.stdout.len() > cap {
        return Err(RunError::OutputLimit {
            stream: "stdout",
            cap,
        });
    }
    if r.stderr.len() > cap {
        return Err(RunError::OutputLimit {
            stream: "stderr",
            cap,
        });
    }
    Ok(r)
}

fn fail(mut out: RunOutcome, code: i32, msg: &str) -> Result<RunOutcome, RunError> {
    out.exit_code = code;
    out.stderr
        .extend_from_slice(format!("Error: {msg}\n").as_bytes());
    Ok(out)
}

fn run_on_thread(req: RunRequest) -> Result<RunOutcome, RunError> {
    let mut out = RunOutcome::default();
    let opts = &req.options;
    let expired = |d: Option<Instant>| d.is_some_and(|d| Instant::now() >= d);
    if !opts.quiet {
        out.stdout
            .extend_from_slice("→ Type checking...\n→ Effect checking...\n".as_bytes());
    }
    let arg = match &req.args {
        None => J::Null,
        Some(raw) => match resolve_args(raw) {
            Ok(j) => j,
            Err(e) => return fail(out, 2, &e.to_string()),
        },
    };
    let front = match cached_front(
        &req.label,
        &req.source,
        opts.strict_modules,
        opts.skip_tests,
    ) {
        Ok(f) => f,
        Err(ds) => {
            out.stderr.extend_from_slice(render_all(&ds).as_bytes());
            out.exit_code = 1;
            return Ok(out);
        }
    };
    out.stderr
        .extend_from_slice(render_all(&front.warnings).as_bytes());
    if expired(req.deadline) {
        return Err(RunError::Timeout);
    }
    let entry = match front.program.funcs.get(req.entry.as_str()) {
        Some(f) => Rc::clone(f),
        None => {
            let zero: Vec<_> = front
                .module
                .funcs
                .iter()
                .filter(|f| f.export && f.params.is_empty())
                .collect();
            match (req.entry.as_str(), zero.as_slice()) {
                ("main", [only]) => Rc::clone(only),
                _ => {
                    return fail(
                        out,
                        1,
                        &format!("entrypoint '{}' not found in module", req.entry),
                    )
                }
            }
        }
    };
    let args = match entry.params.as_slice() {
        [] => {
            if arg != J::Null {
                return fail(
                    out,
                    1,
                    &format!("ARG_DECODE_MISMATCH: expected (), got {}", json_kind(&arg)),
                );
            }
            Vec::new()
        }
        [p] => {
            let t = p.ty.clone().unwrap_or(TypeExpr::Named(
                Rc::from("Json"),
                Vec::new(),
                Default::default(),
            ));
            match decode_arg(&t, &arg) {
                Ok(v) => vec![v],
                Err(e) => return fail(out, 1, &e.to_string()),
            }
        }
        more => {
            return fail(
                out,
                1,
                &format!(
                    "entrypoint '{}' takes {} parameters; an entrypoint takes at most one argument",
                    entry.name,
                    more.len()
                ),
            )
        }
    };
    if !opts.quiet {
        out.stdout
            .extend_from_slice(format!("✓ Running {}\n", req.label).as_bytes());
    }
    let limits = Limits {
        deadline: req.deadline,
        output_cap: req.output_cap.saturating_sub(out.stdout.len()),
        max_depth: if opts.max_recursion_depth == 0 {
            super::eval::MAX_RECURSION_DEPTH
        } else {
            opts.max_recursion_depth
        },
        memory_cap: if opts.memory_cap == 0 {
            super::value::DEFAULT_MEMORY_CAP
        } else {
            opts.memory_cap
        },
        caps: opts.caps.iter().cloned().collect::<HashSet<_>>(),
        ..Limits::default()
    };
    let mut m = Machine::new(Rc::clone(&front.program), limits);
    let result = m.apply(Value::Func(Rc::clone(&entry)), args, entry.span);
    out.stdout.append(&mut m.stdout);
    match result {
        Ok(v) => {
            if !matches!(v, Value::Unit) {
                out.stdout.extend_from_slice(display(&v).as_bytes());
                out.stdout.push(b'\n');
            }
            drop(v);
            Ok(out)
        }
        Err(Fail::Timeout) => Err(RunError::Timeout),
        Err(Fail::OutputLimit) => Err(RunError::OutputLimit {
            stream: "stdout",
            cap: req.output_cap,
        }),
        Err(Fail::Error(d)) => {
            let d = d.in_file(&req.label);
            let line = if d.code.is_empty() {
                format!("Error: {}\n", d.message)
            } else {
                format!("{}\n", d.render())
            };
            out.stderr.extend_from_slice(line.as_bytes());
            out.exit_code = 1;
            Ok(out)
        }
    }
}

/// One test's outcome: a `tests [...]` pair or a `test "…" { }` block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestCase {
    /// Function under test (for a `test` block, the block's name).
    pub func: String,
    /// Index of the pair in the clause (0 for a `test` block).
    pub index: usize,
    /// What the report calls it: `func #N` (1-based) or `test "name"`.
    pub name: String,
    /// Where the pair or block is written (1-based line, column).
    pub span: Span,
    /// `None` on success, else what went wrong.
    pub failure: Option<String>,
}

fn describe_failure(r: Result<Value, Fail>, want: Option<&Value>) -> Option<String> {
    match r {
        Ok(got) => match want {
            Some(w) if super::value::values_equal(&got, w) => None,
            Some(w) => {
                let (mut g, mut ws) = (String::new(), String::new());
                super::value::show(&got, &mut g);
                super::value::show(w, &mut ws);
                Some(format!("expected {ws}, got {g}"))
            }
            None if matches!(got, Value::Bool(true)) => None,
            None => {
                let mut g = String::new();
                super::value::show(&got, &mut g);
                Some(format!("statement is {g}, not true"))
            }
        },
        Err(Fail::Error(d)) => Some(d.render()),
        Err(Fail::Timeout) => Some("the test ran past its deadline".to_string()),
        Err(other) => Some(format!("{other:?}")),
    }
}

/// Run every `tests [(arg, expected), …]` clause (a tuple argument is spread over a
/// multi-parameter function) and every `test "name" { stmt; … }` block (each statement must be
/// `true`) of the module, each under `deadline`. Front-end errors are returned rendered.
pub fn run_tests(label: &str, source: &[u8]) -> Result<Vec<TestCase>, Vec<String>> {
    run_tests_until(label, source, None)
}

/// [`run_tests`] with a wall-clock deadline for every case.
pub fn run_tests_until(
    label: &str,
    source: &[u8],
    deadline: Option<Instant>,
) -> Result<Vec<TestCase>, Vec<String>> {
    let label = label.to_string();
    let source = source.to_vec();
    super::on_big_stack(move || {
        let f = front(&label, &source, false)
            .map_err(|ds| ds.iter().map(Diag::render).collect::<Vec<_>>())?;
        let prog = Rc::new(f.program);
        let limits = || Limits {
            deadline,
            ..Limits::default()
        };
        let mut cases = Vec::new();
        for func in &f.module.funcs {
            let Some(tests) = &func.tests else { continue };
            let items: Vec<&super::ast::Expr> = match &tests.kind {
                super::ast::ExprKind::List(xs) => xs.iter().collect(),
                _ => vec![tests],
            };
            for (index, item) in items.into_iter().enumerate() {
                let name = format!("{} #{}", func.name, index + 1);
                let mut m = Machine::new(Rc::clone(&prog), limits());
                let pair = m.eval(item, &None);
                let (arg, want) = match &pair {
                    Ok(Value::Tuple(pv)) if pv.len() == 2 => (pv[0].clone(), pv[1].clone()),
                    Ok(_) => {
                        cases.push(TestCase {
                            func: func.name.to_string(),
                            index,
                            name,
                            span: item.span,
                            failure: Some(
                                "a tests entry must be an (argument, expected) pair".into(),
                            ),
                        });
                        continue;
                    }
                    Err(_) => {
                        let failure = describe_failure(pair, None);
                        cases.push(TestCase {
                            func: func.name.to_string(),
                            index,
                            name,
                            span: item.span,
                            failure,
                        });
                        continue;
                    }
                };
                let args = match (func.params.len(), &arg) {
                    (0, _) => Vec::new(),
                    (1, a) => vec![a.clone()],
                    (_, Value::Tuple(xs)) => xs.to_vec(),
                    (_, a) => vec![a.clone()],
                };
                let mut m = Machine::new(Rc::clone(&prog), limits());
                let failure = describe_failure(m.call_named(&func.name, args), Some(&want));
                cases.push(TestCase {
                    func: func.name.to_string(),
                    index,
                    name,
                    span: item.span,
                    failure,
                });
            }
        }
        for t in &f.module.tests {
            let mut failure = None;
            for st in &t.body {
                let mut m = Machine::new(Rc::clone(&prog), limits());
                if let Some(why) = describe_failure(m.eval(&st.expr, &None), None) {
                    failure = Some(format!(
                        "statement at {}:{}: {why}",
                        st.expr.span.line, st.expr.span.col
                    ));
                    break;
                }
            }
            cases.push(TestCase {
                func: t.name.clone(),
                index: 0,
                name: format!("test \"{}\"", t.name),
                span: t.span,
                failure,
            });
        }
        Ok(cases)
    })
    .unwrap_or_else(|| Err(vec!["the test thread failed".to_string()]))
}

/// `world ailang test [--json] FILE`: every case as `✓ FILE:LINE:COL NAME` / `✗ … — why` on
/// stdout then `N passed, M failed`; with `json`, one object
/// `{"file","passed","failed","total","cases":[{"name","file","line","column","passed","message"}]}`.
/// Exit 0 when every case passed, 1 otherwise (front-end errors on stderr, exit 1).
pub fn test_outcome(
    label: &str,
    source: &[u8],
    json: bool,
    deadline: Option<Instant>,
) -> RunOutcome {
    let mut out = RunOutcome::default();
    let cases = match run_tests_until(label, source, deadline) {
        Ok(c) => c,
        Err(errs) => {
            for e in errs {
                out.stderr.extend_from_slice(e.as_bytes());
                out.stderr.push(b'\n');
            }
            out.exit_code = 1;
            return out;
        }
    };
    let failed = cases.iter().filter(|c| c.failure.is_some()).count();
    let passed = cases.len() - failed;
    if json {
        let items: Vec<serde_json::Value> = cases
            .iter()
            .map(|c| {
                serde_json::json!({
                    "name": c.name,
                    "file": label,
                    "line": c.span.line,
                    "column": c.span.col,
                    "passed": c.failure.is_none(),
                    "message": c.failure.clone().unwrap_or_default(),
                })
            })
            .collect();
        let doc = serde_json::json!({
            "file": label,
            "passed": passed,
            "failed": failed,
            "total": cases.len(),
            "cases": items,
        });
        out.stdout = serde_json::to_vec_pretty(&doc).unwrap_or_default();
        out.stdout.push(b'\n');
    } else {
        let mut s = String::new();
        for c in &cases {
            let at = format!("{label}:{}:{}", c.span.line, c.span.col);
            match &c.failure {
                None => s.push_str(&format!("✓ {at} {}\n", c.name)),
                Some(why) => s.push_str(&format!("✗ {at} {} — {why}\n", c.name)),
            }
        }
        s.push_str(&format!("{passed} passed, {failed} failed\n"));
        out.stdout = s.into_bytes();
    }
    out.exit_code = i32::from(failed > 0);
    out
}

/// `ailang check --json FILE` (ailang.md §2): one indented object on stdout,
/// `{"file","passed","error_count","errors":[{"code","message","file","line","column","suggestion"}]}`
/// (errors only; warnings are not listed); exit 0 pass, 1 errors. `line`/`column` are 0 when unknown.
pub fn check_json_outcome(label: &str, source: &[u8], opts: &Options) -> RunOutcome {
    let label_s = label.to_string();
    let src = source.to_vec();
    let strict = opts.strict_modules;
    super::on_big_stack(move || {
        let errors: Vec<Diag> = match front(&label_s, &src, strict) {
            Ok(_) => Vec::new(),
            Err(ds) => ds
                .into_iter()
                .filter(|d| d.severity == Severity::Error)
                .collect(),
        };
        let items: Vec<serde_json::Value> = errors
            .iter()
            .map(|d| {
                let (line, column) = d.span.map(|s| (s.line, s.col)).unwrap_or((0, 0));
                serde_json::json!({
                    "code": if d.code.is_empty() { "ERROR" } else { d.code.as_str() },
                    "message": d.message,
                    "file": label_s,
                    "line": line,
                    "column": column,
                    "suggestion": "",
                })
            })
            .collect();
        let doc = serde_json::json!({
            "file": label_s,
            "passed": errors.is_empty(),
            "error_count": errors.len(),
            "errors": items,
        });
        let mut stdout = serde_json::to_vec_pretty(&doc).unwrap_or_default();
        stdout.push(b'\n');
        RunOutcome {
            exit_code: i32::from(!errors.is_empty()),
            stdout,
            stderr: Vec::new(),
        }
    })
    .unwrap_or_else(internal_failure)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_json_reports_errors_with_positions() {
        let src = b"module m\nexport func main(i: string) -> string = nope\n";
        let out = check_json_outcome("m.ail", src, &Options::default());
        assert_eq!(out.exit_code, 1);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        assert_eq!(v["passed"], false);
        assert_eq!(v["error_count"], 1);
        assert_eq!(v["errors"][0]["code"], "TC_UNBOUND_001");
        assert_eq!(v["errors"][0]["line"], 2);
        assert_eq!(v["errors"][0]["column"], 41);
        let ok = check_json_outcome(
            "m.ail",
            b"module m\nexport func main(i: string) -> string = i\n",
            &Options::default(),
        );
        assert_eq!(ok.exit_code, 0);
    }

    #[test]
    fn banners_and_result_printing() {
        let req = RunRequest {
            label: "m.ail".into(),
            source: b"module m\nexport func main() -> int = 6 * 7\n".to_vec(),
            entry: "main".into(),
            args: None,
            deadline: None,
            output_cap: 1 << 20,
            options: Options::default(),
        };
        let out = run(req).unwrap_or_default();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "→ Type checking...\n→ Effect checking...\n✓ Running m.ail\n42\n"
        );
        let out = check_outcome(
            "m.ail",
            b"module m\nfunc f() -> int = 1\n",
            &Options::default(),
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "→ Type checking m.ail...\n→ Effect checking...\n✓ No errors found!\n"
        );
    }

    #[test]
    fn the_front_end_cache_reuses_identical_input_only() {
        let r = crate::on_big_stack(|| {
            let src = b"module m\nexport func main(i: string) -> string = i\n";
            let a = cached_front("m.ail", src, false, false).ok()?;
            let b = cached_front("m.ail", src, false, false).ok()?;
            let other_label = cached_front("n.ail", src, false, false).ok()?;
            let other_src = cached_front(
                "m.ail",
                b"module m\nexport func main(i: string) -> string = i ++ i\n",
                false,
                false,
            )
            .ok()?;
            let bad = cached_front(
                "m.ail",
                b"module m\nexport func main(i: string) -> int = i\n",
                false,
                false,
            );
            Some((
                Rc::ptr_eq(&a, &b),
                Rc::ptr_eq(&a, &other_label),
                Rc::ptr_eq(&a, &other_src),
                bad.is_err(),
            ))
        });
        assert_eq!(r, Some(Some((true, false, false, true))));
    }

    #[test]
    fn warm_runs_answer_like_cold_ones() {
        let run_once = |src: &[u8], arg: &str| {
            run(RunRequest {
                label: "m.ail".into(),
                source: src.to_vec(),
                entry: "main".into(),
                args: Some(arg.as_bytes().to_vec()),
                deadline: None,
                output_cap: 1 << 20,
                options: Options {
                    quiet: true,
                    ..Options::default()
                },
            })
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
        };
        let src = b"module m\nexport func main(n: int) -> int = n * 3\n";
        assert_eq!(run_once(src, "2"), "6\n");
        assert_eq!(run_once(src, "5"), "15\n");
        let changed = b"module m\nexport func main(n: int) -> int = n * 4\n";
        assert_eq!(run_once(changed, "5"), "20\n");
    }

    #[test]
    fn the_capsule_run_leaves_tests_clauses_unchecked_but_check_does_not() {
        // An ill-typed tests clause: `check` (and so publish) refuses the module; a capsule
        // run of an already-published source never looks at it.
        let src = b"module m\nexport func main(i: string) -> string\ntests [(1, true)] = i\ntest \"t\" { 1 }\n";
        let checked = check_outcome("m.ail", src, &Options::default());
        assert_eq!(checked.exit_code, 1);
        let out = run(RunRequest {
            label: "m.ail".into(),
            source: src.to_vec(),
            entry: "main".into(),
            args: Some(b"\"hi\"".to_vec()),
            deadline: None,
            output_cap: 1 << 20,
            options: Options {
                quiet: true,
                skip_tests: true,
                ..Options::default()
            },
        })
        .unwrap_or_default();
        assert_eq!(out.exit_code, 0, "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.stdout, b"hi\n");
    }
}
