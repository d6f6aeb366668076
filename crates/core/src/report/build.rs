//! Builds a [`ReportData`] from a journal and a list of strategies.
//!
//! Every strategy is replayed with [`crate::strategy::replay`]; each request is measured with the
//! token [`Estimator`], compared block by block with the previous request of the same strategy
//! (for the turn browser), and summed into the comparison row. The journal's own cleanup
//! decisions, their verdicts and the tokens they saved come from the audit
//! ([`crate::check::audit`]).
//!
//! Sections whose data this build cannot compute (the prompt-cache simulation and prices) are
//! marked [`Availability::Missing`] with the reason; the builder never invents them.

use std::collections::HashMap;

use crate::cache::{self, cost_ratio, PriceTable, Pricing};
use crate::check::{self, Finding, Severity};
use crate::journal::{Body, Journal};
use crate::strategy::Strategy;
use crate::tokens::estimator::EncodingError;
use crate::tokens::{Estimator, Tokenizer};

use super::browser::Browser;
use super::{
    Availability, ComparisonRow, Decision, FindingView, Header, RecordedBreakView, RecordedTotals, ReportData,
    StrategyData, TurnFigures, TurnUsage, TurnView, Verdict, DEFAULT_TEXT_CAP,
};

/// What to build.
#[derive(Debug, Clone)]
pub struct Options {
    /// Characters of block text inlined per block (at least 1).
    pub text_cap: usize,
    /// The cache model, prices and window (`None`: the session's defaults with the built-in
    /// table, spec §4).
    pub pricing: Option<Pricing>,
    /// How tokens are counted (`--encoding`, else the session's; the persistent memo).
    pub tokenizer: Tokenizer,
    /// Remarks to show on the page (e.g. default strategies this build does not know).
    pub notes: Vec<String>,
    /// The turns the turn browser shows (the charts and tables always cover every turn).
    pub turns: TurnRange,
}

/// Which turns the turn browser shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TurnRange {
    /// Every turn.
    #[default]
    All,
    /// Turns `A..=B` (from 1; clamped to the session).
    Range(usize, usize),
    /// The last `N` turns.
    Last(usize),
}

impl TurnRange {
    /// The turns (from 1) this range selects in a session of `n` turns; empty when none.
    pub fn resolve(self, n: usize) -> std::ops::RangeInclusive<usize> {
        match self {
            TurnRange::All => 1..=n,
            TurnRange::Range(a, b) => a.max(1)..=b.min(n),
            TurnRange::Last(k) => (n.saturating_sub(k) + 1)..=n,
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            text_cap: DEFAULT_TEXT_CAP,
            pricing: None,
            tokenizer: Tokenizer::default(),
            notes: Vec::new(),
            turns: TurnRange::All,
        }
    }
}

/// Why a report cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("no strategies to report")]
    NoStrategies,
    #[error(transparent)]
    Encoding(#[from] EncodingError),
}

/// How many cache breaks are explained per strategy.
pub const BREAKS_SHOWN: usize = 5;

/// Replays `strategies` over `journal` and gathers everything the report shows.
pub fn build(journal: &Journal, strategies: &[Strategy], opts: &Options) -> Result<ReportData, BuildError> {
    build_with_progress(journal, strategies, opts, &mut |_, _| {})
}

