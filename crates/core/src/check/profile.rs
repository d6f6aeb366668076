//! Harness profiles: which rules `audit` judges a journal by, and with which thresholds.
//!
//! A journal written by a ctxj-speaking harness is judged by journal-v1 and its budget settings
//! (`ctxj`); an imported Claude Code transcript by what Claude Code documents and is observed to do
//! (`claude-code`); seed `003_*`'s tiers (`command-code`) and seed `002_*`'s compression
//! (`veles`) by theirs; seed `001_*`'s harness (`pi-agent`, pi's bare `Agent` whose
//! `transformContext` hook applies one strategy of `strategies.md` §2) by the strategy its
//! `harness` field names; the journals the other importers write (OpenCode and Kilo, Gemini
//! CLI, Qwen Code, Cline, Kimi Code, pi and OpenClaw, Codex) by the compaction rule each agent's own
//! source documents ([`super::agents`]). The profile comes from the session's `harness` field
//! ([`Harness::detect`]); `audit --harness` overrides it. docs/rules.md describes each.

use std::fmt;
use std::str::FromStr;

use super::agents::AgentRule;
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
    /// OpenCode and Kilo CLI: compaction at the window less 20,000 ([`super::agents::opencode_point`]).
    OpenCode,
    /// Gemini CLI: compression at 50–70 % of the window by version ([`super::agents::gemini_point`]).
    GeminiCli,
    /// Qwen Code: compression at `min(85 %, window − 33,000)` ([`super::agents::qwen_point`]).
    QwenCode,
    /// Cline: truncation at `maxAllowedSize` ([`super::agents::cline_point`]).
    Cline,
    /// Kimi Code CLI: compaction at `min(85 %, window − 50,000)` ([`super::agents::kimi_point`]).
    KimiCode,
    /// pi and OpenClaw: compaction past the window less `reserveTokens` ([`super::agents::pi_point`]).
    Pi,
    /// Codex CLI: compaction at 90 % of the window ([`super::agents::codex_point`]).
    Codex,
    /// Seed `001_*`: pi's bare `Agent` running one strategy of `strategies.md` §2 in its
    /// `transformContext` hook (`pi-agent 0.9 (transformContext: compact-at-12000-structured)`):
    /// journal-v1's rules, except that what the strategy does is judged by the strategy's own
    /// rule (an age truncation is no budget elision, a `compact-at-N` compaction is due past N).
    PiAgent,
}

/// Every harness, in the order docs/rules.md lists them.
pub const HARNESSES: [Harness; 12] = [
    Harness::Ctxj,
    Harness::ClaudeCode,
    Harness::CommandCode,
    Harness::Veles,
    Harness::OpenCode,
    Harness::GeminiCli,
    Harness::QwenCode,
    Harness::Cline,
    Harness::KimiCode,
    Harness::Pi,
    Harness::Codex,
    Harness::PiAgent,
];

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
    /// Claude Code: the tokens below the window where it compacts on its own
    /// ([`CLAUDE_CODE_BUFFER`], or [`CLAUDE_CODE_LEGACY_BUFFER`] before 2.0).
    pub auto_buffer: u64,
    /// After an ineffective pass compression stops for good and `/new` is offered (seed 002);
    /// otherwise it pauses until the request grows 10 % (seed 003, `strategies.md` §2).
    pub stop_after_ineffective: bool,
    /// An imported agent's own automatic compaction rule ([`super::agents`]): its point
    /// (`compact-missing`) and its floor (`compact-trigger`).
    pub agent: Option<AgentRule>,
    /// The harness decides to compact on the usage its previous response reported (Claude Code
    /// and the imported agents), not on the request about to be sent.
    pub decides_on_last: bool,
    /// `pi-agent`: the strategy its `transformContext` applies (the `harness` field's
    /// `(transformContext: NAME)`); `None` for every other profile.
    pub strategy: Option<crate::strategy::Kind>,
    /// `command-code`: seed 003's `/compact-mode` as the `harness` field records it
    /// (`(compact-mode: fast)`); `None` when it is not recorded (the trim tiers are then
    /// unjudged) and for every other profile.
    pub compact_mode: Option<CompactMode>,
}

/// Seed 003's `/compact-mode`: how aggressive Command Code's automatic compaction is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactMode {
    /// Summarization only: nothing before tier 3 (90 %).
    Default,
    /// All three tiers: tool-call trims at 50 % and 80 % ([`TRIM_TIERS`]) before tier 3.
    Fast,
}

