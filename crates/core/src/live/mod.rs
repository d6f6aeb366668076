//! The live engine under `ctxj statusline` and `ctxj watch`: per session, only the complete lines
//! appended since the last look are read (by byte offset, [`tail`]) and folded into the same
//! state the batch `usage` read computes ([`Fold`], one implementation per agent, each a thin
//! wrapper over that agent's `usage` reader fold); [`snapshot`] turns the folded state into the
//! live figures (context against the compaction point, cache lifetime, dollars).
//!
//! The batch read of an agent *is* a full fold (its `read_bytes_with` feeds the whole file once),
//! and a property test feeds every shared transcript in random byte pieces and compares with it.
//!
//! Before a state is saved, the calls no later line can change are settled out of the fold into
//! constant-size sums ([`tally`]); the figures read a [`tally::View`] of both.
//!
//! Adding an agent: implement [`Fold`] over that agent's `usage` reader (a `Fold` struct whose
//! `feed` takes complete lines, whose `read` gives a `usage::entry::Read` and whose `settle`
//! takes out all but its last calls) and add one arm to [`fold_for`].

pub mod compact;
pub mod events;
pub mod find;
pub mod follow;
pub mod hook;
pub mod input;
pub mod reported;
pub mod session;
pub mod snapshot;
pub mod store;
pub mod tail;
pub mod tally;
pub mod wake;
pub mod watcher;

use std::path::PathBuf;

use crate::import::Format;
use crate::usage::entry::{Parse, Read};
use crate::usage::{claude, codex, pi};

pub use input::StatusInput;
pub use session::{LiveError, LiveSession};
pub use snapshot::{Inputs, Snapshot};

/// Now, Unix ms; or `at` (RFC 3339) when given, `None` when it is not a time.
pub fn now_ms(at: Option<&str>) -> Option<i64> {
    match at {
        Some(t) => crate::cache::model::parse_ts(t),
        None => Some(chrono::Utc::now().timestamp_millis()),
    }
}

/// One agent's `usage` read, fed appended complete lines.
pub trait Fold: Send {
    /// The agent whose rules fold the lines.
    fn agent(&self) -> Format;
    /// A new file at position `at` of the session's (sorted) file list.
    fn add_file(&mut self, at: usize);
    /// Folds complete lines appended to the file at position `file`.
    fn feed(&mut self, file: usize, lines: &[u8]);
    /// What the batch read of `files` (the session's files, in position order) gives after the
    /// lines fed so far.
    fn read(&self, files: &[PathBuf]) -> Read;
    /// The last call's cache writes in file `file`: (one-hour part, all), when the agent records
    /// the split.
    fn last_writes(&self, _file: usize) -> Option<(u64, u64)> {
        None
    }
    /// Takes out of the fold what no later line can change (all but the last `keep` calls and
    /// compactions of each file, the duplicates counted so far) and gives it as the batch read of
    /// `files` would: the caller keeps its sums ([`tally::Tally`]), so the saved fold stays as
    /// small however long the session grows.
    fn settle(&mut self, keep: usize, files: &[PathBuf]) -> Read;
    /// The state, to be kept between runs.
    fn save(&self) -> serde_json::Value;
}

/// The fold of `agent`'s lines, resumed from `saved` (a [`Fold::save`]) when given and readable;
/// `None` for a format that has no usage reader.
pub fn fold_for(agent: Format, saved: Option<serde_json::Value>) -> Option<Box<dyn Fold>> {
    fn load<T: serde::de::DeserializeOwned + Default>(v: Option<serde_json::Value>) -> T {
        v.and_then(|v| serde_json::from_value(v).ok()).unwrap_or_default()
    }
    Some(match agent {
        Format::ClaudeCode => Box::new(ClaudeFold { files: load(saved) }),
        Format::Codex => Box::new(OneFile::<codex::Fold> { agent, fold: load(saved) }),
        Format::Pi => Box::new(OneFile::<pi::Fold> { agent, fold: load(saved) }),
        // No live fold: a ctxj journal, and the agents read only by `import` (no `usage` fold).
        Format::Ctxj | Format::GeminiCli | Format::QwenCode | Format::KimiCode | Format::Cline | Format::OpenCode => {
            return None
        }
    })
}

/// Claude Code: one fold per file (the session file and its subagents' files), de-duplicated
/// together when read, as `usage` does.
struct ClaudeFold {
    files: Vec<claude::FileFold>,
}

impl Fold for ClaudeFold {
    fn agent(&self) -> Format {
        Format::ClaudeCode
    }
    fn add_file(&mut self, at: usize) {
        self.files.insert(at.min(self.files.len()), claude::FileFold::default());
    }
    fn feed(&mut self, file: usize, lines: &[u8]) {
        if let Some(f) = self.files.get_mut(file) {
            f.feed(file, lines, Parse::Fast);
        }
    }
    fn read(&self, files: &[PathBuf]) -> Read {
        let n = files.len().min(self.files.len());
        claude::assemble(&files[..n], &self.files[..n].iter().collect::<Vec<_>>(), 0)
    }
    fn last_writes(&self, file: usize) -> Option<(u64, u64)> {
        self.files.get(file).and_then(claude::FileFold::last_writes)
    }
    fn settle(&mut self, keep: usize, files: &[PathBuf]) -> Read {
        let n = files.len().min(self.files.len());
        let out: Vec<claude::FileFold> = self.files[..n].iter_mut().map(|f| f.settle(keep)).collect();
        claude::assemble(&files[..n], &out.iter().collect::<Vec<_>>(), 0)
    }
    fn save(&self) -> serde_json::Value {
        serde_json::to_value(&self.files).unwrap_or_default()
    }
}

/// The `Fold` of an agent whose session is one file (Codex, pi).
pub trait OneFileFold: Default + serde::Serialize + Send {
    fn feed(&mut self, lines: &[u8]);
    fn read(&self, path: &std::path::Path) -> Read;
    fn settle(&mut self, keep: usize) -> Self;
}

impl OneFileFold for codex::Fold {
    fn feed(&mut self, lines: &[u8]) {
        codex::Fold::feed(self, lines, Parse::Fast);
    }
    fn read(&self, path: &std::path::Path) -> Read {
        codex::Fold::read(self, 0, path)
    }
    fn settle(&mut self, keep: usize) -> Self {
        codex::Fold::settle(self, keep)
    }
}

impl OneFileFold for pi::Fold {
    fn feed(&mut self, lines: &[u8]) {
        pi::Fold::feed(self, lines, Parse::Fast);
    }
    fn read(&self, path: &std::path::Path) -> Read {
        pi::Fold::read(self, 0, path)
    }
    fn settle(&mut self, keep: usize) -> Self {
        pi::Fold::settle(self, keep)
    }
}

struct OneFile<F> {
    agent: Format,
    fold: F,
}

impl<F: OneFileFold> Fold for OneFile<F> {
    fn agent(&self) -> Format {
        self.agent
    }
    fn add_file(&mut self, _at: usize) {}
    fn feed(&mut self, file: usize, lines: &[u8]) {
        if file == 0 {
            self.fold.feed(lines);
        }
    }
    fn read(&self, files: &[PathBuf]) -> Read {
        files.first().map(|p| self.fold.read(p)).unwrap_or_default()
    }
    fn settle(&mut self, keep: usize, files: &[PathBuf]) -> Read {
        let out = self.fold.settle(keep);
        files.first().map(|p| out.read(p)).unwrap_or_default()
    }
    fn save(&self) -> serde_json::Value {
        serde_json::to_value(&self.fold).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests;