/// [`build`], calling `progress(done, total)` as turns are replayed and records audited: each
/// strategy is replayed once (the cache simulation hands each request to the turn browser), so
/// `total` is turns × strategies + records.
pub fn build_with_progress(
    journal: &Journal,
    strategies: &[Strategy],
    opts: &Options,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<ReportData, BuildError> {
    build_streaming(journal, strategies, opts, progress, None)
}

/// [`build_with_progress`], handing each turn-browser view to `sink(strategy index, view)` as it
/// is built instead of keeping it (the returned [`StrategyData::views`] are then empty): a long
/// session's page can then be written without holding every view (`render::html::Spill`).
pub fn build_streaming(
    journal: &Journal,
    strategies: &[Strategy],
    opts: &Options,
    progress: &mut dyn FnMut(usize, usize),
    mut sink: Option<&mut dyn FnMut(usize, TurnView)>,
) -> Result<ReportData, BuildError> {
    if strategies.is_empty() {
        return Err(BuildError::NoStrategies);
    }
    let est = opts.tokenizer.estimator(journal)?;
    let cap = opts.text_cap.max(1);
    let notes = opts.notes.clone();

    let pricing =
        opts.pricing.clone().unwrap_or_else(|| Pricing::for_session(journal, None, None, PriceTable::builtin()));
    let prices = match (&pricing.priced, &pricing.slug) {
        (Some((name, p)), Some(slug)) => Availability::Available(format!(
            "{slug} as {name} ({}): input ${}/M, cached ${}/M, cache write ${}/M, output ${}/M",
            pricing.table.source,
            p.input,
            p.cached_rate(),
            p.write_rate(),
            p.output
        )),
        (_, Some(slug)) => Availability::Missing(format!("no price for {slug} in the {}", pricing.table.source)),
        _ => Availability::Missing("the journal records no model to price".to_string()),
    };
    // Every replay shares the session's environment: each turn priced and cached at the model that
    // answered it, and the provider's unexplained cache losses repeated (docs/tokens-and-cache.md).
    let billed = cache::billed(journal, &est, &pricing.table, pricing.slug.as_deref());
    let copts = pricing.options_with(&billed);

    let n = journal.turns.len();
    let replays = n.saturating_mul(strategies.len());
    let total = replays.saturating_add(journal.records.len());
    let shown = opts.turns.resolve(n);
    let mut data = Vec::with_capacity(strategies.len());
    for (i, s) in strategies.iter().enumerate() {
        let base = i * n;
        let one = Replay { est: &est, cap, copts: copts.clone(), shown: shown.clone() };
        let mut keep = Vec::new();
        let mut to = |v: TurnView| match sink.as_mut() {
            Some(f) => f(i, v),
            None => keep.push(v),
        };
        let mut d = one.run(journal, s, &mut |d| progress(base + d, total), &mut to);
        d.views = keep;
        data.push(d);
    }
    let recorded_breaks = billed
        .breaks
        .iter()
        .map(|b| RecordedBreakView {
            turn: b.turn,
            cause: b.cause.name().to_string(),
            rewritten_tokens: b.rewritten_tokens,
            cost: b.cost,
            evidence: b.evidence.clone(),
        })
        .collect();
    let base_cost = data.iter().find(|s| s.name == "baseline").and_then(|s| s.row.cost);
    for s in &mut data {
        s.row.cost_vs_baseline = cost_ratio(s.row.cost, base_cost);
    }

    let (decisions, findings) = audited(journal, &est, &mut |d, _| progress(replays.saturating_add(d), total));
    let usage = journal
        .turns
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            let u = match &journal.records[i].body {
                Body::Assistant(a) => a.usage.clone().unwrap_or_default(),
                _ => Default::default(),
            };
            // `per_turn` is in turn order: found by a binary search, not a scan per turn.
            let at = billed.per_turn.partition_point(|b| b.turn < k + 1);
            TurnUsage {
                turn: k + 1,
                prompt_tokens: u.prompt_tokens,
                cached_tokens: u.cached_tokens,
                completion_tokens: u.completion_tokens,
                billed_cost: billed.per_turn.get(at).filter(|b| b.turn == k + 1).and_then(|b| b.cost),
            }
        })
        .collect();
    Ok(ReportData {
        header: header(journal),
        estimator: format!("tiktoken {} (spec strategies.md §3, raw estimate)", est.encoding()),
        cache_model: Availability::Available(format!(
            "{}{}",
            pricing.cache.name(),
            if pricing.cache_from_slug { " (from the model slug)" } else { "" }
        )),
        prices,
        usage,
        strategies: data,
        decisions,
        findings,
        recorded_breaks,
        billed,
        browser_turns: shown,
        audit: Availability::Available(()),
        notes,
        text_cap: cap,
    })
}

