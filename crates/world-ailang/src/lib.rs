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

type Job = Box<dyn FnOnce() + Send>;

/// The persistent evaluation thread ([`EVAL_STACK_BYTES`] of stack): reused while idle, so a
/// run does not pay for a thread and fresh stack pages, and so the front-end cache
/// (`run::FRONT_CACHE`) lives across calls. `None` until first used or after it retired.
static WORKER: std::sync::Mutex<Option<std::sync::mpsc::Sender<Job>>> = std::sync::Mutex::new(None);
/// True while a job runs on [`WORKER`]; other callers get a fresh thread meanwhile.
static WORKER_BUSY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The worker retires (its stack is unmapped) after a job that used more stack than this, so a
/// deep recursion does not stay resident in a long-lived process (bytes).
pub const WORKER_RETIRE_STACK: usize = 16 << 20;

thread_local! {
    static STACK_TOP: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    static STACK_LOW: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) };
    /// The stack size this thread was started with when it is an evaluation thread (its
    /// guard armed by [`arm_guard`]); 0 on any other thread.
    static EVAL_STACK: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// True while a job runs on this evaluation thread (nested jobs get their own thread).
    static EVALUATING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Mark the current thread busy with a job until the returned guard drops.
fn evaluating() -> impl Drop {
    struct Busy;
    impl Drop for Busy {
        fn drop(&mut self) {
            EVALUATING.with(|c| c.set(false));
        }
    }
    EVALUATING.with(|c| c.set(true));
    Busy
}

/// Run `f` on the current thread with the stack guard armed for a `bytes` stack — for a
/// thread the caller started with exactly `bytes` of stack (`std::thread::Builder::stack_size`)
/// that makes many interpreter calls: a call made from inside `f` whose stack fits runs on
/// this thread directly, instead of being handed to the persistent worker (two thread
/// wake-ups per call) or to a fresh thread. `None` if `f` panicked.
pub fn as_eval_thread<T>(bytes: usize, f: impl FnOnce() -> T) -> Option<T> {
    arm_guard(bytes);
    EVAL_STACK.with(|c| c.set(bytes));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).ok();
    EVAL_STACK.with(|c| c.set(0));
    r
}

/// Record that this thread's stack reached `addr` (the evaluator reports its deepest frame).
pub fn note_stack_low(addr: usize) {
    STACK_LOW.with(|l| {
        if addr < l.get() {
            l.set(addr);
        }
    });
}

/// The lowest frame address a running [`eval::Machine`] has seen ([`note_stack_low`]).
#[inline(always)]
pub fn stack_mark() -> usize {
    stack_here()
}

fn arm_guard(size: usize) {
    let top = stack_here();
    STACK_TOP.with(|c| c.set(top));
    // Stacks grow down on every supported target.
    STACK_FLOOR.with(|c| c.set(top.saturating_sub(size.saturating_sub(STACK_MARGIN))));
}

fn worker() -> Option<std::sync::mpsc::Sender<Job>> {
    let mut slot = WORKER.lock().ok()?;
    if slot.is_none() {
        let (tx, rx) = std::sync::mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("ailang-worker".to_string())
            .stack_size(EVAL_STACK_BYTES)
            .spawn(move || {
                arm_guard(EVAL_STACK_BYTES);
                while let Ok(job) = rx.recv() {
                    job();
                    let top = STACK_TOP.with(std::cell::Cell::get);
                    let low = STACK_LOW.with(std::cell::Cell::get);
                    if top.saturating_sub(low) > WORKER_RETIRE_STACK {
                        if let Ok(mut w) = WORKER.lock() {
                            *w = None;
                        }
                        return;
                    }
                }
            })
            .ok()?;
        *slot = Some(tx);
    }
    slot.clone()
}

