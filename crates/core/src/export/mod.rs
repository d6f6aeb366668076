//! `ctxj export`: one fact row per request, for warehouses and observability tools
//! (`docs/fleet.md`).
//!
//! The `recorded` rows are [`crate::usage`]'s entries — the calls the provider billed, counted
//! and priced with `ctxj usage`'s rules — so the export's totals equal `usage`'s for the same
//! files. Each row is then joined to the transcript imported in memory ([`session::enrich`]):
//! the estimated prompt of the reconstructed request, the simulated cache hit, the recorded cache
//! break's cause ([`crate::cache::billed`]) and whether a compaction preceded it. Every
//! `--strategy` adds one simulated row per turn of that replay ([`crate::cache::simulate`]).
//!
//! Sessions are processed in parallel, in ordered chunks, and handed to a sink one at a time,
//! so memory is bounded by a chunk of sessions, not by the export.

pub mod content;
pub mod row;
pub mod session;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use rayon::prelude::*;

pub use row::{ExportRow, SCHEMA};
pub use session::{SessionRows, Spawn, StrategyTotal, SPAWN_TOOLS};

use crate::import::scan::parent_of;
use crate::import::Format;
use crate::strategy::Strategy;
use crate::tokens::Tokenizer;
use crate::usage::entry::{SessionKey, UsageEntry};
use crate::usage::Agent;

/// Sessions processed together before they are handed on in order.
const CHUNK: usize = 64;

/// One session of a log file and the billed calls read from it.
#[derive(Debug, Clone)]
pub struct SessionInput {
    /// The format ctxj imports the file as; `None` when it does not import this file (its rows
    /// then come from the billed calls alone).
    pub format: Option<Format>,
    pub path: PathBuf,
    /// For a store holding many sessions (an OpenCode or Kilo SQLite database): the session's
    /// id, the part of the file the import opens.
    pub part: Option<String>,
    /// `ctxj usage`'s session (for a subagent file: its parent's); its agent names the rows'.
    pub key: Arc<SessionKey>,
    /// The file's own session id (a subagent file's stem, else `key.session`).
    pub session: String,
    /// For a Claude Code subagent file: the session it belongs to.
    pub parent: Option<String>,
    /// The calls of this session, in time order.
    pub entries: Vec<UsageEntry>,
}

/// The sessions of `files` (by agent, as [`crate::usage::discover`] finds them), in path order
/// per agent; [`crate::usage::read_agents`] counts the calls with each agent's usage reader
/// (de-duplicated across all the files, as `ctxj usage` does). A Claude Code, Codex or pi file
/// is one session; a file of an agent with its own layout gives one session per session its
/// reader found in it (a store holds many), opened as [`crate::usage::sessions::opener`] says.
pub fn plan(files: &BTreeMap<Agent, Vec<PathBuf>>) -> Vec<SessionInput> {
    let (read, list) = crate::usage::read_agents(files);
    let mut by_file: Vec<Vec<UsageEntry>> = vec![Vec::new(); list.len()];
    for e in read.entries {
        if let Some(slot) = by_file.get_mut(e.file) {
            slot.push(e);
        }
    }
    let agent_of: Vec<Agent> = files.iter().flat_map(|(a, ps)| ps.iter().map(move |_| *a)).collect();
    let mut out = Vec::with_capacity(list.len());
    for ((path, entries), agent) in list.into_iter().zip(by_file).zip(agent_of) {
        match agent.format() {
            Some(format) => out.push(transcript(format, path, entries)),
            None => out.extend(sessions_of(agent, &path, entries)),
        }
    }
    out
}

/// A Claude Code, Codex or pi transcript: one session (a subagent file names its parent).
fn transcript(format: Format, path: PathBuf, mut entries: Vec<UsageEntry>) -> SessionInput {
    entries.sort_by(|a, b| a.ts.cmp(&b.ts));
    let key = entries.first().map(|e| e.session.clone()).unwrap_or_else(|| Arc::new(fallback_key(format, &path)));
    let sub = parent_of(&path, format).is_some();
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let (session, parent) = if sub { (stem, Some(key.session.clone())) } else { (key.session.clone(), None) };
    SessionInput { format: Some(format), path, part: None, key, session, parent, entries }
}

/// The sessions `agent`'s usage reader found in `path`, one each (a file with no billed call
/// names none).
fn sessions_of(agent: Agent, path: &std::path::Path, entries: Vec<UsageEntry>) -> Vec<SessionInput> {
    let mut by: BTreeMap<Arc<SessionKey>, Vec<UsageEntry>> = BTreeMap::new();
    for e in entries {
        by.entry(e.session.clone()).or_default().push(e);
    }
    by.into_iter()
        .map(|(key, mut entries)| {
            entries.sort_by(|a, b| a.ts.cmp(&b.ts));
            let opener = crate::usage::sessions::opener(agent, path, &key.session);
            SessionInput {
                format: opener.as_ref().map(|o| o.0),
                path: path.to_path_buf(),
                part: opener.and_then(|o| o.1),
                session: key.session.clone(),
                parent: None,
                key,
                entries,
            }
        })
        .collect()
}

/// The session key of a file with no billed call (so `usage` never named it).
fn fallback_key(agent: Format, path: &std::path::Path) -> SessionKey {
    match agent {
        Format::ClaudeCode => {
            let (project, session) = crate::usage::claude::session_of(path);
            SessionKey { agent: crate::usage::Agent::ClaudeCode, project, session }
        }
        Format::Codex => crate::usage::codex::session_of(path),
        _ => crate::usage::pi::session_of(path),
    }
}

/// Exports `sessions`: each session's rows (recorded, then each of `strategies`) are handed to
/// `sink` in order; sessions are processed in parallel a chunk at a time. Stops at the first
/// error of `sink`. With `content`, recorded rows carry their call's text ([`content`]).
pub fn export<E>(
    sessions: &[SessionInput],
    strategies: &[Strategy],
    tokenizer: &Tokenizer,
    content: bool,
    sink: &mut dyn FnMut(SessionRows) -> Result<(), E>,
) -> Result<(), E> {
    for chunk in sessions.chunks(CHUNK) {
        let done: Vec<SessionRows> =
            chunk.par_iter().map(|s| session::rows(s, strategies, tokenizer, content)).collect();
        for s in done {
            sink(s)?;
        }
    }
    Ok(())
}
