//! `baseline`, `truncate-N`, `age-truncate-N-keep-K` and `mid-truncate-N` (spec §2).
//!
//! All four keep every raw block at its raw position (request index = system offset + raw
//! index), so they append the new blocks of each turn and touch a block at most once: cache
//! friendly by construction.

use crate::projection::Block;

use super::{Family, Origin, Out, TurnCx};

/// `…[truncated M chars]` after the first `n` characters, when `text` has more than `n`.
pub fn truncate_chars(text: &str, n: usize) -> Option<String> {
    if text.len() <= n {
        return None; // n bytes or fewer: n characters or fewer
    }
    // An ASCII head ends at byte n (a SIMD check, not a walk over n characters).
    let cut = if text.as_bytes()[..n].is_ascii() { n } else { text.char_indices().nth(n)?.0 };
    let removed = crate::text::chars(&text[cut..]);
    Some(format!("{}…[truncated {removed} chars]", &text[..cut]))
}

/// Codex's head+tail cut: a text of more than `n` bytes keeps its first ⌈n/2⌉ and last ⌊n/2⌋
/// bytes, each end moved inward to a character boundary, with `…[truncated M bytes]…` between.
pub fn mid_truncate_bytes(text: &str, n: usize) -> Option<String> {
    if text.len() <= n {
        return None;
    }
    let mut head = n.div_ceil(2);
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail_start = text.len() - n / 2;
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let removed = tail_start - head;
    Some(format!("{}…[truncated {removed} bytes]…{}", &text[..head], &text[tail_start..]))
}

/// `baseline`: the raw conversation verbatim.
pub struct Baseline;

impl Family for Baseline {
    fn before_turn(&mut self, cx: &TurnCx<'_, '_>, out: &mut Out) {
        for b in &cx.raw.blocks[cx.new.clone()] {
            out.push(b.block.clone(), Origin::Verbatim, cx.est);
        }
    }
}

/// Appends the new raw blocks, results passed through `f` (None: verbatim).
fn append_with(cx: &TurnCx<'_, '_>, out: &mut Out, f: impl Fn(&str) -> Option<String>, origin: Origin) {
    for b in &cx.raw.blocks[cx.new.clone()] {
        match &b.block {
            Block::Result { text, .. } => match f(text) {
                Some(t) => {
                    let mut nb = b.block.clone();
                    nb.set_text(t.into());
                    out.push(nb, origin, cx.est);
                }
                None => out.push(b.block.clone(), Origin::Verbatim, cx.est),
            },
            _ => out.push(b.block.clone(), Origin::Verbatim, cx.est),
        }
    }
}

/// `truncate-N`.
pub struct Truncate {
    pub n: usize,
}

impl Family for Truncate {
    fn before_turn(&mut self, cx: &TurnCx<'_, '_>, out: &mut Out) {
        append_with(cx, out, |t| truncate_chars(t, self.n), Origin::Truncated);
    }
}

/// `mid-truncate-N`.
pub struct MidTruncate {
    pub n: usize,
}

impl Family for MidTruncate {
    fn before_turn(&mut self, cx: &TurnCx<'_, '_>, out: &mut Out) {
        append_with(cx, out, |t| mid_truncate_bytes(t, self.n), Origin::MidTruncated);
    }
}

/// `age-truncate-N-keep-K`: `truncate-N` except for the K last results of the request.
pub struct AgeTruncate {
    n: usize,
    keep: usize,
    /// Conversation indices (request index − `out.head`) of every result so far.
    results: Vec<usize>,
    /// `results[..aged]` have been through the truncate rule.
    aged: usize,
}

impl AgeTruncate {
    pub fn new(n: usize, keep: usize) -> AgeTruncate {
        AgeTruncate { n, keep, results: Vec::new(), aged: 0 }
    }
}

