//! The four prompt-cache models of `strategies.md` §4 and cache-break detection.
//!
//! A request is seen as its blocks' keys (a 128-bit hash of each block's content,
//! [`block_key`], equal exactly when the canonical bytes are) and
//! token counts. The cached part is always a whole number of leading blocks; the 3 request
//! framing tokens are never cached. Prefix equality is answered in O(1) by chained prefix hashes
//! (`ph[L]` = hash of the first L block keys), so a session of thousands of turns stays linear.
//!
//! | model | rule |
//! |---|---|
//! | `ideal` | every earlier request is an entry forever; cached = longest common block prefix |
//! | `openai` | every request is an entry alive 5 min after its last use; ≥ 1,024 tokens; rounded down to 1,024 + 128·n |
//! | `anthropic` | entries at the end of the system block and at the last block (≥ 1,024 tokens); reads the longest live entry that is a prefix ending at the system block or within the last 20 blocks; 5 min, refreshed on a hit; the uncached part is billed as a write |
//! | `gemini` | `openai` without the 128-token rounding |

use rustc_hash::{FxHashMap, FxHashSet};

use crate::projection::hash::{self, process_seed};
use crate::projection::Block;

/// Request framing tokens (never cached).
pub use crate::tokens::FRAMING;
/// Nothing is cached (openai, gemini) or written (anthropic) below this many tokens.
pub const MIN_TOKENS: u64 = 1024;
/// OpenAI's cache granularity above the minimum.
pub const OPENAI_STEP: u64 = 128;
/// Entry lifetime after the last use, in milliseconds (5 minutes).
pub const TTL_MS: i64 = 5 * 60 * 1000;
/// Anthropic reads entries ending within this many last blocks of the request.
pub const LOOKBACK_BLOCKS: usize = 20;

/// A cache model of spec §4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CacheModel {
    Ideal,
    #[serde(rename = "openai")]
    OpenAi,
    Anthropic,
    Gemini,
}

/// A `--cache` value that names no model.
#[derive(Debug, thiserror::Error)]
#[error("unknown cache model {0:?}: expected ideal, openai, anthropic or gemini")]
pub struct CacheModelError(pub String);

impl CacheModel {
    pub const ALL: [CacheModel; 4] = [CacheModel::Ideal, CacheModel::OpenAi, CacheModel::Anthropic, CacheModel::Gemini];

    pub fn name(self) -> &'static str {
        match self {
            CacheModel::Ideal => "ideal",
            CacheModel::OpenAi => "openai",
            CacheModel::Anthropic => "anthropic",
            CacheModel::Gemini => "gemini",
        }
    }

    pub fn parse(s: &str) -> Result<CacheModel, CacheModelError> {
        CacheModel::ALL.into_iter().find(|m| m.name() == s).ok_or_else(|| CacheModelError(s.to_string()))
    }

    /// The default model for a slug (spec §4): vendor `anthropic` or a name starting `claude` →
    /// anthropic; vendor `openai` or a name `gpt-…` / `o<digit>…` → openai; vendor `google` or a
    /// name starting `gemini` → gemini; else ideal. Case-insensitive.
    pub fn for_slug(slug: &str) -> CacheModel {
        let slug = slug.trim().to_ascii_lowercase();
        // The name is the canonical model (`cache::prices::normalize`: Bedrock, Vertex and proxy
        // forms of one model are one name).
        let canonical = super::prices::normalize(&slug);
        let (vendor, name) = match slug.split_once('/') {
            Some((v, _)) => (v, canonical.as_str()),
            None => ("", canonical.as_str()),
        };
        let b = name.as_bytes();
        if vendor == "anthropic" || name.starts_with("claude") {
            CacheModel::Anthropic
        } else if vendor == "openai"
            || name.starts_with("gpt-")
            || (b.len() >= 2 && b[0] == b'o' && b[1].is_ascii_digit())
        {
            CacheModel::OpenAi
        } else if vendor == "google" || name.starts_with("gemini") {
            CacheModel::Gemini
        } else {
            CacheModel::Ideal
        }
    }
}

