//! Guarded JSON: a byte scan for nesting depth and value count before serde_json sees a line,
//! so no input can exhaust the stack or memory, and parse errors worded without serde's
//! "at line 1 column" noise.

use serde::Deserialize;
use serde_json::Value;

use super::error::JournalErrorKind;
use super::scan::skip_string;

/// The spec's nesting limit: deeper than this is invalid.
pub const MAX_DEPTH: usize = 128;

/// Maximum container nesting of a JSON text, ignoring brackets inside strings. Stops counting
/// once `limit` is exceeded. String contents (most of a journal's bytes) are skipped with memchr.
pub fn json_depth(bytes: &[u8], limit: usize) -> usize {
    let (mut depth, mut max, mut i) = (0usize, 0usize, 0usize);
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let Some(end) = skip_string(bytes, i) else { return max };
                i = end;
                continue;
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    max = depth;
                    if max > limit {
                        return max;
                    }
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    max
}

/// The most JSON values (array elements, object members, nested containers) one line may hold:
/// two million, a few hundred MB once parsed. A 100 MB line of a 50-million-element array once
/// took 5 GB; it is now refused before parsing with [`JournalErrorKind::TooManyValues`].
pub const MAX_VALUES: usize = 2_000_000;

/// Refuses a line holding more than [`MAX_VALUES`] values, counted by a byte scan (commas and
/// opening brackets outside strings). Lines shorter than the limit cannot exceed it and are not
/// scanned.
pub fn check_values(bytes: &[u8]) -> Result<(), JournalErrorKind> {
    if bytes.len() <= MAX_VALUES {
        return Ok(());
    }
    let (mut n, mut i) = (0usize, 0usize);
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let Some(end) = skip_string(bytes, i) else { return Ok(()) };
                i = end;
                continue;
            }
            b',' | b'[' | b'{' => {
                n += 1;
                if n > MAX_VALUES {
                    return Err(JournalErrorKind::TooManyValues(MAX_VALUES));
                }
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// `line` with every lone UTF-16 surrogate escape (`\ud800` not followed by a low surrogate, or
/// a low one alone) replaced by `\ufffd`, when it holds one; `None` otherwise. serde_json refuses
/// such a line, JavaScript's `JSON.parse` (ccusage) takes it: a reader that must count what
/// ccusage counts retries the line lossily (issue 31). Backslashes only occur inside strings in
/// JSON, so escapes are found by a left-to-right scan.
pub fn replace_lone_surrogates(line: &[u8]) -> Option<Vec<u8>> {
    let hex4 = |at: usize| -> Option<u32> {
        let h = line.get(at..at + 4)?;
        u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
    };
    let unit = |at: usize| -> Option<u32> { (line.get(at..at + 2)? == b"\\u").then(|| hex4(at + 2)).flatten() };
    let mut out: Option<Vec<u8>> = None;
    let (mut i, mut copied) = (0, 0);
    while let Some(k) = memchr::memchr(b'\\', &line[i..]) {
        let at = i + k;
        let Some(u) = unit(at) else {
            i = at + 2;
            continue;
        };
        let high = (0xD800..0xDC00).contains(&u);
        let low_next = unit(at + 6).is_some_and(|l| (0xDC00..0xE000).contains(&l));
        if high && low_next {
            i = at + 12;
        } else if (0xD800..0xE000).contains(&u) {
            let o = out.get_or_insert_with(|| Vec::with_capacity(line.len()));
            o.extend_from_slice(&line[copied..at]);
            o.extend_from_slice(b"\\ufffd");
            i = at + 6;
            copied = i;
        } else {
            i = at + 6;
        }
        if i >= line.len() {
            break;
        }
    }
    let mut o = out?;
    o.extend_from_slice(&line[copied.min(line.len())..]);
    Some(o)
}

/// Parses one JSON value from a line, with the spec's depth limit.
pub fn parse_json(bytes: &[u8]) -> Result<Value, JournalErrorKind> {
    parse_json_verbatim(bytes).map(|(v, _)| v)
}

/// [`parse_json`], also saying whether number text had to be restored (see `numbers`).
pub(super) fn parse_json_verbatim(bytes: &[u8]) -> Result<(Value, bool), JournalErrorKind> {
    if json_depth(bytes, MAX_DEPTH) > MAX_DEPTH {
        return Err(JournalErrorKind::TooDeep);
    }
    check_values(bytes)?;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    de.disable_recursion_limit();
    let mut v = Value::deserialize(&mut de).map_err(|e| JournalErrorKind::Json(json_msg(&e)))?;
    de.end().map_err(|e| JournalErrorKind::Json(json_msg(&e)))?;
    let restored = super::numbers::restore_number_text(bytes, &mut v);
    Ok((v, restored))
}

fn json_msg(e: &serde_json::Error) -> String {
    // serde_json appends " at line 1 column N"; the column is the useful part.
    let s = e.to_string();
    match s.rfind(" at line 1 column ") {
        Some(p) => format!("{} (column {})", &s[..p], &s[p + " at line 1 column ".len()..]),
        None => s,
    }
}

#[cfg(test)]
mod surrogate_tests {
    use super::*;

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        assert_eq!(replace_lone_surrogates(br#"{"a":"x"}"#), None);
        assert_eq!(replace_lone_surrogates(br#"{"a":"\ud83d\ude00"}"#), None, "a pair is kept");
        assert_eq!(replace_lone_surrogates(br#"{"a":"\\ud800"}"#), None, "an escaped backslash");
        let got = replace_lone_surrogates(br#"{"a":"x\ud800y","b":"\udc00"}"#).unwrap();
        assert_eq!(got, br#"{"a":"x\ufffdy","b":"\ufffd"}"#);
        assert!(parse_json(&got).is_ok());
    }
}
