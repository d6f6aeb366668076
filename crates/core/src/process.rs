//! Child processes ctxj starts (the summarizer, `watch --exec` hooks): each runs in a process
//! group of its own, so that at its deadline the whole group is killed — a wrapper script's
//! children with it — and never just the `sh` in front.

use std::process::Command;

/// Makes `command` start a new process group, led by the child (its id is the group's id).
pub fn own_group(command: &mut Command) {
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(command, 0);
    #[cfg(not(unix))]
    let _ = command;
}

/// The process group of a child started with [`own_group`] (its id is the child's pid).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Group(pub u32);

impl Group {
    /// SIGKILL to every process of the group (gone already: nothing to do).
    pub fn kill(&self) {
        #[cfg(unix)]
        if let Some(pid) = i32::try_from(self.0).ok().and_then(rustix::process::Pid::from_raw) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}
