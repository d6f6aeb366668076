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
use tiktoken_rs::CoreBPE;

use super::memo::{self, Key, Store};
use super::Estimator;
use crate::projection::Block;

/// Texts up to this many bytes are counted whole (spec §3).
pub const WHOLE_LIMIT: usize = 65_536;
/// Longer texts are counted as pieces of at most this many bytes (spec §3).
pub const PIECE_LIMIT: usize = 8_192;

/// A tokenizer encoding of spec §3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Encoding {
    /// `o200k_base` (GPT-4o, GPT-4.1, GPT-5, o-series); the default.
    #[default]
    O200kBase,
    /// `cl100k_base` (GPT-4, GPT-3.5).
    Cl100kBase,
}

/// An encoding name that is neither `o200k_base` nor `cl100k_base`.
#[derive(Debug, thiserror::Error)]
#[error("unknown encoding {name:?}{}: expected o200k_base or cl100k_base", if *.from_session { " (the session's `encoding`)" } else { "" })]
pub struct EncodingError {
    /// The name given.
    pub name: String,
    /// Whether it came from the journal's `session` record rather than `--encoding`.
    pub from_session: bool,
}

impl Encoding {
    /// Every supported encoding.
    pub const ALL: [Encoding; 2] = [Encoding::O200kBase, Encoding::Cl100kBase];

    /// The tiktoken name of the encoding.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }

    /// Parses `o200k_base` / `cl100k_base` (also without the `_base` suffix).
    pub fn parse(s: &str) -> Result<Encoding, EncodingError> {
        match s.trim() {
            "o200k_base" | "o200k" => Ok(Encoding::O200kBase),
            "cl100k_base" | "cl100k" => Ok(Encoding::Cl100kBase),
            other => Err(EncodingError { name: other.to_string(), from_session: false }),
        }
    }

    /// The encoding of spec §3: `--encoding` if given, else the session's `encoding`, else
    /// `o200k_base`. An unknown name is an error either way, so every command counts a journal
    /// the same way or refuses it with the same message.
    pub fn choose(flag: Option<&str>, session: Option<&str>) -> Result<Encoding, EncodingError> {
        match (flag, session) {
            (Some(f), _) => Encoding::parse(f),
            (None, Some(s)) => Encoding::parse(s).map_err(|e| EncodingError { from_session: true, ..e }),
            (None, None) => Ok(Encoding::default()),
        }
    }

    /// The process-wide encoder (built on first use, once).
    pub fn bpe(self) -> &'static CoreBPE {
        static O200K: OnceLock<CoreBPE> = OnceLock::new();
        static CL100K: OnceLock<CoreBPE> = OnceLock::new();
        match self {
            Encoding::O200kBase => O200K.get_or_init(|| tiktoken_rs::o200k_base().expect("bundled o200k_base data")),
            Encoding::Cl100kBase => {
                CL100K.get_or_init(|| tiktoken_rs::cl100k_base().expect("bundled cl100k_base data"))
            }
        }
    }
}

impl std::fmt::Display for Encoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

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
mod tests {
    use super::*;

    #[test]
    fn short_texts_are_one_piece() {
        assert_eq!(pieces(""), std::iter::once(0..0).collect::<Vec<_>>());
        let s = "a\n".repeat(WHOLE_LIMIT / 2);
        assert_eq!(s.len(), WHOLE_LIMIT);
        assert_eq!(pieces(&s), std::iter::once(0..WHOLE_LIMIT).collect::<Vec<_>>());
    }

    #[test]
    fn pieces_end_after_the_last_newline() {
        // 10 000 bytes of 'x', a newline, then more: the first piece of 8192 holds no newline.
        let mut s = "x".repeat(5000);
        s.push('\n');
        s.push_str(&"y".repeat(70_000));
        let p = pieces(&s);
        assert_eq!(p[0], 0..5001, "ends after the newline inside the first 8192 bytes");
        assert_eq!(p[1], 5001..5001 + PIECE_LIMIT, "no newline: a full piece");
        let total: usize = p.iter().map(|r| r.len()).sum();
        assert_eq!(total, s.len());
        for w in p.windows(2) {
            assert_eq!(w[0].end, w[1].start);
        }
        assert!(p.iter().all(|r| r.len() <= PIECE_LIMIT && !r.is_empty()));
    }

    #[test]
    fn pieces_respect_char_boundaries() {
        // 3-byte characters: 8192 is not a multiple of 3, so the cut moves back to 8190.
        let s = "日".repeat(30_000);
        let p = pieces(&s);
        assert_eq!(p[0], 0..8190);
        assert!(p.iter().all(|r| s.is_char_boundary(r.start) && s.is_char_boundary(r.end)));
        // A newline right at the end of the window counts as inside it.
        let mut t = "a".repeat(8191);
        t.push('\n');
        t.push_str(&"b".repeat(70_000));
        assert_eq!(pieces(&t)[0], 0..8192);
        // A newline as the first byte after the window does not.
        let mut u = "a".repeat(8192);
        u.push('\n');
        u.push_str(&"b".repeat(70_000));
        assert_eq!(pieces(&u)[0], 0..8192);
        assert_eq!(pieces(&u)[1], 8192..8193);
    }

