//! Turn-by-turn cache and cost figures of one strategy (`strategies.md` §4–§6).
//!
//! [`simulate`] replays a strategy ([`crate::strategy::replay`]), keys and counts every block
//! (each distinct block once: a memo keyed by the identity of its shared text, which it keeps
//! alive, so an unchanged block costs a hash look-up per turn), feeds the requests to a
//! [`Simulator`] and prices them. Token figures are raw estimates (spec §3), the same unit for
//! every strategy; output tokens are the recorded `completion_tokens`, else the estimate of the
//! turn's assistant block (a strategy changes the input, not what the model wrote).

use std::sync::Arc;

use super::model::{block_key, parse_ts, CacheModel, Key, Outcome, Request};
use super::prices::Price;
use crate::journal::{Body, Journal};
use crate::projection::diff::{self, Cause};
use crate::projection::{Block, BlockCall};
use crate::strategy::{self, Origin, Strategy};
use crate::tokens::Estimator;

/// The options of one simulation.
#[derive(Debug, Clone)]
pub struct Options {
    pub cache: CacheModel,
    /// The session's price (`None`: costs are not computed unless `env` prices some turn).
    pub price: Option<Price>,
    /// What the replay shares with the provider's record ([`Pricing::options_with`]): each turn
    /// priced and cached at the model that answered it (a switch is a cold cache, as at the
    /// provider), and the provider's unexplained cache losses repeated at the same turns.
    ///
    /// [`Pricing::options_with`]: super::Pricing::options_with
    pub env: Option<std::sync::Arc<super::pricing::Environment>>,
    /// The session model's minimum cacheable prompt, for turns whose own model has none
    /// (`None`: [`super::model::MIN_TOKENS`]).
    pub cache_min: Option<u64>,
}

impl Options {
    /// Options without an environment: one price and one cache for the whole run.
    pub fn plain(cache: CacheModel, price: Option<Price>) -> Options {
        Options { cache, price, env: None, cache_min: None }
    }

    /// Whether costs are computed: the session or some turn has a price.
    pub fn priced(&self) -> bool {
        self.price.is_some() || self.env.as_ref().is_some_and(|e| e.prices.iter().any(Option::is_some))
    }
}

/// A block named for reports: its type, its id and how the strategy produced it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct BlockRef {
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// [`Origin::describe`] of the block in its request.
    pub origin: String,
}

impl BlockRef {
    pub(crate) fn of(b: &Block, o: Option<&Origin>) -> BlockRef {
        BlockRef {
            kind: b.type_name(),
            id: b.id().map(str::to_string),
            origin: o.map(Origin::describe).unwrap_or_else(|| "verbatim".into()),
        }
    }
}

impl std::fmt::Display for BlockRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.id {
            Some(id) => write!(f, "{} {}", self.kind, id),
            None => f.write_str(self.kind),
        }
    }
}

/// A cache break (spec §4) explained.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct CacheBreak {
    pub turn: usize,
    /// First block of the previous request that this one does not repeat in place, numbered
    /// from 1 as in `ctxj show`.
    pub block: usize,
    /// That block in the previous request.
    pub was: BlockRef,
    /// The block now at that position, if any.
    pub now: Option<BlockRef>,
    /// One line: what changed.
    pub reason: String,
}

