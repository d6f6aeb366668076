//! `watch --exec CMD`: a shell command run on each alert, one at a time, at most once per
//! cooldown, with the alert's JSON in `$CTXJ_EVENT`. Each run has a process group of its own
//! ([`crate::process`]) and the whole group is killed at [`DEADLINE`], so a hook that leaves a
//! background child (or a daemon) cannot outlive it.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::process::{own_group, Group};

/// The seconds a hook may run.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// Runs hooks one at a time, `cooldown` apart, each killed with its group at its deadline.
#[derive(Debug)]
pub struct Hook {
    cmd: String,
    cooldown: Duration,
    deadline: Duration,
    running: Option<(Child, Instant)>,
    last: Option<Instant>,
}

impl Hook {
    pub fn new(cmd: String, cooldown: Duration) -> Self {
        Hook { cmd, cooldown, deadline: DEADLINE, running: None, last: None }
    }

    /// The same hook with another deadline (tests).
    pub fn with_deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// Whether a run is still going.
    pub fn busy(&self) -> bool {
        self.running.is_some()
    }

    /// Forgets a finished run; kills a run past its deadline, its whole group.
    pub fn reap(&mut self) {
        if let Some((child, started)) = &mut self.running {
            if !matches!(child.try_wait(), Ok(None)) {
                self.running = None;
            } else if started.elapsed() > self.deadline {
                Group(child.id()).kill();
                let _ = child.kill();
                let _ = child.wait();
                self.running = None;
            }
        }
    }

    /// Starts the hook for the alert `json`, unless one is running or the cooldown has not passed
    /// (that alert is then not run). Whether it started.
    pub fn fire(&mut self, json: &str) -> bool {
        self.reap();
        if self.running.is_some() || self.last.is_some_and(|l| l.elapsed() < self.cooldown) {
            return false;
        }
        let mut c = Command::new("sh");
        c.arg("-c").arg(&self.cmd).env("CTXJ_EVENT", json).stdin(Stdio::null());
        own_group(&mut c);
        match c.spawn() {
            Ok(child) => {
                self.running = Some((child, Instant::now()));
                self.last = Some(Instant::now());
                true
            }
            Err(_) => false,
        }
    }

    /// Waits for the last run, its deadline at most.
    pub fn finish(&mut self) {
        while self.running.is_some() {
            self.reap();
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn alive(pid: &str) -> bool {
        std::path::Path::new(&format!("/proc/{}", pid.trim())).exists()
    }

    /// Issue 31: a hook past its deadline had only its `sh` killed; a background child of the
    /// hook (a wrapper's worker, a daemon) kept running after ctxj gave up on it.
    #[test]
    fn regression_exec_deadline_kills_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let cmd = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
        let mut h = Hook::new(cmd, Duration::ZERO).with_deadline(Duration::from_millis(300));
        assert!(h.fire("{}"));
        let mut pid = String::new();
        for _ in 0..100 {
            pid = std::fs::read_to_string(&pidfile).unwrap_or_default();
            if !pid.trim().is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(alive(&pid), "the background child started");
        h.finish();
        // The child is killed with the group (reaped by init shortly after).
        let gone = (0..100).any(|_| {
            std::thread::sleep(Duration::from_millis(20));
            !alive(&pid)
                || std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).is_ok_and(|s| s.contains(") Z "))
        });
        assert!(gone, "the hook's background child outlived its deadline");
    }

    #[test]
    fn a_second_alert_within_the_cooldown_is_not_run() {
        let mut h = Hook::new("true".into(), Duration::from_secs(60));
        assert!(h.fire("{}"));
        h.finish();
        assert!(!h.fire("{}"), "within the cooldown");
    }

    #[test]
    fn one_run_at_a_time() {
        let mut h = Hook::new("sleep 1".into(), Duration::ZERO);
        assert!(h.fire("{}"));
        assert!(!h.fire("{}"), "the first is still running");
        assert!(h.busy());
        h.finish();
    }
}
