//! The recorded requests' raw estimates and the [`Calibrator`] they feed (`strategies.md` §3).
//!
//! This needs a replay of the recorded projection, so it lives here, above `tokens`, which only
//! counts and calibrates.

use crate::journal::{Body, Journal};
use crate::tokens::{Calibrator, Estimator, FRAMING};

/// Raw estimate and provider figures of one recorded turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordedTurn {
    /// Turn number, from 1.
    pub turn: usize,
    /// Index of the turn's `assistant` record in `journal.records`.
    pub record: usize,
    /// Raw estimate of the recorded request (spec §3 framing).
    pub raw: u64,
    /// `usage.prompt_tokens` of the turn, when recorded.
    pub prompt_tokens: Option<u64>,
    /// `usage.cached_tokens` of the turn, when recorded.
    pub cached_tokens: Option<u64>,
    /// `usage.completion_tokens` of the turn, when recorded.
    pub completion_tokens: Option<u64>,
    /// `usage.server_tool_calls`: the call ran hosted tools and was sampled in several steps, so
    /// `prompt_tokens` sums their inputs ([`RecordedTurn::observed`]).
    pub server_tool_calls: u64,
    /// Modelled thinking tokens of earlier responses this request carried
    /// ([`super::thinking`]): in provider tokens, part of `prompt_tokens`, none of `raw`.
    pub thinking: u64,
    /// `thinking` is of a model that keeps every turn's thinking, which the replays carry too
    /// (`cache::replay`); a model that keeps only the current loop's is not replayed with it.
    pub thinking_replayed: bool,
    /// The call went to another model than the last call with `prompt_tokens` before it
    /// ([`Calibrator::switched`]).
    pub switched: bool,
    /// The earlier responses' reasoning this request sends back and the provider counts
    /// (`usage.reasoning_tokens`, [`super::reasoning`]), in provider tokens; 0 for most journals.
    pub reasoning: u64,
}

impl RecordedTurn {
    /// `prompt_tokens` as a measure of this request: `None` when the call ran hosted tools
    /// (`docs/tokens-and-cache.md`, "Server-side sampling": the provider billed each sampling
    /// step's input and the tools' results, which no request of the journal holds) or billed
    /// nothing (0: an aborted request), so the calibration neither learns from it nor scores its
    /// estimate against it.
    pub fn observed(&self) -> Option<u64> {
        self.prompt_tokens.filter(|&p| p > 0 && self.server_tool_calls == 0)
    }

    /// What the calibration learns from: [`RecordedTurn::observed`] less the carried thinking
    /// ([`RecordedTurn::thinking`]), the part of the request the journal holds or the fit's prefix
    /// stands for. An estimate of this request adds `thinking` back.
    pub fn sample(&self) -> Option<u64> {
        self.observed().map(|p| p.saturating_sub(self.thinking))
    }

    /// Feeds this turn to `cal`: a model switch, its carried reasoning ([`Calibrator::carry`]),
    /// then [`RecordedTurn::sample`].
    pub fn feed(&self, cal: &mut Calibrator) {
        if self.switched {
            cal.switched();
        }
        cal.carry(self.turn, self.reasoning);
        cal.observe(self.turn, self.sample(), self.raw);
    }
}

/// The raw estimate of every recorded request, with the provider's usage figures, in turn order.
/// One pass over the journal: each turn counts only the blocks after the ones it repeats unchanged
/// from the previous turn ([`super::TurnRequest::unchanged`]), so the cost is linear in the
/// journal, not in turns × context.
pub fn recorded_turns(journal: &Journal, est: &dyn Estimator) -> Vec<RecordedTurn> {
    recorded_with_thinking(journal, est).0
}

