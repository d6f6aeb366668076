//! Progress bars on stderr, shown only when stderr is a terminal (never in pipes, logs or tests).
//!
//! Use [`bar`] for work with a known length and [`spinner`] otherwise; both return a hidden bar
//! when stderr is not a terminal, so callers never branch. Finish with `finish_and_clear()`.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar of `len` steps labelled `msg` (e.g. "turns"), hidden unless stderr is a terminal.
#[cfg_attr(not(feature = "synth"), allow(dead_code))] // used by `synth` only, so far
pub fn bar(len: u64, msg: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr_with_hz(8));
    pb.set_style(
        ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {pos}/{len} ({elapsed}, eta {eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_message(msg.to_string());
    pb
}

/// A spinner labelled `msg` for work of unknown length, hidden unless stderr is a terminal.
#[allow(dead_code)] // offered to the other commands
pub fn spinner(msg: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(8));
    pb.set_style(ProgressStyle::with_template("{spinner} {msg} ({elapsed})").expect("valid template"));
    pb.set_message(msg.to_string());
    pb.enable_steady_tick(std::time::Duration::from_millis(125));
    pb
}
