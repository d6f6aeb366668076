//! The tiktoken estimator of `strategies.md` §3: `encode_ordinary` token counts (computed by
//! [`super::fast`], tiktoken-rs with `CTXJ_TOKENIZER=tiktoken`), the piece rule for long texts, a
//! memo per distinct content (preloaded from the persistent memo of [`super::memo`] when the
//! binary chose one) and parallel counting.
//!
//! * The encoders are built once per process ([`OnceLock`]); building o200k takes ~0.2 s.
//! * n(s): texts of at most [`WHOLE_LIMIT`] bytes are counted whole; longer texts are cut into
//!   consecutive pieces of at most [`PIECE_LIMIT`] bytes ([`pieces`]), each counted on its own and
//!   summed. tiktoken's regex engine (fancy-regex) fails with "Max stack size exceeded" on long
//!   whitespace runs (a million spaces); bounded pieces keep every call far below that (see
//!   `docs/tokens-and-cache.md` for the adversarial check of 8 KiB and 64 KiB inputs).
//! * A memo maps a 128-bit hash of each distinct string (and of each piece of a long one; XXH3
//!   under a seed, [`memo::Key`]) to its count, so a text repeated on every turn is tokenized
//!   once. It is sharded by hash so rayon workers rarely contend. The persistent memo's entries
//!   stay in the one read-only map of [`memo::Store::loaded`]; an estimator copies an entry into its own
//!   shards on first use, so making an estimator costs nothing however large the memo is.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use rayon::prelude::*;
use rustc_hash::FxHashMap;

pub use super::encoding::{Encoding, EncodingError};
use super::memo::{self, Key, Store};
use super::Estimator;
use crate::projection::Block;

/// Texts up to this many bytes are counted whole (spec §3).
pub const WHOLE_LIMIT: usize = 65_536;
/// Longer texts are counted as pieces of at most this many bytes (spec §3).
pub const PIECE_LIMIT: usize = 8_192;

/// The byte ranges n(s) is counted over (spec §3): the whole text when it has at most
/// [`WHOLE_LIMIT`] bytes, else consecutive pieces of at most [`PIECE_LIMIT`] bytes, each ending
/// after the last `\n` inside it when there is one, else at the last character boundary.
pub fn pieces(s: &str) -> Vec<std::ops::Range<usize>> {
    pieces_with(s, WHOLE_LIMIT, PIECE_LIMIT)
}

#[allow(clippy::single_range_in_vec_init)] // one range is the answer, not a typo for a range Vec
fn pieces_with(s: &str, whole: usize, limit: usize) -> Vec<std::ops::Range<usize>> {
    if s.len() <= whole {
        return vec![0..s.len()];
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(s.len() / limit + 1);
    let mut pos = 0;
    while pos < s.len() {
        if s.len() - pos <= limit {
            out.push(pos..s.len());
            break;
        }
        let window = &bytes[pos..pos + limit];
        let end = match memchr::memrchr(b'\n', window) {
            Some(i) => pos + i + 1,
            None => {
                let mut e = pos + limit;
                while !s.is_char_boundary(e) {
                    e -= 1;
                }
                e
            }
        };
        out.push(pos..end);
        pos = end;
    }
    out
}

const SHARDS: usize = 64;

/// One shard of an estimator's memo: the counts this estimator used (keys are already hashes,
/// so the map hashes them with Fx).
type Shard = Mutex<FxHashMap<Key, u64>>;

/// Memo hit/miss figures of a [`TiktokenEstimator`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct MemoStats {
    /// Look-ups answered from the memo.
    pub hits: u64,
    /// Look-ups that ran the tokenizer.
    pub misses: u64,
    /// Bytes that ran through the tokenizer.
    pub bytes_tokenized: u64,
    /// Look-ups answered from the persistent memo of earlier runs (each distinct text once; later
    /// look-ups of it are `hits`). `stored + misses` is what `misses` would be without it.
    pub stored: u64,
}

impl MemoStats {
    /// Share of look-ups answered from the memo (0 when there were none).
    pub fn hit_rate(&self) -> f64 {
        let n = self.hits + self.misses;
        if n == 0 {
            0.0
        } else {
            self.hits as f64 / n as f64
        }
    }
}

