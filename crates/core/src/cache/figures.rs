//! The figures of one replay, as `cache --json` writes them: per turn ([`TurnFigures`]), its
//! breaks ([`CacheBreak`]) and the strategy's summary row ([`Summary`], [`summarize`]).

use super::explain::Divergence;
use super::model::CacheModel;
use super::window::Limits;

/// A cache break (spec §4): the turn, and where and why its request stops repeating the previous
/// one (`render` words it: `cache --json`'s `reason`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CacheBreak {
    pub turn: usize,
    #[serde(flatten)]
    pub at: Divergence,
}

/// Figures of one turn.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct TurnFigures {
    pub turn: usize,
    /// Blocks in the request.
    pub blocks: usize,
    /// Prompt tokens (raw estimate, framing included).
    pub prompt: u64,
    /// Of `prompt`: the estimated unrecorded system prompt + tool schemas (the virtual first
    /// block of an imported session, whose blocks are then counted in provider tokens, raw ×
    /// the fit's slope; 0, and absent from JSON, when the journal records them).
    #[serde(skip_serializing_if = "is_zero")]
    pub unrecorded_prefix: u64,
    #[serde(rename = "cache_read")]
    pub cached: u64,
    /// Uncached input tokens (prompt − cached); `write` of them are cache writes.
    pub new: u64,
    #[serde(rename = "cache_write")]
    pub write: u64,
    pub output: u64,
    /// Whether `output` is the recorded `completion_tokens` (else an estimate).
    pub output_recorded: bool,
    /// $; `None` without a price.
    pub cost: Option<f64>,
    /// The provider's `prompt_tokens` / `cached_tokens`, when recorded.
    pub recorded_prompt: Option<u64>,
    pub recorded_cached: Option<u64>,
    /// Whether this turn is a cache break.
    #[serde(rename = "break")]
    pub is_break: bool,
    /// The compaction summarizer's requests that ran before this turn (own figures and cost,
    /// not in the fields above; absent from JSON when none ran).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summarizer: Option<super::summarizer::SummarizerFigures>,
    /// The prompt exceeds the model's context window ([`check`]; absent when not).
    #[serde(skip_serializing_if = "is_false")]
    pub over_window: bool,
    /// The prompt is below the provider's minimum cacheable prompt (absent when not).
    #[serde(skip_serializing_if = "is_false")]
    pub below_cache_min: bool,
}

/// The summary row of one strategy (spec §6).
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Summary {
    pub strategy: String,
    pub cache: CacheModel,
    pub turns: usize,
    pub peak_prompt: u64,
    pub prompt: u64,
    pub new: u64,
    #[serde(rename = "cache_read")]
    pub cached: u64,
    #[serde(rename = "cache_write")]
    pub write: u64,
    pub output: u64,
    /// cached / prompt over all turns (0 without turns).
    #[serde(rename = "cache_hit")]
    pub hit_rate: f64,
    pub cost: Option<f64>,
    pub breaks: usize,
    /// Over the turns carrying `usage.cached_tokens` (and `prompt_tokens`): the provider's
    /// Σcached / Σprompt, and this simulation's hit rate on the same turns.
    #[serde(rename = "recorded_cache_hit")]
    pub recorded_hit_rate: Option<f64>,
    #[serde(rename = "simulated_cache_hit_same_turns")]
    pub simulated_hit_rate_same_turns: Option<f64>,
    /// Turns the recorded hit rate is taken over.
    pub recorded_turns: usize,
    /// This simulation's cost over the turns that carry `usage` (the turns the session as billed
    /// covers): the figure to set against the billed cost when some turns record no usage
    /// (a Codex rollout without `token_count`s, an aborted call). `None` unpriced or without usage.
    pub cost_same_turns: Option<f64>,
    /// The compaction summarizer's requests (their cost is part of `cost`).
    pub summarizer: super::summarizer::SummarizerTotals,
    /// The requests against the context window and the cache minimum
    /// ([`check`]; empty until checked).
    pub limits: LimitCheck,
}