/// Seed 003's tool-call trim tiers in fast mode: from this percentage of the window, at most
/// this many tool calls stay (the oldest call/result pairs go first, only when there are more).
pub const TRIM_TIERS: [(u64, usize); 2] = [(50, 20), (80, 10)];

impl CompactMode {
    pub fn name(self) -> &'static str {
        match self {
            CompactMode::Default => "default",
            CompactMode::Fast => "fast",
        }
    }
}

impl Harness {
    pub fn name(self) -> &'static str {
        match self {
            Harness::Ctxj => "ctxj",
            Harness::ClaudeCode => "claude-code",
            Harness::CommandCode => "command-code",
            Harness::Veles => "veles",
            Harness::OpenCode => "opencode",
            Harness::GeminiCli => "gemini-cli",
            Harness::QwenCode => "qwen-code",
            Harness::Cline => "cline",
            Harness::KimiCode => "kimi-code",
            Harness::Pi => "pi",
            Harness::Codex => "codex",
            Harness::PiAgent => "pi-agent",
        }
    }

    /// The profile named by the session's `harness` field ([`Harness::of_name`]); anything else,
    /// or none, is `ctxj`.
    pub fn detect(journal: &Journal) -> Harness {
        harness_field(journal).and_then(|n| Harness::of_name(&n)).unwrap_or(Harness::Ctxj)
    }

    /// The harness a session's `harness` field names: its first word (before a space, `/` or
    /// `(`), so `veles 1.8 (compression: …)` is `veles` and `claude-code 2.1.39` is `claude-code`.
    pub fn of_name(name: &str) -> Option<Harness> {
        let first = name.trim().split(|c: char| c.is_whitespace() || c == '/' || c == '(').next()?;
        first.parse().ok()
    }

    /// The profile of `journal`: `harness` (else the one its session names), with the version its
    /// `harness` field gives (Claude Code's auto-compaction point moved in 2.0).
    pub fn profile_of(journal: &Journal, harness: Option<Harness>) -> Profile {
        let named = harness_field(journal);
        let h = harness.unwrap_or_else(|| named.as_deref().and_then(Harness::of_name).unwrap_or(Harness::Ctxj));
        let mut p = h.profile();
        // the version is Claude Code's only when the field names Claude Code (`--harness
        // claude-code` over a `pi-agent 0.9` journal is 2.x's rule, not 1.x's)
        let claude_version = named.as_deref().filter(|n| Harness::of_name(n) == Some(Harness::ClaudeCode));
        if h == Harness::ClaudeCode && claude_version.and_then(major_version).is_some_and(|v| v < 2) {
            p.auto_buffer = CLAUDE_CODE_LEGACY_BUFFER;
        }
        if h == Harness::PiAgent {
            p.strategy = named.as_deref().and_then(transform_strategy);
        }
        if h == Harness::CommandCode {
            p.compact_mode = named.as_deref().and_then(compact_mode);
        }
        p
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
            auto_buffer: CLAUDE_CODE_BUFFER,
            stop_after_ineffective: false,
            agent: None,
            decides_on_last: false,
            strategy: None,
            compact_mode: None,
        };
        let agent = |rule: AgentRule| Profile {
            agent: Some(rule),
            decides_on_last: true,
            cut: Cut::Any,
            thrash: false,
            ..base
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
                decides_on_last: true,
                ..base
            },
            Harness::CommandCode => Profile {
                compact_pct: Some(90),
                min_summarized: Some(5),
                min_tail: Some(3),
                tiers: &[50, 80, 90],
                ..base
            },
            Harness::Veles => Profile {
                compact_pct: Some(50),
                cut: Cut::User,
                redact: true,
                tiers: &[50],
                stop_after_ineffective: true,
                ..base
            },
            Harness::OpenCode => agent(AgentRule::OpenCode),
            Harness::GeminiCli => agent(AgentRule::Gemini),
            Harness::QwenCode => agent(AgentRule::Qwen),
            Harness::Cline => agent(AgentRule::Cline),
            Harness::KimiCode => agent(AgentRule::Kimi),
            Harness::Pi => agent(AgentRule::Pi),
            Harness::Codex => agent(AgentRule::Codex),
            // journal-v1's rules where the strategy says nothing (its journals are journal-v1)
            Harness::PiAgent => {
                Profile { journal_rules: true, min_summarized: Some(5), min_tail: Some(3), redact: true, ..base }
            }
        }
    }
}

