//! Reasoning the harness sends back and the provider counts as input (`usage.reasoning_tokens`).
//!
//! Codex keeps every `reasoning` item of a response in its history (`ConversationHistory` /
//! `ContextManager::record_items`: a reasoning item is an API message) and sends the whole history
//! with every request (`store: false`, `include: ["reasoning.encrypted_content"]`). What the
//! provider counts of those items is OpenAI's rule for its reasoning models: the reasoning of the
//! turn in progress is kept in context and counted, that of earlier turns is dropped (OpenAI's
//! reasoning guide: pass back every reasoning item since the last user message when answering a
//! function call; Codex's own context estimate `get_total_token_usage` adds back the reasoning
//! items before the last user message when the server says it did not count them). A turn ends
//! with a final answer: the harmony format of OpenAI's reasoning models drops previous
//! chain-of-thought "if the responses by the assistant ended in a message to the final channel",
//! and keeps it while the analysis is ongoing (`openai-harmony`, `auto_drop_analysis`,
//! `last_assistant_is_final`). So a user message that steers a turn still in progress (Codex
//! sends it without a new task), or follows an interrupted one, drops nothing; a new task after a
//! final answer drops everything before it. In journal terms: the request counts the reasoning of
//! the responses after its last final answer — the last `assistant` block without tool calls whose
//! response completed (it has usage: Codex writes a response's `token_count` when it completes; a
//! reply the user interrupted mid-stream is recorded without one and ended no turn).
//! From GPT-5.6 on the Responses API has `reasoning.context` (`current_turn` / `all_turns`) and
//! Codex runs those models with `all_turns`: earlier turns' reasoning stays in context. A
//! compaction replaces the history (Codex keeps the user messages and a summary, no reasoning).
//!
//! Dropping the earlier reasoning changes the request where the first dropped item stood: the
//! provider's cache can serve the new task's first call only up to there (`cache::replay`).
//!
//! [`Carried`] applies the rule to a replayed request: each `assistant` block the request still
//! holds after the last final answer (or anywhere, for `all_turns`), carries its response's
//! reasoning tokens. The size of an item is the response's `reasoning_output_tokens`, provider
//! tokens already (no slope).

use std::collections::{HashMap, HashSet};

use crate::journal::{Body, Journal};
use crate::projection::Block;

/// Which earlier reasoning the provider keeps in context for a model (OpenAI `reasoning.context`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasoningContext {
    /// The reasoning of the turn in progress only, after the last final answer (OpenAI models
    /// before GPT-5.6; the default of every other provider that takes reasoning items back).
    CurrentTurn,
    /// Reasoning of every turn (GPT-5.6 and newer, which Codex runs with `all_turns`).
    AllTurns,
}

/// The reasoning context of `model` (a slug, with or without a provider prefix).
pub fn context_for(model: &str) -> ReasoningContext {
    let name = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    let Some(version) = name.strip_prefix("gpt-") else { return ReasoningContext::CurrentTurn };
    let digits = |s: &str| s.chars().take_while(char::is_ascii_digit).collect::<String>().parse::<u32>().ok();
    let major = digits(version);
    let minor = version.split_once('.').and_then(|(_, m)| digits(m)).unwrap_or(0);
    match major {
        Some(m) if (m, minor) >= (5, 6) => ReasoningContext::AllTurns,
        _ => ReasoningContext::CurrentTurn,
    }
}

/// The reasoning each recorded response sends back, and the calls whose model keeps all turns'.
#[derive(Debug, Default, Clone)]
pub struct Carried {
    /// `assistant` id → its `usage.reasoning_tokens`.
    tokens: HashMap<String, u64>,
    /// Records of the `assistant` calls whose model keeps every turn's reasoning.
    all_turns: HashSet<usize>,
    /// The final answers: `assistant` ids without tool calls whose response completed (usage).
    finals: HashSet<String>,
}

impl Carried {
    /// The reasoning of `journal`'s responses; `None` when no response records any (every
    /// journal but an imported one with reasoning: nothing changes for them).
    pub fn of(journal: &Journal) -> Option<Carried> {
        let mut out = Carried::default();
        let mut model = journal.session().and_then(|s| s.model.clone()).unwrap_or_default();
        for (i, r) in journal.records.iter().enumerate() {
            match &r.body {
                Body::Model(m) => model = m.model.clone(),
                Body::Assistant(a) => {
                    let n = a.usage.as_ref().and_then(|u| u.reasoning_tokens).unwrap_or(0);
                    if n > 0 {
                        out.tokens.insert(a.id.clone(), n);
                    }
                    if a.calls.is_empty() && a.usage.as_ref().is_some_and(|u| u.prompt_tokens.is_some()) {
                        out.finals.insert(a.id.clone());
                    }
                    let m = a.model.as_deref().unwrap_or(&model);
                    if context_for(m) == ReasoningContext::AllTurns {
                        out.all_turns.insert(i);
                    }
                }
                _ => {}
            }
        }
        (!out.tokens.is_empty()).then_some(out)
    }

    /// The first block of `blocks` (the request of the call recorded at `record`) whose reasoning
    /// the provider counts: after the last final answer (an `assistant` block without tool
    /// calls whose response completed: it ended a turn), or 0 when the model keeps all turns'.
    pub fn from(&self, record: usize, blocks: &[Block]) -> usize {
        if self.all_turns.contains(&record) {
            return 0;
        }
        let last_final =
            blocks.iter().rposition(|b| matches!(b, Block::Assistant { id, .. } if self.finals.contains(id)));
        last_final.map_or(0, |i| i + 1)
    }

    /// The reasoning tokens block `b` carries when the provider counts it.
    pub fn tokens(&self, b: &Block) -> u64 {
        match b {
            Block::Assistant { id, .. } => self.tokens.get(id).copied().unwrap_or(0),
            _ => 0,
        }
    }

    /// Of the first `keep` blocks (repeated from a request that counted reasoning from block
    /// `was` on, in one that counts it from `now` on), the first whose counted reasoning changed:
    /// the provider dropped it there (a new task), so the request differs from there on.
    pub fn changed(&self, blocks: &[Block], keep: usize, was: usize, now: usize) -> Option<usize> {
        let end = was.max(now).min(keep).min(blocks.len());
        (was.min(now)..end).find(|&i| self.tokens(&blocks[i]) > 0)
    }

    /// The reasoning tokens the provider counts in the request `blocks` of the call at `record`.
    pub fn in_request(&self, record: usize, blocks: &[Block]) -> u64 {
        blocks[self.from(record, blocks)..].iter().map(|b| self.tokens(b)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpt_5_6_and_newer_keep_every_turn() {
        for m in ["gpt-5.6", "openai/gpt-5.6-codex", "gpt-5.7", "gpt-6", "GPT-6.1-mini"] {
            assert_eq!(context_for(m), ReasoningContext::AllTurns, "{m}");
        }
        for m in ["gpt-5", "gpt-5-codex", "gpt-5.1-codex-max", "gpt-5.5", "gpt-4.1", "o3", "claude-opus-4-5", ""] {
            assert_eq!(context_for(m), ReasoningContext::CurrentTurn, "{m}");
        }
    }
}
