//! What `ctxj turns` marks on each turn of a strategy's replay: its prompt tokens, whether the
//! request exceeds the model's context window, and — on the recorded replay, whose requests are
//! the ones the provider saw — the recorded cache break [`super::billed`] found there.

use serde::Serialize;

use super::billed::{billed, BreakCause};
use super::figures::check;
use super::model::CacheModel;
use super::pricing::Pricing;
use super::replay::{simulate_observed, Options};
use super::window::Limits;
use crate::journal::Journal;
use crate::strategy::{Strategy, TurnRequest};
use crate::tokens::Estimator;

/// A recorded cache break as a turn carries it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct BreakMark {
    pub cause: BreakCause,
    /// Tokens processed again instead of read from the cache.
    pub rewritten_tokens: u64,
    /// What that cost over reading them ($; `None` without a price for the call's model).
    pub cost: Option<f64>,
}

/// One turn's marks.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TurnMark {
    /// The request's prompt tokens as `cache` replays it (raw estimate; provider tokens with the
    /// unrecorded prefix for imported sessions).
    pub prompt_tokens: u64,
    /// The prompt exceeds the context window.
    pub over_window: bool,
    /// The recorded cache break at this turn (recorded replay only; `null` elsewhere).
    pub recorded_break: Option<BreakMark>,
    /// USD of this turn's call as the provider billed it (the per-call figure of `cache` and
    /// `export`): recorded replay only; null elsewhere and when the call has no usage or price.
    pub billed_usd: Option<f64>,
}

/// The marks of every turn, in turn order, and the limits they were checked against.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Marks {
    pub limits: Limits,
    pub turns: Vec<TurnMark>,
}

impl Marks {
    /// The marks of turn `turn` (from 1).
    pub fn at(&self, turn: usize) -> Option<&TurnMark> {
        turn.checked_sub(1).and_then(|i| self.turns.get(i))
    }
}

/// Replays `strategy` (through the `ideal` cache, unpriced: only the prompt sizes count), checks
/// each request against `pricing`'s limits and, for the recorded replay, adds the session's
/// recorded cache breaks priced with `pricing`'s table.
pub fn marks(journal: &Journal, strategy: &Strategy, est: &dyn Estimator, pricing: &Pricing) -> Marks {
    marks_observed(journal, strategy, est, pricing, |_, _| {}, |_| {})
}

/// [`marks`], calling `progress(done, total)` per turn and handing each request of the replay to
/// `observe` (in turn order), so a caller that needs the requests too (the rows of `turns`)
/// replays the strategy once.
pub fn marks_observed(
    journal: &Journal,
    strategy: &Strategy,
    est: &dyn Estimator,
    pricing: &Pricing,
    progress: impl FnMut(usize, usize),
    observe: impl FnMut(&TurnRequest<'_>),
) -> Marks {
    let opts = Options::plain(CacheModel::Ideal, None);
    let mut sim = simulate_observed(journal, strategy, est, opts, progress, observe);
    check(&mut sim, &pricing.limits);
    let b = strategy.is_recorded().then(|| billed(journal, est, &pricing.table, pricing.slug.as_deref()));
    let turns = sim
        .turns
        .iter()
        .map(|t| TurnMark {
            prompt_tokens: t.prompt,
            over_window: t.over_window,
            recorded_break: b.as_ref().and_then(|b| b.break_at(t.turn)).map(|x| BreakMark {
                cause: x.cause,
                rewritten_tokens: x.rewritten_tokens,
                cost: x.cost,
            }),
            billed_usd: b.as_ref().and_then(|b| b.per_turn.iter().find(|p| p.turn == t.turn)).and_then(|p| p.cost),
        })
        .collect();
    Marks { limits: pricing.limits.clone(), turns }
}