/// The modelled thinking tokens of each response that held unrecorded thinking blocks, by
/// assistant id, for the responses of a model that keeps every turn's thinking
/// ([`super::thinking::Keep::AllTurns`]): those stay part of the assistant message in every later
/// request, so every replay counts them with the block. Empty when the journal records none.
pub fn kept_thinking(journal: &Journal, est: &dyn Estimator) -> std::collections::HashMap<String, u64> {
    if !super::thinking::any(journal) {
        return Default::default();
    }
    let (_, sizes, kept) = recorded_with_thinking(journal, est);
    sizes.into_iter().filter(|(id, _)| kept.contains(id)).collect()
}

/// The modelled thinking tokens a request of `blocks` sent to `model` carries: every response
/// with unrecorded thinking among `blocks`, as `model` keeps them ([`super::thinking::carried`]).
/// 0 when the journal records none or `model` is not Claude.
pub fn thinking_carried(
    journal: &Journal,
    est: &dyn Estimator,
    blocks: &[crate::projection::Block],
    model: Option<&str>,
) -> u64 {
    match model.and_then(super::thinking::keep) {
        Some(keep) if super::thinking::any(journal) => {
            super::thinking::carried(blocks, keep, &recorded_with_thinking(journal, est).1)
        }
        _ => 0,
    }
}

/// [`recorded_turns`], the thinking size of each response with unrecorded thinking (by assistant
/// id) and the ids of those answered by a model that keeps every turn's thinking. The sizes need
/// the slope in force at each call, so a calibrator is fed along the way, as every caller feeds
/// theirs ([`RecordedTurn::sample`]).
fn recorded_with_thinking(
    journal: &Journal,
    est: &dyn Estimator,
) -> (Vec<RecordedTurn>, std::collections::HashMap<String, u64>, std::collections::HashSet<String>) {
    use super::thinking;
    let any_thinking = thinking::any(journal);
    let models = thinking::models(journal);
    let mut last_model: Option<&String> = None;
    let mut cal = new_calibrator(journal);
    let mut sizes = std::collections::HashMap::new();
    let mut kept = std::collections::HashSet::new();
    let recorded = super::Strategy::recorded();
    let mut out = Vec::with_capacity(journal.turns.len());
    let mut per_block: Vec<u64> = Vec::new();
    let mut sum = 0u64;
    let reasoning = super::reasoning::Carried::of(journal);
    super::replay(journal, &recorded, est, |r| {
        let keep = r.unchanged.min(per_block.len());
        sum -= per_block.drain(keep..).sum::<u64>();
        for b in &r.blocks[keep..] {
            let n = est.block(b);
            per_block.push(n);
            sum += n;
        }
        let usage = match &journal.records[r.record].body {
            Body::Assistant(a) => a.usage.clone(),
            _ => None,
        };
        let usage = usage.unwrap_or_default();
        let model = models.get(&r.record);
        let keep = model.and_then(|m| thinking::keep(m)).filter(|_| any_thinking);
        let carried = keep.map_or(0, |k| thinking::carried(r.blocks, k, &sizes));
        let t = RecordedTurn {
            turn: r.turn,
            record: r.record,
            raw: FRAMING + sum,
            prompt_tokens: usage.prompt_tokens,
            cached_tokens: usage.cached_tokens,
            completion_tokens: usage.completion_tokens,
            server_tool_calls: usage.server_tool_calls.unwrap_or(0),
            thinking: carried,
            reasoning: reasoning.as_ref().map_or(0, |c| c.in_request(r.record, r.blocks)),
            thinking_replayed: keep == Some(thinking::Keep::AllTurns),
            switched: false,
        };
        let switched = t.observed().is_some() && last_model.is_some() && model != last_model;
        if t.observed().is_some() {
            last_model = model;
        }
        let t = RecordedTurn { switched, ..t };
        if any_thinking {
            if let (Some(k), Some(out_tokens), Some(Body::Assistant(a))) =
                (keep, usage.completion_tokens, journal.records.get(r.record).map(|x| &x.body))
            {
                if usage.thinking_blocks.unwrap_or(0) > 0 {
                    // The output beyond its visible part, at the slope in force at this call.
                    let visible = est.block(&crate::projection::Block::assistant(a));
                    let visible = crate::tokens::calibrate::apply(visible, cal.multiplier(r.turn));
                    sizes.insert(a.id.clone(), out_tokens.saturating_sub(visible));
                    if k == thinking::Keep::AllTurns {
                        kept.insert(a.id.clone());
                    }
                }
            }
            t.feed(&mut cal);
        }
        out.push(t);
    });
    (out, sizes, kept)
}

