//! Exact token counts without tiktoken-rs's regex engine (issue 20).
//!
//! tiktoken counts a text by cutting it with its pre-tokenization regex (fancy-regex, a
//! backtracking engine, because of the `\s+(?!\S)` look-ahead) and merging the bytes of each
//! piece by rank. We need counts, not token ids, so this module:
//!
//! * cuts ASCII text by hand ([`super::split`]: the patterns reduced to byte classes), and any
//!   other text with `bpe-openai`'s pre-tokenizer: the same patterns for `o200k_base` and
//!   `cl100k_base`, compiled for `regex-automata`'s linear-time engines, with the look-ahead
//!   written as a one-character pseudo look-ahead that the split drops (`\s+\s`, plus `\s+$` for a
//!   run at the end of the text) — linear in the text, no stack to overflow;
//! * counts each piece with `bpe`'s backtracking encoder, which yields the same tokens as
//!   tiktoken's rank merges for these vocabularies;
//! * remembers the count of each short piece (at most [`SHORT`] bytes: words, numbers, runs of
//!   punctuation) in a per-thread table, so a word met again costs one hash look-up; agent text
//!   repeats its words so often that most pieces are answered there.
//!
//! Exactness is the test suite's job: property tests and a corpus of agent text compare every
//! count with tiktoken-rs's `encode_ordinary` (`tests` below, `tests/cli/tokens_exact.rs`). No
//! input class is known to differ; [`crate::tokens::estimator`] still keeps tiktoken-rs as the
//! counter of record whenever `CTXJ_TOKENIZER=tiktoken` is set, so a suspected difference can be
//! checked from the command line.

use std::cell::RefCell;

use rustc_hash::FxHashMap;

use super::encoding::Encoding;

/// Pieces of at most this many bytes have their counts remembered per thread.
pub const SHORT: usize = 15;

/// Entries a thread's piece table holds before it starts over (bounded memory: 16 bytes a key).
const TABLE_CAP: usize = 1 << 16;

/// The `bpe-openai` tokenizer of an encoding (built on first use, once per process).
pub fn tokenizer(enc: Encoding) -> &'static bpe_openai::Tokenizer {
    match enc {
        Encoding::O200kBase => bpe_openai::o200k_base(),
        Encoding::Cl100kBase => bpe_openai::cl100k_base(),
    }
}

thread_local! {
    /// Per encoding: short piece (packed by [`pack`]) → its token count.
    static TABLES: RefCell<[FxHashMap<u128, u32>; 2]> = RefCell::new([FxHashMap::default(), FxHashMap::default()]);
}

/// A piece of at most [`SHORT`] bytes as one integer: its bytes, then its length in the top byte
/// (so `"a"` and `"a\0"` differ).
fn pack(b: &[u8]) -> u128 {
    let mut buf = [0u8; 16];
    buf[..b.len()].copy_from_slice(b);
    buf[15] = b.len() as u8;
    u128::from_le_bytes(buf)
}

/// Tokens of `s` (`encode_ordinary(s).len()` of tiktoken), counted on the calling thread.
pub fn count(enc: Encoding, s: &str) -> u64 {
    let tok = tokenizer(enc);
    let slot = match enc {
        Encoding::O200kBase => 0,
        Encoding::Cl100kBase => 1,
    };
    TABLES.with(|t| {
        let mut tables = t.borrow_mut();
        let table = &mut tables[slot];
        let mut n = 0u64;
        let mut piece = |b: &[u8]| {
            if b.len() > SHORT {
                n += tok.bpe.count(b) as u64;
                return;
            }
            let k = pack(b);
            let c = match table.get(&k) {
                Some(&c) => c,
                None => {
                    let c = tok.bpe.count(b) as u32;
                    if table.len() >= TABLE_CAP {
                        table.clear();
                    }
                    table.insert(k, c);
                    c
                }
            };
            n += u64::from(c);
        };
        if s.is_ascii() {
            super::split::pieces(s.as_bytes(), enc == Encoding::Cl100kBase, piece);
        } else {
            tok.split(s).for_each(|p| piece(p.as_bytes()));
        }
        n
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn oracle(enc: Encoding, s: &str) -> u64 {
        enc.bpe().encode_ordinary(s).len() as u64
    }

    fn same(s: &str) {
        for enc in Encoding::ALL {
            assert_eq!(count(enc, s), oracle(enc, s), "{enc} on {:?}", s.chars().take(80).collect::<String>());
        }
    }

    #[test]
    fn pack_keeps_length() {
        assert_ne!(pack(b"a"), pack(b"a\0"));
        assert_ne!(pack(b""), pack(b"\0"));
        assert_eq!(pack(b"abc"), pack(b"abc"));
    }

    /// The known edge cases of tiktoken's patterns, each against tiktoken-rs.
    #[test]
    fn edge_cases_match_tiktoken() {
        for s in [
            "",
            " ",
            "  ",
            "x ",
            "x  ",
            "x  y",
            "x   y",
            " \n",
            "  \n  x",
            "\r\n\r\n  \r\n",
            "\t\tx",
            "a\u{a0}\u{a0}b",
            "\u{3000}\u{3000}日本",
            "don't I'LL we've THEY'RE it's 'tis ''s",
            "DON'T Don'T dOn't",
            "12345 1234567 ١٢٣٤ ½¾ 3.14159",
            "foo/bar/baz\n\n//comment\r\n",
            "  !!!\n\n\n???///",
            "héllo wörld naïve café",
            "Привет, мир! Γειά σου κόσμε. שלום עולם. مرحبا بالعالم",
            "日本語のテキストとemoji 😀🎉 mixed 한국어 中文",
            "👨‍👩‍👧‍👦 family 🏳️‍🌈 flag 👍🏽",
            "a\u{301}e\u{308}\u{20dd}",
            "<|endoftext|><|fim_prefix|>",
            "\u{feff}\u{200b}\u{200d}zero width",
            "CamelCaseIdent snake_case_ident SCREAMING_CASE",
            "ǅungla ǈ ǋ titlecase",
        ] {
            same(s);
        }
    }

    #[test]
    fn long_runs_match_tiktoken() {
        for s in [
            " ".repeat(8192),
            format!("x{}y", " ".repeat(8190)),
            "\n".repeat(8192),
            "\r\n".repeat(4096),
            "7".repeat(8192),
            "^".repeat(8192),
            " !".repeat(4096),
            "'s".repeat(4096),
            "  x".repeat(2730),
            "é".repeat(4096),
            "a\u{301}".repeat(2730),
            "😀".repeat(2048),
        ] {
            same(&s);
        }
    }

    #[test]
    fn the_piece_table_starts_over_when_full() {
        // More distinct short pieces than the table holds: counts stay exact after it clears.
        let s: String = (0..(TABLE_CAP + 1000)).map(|i| format!(" w{i:x}")).collect();
        same(&s);
        TABLES.with(|t| assert!(t.borrow()[0].len() <= TABLE_CAP));
    }
}