/// Figures of one turn.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct TurnFigures {
    pub turn: usize,
    /// Blocks in the request.
    pub blocks: usize,
    /// Prompt tokens (raw estimate, framing included).
    pub prompt: u64,
    /// Of `prompt`: the estimated unrecorded system prompt + tool schemas (the virtual first
    /// block of an imported session, whose blocks are then counted in provider tokens, raw ×
    /// the fit's slope; 0, and absent from JSON, when the journal records them).
    #[serde(skip_serializing_if = "is_zero")]
    pub unrecorded_prefix: u64,
    #[serde(rename = "cache_read")]
    pub cached: u64,
    /// Uncached input tokens (prompt − cached); `write` of them are cache writes.
    pub new: u64,
    #[serde(rename = "cache_write")]
    pub write: u64,
    pub output: u64,
    /// Whether `output` is the recorded `completion_tokens` (else an estimate).
    pub output_recorded: bool,
    /// $; `None` without a price.
    pub cost: Option<f64>,
    /// The provider's `prompt_tokens` / `cached_tokens`, when recorded.
    pub recorded_prompt: Option<u64>,
    pub recorded_cached: Option<u64>,
    /// Whether this turn is a cache break.
    #[serde(rename = "break")]
    pub is_break: bool,
    /// The compaction summarizer's requests that ran before this turn (own figures and cost,
    /// not in the fields above; absent from JSON when none ran).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summarizer: Option<super::summarizer::SummarizerFigures>,
    /// The prompt exceeds the model's context window ([`super::window::check`]; absent when not).
    #[serde(skip_serializing_if = "is_false")]
    pub over_window: bool,
    /// The prompt is below the provider's minimum cacheable prompt (absent when not).
    #[serde(skip_serializing_if = "is_false")]
    pub below_cache_min: bool,
}

/// The summary row of one strategy (spec §6).
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Summary {
    pub strategy: String,
    pub cache: CacheModel,
    pub turns: usize,
    pub peak_prompt: u64,
    pub prompt: u64,
    pub new: u64,
    #[serde(rename = "cache_read")]
    pub cached: u64,
    #[serde(rename = "cache_write")]
    pub write: u64,
    pub output: u64,
    /// cached / prompt over all turns (0 without turns).
    #[serde(rename = "cache_hit")]
    pub hit_rate: f64,
    pub cost: Option<f64>,
    pub breaks: usize,
    /// Over the turns carrying `usage.cached_tokens` (and `prompt_tokens`): the provider's
    /// Σcached / Σprompt, and this simulation's hit rate on the same turns.
    #[serde(rename = "recorded_cache_hit")]
    pub recorded_hit_rate: Option<f64>,
    #[serde(rename = "simulated_cache_hit_same_turns")]
    pub simulated_hit_rate_same_turns: Option<f64>,
    /// Turns the recorded hit rate is taken over.
    pub recorded_turns: usize,
    /// The compaction summarizer's requests (their cost is part of `cost`).
    pub summarizer: super::summarizer::SummarizerTotals,
    /// The requests against the context window and the cache minimum
    /// ([`super::window::check`]; empty until checked).
    pub limits: super::window::LimitCheck,
}

/// A strategy's simulation.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Simulation {
    pub summary: Summary,
    pub turns: Vec<TurnFigures>,
    pub breaks: Vec<CacheBreak>,
}

/// Identity of a block for the per-replay memo: a 128-bit hash of its type, id, tool, user and
/// the addresses of its shared text / args / tools (the memo keeps those `Arc`s alive, so no
/// address is reused meanwhile). No allocation: this runs for every block a replay hands on
/// changed, which for a sliding window is the whole request every turn.
type Ident = u128;

fn ident(b: &Block, buf: &mut Vec<u8>) -> Ident {
    // The fields into one buffer, each string length-prefixed, then one XXH3 call: streaming
    // hashers pay per call, and most fields here are a few bytes.
    buf.clear();
    let mut field = |s: &[u8]| {
        buf.extend_from_slice(&(s.len() as u64).to_le_bytes());
        buf.extend_from_slice(s);
    };
    field(b.type_name().as_bytes());
    field(b.id().unwrap_or("").as_bytes());
    // The address of the shared text's bytes (and its length) identifies the `Arc`.
    field(&(b.text().as_ptr() as usize).to_le_bytes());
    field(&(b.text().len() as u64).to_le_bytes());
    match b {
        Block::Assistant { calls, .. } => {
            for c in calls {
                field(&(Arc::as_ptr(&c.args) as usize).to_le_bytes());
                field(c.id.as_bytes());
                field(c.tool.as_bytes());
            }
        }
        Block::System { tools: Some(t), .. } => field(&(Arc::as_ptr(t) as usize).to_le_bytes()),
        Block::Attachment { user, .. } => field(user.as_bytes()),
        Block::Result { tool, .. } => field(tool.as_bytes()),
        _ => {}
    }
    xxhash_rust::xxh3::xxh3_128(buf)
}