/// The tiktoken estimator: exact `encode_ordinary` counts under the piece rule, memoized.
pub struct TiktokenEstimator {
    encoding: Encoding,
    /// The seed of the memo keys: the persistent memo file's, else this process's.
    seed: u64,
    shards: Vec<Shard>,
    /// The persistent memo as its store read it once ([`Store::loaded`]), read-only and shared.
    base: Option<Arc<memo::Loaded>>,
    hits: AtomicU64,
    misses: AtomicU64,
    bytes: AtomicU64,
    /// Count redaction markers as the text they replaced ([`super::redacted`]; imported sessions).
    redactions: bool,
    stored: AtomicU64,
    /// The persistent memo: its entries were loaded at creation ([`Store::loaded`]); what this
    /// estimator used goes to [`Store::keep`] when it is dropped.
    disk: Option<Arc<Store>>,
}

impl TiktokenEstimator {
    /// Counts `[REDACTED_… len=N sha=…]` markers as N characters ([`super::redacted`]).
    pub fn with_redactions(mut self, on: bool) -> TiktokenEstimator {
        self.redactions = on;
        self
    }

    /// An estimator for `encoding` with an empty memo (the encoder itself is shared).
    pub fn new(encoding: Encoding) -> TiktokenEstimator {
        TiktokenEstimator {
            encoding,
            seed: crate::projection::hash::process_seed(),
            shards: (0..SHARDS).map(|_| Mutex::new(FxHashMap::default())).collect(),
            base: None,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            redactions: false,
            stored: AtomicU64::new(0),
            disk: None,
        }
    }

    /// An estimator whose memo starts with the persistent memo of `store` (see [`super::memo`],
    /// each file read once per store) and hands what it used to [`Store::keep`] when dropped, for
    /// [`Store::flush`] to write; `None`: [`TiktokenEstimator::new`].
    pub fn with_memo(encoding: Encoding, store: Option<&Arc<Store>>) -> TiktokenEstimator {
        let mut e = TiktokenEstimator::new(encoding);
        if let Some(st) = store {
            let base = st.loaded(encoding);
            e.seed = base.seed;
            e.base = Some(base);
            e.disk = Some(st.clone());
        }
        e
    }

    /// Hands the entries this estimator used to the persistent memo ([`Store::keep`]; written
    /// by [`Store::flush`]) when there is one and something is new.
    fn keep_memo(&self) {
        let Some(store) = &self.disk else { return };
        if self.misses.load(Ordering::Relaxed) == 0 {
            return;
        }
        let used: Vec<(Key, u64)> = self
            .shards
            .iter()
            .flat_map(|m| {
                let m = m.lock().unwrap_or_else(|e| e.into_inner());
                m.iter().map(|(k, n)| (*k, *n)).collect::<Vec<_>>()
            })
            .collect();
        store.keep(self.encoding, self.seed, used);
    }

    /// The encoding this estimator counts in.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// Memo figures so far.
    pub fn stats(&self) -> MemoStats {
        MemoStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            bytes_tokenized: self.bytes.load(Ordering::Relaxed),
            stored: self.stored.load(Ordering::Relaxed),
        }
    }

    /// Distinct strings this estimator has counted or used from the persistent memo.
    pub fn memo_len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().map(|m| m.len()).unwrap_or(0)).sum()
    }

    fn shard(&self, k: &Key) -> &Shard {
        &self.shards[(k.0 as usize) % SHARDS]
    }

    /// The key of a text under this estimator's seed.
    fn key(&self, s: &str) -> Key {
        Key::of(self.seed, s)
    }

    /// The memoized count of a text, counting the look-up as a hit, or as a first `stored` use
    /// of the persistent memo's entry (copied into this estimator's shard then).
    fn lookup(&self, k: &Key) -> Option<u64> {
        // A poisoned shard only means another thread panicked mid-insert; the map is still valid.
        let mut m = self.shard(k).lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&n) = m.get(k) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Some(n);
        }
        let n = *self.base.as_ref()?.counts.get(k)?;
        // The file's entries were checked when read; a count its text cannot hold is never used.
        if !memo::plausible(k.1, n) {
            return None;
        }
        m.insert(*k, n);
        self.stored.fetch_add(1, Ordering::Relaxed);
        Some(n)
    }

    fn store(&self, k: Key, n: u64) {
        let mut m = self.shard(&k).lock().unwrap_or_else(|e| e.into_inner());
        m.insert(k, n);
    }

    /// Tokens of one piece (no splitting), memoized.
    fn count_piece(&self, s: &str) -> u64 {
        if s.is_empty() {
            return 0;
        }
        let k = self.key(s);
        if let Some(n) = self.lookup(&k) {
            return n;
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(s.len() as u64, Ordering::Relaxed);
        let n = encode_len(self.encoding, s);
        self.store(k, n);
        n
    }

    /// Counts many strings, in parallel; the result is in input order.
    pub fn count_many(&self, texts: &[&str]) -> Vec<u64> {
        texts.par_iter().map(|s| self.count(s)).collect()
    }

    /// Tokens of each block (framed as [`Estimator::block`]), counted in parallel.
    pub fn blocks(&self, blocks: &[Block]) -> Vec<u64> {
        blocks.par_iter().map(|b| self.block(b)).collect()
    }
}

