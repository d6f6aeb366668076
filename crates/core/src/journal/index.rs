//! Line index: the byte ranges of the physical lines of a journal, found with memchr.

/// One physical line: `start..end` excludes the `\n` (and a `\r` before it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line {
    /// Physical line number, from 1.
    pub number: usize,
    pub start: usize,
    pub end: usize,
    /// Whether the line was terminated by `\n` (false only for a last line without one).
    pub terminated: bool,
}

/// Indexes every physical line of `bytes`.
pub fn index_lines(bytes: &[u8]) -> Vec<Line> {
    let mut lines = Vec::with_capacity(bytes.len() / 256 + 1);
    let mut start = 0;
    let mut number = 1;
    for nl in memchr::memchr_iter(b'\n', bytes) {
        let end = if nl > start && bytes[nl - 1] == b'\r' { nl - 1 } else { nl };
        lines.push(Line { number, start, end, terminated: true });
        start = nl + 1;
        number += 1;
    }
    if start < bytes.len() {
        let end = bytes.len();
        lines.push(Line { number, start, end, terminated: false });
    }
    lines
}

/// Counts lines the way `wc -l` does (newline bytes), for benchmarks.
pub fn count_newlines(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crlf_and_unterminated_last_line() {
        let l = index_lines(b"a\r\nbb\n\nccc");
        assert_eq!(l.len(), 4);
        assert_eq!((l[0].start, l[0].end), (0, 1));
        assert_eq!((l[1].start, l[1].end, l[1].number), (3, 5, 2));
        assert_eq!((l[2].start, l[2].end), (6, 6));
        assert_eq!((l[3].start, l[3].end, l[3].terminated), (7, 10, false));
    }

    #[test]
    fn empty_input_has_no_lines() {
        assert!(index_lines(b"").is_empty());
        assert_eq!(index_lines(b"\n").len(), 1);
    }
}
