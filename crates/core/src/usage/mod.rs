//! Accounting over transcripts, not importing them: token and cost totals of every agent
//! ccusage reads, counted with ccusage's rules. [`agents`] is the registry (one [`agents::Spec`]
//! per agent: default folders, files, reader); `claude`, `codex`, `pi` and the readers in
//! `agents/` turn the raw logs into [`entry::UsageEntry`]s; [`report`] groups them in a time
//! zone ([`time`]) or in ccusage's 5-hour billing windows ([`blocks`]); [`sources`] finds the folders and files; [`locate`] finds a session by the
//! names `sessions` shows; [`sessions`] summarises one session
//! per transcript for `ctxj sessions`. Prices come from [`crate::cache::prices`].

pub mod agents;
pub mod blocks;
pub mod claude;
pub mod codex;
pub mod entry;
pub mod locate;
pub mod pi;
pub mod report;
pub mod sessions;
pub mod sources;
pub mod time;

use std::collections::BTreeMap;
use std::path::PathBuf;

pub use agents::transcripts;
pub use entry::{Agent, Parse, Tokens};
pub use report::{By, Options, Row, UsageReport};
pub use sessions::{summarize_folder, summarize_folder_with_progress, summarize_journal, SessionSummary};
pub use sources::{discover, existing_default_roots, Root};

use crate::import::Format;

/// Counts the usage in `files` (log files by agent) and groups it under `opts`.
pub fn usage(files: &BTreeMap<Agent, Vec<PathBuf>>, opts: &Options) -> UsageReport {
    let (all, list) = read_agents(files);
    let unreadable = report::unreadable(&list);
    UsageReport { unreadable, ..report::group(&all, list, opts) }
}

/// What [`usage`] bills for one transcript file (every call it counts, pi's recorded cost, else
/// the built-in price of the call's model); `None` when no call has a price or the format is not
/// a transcript. `ctxj sessions` shows it, so the two agree.
pub fn file_cost(agent: Format, path: &std::path::Path) -> Option<f64> {
    let files = BTreeMap::from([(agent, vec![path.to_path_buf()])]);
    let costs: Vec<f64> = read(&files).0.entries.iter().filter_map(|e| e.cost).collect();
    (!costs.is_empty()).then(|| costs.iter().sum())
}

/// [`read_agents`] of transcripts by import format (ctxj journals left out): what `ctxj export`
/// plans its sessions from.
pub fn read(files: &BTreeMap<Format, Vec<PathBuf>>) -> (entry::Read, Vec<PathBuf>) {
    let by_agent: BTreeMap<Agent, Vec<PathBuf>> =
        files.iter().filter_map(|(f, p)| Some((Agent::of_format(*f)?, p.clone()))).collect();
    read_agents(&by_agent)
}

/// The priced entries and compactions of `files`, each agent read by its registry reader, with
/// the file list their `file` indexes point into (in agent order, then as given).
pub fn read_agents(files: &BTreeMap<Agent, Vec<PathBuf>>) -> (entry::Read, Vec<PathBuf>) {
    let parse = Parse::from_env();
    let mut all = entry::Read::default();
    let mut list = Vec::new();
    for (agent, paths) in files {
        let first = list.len();
        list.extend(paths.iter().cloned());
        let read = (agent.spec().read)(paths, first, parse);
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
    #[cfg_attr(
        not(ctxj_has_samples),
        ignore = "needs ../shared/samples (fails under CI=true; once it is there, `touch build.rs`)"
    )]
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
