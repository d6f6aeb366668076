//! Builds a [`ReportData`] from a journal and a list of strategies.
//!
//! Every strategy is replayed with [`crate::strategy::replay`]; each request is measured with the
//! token [`Estimator`], compared block by block with the previous request of the same strategy
//! (for the turn browser), and summed into the comparison row. The journal's own cleanup
//! decisions are measured on the recorded projection: the estimate just before the record minus
//! the estimate just after it.
//!
//! Sections whose data this build cannot compute (the prompt-cache simulation and prices, the
//! audit's verdicts) are marked [`Availability::Missing`] with the reason; the builder never
//! invents them.

use std::collections::HashMap;

use crate::journal::{Body, Journal};
use crate::projection::{Block, Replayer};
use crate::render::text::chars;
use crate::strategy::{self, Strategy};
use crate::tokens::{request_tokens, CharEstimator, Estimator};

use super::{
    Availability, BlockView, Change, ComparisonRow, Decision, DiffSummary, Header, RecordedTotals, ReportData,
    StrategyData, TurnFigures, TurnView, DEFAULT_TEXT_CAP,
};

/// What to build.
#[derive(Debug, Clone)]
pub struct Options {
    /// Characters of block text inlined per block (at least 1).
    pub text_cap: usize,
    /// The `--cache` model asked for (`None`: the default for the session's model).
    pub cache: Option<String>,
    /// Remarks to show on the page (e.g. default strategies this build does not know).
    pub notes: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options { text_cap: DEFAULT_TEXT_CAP, cache: None, notes: Vec::new() }
    }
}

/// Why a report cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("no strategies to report")]
    NoStrategies,
    #[error("unknown cache model {0:?}: expected ideal, openai, anthropic or gemini")]
    UnknownCache(String),
}

/// The cache models of spec `strategies.md` §4.
pub const CACHE_MODELS: [&str; 4] = ["ideal", "openai", "anthropic", "gemini"];

/// Replays `strategies` over `journal` and gathers everything the report shows.
pub fn build(journal: &Journal, strategies: &[Strategy], opts: &Options) -> Result<ReportData, BuildError> {
    if strategies.is_empty() {
        return Err(BuildError::NoStrategies);
    }
    if let Some(c) = &opts.cache {
        if !CACHE_MODELS.contains(&c.as_str()) {
            return Err(BuildError::UnknownCache(c.clone()));
        }
    }
    let est = CharEstimator;
    let cap = opts.text_cap.max(1);
    let mut notes = opts.notes.clone();
    notes.push(
        "Token counts are a stand-in estimate (one token per four characters): the tokenizer is not in this build."
            .to_string(),
    );

    let mut data: Vec<StrategyData> = strategies.iter().map(|s| replay_one(journal, s, &est, cap)).collect();
    // Cost relative to baseline, once costs exist.
    let base_cost = data.iter().find(|s| s.name == "baseline").and_then(|s| s.row.cost);
    for s in &mut data {
        s.row.cost_vs_baseline = match (s.row.cost, base_cost) {
            (Some(c), Some(b)) if b > 0.0 => Some(c / b),
            _ => None,
        };
    }

    Ok(ReportData {
        header: header(journal),
        estimator: "chars/4 stand-in".to_string(),
        cache_model: Availability::Missing("the prompt-cache simulation is not available in this build".to_string()),
        prices: Availability::Missing("prices are not available in this build".to_string()),
        strategies: data,
        decisions: decisions(journal, &est),
        audit: Availability::Missing("the audit is not available in this build".to_string()),
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
                    t.prompt_tokens += u.prompt_tokens.unwrap_or(0);
                    t.cached_tokens += u.cached_tokens.unwrap_or(0);
                    t.completion_tokens += u.completion_tokens.unwrap_or(0);
                }
            }
            _ => {}
        }
    }
    h.recorded = t;
    h
}

/// Identity of a block across requests: type and id; system and summary blocks by position
/// among their type.
fn identity(b: &Block, nth_of_type: usize) -> (&'static str, String) {
    match b.id() {
        Some(id) => (b.type_name(), id.to_string()),
        None => (b.type_name(), format!("#{nth_of_type}")),
    }
}

