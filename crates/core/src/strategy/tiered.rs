//! `tiered` / `tiered-fast` (spec §2, seed `003_*`), on the raw token estimate against the
//! session's `ctx_window`: before each turn, pressure = estimate / window. `-fast` only: at ≥ 50%
//! drop the oldest call/result pairs until 20 pairs remain, at ≥ 80% until 10 remain (dropped pairs
//! stay dropped). Then, if the recomputed pressure is ≥ 90%, compact with a tail of at most 30,000
//! tokens (at least 3 blocks), the old summary discarded. Nothing is pinned.

use std::collections::{HashMap, HashSet};

use crate::projection::Block;

use super::compact::{pass, Pause};
use super::elide::DEFAULT_WINDOW;
use super::{Family, Measure, Origin, Out, TurnCx};
use crate::tokens::FRAMING;

/// Tail budget of a tiered compaction, in tokens.
pub const TAIL_TOKENS: u64 = 30_000;

pub struct Tiered {
    fast: bool,
    pause: Pause,
}

impl Tiered {
    pub fn new(fast: bool) -> Tiered {
        Tiered { fast, pause: Pause::default() }
    }
}

/// Drops the oldest call/result pairs of the conversation until `keep` remain. A pair is a call
/// whose result stands in the conversation; an assistant block that loses every call and has
/// empty text goes too.
pub(crate) fn drop_pairs(out: &mut Out, keep: usize, turn: usize, est: &dyn crate::tokens::Estimator) {
    let results: HashMap<&str, usize> = (out.head..out.blocks.len())
        .filter_map(|i| match &out.blocks[i] {
            Block::Result { call, .. } => Some((call.as_str(), i)),
            _ => None,
        })
        .collect();
    let pairs: Vec<&str> = (out.head..out.blocks.len())
        .flat_map(|i| match &out.blocks[i] {
            Block::Assistant { calls, .. } => calls.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
            _ => Vec::new(),
        })
        .filter(|id| results.contains_key(id))
        .collect();
    if pairs.len() <= keep {
        return;
    }
    let drop: HashSet<String> = pairs[..pairs.len() - keep].iter().map(|s| s.to_string()).collect();
    let old = std::mem::replace(out, Out::new(out.measure));
    out.has_system = old.has_system;
    out.head = old.head;
    for (i, ((b, o), m)) in old.blocks.into_iter().zip(old.origins).zip(old.sizes).enumerate() {
        if i < old.head {
            out.push_sized(b, o, m);
            continue;
        }
        match b {
            Block::Result { ref call, .. } if drop.contains(call) => {}
            Block::Assistant { id, text, calls } if calls.iter().any(|c| drop.contains(&c.id)) => {
                let calls: Vec<_> = calls.into_iter().filter(|c| !drop.contains(&c.id)).collect();
                if !(calls.is_empty() && text.is_empty()) {
                    out.push(Block::Assistant { id, text, calls }, Origin::CallsDropped { turn }, est);
                }
            }
            b => out.push_sized(b, o, m),
        }
    }
}

impl Family for Tiered {
    fn measure(&self) -> Measure {
        Measure::Tokens
    }

    fn before_turn(&mut self, cx: &TurnCx<'_, '_>, out: &mut Out) {
        for b in &cx.raw.blocks[cx.new.clone()] {
            out.push(b.block.clone(), Origin::Verbatim, cx.est);
        }
        let window = cx.raw.ctx.ctx_window.filter(|&w| w > 0).unwrap_or(DEFAULT_WINDOW) as u128;
        let estimate = |out: &Out| (FRAMING + out.total) as u128;
        if self.fast {
            let e = estimate(out);
            if e * 10 >= window * 8 {
                drop_pairs(out, 10, cx.turn, cx.est);
            } else if e * 2 >= window {
                drop_pairs(out, 20, cx.turn, cx.est);
            }
        }
        let before = estimate(out);
        if before * 10 >= window * 9 && self.pause.allows(before as u64) && pass(cx, out, None, TAIL_TOKENS, false) {
            self.pause.record(before as u64, estimate(out) as u64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::testkit::*;
    use crate::tokens::Estimator as _;
    use serde_json::json;

    fn fixture(window: u64, pairs: usize, len: usize) -> crate::journal::Journal {
        let mut v = vec![session_ctx(json!({ "ctx_window": window })), system("sys"), user("u1", "task")];
        for i in 1..=pairs {
            v.push(assistant(&format!("a{i}"), "", vec![call(&format!("c{i}"), "run", r#"{"command":"x"}"#)]));
            v.push(result(&format!("c{i}"), "run", &"y".repeat(len)));
        }
        v.push(assistant("end", "done", vec![]));
        journal(v)
    }

    fn pairs(b: &[Block]) -> usize {
        b.iter().filter(|b| matches!(b, Block::Result { .. })).count()
    }

    #[test]
    fn fast_drops_oldest_pairs_at_50_and_80_percent() {
        // Each pair ≈ 9 + 13 = 22 tokens (char estimator); 30 pairs ≈ 670 tokens.
        let j = fixture(1000, 30, 36);
        let reqs = requests(&j, "tiered-fast");
        let last = &reqs.last().unwrap().0;
        // 16 + 22 per pair: ≥ 50% (500 tokens) at 22 pairs → back to 20; the next pair makes 21
        // (below 50%), the one after 22 again. The oldest pairs are gone, their empty assistants too.
        assert!((20..=21).contains(&pairs(last)), "{}", pairs(last));
        assert_eq!(ids(last)[..2], ["system", "u1"]);
        assert!(!ids(last).contains(&"a1".to_string()) && !ids(last).contains(&"c1".to_string()));
        assert_eq!(ids(last).last().unwrap(), "c30");
        // Plain tiered drops nothing below 90%.
        assert_eq!(pairs(&requests(&j, "tiered").last().unwrap().0), 30);
        // Window 400: 80% (320 tokens) is reached at 14 pairs → back to 10; the 50% tier alone
        // would have kept up to 21.
        let j = fixture(400, 30, 36);
        let last = requests(&j, "tiered-fast").last().unwrap().0.clone();
        assert!((10..=13).contains(&pairs(&last)), "{}", pairs(&last));
    }

    #[test]
    fn compacts_at_90_percent() {
        // Each pair ≈ 9 + 1004 tokens; 90% of 40,000 is reached after ~36 pairs; the tail keeps
        // at most 30,000 tokens.
        let j = fixture(40_000, 40, 4000);
        let reqs = requests(&j, "tiered");
        let first = reqs.iter().position(|(b, _)| b.iter().any(|b| matches!(b, Block::Summary { .. }))).unwrap();
        let (b, _) = &reqs[first];
        assert_eq!(ids(b)[..2], ["system", "summary"]);
        let tail: u64 = b[2..].iter().map(|b| crate::tokens::CharEstimator.block(b)).sum();
        assert!(tail <= TAIL_TOKENS && b.len() - 2 >= 3, "{tail}");
        // At most one summary ever (rotate).
        assert!(reqs.iter().all(|(b, _)| b.iter().filter(|b| matches!(b, Block::Summary { .. })).count() <= 1));
    }
}
