//! Accounting over transcripts, not importing them: token and cost totals of Claude Code, Codex
//! and pi logs counted with ccusage's rules (`claude`, `codex`, `pi` read the raw lines into
//! [`entry::UsageEntry`]s; [`report`] groups them in a time zone, [`time`]), the default log
//! folders ([`sources`]), and one summary per session found under a folder ([`sessions`], for
//! `ctxj sessions`). Prices come from [`crate::cache::prices`].

pub mod claude;
pub mod codex;
pub mod entry;
pub mod pi;
pub mod report;
pub mod sessions;
pub mod sources;
pub mod time;

use std::collections::BTreeMap;
use std::path::PathBuf;

use rayon::prelude::*;

pub use entry::Tokens;
pub use report::{By, Options, Row, UsageReport};
pub use sessions::{summarize_folder, summarize_folder_with_progress, summarize_journal, SessionSummary};
pub use sources::{existing_default_roots, transcripts, Root};

use crate::import::Format;

/// Counts the usage in `files` (transcripts by agent) and groups it under `opts`.
pub fn usage(files: &BTreeMap<Format, Vec<PathBuf>>, opts: &Options) -> UsageReport {
    let (all, list) = read(files);
    report::group(&all, list, opts)
}

/// What [`usage`] bills for one transcript file (every call it counts, pi's recorded cost, else
/// the built-in price of the call's model); `None` when no call has a price or the format is not
/// a transcript. `ctxj sessions` shows it, so the two agree.
pub fn file_cost(agent: Format, path: &std::path::Path) -> Option<f64> {
    let files = BTreeMap::from([(agent, vec![path.to_path_buf()])]);
    let costs: Vec<f64> = read(&files).0.entries.iter().filter_map(|e| e.cost).collect();
    (!costs.is_empty()).then(|| costs.iter().sum())
}

/// The priced entries and compactions of `files`, with the file list their `file` indexes point
/// into (what [`usage`] groups, and what `ctxj export` writes one row per entry of).
pub fn read(files: &BTreeMap<Format, Vec<PathBuf>>) -> (entry::Read, Vec<PathBuf>) {
    let mut all = entry::Read::default();
    let mut list = Vec::new();
    for (agent, paths) in files {
        let first = list.len();
        list.extend(paths.iter().cloned());
        let read = match agent {
            Format::ClaudeCode => claude::read(paths, first),
            Format::Codex | Format::Pi => {
                let one = if *agent == Format::Codex { codex::read_file } else { pi::read_file };
                let parts: Vec<entry::Read> = paths.par_iter().enumerate().map(|(i, p)| one(first + i, p)).collect();
                let mut r = entry::Read::default();
                for p in parts {
                    r.entries.extend(p.entries);
                    r.compactions.extend(p.compactions);
                    r.duplicates += p.duplicates;
                }
                r
            }
            Format::Ctxj => continue,
        };
        all.entries.extend(read.entries);
        all.compactions.extend(read.compactions);
        all.duplicates += read.duplicates;
    }
    (all, list)
}
