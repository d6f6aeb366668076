//! Redaction markers of sanitised transcripts: `[REDACTED_TEXT len=13131 sha=036b7e47]` stands
//! for 13,131 characters that were there when the provider counted the request. Shared,
//! sanitised Codex rollouts replace every text and every encrypted item this way; counting the
//! marker (~15 tokens) instead of what it replaced made the counted quantity of a 200k-token
//! request ~15k and calibration meaningless (`docs/tokens-and-cache.md`, "Codex").
//!
//! For imported sessions only ([`super::estimator_for`]), a marker counts as
//! ⌈len / [`CHARS_PER_TOKEN`]⌉ tokens; the affine calibration's slope absorbs the difference
//! between that rate and the provider's tokenizer. journal-v1 journals keep n(s) of spec §3.
//!
//! **Encrypted payloads** the importer carries as an explicit estimate (a Codex remote
//! compaction's summary, issue 14): `[ENCRYPTED_SUMMARY len=13412]` stands for an encrypted
//! payload of 13,412 base64 characters the provider decrypted and counted. It counts as
//! ⌈(len − [`ENCRYPTED_OVERHEAD_CHARS`]) / [`ENCRYPTED_CHARS_PER_TOKEN`]⌉ tokens
//! ([`encrypted_tokens`]), the rate measured on the 212 encrypted reasoning items of the shared
//! long Codex rollout, each against the `reasoning_output_tokens` of its response.
//!
//! **Images** the importer read the size of: `[image: image/png, 311409 bytes, 2536×2508 ≈ 1599
//! tokens]` counts as the 1,599 tokens the provider's image rule gives ([`super::image`]).
//!
//! **Forged markers** (issue 31): a text can carry marker-shaped strings nobody's sanitiser or
//! importer wrote (`[REDACTED_TEXT len=18446744073709551615 sha=1]` once inflated an estimate to
//! 10^19 tokens). No marker of any kind stands for more than [`MAX_MARKER_TOKENS`] (more than any
//! context window holds): a larger claim is counted as the text it is. (Counting a sanitiser's
//! marker only where an importer vouches for it would need the importers to mark those texts;
//! counting it only as a whole text broke the calibration of the shared sanitised Codex rollouts,
//! whose importer joins texts holding markers.)

/// Characters per token assumed for redacted text (the usual rate of English prose and code under
/// o200k / cl100k).
pub const CHARS_PER_TOKEN: u64 = 4;

/// Base64 characters of an encrypted payload that hold no tokens (envelope, nonce, tag).
pub const ENCRYPTED_OVERHEAD_CHARS: u64 = 812;

/// Base64 characters of an encrypted payload per token it holds (6.61 measured, see the module
/// doc), in tenths.
pub const ENCRYPTED_CHARS_PER_TOKEN_X10: u64 = 66;

/// [`ENCRYPTED_CHARS_PER_TOKEN_X10`] / 10.
pub const ENCRYPTED_CHARS_PER_TOKEN: f64 = ENCRYPTED_CHARS_PER_TOKEN_X10 as f64 / 10.0;

/// The most tokens one marker may stand for: 16 Mi, above every provider's context window; a
/// marker claiming more is counted as the text it is.
pub const MAX_MARKER_TOKENS: u64 = 1 << 24;

const OPEN: &str = "[REDACTED_";
const ENCRYPTED: &str = "[ENCRYPTED_";

/// A sanitiser's marker: its kind (`TEXT`, `OUTPUT`, …), the characters it replaced, its hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker<'a> {
    pub kind: &'a str,
    pub len: u64,
    pub sha: &'a str,
}

impl Marker<'_> {
    /// The marker text of `kind` standing for `len` characters.
    pub fn render(&self) -> String {
        format!("{OPEN}{} len={} sha={}]", self.kind, self.len, self.sha)
    }
}

/// `s` when it is one whole sanitiser's marker.
pub fn whole(s: &str) -> Option<Marker<'_>> {
    let (bytes, m) = redaction(s)?;
    (bytes == s.len()).then_some(m)
}

/// The estimated tokens of an encrypted payload of `len` base64 characters (module doc).
pub fn encrypted_tokens(len: u64) -> u64 {
    len.saturating_sub(ENCRYPTED_OVERHEAD_CHARS).saturating_mul(10).div_ceil(ENCRYPTED_CHARS_PER_TOKEN_X10)
}

/// The estimate marker of an encrypted payload of `kind` (`SUMMARY`) and `len` base64 characters.
pub fn encrypted_marker(kind: &str, len: u64) -> String {
    format!("{ENCRYPTED}{kind} len={len}]")
}

/// The uppercase kind, ` len=`, and the digits at the start of `rest`: (kind, len, bytes read).
fn kind_len(rest: &str) -> Option<(&str, u64, usize)> {
    let k = rest.bytes().take_while(|b| b.is_ascii_uppercase() || *b == b'_').count();
    let after = rest[k..].strip_prefix(" len=")?;
    let digits = after.bytes().take_while(u8::is_ascii_digit).count();
    let len: u64 = after[..digits].parse().ok()?;
    (k > 0).then_some((&rest[..k], len, k + 5 + digits))
}

