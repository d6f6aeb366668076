//! `elide-keep-K` / `elide-B-T-keep-K` (spec §2, seed `000_*` auto-elision).
//!
//! Before each turn, if the calibrated estimate (§3, [`crate::tokens::Calibrator`]) of the request exceeds
//! the budget, results and attachments collapse to the elision markers of `journal-v1.md` §5 in
//! projection order, oldest first, skipping the K last results, until the estimate is at or below
//! the target. Decisions persist (a collapsed block stays collapsed, byte-identical). Budget and
//! target come from the session's `context_budget` / `context_target` (following `model`
//! records, with the auto rules of `journal-v1.md` §6) unless the name sets them.

use crate::journal::{Body, CtxSettings, Journal};
use crate::projection::{markers, Block, Replayer};

use super::{same_block, Family, Measure, Origin, Out, TurnCx};
use crate::tokens::{Calibrator, FRAMING};

pub use crate::tokens::budget::DEFAULT_WINDOW;

/// Budget and target in force for these settings (`journal-v1.md` §6 auto rules).
pub fn budget_target(ctx: &CtxSettings) -> (u64, u64) {
    let s = crate::tokens::budget::in_force(ctx);
    (s.budget, s.target)
}

/// The elision marker of a result or attachment block, as the recorded projection writes it.
pub fn marker_for(journal: &Journal, b: &Block) -> Option<String> {
    match b {
        Block::Result { call, tool, .. } => {
            let bytes = journal.result(call).map_or(0, |r| r.bytes);
            let null = serde_json::Value::Null;
            let args = journal.call(call).map_or(&null, |c| &*c.args);
            Some(markers::elided_result(tool, bytes, args))
        }
        Block::Attachment { id, .. } => Some(match journal.attachment(id) {
            Some(a) => markers::elided_attachment(a.bytes, &a.path),
            None => markers::elided_attachment(0, ""),
        }),
        _ => None,
    }
}

pub struct Elide<'j> {
    fixed: Option<(u64, u64)>,
    keep: usize,
    /// Conversation indices of every result so far.
    results: Vec<usize>,
    /// Per conversation index: collapsed.
    elided: Vec<bool>,
    /// Every conversation index before this is elided or not a candidate (user, assistant, notice).
    cursor: usize,
    calibrator: Calibrator,
    recorded: Replayer<'j>,
    /// The last recorded request estimated, with each block's count (reused while the block is
    /// unchanged, so calibration does not re-count the history every turn).
    rec_blocks: Vec<Block>,
    rec_tokens: Vec<u64>,
}

impl<'j> Elide<'j> {
    pub fn new(journal: &'j Journal, fixed: Option<(u64, u64)>, keep: usize) -> Elide<'j> {
        Elide {
            fixed,
            keep,
            results: Vec::new(),
            elided: Vec::new(),
            cursor: 0,
            calibrator: super::recorded::new_calibrator(journal),
            recorded: Replayer::new(journal),
            rec_blocks: Vec::new(),
            rec_tokens: Vec::new(),
        }
    }
}

impl Family for Elide<'_> {
    fn measure(&self) -> Measure {
        Measure::Tokens
    }

    fn before_turn(&mut self, cx: &TurnCx<'_, '_>, out: &mut Out) {
        // Indices below are conversation indices (request index − `out.head`), so a system block
        // that arrives late does not shift them.
        for b in &cx.raw.blocks[cx.new.clone()] {
            if matches!(b.block, Block::Result { .. }) {
                self.results.push(out.blocks.len() - out.head);
            }
            out.push(b.block.clone(), Origin::Verbatim, cx.est);
        }
        let head = out.head;
        let n = out.blocks.len() - head;
        self.elided.resize(n, false);
        let (budget, target) = self.fixed.unwrap_or_else(|| budget_target(&cx.raw.ctx));
        let cal = &self.calibrator;
        let estimate = |out: &Out| cal.calibrate(cx.turn, FRAMING + out.total);
        if estimate(out) <= budget {
            return;
        }
        // The K last results are skipped; with K or fewer results, every one is (position 0).
        let protected_from = match self.results.len().checked_sub(self.keep) {
            Some(i) => self.results.get(i).copied().unwrap_or(usize::MAX),
            None => 0,
        };
        let collapsible = |b: &Block| matches!(b, Block::Result { .. } | Block::Attachment { .. });
        // Advance the cursor over blocks that can never be collapsed again.
        while self.cursor < n && (self.elided[self.cursor] || !collapsible(&out.blocks[head + self.cursor])) {
            self.cursor += 1;
        }
        let mut i = self.cursor;
        while i < n && estimate(out) > target {
            let b = &out.blocks[head + i];
            let protected = i >= protected_from && matches!(b, Block::Result { .. });
            if !self.elided[i] && collapsible(b) && !protected {
                if let Some(t) = marker_for(cx.journal, b) {
                    out.set_text(head + i, t, Origin::Elided { turn: cx.turn }, cx.est);
                    self.elided[i] = true;
                }
            }
            i += 1;
        }
    }

