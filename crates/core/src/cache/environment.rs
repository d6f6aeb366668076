//! The [`Environment`] every replay of a session shares with the provider's record (each turn's
//! model and price, the recorded cache losses replayed, the lifetime seen), `--provider-breaks`
//! ([`ProviderBreaks`]) and what `cache` says about it ([`EnvironmentSummary`]).

use super::prices::Price;

/// `--provider-breaks`: whether every simulated strategy repeats, at the same turns, the cache
/// losses the provider recorded that no change of the request explains (`docs/tokens-and-cache.md`,
/// "The environment a replay shares").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProviderBreaks {
    /// The simulated cache loses what the provider's lost (default).
    #[default]
    Replay,
    /// The simulated cache keeps whatever its model keeps.
    Ignore,
}

/// What every replay of a session shares with the provider's record, turn by turn: the model
/// that answered (and its price), and the most the provider read from its cache where it lost
/// what no request change explains.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Environment {
    /// Per turn (index = turn − 1): the model the provider used (`None`: unknown or `--model`).
    pub models: Vec<Option<String>>,
    /// Per turn: that model's price (`None`: the session's price applies, unless the turn's model
    /// is known and has none: [`Environment::unpriced`]).
    pub prices: Vec<Option<Price>>,
    /// Per turn: the cost the log recorded (pi, OpenClaw `usage.cost.total`), where "as billed"
    /// uses it.
    pub recorded_costs: Vec<Option<f64>>,
    /// The provider reported cache reads and, on every call, a cache write of 0 (an
    /// OpenAI-compatible route such as OpenRouter in front of a model that caches by writes):
    /// the record bills no write premium, so neither do replays — what they write costs input.
    pub writes_unbilled: bool,
    /// Per turn: the provider's cache read (plus the break tolerance), where an environment break
    /// is replayed.
    pub read_cap: Vec<Option<u64>>,
    /// Per turn: the provider's own cache read there, where an environment break is replayed
    /// (the replay keeps, within `read_cap`, what it held when this is not 0) and at the first
    /// call after a model switch (the replay keeps the part inside the unrecorded prefix).
    pub provider_read: Vec<Option<u64>>,
    /// Per turn: the tokens of what the previous call left that the provider did not read back,
    /// where that loss is within the break tolerance (no break is reported:
    /// `Billed::unreported_losses`). The replay's read there falls short of what its previous
    /// request left by as much: a small loss moves any replay by its size, whatever the replay's
    /// token counts (an absolute cap taken from the provider's counts would cut a replay that
    /// counts the conversation longer far below what its cache held).
    pub lost: Vec<Option<u64>>,
    /// Per turn: the tokens the provider billed past the request's last cache breakpoint, neither
    /// read nor written (Anthropic's `input_tokens`), on a call that wrote to the cache. The harness
    /// placed its marker there (Claude Code: on the last message, or the second-to-last for a
    /// fork); every replay leaves the same tail of that turn's request uncached.
    pub unmarked: Vec<Option<u64>>,
    /// The turns whose environment break is replayed.
    pub replayed: Vec<usize>,
    /// The cache lifetime the provider showed (ms): the longest idle gap its cache survived.
    /// Replays keep entries at least this long.
    pub kept_ms: Option<i64>,
}

/// What `ctxj cache` says about a session's [`Environment`] (`--json`: the top-level
/// `environment` object).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct EnvironmentSummary {
    /// `--provider-breaks`: `replay` or `ignore`.
    pub provider_breaks: ProviderBreaks,
    /// The recorded cache losses every simulated strategy repeats (0 with `ignore`), and their
    /// turns.
    pub replayed: usize,
    pub replayed_turns: Vec<usize>,
    /// The cache lifetime replays use when the provider's cache was seen to survive a longer
    /// idle gap than the model's lifetime (seconds; `null` otherwise).
    pub kept_idle_seconds: Option<f64>,
    /// The models the turns are priced and cached at, in order of first use (empty with
    /// `--model`, which prices every turn as that model).
    pub models: Vec<String>,
}

impl Environment {
    /// The summary of this environment under `mode`.
    pub fn summary(&self, mode: ProviderBreaks) -> EnvironmentSummary {
        let mut models: Vec<String> = Vec::new();
        for m in self.models.iter().flatten() {
            if !models.contains(m) {
                models.push(m.clone());
            }
        }
        EnvironmentSummary {
            provider_breaks: mode,
            replayed: self.replayed.len(),
            replayed_turns: self.replayed.clone(),
            kept_idle_seconds: self.kept_ms.filter(|&k| k > super::model::TTL_MS).map(|k| k as f64 / 1000.0),
            models,
        }
    }

    /// The model of `turn` (from 1), if known.
    pub fn model(&self, turn: usize) -> Option<&str> {
        self.models.get(turn.wrapping_sub(1)).and_then(|m| m.as_deref())
    }
    /// The price of `turn`'s model, if it has one.
    pub fn price(&self, turn: usize) -> Option<Price> {
        self.prices.get(turn.wrapping_sub(1)).copied().flatten()
    }
    /// Whether `turn`'s model is known and has no price. Such a turn does not borrow the
    /// session's price: every replay costs it what the log recorded it cost
    /// ([`Environment::recorded_cost`]), as "as billed" does, else leaves it unpriced.
    pub fn unpriced(&self, turn: usize) -> bool {
        self.models.get(turn.wrapping_sub(1)).is_some_and(Option::is_some) && self.price(turn).is_none()
    }
    /// The cost the log recorded for `turn`, where "as billed" uses it.
    pub fn recorded_cost(&self, turn: usize) -> Option<f64> {
        self.recorded_costs.get(turn.wrapping_sub(1)).copied().flatten()
    }
    /// The provider's cache read at `turn`, when a loss is replayed there or `turn` is the first
    /// call after a model switch.
    pub fn read_cap(&self, turn: usize) -> Option<u64> {
        self.read_cap.get(turn.wrapping_sub(1)).copied().flatten()
    }
    /// The tokens past the last cache breakpoint of `turn`'s request, when the provider billed some.
    pub fn unmarked(&self, turn: usize) -> Option<u64> {
        self.unmarked.get(turn.wrapping_sub(1)).copied().flatten()
    }
    /// The tokens the provider failed to read back at `turn`, when a loss within the break
    /// tolerance is replayed there.
    pub fn lost(&self, turn: usize) -> Option<u64> {
        self.lost.get(turn.wrapping_sub(1)).copied().flatten()
    }
    /// The provider's cache read at `turn`, when a loss is replayed there.
    pub fn provider_read(&self, turn: usize) -> Option<u64> {
        self.provider_read.get(turn.wrapping_sub(1)).copied().flatten()
    }
}
