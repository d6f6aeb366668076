//! Turn-by-turn cache and cost figures of one strategy (`strategies.md` §4–§6).
//!
//! [`simulate`] replays a strategy ([`crate::strategy::replay`]), keys and counts every block
//! (each distinct block once: a memo keyed by the identity of its shared text, which it keeps
//! alive, so an unchanged block costs a hash look-up per turn), feeds the requests to a
//! [`Simulator`] and prices them. Token figures are raw estimates (spec §3), the same unit for
//! every strategy; output tokens are the recorded `completion_tokens`, else the estimate of the
//! turn's assistant block (a strategy changes the input, not what the model wrote).

use super::explain::Divergence;
use super::memo::BlockMemo;
use super::model::{parse_ts, Key, Outcome, Request};
use crate::journal::{Body, Journal};
use crate::projection::diff;
use crate::projection::Block;
use crate::strategy::{self, Origin, Strategy};
use crate::tokens::Estimator;

pub use super::figures::{summarize, CacheBreak, Simulation, Summary, TurnFigures};
pub use super::options::Options;

/// The previous request of a replay. The replay says how many leading blocks it repeats
/// unchanged ([`strategy::TurnRequest::unchanged`]); keys, token counts and prefix hashes are
/// computed only for the blocks after them.
#[derive(Default)]
struct Tail {
    blocks: Vec<Block>,
    origins: Vec<Origin>,
    req: Request,
}

/// A turn's assistant block with its `completion_tokens`, `prompt_tokens`, `cached_tokens`.
type Written = (Block, Option<u64>, Option<u64>, Option<u64>);

/// The assistant block a turn's record wrote (for the output estimate).
fn assistant_block(journal: &Journal, record: usize) -> Option<Written> {
    match &journal.records.get(record)?.body {
        Body::Assistant(a) => {
            let u = a.usage.clone().unwrap_or_default();
            Some((Block::assistant(a), u.completion_tokens, u.prompt_tokens, u.cached_tokens))
        }
        _ => None,
    }
}

/// The key of the virtual block that stands for an unrecorded system prompt + tool schemas.
const PREFIX_KEY: Key = 0x7072_6566_6978_5f75_6e72_6563_6f72_6465;
/// Mixed into the key of an `assistant` block sent with its response's reasoning
/// ([`strategy::reasoning`]): the block as sent with the item differs from the block without it.
const REASONING_KEY: Key = 0x7265_6173_6f6e_696e_675f_6361_7272_6965;

/// Adds to `fresh` (the keys and provider tokens of `blocks`, from block `at` of the request) the
/// reasoning each block from `from` on carries.
fn add_reasoning(c: &strategy::reasoning::Carried, blocks: &[Block], at: usize, from: usize, fresh: &mut [(Key, u64)]) {
    for (i, (b, f)) in blocks.iter().zip(fresh).enumerate() {
        let n = c.tokens(b);
        if n > 0 && at + i >= from {
            *f = (f.0 ^ REASONING_KEY, f.1.saturating_add(n));
        }
    }
}

/// Replays `strategy` and simulates the cache; `progress(done, total)` is called after each turn.
///
/// Linear in the journal: per turn, only the blocks after the ones the replay repeated unchanged
/// are keyed, counted (each distinct block once per replay) and chained into prefix hashes.
pub fn simulate(
    journal: &Journal,
    strat: &Strategy,
    est: &dyn Estimator,
    opts: Options,
    progress: impl FnMut(usize, usize),
) -> Simulation {
    simulate_observed(journal, strat, est, opts, progress, |_| {})
}