/// Claude Code's auto-compaction threshold moves between versions (observed at 136k–173k of a
/// 200k window): an auto compaction below 60 % of the window is the only one `compact-trigger`
/// flags for it.
pub const CLAUDE_CODE_FLOOR_PCT: u64 = 60;

/// Where Claude Code (2.x) compacts on its own, below the window: `min(max output, 20,000)` kept
/// for the answer plus a 13,000-token buffer — 167,000 of 200k, 967,000 of 1M (the "33k
/// autocompact buffer" `/context` shows; the shared 2.1.39 sessions compacted at 167k–171k).
pub const CLAUDE_CODE_BUFFER: u64 = 33_000;

/// The buffer before 2.0: 45,000 (77.5 % of 200k, claude-code#15184).
pub const CLAUDE_CODE_LEGACY_BUFFER: u64 = 45_000;

/// The session's `harness` field.
fn harness_field(journal: &Journal) -> Option<String> {
    journal.records.iter().find_map(|r| match &r.body {
        Body::Session(s) => s.harness.clone(),
        _ => None,
    })
}

/// The strategy a `pi-agent` harness field names: `… (transformContext: NAME)` parsed by the
/// strategy-name rule (`strategy::parse`); none, or an unknown name, is `None`.
fn transform_strategy(name: &str) -> Option<crate::strategy::Kind> {
    let rest = name.split_once("transformContext:")?.1;
    let s = rest.split(|c: char| c == ')' || c == ',' || c.is_whitespace()).find(|w| !w.is_empty())?;
    crate::strategy::parse(s).ok().map(|x| x.kind)
}

/// The `/compact-mode` a `command-code` harness field records: `… (compact-mode: fast)` or
/// `(compact-mode: default)` (docs/rules.md: journal-v1 has no settings record, so the mode is
/// written where `pi-agent` writes its strategy); none, or another value, is `None` (unrecorded).
fn compact_mode(name: &str) -> Option<CompactMode> {
    let rest = name.split_once("compact-mode:")?.1;
    let s = rest.split(|c: char| c == ')' || c == ',' || c.is_whitespace()).find(|w| !w.is_empty())?;
    match s.to_ascii_lowercase().as_str() {
        "fast" => Some(CompactMode::Fast),
        "default" => Some(CompactMode::Default),
        _ => None,
    }
}

/// The major version in a `harness` field (`claude-code 1.0.51` → 1).
fn major_version(name: &str) -> Option<u64> {
    let v = name.split_whitespace().nth(1)?;
    v.trim_start_matches('v').split('.').next()?.parse().ok()
}

impl Profile {
    /// The trim tiers in force: seed 003's in fast mode, none in default mode or for any other
    /// profile ([`TRIM_TIERS`]).
    pub fn trim_tiers(&self) -> &'static [(u64, usize)] {
        match (self.harness, self.compact_mode) {
            (Harness::CommandCode, Some(CompactMode::Fast)) => &TRIM_TIERS,
            _ => &[],
        }
    }

    /// `command-code` without a recorded `/compact-mode`: its trims and the tiers they answer
    /// are not judged (said, not assumed).
    pub fn mode_unrecorded(&self) -> bool {
        self.harness == Harness::CommandCode && self.compact_mode.is_none()
    }

    /// The window in force: recorded, else the model's (`model_window`, the table `cache` uses:
    /// [`crate::cache::window`]), else the profile's default.
    pub fn window(&self, s: &InForce, model_window: Option<u64>) -> Option<u64> {
        s.window.or(model_window).or(self.default_window)
    }

    /// The size past which an auto compaction is not early (`compact-trigger`).
    pub fn compact_threshold(&self, s: &InForce, window: Option<u64>) -> u64 {
        if let Some(rule) = self.agent {
            // no window, no rule: nothing is early
            return window.map_or(0, |w| rule.floor(w));
        }
        let point = self.compaction_point(window).unwrap_or(u64::MAX);
        match (self.compact_pct, window) {
            // never early at or past its own auto point
            (Some(p), Some(w)) if self.harness == Harness::ClaudeCode => pct(w, p).min(point),
            (Some(p), Some(w)) => pct(w, p),
            (Some(_), None) | (None, None) => s.budget,
            (None, Some(w)) => s.budget.min(w / 2),
        }
    }

    /// Where the harness compacts on its own (`compact-missing`, and `tokens`' "until
    /// auto-compact"): Claude Code's window less its buffer, seed 003's tier 3 (90 %), seed 002's
    /// threshold (50 %). `None` for journal-v1, whose automatic cleanup is elision at the budget
    /// ([`Profile::auto_point`]).
    pub fn compaction_point(&self, window: Option<u64>) -> Option<u64> {
        let w = window?;
        match self.harness {
            Harness::Ctxj | Harness::PiAgent => None,
            // a window no larger than the buffer is no Claude Code window (it has no point)
            Harness::ClaudeCode => w.checked_sub(self.auto_buffer).filter(|p| *p > 0),
            _ if self.agent.is_some() => self.agent.map(|r| r.point(w)).filter(|p| *p > 0),
            _ => self.compact_pct.map(|p| pct(w, p)),
        }
    }

    /// The next automatic cleanup: the compaction point, or journal-v1's elision at the budget.
    pub fn auto_point(&self, s: &InForce, window: Option<u64>) -> Option<u64> {
        match self.harness {
            Harness::Ctxj | Harness::PiAgent => Some(s.budget),
            _ => self.compaction_point(window),
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
#[error(
    "unknown harness {0:?}: expected ctxj, claude-code, command-code, veles, opencode (kilo), gemini-cli, qwen-code, cline, kimi-code, pi (openclaw), codex or pi-agent"
)]
pub struct UnknownHarness(pub String);

