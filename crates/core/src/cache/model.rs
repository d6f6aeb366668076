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
//! | `anthropic` | entries at the end of the system block and at the last block — and at the request's second breakpoint, if any (Claude Code: the end of the previous response) — (≥ 1,024 tokens); reads the longest live entry that is a prefix ending at the system block or within the 20 blocks before a breakpoint; 5 min, refreshed on a hit; the uncached part is billed as a write |
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
    /// anthropic: a second breakpoint, after this many blocks (0: none). Claude Code marks the
    /// last two messages, so the end of the previous response is a breakpoint too
    /// ([`Request::set_mark`]).
    pub mark: usize,
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
            self.cum.push(self.cum.last().unwrap_or(&0).saturating_add(t));
        }
        self.system_len = system_len.min(self.keys.len());
        self.time_ms = time_ms;
        self.mark = 0;
        gone
    }

    /// Replaces the first `head.len()` blocks (keys and tokens) and hashes the request again:
    /// the unrecorded prefix of an imported session whose size changed
    /// (`strategy::UnrecordedPrefix::segments`).
    pub fn set_head(&mut self, head: &[(Key, u64)]) {
        let mut all: Vec<(Key, u64)> = self.keys.iter().copied().zip(self.tokens.iter().copied()).collect();
        for (slot, &h) in all.iter_mut().zip(head) {
            *slot = h;
        }
        let (system_len, time_ms, mark) = (self.system_len, self.time_ms, self.mark);
        self.replace_tail(0, &all, system_len, time_ms);
        self.mark = mark;
    }

    /// Sets the second breakpoint ([`Request::mark`]) after block `mark` (0, or one past the end:
    /// none).
    pub fn set_mark(&mut self, mark: usize) {
        self.mark = if mark < self.len() { mark } else { 0 };
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
        FRAMING.saturating_add(self.block_tokens())
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

    /// The provider's record says this request read `read` tokens from its cache (at most the
    /// prompt): where the simulated cache, which keeps whole blocks, read less, the rest is read
    /// rather than written — wherever the provider's read ends inside a block. A session's first
    /// call (`cache::replay`), the first call after a model switch and a replayed loss
    /// (`cache::caches`).
    pub fn read_at_least(&mut self, read: u64) {
        let read = read.min(self.prompt);
        if read > self.cached {
            self.write = self.write.saturating_sub(read - self.cached);
            self.cached = read;
        }
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
    /// Nothing is cached (openai, gemini) or written (anthropic) below this many tokens: the
    /// model's minimum cacheable prompt ([`Simulator::with_min`]), else [`MIN_TOKENS`].
    min: u64,
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
            min: MIN_TOKENS,
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

    /// The same simulator with `tokens` as the minimum cacheable prompt (the model's, as its
    /// provider documents it: Anthropic 1,024–4,096 by model, OpenAI 1,024, Gemini 2,048–4,096).
    pub fn with_min(mut self, tokens: u64) -> Simulator {
        self.min = tokens;
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
    /// cache loss replayed, `cache::environment::Environment`): entries along `req`'s prefix are cut
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
            // Of those, only the ones sent before.
            let known = req.ph.partition_point(|k| self.sent.contains(k)).max(1);
            self.sent.clear();
            self.sent.extend(&req.ph[..=lim.min(known - 1)]);
        } else {
            for e in &mut self.entries {
                if common_prefix(&e.ph, &req.ph) > lim {
                    e.ph.truncate(lim + 1);
                }
            }
        }
    }

    /// Serves `req` at a turn where the provider lost part of its cache and read only `read`
    /// tokens (a recorded cache loss replayed, `cache::environment::Environment`). What lies past the
    /// read is lost ([`Simulator::forget_beyond`]); the part it did read is not: the request
    /// reads at least its longest whole-block prefix within `read` that this cache held — of
    /// `held`, the blocks it shares with the previous request (the provider's own read shows an
    /// entry that long was alive, whatever lifetime this model would have given it).
    pub fn step_after_loss(&mut self, req: &Request, read: u64, held: usize) -> Outcome {
        self.forget_beyond(req, read);
        let lim = req.cum.partition_point(|&t| t <= read).saturating_sub(1).min(held).min(req.len());
        let mut o = self.step(req);
        if o.cached_blocks < lim {
            let matched = req.prefix_tokens(lim);
            let cached = match self.model {
                _ if matched < self.min => 0,
                CacheModel::OpenAi => matched / OPENAI_STEP * OPENAI_STEP,
                _ => matched,
            };
            if cached > o.cached {
                if self.model == CacheModel::Anthropic {
                    // The entry the provider read, alive from now on.
                    self.points.insert(req.ph[lim], (lim, self.now));
                    o.write = o.prompt - cached;
                }
                o.cached = cached;
                o.cached_blocks = lim;
            }
        }
        o
    }

    /// anthropic: the request's cache breakpoint lay `tail` tokens before its end (the provider
    /// billed them as input, neither read nor written: the harness marked an earlier message; the
    /// request's [`FRAMING`] is among them). The block boundary nearest to it, not before what `o`
    /// read, becomes the entry `req` wrote instead of its whole length, and `o` writes only up to
    /// it. Other models: nothing.
    pub fn unmark(&mut self, req: &Request, tail: u64, o: &mut Outcome) {
        let n = req.len();
        let tail = tail.saturating_sub(FRAMING);
        if self.model != CacheModel::Anthropic || n == 0 || tail == 0 {
            return;
        }
        let total = req.prefix_tokens(n);
        let at = (o.cached_blocks..=n).min_by_key(|&l| (total - req.prefix_tokens(l)).abs_diff(tail)).unwrap_or(n);
        if at == n {
            return;
        }
        if self.points.get(&req.ph[n]).is_some_and(|&(len, t)| len == n && t == self.now) {
            self.points.remove(&req.ph[n]);
        }
        let marked = req.prefix_tokens(at);
        if at > o.cached_blocks && marked >= self.min {
            self.points.insert(req.ph[at], (at, self.now));
        }
        let write = if marked >= self.min { marked.saturating_sub(o.cached) } else { 0 };
        o.write = o.write.min(write);
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
            CacheModel::Gemini if matched >= self.min => matched,
            CacheModel::OpenAi if matched >= self.min => matched / OPENAI_STEP * OPENAI_STEP,
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
        // Each breakpoint looks back over its last 20 blocks; the longest entry found is read.
        let mut hit = None;
        for end in [n, req.mark] {
            if end == 0 || hit.is_some_and(|h| h >= end) {
                continue;
            }
            let lo = end.saturating_sub(LOOKBACK_BLOCKS - 1).max(1);
            if let Some(l) = (lo..=end).rev().find(|&l| self.points.get(&req.ph[l]).is_some_and(|(len, _)| *len == l)) {
                hit = Some(hit.map_or(l, |h: usize| h.max(l)));
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
        for l in [s, req.mark, n] {
            if l > 0 && req.prefix_tokens(l) >= self.min {
                self.points.insert(req.ph[l], (l, now));
            }
        }
        let cached = req.prefix_tokens(cached_blocks);
        let prompt = req.prompt();
        // A request below the minimum is processed without caching: nothing is written, its
        // input is billed at the input rate (Anthropic's prompt-caching docs).
        let write = if req.prefix_tokens(n) >= self.min { prompt - cached } else { 0 };
        Outcome { prompt, cached, write, cached_blocks }
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
#[path = "model_tests.rs"]
mod tests;
