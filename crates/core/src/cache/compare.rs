//! Several strategies simulated through one cache model and price: what `ctxj cache` shows.

use super::billed::{billed, Billed};
use super::pricing::{cost_ratio, Pricing};
use super::replay::{simulate, Simulation};
use crate::journal::Journal;
use crate::strategy::{self, Strategy};
use crate::tokens::estimator::MemoStats;
use crate::tokens::{Encoding, TiktokenEstimator};

/// The strategies' simulations and what they were simulated with.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub pricing: Pricing,
    pub encoding: Encoding,
    /// The token memo's figures after every replay.
    pub memo: MemoStats,
    /// One per strategy, in the order asked for.
    pub sims: Vec<Simulation>,
    /// The cost of `baseline` (replayed for it when it was not asked for and prices are known).
    pub base_cost: Option<f64>,
    /// The session as the provider billed it (from `usage`), with its recorded cache breaks.
    pub billed: Billed,
    /// What every replay shared with the provider's record.
    pub environment: super::environment::EnvironmentSummary,
}

impl Comparison {
    /// A strategy's cost relative to `baseline`.
    pub fn vs_baseline(&self, s: &Simulation) -> Option<f64> {
        cost_ratio(s.summary.cost, self.base_cost)
    }
}

/// Simulates `strategies` one after the other; `progress(done, total)` counts turns over all of
/// them.
pub fn compare(
    journal: &Journal,
    strategies: &[Strategy],
    est: &TiktokenEstimator,
    pricing: Pricing,
    progress: &mut dyn FnMut(usize, usize),
) -> Comparison {
    // The session as billed first: every replay shares its environment (each turn's model, the
    // provider's unexplained cache losses).
    let billed = billed(journal, est, &pricing.table, pricing.slug.as_deref());
    let opts = pricing.options_with(&billed);
    let environment = opts.env.as_ref().map(|e| e.summary(pricing.provider_breaks)).unwrap_or_default();
    // The extra baseline replay below counts only when it happens (a total that assumed it
    // always did left the bar of `ctxj cache` at two thirds when it vanished).
    let extra = usize::from(opts.priced() && !strategies.iter().any(|s| s.name == "baseline"));
    let total = journal.turns.len() * (strategies.len() + extra);
    // The strategies replay one after the other and share the estimator's memo. In parallel
    // they met the same new texts at the same turn and tokenized them twice, and on two cores
    // they were no faster but took ~45% more memory (docs/performance.md).
    let mut done = 0;
    let sims: Vec<Simulation> = strategies
        .iter()
        .map(|s| {
            let base = done;
            let mut r = simulate(journal, s, est, opts.clone(), |d, _| progress(base + d, total));
            super::figures::check(&mut r, &pricing.limits);
            done += journal.turns.len();
            r
        })
        .collect();
    // Cost relative to baseline: replay it too when it was not asked for.
    let base_cost = match sims.iter().find(|s| s.summary.strategy == "baseline") {
        Some(b) => b.summary.cost,
        None if opts.priced() => {
            let b = strategy::parse("baseline").expect("baseline is a strategy");
            simulate(journal, &b, est, opts, |d, _| progress(done + d, total)).summary.cost
        }
        None => None,
    };
    Comparison { pricing, encoding: est.encoding(), memo: est.stats(), sims, base_cost, billed, environment }
}