/// Whether `journal` is an imported session whose format does not record the system prompt and
/// tool schemas: its `session` names an importer's harness (`claude-code`, `codex`, `pi`) and no
/// `system` record carries tools, or the harness records only some ([`crate::tokens::PARTIAL_TOOLS`]:
/// a Codex rollout's `dynamic_tools`). Such sessions are calibrated with the affine fit and carry the
/// inferred prefix; every other journal keeps the spec's ratio calibration, figures unchanged.
pub fn prefix_unrecorded(journal: &Journal) -> bool {
    let harness = journal.session().and_then(|s| s.harness.as_deref());
    let imported = harness.is_some_and(|h| crate::tokens::IMPORTED.contains(&h));
    let partial = harness.is_some_and(|h| crate::tokens::PARTIAL_TOOLS.contains(&h));
    imported && (partial || !journal.records.iter().any(|r| matches!(&r.body, Body::System(s) if s.tools.is_some())))
}

/// The calibrator for `journal`: [`Calibrator::affine`] when [`prefix_unrecorded`], else the
/// spec's ratio calibrator.
pub fn new_calibrator(journal: &Journal) -> Calibrator {
    if prefix_unrecorded(journal) {
        Calibrator::affine()
    } else {
        Calibrator::new()
    }
}

/// A [`Calibrator`] fed with every recorded turn of `journal` (its multiplier before turn t only
/// uses turns before t, so feeding all turns up front is safe).
pub fn calibrator_for(journal: &Journal, est: &dyn Estimator) -> Calibrator {
    let mut c = new_calibrator(journal);
    for t in recorded_turns(journal, est) {
        t.feed(&mut c);
    }
    c
}

/// The unrecorded system prompt + tool schemas of an imported session as every replay carries it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct UnrecordedPrefix {
    /// The prefix, in provider tokens: the mean over the turns with `prompt_tokens` of
    /// `prompt − slope × counted`, so the replayed recorded requests add up to what the provider
    /// counted (never negative).
    pub tokens: u64,
    /// The fit's final slope: provider tokens per counted token.
    pub slope: f64,
    /// What the session's first call read from the provider's cache (`cached_tokens` of turn 1,
    /// not capped at `tokens`): a cache warmed before the session began — the system prompt and
    /// tools (Claude Code shares them across sessions; a subagent or compaction call reads its
    /// parent's) and, when earlier requests had also sent the session's first messages, more than
    /// the prefix (a Codex rollout's instructions and environment context, the same in every
    /// session of a folder; a compaction call's replayed conversation). Every replay's first
    /// request reads this much (`cache::replay`, the one rule).
    pub first_read: u64,
}

/// The unrecorded prefix of `journal` when [`prefix_unrecorded`] and some turn records
/// `prompt_tokens`; else `None`. Every strategy's replay carries this same fixed prefix (the real
/// requests carried it too) and counts its blocks in provider tokens (× slope).
///
/// The prefix is the session-wide mean residual at the final slope rather than the fit's last
/// offset: where the provider counts more than the journal holds (a Codex rollout's encrypted
/// reasoning, a redacted compaction), the last turn's residual can be far from the others' —
/// 47.7k against a session-wide 21.4k on the shared long Codex rollout, +22 % on every replayed
/// request (`docs/tokens-and-cache.md`).
pub fn unrecorded_prefix(journal: &Journal, est: &dyn Estimator) -> Option<UnrecordedPrefix> {
    prefix_segments(journal, est).map(|(p, _)| p)
}

