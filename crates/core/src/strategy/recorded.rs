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
        c.observe(t.turn, t.prompt_tokens, t.raw);
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
    if !prefix_unrecorded(journal) {
        return None;
    }
    let turns = recorded_turns(journal, est);
    let mut cal = new_calibrator(journal);
    for t in &turns {
        cal.observe(t.turn, t.prompt_tokens, t.raw);
    }
    let slope = cal.last_multiplier();
    let residuals: Vec<f64> =
        turns.iter().filter_map(|t| Some(t.prompt_tokens? as f64 - slope * t.raw as f64)).collect();
    let mean = residuals.iter().sum::<f64>() / residuals.len().max(1) as f64;
    let tokens = crate::tokens::calibrate::apply(1, mean);
    let first_read = turns.first().filter(|t| t.turn == 1).and_then(|t| t.cached_tokens).unwrap_or(0);
    let warm = first_read.min(tokens);
    (!residuals.is_empty()).then_some(UnrecordedPrefix { tokens, slope, warm, first_read })
}
