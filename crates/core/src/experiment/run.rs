//! One run of an arm: a session read in any format ctxj reads, measured from what the provider
//! billed (`cache::billed`), and its outcome (the manifest's, else the journal's last `outcome`).

use serde::Serialize;

use crate::cache::billed::Billed;
use crate::cache::model::parse_ts;
use crate::journal::{Body, Journal};

/// The measures an experiment compares, in the order they are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeSource {
    Manifest,
    Journal,
}

/// A run's outcome: passed, where it comes from, and the check that judged it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::{billed::billed, PriceTable};
    use crate::tokens::CharEstimator;

    #[test]
    fn measures_of_a_small_session_by_hand() {
        let lines = [
            r#"{"rev":1,"ts":"2026-12-01T10:00:00Z","kind":"session","id":"s","model":"google/gemini-2.5-flash"}"#,
            r#"{"rev":2,"ts":"2026-12-01T10:00:00Z","kind":"user","id":"u1","text":"go"}"#,
            r#"{"rev":3,"ts":"2026-12-01T10:00:10Z","kind":"assistant","id":"a1","text":"x","usage":{"prompt_tokens":2000,"cached_tokens":0,"completion_tokens":100}}"#,
            r#"{"rev":4,"ts":"2026-12-01T10:00:11Z","kind":"compact","summary":"s","first_kept":4}"#,
            r#"{"rev":5,"ts":"2026-12-01T10:01:40Z","kind":"assistant","id":"a2","text":"y","usage":{"prompt_tokens":3000,"cached_tokens":1500,"completion_tokens":50}}"#,
            r#"{"rev":6,"ts":"2026-12-01T10:01:41Z","kind":"outcome","passed":false,"check":"t"}"#,
            r#"{"rev":7,"ts":"2026-12-01T10:01:42Z","kind":"outcome","passed":true,"check":"t","detail":"fixed"}"#,
        ];
        let text = lines.join("\n") + "\n";
        let j = crate::journal::parse_bytes(std::path::Path::new("j"), text.as_bytes(), Default::default()).unwrap();
        let b = billed(&j, &CharEstimator, &PriceTable::builtin(), None);
        let m = Measures::of(&j, &b);
        assert_eq!(m.turns, Some(2.0));
        assert_eq!(m.prompt_tokens, Some(5000.0));
        assert_eq!(m.peak_prompt, Some(3000.0));
        assert_eq!(m.cache_hit_rate, Some(1500.0 / 5000.0));
        assert_eq!(m.compactions, Some(1.0));
        assert_eq!(m.wall_seconds, Some(90.0));
        // gemini-2.5-flash: $0.30 input, $0.03 cached, $2.50 output per million.
        let cost = (2000.0 * 0.3 + 100.0 * 2.5 + 1500.0 * 0.3 + 1500.0 * 0.03 + 50.0 * 2.5) / 1e6;
        assert!((m.cost.unwrap() - cost).abs() < 1e-12, "{:?} vs {cost}", m.cost);
        let c = curve(&b);
        assert_eq!(c[1].hit_rate, Some(0.5));
        assert!((c[1].cumulative_cost.unwrap() - cost).abs() < 1e-12);
        // The last outcome is the run's verdict.
        let o = journal_outcome(&j).unwrap();
        assert!(o.passed);
        assert_eq!(o.source, OutcomeSource::Journal);
    }
}
