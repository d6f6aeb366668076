//! What wakes `ctxj watch` to look at its files: file-system events on the followed files'
//! folders (the `notify` crate: inotify on Linux, FSEvents on macOS, ReadDirectoryChangesW on
//! Windows), coalesced over [`DEBOUNCE`], with a slow safety look every [`SAFETY`]; or a plain
//! stat poll every interval when events are not wanted (`--poll`), the watcher could not be set
//! up, or the filesystem sends none (appended bytes found twice in a row by the safety look with
//! no event announcing them: a network or FUSE mount).
//!
//! A wake only says "look now": the engine reads the bytes appended since its offsets
//! ([`super::tail`]), so a missed, doubled or spurious event costs a look, never a wrong figure.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use notify::event::{EventKind, ModifyKind};
use notify::{RecommendedWatcher, RecursiveMode, Watcher as _};

/// How long a burst of events is gathered into one look (an agent writes a call as several
/// lines, often in several writes, within a few milliseconds).
pub const DEBOUNCE: Duration = Duration::from_millis(50);
/// The look taken without an event on the events path: it finds new session folders the
/// watched folders do not contain, keeps the time-based alerts (cache expiring, gone cold) on
/// time, and notices a filesystem that sends no events.
pub const SAFETY: Duration = Duration::from_secs(2);
/// Safety looks in a row that found unannounced bytes before the events path is given up.
const MISSES_TO_POLL: u8 = 2;

/// How the files are being watched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// File-system events, debounced, with the safety look.
    Events,
    /// A stat poll every interval, and why.
    Poll(String),
}

/// Why the wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wake {
    /// An event arrived (`false`: the poll interval or the safety look).
    pub event: bool,
    /// An event said a file or folder was created, renamed or removed: search for sessions again.
    pub created: bool,
}

enum Inner {
    Events { watcher: RecommendedWatcher, rx: Receiver<notify::Result<notify::Event>> },
    Poll(String),
}

/// Waits for the next reason to look at the followed files.
pub struct Waker {
    inner: Inner,
    poll: Duration,
    watched: BTreeSet<PathBuf>,
    misses: u8,
}

impl Waker {
    /// On file-system events when `events` (falling back to the poll when they cannot be had),
    /// else a stat poll every `poll`.
    pub fn new(events: bool, poll: Duration) -> Waker {
        let inner = if !events {
            Inner::Poll("--poll".into())
        } else {
            let (tx, rx) = channel();
            match notify::recommended_watcher(move |e| {
                let _ = tx.send(e);
            }) {
                Ok(watcher) => Inner::Events { watcher, rx },
                Err(e) => Inner::Poll(format!("no file-system events: {e}")),
            }
        };
        Waker { inner, poll, watched: BTreeSet::new(), misses: 0 }
    }

    pub fn mode(&self) -> Mode {
        match &self.inner {
            Inner::Events { .. } => Mode::Events,
            Inner::Poll(why) => Mode::Poll(why.clone()),
        }
    }

    /// Watches exactly `folders` (each non-recursively: its files' changes and its entries'
    /// creation); a folder that is gone is skipped, any other failure (a watch limit reached)
    /// falls back to the poll.
    pub fn watch(&mut self, folders: BTreeSet<PathBuf>) {
        let Inner::Events { watcher, .. } = &mut self.inner else { return };
        for gone in self.watched.difference(&folders) {
            let _ = watcher.unwatch(gone);
        }
        let mut failed = None;
        let mut now = BTreeSet::new();
        for f in &folders {
            if self.watched.contains(f) {
                now.insert(f.clone());
                continue;
            }
            match watcher.watch(f, RecursiveMode::NonRecursive) {
                Ok(()) => {
                    now.insert(f.clone());
                }
                Err(_) if !f.is_dir() => {}
                Err(e) => {
                    failed = Some(format!("watching {}: {e}", crate::text::escape_line(&f.display().to_string())));
                    break;
                }
            }
        }
        self.watched = now;
        if let Some(why) = failed {
            self.fall_back(why);
        }
    }

