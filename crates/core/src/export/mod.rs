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

/// Sessions processed together before they are handed on in order.
const CHUNK: usize = 64;

/// One transcript file and the billed calls read from it.
#[derive(Debug, Clone)]
pub struct SessionInput {
    pub agent: Format,
    pub path: PathBuf,
    /// `ctxj usage`'s session (for a subagent file: its parent's).
    pub key: Arc<SessionKey>,
    /// The file's own session id (a subagent file's stem, else `key.session`).
    pub session: String,
    /// For a Claude Code subagent file: the session it belongs to.
    pub parent: Option<String>,
    /// The calls of this file, in time order.
    pub entries: Vec<UsageEntry>,
}

/// The sessions of `files`, one per transcript file, in path order per agent; `usage::read`
/// counts the calls (de-duplicated across all the files, as `ctxj usage` does).
pub fn plan(files: &BTreeMap<Format, Vec<PathBuf>>) -> Vec<SessionInput> {
    let (read, list) = crate::usage::read(files);
    let mut by_file: Vec<Vec<UsageEntry>> = vec![Vec::new(); list.len()];
    let mut key_of: Vec<Option<Arc<SessionKey>>> = vec![None; list.len()];
    for e in read.entries {
        if let Some(slot) = by_file.get_mut(e.file) {
            key_of[e.file].get_or_insert_with(|| e.session.clone());
            slot.push(e);
        }
    }
    let agent_of: Vec<Format> = files.iter().flat_map(|(a, ps)| ps.iter().map(move |_| *a)).collect();
    list.into_iter()
        .zip(by_file)
        .zip(key_of)
        .zip(agent_of)
        .map(|(((path, mut entries), key), agent)| {
            entries.sort_by(|a, b| a.ts.cmp(&b.ts));
            let key = key.unwrap_or_else(|| Arc::new(fallback_key(agent, &path)));
            let sub = parent_of(&path, agent).is_some();
            let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let (session, parent) = if sub { (stem, Some(key.session.clone())) } else { (key.session.clone(), None) };
            SessionInput { agent, path, key, session, parent, entries }
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
/// error of `sink`.
pub fn export<E>(
    sessions: &[SessionInput],
    strategies: &[Strategy],
    tokenizer: &Tokenizer,
    sink: &mut dyn FnMut(SessionRows) -> Result<(), E>,
) -> Result<(), E> {
    for chunk in sessions.chunks(CHUNK) {
        let done: Vec<SessionRows> = chunk.par_iter().map(|s| session::rows(s, strategies, tokenizer)).collect();
        for s in done {
            sink(s)?;
        }
    }
    Ok(())
}
