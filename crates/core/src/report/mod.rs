//! Report data: the HTML report's typed model of everything the page shows and the builder that
//! fills it from a journal (`ctxj::render::html` turns it into one self-contained HTML
//! string), and the rows of `ctxj turns` ([`turns`]).
//!
//! [`build`] replays strategies over a [`crate::journal::Journal`] into a [`ReportData`].
//! The model is plain data so the renderer can be tested without a journal, and so sections whose
//! data this build cannot compute carry an explicit [`Availability::Missing`] reason instead of
//! silently disappearing.

mod browser;
pub mod build;
pub mod turns;

use serde::Serialize;

pub use browser::cap_text;
pub use build::{build, build_streaming, build_with_progress, BuildError, Options, TurnRange};

/// Default number of characters of a block's text inlined in the turn browser.
pub const DEFAULT_TEXT_CAP: usize = 2_000;

/// A value a section needs, or why this build cannot provide it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", content = "value", rename_all = "snake_case")]
pub enum Availability<T> {
    Available(T),
    /// Not available; the text says why (e.g. "the prompt-cache simulation is not in this build").
    Missing(String),
}

impl<T> Availability<T> {
    pub fn get(&self) -> Option<&T> {
        match self {
            Availability::Available(v) => Some(v),
            Availability::Missing(_) => None,
        }
    }
}

/// Everything the report shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportData {
    pub header: Header,
    /// How token counts were obtained (e.g. "tiktoken o200k_base" or a stand-in).
    pub estimator: String,
    /// The prompt-cache model used for cached tokens, hit rates and cost.
    pub cache_model: Availability<String>,
    /// Where prices come from (dated table, file), or why there is no cost.
    pub prices: Availability<String>,
    /// The journal's `usage` per turn (one entry per turn, figures `None` where not recorded).
    pub usage: Vec<TurnUsage>,
    /// One entry per strategy, in the order asked for.
    pub strategies: Vec<StrategyData>,
    /// The journal's cleanup decisions (elide, clear, mirror, compact) in journal order.
    pub decisions: Vec<Decision>,
    /// The audit's findings that concern no single decision (e.g. a turn without headroom).
    pub findings: Vec<FindingView>,
    /// The cache breaks the provider's recorded usage shows (`cache::billed`, as `ctxj cache`
    /// lists them), in turn order; empty when the journal records no cache reads.
    pub recorded_breaks: Vec<RecordedBreakView>,
    /// The session as the provider billed it: the one `cache::billed` value `ctxj cache` writes
    /// as its `recorded` object (its `per_turn` costs are also on [`TurnUsage::billed_cost`]).
    pub billed: crate::cache::Billed,
    /// The turns the turn browser shows (`--turns A..B`, `--last N`; default: every turn).
    pub browser_turns: std::ops::RangeInclusive<usize>,
    /// Whether the decisions carry the audit's verdicts.
    pub audit: Availability<()>,
    /// Remarks shown near the top (strategies skipped, estimates used, …).
    pub notes: Vec<String>,
    /// Characters of block text inlined per block in the turn browser.
    pub text_cap: usize,
}

/// The session at a glance.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Header {
    pub session: String,
    pub model: Option<String>,
    pub harness: Option<String>,
    /// Model switches after the session record: (rev, slug).
    pub model_switches: Vec<(u64, String)>,
    pub turns: usize,
    pub records: usize,
    pub ctx_window: Option<u64>,
    pub context_budget: Option<u64>,
    pub context_target: Option<u64>,
    /// Provider-reported totals over the turns that carry `usage`.
    pub recorded: RecordedTotals,
}

/// Sums of the journal's `usage` fields.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RecordedTotals {
    /// Turns whose assistant record has a `usage` object.
    pub turns_with_usage: usize,
    pub prompt_tokens: u64,
    pub cached_tokens: u64,
    pub completion_tokens: u64,
}

/// One strategy replayed over the session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StrategyData {
    pub name: String,
    /// Per turn, in order (turn 1 first).
    pub turns: Vec<TurnFigures>,
    /// The strategy's row of the comparison table.
    pub row: ComparisonRow,
    /// Its first few cache breaks, explained (spec §6).
    pub breaks: Vec<BreakView>,
    /// The turn browser's content for this strategy, one entry per turn.
    pub views: Vec<TurnView>,
}

/// The figures of one turn's request under one strategy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnFigures {
    pub turn: usize,
    /// Estimated tokens of the whole request.
    pub prompt_tokens: u64,
    /// Simulated cached tokens, when a cache model is available.
    pub cached_tokens: Option<u64>,
    /// Cost of this turn in dollars, when prices are available.
    pub cost: Option<f64>,
    /// Running sum of `cost` up to and including this turn.
    pub cumulative_cost: Option<f64>,
    /// Simulated hit rate: cached / prompt.
    pub hit_rate: Option<f64>,
}