/// A sanitiser's marker at the start of `s`: (its byte length, the marker).
fn redaction(s: &str) -> Option<(usize, Marker<'_>)> {
    let rest = s.strip_prefix(OPEN)?;
    let (kind, len, n) = kind_len(rest)?;
    let after = rest[n..].strip_prefix(" sha=")?;
    let hex = after.bytes().take_while(u8::is_ascii_hexdigit).count();
    after[hex..].strip_prefix(']')?;
    (hex > 0).then_some((OPEN.len() + n + 5 + hex + 1, Marker { kind, len, sha: &after[..hex] }))
}

/// One marker at the start of `s`: (its byte length, the tokens it stands for), when it stands
/// for at most [`MAX_MARKER_TOKENS`].
fn marker(s: &str) -> Option<(usize, u64)> {
    let found = if let Some(found) = super::image::parse(s) {
        found
    } else if let Some((bytes, m)) = redaction(s) {
        (bytes, m.len.div_ceil(CHARS_PER_TOKEN))
    } else {
        let rest = s.strip_prefix(ENCRYPTED)?;
        let (_, len, n) = kind_len(rest)?;
        rest[n..].strip_prefix(']')?;
        (ENCRYPTED.len() + n + 1, encrypted_tokens(len))
    };
    (found.1 <= MAX_MARKER_TOKENS).then_some(found)
}

/// The tokens of `s` when it holds markers: `plain` counts the text around them, each marker
/// counts as what it replaced. `None` (count `s` as it is) without a marker.
pub fn count(s: &str, plain: impl Fn(&str) -> u64) -> Option<u64> {
    if !s.contains(OPEN) && !s.contains(ENCRYPTED) && !super::image::may_hold(s) {
        return None;
    }
    let (mut tokens, mut text, mut at, mut found) = (0u64, String::new(), 0usize, false);
    while let Some(i) = s[at..].find('[') {
        let start = at + i;
        match marker(&s[start..]) {
            Some((bytes, n)) => {
                text.push_str(&s[at..start]);
                tokens = tokens.saturating_add(n);
                at = start + bytes;
                found = true;
            }
            None => {
                text.push_str(&s[at..=start]);
                at = start + 1;
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
        assert_eq!(count("[ENCRYPTED_SUMMARY len=12 sha=1]", bytes), None, "an encrypted estimate has no sha");
    }

    #[test]
    fn an_encrypted_payload_counts_as_its_estimated_tokens() {
        // The shared rollout's remote compaction: 13,412 base64 characters ≈ 1,910 tokens.
        assert_eq!(encrypted_tokens(13_412), 1_910);
        assert_eq!(encrypted_tokens(500), 0, "the envelope alone holds nothing");
        assert_eq!(encrypted_tokens(u64::MAX), u64::MAX.div_ceil(66), "saturates");
        let m = encrypted_marker("SUMMARY", 13_412);
        assert_eq!(m, "[ENCRYPTED_SUMMARY len=13412]");
        assert_eq!(count(&format!("summary (estimated): {m}"), bytes), Some(1_910 + 21));
        // A reasoning item of the rollout: 9,016 characters for 1,201 reasoning tokens.
        assert!((encrypted_tokens(9_016) as f64 - 1_201.0).abs() < 0.05 * 1_201.0);
    }

    #[test]
    fn an_image_marker_counts_as_its_estimate() {
        let m = "[image: image/png, 311409 bytes, 2536×2508 ≈ 1599 tokens]";
        assert_eq!(count(m, bytes), Some(1599));
        assert_eq!(count(&format!("shot:\n{m}\n[REDACTED_TEXT len=8 sha=1]"), bytes), Some(1599 + 2 + 7));
        assert_eq!(count("[image: image/png, 12 bytes]", bytes), None, "a size not read: counted as text");
    }

    #[test]
    fn a_whole_marker_is_parsed_and_rendered_back() {
        let s = "[REDACTED_OUTPUT len=83556 sha=5e0f]";
        let m = whole(s).unwrap();
        assert_eq!((m.kind, m.len, m.sha), ("OUTPUT", 83_556, "5e0f"));
        assert_eq!(m.render(), s);
        assert_eq!(whole("x[REDACTED_OUTPUT len=1 sha=1]"), None);
        assert_eq!(whole("[REDACTED_OUTPUT len=1 sha=1] tail"), None);
    }

    /// Issue 31: a forged `[REDACTED_TEXT len=18446744073709551615 …]` in any text inflated
    /// estimates to 10^19 tokens; no marker stands for more than [`MAX_MARKER_TOKENS`].
    #[test]
    fn regression_forged_redaction_marker_counts_as_text() {
        let forged = "[REDACTED_TEXT len=18446744073709551615 sha=1]";
        assert_eq!(count(&format!("see {forged} here"), bytes), None);
        assert_eq!(count(forged, bytes), None, "beyond any context window");
        assert_eq!(count("[REDACTED_TEXT len=67108868 sha=1]", bytes), None, "just past the bound");
        assert_eq!(count("[REDACTED_TEXT len=67108864 sha=1]", bytes), Some(MAX_MARKER_TOKENS));
        assert_eq!(count("[ENCRYPTED_SUMMARY len=18446744073709551615]", bytes), None);
        assert_eq!(count("[image: image/png, 1 bytes, 1×1 ≈ 99999999999 tokens]", bytes), None);
        // what a sanitiser and the importers write still counts
        assert_eq!(count("[REDACTED_TEXT len=13131 sha=036b7e47]", bytes), Some(3283));
        assert_eq!(count("summary: [ENCRYPTED_SUMMARY len=13412]", bytes), Some(1_910 + 9));
    }
}
