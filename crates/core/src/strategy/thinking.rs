//! Unrecorded thinking blocks carried into later requests (issue 28).
//!
//! Claude Code 2.1.x writes a response's thinking blocks as `"thinking":""` with a signature, pi
//! keeps only a summary; the importer drops them and writes how many the response held
//! (`usage.thinking_blocks`). The provider billed the whole thinking as output, and the agent
//! sends the blocks back with the conversation, where the provider counts them as input:
//!
//! * **Size.** A block's size is what the call's output holds beyond its visible part:
//!   `completion_tokens − slope × counted(visible text and tool calls)`, never negative, with the
//!   calibration's slope in force at that call (provider tokens per counted token).
//! * **Which requests carry it** (Anthropic, "Extended thinking", thinking blocks of previous
//!   turns): Claude Opus 4.5 and later Opus models, Sonnet 4.6 and later Sonnet models and newer
//!   families keep every earlier turn's thinking blocks in context; Opus 4.1 and earlier, Sonnet
//!   4.5 and earlier and the Haiku models through 4.5 keep only the last assistant turn's — the
//!   calls of the current tool-use loop, until the next user message ([`Keep`]). The model of the
//!   request decides. Other providers' models are not modelled (their reasoning is not known to
//!   be re-sent).
//!
//! The carried tokens are a known addend of a request: calibration learns from the rest
//! (`RecordedTurn::sample`) and adds them back to its estimate; the replays count a kept-by-every-
//! turn model's blocks with their thinking (`cache::replay`).

use std::collections::HashMap;

use crate::journal::{Body, Journal};
use crate::projection::Block;

/// Which earlier thinking blocks a model keeps in context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Every earlier assistant turn's thinking blocks (Opus 4.5+, Sonnet 4.6+, newer families).
    AllTurns,
    /// Only the last assistant turn's: the calls since the last user message (Opus ≤ 4.1,
    /// Sonnet ≤ 4.5, Haiku ≤ 4.5).
    LastTurn,
}

/// How `model` (any slug: Bedrock, Vertex, OpenRouter …) keeps earlier thinking blocks; `None`
/// for a model that is not Claude.
pub fn keep(model: &str) -> Option<Keep> {
    let name = crate::tokens::model_name::normalize(model);
    let rest = name.strip_prefix("claude-")?;
    let parts: Vec<&str> = rest.split('-').collect();
    let family = parts.iter().copied().find(|p| p.chars().all(|c| c.is_ascii_alphabetic()))?;
    // Version numbers: one or two digits (an 8-digit date is no version).
    let nums: Vec<u32> = parts.iter().filter(|p| p.len() <= 2).filter_map(|p| p.parse().ok()).collect();
    let version = (nums.first().copied().unwrap_or(0), nums.get(1).copied().unwrap_or(0));
    let last_turn = match family {
        "opus" => version <= (4, 1),
        "sonnet" => version <= (4, 5),
        "haiku" => version <= (4, 5),
        _ => false, // a newer family (Mythos …): as the newer models
    };
    Some(if last_turn { Keep::LastTurn } else { Keep::AllTurns })
}

/// Whether the journal records thinking blocks it does not hold (any `usage.thinking_blocks`).
pub fn any(journal: &Journal) -> bool {
    journal.records.iter().any(
        |r| matches!(&r.body, Body::Assistant(a) if a.usage.as_ref().and_then(|u| u.thinking_blocks).unwrap_or(0) > 0),
    )
}

/// The model of every `assistant` record (its own `model`, else the one in force), by record index.
pub fn models(journal: &Journal) -> HashMap<usize, String> {
    let (mut model, mut ctx) = (None, Default::default());
    let mut out = HashMap::new();
    for (i, r) in journal.records.iter().enumerate() {
        r.body.update_settings(&mut model, &mut ctx);
        if let Body::Assistant(a) = &r.body {
            if let Some(m) = a.model.clone().or_else(|| model.clone()) {
                out.insert(i, m);
            }
        }
    }
    out
}

