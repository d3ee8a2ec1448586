//! The embedded AILANG subset interpreter (ailang.md §4–§6, issue 9).
pub mod ast;
pub mod diag;
pub mod lexer;
pub mod parser;

/// Stack reserved for the thread that parses, checks and evaluates one program (bytes).
///
/// The parser bounds nesting ([`parser::MAX_PARSE_DEPTH`]) and the evaluator bounds call depth
/// and expression nesting; on top of that the evaluator watches the native stack itself
/// ([`stack_exhausted`]) and stops with `RT_STACK_001` before it runs out, so no limit a user
/// passes can overflow it. It is virtual memory, committed only as used.
pub const EVAL_STACK_BYTES: usize = 1 << 30;

/// The largest stack [`stack_for_depth`] asks for (bytes).
pub const MAX_EVAL_STACK_BYTES: usize = 4 << 30;

/// Native stack budgeted per AILANG call level when sizing the thread from
/// `--max-recursion-depth` (bytes; an unoptimised build uses about 20 KiB per level).
pub const STACK_PER_CALL: usize = 32 << 10;

/// Stack kept free below the guard: the deepest single evaluation step (a builtin, a nested
/// expression up to the parser's bound) fits in it (bytes).
pub const STACK_MARGIN: usize = 32 << 20;

thread_local! {
    static STACK_FLOOR: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The stack for a run allowing `max_depth` calls: `max_depth ×` [`STACK_PER_CALL`], at least
/// [`EVAL_STACK_BYTES`], at most [`MAX_EVAL_STACK_BYTES`].
pub fn stack_for_depth(max_depth: usize) -> usize {
    max_depth
        .saturating_mul(STACK_PER_CALL)
        .clamp(EVAL_STACK_BYTES, MAX_EVAL_STACK_BYTES)
}

/// An address inside the current stack frame.
#[inline(always)]
fn stack_here() -> usize {
    let marker = 0u8;
    std::hint::black_box(std::ptr::addr_of!(marker)) as usize
}

/// The lowest stack address this thread may reach before [`stack_exhausted`] says so; 0 on a
/// thread not started by [`on_stack`] (no guard).
pub fn stack_floor() -> usize {
    STACK_FLOOR.with(std::cell::Cell::get)
}

/// True when the current frame is below `floor` (see [`stack_floor`]): the evaluator then
/// stops with `RT_STACK_001` instead of overflowing the native stack.
#[inline(always)]
pub fn stack_exhausted(floor: usize) -> bool {
    stack_here() < floor
}

/// Run `f` on a fresh thread with `bytes` of stack (falling back to [`EVAL_STACK_BYTES`] when
/// the system refuses that reservation), with the stack guard armed; `None` if no thread could
/// be spawned or it panicked.
pub fn on_stack<T: Send + 'static>(
    bytes: usize,
    f: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let f = std::sync::Arc::new(std::sync::Mutex::new(Some(f)));
    for size in [bytes, EVAL_STACK_BYTES] {
        let g = std::sync::Arc::clone(&f);
        let spawned = std::thread::Builder::new()
            .name("ailang-eval".to_string())
            .stack_size(size)
            .spawn(move || {
                let f = g.lock().ok()?.take()?;
                // Stacks grow down on every supported target.
                STACK_FLOOR.with(|c| c.set(stack_here().saturating_sub(size - STACK_MARGIN)));
                Some(f())
            });
        if let Ok(handle) = spawned {
            return handle.join().ok().flatten();
        }
    }
    None
}

/// Run `f` on a fresh thread with [`EVAL_STACK_BYTES`] of stack; `None` if the thread could
/// not be spawned or panicked.
pub fn on_big_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    on_stack(EVAL_STACK_BYTES, f)
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