/// What keeps the addresses of an [`Ident`] alive: the block's shared text and args / tools.
struct Alive {
    _text: crate::journal::Text,
    _values: Vec<Arc<serde_json::Value>>,
}

impl Alive {
    fn of(b: &Block) -> Alive {
        let values = match b {
            Block::Assistant { calls, .. } => calls.iter().map(|c| c.args.clone()).collect(),
            Block::System { tools: Some(t), .. } => vec![t.clone()],
            _ => Vec::new(),
        };
        Alive { _text: b.shared_text().clone(), _values: values }
    }
}

/// Keys and token counts of blocks, each distinct block computed once per replay.
#[derive(Default)]
struct BlockMemo {
    map: rustc_hash::FxHashMap<Ident, (Key, u64, Alive)>,
    buf: Vec<u8>,
}

impl BlockMemo {
    /// Key and tokens of each of `blocks` (the changed tail of a request: usually a few blocks).
    /// On the calling thread: a handful of blocks per turn is too little work to hand to rayon
    /// (on two cores, per-turn parallel batches made `cache` 1.5× slower).
    fn get(&mut self, blocks: &[Block], est: &dyn Estimator) -> Vec<(Key, u64)> {
        blocks
            .iter()
            .map(|b| {
                let id = ident(b, &mut self.buf);
                let (k, t, _) = self.map.entry(id).or_insert_with(|| (block_key(b), est.block(b), Alive::of(b)));
                (*k, *t)
            })
            .collect()
    }

    /// Forgets the blocks that are not in `live` (the current request) once the memo holds
    /// more than twice as many, so texts a strategy has dropped (truncated copies, markers) are
    /// freed. Each pruning at least halves the memo, so its cost is amortized over the inserts.
    fn prune(&mut self, live: &[Block]) {
        if self.map.len() <= 2 * live.len() + 4096 {
            return;
        }
        let buf = &mut self.buf;
        let keep: rustc_hash::FxHashSet<Ident> = live.iter().map(|b| ident(b, buf)).collect();
        self.map.retain(|id, _| keep.contains(id));
    }
}

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
            let calls = a
                .calls
                .iter()
                .map(|c| BlockCall { id: c.id.clone(), tool: c.tool.clone(), args: c.args.clone() })
                .collect();
            let u = a.usage.clone().unwrap_or_default();
            Some((
                Block::Assistant { id: a.id.clone(), text: a.text.clone(), calls },
                u.completion_tokens,
                u.prompt_tokens,
                u.cached_tokens,
            ))
        }
        _ => None,
    }
}

/// Explains why the current request does not start with the whole previous one, at block `i`
/// (`was`: the previous request's block there; `prev_len`: its length).
pub(crate) fn explain(
    was: &BlockRef,
    cause: Cause,
    prev_len: usize,
    cur: &[Block],
    cur_origins: &[Origin],
    i: usize,
) -> String {
    // The origin says something only when the strategy changed the block and its type does not
    // already say it ("summary (summary)").
    let tagged = |b: &BlockRef| {
        if b.origin == "verbatim" || b.origin == b.kind {
            b.to_string()
        } else if b.id.is_none() && b.origin.starts_with(b.kind) {
            b.origin.clone()
        } else {
            format!("{b} ({})", b.origin)
        }
    };
    let now = || BlockRef::of(&cur[i], cur_origins.get(i));
    match cause {
        Cause::Ended => format!(
            "request ends before block {}: {was} and the {} block(s) after it are gone",
            i + 1,
            prev_len - i - 1
        ),
        Cause::Rewritten => format!("{}: content changed", tagged(&now())),
        Cause::Moved => format!("{was} moved; {} stands here now", tagged(&now())),
        Cause::Dropped => format!("{was} dropped; {} stands here now", tagged(&now())),
    }
}

