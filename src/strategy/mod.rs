//! Strategies (spec `strategies.md` §1–§2): what the provider sees on each turn.
//!
//! [`parse`] reads a strategy name; [`replay`] runs a strategy over a journal turn by turn and
//! hands each request to a callback. `recorded` is the journal's own projection.

use crate::journal::Journal;
use crate::projection::{Block, Replayer};
use crate::tokens::Estimator;

/// A parsed strategy name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Strategy {
    /// The name as the user wrote it.
    pub name: String,
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Recorded,
}

/// A strategy name that cannot be parsed.
#[derive(Debug, thiserror::Error)]
#[error("unknown strategy {name:?}: {why}")]
pub struct StrategyError {
    pub name: String,
    pub why: String,
}

/// Parses a strategy name of spec §2.
pub fn parse(name: &str) -> Result<Strategy, StrategyError> {
    match name {
        "recorded" => Ok(Strategy { name: name.into(), kind: Kind::Recorded }),
        _ => Err(StrategyError { name: name.into(), why: "only `recorded` is implemented so far".into() }),
    }
}

/// One request of a replay.
pub struct TurnRequest<'a> {
    /// Turn number, from 1 (the k-th `assistant` record).
    pub turn: usize,
    /// Index of the turn's `assistant` record in `journal.records`.
    pub record: usize,
    /// The request's blocks in canonical order (system, summaries, conversation).
    pub blocks: &'a [Block],
}

/// Replays `strategy` over `journal`, calling `f` once per turn in order.
pub fn replay(journal: &Journal, strategy: &Strategy, _est: &dyn Estimator, mut f: impl FnMut(&TurnRequest<'_>)) {
    match strategy.kind {
        Kind::Recorded => {
            let mut r = Replayer::new(journal);
            for (k, &idx) in journal.turns.iter().enumerate() {
                r.advance_to(idx);
                let blocks: Vec<Block> = r.projection().blocks().cloned().collect();
                f(&TurnRequest { turn: k + 1, record: idx, blocks: &blocks });
            }
        }
    }
}