impl std::fmt::Display for CacheModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A 128-bit key of a block's canonical bytes (or of a prefix of keys).
pub type Key = u128;

/// Hashes bytes to a [`Key`] (XXH3-128 under this process's random seed).
pub fn key_of(bytes: &[u8]) -> Key {
    hash::content_key(process_seed(), bytes)
}

/// The key of a block: equal for two blocks exactly when their canonical bytes are
/// ([`hash::block_key`]: no canonical JSON is written).
pub fn block_key(b: &Block) -> Key {
    hash::block_key(process_seed(), b)
}

/// The key of a prefix: the previous prefix's key chained with the next block's.
fn chain(prev: Key, next: Key) -> Key {
    let mut b = [0u8; 32];
    b[..16].copy_from_slice(&prev.to_le_bytes());
    b[16..].copy_from_slice(&next.to_le_bytes());
    hash::content_key(process_seed() ^ 0x5a5a_c3c3, &b)
}

/// A request as the cache sees it.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Key of each block.
    pub keys: Vec<Key>,
    /// Tokens of each block (framing excluded).
    pub tokens: Vec<u64>,
    /// Leading blocks that form the system part (1 when the first block is `system`, else 0).
    pub system_len: usize,
    /// The time of the turn (ms since the epoch), from the `ts` of its `assistant` record.
    pub time_ms: Option<i64>,
    /// `ph[L]`: chained hash of the first L keys (`ph[0]` is the empty prefix).
    ph: Vec<Key>,
    /// `cum[L]`: tokens of the first L blocks.
    cum: Vec<u64>,
}

impl Request {
    pub fn new(keys: Vec<Key>, tokens: Vec<u64>, system_len: usize, time_ms: Option<i64>) -> Request {
        assert_eq!(keys.len(), tokens.len(), "one token count per block");
        let fresh: Vec<(Key, u64)> = keys.into_iter().zip(tokens).collect();
        let mut r = Request::default();
        r.replace_tail(0, &fresh, system_len, time_ms);
        r
    }

