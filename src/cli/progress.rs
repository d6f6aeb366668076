//! Progress bars on stderr, shown only when stderr is a terminal (never in pipes, logs or tests).
//!
//! [`bar`] returns a bar of known length (hidden when stderr is not a terminal, so callers never
//! branch; finish with `finish_and_clear()`); [`with_progress`] draws one only once the work has
//! taken more than about a second.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

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

/// Runs `f` with a progress callback `(done, total)` that draws a bar of replayed turns on stderr
/// once the work has taken more than about a second, and only when stderr is a terminal.
pub fn with_progress<T>(f: impl FnOnce(&mut dyn FnMut(usize, usize)) -> T) -> T {
    with_progress_of("replaying turn", f)
}

/// [`with_progress`] with another label for what is counted (e.g. "auditing record").
pub fn with_progress_of<T>(what: &str, f: impl FnOnce(&mut dyn FnMut(usize, usize)) -> T) -> T {
    let tty = std::io::stderr().is_terminal();
    let start = Instant::now();
    let mut bar: Option<ProgressBar> = None;
    let mut cb = |done: usize, total: usize| {
        if !tty {
            return;
        }
        if bar.is_none() && start.elapsed() > Duration::from_secs(1) && done < total {
            let b = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr_with_hz(8));
            if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} {pos}/{len} {wide_bar} {eta}") {
                b.set_style(style);
            }
            b.set_message(what.to_string());
            bar = Some(b);
        }
        if let Some(b) = &bar {
            // A total that changes (or a count past it) must not leave a bar that ends early.
            if b.length() != Some(total as u64) {
                b.set_length(total as u64);
            }
            b.set_position(done.min(total) as u64);
        }
    };
    let r = f(&mut cb);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    r
}