impl FromStr for Harness {
    type Err = UnknownHarness;

    fn from_str(s: &str) -> Result<Harness, UnknownHarness> {
        match s.trim().to_lowercase().as_str() {
            "ctxj" => Ok(Harness::Ctxj),
            "claude-code" | "claude_code" | "claudecode" => Ok(Harness::ClaudeCode),
            "command-code" | "commandcode" => Ok(Harness::CommandCode),
            "veles" | "велес" => Ok(Harness::Veles),
            "opencode" | "kilo" => Ok(Harness::OpenCode),
            "gemini-cli" | "gemini" => Ok(Harness::GeminiCli),
            "qwen-code" | "qwen" => Ok(Harness::QwenCode),
            "cline" => Ok(Harness::Cline),
            "kimi-code" | "kimi" => Ok(Harness::KimiCode),
            "pi" | "openclaw" => Ok(Harness::Pi),
            "codex" => Ok(Harness::Codex),
            "pi-agent" => Ok(Harness::PiAgent),
            _ => Err(UnknownHarness(s.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 30: the bundled experiment's runs (`pi-agent 0.9 (transformContext: …)`) were judged
    /// by the `ctxj` profile's budget rules, which their harness does not have.
    #[test]
    fn regression_experiment_harness_judged_by_ctxj_budget_rules() {
        use crate::strategy::Kind;
        assert_eq!(Harness::of_name("pi-agent 0.9 (transformContext: baseline)"), Some(Harness::PiAgent));
        assert_eq!(
            transform_strategy("pi-agent 0.9 (transformContext: age-truncate-500-keep-3)"),
            Some(Kind::AgeTruncate { n: 500, keep: 3 })
        );
        assert!(matches!(
            transform_strategy("pi-agent 0.9 (transformContext: compact-at-12000-structured)"),
            Some(Kind::CompactAt { n: 12_000, .. })
        ));
        assert_eq!(transform_strategy("pi-agent 0.9"), None);
        assert_eq!(transform_strategy("pi-agent 0.9 (transformContext: nonsense)"), None);
        let p = Harness::PiAgent.profile();
        assert!(p.journal_rules && p.compaction_point(Some(1_000_000)).is_none());
    }

    fn s(window: Option<u64>, budget: u64) -> InForce {
        InForce { window, budget, target: budget / 10 * 7, reserve: 8192, keep_results: 5 }
    }

    #[test]
    fn names_round_trip() {
        for h in HARNESSES {
            assert_eq!(h.name().parse::<Harness>().unwrap(), h);
        }
        assert!("aider".parse::<Harness>().is_err());
        assert_eq!("kilo".parse::<Harness>().unwrap(), Harness::OpenCode);
        assert_eq!("openclaw".parse::<Harness>().unwrap(), Harness::Pi);
    }

    #[test]
    fn thresholds_per_profile() {
        let w = s(Some(200_000), 100_000);
        let th = |h: Harness, s: &InForce| h.profile().compact_threshold(s, h.profile().window(s, None));
        assert_eq!(th(Harness::Ctxj, &w), 100_000);
        assert_eq!(th(Harness::Ctxj, &s(Some(120_000), 100_000)), 60_000);
        assert_eq!(th(Harness::ClaudeCode, &s(None, 200_000)), 120_000);
        assert_eq!(th(Harness::CommandCode, &w), 180_000);
        assert_eq!(th(Harness::Veles, &w), 100_000);
        let cc = Harness::ClaudeCode.profile();
        assert_eq!(cc.auto_point(&s(None, 0), cc.window(&s(None, 0), None)), Some(167_000));
        assert_eq!(cc.compaction_point(Some(1_000_000)), Some(967_000));
        assert_eq!(Harness::Ctxj.profile().compaction_point(Some(200_000)), None);
        assert_eq!(pct(u64::MAX, 100), u64::MAX);
    }

    /// Issue 29: every harness an importer writes has a profile of its own (Codex's was judged
    /// by the ctxj rules until its compaction rule was read).
    #[test]
    fn every_importer_harness_names_its_profile() {
        for h in crate::tokens::IMPORTED {
            let p = Harness::of_name(h).unwrap_or_else(|| panic!("{h}: no profile"));
            assert!(p == Harness::ClaudeCode || p.profile().agent.is_some(), "{h}");
        }
        assert_eq!(Harness::Codex.profile().compaction_point(Some(272_000)), Some(244_800));
    }

    /// Issue 30: detection was exact-name only, so the bundled Veles sample
    /// (`"veles 1.8 (compression: …)"`) was audited under the ctxj rules.
    #[test]
    fn regression_harness_detected_by_name_prefix_and_version() {
        assert_eq!(Harness::of_name("veles 1.8 (compression: threshold 0.5)"), Some(Harness::Veles));
        assert_eq!(Harness::of_name("claude-code 2.1.39"), Some(Harness::ClaudeCode));
        assert_eq!(Harness::of_name("command-code/0.3"), Some(Harness::CommandCode));
        assert_eq!(Harness::of_name("ctx-harness 0.4 (seed 000)"), None);
        assert_eq!(Harness::of_name("pi-agent 0.9"), Some(Harness::PiAgent));
        // pi and OpenClaw sessions are judged by pi's own rule (`check::agents`)
        assert_eq!(Harness::of_name("pi 0.9"), Some(Harness::Pi));
        assert_eq!(major_version("claude-code 1.0.51"), Some(1));
        assert_eq!(major_version("claude-code v2.1.39"), Some(2));
    }

    /// Issue 30: seed 003's fast-mode tiers (50 %/80 %) could not be judged because no journal
    /// said which `/compact-mode` ran; the `harness` field now records it.
    #[test]
    fn regression_command_code_compact_mode_was_not_recordable() {
        let j = |h: &str| {
            let text = format!("{{\"rev\":1,\"ts\":\"2026-01-01T00:00:00Z\",\"kind\":\"session\",\"id\":\"s\",\"model\":\"m\",\"harness\":\"{h}\"}}\n");
            Harness::profile_of(&crate::journal::reader::parse_bytes_for_test(&text), None)
        };
        let fast = j("command-code 1.2 (compact-mode: fast)");
        assert_eq!((fast.compact_mode, fast.trim_tiers()), (Some(CompactMode::Fast), &TRIM_TIERS[..]));
        let default = j("command-code 1.2 (compact-mode: default)");
        assert_eq!((default.compact_mode, default.trim_tiers().len()), (Some(CompactMode::Default), 0));
        let plain = j("command-code 1.2");
        assert!(plain.mode_unrecorded() && plain.trim_tiers().is_empty());
        assert_eq!(compact_mode("command-code (compact-mode: turbo)"), None);
        // only Command Code has the setting
        assert!(!j("veles 1.8 (compact-mode: fast)").mode_unrecorded());
        assert!(j("veles 1.8 (compact-mode: fast)").trim_tiers().is_empty());
    }

    /// `--harness claude-code` over a journal whose `harness` field names another harness took
    /// that harness's version for Claude Code's (`pi-agent 0.9` → 1.x's 45,000 buffer).
    #[test]
    fn regression_another_harness_version_picked_claude_codes_buffer() {
        let text = "{\"rev\":1,\"ts\":\"2026-01-01T00:00:00Z\",\"kind\":\"session\",\"id\":\"s\",\"model\":\"m\",\"harness\":\"pi-agent 0.9\"}\n";
        let j = crate::journal::reader::parse_bytes_for_test(text);
        assert_eq!(Harness::profile_of(&j, Some(Harness::ClaudeCode)).auto_buffer, CLAUDE_CODE_BUFFER);
    }
}