    /// Strings whose counts were checked once against Python `tiktoken` 0.14.0 (`encode_ordinary`,
    /// the same `.tiktoken` rank files) — an implementation independent of tiktoken-rs' Rust code.
    const FIXED: [&str; 10] = [
        "",
        "hello world",
        "Hello, world! How are you today?",
        "fn main() {\n    println!(\"héllo, wörld\");\n}\n",
        "日本語のテキストとemoji 😀🎉 mixed",
        "<|endoftext|> is ordinary text here",
        "    indented    spaces   \n\n\ttab",
        "12345678901234567890",
        r#"{"command":"cargo test -p export -- part_1 --exact --nocapture"}"#,
        "[elided: run, 872 bytes, … -p export -- part_1 --exact --nocapture]",
    ];

    #[test]
    fn known_counts_o200k() {
        let e = TiktokenEstimator::new(Encoding::O200kBase);
        let got: Vec<u64> = FIXED.iter().map(|s| e.count(s)).collect();
        assert_eq!(got, [0, 2, 9, 15, 12, 11, 7, 7, 18, 24]);
    }

    #[test]
    fn known_counts_cl100k() {
        let e = TiktokenEstimator::new(Encoding::Cl100kBase);
        let got: Vec<u64> = FIXED.iter().map(|s| e.count(s)).collect();
        assert_eq!(got, [0, 2, 9, 16, 15, 11, 7, 7, 18, 24]);
    }

    /// A 222,301-byte text (28 pieces under the rule): figures from Python tiktoken 0.14.0 with
    /// the piece rule re-implemented there.
    #[test]
    fn known_counts_of_a_long_text() {
        let mut s: String =
            (0..3000).map(|i| format!("line {i}: the quick brown fox — jumps over 日本 {}\n", i * 7)).collect();
        s.push_str(&"x".repeat(20_000));
        s.push_str(&" y".repeat(5000));
        s.push_str(&"é".repeat(9000));
        assert_eq!(s.len(), 222_301);
        assert_eq!(pieces(&s).len(), 28);
        assert_eq!(TiktokenEstimator::new(Encoding::O200kBase).count(&s), 66_357);
        assert_eq!(TiktokenEstimator::new(Encoding::Cl100kBase).count(&s), 69_357);
    }

    #[test]
    fn memo_answers_repeats() {
        let e = TiktokenEstimator::new(Encoding::O200kBase);
        assert_eq!(e.count("hello world"), 2);
        assert_eq!(e.count("hello world"), 2);
        let st = e.stats();
        assert_eq!((st.hits, st.misses), (1, 1));
        assert_eq!(e.memo_len(), 1);
        let many = e.count_many(&["a b c", "hello world", "a b c"]);
        assert_eq!(many, vec![3, 2, 3]);
    }

    /// The persistent memo is one read-only map shared by the estimators of a process: making one
    /// copies nothing, a first use of an entry counts as `stored` (per estimator), later ones as hits.
    #[test]
    fn the_persistent_memo_is_shared_not_copied() {
        let dir = tempfile::tempdir().unwrap();
        let d = Arc::new(Store::new(memo::Dir::new(dir.path()).unwrap()));
        let f = d.file(Encoding::O200kBase);
        // A planted count (the real one is 2) proves the answer comes from the file.
        memo::save(&f, Encoding::O200kBase, 99, vec![(Key::of(99, "hello world"), 7)]).unwrap();
        let a = TiktokenEstimator::with_memo(Encoding::O200kBase, Some(&d));
        assert_eq!(a.memo_len(), 0, "nothing copied at creation");
        assert_eq!((a.count("hello world"), a.count("hello world")), (7, 7));
        assert_eq!((a.stats().stored, a.stats().hits, a.stats().misses), (1, 1, 0));
        let b = TiktokenEstimator::with_memo(Encoding::O200kBase, Some(&d));
        assert_eq!((b.count("hello world"), b.count("a b c")), (7, 3));
        assert_eq!((b.stats().stored, b.stats().misses, b.memo_len()), (1, 1, 2));
        assert_eq!(a.memo_len(), 1, "one estimator's counts are not another's");
    }