/// The provider's `usage` of one turn, as the journal records it (it describes the request that
/// was actually sent, whatever strategies the report replays).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TurnUsage {
    pub turn: usize,
    pub prompt_tokens: Option<u64>,
    pub cached_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    /// What the provider billed for this turn's call (`cache::billed`'s per-turn cost, the one
    /// `turns` and `cache --per-turn` show as "as billed"), when its model has a price.
    pub billed_cost: Option<f64>,
}

impl TurnUsage {
    /// The provider-reported hit rate of this turn, when the journal has both figures.
    pub fn hit_rate(&self) -> Option<f64> {
        match (self.prompt_tokens, self.cached_tokens) {
            (Some(p), Some(c)) if p > 0 => Some(c as f64 / p as f64),
            _ => None,
        }
    }
}

/// One row of the strategy comparison table (the columns of `ctxj cache`, spec §6).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComparisonRow {
    pub strategy: String,
    pub turns: usize,
    pub peak_prompt: u64,
    pub total_prompt: u64,
    pub new_input: Option<u64>,
    pub cached_input: Option<u64>,
    pub hit_rate: Option<f64>,
    pub cost: Option<f64>,
    /// Cost relative to the `baseline` row (1.0 = same), when both costs are known.
    pub cost_vs_baseline: Option<f64>,
    pub cache_breaks: Option<usize>,
}

/// A cache break: a turn whose request does not start with the whole previous request, where
/// and why (the renderer words it; journal ids unescaped).
pub type BreakView = crate::cache::figures::CacheBreak;

/// A cache break in the provider's recorded usage (issue 14 §3): the cache read fell short of
/// what the previous call left in the cache.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecordedBreakView {
    pub turn: usize,
    /// `ttl`, `compaction`, `model_switch`, `prefix_change`, `system_or_tools` or `provider`.
    pub cause: String,
    /// Tokens processed again instead of read.
    pub rewritten_tokens: u64,
    /// What the break cost over reading them, when the model has a price.
    pub cost: Option<f64>,
    /// The evidence (journal text unescaped: the renderer words and escapes it).
    pub evidence: crate::cache::billed::Evidence,
}

/// A cleanup decision recorded in the journal.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    pub rev: u64,
    /// The first turn whose request reflects the decision (`None`: no turn after it).
    pub turn: Option<usize>,
    /// `elide`, `clear`, `mirror` or `compact`.
    pub kind: String,
    /// What the record did, in one line (journal text, unescaped: the renderer escapes).
    pub what: String,
    /// The audit's verdict, when the audit is available.
    pub verdict: Option<Verdict>,
    /// The audit's calibrated estimate of the request before minus after the record.
    pub saved_tokens: i64,
}

/// An audit finding shown on its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FindingView {
    pub rev: u64,
    /// `error`, `warning` or `info`.
    pub level: String,
    pub rule: String,
    /// Journal text unescaped: the renderer escapes.
    pub message: String,
}

/// How the audit judged a decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// Short label, e.g. `ok`, `warning`, `error`.
    pub level: String,
    pub text: String,
}

/// One turn of the turn browser under one strategy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnView {
    pub turn: usize,
    /// Blocks in the whole request.
    pub block_count: usize,
    /// The leading blocks repeated unchanged from the previous request, as one run.
    pub kept: Kept,
    /// The blocks after `kept` (block `kept.blocks + 1` first): a turn holds what changed, not
    /// the whole history again.
    pub blocks: Vec<BlockView>,
    /// The request's blocks compared with the previous turn's request of the same strategy.
    pub diff: DiffSummary,
}

/// The leading run of a request that repeats the previous request of the same strategy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Kept {
    pub blocks: usize,
    pub chars: u64,
    pub tokens: u64,
}

/// How a block relates to the previous request of the same strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// Byte-identical block at the same identity in the previous request.
    Same,
    /// Same identity, different bytes (e.g. elided, truncated, summary rewritten).
    Changed,
    /// Not in the previous request.
    Added,
}

/// One block of a request as the turn browser shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlockView {
    /// The block's `type`.
    pub kind: String,
    /// The block's id (result: its call id); `None` for system and summary blocks.
    pub id: Option<String>,
    /// For results, the tool; for assistant blocks, the tools called.
    pub tool: Option<String>,
    pub chars: usize,
    pub tokens: u64,
    pub change: Change,
    /// For a changed block, its characters in the previous request.
    pub previous_chars: Option<usize>,
    /// How the strategy produced the block ("truncated", "elided @ rev 16", …), when it changed it.
    pub origin: Option<String>,
    /// The text inlined in the page: the first `text_cap` characters, only for blocks that are
    /// added or changed in this turn (unchanged blocks were shown on an earlier turn).
    pub text: Option<String>,
    /// Characters of the full text when `text` was cut.
    pub capped_from: Option<usize>,
}

/// Blocks of the previous request that are gone, and counts per kind of change.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DiffSummary {
    pub same: usize,
    pub changed: usize,
    pub added: usize,
    /// Blocks of the previous request missing from this one: (type, id, chars).
    pub removed: Vec<(String, Option<String>, usize)>,
    /// Whether this request starts with the whole previous request (pure append).
    pub extends_previous: bool,
}
