//! The fast exact counter (`ctxj_core::tokens::fast`, issue 20) against tiktoken-rs's
//! `encode_ordinary` as the oracle: every string of real agent text (the bundled journals and
//! transcripts, and the shared real transcripts), plus generated adversarial strings.

use std::collections::HashSet;
use std::path::Path;

use ctxj_core::tokens::{fast, Encoding};
use proptest::prelude::*;

fn oracle(enc: Encoding, s: &str) -> u64 {
    enc.bpe().encode_ordinary(s).len() as u64
}

/// Every JSON string (values and keys) in `v`, plus `v`'s own text.
fn strings(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        serde_json::Value::Object(o) => o.iter().for_each(|(k, x)| {
            out.push(k.clone());
            strings(x, out)
        }),
        _ => {}
    }
}

/// Distinct texts of every `.jsonl` / `.json` / `.md` file under `dir`: each line, and each
/// string inside a JSON line.
fn corpus(dir: &Path) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(dir).sort_by_file_name().into_iter().filter_map(Result::ok) {
        let p = e.path();
        if !e.file_type().is_file() || !p.extension().is_some_and(|x| x == "jsonl" || x == "json" || x == "md") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(p) else { continue };
        let mut found = vec![text.clone()];
        for line in text.lines() {
            found.push(line.to_string());
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(line) {
                strings(&v, &mut found);
            }
        }
        for s in found {
            // The spec counts texts over 64 KiB piece by piece; pieces are what the counter sees.
            for r in ctxj_core::tokens::estimator::pieces(&s) {
                if seen.insert(s[r.clone()].to_string()) {
                    out.push(s[r].to_string());
                }
            }
        }
    }
    out
}

fn check_corpus(dir: &Path) {
    let texts = corpus(dir);
    assert!(texts.len() > 100, "{}: only {} texts", dir.display(), texts.len());
    for enc in Encoding::ALL {
        let mut bytes = 0;
        for s in &texts {
            assert_eq!(fast::count(enc, s), oracle(enc, s), "{enc}: {:?}", s.chars().take(200).collect::<String>());
            bytes += s.len();
        }
        assert!(bytes > 100_000, "{}: only {bytes} bytes", dir.display());
    }
}

#[test]
fn bundled_agent_text_counts_as_tiktoken() {
    check_corpus(&crate::common::repo().join("sample-journals"));
}

#[test]
#[cfg_attr(
    not(ctxj_has_samples),
    ignore = "needs ../shared/samples (fails under CI=true; once it is there, `touch build.rs`)"
)]
fn real_agent_transcripts_count_as_tiktoken() {
    check_corpus(&crate::common::shared_samples());
}

/// Characters that stress the pre-tokenization patterns: whitespace of every kind, digits of
/// several scripts, contractions, letters of each case class, marks, emoji with joiners and
/// modifiers, punctuation and slashes.
const ALPHABET: &[&str] = &[
    " ",
    "  ",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "\u{a0}",
    "\u{3000}",
    "\u{2028}",
    "\u{85}",
    "\u{b}",
    "\u{c}",
    "a",
    "Z",
    "é",
    "É",
    "ǅ",
    "ß",
    "ʰ",
    "日",
    "本",
    "한",
    "я",
    "Ж",
    "ω",
    "ا",
    "ש",
    "क",
    "ि",
    "\u{301}",
    "\u{20dd}",
    "0",
    "7",
    "٣",
    "½",
    "Ⅻ",
    "'",
    "’",
    "s",
    "t",
    "re",
    "ve",
    "m",
    "ll",
    "d",
    "'S",
    "'LL",
    "!",
    "?",
    ".",
    ",",
    "/",
    "//",
    "\\",
    "{",
    "}",
    "\"",
    ":",
    "_",
    "-",
    "<|endoftext|>",
    "😀",
    "👍🏽",
    "👨‍👩‍👧",
    "\u{200d}",
    "\u{fe0f}",
    "\u{feff}",
    "\u{200b}",
    "€",
    "$",
    "#",
];

fn adversarial() -> impl Strategy<Value = String> {
    prop::collection::vec((prop::sample::select(ALPHABET), 1usize..40), 0..40)
        .prop_map(|parts| parts.iter().map(|(s, n)| s.repeat(*n)).collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn adversarial_strings_count_as_tiktoken(s in adversarial()) {
        for enc in Encoding::ALL {
            prop_assert_eq!(fast::count(enc, &s), oracle(enc, &s), "{} on {:?}", enc, s);
        }
    }

    #[test]
    fn random_unicode_counts_as_tiktoken(s in "\\PC{0,300}") {
        for enc in Encoding::ALL {
            prop_assert_eq!(fast::count(enc, &s), oracle(enc, &s), "{} on {:?}", enc, s);
        }
    }

    #[test]
    fn ascii_counts_as_tiktoken(s in "[\\x00-\\x7f]{0,400}") {
        for enc in Encoding::ALL {
            prop_assert_eq!(fast::count(enc, &s), oracle(enc, &s), "{} on {:?}", enc, s);
        }
    }

    #[test]
    fn runs_of_one_character_count_as_tiktoken(c in prop::sample::select(ALPHABET), n in 1usize..3000, tail in prop::sample::select(ALPHABET)) {
        let s = format!("{}{tail}", c.repeat(n));
        for enc in Encoding::ALL {
            prop_assert_eq!(fast::count(enc, &s), oracle(enc, &s), "{} on {:?}×{} + {:?}", enc, c, n, tail);
        }
    }
}

/// The estimator's counts (pieces, memo, fast counter) equal tiktoken-rs applied to the same
/// pieces, on a million spaces and other huge runs (no stack overflow either way).
#[test]
fn huge_runs_count_as_tiktoken_piece_by_piece() {
    use ctxj_core::tokens::{Estimator, TiktokenEstimator};
    for s in
        [" ".repeat(1_000_000), "7".repeat(300_000), format!("x{}y", "\u{3000}".repeat(100_000)), "'s".repeat(200_000)]
    {
        for enc in Encoding::ALL {
            let want: u64 = ctxj_core::tokens::estimator::pieces(&s).into_iter().map(|r| oracle(enc, &s[r])).sum();
            assert_eq!(TiktokenEstimator::new(enc).count(&s), want, "{enc}");
        }
    }
}