fn tool_of(b: &Block) -> Option<String> {
    match b {
        Block::Result { tool, .. } => Some(tool.clone()),
        Block::Assistant { calls, .. } if !calls.is_empty() => {
            Some(calls.iter().map(|c| c.tool.as_str()).collect::<Vec<_>>().join(", "))
        }
        _ => None,
    }
}

/// The text a block shows in the browser: its text, plus its calls for an assistant block.
fn display_text(b: &Block) -> String {
    match b {
        Block::Assistant { text, calls, .. } if !calls.is_empty() => {
            let mut s = text.to_string();
            for c in calls {
                if !s.is_empty() {
                    s.push('\n');
                }
                s.push_str(&format!("→ {} {} {}", c.tool, c.id, crate::projection::block::canonical_value(&c.args)));
            }
            s
        }
        _ => b.text().to_string(),
    }
}

/// The first `cap` characters of `s`, and the full length when it was cut.
pub fn cap_text(s: &str, cap: usize) -> (String, Option<usize>) {
    match s.char_indices().nth(cap) {
        None => (s.to_string(), None),
        Some((i, _)) => (s[..i].to_string(), Some(chars(s))),
    }
}

struct Seen {
    block: Block,
    tokens: u64,
}

fn replay_one(journal: &Journal, s: &Strategy, est: &dyn Estimator, cap: usize) -> StrategyData {
    let mut turns = Vec::new();
    let mut views = Vec::new();
    let mut prev: HashMap<(&'static str, String), Seen> = HashMap::new();
    let mut prev_order: Vec<(&'static str, String)> = Vec::new();
    let mut prev_blocks: Vec<Block> = Vec::new();
    let recorded = s.name == "recorded";
    strategy::replay(journal, s, est, |req| {
        let mut now: HashMap<(&'static str, String), Seen> = HashMap::with_capacity(req.blocks.len());
        let mut order = Vec::with_capacity(req.blocks.len());
        let mut blocks = Vec::with_capacity(req.blocks.len());
        let mut diff = DiffSummary::default();
        let mut nth: HashMap<&'static str, usize> = HashMap::new();
        for b in req.blocks {
            let n = nth.entry(b.type_name()).or_insert(0);
            let key = identity(b, *n);
            *n += 1;
            let (change, tokens, previous_chars) = match prev.get(&key) {
                Some(p) if p.block == *b => (Change::Same, p.tokens, None),
                Some(p) => (Change::Changed, est.block(b), Some(p.block.chars())),
                None => (Change::Added, est.block(b), None),
            };
            match change {
                Change::Same => diff.same += 1,
                Change::Changed => diff.changed += 1,
                Change::Added => diff.added += 1,
            }
            let (text, capped_from) = if change == Change::Same {
                (None, None)
            } else {
                let (t, c) = cap_text(&display_text(b), cap);
                (Some(t), c)
            };
            blocks.push(BlockView {
                kind: b.type_name().to_string(),
                id: b.id().map(str::to_string),
                tool: tool_of(b),
                chars: b.chars(),
                tokens,
                change,
                previous_chars,
                origin: None,
                text,
                capped_from,
            });
            order.push(key.clone());
            now.insert(key, Seen { block: b.clone(), tokens });
        }
        for k in &prev_order {
            if !now.contains_key(k) {
                let p = &prev[k];
                diff.removed.push((k.0.to_string(), p.block.id().map(str::to_string), p.block.chars()));
            }
        }
        diff.extends_previous =
            req.blocks.len() >= prev_blocks.len() && req.blocks[..prev_blocks.len()] == prev_blocks[..];
        let prompt_tokens = 3 + blocks.iter().map(|b| b.tokens).sum::<u64>();
        debug_assert_eq!(prompt_tokens, request_tokens(est, req.blocks.iter()));
        let usage = match &journal.records[req.record].body {
            Body::Assistant(a) if recorded => a.usage.clone(),
            _ => None,
        };
        turns.push(TurnFigures {
            turn: req.turn,
            prompt_tokens,
            cached_tokens: None,
            cost: None,
            cumulative_cost: None,
            hit_rate: None,
            provider_prompt: usage.as_ref().and_then(|u| u.prompt_tokens),
            provider_cached: usage.as_ref().and_then(|u| u.cached_tokens),
        });
        views.push(TurnView { turn: req.turn, blocks, diff });
        prev = now;
        prev_order = order;
        prev_blocks = req.blocks.to_vec();
    });
    let row = ComparisonRow {
        strategy: s.name.clone(),
        turns: turns.len(),
        peak_prompt: turns.iter().map(|t| t.prompt_tokens).max().unwrap_or(0),
        total_prompt: turns.iter().map(|t| t.prompt_tokens).sum(),
        new_input: None,
        cached_input: None,
        hit_rate: None,
        cost: None,
        cost_vs_baseline: None,
        cache_breaks: None,
    };
    StrategyData { name: s.name.clone(), turns, row, views }
}

/// The journal's cleanup decisions, each measured on the recorded projection.
fn decisions(journal: &Journal, est: &dyn Estimator) -> Vec<Decision> {
    let mut out = Vec::new();
    let mut r = Replayer::new(journal);
    for (i, rec) in journal.records.iter().enumerate() {
        let kind = match &rec.body {
            Body::Elide(_) | Body::Clear(_) | Body::Mirror(_) | Body::Compact(_) => rec.kind().to_string(),
            _ => {
                r.step();
                continue;
            }
        };
        let before = request_tokens(est, r.projection().blocks()) as i64;
        r.step();
        let after = request_tokens(est, r.projection().blocks()) as i64;
        let turn = journal.turns.iter().position(|&t| t > i).map(|k| k + 1);
        out.push(Decision {
            rev: rec.rev,
            turn,
            kind,
            what: describe(&rec.body),
            verdict: None,
            saved_tokens: before - after,
        });
    }
    out
}

fn list(ids: &[String]) -> String {
    const SHOWN: usize = 8;
    let mut s = ids.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
    if ids.len() > SHOWN {
        s.push_str(&format!(", … ({} more)", ids.len() - SHOWN));
    }
    s
}

fn describe(b: &Body) -> String {
    match b {
        Body::Elide(e) => {
            let mut s = format!("elided {} block(s): {}", e.calls.len(), list(&e.calls));
            if let (Some(b), Some(a)) = (e.estimate_before, e.estimate_after) {
                s.push_str(&format!("; harness estimate {b} → {a}"));
            }
            if let (Some(b), Some(t)) = (e.budget, e.target) {
                s.push_str(&format!(" (budget {b}, target {t})"));
            }
            s
        }
        Body::Clear(c) => {
            if c.cleared.is_empty() {
                format!("cleared nothing{}", c.message.as_ref().map(|m| format!(": {m}")).unwrap_or_default())
            } else {
                format!("cleared {} result(s): {}", c.cleared.len(), list(&c.cleared))
            }
        }
        Body::Mirror(m) => {
            let mut s = format!("mirror_rev {} from base_rev {}: {}", m.mirror_rev, m.base_rev, m.status);
            if let Some(r) = &m.reason {
                s.push_str(&format!(" ({r})"));
            }
            s
        }
        Body::Compact(c) => {
            let mut s = format!("compaction ({})", c.trigger.as_deref().unwrap_or("unspecified trigger"));
            match (&c.first_kept, &c.kept) {
                (Some(f), _) => s.push_str(&format!(", keeps from rev {f}")),
                (None, Some(k)) => s.push_str(&format!(", keeps {} block(s)", k.len())),
                _ => {}
            }
            if c.chains() {
                s.push_str(", chained summary");
            }
            s.push_str(&format!(", summary of {} chars", chars(&c.summary)));
            s
        }
        other => other.kind().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_text_counts_characters_not_bytes() {
        assert_eq!(cap_text("héllo", 10), ("héllo".to_string(), None));
        assert_eq!(cap_text("héllo", 2), ("hé".to_string(), Some(5)));
        assert_eq!(cap_text("ab", 2), ("ab".to_string(), None));
    }

    #[test]
    fn list_shortens_long_id_lists() {
        let ids: Vec<String> = (0..10).map(|i| format!("c{i}")).collect();
        assert_eq!(list(&ids), "c0, c1, c2, c3, c4, c5, c6, c7, … (2 more)");
    }
}
