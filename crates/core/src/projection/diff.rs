//! How one request relates to another: the one diff engine behind `diff`, `turns`, `cache` and
//! the report's turn browser.
//!
//! * [`BlockKey`]: a block's identity across requests (type and id; id-less blocks — system,
//!   summaries — by their rank among blocks of their type);
//! * [`first_break`]: the first block of the previous request not repeated in place (where a
//!   prompt-cache prefix breaks), and [`Cause`], what happened to it;
//! * [`match_blocks`]: both requests matched by identity, block by block: same, changed, added,
//!   removed.
//!
//! Everything is linear in the number of blocks: blocks are compared by identity and then by
//! [`same_block`] (pointer equality of shared texts first); no text is diffed here.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use super::Block;

/// Block equality that first compares shared texts and values by pointer: requests of one replay
/// share their unchanged texts, so comparing consecutive requests costs O(blocks), not O(bytes).
pub fn same_block(a: &Block, b: &Block) -> bool {
    fn t(x: &crate::journal::Text, y: &crate::journal::Text) -> bool {
        Arc::ptr_eq(x, y) || x == y
    }
    fn v(x: &Arc<serde_json::Value>, y: &Arc<serde_json::Value>) -> bool {
        Arc::ptr_eq(x, y) || x == y
    }
    match (a, b) {
        (Block::System { text: x, tools: tx }, Block::System { text: y, tools: ty }) => {
            t(x, y)
                && match (tx, ty) {
                    (Some(p), Some(q)) => v(p, q),
                    (None, None) => true,
                    _ => false,
                }
        }
        (Block::Summary { text: x }, Block::Summary { text: y }) => t(x, y),
        (Block::User { id: i, text: x }, Block::User { id: j, text: y })
        | (Block::Notice { id: i, text: x }, Block::Notice { id: j, text: y }) => i == j && t(x, y),
        (Block::Attachment { id: i, user: u, text: x }, Block::Attachment { id: j, user: w, text: y }) => {
            i == j && u == w && t(x, y)
        }
        (Block::Assistant { id: i, text: x, calls: cx }, Block::Assistant { id: j, text: y, calls: cy }) => {
            i == j
                && t(x, y)
                && cx.len() == cy.len()
                && cx.iter().zip(cy).all(|(p, q)| p.id == q.id && p.tool == q.tool && v(&p.args, &q.args))
        }
        (Block::Result { call: i, tool: p, text: x }, Block::Result { call: j, tool: q, text: y }) => {
            i == j && p == q && t(x, y)
        }
        _ => false,
    }
}

/// A block's identity across requests: its type and id, or for an id-less block (system,
/// summary) its rank among the blocks of its type (from 0).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct BlockKey {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub id: Option<String>,
    /// Rank among the id-less blocks of this type; 0 for blocks with an id.
    pub nth: usize,
}

impl BlockKey {
    /// How `diff` names a block: its id, `system`, or `summary #k` (from 1).
    pub fn label(&self) -> String {
        match (&self.id, self.kind) {
            (Some(id), _) => id.clone(),
            (None, "summary") => format!("summary #{}", self.nth + 1),
            (None, kind) => kind.to_string(),
        }
    }
}

/// The identities of a request's blocks, in order.
pub fn keys(blocks: &[Block]) -> Vec<BlockKey> {
    let mut nth: HashMap<&'static str, usize> = HashMap::new();
    blocks
        .iter()
        .map(|b| match b.id() {
            Some(id) => BlockKey { kind: b.type_name(), id: Some(id.to_string()), nth: 0 },
            None => {
                let n = nth.entry(b.type_name()).or_insert(0);
                *n += 1;
                BlockKey { kind: b.type_name(), id: None, nth: *n - 1 }
            }
        })
        .collect()
}

/// What happened to the first block of the previous request not repeated in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// The request ends before it.
    Ended,
    /// The block with its identity stands there, with other content.
    Rewritten,
    /// Another block stands there; the block is further on in the request.
    Moved,
    /// Another block stands there; the block is no longer in the request.
    Dropped,
}

/// Where a request stops repeating the previous one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PrefixBreak {
    /// Index (from 0) of the first block of the previous request not repeated in place.
    pub at: usize,
    pub cause: Cause,
}

/// Whether `a` and `b` have the same identity, given the blocks before them are the same (so the
/// ranks of id-less blocks agree).
fn same_identity(a: &Block, b: &Block) -> bool {
    a.type_name() == b.type_name() && a.id() == b.id()
}

/// What happened to `was`, the block at `at` of the previous request, in `cur` (whose blocks
/// before `at` repeat the previous request's).
pub fn cause(was: &Block, cur: &[Block], at: usize) -> Cause {
    match cur.get(at) {
        None => Cause::Ended,
        Some(b) if same_identity(b, was) => Cause::Rewritten,
        Some(_) if cur[at + 1..].iter().any(|c| same_identity(c, was)) => Cause::Moved,
        Some(_) => Cause::Dropped,
    }
}