    fn after_turn(&mut self, cx: &TurnCx<'_, '_>, _out: &Out) {
        let Body::Assistant(a) = &cx.journal.records[cx.record].body else { return };
        let Some(prompt) = a.usage.as_ref().and_then(|u| u.prompt_tokens) else { return };
        self.recorded.advance_to(cx.record);
        let mut n = 0;
        for b in self.recorded.projection().blocks() {
            match self.rec_blocks.get_mut(n) {
                Some(old) if same_block(old, b) => {}
                Some(old) => {
                    *old = b.clone();
                    self.rec_tokens[n] = cx.est.block(b);
                }
                None => {
                    self.rec_blocks.push(b.clone());
                    self.rec_tokens.push(cx.est.block(b));
                }
            }
            n += 1;
        }
        self.rec_blocks.truncate(n);
        self.rec_tokens.truncate(n);
        let est = FRAMING + self.rec_tokens.iter().sum::<u64>();
        self.calibrator.observe(cx.turn, Some(prompt), est);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::testkit::*;
    use serde_json::json;

    #[test]
    fn auto_rules_of_the_budget() {
        let c = |w: Option<u64>, b: Option<u64>, t: Option<u64>| CtxSettings {
            ctx_window: w,
            context_budget: b,
            context_target: t,
            ..Default::default()
        };
        assert_eq!(budget_target(&c(None, None, None)), (200_000, 140_000));
        assert_eq!(budget_target(&c(Some(200_000), Some(0), None)), (100_000, 70_000));
        assert_eq!(budget_target(&c(Some(200_000), Some(5000), Some(6000))), (5000, 3500));
        assert_eq!(budget_target(&c(None, Some(5000), Some(1000))), (5000, 1000));
    }

    fn fixture(ctx: serde_json::Value) -> crate::journal::Journal {
        // CharEstimator: one token per 4 characters. Each result of 400 chars = 4 + 100 tokens.
        let big = "r".repeat(400);
        journal(vec![
            session_ctx(ctx),
            system("s"),
            user_att("u1", "task", "at1", "big.txt", &"p".repeat(400), 400),
            assistant("a1", "", vec![call("c1", "run", r#"{"command":"cargo test"}"#)]),
            result("c1", "run", &big),
            assistant("a2", "", vec![call("c2", "read", r#"{"path":"x.rs"}"#)]),
            result("c2", "read", &big),
            assistant("a3", "", vec![call("c3", "read", r#"{"path":"y.rs"}"#)]),
            result("c3", "read", &big),
            assistant("a4", "done", vec![]),
        ])
    }

    #[test]
    fn collapses_oldest_first_and_keeps_the_last_k() {
        let j = fixture(json!({"context_budget": 300, "context_target": 200}));
        let reqs = requests(&j, "elide-keep-1");
        // Turn 1: sys(5) + u1(5) + at1(104) + 3 = 117 ≤ 300: nothing.
        assert!(reqs[0].1.iter().all(|o| *o == Origin::Verbatim));
        // Turn 3: 117 + a1 + c1(104) + a2 + c2(104) > 300 → at1, then c1 collapse (c2 kept).
        let (b, o) = &reqs[2];
        assert_eq!(b[2].text(), "[elided: attachment, 400 bytes, big.txt]");
        assert_eq!(b[4].text(), "[elided: run, 400 bytes, cargo test]");
        assert_eq!(o[2], Origin::Elided { turn: 3 });
        assert_eq!(b[6].text(), "r".repeat(400));
        // Decisions persist, byte-identical, on the next turn.
        assert_eq!(reqs[3].0[2], b[2]);
        assert_eq!(reqs[3].1[4], Origin::Elided { turn: 3 });
    }

    #[test]
    fn regression_fewer_results_than_keep_are_all_kept() {
        // With 3 results and keep 5, no result may collapse (before the fix, none was protected
        // until the session had more than K results); the attachment still may.
        let j = fixture(json!({"context_budget": 300, "context_target": 200}));
        let reqs = requests(&j, "elide-keep-5");
        let (b, o) = &reqs[3];
        assert_eq!(o[2], Origin::Elided { turn: 3 });
        for (i, blk) in b.iter().enumerate() {
            if matches!(blk, Block::Result { .. }) {
                assert_eq!(o[i], Origin::Verbatim, "result {i} collapsed with keep 5: {}", blk.text());
            }
        }
    }

    #[test]
    fn name_sets_budget_and_target() {
        let j = fixture(json!({}));
        let reqs = requests(&j, "elide-keep-0");
        assert!(reqs.iter().all(|(_, o)| o.iter().all(|o| *o == Origin::Verbatim)));
        let reqs = requests(&j, "elide-300-200-keep-0");
        assert!(reqs[2].1.contains(&Origin::Elided { turn: 3 }));
    }

    #[test]
    fn calibration_uses_the_recorded_requests() {
        // Turn 1's recorded request is 117 tokens by the estimate; the provider said 234 → ×2.
        let big = "r".repeat(400);
        let j = journal(vec![
            session_ctx(json!({"context_budget": 300, "context_target": 200})),
            system("s"),
            user_att("u1", "task", "at1", "big.txt", &"p".repeat(400), 400),
            assistant_usage("a1", "", vec![call("c1", "run", r#"{"command":"x"}"#)], 234),
            result("c1", "run", &big),
            assistant("a2", "done", vec![]),
        ]);
        // Raw estimate at turn 2 ≈ 117 + a1 + 104 ≈ 235 (< 300) but ×2 > 300.
        let reqs = requests(&j, "elide-keep-1");
        assert_eq!(reqs[1].0[2].text(), "[elided: attachment, 400 bytes, big.txt]");
        let reqs = requests(&j, "elide-400-300-keep-1");
        assert!(reqs[1].1.contains(&Origin::Elided { turn: 2 }));
    }
}