/// Whether a `notice` (a Codex developer message: the permissions and environment context Codex
/// records again when a process resumes the session, or changed settings) or a `system` record
/// lies between turn `turn`'s call and the last observed call before it — the agent re-sent its
/// instructions there, and with them a tool list it builds per process — or the two calls went to
/// different models (a `model` record between them, another assistant `model`): another
/// tokenizer counts the instructions and tools, and another provider may wrap them differently.
fn instructions_before(journal: &Journal, turns: &[RecordedTurn], turn: usize) -> bool {
    let Some(at) = turns.iter().position(|t| t.turn == turn) else { return false };
    let from = turns[..at].iter().rev().find(|t| t.observed().is_some()).map_or(0, |t| t.record);
    let to = turns[at].record;
    let model = |i: usize| match journal.records.get(i).map(|r| &r.body) {
        Some(Body::Assistant(a)) => a.model.clone(),
        _ => None,
    };
    model(from) != model(to)
        || (journal.records.get(from..to).unwrap_or_default())
            .iter()
            .any(|r| matches!(r.body, Body::Notice(_) | Body::System(_) | Body::Model(_)))
}

/// [`unrecorded_prefix`] and the prefix of each of its segments, `(first turn, tokens)` in turn
/// order, the first starting at turn 1. A new segment starts where the calibration saw what the
/// provider counts beyond the journal change ([`Calibrator::prefix_changes`]) after the agent
/// re-sent its instructions ([`instructions_before`]: Codex builds its instructions and tool list
/// per process — a resumed session, MCP servers connected or not — and the format records
/// neither); each segment's prefix is the mean residual of its
/// own observed turns at the session's final slope, so a replay carries the prefix the provider
/// counted then, in every strategy. One segment: `[(1, tokens)]`, the session-wide mean.
pub fn prefix_segments(journal: &Journal, est: &dyn Estimator) -> Option<(UnrecordedPrefix, Vec<(usize, u64)>)> {
    if !prefix_unrecorded(journal) {
        return None;
    }
    let turns = recorded_turns(journal, est);
    let mut cal = new_calibrator(journal);
    for t in &turns {
        t.feed(&mut cal);
    }
    let slope = cal.last_multiplier();
    // What the replays carry beyond the prefix and the blocks: the thinking of the models that
    // keep every turn's, and the carried reasoning; the rest of the provider's count is the
    // prefix's, on average.
    let replayed = |t: &RecordedTurn| if t.thinking_replayed { t.thinking } else { 0 };
    let residual = |t: &RecordedTurn| {
        Some(t.observed()?.saturating_sub(replayed(t)).saturating_sub(t.reasoning) as f64 - slope * t.raw as f64)
    };
    let residuals: Vec<f64> = turns.iter().filter_map(residual).collect();
    let mean = |v: &[f64]| crate::tokens::calibrate::apply(1, v.iter().sum::<f64>() / v.len().max(1) as f64);
    let tokens = mean(&residuals);
    let first_read = turns.first().filter(|t| t.turn == 1).and_then(|t| t.cached_tokens).unwrap_or(0);
    if residuals.is_empty() {
        return None;
    }
    // A rewrite after a plain input is the conversation's (a new task: OpenAI stops counting the
    // earlier tasks' reasoning); one after re-sent or changed instructions is the prefix's.
    let changes: Vec<usize> =
        (cal.prefix_changes().into_iter()).filter(|&turn| instructions_before(journal, &turns, turn)).collect();
    let segments = if changes.is_empty() {
        vec![(1, tokens)]
    } else {
        let starts: Vec<usize> = std::iter::once(1).chain(changes).collect();
        let seg = |turn: usize| starts.partition_point(|&s| s <= turn) - 1;
        let mut sums = vec![Vec::new(); starts.len()];
        turns.iter().for_each(|t| sums[seg(t.turn)].extend(residual(t)));
        starts.iter().zip(&sums).map(|(&s, v)| (s, if v.is_empty() { tokens } else { mean(v) })).collect()
    };
    Some((UnrecordedPrefix { tokens, slope, first_read }, segments))
}
