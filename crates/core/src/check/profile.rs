//! Harness profiles: which rules `audit` judges a journal by, and with which thresholds.
//!
//! A journal written by a ctxj-speaking harness is judged by journal-v1 and its budget settings
//! (`ctxj`); an imported Claude Code transcript by what Claude Code documents and is observed to do
//! (`claude-code`); seed `003_*`'s tiers (`command-code`) and seed `002_*`'s compression
//! (`veles`) by theirs. The profile comes from the session's `harness` field
//! ([`Harness::detect`]); `audit --harness` overrides it. docs/rules.md describes each.

use std::fmt;
use std::str::FromStr;

use crate::journal::{Body, Journal};
use crate::tokens::budget::InForce;

/// A named set of rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Harness {
    /// journal-v1 and the budget TOML (elision, invitation, mirror, compaction).
    Ctxj,
    /// Claude Code's auto-compaction: no elision, no tail kept, threshold near the window.
    ClaudeCode,
    /// Seed `003_*`: tiers at 50/80/90 % of the window, a ~30k tail of at least 3 messages,
    /// nothing done with fewer than 5 old messages.
    CommandCode,
    /// Seed `002_*`: compression at 50 % of the window, cut only at a user message, secrets
    /// `[REDACTED]`, anti-thrash.
    Veles,
}

/// Every harness, in the order docs/rules.md lists them.
pub const HARNESSES: [Harness; 4] = [Harness::Ctxj, Harness::ClaudeCode, Harness::CommandCode, Harness::Veles];

/// Where a compaction may cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// The first kept block is a user, assistant or notice block (journal-v1, seed 003).
    Turn,
    /// The first kept block is a user block (seed 002).
    User,
    /// Not judged (Claude Code keeps no tail, or a preserved segment of its own choosing).
    Any,
}

/// The rules and thresholds of one harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    pub harness: Harness,
    /// journal-v1's elision, invitation and mirror rules (and their omissions).
    pub journal_rules: bool,
    /// Auto compaction expected at this percentage of the window; `None`: journal-v1's rule
    /// (the lower of the budget and 50 % of the window).
    pub compact_pct: Option<u64>,
    /// The window when the journal records none.
    pub default_window: Option<u64>,
    /// Fewer summarized blocks than this: the compaction should not have happened.
    pub min_summarized: Option<usize>,
    /// Fewer kept blocks than this (when that many existed): `compact-tail`.
    pub min_tail: Option<usize>,
    pub cut: Cut,
    /// Recorded summaries must not contain secrets (the replay template's redaction rules).
    pub redact: bool,
    /// The pause rule after an ineffective pass.
    pub thrash: bool,
    /// Pressure levels in percent of the window (the `/context` colours).
    pub tiers: &'static [u64],
}

impl Harness {
    pub fn name(self) -> &'static str {
        match self {
            Harness::Ctxj => "ctxj",
            Harness::ClaudeCode => "claude-code",
            Harness::CommandCode => "command-code",
            Harness::Veles => "veles",
        }
    }

    /// The profile named by the session's `harness` field: `claude-code`, `command-code`
    /// (`commandcode`), `veles` (`велес`); anything else, or none, is `ctxj`.
    pub fn detect(journal: &Journal) -> Harness {
        let named = journal.records.iter().find_map(|r| match &r.body {
            Body::Session(s) => s.harness.clone(),
            _ => None,
        });
        named.and_then(|n| n.parse().ok()).unwrap_or(Harness::Ctxj)
    }

    pub fn profile(self) -> Profile {
        let base = Profile {
            harness: self,
            journal_rules: false,
            compact_pct: None,
            default_window: None,
            min_summarized: None,
            min_tail: None,
            cut: Cut::Turn,
            redact: false,
            thrash: true,
            tiers: &[50, 80],
        };
        match self {
            Harness::Ctxj => {
                Profile { journal_rules: true, min_summarized: Some(5), min_tail: Some(3), redact: true, ..base }
            }
            Harness::ClaudeCode => Profile {
                compact_pct: Some(CLAUDE_CODE_FLOOR_PCT),
                default_window: Some(200_000),
                cut: Cut::Any,
                thrash: false,
                ..base
            },
            Harness::CommandCode => Profile {
                compact_pct: Some(90),
                min_summarized: Some(5),
                min_tail: Some(3),
                tiers: &[50, 80, 90],
                ..base
            },
            Harness::Veles => Profile { compact_pct: Some(50), cut: Cut::User, redact: true, tiers: &[50], ..base },
        }
    }
}

