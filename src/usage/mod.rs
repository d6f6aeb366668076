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

pub use entry::{Parse, Tokens};
pub use report::{By, Options, Row, UsageReport};
pub use sessions::{summarize_folder, summarize_folder_with_progress, summarize_journal, SessionSummary};
pub use sources::{existing_default_roots, transcripts, Root};

use crate::import::Format;

/// Counts the usage in `files` (transcripts by agent) and groups it under `opts`.
pub fn usage(files: &BTreeMap<Format, Vec<PathBuf>>, opts: &Options) -> UsageReport {
    let (all, list) = read(files);
    report::group(&all, list, opts)
}

/// The priced entries and compactions of `files`, with the file list their `file` indexes point
/// into (what [`usage`] groups, and what `ctxj export` writes one row per entry of).
pub fn read(files: &BTreeMap<Format, Vec<PathBuf>>) -> (entry::Read, Vec<PathBuf>) {
    let parse = Parse::from_env();
    let mut all = entry::Read::default();
    let mut list = Vec::new();
    for (agent, paths) in files {
        let first = list.len();
        list.extend(paths.iter().cloned());
        let read = match agent {
            Format::ClaudeCode => claude::read(paths, first, parse),
            Format::Codex | Format::Pi => {
                let one = if *agent == Format::Codex { codex::read_file } else { pi::read_file };
                let parts: Vec<entry::Read> =
                    paths.par_iter().enumerate().map(|(i, p)| one(first + i, p, parse)).collect();
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
