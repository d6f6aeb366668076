//! Reasoning the harness sends back and the provider counts as input (`usage.reasoning_tokens`).
//!
//! Codex keeps every `reasoning` item of a response in its history (`ConversationHistory` /
//! `ContextManager::record_items`: a reasoning item is an API message) and sends the whole history
//! with every request (`store: false`, `include: ["reasoning.encrypted_content"]`). What the
//! provider counts of those items is OpenAI's rule: reasoning items of the current turn — those
//! after the last user message, between a function call and its output — are kept in context and
//! counted; earlier ones are dropped ("reasoning items from previous turns are discarded"; Codex's
//! own context estimate `get_total_token_usage` adds back exactly the reasoning items before the
//! last user message, as the server does not count them). From GPT-5.6 on the Responses API has
//! `reasoning.context` (`current_turn` / `all_turns`) and Codex runs those models with
//! `all_turns`: earlier turns' reasoning stays in context. A compaction replaces the history
//! (Codex keeps the user messages and a summary, no reasoning).
//!
//! Dropping the earlier reasoning changes the request where the first dropped item stood: the
//! provider's cache can serve the new task's first call only up to there (`cache::replay`).
//!
//! [`Carried`] applies the rule to a replayed request: each `assistant` block the request still
//! holds, past the last `user` block (or anywhere, for `all_turns`), carries its response's
//! reasoning tokens. The size of an item is the response's `reasoning_output_tokens`, provider
//! tokens already (no slope).

use std::collections::{HashMap, HashSet};

use crate::journal::{Body, Journal};
use crate::projection::Block;

/// Which earlier reasoning the provider keeps in context for a model (OpenAI `reasoning.context`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasoningContext {
    /// Reasoning after the last user message only (OpenAI models before GPT-5.6; the default of
    /// every other provider that takes reasoning items back).
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
    /// the provider counts: after the last `user` block, or 0 when the model keeps all turns'.
    pub fn from(&self, record: usize, blocks: &[Block]) -> usize {
        if self.all_turns.contains(&record) {
            return 0;
        }
        blocks.iter().rposition(|b| matches!(b, Block::User { .. })).map_or(0, |i| i + 1)
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