/// [`simulate`], also handing each request to `observe` (after its figures are computed), so a
/// caller that needs the requests too (the report's turn browser) replays the strategy once.
pub fn simulate_observed(
    journal: &Journal,
    strat: &Strategy,
    est: &dyn Estimator,
    opts: Options,
    mut progress: impl FnMut(usize, usize),
    mut observe: impl FnMut(&strategy::TurnRequest<'_>),
) -> Simulation {
    let total = journal.turns.len();
    // The unrecorded prefix of an imported session: a virtual first block with a fixed key and
    // the inferred token count, cached like a real system block.
    let (prefix, segments) = match strategy::prefix_segments(journal, est) {
        Some((p, s)) => (Some(p), s),
        None => (None, Vec::new()),
    };
    // Unrecorded thinking a model keeps in every later request: part of its assistant block, in
    // every strategy that keeps the block (`strategy::thinking`).
    let thinking = if prefix.is_some() { strategy::kept_thinking(journal, est) } else { Default::default() };
    let pre = usize::from(prefix.is_some());
    // The prefix in force: its segment's index and tokens.
    let segment_at = |turn: usize| segments.partition_point(|s| s.0 <= turn).saturating_sub(1);
    let mut segment = 0;
    let mut caches = super::caches::Caches::new(journal, &opts, pre);
    let mut memo = BlockMemo::default();
    let mut tail = Tail::default();
    let mut turns = Vec::with_capacity(total);
    let mut breaks = Vec::new();
    // Earlier responses' reasoning the provider counts, from block `carried_from` of the request.
    let carried = strategy::reasoning::Carried::of(journal);
    let mut carried_from = 0;
    strategy::replay(journal, strat, est, |r| {
        let mut keep = if turns.is_empty() { 0 } else { r.unchanged.min(tail.blocks.len()) };
        let from = carried.as_ref().map_or(0, |c| c.from(r.record, r.blocks));
        if let Some(i) = carried.as_ref().and_then(|c| c.changed(&tail.blocks, keep, carried_from, from)) {
            keep = i;
        }
        carried_from = from;
        // A new prefix segment: the provider counted another prefix from here on, in every
        // strategy; the previous request's head is resized so the blocks after it still match.
        let seg = segment_at(r.turn);
        let resegment = seg != segment && !turns.is_empty();
        let seg_tokens = segments.get(seg).map_or(0, |s| s.1);
        if resegment {
            tail.req.set_head(&[(PREFIX_KEY, seg_tokens)]);
        }
        segment = seg;
        let prefix_now = prefix.map(|p| strategy::UnrecordedPrefix { tokens: seg_tokens, ..p });
        let prev_len = tail.req.len() - if turns.is_empty() { 0 } else { pre };
        let mut fresh = memo.get(&r.blocks[keep..], est);
        if let Some(p) = prefix {
            // Imported sessions count in provider tokens: × the fit's slope.
            fresh.iter_mut().for_each(|f| f.1 = crate::tokens::calibrate::apply(f.1, p.slope));
            for (f, b) in fresh.iter_mut().zip(&r.blocks[keep..]) {
                if let Block::Assistant { id, .. } = b {
                    f.1 += thinking.get(id).copied().unwrap_or(0);
                }
            }
            if turns.is_empty() {
                fresh.insert(0, (PREFIX_KEY, seg_tokens));
            }
        }
        if let Some(c) = &carried {
            let head = fresh.len() - (r.blocks.len() - keep);
            add_reasoning(c, &r.blocks[keep..], keep, from, &mut fresh[head..]);
        }
        let system_len = pre + usize::from(matches!(r.blocks.first(), Some(Block::System { .. })));
        let time = journal.records.get(r.record).and_then(|rec| parse_ts(&rec.ts));
        caches.switch_to(r.turn);
        let keep_req = if turns.is_empty() { 0 } else { keep + pre };
        let price = caches.price(r.turn);
        let summarizer =
            super::summarizer::figures(&caches.sim, r.summarized, est, prefix_now, PREFIX_KEY, price, time);
        let gone = tail.req.replace_tail(keep_req, &fresh, system_len, time);
        // A break (spec §4): the first block of the previous request not repeated in place.
        let same = gone.iter().zip(&fresh).take_while(|(a, (b, _))| *a == b).count();
        let is_break = !turns.is_empty() && keep + same < prev_len;
        if is_break {
            let b = keep + same;
            let cause = diff::cause(&tail.blocks[b], r.blocks, b);
            let at = Divergence::at(&tail.blocks, &tail.origins, r.blocks, r.origins, b, cause);
            breaks.push(CacheBreak { turn: r.turn, at });
        }
        tail.blocks.truncate(keep);
        tail.blocks.extend_from_slice(&r.blocks[keep..]);
        tail.origins.truncate(keep);
        tail.origins.extend_from_slice(&r.origins[keep..]);
        memo.prune(&tail.blocks);
        tail.req.set_mark(marks_previous_response(journal, r.blocks).map_or(0, |m| m + pre));
        let req = &tail.req;
        let (output, output_recorded, rp, rc) = match assistant_block(journal, r.record) {
            Some((_, Some(c), p, cc)) => (c, true, p, cc),
            Some((b, None, p, cc)) => (est.block(&b), false, p, cc),
            None => (0, false, None, None),
        };
        // A call the provider billed nothing for (usage all zero: pi's and OpenClaw's aborted or
        // failed requests): it costs nothing and, as in the record, wrote nothing to the cache
        // (the next call is served as if it had not happened).
        let free = rp == Some(0) && output_recorded && output == 0;
        let mut o: Outcome = match free {
            true => Outcome { prompt: req.prompt(), ..Outcome::default() },
            false => caches.step(r.turn, req, keep_req + same),
        };
        if let (true, false, Some(p)) = (turns.is_empty(), free, prefix) {
            // The one rule for a session's first call: it read what requests before the session
            // had left in the provider's cache — the system prompt and tools (Claude Code shares
            // them across sessions; a subagent or compaction call reads its parent's) and, as far
            // as the provider's read reached, the first messages too (a Codex rollout's
            // instructions and environment context, the same in every session of a folder). The
            // first request is the same in every replay: each reads what the provider read
            // (`cached_tokens` of turn 1), wherever that ends inside a block.
            o.read_at_least(p.first_read);
        }
        let new = o.new_tokens();
        turns.push(TurnFigures {
            turn: r.turn,
            blocks: req.len(),
            prompt: o.prompt,
            unrecorded_prefix: prefix_now.map_or(0, |p| p.tokens),
            cached: o.cached,
            new,
            write: o.write,
            output,
            output_recorded,
            cost: caches.cost(r.turn, req, &o, output, free),
            recorded_prompt: rp,
            recorded_cached: rc,
            is_break,
            summarizer,
            over_window: false,
            below_cache_min: false,
        });
        observe(r);
        progress(turns.len(), total);
    });
    let summary = summarize(&strat.name, opts.priced(), opts.cache, &turns, breaks.len());
    Simulation { summary, turns, breaks }
}

/// The second cache breakpoint of a request (blocks before it), for an agent known to place one:
/// Claude Code marks its last two messages with `cache_control`, so besides the end of the request
/// the end of the previous response (the last `assistant` block) is a breakpoint, and the
/// provider looks back 20 blocks from each. A turn that appends more than 20 blocks (many user
/// lines, parallel tool results) still reads the previous call's entry. Captured Claude Code
/// requests carry about one breakpoint on a user and one on an assistant message each, besides
/// the system prompt's (starbased-co/ccproxy `docs/caching/`).
fn marks_previous_response(journal: &Journal, blocks: &[Block]) -> Option<usize> {
    let cc = journal.session().and_then(|s| s.harness.as_deref()) == Some("claude-code");
    cc.then(|| blocks.iter().rposition(|b| matches!(b, Block::Assistant { .. })).map(|i| i + 1)).flatten()
}

/// The figures of [`simulate`] computed from scratch: every request keyed, counted and hashed
/// whole, breaks found with [`super::model::break_between`]. Tests compare the two.
#[cfg(test)]
pub(crate) fn from_scratch(
    journal: &Journal,
    strat: &Strategy,
    est: &dyn Estimator,
    cache: super::model::CacheModel,
) -> Vec<(u64, u64, u64, Option<usize>)> {
    let mut sim = super::model::Simulator::new(cache);
    let mut prev: Option<Request> = None;
    let mut out = Vec::new();
    strategy::replay(journal, strat, est, |r| {
        // Keyed by the canonical bytes themselves: an independent check of `block_key`.
        let keys = r.blocks.iter().map(|b| super::model::key_of(&b.canonical())).collect();
        let tokens = r.blocks.iter().map(|b| est.block(b)).collect();
        let system_len = usize::from(matches!(r.blocks.first(), Some(Block::System { .. })));
        let time = journal.records.get(r.record).and_then(|rec| parse_ts(&rec.ts));
        let mut req = Request::new(keys, tokens, system_len, time);
        req.set_mark(marks_previous_response(journal, r.blocks).unwrap_or(0));
        let brk = prev.as_ref().and_then(|p| super::model::break_between(p, &req)).map(|b| b.block + 1);
        let o = sim.step(&req);
        out.push((o.prompt, o.cached, o.write, brk));
        prev = Some(req);
    });
    out
}

/// [`simulate`]'s figures in the shape of [`from_scratch`].
#[cfg(test)]
pub(crate) fn incremental(
    journal: &Journal,
    strat: &Strategy,
    est: &dyn Estimator,
    cache: super::model::CacheModel,
) -> Vec<(u64, u64, u64, Option<usize>)> {
    let sim = simulate(journal, strat, est, Options::plain(cache, None), |_, _| {});
    let at: std::collections::HashMap<usize, usize> = sim.breaks.iter().map(|b| (b.turn, b.at.block)).collect();
    sim.turns.iter().map(|t| (t.prompt, t.cached, t.write, at.get(&t.turn).copied())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::model::CacheModel;
    use crate::cache::prices::Price;
    use crate::strategy::testkit::from_lines as journal;
    use crate::tokens::CharEstimator;

    #[test]
    fn recorded_replay_adds_up_and_explains_breaks() {
        let j = journal(&[
            r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","model":"openai/gpt-5"}"#,
            r#"{"rev":2,"ts":"2026-11-29T10:00:00Z","kind":"system","text":"sys"}"#,
            r#"{"rev":3,"ts":"2026-11-29T10:00:01Z","kind":"user","id":"u1","text":"hello"}"#,
            r#"{"rev":4,"ts":"2026-11-29T10:00:02Z","kind":"assistant","id":"a1","text":"","calls":[{"id":"c1","tool":"read","args":{"path":"x"}}],"usage":{"prompt_tokens":20,"cached_tokens":0,"completion_tokens":7}}"#,
            r#"{"rev":5,"ts":"2026-11-29T10:00:03Z","kind":"result","call":"c1","tool":"read","text":"0123456789012345678901234567890123456789","bytes":40}"#,
            r#"{"rev":6,"ts":"2026-11-29T10:00:04Z","kind":"assistant","id":"a2","text":"ok","usage":{"prompt_tokens":40,"cached_tokens":16}}"#,
            r#"{"rev":7,"ts":"2026-11-29T10:00:05Z","kind":"elide","by":"auto","calls":["c1"]}"#,
            r#"{"rev":8,"ts":"2026-11-29T10:00:06Z","kind":"user","id":"u2","text":"more"}"#,
            r#"{"rev":9,"ts":"2026-11-29T10:00:07Z","kind":"assistant","id":"a3","text":"done"}"#,
        ]);
        let s = strategy::parse("recorded").unwrap();
        let opts = Options::plain(CacheModel::Ideal, Some(Price::flat(1e6, Some(0.0), None, 0.0)));
        let mut seen = 0;
        let sim = simulate(&j, &s, &CharEstimator, opts, |d, t| {
            seen = d;
            assert_eq!(t, 3)
        });
        assert_eq!(seen, 3);
        assert_eq!(sim.turns.len(), 3);
        let t = &sim.turns;
        assert_eq!(t[0].cached, 0);
        // Turn 2 repeats turn 1's blocks (system, u1, a1) and adds the result.
        assert_eq!(t[1].cached, t[0].prompt - 3);
        assert!(!t[1].is_break);
        // Turn 3: the result was elided — a break at block 3.
        assert!(t[2].is_break);
        assert_eq!(sim.breaks.len(), 1);
        let b = &sim.breaks[0];
        assert_eq!((b.turn, b.at.block), (3, 4), "block 4, counted from 1");
        assert_eq!(b.at.was.to_string(), "result c1");
        assert_eq!((b.at.cause, b.at.after), (diff::Cause::Rewritten, 0));
        assert_eq!(b.at.now.as_ref().map(|n| n.origin.as_str()), Some("elided @ rev 7"));
        // Output: recorded 7 for turn 1, else the assistant block's estimate.
        assert!(t[0].output_recorded && t[0].output == 7);
        assert!(
            !t[1].output_recorded
                && t[1].output
                    == CharEstimator.block(&Block::Assistant { id: "a2".into(), text: "ok".into(), calls: vec![] })
        );
        // Totals are sums; cost at $1 per input token, cached free.
        let s = &sim.summary;
        assert_eq!(s.prompt, t.iter().map(|x| x.prompt).sum::<u64>());
        assert_eq!(s.new + s.cached, s.prompt);
        assert_eq!(s.cost, Some(s.new as f64));
        assert_eq!(s.breaks, 1);
        assert_eq!(s.recorded_turns, 2);
        assert_eq!(s.recorded_hit_rate, Some(16.0 / 60.0));
    }

    /// An imported Codex session: calls with the given provider counts, a developer `notice`
    /// (or a plain user message when `resumed` is false) before call `at`.
    fn codex_session(prompts: &[u64], at: usize, resumed: bool) -> Journal {
        let mut lines = vec![
            r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","model":"gpt-5","harness":"codex"}"#
                .to_string(),
        ];
        for (i, p) in prompts.iter().enumerate() {
            let rev = lines.len() + 1;
            if i + 1 == at && resumed {
                lines.push(format!(
                    r#"{{"rev":{rev},"ts":"2026-11-29T10:00:{i:02}Z","kind":"notice","id":"n{i}","text":"permissions","topic":"developer"}}"#
                ));
            }
            let rev = lines.len() + 1;
            lines.push(format!(
                r#"{{"rev":{rev},"ts":"2026-11-29T10:00:{i:02}Z","kind":"user","id":"u{i}","text":"{}"}}"#,
                "word ".repeat(40)
            ));
            let rev = lines.len() + 1;
            lines.push(format!(
                r#"{{"rev":{rev},"ts":"2026-11-29T10:00:{i:02}Z","kind":"assistant","id":"a{i}","text":"ok","usage":{{"prompt_tokens":{p},"cached_tokens":0,"completion_tokens":1}}}}"#
            ));
        }
        journal(&lines.iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// Codex builds its instructions and tool list per process; a session resumed by another
    /// process (which records its developer instructions again) was sent a prefix 18k tokens
    /// smaller, yet every replay carried the session-wide mean prefix on every turn: +20 % on
    /// the simulated cost of a real rollout whose last turns came after such a resume.
    #[test]
    fn regression_replayed_prefix_was_one_mean_across_a_resumed_process() {
        let raw: Vec<u64> =
            strategy::recorded_turns(&codex_session(&[1; 6], 4, true), &CharEstimator).iter().map(|t| t.raw).collect();
        let prompts: Vec<u64> = raw.iter().enumerate().map(|(i, r)| r + if i < 3 { 20_000 } else { 2_000 }).collect();
        let opts = Options::plain(CacheModel::Ideal, None);
        let recorded = strategy::parse("recorded").unwrap();
        let sim = simulate(&codex_session(&prompts, 4, true), &recorded, &CharEstimator, opts, |_, _| {});
        for t in &sim.turns {
            let want = prompts[t.turn - 1] as f64;
            assert!((t.prompt as f64 - want).abs() < 0.05 * want, "turn {}: {} vs {want}", t.turn, t.prompt);
        }
        // The same drop after a plain user message is the conversation's (a new task): one
        // prefix, as before.
        let opts = Options::plain(CacheModel::Ideal, None);
        let plain = simulate(&codex_session(&prompts, 4, false), &recorded, &CharEstimator, opts, |_, _| {});
        let prefixes: std::collections::BTreeSet<u64> = plain.turns.iter().map(|t| t.unrecorded_prefix).collect();
        assert_eq!(prefixes.len(), 1, "{prefixes:?}");
    }

    /// pi and OpenClaw log an aborted or failed request with all-zero usage: the provider billed
    /// nothing and cached nothing. The replay still let it write the cache, so the next call read
    /// a prefix the provider never held.
    #[test]
    fn regression_a_call_billed_nothing_warmed_the_replayed_cache() {
        let j = journal(&[
            r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","model":"openai/gpt-5"}"#,
            r#"{"rev":2,"ts":"2026-11-29T10:00:01Z","kind":"user","id":"u1","text":"hello there"}"#,
            r#"{"rev":3,"ts":"2026-11-29T10:00:02Z","kind":"assistant","id":"a1","text":"hi","usage":{"prompt_tokens":20,"cached_tokens":0,"completion_tokens":2}}"#,
            r#"{"rev":4,"ts":"2026-11-29T10:00:03Z","kind":"user","id":"u2","text":"a long question that the provider aborted"}"#,
            r#"{"rev":5,"ts":"2026-11-29T10:00:04Z","kind":"assistant","id":"a2","text":"","usage":{"prompt_tokens":0,"cached_tokens":0,"completion_tokens":0}}"#,
            r#"{"rev":6,"ts":"2026-11-29T10:00:05Z","kind":"user","id":"u3","text":"again"}"#,
            r#"{"rev":7,"ts":"2026-11-29T10:00:06Z","kind":"assistant","id":"a3","text":"done","usage":{"prompt_tokens":40,"cached_tokens":20,"completion_tokens":1}}"#,
        ]);
        let price = Price::flat(1e6, Some(0.0), None, 0.0);
        let opts = Options::plain(CacheModel::Ideal, Some(price));
        let sim = simulate(&j, &strategy::parse("recorded").unwrap(), &CharEstimator, opts, |_, _| {});
        let t = &sim.turns;
        assert_eq!((t[1].cost, t[1].cached, t[1].write), (Some(0.0), 0, 0));
        assert_eq!(t[2].cached, t[0].prompt - crate::tokens::FRAMING, "only the first call's request was cached");
    }

    #[test]
    fn each_model_keeps_its_own_cache_and_price() {
        let sys = "s".repeat(8_000);
        let call = |rev: usize, sec: u32, model: &str| {
            format!(
                r#"{{"rev":{rev},"ts":"2026-11-29T10:00:{sec:02}Z","kind":"assistant","id":"a{rev}","text":"x","model":"{model}","usage":{{"prompt_tokens":2100,"cached_tokens":0,"completion_tokens":1}}}}"#
            )
        };
        let lines = [
            r#"{"rev":1,"ts":"2026-11-29T10:00:00Z","kind":"session","id":"s","model":"claude-sonnet-4-5"}"#
                .to_string(),
            format!(r#"{{"rev":2,"ts":"2026-11-29T10:00:00Z","kind":"system","text":"{sys}"}}"#),
            r#"{"rev":3,"ts":"2026-11-29T10:00:01Z","kind":"user","id":"u1","text":"one"}"#.into(),
            call(4, 2, "claude-sonnet-4-5"),
            r#"{"rev":5,"ts":"2026-11-29T10:00:03Z","kind":"user","id":"u2","text":"two"}"#.into(),
            call(6, 4, "claude-opus-4-5"),
            r#"{"rev":7,"ts":"2026-11-29T10:00:05Z","kind":"user","id":"u3","text":"three"}"#.into(),
            call(8, 6, "claude-sonnet-4-5"),
        ];
        let j = journal(&lines.iter().map(String::as_str).collect::<Vec<_>>());
        let table = super::super::PriceTable::builtin();
        let pricing = super::super::Pricing::for_session(&j, None, None, table.clone());
        let b = super::super::billed(&j, &CharEstimator, &table, None);
        let sim =
            simulate(&j, &strategy::parse("recorded").unwrap(), &CharEstimator, pricing.options_with(&b), |_, _| {});
        let t = &sim.turns;
        assert_eq!(t[1].cached, 0, "Opus's cache is cold");
        assert!(t[2].cached >= 2_000, "back on Sonnet, its cache still holds the system prompt");
        let opus = table.lookup("claude-opus-4-5").unwrap().1;
        assert_eq!(t[1].cost, Some(opus.cost(t[1].new, t[1].write, t[1].cached, t[1].output)));
        let one = pricing.options();
        let flat = simulate(&j, &strategy::parse("recorded").unwrap(), &CharEstimator, one, |_, _| {});
        assert!(flat.turns[1].cached > 0 && flat.summary.cost < sim.summary.cost, "without the environment: one model");
    }

    #[test]
    fn incremental_simulation_equals_from_scratch_on_the_samples() {
        let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("sample-journals");
        let mut breaks = 0;
        for sample in ["bugfix-todo", "long-elision", "compaction", "spill-attach"] {
            let path = root.join(sample).join("journal.jsonl");
            let bytes = std::fs::read(&path).expect("sample journal");
            let j = crate::journal::parse_bytes(&path, &bytes, Default::default()).expect("valid sample");
            for name in ["recorded", "baseline", "truncate-200", "sliding-6", "elide-keep-2", "per-tool-keep-2"] {
                let s = strategy::parse(name).unwrap();
                if s.is_recorded() {
                    // `tokens --per-turn` calibrates from these prompts instead of a second replay.
                    let prompts: Vec<(u64, Option<u64>)> = crate::strategy::recorded_turns(&j, &CharEstimator)
                        .iter()
                        .map(|t| (t.raw, t.prompt_tokens))
                        .collect();
                    let opts = Options::plain(CacheModel::Ideal, None);
                    let sim = simulate(&j, &s, &CharEstimator, opts, |_, _| {});
                    let got: Vec<(u64, Option<u64>)> =
                        sim.turns.iter().map(|t| (t.prompt, t.recorded_prompt)).collect();
                    assert_eq!(got, prompts, "{sample}: recorded prompts are the recorded turns' raw estimates");
                }
                for cache in [CacheModel::Ideal, CacheModel::OpenAi, CacheModel::Anthropic, CacheModel::Gemini] {
                    let want = from_scratch(&j, &s, &CharEstimator, cache);
                    assert_eq!(incremental(&j, &s, &CharEstimator, cache), want, "{sample} {name} {cache}");
                    breaks += want.iter().filter(|t| t.3.is_some()).count();
                }
            }
        }
        assert!(breaks > 0, "the samples exercise cache breaks");
    }
}
