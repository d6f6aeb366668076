//! Progress bars on stderr, shown only when stderr is a terminal (never in pipes, logs or tests).
//!
//! [`bar`] returns a bar of known length (hidden when stderr is not a terminal, so callers never
//! branch; finish with `finish_and_clear()`); [`with_progress`] draws one only once the work has
//! taken more than about a second.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Set by [`hide`]: no bar at all for this run.
static HIDDEN: AtomicBool = AtomicBool::new(false);

/// No progress bars for the rest of the run (the command prints JSON, NDJSON or CSV).
pub fn hide() {
    HIDDEN.store(true, Ordering::Relaxed);
}

/// Whether bars may be drawn: stderr is a terminal and the output is not for a machine.
fn shown() -> bool {
    !HIDDEN.load(Ordering::Relaxed) && std::io::stderr().is_terminal()
}

/// A bar of `len` steps labelled `msg` (e.g. "turns"), hidden unless stderr is a terminal.
#[cfg_attr(not(feature = "synth"), allow(dead_code))] // used by `synth` only, so far
pub fn bar(len: u64, msg: &str) -> ProgressBar {
    if !shown() {
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
    let tty = shown();
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

/// A progress count shared by threads (rayon): [`Shared::tick`] takes `(done, total)` from any
/// thread; the bar appears, as with [`with_progress`], once the work has taken more than about a
/// second, and only when bars are [`shown`].
pub struct Shared {
    what: String,
    start: Instant,
    bar: std::sync::OnceLock<ProgressBar>,
    tty: bool,
}

impl Shared {
    pub fn new(what: &str) -> Shared {
        Shared { what: what.to_string(), start: Instant::now(), bar: std::sync::OnceLock::new(), tty: shown() }
    }

    pub fn tick(&self, done: usize, total: usize) {
        if !self.tty || (self.bar.get().is_none() && (self.start.elapsed() <= Duration::from_secs(1) || done >= total))
        {
            return;
        }
        let b = self.bar.get_or_init(|| {
            let b = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr_with_hz(8));
            if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} {pos}/{len} {wide_bar} {eta}") {
                b.set_style(style);
            }
            b.set_message(self.what.clone());
            b
        });
        if b.length() != Some(total as u64) {
            b.set_length(total as u64);
        }
        // Threads finish out of order: the bar only moves forward.
        if done as u64 > b.position() {
            b.set_position(done.min(total) as u64);
        }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        if let Some(b) = self.bar.get() {
            b.finish_and_clear();
        }
    }
}
