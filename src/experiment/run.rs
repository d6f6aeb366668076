//! One run of an arm: a session read in any format ctxj reads, measured from what the provider
//! billed (`cache::billed`), and its outcome (the manifest's, else the journal's last `outcome`).

use serde::Serialize;

use crate::cache::billed::Billed;
use crate::cache::model::parse_ts;
use crate::journal::{Body, Journal};

/// The measures an experiment compares, in the order they are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    Cost,
    Turns,
    PromptTokens,
    PeakPrompt,
    CacheHitRate,
    CacheBreaks,
    Compactions,
    WallSeconds,
}

impl Metric {
    pub const ALL: [Metric; 8] = [
        Metric::Cost,
        Metric::Turns,
        Metric::PromptTokens,
        Metric::PeakPrompt,
        Metric::CacheHitRate,
        Metric::CacheBreaks,
        Metric::Compactions,
        Metric::WallSeconds,
    ];

    /// The name in JSON, CSV and the table.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Cost => "cost",
            Metric::Turns => "turns",
            Metric::PromptTokens => "prompt_tokens",
            Metric::PeakPrompt => "peak_prompt",
            Metric::CacheHitRate => "cache_hit_rate",
            Metric::CacheBreaks => "cache_breaks",
            Metric::Compactions => "compactions",
            Metric::WallSeconds => "wall_seconds",
        }
    }
}

/// A run's measures; `None` where the session does not say (no usage, no price, one turn).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Measures {
    /// Dollars, as billed (usage × price).
    pub cost: Option<f64>,
    pub turns: Option<f64>,
    /// Prompt tokens over all turns (cached and new).
    pub prompt_tokens: Option<f64>,
    pub peak_prompt: Option<f64>,
    /// Cached / prompt tokens over all turns.
    pub cache_hit_rate: Option<f64>,
    /// Recorded cache breaks (`cache::billed`'s rule).
    pub cache_breaks: Option<f64>,
    pub compactions: Option<f64>,
    /// Seconds from the first request to the last.
    pub wall_seconds: Option<f64>,
}

impl Measures {
    pub fn get(&self, m: Metric) -> Option<f64> {
        match m {
            Metric::Cost => self.cost,
            Metric::Turns => self.turns,
            Metric::PromptTokens => self.prompt_tokens,
            Metric::PeakPrompt => self.peak_prompt,
            Metric::CacheHitRate => self.cache_hit_rate,
            Metric::CacheBreaks => self.cache_breaks,
            Metric::Compactions => self.compactions,
            Metric::WallSeconds => self.wall_seconds,
        }
    }

    /// The measures of a session from its billed figures.
    pub fn of(journal: &Journal, b: &Billed) -> Measures {
        let times: Vec<i64> = journal.turns.iter().filter_map(|&i| parse_ts(&journal.records[i].ts)).collect();
        let wall = match (times.first(), times.last()) {
            (Some(a), Some(z)) => Some(z.saturating_sub(*a) as f64 / 1000.0),
            _ => None,
        };
        let prompts: Vec<u64> = b.per_turn.iter().filter_map(|t| t.prompt).collect();
        let compactions = journal.records.iter().filter(|r| matches!(r.body, Body::Compact(_))).count();
        Measures {
            cost: b.cost,
            turns: Some(journal.turns.len() as f64),
            prompt_tokens: (!prompts.is_empty()).then(|| prompts.iter().fold(0u64, |a, p| a.saturating_add(*p)) as f64),
            peak_prompt: b.peak_prompt.map(|p| p as f64),
            cache_hit_rate: b.hit_rate,
            cache_breaks: (!prompts.is_empty()).then_some(b.breaks.len() as f64),
            compactions: Some(compactions as f64),
            wall_seconds: wall,
        }
    }
}

/// One turn of a run, for the report's curves.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnPoint {
    pub turn: usize,
    pub prompt: Option<u64>,
    /// Dollars billed up to and including this turn.
    pub cumulative_cost: Option<f64>,
    /// Cached / prompt tokens of this turn.
    pub hit_rate: Option<f64>,
}

/// The per-turn curves of a billed session.
pub fn curve(b: &Billed) -> Vec<TurnPoint> {
    let mut sum = Some(0.0);
    b.per_turn
        .iter()
        .map(|t| {
            sum = sum.zip(t.cost).map(|(s, c)| s + c);
            TurnPoint {
                turn: t.turn,
                prompt: t.prompt,
                cumulative_cost: sum,
                hit_rate: t.prompt.zip(t.cache_read).filter(|(p, _)| *p > 0).map(|(p, r)| r as f64 / p as f64),
            }
        })
        .collect()
}

/// Where a run's outcome comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeSource {
    Manifest,
    Journal,
}

/// A run's outcome: passed, where it comes from, and the check that judged it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    pub passed: bool,
    pub source: OutcomeSource,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<String>,
}

/// The last `outcome` record of the journal (the final judgement of the run), if any.
pub fn journal_outcome(journal: &Journal) -> Option<Outcome> {
    journal.records.iter().rev().find_map(|r| match &r.body {
        Body::Outcome(o) => {
            Some(Outcome { passed: o.passed, source: OutcomeSource::Journal, check: Some(o.check.clone()) })
        }
        _ => None,
    })
}

/// One run of an arm.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    pub arm: String,
    /// The session as the manifest names it.
    pub session: String,
    /// `ctxj`, `claude-code`, `codex` or `pi`.
    pub format: String,
    pub model: Option<String>,
    pub outcome: Option<Outcome>,
    pub measures: Measures,
    pub per_turn: Vec<TurnPoint>,
}