/// Run `f` with `bytes` of stack and the stack guard armed: on the current thread when it is an
/// idle evaluation thread with at least `bytes` of stack ([`as_eval_thread`]); on the
/// persistent worker thread when `bytes` is its stack size and it is idle; else on a fresh
/// thread (falling back to
/// [`EVAL_STACK_BYTES`] when the system refuses the reservation). `None` if no thread could run
/// it or it panicked (a panicking worker is replaced on the next call).
pub fn on_stack<T: Send + 'static>(
    bytes: usize,
    f: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    use std::sync::atomic::Ordering;
    // On an evaluation thread with room and no job running: run here (see `as_eval_thread`).
    if bytes <= EVAL_STACK.with(std::cell::Cell::get) && !EVALUATING.with(std::cell::Cell::get) {
        let _busy = evaluating();
        return std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).ok();
    }
    let (rtx, rrx) = std::sync::mpsc::sync_channel::<T>(1);
    let mut job: Job = Box::new(move || {
        let _ = rtx.send(f());
    });
    if bytes == EVAL_STACK_BYTES
        && WORKER_BUSY
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    {
        struct Idle;
        impl Drop for Idle {
            fn drop(&mut self) {
                WORKER_BUSY.store(false, Ordering::Release);
            }
        }
        let inner = job;
        let on_worker: Job = Box::new(move || {
            let _idle = Idle;
            inner();
        });
        match worker() {
            Some(tx) => match tx.send(on_worker) {
                Ok(()) => return rrx.recv().ok(),
                Err(std::sync::mpsc::SendError(back)) => {
                    // The worker is gone (it panicked or retired): run on a fresh thread.
                    if let Ok(mut w) = WORKER.lock() {
                        *w = None;
                    }
                    job = back;
                }
            },
            None => job = on_worker,
        }
    }
    let job = std::sync::Arc::new(std::sync::Mutex::new(Some(job)));
    for size in [bytes, EVAL_STACK_BYTES] {
        let j = std::sync::Arc::clone(&job);
        let spawned = std::thread::Builder::new()
            .name("ailang-eval".to_string())
            .stack_size(size)
            .spawn(move || {
                arm_guard(size);
                if let Some(job) = j.lock().ok().and_then(|mut g| g.take()) {
                    job();
                }
            });
        if let Ok(handle) = spawned {
            let _ = handle.join();
            return rrx.recv().ok();
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

pub use embedded::{
    capsule_entry_problem, cli_check, cli_check_json, cli_run, cli_version, runs_ref, Embedded,
};
pub use run::Options;

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread::{current, ThreadId};

    fn here() -> ThreadId {
        current().id()
    }

    /// Run `f` on a fresh thread started with `bytes` of stack as an evaluation thread.
    fn on_eval_thread<T: Send>(bytes: usize, f: impl FnOnce() -> T + Send) -> Option<T> {
        std::thread::scope(|s| {
            std::thread::Builder::new()
                .stack_size(bytes)
                .spawn_scoped(s, move || as_eval_thread(bytes, f))
                .unwrap()
                .join()
                .unwrap()
        })
    }

    #[test]
    fn an_evaluation_thread_runs_fitting_jobs_itself_and_nested_ones_elsewhere() {
        let r = on_eval_thread(EVAL_STACK_BYTES, || {
            let me = here();
            let (inner, nested) = on_stack(EVAL_STACK_BYTES, move || {
                let inner = here();
                // A job started from inside a job gets a thread of its own.
                let nested = on_stack(EVAL_STACK_BYTES, here).unwrap();
                (inner, nested)
            })
            .unwrap();
            let bigger = on_stack(2 * EVAL_STACK_BYTES, here).unwrap();
            (me, inner, nested, bigger)
        })
        .unwrap();
        let (me, inner, nested, bigger) = r;
        assert_eq!(inner, me, "a fitting job runs on the evaluation thread");
        assert_ne!(nested, me);
        assert_ne!(bigger, me, "a job needing more stack than the thread has");
        // The guard was armed for the thread's own stack.
        let floor = on_eval_thread(EVAL_STACK_BYTES, stack_floor).unwrap();
        assert!(floor > 0);
    }

    #[test]
    fn an_ordinary_thread_hands_its_jobs_over() {
        let me = here();
        assert_ne!(on_stack(EVAL_STACK_BYTES, here).unwrap(), me);
    }

    #[test]
    fn a_panicking_job_on_an_evaluation_thread_is_none_and_the_thread_goes_on() {
        let r = on_eval_thread(EVAL_STACK_BYTES, || {
            let failed = on_stack(EVAL_STACK_BYTES, || -> u8 { panic!("job fails") });
            let after = on_stack(EVAL_STACK_BYTES, here).unwrap();
            (failed, after == here())
        })
        .unwrap();
        assert_eq!(r, (None, true));
    }
}