    /// Turns this request into the next one: keeps the first `keep` blocks, appends `fresh`
    /// (key and tokens of each new block) and returns the keys of the blocks it dropped. Only
    /// the appended blocks are hashed into the prefix chain.
    pub fn replace_tail(
        &mut self,
        keep: usize,
        fresh: &[(Key, u64)],
        system_len: usize,
        time_ms: Option<i64>,
    ) -> Vec<Key> {
        let keep = keep.min(self.len());
        let gone = self.keys.split_off(keep);
        self.tokens.truncate(keep);
        self.ph.truncate(keep + 1);
        self.cum.truncate(keep + 1);
        if self.ph.is_empty() {
            self.ph.push(0);
            self.cum.push(0);
        }
        for &(k, t) in fresh {
            self.keys.push(k);
            self.tokens.push(t);
            self.ph.push(chain(*self.ph.last().unwrap_or(&0), k));
            self.cum.push(self.cum.last().unwrap_or(&0) + t);
        }
        self.system_len = system_len.min(self.keys.len());
        self.time_ms = time_ms;
        gone
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Prompt tokens: framing plus every block.
    pub fn prompt(&self) -> u64 {
        FRAMING + self.block_tokens()
    }

    /// Tokens of the blocks (framing excluded).
    pub fn block_tokens(&self) -> u64 {
        *self.cum.last().unwrap_or(&0)
    }

    /// Tokens of the first `l` blocks.
    pub fn prefix_tokens(&self, l: usize) -> u64 {
        self.cum[l.min(self.len())]
    }

    /// Length in blocks of the longest common prefix with `other`.
    pub fn common_prefix(&self, other: &Request) -> usize {
        common_prefix(&self.ph, &other.ph)
    }
}

/// Longest L with a[L] == b[L] (prefix hashes agree on a prefix-closed range: binary search).
fn common_prefix(a: &[Key], b: &[Key]) -> usize {
    let n = a.len().min(b.len());
    if n == 0 {
        return 0;
    }
    // Invariant: a[lo] == b[lo] (both 0 at L = 0); a[hi] != b[hi] or hi == n - 1 and equal.
    let (mut lo, mut hi) = (0usize, n - 1);
    if a[hi] == b[hi] {
        return hi;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if a[mid] == b[mid] {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// What the cache did with one request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Outcome {
    /// Prompt tokens (framing included).
    pub prompt: u64,
    /// Tokens served from the cache.
    pub cached: u64,
    /// Tokens billed as a cache write (anthropic only).
    pub write: u64,
    /// Leading blocks the cached part covers (before rounding).
    pub cached_blocks: usize,
}

impl Outcome {
    /// Uncached input tokens.
    pub fn new_tokens(&self) -> u64 {
        self.prompt - self.cached
    }
}

#[derive(Debug, Clone)]
struct Entry {
    ph: Vec<Key>,
    last_use: i64,
}

/// A prompt cache fed request by request.
#[derive(Debug, Clone)]
pub struct Simulator {
    model: CacheModel,
    /// Entry lifetime after the last use (ms): [`TTL_MS`], or an hour for a session that writes
    /// one-hour entries ([`Simulator::with_ttl`]).
    ttl_ms: i64,
    /// anthropic: entries of at most this many blocks live `long_ttl_ms` instead (a harness that
    /// caches its system prompt and tools for an hour, [`Simulator::with_long_prefix`]).
    long: (usize, i64),
    /// openai / gemini: whole requests (none a prefix of a later one).
    entries: Vec<Entry>,
    /// ideal: the prefix hash of every prefix ever sent (nothing expires).
    sent: FxHashSet<Key>,
    /// anthropic: prefix hash → (length in blocks, last use). Keys are already hashes: Fx.
    points: FxHashMap<Key, (usize, i64)>,
    /// Last known time, used for requests whose `ts` did not parse.
    now: i64,
}

impl Simulator {
    pub fn new(model: CacheModel) -> Simulator {
        Simulator {
            model,
            ttl_ms: TTL_MS,
            long: (0, TTL_MS),
            entries: Vec::new(),
            sent: FxHashSet::default(),
            points: FxHashMap::default(),
            now: 0,
        }
    }

    /// The same simulator with (anthropic) entries of at most `blocks` blocks living `ttl_ms`.
    pub fn with_long_prefix(mut self, blocks: usize, ttl_ms: i64) -> Simulator {
        self.long = (blocks, ttl_ms);
        self
    }

    /// The same simulator with entries living `ttl_ms` after their last use.
    pub fn with_ttl(mut self, ttl_ms: i64) -> Simulator {
        self.ttl_ms = ttl_ms;
        self
    }

    pub fn model(&self) -> CacheModel {
        self.model
    }

    /// Serves `req` from the cache, then stores it as the model says.
    pub fn step(&mut self, req: &Request) -> Outcome {
        // A missing or unparsable time is "no time passed since the previous request".
        let now = req.time_ms.unwrap_or(self.now).max(i64::MIN + 1);
        self.now = now;
        match self.model {
            CacheModel::Anthropic => self.step_anthropic(req, now),
            CacheModel::Ideal => self.step_ideal(req),
            m => self.step_prefix(req, now, m),
        }
    }

    /// The provider lost what its cache held of `req` past its first `tokens` tokens (a recorded
    /// cache loss replayed, `cache::pricing::Environment`): entries along `req`'s prefix are cut
    /// back to its longest whole-block prefix within `tokens`; entries elsewhere stay (`ideal`,
    /// which keeps sent prefixes rather than entries, keeps only that cut prefix).
    pub fn forget_beyond(&mut self, req: &Request, tokens: u64) {
        let lim = req.cum.partition_point(|&t| t <= tokens).saturating_sub(1);
        if self.model == CacheModel::Anthropic {
            for l in lim + 1..=req.len() {
                if self.points.get(&req.ph[l]).is_some_and(|(len, _)| *len == l) {
                    self.points.remove(&req.ph[l]);
                }
            }
        } else if self.model == CacheModel::Ideal {
            // `ideal` keeps prefixes, not entries: keep only the cut prefix of this request, so
            // every prefix of a sent prefix is still sent (the binary search of `step_ideal`).
            self.sent.clear();
            self.sent.extend(&req.ph[..=lim.min(req.len())]);
        } else {
            for e in &mut self.entries {
                if common_prefix(&e.ph, &req.ph) > lim {
                    e.ph.truncate(lim + 1);
                }
            }
        }
    }

    /// `ideal`: the longest prefix ever sent is read. Every prefix of a sent prefix was sent, so
    /// the prefixes of `req` found in [`Simulator::sent`] are its first ones: a binary search,
    /// and only the prefixes after them are added. A step costs O(log blocks + new blocks);
    /// keeping whole requests cost O(requests kept × log blocks), and every rewritten prefix
    /// kept one more (issue 15: `tokens --per-turn` grew faster than the journal).
    fn step_ideal(&mut self, req: &Request) -> Outcome {
        let known = req.ph.partition_point(|k| self.sent.contains(k));
        self.sent.extend(&req.ph[known..]);
        let best = known.saturating_sub(1);
        let cached = req.prefix_tokens(best);
        Outcome { prompt: req.prompt(), cached, write: 0, cached_blocks: if cached > 0 { best } else { 0 } }
    }

    /// openai / gemini: whole requests kept as entries (none a prefix of a later one), each read
    /// by its common prefix with the request and dropped after [`Simulator::ttl_ms`] unused.
    fn step_prefix(&mut self, req: &Request, now: i64, m: CacheModel) -> Outcome {
        let ttl = self.ttl_ms;
        self.entries.retain(|e| alive(e.last_use, now, ttl));
        let lcps: Vec<usize> = self.entries.iter().map(|e| common_prefix(&e.ph, &req.ph)).collect();
        let best = lcps.iter().copied().max().unwrap_or(0);
        let matched = req.prefix_tokens(best);
        let cached = match m {
            CacheModel::Gemini if matched >= MIN_TOKENS => matched,
            CacheModel::OpenAi if matched >= MIN_TOKENS => matched / OPENAI_STEP * OPENAI_STEP,
            _ => 0,
        };
        // The entries that served the hit are used now; entries the new request extends are
        // dominated by it (it matches at least as much and lives at least as long) and go.
        let mut keep = Vec::with_capacity(self.entries.len() + 1);
        for (mut e, l) in std::mem::take(&mut self.entries).into_iter().zip(lcps) {
            if l == e.ph.len() - 1 {
                continue;
            }
            if cached > 0 && l == best {
                e.last_use = now;
            }
            keep.push(e);
        }
        keep.push(Entry { ph: req.ph.clone(), last_use: now });
        self.entries = keep;
        Outcome { prompt: req.prompt(), cached, write: 0, cached_blocks: if cached > 0 { best } else { 0 } }
    }

    fn step_anthropic(&mut self, req: &Request, now: i64) -> Outcome {
        let (ttl, long) = (self.ttl_ms, self.long);
        self.points.retain(|_, (l, t)| alive(*t, now, if *l <= long.0 { long.1.max(ttl) } else { ttl }));
        let n = req.len();
        let lo = n.saturating_sub(LOOKBACK_BLOCKS - 1).max(1);
        let mut hit = None;
        for l in (lo..=n).rev() {
            if self.points.get(&req.ph[l]).is_some_and(|(len, _)| *len == l) {
                hit = Some(l);
                break;
            }
        }
        let s = req.system_len;
        if hit.is_none() && s > 0 && self.points.get(&req.ph[s]).is_some_and(|(len, _)| *len == s) {
            hit = Some(s);
        }
        let cached_blocks = hit.unwrap_or(0);
        if let Some(l) = hit {
            if let Some(p) = self.points.get_mut(&req.ph[l]) {
                p.1 = now;
            }
        }
        for l in [s, n] {
            if l > 0 && req.prefix_tokens(l) >= MIN_TOKENS {
                self.points.insert(req.ph[l], (l, now));
            }
        }
        let cached = req.prefix_tokens(cached_blocks);
        let prompt = req.prompt();
        Outcome { prompt, cached, write: prompt - cached, cached_blocks }
    }
}

fn alive(last_use: i64, now: i64, ttl_ms: i64) -> bool {
    now.saturating_sub(last_use) <= ttl_ms
}

/// Parses an RFC 3339 timestamp to milliseconds since the epoch.
pub fn parse_ts(ts: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(ts.trim()).ok().map(|t| t.timestamp_millis())
}

/// A cache break (spec §4): the request does not start with the whole previous request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BreakAt {
    /// Index (from 0) of the first block of the previous request that the new one does not
    /// repeat at the same position.
    pub block: usize,
}

/// `Some` when `cur` does not start with the whole of `prev`.
pub fn break_between(prev: &Request, cur: &Request) -> Option<BreakAt> {
    let l = prev.common_prefix(cur);
    (l < prev.len()).then_some(BreakAt { block: l })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request of blocks named by small integers, each `tok` tokens, one minute apart.
    fn req(blocks: &[u128], tok: u64, minute: i64) -> Request {
        Request::new(blocks.to_vec(), vec![tok; blocks.len()], 1, Some(minute * 60_000))
    }

    #[test]
    fn slug_defaults() {
        assert_eq!(CacheModel::for_slug("anthropic/claude-sonnet-4-5"), CacheModel::Anthropic);
        assert_eq!(CacheModel::for_slug("claude-opus-4-6"), CacheModel::Anthropic);
        assert_eq!(CacheModel::for_slug("openrouter/claude-x"), CacheModel::Anthropic, "the name after the vendor");
        assert_eq!(CacheModel::for_slug("openai/whatever"), CacheModel::OpenAi);
        assert_eq!(CacheModel::for_slug("gpt-5.3-codex"), CacheModel::OpenAi);
        assert_eq!(CacheModel::for_slug("amazon-bedrock/us.anthropic.claude-opus-4-6-v1"), CacheModel::Anthropic);
        assert_eq!(CacheModel::for_slug("claude-opus-4-6@20260101"), CacheModel::Anthropic);
        assert_eq!(CacheModel::for_slug("o3-mini"), CacheModel::OpenAi);
        assert_eq!(CacheModel::for_slug("ollama/o1x"), CacheModel::OpenAi);
        assert_eq!(CacheModel::for_slug("opus"), CacheModel::Ideal);
        assert_eq!(CacheModel::for_slug("google/x"), CacheModel::Gemini);
        assert_eq!(CacheModel::for_slug("gemini-2.5-flash"), CacheModel::Gemini);
        assert_eq!(CacheModel::for_slug("ollama/qwen2.5-coder:32b"), CacheModel::Ideal);
        assert_eq!(CacheModel::for_slug(""), CacheModel::Ideal);
    }

    #[test]
    fn forget_beyond_cuts_the_entries_along_the_request() {
        for m in [CacheModel::OpenAi, CacheModel::Anthropic, CacheModel::Ideal] {
            let mut s = Simulator::new(m);
            s.step(&req(&(1..=20).collect::<Vec<_>>(), 100, 0));
            let next = req(&(1..=21).collect::<Vec<_>>(), 100, 1);
            let mut lost = s.clone();
            lost.forget_beyond(&next, 1_250);
            assert!(lost.step(&next).cached <= 1_250, "{m}: at most the first 12 blocks survive");
            assert!(s.step(&next).cached >= 1_920, "{m}: without the loss the whole previous request is read");
        }
        // Entries off the request's path stay.
        let mut s = Simulator::new(CacheModel::OpenAi);
        s.step(&req(&(100..=120).collect::<Vec<_>>(), 100, 0));
        s.forget_beyond(&req(&(1..=21).collect::<Vec<_>>(), 100, 1), 0);
        assert_eq!(s.step(&req(&(100..=121).collect::<Vec<_>>(), 100, 2)).cached, 2_048);
    }

    #[test]
    fn ideal_is_the_longest_common_prefix_forever() {
        let mut s = Simulator::new(CacheModel::Ideal);
        assert_eq!(s.step(&req(&[1, 2, 3], 10, 0)).cached, 0);
        let o = s.step(&req(&[1, 2, 3, 4], 10, 0));
        assert_eq!((o.prompt, o.cached, o.cached_blocks), (43, 30, 3));
        // Any earlier request counts, even a day later.
        let o = s.step(&req(&[1, 2, 9], 10, 24 * 60));
        assert_eq!(o.cached, 20);
        let o = s.step(&req(&[1, 2, 3, 4, 5], 10, 24 * 60));
        assert_eq!(o.cached, 40);
        assert_eq!(s.step(&req(&[7], 10, 24 * 60)).cached, 0);
    }

    proptest::proptest! {
        /// Regression (issue 15, `tokens --per-turn` super-linear): the `ideal` cache reads the
        /// longest common block prefix with any earlier request — checked against every earlier
        /// request, over sessions that append, rewrite and shorten.
        #[test]
        fn ideal_reads_the_longest_prefix_of_any_earlier_request(
            ops in proptest::collection::vec((0usize..3, 0usize..12, 1u128..6), 1..40)
        ) {
            let mut s = Simulator::new(CacheModel::Ideal);
            let mut sent: Vec<Vec<u128>> = Vec::new();
            let mut cur: Vec<u128> = Vec::new();
            for (op, at, key) in ops {
                match op {
                    0 => cur.push(key),
                    1 => { let i = at.min(cur.len()); cur.truncate(i); cur.push(key); }
                    _ => cur.truncate(at.min(cur.len())),
                }
                let lcp = |a: &[u128]| a.iter().zip(&cur).take_while(|(x, y)| x == y).count();
                let want = sent.iter().map(|a| lcp(a)).max().unwrap_or(0);
                let o = s.step(&req(&cur, 10, 0));
                proptest::prop_assert_eq!(o.cached, 10 * want as u64);
                proptest::prop_assert_eq!(o.cached_blocks, want);
                sent.push(cur.clone());
            }
        }
    }

    #[test]
    fn openai_minimum_and_rounding() {
        let mut s = Simulator::new(CacheModel::OpenAi);
        // 10 blocks of 100 tokens = 1000 < 1024: nothing cached.
        let ten: Vec<u128> = (1..=10).collect();
        s.step(&req(&ten, 100, 0));
        let eleven: Vec<u128> = (1..=11).collect();
        assert_eq!(s.step(&req(&eleven, 100, 1)).cached, 0, "1000-token match is below 1024");
        // 11 blocks = 1100 matched → rounded down to 1024 + 128·0.
        let twelve: Vec<u128> = (1..=12).collect();
        assert_eq!(s.step(&req(&twelve, 100, 2)).cached, 1024);
        // 12 blocks = 1200 → 1152.
        let o = s.step(&req(&(1..=13).collect::<Vec<_>>(), 100, 3));
        assert_eq!((o.cached, o.write, o.prompt), (1152, 0, 1303));
        // Gemini: same minimum, no rounding.
        let mut g = Simulator::new(CacheModel::Gemini);
        g.step(&req(&ten, 100, 0));
        assert_eq!(g.step(&req(&eleven, 100, 1)).cached, 0);
        assert_eq!(g.step(&req(&twelve, 100, 2)).cached, 1100);
    }

    #[test]
    fn openai_ttl_from_ts_refreshed_on_use() {
        let mut s = Simulator::new(CacheModel::OpenAi);
        let a: Vec<u128> = (1..=20).collect();
        s.step(&req(&a, 100, 0));
        // 5 minutes later: still alive (inclusive), and used → refreshed.
        assert_eq!(s.step(&req(&a, 100, 5)).cached, 1920);
        // A diverging request at minute 9 uses the shared prefix of 10 blocks.
        let mut b: Vec<u128> = (1..=10).collect();
        b.push(99);
        assert_eq!(s.step(&req(&b, 100, 9)).cached, 0, "a 1000-token match is below 1024: no use");
        // Minute 11 is 6 minutes after the last use of `a` (minute 5): expired.
        assert_eq!(s.step(&req(&a, 100, 11)).cached, 0);
        // Times come from ts: 5 min 1 ms later is too late.
        let mut t = Simulator::new(CacheModel::OpenAi);
        t.step(&Request::new(a.clone(), vec![100; 20], 1, Some(0)));
        assert_eq!(t.step(&Request::new(a.clone(), vec![100; 20], 1, Some(TTL_MS + 1))).cached, 0);
        assert_eq!(parse_ts("2026-11-29T17:25:48.608Z"), Some(1_795_973_148_608));
        assert_eq!(parse_ts("2026-11-29T18:25:48.608+01:00"), Some(1_795_973_148_608));
        assert_eq!(parse_ts("yesterday"), None);
    }

    #[test]
    fn entry_refresh_keeps_the_whole_entry_alive() {
        // a at 0; b shares 15 of its 20 blocks at minute 4 (a is used, refreshed to 4);
        // a again at minute 8: 8 − 4 ≤ 5, so all of a is still cached.
        let mut s = Simulator::new(CacheModel::Gemini);
        let a: Vec<u128> = (1..=20).collect();
        s.step(&req(&a, 100, 0));
        let mut b: Vec<u128> = (1..=15).collect();
        b.push(77);
        assert_eq!(s.step(&req(&b, 100, 4)).cached, 1500);
        assert_eq!(s.step(&req(&a, 100, 8)).cached, 2000);
    }

    #[test]
    fn anthropic_breakpoints_lookback_and_billing() {
        let mut s = Simulator::new(CacheModel::Anthropic);
        // System block of 1200 tokens, then 100-token blocks.
        let mk = |n: u128, minute: i64| {
            let keys: Vec<u128> = (0..n).collect();
            let mut tok = vec![100; n as usize];
            tok[0] = 1200;
            Request::new(keys, tok, 1, Some(minute * 60_000))
        };
        let o = s.step(&mk(3, 0));
        assert_eq!((o.prompt, o.cached, o.write), (1403, 0, 1403), "first request: all written");
        let o = s.step(&mk(5, 1));
        assert_eq!((o.cached, o.write, o.cached_blocks), (1400, 203, 3), "reads the last-block entry of turn 1");
        // 25 more blocks: the 5-block entry ends outside the last 20 blocks; only the system
        // breakpoint (1200 tokens) is readable.
        let o = s.step(&mk(30, 2));
        assert_eq!((o.cached, o.cached_blocks), (1200, 1));
        assert_eq!(o.write, o.prompt - 1200);
        // The next request reads the 30-block entry (within its last 20).
        assert_eq!(s.step(&mk(40, 3)).cached_blocks, 30);
        // 6 minutes of silence: everything expired.
        assert_eq!(s.step(&mk(41, 9)).cached, 0);
    }

    #[test]
    fn anthropic_minimum_for_writes() {
        let mut s = Simulator::new(CacheModel::Anthropic);
        let small = Request::new(vec![1, 2], vec![500, 500], 1, Some(0));
        s.step(&small);
        // Neither the 500-token system entry nor the 1000-token request was written.
        let o = s.step(&Request::new(vec![1, 2, 3], vec![500, 500, 500], 1, Some(1)));
        assert_eq!(o.cached, 0);
        // That request (1500 tokens) was written: an identical request reads it all.
        let o = s.step(&Request::new(vec![1, 2, 3], vec![500, 500, 500], 1, Some(2)));
        assert_eq!((o.cached, o.write), (1500, 3), "framing tokens are never cached");
    }

    #[test]
    fn breaks() {
        let a = req(&[1, 2, 3], 10, 0);
        assert_eq!(break_between(&a, &req(&[1, 2, 3, 4], 10, 0)), None);
        assert_eq!(break_between(&a, &req(&[1, 2, 3], 10, 0)), None);
        assert_eq!(break_between(&a, &req(&[1, 5, 3, 4], 10, 0)), Some(BreakAt { block: 1 }));
        assert_eq!(break_between(&a, &req(&[1, 2], 10, 0)), Some(BreakAt { block: 2 }));
        assert_eq!(common_prefix(&a.ph, &req(&[9], 1, 0).ph), 0);
    }
}