/// The modelled thinking tokens of each earlier response that `blocks` (a request of a `keep`
/// model) carries: every assistant block's with [`Keep::AllTurns`], only those after the last
/// user block with [`Keep::LastTurn`].
pub fn carried(blocks: &[Block], keep: Keep, sizes: &HashMap<String, u64>) -> u64 {
    if sizes.is_empty() {
        return 0;
    }
    let from = match keep {
        Keep::AllTurns => 0,
        Keep::LastTurn => {
            blocks.iter().rposition(|b| matches!(b, Block::User { .. } | Block::Summary { .. })).map_or(0, |i| i + 1)
        }
    };
    blocks[from..]
        .iter()
        .filter_map(|b| match b {
            Block::Assistant { id, .. } => sizes.get(id).copied(),
            _ => None,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_models_keep_every_turns_thinking() {
        for m in [
            "claude-opus-4-5-20251101",
            "claude-opus-4-6",
            "claude-sonnet-4-6",
            "us.anthropic.claude-opus-4-6-v1",
            "openrouter/anthropic/claude-opus-4.5",
            "claude-mythos-preview",
        ] {
            assert_eq!(keep(m), Some(Keep::AllTurns), "{m}");
        }
        for m in [
            "claude-opus-4-1-20250805",
            "claude-opus-4-20250514",
            "claude-sonnet-4-5-20250929",
            "claude-sonnet-4-20250514",
            "claude-3-7-sonnet-20250219",
            "claude-haiku-4-5-20251001",
            "claude-opus-4-1@20250805",
        ] {
            assert_eq!(keep(m), Some(Keep::LastTurn), "{m}");
        }
        assert_eq!(keep("gpt-5"), None);
        assert_eq!(keep("MiniMax-M2.1"), None);
    }

    #[test]
    fn a_last_turn_model_carries_only_the_current_loop() {
        let a = |id: &str| Block::Assistant { id: id.into(), text: "".into(), calls: vec![] };
        let u = |id: &str| Block::User { id: id.into(), text: "q".into() };
        let r = |c: &str| Block::Result { call: c.into(), tool: "t".into(), text: "r".into() };
        let blocks = vec![u("u1"), a("a1"), r("c1"), a("a2"), u("u2"), a("a3"), r("c3")];
        let sizes: HashMap<String, u64> =
            [("a1", 100), ("a2", 10), ("a3", 1000)].iter().map(|(k, v)| (k.to_string(), *v)).collect();
        assert_eq!(carried(&blocks, Keep::AllTurns, &sizes), 1110);
        assert_eq!(carried(&blocks, Keep::LastTurn, &sizes), 1000);
        assert_eq!(carried(&blocks[..5], Keep::LastTurn, &sizes), 0);
    }

    use crate::strategy::{calibrator_for, recorded_turns, testkit::journal};
    use crate::tokens::{CharEstimator, Estimator};
    use serde_json::json;

    /// A Claude Code session on `model`: one user prompt, then `prompts.len()` tool calls; the
    /// response of turn 5 thought for 6,000 output tokens (recorded empty, as Claude Code 2.1.x
    /// does), the others for none. `marked`: the importer's `usage.thinking_blocks` is written.
    fn session(model: &str, prompts: &[u64], marked: bool) -> Journal {
        session_with(model, prompts, marked, None)
    }

    /// [`session`], with a user message before the call at index `user_at` when some.
    fn session_with(model: &str, prompts: &[u64], marked: bool, user_at: Option<usize>) -> Journal {
        let mut v = vec![
            json!({"kind":"session","id":"s","model":model,"harness":"claude-code"}),
            json!({"kind":"user","id":"u","text":"word ".repeat(400)}),
        ];
        for (i, p) in prompts.iter().enumerate() {
            let thought = i == 4;
            let mut usage =
                json!({"prompt_tokens":p,"cached_tokens":0,"completion_tokens":if thought { 6_000 } else { 20 }});
            if thought && marked {
                usage["thinking_blocks"] = json!(1);
            }
            if user_at == Some(i) {
                v.push(json!({"kind":"user","id":"u2","text":"next"}));
            }
            let call = json!([{"id":format!("c{i}"),"tool":"read","args":{"path":"x"}}]);
            v.push(json!({"kind":"assistant","id":format!("a{i}"),"text":"","calls":call,"usage":usage}));
            v.push(json!({"kind":"result","call":format!("c{i}"),"tool":"read","text":"line ".repeat(300 + 97 * i)}));
        }
        journal(v)
    }

    /// What the provider counted: an unrecorded prefix of 9,000 tokens, the journal's blocks, and
    /// from turn 6 on the 6,000-token response's thinking less its visible part (sent back).
    fn truth(model: &str) -> Vec<u64> {
        let j = session(model, &[1; 10], true);
        let visible =
            match &j.records.iter().find(|r| matches!(&r.body, Body::Assistant(a) if a.id == "a4")).unwrap().body {
                Body::Assistant(a) => CharEstimator.block(&Block::assistant(a)),
                _ => unreachable!(),
            };
        recorded_turns(&j, &CharEstimator)
            .iter()
            .map(|t| 9_000 + t.raw + if t.turn > 5 { 6_000 - visible } else { 0 })
            .collect()
    }

    /// Claude Code 2.1.x writes a response's thinking as `"thinking":""`; the provider counts the
    /// blocks sent back as input of every later request (Sonnet 4.6 keeps every turn's). The
    /// calibration saw a jump the journal did not explain: a 12k-token block made the next turn
    /// of a real session 27 % under, and the fit read the step as a rewrite.
    #[test]
    fn regression_unrecorded_thinking_sent_back_was_missing_from_the_estimate() {
        let model = "claude-sonnet-4-6";
        let prompts = truth(model);
        let err = |marked: bool, turn: usize| {
            let j = session(model, &prompts, marked);
            let cal = calibrator_for(&j, &CharEstimator);
            let t = recorded_turns(&j, &CharEstimator)[turn - 1];
            let est = cal.calibrate(turn, t.raw) + t.thinking;
            crate::tokens::calibrate::error_pct(est, prompts[turn - 1]).unwrap()
        };
        assert!(err(false, 6) < -10.0, "unmodelled, the carried thinking is missing: {}", err(false, 6));
        for turn in 6..=10 {
            assert!(err(true, turn).abs() < 1.0, "turn {turn}: {:+.2} %", err(true, turn));
        }
    }

    /// The replays count a kept block's thinking with it, in every strategy that keeps the block:
    /// the simulated recorded request is what the provider counted.
    #[test]
    fn regression_replay_dropped_the_thinking_the_model_keeps() {
        let model = "claude-opus-4-6";
        let prompts = truth(model);
        let simulated = |marked: bool| {
            let j = session(model, &prompts, marked);
            let opts = crate::cache::Options::plain(crate::cache::CacheModel::Ideal, None);
            crate::cache::simulate(&j, &crate::strategy::Strategy::recorded(), &CharEstimator, opts, |_, _| {}).turns
        };
        let (with, without) = (simulated(true), simulated(false));
        for t in 5..10 {
            let err = crate::tokens::calibrate::error_pct(with[t].prompt, prompts[t]).unwrap();
            assert!(err.abs() < 1.0, "turn {}: {err:+.2} %", t + 1);
        }
        // Unmodelled, the session-wide prefix absorbs half the step: every request is off.
        let worst = (0..10).map(|t| crate::tokens::calibrate::error_pct(without[t].prompt, prompts[t]).unwrap().abs());
        assert!(worst.fold(0.0, f64::max) > 10.0);
    }

    /// A model that keeps only the last turn's thinking (Haiku 4.5) carries a block until the next
    /// user message, then no more.
    #[test]
    fn a_last_turn_model_stops_carrying_after_a_user_message() {
        let t = recorded_turns(&session_with("claude-haiku-4-5-20251001", &[20_000; 8], true, Some(7)), &CharEstimator);
        let carried: Vec<u64> = t.iter().map(|t| t.thinking).collect();
        assert!(carried[5] > 5_000 && carried[6] == carried[5], "{carried:?}");
        assert_eq!(carried[7], 0, "a user message before turn 8: {carried:?}");
        let t = recorded_turns(&session_with("claude-opus-4-6", &[20_000; 8], true, Some(7)), &CharEstimator);
        assert_eq!(t[7].thinking, t[5].thinking, "Opus 4.6 keeps every turn's thinking");
    }
}