impl Family for AgeTruncate {
    fn before_turn(&mut self, cx: &TurnCx<'_, '_>, out: &mut Out) {
        for b in &cx.raw.blocks[cx.new.clone()] {
            if matches!(b.block, Block::Result { .. }) {
                self.results.push(out.blocks.len() - out.head);
            }
            out.push(b.block.clone(), Origin::Verbatim, cx.est);
        }
        let old = self.results.len().saturating_sub(self.keep);
        while self.aged < old {
            let i = out.head + self.results[self.aged];
            self.aged += 1;
            if let Some(t) = truncate_chars(out.blocks[i].text(), self.n) {
                out.set_text(i, t, Origin::Truncated, cx.est);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::testkit::*;

    #[test]
    fn truncate_marker_counts_characters() {
        assert_eq!(truncate_chars("héllo wörld", 5).unwrap(), "héllo…[truncated 6 chars]");
        assert_eq!(truncate_chars("abc", 3), None);
        assert_eq!(truncate_chars("abcd", 0).unwrap(), "…[truncated 4 chars]");
        // The ASCII fast path and the character walk agree at the boundary.
        assert_eq!(truncate_chars("abcdé", 4).unwrap(), "abcd…[truncated 1 chars]");
        assert_eq!(truncate_chars("abcé", 4), None);
        assert_eq!(truncate_chars("abcéf", 4).unwrap(), "abcé…[truncated 1 chars]");
    }

    #[test]
    fn mid_truncate_moves_ends_inward() {
        // 10 bytes, n = 5: head ⌈5/2⌉ = 3, tail ⌊5/2⌋ = 2, removed 5.
        assert_eq!(mid_truncate_bytes("0123456789", 5).unwrap(), "012…[truncated 5 bytes]…89");
        assert_eq!(mid_truncate_bytes("0123456789", 10), None);
        // "é" is 2 bytes: "aé" + ... head of 2 bytes would split é, so it moves back to 1.
        let s = "aébcdefgé"; // a(1) é(2) b c d e f g(6) é(2) = 11 bytes
        let t = mid_truncate_bytes(s, 4).unwrap(); // head 2 → 1 ("a"), tail starts at 9 → "é"
        assert_eq!(t, "a…[truncated 8 bytes]…é");
    }

    fn fixture() -> crate::journal::Journal {
        let big = "x".repeat(30);
        journal(vec![
            session(),
            system("sys"),
            user("u1", "task"),
            assistant("a1", "", vec![call("c1", "read", r#"{"path":"a"}"#)]),
            result("c1", "read", &big),
            assistant("a2", "", vec![call("c2", "read", r#"{"path":"b"}"#)]),
            result("c2", "read", &big),
            assistant("a3", "", vec![call("c3", "read", r#"{"path":"c"}"#)]),
            result("c3", "read", "short"),
            assistant("a4", "done", vec![]),
        ])
    }

    #[test]
    fn truncate_cuts_every_long_result() {
        let j = fixture();
        let reqs = requests(&j, "truncate-10");
        let cut = format!("{}…[truncated 20 chars]", "x".repeat(10));
        assert_eq!(result_texts(&reqs[3].0), [cut.as_str(), cut.as_str(), "short"]);
        assert_eq!(reqs[3].1[3], Origin::Truncated);
        assert_eq!(reqs[3].1[2], Origin::Verbatim);
    }

    #[test]
    fn age_truncate_keeps_the_last_k_verbatim() {
        let j = fixture();
        let reqs = requests(&j, "age-truncate-10-keep-1");
        let cut = format!("{}…[truncated 20 chars]", "x".repeat(10));
        let big = "x".repeat(30);
        assert_eq!(result_texts(&reqs[1].0), [big.as_str()]);
        assert_eq!(result_texts(&reqs[2].0), [cut.as_str(), big.as_str()]);
        assert_eq!(result_texts(&reqs[3].0), [cut.as_str(), cut.as_str(), "short"]);
        let reqs = requests(&j, "age-truncate-10-keep-0");
        assert_eq!(result_texts(&reqs[1].0), [cut.as_str()]);
    }

    #[test]
    fn mid_truncate_replays() {
        let j = fixture();
        let reqs = requests(&j, "mid-truncate-10");
        assert_eq!(result_texts(&reqs[3].0)[0], "xxxxx…[truncated 20 bytes]…xxxxx");
        assert_eq!(result_texts(&reqs[3].0)[2], "short");
    }
}

#[cfg(test)]
mod late_system {
    use super::*;
    use crate::strategy::testkit::*;

    /// A system record that arrives after the conversation started is still the first block,
    /// and the rules still transform the right blocks.
    #[test]
    fn a_late_system_block_shifts_nothing() {
        let big = "x".repeat(30);
        let j = journal(vec![
            session(),
            user("u1", "task"),
            assistant("a1", "", vec![call("c1", "read", r#"{"path":"a"}"#)]),
            result("c1", "read", &big),
            assistant("a2", "", vec![call("c2", "read", r#"{"path":"b"}"#)]),
            result("c2", "read", &big),
            system("late system"),
            assistant("a3", "", vec![call("c3", "read", r#"{"path":"c"}"#)]),
            result("c3", "read", &big),
            assistant("a4", "done", vec![]),
        ]);
        for name in ["age-truncate-10-keep-1", "per-tool-keep-1", "elide-40-20-keep-1"] {
            let reqs = requests(&j, name);
            let (b, o) = &reqs[3];
            assert_eq!(ids(b), ["system", "u1", "a1", "c1", "a2", "c2", "a3", "c3"], "{name}");
            assert!(o[3].is_changed() && o[5].is_changed(), "{name}: c1 and c2 are old results: {o:?}");
            assert!(!o[7].is_changed() && b[7].text() == big, "{name}: c3 is kept");
            assert_eq!(b[1].text(), "task");
            assert!([0, 1, 2, 4, 6].iter().all(|&i| o[i] == Origin::Verbatim), "{name}: {o:?}");
        }
    }
}
