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
        blocks[self.from(record, blocks)..].iter().fold(0, |n, b| n.saturating_add(self.tokens(b)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::{simulate, CacheModel, Options};
    use crate::tokens::CharEstimator;

    /// One line of a synthetic Codex rollout (the documented format: `response_item`s, and an
    /// `event_msg/token_count` after each response with its `last_token_usage`).
    fn line(sec: u32, kind: &str, payload: &str) -> String {
        format!(r#"{{"timestamp":"2026-01-01T00:00:{sec:02}Z","type":"{kind}","payload":{payload}}}"#)
    }

    fn user(sec: u32, text: &str) -> String {
        let t = format!(r#"{{"type":"message","role":"user","content":[{{"type":"input_text","text":"{text}"}}]}}"#);
        line(sec, "response_item", &t)
    }

    /// A response: a reasoning item of `reasoning` tokens (encrypted), then a tool call (`call`)
    /// or a final answer, and its token_count (`total` the running total that makes it billed).
    fn response(sec: u32, reasoning: u64, call: Option<&str>, prompt: u64, total: u64) -> Vec<String> {
        let enc = "gAAAA".repeat(40);
        let mut out = vec![line(
            sec,
            "response_item",
            &format!(r#"{{"type":"reasoning","summary":[],"encrypted_content":"{enc}"}}"#),
        )];
        out.push(match call {
            Some(id) => line(
                sec,
                "response_item",
                &format!(r#"{{"type":"function_call","name":"shell","arguments":"{{}}","call_id":"{id}"}}"#),
            ),
            None => line(
                sec,
                "response_item",
                r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}"#,
            ),
        });
        let usage = |p: u64| {
            format!(
                r#"{{"input_tokens":{p},"cached_input_tokens":0,"output_tokens":{},"reasoning_output_tokens":{reasoning},"total_tokens":{}}}"#,
                reasoning + 10,
                p + reasoning + 10
            )
        };
        out.push(line(
            sec,
            "event_msg",
            &format!(
                r#"{{"type":"token_count","info":{{"total_token_usage":{},"last_token_usage":{}}}}}"#,
                usage(total),
                usage(prompt)
            ),
        ));
        if let Some(id) = call {
            let o = format!(r#"{{"type":"function_call_output","call_id":"{id}","output":"{}"}}"#, "x".repeat(400));
            out.push(line(sec, "response_item", &o));
        }
        out
    }

    /// The rollout: task 1 (two tool calls, a final answer), task 2 after it, and a steering
    /// message during task 2's tool loop (no final answer before it); `prompts[i]` is call i's
    /// input tokens.
    fn rollout(reasoning: [u64; 6], prompts: &[u64]) -> String {
        let mut lines = vec![
            line(0, "session_meta", r#"{"id":"R","cli_version":"0.55.0"}"#),
            line(0, "turn_context", r#"{"model":"gpt-5-codex"}"#),
            user(1, "first task"),
        ];
        let calls = [Some("c1"), Some("c2"), None, Some("c3"), Some("c4"), None];
        let mut total = 0;
        for (i, (&r, call)) in reasoning.iter().zip(calls).enumerate() {
            match i {
                3 => lines.push(user(10, "second task")),
                5 => lines.push(user(20, "steer")),
                _ => {}
            }
            total += prompts[i];
            lines.extend(response(2 + 3 * i as u32, r, call, prompts[i], total));
        }
        lines.join("\n") + "\n"
    }

    /// The provider counts the reasoning Codex sends back while the turn runs and drops it at the
    /// turn's final answer; the importer dropped the items and nothing modelled them, so a new
    /// task's first call looked like a rewrite (calibration −30 … −70 % on real 0.55 rollouts)
    /// and the replays read across the drop (+8.5 % simulated cost).
    #[test]
    fn regression_codex_reasoning_items_were_not_counted_in_replays_and_calibration() {
        let (r1, r2, r3, r5) = (3_000, 5_000, 700, 4_000);
        let reasoning = [r1, r2, r3, 0, r5, 0];
        let import = |prompts: &[u64]| {
            let text = rollout(reasoning, prompts);
            crate::import::codex::read(std::path::Path::new("rollout-r.jsonl"), text.as_bytes()).unwrap().journal
        };
        // What the provider counted: a fixed prefix, the journal's content, the carried reasoning.
        let raw: Vec<u64> =
            super::super::recorded_turns(&import(&[1; 6]), &CharEstimator).iter().map(|t| t.raw).collect();
        let carried = [0, r1, r1 + r2, 0, 0, r5];
        let prompts: Vec<u64> = (0..6).map(|i| 10_000 + raw[i] + carried[i]).collect();
        let j = &import(&prompts);

        // The importer keeps each response's reasoning size.
        let sizes: Vec<Option<u64>> = (j.records.iter())
            .filter_map(|r| match &r.body {
                Body::Assistant(a) => Some(a.usage.as_ref().and_then(|u| u.reasoning_tokens)),
                _ => None,
            })
            .collect();
        assert_eq!(sizes, [Some(r1), Some(r2), Some(r3), None, Some(r5), None]);

        // Each request carries the reasoning of its turn so far; the final answer ends the turn.
        let turns = super::super::recorded_turns(j, &CharEstimator);
        assert_eq!(turns.iter().map(|t| t.reasoning).collect::<Vec<_>>(), carried);

        // Calibration: the carried tokens are known, not fitted — the new task's first call
        // (turn 4) is no rewrite and its estimate holds no reasoning.
        let cal = super::super::calibrator_for(j, &CharEstimator);
        assert!(!cal.rewrite_at(4), "the drop of the first task's reasoning was read as a rewrite");
        for t in 3..=6 {
            let (est, truth) = (cal.calibrate(t, turns[t - 1].raw) as f64, prompts[t - 1] as f64);
            assert!((est - truth).abs() < 0.01 * truth, "turn {t}: {est} against {truth}");
        }

        // Replay: requests carry the reasoning; the new task's first call reads the cache only up
        // to the first dropped item, and the steering message keeps turn 5's item.
        let sim = simulate(
            j,
            &super::super::Strategy::recorded(),
            &CharEstimator,
            Options::plain(CacheModel::Ideal, None),
            |_, _| {},
        );
        let t = &sim.turns;
        for (f, p) in t.iter().zip(&prompts) {
            assert!(f.prompt.abs_diff(*p) < 100, "turn {}: replayed {} against {p}", f.turn, f.prompt);
        }
        assert!(t[3].cached < t[0].prompt + 500, "turn 4 read {} past the first dropped item", t[3].cached);
        assert!(t[5].cached + 100 >= t[4].prompt, "a steering message dropped the turn's reasoning");
    }

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
