//! The embedded AILANG subset interpreter (ailang.md §4–§6, issue 9).
pub mod ast;
pub mod diag;
pub mod lexer;
pub mod parser;

/// Stack reserved for the thread that parses, checks and evaluates one program (bytes).
///
/// The parser bounds nesting ([`parser::MAX_PARSE_DEPTH`]) and the evaluator bounds call depth
/// (10 000) and expression nesting, so this stack is never exhausted; it is virtual memory,
/// committed only as used.
pub const EVAL_STACK_BYTES: usize = 1 << 30;

/// Run `f` on a fresh thread with [`EVAL_STACK_BYTES`] of stack; `None` if the thread could
/// not be spawned or panicked.
pub fn on_big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let handle = std::thread::Builder::new()
        .name("ailang-eval".to_string())
        .stack_size(EVAL_STACK_BYTES)
        .spawn(f)
        .ok()?;
    handle.join().ok()
}
pub mod embedded;
pub mod eval;
pub mod loader;
pub mod run;
pub mod stdlib;
pub mod types;
pub mod value;

pub use embedded::{cli_check, cli_check_json, cli_run, cli_version, runs_ref, Embedded};
pub use run::Options;