fn header(journal: &Journal) -> Header {
    let mut h = Header { turns: journal.turns.len(), records: journal.records.len(), ..Header::default() };
    if let Some(s) = journal.session() {
        h.session = s.id.clone();
        h.model = s.model.clone();
        h.harness = s.harness.clone();
        if let Some(c) = &s.ctx {
            h.ctx_window = c.ctx_window;
            h.context_budget = c.context_budget;
            h.context_target = c.context_target;
        }
    }
    let mut t = RecordedTotals::default();
    for r in &journal.records {
        match &r.body {
            Body::Model(m) => h.model_switches.push((r.rev, m.model.clone())),
            Body::Assistant(a) => {
                if let Some(u) = &a.usage {
                    t.turns_with_usage += 1;
                    // Saturating: the figures come from the journal (issue 21).
                    t.prompt_tokens = t.prompt_tokens.saturating_add(u.prompt_tokens.unwrap_or(0));
                    t.cached_tokens = t.cached_tokens.saturating_add(u.cached_tokens.unwrap_or(0));
                    t.completion_tokens = t.completion_tokens.saturating_add(u.completion_tokens.unwrap_or(0));
                }
            }
            _ => {}
        }
    }
    h.recorded = t;
    h
}

/// How one strategy is replayed for the page.
struct Replay<'a> {
    est: &'a dyn Estimator,
    cap: usize,
    copts: cache::Options,
    /// The turns whose views the turn browser keeps.
    shown: std::ops::RangeInclusive<usize>,
}

impl Replay<'_> {
    /// The strategy's figures; its views (of the `shown` turns) go to `view`, in turn order.
    fn run(
        &self,
        journal: &Journal,
        s: &Strategy,
        progress: &mut dyn FnMut(usize),
        view: &mut dyn FnMut(TurnView),
    ) -> StrategyData {
        // The figures are the cache simulation's (the same as `ctxj cache`); the same replay
        // hands each request to the turn browser, so every strategy is replayed once.
        let mut browser = Browser::default();
        let (est, cap) = (self.est, self.cap);
        let sim = cache::simulate_observed(
            journal,
            s,
            est,
            self.copts.clone(),
            |d, _| progress(d),
            |req| {
                let shown = self.shown.contains(&req.turn);
                let v = browser.step(req, est, cap, shown);
                if shown {
                    view(v);
                }
            },
        );
        figures(s, sim, Vec::new())
    }
}

/// A strategy's page data from its simulation and its turn browser's views.
fn figures(s: &Strategy, sim: cache::Simulation, views: Vec<TurnView>) -> StrategyData {
    let mut cumulative = Some(0.0);
    let turns: Vec<TurnFigures> = sim
        .turns
        .iter()
        .map(|t| {
            // The turn's cost includes the compaction summarizer's requests before it.
            let cost = t.cost.map(|c| c + t.summarizer.as_ref().and_then(|s| s.cost).unwrap_or(0.0));
            cumulative = match (cumulative, cost) {
                (Some(c), Some(x)) => Some(c + x),
                _ => None,
            };
            TurnFigures {
                turn: t.turn,
                prompt_tokens: t.prompt,
                cached_tokens: Some(t.cached),
                cost,
                cumulative_cost: cumulative,
                hit_rate: Some(if t.prompt == 0 { 0.0 } else { t.cached as f64 / t.prompt as f64 }),
            }
        })
        .collect();
    let sum = &sim.summary;
    let row = ComparisonRow {
        strategy: s.name.clone(),
        turns: sum.turns,
        peak_prompt: sum.peak_prompt,
        total_prompt: sum.prompt,
        new_input: Some(sum.new),
        cached_input: Some(sum.cached),
        hit_rate: Some(sum.hit_rate),
        cost: sum.cost,
        cost_vs_baseline: None,
        cache_breaks: Some(sum.breaks),
    };
    let breaks = sim.breaks.iter().take(BREAKS_SHOWN).cloned().collect();
    StrategyData { name: s.name.clone(), turns, row, breaks, views }
}

