//! Token estimates (spec `strategies.md` §3).
//!
//! Everything that needs a token count goes through the [`Estimator`] trait, so strategies,
//! the cache simulation and the audit share one notion of "tokens".

use crate::projection::Block;

/// Counts tokens of strings; blocks and requests are framed as the spec says.
pub trait Estimator: Sync {
    /// n(s): tokens of one string.
    fn count(&self, s: &str) -> u64;

    /// Per block: 4 + n(text); an assistant block adds n(tool) + n(canonical args) per call;
    /// the system block adds n(canonical tools JSON) when tools are present.
    fn block(&self, b: &Block) -> u64 {
        let mut n = 4 + self.count(b.text());
        match b {
            Block::Assistant { calls, .. } => {
                for c in calls {
                    n += self.count(&c.tool) + self.count(&crate::projection::block::canonical_value(&c.args));
                }
            }
            Block::System { tools: Some(t), .. } => n += self.count(&crate::projection::block::canonical_value(t)),
            _ => {}
        }
        n
    }
}

/// Per request: 3 + the blocks' sum.
pub fn request_tokens<'a>(est: &dyn Estimator, blocks: impl IntoIterator<Item = &'a Block>) -> u64 {
    3 + blocks.into_iter().map(|b| est.block(b)).sum::<u64>()
}

/// A crude stand-in (one token per four characters, rounded up) for tests and for callers that
/// must not depend on a tokenizer.
pub struct CharEstimator;

impl Estimator for CharEstimator {
    fn count(&self, s: &str) -> u64 {
        (crate::render::text::chars(s) as u64).div_ceil(4)
    }
}
