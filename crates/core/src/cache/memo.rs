//! The per-replay block memo: each distinct block of a replay keyed and counted once
//! ([`BlockMemo::get`], through [`Estimator::block`], the one block counter), identified by the
//! address of its shared text, which the memo keeps alive.

use std::sync::Arc;

use super::model::{block_key, Key};
use crate::projection::Block;
use crate::tokens::Estimator;

/// Identity of a block for the per-replay memo: a 128-bit hash of its type, id, tool, user and
/// the addresses of its shared text / args / tools (the memo keeps those `Arc`s alive, so no
/// address is reused meanwhile). No allocation: this runs for every block a replay hands on
/// changed, which for a sliding window is the whole request every turn.
type Ident = u128;

fn ident(b: &Block, buf: &mut Vec<u8>) -> Ident {
    // The fields into one buffer, each string length-prefixed, then one XXH3 call: streaming
    // hashers pay per call, and most fields here are a few bytes.
    buf.clear();
    let mut field = |s: &[u8]| {
        buf.extend_from_slice(&(s.len() as u64).to_le_bytes());
        buf.extend_from_slice(s);
    };
    field(b.type_name().as_bytes());
    field(b.id().unwrap_or("").as_bytes());
    // The address of the shared text's bytes (and its length) identifies the `Arc`.
    field(&(b.text().as_ptr() as usize).to_le_bytes());
    field(&(b.text().len() as u64).to_le_bytes());
    match b {
        Block::Assistant { calls, .. } => {
            for c in calls {
                field(&(Arc::as_ptr(&c.args) as usize).to_le_bytes());
                field(c.id.as_bytes());
                field(c.tool.as_bytes());
            }
        }
        Block::System { tools: Some(t), .. } => field(&(Arc::as_ptr(t) as usize).to_le_bytes()),
        Block::Attachment { user, .. } => field(user.as_bytes()),
        Block::Result { tool, .. } => field(tool.as_bytes()),
        _ => {}
    }
    xxhash_rust::xxh3::xxh3_128(buf)
}

/// What keeps the addresses of an [`Ident`] alive: the block's shared text and args / tools.
struct Alive {
    _text: crate::journal::Text,
    _values: Vec<Arc<serde_json::Value>>,
}

impl Alive {
    fn of(b: &Block) -> Alive {
        let values = match b {
            Block::Assistant { calls, .. } => calls.iter().map(|c| c.args.clone()).collect(),
            Block::System { tools: Some(t), .. } => vec![t.clone()],
            _ => Vec::new(),
        };
        Alive { _text: b.shared_text().clone(), _values: values }
    }
}

/// Keys and token counts of blocks, each distinct block computed once per replay.
#[derive(Default)]
pub(crate) struct BlockMemo {
    map: rustc_hash::FxHashMap<Ident, (Key, u64, Alive)>,
    buf: Vec<u8>,
}

impl BlockMemo {
    /// Key and tokens of each of `blocks` (the changed tail of a request: usually a few blocks).
    /// On the calling thread: a handful of blocks per turn is too little work to hand to rayon
    /// (on two cores, per-turn parallel batches made `cache` 1.5× slower).
    pub(crate) fn get(&mut self, blocks: &[Block], est: &dyn Estimator) -> Vec<(Key, u64)> {
        blocks
            .iter()
            .map(|b| {
                let id = ident(b, &mut self.buf);
                let (k, t, _) = self.map.entry(id).or_insert_with(|| (block_key(b), est.block(b), Alive::of(b)));
                (*k, *t)
            })
            .collect()
    }

    /// Forgets the blocks that are not in `live` (the current request) once the memo holds
    /// more than twice as many, so texts a strategy has dropped (truncated copies, markers) are
    /// freed. Each pruning at least halves the memo, so its cost is amortized over the inserts.
    pub(crate) fn prune(&mut self, live: &[Block]) {
        if self.map.len() <= 2 * live.len() + 4096 {
            return;
        }
        let buf = &mut self.buf;
        let keep: rustc_hash::FxHashSet<Ident> = live.iter().map(|b| ident(b, buf)).collect();
        self.map.retain(|id, _| keep.contains(id));
    }
}
