//! tiktoken's pre-tokenization of ASCII text, by hand (issue 20).
//!
//! For a text that is all ASCII the patterns of `o200k_base` and `cl100k_base` reduce to a few
//! byte classes, and their leftmost-first, backtracking semantics to the small decisions below
//! (each alternative in the patterns' order). Text with any other character goes through
//! bpe-openai's regex ([`super::fast`]). Exactness against tiktoken-rs is checked by the property
//! tests of `tests/cli/tokens_exact.rs` and below.
//!
//! `o200k_base`: `[^\r\n\p{L}\p{N}]?[\p{Lu}…]*[\p{Ll}…]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` |
//! `[^\r\n\p{L}\p{N}]?[\p{Lu}…]+[\p{Ll}…]*(?i:…)?` | `\p{N}{1,3}` | ` ?[^\s\p{L}\p{N}]+[\r\n/]*` |
//! `\s*[\r\n]+` | `\s+(?!\S)` | `\s+`.
//! `cl100k_base`: `(?i:'s|'t|'re|'ve|'m|'ll|'d)` | `[^\r\n\p{L}\p{N}]?\p{L}+` | `\p{N}{1,3}` |
//! ` ?[^\s\p{L}\p{N}]+[\r\n]*` | `\s*[\r\n]+` | `\s+(?!\S)` | `\s+`.

const UPPER: u8 = 1;
const LOWER: u8 = 2;
const DIGIT: u8 = 4;
/// `\s` (in ASCII: tab, `\n`, vertical tab, form feed, `\r`, space).
const SPACE: u8 = 8;
/// `\r` or `\n` (also [`SPACE`]).
const NEWLINE: u8 = 16;
/// Neither letter, digit nor whitespace.
const OTHER: u8 = 32;

const CLASS: [u8; 128] = {
    let mut t = [OTHER; 128];
    let mut b = 0;
    while b < 128 {
        t[b] = match b as u8 {
            b'A'..=b'Z' => UPPER,
            b'a'..=b'z' => LOWER,
            b'0'..=b'9' => DIGIT,
            b'\r' | b'\n' => SPACE | NEWLINE,
            b'\t' | 0x0b | 0x0c | b' ' => SPACE,
            _ => OTHER,
        };
        b += 1;
    }
    t
};

#[inline]
fn class(s: &[u8], i: usize) -> u8 {
    s.get(i).map_or(0, |&b| CLASS[usize::from(b & 0x7f)])
}

/// Bytes from `i` on whose class is in `mask`.
#[inline]
fn run(s: &[u8], mut i: usize, mask: u8) -> usize {
    while class(s, i) & mask != 0 {
        i += 1;
    }
    i
}

/// `\p{N}{1,3}` at a digit `i` (looking at three bytes at most: a long run of digits stays linear).
#[inline]
fn digits(s: &[u8], i: usize) -> usize {
    let mut e = i + 1;
    while e < i + 3 && class(s, e) & DIGIT != 0 {
        e += 1;
    }
    e
}

/// The end of a contraction (`'s`, `'t`, `'re`, `'ve`, `'m`, `'ll`, `'d`, any case) at `i`, if one
/// starts there.
#[inline]
fn contraction(s: &[u8], i: usize) -> Option<usize> {
    if s.get(i) != Some(&b'\'') {
        return None;
    }
    let lower = |k: usize| s.get(i + k).map(u8::to_ascii_lowercase);
    match lower(1)? {
        b's' | b't' | b'm' | b'd' => Some(i + 2),
        b'r' | b'v' if lower(2) == Some(b'e') => Some(i + 3),
        b'l' if lower(2) == Some(b'l') => Some(i + 3),
        _ => None,
    }
}

/// The whitespace alternatives shared by both patterns, at a whitespace byte `i`.
#[inline]
fn whitespace(s: &[u8], i: usize) -> usize {
    let end = run(s, i, SPACE);
    // `\s*[\r\n]+`: up to and including the run's last line break.
    if let Some(p) = s[i..end].iter().rposition(|&b| b == b'\n' || b == b'\r') {
        return i + p + 1;
    }
    // `\s+(?!\S)`: the run, less its last byte when a non-space follows; else `\s+`.
    if end == s.len() || end - i == 1 {
        end
    } else {
        end - 1
    }
}

/// ` ?[^\s\p{L}\p{N}]+` then `[\r\n/]*` (o200k) or `[\r\n]*` (cl100k), at `i`, if it matches.
#[inline]
fn punctuation(s: &[u8], i: usize, slash: bool) -> Option<usize> {
    let j = if s[i] == b' ' { i + 1 } else { i };
    if class(s, j) & OTHER == 0 {
        return None;
    }
    let mut e = run(s, j, OTHER);
    while let Some(&b) = s.get(e) {
        if b == b'\r' || b == b'\n' || (slash && b == b'/') {
            e += 1;
        } else {
            break;
        }
    }
    Some(e)
}

