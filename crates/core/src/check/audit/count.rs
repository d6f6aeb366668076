//! Token counts of the audit's replay: blocks memoized by the identity of their shared texts,
//! and the running sum of the conversation.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::journal::Text;
use crate::projection::block::canonical_value;
use crate::projection::{Block, Projection};
use crate::tokens::{Estimator, BLOCK_FRAMING, FRAMING};

/// Token counts of blocks, memoized by the identity of their shared texts and args: the replay
/// clones `Arc`s, so an unchanged block costs a look-up instead of a recount on every turn, which
/// keeps the audit linear in the journal. The cache holds a clone of each `Arc` it keys on, so an
/// address is never reused for another text while cached.
pub(super) struct Memo<'e> {
    pub(super) est: &'e dyn Estimator,
    pub(super) texts: HashMap<usize, (Text, u64)>,
    pub(super) values: HashMap<usize, (Arc<Value>, u64)>,
}

impl<'e> Memo<'e> {
    pub(super) fn new(est: &'e dyn Estimator) -> Self {
        Memo { est, texts: HashMap::new(), values: HashMap::new() }
    }

    pub(super) fn text(&mut self, t: &Text) -> u64 {
        let key = Arc::as_ptr(t) as *const u8 as usize;
        match self.texts.get(&key) {
            Some((_, n)) => *n,
            None => {
                let n = self.est.count(t);
                self.texts.insert(key, (t.clone(), n));
                n
            }
        }
    }

    pub(super) fn value(&mut self, v: &Arc<Value>) -> u64 {
        let key = Arc::as_ptr(v) as usize;
        match self.values.get(&key) {
            Some((_, n)) => *n,
            None => {
                let n = self.est.count(&canonical_value(v));
                self.values.insert(key, (v.clone(), n));
                n
            }
        }
    }

    /// The same figure as [`Estimator::block`].
    pub(super) fn block(&mut self, b: &Block) -> u64 {
        match b {
            Block::System { text, tools } => {
                BLOCK_FRAMING + self.text(text) + tools.as_ref().map_or(0, |t| self.value(t))
            }
            Block::Assistant { text, calls, .. } => {
                let mut n = BLOCK_FRAMING + self.text(text);
                for c in calls {
                    n += self.est.count(&c.tool) + self.value(&c.args);
                }
                n
            }
            Block::Summary { text }
            | Block::User { text, .. }
            | Block::Attachment { text, .. }
            | Block::Notice { text, .. }
            | Block::Result { text, .. } => BLOCK_FRAMING + self.text(text),
        }
    }

    /// The same figure as [`crate::tokens::request_tokens`].
    #[cfg(test)]
    pub(super) fn request(&mut self, p: &Projection) -> u64 {
        FRAMING + p.blocks().map(|b| self.block(b)).sum::<u64>()
    }
}

/// The running token sum of the conversation, extended while records only append blocks (so a
/// turn costs the blocks it added) and recounted (through the memo) after a decision.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) conv: Vec<u64>,
    pub(super) sum: u64,
}

impl Tally {
    /// Forget the per-block counts: the conversation may have changed anywhere.
    pub(super) fn invalidate(&mut self) {
        self.conv.clear();
        self.sum = 0;
    }

    /// Tokens of the whole request `p`, like [`crate::tokens::request_tokens`].
    pub(super) fn request(&mut self, memo: &mut Memo<'_>, p: &Projection) -> u64 {
        if self.conv.len() > p.conv.len() {
            self.invalidate();
        }
        while self.conv.len() < p.conv.len() {
            let n = memo.block(&p.conv[self.conv.len()].block);
            self.conv.push(n);
            self.sum += n;
        }
        let head: u64 = p.system.iter().chain(p.summaries.iter()).map(|b| memo.block(b)).sum();
        FRAMING + head + self.sum
    }
}
