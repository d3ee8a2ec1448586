//! Benchmark of the embedded AILANG interpreter (issue 9, "Performance"): in-process runs of
//! the echo transition and of the se-tools read plan, and fib(25) in evaluations per second,
//! each compared with the process start of a trivial program (`world`'s own binary, which is
//! the floor any external interpreter pays per call) measured in the same run.
//!
//! Run with `cargo bench --bench ailang`.

use std::process::Command;
use std::time::{Duration, Instant};
use world::ailang::Embedded;
use world::interp::{Interpreter, RunLimits};

fn limits() -> RunLimits {
    RunLimits::until(Instant::now() + Duration::from_secs(60))
}

/// Mean seconds per call of `f` over `n` calls (after one warm-up call).
fn mean(n: u32, mut f: impl FnMut()) -> f64 {
    f();
    let start = Instant::now();
    for _ in 0..n {
        f();
    }
    start.elapsed().as_secs_f64() / f64::from(n)
}

fn main() {
    let root = env!("CARGO_MANIFEST_DIR");
    let echo = std::fs::read(format!("{root}/fixtures/transitions/echo.ail")).unwrap_or_default();
    let read = std::fs::read(format!(
        "{root}/fixtures/transitions/se-tools/ailang-read.ail"
    ))
    .unwrap_or_default();
    let fib = b"module bench/fib\nfunc fib(n: int) -> int = if n < 2 then n else fib(n - 1) + fib(n - 2)\n\
                export func main(i: string) -> string = show(fib(25))\n";
    let e = Embedded::new();

    let bin = env!("CARGO_BIN_EXE_world");
    let floor = mean(20, || {
        let _ = Command::new(bin).arg("--version").output();
    });

    let echo_args =
        serde_json::to_string(r#"{"a":1,"b":[true,null],"c":{"d":"x"}}"#).unwrap_or_default();
    let echo_s = mean(200, || {
        let o = e.run(&echo, echo_args.as_bytes(), limits());
        assert!(matches!(o, Ok(ref o) if o.exit_code == 0), "{o:?}");
    });
    let read_args = serde_json::to_string(r#"{"phase":"plan","args":{"path":"src/main.ail"}}"#)
        .unwrap_or_default();
    let read_s = mean(200, || {
        let o = e.run(&read, read_args.as_bytes(), limits());
        assert!(matches!(o, Ok(ref o) if o.exit_code == 0), "{o:?}");
    });
    let fib_s = mean(3, || {
        let o = e.run(fib, b"\"{}\"", limits());
        assert!(matches!(o, Ok(ref o) if o.stdout == b"75025\n"), "{o:?}");
    });
    // fib(25) makes 242 785 calls of fib, each evaluating one `if`, one comparison and
    // (for n >= 2) two subtractions and one addition.
    let calls = 242_785.0;

    println!("process start (world --version): {:>10.3} ms", floor * 1e3);
    println!(
        "echo transition, embedded:       {:>10.3} ms  ({:.0} runs/s, {:.3}x process start)",
        echo_s * 1e3,
        1.0 / echo_s,
        echo_s / floor
    );
    println!(
        "se-tools read plan, embedded:    {:>10.3} ms  ({:.0} runs/s, {:.3}x process start)",
        read_s * 1e3,
        1.0 / read_s,
        read_s / floor
    );
    println!(
        "fib(25), embedded:               {:>10.3} ms  ({:.0} calls/s, {:.1}x process start)",
        fib_s * 1e3,
        calls / fib_s,
        fib_s / floor
    );
}