    /// Issue 31: an edited memo file's counts were used as read (a planted 10^9 for a text of
    /// 11 bytes); a count its text cannot hold discards the file.
    #[test]
    fn regression_memo_edited_count_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let d = Arc::new(Store::new(memo::Dir::new(dir.path()).unwrap()));
        let f = d.file(Encoding::O200kBase);
        memo::save(&f, Encoding::O200kBase, 99, vec![(Key::of(99, "hello world"), 1_000_000_000)]).unwrap();
        let a = TiktokenEstimator::with_memo(Encoding::O200kBase, Some(&d));
        assert_eq!(a.count("hello world"), 2);
    }

    /// Issue 31: with u64::MAX counts in the memo, the sum of a long text's pieces wrapped in
    /// release builds; it saturates.
    #[test]
    fn regression_memo_u64_max_counts_do_not_wrap() {
        let e = TiktokenEstimator::new(Encoding::O200kBase);
        let s = "word ".repeat(WHOLE_LIMIT / 2);
        let ps = pieces(&s);
        assert!(ps.len() >= 2);
        for r in &ps {
            e.store(e.key(&s[r.clone()]), u64::MAX);
        }
        assert_eq!(e.count(&s), u64::MAX);
        // …and the persistent memo never hands such a count on.
        let mut counts = FxHashMap::default();
        counts.insert(Key::of(7, "hello world"), u64::MAX);
        let mut f = TiktokenEstimator::new(Encoding::O200kBase);
        f.seed = 7;
        f.base = Some(Arc::new(memo::Loaded { seed: 7, counts }));
        assert_eq!(f.count("hello world"), 2);
    }

    #[test]
    fn a_million_spaces_and_friends_do_not_panic() {
        let e = TiktokenEstimator::new(Encoding::O200kBase);
        let spaces = " ".repeat(1_000_000);
        // 122 pieces of 8192 spaces (64 tokens each: 128-space tokens) and a rest of 576 spaces.
        assert_eq!(pieces(&spaces).len(), 123);
        assert_eq!(e.count(&spaces), 122 * 64 + 5);
        let wrapped = format!("x{}y", " ".repeat(999_998));
        assert!(e.count(&wrapped) > 7000);
        assert!(e.count(&"\n".repeat(1_000_000)) > 0);
        assert!(e.count(&"A".repeat(1_000_000)) > 0);
        assert_eq!(fallbacks(), 0, "no piece needed the panic fallback");
    }

    /// The spec's bound: no piece of at most 8 KiB, and no whole text of at most 64 KiB, makes the
    /// regex engine fail. Called on the encoder directly, so a failure panics the test.
    #[test]
    fn adversarial_pieces_do_not_overflow() {
        fn kinds(n: usize) -> Vec<String> {
            vec![
                " ".repeat(n),
                format!("x{}y", " ".repeat(n - 2)),
                "\t".repeat(n),
                "\n".repeat(n),
                "\r\n".repeat(n / 2),
                "\u{a0}".repeat(n / 2),
                "\u{3000}".repeat(n / 3),
                "A".repeat(n),
                "a".repeat(n),
                "7".repeat(n),
                "^".repeat(n),
                " !".repeat(n / 2),
                "日".repeat(n / 3),
                "😀".repeat(n / 4),
                "a\u{301}".repeat(n / 3),
                "é".repeat(n / 2),
                "'s".repeat(n / 2),
                "  x".repeat(n / 3),
            ]
        }
        for enc in Encoding::ALL {
            for s in kinds(PIECE_LIMIT) {
                assert!(s.len() <= PIECE_LIMIT);
                assert!(!enc.bpe().encode_ordinary(&s).is_empty());
            }
            for s in kinds(WHOLE_LIMIT).into_iter().take(4) {
                assert!(!enc.bpe().encode_ordinary(&s).is_empty());
            }
        }
    }

    proptest::proptest! {
        /// Pieces tile the text, respect the bound and character boundaries, and each piece but
        /// the last ends after the last newline of its 8 KiB window when the window holds one.
        #[test]
        fn pieces_tile_the_text(parts in proptest::collection::vec(("[a \n日😀]{0,40}", 0usize..3000), 1..60)) {
            let mut s = String::new();
            for (p, n) in &parts {
                for _ in 0..(*n / 40 + 1) {
                    s.push_str(p);
                }
            }
            let ps = pieces_with(&s, 1024, 256);
            let mut pos = 0;
            for (i, r) in ps.iter().enumerate() {
                proptest::prop_assert_eq!(r.start, pos);
                proptest::prop_assert!(s.is_char_boundary(r.end));
                if s.len() > 1024 {
                    proptest::prop_assert!(r.len() <= 256 && !r.is_empty());
                    if i + 1 < ps.len() {
                        let window = &s.as_bytes()[r.start..r.start + 256];
                        match memchr::memrchr(b'\n', window) {
                            Some(k) => proptest::prop_assert_eq!(r.end, r.start + k + 1),
                            None => proptest::prop_assert!(r.end + 4 > r.start + 256),
                        }
                    }
                }
                pos = r.end;
            }
            proptest::prop_assert_eq!(pos, s.len());
        }
    }

    #[test]
    fn encoding_choice() {
        assert_eq!(Encoding::choose(None, None).unwrap(), Encoding::O200kBase);
        assert_eq!(Encoding::choose(None, Some("cl100k_base")).unwrap(), Encoding::Cl100kBase);
        assert_eq!(Encoding::choose(Some("o200k_base"), Some("cl100k_base")).unwrap(), Encoding::O200kBase);
        let e = Encoding::choose(None, Some("p50k_base")).unwrap_err();
        assert!(e.to_string().contains("\"p50k_base\" (the session's `encoding`)"), "{e}");
        assert!(e.to_string().contains("o200k_base or cl100k_base"), "{e}");
        assert_eq!(Encoding::choose(Some("cl100k"), Some("p50k_base")).unwrap(), Encoding::Cl100kBase);
        assert!(Encoding::choose(Some("p50k_base"), None).is_err());
    }
}
