//! Byte scans of JSON text before (or beside) serde_json: where a string ends. The bottom of the
//! journal's JSON handling: `json` (depth and value guards) and `numbers` (number text) both skip
//! strings with it.

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