/// A strategy's simulation.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Simulation {
    pub summary: Summary,
    pub turns: Vec<TurnFigures>,
    pub breaks: Vec<CacheBreak>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The summary row of per-turn figures (the totals are plain sums, so `--per-turn` adds up;
/// recorded figures come from the journal, so the sums saturate at `u64::MAX` instead of
/// overflowing).
pub fn summarize(name: &str, priced: bool, cache: CacheModel, turns: &[TurnFigures], breaks: usize) -> Summary {
    let sum = |f: fn(&TurnFigures) -> u64| turns.iter().map(f).fold(0u64, u64::saturating_add);
    let prompt = sum(|t| t.prompt);
    let cached = sum(|t| t.cached);
    let rec: Vec<&TurnFigures> =
        turns.iter().filter(|t| t.recorded_cached.is_some() && t.recorded_prompt.is_some()).collect();
    let (mut rp, mut rc, mut sp, mut sc) = (0u64, 0u64, 0u64, 0u64);
    for t in &rec {
        rp = rp.saturating_add(t.recorded_prompt.unwrap_or(0));
        rc = rc.saturating_add(t.recorded_cached.unwrap_or(0));
        sp = sp.saturating_add(t.prompt);
        sc = sc.saturating_add(t.cached);
    }
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let summarizer = super::summarizer::totals(turns.iter().filter_map(|t| t.summarizer.as_ref()), priced);
    Summary {
        strategy: name.to_string(),
        cache,
        turns: turns.len(),
        peak_prompt: turns.iter().map(|t| t.prompt).max().unwrap_or(0),
        prompt,
        new: sum(|t| t.new),
        cached,
        write: sum(|t| t.write),
        output: sum(|t| t.output),
        hit_rate: ratio(cached, prompt),
        cost: priced.then(|| turns.iter().filter_map(|t| t.cost).sum::<f64>() + summarizer.cost.unwrap_or(0.0)),
        breaks,
        recorded_hit_rate: (!rec.is_empty()).then(|| ratio(rc, rp)),
        simulated_hit_rate_same_turns: (!rec.is_empty()).then(|| ratio(sc, sp)),
        recorded_turns: rec.len(),
        cost_same_turns: (priced && turns.iter().any(|t| t.recorded_prompt.is_some()))
            .then(|| turns.iter().filter(|t| t.recorded_prompt.is_some()).filter_map(|t| t.cost).sum::<f64>()),
        summarizer,
        limits: Default::default(),
    }
}

/// One strategy's requests against the limits.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct LimitCheck {
    /// The window, when known.
    pub window: Option<u64>,
    /// Requests whose prompt exceeds the window, and the first of them.
    pub over_window: usize,
    pub first_over_window: Option<usize>,
    /// Peak prompt / window.
    pub peak_vs_window: Option<f64>,
    /// The minimum cacheable prompt, when known.
    pub cache_min: Option<u64>,
    /// Requests whose prompt is below it: the provider caches nothing of them.
    pub below_cache_min: usize,
}

/// Checks every request of `sim` against `limits`: marks each turn (`over_window`,
/// `below_cache_min`) and sets the summary's [`LimitCheck`]. The prompt compared is the
/// simulation's (raw estimate, or provider tokens with the unrecorded prefix for imported
/// sessions — the figure of the `peak prompt` column).
pub fn check(sim: &mut Simulation, limits: &Limits) {
    let window = limits.window.map(|l| l.tokens);
    let min = limits.cache_min.map(|l| l.tokens);
    let mut c = LimitCheck { window, cache_min: min, ..LimitCheck::default() };
    for t in &mut sim.turns {
        t.over_window = window.is_some_and(|w| t.prompt > w);
        t.below_cache_min = min.is_some_and(|m| t.prompt < m);
        if t.over_window {
            c.over_window += 1;
            c.first_over_window.get_or_insert(t.turn);
        }
        c.below_cache_min += usize::from(t.below_cache_min);
    }
    c.peak_vs_window = window.filter(|&w| w > 0).map(|w| sim.summary.peak_prompt as f64 / w as f64);
    sim.summary.limits = c;
}