/// `encode_ordinary(s).len()` of one piece. tiktoken unwraps the regex engine's result, so an
/// input beyond what the piece rule admits could panic inside it; the bound of spec §3 keeps
/// that from happening (checked adversarially in the tests), and should it ever happen anyway
/// the piece is halved at a character boundary and counted in parts rather than taking the
/// process down.
fn encode_len(enc: Encoding, s: &str) -> u64 {
    if !reference_counter() {
        // The exact fast counter; should it ever panic, tiktoken-rs counts this piece instead.
        if let Ok(n) = std::panic::catch_unwind(|| super::fast::count(enc, s)) {
            return n;
        }
        FALLBACKS.fetch_add(1, Ordering::Relaxed);
    }
    let bpe = enc.bpe();
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| bpe.encode_ordinary(s).len() as u64)) {
        Ok(n) => n,
        Err(_) if s.len() > 1 => {
            FALLBACKS.fetch_add(1, Ordering::Relaxed);
            let mut mid = s.len() / 2;
            while !s.is_char_boundary(mid) {
                mid -= 1;
            }
            if mid == 0 {
                return s.len() as u64;
            }
            encode_len(enc, &s[..mid]) + encode_len(enc, &s[mid..])
        }
        Err(_) => 1,
    }
}

impl Drop for TiktokenEstimator {
    fn drop(&mut self) {
        self.keep_memo();
    }
}

static FALLBACKS: AtomicU64 = AtomicU64::new(0);

/// Whether tiktoken-rs counts instead of [`super::fast`]: `CTXJ_TOKENIZER=tiktoken` (read once per
/// process). The counts are the same; this exists to check a suspected difference from the
/// command line and to time the reference in benchmarks.
pub fn reference_counter() -> bool {
    static REFERENCE: OnceLock<bool> = OnceLock::new();
    *REFERENCE.get_or_init(|| std::env::var("CTXJ_TOKENIZER").is_ok_and(|v| v.trim() == "tiktoken"))
}

/// How many times in this process a piece made a counter panic and was counted another way
/// (the fast counter by tiktoken-rs, tiktoken-rs in halves; expected: never; the tests assert it).
pub fn fallbacks() -> u64 {
    FALLBACKS.load(Ordering::Relaxed)
}

impl Estimator for TiktokenEstimator {
    fn count(&self, s: &str) -> u64 {
        if self.redactions {
            if let Some(n) = super::redacted::count(s, |t| self.count_text(t)) {
                return n;
            }
        }
        self.count_text(s)
    }
}

impl TiktokenEstimator {
    /// n(s) of spec §3: the piece rule, memoized.
    fn count_text(&self, s: &str) -> u64 {
        if s.len() <= WHOLE_LIMIT {
            return self.count_piece(s);
        }
        // A long text: memoize it whole too, so a repeated 1 MB result is not even re-split.
        let k = self.key(s);
        if let Some(n) = self.lookup(&k) {
            return n;
        }
        // Saturating: a sum never wraps, whatever a count says (issue 31).
        let n = pieces(s).into_par_iter().map(|r| self.count_piece(&s[r])).reduce(|| 0, u64::saturating_add);
        self.store(k, n);
        n
    }
}

#[cfg(test)]
#[path = "estimator_tests.rs"]
mod tests;