/// The first block of `prev` that `cur` does not repeat in place, and why; `None` when `cur`
/// starts with the whole of `prev` (an append, or the same request).
///
/// `unchanged`: blocks known to be repeated already (e.g. a replay's
/// [`crate::strategy::TurnRequest::unchanged`]); the scan starts there.
pub fn first_break(prev: &[Block], cur: &[Block], unchanged: usize) -> Option<PrefixBreak> {
    let start = unchanged.min(prev.len()).min(cur.len());
    let at = (start..prev.len()).find(|&i| !cur.get(i).is_some_and(|b| same_block(b, &prev[i])))?;
    Some(PrefixBreak { at, cause: cause(&prev[at], cur, at) })
}

/// How a block of the newer request relates to the older one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Matched {
    /// Byte-identical to the block of the same identity, at this index of the older request.
    Same(usize),
    /// Same identity as the block at this index of the older request, other content.
    Changed(usize),
    /// No block of the older request has its identity.
    Added,
}

/// Two requests matched block by block by identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Matching {
    /// The identities of the older request's blocks.
    pub old_keys: Vec<BlockKey>,
    /// The identities of the newer request's blocks.
    pub new_keys: Vec<BlockKey>,
    /// One entry per block of the newer request.
    pub new: Vec<Matched>,
    /// Indices of the older request's blocks with no counterpart in the newer one, in order.
    pub removed: Vec<usize>,
}

impl Matching {
    /// Pairs `(old, new)` of blocks with one identity and different content, in the older
    /// request's order.
    pub fn changed(&self) -> Vec<(usize, usize)> {
        let mut v: Vec<(usize, usize)> = (self.new.iter().enumerate())
            .filter_map(|(j, m)| match m {
                Matched::Changed(i) => Some((*i, j)),
                _ => None,
            })
            .collect();
        v.sort_unstable();
        v
    }

    /// Indices of the newer request's blocks the older one does not have, in order.
    pub fn added(&self) -> impl Iterator<Item = usize> + '_ {
        self.new.iter().enumerate().filter(|(_, m)| **m == Matched::Added).map(|(j, _)| j)
    }
}

/// Matches `new` against `old` by block identity.
pub fn match_blocks(old: &[Block], new: &[Block]) -> Matching {
    let (old_keys, new_keys) = (keys(old), keys(new));
    let index: HashMap<&BlockKey, usize> = old_keys.iter().enumerate().map(|(i, k)| (k, i)).collect();
    let mut seen = vec![false; old.len()];
    let matched = new_keys
        .iter()
        .zip(new)
        .map(|(k, b)| match index.get(k) {
            Some(&i) => {
                seen[i] = true;
                if same_block(&old[i], b) {
                    Matched::Same(i)
                } else {
                    Matched::Changed(i)
                }
            }
            None => Matched::Added,
        })
        .collect();
    let removed = (0..old.len()).filter(|&i| !seen[i]).collect();
    Matching { old_keys, new_keys, new: matched, removed }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(id: &str, t: &str) -> Block {
        Block::User { id: id.into(), text: t.into() }
    }

    #[test]
    fn finds_the_first_break_and_its_cause() {
        let a = vec![u("u1", "a"), u("u2", "b")];
        assert_eq!(first_break(&a, &[u("u1", "a"), u("u2", "b"), u("u3", "c")], 0), None);
        assert_eq!(
            first_break(&a, &[u("u1", "a"), u("u2", "B")], 0),
            Some(PrefixBreak { at: 1, cause: Cause::Rewritten })
        );
        assert_eq!(first_break(&a, &[u("u2", "b"), u("u1", "a")], 0), Some(PrefixBreak { at: 0, cause: Cause::Moved }));
        assert_eq!(first_break(&a, &[u("u2", "b")], 0), Some(PrefixBreak { at: 0, cause: Cause::Dropped }));
        assert_eq!(first_break(&a, &[u("u3", "c")], 0), Some(PrefixBreak { at: 0, cause: Cause::Dropped }));
        assert_eq!(first_break(&a, &[u("u1", "a")], 0), Some(PrefixBreak { at: 1, cause: Cause::Ended }));
    }

    #[test]
    fn matches_by_identity() {
        let s = |t: &str| Block::Summary { text: t.into() };
        let old = vec![s("x"), u("u1", "a"), u("u2", "b")];
        let new = vec![s("y"), u("u2", "b"), u("u3", "c")];
        let m = match_blocks(&old, &new);
        assert_eq!(m.new, vec![Matched::Changed(0), Matched::Same(2), Matched::Added]);
        assert_eq!(m.removed, vec![1]);
        assert_eq!(m.changed(), vec![(0, 0)]);
        assert_eq!(m.new_keys[0].label(), "summary #1");
    }
}