/// Claude Code's auto-compaction threshold is not published and moves between versions (observed
/// at 136k–173k of a 200k window, and `/context` reserves a ~45k "autocompact buffer"): an auto
/// compaction below 60 % of the window is the only one `compact-trigger` flags for it.
pub const CLAUDE_CODE_FLOOR_PCT: u64 = 60;

/// The "autocompact buffer" Claude Code's `/context` reserves below the window.
pub const CLAUDE_CODE_BUFFER: u64 = 45_000;

impl Profile {
    /// The window in force: recorded, else the profile's default.
    pub fn window(&self, s: &InForce) -> Option<u64> {
        s.window.or(self.default_window)
    }

    /// The size past which an auto compaction is due.
    pub fn compact_threshold(&self, s: &InForce) -> u64 {
        match (self.compact_pct, self.window(s)) {
            (Some(p), Some(w)) => pct(w, p),
            (Some(_), None) | (None, None) => s.budget,
            (None, Some(w)) => s.budget.min(w / 2),
        }
    }

    /// Where the harness compacts on its own (for `tokens`' "until auto-compact"): Claude Code's
    /// window less its buffer, a tiered harness's last tier, journal-v1's budget (elision).
    pub fn auto_point(&self, s: &InForce) -> Option<u64> {
        let w = self.window(s);
        match self.harness {
            Harness::Ctxj => Some(s.budget),
            Harness::ClaudeCode => w.map(|w| w.saturating_sub(CLAUDE_CODE_BUFFER)),
            _ => Some(self.compact_threshold(s)),
        }
    }
}

/// `p` % of `n`, rounded down, without overflow.
pub fn pct(n: u64, p: u64) -> u64 {
    (n as u128 * p as u128 / 100) as u64
}

impl fmt::Display for Harness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown harness name.
#[derive(Debug, thiserror::Error)]
#[error("unknown harness {0:?}: expected ctxj, claude-code, command-code or veles")]
pub struct UnknownHarness(pub String);

impl FromStr for Harness {
    type Err = UnknownHarness;

    fn from_str(s: &str) -> Result<Harness, UnknownHarness> {
        match s.trim().to_lowercase().as_str() {
            "ctxj" => Ok(Harness::Ctxj),
            "claude-code" | "claude_code" | "claudecode" => Ok(Harness::ClaudeCode),
            "command-code" | "commandcode" => Ok(Harness::CommandCode),
            "veles" | "велес" => Ok(Harness::Veles),
            _ => Err(UnknownHarness(s.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(window: Option<u64>, budget: u64) -> InForce {
        InForce { window, budget, target: budget / 10 * 7, reserve: 8192, keep_results: 5 }
    }

    #[test]
    fn names_round_trip() {
        for h in HARNESSES {
            assert_eq!(h.name().parse::<Harness>().unwrap(), h);
        }
        assert!("pi".parse::<Harness>().is_err());
    }

    #[test]
    fn thresholds_per_profile() {
        let w = s(Some(200_000), 100_000);
        assert_eq!(Harness::Ctxj.profile().compact_threshold(&w), 100_000);
        assert_eq!(Harness::Ctxj.profile().compact_threshold(&s(Some(120_000), 100_000)), 60_000);
        assert_eq!(Harness::ClaudeCode.profile().compact_threshold(&s(None, 200_000)), 120_000);
        assert_eq!(Harness::CommandCode.profile().compact_threshold(&w), 180_000);
        assert_eq!(Harness::Veles.profile().compact_threshold(&w), 100_000);
        assert_eq!(Harness::ClaudeCode.profile().auto_point(&s(None, 0)), Some(155_000));
        assert_eq!(pct(u64::MAX, 100), u64::MAX);
    }
}
