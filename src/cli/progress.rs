//! Progress bars on stderr for long work (`commit --batch`, `verify`, `replay`,
//! `export-episode`): drawn only when stderr is a terminal and neither `-q` nor `--json` is
//! given, so pipes, CI logs and captured stderr never see them (DEC-CLI-22).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::output::Output;

/// Whether a bar would be drawn for `out`: stderr is a terminal, no `-q`, no `--json`.
pub fn wanted(out: &Output) -> bool {
    !out.quiet && !out.json && std::io::stderr().is_terminal()
}

/// A bar over `len` units labelled `what` (`committing`, `verifying`, …), or a hidden bar
/// that draws nothing when [`wanted`] is false. Coloured only under `--color`.
pub fn bar(out: &Output, len: u64, what: &str) -> ProgressBar {
    if !wanted(out) {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    let template = if out.color {
        "{prefix} {bar:30.green/white} {pos}/{len} ({rate}, eta {eta}) {msg}"
    } else {
        "{prefix} [{bar:30}] {pos}/{len} ({rate}, eta {eta}) {msg}"
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        pb.set_style(
            style
                .with_key(
                    "rate",
                    |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = w.write_str(&rate(s.per_sec()));
                    },
                )
                .progress_chars("=> "),
        );
    }
    pb.set_prefix(what.to_string());
    pb
}

/// A rate for people: whole units per second (`434/s`), one decimal below 10 (`2.5/s`), `-`
/// before the first unit (indicatif's own `{per_sec}` prints `433.9596/s`).
pub fn rate(per_sec: f64) -> String {
    if !per_sec.is_finite() || per_sec <= 0.0 {
        "-/s".to_string()
    } else if per_sec < 10.0 {
        format!("{per_sec:.1}/s")
    } else {
        format!("{per_sec:.0}/s")
    }
}

/// A spinner for work of unknown length, hidden like [`bar`].
pub fn spinner(out: &Output, what: &str) -> ProgressBar {
    if !wanted(out) {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{prefix} {spinner} {pos} {msg}") {
        pb.set_style(style);
    }
    pb.set_prefix(what.to_string());
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    pb
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_rate_is_whole_units_per_second() {
        assert_eq!(super::rate(433.9596), "434/s");
        assert_eq!(super::rate(12.49), "12/s");
        assert_eq!(super::rate(2.46), "2.5/s");
        assert_eq!(super::rate(0.0), "-/s");
        assert_eq!(super::rate(f64::NAN), "-/s");
        assert_eq!(super::rate(f64::INFINITY), "-/s");
    }
}
