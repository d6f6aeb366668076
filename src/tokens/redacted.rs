//! Redaction markers of sanitised transcripts: `[REDACTED_TEXT len=13131 sha=036b7e47]` stands
//! for 13,131 characters that were there when the provider counted the request. Shared,
//! sanitised Codex rollouts replace every text and every encrypted item this way; counting the
//! marker (~15 tokens) instead of what it replaced made the counted quantity of a 200k-token
//! request ~15k and calibration meaningless (`docs/tokens-and-cache.md`, "Codex").
//!
//! For imported sessions only ([`super::estimator_for`]), a marker counts as
//! ⌈len / [`CHARS_PER_TOKEN`]⌉ tokens; the affine calibration's slope absorbs the difference
//! between that rate and the provider's tokenizer. journal-v1 journals keep n(s) of spec §3.

/// Characters per token assumed for redacted text (the usual rate of English prose and code under
/// o200k / cl100k).
pub const CHARS_PER_TOKEN: u64 = 4;

const OPEN: &str = "[REDACTED_";

/// One marker at the start of `s`: (its byte length, the characters it stands for).
fn marker(s: &str) -> Option<(usize, u64)> {
    let rest = s.strip_prefix(OPEN)?;
    let kind_len = rest.bytes().take_while(|b| b.is_ascii_uppercase() || *b == b'_').count();
    let rest = rest[kind_len..].strip_prefix(" len=")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let len: u64 = rest[..digits].parse().ok()?;
    let rest = rest[digits..].strip_prefix(" sha=")?;
    let hex = rest.bytes().take_while(u8::is_ascii_hexdigit).count();
    rest[hex..].strip_prefix(']')?;
    (kind_len > 0 && hex > 0).then_some((OPEN.len() + kind_len + 5 + digits + 5 + hex + 1, len))
}

/// The tokens of `s` when it holds redaction markers: `plain` counts the text around them, each
/// marker counts as the characters it replaced. `None` (count `s` as it is) without a marker.
pub fn count(s: &str, plain: impl Fn(&str) -> u64) -> Option<u64> {
    if !s.contains(OPEN) {
        return None;
    }
    let (mut tokens, mut text, mut at, mut found) = (0u64, String::new(), 0usize, false);
    while let Some(i) = s[at..].find(OPEN) {
        let start = at + i;
        match marker(&s[start..]) {
            Some((bytes, chars)) => {
                text.push_str(&s[at..start]);
                tokens = tokens.saturating_add(chars.div_ceil(CHARS_PER_TOKEN));
                at = start + bytes;
                found = true;
            }
            None => {
                text.push_str(&s[at..start + OPEN.len()]);
                at = start + OPEN.len();
            }
        }
    }
    text.push_str(&s[at..]);
    found.then(|| tokens.saturating_add(plain(&text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(s: &str) -> u64 {
        s.len() as u64
    }

    #[test]
    fn markers_count_as_what_they_replaced() {
        assert_eq!(count("[REDACTED_TEXT len=13131 sha=036b7e47]", bytes), Some(3283));
        assert_eq!(count("a [REDACTED_ENCRYPTED_CONTENT len=8 sha=ab] b", bytes), Some(2 + 4));
        assert_eq!(count("x[REDACTED_TEXT len=0 sha=e3]y[REDACTED_TEXT len=5 sha=1]", bytes), Some(2 + 2));
    }

    #[test]
    fn other_text_is_counted_as_it_is() {
        assert_eq!(count("no marker", bytes), None);
        assert_eq!(count("a live token ([REDACTED]); never print it", bytes), None);
        assert_eq!(count("[REDACTED_TEXT len=12]", bytes), None, "no sha: not a marker");
        assert_eq!(count("[REDACTED_TEXT len=99999999999999999999999 sha=1]", bytes), None, "overflow");
        assert_eq!(count("[REDACTED_ [REDACTED_TEXT len=4 sha=1]", bytes), Some(11 + 1));
    }
}
