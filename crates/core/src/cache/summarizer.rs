//! The summarizer's own requests in a compaction replay (issue 17): each pass of `compact-at-…`
//! or `tiered` asked a model for the summary — the system block and the summarized blocks plus
//! the instruction in, the summary out. Without it a compaction looks cheaper than it is.
//!
//! Each call is served from a copy of the cache as the previous request left it (the summarizer
//! reads the prefix the conversation cached, as Claude Code's compaction call is observed to), so
//! it does not disturb the simulation of the conversation's own requests, and priced with the
//! session's price.

use crate::cache::model::{block_key, Request, Simulator};
use crate::cache::prices::Price;
use crate::projection::Block;
use crate::strategy::compact::SummarizerCall;
use crate::strategy::UnrecordedPrefix;
use crate::tokens::Estimator;

/// The summarizer requests that ran before one turn, summed.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct SummarizerFigures {
    /// How many summarizer requests (compaction passes).
    pub calls: usize,
    /// Blocks they summarized.
    pub summarized: usize,
    pub prompt: u64,
    pub cached: u64,
    pub new: u64,
    pub write: u64,
    /// The summary's tokens (estimated: the template's or the command's text).
    pub output: u64,
    pub cost: Option<f64>,
}

/// The summarizer figures of `calls` against `sim` (the cache after the previous request), or
/// `None` when no pass ran. `prefix`: an imported session's unrecorded system prompt, whose
/// block leads every request and whose slope scales the counted tokens.
pub fn figures(
    sim: &Simulator,
    calls: &[SummarizerCall],
    est: &dyn Estimator,
    prefix: Option<UnrecordedPrefix>,
    key: u128,
    price: Option<Price>,
    time: Option<i64>,
) -> Option<SummarizerFigures> {
    if calls.is_empty() {
        return None;
    }
    let scale = |n: u64| prefix.map_or(n, |p| crate::tokens::calibrate::apply(n, p.slope));
    let mut f = SummarizerFigures { calls: calls.len(), cost: price.map(|_| 0.0), ..Default::default() };
    for c in calls {
        let mut keys: Vec<u128> = prefix.iter().map(|_| key).collect();
        let mut tokens: Vec<u64> = prefix.iter().map(|p| p.tokens).collect();
        for b in &c.input {
            keys.push(block_key(b));
            tokens.push(scale(est.block(b)));
        }
        let system = usize::from(prefix.is_some()) + usize::from(matches!(c.input.first(), Some(Block::System { .. })));
        let o = sim.clone().step(&Request::new(keys, tokens, system, time));
        let output = scale(est.block(&c.summary));
        let new = o.new_tokens();
        f.summarized += c.summarized();
        f.prompt = f.prompt.saturating_add(o.prompt);
        f.cached = f.cached.saturating_add(o.cached);
        f.new = f.new.saturating_add(new);
        f.write = f.write.saturating_add(o.write);
        f.output = f.output.saturating_add(output);
        if let (Some(sum), Some(p)) = (f.cost.as_mut(), price) {
            *sum += p.cost(new, o.write, o.cached, output);
        }
    }
    Some(f)
}

/// The summarizer figures of a whole replay.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct SummarizerTotals {
    pub calls: usize,
    pub prompt: u64,
    pub output: u64,
    pub cost: Option<f64>,
}

/// Sums the per-turn figures; `priced` says whether the replay has a price.
pub fn totals<'a>(per_turn: impl Iterator<Item = &'a SummarizerFigures>, priced: bool) -> SummarizerTotals {
    let mut t = SummarizerTotals { cost: priced.then_some(0.0), ..Default::default() };
    for f in per_turn {
        t.calls += f.calls;
        t.prompt = t.prompt.saturating_add(f.prompt);
        t.output = t.output.saturating_add(f.output);
        if let (Some(sum), Some(c)) = (t.cost.as_mut(), f.cost) {
            *sum += c;
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use crate::cache::model::CacheModel;
    use crate::cache::{simulate, Options};
    use crate::strategy;
    use crate::tokens::CharEstimator;

    /// Issue 34: a replay split an imported session's unrecorded prefix at its first call's cache
    /// read into a "warm" block and the rest, while the summarizer's request of a compaction
    /// replay started with one whole prefix block under another key: it never read the prefix
    /// the conversation kept cached, and each compaction was priced as if the system prompt and
    /// tools had been sent cold.
    #[test]
    fn regression_summarizer_never_read_the_prefix_after_a_warm_first_call() {
        let mut lines = vec![
            r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","model":"gpt-5","harness":"codex"}"#
                .to_string(),
        ];
        for i in 0..10u64 {
            let ts = format!("2026-11-29T10:00:{:02}Z", 2 * i + 1);
            let text = "word ".repeat(40);
            lines.push(format!(
                r#"{{"rev":{},"ts":"{ts}","kind":"user","id":"u{i}","text":"{text}"}}"#,
                lines.len() + 1
            ));
            // A 20,000-token prefix the first call already read (other sessions kept it warm).
            let (p, r) = (20_000 + 60 * (i + 1), if i == 0 { 20_000 } else { 20_000 + 60 * i });
            lines.push(format!(
                r#"{{"rev":{},"ts":"{ts}","kind":"assistant","id":"a{i}","text":"ok","usage":{{"prompt_tokens":{p},"cached_tokens":{r},"completion_tokens":5}}}}"#,
                lines.len() + 1
            ));
        }
        let j = strategy::testkit::from_lines(&lines.iter().map(String::as_str).collect::<Vec<_>>());
        let prefix = strategy::unrecorded_prefix(&j, &CharEstimator).expect("an unrecorded prefix").tokens;
        let s = strategy::parse("compact-at-300").unwrap();
        let sim = simulate(&j, &s, &CharEstimator, Options::plain(CacheModel::OpenAi, None), |_, _| {});
        let calls: Vec<_> = sim.turns.iter().filter_map(|t| t.summarizer.as_ref()).collect();
        assert!(!calls.is_empty(), "the replay compacts");
        for f in calls {
            assert!(f.cached + 128 > prefix, "the summarizer read {} of a {prefix}-token cached prefix", f.cached);
        }
    }
}