/// The key of the virtual block that stands for an unrecorded system prompt + tool schemas.
const PREFIX_KEY: Key = 0x7072_6566_6978_5f75_6e72_6563_6f72_6465;
/// The key of its part the provider's cache held before the session began.
const WARM_KEY: Key = 0x7761_726d_5f70_7265_6669_785f_6b65_7900;

/// The virtual blocks of an unrecorded prefix: its warm part (when some, a block of its own, so a
/// cache can hold it alone) and the rest.
fn prefix_blocks(p: &strategy::UnrecordedPrefix) -> Vec<(Key, u64)> {
    let warm = p.warm.min(p.tokens);
    match (warm, p.tokens - warm) {
        (0, t) => vec![(PREFIX_KEY, t)],
        (w, 0) => vec![(WARM_KEY, w)],
        (w, t) => vec![(WARM_KEY, w), (PREFIX_KEY, t)],
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
    let prefix = strategy::unrecorded_prefix(journal, est);
    let pblocks = prefix.as_ref().map(prefix_blocks).unwrap_or_default();
    let pre = pblocks.len();
    let mut caches = super::caches::Caches::new(journal, &opts, pre);
    let mut memo = BlockMemo::default();
    let mut tail = Tail::default();
    let mut turns = Vec::with_capacity(total);
    let mut breaks = Vec::new();
    strategy::replay(journal, strat, est, |r| {
        let keep = if turns.is_empty() { 0 } else { r.unchanged.min(tail.blocks.len()) };
        let prev_len = tail.req.len() - if turns.is_empty() { 0 } else { pre };
        let mut fresh = memo.get(&r.blocks[keep..], est);
        if let Some(p) = prefix {
            // Imported sessions count in provider tokens: × the fit's slope.
            fresh.iter_mut().for_each(|f| f.1 = crate::tokens::calibrate::apply(f.1, p.slope));
            if turns.is_empty() {
                fresh.splice(0..0, pblocks.iter().copied());
            }
        }
        let system_len = pre + usize::from(matches!(r.blocks.first(), Some(Block::System { .. })));
        let time = journal.records.get(r.record).and_then(|rec| parse_ts(&rec.ts));
        caches.switch_to(r.turn);
        if let (true, Some(&(WARM_KEY, w))) = (turns.is_empty(), pblocks.first()) {
            // The first call read this part from a cache warmed before the session: so does the replay.
            caches.sim.step(&Request::new(vec![WARM_KEY], vec![w], 1, time));
        }
        let keep_req = if turns.is_empty() { 0 } else { keep + pre };
        let price = caches.price(r.turn);
        let summarizer = super::summarizer::figures(&caches.sim, r.summarized, est, prefix, PREFIX_KEY, price, time);
        let gone = tail.req.replace_tail(keep_req, &fresh, system_len, time);
        // A break (spec §4): the first block of the previous request not repeated in place.
        let same = gone.iter().zip(&fresh).take_while(|(a, (b, _))| *a == b).count();
        let is_break = !turns.is_empty() && keep + same < prev_len;
        if is_break {
            let b = keep + same;
            let was = BlockRef::of(&tail.blocks[b], tail.origins.get(b));
            breaks.push(CacheBreak {
                turn: r.turn,
                block: b + 1,
                now: r.blocks.get(b).map(|x| BlockRef::of(x, r.origins.get(b))),
                reason: explain(&was, diff::cause(&tail.blocks[b], r.blocks, b), prev_len, r.blocks, r.origins, b),
                was,
            });
        }
        tail.blocks.truncate(keep);
        tail.blocks.extend_from_slice(&r.blocks[keep..]);
        tail.origins.truncate(keep);
        tail.origins.extend_from_slice(&r.origins[keep..]);
        memo.prune(&tail.blocks);
        let req = &tail.req;
        let o: Outcome = caches.step(r.turn, req, keep_req + same);
        let (output, output_recorded, rp, rc) = match assistant_block(journal, r.record) {
            Some((_, Some(c), p, cc)) => (c, true, p, cc),
            Some((b, None, p, cc)) => (est.block(&b), false, p, cc),
            None => (0, false, None, None),
        };
        let new = o.new_tokens();
        // A call the provider billed nothing for (usage all zero: pi's aborted requests).
        let free = rp == Some(0) && output_recorded && output == 0;
        turns.push(TurnFigures {
            turn: r.turn,
            blocks: req.len(),
            prompt: o.prompt,
            unrecorded_prefix: prefix.map_or(0, |p| p.tokens),
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

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The summary row of per-turn figures (the totals are plain sums, so `--per-turn` adds up;
/// recorded figures come from the journal, so the sums saturate at `u64::MAX` instead of
/// overflowing).
pub fn summarize(name: &str, priced: bool, cache: CacheModel, turns: &[TurnFigures], breaks: usize) -> Summary {
    let sum = |f: fn(&TurnFigures) -> u64| turns.iter().map(f).fold(0u64, u64::saturating_add);
    let prompt = sum(|t| t.prompt);
    let cached = sum(|t| t.cached);
    let rec: Vec<&TurnFigures> =
        turns.iter().filter(|t| t.recorded_cached.is_some() && t.recorded_prompt.is_some()).collect();
    let (mut rp, mut rc, mut sp, mut sc) = (0u64, 0u64, 0u64, 0u64);
    for t in &rec {
        rp = rp.saturating_add(t.recorded_prompt.unwrap_or(0));
        rc = rc.saturating_add(t.recorded_cached.unwrap_or(0));
        sp = sp.saturating_add(t.prompt);
        sc = sc.saturating_add(t.cached);
    }
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    let summarizer = super::summarizer::totals(turns.iter().filter_map(|t| t.summarizer.as_ref()), priced);
    Summary {
        strategy: name.to_string(),
        cache,
        turns: turns.len(),
        peak_prompt: turns.iter().map(|t| t.prompt).max().unwrap_or(0),
        prompt,
        new: sum(|t| t.new),
        cached,
        write: sum(|t| t.write),
        output: sum(|t| t.output),
        hit_rate: ratio(cached, prompt),
        cost: priced.then(|| turns.iter().filter_map(|t| t.cost).sum::<f64>() + summarizer.cost.unwrap_or(0.0)),
        breaks,
        recorded_hit_rate: (!rec.is_empty()).then(|| ratio(rc, rp)),
        simulated_hit_rate_same_turns: (!rec.is_empty()).then(|| ratio(sc, sp)),
        recorded_turns: rec.len(),
        summarizer,
        limits: Default::default(),
    }
}

/// The figures of [`simulate`] computed from scratch: every request keyed, counted and hashed
/// whole, breaks found with [`super::model::break_between`]. Tests compare the two.
#[cfg(test)]
pub(crate) fn from_scratch(
    journal: &Journal,
    strat: &Strategy,
    est: &dyn Estimator,
    cache: CacheModel,
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
        let req = Request::new(keys, tokens, system_len, time);
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
    cache: CacheModel,
) -> Vec<(u64, u64, u64, Option<usize>)> {
    let sim = simulate(journal, strat, est, Options::plain(cache, None), |_, _| {});
    let at: std::collections::HashMap<usize, usize> = sim.breaks.iter().map(|b| (b.turn, b.block)).collect();
    sim.turns.iter().map(|t| (t.prompt, t.cached, t.write, at.get(&t.turn).copied())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
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
        let opts =
            Options::plain(CacheModel::Ideal, Some(Price { input: 1e6, cached: Some(0.0), write: None, output: 0.0 }));
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
        assert_eq!((b.turn, b.block), (3, 4), "block 4, counted from 1");
        assert_eq!(b.was.to_string(), "result c1");
        assert_eq!(b.reason, "result c1 (elided @ rev 7): content changed");
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
