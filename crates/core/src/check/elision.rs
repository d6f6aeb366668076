//! The elision candidates of a request and the tokens eliding each would free: the one rule
//! behind `audit`'s `elide-missing` / `elide-stopped-early` savings and the `/context` hint of
//! `tokens` ("`elide-keep-K` would free ≈ N").

use std::collections::HashSet;

use crate::journal::Journal;
use crate::projection::{markers, Block};
use crate::strategy::elide::marker_for;
use crate::tokens::BLOCK_FRAMING;

/// An open block that eliding may collapse to its marker.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub id: String,
    /// Raw tokens the block frees collapsed to its marker (0 when the marker is not smaller).
    pub frees: u64,
}

/// Which blocks of a request are open to eliding.
#[derive(Debug, Clone, Copy)]
pub struct Open<'a> {
    /// The most recent results that stay (`keep_results`).
    pub keep: usize,
    /// Whether attachments are candidates (spec §5; the `/context` hint counts results only).
    pub attachments: bool,
    /// Ids an earlier elision or clear named already.
    pub named: &'a HashSet<String>,
}

/// Raw tokens a block of `block_tokens` frees collapsed to `marker`: its tokens minus the
/// marker's with the block framing; 0 when the marker is not smaller.
pub fn frees(block_tokens: u64, marker: &str, count: &mut dyn FnMut(&str) -> u64) -> u64 {
    block_tokens.saturating_sub(BLOCK_FRAMING.saturating_add(count(marker)))
}

/// The elision candidates among `blocks` (in request order, oldest first): results outside the
/// `keep` most recent (and attachments when asked), not named yet, not already a marker, that
/// have a marker. `tokens` counts a block, `count` a marker's text.
pub fn candidates<'b>(
    journal: &Journal,
    blocks: impl Iterator<Item = &'b Block> + Clone,
    open: Open<'_>,
    tokens: &mut dyn FnMut(&Block) -> u64,
    count: &mut dyn FnMut(&str) -> u64,
) -> Vec<Candidate> {
    let results = blocks.clone().filter(|b| matches!(b, Block::Result { .. })).count();
    let mut protected = results.saturating_sub(open.keep);
    let mut out = Vec::new();
    for b in blocks {
        let eligible = match b {
            Block::Result { .. } => {
                let outside = protected > 0;
                protected = protected.saturating_sub(1);
                outside
            }
            Block::Attachment { .. } => open.attachments,
            _ => false,
        };
        let Some(id) = b.id().filter(|id| eligible && !open.named.contains(*id) && !markers::is_marker(b.text()))
        else {
            continue;
        };
        let Some(m) = marker_for(journal, b) else { continue };
        out.push(Candidate { id: id.to_string(), frees: frees(tokens(b), &m, count) });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::reader::parse_bytes_for_test;

    fn result(call: &str, text: &str) -> Block {
        Block::Result { call: call.into(), tool: "read".into(), text: text.into() }
    }

    fn run(blocks: &[Block], keep: usize, named: &HashSet<String>) -> Vec<Candidate> {
        let j = parse_bytes_for_test("{\"kind\":\"session\",\"id\":\"s\"}\n");
        let open = Open { keep, attachments: false, named };
        candidates(&j, blocks.iter(), open, &mut |b| b.text().len() as u64, &mut |m| m.len() as u64)
    }

    #[test]
    fn results_outside_the_kept_ones_free_their_size_less_the_marker() {
        let big = "x".repeat(500);
        let blocks = [result("c1", &big), result("c2", "ok"), result("c3", &big)];
        let none = HashSet::new();
        let c = run(&blocks, 1, &none);
        assert_eq!(c.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["c1", "c2"]);
        assert!(c[0].frees > 300, "{c:?}");
        assert_eq!(c[1].frees, 0, "a marker larger than the result frees nothing");
        let named: HashSet<String> = ["c1".to_string()].into();
        assert_eq!(run(&blocks, 1, &named).len(), 1, "a named block is not a candidate");
        assert!(run(&blocks, 3, &none).is_empty());
    }

    /// Regression: audit's copy took "keep more results than there are" for "keep none" and
    /// offered every result, the protected ones included.
    #[test]
    fn keeping_more_results_than_there_are_leaves_no_candidate() {
        let big = "x".repeat(500);
        assert!(run(&[result("c1", &big), result("c2", &big)], 5, &HashSet::new()).is_empty());
        assert_eq!(run(&[result("c1", &big)], 0, &HashSet::new()).len(), 1);
    }
}