    /// Blocks until something may have changed, at most `max` (and at most the poll interval or
    /// the safety look).
    pub fn wait(&mut self, max: Duration) -> Wake {
        let timer = Wake { event: false, created: false };
        let Inner::Events { rx, .. } = &self.inner else {
            std::thread::sleep(self.poll.min(max));
            return timer;
        };
        let until = Instant::now() + SAFETY.min(max);
        let mut wake = timer;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(e) => {
                    if note(&mut wake, e) {
                        break;
                    }
                }
                Err(RecvTimeoutError::Timeout) => return timer,
                Err(RecvTimeoutError::Disconnected) => {
                    self.fall_back("the file-system watcher stopped".into());
                    return timer;
                }
            }
        }
        // The burst: gather what else arrives within the debounce into this one look.
        std::thread::sleep(DEBOUNCE);
        while let Ok(e) = rx.try_recv() {
            note(&mut wake, e);
        }
        wake
    }

    /// What the look after `wake` found: `grew` when it folded new bytes. A look that no event
    /// caused finding appended bytes twice in a row means the filesystem sends no events for
    /// these files: poll instead.
    pub fn looked(&mut self, wake: Wake, grew: bool) {
        if wake.event || !grew {
            self.misses = 0;
            return;
        }
        if matches!(self.inner, Inner::Events { .. }) {
            self.misses += 1;
            if self.misses >= MISSES_TO_POLL {
                self.fall_back("appends arrived with no file-system event (a network or FUSE filesystem?)".into());
            }
        }
    }

    fn fall_back(&mut self, why: String) {
        self.inner = Inner::Poll(why);
        self.watched.clear();
    }
}

/// Folds one event into `wake`; whether it is a reason to look. Opening, reading and closing a
/// file (this process's own reads among them) and metadata changes are not: a transcript grows
/// by writes, which are data modifications. An error (the kernel's queue overflowed) is, since
/// events may have been lost.
fn note(wake: &mut Wake, e: notify::Result<notify::Event>) -> bool {
    let Ok(e) = e else {
        wake.event = true;
        wake.created = true;
        return true;
    };
    match e.kind {
        EventKind::Access(_) | EventKind::Modify(ModifyKind::Metadata(_)) => false,
        EventKind::Create(_) | EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(_)) => {
            wake.event = true;
            wake.created = true;
            true
        }
        _ => {
            wake.event = true;
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    #[test]
    fn an_append_wakes_the_events_path_and_a_read_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("s.jsonl");
        std::fs::write(&f, b"{}\n").unwrap();
        let mut w = Waker::new(true, Duration::from_millis(250));
        if w.mode() != Mode::Events {
            return; // no inotify here (a sandbox): the poll path is tested below
        }
        w.watch([dir.path().to_path_buf()].into());
        // Our own read opens and closes the file: access events, not a reason to look.
        let _ = std::fs::read(&f).unwrap();
        let t = Instant::now();
        let idle = w.wait(Duration::from_millis(300));
        assert!(!idle.event, "a read woke the watcher");
        assert!(t.elapsed() >= Duration::from_millis(250));
        std::fs::OpenOptions::new().append(true).open(&f).unwrap().write_all(b"{}\n").unwrap();
        let t = Instant::now();
        let woke = w.wait(Duration::from_secs(5));
        assert!(woke.event && !woke.created, "{woke:?}");
        assert!(t.elapsed() < Duration::from_secs(4));
        std::fs::write(dir.path().join("new.jsonl"), b"").unwrap();
        assert!(w.wait(Duration::from_secs(5)).created);
    }

    #[test]
    fn the_poll_path_sleeps_its_interval() {
        let mut w = Waker::new(false, Duration::from_millis(30));
        assert_eq!(w.mode(), Mode::Poll("--poll".into()));
        let t = Instant::now();
        assert!(!w.wait(Duration::from_secs(5)).event);
        assert!(t.elapsed() >= Duration::from_millis(30) && t.elapsed() < Duration::from_secs(4));
    }

    #[test]
    fn unannounced_appends_twice_in_a_row_fall_back_to_the_poll() {
        let mut w = Waker::new(true, Duration::from_millis(30));
        if w.mode() != Mode::Events {
            return;
        }
        let timer = Wake { event: false, created: false };
        w.looked(timer, true);
        w.looked(timer, false); // a quiet look in between: not in a row
        w.looked(timer, true);
        assert_eq!(w.mode(), Mode::Events);
        w.looked(timer, true);
        assert!(matches!(w.mode(), Mode::Poll(_)));
    }
}