/// Where the letters of a word start at `i`: `i` itself, or `i + 1` after one prefix byte (not
/// `\r`, `\n`, a letter or a digit).
#[inline]
fn letters_from(s: &[u8], i: usize) -> Option<usize> {
    let c = class(s, i);
    if c & (UPPER | LOWER) != 0 {
        Some(i)
    } else if c & (NEWLINE | DIGIT) == 0 && class(s, i + 1) & (UPPER | LOWER) != 0 {
        Some(i + 1)
    } else {
        None
    }
}

/// The end of the `o200k_base` piece starting at `i` (`i < s.len()`, `s` all ASCII).
pub fn next_o200k(s: &[u8], i: usize) -> usize {
    if let Some(j) = letters_from(s, i) {
        // Uppers then lowers (first alternative), else uppers alone (second); then a contraction.
        let k = run(s, j, UPPER);
        let l = run(s, k, LOWER);
        let e = if l > k { l } else { k };
        return contraction(s, e).unwrap_or(e);
    }
    numbers_punctuation_whitespace(s, i, true)
}

/// The alternatives after the words, the same in both patterns but for `/`: `\p{N}{1,3}`, then
/// punctuation, then whitespace.
#[inline]
fn numbers_punctuation_whitespace(s: &[u8], i: usize, slash: bool) -> usize {
    if class(s, i) & DIGIT != 0 {
        return digits(s, i);
    }
    punctuation(s, i, slash).unwrap_or_else(|| whitespace(s, i))
}

/// The end of the `cl100k_base` piece starting at `i` (`i < s.len()`, `s` all ASCII).
pub fn next_cl100k(s: &[u8], i: usize) -> usize {
    if let Some(e) = contraction(s, i) {
        return e;
    }
    if let Some(j) = letters_from(s, i) {
        return run(s, j, UPPER | LOWER);
    }
    numbers_punctuation_whitespace(s, i, false)
}

/// Calls `f` with each piece of the ASCII text `s`, in order.
#[inline]
pub fn pieces(s: &[u8], cl100k: bool, mut f: impl FnMut(&[u8])) {
    debug_assert!(s.is_ascii());
    let mut i = 0;
    while i < s.len() {
        let e = if cl100k { next_cl100k(s, i) } else { next_o200k(s, i) };
        debug_assert!(e > i);
        f(&s[i..e]);
        i = e;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::fast::tokenizer;
    use crate::tokens::Encoding;

    fn by_hand(s: &str, enc: Encoding) -> Vec<&str> {
        let mut out = Vec::new();
        let mut pos = 0;
        pieces(s.as_bytes(), enc == Encoding::Cl100kBase, |p| {
            out.push(&s[pos..pos + p.len()]);
            pos += p.len();
        });
        out
    }

    fn by_regex(s: &str, enc: Encoding) -> Vec<&str> {
        tokenizer(enc).split(s).collect()
    }

    #[test]
    fn known_splits() {
        let o = Encoding::O200kBase;
        assert_eq!(by_hand("HTTPServer don't  x\n\n  y", o), ["HTTPServer", " don't", " ", " x", "\n\n", " ", " y"]);
        assert_eq!(by_hand("a  ", o), ["a", "  "]);
        assert_eq!(by_hand(" 12345 //x/\n", o), [" ", "123", "45", " //", "x", "/\n"]);
        let c = Encoding::Cl100kBase;
        assert_eq!(by_hand("'S x's HTTPServer", c), ["'S", " x", "'s", " HTTPServer"]);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, ..Default::default() })]
        /// The hand split equals bpe-openai's regex split (itself checked against tiktoken-rs's
        /// counts) on ASCII built from the pieces that matter.
        #[test]
        fn the_hand_split_is_the_regex_split(parts in proptest::collection::vec(
            (proptest::sample::select(&[" ", "\t", "\n", "\r", "\u{b}", "\u{c}", "a", "Z", "Ab", "0", "'", "s", "re", "LL", "D",
              "/", "!", "(", "\u{1}", "\u{7f}", "_", "-"][..]), 1usize..5), 0..30)) {
            let s: String = parts.iter().map(|(p, n)| p.repeat(*n)).collect();
            for enc in Encoding::ALL {
                proptest::prop_assert_eq!(by_hand(&s, enc), by_regex(&s, enc), "{} on {:?}", enc, s);
            }
        }

        #[test]
        fn any_ascii_splits_as_the_regex(s in "[\\x00-\\x7f]{0,200}") {
            for enc in Encoding::ALL {
                proptest::prop_assert_eq!(by_hand(&s, enc), by_regex(&s, enc), "{} on {:?}", enc, s);
            }
        }
    }
}
