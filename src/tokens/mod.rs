//! Token estimates (spec `strategies.md` §3).
//!
//! Everything that needs a token count goes through the [`Estimator`] trait, so strategies,
//! the cache simulation and the audit share one notion of "tokens".
//!
//! * [`estimator`]: the tiktoken estimator (`o200k_base` / `cl100k_base`), the piece rule for long
//!   texts, a memo per distinct content and parallel batch counting;
//! * [`calibrate`]: the recency-weighted multiplier against `usage.prompt_tokens`;
//! * [`budget`]: the budget settings of a harness TOML (journal-v1 §6), each with its rule.

pub mod budget;
pub mod calibrate;
pub mod estimator;

pub use calibrate::Calibrator;
pub use estimator::{Encoding, TiktokenEstimator};

use crate::journal::{Body, Journal};
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

/// Tokens every request adds to its blocks (spec §3).
pub const FRAMING: u64 = 3;

/// Per request: 3 + the blocks' sum.
pub fn request_tokens<'a>(est: &dyn Estimator, blocks: impl IntoIterator<Item = &'a Block>) -> u64 {
    FRAMING + blocks.into_iter().map(|b| est.block(b)).sum::<u64>()
}

/// A crude stand-in (one token per four characters, rounded up) for tests and for callers that
/// must not depend on a tokenizer.
pub struct CharEstimator;

impl Estimator for CharEstimator {
    fn count(&self, s: &str) -> u64 {
        (crate::text::chars(s) as u64).div_ceil(4)
    }
}

/// Raw estimate and provider figures of one recorded turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordedTurn {
    /// Turn number, from 1.
    pub turn: usize,
    /// Index of the turn's `assistant` record in `journal.records`.
    pub record: usize,
    /// Raw estimate of the recorded request (spec §3 framing).
    pub raw: u64,
    /// `usage.prompt_tokens` of the turn, when recorded.
    pub prompt_tokens: Option<u64>,
    /// `usage.cached_tokens` of the turn, when recorded.
    pub cached_tokens: Option<u64>,
    /// `usage.completion_tokens` of the turn, when recorded.
    pub completion_tokens: Option<u64>,
}

/// The raw estimate of every recorded request, with the provider's usage figures, in turn order.
/// One pass over the journal: each turn counts only the blocks after the ones it repeats unchanged
/// from the previous turn ([`crate::strategy::TurnRequest::unchanged`]), so the cost is linear
/// in the journal, not in turns × context.
pub fn recorded_turns(journal: &Journal, est: &dyn Estimator) -> Vec<RecordedTurn> {
    let recorded = crate::strategy::Strategy::recorded();
    let mut out = Vec::with_capacity(journal.turns.len());
    let mut per_block: Vec<u64> = Vec::new();
    let mut sum = 0u64;
    crate::strategy::replay(journal, &recorded, est, |r| {
        let keep = r.unchanged.min(per_block.len());
        sum -= per_block.drain(keep..).sum::<u64>();
        for b in &r.blocks[keep..] {
            let n = est.block(b);
            per_block.push(n);
            sum += n;
        }
        let usage = match &journal.records[r.record].body {
            Body::Assistant(a) => a.usage.clone(),
            _ => None,
        };
        let usage = usage.unwrap_or_default();
        out.push(RecordedTurn {
            turn: r.turn,
            record: r.record,
            raw: FRAMING + sum,
            prompt_tokens: usage.prompt_tokens,
            cached_tokens: usage.cached_tokens,
            completion_tokens: usage.completion_tokens,
        });
    });
    out
}

/// A [`Calibrator`] fed with every recorded turn of `journal` (its multiplier before turn t only
/// uses turns before t, so feeding all turns up front is safe).
pub fn calibrator_for(journal: &Journal, est: &dyn Estimator) -> Calibrator {
    let mut c = Calibrator::new();
    for t in recorded_turns(journal, est) {
        c.observe(t.turn, t.prompt_tokens, t.raw);
    }
    c
}

/// The estimator for `journal`: encoding from `flag` (`--encoding`), else the session's
/// `encoding`, else `o200k_base` (spec §3).
pub fn estimator_for(journal: &Journal, flag: Option<&str>) -> Result<TiktokenEstimator, estimator::EncodingError> {
    let hint = journal.session().and_then(|s| s.encoding.clone());
    Ok(TiktokenEstimator::new(Encoding::choose(flag, hint.as_deref())?))
}
