//! What an import did: [`ImportReport`] (format, what the format does not record, skipped lines,
//! branches, side sessions, notes) and its parts [`Dropped`] and [`Child`]; and [`Imported`],
//! what every format's reader returns (the journal with its report).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::Format;
use crate::journal::{Journal, Text};

/// Counts of what an import dropped, kept aside or could not represent.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Dropped {
    /// API calls (turns) left out.
    pub turns: usize,
    /// Tool calls left out.
    pub calls: usize,
    /// Tool results left out.
    pub results: usize,
    /// Compactions left out.
    pub compactions: usize,
}

/// A session that lives beside the imported one (a sidechain, a subagent file).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Child {
    /// What to pass to `load` to open it (`file.jsonl#name` for inline sidechains).
    pub spec: String,
    /// Short description (`sidechain`, `subagent`, `compaction call`).
    pub role: String,
    /// Lines in it.
    pub lines: usize,
}

/// What an import did: the format, what is missing, what was skipped and why.
#[derive(Debug, Clone, Default, serde::Serialize, schemars::JsonSchema)]
pub struct ImportReport {
    /// The format read (`None` for a ctxj journal read as is).
    pub format: Option<&'static str>,
    pub source: PathBuf,
    /// Physical lines in the file.
    pub lines: usize,
    /// Things the format does not record (`system prompt`, `tool schemas`): reported, never invented.
    pub missing: Vec<String>,
    /// Skipped records by type (`progress`, `system/turn_duration`, `invalid JSON`, …).
    pub skipped: BTreeMap<String, usize>,
    /// Other branches of the conversation tree, reported and not merged.
    pub branches: usize,
    /// What the other branches (and other dropped lines) held.
    pub dropped: Dropped,
    /// Content that has no journal-v1 field (thinking blocks, reasoning items, …), by kind.
    pub unrepresented: BTreeMap<String, usize>,
    /// Side sessions (sidechains, subagents) listed with this one.
    pub children: Vec<Child>,
    /// Free-form notes (quirks met, fallbacks taken).
    pub notes: Vec<String>,
    /// Timestamps moved forward to keep `ts` non-decreasing.
    pub ts_clamped: usize,
}

impl ImportReport {
    pub fn new(format: Format, source: &Path) -> Self {
        ImportReport { format: Some(format.name()), source: source.to_path_buf(), ..Default::default() }
    }

    /// Counts one skipped record of `what`.
    pub fn skip(&mut self, what: impl Into<String>) {
        *self.skipped.entry(what.into()).or_default() += 1;
    }

    /// Counts one piece of content that journal-v1 cannot hold.
    pub fn lose(&mut self, what: impl Into<String>) {
        *self.unrepresented.entry(what.into()).or_default() += 1;
    }

    pub fn note(&mut self, s: impl Into<String>) {
        let s = s.into();
        if !self.notes.contains(&s) {
            self.notes.push(s);
        }
    }

    /// A one-paragraph summary for stderr.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if !self.missing.is_empty() {
            parts.push(format!("not recorded by the format: {}", self.missing.join(", ")));
        }
        if self.branches > 0 {
            use crate::text::count;
            parts.push(format!(
                "{} not merged ({}, {}, {})",
                count(self.branches, "other branch", "other branches"),
                count(self.dropped.turns, "turn", "turns"),
                count(self.dropped.calls, "call", "calls"),
                count(self.dropped.results, "result", "results")
            ));
        }
        let skipped: usize = self.skipped.values().sum();
        if skipped > 0 {
            let top: Vec<String> = self.skipped.iter().map(|(k, v)| format!("{k} {v}")).collect();
            parts.push(format!("skipped {skipped} record(s): {}", top.join(", ")));
        }
        if !self.notes.is_empty() {
            parts.push(self.notes.join("; "));
        }
        if !self.children.is_empty() {
            parts.push(format!(
                "{} side session(s): {}",
                self.children.len(),
                self.children.iter().map(|c| c.spec.as_str()).collect::<Vec<_>>().join(", ")
            ));
        }
        parts.join("; ")
    }
}

/// A transcript imported into memory.
#[derive(Debug, Clone)]
pub struct Imported {
    pub journal: Journal,
    pub report: ImportReport,
    /// Attachment files the transcript holds inline: (path relative to a session directory,
    /// base64 payload). `ctxj import` writes them beside the journal.
    pub files: Vec<(String, Text)>,
}
