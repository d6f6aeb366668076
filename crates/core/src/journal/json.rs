//! Guarded JSON: a byte scan for nesting depth and value count before serde_json sees a line,
//! so no input can exhaust the stack or memory, and parse errors worded without serde's
//! "at line 1 column" noise.

use serde::Deserialize;
use serde_json::Value;

use super::error::JournalErrorKind;
use super::reader::MAX_DEPTH;

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

/// The index just past the string that opens at `bytes[open]` (a `"`), or `None` when it is not
/// closed.
pub(super) fn skip_string(bytes: &[u8], open: usize) -> Option<usize> {
    let mut i = open + 1;
    loop {
        let k = bytes.get(i..).and_then(|rest| memchr::memchr2(b'"', b'\\', rest))?;
        if bytes[i + k] == b'\\' {
            i += k + 2;
        } else {
            return Some(i + k + 1);
        }
    }
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
