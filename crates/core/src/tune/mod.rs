//! `ctxj tune`: a user's own sessions replayed under the context settings their harness offers,
//! scored on cost and demand-weighted retention, the non-dominated settings and a recommendation
//! with the line to paste (`docs/tune.md`).
//!
//! Every configuration ([`knobs`]) is a strategy replayed through the provider-faithful cache
//! simulation ([`crate::cache::simulate_observed`] with the session's [`crate::cache::Environment`]);
//! [`score`] reads each request as it passes; [`frontier`] aggregates over sessions. Task success
//! is not measured: the scores are proxies. Sessions run in parallel; inside a session the
//! configurations share the token memo, configurations that resolve to the same strategy replay
//! once, and one whose threshold the session never reaches reuses the unmanaged replay.

pub mod demand;
pub mod frontier;
pub mod knobs;
pub mod score;

use std::collections::HashMap;

use rayon::prelude::*;

use crate::cache::{self, PriceTable, Pricing, PricingChoice};
use crate::journal::Journal;
use crate::projection::Block;
use crate::strategy;
use crate::tokens::{Estimator, Tokenizer};

pub use frontier::{Objective, Point, Recommendation};
pub use knobs::{Config, Harness};
pub use score::{Dropped, Score};

/// What `ctxj tune` says of every result.
pub const PROXY_NOTE: &str = "Task success is not measured offline: cost, retention and the re-fetch penalty are \
     proxies computed on the recorded trajectory, which a different setting would have changed.";

/// The settings of a sweep.
#[derive(Debug, Clone)]
pub struct Options {
    pub harness: Harness,
    /// How every session is priced (`--model`, `--cache`, `--window`, `--provider-breaks`).
    pub pricing: PricingChoice,
    /// `--penalty m`: the re-fetch penalty's scale.
    pub penalty: f64,
    pub objective: Objective,
    /// How tokens are counted (`--encoding`, the run's memo).
    pub tokenizer: Tokenizer,
}

/// Errors of a sweep.
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    #[error("no session to tune")]
    NoSessions,
    #[error("{session}: {source}")]
    Encoding {
        session: String,
        #[source]
        source: crate::tokens::estimator::EncodingError,
    },
}

/// One session's results.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct SessionResult {
    pub path: String,
    pub model: Option<String>,
    /// The context window the thresholds were resolved against, and the tokens before the
    /// conversation (system prompt and tools) that `compact-at` does not count.
    pub window: u64,
    pub prefix: u64,
    /// What the provider billed, and the replay of the recorded behaviour (the baseline every
    /// point is measured from); `fidelity` = recorded replay ÷ billed − 1.
    pub billed_cost: Option<f64>,
    pub recorded_cost: Option<f64>,
    pub fidelity: Option<f64>,
    /// Demand events and their tokens.
    pub demands: usize,
    pub demanded_tokens: u64,
    /// One per configuration, in the order of [`Tune::configs`].
    pub scores: Vec<Score>,
}

/// The sweep's result.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Tune {
    pub harness: Harness,
    /// The window of the grid's steps (the first session's).
    pub window: u64,
    pub penalty: f64,
    pub objective: Objective,
    pub configs: Vec<Config>,
    /// Aggregates over sessions, one per configuration.
    pub points: Vec<Point>,
    /// Indexes into `points` of the non-dominated configurations on (effective cost, retention),
    /// cheapest first, and the knee among them.
    pub frontier: Vec<usize>,
    pub knee: Option<usize>,
    pub recommendation: Option<Recommendation>,
    pub sessions: Vec<SessionResult>,
    /// Replays run, and replays saved (same strategy, or a threshold never reached).
    pub replays: usize,
    pub replays_saved: usize,
    pub note: &'static str,
}

/// The harness a session's format implies; `None` for agents whose own context settings `tune`
/// does not model yet (Gemini CLI, Qwen Code, Kimi Code, Cline, OpenCode): their sessions can be
/// swept with the provider-level knobs of [`Harness::Api`].
pub fn harness_of(format: crate::import::Format) -> Option<Harness> {
    use crate::import::Format;
    match format {
        Format::ClaudeCode => Some(Harness::ClaudeCode),
        Format::Codex => Some(Harness::Codex),
        Format::Pi => Some(Harness::Pi),
        Format::Ctxj => Some(Harness::Journal),
        Format::GeminiCli | Format::QwenCode | Format::KimiCode | Format::Cline | Format::OpenCode => None,
    }
}

const DEFAULT_WINDOW: u64 = 200_000;

fn pricing_of(j: &Journal, table: &PriceTable, opts: &Options) -> Pricing {
    opts.pricing.pricing(j, table.clone())
}

