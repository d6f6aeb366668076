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
            // Content importers without a usage reader here (issue 29: h29u's readers).
            Format::Ctxj
            | Format::GeminiCli
            | Format::QwenCode
            | Format::KimiCode
            | Format::Cline
            | Format::OpenCode => continue,
        };
        all.entries.extend(read.entries);
        all.compactions.extend(read.compactions);
        all.duplicates += read.duplicates;
    }
    (all, list)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 20: the fast reads (a byte search for the lines that can carry usage, typed reads
    /// of the few fields) give what parsing every line in full gives, on every transcript we have,
    /// whichever agent's rules read it.
    #[test]
    #[cfg_attr(not(ctxj_has_samples), ignore = "needs ../shared/samples (fails under CI=true)")]
    fn fast_reads_equal_full_parses_on_every_transcript() {
        let mut counted = 0;
        for f in crate::journal::typed::testing::transcript_files() {
            let bytes = std::fs::read(&f).unwrap();
            let both = |parse| {
                [
                    claude::read_bytes_with(&f, &bytes, parse),
                    codex::read_bytes_with(0, &f, &bytes, parse),
                    pi::read_bytes_with(0, &f, &bytes, parse),
                ]
            };
            let (fast, full) = (both(Parse::Fast), both(Parse::Full));
            for (agent, (a, b)) in ["claude", "codex", "pi"].iter().zip(fast.iter().zip(&full)) {
                assert_eq!(format!("{a:?}"), format!("{b:?}"), "{agent} rules on {}", f.display());
            }
            counted += fast.iter().map(|r| r.entries.len()).sum::<usize>();
        }
        assert!(counted > 1000, "{counted} entries: the samples were not read");
    }
}