/// The journal's cleanup decisions with the audit's verdicts and savings, and the audit's
/// findings that concern no decision (e.g. a turn that left no headroom).
/// The audit counts with the page's estimator, as `ctxj audit` counts with the one of its
/// `--encoding`, so the page and the command never disagree.
fn audited(
    journal: &Journal,
    est: &dyn Estimator,
    progress: &mut dyn FnMut(usize, usize),
) -> (Vec<Decision>, Vec<FindingView>) {
    let report = check::audit_progress(journal, est, progress);
    let index_of: HashMap<u64, usize> = journal.records.iter().enumerate().map(|(i, r)| (r.rev, i)).collect();
    let mut attached = vec![false; report.findings.len()];
    let decisions = report
        .decisions
        .iter()
        .map(|d| {
            let turn = index_of
                .get(&d.rev)
                .map(|&i| journal.turns.partition_point(|&t| t <= i))
                .filter(|&k| k < journal.turns.len())
                .map(|k| k + 1);
            let fs: Vec<&Finding> = d.findings.iter().filter_map(|&i| report.findings.get(i)).collect();
            for &i in &d.findings {
                if let Some(a) = attached.get_mut(i) {
                    *a = true;
                }
            }
            Decision {
                rev: d.rev,
                turn,
                kind: d.kind.to_string(),
                what: d.what.clone(),
                verdict: Some(verdict(&fs)),
                saved_tokens: d.saved,
            }
        })
        .collect();
    let others = report
        .findings
        .iter()
        .zip(attached)
        .filter(|(_, a)| !a)
        .map(|(f, _)| FindingView {
            rev: f.rev,
            level: f.severity.as_str().to_string(),
            rule: f.rule.to_string(),
            message: f.message.clone(),
        })
        .collect();
    (decisions, others)
}

/// A decision's verdict: `ok` when the audit found nothing (or only informational facts), else
/// the most severe finding's level, with every finding as `rule: message`.
fn verdict(fs: &[&Finding]) -> Verdict {
    let worst = fs.iter().map(|f| f.severity).min();
    let level = match worst {
        Some(Severity::Error) => "error",
        Some(Severity::Warning) => "warning",
        _ => "ok",
    };
    let text = if fs.is_empty() {
        "no finding".to_string()
    } else {
        fs.iter().map(|f| format!("{}: {}", f.rule, f.message)).collect::<Vec<_>>().join("; ")
    };
    Verdict { level: level.to_string(), text }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy;

    /// Issue 15: each strategy is replayed once, the cache simulation handing each request to the
    /// turn browser. Its views equal a separate replay's, turn by turn, and the streaming build
    /// hands the same views to its sink instead of keeping them.
    #[test]
    fn one_replay_gives_the_views_of_a_separate_replay() {
        let text = include_str!("../../../../sample-journals/long-elision/journal.jsonl");
        let j = crate::journal::parse_bytes(std::path::Path::new("j.jsonl"), text.as_bytes(), Default::default())
            .expect("valid journal");
        let strategies = [strategy::parse("recorded").unwrap(), strategy::parse("truncate-500").unwrap()];
        let d = build(&j, &strategies, &Options::default()).unwrap();
        let est = crate::tokens::estimator_for(&j, None).unwrap();
        for (s, data) in strategies.iter().zip(&d.strategies) {
            let mut b = Browser::default();
            let mut views = Vec::new();
            strategy::replay(&j, s, &est, |r| views.push(b.step(r, &est, DEFAULT_TEXT_CAP, true)));
            assert_eq!(data.views.len(), j.turns.len());
            assert_eq!(data.views, views, "{}", s.name);
        }
        let mut got: Vec<(usize, TurnView)> = Vec::new();
        let opts = Options { turns: TurnRange::Last(5), ..Options::default() };
        let streamed =
            build_streaming(&j, &strategies, &opts, &mut |_, _| {}, Some(&mut |i, v| got.push((i, v)))).unwrap();
        assert!(streamed.strategies.iter().all(|s| s.views.is_empty()));
        let n = j.turns.len();
        let want: Vec<(usize, TurnView)> =
            (0..2).flat_map(|i| d.strategies[i].views[n - 5..].iter().map(move |v| (i, v.clone()))).collect();
        assert_eq!(got, want);
        assert_eq!(streamed.browser_turns, n - 4..=n);
        assert_eq!(streamed.strategies[1].turns, d.strategies[1].turns, "the figures cover every turn");
    }
}
