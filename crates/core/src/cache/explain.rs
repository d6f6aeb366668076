//! Why a request does not start with the whole previous one, as typed values: the block named
//! ([`BlockRef`]) and what the diff engine found there ([`Divergence`], from its [`Cause`]).
//! Both `cache`'s simulated breaks and the recorded `prefix_change` cause carry one; the sentence
//! is written by the `ctxj` crate's `render` (the library words nothing meant for a terminal).

use crate::projection::diff::Cause;
use crate::projection::Block;
use crate::strategy::Origin;

/// A block named for reports: its type, its id and how the strategy produced it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct BlockRef {
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// [`Origin::describe`] of the block in its request.
    pub origin: String,
}

impl BlockRef {
    pub(crate) fn of(b: &Block, o: Option<&Origin>) -> BlockRef {
        BlockRef {
            kind: b.type_name(),
            id: b.id().map(str::to_string),
            origin: o.map(Origin::describe).unwrap_or_else(|| "verbatim".into()),
        }
    }
}

impl std::fmt::Display for BlockRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.id {
            Some(id) => write!(f, "{} {}", self.kind, id),
            None => f.write_str(self.kind),
        }
    }
}

/// Where a request stops repeating the previous one, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Divergence {
    /// The first block of the previous request not repeated in place, from 1.
    pub block: usize,
    /// That block in the previous request.
    pub was: BlockRef,
    /// The block now at that position (`None`: the request ends before it).
    pub now: Option<BlockRef>,
    /// What happened to `was`.
    pub cause: Cause,
    /// Blocks of the previous request after `was` (gone with it when the request ends).
    pub after: usize,
}

impl Divergence {
    /// The divergence at block `i` (from 0) between `prev` (with its origins) and `cur`.
    pub(crate) fn at(
        prev: &[Block],
        prev_origins: &[Origin],
        cur: &[Block],
        cur_origins: &[Origin],
        i: usize,
        cause: Cause,
    ) -> Divergence {
        Divergence {
            block: i + 1,
            was: BlockRef::of(&prev[i], prev_origins.get(i)),
            now: cur.get(i).map(|b| BlockRef::of(b, cur_origins.get(i))),
            cause,
            after: prev.len() - i - 1,
        }
    }
}
