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

    /// Feeds this turn to `cal`: its carried reasoning, then its observation.
    pub fn feed(&self, cal: &mut Calibrator) {
        cal.carry(self.turn, self.reasoning);
        cal.observe(self.turn, self.observed(), self.raw);
    }
}

/// The raw estimate of every recorded request, with the provider's usage figures, in turn order.
/// One pass over the journal: each turn counts only the blocks after the ones it repeats unchanged
/// from the previous turn ([`super::TurnRequest::unchanged`]), so the cost is linear in the
/// journal, not in turns × context.
pub fn recorded_turns(journal: &Journal, est: &dyn Estimator) -> Vec<RecordedTurn> {
    let recorded = super::Strategy::recorded();
    let mut out = Vec::with_capacity(journal.turns.len());
    let mut per_block: Vec<u64> = Vec::new();
    let mut sum = 0u64;
    let carried = super::reasoning::Carried::of(journal);
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
        out.push(RecordedTurn {
            turn: r.turn,
            record: r.record,
            raw: FRAMING + sum,
            prompt_tokens: usage.prompt_tokens,
            cached_tokens: usage.cached_tokens,
            completion_tokens: usage.completion_tokens,
            server_tool_calls: usage.server_tool_calls.unwrap_or(0),
            reasoning: carried.as_ref().map_or(0, |c| c.in_request(r.record, r.blocks)),
        });
    });
    out
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
    /// Of `tokens`: what the session's first call already read from the provider's cache
    /// (`cached_tokens` of turn 1, at most `tokens`) — a cache warmed before the session began
    /// (Claude Code shares its system prompt and tools across sessions; a subagent or compaction
    /// call reads its parent's). Replays start with this part warm.
    pub warm: u64,
    /// What that first call read in all (`cached_tokens` of turn 1, not capped at `tokens`): more
    /// than the prefix when earlier requests had also sent the session's first messages (a Codex
    /// rollout's instructions and environment context, the same in every session of a folder; a
    /// compaction call's replayed conversation). Replays start with the first request's leading
    /// blocks within it warm too (`cache::replay`).
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
    // The carried reasoning is no part of the prefix: every replay carries it itself.
    let residual = |t: &RecordedTurn| Some(t.observed()?.saturating_sub(t.reasoning) as f64 - slope * t.raw as f64);
    let residuals: Vec<f64> = turns.iter().filter_map(residual).collect();
    let mean = |v: &[f64]| crate::tokens::calibrate::apply(1, v.iter().sum::<f64>() / v.len().max(1) as f64);
    let tokens = mean(&residuals);
    let first_read = turns.first().filter(|t| t.turn == 1).and_then(|t| t.cached_tokens).unwrap_or(0);
    let warm = first_read.min(tokens);
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
    Some((UnrecordedPrefix { tokens, slope, warm, first_read }, segments))
}