/// Sweeps the configurations of `opts.harness` over `journals`; `progress(done, total)` counts
/// sessions.
pub fn tune(
    journals: &[&Journal],
    table: &PriceTable,
    opts: &Options,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Tune, TuneError> {
    let first = journals.first().ok_or(TuneError::NoSessions)?;
    let window = pricing_of(first, table, opts).limits.window.map_or(DEFAULT_WINDOW, |l| l.tokens);
    let configs = knobs::grid(opts.harness, window);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<Result<(SessionResult, usize, usize), TuneError>> = journals
        .par_iter()
        .map(|j| {
            let r = session(j, table, opts, &configs);
            progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1, journals.len());
            r
        })
        .collect();
    let mut sessions = Vec::with_capacity(results.len());
    let (mut replays, mut saved) = (0, 0);
    for r in results {
        let (s, n, k) = r?;
        sessions.push(s);
        replays += n;
        saved += k;
    }
    let points = frontier::points(&configs, &sessions, opts.penalty);
    let front = frontier::frontier(&points, |_| true);
    let knee = frontier::knee(&points, &front);
    let recommendation = frontier::recommend(&configs, &points, &sessions, opts.penalty, opts.objective);
    Ok(Tune {
        harness: opts.harness,
        window,
        penalty: opts.penalty,
        objective: opts.objective,
        configs,
        points,
        frontier: front,
        knee,
        recommendation,
        sessions,
        replays,
        replays_saved: saved,
        note: PROXY_NOTE,
    })
}

/// One session under every configuration: (result, replays run, replays saved).
fn session(
    j: &Journal,
    table: &PriceTable,
    opts: &Options,
    configs: &[Config],
) -> Result<(SessionResult, usize, usize), TuneError> {
    let est = opts
        .tokenizer
        .estimator(j)
        .map_err(|source| TuneError::Encoding { session: j.path.display().to_string(), source })?;
    let pricing = pricing_of(j, table, opts);
    let billed = cache::billed(j, &est, &pricing.table, pricing.slug.as_deref());
    let copts = pricing.options_with(&billed);
    let demands = demand::demands(j, &est);
    let window = pricing.limits.window.map_or(DEFAULT_WINDOW, |l| l.tokens);
    let prefix = prefix_tokens(j, &est);
    let shape = knobs::Shape { window, prefix };
    let cx = score::SessionCx {
        journal: j,
        est: &est,
        opts: copts,
        limits: &pricing.limits,
        demands: &demands,
        window,
        price: pricing.priced.as_ref().map(|(_, p)| *p),
    };
    let baseline = score::score(&cx, &strategy::parse("baseline").expect("baseline is a strategy"));
    // The unmanaged conversation only grows: its size at the last turn is its peak (raw tokens,
    // the unit of `compact-at-Nt`).
    let conv_peak = baseline.last_conversation;
    let mut memo: HashMap<String, Score> = HashMap::new();
    memo.insert(baseline.strategy.clone(), baseline.clone());
    let (mut runs, mut saved) = (1, 0);
    let mut scores = Vec::with_capacity(configs.len());
    for c in configs {
        let name = c.rule.strategy(shape);
        if let Some(s) = memo.get(&name) {
            saved += 1;
            scores.push(s.clone());
            continue;
        }
        let unreached = match c.rule {
            knobs::Rule::CompactAt(_) => {
                let n: u64 =
                    name.trim_start_matches("compact-at-").split('t').next().and_then(|d| d.parse().ok()).unwrap_or(0);
                n as f64 > conv_peak as f64 * 1.05
            }
            knobs::Rule::Clear { trigger, .. } | knobs::Rule::Elide { budget: trigger, .. } => {
                trigger as f64 > baseline.peak_prompt as f64 * 1.25
            }
            _ => false,
        };
        let s = if unreached {
            saved += 1;
            Score { strategy: name.clone(), ..baseline.clone() }
        } else {
            runs += 1;
            score::score(&cx, &strategy::parse(&name).expect("grid names parse"))
        };
        memo.insert(name, s.clone());
        scores.push(s);
    }
    let recorded_cost = scores.iter().find(|s| s.strategy == "recorded").and_then(|s| s.cost);
    let fidelity = match (recorded_cost, billed.cost) {
        (Some(r), Some(b)) if b > 0.0 => Some(r / b - 1.0),
        _ => None,
    };
    Ok((
        SessionResult {
            path: j.path.display().to_string(),
            model: pricing.slug.clone(),
            window,
            prefix,
            billed_cost: billed.cost,
            recorded_cost,
            fidelity,
            demands: demands.events.len(),
            demanded_tokens: demands.tokens(),
            scores,
        },
        runs,
        saved,
    ))
}

/// Tokens before the conversation: the unrecorded system prompt and tools of an imported
/// session, else the system block.
fn prefix_tokens(j: &Journal, est: &dyn Estimator) -> u64 {
    let unrecorded = strategy::unrecorded_prefix(j, est).map_or(0, |p| p.tokens);
    let system = j
        .records
        .iter()
        .find_map(|r| match &r.body {
            crate::journal::Body::System(s) => Some(est.block(&Block::system(s))),
            _ => None,
        })
        .unwrap_or(0);
    unrecorded + system
}
